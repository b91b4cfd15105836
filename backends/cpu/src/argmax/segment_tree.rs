//! AVX-512: ArgMax over contiguous runs of at most a vector, one per output, several runs to a
//! vector: each run gets a segment of `P` lanes (`P` the run's length rounded up to a power
//! of two), a butterfly of in-lane shuffles and maxima leaves every lane holding its segment's
//! maximum, and one compare marks the lanes equal to it; the first (with `LAST`, the last)
//! marked lane of each segment is the run's position.
//!
//! [`super::transposed_runs`]' permutes bring each element of a group's runs to its run's lane,
//! and cost grows with the square of the pitch; [`super::tournament`] gives each run a vector
//! of its own. Rows of 8 to 32 elements of 2 bytes, of 12 to 48 of 1 byte, and of 8 of 4 bytes
//! took 2 to 3 times the memory floor that way on an AMD EPYC (Zen 4) core, FLOAT16
//! `[400000, 16]` over axis 1 about 3.3 ns a run. Here a level of the butterfly is two
//! single-cycle instructions for every run of the vector.
//!
//! Runs read at a pitch other than `P` are moved into their segments by one permute per vector,
//! the lanes past a run set to the lowest key (and left out of the compare). Where compresses
//! are cheap, the first holders' places are compressed out of a vector instead of taken run by
//! run from the mask (see [`MIN_COMPRESSED_RUNS_OF_2_BYTES`]). A vector holding a
//! FLOAT32 or FLOAT64 NaN, which the compare domain does not order, sends its group to the
//! caller's per-output kernel.

use super::avx512::blend_lanes512;
use super::lanes::Lanes;
use super::transposed_runs::set_lane;
use crate::simd::has_avx512_vbmi2;
use std::arch::x86_64::*;

/// The most runs to a vector. Each run's position is taken from the compare's mask by scalar
/// instructions, which outweighed the tree at eight runs to a vector: UINT8 `[1600000, 8]` 1.22
/// → 1.52 ms, FLOAT16 `[1066666, 6]` 1.17 → 1.80, FLOAT32 `[800000, 4]` 0.85 → 1.01. One run
/// to a vector (a whole vector's butterfly for one output) lost too: FLOAT32 `[266666, 12]`
/// 0.68 → 0.77, UINT8 `[266666, 48]` 0.70 → 0.87, FLOAT16 `[266666, 24]` 0.91 → 0.98. One AMD
/// EPYC (Zen 4) core, ArgMax over axis 1 into INT64, caches flushed between calls, libraries
/// alternated, medians of 9.
const MAX_RUNS: usize = 4;

/// The fewest lanes of a segment: INT64 `[400000, 4]` (segments of four) 0.81 → 0.82 ms,
/// `[533333, 3]` 0.89 → 1.12 (as [`MAX_RUNS`]).
const MIN_SEGMENT_LANES: usize = 8;

/// The fewest lanes of a segment that runs are permuted into: FLOAT32 `[533333, 6]` (two runs
/// of six in segments of eight) 0.81 → 1.01 ms, where `[400000, 8]`, in place, went 1.08 →
/// 0.78 (as [`MAX_RUNS`]).
const MIN_PERMUTED_SEGMENT_LANES: usize = 16;

/// The shortest runs, in bytes, permuted into segments: UINT8 runs of 9 and 10 (four to a
/// vector in segments of 16) took 1.37 → 1.59 and 1.18 → 1.30 ms (`[1422222, 9]`,
/// `[1280000, 10]`), runs of 12 1.25 → 1.13 and of 14 1.26 → 0.95 (as [`MAX_RUNS`]).
const MIN_PERMUTED_RUN_BYTES: usize = 12;

