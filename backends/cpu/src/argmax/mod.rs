//! `DML_ARGMAX`: for each output element, the row-major flat index (over the reduced axes in
//! increasing axis order, whatever order `Axes` lists them in) of the maximum of its reduced
//! sub-tensor. INCREASING picks the first maximum, DECREASING the last; NaN is above every
//! number and -0.0 equals +0.0 (see [`crate::element::OrderKey`]).
//!
//! The input is walked in memory order ([`plan`]). When the innermost dimension is reduced,
//! each output scans runs of its elements a block at a time ([`kernels::block_max`], then
//! [`kernels::locate`] only where the block can change the result); when that run is all an
//! output reduces (one contiguous run per output, short or long), one call reduces it with
//! the block's maximum kept in a vector register ([`kernels::Prims::run_argmax`]) and no state
//! is kept between outputs; otherwise a tail of
//! neighbouring outputs is reduced side by side, one contiguous input row per reduced index
//! ([`kernels::fold_rows`]); short runs packed inside kept dimensions, with other reduced
//! dimensions outside them, are folded the same way lane by lane and each output's run lanes
//! combined ([`run_lanes`]). Both have explicit AVX2 kernels chosen at run time ([`Isa`]) and
//! portable ones; whole contiguous runs also have an AVX-512 one ([`avx512`]), and short runs
//! at a pitch of up to 32 bytes (16 for 1-byte elements), one per output, an AVX-512 one that
//! reduces a group of outputs at a time ([`transposed_runs`]), at a wider pitch by a knockout
//! tournament of their lanes ([`tournament`]). Work is split over outputs (or
//! tail blocks), or, when there are few, over the reduced range, combining partial results by
//! (key, index).

mod avx512;
mod collapsed_runs;
mod interleaved;
mod kernels;
mod lanes;
mod out_of_order;
mod packed_tail;
mod padded;
mod plan;
mod rows;
mod run_lanes;
mod scan;
#[cfg(target_arch = "x86_64")]
mod segment_tree;
mod strided_run;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod tournament;
#[cfg(target_arch = "x86_64")]
mod transposed_runs;
#[cfg(target_arch = "x86_64")]
mod window_items;
#[cfg(target_arch = "x86_64")]
mod window_runs;

use crate::element::FromIndex;
use crate::parallel::{threads, TASK_ELEMENTS};
use crate::simd::Isa;
use crate::strided::{internal, write_packed, Layout, MAX_DIMS};
use crate::thresholds::{
    ARGMAX_FOLD_LONE_RUN_BYTES, ARGMAX_SHORT_RUNS_BYTES, ARGMAX_SHORT_RUNS_GAP,
    ARGMAX_SPLIT_FACTOR, ARGMAX_SPLIT_MAX_WIDTH_PER_ROW, ARGMAX_SPLIT_MIN_ROWS,
    ARGMAX_STREAM_MIN_CALL_BYTES, STREAM_MIN_BYTES,
};
use half::f16;
use lanes::Lanes;
use opconform_backend::{ArgMaxDesc, AxisDirection, BackendError, DataType, Tensor};
use plan::{Plan, Shape};
use run_lanes::RunLanes;
use std::marker::PhantomData;

/// Runs `DML_ARGMAX` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &ArgMaxDesc,
    input: &Tensor,
    output: &mut Tensor,
) -> Result<(), BackendError> {
    run_with(desc, input, output, Isa::detect())
}

