//! AVX2: ArgMax over runs spanning at most two vectors (64 bytes), one run per output, each
//! read as one or two vectors whose window is fixed for the call.
//!
//! A run spanning `n <= 32` bytes is one vector from its start, its lanes outside the run (past
//! it, or between its elements when they lie `stride` apart) set to the lowest value by a mask
//! built once; a span of 33 to 64 bytes is two vectors, the second ending at the span's end
//! (overlapping the first), and the lanes holding the maximum of both give one 64-bit mask of
//! the span's bytes. No branch depends on the data (but for a NaN, which sends the run to the
//! exact loop). Element-strided runs come here from the kept dimensions inside their span too
//! ([`strided_units`]): ArgMax UINT8 `[7545, 6, 3, 9, 2]` over axis 3 was folded item by item,
//! two outputs an item, at 14 ms (a random sweep's row, behind ONNX Runtime's 8.4).
//!
//! The general per-output kernel ([`Prims::run_argmax`](super::kernels::Prims::run_argmax))
//! finds its window from a table per run and, for runs of two vectors, walks the lanes holding
//! the maximum one by one, a branch per lane: ArgMax FLOAT32 `[1e6, 4]` over axis 1 took 12.3
//! ms with it on one AMD EPYC (Zen 3) core, `[1e6, 10]` 23.5 ms, against about 4 and 8 ms for
//! a scalar loop in C. Runs whose vectors would reach past the end of the input are reduced by
//! the exact loop ([`exact_run_best`]).

use super::kernels::all_lanes_max;
use super::lanes::Lanes;
use super::plan::{for_each_line, Dim, Plan};
use super::scan::exact_run_best;
use super::{Job, Outputs};
use crate::element::FromIndex;
use crate::simd::Isa;
use std::arch::x86_64::*;

/// The longest span of a run, in bytes, this kernel reads: two vectors.
pub(super) const WINDOW_RUN_MAX_BYTES: usize = 64;

/// Whether runs of `run` with elements of `T` are this kernel's: 1 to [`WINDOW_RUN_MAX_BYTES`]
/// bytes from the first element's start to the last one's end, elements at least one apart.
pub(super) fn takes<T: Lanes>(run: Dim) -> bool {
    run.stride >= 1 && run.size >= 1 && span_bytes::<T>(run) <= WINDOW_RUN_MAX_BYTES
}

/// Bytes from a run's first element's start to its last one's end.
fn span_bytes<T: Lanes>(run: Dim) -> usize {
    (run.size - 1)
        .saturating_mul(run.stride)
        .saturating_add(1)
        .saturating_mul(T::SIZE)
}

/// The units (every kept dimension, outermost in memory first) and the run of a plan whose one
/// reduced dimension is element-strided, for this kernel, with AVX2 but not AVX-512 (whose
/// group kernels take short runs): the kept dimensions inside the runs' span are walked as
/// units too. None for other plans.
pub(super) fn strided_units<T: Lanes>(plan: &Plan, isa: Isa) -> Option<(Vec<Dim>, Dim)> {
    let [run] = plan.reduced[..] else {
        return None;
    };
    let ours = isa.avx2() && isa != Isa::Avx512;
    if !ours || run.stride < 2 || !takes::<T>(run) {
        return None;
    }
    let units = plan
        .order
        .iter()
        .filter(|d| !d.is_reduced())
        .copied()
        .collect();
    Some((units, run))
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
    let n = span_bytes::<T>(run);
    let window = Window::new::<T>(run, n);
    // Bytes read from a run's start: a whole vector for a short span, the span for a long one.
    let reach = n.max(32);
    // No unit dimension: a single output, whose line's strides are never used.
    let inner = unit_dims.last().copied().unwrap_or(Dim {
        size: 1,
        stride: 0,
        index_stride: 0,
        slot_stride: 0,
    });
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
        let exact = |step: usize| {
            let offset = at.offset + step * inner.stride;
            exact_run_best::<T, LAST>(data, offset, run.size, run.stride).map_or(0, |(_, p)| p)
        };
        for step in 0..fast {
            let p = data
                .as_ptr()
                .add((at.offset + step * inner.stride) * T::SIZE);
            let found = if n <= 32 {
                one_vector::<T, LAST>(p, window.head, window.head_bits)
            } else {
                two_vectors::<T, LAST>(p, n, &window)
            };
            let position = match found {
                Some(byte) => byte / T::SIZE / run.stride,
                None => exact(step),
            };
            store(step, position);
        }
        for step in fast..len {
            store(step, exact(step));
        }
    });
}

