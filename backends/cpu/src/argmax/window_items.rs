//! AVX2: ArgMax of a [`Shape::Rows`](super::plan::Shape::Rows) plan whose *items* (the rows
//! of one outer coordinate, each a short tail of outputs) fit in two vectors: one reduced
//! dimension of at most 64 bytes whose stride, the *pitch*, is a power of two holding the
//! whole tail, such as UINT8 `[n, 9, 2]` over axis 1 (pitch 2, an item of 18 bytes holding
//! two outputs).
//!
//! An item is read as one vector from its start (its lanes past the item set to the lowest
//! value under a mask built once per call), or as two, the second ending at the item's end.
//! Lanes a multiple of the pitch apart hold the same output, so the maxima of every output at
//! once come from rotating the vector by the pitch's multiples (within each half, then across
//! the halves) and taking the maximum each time; the lanes equal to their output's maximum
//! give one mask of the item's bytes, and each output's position is the first (with
//! DECREASING, last) bit of its own lanes in that mask. No branch depends on the data (but
//! for a NaN, which sends the item to the exact loop).
//!
//! The row kernels fold such an item row by row, a vector step for each row of two bytes:
//! UINT8 `[7545, 6, 3, 9, 2]` over axis 3 took about 10 ms on one AMD EPYC (Zen 3) core,
//! behind ONNX Runtime's 8.4.

use super::kernels::better;
use super::lanes::Lanes;
use super::plan::{for_each_line, Dim, Plan};
use super::window_runs::{byte_numbers, steps_inside};
use super::{Job, Outputs};
use crate::element::FromIndex;
use std::arch::x86_64::*;

/// The widest item this kernel reads, in bytes: two vectors.
const WINDOW_BYTES: usize = 64;

/// Bytes in a vector.
const VECTOR_BYTES: usize = 32;

/// How the items of one call lie: found once, used for every item.
pub(super) struct WindowItems {
    /// Bytes between an item's rows (the reduced dimension's stride): 2, 4, 8, 16 or 32.
    pitch: usize,
    /// The reduced dimension: rows per item, their input stride and index stride.
    reduced: Dim,
    /// The tail: outputs per item, their input stride and slot stride.
    tail: Dim,
    /// Per tail output: the mask bits of the first byte of each of its elements in an item.
    output_bits: Vec<u64>,
}

impl WindowItems {
    /// The layout of `plan`'s items, or None when they are not this kernel's: one reduced
    /// dimension, a pitch that is a power of two of at most a vector holding the whole tail,
    /// and at most [`WINDOW_BYTES`] of rows.
    pub(super) fn new<T: Lanes>(plan: &Plan) -> Option<WindowItems> {
        let (&[reduced], Some(tail), None) = (&plan.reduced[..], plan.tail, plan.tail_gap) else {
            return None;
        };
        let pitch = reduced.stride.checked_mul(T::SIZE)?;
        let tail_bytes = ((tail.size - 1) * tail.stride + 1) * T::SIZE;
        let fits = pitch.is_power_of_two()
            && pitch <= VECTOR_BYTES
            && tail_bytes <= pitch
            && reduced.size >= 2
            && reduced.size * pitch <= WINDOW_BYTES;
        if !fits {
            return None;
        }
        let output_bits = (0..tail.size)
            .map(|j| {
                (0..reduced.size)
                    .map(|row| 1u64 << (row * pitch + j * tail.stride * T::SIZE))
                    .fold(0, |bits, bit| bits | bit)
            })
            .collect();
        Some(WindowItems {
            pitch,
            reduced,
            tail,
            output_bits,
        })
    }

    /// Input elements an item holds, the gaps between its outputs included.
    pub(super) fn item_elements(&self) -> usize {
        self.reduced.size * self.reduced.stride
    }

