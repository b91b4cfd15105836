//! [`Shape::Scan`](super::plan::Shape::Scan): the innermost dimension is reduced, so every
//! output's elements come as runs along it.
//!
//! The dimensions in memory order are split into *units* (the kept dimensions outside every
//! reduced one) and the *region* inside them, which ends with the run dimension and may mix
//! reduced and kept dimensions (`{64,64,64,64}` reducing axes 1 and 3: per unit, the runs of
//! 64 outputs interleave). A task takes a range of units and walks its region in memory order,
//! keeping the best (key, index) of each of its outputs; runs are cut into pieces of at most
//! [`SCAN_BLOCK`] elements whose maxima are computed in batches, and a piece is searched for
//! its maximum's position only when that can change its output's result.
//!
//! When the region is the run alone (each output's elements are one contiguous run, the
//! common inner-axis case, padded or not), tasks skip that state: each run is reduced by one
//! call ([`Prims::run_argmax`]) and its output written at once, which keeps the per-output
//! cost of short runs to a few instructions.
//!
//! With fewer units than [`ARGMAX_SPLIT_FACTOR`] × threads, each output's reduction is split
//! across threads instead, and the partial results combined by (key, index).

#[cfg(target_arch = "x86_64")]
use super::avx512::{short_runs_argmax_avx512, Avx512Prims, ShortRunsBest};
#[cfg(target_arch = "x86_64")]
use super::kernels::Avx2Prims;
use super::kernels::{block_max, locate, short_runs_max, Piece, PortablePrims, Prims, SCAN_BLOCK};
use super::lanes::Lanes;
use super::padded::Padded;
use super::plan::{At, Dim, Walk};
use super::rows::combine;
use super::strided_run::{strided_run_best, StridedRuns};
#[cfg(target_arch = "x86_64")]
use super::transposed_runs::Transposed;
#[cfg(target_arch = "x86_64")]
use super::window_runs;
use super::{items_per_task, Best, Job, Outputs};
use crate::element::FromIndex;
use crate::parallel::{for_each_task, map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::simd::Isa;
use crate::thresholds::{ARGMAX_MIN_RUN_BYTES, ARGMAX_SHORT_RUN_BYTES, ARGMAX_SPLIT_FACTOR};
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs per unit listed once rather than walked per unit, at most.
const LISTED_STEPS: usize = 1 << 12;

/// Outputs a task keeps state for at most (when one unit has more, a task takes one unit).
const TASK_OUTPUTS: usize = 1 << 14;

/// "No element yet" in a task's index state.
const NONE: usize = usize::MAX;

/// A task's best (key, index) per output, ties as in [`Best`].
struct State<K> {
    keys: Vec<K>,
    index: Vec<usize>,
}

impl<K: Ord + Copy + Default> State<K> {
    fn new(len: usize) -> State<K> {
        State {
            keys: vec![K::default(); len],
            index: vec![NONE; len],
        }
    }

    /// True when an element of key `key` (met after the ones already offered) can replace the
    /// best of output `s`: a greater key, or an equal one at a better index (with DECREASING,
    /// or when indices do not grow along the walk).
    #[inline(always)]
    fn may_take<const LAST: bool>(&self, s: usize, key: K, monotonic: bool) -> bool {
        self.index[s] == NONE || key > self.keys[s] || (key == self.keys[s] && (LAST || !monotonic))
    }

    /// Takes (`key`, `index`) for output `s` if it is better.
    #[inline(always)]
    fn offer<const LAST: bool>(&mut self, s: usize, key: K, index: usize) {
        let current = self.index[s];
        let replace = current == NONE
            || key > self.keys[s]
            || (key == self.keys[s]
                && if LAST {
                    index > current
                } else {
                    index < current
                });
        if replace {
            self.keys[s] = key;
            self.index[s] = index;
        }
    }
}

/// Holders of an output's maximum whose indices one piece of [`Job::scan_dense`] computes one
/// by one (one per run at most), at most; past it every piece of the output stops and the
/// output is reduced by [`Job::dense_tied`]. With the pieces stopping together, 4096 per
/// piece became 1024: a permuted UINT8 `[2, 6, 619, 1333]` over every axis 0.543 → 0.375 ms.
const DENSE_MAX_TIES: usize = 1 << 10;

/// [`Job::dense_tied`] walks a dense range in index order this many elements at a time (back
/// from its end with `LAST`).
const DENSE_WALK_CHUNK: usize = 4096;

/// [`Job::dense_best`] reads a dense range in blocks of this many bytes, each searched again
/// (in the L1 cache) when its maximum reaches the best so far.
const DENSE_BLOCK_BYTES: usize = 16 << 10;

/// An output's reduced dimensions when they fill one contiguous range of the input in an
/// order other than the index order (a permuted packed tensor reduced over every axis), so
/// that the maximum is one plain reduction of the range.
struct Dense {
    /// The dimensions, innermost (stride 1) first, each stride the span of those inside it.
    dims: Vec<Dim>,
    /// Elements in the range.
    len: usize,
}

impl Dense {
    /// The dense form of `region` (every dimension reduced), or None when it has a kept
    /// dimension or leaves gaps.
    fn new(region: &[Dim]) -> Option<Dense> {
        if !region.iter().all(Dim::is_reduced) {
            return None;
        }
        let mut dims = region.to_vec();
        dims.sort_by_key(|d| d.stride);
        let mut span = 1usize;
        for d in &dims {
            if d.stride != span {
                return None;
            }
            span = span.checked_mul(d.size)?;
        }
        Some(Dense { dims, len: span })
    }

    /// Elements of the innermost run, along which the index grows with the offset.
    fn run_len(&self) -> usize {
        self.dims.first().map_or(1, |d| d.size)
    }

    /// The reduced index of the element at offset `offset` of the range.
    fn index_at(&self, offset: usize) -> usize {
        let mut rest = offset;
        let mut index = 0;
        for d in &self.dims {
            index += (rest % d.size) * d.index_stride;
            rest /= d.size;
        }
        index
    }
}

/// How the threads split the outputs of a [`Job::scan_dense`] or [`Job::scan_padded`]
/// call: across units when there are enough of them, else across each unit's own range.
struct UnitSplit {
    /// Units (outputs) in the call.
    units: usize,
    /// Pieces wanted per call: [`ARGMAX_SPLIT_FACTOR`] × threads.
    factor: usize,
    /// A parallel call with fewer units than `factor`: each unit's range is split instead.
    few: bool,
    /// Tasks of units run in parallel (a parallel call with enough units).
    parallel_units: bool,
}

impl UnitSplit {
    /// The split of the units of `unit_dims`, run in parallel when `parallel`.
    fn new(unit_dims: &[Dim], parallel: bool) -> UnitSplit {
        let units: usize = unit_dims.iter().map(|d| d.size).product();
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        let few = parallel && units < factor;
        UnitSplit {
            units,
            factor,
            few,
            parallel_units: parallel && !few,
        }
    }
}

/// What every task of [`Job::scan_units`] shares: the units' dimensions, the region walked
/// inside each unit, and how a unit's outputs map to slots.
struct Units<'a> {
    /// Kept dimensions outside every reduced one.
    unit_dims: &'a [Dim],
    /// The region's dimensions but the run, with the kept ones numbering a unit's outputs
    /// `0..m` (row-major, memory order) as their slot strides.
    local: Vec<Dim>,
    /// The run dimension (innermost, reduced).
    run: Dim,
    /// Outputs per unit.
    m: usize,
    /// The output slot (relative to the unit's) of each of a unit's outputs.
    slots: Vec<usize>,
    /// Runs per unit.
    steps: usize,
    /// The region's runs when listed once (empty when walked per unit instead).
    listed: Vec<At>,
}

