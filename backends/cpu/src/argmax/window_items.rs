//! AVX2: ArgMax of a [`Shape::Rows`](super::plan::Shape::Rows) plan with one reduced
//! dimension, item by item: an *item* is the reduced rows of one outer coordinate, and its
//! outputs are those of the tail (and of one more kept dimension lying inside a row) whose
//! elements fit in two vectors per row. Each item is read with no state kept between items,
//! in one of two ways.
//!
//! - *Phases* ([`WindowItems::phases`]): the whole item fits in two vectors and the rows'
//!   stride (the *pitch*) is a power of two holding a row's outputs, such as UINT8 `[n, 9, 2]`
//!   over axis 1 (pitch 2, items of 18 bytes). An item is read as one vector from its start
//!   (its lanes past the item set to the lowest value under a mask built once per call), or
//!   as two, the second ending at the item's end. Lanes a multiple of the pitch apart hold
//!   the same output, so the maxima of every output at once come from rotating the vector by
//!   the pitch's multiples (within each half, then across the halves) and taking the maximum
//!   each time; the lanes equal to their output's maximum give one mask of the item's bytes,
//!   and each output's position is the first (with DECREASING, last) bit of its own lanes.
//! - *Stacked* ([`WindowItems::stacked`]): a row's outputs span at most two vectors, at any
//!   pitch, up to 256 rows lying within 4 KiB, such as a padded UINT8 `[n, 3, 4, 4]` over
//!   axis 1. The item's rows are folded into one or two vectors of maxima, each lane keeping
//!   the row of its best value in a vector of row numbers, and each output reads its row from
//!   its own lane.
//!
//! No branch depends on the data, but for a NaN among the outputs' elements, which sends the
//! item to the exact loop. The row kernels fold an item as rows of a tail with state kept per
//! output and the results written through it, a cost per item that short items feel: UINT8
//! `[7545, 6, 3, 9, 2]` over axis 3 took about 10 ms on one AMD EPYC (Zen 3) core, behind
//! ONNX Runtime's 8.4, and a UINT8 `[1710, 128, 3, 4, 4]` padded to 11 over axis 2 23–38 ms
//! (5.4 item by item).

use super::lanes::Lanes;
use super::plan::{for_each_line, line_dim, Dim, Plan};
use super::scan::exact_run_best;
use super::window_runs::{lanes_below, steps_inside};
use super::{Job, Outputs};
use crate::element::FromIndex;
use std::arch::x86_64::*;

/// The widest window this kernel reads at once, in bytes: two vectors.
const WINDOW_BYTES: usize = 64;

/// Bytes in a vector.
const VECTOR_BYTES: usize = 32;

/// Rows a stacked item holds at most (their numbers are kept in byte lanes).
const STACKED_MAX_ROWS: usize = 256;

/// Bytes a stacked item spans at most, from its first row's start to its last row's: items
/// whose rows lie further apart read each row as a stream of its own, one short piece per item
/// (FLOAT32 `[100, 5000, 3, 4]` padded to 5 over axis 0, rows 300 KB apart, took 2.35 and 2.54
/// ms so in two runs against the row fold's 2.06 and 2.37, which reads each row's range of
/// many items at once).
const STACKED_MAX_ITEM_BYTES: usize = 4096;

/// Outputs an item holds at most: one per byte of a row's window. More can only come from
/// kept dimensions whose elements coincide (a broadcast one, of stride 0), whose list of outputs
/// could outgrow the output itself and would leave one item for a single thread.
const ITEM_MAX_OUTPUTS: usize = WINDOW_BYTES;

/// One output of an item.
#[derive(Debug, Clone, Copy)]
struct ItemOutput {
    /// Its first element's offset from the item's, in elements.
    offset: usize,
    /// Its slot's distance from the item's first slot.
    slot: usize,
    /// Phases: the mask bits of the first byte of each of its elements in the item's window.
    /// Stacked: the bit of its first byte in a row's window.
    bits: u64,
    /// Stacked: the byte of a row's window where its element starts.
    lane: usize,
}