/// [`run`] with the kernels of `isa`.
fn run_with(
    desc: &ArgMaxDesc,
    input: &Tensor,
    output: &mut Tensor,
    isa: Isa,
) -> Result<(), BackendError> {
    let input_layout = Layout::new(&desc.input, input.data.len(), "InputTensor")?;
    let output_layout = Layout::new(&desc.output, output.data.len(), "OutputTensor")?;
    let rank = input_layout.sizes.len();
    let mut reduced = [false; MAX_DIMS];
    for &axis in &desc.axes {
        let axis = axis as usize;
        if axis >= rank {
            return Err(internal("ARGMAX axis out of range"));
        }
        reduced[axis] = true;
    }
    let sizes_match = output_layout.sizes.len() == rank
        && (0..rank)
            .all(|d| output_layout.sizes[d] == if reduced[d] { 1 } else { input_layout.sizes[d] });
    if !sizes_match || desc.axes.is_empty() {
        return Err(internal(
            "ARGMAX output sizes disagree with the input and axes",
        ));
    }
    if input_layout.count == 0 {
        return Err(internal("ARGMAX input has no elements"));
    }
    let reduced_count: u64 = (0..rank)
        .filter(|&d| reduced[d])
        .map(|d| input_layout.sizes[d] as u64)
        .product();
    if reduced_count > 1 << 32 {
        return Err(internal(
            "ARGMAX reduces more than 2^32 elements per output",
        ));
    }
    let plan = Plan::new(&input_layout, &reduced[..rank]);
    if plan.outputs() != output_layout.count {
        return Err(internal("ARGMAX plan disagrees with the output"));
    }
    let last = desc.axis_direction == AxisDirection::Decreasing;
    let job = Job {
        data: &input.data,
        plan: &plan,
        isa,
    };
    let (input_type, output_type) = (desc.input.data_type, desc.output.data_type);
    write_packed(&output_layout, &mut output.data, |out| {
        job.dispatch_input(input_type, output_type, last, out)
    })
}

/// One ArgMax over a checked input.
#[derive(Clone, Copy)]
struct Job<'a> {
    data: &'a [u8],
    plan: &'a Plan,
    isa: Isa,
}

