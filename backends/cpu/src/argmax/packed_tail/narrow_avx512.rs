//! A narrow packed tail read in 64-byte vectors with AVX-512 ([`Narrow512`]): each vector
//! holds `per_vector` whole positions, each lane keeps its best value and the number of the
//! vector it came from, and the `per_vector` lanes of each output are then combined in
//! registers, halving the groups of lanes in play at each step.
//!
//! The AVX2 kernel reads twice as many vectors and combines the lanes element by element:
//! ArgMax UINT8 `[944, 83, 2, 1, 8]` over axes 1 and 2 (items of 166 rows of 8 bytes) took
//! about 100 ns an item on one AMD Zen 4 core, half of it in that combine.

use super::super::avx512::blend_lanes512;
use super::super::lanes::Lanes;
use super::super::transposed_runs::{permute2, set_lane};
use crate::simd::has_avx512_vbmi;
use std::arch::x86_64::*;

/// Halving steps of the combine, at most: 64 one-byte positions per vector.
const MAX_STEPS: usize = 6;

/// Items of at most this many vectors are reduced several at a time ([`Narrow512::argmax`]).
/// Back to back on one AMD Zen 4 core, four at a time: UINT8 `[100000, 42, 2]` over axis 1
/// (two vectors an item) 2.79 → 2.13 ms, FLOAT32 `[20000, 16, 2]` 0.44 → 0.39; but FLOAT32
/// `[1000, 300, 2]` (38 vectors) 0.070 → 0.076, UINT8 `[2000, 100, 8]` (13) 0.086 → 0.090.
const TOGETHER_MAX_VECTORS: usize = 8;

/// A narrow tail's vectors and the steps that combine their lanes.
#[derive(Debug, Clone)]
pub(super) struct Narrow512 {
    /// Whole positions per vector.
    per_vector: usize,
    /// Vectors per item.
    vectors: usize,
    /// Bytes from one vector to the next (`per_vector` positions).
    step: usize,
    /// The bytes a vector reads: its positions, not the next vector's.
    read: u64,
    /// The bytes the last vector reads: up to the item's end.
    last_read: u64,
    /// A bit per lane (of the element's width) holding an output's element.
    lanes: u64,
    /// [`Self::lanes`] of the last vector, without the positions past the item.
    last_lanes: u64,
    /// Each lane's place in its vector (lanes of the element's width).
    places: [u8; 64],
    /// The combine's steps, `2^s` positions apart at step `s`.
    steps: usize,
    /// Per step, the permute bringing each lane's partner (`2^s` positions on) to it.
    partners: [[u8; 64]; MAX_STEPS],
    /// Per step, a bit per lane whose partner is a held position.
    paired: [u64; MAX_STEPS],
}

impl Narrow512 {
    /// The AVX-512 form of a narrow tail of `k` outputs over `rows` positions `pitch`
    /// elements apart (`pitch` at most half a vector), when the CPU has what it needs (VBMI's
    /// byte permutes for 1-byte elements) and the vector numbers fit a lane
    /// ([`super::most_numbers`]).
    pub(super) fn new<T: Lanes>(k: usize, pitch: usize, rows: usize) -> Option<Narrow512> {
        let width = 64 / T::SIZE;
        if (T::SIZE == 1 && !has_avx512_vbmi()) || k == 0 || k > pitch || 2 * pitch > width {
            return None;
        }
        let per_vector = width / pitch;
        let vectors = rows.div_ceil(per_vector);
        if vectors > super::most_numbers::<T>() {
            return None;
        }
        // Positions of a vector that hold an element (fewer in an item shorter than one).
        let held = per_vector.min(rows);
        let step = per_vector * pitch * T::SIZE;
        let item_bytes = ((rows - 1) * pitch + k) * T::SIZE;
        let last_positions = rows - (vectors - 1) * per_vector;
        let output_lane = |lane: usize| lane < per_vector * pitch && lane % pitch < k;
        let mut narrow = Narrow512 {
            per_vector,
            vectors,
            step,
            read: byte_mask(step),
            last_read: byte_mask(item_bytes - (vectors - 1) * step),
            lanes: lane_mask(width, output_lane),
            last_lanes: lane_mask(width, |lane| {
                output_lane(lane) && lane < last_positions * pitch
            }),
            places: [0; 64],
            steps: 0,
            partners: [[0; 64]; MAX_STEPS],
            paired: [0; MAX_STEPS],
        };
        for lane in 0..width {
            set_lane(&mut narrow.places, lane, T::SIZE, (lane / pitch) as u64);
        }
        while 1 << narrow.steps < held {
            let s = narrow.steps;
            let apart = (1 << s) * pitch;
            for lane in 0..width {
                let partner = (lane + apart).min(width - 1);
                set_lane(&mut narrow.partners[s], lane, T::SIZE, partner as u64);
            }
            narrow.paired[s] = lane_mask(width, |lane| lane + apart < held * pitch);
            narrow.steps += 1;
        }
        Some(narrow)
    }

