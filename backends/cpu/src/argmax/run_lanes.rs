//! [`Shape::Scan`](super::plan::Shape::Scan) plans whose short runs lie inside kept
//! dimensions (`{64,64,64,64}` reducing axes 1 and 3: for each reduced `i1`, the 64-element
//! runs of 64 outputs lie back to back), reduced lane by lane instead of run by run.
//!
//! The *block* is the run and the kept dimensions just outside it in memory while they stay
//! dense (each one's stride is the span inside it), so a block is one contiguous range of
//! `outputs × run` elements. The other reduced dimensions (the *rows*, all outside the block)
//! are folded over the block as a tail of outputs is ([`super::rows`]): each lane keeps the
//! best row of its position in its output's run. Then each output combines the lanes of its
//! run by (key, index), the run position adding its index stride: when the rows are one chunk
//! folded clean, straight from the fold's scratch, the run's maximum found a vector of lanes
//! at a time ([`RowsState::best_of_lanes`]), which took FLOAT32 {64}^4 axes 1,3 from 2.9 to
//! 2.5 ms on one AMD EPYC core. The input is read once, in
//! memory order, a block row (up to [`ARGMAX_TAIL_BYTES`]) at a time, instead of a short run
//! per output with the position searched wherever a run beats its output's best.
//!
//! With AVX2 or AVX-512, runs of more than a vector are first collapsed, each run's vectors
//! into one ([`super::collapsed_runs`]): each output then keeps one vector of maxima instead
//! of one per vector of its run, which stay in the L1 cache while the rows are read in memory
//! order.
//!
//! The runs may be padded (a padded innermost axis): the kept dimension right outside the
//! run then has a stride (the *pitch*) of up to [`ARGMAX_RUN_LANES_MAX_GAP_BYTES`] more than
//! the run, and the lanes of the padding are folded with the others and ignored.

use super::lanes::Lanes;
use super::plan::{Dim, Plan, Shape, Walk};
use super::rows::{combine, combine_each, RowsState};
use super::{items_per_task, splits_items, Job, Outputs};
use crate::element::FromIndex;
use crate::parallel::{for_each_task, map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::thresholds::{
    ARGMAX_RUN_LANES_MAX_GAP_BYTES, ARGMAX_RUN_LANES_MAX_RUN_BYTES, ARGMAX_SPLIT_FACTOR,
    ARGMAX_TAIL_BYTES,
};

/// How a [`Shape::Scan`] plan is reduced lane by lane (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunLanes {
    /// Kept dimensions outside the block, outermost first.
    units: Vec<Dim>,
    /// Kept dimensions of the block, outermost first.
    block: Vec<Dim>,
    /// The run: the innermost dimension, reduced, contiguous.
    run: Dim,
    /// Elements from one output's run to the next one's in the block: the run's size, or
    /// more with padding after each run.
    pitch: usize,
    /// The reduced dimensions outside the block, in increasing index order.
    rows: Vec<Dim>,
}

impl RunLanes {
    /// The lane-by-lane reduction of `plan` for elements of `T`, or None when its runs are
    /// long (at least [`ARGMAX_RUN_LANES_MAX_RUN_BYTES`]: the run kernels reduce them well),
    /// not contiguous, alone in their output (no other reduced dimension), or without a kept
    /// dimension packed right outside them. A block of any width is taken: one of 18 bytes
    /// (UINT8 `[4, 100000, 2, 9]` over axes 1 and 3) took 2.2 ms this way, 11.8 run by run.
    pub(super) fn new<T: Lanes>(plan: &Plan) -> Option<RunLanes> {
        if plan.shape != Shape::Scan {
            return None;
        }
        let (&run, outer_reduced) = plan.reduced.split_last()?;
        let run_bytes = run.size.checked_mul(T::SIZE)?;
        if run.stride != 1
            || run.size < 2
            || run_bytes > ARGMAX_RUN_LANES_MAX_RUN_BYTES
            || outer_reduced.is_empty()
            || plan.order.last() != Some(&run)
        {
            return None;
        }
        let inside = &plan.order[..plan.order.len() - 1];
        // The kept dimension right outside the run sets the pitch (padding after each run
        // allowed); the ones outside it must be dense.
        let pitch = match inside.last() {
            Some(dim)
                if !dim.is_reduced()
                    && dim.stride >= run.size
                    && (dim.stride - run.size) * T::SIZE <= ARGMAX_RUN_LANES_MAX_GAP_BYTES =>
            {
                dim.stride
            }
            _ => return None,
        };
        let mut span = pitch;
        let mut taken = 0;
        for dim in inside.iter().rev() {
            if dim.is_reduced() || dim.stride != span {
                break;
            }
            span = span.checked_mul(dim.size)?;
            taken += 1;
        }
        if taken == 0 {
            return None;
        }
        let block = inside[inside.len() - taken..].to_vec();
        // The block's kept dimensions are the innermost kept ones, the last of `outer`.
        let units = plan.outer[..plan.outer.len().checked_sub(taken)?].to_vec();
        if plan.outer[units.len()..] != block[..] {
            return None;
        }
        let mut rows = outer_reduced.to_vec();
        rows.sort_by_key(|d| std::cmp::Reverse(d.index_stride));
        Some(RunLanes {
            units,
            block,
            run,
            pitch,
            rows,
        })
    }

