//! AVX-512: ArgMax over short runs laid at a constant pitch, one run per output (`[R, L]` over
//! axis 1, packed or padded), a group of `64 / SIZE` outputs at a time (sixteen FLOAT32 rows,
//! thirty-two FLOAT16 ones, sixty-four UINT8 ones with VBMI's byte permutes).
//!
//! A group's rows fill `pitch` whole vectors. Step `k` builds the vector of every row's
//! element `k` from them with two-source permutes (one per pair of vectors, their lanes chosen
//! by a mask), then keeps, lane by lane, the best key so far and its position. Nothing is
//! reduced across lanes, and the permutes' indices and masks depend only on `k`, so they are
//! computed once per call ([`Steps`]). The group's results are widened, scaled and stored as
//! vectors when their slots are consecutive ([`Outputs::store_scaled`]). The per-output kernel
//! ([`Prims::run_argmax`]: a masked load, a reduction across the vector, a compare to find the
//! lane) took 3.9 ns an output on ArgMax FLOAT32 `[1760876, 4]` over axis 1 on one AMD EPYC
//! (Zen 4) core, behind ONNX Runtime; this kernel about 1.1 ns. Not taken: gathers (slower
//! still on that core: about 5 ns a 16-lane gather from L1 or L2, 14 ns from memory); pitches
//! over 32 bytes, or over 16 for 1-byte elements (the permutes per output grow with the square
//! of the pitch: FLOAT32 runs of 22, 0.49 → 1.32 ms; UINT8 runs of 20, 4.3 → 6.9 ms).
//!
//! Packed items of a few short rows (`[N, r, k]` over axis 1, `k` from two to `64 / SIZE`
//! elements) are such runs too, interleaved: output `(m, c)` of item `m` has its element `i` at
//! `m × r × k + i × k + c`, so a group is the `64 / SIZE / k` whole items that fit a vector's
//! lanes and the same permutes, with other indices, bring each step's elements to their lanes
//! ([`Transposed::for_packed_items`]). ArgMax UINT8 `[490, 193, 8, 2]` over axis 2 was folded
//! as a tail spanned over the reduced rows, each element read once per row; rows of six UINT8
//! elements (a group of sixty outputs, four lanes idle) took the packed tails at about 20 ns an
//! item.
//!
//! Runs at a wider pitch, up to [`ARGMAX_TOURNAMENT_MAX_RUN_BYTES`], are read whole instead
//! and a group of them reduced by a knockout tournament ([`super::tournament`]). Runs that
//! share a vector two to four at a time, in segments of eight lanes or more, are reduced in
//! their segments by a butterfly ([`super::segment_tree`]), whatever the pitch. The groups,
//! the fallback and the stores are this module's.
//!
//! A group holding a FLOAT32 or FLOAT64 NaN, which the compare domain does not order, is
//! reduced output by output instead, as is the tail of a task shorter than a group.

use super::avx512::blend_lanes512;
use super::avx512::Avx512Prims;
use super::kernels::Prims;
use super::lanes::Lanes;
use super::plan::{Dim, Plan, Walk};
use super::segment_tree::{self, SegmentTree};
use super::tournament::{Field, Tournament};
use super::{items_per_task, Job, Outputs};
use crate::element::FromIndex;
use crate::parallel::{for_each_task, threads, PARALLEL_MIN_ELEMENTS};
use crate::simd::{has_avx512_vbmi, Isa};
use crate::thresholds::{
    ARGMAX_TOURNAMENT_MAX_NAN_RUN_BYTES, ARGMAX_TOURNAMENT_MAX_RUN_BYTES,
    ARGMAX_TRANSPOSED_MAX_BYTE_PITCH, ARGMAX_TRANSPOSED_MAX_PITCH_BYTES,
};
use std::arch::x86_64::*;

/// The longest pitch, in elements, hence the most steps of a run.
const MAX_STEPS: usize = if ARGMAX_TRANSPOSED_MAX_BYTE_PITCH > ARGMAX_TRANSPOSED_MAX_PITCH_BYTES / 2
{
    ARGMAX_TRANSPOSED_MAX_BYTE_PITCH
} else {
    ARGMAX_TRANSPOSED_MAX_PITCH_BYTES / 2
};

/// The most pairs of vectors a group's rows fill (a vector per element of pitch).
const MAX_PAIRS: usize = MAX_STEPS.div_ceil(2);

