//! Element-strided runs (an output's elements `stride` apart, a few to a vector), reduced by
//! sweeping the run's whole span in vectors: each vector's lanes that hold a run element are
//! known from its *phase* (its number modulo the period after which the pattern repeats), the
//! other lanes are set to the lowest value. The span is taken a block at a time, its maximum
//! first, and searched for the maximum's position only when the block can change the result.
//! Where the period is 1, 3, 5 or 7 vectors (every FLOAT32 and FLOAT64 stride, and the others'
//! strides whose odd part is one of these) the block's maximum is kept per phase, unmasked,
//! and masked once per block, and a long run asks for its bytes 2 KiB ahead: FLOAT16
//! `[6, 887, 503, 1]` padded to 7 and reduced over every axis (one run of 2.7 million
//! elements 7 apart) went from 5.9 to 4.2 ms before the prefetch.
//!
//! A FLOAT16 `[9, 1021433, 1]` padded to 6 elements per element and reduced over every axis
//! read each element alone, with its key taken in scalar code: 15 ms against ONNX Runtime's
//! 7–9 ms on the packed tensor.

#[cfg(target_arch = "x86_64")]
use super::kernels::{all_lanes_max, load_inside};
use super::lanes::Lanes;
use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes of the vectors the kernel reads.
const VECTOR_BYTES: usize = 32;

/// Runs spanning fewer bytes are left to the scalar loop when the phase tables are built for
/// one run ([`strided_run_best`]).
const MIN_SPAN_BYTES: usize = 512;

/// Runs spanning fewer bytes are left to the scalar loop when the phase tables serve every
/// run of a call ([`StridedRuns`]).
const MIN_SHARED_SPAN_BYTES: usize = 64;

/// Bytes ahead of the sweep that a long run's per-phase loop asks the cache for. FLOAT16
/// `[2675000]` 4 apart (21 MB, within the L3 cache): 1.95 ms without, 1.36 at 2 KiB, 1.15 at
/// 8 KiB; UINT8 5 apart 1.16 → 1.05 → 0.80; FLOAT32 3 apart 2.76 → 2.32 → 2.43; FLOAT32
/// `[8e6]` 4 apart (128 MB, from memory) 10.7 → 11.0 → 11.1: 2 KiB gains within the cache
/// and costs nothing measurable beyond it.
#[cfg(target_arch = "x86_64")]
const PREFETCH_AHEAD_BYTES: usize = 2048;

/// Runs spanning fewer bytes are swept without prefetching: on short runs (UINT8
/// `[100000, 64]` 2 apart) it lost a fifth.
#[cfg(target_arch = "x86_64")]
const PREFETCH_MIN_SPAN_BYTES: usize = 64 << 10;

/// Vectors per block: the block is still in the L1 cache when searched.
#[cfg(target_arch = "x86_64")]
const BLOCK_VECTORS: usize = 256;

/// The best (key, position) of the `len` elements at element offsets `start`, `start +
/// stride`, … of `data`: the first maximum, or the last with `LAST`. None when the kernel does
/// not apply (no AVX2, a stride below 2 or above a vector, a short span) or a NaN appears (the
/// compare domain does not order it); the caller then reduces the run exactly.
///
/// # Panics
/// If the run does not lie inside `data`.
pub(super) fn strided_run_best<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    start: usize,
    len: usize,
    stride: usize,
) -> Option<(T::Key, usize)> {
    if len == 0 || span_bytes::<T>(len, stride) < MIN_SPAN_BYTES {
        return None;
    }
    StridedRuns::new::<T>(isa, stride)?.best::<T, LAST>(data, start, len)
}

/// Bytes from the first of `len` elements `stride` apart to the end of the last.
fn span_bytes<T: Lanes>(len: usize, stride: usize) -> usize {
    ((len.max(1) - 1) * stride + 1) * T::SIZE
}

