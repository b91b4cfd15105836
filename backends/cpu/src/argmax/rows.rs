//! [`Shape::Rows`](super::plan::Shape::Rows): the innermost dimension is kept, so a *tail* of
//! neighbouring outputs is reduced side by side: each reduced index contributes one input row
//! of the tail, and rows are visited in increasing index order.
//!
//! The outputs are cut into items (an outer coordinate and a block of at most
//! [`ARGMAX_TAIL_BYTES`] of the tail, whose running maxima stay in the L1 cache), folded
//! [`CHUNK_ROWS`] rows at a time ([`fold_rows`]). Items are split across threads, or, with
//! fewer than [`ARGMAX_SPLIT_FACTOR`] × threads of them, each item's reduced range, the
//! partial results combined in index order.

use super::kernels::{better, fold_rows, FoldScratch, Row, CHUNK_ROWS};
use super::lanes::Lanes;
use super::plan::Walk;
use super::{Job, Outputs};
use crate::element::FromIndex;
use crate::parallel::{for_each_task, map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::thresholds::{ARGMAX_SPLIT_FACTOR, ARGMAX_TAIL_BYTES};

/// Running maxima of one item, and the buffers to compute them.
#[derive(Debug)]
struct RowsState<K> {
    keys: Vec<K>,
    index: Vec<u32>,
    rows: Vec<Row>,
    scratch: FoldScratch,
}

impl<K> Default for RowsState<K> {
    fn default() -> Self {
        RowsState {
            keys: Vec::new(),
            index: Vec::new(),
            rows: Vec::with_capacity(CHUNK_ROWS),
            scratch: FoldScratch::default(),
        }
    }
}

impl Job<'_> {
    /// Reduces every output of a [`Shape::Rows`](super::plan::Shape::Rows) plan.
    pub(super) fn rows<T: Lanes, O: FromIndex, const LAST: bool>(&self, outputs: &Outputs<O>) {
        let plan = self.plan;
        let tail = plan.tail.expect("a tail");
        let block = (ARGMAX_TAIL_BYTES / T::SIZE).max(1);
        let blocks = tail.size.div_ceil(block);
        let units: usize = plan.outer.iter().map(|d| d.size).product();
        let items = units * blocks;
        let q = plan.reduced_len();
        let per_item = block.min(tail.size).saturating_mul(q);
        let parallel = items.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        // Item `i`: its first input offset, first output slot and number of outputs.
        let item = |i: usize| {
            let (unit, b) = (i / blocks, i % blocks);
            let at = Walk::new(&plan.outer, unit, 1).next().unwrap_or_default();
            let t0 = b * block;
            (
                at.offset + t0 * tail.stride,
                at.slot + t0 * tail.slot_stride,
                block.min(tail.size - t0),
            )
        };
        let write = |slot: usize, index: &[u32]| {
            for (e, &at) in index.iter().enumerate() {
                // SAFETY: each item's outputs are distinct slots, written by the one task that
                // reduces the item (or, when its range is split, by the calling thread alone).
                unsafe {
                    outputs.set(
                        slot + e * tail.slot_stride,
                        self.finish::<LAST>(at as usize),
                    )
                };
            }
        };
        if !parallel || items >= factor {
            let per_task = (TASK_ELEMENTS / per_item.max(1)).clamp(1, items.div_ceil(factor));
            let tasks = items.div_ceil(per_task);
            let task = |t: usize| {
                let mut state = RowsState::default();
                for i in t * per_task..((t + 1) * per_task).min(items) {
                    let (base, slot, lanes) = item(i);
                    self.fold_range::<T, LAST>(base, lanes, 0, q, &mut state);
                    write(slot, &state.index);
                }
            };
            for_each_task(tasks, parallel, task);
            return;
        }
        // Few items: each one's reduced range in parallel pieces, combined in index order.
        let piece = (TASK_ELEMENTS / block.min(tail.size))
            .max(q.div_ceil(factor))
            .max(1);
        for i in 0..items {
            let (base, slot, lanes) = item(i);
            let parts = map_ranges(q, piece, true, |q0, q1| {
                let mut state = RowsState::default();
                self.fold_range::<T, LAST>(base, lanes, q0, q1, &mut state);
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
            write(slot, &index);
        }
    }

    /// Reduces rows `q0..q1` (in index order) of the `lanes` outputs whose row starts at
    /// `base`, leaving their keys and indices in `state`.
    fn fold_range<T: Lanes, const LAST: bool>(
        &self,
        base: usize,
        lanes: usize,
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
    ) {
        let plan = self.plan;
        let stride = plan.tail.map_or(1, |t| t.stride);
        let mut walk = Walk::new(&plan.reduced, q0, q1 - q0);
        let first = walk.clone().next().map_or(0, |at| at.index);
        state.keys.clear();
        state.keys.resize(lanes, T::MIN_KEY);
        state.index.clear();
        state.index.resize(lanes, first as u32);
        loop {
            state.rows.clear();
            state.rows.extend(
                walk.by_ref()
                    .take(CHUNK_ROWS)
                    .map(|at| (base + at.offset, at.index as u32)),
            );
            if state.rows.is_empty() {
                return;
            }
            fold_rows::<T, LAST>(
                self.isa,
                self.data,
                &state.rows,
                stride,
                &mut state.keys,
                &mut state.index,
                &mut state.scratch,
            );
        }
    }
}