impl Job<'_> {
    /// Runs the kernel monomorphised for the input's element type.
    fn dispatch_input(
        &self,
        input: DataType,
        output: DataType,
        last: bool,
        out: &mut [u8],
    ) -> Result<(), BackendError> {
        match input {
            DataType::Float64 => self.dispatch_output::<f64>(output, last, out),
            DataType::Float32 => self.dispatch_output::<f32>(output, last, out),
            DataType::Float16 => self.dispatch_output::<f16>(output, last, out),
            DataType::Int64 => self.dispatch_output::<i64>(output, last, out),
            DataType::Int32 => self.dispatch_output::<i32>(output, last, out),
            DataType::Int16 => self.dispatch_output::<i16>(output, last, out),
            DataType::Int8 => self.dispatch_output::<i8>(output, last, out),
            DataType::Uint64 => self.dispatch_output::<u64>(output, last, out),
            DataType::Uint32 => self.dispatch_output::<u32>(output, last, out),
            DataType::Uint16 => self.dispatch_output::<u16>(output, last, out),
            DataType::Uint8 => self.dispatch_output::<u8>(output, last, out),
        }
    }

    /// Runs the kernel monomorphised for the output's element type and the direction.
    fn dispatch_output<T: Lanes>(
        &self,
        output: DataType,
        last: bool,
        out: &mut [u8],
    ) -> Result<(), BackendError> {
        macro_rules! go {
            ($o:ty) => {
                if last {
                    self.argmax::<T, $o, true>(out)
                } else {
                    self.argmax::<T, $o, false>(out)
                }
            };
        }
        match output {
            DataType::Int64 => go!(i64),
            DataType::Int32 => go!(i32),
            DataType::Uint64 => go!(u64),
            DataType::Uint32 => go!(u32),
            other => return Err(internal(format!("{other} is not an ARGMAX output type"))),
        }
        Ok(())
    }

    /// Writes the packed ArgMax into `out` (one `O` per output).
    fn argmax<T: Lanes, O: FromIndex, const LAST: bool>(&self, out: &mut [u8]) {
        let outputs = Outputs::<O>::new(out);
        if self.plan.reduced.is_empty() {
            // Nothing left to reduce (sizes 1, or broadcast): every output is the first index,
            // or the last one of the dropped broadcast dimensions.
            let index = if LAST { self.plan.last_offset } else { 0 };
            // SAFETY: one thread writes every slot.
            unsafe { outputs.set_strided(0, 1, self.plan.outputs(), |_| index) };
            return;
        }
        // Reduced dimensions out of index order in memory: one group of them at a time.
        if let Some(split) = out_of_order::OutOfOrder::new::<T>(self.plan) {
            self.out_of_order::<T, O, LAST>(&outputs, &split);
            return;
        }
        // One contiguous run per output: the vector run kernels read a short one in a vector
        // or two, cheaper than folding its tail's span once per element of the run (a
        // `[n, 9]` FLOAT16 over its inner axis took about 1.8 against 2.9 ms, with AVX2),
        // unless the run is a few 1- or 2-byte elements: then a call per output costs more
        // than the fold (UINT8 `[n, 2]` packed 13.6 against 4.7 ms, FLOAT16 `[n, 3]` at a
        // pitch of 4 7.1 against 3.7 ms; FLOAT16 runs of 8 were a fifth slower folded), or
        // two or three 4- or 8-byte ones (AVX-512, one core: FLOAT32 `[2e6, 2]` 8.6 against
        // 4.2 ms, INT32 `[2e6, 3]` 7.5 against 5.2, INT64 `[1e6, 3]` 4.2 against 3.8; runs of
        // four FLOAT32 the same either way). Runs the AVX-512 permutes reduce a group at a time
        // ([`transposed_runs`]) are faster than the fold (one core: FLOAT32 `[2e6, 2]` 4.9 ->
        // 1.2 ms, INT64 `[1e6, 3]` 6.0 -> 1.6, FLOAT16 `[1e6, 4]` 2.7 -> 0.8, UINT8 `[2e6, 8]`
        // 6.2 -> 1.8).
        let lone_contiguous_runs = self.isa.avx2()
            && matches!(self.plan.reduced[..], [run] if run.stride == 1
                && !(T::SIZE <= 2 && run.size * T::SIZE <= ARGMAX_FOLD_LONE_RUN_BYTES)
                && !(T::SIZE >= 4 && run.size <= 3));
        #[cfg(target_arch = "x86_64")]
        let lone_contiguous_runs =
            lone_contiguous_runs || transposed_runs::Transposed::takes::<T>(self.plan, self.isa);
        let short_runs = if lone_contiguous_runs {
            None
        } else {
            self.plan
                .short_runs_as_rows(T::SIZE, ARGMAX_SHORT_RUNS_GAP, ARGMAX_SHORT_RUNS_BYTES)
        };
        if let Some(plan) = &short_runs {
            let job = Job { plan, ..*self };
            job.rows::<T, O, LAST>(&outputs);
            return;
        }
        if let Some(lanes) = RunLanes::new::<T>(self.plan) {
            self.run_lanes::<T, O, LAST>(&outputs, &lanes);
            return;
        }
        match self.plan.shape {
            Shape::Scan => self.scan::<T, O, LAST>(&outputs),
            Shape::Rows => self.rows::<T, O, LAST>(&outputs),
        }
    }

    /// The final index of a result.
    #[inline]
    fn finish<const LAST: bool>(&self, index: usize) -> usize {
        if LAST {
            index + self.plan.last_offset
        } else {
            index
        }
    }
}

/// Whether a parallel reduction (`parallel`) of `items` items, each `rows` reduced rows of
/// `width` elements (the outputs reduced side by side and any gaps between them), splits each
/// item's rows across the threads, one item after another, rather than sharing the items
/// out: only with fewer items than threads (some would have none), each long
/// ([`ARGMAX_SPLIT_MIN_ROWS`]) and not too wide for them ([`ARGMAX_SPLIT_MAX_WIDTH_PER_ROW`]).
/// With as many items as threads, each thread taking whole items won: INT64 `[2, 883, 9, 28,
/// 3]` padded by 4 over axis 1 (two items of 883 rows of 1764 elements) took 0.88 ms on two
/// threads split, 0.69 shared out (ONNX Runtime 0.84; one AMD EPYC Zen 4, libraries
/// alternated, caches flushed, medians of 11).
fn splits_items(parallel: bool, items: usize, rows: usize, width: usize) -> bool {
    parallel
        && items < threads()
        && rows >= ARGMAX_SPLIT_MIN_ROWS
        && width <= rows.saturating_mul(ARGMAX_SPLIT_MAX_WIDTH_PER_ROW)
}