/// A runs plan this kernel takes: runs `pitch` elements apart along the innermost kept
/// dimension, the kept dimensions outside it (if any) walked a segment of runs at a time.
pub(super) struct Transposed {
    /// Kept dimensions outside the runs' (outermost first).
    outer: Vec<Dim>,
    /// Runs along the innermost kept dimension.
    along: usize,
    /// Elements from one run's start to the next's (at least the run).
    pitch: usize,
    /// Output slots from one run's output to the next's.
    slot_stride: usize,
    /// Outputs whose runs interleave element by element (1 for plain runs; `k` for packed
    /// items of `k`-element rows, each item's outputs `pitch × k` elements long together).
    interleave: usize,
    /// How a group is reduced.
    kernel: Kernel,
}

/// How [`Transposed`] reduces a group of runs.
// One per call, on the stack: boxing the permutes' tables would allocate each call.
#[allow(clippy::large_enum_variant)]
enum Kernel {
    /// Each step's elements brought to their rows' lanes ([`Steps`], shared by every task).
    Permutes(Steps),
    /// Runs at a wider pitch, each read whole ([`Tournament`]).
    Tournament(Tournament),
    /// Runs of at most a vector, several to a vector, each in a segment of lanes
    /// ([`SegmentTree`]).
    Segments(SegmentTree),
}