/// The lanes of a strided run's elements per phase, for runs of `T` elements `stride` apart:
/// built once and used for every run of a call. Built per run, the tables cost more than
/// a short run's sweep: ArgMax UINT8 `[8, 4617, 193, 1]` padded by one over axis 2 (runs of
/// 193 bytes two apart) read each element alone, 40 times the floor.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) struct StridedRuns {
    /// Elements between run elements.
    stride: usize,
    /// Vectors after which the lane pattern repeats.
    period: usize,
    /// Per phase: all ones in the bytes of the lanes holding a run element.
    masks: [[u8; VECTOR_BYTES]; VECTOR_BYTES],
    /// Per phase: the same lanes as `_mm256_movemask_epi8` bits.
    bits: [u32; VECTOR_BYTES],
}

impl StridedRuns {
    /// The tables for runs of `T` elements `stride` apart; None when the kernel does not
    /// apply (no AVX2, a stride below 2 or above a vector).
    pub(super) fn new<T: Lanes>(isa: Isa, stride: usize) -> Option<StridedRuns> {
        if stride < 2 || stride * T::SIZE > VECTOR_BYTES || !isa.avx2() {
            return None;
        }
        let width = VECTOR_BYTES / T::SIZE;
        let period = stride / gcd(stride, width);
        let mut masks = [[0u8; VECTOR_BYTES]; VECTOR_BYTES];
        let mut bits = [0u32; VECTOR_BYTES];
        for phase in 0..period {
            for lane in 0..width {
                if (phase * width + lane).is_multiple_of(stride) {
                    let bytes = lane * T::SIZE..(lane + 1) * T::SIZE;
                    masks[phase][bytes.clone()].fill(0xff);
                    bits[phase] |= bytes.fold(0, |b, byte| b | 1 << byte);
                }
            }
        }
        Some(StridedRuns {
            stride,
            period,
            masks,
            bits,
        })
    }

