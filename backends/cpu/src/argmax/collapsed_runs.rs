//! Run lanes ([`super::run_lanes`]) whose runs are more than a vector (32 bytes with AVX2, 64
//! with AVX-512), folded with each run's vectors collapsed into one before it meets the
//! running maxima.
//!
//! The lane-by-lane fold keeps a running maximum and row per lane of every output's run, so
//! FLOAT32 `{64}^4` over axes 1 and 3 keeps 16 KiB of maxima and 16 KiB of rows per unit. Read
//! row by row, those 32 KiB leave the L1 cache under the input streaming past them; read a
//! group of rows side by side, the input is several streams 16 KiB apart. Either way one AMD
//! EPYC (Zen 5) core took 2.4–2.9 ms where reading the same input in order (axes 2,3) took 1.95.
//!
//! Here a run of `k` vectors is first folded into one vector whose lanes carry a *code*
//! (`row × 2^b + vector`, `2^b` the least power of two of at least `k`, so that a shift and a
//! mask decode it: dividing by `k` took a quarter of FLOAT32 `[8, 33206, 26]` over axes 0,2),
//! and that vector alone is folded into its output's running maximum:
//! one vector of maxima and one of codes per output (8 KiB for the 64 outputs of a unit with
//! AVX-512), so that the input is read once, in memory order, and the running maxima stay in
//! the L1 cache.
//! Each output then takes its best lane by (key, index).

#[cfg(target_arch = "x86_64")]
use super::avx512::{vector_max_lanes_avx512, Avx512Fold};
use super::kernels::{max_lanes, Row};
#[cfg(target_arch = "x86_64")]
use super::kernels::{Avx2Fold, FoldVectors};
use super::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::simd::prefetch_ahead;
use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use crate::thresholds::{ARGMAX_COLLAPSED_PREFETCH_BYTES, ARGMAX_COLLAPSED_PREFETCH_STRIDE_BYTES};

/// The running maxima of a collapsed fold: per output a vector of maxima (compare domain) and
/// a vector of codes, reused across calls.
#[derive(Debug, Default)]
pub(super) struct CollapsedRuns {
    values: Vec<u8>,
    codes: Vec<u8>,
    /// Bytes per vector of the last fold.
    vector_bytes: usize,
    /// Bits of a code below its row ([`code_bits`]) in the last fold.
    code_bits: u32,
    /// Elements per run of the last fold.
    run: usize,
}