/// A [`Kernel`] ready for a task's groups.
// One per task, on the stack.
#[allow(clippy::large_enum_variant)]
enum TaskKernel<'a> {
    Permutes(&'a Steps, GroupPositions),
    Tournament(Field),
    Segments(&'a SegmentTree, segment_tree::GroupPositions),
}

impl Transposed {
    /// The kernel for runs `run` of units `unit_dims` with `T` elements, when it applies: AVX-512,
    /// one unit dimension, contiguous runs of two elements or more at a pitch of at most
    /// [`ARGMAX_TRANSPOSED_MAX_PITCH_BYTES`], at least a group of them, elements of two bytes or
    /// more.
    pub(super) fn new<T: Lanes>(unit_dims: &[Dim], run: Dim, isa: Isa) -> Option<Transposed> {
        let [outer @ .., unit] = unit_dims else {
            return None;
        };
        if !Transposed::fits::<T>(unit, run, isa) {
            return None;
        }
        let kernel = if let Some(tree) = SegmentTree::new::<T>(run.size, unit.stride) {
            Kernel::Segments(tree)
        } else if unit.stride * T::SIZE <= Transposed::max_permute_pitch_bytes::<T>() {
            Kernel::Permutes(Steps::new(64 / T::SIZE, unit.stride, run.size, 1))
        } else {
            Kernel::Tournament(Tournament::new::<T>(run.size))
        };
        Some(Transposed {
            outer: outer.to_vec(),
            along: unit.size,
            pitch: unit.stride,
            slot_stride: unit.slot_stride,
            interleave: 1,
            kernel,
        })
    }

    /// The kernel for a rows plan of packed items of short rows, and its reduced dimension
    /// (the runs): AVX-512 (VBMI for 1-byte elements), one reduced dimension right inside the
    /// innermost kept dimension outside the tail (the items), rows of `k` elements (the tail,
    /// its outputs consecutive, `k` from 2 to `64 / SIZE`), items `pitch × k`
    /// elements apart with `pitch` at most [`ARGMAX_TRANSPOSED_MAX_PITCH_BYTES`] (16 bytes for
    /// 1-byte elements), their outputs consecutive, at least a group of them.
    pub(super) fn for_packed_items<T: Lanes>(plan: &Plan, isa: Isa) -> Option<(Transposed, Dim)> {
        let (tail, [run]) = (plan.tail?, &plan.reduced[..]) else {
            return None;
        };
        let (item, outer) = plan.outer.split_last()?;
        let (k, rows) = (tail.size, 64 / T::SIZE);
        let rows_fit = tail.stride == 1
            && tail.slot_stride == 1
            && k >= 2
            && k <= rows
            && run.stride == k
            && run.size >= 2;
        // Only with `rows_fit` (no division by a `k` under 2).
        let items_fit = rows_fit
            && item.slot_stride == k
            && item.stride % k == 0
            && item.stride >= run.size.saturating_mul(k)
            && (item.stride / k) * T::SIZE <= Transposed::max_permute_pitch_bytes::<T>()
            && item.size * k >= rows / k * k;
        let isa_fits = isa == Isa::Avx512 && (T::SIZE >= 2 || has_avx512_vbmi());
        if !(items_fit && isa_fits && plan.tail_gap.is_none()) {
            return None;
        }
        let pitch = item.stride / k;
        let transposed = Transposed {
            outer: outer.to_vec(),
            along: item.size * k,
            pitch,
            slot_stride: 1,
            interleave: k,
            kernel: Kernel::Permutes(Steps::new(rows, pitch, run.size, k)),
        };
        Some((transposed, *run))
    }

    /// Outputs a group reduces: `64 / SIZE`, or with interleaved items the most whole items
    /// that fit (sixty UINT8 outputs of items of six).
    fn group_outputs<T: Lanes>(&self) -> usize {
        (64 / T::SIZE) / self.interleave * self.interleave
    }

    /// Input offset of output `unit` along the innermost kept dimension from its segment's
    /// first (a multiple of `interleave`), in elements.
    #[inline(always)]
    fn unit_offset(&self, unit: usize) -> usize {
        let k = self.interleave;
        (unit / k) * self.pitch * k + unit % k
    }

    /// Whether the scan of `plan` will reduce its runs with this kernel (its memory order is
    /// kept dimensions, then the run), without building the kernel.
    pub(super) fn takes<T: Lanes>(plan: &Plan, isa: Isa) -> bool {
        matches!(&plan.order[..], [units @ .., unit, run] if run.is_reduced()
            && !unit.is_reduced() && !units.iter().any(Dim::is_reduced)
            && Transposed::fits::<T>(unit, *run, isa))
    }

    /// The conditions of [`Transposed::new`] for the innermost kept dimension.
    fn fits<T: Lanes>(unit: &Dim, run: Dim, isa: Isa) -> bool {
        isa == Isa::Avx512
            && (T::SIZE >= 2 || has_avx512_vbmi())
            && run.stride == 1
            && run.size >= 2
            && unit.size >= 64 / T::SIZE
            && unit.stride >= run.size
            && (unit.stride * T::SIZE <= Transposed::max_permute_pitch_bytes::<T>()
                || run.size * T::SIZE <= Transposed::max_tournament_run_bytes::<T>())
    }

    /// The longest run, in bytes, that [`Kernel::Tournament`] reduces.
    fn max_tournament_run_bytes<T: Lanes>() -> usize {
        if T::CAN_NAN {
            ARGMAX_TOURNAMENT_MAX_NAN_RUN_BYTES
        } else {
            ARGMAX_TOURNAMENT_MAX_RUN_BYTES
        }
    }

    /// The widest pitch, in bytes, whose runs [`Kernel::Permutes`] reduces.
    fn max_permute_pitch_bytes<T: Lanes>() -> usize {
        if T::SIZE == 1 {
            ARGMAX_TRANSPOSED_MAX_BYTE_PITCH
        } else {
            ARGMAX_TRANSPOSED_MAX_PITCH_BYTES
        }
    }

    /// Outputs `first..first + count` (units in order), a segment along the innermost kept
    /// dimension at a time, a group at a time.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F and BW, and VBMI for 1-byte elements
    /// ([`Transposed::new`] checks it).
    pub(super) unsafe fn task<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        job: &Job<'_>,
        run: Dim,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        // SAFETY: the caller's contract.
        unsafe {
            if T::SIZE == 1 {
                self.task_vbmi::<T, O, LAST, P>(job, run, first, count, outputs)
            } else {
                self.task_bw::<T, O, LAST, P>(job, run, first, count, outputs)
            }
        }
    }

    /// [`Transposed::task`] compiled for AVX-512 F and BW.
    ///
    /// # Safety
    /// The CPU must support them.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn task_bw<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        job: &Job<'_>,
        run: Dim,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        // SAFETY: the features are this function's.
        unsafe { self.task_body::<T, O, LAST, P>(job, run, first, count, outputs) }
    }

    /// [`Transposed::task`] compiled for AVX-512 F, BW and VBMI (byte permutes).
    ///
    /// # Safety
    /// The CPU must support them.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn task_vbmi<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        job: &Job<'_>,
        run: Dim,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        // SAFETY: the features are this function's.
        unsafe { self.task_body::<T, O, LAST, P>(job, run, first, count, outputs) }
    }

    /// The body of [`Transposed::task`], inlined into a function per instruction set.
    ///
    /// # Safety
    /// AVX-512 F and BW, and VBMI for 1-byte elements.
    #[inline(always)]
    unsafe fn task_body<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        job: &Job<'_>,
        run: Dim,
        first: usize,
        count: usize,
        outputs: &Outputs<O>,
    ) {
        let (kernel, group_bytes) = match &self.kernel {
            Kernel::Permutes(steps) => (
                TaskKernel::Permutes(steps, group_positions_kernel::<T, LAST>(steps.pairs)),
                64 * self.pitch,
            ),
            // SAFETY: AVX-512 F and BW (the caller's contract).
            Kernel::Tournament(t) => (
                TaskKernel::Tournament(unsafe { t.field::<T, LAST>() }),
                t.group_bytes::<T>(self.pitch),
            ),
            Kernel::Segments(tree) => (
                TaskKernel::Segments(tree, tree.kernel::<T, LAST>()),
                tree.group_bytes::<T>(),
            ),
        };
        let end = first + count;
        let mut unit = first;
        while unit < end {
            let along = unit % self.along;
            let count = (self.along - along).min(end - unit);
            let (offset, slot) = self.outer_start(unit / self.along);
            let segment = Segment {
                offset: offset + self.unit_offset(along),
                slot: slot + along * self.slot_stride,
                count,
            };
            // SAFETY: the caller's contract.
            unsafe {
                self.segment::<T, O, LAST, P>(job, run, (&kernel, group_bytes), segment, outputs)
            };
            unit += count;
        }
    }

    /// The input offset and output slot of the first run of segment `index` (the kept
    /// dimensions outside the innermost one, in row-major order).
    #[inline(always)]
    fn outer_start(&self, index: usize) -> (usize, usize) {
        let at = Walk::new(&self.outer, index, 1).next().unwrap_or_default();
        (at.offset, at.slot)
    }

    /// The runs of `segment`, a group at a time with `kernel`, whose groups read
    /// `group_bytes` from their first run's start; the rest one by one.
    ///
    /// # Safety
    /// AVX-512 F and BW, and VBMI for 1-byte elements.
    #[inline(always)]
    unsafe fn segment<T: Lanes, O: FromIndex, const LAST: bool, P: Prims>(
        &self,
        job: &Job<'_>,
        run: Dim,
        (kernel, group_bytes): (&TaskKernel<'_>, usize),
        segment: Segment,
        outputs: &Outputs<O>,
    ) {
        let per_group = self.group_outputs::<T>();
        let mut positions = [0u32; 64];
        let mut indices = [0usize; 64];
        // A result is `position * scale + offset`.
        let (scale, offset) = (run.index_stride, job.finish::<LAST>(0));
        let end = segment.count;
        let mut unit = 0;
        while unit < end {
            let start = (segment.offset + self.unit_offset(unit)) * T::SIZE;
            let slot = segment.slot + unit * self.slot_stride;
            let whole = unit + per_group <= end && start + group_bytes <= job.data.len();
            // SAFETY: the group's `group_bytes` bytes lie inside the input (checked); AVX-512
            // F and BW, and VBMI for 1-byte elements (the caller's contract).
            let found = whole
                && unsafe {
                    let group = job.data.as_ptr().add(start);
                    match kernel {
                        TaskKernel::Permutes(steps, kernel) => kernel(group, steps, &mut positions),
                        TaskKernel::Tournament(field) => field.group_positions::<T, LAST>(
                            group,
                            self.pitch * T::SIZE,
                            &mut positions,
                        ),
                        TaskKernel::Segments(tree, kernel) => kernel(group, tree, &mut positions),
                    }
                };
            let last = if whole { unit + per_group } else { end };
            if found && self.slot_stride == 1 && scale <= u32::MAX as usize {
                // SAFETY: the task's outputs are its own; AVX-512 F and BW.
                unsafe {
                    outputs.store_scaled(
                        slot,
                        (positions_bytes(&positions), 4, per_group),
                        scale as u32,
                        offset,
                    )
                };
                unit = last;
                continue;
            }
            // Computed in a loop, not in the closure below: a closure does not inherit the
            // target features of the function it is inlined into, so the per-output kernel's
            // intrinsics were called out of line there (ArgMax INT64 `[84, 2]`: 0.7 -> 2.4 µs).
            let n = last - unit;
            for (j, index) in indices[..n].iter_mut().enumerate() {
                let p = if found {
                    positions[j] as usize
                } else {
                    job.run_position::<T, LAST, P>(segment.offset + self.unit_offset(unit + j), run)
                };
                *index = job.finish::<LAST>(p * run.index_stride);
            }
            // SAFETY: the task's outputs are its own.
            unsafe { outputs.set_strided(slot, self.slot_stride, n, |j| indices[j]) };
            unit = last;
        }
    }
}