/// The runs of a unit: from the list, or walked.
enum Steps<'a> {
    Listed(std::slice::Iter<'a, At>),
    Walked(Walk<'a>),
}

impl Iterator for Steps<'_> {
    type Item = At;

    #[inline(always)]
    fn next(&mut self) -> Option<At> {
        match self {
            Steps::Listed(list) => list.next().copied(),
            Steps::Walked(walk) => walk.next(),
        }
    }
}

impl Job<'_> {
    /// Reduces every output of a [`Shape::Scan`](super::plan::Shape::Scan) plan.
    pub(super) fn scan<T: Lanes, O: FromIndex, const LAST: bool>(&self, outputs: &Outputs<O>) {
        let order = &self.plan.order;
        let first_reduced = order
            .iter()
            .position(Dim::is_reduced)
            .expect("a reduced dimension");
        let (unit_dims, region) = order.split_at(first_reduced);
        let units: usize = unit_dims.iter().map(|d| d.size).product();
        let outputs_per_unit: usize = region
            .iter()
            .filter(|d| !d.is_reduced())
            .map(|d| d.size)
            .product();
        let q = self.plan.reduced_len();
        let work = units.saturating_mul(outputs_per_unit).saturating_mul(q);
        let parallel = work >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        if !self.plan.monotonic && self.isa.avx2() {
            if let Some(dense) = Dense::new(region) {
                self.scan_dense::<T, O, LAST>(outputs, unit_dims, &dense, parallel);
                return;
            }
        }
        if self.plan.monotonic {
            if let Some(padded) = Padded::new(region, T::SIZE, self.isa) {
                self.scan_padded::<T, O, LAST>(outputs, unit_dims, &padded, parallel);
                return;
            }
        }
        if parallel && units < ARGMAX_SPLIT_FACTOR * threads() {
            self.scan_split::<T, O, LAST>(outputs);
        } else if let [run] = region {
            self.scan_runs::<T, O, LAST>(outputs, unit_dims, *run, parallel);
        } else if region.iter().all(Dim::is_reduced) {
            self.scan_outputs::<T, O, LAST>(outputs, unit_dims, parallel);
        } else {
            self.scan_units::<T, O, LAST>(outputs, unit_dims, region, parallel);
        }
    }

    /// Every output's elements are one run (the region is the run alone): tasks of
    /// consecutive outputs, each run reduced at once ([`Prims::run_argmax`] when it is
    /// contiguous, however short, or under AVX2 alone [`window_runs`] for runs of at most 64
    /// bytes; [`run_best`] when it is element-strided) and its result written, with no state
    /// kept between runs.
    fn scan_runs<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        unit_dims: &[Dim],
        run: Dim,
        parallel: bool,
    ) {
        let units: usize = unit_dims.iter().map(|d| d.size).product();
        let per_task = items_per_task(units, run.size);
        let tasks = units.div_ceil(per_task);
        #[cfg(target_arch = "x86_64")]
        let transposed = Transposed::new::<T>(unit_dims, run, self.isa);
        let task = |t: usize| {
            let first = t * per_task;
            let count = per_task.min(units - first);
            #[cfg(target_arch = "x86_64")]
            if self.isa == Isa::Avx512 {
                // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW.
                unsafe {
                    if let Some(transposed) = &transposed {
                        transposed.task::<T, O, LAST, Avx512Prims>(self, run, first, count, outputs)
                    } else {
                        runs_task_avx512::<T, O, LAST>(self, unit_dims, run, first, count, outputs)
                    }
                };
                return;
            }
            #[cfg(target_arch = "x86_64")]
            if self.isa.avx2() {
                // SAFETY: `Isa::avx2()` only holds when the CPU has AVX2.
                unsafe {
                    runs_task_avx2::<T, O, LAST>(self, unit_dims, run, first, count, outputs)
                };
                return;
            }
            self.runs_task::<T, O, LAST, PortablePrims>(unit_dims, run, first, count, outputs);
        };
        for_each_task(tasks, parallel, task);
    }

    /// Outputs `first..first + count` of [`Job::scan_runs`], in memory order.
    ///
    /// Written once over the inner loops `P` and inlined into a function per instruction set.
    #[inline(always)]
    fn runs_task<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        unit_dims: &[Dim],
        run: Dim,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        let bytes = run.size * T::SIZE;
        if run.stride == 1 && bytes > 64 {
            // The same loop as below, compiled apart for runs longer than the short-run
            // kernels take: one copy for each, so that neither slows the other (long runs
            // took a fifth longer in a loop shared with the short-run kernels).
            for unit in Walk::new(unit_dims, first, count) {
                // SAFETY: `P` is the instruction set of the function this is inlined into.
                let p =
                    unsafe { P::run_argmax::<T, LAST>(self.data, unit.offset * T::SIZE, bytes) };
                // SAFETY: the task's outputs are its own.
                unsafe { outputs.set(unit.slot, self.finish::<LAST>(p * run.index_stride)) };
            }
            return;
        }
        if let Some(strided) = StridedRuns::new::<T>(self.isa, run.stride) {
            // Element-strided runs: the phase tables built once for the task's runs.
            for unit in Walk::new(unit_dims, first, count) {
                // A run the shared sweep refused goes straight to the exact loop: through
                // `run_position` it would be swept again first.
                let best = strided
                    .best::<T, LAST>(self.data, unit.offset, run.size)
                    .or_else(|| {
                        exact_run_best::<T, LAST>(self.data, unit.offset, run.size, run.stride)
                    });
                let p = best.map_or(0, |(_, p)| p);
                // SAFETY: the task's outputs are its own.
                unsafe { outputs.set(unit.slot, self.finish::<LAST>(p * run.index_stride)) };
            }
            return;
        }
        for unit in Walk::new(unit_dims, first, count) {
            let p = self.run_position::<T, LAST, P>(unit.offset, run);
            // SAFETY: the task's outputs are its own.
            unsafe { outputs.set(unit.slot, self.finish::<LAST>(p * run.index_stride)) };
        }
    }

    /// The position (0 to `run.size - 1`) of the best element of the run that starts at
    /// element `offset`.
    ///
    /// Inlined into a function per instruction set `P`.
    #[inline(always)]
    pub(super) fn run_position<T: Lanes, const LAST: bool, P: Prims>(
        &self,
        offset: usize,
        run: Dim,
    ) -> usize {
        if run.stride == 1 {
            // SAFETY: `P` is the instruction set of the function this is inlined into.
            unsafe { P::run_argmax::<T, LAST>(self.data, offset * T::SIZE, run.size * T::SIZE) }
        } else {
            run_best::<T, LAST>(self.isa, self.data, offset, run.size, run.stride)
                .map_or(0, |(_, p)| p)
        }
    }

    /// Each output's elements fill one contiguous range in an order other than their index
    /// order ([`Dense`]): per output, the maximum of the range at once, then the index of each
    /// element holding it, the lowest (or, with `LAST`, the highest) kept. An output whose
    /// maximum is held by more than [`DENSE_MAX_TIES`] elements is reduced run by run instead.
    /// Outputs are split across tasks, or, with few of them, each one's range.
    fn scan_dense<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        unit_dims: &[Dim],
        dense: &Dense,
        parallel: bool,
    ) {
        let split = UnitSplit::new(unit_dims, parallel);
        let n = dense.len;
        let piece = TASK_ELEMENTS.max(n.div_ceil(split.factor));
        let reduce = |at: At| -> usize {
            let gave_up = AtomicBool::new(false);
            let parts = map_ranges(n, piece, split.few, |lo, hi| {
                self.dense_best::<T, LAST>(dense, at.offset, lo, hi, &gave_up)
            });
            let mut best = None;
            for part in parts {
                let Some(candidate) = part else {
                    // Too many ties: the maximum, then its first holder in index order.
                    if let Some(index) = self.dense_tied::<T, LAST>(dense, at.offset) {
                        return index;
                    }
                    let q = self.plan.reduced_len();
                    return self
                        .reduce_output::<T, LAST>(at, 0, q, &mut Vec::new())
                        .index;
                };
                combine::<_, LAST>(&mut best, candidate);
            }
            best.expect("a dense output holds elements").1
        };
        self.write_units::<O, LAST>(outputs, unit_dims, &split, n, reduce);
    }

    /// Each output's elements are a [`Padded`] range: outputs split across tasks, or, with few
    /// of them, each one's runs.
    fn scan_padded<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        unit_dims: &[Dim],
        padded: &Padded,
        parallel: bool,
    ) {
        let split = UnitSplit::new(unit_dims, parallel);
        let rows = padded.rows;
        let reduce = |at: At| -> usize {
            let piece = (TASK_ELEMENTS / padded.pitch())
                .max(rows.div_ceil(split.factor))
                .max(1);
            let parts = map_ranges(rows, piece, split.few, |lo, hi| {
                padded.best::<T, LAST>(self.isa, self.data, at.offset, lo, hi)
            });
            let mut best = None;
            for part in parts {
                combine::<_, LAST>(&mut best, part);
            }
            best.expect("a padded output holds elements").1
        };
        let span = rows * padded.pitch();
        self.write_units::<O, LAST>(outputs, unit_dims, &split, span, reduce);
    }

    /// Writes `reduce(unit)` (an index before [`Job::finish`]) for every unit of `unit_dims`,
    /// each reading about `unit_elements` input elements: in tasks of consecutive units of
    /// about [`TASK_ELEMENTS`], run in parallel unless `split` leaves the threads to each
    /// unit's own range (then one after another).
    fn write_units<O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        unit_dims: &[Dim],
        split: &UnitSplit,
        unit_elements: usize,
        reduce: impl Fn(At) -> usize + Sync,
    ) {
        let units = split.units;
        let per_task =
            (TASK_ELEMENTS / unit_elements.max(1)).clamp(1, units.div_ceil(split.factor).max(1));
        let tasks = units.div_ceil(per_task);
        let task = |t: usize| {
            let first = t * per_task;
            for at in Walk::new(unit_dims, first, per_task.min(units - first)) {
                // SAFETY: the task's outputs are its own.
                unsafe { outputs.set(at.slot, self.finish::<LAST>(reduce(at))) };
            }
        };
        for_each_task(tasks, split.parallel_units, task);
    }

    /// The greatest key at offsets `lo..hi` (not empty) of the dense range at `base`, and the
    /// lowest (or, with `LAST`, the highest) index among the elements holding it; None when
    /// more than [`DENSE_MAX_TIES`] hold it. One pass over memory: a block at a time (in the
    /// L1 cache), its maximum first, and the indices of its holders only where it reaches the
    /// best so far. Finding the maximum of the whole range first and then its holders read
    /// the range twice: a permuted INT64 [10, 13, 11, 7595] over every axis (87 MB) took
    /// twice the time of one read.
    ///
    /// `gave_up` is shared by the pieces of one output: once one of them has passed the ties
    /// allowed, the others stop too, as the output is then reduced by [`Self::dense_tied`]
    /// anyway. Each going on to its own limit read most of a permuted UINT8
    /// `[2, 6, 619, 1333]` a holder at a time.
    fn dense_best<T: Lanes, const LAST: bool>(
        &self,
        dense: &Dense,
        base: usize,
        lo: usize,
        hi: usize,
        gave_up: &AtomicBool,
    ) -> Option<(T::Key, usize)> {
        let block = (DENSE_BLOCK_BYTES / T::SIZE).max(1);
        let mut best: Option<(T::Key, usize)> = None;
        let mut ties = 0;
        let mut from = lo;
        while from < hi {
            if gave_up.load(Ordering::Relaxed) {
                return None;
            }
            let to = (from + block).min(hi);
            let piece = Piece {
                start: base + from,
                len: to - from,
                index: 0,
            };
            let max = block_max::<T>(self.isa, self.data, &[piece]);
            if best.is_none_or(|(key, _)| max >= key) {
                if best.is_none_or(|(key, _)| max > key) {
                    // A new maximum: only its own holders count as ties.
                    ties = 0;
                }
                let Some(found) =
                    self.dense_holders::<T, LAST>(dense, base, from, to, max, &mut ties)
                else {
                    gave_up.store(true, Ordering::Relaxed);
                    return None;
                };
                combine::<_, LAST>(&mut best, (max, found));
            }
            from = to;
        }
        best
    }

    /// The index [`Self::dense_best`] gives up on when more than [`DENSE_MAX_TIES`] elements
    /// hold the maximum: the range's maximum (one more pass), then the range walked
    /// in index order from its first element (or, with `LAST`, back from its last, a chunk at a
    /// time) until an element holds it. With that many holders the walk stops early: a permuted
    /// UINT8 [1333, 619, 6, 2] over every axis, its 255 held about 39 000 times, took 23 ms
    /// run by run (four times ONNX Runtime). None if no element holds the maximum found
    /// (which cannot happen; the caller then reduces run by run).
    fn dense_tied<T: Lanes, const LAST: bool>(&self, dense: &Dense, base: usize) -> Option<usize> {
        assert!(dense.len > 0, "a dense output holds elements");
        let whole = Piece {
            start: base,
            len: dense.len,
            index: 0,
        };
        let max = block_max::<T>(self.isa, self.data, &[whole]);
        let mut in_index_order = dense.dims.clone();
        in_index_order.sort_by_key(|d| std::cmp::Reverse(d.index_stride));
        let chunks = dense.len.div_ceil(DENSE_WALK_CHUNK);
        for c in 0..chunks {
            let c = if LAST { chunks - 1 - c } else { c };
            let lo = c * DENSE_WALK_CHUNK;
            let len = DENSE_WALK_CHUNK.min(dense.len - lo);
            let mut found = None;
            for at in Walk::new(&in_index_order, lo, len) {
                if T::read(&self.data[(base + at.offset) * T::SIZE..]).key() == max {
                    found = Some(at.index);
                    if !LAST {
                        break;
                    }
                }
            }
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The lowest (or, with `LAST`, the highest) index among the elements of key `key` at
    /// offsets `lo..hi` of the dense range at `base`, each counted in `ties`; `Some(usize::MAX)`
    /// (or `Some(0)`) when none holds it, None when `ties` passes [`DENSE_MAX_TIES`].
    fn dense_holders<T: Lanes, const LAST: bool>(
        &self,
        dense: &Dense,
        base: usize,
        lo: usize,
        hi: usize,
        key: T::Key,
        ties: &mut usize,
    ) -> Option<usize> {
        let bytes = &self.data[(base + lo) * T::SIZE..(base + hi) * T::SIZE];
        let run = dense.run_len();
        let mut best = if LAST { 0 } else { usize::MAX };
        // Unsearched offsets `from..to` of `bytes`, in elements. Along a run the index grows
        // with the offset, so once a run has a holder, only the first (or, with `LAST`, the
        // last) of them can win: the search goes on from the next run (or back from the
        // previous one).
        let (mut from, mut to) = (0, hi - lo);
        while from < to {
            let unsearched = &bytes[from * T::SIZE..to * T::SIZE];
            let Some(p) = locate::<T, LAST>(self.isa, unsearched, key) else {
                break;
            };
            let at = lo + from + p;
            let index = dense.index_at(at);
            *ties += 1;
            if *ties > DENSE_MAX_TIES {
                return None;
            }
            if LAST {
                best = best.max(index);
                to = (at - at % run).saturating_sub(lo);
            } else {
                best = best.min(index);
                from = at - at % run + run - lo;
            }
        }
        Some(best)
    }

    /// Each output's elements are several runs and nothing else (the region holds no kept
    /// dimension, so a unit is one output): tasks of consecutive outputs, each reduced whole
    /// by [`Self::reduce_output`], which gathers short runs into groups of about a block whose
    /// maximum is taken at once (a run's maximum taken alone costs a horizontal reduction).
    fn scan_outputs<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        unit_dims: &[Dim],
        parallel: bool,
    ) {
        let units: usize = unit_dims.iter().map(|d| d.size).product();
        let q = self.plan.reduced_len();
        let per_task = items_per_task(units, q);
        let tasks = units.div_ceil(per_task);
        let task = |t: usize| {
            let first = t * per_task;
            let mut pieces = Vec::new();
            for at in Walk::new(unit_dims, first, per_task.min(units - first)) {
                let best = self.reduce_output::<T, LAST>(at, 0, q, &mut pieces);
                // SAFETY: the task's outputs are its own.
                unsafe { outputs.set(at.slot, self.finish::<LAST>(best.index)) };
            }
        };
        for_each_task(tasks, parallel, task);
    }

    /// Tasks of whole units, each walking its region in memory order.
    fn scan_units<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        unit_dims: &[Dim],
        region: &[Dim],
        parallel: bool,
    ) {
        let units: usize = unit_dims.iter().map(|d| d.size).product();
        let (run, between) = region.split_last().expect("a run dimension");
        let kept: Vec<Dim> = between
            .iter()
            .filter(|d| !d.is_reduced())
            .copied()
            .collect();
        let m: usize = kept.iter().map(|d| d.size).product();
        let mut local = between.to_vec();
        let mut packed = 1;
        for d in local.iter_mut().rev() {
            if !d.is_reduced() {
                d.slot_stride = packed;
                packed *= d.size;
            }
        }
        let steps: usize = between.iter().map(|d| d.size).product();
        let listed = if steps <= LISTED_STEPS {
            Walk::new(&local, 0, steps).collect()
        } else {
            Vec::new()
        };
        let ctx = Units {
            unit_dims,
            slots: Walk::new(&kept, 0, m).map(|a| a.slot).collect(),
            local,
            run: *run,
            m,
            steps,
            listed,
        };
        let per_unit = m.saturating_mul(self.plan.reduced_len()).max(1);
        let factor = ARGMAX_SPLIT_FACTOR * threads();
        let per_task = (TASK_ELEMENTS / per_unit)
            .min(TASK_OUTPUTS / m.max(1))
            .clamp(1, units.div_ceil(factor).max(1));
        let tasks = units.div_ceil(per_task);
        let task = |t: usize| {
            let first = t * per_task;
            let count = per_task.min(units - first);
            #[cfg(target_arch = "x86_64")]
            if self.isa.avx2() {
                // SAFETY: `Isa::avx2()` only holds when the CPU has AVX2.
                unsafe { scan_task_avx2::<T, O, LAST>(self, &ctx, first, count, outputs) };
                return;
            }
            self.scan_task::<T, O, LAST, PortablePrims>(&ctx, first, count, outputs);
        };
        for_each_task(tasks, parallel, task);
    }

    /// Units `first..first + count`: their runs in memory order, each cut into pieces of at
    /// most [`SCAN_BLOCK`] elements (or read element by element when short or strided), each
    /// piece searched for its maximum's position only when that can change its output.
    ///
    /// Written once over the inner loops `P` and inlined into a function per instruction set.
    #[inline(always)]
    fn scan_task<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        ctx: &Units<'_>,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        let Units { run, m, .. } = *ctx;
        let (len, step) = (run.size, run.index_stride);
        let vectors = run.stride == 1 && len * T::SIZE >= ARGMAX_MIN_RUN_BYTES;
        let monotonic = self.plan.monotonic;
        let data = self.data;
        let mut state = State::<T::Key>::new(count * m);
        let mut unit_slots = Vec::with_capacity(count);
        for (u, unit) in Walk::new(ctx.unit_dims, first, count).enumerate() {
            unit_slots.push(unit.slot);
            let steps = if ctx.listed.is_empty() {
                Steps::Walked(Walk::new(&ctx.local, 0, ctx.steps))
            } else {
                Steps::Listed(ctx.listed.iter())
            };
            for at in steps {
                let output = u * m + at.slot;
                let start = unit.offset + at.offset;
                if !vectors {
                    if let Some((key, j)) =
                        run_best::<T, LAST>(self.isa, data, start, len, run.stride)
                    {
                        state.offer::<LAST>(output, key, at.index + j * step);
                    }
                    continue;
                }
                let mut j = 0;
                while j < len {
                    let n = (len - j).min(SCAN_BLOCK);
                    let piece = Piece {
                        start: start + j,
                        len: n,
                        index: at.index + j * step,
                    };
                    // SAFETY: `P` is the instruction set of the function this is inlined into.
                    let max = unsafe { P::piece_max::<T>(data, piece) };
                    if state.may_take::<LAST>(output, max, monotonic) {
                        let bytes = &data[piece.start * T::SIZE..(piece.start + n) * T::SIZE];
                        // SAFETY: as above.
                        if let Some(p) = unsafe { P::locate::<T, LAST>(bytes, max) } {
                            state.offer::<LAST>(output, max, piece.index + p * step);
                        }
                    }
                    j += n;
                }
            }
        }
        for (u, &unit_slot) in unit_slots.iter().enumerate() {
            for (i, &slot) in ctx.slots.iter().enumerate() {
                let index = state.index[u * m + i];
                // SAFETY: the task's units are its own, and map to distinct slots.
                unsafe { outputs.set(unit_slot + slot, self.finish::<LAST>(index)) };
            }
        }
    }

    /// Few units: each output's reduction split across threads, in order of the outputs.
    fn scan_split<T: Lanes, O: FromIndex, const LAST: bool>(&self, outputs: &Outputs<O>) {
        let plan = self.plan;
        let q = plan.reduced_len();
        let piece = TASK_ELEMENTS.max(q.div_ceil(ARGMAX_SPLIT_FACTOR * threads()));
        for at in Walk::new(&plan.outer, 0, plan.outputs()) {
            let parts = map_ranges(q, piece, true, |q0, q1| {
                self.reduce_output::<T, LAST>(at, q0, q1, &mut Vec::new())
            });
            let mut best = Best::none();
            for part in parts {
                best.offer::<LAST>(part);
            }
            // SAFETY: this thread alone writes outputs here.
            unsafe { outputs.set(at.slot, self.finish::<LAST>(best.index)) };
        }
    }

    /// The best element among positions `q0..q1` of the reduced walk (memory order) of the
    /// output at `output`: whole runs of up to [`ARGMAX_SHORT_RUN_BYTES`] inside another
    /// reduced dimension through [`Self::reduce_short_runs`] (with vectors), the rest (and the
    /// parts of runs at the ends of the range) through [`Self::reduce_pieces`]; `pieces` is
    /// scratch.
    fn reduce_output<T: Lanes, const LAST: bool>(
        &self,
        output: At,
        q0: usize,
        q1: usize,
        pieces: &mut Vec<Piece>,
    ) -> Best<T::Key> {
        let (run, outer) = self.plan.reduced.split_last().expect("a reduced dimension");
        let len = run.size;
        let short = run.stride == 1 && len * T::SIZE <= ARGMAX_SHORT_RUN_BYTES && !outer.is_empty();
        let (r0, r1) = (q0.div_ceil(len), q1 / len);
        if !(short && self.isa.avx2() && r0 < r1) {
            return self.reduce_pieces::<T, LAST>(output, q0, q1, pieces);
        }
        let mut best = self.reduce_pieces::<T, LAST>(output, q0, r0 * len, pieces);
        best.offer::<LAST>(self.reduce_short_runs::<T, LAST>(output, r0, r1, pieces));
        best.offer::<LAST>(self.reduce_pieces::<T, LAST>(output, r1 * len, q1, pieces));
        best
    }

    /// Runs `r0..r1` (whole runs of at most [`ARGMAX_SHORT_RUN_BYTES`], inside at least one
    /// other reduced dimension) of the output at `output`: a row of the innermost outer
    /// dimension at a time, in groups of about a block whose maximum [`short_runs_max`] takes
    /// with no list of pieces; a group is listed as pieces (and searched) only when its
    /// maximum can change the result. Listing every short run cost three times the reduction
    /// itself.
    fn reduce_short_runs<T: Lanes, const LAST: bool>(
        &self,
        output: At,
        r0: usize,
        r1: usize,
        pieces: &mut Vec<Piece>,
    ) -> Best<T::Key> {
        let (run, outer) = self.plan.reduced.split_last().expect("a reduced dimension");
        let (&inner, rows) = outer.split_last().expect("an outer reduced dimension");
        let group = (SCAN_BLOCK / run.size).max(1);
        let monotonic = self.plan.monotonic;
        let mut best = Best::none();
        let first_row = r0 / inner.size;
        let row_count = (r1 - 1) / inner.size + 1 - first_row;
        for (k, at) in Walk::new(rows, first_row, row_count).enumerate() {
            let row = first_row + k;
            let lo = r0.max(row * inner.size) - row * inner.size;
            let hi = r1.min((row + 1) * inner.size) - row * inner.size;
            let mut i = lo;
            while i < hi {
                let count = group.min(hi - i);
                let start = output.offset + at.offset + i * inner.stride;
                let index = at.index + i * inner.index_stride;
                let can_change = |max: T::Key| best.may_change::<LAST>(max, monotonic);
                #[cfg(target_arch = "x86_64")]
                if self.isa == Isa::Avx512 && monotonic {
                    // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW.
                    let found = unsafe {
                        short_runs_argmax_avx512::<T, LAST>(
                            self.data,
                            start,
                            inner.stride,
                            count,
                            run.size,
                            can_change,
                        )
                    };
                    match found {
                        ShortRunsBest::Passed => {
                            i += count;
                            continue;
                        }
                        ShortRunsBest::At {
                            key,
                            run: r,
                            element,
                        } => {
                            let at_index =
                                index + r * inner.index_stride + element * run.index_stride;
                            best.offer_key::<LAST>(key, at_index);
                            i += count;
                            continue;
                        }
                        ShortRunsBest::Fallback => {}
                    }
                }
                let max =
                    short_runs_max::<T>(self.isa, self.data, start, inner.stride, count, run.size);
                if can_change(max) {
                    pieces.clear();
                    pieces.extend((0..count).map(|c| Piece {
                        start: start + c * inner.stride,
                        len: run.size,
                        index: index + c * inner.index_stride,
                    }));
                    self.locate_in_group::<T, LAST>(pieces, run.index_stride, max, &mut best);
                }
                i += count;
            }
        }
        best
    }

    /// [`Self::reduce_output`] with every run listed as pieces: contiguous runs cut into
    /// pieces of at most a block and short ones gathered, each group reduced at once; runs
    /// that are element-strided (or short, without vectors) read element by element.
    fn reduce_pieces<T: Lanes, const LAST: bool>(
        &self,
        output: At,
        q0: usize,
        q1: usize,
        pieces: &mut Vec<Piece>,
    ) -> Best<T::Key> {
        let (run, outer) = self.plan.reduced.split_last().expect("a reduced dimension");
        let (len, step) = (run.size, run.index_stride);
        let vectors = run.stride == 1 && len * T::SIZE >= ARGMAX_MIN_RUN_BYTES;
        let mut best = Best::none();
        if q0 >= q1 {
            return best;
        }
        let first_run = q0 / len;
        let runs = q1.div_ceil(len) - first_run;
        pieces.clear();
        let mut grouped = 0;
        for (r, at) in Walk::new(outer, first_run, runs).enumerate() {
            let run_start = (first_run + r) * len;
            let j0 = q0.saturating_sub(run_start);
            let n = (q1 - run_start).min(len) - j0;
            let start = output.offset + at.offset + j0 * run.stride;
            let index = at.index + j0 * step;
            if !vectors {
                if let Some((key, j)) =
                    run_best::<T, LAST>(self.isa, self.data, start, n, run.stride)
                {
                    best.offer_key::<LAST>(key, index + j * step);
                }
                continue;
            }
            let mut j = 0;
            while j < n {
                let m = (n - j).min(SCAN_BLOCK);
                if grouped + m > SCAN_BLOCK && !pieces.is_empty() {
                    self.scan_group::<T, LAST>(pieces, step, &mut best);
                    pieces.clear();
                    grouped = 0;
                }
                pieces.push(Piece {
                    start: start + j,
                    len: m,
                    index: index + j * step,
                });
                grouped += m;
                j += m;
            }
        }
        if !pieces.is_empty() {
            self.scan_group::<T, LAST>(pieces, step, &mut best);
        }
        best
    }

    /// Folds a group of contiguous pieces (in walk order; indices `step` apart within each)
    /// into `best`: their maximum first, and its position only where it can change the result.
    fn scan_group<T: Lanes, const LAST: bool>(
        &self,
        pieces: &[Piece],
        step: usize,
        best: &mut Best<T::Key>,
    ) {
        let max = block_max::<T>(self.isa, self.data, pieces);
        self.locate_in_group::<T, LAST>(pieces, step, max, best);
    }

    /// [`Self::scan_group`] once the group's maximum `max` is known: the pieces holding it
    /// are searched when it can change the result.
    fn locate_in_group<T: Lanes, const LAST: bool>(
        &self,
        pieces: &[Piece],
        step: usize,
        max: T::Key,
        best: &mut Best<T::Key>,
    ) {
        let monotonic = self.plan.monotonic;
        if !best.may_change::<LAST>(max, monotonic) {
            return;
        }
        let bytes = |p: &Piece| &self.data[p.start * T::SIZE..(p.start + p.len) * T::SIZE];
        let mut offer = |p: &Piece| match locate::<T, LAST>(self.isa, bytes(p), max) {
            Some(j) => {
                best.offer_key::<LAST>(max, p.index + j * step);
                true
            }
            None => false,
        };
        if !monotonic {
            // Indices do not grow along the walk: every piece's candidate counts.
            for p in pieces {
                offer(p);
            }
        } else if LAST {
            let _ = pieces.iter().rev().any(&mut offer);
        } else {
            let _ = pieces.iter().any(&mut offer);
        }
    }
}

