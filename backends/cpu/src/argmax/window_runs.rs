//! AVX2: ArgMax over contiguous runs of at most two vectors (64 bytes), one run per output,
//! each read as one or two vectors whose window is fixed for the call.
//!
//! A run of `n <= 32` bytes is one vector from its start, its lanes past the run set to the
//! lowest value by a mask built once; a run of 33 to 64 bytes is two vectors, the second ending
//! at the run's end (overlapping the first), and the lanes holding the maximum of both give one
//! 64-bit mask of the run's bytes. No branch depends on the data (but for a NaN, which sends the
//! run to the exact loop). The general per-output kernel ([`Prims::run_argmax`]) finds its
//! window from a table per run and, for runs of two vectors, walks the lanes holding the
//! maximum one by one, a branch per lane: ArgMax FLOAT32 `[1e6, 4]` over axis 1 took 12.3 ms
//! with it on one AMD EPYC (Zen 3) core, `[1e6, 10]` 23.5 ms, against about 4 and 8 ms for a
//! scalar loop in C. Runs whose vectors would reach past the end of the input go through
//! [`Prims::run_argmax`].

use super::kernels::{all_lanes_max, run_argmax_portable, window_best_byte, Avx2Prims, Prims};
use super::lanes::Lanes;
use super::plan::{for_each_line, line_dim, Dim};
use super::{Job, Outputs};
use crate::element::FromIndex;
use std::arch::x86_64::*;

/// The longest run, in bytes, this kernel reads: two vectors.
const WINDOW_RUN_MAX_BYTES: usize = 64;

/// Whether runs of `run` with elements of `T` are this kernel's: contiguous, 1 to
/// [`WINDOW_RUN_MAX_BYTES`] bytes.
pub(super) fn takes<T: Lanes>(run: Dim) -> bool {
    run.stride == 1 && run.size >= 1 && run.size * T::SIZE <= WINDOW_RUN_MAX_BYTES
}

/// Outputs `first..first + count` of the units `unit_dims`, each the ArgMax of its run `run`
/// (one [`takes`] accepts), written to `outputs`.
///
/// # Safety
/// The CPU must support AVX2; `takes::<T>(run)`; no other thread writes these outputs.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn runs_task_avx2<T: Lanes, O: FromIndex, const LAST: bool>(
    job: &Job<'_>,
    unit_dims: &[Dim],
    run: Dim,
    first: usize,
    count: usize,
    outputs: &Outputs<O>,
) {
    debug_assert!(takes::<T>(run), "window_runs: not a window run");
    let data = job.data;
    let n = run.size * T::SIZE;
    // Bytes read from a run's start: a whole vector for a short run, the run for a long one.
    let reach = n.max(32);
    let inside = lanes_below(n.min(32));
    let run_bits = u32::MAX >> (32 - n.min(32));
    let inner = line_dim(unit_dims);
    for_each_line(unit_dims, first, count, |at, len| {
        let fast = steps_inside(
            at.offset * T::SIZE,
            inner.stride * T::SIZE,
            len,
            reach,
            data.len(),
        );
        let last_slot = at.slot + (len - 1) * inner.slot_stride;
        let out = outputs.slots_at(at.slot, last_slot + 1 - at.slot);
        let store = |step: usize, position: usize| {
            let index = O::from_index(job.finish::<LAST>(position * run.index_stride));
            // SAFETY: the line's slots lie inside the output (`slots_at` checked the last);
            // the task's outputs are its own (the contract).
            let slot = out.add(step * inner.slot_stride * O::SIZE);
            index.write(std::slice::from_raw_parts_mut(slot, O::SIZE));
        };
        for step in 0..fast {
            let start = (at.offset + step * inner.stride) * T::SIZE;
            let p = data.as_ptr().add(start);
            let found = if n <= 32 {
                one_vector::<T, LAST>(p, inside, run_bits)
            } else {
                two_vectors::<T, LAST>(p, n)
            };
            let position =
                found.unwrap_or_else(|| run_argmax_portable::<T, LAST>(&data[start..start + n]));
            store(step, position);
        }
        for step in fast..len {
            let start = (at.offset + step * inner.stride) * T::SIZE;
            store(step, Avx2Prims::run_argmax::<T, LAST>(data, start, n));
        }
    });
}

/// How many of the `len` steps from byte `first`, `pitch` bytes apart, start a read of
/// `reach` bytes that ends inside an input of `bytes` bytes: the steps before the first that
/// would read past its end.
pub(super) fn steps_inside(
    first: usize,
    pitch: usize,
    len: usize,
    reach: usize,
    bytes: usize,
) -> usize {
    let Some(room) = bytes.checked_sub(first + reach) else {
        return 0;
    };
    if pitch == 0 {
        return len;
    }
    (room / pitch + 1).min(len)
}

/// All ones in the bytes below `n` (at most 32), zero in the others: the lanes of a window of
/// `n` bytes read as one vector.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only).
#[inline(always)]
pub(super) unsafe fn lanes_below(n: usize) -> __m256i {
    let byte_numbers = _mm256_setr_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        25, 26, 27, 28, 29, 30, 31,
    );
    _mm256_cmpgt_epi8(_mm256_set1_epi8(n as i8), byte_numbers)
}

/// The position of the first (or, with `LAST`, the last) maximum of the run whose bytes are
/// those of `inside` (the first `n <= 32`, `run_bits` their bits) in the vector at `p`. None
/// when a NaN appears.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only); 32 readable bytes at `p`.
#[inline(always)]
unsafe fn one_vector<T: Lanes, const LAST: bool>(
    p: *const u8,
    inside: __m256i,
    run_bits: u32,
) -> Option<usize> {
    let v = _mm256_blendv_epi8(T::lowest(), T::load(p), inside);
    Some(window_best_byte::<T, LAST>(v, run_bits)? / T::SIZE)
}

/// [`one_vector`] for a run of `n` bytes, 33 to 64, at `p`: the vectors at its start and at
/// its end, their lanes holding the maximum of both merged into one mask of the run's bytes
/// (the overlap's bits coincide). None when a NaN appears.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only); `n` readable bytes at `p`,
/// `32 < n <= 64`.
#[inline(always)]
unsafe fn two_vectors<T: Lanes, const LAST: bool>(p: *const u8, n: usize) -> Option<usize> {
    let head = T::load(p);
    let tail = T::load(p.add(n - 32));
    if T::CAN_NAN {
        let nan = _mm256_or_si256(T::nan(head), T::nan(tail));
        if _mm256_testz_si256(nan, nan) == 0 {
            return None;
        }
    }
    let max = all_lanes_max::<T>(T::max(head, tail));
    let bits = |v: __m256i| u64::from(_mm256_movemask_epi8(T::eq(v, max)) as u32);
    let winners = bits(head) | bits(tail) << (n - 32);
    let byte = if LAST {
        63 - winners.leading_zeros() as usize
    } else {
        winners.trailing_zeros() as usize
    };
    Some(byte / T::SIZE)
}
