//! AVX-512: ArgMax over contiguous runs, one per output, at a pitch too wide for the permutes
//! of [`super::transposed_runs`] (over 32 bytes, 16 for 1-byte elements), of at most
//! [`ARGMAX_TOURNAMENT_MAX_RUN_BYTES`]: a group of `64 / SIZE` runs at a time, by a knockout
//! tournament.
//!
//! Each run is read as one, two or four vectors (a power of two: lanes and whole vectors past
//! the run hold the lowest key). A round pairs consecutive vectors and plays each pair of
//! neighbouring lanes: two-source permutes bring the pair's even lanes to one vector and its
//! odd lanes to another, a compare picks each lane's winner, and blends keep its key and its
//! position in the run. The first rounds shrink each run to one vector whose lanes hold
//! consecutive blocks of it; the next ones play runs side by side, and after `log2(64 / SIZE
//! × vectors)` rounds lane `r` of the last vector holds run `r`'s winner.
//!
//! A lane always plays a lane holding later elements of the same run, so a tie keeps the left
//! one (the first maximum) or, with `LAST`, the right one. The padding lies past the run's end
//! for the first maximum and before its start with `LAST`, so that it loses every tie (a run
//! of the lowest key included). There is no reduction across a vector and no branch on the
//! data. The per-output kernel ([`super::kernels::Prims::run_argmax`]: a masked load, a
//! reduction across the vector, a compare to find the lane) took about 16 cycles a run on an
//! AMD Zen 4 core (FLOAT32 `[3e6, 10]` over axis 1: 12.6 ms, 9.5 GB/s).
//!
//! A group holding a FLOAT32 or FLOAT64 NaN, which the compare domain does not order, is
//! reduced output by output instead (the caller's fallback).

use super::lanes::Lanes;
use super::transposed_runs::{permute2, set_lane, widen};
use crate::thresholds::ARGMAX_TOURNAMENT_MAX_RUN_BYTES;
use std::arch::x86_64::*;

/// The most vectors a run is read as.
const MAX_VECTORS: usize = ARGMAX_TOURNAMENT_MAX_RUN_BYTES / 64;

const _: () = assert!(
    MAX_VECTORS == 4,
    "the kernel plays runs of one, two or four vectors"
);

/// Runs of `len` elements played a group at a time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tournament {
    /// Elements per run.
    len: usize,
    /// Vectors per run: 1, 2 or 4.
    vectors: usize,
}

impl Tournament {
    /// The tournament of runs of `len` elements of `T` (1 to
    /// [`ARGMAX_TOURNAMENT_MAX_RUN_BYTES`] bytes).
    pub(super) fn new<T: Lanes>(len: usize) -> Tournament {
        let bytes = len * T::SIZE;
        debug_assert!(len >= 1 && bytes <= ARGMAX_TOURNAMENT_MAX_RUN_BYTES);
        Tournament {
            len,
            vectors: bytes.div_ceil(64).next_power_of_two(),
        }
    }

    /// Bytes from a group's first run's start to the end of its last run, for `pitch` elements
    /// between runs: what the group reads (its masked loads touch no other byte).
    pub(super) fn group_bytes<T: Lanes>(&self, pitch: usize) -> usize {
        ((64 / T::SIZE - 1) * pitch + self.len) * T::SIZE
    }

    /// What every group of a task shares, with `LAST` or without.
    ///
    /// # Safety
    /// AVX-512 F and BW.
    #[inline(always)]
    pub(super) unsafe fn field<T: Lanes, const LAST: bool>(&self) -> Field {
        let lanes = 64 / T::SIZE;
        // Lanes before the run: with `LAST` the run ends at the last lane of its last vector.
        let shift = if LAST {
            self.vectors * lanes - self.len
        } else {
            0
        };
        let mut masks = [0u64; MAX_VECTORS];
        let mut positions = [[0u8; 64]; MAX_VECTORS];
        for v in 0..self.vectors {
            for lane in 0..lanes {
                let at = v * lanes + lane;
                if (shift..shift + self.len).contains(&at) {
                    masks[v] |= (u64::MAX >> (64 - T::SIZE)) << (lane * T::SIZE);
                }
                // Wrapping in the lane's width: only padding lanes, which never win, wrap.
                set_lane(
                    &mut positions[v],
                    lane,
                    T::SIZE,
                    at.wrapping_sub(shift) as u64,
                );
            }
        }
        let (mut even, mut odd) = ([0u8; 64], [0u8; 64]);
        for lane in 0..lanes {
            set_lane(&mut even, lane, T::SIZE, (2 * lane) as u64);
            set_lane(&mut odd, lane, T::SIZE, (2 * lane + 1) as u64);
        }
        Field {
            vectors: self.vectors,
            before: shift * T::SIZE,
            masks,
            positions: [
                load64(&positions[0]),
                load64(&positions[1]),
                load64(&positions[2]),
                load64(&positions[3]),
            ],
            even: load64(&even),
            odd: load64(&odd),
            lowest: _mm512_broadcast_i64x4(T::lowest()),
        }
    }
}

/// The 64 bytes of `bytes` as a vector.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn load64(bytes: &[u8; 64]) -> __m512i {
    _mm512_loadu_si512(bytes.as_ptr().cast())
}