/// [`Job::runs_task`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn runs_task_avx2<T: Lanes, O: FromIndex, const LAST: bool>(
    job: &Job<'_>,
    unit_dims: &[Dim],
    run: Dim,
    first: usize,
    count: usize,
    outputs: &Outputs<O>,
) {
    if window_runs::takes::<T>(run) {
        window_runs::runs_task_avx2::<T, O, LAST>(job, unit_dims, run, first, count, outputs);
        return;
    }
    job.runs_task::<T, O, LAST, Avx2Prims>(unit_dims, run, first, count, outputs);
}

/// [`Job::runs_task`] compiled for AVX-512.
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn runs_task_avx512<T: Lanes, O: FromIndex, const LAST: bool>(
    job: &Job<'_>,
    unit_dims: &[Dim],
    run: Dim,
    first: usize,
    count: usize,
    outputs: &Outputs<O>,
) {
    job.runs_task::<T, O, LAST, Avx512Prims>(unit_dims, run, first, count, outputs);
}

/// [`Job::scan_task`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_task_avx2<T: Lanes, O: FromIndex, const LAST: bool>(
    job: &Job<'_>,
    ctx: &Units<'_>,
    first: usize,
    count: usize,
    outputs: &Outputs<O>,
) {
    job.scan_task::<T, O, LAST, Avx2Prims>(ctx, first, count, outputs);
}