/// Consecutive runs along the innermost kept dimension.
#[derive(Clone, Copy)]
struct Segment {
    /// Input offset of the first run, in elements.
    offset: usize,
    /// Output slot of the first run.
    slot: usize,
    /// Runs.
    count: usize,
}

/// Per step `k` of a run: the permute indices that bring every row's element `k` to its
/// lane, and which lanes come from each pair of vectors.
struct Steps {
    /// Per step, the indices of a two-source permute (lanes of the element's width).
    indices: [[u8; 64]; MAX_STEPS],
    /// Per step and pair of vectors, the lanes (bits) taken from that pair.
    masks: [[u64; MAX_PAIRS]; MAX_STEPS],
    /// Steps (the run's elements).
    len: usize,
    /// Pairs of vectors the group's rows fill (the last pair may be one vector).
    pairs: usize,
    /// Vectors the group's rows fill.
    vectors: usize,
}

impl Steps {
    /// The steps of runs of `len` elements, `rows` rows (lanes) a group, `pitch` elements
    /// apart, or with `interleave` over 1 interleaved: row `j`'s element `k` at `(j /
    /// interleave) × pitch × interleave + k × interleave + j % interleave`, for the lanes of
    /// whole items (the rest take nothing).
    fn new(rows: usize, pitch: usize, len: usize, interleave: usize) -> Steps {
        let size = 64 / rows;
        let outputs = rows / interleave * interleave;
        let mut steps = Steps {
            indices: [[0; 64]; MAX_STEPS],
            masks: [[0; MAX_PAIRS]; MAX_STEPS],
            len,
            pairs: pitch.div_ceil(2),
            vectors: pitch,
        };
        for k in 0..len {
            for j in 0..outputs {
                let (item, column) = (j / interleave, j % interleave);
                let at = item * pitch * interleave + k * interleave + column;
                let index = (at % (2 * rows)) as u64;
                set_lane(&mut steps.indices[k], j, size, index);
                steps.masks[k][at / (2 * rows)] |= 1 << j;
            }
        }
        steps
    }
}

