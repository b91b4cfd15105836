//! [`Shape::Rows`](super::plan::Shape::Rows): the innermost dimension is kept, so a *tail* of
//! neighbouring outputs is reduced side by side: each reduced index contributes one input row
//! of the tail, and rows are visited in increasing index order.
//!
//! The outputs are cut into items (an outer coordinate and a block of at most
//! [`ARGMAX_TAIL_BYTES`] of the tail, whose running maxima stay in the L2 cache), folded
//! [`CHUNK_ROWS`] rows at a time ([`fold_rows`]). Items are split across threads, or, with
//! fewer than [`ARGMAX_SPLIT_FACTOR`] × threads of them, each item's reduced range, the
//! partial results combined in index order.
//!
//! Kept dimensions lying between reduced ones in memory (a padded tensor reduced over axes 1
//! and 3) are walked in memory order instead, by [`Interleaved`].
//!
//! The tail grows over the kept dimensions just outside it in memory while their elements
//! stay dense in the input range they cover ([`Tail`]): a block of such outputs is folded as
//! one contiguous range whose lanes in the gaps (padding, or a short reduced axis lying
//! between kept ones) are folded too and ignored. A whole reduction of one chunk leaves its
//! result in the vector kernel's scratch ([`fold_rows_fresh`]), with no running keys.
//!
//! A *short* tail (fewer bytes than a vector, e.g. the two interleaved outputs of a permuted
//! view) whose rows lie back to back in memory (the innermost reduced dimension's stride is
//! the tail's size) is *widened* ([`Widened`]): `m` consecutive reduced positions are folded
//! as one row of `m × tail` lanes, so a vector covers several reduced positions instead of
//! one row of two elements costing a whole fold step. The `m` lanes of each output are then
//! combined by (key, index), and the reduced positions left over after the last whole group
//! of `m` are folded as plain rows and combined the same way.