/// How an item is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The whole item in one window, its outputs' maxima by rotations of the pitch.
    Phases,
    /// The rows folded one by one into a window of a row's outputs.
    Stacked,
}

/// How the items of one call lie: found once, used for every item.
pub(super) struct WindowItems {
    mode: Mode,
    /// The reduced dimension: rows per item, their input stride and index stride.
    reduced: Dim,
    /// The outer dimensions walked item by item.
    units: Vec<Dim>,
    outputs: Vec<ItemOutput>,
    /// Phases: the window's bytes (rows × pitch). Stacked: a row's window, from its first
    /// output's element to the end of its last.
    window: usize,
    /// The bits of every output's elements' first bytes in the window (a NaN elsewhere does
    /// not matter).
    output_bits: u64,
}

impl WindowItems {
    /// The phased items of `plan`, or None when they are not: one reduced dimension, a pitch
    /// that is a power of two of at most a vector holding a row's outputs, and at most
    /// [`WINDOW_BYTES`] of rows.
    pub(super) fn phases<T: Lanes>(plan: &Plan) -> Option<WindowItems> {
        let mut items = WindowItems::new::<T>(plan, Mode::Phases)?;
        let pitch = items.reduced.stride.checked_mul(T::SIZE)?;
        let fits = pitch.is_power_of_two()
            && pitch <= VECTOR_BYTES
            && items.window <= pitch
            && items.reduced.size * pitch <= WINDOW_BYTES;
        if !fits {
            return None;
        }
        items.window = items.reduced.size * pitch;
        for output in &mut items.outputs {
            output.bits = (0..items.reduced.size)
                .map(|row| 1u64 << (row * pitch + output.offset * T::SIZE))
                .fold(0, |bits, bit| bits | bit);
        }
        items.output_bits = items.outputs.iter().fold(0, |bits, o| bits | o.bits);
        Some(items)
    }

    /// The stacked items of `plan`, or None when they are not: one reduced dimension of at
    /// most [`STACKED_MAX_ROWS`] rows spanning at most [`STACKED_MAX_ITEM_BYTES`], and a
    /// row's outputs within [`WINDOW_BYTES`].
    pub(super) fn stacked<T: Lanes>(plan: &Plan) -> Option<WindowItems> {
        let items = WindowItems::new::<T>(plan, Mode::Stacked)?;
        let rows = items.reduced.size;
        let span = (rows - 1)
            .checked_mul(items.reduced.stride)?
            .checked_mul(T::SIZE)?;
        (rows <= STACKED_MAX_ROWS && span <= STACKED_MAX_ITEM_BYTES).then_some(items)
    }

    /// The items of `plan` read in `mode`, the window a row's outputs' span: None without a
    /// single reduced dimension of at least two rows, or when a row's outputs span more than
    /// [`WINDOW_BYTES`] or number more than [`ITEM_MAX_OUTPUTS`].
    fn new<T: Lanes>(plan: &Plan, mode: Mode) -> Option<WindowItems> {
        let (&[reduced], Some(tail), None) = (&plan.reduced[..], plan.tail, plan.tail_gap) else {
            return None;
        };
        if reduced.size < 2 {
            return None;
        }
        // The tail, and the outer dimension nearest it when its elements lie inside a row.
        let mut kept = vec![tail];
        let mut units = plan.outer.clone();
        if let Some(&inner) = units.last() {
            if inner.stride < reduced.stride {
                units.pop();
                kept.push(inner);
            }
        }
        let span = kept
            .iter()
            .map(|d| (d.size - 1) * d.stride)
            .sum::<usize>()
            .checked_add(1)?
            .checked_mul(T::SIZE)?;
        let count = kept.iter().map(|d| d.size).product::<usize>();
        if span > WINDOW_BYTES || count > ITEM_MAX_OUTPUTS {
            return None;
        }
        let mut outputs = vec![ItemOutput {
            offset: 0,
            slot: 0,
            bits: 0,
            lane: 0,
        }];
        for d in kept.iter().rev() {
            outputs = outputs
                .iter()
                .flat_map(|o| {
                    (0..d.size).map(move |c| ItemOutput {
                        offset: o.offset + c * d.stride,
                        slot: o.slot + c * d.slot_stride,
                        ..*o
                    })
                })
                .collect();
        }
        let mut output_bits = 0;
        for output in &mut outputs {
            output.lane = output.offset * T::SIZE;
            output.bits = 1 << output.lane;
            output_bits |= output.bits;
        }
        Some(WindowItems {
            mode,
            reduced,
            units,
            outputs,
            window: span,
            output_bits,
        })
    }