    /// Writes the outputs of items `first..first + count` of the walk over `outer`.
    ///
    /// # Safety
    /// The CPU must support AVX2; no other thread writes these items' outputs.
    pub(super) unsafe fn task<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        job: &Job<'_>,
        outer: &[Dim],
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        match self.pitch {
            2 => self.task_avx2::<T, O, LAST, 2>(job, outer, first, count, outputs),
            4 => self.task_avx2::<T, O, LAST, 4>(job, outer, first, count, outputs),
            8 => self.task_avx2::<T, O, LAST, 8>(job, outer, first, count, outputs),
            16 => self.task_avx2::<T, O, LAST, 16>(job, outer, first, count, outputs),
            _ => self.task_avx2::<T, O, LAST, 32>(job, outer, first, count, outputs),
        }
    }

    /// [`WindowItems::task`] for a pitch of `PITCH` bytes.
    ///
    /// # Safety
    /// As [`WindowItems::task`], and `PITCH == self.pitch`.
    #[target_feature(enable = "avx2")]
    unsafe fn task_avx2<T: Lanes, O: FromIndex, const LAST: bool, const PITCH: usize>(
        &self,
        job: &Job<'_>,
        outer: &[Dim],
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        debug_assert_eq!(PITCH, self.pitch, "window_items: pitch");
        let data = job.data;
        let width = self.reduced.size * PITCH;
        let inside = _mm256_cmpgt_epi8(
            _mm256_set1_epi8(width.min(VECTOR_BYTES) as i8),
            byte_numbers(),
        );
        // No outer dimension: a single item, whose line's strides are never used.
        let inner = outer.last().copied().unwrap_or(Dim {
            size: 1,
            stride: 0,
            index_stride: 0,
            slot_stride: 0,
        });
        let tail_slots = (self.tail.size - 1) * self.tail.slot_stride;
        for_each_line(outer, first, count, |at, len| {
            let fast = steps_inside(
                at.offset * T::SIZE,
                inner.stride * T::SIZE,
                len,
                width.max(VECTOR_BYTES),
                data.len(),
            );
            let last_slot = at.slot + (len - 1) * inner.slot_stride + tail_slots;
            let out = outputs.slots_at(at.slot, last_slot + 1 - at.slot);
            let store = |slot: usize, row: usize| {
                let index = O::from_index(job.finish::<LAST>(row * self.reduced.index_stride));
                // SAFETY: the line's slots lie inside the output (`slots_at` checked the last);
                // the task's outputs are its own (the contract).
                let slot = out.add(slot * O::SIZE);
                index.write(std::slice::from_raw_parts_mut(slot, O::SIZE));
            };
            for step in 0..len {
                let start = at.offset + step * inner.stride;
                let slot = step * inner.slot_stride;
                let winners = if step < fast {
                    item_winners::<T, PITCH>(data.as_ptr().add(start * T::SIZE), width, inside)
                } else {
                    None
                };
                for (j, bits) in self.output_bits.iter().enumerate() {
                    let slot = slot + j * self.tail.slot_stride;
                    let row = match winners {
                        Some(winners) => first_or_last_bit::<LAST>(winners & bits) / PITCH,
                        None => self.exact_row::<T, LAST>(data, start + j * self.tail.stride),
                    };
                    store(slot, row);
                }
            }
        });
    }

    /// The row of the first (or, with `LAST`, the last) maximum of the output whose first
    /// element is at element offset `start`, element by element.
    fn exact_row<T: Lanes, const LAST: bool>(&self, data: &[u8], start: usize) -> usize {
        let key_at = |row: usize| {
            let at = (start + row * self.reduced.stride) * T::SIZE;
            T::read(&data[at..at + T::SIZE]).key()
        };
        let (mut best, mut best_row) = (key_at(0), 0);
        for row in 1..self.reduced.size {
            let key = key_at(row);
            if better::<_, LAST>(key, best) {
                (best, best_row) = (key, row);
            }
        }
        best_row
    }
}

/// The mask of the bytes of the item of `width` bytes at `p` (one bit per byte, the item's
/// first byte the lowest bit) whose element equals the maximum of the lanes a multiple of
/// `PITCH` bytes away: each output's maximum, in its own lanes. None when a NaN appears.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only); `width.max(32)` readable
/// bytes at `p`; `inside` the lanes below `width.min(32)`.
#[inline(always)]
unsafe fn item_winners<T: Lanes, const PITCH: usize>(
    p: *const u8,
    width: usize,
    inside: __m256i,
) -> Option<u64> {
    if width <= VECTOR_BYTES {
        let v = _mm256_blendv_epi8(T::lowest(), T::load(p), inside);
        if T::CAN_NAN && has_nan::<T>(v) {
            return None;
        }
        let max = phase_max::<T, PITCH>(v);
        return Some(u64::from(_mm256_movemask_epi8(T::eq(v, max)) as u32));
    }
    let head = T::load(p);
    let tail = T::load(p.add(width - VECTOR_BYTES));
    if T::CAN_NAN && has_nan::<T>(_mm256_or_si256(head, tail)) {
        return None;
    }
    let max = phase_max::<T, PITCH>(T::max(head, tail));
    let bits = |v: __m256i| u64::from(_mm256_movemask_epi8(T::eq(v, max)) as u32);
    Some(bits(head) | bits(tail) << (width - VECTOR_BYTES))
}

/// True when a lane of `v` holds a NaN.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only).
#[inline(always)]
unsafe fn has_nan<T: Lanes>(v: __m256i) -> bool {
    let nan = T::nan(v);
    _mm256_testz_si256(nan, nan) == 0
}

/// Each lane of `v` set to the maximum of the lanes a multiple of `PITCH` bytes (a power of
/// two, 2 to 32) away from it.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only).
#[inline(always)]
unsafe fn phase_max<T: Lanes, const PITCH: usize>(mut v: __m256i) -> __m256i {
    if PITCH <= 2 {
        v = T::max(v, _mm256_alignr_epi8::<2>(v, v));
    }
    if PITCH <= 4 {
        v = T::max(v, _mm256_alignr_epi8::<4>(v, v));
    }
    if PITCH <= 8 {
        v = T::max(v, _mm256_alignr_epi8::<8>(v, v));
    }
    if PITCH <= 16 {
        v = T::max(v, _mm256_permute2x128_si256::<1>(v, v));
    }
    v
}

/// The first set bit of `bits` (nonzero), or with `LAST` the last.
#[inline(always)]
fn first_or_last_bit<const LAST: bool>(bits: u64) -> usize {
    if LAST {
        63 - bits.leading_zeros() as usize
    } else {
        bits.trailing_zeros() as usize
    }
}