/// Items per task when `items` items of about `elements_per_item` input elements each are
/// split into tasks: about [`TASK_ELEMENTS`] elements a task, and at least
/// [`ARGMAX_SPLIT_FACTOR`] tasks per thread while there are items for them.
fn items_per_task(items: usize, elements_per_item: usize) -> usize {
    let factor = ARGMAX_SPLIT_FACTOR * threads();
    (TASK_ELEMENTS / elements_per_item.max(1)).clamp(1, items.div_ceil(factor).max(1))
}

/// The best element met by a reduction: the greatest key, ties going to the lowest index
/// (INCREASING) or the highest (DECREASING, `LAST`); `found` is false before any element.
#[derive(Debug, Clone, Copy)]
struct Best<K> {
    key: K,
    index: usize,
    found: bool,
}

impl<K: Ord + Copy + Default> Best<K> {
    /// Nothing met yet.
    fn none() -> Best<K> {
        Best {
            key: K::default(),
            index: 0,
            found: false,
        }
    }

    /// Takes the element (`key`, `index`) if it is better, whatever order elements come in.
    #[inline(always)]
    fn offer_key<const LAST: bool>(&mut self, key: K, index: usize) {
        let replace = !self.found
            || key > self.key
            || (key == self.key
                && if LAST {
                    index > self.index
                } else {
                    index < self.index
                });
        if replace {
            *self = Best {
                key,
                index,
                found: true,
            };
        }
    }

    /// True when a group of elements whose greatest key is `max`, met after those already
    /// offered, can hold a better element: a greater key, or an equal one at a better index
    /// (with DECREASING, or when indices do not grow along the walk: not `monotonic`).
    #[inline(always)]
    fn may_change<const LAST: bool>(&self, max: K, monotonic: bool) -> bool {
        !self.found || max > self.key || (max == self.key && (LAST || !monotonic))
    }

    /// Takes `other`'s element if it is better.
    fn offer<const LAST: bool>(&mut self, other: Best<K>) {
        if other.found {
            self.offer_key::<LAST>(other.key, other.index);
        }
    }
}

/// The packed output, written by several threads at scattered slots.
struct Outputs<'a, O> {
    start: *mut u8,
    len: usize,
    /// Whether [`Outputs::store_scaled`] writes whole lines around the cache (a large output).
    stream: bool,
    _out: PhantomData<(&'a mut [u8], O)>,
}

// SAFETY: `Outputs` hands out writes to distinct slots only (the contract of `set`), so
// sharing it between threads shares no element.
unsafe impl<O> Sync for Outputs<'_, O> {}
// SAFETY: as above.
unsafe impl<O> Send for Outputs<'_, O> {}

impl<'a, O: FromIndex> Outputs<'a, O> {
    fn new(out: &'a mut [u8]) -> Outputs<'a, O> {
        Outputs {
            start: out.as_mut_ptr(),
            len: out.len(),
            stream: out.len() >= STREAM_MIN_BYTES,
            _out: PhantomData,
        }
    }

    /// Writes `index` as an `O` into slot `slot`.
    ///
    /// # Safety
    /// No other thread may write slot `slot` at the same time.
    ///
    /// # Panics
    /// If the slot is outside the output.
    #[inline]
    unsafe fn set(&self, slot: usize, index: usize) {
        assert!(
            (slot + 1) * O::SIZE <= self.len,
            "ArgMax output slot outside the output"
        );
        // SAFETY: in bounds (asserted); no concurrent write of these bytes (the contract).
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(self.start.add(slot * O::SIZE), O::SIZE) };
        O::from_index(index).write(bytes);
    }