    /// Items in the call.
    pub(super) fn count(&self) -> usize {
        self.units.iter().map(|d| d.size).product()
    }

    /// Input elements an item covers, the gaps between its outputs included.
    pub(super) fn item_elements(&self) -> usize {
        self.reduced.size * self.reduced.stride
    }

    /// Writes the outputs of items `first..first + count`.
    ///
    /// # Safety
    /// The CPU must support AVX2; no other thread writes these items' outputs.
    pub(super) unsafe fn task<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        job: &Job<'_>,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        let pitch = self.reduced.stride * T::SIZE;
        match (self.mode, pitch, self.window > VECTOR_BYTES) {
            (Mode::Phases, 2, _) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Phases::<2>)
            }
            (Mode::Phases, 4, _) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Phases::<4>)
            }
            (Mode::Phases, 8, _) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Phases::<8>)
            }
            (Mode::Phases, 16, _) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Phases::<16>)
            }
            (Mode::Phases, _, _) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Phases::<32>)
            }
            (Mode::Stacked, _, false) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Stacked::<false>)
            }
            (Mode::Stacked, _, true) => {
                self.walk::<T, O, LAST, _>(job, first, count, outputs, Stacked::<true>)
            }
        }
    }

    /// [`WindowItems::task`] with the item kernel `K`.
    ///
    /// # Safety
    /// As [`WindowItems::task`]; `kernel` is this call's mode.
    #[target_feature(enable = "avx2")]
    unsafe fn walk<T: Lanes, O: FromIndex, const LAST: bool, K: ItemKernel>(
        &self,
        job: &Job<'_>,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
        kernel: K,
    ) {
        let data = job.data;
        let inside = lanes_below(self.window.min(VECTOR_BYTES));
        let reach = kernel.reach::<T>(self);
        let inner = line_dim(&self.units);
        let item_slots = self.outputs.iter().map(|o| o.slot).max().unwrap_or(0);
        for_each_line(&self.units, first, count, |at, len| {
            let fast = steps_inside(
                at.offset * T::SIZE,
                inner.stride * T::SIZE,
                len,
                reach,
                data.len(),
            );
            let last_slot = at.slot + (len - 1) * inner.slot_stride + item_slots;
            let out = outputs.slots_at(at.slot, last_slot + 1 - at.slot);
            let store = |slot: usize, row: usize| {
                let index = O::from_index(job.finish::<LAST>(row * self.reduced.index_stride));
                // SAFETY: the line's slots lie inside the output (`slots_at` checked the last);
                // the task's outputs are its own (the contract).
                let slot = out.add(slot * O::SIZE);
                index.write(std::slice::from_raw_parts_mut(slot, O::SIZE));
            };
            let mut found = K::Found::default();
            for step in 0..len {
                let start = at.offset + step * inner.stride;
                let slot = step * inner.slot_stride;
                let p = data.as_ptr().add(start * T::SIZE);
                if step < fast && kernel.find::<T, LAST>(self, p, inside, &mut found) {
                    for output in &self.outputs {
                        store(slot + output.slot, K::row::<LAST>(&found, output));
                    }
                } else {
                    for output in &self.outputs {
                        let row = self.exact_row::<T, LAST>(data, start + output.offset);
                        store(slot + output.slot, row);
                    }
                }
            }
        });
    }

    /// The row of the first (or, with `LAST`, the last) maximum of the output whose first
    /// element is at element offset `start`, element by element.
    fn exact_row<T: Lanes, const LAST: bool>(&self, data: &[u8], start: usize) -> usize {
        let (rows, stride) = (self.reduced.size, self.reduced.stride);
        exact_run_best::<T, LAST>(data, start, rows, stride).map_or(0, |(_, row)| row)
    }
}