use super::collapsed_runs::CollapsedRuns;
use super::interleaved::Interleaved;
use super::kernels::{
    better, can_fold_running, fold_rows, fold_rows_fresh, fold_rows_running, FoldScratch, Row,
    RunningChunk, CHUNK_ROWS, RUNNING_CHUNK_ROWS,
};
use super::lanes::Lanes;
use super::packed_tail::PackedTail;
#[cfg(target_arch = "x86_64")]
use super::packed_tail::WIDE_NUMBER_BYTES;
use super::plan::{Dim, Plan, Walk};
use super::scan::run_best;
#[cfg(target_arch = "x86_64")]
use super::transposed_runs::Transposed;
#[cfg(target_arch = "x86_64")]
use super::window_items::WindowItems;
use super::{items_per_task, splits_items, Job, Outputs};
use crate::element::FromIndex;
use crate::parallel::{for_each_task, map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::simd::Isa;
use crate::thresholds::{
    ARGMAX_OUTPUT_ORDER_BLOCK_FLOOR_MAX_OUTPUTS, ARGMAX_OUTPUT_ORDER_MIN_BLOCK_BYTES,
    ARGMAX_OUTPUT_ORDER_MIN_TAIL_BYTES, ARGMAX_SHORT_TAIL_BYTES,
    ARGMAX_SPANNED_SEGMENT_MIN_OUTPUTS, ARGMAX_SPANNED_TAIL_MAX_PITCH_BYTES, ARGMAX_SPLIT_FACTOR,
    ARGMAX_TAIL_BYTES, ARGMAX_TAIL_GAP, ARGMAX_TAIL_GAP_SHORT,
};
use std::ops::Range;

/// Running maxima of one item, and the buffers to compute them.
#[derive(Debug)]
pub(super) struct RowsState<K> {
    pub(super) keys: Vec<K>,
    pub(super) index: Vec<u32>,
    /// Rows of the chunk being folded, offsets relative to the item's first row.
    pub(super) rows: Vec<Row>,
    /// What `rows` holds when it is a whole range of at most [`CHUNK_ROWS`] rows: the
    /// reduced dimensions (address and length) and the range, so that items reducing the same
    /// range reuse it.
    rows_of: Option<(usize, usize, usize, usize)>,
    scratch: FoldScratch,
    /// The last fold left its result in `scratch` ([`fold_rows_fresh`]), not in `index`.
    direct: bool,
    /// The running maxima of run lanes folded with their runs collapsed.
    pub(super) collapsed: CollapsedRuns,
}

impl<K> Default for RowsState<K> {
    fn default() -> Self {
        RowsState {
            keys: Vec::new(),
            index: Vec::new(),
            rows: Vec::with_capacity(CHUNK_ROWS),
            rows_of: None,
            scratch: FoldScratch::default(),
            direct: false,
            collapsed: CollapsedRuns::default(),
        }
    }
}

/// Rows of a reduced range kept whole in [`RowsState`] and reused by every item reducing it
/// (64 KiB): walking a range of a few hundred rows again for each item of a `[n, 260, 5]`
/// INT64 took a third of its time.
const CACHED_ROWS: usize = 4096;

/// Appends rows `q0..q0 + len` of the walk over `reduced` to `rows`: (offset, index) in
/// steps of one stride when `reduced` is one dimension (a loop the compiler vectorises), else
/// through [`Walk`]. Listing the 4545 rows of each item of an INT64 `[344, 4545, 8]` (axis 1)
/// through the walk took a quarter of its time.
pub(super) fn list_rows(rows: &mut Vec<Row>, reduced: &[Dim], q0: usize, len: usize) {
    if let [dim] = reduced {
        debug_assert!(q0 + len <= dim.size, "list_rows: rows past the dimension");
        let (stride, index_stride) = (dim.stride, dim.index_stride);
        rows.extend((q0..q0 + len).map(|q| (q * stride, (q * index_stride) as u32)));
    } else {
        rows.extend(Walk::new(reduced, q0, len).map(|at| (at.offset, at.index as u32)));
    }
}

/// Rows per chunk of a running fold ([`fold_rows_running`]) over `total` rows: chunks of equal
/// length, at most [`RUNNING_CHUNK_ROWS`].
pub(super) fn running_chunk_rows(total: usize) -> usize {
    total.div_ceil(total.div_ceil(RUNNING_CHUNK_ROWS)).max(1)
}

/// The step between the reduced indices of consecutive rows of `reduced` (walked row-major,
/// outermost first), when they step evenly: one reduced dimension, or several whose index
/// strides nest (each one's the next inner one's times its size, as for ArgMax UINT8
/// `[35, 9, 2, 3270]` over axes 0,2, memory order being index order): [`RunningChunk::step`].
///
/// Their direct results are then stored as vectors and their improved lanes taken sixteen
/// at a time, as for one dimension: that shape 0.174 → 0.150 ms on one core, FLOAT32
/// `[16, 16, 32, 2, 60]` over axes 1,3 0.283 → 0.239.
pub(super) fn even_index_step(reduced: &[Dim]) -> Option<u32> {
    let (innermost, _) = reduced.split_last()?;
    let nested = reduced
        .windows(2)
        .all(|pair| Some(pair[0].index_stride) == pair[1].index_stride.checked_mul(pair[1].size));
    nested
        .then(|| u32::try_from(innermost.index_stride).ok())
        .flatten()
}

impl<K> RowsState<K> {
    /// The reduced index of lane `lane`'s maximum after the last fold.
    #[inline]
    fn index_of<T: Lanes>(&self, lane: usize) -> u32 {
        if self.direct {
            self.rows[self.scratch.row_of::<T>(lane)].1
        } else {
            self.index[lane]
        }
    }

    /// The key and reduced index of lane `lane`'s maximum after the last fold.
    #[inline(always)]
    fn lane_result<T: Lanes<Key = K>>(&self, lane: usize) -> (K, u32)
    where
        K: Copy,
    {
        let key = if self.direct {
            self.scratch.key_of::<T>(lane)
        } else {
            self.keys[lane]
        };
        (key, self.index_of::<T>(lane))
    }

    /// After a clean [`Job::fold_fresh`]: the greatest key among the lanes `lanes`, and the
    /// lowest (with `LAST`, the highest) `index(r, row)` over the lanes holding it, `r` being a
    /// lane's position in `lanes` and `row` the reduced index of its best row.
    pub(super) fn best_of_lanes<T, const LAST: bool>(
        &self,
        isa: Isa,
        lanes: Range<usize>,
        index: impl Fn(usize, u32) -> usize,
    ) -> (K, usize)
    where
        T: Lanes<Key = K>,
    {
        let first = lanes.start;
        let mut best: Option<usize> = None;
        let key = self.scratch.max_lanes::<T>(isa, lanes, |lane| {
            let at = index(lane - first, self.index_of::<T>(lane));
            if best.is_none_or(|b| if LAST { at > b } else { at < b }) {
                best = Some(at);
            }
        });
        (key, best.expect("best_of_lanes: a lane holds the maximum"))
    }

    /// The rows `q0..q1` of `reduced` (offsets relative to the first row's item): all of them
    /// when there are at most [`CACHED_ROWS`], kept in `rows` and reused when the same range
    /// is asked again, else only the first chunk.
    pub(super) fn rows_from(&mut self, reduced: &[Dim], q0: usize, q1: usize) -> &[Row] {
        let key = (reduced.as_ptr() as usize, reduced.len(), q0, q1);
        if self.rows_of != Some(key) {
            let whole = q1 - q0 <= CACHED_ROWS;
            self.rows.clear();
            let len = if whole { q1 - q0 } else { CHUNK_ROWS };
            list_rows(&mut self.rows, reduced, q0, len);
            self.rows_of = whole.then_some(key);
        }
        &self.rows
    }
}

impl Job<'_> {
    /// Reduces every output of a [`Shape::Rows`](super::plan::Shape::Rows) plan.
    pub(super) fn rows<T: Lanes, O: FromIndex, const LAST: bool>(&self, outputs: &Outputs<O>) {
        let plan = self.plan;
        #[cfg(target_arch = "x86_64")]
        if let Some((transposed, run)) = Transposed::for_packed_items::<T>(plan, self.isa) {
            self.rows_transposed::<T, O, LAST>(outputs, &transposed, run);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.isa == Isa::Avx2 {
            if let Some(items) = WindowItems::phases::<T>(plan) {
                self.rows_window_items::<T, O, LAST>(outputs, &items);
                return;
            }
        }
        let tail = Tail::new::<T>(
            &plan.outer,
            plan.tail.expect("a tail"),
            plan.tail_gap,
            &plan.reduced,
        );
        if let Some(packed) = PackedItems::new::<T>(self.isa, plan, !tail.is_spanned()) {
            self.rows_packed::<T, O, LAST>(outputs, &packed);
            return;
        }
        if !tail.is_spanned() {
            if let Some(widened) = Widened::new::<T>(tail.dims[0], &plan.reduced) {
                self.rows_widened::<T, O, LAST>(outputs, tail.dims[0], &widened);
                return;
            }
        }
        if let Some(interleaved) = Interleaved::new::<T>(self.isa, plan) {
            self.rows_interleaved::<T, O, LAST>(outputs, &interleaved);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.isa == Isa::Avx2 {
            if let Some(items) = WindowItems::stacked::<T>(plan) {
                self.rows_window_items::<T, O, LAST>(outputs, &items);
                return;
            }
        }
        let block = tail.block::<T>();
        let blocks = tail.count.div_ceil(block);
        let units: usize = tail.outer.iter().map(|d| d.size).product();
        let items = units * blocks;
        let q = plan.reduced_len();
        let per_item = tail.lanes(0, block.min(tail.count)).1.saturating_mul(q);
        let parallel = items.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        // Item `i`: its first input offset, its number of lanes, the slot of its unit, its
        // first tail element and number of tail elements.
        let item = |i: usize| {
            let (unit, b) = if tail.units_first {
                (i % units, i / units)
            } else {
                (i / blocks, i % blocks)
            };
            let at = Walk::new(&tail.outer, unit, 1).next().unwrap_or_default();
            let t0 = b * block;
            let count = block.min(tail.count - t0);
            let (first, lanes) = tail.lanes(t0, count);
            (at.offset + first, lanes, at.slot, t0, count)
        };
        // With AVX-512, the direct results of a tail of consecutive slots over one reduced
        // dimension (row `r`'s index is the first row's plus `r` steps) are stored as vectors,
        // a spanned tail's a segment of its inner dimension at a time.
        #[cfg(target_arch = "x86_64")]
        let vector_step = (self.isa == Isa::Avx512 && tail.segments().is_some())
            .then(|| even_index_step(&plan.reduced))
            .flatten();
        if !splits_items(parallel, items, q, per_item / q.max(1)) {
            let per_task = items_per_task(items, per_item);
            let tasks = items.div_ceil(per_task);
            let task = |t: usize| {
                let mut state = RowsState::default();
                for i in t * per_task..((t + 1) * per_task).min(items) {
                    let (base, lanes, slot, t0, count) = item(i);
                    self.fold_item::<T, LAST>(base, lanes, tail.stride, q, &mut state);
                    #[cfg(target_arch = "x86_64")]
                    if let (true, Some(step)) = (state.direct, vector_step) {
                        // Rows listed from the first one, one step apart.
                        let offset = self.finish::<LAST>(state.rows[0].1 as usize);
                        let numbers = state.scratch.rows_lanes();
                        tail.for_segments(t0, count, |lane, lane_slot, n| {
                            let lanes = (&numbers[lane * T::SIZE..], T::SIZE, n);
                            // SAFETY: each item's outputs are distinct slots, written by the
                            // one task that reduces the item; `Isa::Avx512` is only chosen when
                            // the CPU has AVX-512 F and BW.
                            unsafe {
                                outputs.store_scaled_avx512(slot + lane_slot, lanes, step, offset)
                            };
                        });
                        continue;
                    }
                    // The result's two homes, each with its own loop (with few rows per
                    // output, as `[22, 120, 2, 570]` over axis 2, this loop is most of the
                    // time: a call through `dyn` and a branch per output took 64 % of it).
                    if state.direct {
                        let (rows, scratch) = (&state.rows, &state.scratch);
                        self.write_tail::<O, LAST>(outputs, &tail, slot, t0, count, |lane| {
                            rows[scratch.row_of::<T>(lane)].1
                        });
                    } else {
                        let index = &state.index;
                        self.write_tail::<O, LAST>(outputs, &tail, slot, t0, count, |lane| {
                            index[lane]
                        });
                    }
                }
                // What `store_scaled_avx512` streamed is seen before the task ends.
                #[cfg(target_arch = "x86_64")]
                if vector_step.is_some() {
                    crate::simd::stream_fence();
                }
            };
            for_each_task(tasks, parallel, task);
            return;
        }
        // Few items: each one's reduced range in parallel pieces, combined in index order.
        let piece = (TASK_ELEMENTS / per_item.div_ceil(q).max(1))
            .max(q.div_ceil(factor))
            .max(1);
        for i in 0..items {
            let (base, lanes, slot, t0, count) = item(i);
            let parts = map_ranges(q, piece, true, |q0, q1| {
                let mut state = RowsState::default();
                self.fold_walk::<T, LAST>(
                    base,
                    lanes,
                    tail.stride,
                    &plan.reduced,
                    q0,
                    q1,
                    &mut state,
                );
                (state.keys, state.index)
            });
            let mut parts = parts.into_iter();
            let Some((mut keys, mut index)) = parts.next() else {
                continue;
            };
            for (part_keys, part_index) in parts {
                for e in 0..lanes {
                    if better::<_, LAST>(part_keys[e], keys[e]) {
                        keys[e] = part_keys[e];
                        index[e] = part_index[e];
                    }
                }
            }
            self.write_tail::<O, LAST>(outputs, &tail, slot, t0, count, |lane| index[lane]);
        }
    }

    /// Every item (an outer coordinate's rows) read through windows of one or two vectors,
    /// with no state kept between items ([`WindowItems`]): tasks of consecutive items.
    #[cfg(target_arch = "x86_64")]
    fn rows_window_items<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        items: &WindowItems,
    ) {
        let units = items.count();
        let per_item = items.item_elements();
        let parallel = units.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let per_task = items_per_task(units, per_item);
        let tasks = units.div_ceil(per_task);
        for_each_task(tasks, parallel, |t| {
            let first = t * per_task;
            let count = per_task.min(units - first);
            // SAFETY: `Isa::Avx2` is only chosen when the CPU has AVX2; each task writes the
            // outputs of its own items.
            unsafe { items.task::<T, O, LAST>(self, first, count, outputs) };
        });
    }

    /// Writes the results of the `count` tail outputs from `t0` of the unit at `slot`:
    /// lane `lane`'s reduced index is `index(lane)`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn write_tail<O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        tail: &Tail,
        slot: usize,
        t0: usize,
        count: usize,
        index: impl Fn(usize) -> u32,
    ) {
        tail.for_lane_slots(t0, count, |lane, lane_slot| {
            // SAFETY: each item's outputs are distinct slots, written by the one task that
            // reduces the item (or, when its range is split, by the calling thread alone).
            unsafe { outputs.set(slot + lane_slot, self.finish::<LAST>(index(lane) as usize)) };
        });
    }

    /// Reduces the whole range (`q` rows) of the plan's reduced dimensions for the `lanes`
    /// outputs `stride` elements apart whose first row starts at `base`, the result read
    /// through [`RowsState::index_of`]: when one chunk holds every row and the vector fold
    /// runs clean, it stays in the scratch ([`fold_rows_fresh`]); otherwise
    /// [`Self::fold_walk`].
    fn fold_item<T: Lanes, const LAST: bool>(
        &self,
        base: usize,
        lanes: usize,
        stride: usize,
        q: usize,
        state: &mut RowsState<T::Key>,
    ) {
        let reduced = &self.plan.reduced;
        if stride == 1 && self.fold_fresh::<T, LAST>(base, lanes, reduced, 0, q, state) {
            return;
        }
        self.fold_walk::<T, LAST>(base, lanes, stride, reduced, 0, q, state);
    }

    /// Folds the rows `q0..q1` (in index order, at most [`CHUNK_ROWS`]) of the reduced
    /// dimensions `reduced` for the `lanes` contiguous outputs whose first row starts at
    /// `base` with the vector kernel, leaving the result in the scratch
    /// ([`fold_rows_fresh`]). False, with nothing done, when the rows are more than one chunk,
    /// and false after trying when there is no vector kernel for them or a NaN was met.
    pub(super) fn fold_fresh<T: Lanes, const LAST: bool>(
        &self,
        base: usize,
        lanes: usize,
        reduced: &[Dim],
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
    ) -> bool {
        if q1 - q0 > CHUNK_ROWS {
            return false;
        }
        state.rows_from(reduced, q0, q1);
        let data = &self.data[base * T::SIZE..];
        state.direct =
            fold_rows_fresh::<T, LAST>(self.isa, data, &state.rows, lanes, &mut state.scratch);
        state.direct
    }

    /// Reduces the rows `q0..q1` (in index order) of the reduced dimensions `reduced` for the
    /// `lanes` outputs `stride` elements apart whose first row starts at `base`, leaving their
    /// keys and indices in `state`. Contiguous outputs with a vector kernel keep their maxima
    /// running from chunk to chunk ([`Self::fold_walk_running`]); other outputs, and any
    /// range where a NaN is met, merge each chunk's maxima into the running keys
    /// ([`fold_rows`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fold_walk<T: Lanes, const LAST: bool>(
        &self,
        base: usize,
        lanes: usize,
        stride: usize,
        reduced: &[Dim],
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
    ) {
        state.direct = false;
        let data = &self.data[base * T::SIZE..];
        let first_row = state
            .rows_from(reduced, q0, q1)
            .first()
            .map_or(0, |row| row.1);
        state.keys.clear();
        state.keys.resize(lanes, T::MIN_KEY);
        state.index.clear();
        state.index.resize(lanes, first_row);
        if stride == 1 && self.fold_walk_running::<T, LAST>(data, reduced, q0, q1, state) {
            return;
        }
        // No vector kernel, or a NaN met: the running keys, merged chunk by chunk.
        state.keys.fill(T::MIN_KEY);
        state.index.fill(first_row);
        if state.rows.len() != q1 - q0 {
            // The running fold walked the rows: list the first chunk again.
            state.rows_of = None;
            state.rows_from(reduced, q0, q1);
        }
        // Every row (relative to `base`) comes from `rows_from` when the range is short, the
        // same for every item: its chunks are folded in turn.
        if state.rows.len() == q1 - q0 {
            for chunk in state.rows.chunks(CHUNK_ROWS) {
                fold_rows::<T, LAST>(
                    self.isa,
                    data,
                    chunk,
                    stride,
                    &mut state.keys,
                    &mut state.index,
                    &mut state.scratch,
                );
            }
            return;
        }
        // Otherwise it gives the first chunk, and the later ones are walked here.
        let mut next = q0 + state.rows.len();
        loop {
            fold_rows::<T, LAST>(
                self.isa,
                data,
                &state.rows,
                stride,
                &mut state.keys,
                &mut state.index,
                &mut state.scratch,
            );
            if next >= q1 {
                return;
            }
            state.rows.clear();
            list_rows(&mut state.rows, reduced, next, (q1 - next).min(CHUNK_ROWS));
            next += state.rows.len();
        }
    }

    /// [`Self::fold_walk`] for contiguous lanes with the running vector fold
    /// ([`fold_rows_running`]): chunks of equal length up to [`RUNNING_CHUNK_ROWS`] rows,
    /// `state.index` holding the reduced index of each lane's best row (as `fold_walk` starts
    /// it), then `state.keys` their keys. False when the fold cannot run or met a NaN: `state`
    /// then holds nothing meaningful, and its rows may be a later chunk's.
    fn fold_walk_running<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        reduced: &[Dim],
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
    ) -> bool {
        let total = q1 - q0;
        if total == 0 || !can_fold_running::<T>(self.isa, state.index.len()) {
            return false;
        }
        let chunk = running_chunk_rows(total);
        let step = even_index_step(reduced);
        let RowsState {
            keys,
            index,
            rows,
            scratch,
            ..
        } = state;
        if rows.len() == total {
            // Every row listed (the same for every item): its chunks in turn.
            for (c, part) in rows.chunks(chunk).enumerate() {
                let start = RunningChunk {
                    first: c == 0,
                    step,
                    in_memory_order: false,
                };
                if !fold_rows_running::<T, LAST>(self.isa, data, part, start, index, scratch) {
                    return false;
                }
            }
        } else {
            // The rows are walked here a chunk at a time.
            state.rows_of = None;
            let mut next = q0;
            while next < q1 {
                rows.clear();
                list_rows(rows, reduced, next, (q1 - next).min(chunk));
                let start = RunningChunk {
                    first: next == q0,
                    step,
                    in_memory_order: false,
                };
                if !fold_rows_running::<T, LAST>(self.isa, data, rows, start, index, scratch) {
                    return false;
                }
                next += rows.len();
            }
        }
        for (lane, key) in keys.iter_mut().enumerate() {
            *key = scratch.key_of::<T>(lane);
        }
        true
    }

    /// [`Self::rows`] for [`PackedItems`]: items split across tasks, each reduced in registers
    /// ([`PackedTail::argmax`]), or with exact keys when it holds a NaN.
    fn rows_packed<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        packed: &PackedItems,
    ) {
        let items: usize = packed.outer.iter().map(|d| d.size).product();
        let per_item = packed.k * packed.rows;
        let parallel = items.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let per_task = items_per_task(items, per_item);
        let tasks = items.div_ceil(per_task);
        // With AVX-512, a wide item's row numbers are stored as vectors when its outputs'
        // slots are consecutive.
        #[cfg(target_arch = "x86_64")]
        let vector_scale = (packed.tail.has_row_numbers()
            && packed.slots.iter().enumerate().all(|(j, &slot)| slot == j))
        .then(|| u32::try_from(packed.index_stride).ok())
        .flatten();
        // Each item's positions, by exact keys when the kernel refused it (a NaN), written
        // to its outputs' slots.
        let write_item = |slot: usize, start: usize, positions: &mut [usize], clean: bool| {
            if !clean {
                packed.exact::<T, LAST>(self.data, start, positions);
            }
            for (&offset, &position) in packed.slots.iter().zip(positions.iter()) {
                let index = self.finish::<LAST>(position * packed.index_stride);
                // SAFETY: each item's outputs are distinct slots, written by the one task
                // that reduces the item.
                unsafe { outputs.set(slot + offset, index) };
            }
        };
        let together = packed.tail.interleaves();
        let task = |t: usize| {
            let mut positions = vec![0; packed.k * PACKED_ITEMS_TOGETHER];
            // Items waiting to be reduced together: (start byte, slot).
            let mut waiting = [(0, 0); PACKED_ITEMS_TOGETHER];
            let mut held = 0;
            let first = t * per_task;
            for at in Walk::new(&packed.outer, first, per_task.min(items - first)) {
                let start = at.offset * T::SIZE;
                let data = self.data;
                if together {
                    waiting[held] = (start, at.slot);
                    held += 1;
                    if held == PACKED_ITEMS_TOGETHER {
                        let starts = waiting.map(|(start, _)| start);
                        let refused = packed.tail.argmax_items::<T, LAST, PACKED_ITEMS_TOGETHER>(
                            data,
                            starts,
                            &mut positions,
                        );
                        for (i, &(start, slot)) in waiting.iter().enumerate() {
                            let out = &mut positions[i * packed.k..(i + 1) * packed.k];
                            write_item(slot, start, out, refused & 1 << i == 0);
                        }
                        held = 0;
                    }
                    continue;
                }
                // Whether the vector kernel already refused this item (it holds a NaN, which
                // `PackedTail::argmax`, the same kernel, would refuse again).
                #[cfg(not(target_arch = "x86_64"))]
                let refused = false;
                #[cfg(target_arch = "x86_64")]
                let refused = if let Some(scale) = vector_scale {
                    let mut numbers = [0u8; WIDE_NUMBER_BYTES];
                    if packed
                        .tail
                        .row_numbers::<T, LAST>(data, start, &mut numbers)
                    {
                        let lanes = (&numbers[..], T::SIZE, packed.k);
                        // SAFETY: each item's outputs are distinct slots, written by the one
                        // task that reduces the item; row numbers exist only with AVX-512 F
                        // and BW.
                        unsafe {
                            outputs.store_scaled_avx512(
                                at.slot,
                                lanes,
                                scale,
                                self.finish::<LAST>(0),
                            )
                        };
                        continue;
                    }
                    true
                } else {
                    false
                };
                let out = &mut positions[..packed.k];
                let clean = !refused && packed.tail.argmax::<T, LAST>(data, start, out);
                write_item(at.slot, start, out, clean);
            }
            for &(start, slot) in &waiting[..held] {
                let out = &mut positions[..packed.k];
                let clean = packed.tail.argmax::<T, LAST>(self.data, start, out);
                write_item(slot, start, out, clean);
            }
            // What `store_scaled_avx512` streamed is seen before the task ends.
            #[cfg(target_arch = "x86_64")]
            if vector_scale.is_some() {
                crate::simd::stream_fence();
            }
        };
        for_each_task(tasks, parallel, task);
    }

    /// [`Self::rows`] for a [`Widened`] tail: items are the outer coordinates (one tail each),
    /// split across threads, or, with few of them, each one's range of widened rows.
    fn rows_widened<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        tail: Dim,
        widened: &Widened,
    ) {
        let plan = self.plan;
        let items: usize = plan.outer.iter().map(|d| d.size).product();
        let per_item = plan.reduced_len() * tail.size;
        let parallel = items.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        let wide_rows: usize = widened.wide.iter().map(|d| d.size).product();
        let write = |slot: usize, best: &[Option<(T::Key, usize)>]| {
            for (j, b) in best.iter().enumerate() {
                let index = b.map_or(0, |(_, at)| at);
                // SAFETY: each item's outputs are distinct slots, written by the one task that
                // reduces the item (or, when its range is split, by the calling thread alone).
                unsafe { outputs.set(slot + j * tail.slot_stride, self.finish::<LAST>(index)) };
            }
        };
        if !splits_items(parallel, items, wide_rows, per_item / wide_rows.max(1)) {
            let per_task = items_per_task(items, per_item);
            let tasks = items.div_ceil(per_task);
            let task = |t: usize| {
                let mut state = RowsState::default();
                let mut best = Vec::new();
                let first = t * per_task;
                let walk = Walk::new(&plan.outer, first, per_task.min(items - first));
                for at in walk {
                    best.clear();
                    best.resize(widened.k, None);
                    self.fold_widened::<T, LAST>(
                        widened, at.offset, 0, wide_rows, &mut state, &mut best,
                    );
                    self.fold_left_over::<T, LAST>(widened, at.offset, &mut state, &mut best);
                    write(at.slot, &best);
                }
            };
            for_each_task(tasks, parallel, task);
            return;
        }
        // Few items: each one's widened rows in parallel pieces; (key, index) combines in any
        // order.
        let piece = (TASK_ELEMENTS / (widened.k * widened.m))
            .max(wide_rows.div_ceil(factor))
            .max(1);
        for at in Walk::new(&plan.outer, 0, items) {
            let parts = map_ranges(wide_rows, piece, true, |q0, q1| {
                let mut state = RowsState::default();
                let mut best = vec![None; widened.k];
                self.fold_widened::<T, LAST>(widened, at.offset, q0, q1, &mut state, &mut best);
                best
            });
            let mut state = RowsState::default();
            let mut best = vec![None; widened.k];
            self.fold_left_over::<T, LAST>(widened, at.offset, &mut state, &mut best);
            for part in parts {
                combine_each::<_, LAST>(&mut best, part);
            }
            write(at.slot, &best);
        }
    }

    /// Folds widened rows `q0..q1` of the item at `base` and combines each output's `m` lanes
    /// into `best` (one entry per tail output).
    fn fold_widened<T: Lanes, const LAST: bool>(
        &self,
        widened: &Widened,
        base: usize,
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
        best: &mut [Option<(T::Key, usize)>],
    ) {
        if q0 >= q1 {
            return;
        }
        // The last position's tail ends the lanes: no lane past it (nor past the input).
        let lanes = (widened.m - 1) * widened.pitch + widened.k;
        // One chunk of rows folded clean leaves its result in the scratch: no running keys
        // to fill and merge.
        if !self.fold_fresh::<T, LAST>(base, lanes, &widened.wide, q0, q1, state) {
            self.fold_walk::<T, LAST>(base, lanes, 1, &widened.wide, q0, q1, state);
        }
        for q in 0..widened.m {
            for (j, best) in best.iter_mut().enumerate() {
                let (key, index) = state.lane_result::<T>(q * widened.pitch + j);
                combine::<_, LAST>(best, (key, index as usize + q * widened.index_stride));
            }
        }
    }

    /// Folds the reduced positions after the last whole group of `m` (if any) of the item at
    /// `base` as plain rows of the tail, and combines them into `best`.
    fn fold_left_over<T: Lanes, const LAST: bool>(
        &self,
        widened: &Widened,
        base: usize,
        state: &mut RowsState<T::Key>,
        best: &mut [Option<(T::Key, usize)>],
    ) {
        let Some(left) = &widened.left_over else {
            return;
        };
        let rows: usize = left.dims.iter().map(|d| d.size).product();
        self.fold_walk::<T, LAST>(base + left.offset, widened.k, 1, &left.dims, 0, rows, state);
        for (j, (&key, &index)) in state.keys.iter().zip(&state.index).enumerate() {
            combine::<_, LAST>(&mut best[j], (key, index as usize + left.index));
        }
    }
}

