//! [`Shape::Rows`](super::plan::Shape::Rows): the innermost dimension is kept, so a *tail* of
//! neighbouring outputs is reduced side by side: each reduced index contributes one input row
//! of the tail, and rows are visited in increasing index order.
//!
//! The outputs are cut into items (an outer coordinate and a block of at most
//! [`ARGMAX_TAIL_BYTES`] of the tail, whose running maxima stay in the L1 cache), folded
//! [`CHUNK_ROWS`] rows at a time ([`fold_rows`]). Items are split across threads, or, with
//! fewer than [`ARGMAX_SPLIT_FACTOR`] × threads of them, each item's reduced range, the
//! partial results combined in index order.
//!
//! A *short* tail (fewer bytes than a vector, e.g. the two interleaved outputs of a permuted
//! view) whose rows lie back to back in memory (the innermost reduced dimension's stride is
//! the tail's size) is *widened* ([`Widened`]): `m` consecutive reduced positions are folded
//! as one row of `m × tail` lanes, so a vector covers several reduced positions instead of
//! one row of two elements costing a whole fold step. The `m` lanes of each output are then
//! combined by (key, index), and the reduced positions left over after the last whole group
//! of `m` are folded as plain rows and combined the same way.

use super::kernels::{better, fold_rows, FoldScratch, Row, CHUNK_ROWS};
use super::lanes::Lanes;
use super::plan::{Dim, Walk};
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
        let fused = FusedTail::new(&plan.outer, tail);
        if !fused.is_fused() {
            if let Some(widened) = Widened::new::<T>(tail, &plan.reduced) {
                self.rows_widened::<T, O, LAST>(outputs, tail, &widened);
                return;
            }
        }
        let (outer, tail) = (&fused.outer, fused.tail);
        let block = (ARGMAX_TAIL_BYTES / T::SIZE).max(1);
        let blocks = tail.size.div_ceil(block);
        let units: usize = outer.iter().map(|d| d.size).product();
        let items = units * blocks;
        let q = plan.reduced_len();
        let per_item = block.min(tail.size).saturating_mul(q);
        let parallel = items.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        // Item `i`: its first input offset, the slot of its unit, its first lane and number
        // of lanes.
        let item = |i: usize| {
            let (unit, b) = (i / blocks, i % blocks);
            let at = Walk::new(outer, unit, 1).next().unwrap_or_default();
            let t0 = b * block;
            (
                at.offset + t0 * tail.stride,
                at.slot,
                t0,
                block.min(tail.size - t0),
            )
        };
        let write = |slot: usize, t0: usize, index: &[u32]| {
            fused.for_lane_slots(t0, index.len(), |e, lane_slot| {
                // SAFETY: each item's outputs are distinct slots, written by the one task that
                // reduces the item (or, when its range is split, by the calling thread alone).
                unsafe { outputs.set(slot + lane_slot, self.finish::<LAST>(index[e] as usize)) };
            });
        };
        if !parallel || items >= factor {
            let per_task = (TASK_ELEMENTS / per_item.max(1)).clamp(1, items.div_ceil(factor));
            let tasks = items.div_ceil(per_task);
            let task = |t: usize| {
                let mut state = RowsState::default();
                for i in t * per_task..((t + 1) * per_task).min(items) {
                    let (base, slot, t0, lanes) = item(i);
                    self.fold_range::<T, LAST>(base, lanes, 0, q, &mut state);
                    write(slot, t0, &state.index);
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
            let (base, slot, t0, lanes) = item(i);
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
            write(slot, t0, &index);
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
        let stride = self.plan.tail.map_or(1, |t| t.stride);
        self.fold_walk::<T, LAST>(base, lanes, stride, &self.plan.reduced, q0, q1, state);
    }

    /// [`Self::fold_range`] over the reduced dimensions `reduced` (walked in order, indices
    /// increasing) with lanes `stride` elements apart.
    #[allow(clippy::too_many_arguments)]
    fn fold_walk<T: Lanes, const LAST: bool>(
        &self,
        base: usize,
        lanes: usize,
        stride: usize,
        reduced: &[Dim],
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
    ) {
        let mut walk = Walk::new(reduced, q0, q1 - q0);
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
        let item = |i: usize| Walk::new(&plan.outer, i, 1).next().unwrap_or_default();
        let write = |slot: usize, best: &[Option<(T::Key, usize)>]| {
            for (j, b) in best.iter().enumerate() {
                let index = b.map_or(0, |(_, at)| at);
                // SAFETY: each item's outputs are distinct slots, written by the one task that
                // reduces the item (or, when its range is split, by the calling thread alone).
                unsafe { outputs.set(slot + j * tail.slot_stride, self.finish::<LAST>(index)) };
            }
        };
        if !parallel || items >= factor {
            let per_task = (TASK_ELEMENTS / per_item.max(1)).clamp(1, items.div_ceil(factor));
            let tasks = items.div_ceil(per_task);
            let task = |t: usize| {
                let mut state = RowsState::default();
                let mut best = Vec::new();
                for i in t * per_task..((t + 1) * per_task).min(items) {
                    let at = item(i);
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
        for i in 0..items {
            let at = item(i);
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
                for (b, p) in best.iter_mut().zip(part) {
                    if let Some(candidate) = p {
                        combine::<_, LAST>(b, candidate);
                    }
                }
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
        let lanes = widened.k * widened.m;
        self.fold_walk::<T, LAST>(base, lanes, 1, &widened.wide, q0, q1, state);
        for (lane, (&key, &index)) in state.keys.iter().zip(&state.index).enumerate() {
            let (q, j) = (lane / widened.k, lane % widened.k);
            combine::<_, LAST>(
                &mut best[j],
                (key, index as usize + q * widened.index_stride),
            );
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

/// The tail of a rows plan grown by the kept dimensions just outside it in memory that
/// continue it in the input (each one's stride is the span of the tail so far), whatever
/// their output slots: the kept elements of a permuted view that lie together in memory are
/// folded as one long row instead of many short ones.
#[derive(Debug)]
struct FusedTail {
    /// The kept dimensions left outside the tail, outermost first.
    outer: Vec<Dim>,
    /// The tail: its size is the product of the fused sizes and its stride the innermost's
    /// (its slot stride holds when `fused` is empty).
    tail: Dim,
    /// The dimensions fused into the tail, outermost first, when there are several (their
    /// walk gives each lane's output slot); empty otherwise.
    fused: Vec<Dim>,
}

impl FusedTail {
    /// Fuses what [`FusedTail`] describes; `outer` is in memory order, outermost first.
    fn new(outer: &[Dim], tail: Dim) -> FusedTail {
        let mut fused = vec![tail];
        let mut span = tail.size * tail.stride;
        let mut left = outer.len();
        while left > 0 && outer[left - 1].stride == span {
            left -= 1;
            fused.insert(0, outer[left]);
            span *= outer[left].size;
        }
        if fused.len() == 1 {
            return FusedTail {
                outer: outer.to_vec(),
                tail,
                fused: Vec::new(),
            };
        }
        FusedTail {
            outer: outer[..left].to_vec(),
            tail: Dim {
                size: fused.iter().map(|d| d.size).product(),
                ..tail
            },
            fused,
        }
    }

    /// True when several dimensions were fused.
    fn is_fused(&self) -> bool {
        !self.fused.is_empty()
    }

    /// Calls `f(e, slot)` for lanes `t0..t0 + count` (`e` from 0), with each one's output
    /// slot relative to its unit's.
    #[inline]
    fn for_lane_slots(&self, t0: usize, count: usize, mut f: impl FnMut(usize, usize)) {
        if self.is_fused() {
            for (e, at) in Walk::new(&self.fused, t0, count).enumerate() {
                f(e, at.slot);
            }
        } else {
            for e in 0..count {
                f(e, (t0 + e) * self.tail.slot_stride);
            }
        }
    }
}

/// Takes `candidate` (key, index) into `best` if it is better: a greater key, or an equal key
/// at a lower index (a higher one with `LAST`). Any order of candidates gives the same result.
#[inline]
fn combine<K: Ord + Copy, const LAST: bool>(best: &mut Option<(K, usize)>, candidate: (K, usize)) {
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

/// A short tail folded `m` reduced positions at a time (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Widened {
    /// Outputs in the tail.
    k: usize,
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

impl Widened {
    /// The widening of a contiguous tail shorter than a vector whose rows lie back to back
    /// (the innermost reduced dimension's stride is the tail's size), or None.
    fn new<T: Lanes>(tail: Dim, reduced: &[Dim]) -> Option<Widened> {
        let (&inner, outer) = reduced.split_last()?;
        let k = tail.size;
        if tail.stride != 1 || k * T::SIZE >= 32 || inner.stride != k {
            return None;
        }
        let m = WIDENED_ROW_BYTES.div_ceil(k * T::SIZE).min(inner.size);
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
