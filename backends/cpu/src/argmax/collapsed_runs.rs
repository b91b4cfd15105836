//! Run lanes ([`super::run_lanes`]) whose runs are whole 64-byte vectors, folded with each
//! run's vectors collapsed into one before it meets the running maxima.
//!
//! The lane-by-lane fold keeps a running maximum and row per lane of every output's run, so
//! FLOAT32 `{64}^4` over axes 1 and 3 keeps 16 KiB of maxima and 16 KiB of rows per unit. Read
//! row by row, those 32 KiB leave the L1 cache under the input streaming past them; read a
//! group of rows side by side, the input is several streams 16 KiB apart. Either way one AMD
//! EPYC (Zen 5) core took 2.4–2.9 ms where reading the same input in order (axes 2,3) took 1.95.
//!
//! Here a run of `k` vectors is first folded into one vector whose lanes carry a *code*
//! (`row × k + vector`), and that vector alone is folded into its output's running maximum:
//! one vector of maxima and one of codes per output (8 KiB for the 64 outputs of a unit), so
//! that the input is read once, in memory order, and the running maxima stay in the L1 cache.
//! Each output then takes its best lane by (key, index).

#[cfg(target_arch = "x86_64")]
use super::kernels::max_lanes_avx2;
use super::kernels::Row;
use super::lanes::Lanes;
use crate::simd::Isa;

/// Bytes of the vectors the kernel folds.
const VECTOR_BYTES: usize = 64;

/// The running maxima of a collapsed fold: per output a vector of maxima (compare domain) and
/// a vector of codes, reused across calls.
#[derive(Debug, Default)]
pub(super) struct CollapsedRuns {
    values: Vec<u8>,
    codes: Vec<u8>,
    /// Vectors per run of the last fold.
    k: usize,
    /// Elements per run of the last fold.
    run: usize,
}

impl CollapsedRuns {
    /// Folds `rows` (in increasing index order) of `outputs` runs of `run` elements, each
    /// output's run `pitch` elements after the one before, the first at each row's offset of
    /// `data`. False, with nothing kept, when the kernel does not apply (no AVX-512, runs that
    /// are not whole vectors or a single one, codes too many for the lanes of `T`) or a NaN
    /// was met; the caller then folds lane by lane.
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
        let run_bytes = run * T::SIZE;
        let k = run_bytes.div_ceil(VECTOR_BYTES);
        let codes = rows.len().saturating_mul(k);
        let code_fits = T::SIZE >= 4 || codes <= 1 << (8 * T::SIZE);
        if isa != Isa::Avx512 || k < 2 || !code_fits || rows.is_empty() || outputs == 0 {
            return false;
        }
        let span = (outputs - 1) * pitch + run;
        for &(offset, _) in rows {
            assert!(
                (offset + span) * T::SIZE <= data.len(),
                "collapsed runs: a row outside the input"
            );
        }
        self.k = k;
        self.run = run;
        self.values.resize(outputs * VECTOR_BYTES, 0);
        self.codes.resize(outputs * VECTOR_BYTES, 0);
        #[cfg(target_arch = "x86_64")]
        {
            let buffers = (&mut self.values[..], &mut self.codes[..]);
            // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW; every
            // row's runs lie inside `data` (asserted above); the buffers hold a vector per
            // output; every code fits the lanes of `T`.
            unsafe {
                super::avx512::fold_collapsed_runs::<T, LAST>(
                    data,
                    rows,
                    (outputs, pitch * T::SIZE, run_bytes),
                    buffers,
                )
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// After a clean [`Self::fold`]: output `output`'s greatest key and the lowest (with
    /// `LAST`, the highest) reduced index holding it: a row's index from `rows` plus the
    /// element's position in the run times `run_index_stride`.
    pub(super) fn best<T: Lanes, const LAST: bool>(
        &self,
        output: usize,
        rows: &[Row],
        run_index_stride: usize,
    ) -> (T::Key, usize) {
        let lanes = VECTOR_BYTES / T::SIZE;
        let at = output * VECTOR_BYTES;
        let values = &self.values[at..at + VECTOR_BYTES];
        let codes = &self.codes[at..at + VECTOR_BYTES];
        let mut best: Option<usize> = None;
        let mut offer = |lane: usize| {
            let code = T::lane_index(&codes[lane * T::SIZE..(lane + 1) * T::SIZE]);
            let (row, vector) = (code / self.k, code % self.k);
            let position = vector_start(vector, self.run, lanes) + lane;
            let index = rows[row].1 as usize + position * run_index_stride;
            if best.is_none_or(|b| if LAST { index > b } else { index < b }) {
                best = Some(index);
            }
        };
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a clean fold ran with AVX-512, so the CPU has AVX2; a vector is 64 bytes of
        // lanes in the compare domain, none a NaN (the fold was clean).
        let key = unsafe { max_lanes_avx2::<T>(values, &mut offer) };
        #[cfg(not(target_arch = "x86_64"))]
        let key = {
            let key = |lane: usize| T::lane_key(&values[lane * T::SIZE..(lane + 1) * T::SIZE]);
            let max = (0..lanes).map(key).max().expect("a vector has lanes");
            (0..lanes)
                .filter(|&lane| key(lane) == max)
                .for_each(&mut offer);
            max
        };
        (key, best.expect("collapsed runs: a lane holds the maximum"))
    }
}

/// The first element of vector `vector` of a run of `run` elements in vectors of `lanes`: the
/// last vector ends with the run, overlapping the one before when the run is not whole
/// vectors (its elements then come twice, in two lanes, with the same index). The positions
/// of a lane still grow with the vector, since the last vector starts after the one before.
pub(super) fn vector_start(vector: usize, run: usize, lanes: usize) -> usize {
    (vector * lanes).min(run - lanes)
}