    /// Whether items are short enough to gain from being reduced several at a time
    /// ([`TOGETHER_MAX_VECTORS`]).
    pub(super) fn interleaves(&self) -> bool {
        self.vectors <= TOGETHER_MAX_VECTORS
    }

    /// Writes into `positions[i * k..][..k]` the reduced position of each output's first
    /// (or, with `LAST`, last) maximum in the item at `items[i]`, for the `N` items at once
    /// (their steps interleaved: one item's combine is a chain of dependent permutes and
    /// compares). Bit `i` of the result is set when item `i` held a NaN, its positions then
    /// meaningless.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F and BW, and VBMI for 1-byte elements (as [`Self::new`]
    /// checked); each item's bytes lie at its pointer; `positions.len() >= N * k`.
    pub(super) unsafe fn argmax<T: Lanes, const LAST: bool, const N: usize>(
        &self,
        k: usize,
        items: [*const u8; N],
        positions: &mut [usize],
    ) -> u32 {
        assert!(positions.len() >= N * k, "Narrow512: too few positions");
        // SAFETY: the caller's contract.
        unsafe {
            if T::SIZE == 1 {
                self.argmax_vbmi::<T, LAST, N>(k, items, positions)
            } else {
                self.argmax_bw::<T, LAST, N>(k, items, positions)
            }
        }
    }

    /// [`Self::argmax`] compiled for AVX-512 F and BW.
    ///
    /// # Safety
    /// As [`Self::argmax`].
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn argmax_bw<T: Lanes, const LAST: bool, const N: usize>(
        &self,
        k: usize,
        items: [*const u8; N],
        positions: &mut [usize],
    ) -> u32 {
        // SAFETY: the features are this function's; the rest is the caller's contract.
        unsafe { self.argmax_body::<T, LAST, N>(k, items, positions) }
    }

