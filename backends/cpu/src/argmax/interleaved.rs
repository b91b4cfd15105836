//! [`Shape::Rows`] plans with kept dimensions lying between reduced ones in memory, walked in
//! memory order.
//!
//! In FLOAT32 `{16,16,32,32,60}` padded to `{..,64}` over axes 1,3 the memory order is kept
//! (16), reduced (16), kept (32), reduced (32), tail (60). Reducing one output tail at a time
//! reads its 512 rows of 240 bytes in sixteen stretches 256 KiB apart, and the next tail the
//! stretches just after them: sixteen streams, each broken at every page (2.7 times the memory
//! floor on one core in round 38's bench, Zen 4; walked in memory order, 1.5).
//!
//! Here the dimensions from the outermost reduced one in are walked in memory order instead,
//! each *mid* kept dimension (between reduced ones) numbering a set of running maxima
//! ([`fold_rows_running`]), one per tail: each step of the walk folds the innermost reduced
//! dimensions (the *rows*, contiguous with the tail) into the maxima of its mid coordinates.
//! Every set of maxima then meets its rows in increasing index order, as a running fold needs,
//! when the reduced dimensions' memory order is their index order (`monotonic`).
//!
//! Items are the units (the kept dimensions outside every reduced one) times blocks of the
//! outermost mid dimension, whose maxima stay within [`ARGMAX_INTERLEAVED_MAXIMA_BYTES`]. An
//! item whose rows hold a NaN (the running fold does not order it) is reduced again tail by
//! tail with the exact fold.

use super::kernels::{can_fold_running, fold_rows_running, FoldScratch, Row, RunningChunk};
use super::lanes::Lanes;
use super::plan::{Dim, Plan, Shape, Walk};
use super::rows::{even_index_step, list_rows, running_chunk_rows, RowsState};
use super::{Job, Outputs};
use crate::element::FromIndex;
use crate::parallel::{for_each_task, threads, PARALLEL_MIN_ELEMENTS};
use crate::simd::Isa;
use crate::thresholds::{
    ARGMAX_INTERLEAVED_MAXIMA_BYTES, ARGMAX_INTERLEAVED_MAX_ROWS, ARGMAX_INTERLEAVED_MIN_ROWS,
    ARGMAX_SPLIT_FACTOR,
};

/// A rows plan walked in memory order, its mid kept dimensions numbering running maxima.
#[derive(Debug)]
pub(super) struct Interleaved {
    /// Kept dimensions outside every reduced one (each coordinate a unit), outermost first.
    units: Vec<Dim>,
    /// The dimensions from the outermost reduced one to the innermost mid kept one, outermost
    /// first.
    walk: Vec<Dim>,
    /// Where in `walk` the outermost mid kept dimension lies (split into blocks by items).
    split: usize,
    /// The innermost reduced dimensions, between the innermost mid one and the tail,
    /// outermost first: folded as rows, relative to the walk's offset.
    rows: Vec<Dim>,
    /// The innermost kept dimension (stride 1): the lanes of each set of maxima.
    tail: Dim,
    /// Coordinates of the outermost mid dimension per item.
    block: usize,
}

/// One item's share of the plan: its input offset, output slot and walk.
struct ItemWalk {
    /// Input offset of the item's first element, in elements.
    base: usize,
    /// Output slot of the item's first output.
    slot: usize,
    /// The walk with the outermost mid dimension cut to the item's block, each mid dimension's
    /// slot stride replaced by its stride in the numbering of the sets of maxima.
    walk: Vec<Dim>,
    /// The item's mid dimensions as they are (the outermost cut to the block), outermost first:
    /// walked row-major, they give each set of maxima's offset and output slot.
    mids: Vec<Dim>,
    /// The item's sets of maxima (the product of the sizes of `mids`).
    sets: usize,
}