/// What an item's mode computes once per item, and how each output takes its row from it.
trait ItemKernel: Copy {
    /// What [`ItemKernel::find`] hands each output.
    type Found: Default;

    /// Bytes read from an item's start.
    fn reach<T: Lanes>(&self, items: &WindowItems) -> usize;

    /// Puts into `found` the item at `p`'s result for all its outputs; false when a NaN lies
    /// among them. (Returned by value, the stacked rows went through the stack in pieces and
    /// their reload waited on the stores.)
    ///
    /// # Safety
    /// The CPU must support AVX2 (inlined into such functions only); [`ItemKernel::reach`]
    /// readable bytes at `p`; `inside` the lanes below `items.window.min(32)`.
    unsafe fn find<T: Lanes, const LAST: bool>(
        &self,
        items: &WindowItems,
        p: *const u8,
        inside: __m256i,
        found: &mut Self::Found,
    ) -> bool;

    /// The row of `output`'s first (with `LAST`, last) maximum.
    fn row<const LAST: bool>(found: &Self::Found, output: &ItemOutput) -> usize;
}

/// [`Mode::Phases`] at a pitch of `PITCH` bytes.
#[derive(Clone, Copy)]
struct Phases<const PITCH: usize>;

impl<const PITCH: usize> ItemKernel for Phases<PITCH> {
    /// The mask of the item's bytes (bit `i` for byte `i`) whose element equals the maximum
    /// of its output.
    type Found = u64;

    fn reach<T: Lanes>(&self, items: &WindowItems) -> usize {
        items.window.max(VECTOR_BYTES)
    }

    #[inline(always)]
    unsafe fn find<T: Lanes, const LAST: bool>(
        &self,
        items: &WindowItems,
        p: *const u8,
        inside: __m256i,
        found: &mut u64,
    ) -> bool {
        let width = items.window;
        if width <= VECTOR_BYTES {
            let v = _mm256_blendv_epi8(T::lowest(), T::load(p), inside);
            if T::CAN_NAN && lane_bits(T::nan(v)) & items.output_bits != 0 {
                return false;
            }
            let max = phase_max::<T, PITCH>(v);
            *found = lane_bits(T::eq(v, max));
            return true;
        }
        let head = T::load(p);
        let tail = T::load(p.add(width - VECTOR_BYTES));
        let joined = |head: __m256i, tail: __m256i| {
            lane_bits(head) | lane_bits(tail) << (width - VECTOR_BYTES)
        };
        if T::CAN_NAN && joined(T::nan(head), T::nan(tail)) & items.output_bits != 0 {
            return false;
        }
        let max = phase_max::<T, PITCH>(T::max(head, tail));
        *found = joined(T::eq(head, max), T::eq(tail, max));
        true
    }

    #[inline(always)]
    fn row<const LAST: bool>(found: &u64, output: &ItemOutput) -> usize {
        first_or_last_bit::<LAST>(found & output.bits) / PITCH
    }
}

/// [`Mode::Stacked`], a row's window one vector or (`TWO`) two.
#[derive(Clone, Copy)]
struct Stacked<const TWO: bool>;

impl<const TWO: bool> ItemKernel for Stacked<TWO> {
    type Found = RowNumbers;

    fn reach<T: Lanes>(&self, items: &WindowItems) -> usize {
        (items.reduced.size - 1) * items.reduced.stride * T::SIZE + items.window.max(VECTOR_BYTES)
    }