/// The lanes of a run's vectors that hold its elements: of the vector at its start, and, for
/// a span over 32 bytes, of the vector ending at its end.
struct Window {
    /// The first vector's lanes (all bits of a byte set where it belongs to an element).
    head: __m256i,
    /// Their bytes' bits.
    head_bits: u32,
    /// The last vector's lanes.
    tail: __m256i,
    /// Their bytes' bits.
    tail_bits: u32,
}

impl Window {
    /// The window of runs of `run` spanning `n` bytes (1 to 64).
    ///
    /// # Safety
    /// The CPU must support AVX2 (inlined into such functions only).
    #[inline(always)]
    unsafe fn new<T: Lanes>(run: Dim, n: usize) -> Window {
        let pitch = run.stride * T::SIZE;
        // Byte `b` of the span belongs to an element when it lies within the element's size
        // of a multiple of the pitch.
        let bits_from = |first: usize| {
            (0..32)
                .filter(|&b| first + b < n && (first + b) % pitch < T::SIZE)
                .fold(0u32, |bits, b| bits | 1 << b)
        };
        let head_bits = bits_from(0);
        let tail_bits = bits_from(n.saturating_sub(32));
        Window {
            head: lanes_of(head_bits),
            head_bits,
            tail: lanes_of(tail_bits),
            tail_bits,
        }
    }
}

/// A vector whose byte `b` is all ones where bit `b` of `bits` is set, else zero.
#[inline(always)]
unsafe fn lanes_of(bits: u32) -> __m256i {
    let mut bytes = [0u8; 32];
    for (b, byte) in bytes.iter_mut().enumerate() {
        *byte = if bits >> b & 1 == 1 { 0xff } else { 0 };
    }
    _mm256_loadu_si256(bytes.as_ptr().cast())
}

/// How many of the `len` steps from byte `first`, `pitch` bytes apart, start a read of
/// `reach` bytes that ends inside an input of `bytes` bytes: the steps before the first that
/// would read past its end.
fn steps_inside(first: usize, pitch: usize, len: usize, reach: usize, bytes: usize) -> usize {
    let Some(room) = bytes.checked_sub(first + reach) else {
        return 0;
    };
    if pitch == 0 {
        return len;
    }
    (room / pitch + 1).min(len)
}

/// The byte (in the vector at `p`) of the first (or, with `LAST`, the last) maximum of the run
/// whose elements' bytes are the lanes of `inside` (`bits` their bits). None when a NaN
/// appears.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only); 32 readable bytes at `p`.
#[inline(always)]
unsafe fn one_vector<T: Lanes, const LAST: bool>(
    p: *const u8,
    inside: __m256i,
    bits: u32,
) -> Option<usize> {
    let v = _mm256_blendv_epi8(T::lowest(), T::load(p), inside);
    if T::CAN_NAN {
        let nan = T::nan(v);
        if _mm256_testz_si256(nan, nan) == 0 {
            return None;
        }
    }
    // The lanes outside the run hold the lowest value, which the maximum may be too.
    let winners = _mm256_movemask_epi8(T::eq(v, all_lanes_max::<T>(v))) as u32 & bits;
    Some(if LAST {
        31 - winners.leading_zeros() as usize
    } else {
        winners.trailing_zeros() as usize
    })
}

/// [`one_vector`] for a run spanning `n` bytes, 33 to 64, at `p`: the vectors at the span's
/// start and at its end, each under its lanes of `window`, their lanes holding the maximum of
/// both merged into one mask of the span's bytes (the overlap's bits coincide). The byte is
/// the span's. None when a NaN appears.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only); `n` readable bytes at `p`,
/// `32 < n <= 64`.
#[inline(always)]
unsafe fn two_vectors<T: Lanes, const LAST: bool>(
    p: *const u8,
    n: usize,
    window: &Window,
) -> Option<usize> {
    let head = _mm256_blendv_epi8(T::lowest(), T::load(p), window.head);
    let tail = _mm256_blendv_epi8(T::lowest(), T::load(p.add(n - 32)), window.tail);
    if T::CAN_NAN {
        let nan = _mm256_or_si256(T::nan(head), T::nan(tail));
        if _mm256_testz_si256(nan, nan) == 0 {
            return None;
        }
    }
    let max = all_lanes_max::<T>(T::max(head, tail));
    let bits =
        |v: __m256i, inside: u32| u64::from(_mm256_movemask_epi8(T::eq(v, max)) as u32 & inside);
    let winners = bits(head, window.head_bits) | bits(tail, window.tail_bits) << (n - 32);
    Some(if LAST {
        63 - winners.leading_zeros() as usize
    } else {
        winners.trailing_zeros() as usize
    })
}