/// The fewest runs to a vector of 2-byte elements whose positions are compressed out of a
/// vector (VBMI2) rather than taken run by run from the mask, which costs about three cycles a
/// run: FLOAT16 `[800000, 8]` (four runs) 1.22 → 1.05 ms, but `[400000, 16]` (two) 0.75 →
/// 1.02. Compressing bytes lost at every count (UINT8 `[1066666, 12]`, four runs, 1.15 →
/// 1.46; `[400000, 32]` 0.87 → 1.37); compressing 32- and 64-bit lanes (AVX-512 F) did not
/// (FLOAT32 `[400000, 8]` 0.77 → 0.74). Measured as [`MAX_RUNS`].
const MIN_COMPRESSED_RUNS_OF_2_BYTES: usize = 4;

/// Runs of `len` elements, `pitch` apart, reduced a segment each.
#[derive(Debug, Clone, Copy)]
pub(super) struct SegmentTree {
    /// Elements from one run's start to the next's.
    pitch: usize,
    /// Lanes per segment: the vector's lanes over `runs`.
    segment: usize,
    /// Runs per vector (a power of two): as many segments of `len` rounded up to a power of
    /// two as a vector holds, halved until the runs one load reads fit it.
    runs: usize,
    /// Whether a vector's runs lie in their segments as loaded (no permute).
    in_place: bool,
    /// The permute moving a vector's runs into their segments (lanes of `T`), when not
    /// `in_place`.
    indices: [u8; 64],
    /// Lanes holding a run's element (bit per lane of `T`).
    valid: u64,
    /// The first lane of each segment (bit per lane of `T`).
    starts: u64,
    /// Each lane's place in its segment (lanes of `T`): the positions the first holders give.
    places: [u8; 64],
}

/// Reduces a group's runs: positions of `64 / SIZE` runs from the first's start, into
/// `positions`; false when a NaN appears (the caller reduces the group run by run).
pub(super) type GroupPositions = unsafe fn(*const u8, &SegmentTree, &mut [u32; 64]) -> bool;

impl SegmentTree {
    /// The tree for runs of `len` elements of `T` `pitch` elements apart (at least `len`), or
    /// None where it is not the faster kernel: a run must fit a vector, with two to
    /// [`MAX_RUNS`] runs to a vector in segments of [`MIN_SEGMENT_LANES`] lanes or more; runs
    /// permuted into their segments (a pitch other than the segment's) need segments of
    /// [`MIN_PERMUTED_SEGMENT_LANES`] and runs of [`MIN_PERMUTED_RUN_BYTES`].
    pub(super) fn new<T: Lanes>(len: usize, pitch: usize) -> Option<SegmentTree> {
        let lanes = 64 / T::SIZE;
        if len < 2 || len > lanes || pitch < len {
            return None;
        }
        let mut runs = lanes / len.next_power_of_two();
        while runs > 1 && (runs - 1) * pitch + len > lanes {
            runs /= 2;
        }
        // Segments fill the vector, so that the runs per vector follow from their width.
        let segment = lanes / runs;
        let in_place = pitch == segment;
        if !(2..=MAX_RUNS).contains(&runs)
            || segment < MIN_SEGMENT_LANES
            || (!in_place
                && (segment < MIN_PERMUTED_SEGMENT_LANES || len * T::SIZE < MIN_PERMUTED_RUN_BYTES))
        {
            return None;
        }
        let mut tree = SegmentTree {
            pitch,
            segment,
            runs,
            in_place,
            indices: [0; 64],
            valid: 0,
            starts: 0,
            places: [0; 64],
        };
        for lane in 0..lanes {
            set_lane(&mut tree.places, lane, T::SIZE, (lane % segment) as u64);
        }
        for r in 0..runs {
            tree.starts |= 1 << (r * segment);
            for i in 0..len {
                let lane = r * segment + i;
                set_lane(&mut tree.indices, lane, T::SIZE, (r * pitch + i) as u64);
                tree.valid |= 1 << lane;
            }
        }
        Some(tree)
    }

    /// Bytes a group reads from its first run's start: its last vector's load.
    pub(super) fn group_bytes<T: Lanes>(&self) -> usize {
        let lanes = 64 / T::SIZE;
        (lanes - self.runs) * self.pitch * T::SIZE + 64
    }