/// [`group_positions`] for a group's number of pairs of vectors, compiled for AVX-512 (with
/// VBMI for 1-byte elements), chosen once per task: the group's vectors stay in registers
/// across the steps and the pairs' loop unrolls. With the pairs counted at run time, the
/// loop's branches and reloads cost about as much as the permutes (ArgMax INT32
/// `[126118, 5, 5]` over axis 1: 2.1 times the memory floor).
type GroupPositions = unsafe fn(*const u8, &Steps, &mut [u32; 64]) -> bool;

/// The [`GroupPositions`] for `T`, `LAST` and groups of `pairs` pairs of vectors.
fn group_positions_kernel<T: Lanes, const LAST: bool>(pairs: usize) -> GroupPositions {
    macro_rules! by_pairs {
        ($kernel:ident) => {
            match pairs {
                1 => $kernel::<T, LAST, 1>,
                2 => $kernel::<T, LAST, 2>,
                3 => $kernel::<T, LAST, 3>,
                4 => $kernel::<T, LAST, 4>,
                5 => $kernel::<T, LAST, 5>,
                6 => $kernel::<T, LAST, 6>,
                7 => $kernel::<T, LAST, 7>,
                _ => $kernel::<T, LAST, MAX_PAIRS>,
            }
        };
    }
    if T::SIZE == 1 {
        by_pairs!(group_positions_vbmi)
    } else {
        by_pairs!(group_positions_bw)
    }
}

/// [`group_positions`] compiled for AVX-512 F and BW.
///
/// # Safety
/// As [`group_positions`].
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn group_positions_bw<T: Lanes, const LAST: bool, const PAIRS: usize>(
    group: *const u8,
    steps: &Steps,
    positions: &mut [u32; 64],
) -> bool {
    // SAFETY: the caller's contract; the features are this function's.
    unsafe { group_positions::<T, LAST, PAIRS>(group, steps, positions) }
}

/// [`group_positions`] compiled for AVX-512 F, BW and VBMI (byte permutes).
///
/// # Safety
/// As [`group_positions`], and the CPU must support VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn group_positions_vbmi<T: Lanes, const LAST: bool, const PAIRS: usize>(
    group: *const u8,
    steps: &Steps,
    positions: &mut [u32; 64],
) -> bool {
    // SAFETY: the caller's contract; the features are this function's.
    unsafe { group_positions::<T, LAST, PAIRS>(group, steps, positions) }
}

/// The position of the best element of each of a group's runs, into `positions` (one per
/// row); false when a NaN appears (the compare domain does not order it).
///
/// # Safety
/// AVX-512 F and BW (VBMI for 1-byte elements); `PAIRS` is `steps.pairs` (at most
/// [`MAX_PAIRS`]); `64 * steps.vectors` readable bytes at `group`.
#[inline(always)]
unsafe fn group_positions<T: Lanes, const LAST: bool, const PAIRS: usize>(
    group: *const u8,
    steps: &Steps,
    positions: &mut [u32; 64],
) -> bool {
    // The group's vectors, zero past the last (an odd count leaves the last pair one).
    let mut vectors = [_mm512_setzero_si512(); 2 * MAX_PAIRS];
    for (v, vector) in vectors[..2 * PAIRS].iter_mut().enumerate() {
        if v < steps.vectors {
            *vector = _mm512_loadu_si512(group.add(64 * v).cast());
        }
    }
    let lowest = _mm512_broadcast_i64x4(T::lowest());
    let (mut best, mut at) = (lowest, _mm512_setzero_si512());
    let mut nan = 0u64;
    for k in 0..steps.len {
        let indices = _mm512_loadu_si512(steps.indices[k].as_ptr().cast());
        let mut v = _mm512_setzero_si512();
        for pair in 0..PAIRS {
            let (a, b) = (vectors[2 * pair], vectors[2 * pair + 1]);
            let mask = steps.masks[k][pair];
            v = blend_lanes512::<T>(mask, v, permute2::<T>(a, indices, b));
        }
        let keys = T::domain512(v);
        if T::CAN_NAN {
            nan |= T::nan_mask512(keys);
        }
        let better = if LAST {
            !T::gt_mask512(best, keys)
        } else {
            T::gt_mask512(keys, best)
        };
        best = blend_lanes512::<T>(better, best, keys);
        at = blend_lanes512::<T>(better, at, _mm512_broadcast_i64x4(T::splat_index(k as u32)));
    }
    widen::<T>(at, positions);
    nan == 0
}