/// The outputs of a rows plan reduced side by side: the innermost kept dimension, grown by the
/// kept dimensions just outside it in memory while their elements stay dense enough in the
/// input range they cover ([`ARGMAX_TAIL_GAP_SHORT`], [`ARGMAX_TAIL_GAP`]).
///
/// A tail of several dimensions (or of one whose stride is not 1) is *spanned*: a block of its
/// elements is folded as one contiguous input range, one lane per element of the range, and
/// each output reads the lane at its offset; the lanes in the gaps (padding, or, for a short
/// tail, elements of reduced dimensions lying between the kept ones, e.g. the short reduced
/// axis of a `[outer, reduced, tail]` input) are folded and ignored. A range ends at its last
/// element, so every lane lies inside the input. Folding a few ignored lanes in vectors costs
/// less than reducing short rows one at a time. A long tail does not span reduced elements:
/// each one would be read once as a row and once as another row's gap.
#[derive(Debug)]
struct Tail {
    /// The kept dimensions left outside the tail, outermost first.
    outer: Vec<Dim>,
    /// The tail's dimensions, outermost first.
    dims: Vec<Dim>,
    /// Outputs in the tail (the product of `dims`' sizes).
    count: usize,
    /// Elements between neighbouring lanes: 1 when spanned, else the one dimension's stride.
    stride: usize,
    /// Items take the units fastest (`outer` then in output order), not the tail's blocks:
    /// the units hold output dimensions inside the tail's (a permuted input).
    units_first: bool,
}