    /// The group kernel for `T`, `LAST`, this tree's segment width and loads, and how the
    /// positions leave the mask: compressed for 32- and 64-bit lanes, and for 16-bit lanes with
    /// [`MIN_COMPRESSED_RUNS_OF_2_BYTES`] runs to a vector on a CPU with VBMI2; run by run
    /// otherwise.
    pub(super) fn kernel<T: Lanes, const LAST: bool>(&self) -> GroupPositions {
        macro_rules! by_segment {
            ($kernel:ident, $in_place:literal, $compress:literal) => {
                match self.segment * T::SIZE {
                    2 => $kernel::<T, LAST, 2, $in_place, $compress>,
                    4 => $kernel::<T, LAST, 4, $in_place, $compress>,
                    8 => $kernel::<T, LAST, 8, $in_place, $compress>,
                    16 => $kernel::<T, LAST, 16, $in_place, $compress>,
                    32 => $kernel::<T, LAST, 32, $in_place, $compress>,
                    _ => $kernel::<T, LAST, 64, $in_place, $compress>,
                }
            };
        }
        macro_rules! by_load {
            ($kernel:ident, $compress:literal) => {
                if self.in_place {
                    by_segment!($kernel, true, $compress)
                } else {
                    by_segment!($kernel, false, $compress)
                }
            };
        }
        if T::SIZE == 2 && self.runs >= MIN_COMPRESSED_RUNS_OF_2_BYTES && has_avx512_vbmi2() {
            by_load!(group_positions_vbmi2, true)
        } else if T::SIZE == 1 {
            by_load!(group_positions_vbmi, false)
        } else if T::SIZE == 2 {
            by_load!(group_positions_bw, false)
        } else {
            by_load!(group_positions_bw, true)
        }
    }
}

/// `v` with each lane traded for the one `BYTES` bytes away within its `2 × BYTES`-byte block
/// (the butterfly's partner), by an in-lane shuffle.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn partner<const BYTES: usize>(v: __m512i) -> __m512i {
    match BYTES {
        // Bytes 2k and 2k + 1 traded within each 128-bit lane.
        1 => _mm512_shuffle_epi8(
            v,
            _mm512_broadcast_i32x4(_mm_set_epi8(
                14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1,
            )),
        ),
        2 => _mm512_rol_epi32::<16>(v),
        4 => _mm512_shuffle_epi32::<0xB1>(v),
        8 => _mm512_shuffle_epi32::<0x4E>(v),
        16 => _mm512_permutex_epi64::<0x4E>(v),
        _ => _mm512_shuffle_i64x2::<0x4E>(v, v),
    }
}

/// The maximum of each `SEGMENT`-byte segment of `keys` (compare domain, no NaN) in every lane
/// of it: a butterfly, from the widest partner down to the neighbouring lane.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn segment_max<T: Lanes, const SEGMENT: usize>(keys: __m512i) -> __m512i {
    let mut m = keys;
    macro_rules! level {
        ($bytes:literal) => {
            if SEGMENT > $bytes && $bytes >= T::SIZE {
                m = T::max512(m, partner::<$bytes>(m));
            }
        };
    }
    level!(32);
    level!(16);
    level!(8);
    level!(4);
    level!(2);
    level!(1);
    m
}

/// `v`'s lanes (of `T`'s width) as `indices` name them.
///
/// # Safety
/// AVX-512 F and BW, and VBMI for 1-byte lanes.
#[inline(always)]
unsafe fn permute<T: Lanes>(indices: __m512i, v: __m512i) -> __m512i {
    match T::SIZE {
        1 => _mm512_permutexvar_epi8(indices, v),
        2 => _mm512_permutexvar_epi16(indices, v),
        4 => _mm512_permutexvar_epi32(indices, v),
        _ => _mm512_permutexvar_epi64(indices, v),
    }
}