    /// Outputs in one block.
    fn outputs(&self) -> usize {
        self.block.iter().map(|d| d.size).product()
    }
}

impl Job<'_> {
    /// Reduces every output of the plan through `lanes`: items (a unit and a chunk of its
    /// block's outputs, about [`ARGMAX_TAIL_BYTES`] of lanes) split across threads, or, with
    /// fewer than [`ARGMAX_SPLIT_FACTOR`] × threads of them, each item's rows.
    pub(super) fn run_lanes<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        lanes: &RunLanes,
    ) {
        let pitch = lanes.pitch;
        let per_block = lanes.outputs();
        let per_chunk = (ARGMAX_TAIL_BYTES / (pitch * T::SIZE)).clamp(1, per_block);
        let chunks = per_block.div_ceil(per_chunk);
        let units: usize = lanes.units.iter().map(|d| d.size).product();
        let items = units * chunks;
        let q: usize = lanes.rows.iter().map(|d| d.size).product();
        let per_item = (per_chunk * pitch).saturating_mul(q);
        let parallel = items.saturating_mul(per_item) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        // Item `i`: its first input offset, its unit's output slot, its first output in the
        // block and its number of outputs.
        let item = |i: usize| {
            let (unit, chunk) = (i / chunks, i % chunks);
            let at = Walk::new(&lanes.units, unit, 1).next().unwrap_or_default();
            let t0 = chunk * per_chunk;
            (
                at.offset + t0 * pitch,
                at.slot,
                t0,
                per_chunk.min(per_block - t0),
            )
        };
        let write = |slot: usize, t0: usize, count: usize, best: &[Option<(T::Key, usize)>]| {
            for (at, b) in Walk::new(&lanes.block, t0, count).zip(best) {
                let index = b.map_or(0, |(_, index)| index);
                // SAFETY: each item's outputs are distinct slots, written by the one task that
                // reduces the item (or, when its rows are split, by the calling thread alone).
                unsafe { outputs.set(slot + at.slot, self.finish::<LAST>(index)) };
            }
        };
        if !splits_items(parallel, items, q, per_chunk * pitch) {
            let per_task = items_per_task(items, per_item);
            let tasks = items.div_ceil(per_task);
            let task = |t: usize| {
                let mut state = RowsState::default();
                let mut best = Vec::with_capacity(per_chunk);
                for i in t * per_task..((t + 1) * per_task).min(items) {
                    let (base, slot, t0, count) = item(i);
                    best.clear();
                    best.resize(count, None);
                    self.fold_run_lanes::<T, LAST>(lanes, base, 0, q, &mut state, &mut best);
                    write(slot, t0, count, &best);
                }
            };
            for_each_task(tasks, parallel, task);
            return;
        }
        // Few items: each one's rows in parallel pieces; (key, index) combines in any order.
        let piece = (TASK_ELEMENTS / (per_chunk * pitch))
            .max(q.div_ceil(factor))
            .max(1);
        for i in 0..items {
            let (base, slot, t0, count) = item(i);
            let parts = map_ranges(q, piece, true, |q0, q1| {
                let mut state = RowsState::default();
                let mut best = vec![None; count];
                self.fold_run_lanes::<T, LAST>(lanes, base, q0, q1, &mut state, &mut best);
                best
            });
            let mut best = vec![None; count];
            for part in parts {
                combine_each::<_, LAST>(&mut best, part);
            }
            write(slot, t0, count, &best);
        }
    }

    /// Folds rows `q0..q1` of the `best.len()` outputs whose lanes start at `base`, and
    /// combines each output's run lanes into its entry of `best`.
    fn fold_run_lanes<T: Lanes, const LAST: bool>(
        &self,
        lanes: &RunLanes,
        base: usize,
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
        best: &mut [Option<(T::Key, usize)>],
    ) {
        if q0 >= q1 {
            return;
        }
        if self.fold_collapsed::<T, LAST>(lanes, base, q0, q1, state, best) {
            return;
        }
        let (run, pitch) = (lanes.run, lanes.pitch);
        // The last output's run ends the lanes: no lane past it (nor past the input).
        let width = (best.len() - 1) * pitch + run.size;
        if self.fold_fresh::<T, LAST>(base, width, &lanes.rows, q0, q1, state) {
            // One chunk folded clean: each output's run lanes are read from the scratch, a
            // vector at a time (no running keys to fill and merge, no combine per lane).
            for (o, b) in best.iter_mut().enumerate() {
                let candidate = state.best_of_lanes::<T, LAST>(
                    self.isa,
                    o * pitch..o * pitch + run.size,
                    |r, row| row as usize + r * run.index_stride,
                );
                combine::<_, LAST>(b, candidate);
            }
            return;
        }
        self.fold_walk::<T, LAST>(base, width, 1, &lanes.rows, q0, q1, state);
        for (o, b) in best.iter_mut().enumerate() {
            let lanes = o * pitch..o * pitch + run.size;
            let folded = state.keys[lanes.clone()].iter().zip(&state.index[lanes]);
            for (r, (&key, &at)) in folded.enumerate() {
                combine::<_, LAST>(b, (key, at as usize + r * run.index_stride));
            }
        }
    }

    /// [`Self::fold_run_lanes`] through [`CollapsedRuns`] when it applies (every row listed at
    /// once, rows outside the run in index order, runs of more than a vector, no NaN): each
    /// output's best combined into `best`. False, with `best` untouched, otherwise.
    fn fold_collapsed<T: Lanes, const LAST: bool>(
        &self,
        lanes: &RunLanes,
        base: usize,
        q0: usize,
        q1: usize,
        state: &mut RowsState<T::Key>,
        best: &mut [Option<(T::Key, usize)>],
    ) -> bool {
        // The codes order a lane's elements row first, then by position in the run: that is
        // index order only when every row dimension's index stride lies above the run's
        // indices (not so when the run is a logical axis outside a row's).
        let (run, pitch) = (lanes.run, lanes.pitch);
        let run_span = run.index_stride.saturating_mul(run.size);
        if lanes.rows.iter().any(|d| d.index_stride < run_span) {
            return false;
        }
        if state.rows_from(&lanes.rows, q0, q1).len() != q1 - q0 {
            return false;
        }
        let data = &self.data[base * T::SIZE..];
        let (rows, collapsed) = (&state.rows, &mut state.collapsed);
        if !collapsed.fold::<T, LAST>(self.isa, data, rows, best.len(), run.size, pitch) {
            return false;
        }
        for (o, b) in best.iter_mut().enumerate() {
            let candidate = collapsed.best::<T, LAST>(self.isa, o, rows, run.index_stride);
            combine::<_, LAST>(b, candidate);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argmax::plan::test_plan as plan;

    #[test]
    fn short_runs_inside_kept_dimensions_are_folded_lane_by_lane() {
        // {64,64,64,64} axes 1,3: units i0, rows i1, block i2 × run i3.
        let plan = plan(&[64; 4], None, &[false, true, false, true]);
        let lanes = RunLanes::new::<f32>(&plan).expect("run lanes");
        assert_eq!(lanes.units.len(), 1);
        assert_eq!((lanes.block.len(), lanes.block[0].size), (1, 64));
        assert_eq!((lanes.run.size, lanes.run.index_stride), (64, 1));
        assert_eq!(lanes.rows.len(), 1);
        assert_eq!((lanes.rows[0].size, lanes.rows[0].index_stride), (64, 64));
    }

    #[test]
    fn padded_runs_fold_with_the_padding_as_ignored_lanes() {
        // {8, 16, 5} in {8, 16, 13}, reducing axes 0 and 2: 8 FLOAT32 of padding per run.
        let padded = plan(&[8, 16, 5], Some(&[16 * 13, 13, 1]), &[true, false, true]);
        let lanes = RunLanes::new::<f32>(&padded).expect("run lanes");
        assert_eq!(
            (lanes.pitch, lanes.run.size, lanes.block[0].size),
            (13, 5, 16)
        );
        // Nine elements of padding: more than a vector.
        let wide = plan(&[8, 16, 5], Some(&[16 * 14, 14, 1]), &[true, false, true]);
        assert_eq!(RunLanes::new::<f32>(&wide), None);
    }

    #[test]
    fn long_runs_lone_runs_and_padded_blocks_are_not() {
        // Runs of 4096 FLOAT32 (16 KiB): the run kernels.
        let long = plan(&[4, 8, 4, 4096], None, &[false, true, false, true]);
        assert_eq!(RunLanes::new::<f32>(&long), None);
        // One run per output: nothing to fold over.
        let lone = plan(&[64, 64], None, &[false, true]);
        assert_eq!(RunLanes::new::<f32>(&lone), None);
        // A gap of more than a vector between the runs of neighbouring outputs.
        let padded = plan(&[8, 16, 32], Some(&[16 * 41, 41, 1]), &[true, false, true]);
        assert_eq!(RunLanes::new::<f32>(&padded), None);
        // The innermost dimension kept: the rows kernels.
        let rows = plan(&[64, 64], None, &[true, false]);
        assert_eq!(RunLanes::new::<f32>(&rows), None);
    }
}