impl Tail {
    /// The tail from the innermost kept dimension `tail` and the kept dimensions outside it
    /// (`outer`, in memory order, outermost first).
    /// `gap`, when given, replaces the thresholds: the input elements per output the tail
    /// may span.
    fn new<T: Lanes>(outer: &[Dim], tail: Dim, gap: Option<usize>, reduced: &[Dim]) -> Tail {
        let short = tail.size * T::SIZE < ARGMAX_SHORT_TAIL_BYTES;
        // A long tail spans no kept dimension holding reduced elements in its gaps (one whose
        // stride is over the innermost reduced dimension's) unless `gap` says so.
        let innermost_reduced = reduced
            .iter()
            .filter(|d| d.size > 1 && d.stride > 0)
            .map(|d| d.stride)
            .min();
        let may_span_reduced = short || gap.is_some();
        let spans_reduced = |dim: &Dim| innermost_reduced.is_some_and(|s| s < dim.stride);
        let gap = gap.unwrap_or(if short {
            ARGMAX_TAIL_GAP_SHORT
        } else {
            ARGMAX_TAIL_GAP
        });
        let mut dims = vec![tail];
        let mut count = tail.size;
        let mut span = (tail.size - 1) * tail.stride + 1;
        let mut left = outer.len();
        // A tail too sparse on its own spans nothing (and keeps every outer dimension), unless
        // its elements lie within a cache line of each other: then every line of its span is
        // read anyway, and the vector fold over the span beats an exact fold element by
        // element ([`ARGMAX_SPANNED_TAIL_MAX_PITCH_BYTES`]).
        let dense =
            span <= gap * count || tail.stride * T::SIZE <= ARGMAX_SPANNED_TAIL_MAX_PITCH_BYTES;
        let long = |count: usize| count * T::SIZE >= ARGMAX_OUTPUT_ORDER_MIN_TAIL_BYTES;
        let mut units_first = false;
        while dense && left > 0 {
            let dim = outer[left - 1];
            // Lanes of distinct outputs must not share an offset.
            if dim.stride == 0 || dim.stride < span {
                break;
            }
            // A long tail spans no dimension that is further in in the output: its outputs
            // would land far apart (a permuted FLOAT32 `[152, 2, 577, 21]` over axis 1 wrote
            // each output line from 21 blocks 14 MB of output apart: 12.6 ms, ONNX Runtime
            // 6.2 on the packed tensor).
            if long(count) && dim.slot_stride < dims[0].slot_stride {
                units_first = true;
                break;
            }
            // Every reduced row would read the others' elements as its gaps: ArgMax INT32
            // `[2000, 2, 1000]` over axis 1 read its input twice (4.5 ms, 1.8 not spanned).
            if !may_span_reduced && spans_reduced(&dim) {
                break;
            }
            let grown = (dim.size - 1) * dim.stride + span;
            if grown > gap * count * dim.size {
                break;
            }
            left -= 1;
            dims.insert(0, dim);
            count *= dim.size;
            span = grown;
        }
        let spanned = dims.len() > 1 || (tail.stride > 1 && dense);
        let mut outer = outer[..left].to_vec();
        if units_first {
            outer.sort_by_key(|d| std::cmp::Reverse(d.slot_stride));
        }
        Tail {
            outer,
            stride: if spanned { 1 } else { tail.stride },
            dims,
            count,
            units_first,
        }
    }