/// The positions of a group's `64 / SIZE` runs (the first at `group`) in segments of
/// `SEGMENT` bytes (`64 / SEGMENT` runs to a vector, as many vectors as a segment has lanes),
/// loaded as they lie when `IN_PLACE`, else permuted; the first holders' places compressed
/// out of a vector when `COMPRESS` (and not `LAST`, whose last holders are taken run by run
/// from the mask as every position is without it);
/// false when a NaN appears.
///
/// # Safety
/// AVX-512 F and BW (VBMI for 1-byte elements not `IN_PLACE`, VBMI2 for `COMPRESS` with
/// 2-byte elements; 1-byte elements are not compressed); `tree.group_bytes::<T>()` readable
/// bytes at `group`; `SEGMENT` is `tree.segment * T::SIZE`.
#[inline(always)]
unsafe fn group_positions_body<
    T: Lanes,
    const LAST: bool,
    const SEGMENT: usize,
    const IN_PLACE: bool,
    const COMPRESS: bool,
>(
    group: *const u8,
    tree: &SegmentTree,
    positions: &mut [u32; 64],
) -> bool {
    let runs = 64 / SEGMENT;
    let segment_lanes = SEGMENT / T::SIZE;
    let lowest = _mm512_broadcast_i64x4(T::lowest());
    let indices = _mm512_loadu_si512(tree.indices.as_ptr().cast());
    let places = _mm512_loadu_si512(tree.places.as_ptr().cast());
    let (valid, starts) = (tree.valid, tree.starts);
    let vector_bytes = runs * tree.pitch * T::SIZE;
    let segment_mask = u64::MAX >> (64 - segment_lanes);
    let out = positions.as_mut_ptr();
    let mut nan = 0;
    for v in 0..segment_lanes {
        let mut raw = _mm512_loadu_si512(group.add(v * vector_bytes).cast());
        if !IN_PLACE {
            raw = permute::<T>(indices, raw);
        }
        let keys = blend_lanes512::<T>(valid, lowest, T::domain512(raw));
        if T::CAN_NAN {
            nan |= T::nan_mask512(keys);
        }
        let holders = T::eq_mask512(keys, segment_max::<T, SEGMENT>(keys)) & valid;
        // In bounds below: `v * runs + r` is under `segment_lanes * runs`, the group's runs.
        if COMPRESS && !LAST {
            // Each segment's lowest holder: subtracting its first lane's bit clears that
            // holder and sets the bits below it, and borrows nothing from the next segment,
            // which holds a holder too (unless a NaN left one without: the group is dropped).
            let firsts = holders & !holders.wrapping_sub(starts);
            let found = widen_low::<T>(compress::<T>(firsts, places));
            _mm512_mask_storeu_epi32(
                out.add(v * runs).cast(),
                (u32::MAX >> (32 - runs)) as u16,
                found,
            );
            continue;
        }
        for r in 0..runs {
            let bits = holders >> (r * segment_lanes);
            // A segment holding a NaN may have no holder: its group is discarded (`nan`).
            let position = if LAST {
                63u32.wrapping_sub((bits & segment_mask).leading_zeros())
            } else {
                bits.trailing_zeros()
            };
            *out.add(v * runs + r) = position;
        }
    }
    nan == 0
}

/// The lanes of `v` (of `T`'s width) that `mask` selects, packed into the low lanes.
///
/// # Safety
/// AVX-512 F, and VBMI2 for lanes of 1 or 2 bytes.
#[inline(always)]
unsafe fn compress<T: Lanes>(mask: u64, v: __m512i) -> __m512i {
    match T::SIZE {
        1 => _mm512_maskz_compress_epi8(mask, v),
        2 => _mm512_maskz_compress_epi16(mask as u32, v),
        4 => _mm512_maskz_compress_epi32(mask as u16, v),
        _ => _mm512_maskz_compress_epi64(mask as u8, v),
    }
}

/// The low 16 lanes of `v` (of `T`'s width, unsigned; the low 8 for 8-byte lanes) as 32-bit
/// integers.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn widen_low<T: Lanes>(v: __m512i) -> __m512i {
    match T::SIZE {
        1 => _mm512_cvtepu8_epi32(_mm512_castsi512_si128(v)),
        2 => _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)),
        4 => v,
        _ => _mm512_zextsi256_si512(_mm512_cvtepi64_epi32(v)),
    }
}