/// The lane masks, positions and permutes every group of a task shares.
pub(super) struct Field {
    /// Vectors per run: 1, 2 or 4.
    vectors: usize,
    /// Bytes from a run's first vector to its first element.
    before: usize,
    /// Per vector of a run, the bytes that hold its elements.
    masks: [u64; MAX_VECTORS],
    /// Per vector of a run, each lane's position in the run (of the element's width).
    positions: [__m512i; MAX_VECTORS],
    /// The indices of a pair's even lanes, then of its odd ones.
    even: __m512i,
    odd: __m512i,
    /// The lowest key in every lane.
    lowest: __m512i,
}

/// Runs `pitch` bytes apart from `first` on.
#[derive(Clone, Copy)]
struct Runs {
    first: *const u8,
    pitch: usize,
}

/// Keys and each lane's position in its run.
#[derive(Clone, Copy)]
struct Player {
    keys: __m512i,
    at: __m512i,
}

impl Field {
    /// The position of the best element of each of a group's `64 / SIZE` runs, `pitch` bytes
    /// apart from `group` on, into `positions` (one per run); false when a NaN appears.
    ///
    /// # Safety
    /// AVX-512 F and BW, and VBMI for 1-byte elements; the group's runs readable
    /// ([`Tournament::group_bytes`] from `group`).
    #[inline(always)]
    pub(super) unsafe fn group_positions<T: Lanes, const LAST: bool>(
        &self,
        group: *const u8,
        pitch: usize,
        positions: &mut [u32; 64],
    ) -> bool {
        match self.vectors {
            1 => self.play_group::<T, LAST, 1>(group, pitch, positions),
            2 => self.play_group::<T, LAST, 2>(group, pitch, positions),
            _ => self.play_group::<T, LAST, 4>(group, pitch, positions),
        }
    }

    /// [`Field::group_positions`] for runs of `V` vectors: subtrees of eight vectors, each
    /// played in registers, then their winners in a binary counter.
    #[inline(always)]
    unsafe fn play_group<T: Lanes, const LAST: bool, const V: usize>(
        &self,
        group: *const u8,
        pitch: usize,
        positions: &mut [u32; 64],
    ) -> bool {
        let subtrees = 64 / T::SIZE * V / 8;
        let mut watch = _mm512_setzero_si512();
        let mut stack = [Player {
            keys: self.lowest,
            at: self.lowest,
        }; 6];
        for subtree in 0..subtrees {
            let runs = Runs {
                first: group.wrapping_add(subtree * 8 / V * pitch),
                pitch,
            };
            let mut player = self.eight::<T, LAST, V>(runs, &mut watch);
            let (mut level, mut count) = (0, subtree);
            while count & 1 == 1 {
                player = self.play::<T, LAST>(stack[level], player);
                count >>= 1;
                level += 1;
            }
            stack[level] = player;
        }
        widen::<T>(stack[subtrees.trailing_zeros() as usize].at, positions);
        !T::watched_nan512(watch)
    }

    /// The winners of the first eight vectors of `runs` (of `V` vectors each).
    #[inline(always)]
    unsafe fn eight<T: Lanes, const LAST: bool, const V: usize>(
        &self,
        runs: Runs,
        watch: &mut __m512i,
    ) -> Player {
        // No closure for the leaves: it would not inherit the caller's target features.
        let first = self.four::<T, LAST, V>(runs, 0, watch);
        let second = self.four::<T, LAST, V>(runs, 4, watch);
        self.play::<T, LAST>(first, second)
    }

    /// The winners of vectors `j..j + 4` of `runs` (of `V` vectors each).
    #[inline(always)]
    unsafe fn four<T: Lanes, const LAST: bool, const V: usize>(
        &self,
        runs: Runs,
        j: usize,
        watch: &mut __m512i,
    ) -> Player {
        let a = self.leaf::<T, V>(runs, j, watch);
        let b = self.leaf::<T, V>(runs, j + 1, watch);
        let c = self.leaf::<T, V>(runs, j + 2, watch);
        let d = self.leaf::<T, V>(runs, j + 3, watch);
        self.play::<T, LAST>(self.play::<T, LAST>(a, b), self.play::<T, LAST>(c, d))
    }

    /// Vector `j` of `runs` (of `V` vectors each), the lanes outside its run the lowest key.
    #[inline(always)]
    unsafe fn leaf<T: Lanes, const V: usize>(
        &self,
        runs: Runs,
        j: usize,
        watch: &mut __m512i,
    ) -> Player {
        let (run, v) = (j / V, j % V);
        let mask = self.masks[v];
        // Only the run's bytes are read: the load is masked (no fault on the others).
        let p = runs
            .first
            .wrapping_add(run * runs.pitch + 64 * v)
            .wrapping_sub(self.before);
        let raw = _mm512_maskz_loadu_epi8(mask, p.cast());
        let keys = _mm512_mask_blend_epi8(mask, self.lowest, T::domain512(raw));
        *watch = T::nan_watch512(*watch, keys);
        Player {
            keys,
            at: self.positions[v],
        }
    }

    /// One round for a pair of vectors: each even lane against the odd lane after it.
    #[inline(always)]
    unsafe fn play<T: Lanes, const LAST: bool>(&self, a: Player, b: Player) -> Player {
        let left = permute2::<T>(a.keys, self.even, b.keys);
        let right = permute2::<T>(a.keys, self.odd, b.keys);
        let right_wins = if LAST {
            !T::gt_mask512(left, right)
        } else {
            T::gt_mask512(right, left)
        };
        let left_at = permute2::<T>(a.at, self.even, b.at);
        let right_at = permute2::<T>(a.at, self.odd, b.at);
        Player {
            keys: super::avx512::blend_lanes512::<T>(right_wins, left, right),
            at: super::avx512::blend_lanes512::<T>(right_wins, left_at, right_at),
        }
    }
}