    /// The best (key, position) of the `len` elements at element offsets `start`, `start +
    /// stride`, … of `data`, as [`strided_run_best`]; None for a run spanning fewer than
    /// [`MIN_SHARED_SPAN_BYTES`] or holding a NaN (the caller then reduces it exactly).
    ///
    /// # Panics
    /// If the run does not lie inside `data`.
    pub(super) fn best<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        start: usize,
        len: usize,
    ) -> Option<(T::Key, usize)> {
        if len == 0 {
            return None;
        }
        let span = span_bytes::<T>(len, self.stride);
        assert!(
            start * T::SIZE + span <= data.len(),
            "strided run outside the input"
        );
        if span < MIN_SHARED_SPAN_BYTES {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let sweep = Sweep {
                data: &data[start * T::SIZE..],
                span,
                runs: self,
            };
            // SAFETY: the CPU has AVX2 (checked by `new`); the span lies inside `data`
            // (asserted).
            unsafe { sweep.best::<T, LAST>() }
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

/// One strided run's span, swept with its call's [`StridedRuns`].
#[cfg(target_arch = "x86_64")]
struct Sweep<'a> {
    /// The data from the run's first element on (at least `span` bytes).
    data: &'a [u8],
    /// Bytes from the first element to the end of the last.
    span: usize,
    /// The lanes per phase.
    runs: &'a StridedRuns,
}

#[cfg(target_arch = "x86_64")]
impl Sweep<'_> {
    /// The run's best (key, position), or None at a NaN.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn best<T: Lanes, const LAST: bool>(&self) -> Option<(T::Key, usize)> {
        let vectors = self.span.div_ceil(VECTOR_BYTES);
        let mut best: Option<(T::Key, usize)> = None;
        let mut j0 = 0;
        while j0 < vectors {
            let j1 = (j0 + BLOCK_VECTORS).min(vectors);
            let max = self.block_max::<T>(j0, j1)?;
            let key = T::lane_key(&lanes_of(max)[..T::SIZE]);
            let changes = match best {
                None => true,
                Some((b, _)) => key > b || (LAST && key == b),
            };
            if changes {
                best = Some((key, self.locate::<T, LAST>(j0, j1, max)));
            }
            j0 = j1;
        }
        best
    }

    /// Vector `j` (of phase `phase`) of the span in the compare domain, and the bytes of its
    /// run elements' lanes (none past the span).
    #[inline(always)]
    unsafe fn vector<T: Lanes>(&self, j: usize, phase: usize) -> (__m256i, __m256i, u32) {
        let at = j * VECTOR_BYTES;
        let mut mask = _mm256_loadu_si256(self.runs.masks[phase].as_ptr().cast());
        let mut bits = self.runs.bits[phase];
        if at + VECTOR_BYTES > self.span {
            let inside = self.span - at;
            let mut window = [0u8; VECTOR_BYTES];
            window[..inside].fill(0xff);
            mask = _mm256_and_si256(mask, _mm256_loadu_si256(window.as_ptr().cast()));
            bits &= (1 << inside) - 1;
            return (load_inside::<T>(self.data, at), mask, bits);
        }
        (T::load(self.data.as_ptr().add(at)), mask, bits)
    }

    /// The phase after `phase`.
    #[inline(always)]
    fn next_phase(&self, phase: usize) -> usize {
        if phase + 1 == self.runs.period {
            0
        } else {
            phase + 1
        }
    }

    /// The maximum of the run elements of vectors `j0..j1`, in every lane (compare domain), or
    /// None at a NaN: with a running maximum per phase where the period is short, else
    /// masking each vector.
    #[inline(always)]
    unsafe fn block_max<T: Lanes>(&self, j0: usize, j1: usize) -> Option<__m256i> {
        match self.runs.period {
            1 => self.block_max_per_phase::<T, 1, 4>(j0, j1),
            3 => self.block_max_per_phase::<T, 3, 3>(j0, j1),
            5 => self.block_max_per_phase::<T, 5, 5>(j0, j1),
            7 => self.block_max_per_phase::<T, 7, 7>(j0, j1),
            _ => self.block_max_masked::<T>(j0, j1),
        }
    }

    /// [`Self::block_max`] for a span whose lane pattern repeats every `PERIOD` vectors:
    /// `MAXIMA` running maxima (a multiple of `PERIOD`), maximum `k` taking every `MAXIMA`th
    /// vector from `j0 + k` unmasked, so that it holds one phase's lanes; the lanes outside
    /// the run are masked once per block, when the maxima are joined. A vector that crosses
    /// the span's end, and the block's last few, are left to [`Self::block_max_masked`].
    #[inline(always)]
    unsafe fn block_max_per_phase<T: Lanes, const PERIOD: usize, const MAXIMA: usize>(
        &self,
        j0: usize,
        j1: usize,
    ) -> Option<__m256i> {
        const {
            assert!(
                MAXIMA.is_multiple_of(PERIOD),
                "each running maximum keeps one phase"
            )
        };
        // Vectors wholly inside the span: the unmasked loads below stay inside `data`.
        let whole = j1.min(self.span / VECTOR_BYTES);
        let mut maxima = [T::lowest(); MAXIMA];
        let mut nans = [_mm256_setzero_si256(); MAXIMA];
        let mut j = j0;
        let prefetch = self.span >= PREFETCH_MIN_SPAN_BYTES;
        while j + MAXIMA <= whole {
            if prefetch {
                for k in (0..MAXIMA).step_by(2) {
                    let ahead = (j + k) * VECTOR_BYTES + PREFETCH_AHEAD_BYTES;
                    _mm_prefetch::<_MM_HINT_T0>(self.data.as_ptr().wrapping_add(ahead).cast());
                }
            }
            for (k, (max, nan)) in maxima.iter_mut().zip(&mut nans).enumerate() {
                let v = T::load(self.data.as_ptr().add((j + k) * VECTOR_BYTES));
                *max = T::max(*max, v);
                if T::CAN_NAN {
                    *nan = _mm256_or_si256(*nan, T::nan(v));
                }
            }
            j += MAXIMA;
        }
        let mut joined = T::lowest();
        let mut nan = _mm256_setzero_si256();
        for (k, (max, lanes_nan)) in maxima.into_iter().zip(nans).enumerate() {
            let phase = (j0 + k) % PERIOD;
            let mask = _mm256_loadu_si256(self.runs.masks[phase].as_ptr().cast());
            joined = T::max(joined, _mm256_blendv_epi8(T::lowest(), max, mask));
            if T::CAN_NAN {
                nan = _mm256_or_si256(nan, _mm256_and_si256(lanes_nan, mask));
            }
        }
        if T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0 {
            return None;
        }
        let rest = self.block_max_masked::<T>(j, j1)?;
        Some(T::max(all_lanes_max::<T>(joined), rest))
    }

    /// [`Self::block_max`] for any period: each vector masked to its phase's lanes. Two
    /// running maxima, so that their dependency chains overlap.
    #[inline(always)]
    unsafe fn block_max_masked<T: Lanes>(&self, j0: usize, j1: usize) -> Option<__m256i> {
        let (mut even, mut odd) = (T::lowest(), T::lowest());
        let mut nan = _mm256_setzero_si256();
        let mut phase = j0 % self.runs.period;
        let mut j = j0;
        while j + 2 <= j1 {
            let (v0, mask0, _) = self.vector::<T>(j, phase);
            phase = self.next_phase(phase);
            let (v1, mask1, _) = self.vector::<T>(j + 1, phase);
            phase = self.next_phase(phase);
            let v0 = _mm256_blendv_epi8(T::lowest(), v0, mask0);
            let v1 = _mm256_blendv_epi8(T::lowest(), v1, mask1);
            even = T::max(even, v0);
            odd = T::max(odd, v1);
            if T::CAN_NAN {
                nan = _mm256_or_si256(nan, _mm256_or_si256(T::nan(v0), T::nan(v1)));
            }
            j += 2;
        }
        if j < j1 {
            let (v, mask, _) = self.vector::<T>(j, phase);
            let v = _mm256_blendv_epi8(T::lowest(), v, mask);
            even = T::max(even, v);
            if T::CAN_NAN {
                nan = _mm256_or_si256(nan, T::nan(v));
            }
        }
        if T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0 {
            return None;
        }
        Some(all_lanes_max::<T>(T::max(even, odd)))
    }

    /// The position (in run elements) of the first (or, with `LAST`, the last) run element of
    /// vectors `j0..j1` equal to `max` (every lane, present among them).
    #[inline(always)]
    unsafe fn locate<T: Lanes, const LAST: bool>(
        &self,
        j0: usize,
        j1: usize,
        max: __m256i,
    ) -> usize {
        let mut found = None;
        let mut phase = j0 % self.runs.period;
        for j in j0..j1 {
            let (v, _, bits) = self.vector::<T>(j, phase);
            phase = self.next_phase(phase);
            let hits = _mm256_movemask_epi8(T::eq(v, max)) as u32 & bits;
            if hits != 0 {
                let byte = if LAST {
                    31 - hits.leading_zeros() as usize
                } else {
                    hits.trailing_zeros() as usize
                };
                found = Some(j * VECTOR_BYTES + byte);
                if !LAST {
                    break;
                }
            }
        }
        let byte = found.expect("the block's maximum is one of its elements");
        byte / T::SIZE / self.runs.stride
    }
}