/// Defines `unsafe fn $name`: [`group_positions_body`] compiled with the target features
/// `$features`.
macro_rules! group_positions_kernel {
    ($(#[$doc:meta])* $name:ident, $features:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("As [`group_positions_body`]; the CPU must support ", $features, ".")]
        #[target_feature(enable = $features)]
        unsafe fn $name<
            T: Lanes,
            const LAST: bool,
            const SEGMENT: usize,
            const IN_PLACE: bool,
            const COMPRESS: bool,
        >(
            group: *const u8,
            tree: &SegmentTree,
            positions: &mut [u32; 64],
        ) -> bool {
            // SAFETY: the caller's contract; the features are this function's.
            unsafe {
                group_positions_body::<T, LAST, SEGMENT, IN_PLACE, COMPRESS>(group, tree, positions)
            }
        }
    };
}

group_positions_kernel!(
    /// [`group_positions_body`] for elements of 2 bytes or more.
    group_positions_bw,
    "avx512f,avx512bw"
);
group_positions_kernel!(
    /// [`group_positions_body`] with byte permutes.
    group_positions_vbmi,
    "avx512f,avx512bw,avx512vbmi"
);
group_positions_kernel!(
    /// [`group_positions_body`] with compresses of 2-byte lanes.
    group_positions_vbmi2,
    "avx512f,avx512bw,avx512vbmi2"
);

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    /// `(runs, segment lanes, in place)` of the tree, if any.
    fn shape_of(tree: Option<SegmentTree>) -> Option<(usize, usize, bool)> {
        tree.map(|t| (t.runs, t.segment, t.in_place))
    }

    #[test]
    fn runs_take_segments_of_a_power_of_two_that_a_load_covers() {
        // FLOAT16 runs of 16: two to a vector, in place; of 12, permuted into segments of 16.
        assert_eq!(
            shape_of(SegmentTree::new::<f16>(16, 16)),
            Some((2, 16, true))
        );
        assert_eq!(
            shape_of(SegmentTree::new::<f16>(12, 12)),
            Some((2, 16, false))
        );
        // UINT8 runs of 16 padded to 17: four would need 67 bytes, so two in segments of 32.
        assert_eq!(
            shape_of(SegmentTree::new::<u8>(16, 17)),
            Some((2, 32, false))
        );
        assert_eq!(
            shape_of(SegmentTree::new::<u8>(12, 12)),
            Some((4, 16, false))
        );
        // FLOAT32 runs of 5 to 8 at a pitch of 8 lie in their segments.
        assert_eq!(shape_of(SegmentTree::new::<f32>(5, 8)), Some((2, 8, true)));
        // Not the faster kernel: eight runs to a vector, one, segments of four, runs permuted
        // into segments of eight.
        assert_eq!(shape_of(SegmentTree::new::<u8>(8, 8)), None);
        assert_eq!(shape_of(SegmentTree::new::<f16>(24, 24)), None);
        assert_eq!(shape_of(SegmentTree::new::<i64>(4, 4)), None);
        assert_eq!(shape_of(SegmentTree::new::<f32>(6, 6)), None);
        assert_eq!(shape_of(SegmentTree::new::<u8>(10, 10)), None);
    }

    #[test]
    fn the_valid_lanes_and_indices_place_run_r_element_i_in_lane_r_segment_plus_i() {
        let tree = SegmentTree::new::<u8>(13, 13).unwrap();
        for r in 0..4 {
            for i in 0..16 {
                let lane = r * 16 + i;
                assert_eq!(tree.valid >> lane & 1 == 1, i < 13, "lane {lane}");
                if i < 13 {
                    assert_eq!(usize::from(tree.indices[lane]), r * 13 + i, "lane {lane}");
                }
            }
        }
        // The last vector's load starts at run 60 of the group.
        assert_eq!(tree.group_bytes::<u8>(), 60 * 13 + 64);
    }
}