    /// The address of slot `slot`, whose `n` slots from there on lie inside the output.
    ///
    /// # Panics
    /// If they do not.
    #[inline(always)]
    fn slots_at(&self, slot: usize, n: usize) -> *mut u8 {
        assert!(
            (slot + n) * O::SIZE <= self.len,
            "ArgMax output slot outside the output"
        );
        // SAFETY: in bounds (asserted).
        unsafe { self.start.add(slot * O::SIZE) }
    }

    /// Writes `r * scale + offset` as an `O` (4 or 8 bytes) into slot `slot + j` for the
    /// unsigned number `r` of `width` bytes (1, 2, 4 or 8, below 2^32) at `lanes[j * width..]`,
    /// for `j` in `0..n`, with AVX-512 vector loads and stores. Written one by one, the
    /// results of FLOAT16 `[1e6, 4]` over its last axis took about half of its time, and
    /// FLOAT16 `[531, 5, 21, 6, 9]` over axis 1 reread each lane of the fold's vectors alone.
    ///
    /// In an output of [`STREAM_MIN_BYTES`] or more, a call of at least
    /// [`ARGMAX_STREAM_MIN_CALL_BYTES`] writes its whole lines with non-temporal stores (the
    /// numbers up to the first line boundary stored first), which spares each line's read
    /// for ownership; the caller ends its task with [`crate::simd::stream_fence`] (a fence
    /// per call cost about 0.2 µs: ArgMax FLOAT32 `[3e6, 10]` over axis 1, stored sixteen
    /// outputs a call, went from 7.4 to 43 ms).
    ///
    /// # Safety
    /// AVX-512 F and BW (this is inlined into functions compiled for them); no other thread
    /// may write these slots at the same time.
    ///
    /// # Panics
    /// If `lanes` holds fewer than `n` numbers, or a slot is outside the output.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn store_scaled(
        &self,
        slot: usize,
        (lanes, width, n): (&[u8], usize, usize),
        scale: u32,
        offset: usize,
    ) {
        use std::arch::x86_64::*;
        assert!(
            n * width <= lanes.len(),
            "store_scaled: fewer lanes than outputs"
        );
        let dst = self.slots_at(slot, n);
        let src = lanes.as_ptr();
        // Numbers before the first whole line (all of them when not streaming).
        let stream = self.stream && n * O::SIZE >= ARGMAX_STREAM_MIN_CALL_BYTES;
        let head = if stream && (dst as usize).is_multiple_of(O::SIZE) {
            ((64 - dst as usize % 64) % 64 / O::SIZE).min(n)
        } else {
            n
        };
        // SAFETY: every load and store is masked to the `n` numbers and slots (in bounds:
        // asserted, and `slots_at`); AVX-512 F and BW (the caller's contract).
        unsafe {
            let (scale32, offset32) = (
                _mm512_set1_epi32(scale as i32),
                _mm512_set1_epi32(offset as i32),
            );
            let (scale64, offset64) = (
                _mm512_set1_epi64(i64::from(scale)),
                _mm512_set1_epi64(offset as i64),
            );
            let mut c = 0;
            while c < n {
                let count = if c < head { head - c } else { n - c }.min(16);
                // From the head on, each store starts a line.
                let whole_lines = c >= head;
                let mask = u16::MAX >> (16 - count);
                let at = src.add(c * width);
                // Sixteen numbers as 32-bit lanes: a plain load where `lanes` holds sixteen
                // from here (the numbers past `n` are not stored). A masked load waited for
                // the stores that had just written the lanes: ArgMax INT64 `[207, 7, 111, 3,
                // 6]` over axis 3, six numbers a call, 2.84 against 2.01 ms.
                let whole = (c + 16) * width <= lanes.len();
                let v = match width {
                    1 if whole => _mm512_cvtepu8_epi32(_mm_loadu_si128(at.cast())),
                    1 => _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, at.cast())),
                    2 if whole => _mm512_cvtepu16_epi32(_mm256_loadu_si256(at.cast())),
                    2 => _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, at.cast())),
                    4 if whole => _mm512_loadu_si512(at.cast()),
                    4 => _mm512_maskz_loadu_epi32(mask, at.cast()),
                    _ if whole => {
                        let low = _mm512_loadu_si512(at.cast());
                        let high = _mm512_loadu_si512(at.add(64).cast());
                        _mm512_inserti64x4::<1>(
                            _mm512_castsi256_si512(_mm512_cvtepi64_epi32(low)),
                            _mm512_cvtepi64_epi32(high),
                        )
                    }
                    _ => {
                        let low = _mm512_maskz_loadu_epi64(mask as u8, at.cast());
                        let high = _mm512_maskz_loadu_epi64((mask >> 8) as u8, at.add(64).cast());
                        _mm512_inserti64x4::<1>(
                            _mm512_castsi256_si512(_mm512_cvtepi64_epi32(low)),
                            _mm512_cvtepi64_epi32(high),
                        )
                    }
                };
                if O::SIZE == 8 {
                    // The numbers and `scale` fit 32 bits: the low halves' product is exact.
                    let halves = [_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v)];
                    for (h, half) in halves.into_iter().enumerate() {
                        let wide = _mm512_mul_epu32(_mm512_cvtepu32_epi64(half), scale64);
                        let out = _mm512_add_epi64(wide, offset64);
                        let half_mask = (mask >> (8 * h)) as u8;
                        let to = dst.add(8 * (c + 8 * h));
                        if whole_lines && half_mask == u8::MAX {
                            _mm512_stream_si512(to.cast(), out);
                        } else {
                            _mm512_mask_storeu_epi64(to.cast(), half_mask, out);
                        }
                    }
                } else {
                    debug_assert_eq!(O::SIZE, 4);
                    let out = _mm512_add_epi32(_mm512_mullo_epi32(v, scale32), offset32);
                    if whole_lines && mask == u16::MAX {
                        _mm512_stream_si512(dst.add(4 * c).cast(), out);
                    } else {
                        _mm512_mask_storeu_epi32(dst.add(4 * c).cast(), mask, out);
                    }
                }
                c += count;
            }
        }
    }

    /// [`Outputs::store_scaled`] compiled for AVX-512 F and BW, for callers that are not.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW; no other thread may write these slots at the same
    /// time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn store_scaled_avx512(
        &self,
        slot: usize,
        lanes: (&[u8], usize, usize),
        scale: u32,
        offset: usize,
    ) {
        // SAFETY: the caller's contract; AVX-512 F and BW are this function's.
        unsafe { self.store_scaled(slot, lanes, scale, offset) }
    }

    /// Writes `index(j)` as an `O` into slot `slot + j * stride`, for `j` in `0..n`, with one
    /// bounds check for them all.
    ///
    /// # Safety
    /// No other thread may write these slots at the same time.
    ///
    /// # Panics
    /// If a slot is outside the output.
    #[inline(always)]
    unsafe fn set_strided(
        &self,
        slot: usize,
        stride: usize,
        n: usize,
        index: impl Fn(usize) -> usize,
    ) {
        if n == 0 {
            return;
        }
        assert!(
            (slot + (n - 1) * stride + 1) * O::SIZE <= self.len,
            "ArgMax output slot outside the output"
        );
        for j in 0..n {
            // SAFETY: in bounds (asserted for the last, the others lie before it); no
            // concurrent write of these bytes (the contract).
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(
                    self.start.add((slot + j * stride) * O::SIZE),
                    O::SIZE,
                )
            };
            O::from_index(index(j)).write(bytes);
        }
    }
}