    #[inline(always)]
    unsafe fn find<T: Lanes, const LAST: bool>(
        &self,
        items: &WindowItems,
        p: *const u8,
        _inside: __m256i,
        found: &mut RowNumbers,
    ) -> bool {
        let pitch = items.reduced.stride * T::SIZE;
        let second = if TWO { items.window - VECTOR_BYTES } else { 0 };
        let mut head = Fold::<T, LAST>::new(p);
        let mut tail = Fold::<T, LAST>::new(p.add(second));
        for row in 1..items.reduced.size {
            let number = _mm256_set1_epi8(row as u8 as i8);
            let q = p.add(row * pitch);
            head.take(T::load(q), number);
            if TWO {
                tail.take(T::load(q.add(second)), number);
            }
        }
        if T::CAN_NAN {
            let mut nan = lane_bits(head.nan);
            if TWO {
                nan |= lane_bits(tail.nan) << second;
            }
            if nan & items.output_bits != 0 {
                return false;
            }
        }
        _mm256_store_si256(found.0.as_mut_ptr().cast(), head.rows);
        if TWO {
            _mm256_storeu_si256(found.0.as_mut_ptr().add(second).cast(), tail.rows);
        }
        true
    }

    #[inline(always)]
    fn row<const LAST: bool>(found: &RowNumbers, output: &ItemOutput) -> usize {
        usize::from(found.0[output.lane])
    }
}

/// Per byte of a stacked row's window, the row of its lane's best element.
#[repr(C, align(32))]
struct RowNumbers([u8; WINDOW_BYTES]);

impl Default for RowNumbers {
    fn default() -> Self {
        RowNumbers([0; WINDOW_BYTES])
    }
}

/// A vector of lanes folded over rows: each lane's best value so far, the row it came from,
/// and the lanes where a NaN appeared.
struct Fold<T, const LAST: bool> {
    max: __m256i,
    rows: __m256i,
    nan: __m256i,
    _t: std::marker::PhantomData<T>,
}

impl<T: Lanes, const LAST: bool> Fold<T, LAST> {
    /// The fold of row 0, at `p`.
    ///
    /// # Safety
    /// The CPU must support AVX2 (inlined into such functions only); 32 readable bytes at `p`.
    #[inline(always)]
    unsafe fn new(p: *const u8) -> Self {
        let max = T::load(p);
        Fold {
            max,
            rows: _mm256_setzero_si256(),
            nan: T::nan(max),
            _t: std::marker::PhantomData,
        }
    }

    /// Takes the row `v` numbered `number` (in every byte): a lane moves to it when it is
    /// greater (with `LAST`, not less) than the lane's best.
    ///
    /// # Safety
    /// The CPU must support AVX2 (inlined into such functions only).
    #[inline(always)]
    unsafe fn take(&mut self, v: __m256i, number: __m256i) {
        self.rows = if LAST {
            _mm256_blendv_epi8(number, self.rows, T::gt(self.max, v))
        } else {
            _mm256_blendv_epi8(self.rows, number, T::gt(v, self.max))
        };
        self.max = T::max(self.max, v);
        if T::CAN_NAN {
            self.nan = _mm256_or_si256(self.nan, T::nan(v));
        }
    }
}

/// One bit per byte of `v`: its top bit.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only).
#[inline(always)]
unsafe fn lane_bits(v: __m256i) -> u64 {
    u64::from(_mm256_movemask_epi8(v) as u32)
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

#[cfg(test)]
mod tests {
    use super::super::plan::test_plan;
    use super::*;

    #[test]
    fn a_broadcast_kept_dimension_counts_its_outputs_whatever_its_span() {
        // `[n, 8, 2]` over axis 1 with the outer dimension broadcast (stride 0): it lies inside
        // a row (stride 0 < 2), spans nothing, and holds `n` outputs per item.
        let few = test_plan(&[4, 8, 2], Some(&[0, 2, 1]), &[false, true, false]);
        let items = WindowItems::phases::<f32>(&few).expect("eight outputs fit an item");
        assert_eq!(items.outputs.len(), 8);
        let many = test_plan(&[100_000, 8, 2], Some(&[0, 2, 1]), &[false, true, false]);
        assert!(WindowItems::phases::<f32>(&many).is_none());
        assert!(WindowItems::stacked::<f32>(&many).is_none());
    }
}