    /// True when the lanes are one contiguous range (see [`Tail`]).
    fn is_spanned(&self) -> bool {
        self.stride == 1 && (self.dims.len() > 1 || self.dims[0].stride != 1)
    }

    /// Outputs per item: about [`ARGMAX_TAIL_BYTES`] of lanes.
    fn block<T: Lanes>(&self) -> usize {
        let mut lanes = (ARGMAX_TAIL_BYTES / T::SIZE).max(1);
        if self.units_first {
            // The units' items of one block fill an output range together.
            let units: usize = self.outer.iter().map(|d| d.size).product();
            let floor = (ARGMAX_OUTPUT_ORDER_MIN_BLOCK_BYTES / T::SIZE)
                .min(ARGMAX_OUTPUT_ORDER_BLOCK_FLOOR_MAX_OUTPUTS);
            lanes = (lanes / units.max(1)).max(floor);
        }
        if !self.is_spanned() {
            return lanes;
        }
        let span = self.lanes(0, self.count).1;
        (lanes.saturating_mul(self.count) / span).max(1)
    }

    /// The first lane's offset from its unit's and the number of lanes of the tail's
    /// outputs `t0..t0 + count` (`count` at least 1).
    fn lanes(&self, t0: usize, count: usize) -> (usize, usize) {
        if !self.is_spanned() {
            return (t0 * self.stride, count);
        }
        let first = Walk::new(&self.dims, t0, 1).next().unwrap_or_default();
        let last = Walk::new(&self.dims, t0 + count - 1, 1)
            .next()
            .unwrap_or_default();
        (first.offset, last.offset - first.offset + 1)
    }