impl Interleaved {
    /// The interleaved walk of `plan` for elements `T`, or `None` unless a kept dimension lies
    /// between reduced ones in memory, the reduced ones lie in index order, the tail is
    /// contiguous with a vector fold for it, one coordinate of the outermost mid dimension
    /// holds at most [`ARGMAX_INTERLEAVED_MAXIMA_BYTES`] of maxima, and each walk step folds
    /// at least [`ARGMAX_INTERLEAVED_MIN_ROWS`] rows (fewer cost more in running maxima than
    /// the walk saves) and at most [`ARGMAX_INTERLEAVED_MAX_ROWS`] (more are long stretches
    /// of input already).
    pub(super) fn new<T: Lanes>(isa: Isa, plan: &Plan) -> Option<Interleaved> {
        let (&tail, order) = plan.order.split_last()?;
        if plan.shape != Shape::Rows
            || tail.stride != 1
            || plan.tail != Some(tail)
            || !can_fold_running::<T>(isa, tail.size)
        {
            return None;
        }
        let first_reduced = order.iter().position(Dim::is_reduced)?;
        let last_mid = order.iter().rposition(|d| !d.is_reduced())?;
        if last_mid < first_reduced || last_mid + 1 == order.len() {
            return None;
        }
        let reduced_in_memory_order = order.iter().filter(|d| d.is_reduced());
        let monotonic = reduced_in_memory_order
            .clone()
            .zip(reduced_in_memory_order.skip(1))
            .all(|(outer, inner)| outer.index_stride > inner.index_stride);
        if !monotonic {
            return None;
        }
        let walk = order[first_reduced..=last_mid].to_vec();
        let split = walk.iter().position(|d| !d.is_reduced())?;
        let inner_maxima: usize = walk[split + 1..]
            .iter()
            .filter(|d| !d.is_reduced())
            .map(|d| d.size)
            .product();
        let per_coordinate = inner_maxima.checked_mul(tail.size * T::SIZE)?;
        let rows: usize = order[last_mid + 1..].iter().map(|d| d.size).product();
        let rows_in_range =
            (ARGMAX_INTERLEAVED_MIN_ROWS..=ARGMAX_INTERLEAVED_MAX_ROWS).contains(&rows);
        if per_coordinate > ARGMAX_INTERLEAVED_MAXIMA_BYTES || !rows_in_range {
            return None;
        }
        Some(Interleaved {
            units: order[..first_reduced].to_vec(),
            block: (ARGMAX_INTERLEAVED_MAXIMA_BYTES / per_coordinate).clamp(1, walk[split].size),
            walk,
            split,
            rows: order[last_mid + 1..].to_vec(),
            tail,
        })
    }

    /// The rows of the innermost reduced dimensions, relative to a walk step's offset.
    fn listed_rows(&self) -> Vec<Row> {
        let count: usize = self.rows.iter().map(|d| d.size).product();
        let mut rows = Vec::with_capacity(count);
        list_rows(&mut rows, &self.rows, 0, count);
        rows
    }

    /// The number of units (coordinates of the kept dimensions outside the reduced ones).
    fn units(&self) -> usize {
        self.units.iter().map(|d| d.size).product()
    }

    /// Item `item` of those with `block` coordinates of the outermost mid dimension each,
    /// numbered unit by unit.
    fn item(&self, item: usize, block: usize) -> ItemWalk {
        let blocks = self.walk[self.split].size.div_ceil(block);
        let (unit, b) = (item / blocks, item % blocks);
        let at = Walk::new(&self.units, unit, 1).next().unwrap_or_default();
        let outermost = self.walk[self.split];
        let first = b * block;
        let mut walk = self.walk.clone();
        walk[self.split].size = block.min(outermost.size - first);
        let mids: Vec<Dim> = walk.iter().filter(|d| !d.is_reduced()).copied().collect();
        let mut sets = 1;
        for dim in walk.iter_mut().rev().filter(|d| !d.is_reduced()) {
            dim.slot_stride = sets;
            sets *= dim.size;
        }
        ItemWalk {
            base: at.offset + first * outermost.stride,
            slot: at.slot + first * outermost.slot_stride,
            walk,
            mids,
            sets,
        }
    }
}