/// The best (key, position) of the `len` elements at `start`, `start + stride`, … of `data`
/// (element offsets): the first maximum, or the last with `LAST`. `None` when `len` is 0.
///
/// The short or element-strided runs the vector kernels do not take: the best so far stays in
/// registers and each element costs a load, its key and a compare (offering every element to
/// the task's state cost about four times as much on a strided row).
/// A long run a few elements apart is swept in vectors instead ([`strided_run_best`]).
#[inline(always)]
pub(super) fn run_best<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    start: usize,
    len: usize,
    stride: usize,
) -> Option<(T::Key, usize)> {
    if let Some(best) = strided_run_best::<T, LAST>(isa, data, start, len, stride) {
        return Some(best);
    }
    exact_run_best::<T, LAST>(data, start, len, stride)
}

/// [`run_best`] without the vector sweep: the best so far in registers, each element a load,
/// its key and a compare. For a run the sweep refused (too short, or a NaN met).
#[inline(always)]
pub(super) fn exact_run_best<T: Lanes, const LAST: bool>(
    data: &[u8],
    start: usize,
    len: usize,
    stride: usize,
) -> Option<(T::Key, usize)> {
    if len == 0 {
        return None;
    }
    let run = &data[start * T::SIZE..];
    // A zero stride (a broadcast run) reads the same element `len` times.
    let pitch = (stride * T::SIZE).max(T::SIZE);
    let mut elements = run.chunks(pitch).take(if stride == 0 { 1 } else { len });
    let mut best = T::read(elements.next()?).key();
    let mut at = 0;
    for (j, element) in elements.enumerate() {
        let key = T::read(element).key();
        if key > best || (LAST && key == best) {
            best = key;
            at = j + 1;
        }
    }
    if stride == 0 && LAST {
        at = len - 1;
    }
    Some((best, at))
}