    /// The tail's inner dimension when its outputs come in segments of consecutive lanes and
    /// consecutive slots ([`Self::for_segments`]): a tail not spanned whose slots are
    /// consecutive, or a spanned one of two dimensions whose inner one is contiguous and holds
    /// at least [`ARGMAX_SPANNED_SEGMENT_MIN_OUTPUTS`].
    fn segments(&self) -> Option<Dim> {
        match self.dims[..] {
            [one] if !self.is_spanned() && one.slot_stride == 1 => Some(one),
            [_, inner]
                if inner.stride == 1
                    && inner.slot_stride == 1
                    && inner.size >= ARGMAX_SPANNED_SEGMENT_MIN_OUTPUTS =>
            {
                Some(inner)
            }
            _ => None,
        }
    }

    /// Calls `f(lane, slot, n)` for each segment of the tail's outputs `t0..t0 + count` that
    /// [`Self::segments`] allows: `n` outputs from lane `lane` (from the first of
    /// [`Self::lanes`]) and output slot `slot` (relative to its unit's) on.
    ///
    /// # Panics
    /// If the tail has no such segments.
    #[inline]
    fn for_segments(&self, t0: usize, count: usize, mut f: impl FnMut(usize, usize, usize)) {
        let inner = self.segments().expect("a tail of segments");
        let [outer, _] = self.dims[..] else {
            f(0, t0, count);
            return;
        };
        let (mut c, mut i) = (t0 / inner.size, t0 % inner.size);
        let first = c * outer.stride + i;
        let mut left = count;
        while left > 0 {
            let n = (inner.size - i).min(left);
            f(c * outer.stride + i - first, c * outer.slot_stride + i, n);
            left -= n;
            (c, i) = (c + 1, 0);
        }
    }

    /// Calls `f(lane, slot)` for the tail's outputs `t0..t0 + count`, with each one's lane
    /// (from the first of [`Self::lanes`]) and output slot relative to its unit's.
    #[inline]
    fn for_lane_slots(&self, t0: usize, count: usize, mut f: impl FnMut(usize, usize)) {
        if !self.is_spanned() {
            let slot_stride = self.dims[0].slot_stride;
            for e in 0..count {
                f(e, (t0 + e) * slot_stride);
            }
            return;
        }
        if let [outer, inner] = self.dims[..] {
            // Two dimensions (the common spanned tail): plain nested loops.
            let (mut c, mut i) = (t0 / inner.size, t0 % inner.size);
            let first = c * outer.stride + i * inner.stride;
            let mut left = count;
            while left > 0 {
                let (at, slot) = (c * outer.stride, c * outer.slot_stride);
                let end = inner.size.min(i + left);
                for k in i..end {
                    f(at + k * inner.stride - first, slot + k * inner.slot_stride);
                }
                left -= end - i;
                (c, i) = (c + 1, 0);
            }
            return;
        }
        // More: plain loops over the innermost dimension, one walk step per row of it (a walk
        // step per lane took three quarters of a three-dimension tail's time).
        let (&inner, outer) = self.dims.split_last().expect("a tail dimension");
        let (row, mut i) = (t0 / inner.size, t0 % inner.size);
        let rows = (i + count).div_ceil(inner.size);
        let mut walk = Walk::new(outer, row, rows);
        let mut first = None;
        let mut left = count;
        while left > 0 {
            let at = walk.next().unwrap_or_default();
            let first = *first.get_or_insert(at.offset + i * inner.stride);
            let end = inner.size.min(i + left);
            for k in i..end {
                f(
                    at.offset + k * inner.stride - first,
                    at.slot + k * inner.slot_stride,
                );
            }
            left -= end - i;
            i = 0;
        }
    }
}

/// The outputs of a rows plan as items of a [`PackedTail`]: the innermost kept dimension and
/// the kept ones just outside it while they stay dense (`k` contiguous outputs), over one
/// reduced dimension whose positions lie at least `k` apart; the other kept dimensions number
/// the items.
struct PackedItems {
    /// The kernel for one item.
    tail: PackedTail,
    /// Kept dimensions numbering the items, outermost first.
    outer: Vec<Dim>,
    /// The output slot of each of an item's `k` outputs, relative to the item's.
    slots: Vec<usize>,
    /// Outputs per item.
    k: usize,
    /// Elements between reduced positions.
    pitch: usize,
    /// Reduced positions per item.
    rows: usize,
    /// Index stride of the reduced dimension.
    index_stride: usize,
}

/// Items spanning fewer bytes are left to a spanned tail when there is one.
const PACKED_ITEM_MIN_BYTES: usize = 128;

/// Packed items reduced together when the kernel interleaves them
/// ([`PackedTail::interleaves`]).
const PACKED_ITEMS_TOGETHER: usize = 4;

impl PackedItems {
    /// The packed items of `plan`, or None when its shape or the kernel does not allow them.
    /// Items under [`PACKED_ITEM_MIN_BYTES`] are taken only when `small_items` (the tail is
    /// not spanned over them).
    fn new<T: Lanes>(isa: Isa, plan: &Plan, small_items: bool) -> Option<PackedItems> {
        let tail = plan.tail?;
        let [inner] = plan.reduced[..] else {
            return None;
        };
        if plan.tail_gap.is_some() || tail.stride != 1 {
            return None;
        }
        let mut dims = vec![tail];
        let mut k = tail.size;
        let mut left = plan.outer.len();
        while left > 0 && plan.outer[left - 1].stride == k {
            left -= 1;
            dims.insert(0, plan.outer[left]);
            k = k.checked_mul(plan.outer[left].size)?;
        }
        // Items of a few elements cost less spanned by a tail (`[n, 6, 3]` FLOAT32 over its
        // middle axis took 18 ns per item so, 35 ns per item here), but less here than
        // widened when the tail does not span them (`[n, 10, 3]` 40 against 130 ns; UINT8
        // `[n, 42, 2]` 80 against 190).
        let item_bytes = inner
            .size
            .saturating_mul(inner.stride)
            .saturating_mul(T::SIZE);
        if inner.stride < k || (item_bytes < PACKED_ITEM_MIN_BYTES && !small_items) {
            return None;
        }
        // Items that interleave (the next one starts inside this one's rows) are left to the
        // spanned tail, which reads each row of many items at once.
        let next_item = plan.outer[..left].last().map_or(usize::MAX, |d| d.stride);
        if next_item < inner.stride.saturating_mul(inner.size) {
            return None;
        }
        let packed = PackedTail::new::<T>(isa, k, inner.stride, inner.size)?;
        Some(PackedItems {
            tail: packed,
            outer: plan.outer[..left].to_vec(),
            slots: Walk::new(&dims, 0, k).map(|at| at.slot).collect(),
            k,
            pitch: inner.stride,
            rows: inner.size,
            index_stride: inner.index_stride,
        })
    }