impl CollapsedRuns {
    /// Folds `rows` (in increasing index order) of `outputs` runs of `run` elements, each
    /// output's run `pitch` elements after the one before, the first at each row's offset of
    /// `data`. False, with nothing kept, when the kernel does not apply (no AVX2, runs of at
    /// most one vector, codes too many for the lanes of `T`) or a NaN was met; the caller then
    /// folds lane by lane.
    ///
    /// # Panics
    /// If a run lies outside `data`.
    pub(super) fn fold<T: Lanes, const LAST: bool>(
        &mut self,
        isa: Isa,
        data: &[u8],
        rows: &[Row],
        outputs: usize,
        run: usize,
        pitch: usize,
    ) -> bool {
        let vector_bytes = match isa {
            Isa::Avx512 => 64,
            Isa::Avx2 => 32,
            _ => return false,
        };
        let run_bytes = run * T::SIZE;
        let k = run_bytes.div_ceil(vector_bytes);
        let codes = rows.len().saturating_mul(1 << code_bits(k));
        let code_fits = codes <= 1 << (8 * T::SIZE.min(4));
        if k < 2 || !code_fits || rows.is_empty() || outputs == 0 {
            return false;
        }
        let span = (outputs - 1) * pitch + run;
        for &(offset, _) in rows {
            assert!(
                (offset + span) * T::SIZE <= data.len(),
                "collapsed runs: a row outside the input"
            );
        }
        (self.vector_bytes, self.code_bits, self.run) = (vector_bytes, code_bits(k), run);
        self.values.resize(outputs * vector_bytes, 0);
        self.codes.resize(outputs * vector_bytes, 0);
        #[cfg(target_arch = "x86_64")]
        {
            let shape = (outputs, pitch * T::SIZE, run_bytes);
            let buffers = (&mut self.values[..], &mut self.codes[..]);
            // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW,
            // `Isa::Avx2` when it has AVX2; every row's runs lie inside `data` (asserted
            // above); the buffers hold a vector per output; every code fits the lanes of `T`.
            unsafe {
                if isa == Isa::Avx512 {
                    fold_avx512::<T, LAST>(data, rows, shape, buffers)
                } else {
                    fold_avx2::<T, LAST>(data, rows, shape, buffers)
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// After a clean [`Self::fold`] with `isa`: output `output`'s greatest key and the lowest
    /// (with `LAST`, the highest) reduced index holding it: a row's index from `rows` plus the
    /// element's position in the run times `run_index_stride`.
    pub(super) fn best<T: Lanes, const LAST: bool>(
        &self,
        isa: Isa,
        output: usize,
        rows: &[Row],
        run_index_stride: usize,
    ) -> (T::Key, usize) {
        let lanes = self.vector_bytes / T::SIZE;
        let at = output * self.vector_bytes;
        let values = &self.values[at..at + self.vector_bytes];
        let codes = &self.codes[at..at + self.vector_bytes];
        let mut best: Option<usize> = None;
        let bits = self.code_bits;
        let mut offer = |lane: usize| {
            let code = T::lane_index(&codes[lane * T::SIZE..(lane + 1) * T::SIZE]);
            let (row, vector) = (code >> bits, code & ((1 << bits) - 1));
            let position = vector_start(vector, self.run, lanes) + lane;
            let index = rows[row].1 as usize + position * run_index_stride;
            if best.is_none_or(|b| if LAST { index > b } else { index < b }) {
                best = Some(index);
            }
        };
        #[cfg(target_arch = "x86_64")]
        if isa == Isa::Avx512 {
            // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW; its fold
            // keeps a 64-byte vector per output.
            let (key, mut holders) = unsafe { vector_max_lanes_avx512::<T>(values.as_ptr()) };
            while holders != 0 {
                offer(holders.trailing_zeros() as usize);
                holders &= holders - 1;
            }
            return (key, best.expect("collapsed runs: a lane holds the maximum"));
        }
        let key = max_lanes::<T>(isa, values, &mut offer);
        (key, best.expect("collapsed runs: a lane holds the maximum"))
    }
}

/// The fold of [`CollapsedRuns::fold`] in vectors of `W`: `outputs` runs of `run_bytes`
/// (more than a vector, the last vector ending with the run: [`vector_start`]) per row,
/// `pitch` bytes apart, each run's vectors folded into one vector of maxima and codes
/// (`row × 2^b + vector`: [`code_bits`]), which is folded into its output's vector of
/// `values` and `codes`.
/// Returns false when a NaN was met (the results are then meaningless). Vectors are
/// prefetched [`ARGMAX_COLLAPSED_PREFETCH_BYTES`] ahead as they are read (the rows are read in
/// memory order): every vector, or one in [`prefetch_every_vectors`].
///
/// # Safety
/// The CPU must support `W`'s instructions (this is inlined into such functions only); every
/// run of every row must lie inside `data`; `values` and `codes` a vector per output; every
/// code must fit the lanes of `T`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn fold_body<T: Lanes, const LAST: bool, W: FoldVectors>(
    data: &[u8],
    rows: &[Row],
    (outputs, pitch, run_bytes): (usize, usize, usize),
    (values, codes): (&mut [u8], &mut [u8]),
) -> bool {
    let (vp, cp) = (values.as_mut_ptr(), codes.as_mut_ptr());
    for o in 0..outputs {
        W::store(vp.add(o * W::BYTES), W::lowest::<T>());
        W::store(cp.add(o * W::BYTES), W::zero());
    }
    let base = data.as_ptr();
    let k = run_bytes.div_ceil(W::BYTES);
    let mut nans = W::no_nans();
    let prefetch_every = prefetch_every_vectors(run_bytes, W::BYTES);
    for (r, &(offset, _)) in rows.iter().enumerate() {
        let row = base.add(offset * T::SIZE);
        let first_code = (r << code_bits(k)) as u32;
        for o in 0..outputs {
            let p = row.add(o * pitch);
            prefetch_ahead(p, ARGMAX_COLLAPSED_PREFETCH_BYTES);
            let mut value = W::load::<T>(p);
            let mut code = W::index::<T>(first_code);
            if T::CAN_NAN {
                nans = W::add_nans::<T>(nans, value);
            }
            for j in 1..k {
                // The same vectors whose positions `CollapsedRuns::best` decodes.
                let q = p.add(vector_start(j, run_bytes, W::BYTES));
                if j & (prefetch_every - 1) == 0 {
                    prefetch_ahead(q, ARGMAX_COLLAPSED_PREFETCH_BYTES);
                }
                let v = W::load::<T>(q);
                W::fold::<T, LAST>(
                    &mut value,
                    &mut code,
                    v,
                    W::index::<T>(first_code + j as u32),
                );
                if T::CAN_NAN {
                    nans = W::add_nans::<T>(nans, v);
                }
            }
            // The earlier rows hold the earlier codes: the running maximum is the `value`
            // side of the fold, the run the new one.
            let mut best = W::load_raw(vp.add(o * W::BYTES));
            let mut best_code = W::load_raw(cp.add(o * W::BYTES));
            W::fold::<T, LAST>(&mut best, &mut best_code, value, code);
            W::store(vp.add(o * W::BYTES), best);
            W::store(cp.add(o * W::BYTES), best_code);
        }
    }
    !T::CAN_NAN || !W::any_nan(nans)
}

/// [`fold_body`] in 256-bit vectors.
///
/// # Safety
/// The CPU must support AVX2; as [`fold_body`] otherwise.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_avx2<T: Lanes, const LAST: bool>(
    data: &[u8],
    rows: &[Row],
    shape: (usize, usize, usize),
    buffers: (&mut [u8], &mut [u8]),
) -> bool {
    fold_body::<T, LAST, Avx2Fold>(data, rows, shape, buffers)
}

/// [`fold_body`] in 512-bit vectors (compares into mask registers).
///
/// # Safety
/// The CPU must support AVX-512 F and BW; as [`fold_body`] otherwise.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn fold_avx512<T: Lanes, const LAST: bool>(
    data: &[u8],
    rows: &[Row],
    shape: (usize, usize, usize),
    buffers: (&mut [u8], &mut [u8]),
) -> bool {
    fold_body::<T, LAST, Avx512Fold>(data, rows, shape, buffers)
}

/// Every how many vectors of a run the fold prefetches (a power of two): one in
/// [`ARGMAX_COLLAPSED_PREFETCH_STRIDE_BYTES`] when the vectors are 64 bytes and the runs whole
/// strides of them, so that the prefetches fall every stride through the input; else every
/// vector.
#[cfg(target_arch = "x86_64")]
fn prefetch_every_vectors(run_bytes: usize, vector_bytes: usize) -> usize {
    let stride = ARGMAX_COLLAPSED_PREFETCH_STRIDE_BYTES;
    if vector_bytes == 64 && run_bytes.is_multiple_of(stride) {
        stride / vector_bytes
    } else {
        1
    }
}

/// The bits of a code below its row for runs of `k` vectors: the vector's number fits them.
fn code_bits(k: usize) -> u32 {
    k.next_power_of_two().trailing_zeros()
}

/// The first element of vector `vector` of a run of `run` elements in vectors of `lanes`
/// (or, counted in bytes, its first byte): the last vector ends with the run, overlapping the
/// one before when the run is not whole vectors (its elements then come twice, in two lanes,
/// with the same index). The positions of a lane still grow with the vector, since the last
/// vector starts after the one before. The fold reads by it and [`CollapsedRuns::best`]
/// decodes by it.
fn vector_start(vector: usize, run: usize, lanes: usize) -> usize {
    (vector * lanes).min(run - lanes)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn runs_of_whole_strides_prefetch_once_per_stride_and_others_every_vector() {
        let stride = ARGMAX_COLLAPSED_PREFETCH_STRIDE_BYTES;
        assert_eq!(prefetch_every_vectors(stride, 64), stride / 64);
        assert_eq!(prefetch_every_vectors(4 * stride, 64), stride / 64);
        assert_eq!(prefetch_every_vectors(stride + 64, 64), 1);
        assert_eq!(prefetch_every_vectors(stride / 2, 64), 1);
        assert_eq!(prefetch_every_vectors(stride, 32), 1);
        assert!(prefetch_every_vectors(stride, 64).is_power_of_two());
    }
}