impl Job<'_> {
    /// Reduces every output of a rows plan of packed items of short rows
    /// ([`Transposed::for_packed_items`]): tasks of whole groups of consecutive outputs.
    pub(super) fn rows_transposed<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        transposed: &Transposed,
        run: Dim,
    ) {
        let segments: usize = transposed.outer.iter().map(|d| d.size).product();
        let units = segments * transposed.along;
        let parallel = units.saturating_mul(run.size) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        // A task starts on a group (a multiple of the interleave, as `unit_offset` needs).
        let per_task =
            items_per_task(units, run.size).next_multiple_of(transposed.group_outputs::<T>());
        let task = |t: usize| {
            let first = t * per_task;
            let count = per_task.min(units - first);
            // SAFETY: `for_packed_items` returns a kernel only with `Isa::Avx512` (AVX-512 F and
            // BW), and VBMI for 1-byte elements.
            unsafe { transposed.task::<T, O, LAST, Avx512Prims>(self, run, first, count, outputs) };
        };
        for_each_task(units.div_ceil(per_task), parallel, task);
    }
}

/// Writes the low `size` bytes of `value` into lane `lane` of `vector` (lanes of `size` bytes,
/// 1, 2, 4 or 8, little-endian): the permute indices and lane positions the group kernels
/// load as vectors.
pub(super) fn set_lane(vector: &mut [u8; 64], lane: usize, size: usize, value: u64) {
    vector[lane * size..][..size].copy_from_slice(&value.to_le_bytes()[..size]);
}

/// The bytes of `positions` (for [`Outputs::store_scaled`]).
fn positions_bytes(positions: &[u32; 64]) -> &[u8] {
    // SAFETY: any `u32` is four initialised bytes; the slice covers the array exactly.
    unsafe { std::slice::from_raw_parts(positions.as_ptr().cast(), 4 * positions.len()) }
}

/// The lanes of `at` (of `T`'s width, 1, 2, 4 or 8 bytes, unsigned) as 32-bit integers, into
/// the first `64 / T::SIZE` of `out`.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
pub(super) unsafe fn widen<T: Lanes>(at: __m512i, out: &mut [u32; 64]) {
    let out = out.as_mut_ptr();
    match T::SIZE {
        1 => {
            let quarters = [
                _mm512_extracti32x4_epi32::<0>(at),
                _mm512_extracti32x4_epi32::<1>(at),
                _mm512_extracti32x4_epi32::<2>(at),
                _mm512_extracti32x4_epi32::<3>(at),
            ];
            for (q, bytes) in quarters.into_iter().enumerate() {
                _mm512_storeu_si512(out.add(16 * q).cast(), _mm512_cvtepu8_epi32(bytes));
            }
        }
        2 => {
            let low = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(at));
            let high = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64::<1>(at));
            _mm512_storeu_si512(out.cast(), low);
            _mm512_storeu_si512(out.add(16).cast(), high);
        }
        4 => _mm512_storeu_si512(out.cast(), at),
        _ => _mm512_storeu_si512(
            out.cast(),
            _mm512_zextsi256_si512(_mm512_cvtepi64_epi32(at)),
        ),
    }
}