    /// [`Self::argmax`] compiled for AVX-512 F, BW and VBMI (byte permutes).
    ///
    /// # Safety
    /// As [`Self::argmax`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn argmax_vbmi<T: Lanes, const LAST: bool, const N: usize>(
        &self,
        k: usize,
        items: [*const u8; N],
        positions: &mut [usize],
    ) -> u32 {
        // SAFETY: the features are this function's; the rest is the caller's contract.
        unsafe { self.argmax_body::<T, LAST, N>(k, items, positions) }
    }

    /// The body of [`Self::argmax`], inlined into a function per instruction set.
    ///
    /// # Safety
    /// As [`Self::argmax`].
    #[inline(always)]
    unsafe fn argmax_body<T: Lanes, const LAST: bool, const N: usize>(
        &self,
        k: usize,
        items: [*const u8; N],
        positions: &mut [usize],
    ) -> u32 {
        let lowest = _mm512_broadcast_i64x4(T::lowest());
        let mut best = [lowest; N];
        let mut number = [_mm512_setzero_si512(); N];
        let mut nan = [0u64; N];
        for j in 0..self.vectors {
            let last = j + 1 == self.vectors;
            let (read, valid) = if last {
                (self.last_read, self.last_lanes)
            } else {
                (self.read, self.lanes)
            };
            let here = _mm512_broadcast_i64x4(T::splat_index(j as u32));
            for i in 0..N {
                // Only the vector's own positions are read (no fault past the item).
                let raw = _mm512_maskz_loadu_epi8(read, items[i].add(j * self.step).cast());
                let mut v = T::domain512(raw);
                if last {
                    // The positions past the item must not reach the lanes' maxima.
                    v = blend_lanes512::<T>(valid, lowest, v);
                }
                let take = valid
                    & if LAST {
                        !T::gt_mask512(best[i], v)
                    } else {
                        T::gt_mask512(v, best[i])
                    };
                number[i] = blend_lanes512::<T>(take, number[i], here);
                // Lanes of no output take any value: no step reads them.
                best[i] = T::max512(best[i], v);
                if T::CAN_NAN {
                    nan[i] |= T::nan_mask512(v) & valid;
                }
            }
        }
        let mut place = [_mm512_loadu_si512(self.places.as_ptr().cast()); N];
        for s in 0..self.steps {
            // Lane `g` meets lane `g + 2^s` (in positions): each has combined the `2^s`
            // places from its own, so every place of the first comes before every place of
            // the second, and equal vector numbers leave the first (the last, with `LAST`).
            let partners = _mm512_loadu_si512(self.partners[s].as_ptr().cast());
            for i in 0..N {
                let (their_best, their_number, their_place) = (
                    permute2::<T>(best[i], partners, best[i]),
                    permute2::<T>(number[i], partners, number[i]),
                    permute2::<T>(place[i], partners, place[i]),
                );
                let earlier = numbers_below::<T>(their_number, number[i]);
                let tie_goes_to_them = if LAST { !earlier } else { earlier };
                let take = self.paired[s]
                    & (T::gt_mask512(their_best, best[i])
                        | (!T::gt_mask512(best[i], their_best) & tie_goes_to_them));
                best[i] = blend_lanes512::<T>(take, best[i], their_best);
                number[i] = blend_lanes512::<T>(take, number[i], their_number);
                place[i] = blend_lanes512::<T>(take, place[i], their_place);
            }
        }
        let mut refused = 0;
        for i in 0..N {
            if T::CAN_NAN && nan[i] != 0 {
                refused |= 1 << i;
                continue;
            }
            let (mut numbers, mut places) = ([0u8; 64], [0u8; 64]);
            _mm512_storeu_si512(numbers.as_mut_ptr().cast(), number[i]);
            _mm512_storeu_si512(places.as_mut_ptr().cast(), place[i]);
            let out = &mut positions[i * k..(i + 1) * k];
            for (column, position) in out.iter_mut().enumerate() {
                let lane = column * T::SIZE..(column + 1) * T::SIZE;
                *position = T::lane_index(&numbers[lane.clone()]) * self.per_vector
                    + T::lane_index(&places[lane]);
            }
        }
        refused
    }
}

/// All ones in the first `bytes` bits (64 at most).
fn byte_mask(bytes: usize) -> u64 {
    if bytes >= 64 {
        u64::MAX
    } else {
        (1 << bytes) - 1
    }
}

/// A bit per lane of `0..width` for which `keep` holds.
fn lane_mask(width: usize, keep: impl Fn(usize) -> bool) -> u64 {
    (0..width)
        .filter(|&lane| keep(lane))
        .fold(0, |mask, lane| mask | 1 << lane)
}

/// A bit per lane (of `T`'s width) where `a`, read as an unsigned integer, is below `b`.
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
unsafe fn numbers_below<T: Lanes>(a: __m512i, b: __m512i) -> u64 {
    match T::SIZE {
        1 => _mm512_cmplt_epu8_mask(a, b),
        2 => u64::from(_mm512_cmplt_epu16_mask(a, b)),
        4 => u64::from(_mm512_cmplt_epu32_mask(a, b)),
        _ => u64::from(_mm512_cmplt_epu64_mask(a, b)),
    }
}