    /// Each of the item's outputs' position by exact keys (for an item holding a NaN): its
    /// elements are a run `pitch` apart, reduced by [`run_best`] element by element.
    fn exact<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        start: usize,
        positions: &mut [usize],
    ) {
        for (column, position) in positions.iter_mut().enumerate() {
            let first = start / T::SIZE + column;
            let best = run_best::<T, LAST>(Isa::Portable, data, first, self.rows, self.pitch);
            *position = best.map_or(0, |(_, at)| at);
        }
    }
}

/// Takes `candidate` (key, index) into `best` if it is better: a greater key, or an equal key
/// at a lower index (a higher one with `LAST`). Any order of candidates gives the same result.
#[inline]
pub(super) fn combine<K: Ord + Copy, const LAST: bool>(
    best: &mut Option<(K, usize)>,
    candidate: (K, usize),
) {
    let take = match *best {
        None => true,
        Some((key, index)) => {
            candidate.0 > key
                || (candidate.0 == key
                    && if LAST {
                        candidate.1 > index
                    } else {
                        candidate.1 < index
                    })
        }
    };
    if take {
        *best = Some(candidate);
    }
}

/// [`combine`]s each entry of `part` (a partial result per output, `None` where it met no
/// element) into the same output's entry of `best`.
pub(super) fn combine_each<K: Ord + Copy, const LAST: bool>(
    best: &mut [Option<(K, usize)>],
    part: Vec<Option<(K, usize)>>,
) {
    for (b, p) in best.iter_mut().zip(part) {
        if let Some(candidate) = p {
            combine::<_, LAST>(b, candidate);
        }
    }
}

/// A short tail folded `m` reduced positions at a time (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Widened {
    /// Outputs in the tail.
    k: usize,
    /// Elements from one reduced position's tail to the next: `k`, or more with padding
    /// after each tail (its lanes folded and ignored).
    pitch: usize,
    /// Reduced positions per widened row.
    m: usize,
    /// Index stride of the innermost reduced dimension: lane group `q` of a widened row is at
    /// the row's index plus `q` times this.
    index_stride: usize,
    /// The reduced dimensions with the innermost one cut into groups of `m`.
    wide: Vec<Dim>,
    /// The positions after the last whole group, when `m` does not divide the size.
    left_over: Option<LeftOver>,
}

/// The reduced positions of a [`Widened`] tail after its last whole group.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LeftOver {
    /// The reduced dimensions with the innermost one cut to the left-over positions.
    dims: Vec<Dim>,
    /// Element offset of the first left-over position.
    offset: usize,
    /// Index of the first left-over position.
    index: usize,
}

/// Widened rows of at least this many bytes (four AVX2 vectors).
const WIDENED_ROW_BYTES: usize = 128;

/// Widened rows of at most this many bytes, unless [`WIDENED_ROW_BYTES`] needs more.
const WIDENED_ROW_MAX_BYTES: usize = 4096;

/// Reduced positions per widened row for `size` positions `pitch` elements apart: rows of at
/// least [`WIDENED_ROW_BYTES`] and at most [`WIDENED_ROW_MAX_BYTES`] (or all the positions),
/// the one of least [`widening_cost`].
fn widening<T: Lanes>(size: usize, pitch: usize) -> usize {
    let row = pitch * T::SIZE;
    let least = WIDENED_ROW_BYTES.div_ceil(row).min(size);
    let most = (WIDENED_ROW_MAX_BYTES / row).max(least).min(size);
    let (mut best, mut cheapest) = (least, widening_cost(size, pitch, least));
    // A row of `m` positions costs at least its lanes' combine, which grows with `m`: the
    // search stops where that alone reaches the cheapest so far, after a few dozen rows
    // rather than up to 4096 (a division each, per call).
    for m in least + 1..=most {
        if combine_cost(pitch, m) >= cheapest {
            break;
        }
        let cost = widening_cost(size, pitch, m);
        if cost < cheapest {
            (best, cheapest) = (m, cost);
        }
    }
    best
}

/// What an item's fold costs, in units of about half a nanosecond, with widened rows of `m`
/// positions out of `size`, `pitch` lanes each: every lane of a widened row is combined into
/// its output one by one after the fold (about 1 ns a lane), positions left over after the
/// last whole row are folded as rows of a few lanes (a call of some 30 ns, then about 1 ns a
/// position), and each widened row costs a little.
///
/// One AMD EPYC Zen 4 core (libraries alternated, calls back to back, medians of 11–15, ms):
/// FLOAT16 `[136, 2, 2872, 2]` over axis 2 took the smallest divisor of 2872 within the
/// bounds before, 359 positions (718 lanes to combine), 0.47 ms; rows of 16, 32, 41, 48, 64
/// and 128 positions took 0.29, 0.29, 0.29, 0.33, 0.35 and 0.40, and this cost's choice (33,
/// one left over) 0.26. FLOAT32 `[100, 3000, 3]` over axis 1 0.185 → 0.126, INT32
/// `[50, 10000, 2]` 0.163 → 0.117; FLOAT32 `[3, 5, 3484, 24]` over axes 1,3 (24 positions:
/// all in one row before, 12 now) 0.352 → 0.365, within the noise. Before, groups of 11 with
/// 2 left over had taken that input 1.9 ms against 1.3 for one group of 24: the left-over
/// call, paid by each of its 10452 items.
fn widening_cost(size: usize, pitch: usize, m: usize) -> usize {
    let left = size % m;
    let left_over = if left > 0 { 64 + 2 * left } else { 0 };
    combine_cost(pitch, m) + left_over + size / m
}

/// The part of [`widening_cost`] that combines a widened row's `m × pitch` lanes one by one.
fn combine_cost(pitch: usize, m: usize) -> usize {
    2 * m * pitch
}