/// The lanes of `a` and `b` (64 bytes each, `a` first) that `indices` name, lanes of `T`'s
/// width (1, 2, 4 or 8 bytes).
///
/// # Safety
/// AVX-512 F and BW, and VBMI for 1-byte lanes.
#[inline(always)]
pub(super) unsafe fn permute2<T: Lanes>(a: __m512i, indices: __m512i, b: __m512i) -> __m512i {
    match T::SIZE {
        1 => _mm512_permutex2var_epi8(a, indices, b),
        2 => _mm512_permutex2var_epi16(a, indices, b),
        4 => _mm512_permutex2var_epi32(a, indices, b),
        _ => _mm512_permutex2var_epi64(a, indices, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn dim(size: usize, stride: usize, reduced: bool) -> Dim {
        Dim {
            size,
            stride,
            index_stride: usize::from(reduced),
            slot_stride: usize::from(!reduced),
        }
    }

    #[test]
    fn takes_one_unit_dimension_of_short_contiguous_runs() {
        let run = dim(4, 1, true);
        let takes = |units: &[Dim], run: Dim, isa: Isa| {
            Transposed::new::<f32>(units, run, isa).map(|t| (t.pitch, t.slot_stride))
        };
        assert_eq!(takes(&[dim(16, 4, false)], run, Isa::Avx512), Some((4, 1)));
        assert_eq!(takes(&[dim(100, 8, false)], run, Isa::Avx512), Some((8, 1)));
        assert_eq!(takes(&[dim(100, 9, false)], run, Isa::Avx512), Some((9, 1)));
        // Kept dimensions outside the innermost one are walked.
        let two = [dim(2, 400, false), dim(100, 4, false)];
        assert_eq!(takes(&two, run, Isa::Avx512), Some((4, 1)));
        // Too few units along the innermost kept dimension for a group, a strided run,
        // another instruction set.
        assert!(takes(&[dim(15, 4, false)], run, Isa::Avx512).is_none());
        assert!(takes(&[dim(100, 64, false), dim(15, 4, false)], run, Isa::Avx512).is_none());
        assert!(takes(&[dim(100, 8, false)], dim(4, 2, true), Isa::Avx512).is_none());
        assert!(takes(&[dim(100, 4, false)], run, Isa::Avx2).is_none());
        // One-byte elements with VBMI only; runs of one element never.
        let bytes = |pitch: usize| {
            Transposed::new::<u8>(&[dim(100, pitch, false)], run, Isa::Avx512).is_some()
        };
        assert_eq!(bytes(4), has_avx512_vbmi());
        assert_eq!(bytes(17), has_avx512_vbmi());
        assert!(
            Transposed::new::<f32>(&[dim(100, 4, false)], dim(1, 1, true), Isa::Avx512).is_none()
        );
        assert!(Transposed::new::<u64>(&[dim(100, 4, false)], run, Isa::Avx512).is_some());
    }

    #[test]
    fn packed_items_of_short_rows_are_taken_as_interleaved_runs() {
        use crate::argmax::plan::test_plan;
        // `[n, r, k]` over axis 1: (pitch, interleave) of the kernel, when taken.
        fn taken<T: Lanes>(sizes: &[u32], strides: Option<&[u32]>) -> Option<(usize, usize)> {
            let plan = test_plan(sizes, strides, &[false, true, false]);
            Transposed::for_packed_items::<T>(&plan, Isa::Avx512)
                .map(|(t, run)| (t.pitch, t.interleave, run.stride))
                .map(|(pitch, k, stride)| {
                    assert_eq!(stride, k);
                    (pitch, k)
                })
        }
        assert_eq!(taken::<f32>(&[100, 8, 2], None), Some((8, 2)));
        assert_eq!(taken::<f32>(&[100, 2, 8], None), Some((2, 8)));
        assert_eq!(taken::<f32>(&[100, 2, 16], None), Some((2, 16)));
        assert_eq!(taken::<u64>(&[100, 4, 2], None), Some((4, 2)));
        // Padded items: the pitch is the item's elements per output.
        assert_eq!(taken::<f32>(&[100, 3, 4], Some(&[20, 4, 1])), Some((5, 4)));
        // Rows that do not divide a vector: groups of the whole items that fit.
        assert_eq!(taken::<f32>(&[100, 2, 3], None), Some((2, 3)));
        assert_eq!(taken::<f32>(&[100, 2, 9], None), Some((2, 9)));
        // Rows longer than a vector (17 of 4 bytes; 16 of 8); a pitch past the permutes' 32
        // bytes; too few outputs for a group; padded rows; items that do not divide into rows;
        // another instruction set.
        assert_eq!(taken::<f32>(&[100, 2, 17], None), None);
        assert_eq!(taken::<u64>(&[100, 2, 16], None), None);
        assert_eq!(taken::<f32>(&[100, 9, 2], None), None);
        assert_eq!(taken::<f32>(&[7, 2, 2], None), None);
        assert_eq!(taken::<f32>(&[100, 2, 4], Some(&[10, 5, 1])), None);
        assert_eq!(taken::<f32>(&[100, 2, 4], Some(&[10, 4, 1])), None);
        let plan = test_plan(&[100, 4, 2], None, &[false, true, false]);
        assert!(Transposed::for_packed_items::<f32>(&plan, Isa::Avx2).is_none());
        // One-byte elements with VBMI only, and a pitch of at most 16.
        let bytes = |sizes: &[u32]| {
            let plan = test_plan(sizes, None, &[false, true, false]);
            Transposed::for_packed_items::<u8>(&plan, Isa::Avx512).is_some()
        };
        assert_eq!(bytes(&[100, 16, 2]), has_avx512_vbmi());
        assert!(!bytes(&[100, 17, 2]));
    }

    #[test]
    fn pitches_over_32_bytes_play_a_tournament_and_runs_sharing_a_vector_take_segments() {
        // The kernel taken, if any.
        fn kernel<T: Lanes>(pitch: usize, len: usize) -> Option<&'static str> {
            let units = [dim(100, pitch, false)];
            Transposed::new::<T>(&units, dim(len, 1, true), Isa::Avx512).map(|t| match t.kernel {
                Kernel::Permutes(_) => "permutes",
                Kernel::Tournament(_) => "tournament",
                Kernel::Segments(_) => "segments",
            })
        }
        assert_eq!(kernel::<f32>(8, 8), Some("segments"));
        assert_eq!(kernel::<f32>(6, 6), Some("permutes"));
        assert_eq!(kernel::<f32>(9, 9), Some("tournament"));
        assert_eq!(kernel::<f32>(40, 2), Some("tournament"));
        // FLOAT32 and FLOAT64 watch for NaNs: two vectors; other types four.
        assert_eq!(kernel::<f32>(40, 32), Some("tournament"));
        assert_eq!(kernel::<f32>(40, 33), None);
        assert_eq!(kernel::<f64>(20, 16), Some("tournament"));
        assert_eq!(kernel::<f64>(20, 17), None);
        assert_eq!(kernel::<i32>(80, 64), Some("tournament"));
        assert_eq!(kernel::<i32>(80, 65), None);
        assert_eq!(kernel::<f16>(17, 17), Some("tournament"));
        assert_eq!(kernel::<f16>(16, 16), Some("segments"));
        assert_eq!(kernel::<f16>(12, 12), Some("segments"));
        assert_eq!(kernel::<f16>(6, 6), Some("permutes"));
        assert_eq!(kernel::<f16>(200, 128), Some("tournament"));
        assert_eq!(kernel::<f16>(200, 129), None);
        if has_avx512_vbmi() {
            assert_eq!(kernel::<u8>(10, 10), Some("permutes"));
            assert_eq!(kernel::<u8>(16, 16), Some("segments"));
            assert_eq!(kernel::<u8>(32, 32), Some("segments"));
            assert_eq!(kernel::<u8>(17, 17), Some("segments"));
            assert_eq!(kernel::<u8>(40, 40), Some("tournament"));
            assert_eq!(kernel::<u8>(300, 256), Some("tournament"));
            assert_eq!(kernel::<u8>(300, 257), None);
        }
    }

    #[test]
    fn each_step_brings_every_rows_element_to_its_lane() {
        // Element `i` of a group is the number `i`: pair `p`'s lanes are 2 * lanes * p onwards,
        // so the permute of step `k` must give lane `j` the number `j * pitch + k`, or, with
        // runs interleaved by `n` (packed items of rows of `n` elements), the number
        // `(j / n) * pitch * n + k * n + j % n` for the lanes of whole items.
        for (size, max_pitch) in [(1usize, 16usize), (2, 16), (4, 8), (8, 4)] {
            let rows = 64 / size;
            for (pitch, len, n) in (2..=max_pitch).flat_map(|pitch| {
                (2..=pitch).flat_map(move |len| (1..=rows).map(move |n| (pitch, len, n)))
            }) {
                {
                    let steps = Steps::new(rows, pitch, len, n);
                    assert_eq!((steps.pairs, steps.vectors), (pitch.div_ceil(2), pitch));
                    for k in 0..len {
                        for j in 0..rows {
                            let pairs: Vec<usize> = (0..steps.pairs)
                                .filter(|&p| steps.masks[k][p] >> j & 1 == 1)
                                .collect();
                            let mut lane = [0u8; 8];
                            lane[..size].copy_from_slice(&steps.indices[k][j * size..][..size]);
                            let index = u64::from_le_bytes(lane) as usize;
                            let what = format!("size {size} pitch {pitch} n {n} k {k} j {j}");
                            // Lanes past the group's whole items take nothing.
                            if j >= rows / n * n {
                                assert!(pairs.is_empty(), "{what}");
                                continue;
                            }
                            assert_eq!(pairs.len(), 1, "{what}");
                            let at = (j / n) * pitch * n + k * n + j % n;
                            assert_eq!(2 * rows * pairs[0] + index, at, "{what}");
                        }
                    }
                }
            }
        }
    }
}