/// The running maxima of one tail: the vector fold's scratch and each lane's index.
#[derive(Debug, Default)]
struct Maxima {
    scratch: FoldScratch,
    index: Vec<u32>,
}

impl Job<'_> {
    /// Reduces every output of a rows plan with an [`Interleaved`] walk.
    pub(super) fn rows_interleaved<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        interleaved: &Interleaved,
    ) {
        let units = interleaved.units();
        let outermost = interleaved.walk[interleaved.split].size;
        let total = self.plan.outputs().saturating_mul(self.plan.reduced_len());
        let parallel = total >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        // Enough items for the threads: smaller blocks when the units are few.
        let wanted = if parallel {
            ARGMAX_SPLIT_FACTOR * threads()
        } else {
            1
        };
        let blocks_wanted = wanted.div_ceil(units).min(outermost);
        let block = interleaved
            .block
            .min(outermost.div_ceil(blocks_wanted))
            .max(1);
        let items = units * outermost.div_ceil(block);
        let per_task = items.div_ceil(wanted).max(1);
        let rows = interleaved.listed_rows();
        let task = |t: usize| {
            let mut maxima: Vec<Maxima> = Vec::new();
            let mut state = RowsState::default();
            for i in t * per_task..((t + 1) * per_task).min(items) {
                let item = interleaved.item(i, block);
                if !self.fold_interleaved::<T, LAST>(interleaved, &item, &rows, &mut maxima) {
                    self.refold_item::<T, O, LAST>(interleaved, &item, outputs, &mut state);
                    continue;
                }
                for (set, at) in maxima.iter().zip(Walk::new(&item.mids, 0, item.sets)) {
                    let slot = item.slot + at.slot;
                    self.write_set::<O, LAST>(outputs, interleaved, slot, &set.index);
                }
            }
        };
        for_each_task(items.div_ceil(per_task), parallel, task);
    }

    /// Folds every row of `item` into one set of running maxima per tail, in memory order,
    /// leaving them in `maxima` (resized to the item's sets). False when the vector fold met
    /// a NaN: `maxima` then holds nothing meaningful.
    fn fold_interleaved<T: Lanes, const LAST: bool>(
        &self,
        interleaved: &Interleaved,
        item: &ItemWalk,
        rows: &[Row],
        maxima: &mut Vec<Maxima>,
    ) -> bool {
        maxima.resize_with(item.sets, Maxima::default);
        for set in maxima.iter_mut() {
            set.index.clear();
            set.index.resize(interleaved.tail.size, 0);
        }
        let step = even_index_step(&interleaved.rows);
        let chunk = running_chunk_rows(rows.len());
        let steps: usize = item.walk.iter().map(|d| d.size).product();
        // The rows with the reduced index of the walk's step added, rebuilt when it changes.
        let mut shifted: Vec<Row> = rows.to_vec();
        let mut shifted_by = 0;
        for at in Walk::new(&item.walk, 0, steps) {
            if at.index != shifted_by {
                for (row, &(offset, index)) in shifted.iter_mut().zip(rows) {
                    *row = (offset, index + at.index as u32);
                }
                shifted_by = at.index;
            }
            let data = &self.data[(item.base + at.offset) * T::SIZE..];
            let set = &mut maxima[at.slot];
            for (c, part) in shifted.chunks(chunk).enumerate() {
                let start = RunningChunk {
                    first: at.index == 0 && c == 0,
                    step,
                    in_memory_order: true,
                };
                if !fold_rows_running::<T, LAST>(
                    self.isa,
                    data,
                    part,
                    start,
                    &mut set.index,
                    &mut set.scratch,
                ) {
                    return false;
                }
            }
        }
        true
    }

    /// Reduces `item` tail by tail over the whole reduced range with the exact fold (after
    /// the interleaved fold met a NaN), writing its outputs.
    fn refold_item<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        interleaved: &Interleaved,
        item: &ItemWalk,
        outputs: &Outputs<O>,
        state: &mut RowsState<T::Key>,
    ) {
        let q = self.plan.reduced_len();
        for at in Walk::new(&item.mids, 0, item.sets) {
            let (base, slot) = (item.base + at.offset, item.slot + at.slot);
            self.fold_walk::<T, LAST>(
                base,
                interleaved.tail.size,
                1,
                &self.plan.reduced,
                0,
                q,
                state,
            );
            self.write_set::<O, LAST>(outputs, interleaved, slot, &state.index);
        }
    }

    /// Writes one tail's results: lane `lane`'s output lies at `slot` plus `lane` tail slot
    /// strides, its reduced index is `index[lane]`.
    fn write_set<O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        interleaved: &Interleaved,
        slot: usize,
        index: &[u32],
    ) {
        for (lane, &index) in index.iter().enumerate() {
            let at = slot + lane * interleaved.tail.slot_stride;
            // SAFETY: each item's outputs are distinct slots, written by the one task that
            // reduces the item.
            unsafe { outputs.set(at, self.finish::<LAST>(index as usize)) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argmax::plan::test_plan;

    /// The interleaved walk of a FLOAT32 plan, if it takes one.
    fn interleaved(
        sizes: &[u32],
        strides: Option<&[u32]>,
        reduced: &[bool],
    ) -> Option<Interleaved> {
        let isa = Isa::detect();
        Interleaved::new::<f32>(isa, &test_plan(sizes, strides, reduced)).filter(|_| isa.avx2())
    }

    #[test]
    fn mid_kept_dimensions_between_reduced_ones_are_walked_in_memory_order() {
        if !Isa::detect().avx2() {
            return;
        }
        // The bench's padded rank 5 over axes 1,3: one unit dimension, the mid one whole in
        // each item (32 × 240 bytes of maxima), the rows of axis 3.
        let padded = [1_048_576, 65_536, 2048, 64, 1];
        let walk = interleaved(
            &[16, 16, 32, 32, 60],
            Some(&padded),
            &[false, true, false, true, false],
        )
        .expect("interleaved");
        assert_eq!((walk.units.len(), walk.walk.len(), walk.split), (1, 2, 1));
        assert_eq!(
            (walk.rows.len(), walk.rows[0].size, walk.tail.size),
            (1, 32, 60)
        );
        assert_eq!(walk.block, 32);
        // Two levels of mid dimensions: blocks of the outermost hold every inner one's maxima.
        let walk = interleaved(
            &[4, 50, 3, 20, 8, 40],
            None,
            &[true, false, true, false, true, false],
        )
        .expect("interleaved");
        assert_eq!((walk.units.len(), walk.walk.len(), walk.split), (0, 4, 1));
        assert_eq!(walk.block, ARGMAX_INTERLEAVED_MAXIMA_BYTES / (20 * 40 * 4));
    }

    #[test]
    fn other_rows_plans_are_not_interleaved() {
        // No kept dimension between reduced ones; the kept one right outside the tail (no
        // rows to fold); the reduced ones out of index order in memory; a tail narrower than
        // a vector; too many maxima per coordinate; too few and too many rows per step.
        let r = [true, false, true, false];
        assert!(interleaved(&[8, 8, 40], None, &[false, true, false]).is_none());
        assert!(interleaved(
            &[8, 8, 8, 40],
            Some(&[5120, 640, 41, 1]),
            &[true, false, false, false]
        )
        .is_none());
        assert!(interleaved(&[4, 5, 8, 40], Some(&[40, 320, 1600, 1]), &r).is_none());
        assert!(interleaved(&[4, 5, 8, 7], None, &r).is_none());
        assert!(interleaved(&[4, 5, 8, 40], None, &r).is_some() || !Isa::detect().avx2());
        assert!(interleaved(&[4, 5000, 8, 40], None, &r).is_some() || !Isa::detect().avx2());
        assert!(interleaved(&[4, 5, 8, 4097], None, &r).is_none());
        assert!(interleaved(&[4, 5, 7, 40], None, &r).is_none());
        assert!(interleaved(&[4, 5, 5000, 40], None, &r).is_none());
    }
}