impl Widened {
    /// The widening of a contiguous tail shorter than a vector whose rows lie back to back
    /// (the innermost reduced dimension's stride is the tail's size) or with at most a
    /// vector of padding between them, or None.
    fn new<T: Lanes>(tail: Dim, reduced: &[Dim]) -> Option<Widened> {
        let (&inner, outer) = reduced.split_last()?;
        let (k, pitch) = (tail.size, inner.stride);
        if tail.stride != 1 || k * T::SIZE >= 32 || pitch < k || (pitch - k) * T::SIZE > 32 {
            return None;
        }
        let m = widening::<T>(inner.size, pitch);
        if m < 2 {
            return None;
        }
        let groups = inner.size / m;
        let with_inner = |size: usize, stride: usize, index_stride: usize| {
            let mut dims = outer.to_vec();
            dims.push(Dim {
                size,
                stride,
                index_stride,
                slot_stride: 0,
            });
            dims
        };
        let left = inner.size % m;
        Some(Widened {
            k,
            pitch,
            m,
            index_stride: inner.index_stride,
            wide: with_inner(groups, inner.stride * m, inner.index_stride * m),
            left_over: (left > 0).then(|| LeftOver {
                dims: with_inner(left, inner.stride, inner.index_stride),
                offset: groups * m * inner.stride,
                index: groups * m * inner.index_stride,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argmax::plan::test_plan as plan;

    #[test]
    fn widened_rows_stay_short_and_prefer_groups_that_divide_the_positions() {
        // Fewer positions than the shortest row: one row of all of them.
        assert_eq!(widening::<f32>(5, 3), 5);
        // 24 positions of 3 lanes: two rows of 12 (the shortest divisor over 128 bytes), not
        // one of 24 (twice the lanes to combine) nor 11 with 2 left over.
        assert_eq!(widening::<f32>(24, 3), 12);
        // 2872 FLOAT16 positions of 2 lanes: 33 divides all but one of them; the smallest
        // exact divisor within the bounds, 359, would combine 718 lanes an item.
        assert_eq!(widening::<half::f16>(2872, 2), 33);
        // A row is never shorter than 128 bytes nor, past it, longer than 4096; and the
        // search, which stops early, finds the cheapest row of the whole range.
        for (size, pitch) in [
            (4099, 2),
            (3000, 5),
            (100_000, 1),
            (7, 7),
            (2048, 1),
            (9973, 3),
        ] {
            let m = widening::<u8>(size, pitch);
            let least = WIDENED_ROW_BYTES.div_ceil(pitch).min(size);
            let most = (WIDENED_ROW_MAX_BYTES / pitch).max(least).min(size);
            let cheapest = (least..=most).min_by_key(|&m| widening_cost(size, pitch, m));
            assert_eq!(Some(m), cheapest, "{size} {pitch}");
            assert!(
                m == size || m * pitch >= WIDENED_ROW_BYTES,
                "{size} {pitch}: {m}"
            );
            assert!(m * pitch <= WIDENED_ROW_MAX_BYTES, "{size} {pitch}: {m}");
        }
    }

    #[test]
    fn a_long_tail_spans_no_kept_dimension_holding_reduced_elements() {
        // `[50, 2, 1000]` over axis 1: the kept axis 0 holds the reduced rows in its gaps.
        let rows_between = plan(&[50, 2, 1000], None, &[false, true, false]);
        let long = Tail::new::<i32>(
            &rows_between.outer,
            rows_between.tail.unwrap(),
            None,
            &rows_between.reduced,
        );
        assert!(!long.is_spanned());
        assert_eq!((long.count, long.outer.len()), (1000, 1));
        // A short tail spans it (`[50, 2, 4]`), and so does a long one when `gap` says so.
        let short = plan(&[50, 2, 4], None, &[false, true, false]);
        let tail = Tail::new::<i32>(&short.outer, short.tail.unwrap(), None, &short.reduced);
        assert!(tail.is_spanned());
        let tail = Tail::new::<i32>(
            &rows_between.outer,
            rows_between.tail.unwrap(),
            Some(2),
            &rows_between.reduced,
        );
        assert!(tail.is_spanned());
        // Padding in the gaps, the reduced axis outside: a long tail spans it.
        let padded = plan(
            &[2, 50, 1000],
            Some(&[51_000, 1020, 1]),
            &[true, false, false],
        );
        let tail = Tail::new::<i32>(&padded.outer, padded.tail.unwrap(), None, &padded.reduced);
        assert!(tail.is_spanned());
        assert_eq!(tail.count, 50_000);
    }

    #[test]
    fn a_long_tail_spans_no_dimension_further_in_in_the_output() {
        // `[3, 2, 1100, 4]` stored as (1, 3, 0, 2), over axis 1: the tail (axes 0 and 2,
        // fused) stops at axis 3, whose slot stride (1) is the smallest.
        let strides = [1100, 3 * 1100 * 4, 1, 3 * 1100];
        let permuted = plan(
            &[3, 2, 1100, 4],
            Some(&strides),
            &[false, true, false, false],
        );
        let tail = Tail::new::<i64>(
            &permuted.outer,
            permuted.tail.unwrap(),
            None,
            &permuted.reduced,
        );
        assert!(tail.units_first);
        assert_eq!(tail.count, 3 * 1100);
        assert_eq!(tail.outer.iter().map(|d| d.size).collect::<Vec<_>>(), [4]);
        // Short, it spans it as before (items of a few lanes cost more).
        let strides = [10, 3 * 10 * 4, 1, 3 * 10];
        let short = plan(&[3, 2, 10, 4], Some(&strides), &[false, true, false, false]);
        let tail = Tail::new::<i64>(&short.outer, short.tail.unwrap(), None, &short.reduced);
        assert!(!tail.units_first);
        // With 100 units (axis 3), each one's share of ARGMAX_TAIL_BYTES (655 UINT8 lanes, 163
        // FLOAT32 ones) is below the block floor: 4096 bytes' worth, at most 1024 outputs.
        let strides = [1100, 3 * 1100 * 100, 1, 3 * 1100];
        let many = plan(
            &[3, 2, 1100, 100],
            Some(&strides),
            &[false, true, false, false],
        );
        let tail = Tail::new::<u8>(&many.outer, many.tail.unwrap(), None, &many.reduced);
        assert!(tail.units_first);
        assert_eq!(tail.block::<u8>(), 1024);
        assert_eq!(tail.block::<half::f16>(), 1024);
        assert_eq!(tail.block::<f32>(), 1024);
        assert_eq!(tail.block::<i64>(), 512);
    }

    #[test]
    fn packed_items_are_taken_only_when_they_do_not_interleave() {
        let isa = Isa::detect();
        if !isa.avx2() {
            return;
        }
        // `[n, 34, 2]` over axis 1: each item is its own 68 elements.
        let own = plan(&[100, 34, 2], None, &[false, true, false]);
        assert!(PackedItems::new::<i64>(isa, &own, false).is_some());
        // `[79, 7587, 2]` padded to 7 per position, over axis 0: an item's 79 rows lie 53,109
        // elements apart and the next item starts 7 elements on, inside them.
        let strides = [7587 * 7, 7, 1];
        let interleaved = plan(&[79, 7587, 2], Some(&strides), &[true, false, false]);
        assert!(PackedItems::new::<i64>(isa, &interleaved, true).is_none());
    }

    #[test]
    fn narrow_items_of_more_than_255_vectors_are_packed_for_elements_over_a_byte() {
        let isa = Isa::detect();
        if !isa.avx2() {
            return;
        }
        // `[n, 554, 8]` over axis 1: 554 vectors of one position each with AVX2 (277 with
        // AVX-512), numbered in 4-byte lanes.
        let long = plan(&[10, 554, 8], None, &[false, true, false]);
        assert!(PackedItems::new::<f32>(isa, &long, false).is_some());
        assert!(PackedItems::new::<i16>(isa, &long, false).is_some());
        // UINT8 numbers its vectors in bytes: 520 positions of 32 bytes are too many.
        let bytes = plan(&[10, 520, 32], None, &[false, true, false]);
        assert!(PackedItems::new::<u8>(isa, &bytes, false).is_none());
    }
}