#[cfg(test)]
mod tests {
    use super::run_best;
    use crate::simd::Isa;
    use half::f16;

    /// The reference: every element offered in turn, ties by position.
    fn naive<const LAST: bool>(values: &[f32], start: usize, len: usize, stride: usize) -> usize {
        let key = |j: usize| crate::element::OrderKey::key(values[start + j * stride]);
        (0..len).fold(0, |best, j| {
            if key(j) > key(best) || (LAST && key(j) == key(best)) {
                j
            } else {
                best
            }
        })
    }

    #[test]
    fn strided_runs_find_the_first_or_last_maximum() {
        let pool = [1.0, f32::NAN, -0.0, 0.0, 3.0, 3.0, -f32::INFINITY, 2.5];
        let values: Vec<f32> = (0..400)
            .map(|i| pool[(i * 7 + i / 5) % pool.len()])
            .collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        for stride in [0, 1, 2, 3, 7] {
            for len in [1, 2, 5, 31, 40] {
                for start in [0, 3] {
                    let first =
                        run_best::<f32, false>(Isa::Portable, &bytes, start, len, stride).unwrap();
                    let last =
                        run_best::<f32, true>(Isa::Portable, &bytes, start, len, stride).unwrap();
                    let expected_last = if stride == 0 {
                        len - 1
                    } else {
                        naive::<true>(&values, start, len, stride)
                    };
                    assert_eq!(
                        first.1,
                        naive::<false>(&values, start, len, stride),
                        "{stride} {len}"
                    );
                    assert_eq!(last.1, expected_last, "{stride} {len} {start}");
                }
            }
        }
        assert!(run_best::<f16, false>(Isa::Portable, &[0, 0], 0, 0, 1).is_none());
    }
}