/// The 32 bytes of a vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn lanes_of(v: __m256i) -> [u8; VECTOR_BYTES] {
    let mut bytes = [0u8; VECTOR_BYTES];
    _mm256_storeu_si256(bytes.as_mut_ptr().cast(), v);
    bytes
}

/// The greatest common divisor.
fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tensors::seeded_values as elements;
    use half::f16;

    /// The reference: exact keys, element by element.
    fn reference<T: Lanes>(
        data: &[u8],
        start: usize,
        len: usize,
        stride: usize,
        last: bool,
    ) -> (T::Key, usize) {
        let key = |j: usize| {
            let at = (start + j * stride) * T::SIZE;
            T::read(&data[at..at + T::SIZE]).key()
        };
        let mut best = 0;
        for j in 1..len {
            if key(j) > key(best) || (last && key(j) == key(best)) {
                best = j;
            }
        }
        (key(best), best)
    }

    /// Checks every stride the kernel takes over `bytes`, runs at the start, middle and very
    /// end of the buffer, both directions; a run with a NaN may only be refused.
    fn check<T: Lanes>(bytes: &[u8]) {
        let Some(isa) = Isa::available().into_iter().find(|isa| isa.avx2()) else {
            return;
        };
        let elements = bytes.len() / T::SIZE;
        for stride in 2..=VECTOR_BYTES / T::SIZE {
            let shared = StridedRuns::new::<T>(isa, stride).expect("a stride the kernel takes");
            for len in [1, 2, 20, 40, 100, 333, 2049, 9000] {
                let span = (len - 1) * stride + 1;
                if span > elements {
                    continue;
                }
                for start in [0, elements - span, (elements - span) / 3] {
                    for last in [false, true] {
                        let alone = if last {
                            strided_run_best::<T, true>(isa, bytes, start, len, stride)
                        } else {
                            strided_run_best::<T, false>(isa, bytes, start, len, stride)
                        };
                        let with_shared = if last {
                            shared.best::<T, true>(bytes, start, len)
                        } else {
                            shared.best::<T, false>(bytes, start, len)
                        };
                        let want = reference::<T>(bytes, start, len, stride, last);
                        for (got, min_span) in [
                            (alone, MIN_SPAN_BYTES),
                            (with_shared, MIN_SHARED_SPAN_BYTES),
                        ] {
                            let Some(got) = got else {
                                let short = span * T::SIZE < min_span;
                                assert!(short || T::CAN_NAN, "refused stride {stride} len {len}");
                                continue;
                            };
                            assert_eq!(
                                got, want,
                                "stride {stride} len {len} start {start} last {last}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn strided_runs_agree_with_exact_keys_for_every_type() {
        let n = 40_000;
        // Values rising slowly with the offset, so that later blocks keep changing the result.
        let rise = |r: u64, i: u64| (r % 4) + i / 5000;
        for seed in 0..2 {
            let mut i = 0;
            let mut next = || {
                i += 1;
                i
            };
            check::<u8>(&elements(n, seed, |r| (rise(r, next()) * 20) as u8));
            check::<i8>(&elements(n, seed, |r| (r % 7) as i8 - 100));
            check::<u16>(&elements(n, seed, |r| (r % 5) as u16 * 16000));
            check::<i16>(&elements(n, seed, |r| (r % 5) as i16 * 8000 - 16000));
            check::<u32>(&elements(n, seed, |r| (r % 3) as u32 * 2_000_000_000));
            check::<i32>(&elements(n, seed, |r| i32::MIN + (r % 3) as i32));
            check::<u64>(&elements(n, seed, |r| (r % 3) << 62));
            check::<i64>(&elements(n, seed, |r| (r % 4) as i64 - 2));
            check::<f32>(&elements(n, seed, |r| {
                [-1.0, 0.0, -0.0, 2.5][r as usize % 4]
            }));
            check::<f64>(&elements(n, seed, |r| {
                [f64::MIN, -0.0, 0.0][r as usize % 3]
            }));
            check::<f16>(&elements(n, seed, |r| {
                f16::from_f32([-1.0, 0.0, -0.0, 7.0, -65504.0][r as usize % 5])
            }));
            check::<f32>(&elements(n, seed, |r| {
                if r % 3000 == 0 {
                    f32::NAN
                } else {
                    (r % 3) as f32
                }
            }));
        }
    }

    /// Elements between run elements hold `off`, above anything in the run (or NaN); the run
    /// holds `low` but for one `high`, planted in turn across consecutive run elements (so in
    /// every phase of the period), at a block's start and in the run's last vector. Only the
    /// planted element may win, in both directions, and no run may be refused.
    fn check_off_run_lanes<T: Lanes>(low: &[u8], high: &[u8], off: &[u8]) {
        let Some(isa) = Isa::available().into_iter().find(|isa| isa.avx2()) else {
            return;
        };
        for stride in 2..=VECTOR_BYTES / T::SIZE {
            let shared = StridedRuns::new::<T>(isa, stride).expect("a stride the kernel takes");
            // A block and 16 vectors: the second block starts at phase 256 mod the period.
            let len = (BLOCK_VECTORS + 16) * VECTOR_BYTES / (T::SIZE * stride);
            for start in [0, 1] {
                let elements = start + (len - 1) * stride + 1;
                let mut bytes = off.repeat(elements);
                for i in 0..len {
                    let at = (start + i * stride) * T::SIZE;
                    bytes[at..at + T::SIZE].copy_from_slice(low);
                }
                // About a run element per vector over more than a period (7) of vectors,
                // from the second block's start, and the run's last elements.
                let block_start = BLOCK_VECTORS * VECTOR_BYTES / (T::SIZE * stride);
                let per_vector = VECTOR_BYTES / (T::SIZE * stride);
                let planted = (0..12)
                    .map(|v| block_start + v * per_vector)
                    .chain(len - 3..len);
                for i in planted {
                    let at = (start + i * stride) * T::SIZE;
                    bytes[at..at + T::SIZE].copy_from_slice(high);
                    let want = Some((T::read(high).key(), i));
                    for got in [
                        strided_run_best::<T, false>(isa, &bytes, start, len, stride),
                        strided_run_best::<T, true>(isa, &bytes, start, len, stride),
                        shared.best::<T, false>(&bytes, start, len),
                        shared.best::<T, true>(&bytes, start, len),
                    ] {
                        assert_eq!(got, want, "stride {stride} start {start} planted {i}");
                    }
                    bytes[at..at + T::SIZE].copy_from_slice(low);
                }
            }
        }
    }

    #[test]
    fn elements_between_a_runs_elements_never_win_whatever_their_value_or_phase() {
        check_off_run_lanes::<u8>(&[0], &[1], &[255]);
        check_off_run_lanes::<i8>(&[128], &[0], &[127]);
        check_off_run_lanes::<u16>(&0u16.to_le_bytes(), &1u16.to_le_bytes(), &[255; 2]);
        check_off_run_lanes::<i16>(
            &i16::MIN.to_le_bytes(),
            &0i16.to_le_bytes(),
            &i16::MAX.to_le_bytes(),
        );
        check_off_run_lanes::<u32>(&0u32.to_le_bytes(), &1u32.to_le_bytes(), &[255; 4]);
        check_off_run_lanes::<i32>(
            &i32::MIN.to_le_bytes(),
            &0i32.to_le_bytes(),
            &i32::MAX.to_le_bytes(),
        );
        check_off_run_lanes::<u64>(&0u64.to_le_bytes(), &1u64.to_le_bytes(), &[255; 8]);
        check_off_run_lanes::<i64>(
            &i64::MIN.to_le_bytes(),
            &0i64.to_le_bytes(),
            &i64::MAX.to_le_bytes(),
        );
        let f16_bytes = |v: f32| f16::from_f32(v).to_le_bytes();
        for off in [f32::INFINITY, f32::NAN] {
            check_off_run_lanes::<f16>(&f16_bytes(-65504.0), &f16_bytes(1.0), &f16_bytes(off));
            check_off_run_lanes::<f32>(
                &(-1.0f32).to_le_bytes(),
                &2.0f32.to_le_bytes(),
                &off.to_le_bytes(),
            );
            check_off_run_lanes::<f64>(
                &(-1.0f64).to_le_bytes(),
                &2.0f64.to_le_bytes(),
                &(off as f64).to_le_bytes(),
            );
        }
    }

    #[test]
    fn a_maximum_in_a_late_block_replaces_an_earlier_one_and_ties_keep_the_first_or_last() {
        let Some(isa) = Isa::available().into_iter().find(|isa| isa.avx2()) else {
            return;
        };
        // Stride 3 over i32: 9000 elements span many blocks; 5 at positions 10 and 8000.
        let mut values = vec![1i32; 27_000];
        values[30] = 5;
        values[24_000] = 5;
        values[24_001] = 9; // between run elements: never read as one
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let first = strided_run_best::<i32, false>(isa, &bytes, 0, 9000, 3);
        let last = strided_run_best::<i32, true>(isa, &bytes, 0, 9000, 3);
        assert_eq!(first, Some((5, 10)));
        assert_eq!(last, Some((5, 8000)));
    }
}
