//! The AVX-512 variant of ArgMax's contiguous-run kernel ([`Avx512Prims`]), chosen by
//! [`crate::simd::Isa::Avx512`].
//!
//! A whole contiguous run (one output's elements, or every element of the tensor) is the
//! one place where a vector twice as wide pays: the loop is a max-reduction over many vectors,
//! bound by how fast the core loads and compares rather than by bookkeeping. It works as the
//! AVX2 run kernel does (a block at a time, its maximum first, its position only when it
//! beats the blocks before) on 512-bit vectors in the same compare domain ([`Lanes512`]), and
//! it compares 64-bit lanes natively, where AVX2 emulates the max with a compare and a blend.
//! Runs of 2- to 8-byte elements up to [`Lanes512::ONE_PASS_RUN_BYTES`] take one
//! branch-free pass instead ([`one_pass_run_argmax`]).
//! The row fold has a 512-bit form too ([`fold_rows_avx512`]): a compare into a mask register
//! and a masked blend replace AVX2's compare and byte blend, which bound the outer-axis
//! reductions of narrow types. FLOAT16 runs take their maximum from the stored bits when
//! they can ([`Lanes512::quick_block_max512`]). Groups of short runs inside another reduced
//! dimension take their maximum and its position in one function
//! ([`short_runs_argmax_avx512`]). The other inner loops (pieces, positions by key) run their
//! AVX2 bodies.

#[cfg(target_arch = "x86_64")]
use super::kernels::{
    all_lanes_max, bytes_to_boundary, fold_rows_body, max_of_pieces, run_argmax_body, Avx2Prims,
    FoldStart, FoldVectors, Piece, PortablePrims, Prims, Row, RunBlocks,
};
#[cfg(target_arch = "x86_64")]
use super::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::simd::prefetch_ahead;
#[cfg(target_arch = "x86_64")]
use crate::thresholds::{
    ARGMAX_ONE_PASS_FLOAT16_RUN_BYTES, ARGMAX_ONE_PASS_RUN_BYTES, ARGMAX_RUN_PREFETCH_BYTES,
    ARGMAX_SHORT_RUN_BYTES as SHORT_RUN_BYTES,
};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// An ArgMax element type's 512-bit operations, in the compare domain of [`Lanes`] (x86-64
/// only; elsewhere a marker every element type has).
#[cfg(target_arch = "x86_64")]
pub(crate) trait Lanes512 {
    /// The longest run of elements of 2 bytes or more that [`one_pass_run_argmax`] takes.
    const ONE_PASS_RUN_BYTES: usize = ARGMAX_ONE_PASS_RUN_BYTES;

    /// The elements `raw` (as stored) in the compare domain.
    ///
    /// # Safety
    /// AVX-512 F and BW.
    unsafe fn domain512(raw: __m512i) -> __m512i;

    /// 64 bytes at `p` in the compare domain.
    ///
    /// # Safety
    /// AVX-512 F and BW; 64 readable bytes at `p`.
    #[inline(always)]
    unsafe fn load512(p: *const u8) -> __m512i {
        Self::domain512(_mm512_loadu_si512(p.cast()))
    }

    /// The lane-wise maximum in the compare domain (either operand where they are equal).
    ///
    /// # Safety
    /// AVX-512 F and BW.
    unsafe fn max512(a: __m512i, b: __m512i) -> __m512i;

    /// Bit `i` set when lane `i` of `a` equals lane `i` of `b` in the compare domain
    /// (neither holding a NaN).
    ///
    /// # Safety
    /// AVX-512 F and BW.
    unsafe fn eq_mask512(a: __m512i, b: __m512i) -> u64;

    /// Bit `i` set when lane `i` of `a` is greater than lane `i` of `b` in the compare domain
    /// (false where either holds a NaN).
    ///
    /// # Safety
    /// AVX-512 F and BW.
    unsafe fn gt_mask512(a: __m512i, b: __m512i) -> u64;

    /// Bit `i` set when lane `i` of `v` is a NaN; 0 for types without NaN.
    ///
    /// # Safety
    /// AVX-512 F and BW.
    unsafe fn nan_mask512(v: __m512i) -> u64;

    /// `watch` updated with the vector `v` (compare domain) for [`Lanes512::watched_nan512`]:
    /// a NaN check with vector instructions only. A second mask compare per vector (after
    /// the one that picks the winning lanes) cost a one-pass kernel about 30 % of its
    /// bandwidth on an AMD Zen 4 core. Types whose compare domain orders every element
    /// (integers, and FLOAT16, whose order keys place NaN above infinity) return `watch`.
    ///
    /// # Safety
    /// AVX-512 F and BW.
    #[inline(always)]
    unsafe fn nan_watch512(watch: __m512i, _v: __m512i) -> __m512i {
        watch
    }

    /// Whether a vector given to [`Lanes512::nan_watch512`], starting from all zeros, held a
    /// NaN.
    ///
    /// # Safety
    /// AVX-512 F and BW.
    #[inline(always)]
    unsafe fn watched_nan512(_watch: __m512i) -> bool {
        false
    }

    /// The maximum of the `n` bytes (at least 64, whole elements) at `p` in the compare
    /// domain, in every lane of a 256-bit vector, when a pass cheaper than
    /// [`Lanes512::domain512`] on every vector decides it; None when it does not (a NaN, or
    /// the type has no such pass), and the caller takes the general one.
    ///
    /// # Safety
    /// AVX-512 F and BW; `n >= 64` readable bytes at `p`.
    #[inline(always)]
    unsafe fn quick_block_max512(_p: *const u8, _n: usize) -> Option<__m256i> {
        None
    }
}

/// A marker every element type has (no AVX-512 off x86-64).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) trait Lanes512 {}

#[cfg(not(target_arch = "x86_64"))]
impl<T> Lanes512 for T {}

/// Integer types whose compare domain is signed: `$flip` is XORed in on load (the sign bit
/// for unsigned types, 0 for signed ones).
macro_rules! integer_lanes512 {
    ($t:ty, $s:ty, $flip:expr, $set1:ident, $cmpeq:ident, $cmpgt:ident, $max:ident) => {
        #[cfg(target_arch = "x86_64")]
        impl Lanes512 for $t {
            #[inline(always)]
            unsafe fn domain512(v: __m512i) -> __m512i {
                if $flip == 0 {
                    v
                } else {
                    _mm512_xor_si512(v, $set1($flip as $s as _))
                }
            }

            #[inline(always)]
            unsafe fn max512(a: __m512i, b: __m512i) -> __m512i {
                $max(a, b)
            }

            #[inline(always)]
            unsafe fn eq_mask512(a: __m512i, b: __m512i) -> u64 {
                $cmpeq(a, b) as u64
            }

            #[inline(always)]
            unsafe fn gt_mask512(a: __m512i, b: __m512i) -> u64 {
                $cmpgt(a, b) as u64
            }

            #[inline(always)]
            unsafe fn nan_mask512(_: __m512i) -> u64 {
                0
            }
        }
    };
}

integer_lanes512!(
    i8,
    i8,
    0,
    _mm512_set1_epi8,
    _mm512_cmpeq_epi8_mask,
    _mm512_cmpgt_epi8_mask,
    _mm512_max_epi8
);
integer_lanes512!(
    u8,
    i8,
    0x80u8 as i8,
    _mm512_set1_epi8,
    _mm512_cmpeq_epi8_mask,
    _mm512_cmpgt_epi8_mask,
    _mm512_max_epi8
);
integer_lanes512!(
    i16,
    i16,
    0,
    _mm512_set1_epi16,
    _mm512_cmpeq_epi16_mask,
    _mm512_cmpgt_epi16_mask,
    _mm512_max_epi16
);
integer_lanes512!(
    u16,
    i16,
    0x8000u16 as i16,
    _mm512_set1_epi16,
    _mm512_cmpeq_epi16_mask,
    _mm512_cmpgt_epi16_mask,
    _mm512_max_epi16
);
integer_lanes512!(
    i32,
    i32,
    0,
    _mm512_set1_epi32,
    _mm512_cmpeq_epi32_mask,
    _mm512_cmpgt_epi32_mask,
    _mm512_max_epi32
);
integer_lanes512!(
    u32,
    i32,
    0x8000_0000u32 as i32,
    _mm512_set1_epi32,
    _mm512_cmpeq_epi32_mask,
    _mm512_cmpgt_epi32_mask,
    _mm512_max_epi32
);
integer_lanes512!(
    i64,
    i64,
    0,
    _mm512_set1_epi64,
    _mm512_cmpeq_epi64_mask,
    _mm512_cmpgt_epi64_mask,
    _mm512_max_epi64
);
integer_lanes512!(
    u64,
    i64,
    0x8000_0000_0000_0000u64 as i64,
    _mm512_set1_epi64,
    _mm512_cmpeq_epi64_mask,
    _mm512_cmpgt_epi64_mask,
    _mm512_max_epi64
);

#[cfg(target_arch = "x86_64")]
impl Lanes512 for f32 {
    #[inline(always)]
    unsafe fn domain512(raw: __m512i) -> __m512i {
        raw
    }

    #[inline(always)]
    unsafe fn max512(a: __m512i, b: __m512i) -> __m512i {
        _mm512_castps_si512(_mm512_max_ps(
            _mm512_castsi512_ps(a),
            _mm512_castsi512_ps(b),
        ))
    }

    #[inline(always)]
    unsafe fn eq_mask512(a: __m512i, b: __m512i) -> u64 {
        u64::from(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(
            _mm512_castsi512_ps(a),
            _mm512_castsi512_ps(b),
        ))
    }

    #[inline(always)]
    unsafe fn gt_mask512(a: __m512i, b: __m512i) -> u64 {
        u64::from(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(
            _mm512_castsi512_ps(a),
            _mm512_castsi512_ps(b),
        ))
    }

    #[inline(always)]
    unsafe fn nan_mask512(v: __m512i) -> u64 {
        let v = _mm512_castsi512_ps(v);
        u64::from(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v))
    }

    /// The largest magnitude's bits so far: a NaN's are above infinity's.
    #[inline(always)]
    unsafe fn nan_watch512(watch: __m512i, v: __m512i) -> __m512i {
        _mm512_max_epu32(watch, _mm512_and_si512(v, _mm512_set1_epi32(0x7fff_ffff)))
    }

    #[inline(always)]
    unsafe fn watched_nan512(watch: __m512i) -> bool {
        _mm512_cmpgt_epu32_mask(watch, _mm512_set1_epi32(0x7f80_0000)) != 0
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes512 for f64 {
    #[inline(always)]
    unsafe fn domain512(raw: __m512i) -> __m512i {
        raw
    }

    #[inline(always)]
    unsafe fn max512(a: __m512i, b: __m512i) -> __m512i {
        _mm512_castpd_si512(_mm512_max_pd(
            _mm512_castsi512_pd(a),
            _mm512_castsi512_pd(b),
        ))
    }

    #[inline(always)]
    unsafe fn eq_mask512(a: __m512i, b: __m512i) -> u64 {
        u64::from(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(
            _mm512_castsi512_pd(a),
            _mm512_castsi512_pd(b),
        ))
    }

    #[inline(always)]
    unsafe fn gt_mask512(a: __m512i, b: __m512i) -> u64 {
        u64::from(_mm512_cmp_pd_mask::<_CMP_GT_OQ>(
            _mm512_castsi512_pd(a),
            _mm512_castsi512_pd(b),
        ))
    }

    #[inline(always)]
    unsafe fn nan_mask512(v: __m512i) -> u64 {
        let v = _mm512_castsi512_pd(v);
        u64::from(_mm512_cmp_pd_mask::<_CMP_UNORD_Q>(v, v))
    }

    /// The largest magnitude's bits so far: a NaN's are above infinity's.
    #[inline(always)]
    unsafe fn nan_watch512(watch: __m512i, v: __m512i) -> __m512i {
        _mm512_max_epu64(watch, _mm512_and_si512(v, _mm512_set1_epi64(i64::MAX)))
    }

    #[inline(always)]
    unsafe fn watched_nan512(watch: __m512i) -> bool {
        _mm512_cmpgt_epu64_mask(watch, _mm512_set1_epi64(0x7ff0_0000_0000_0000)) != 0
    }
}

/// FLOAT16 compares as its order key ([`crate::element::OrderKey`]), which orders NaN too:
/// the magnitude, negated when the sign is set, every NaN clamped to infinity + 1 (as the
/// AVX2 `f16_keys`).
#[cfg(target_arch = "x86_64")]
impl Lanes512 for half::f16 {
    /// Order keys cost the one pass more than the run-block kernel's maximum of the stored
    /// bits ([`Lanes512::quick_block_max512`]) in longer runs.
    const ONE_PASS_RUN_BYTES: usize = ARGMAX_ONE_PASS_FLOAT16_RUN_BYTES;

    #[inline(always)]
    unsafe fn domain512(bits: __m512i) -> __m512i {
        let magnitude = _mm512_and_si512(bits, _mm512_set1_epi16(0x7fff));
        let nan = _mm512_cmpgt_epi16_mask(magnitude, _mm512_set1_epi16(0x7c00));
        let sign = _mm512_maskz_srai_epi16::<15>(!nan, bits);
        let clamped = _mm512_min_epi16(magnitude, _mm512_set1_epi16(0x7c01));
        _mm512_sub_epi16(_mm512_xor_si512(clamped, sign), sign)
    }

    #[inline(always)]
    unsafe fn max512(a: __m512i, b: __m512i) -> __m512i {
        _mm512_max_epi16(a, b)
    }

    #[inline(always)]
    unsafe fn eq_mask512(a: __m512i, b: __m512i) -> u64 {
        u64::from(_mm512_cmpeq_epi16_mask(a, b))
    }

    #[inline(always)]
    unsafe fn gt_mask512(a: __m512i, b: __m512i) -> u64 {
        u64::from(_mm512_cmpgt_epi16_mask(a, b))
    }

    #[inline(always)]
    unsafe fn quick_block_max512(p: *const u8, n: usize) -> Option<__m256i> {
        f16_block_max_by_bits(p, n)
    }

    #[inline(always)]
    unsafe fn nan_mask512(_: __m512i) -> u64 {
        0
    }
}

/// [`Lanes512::quick_block_max512`] for FLOAT16: the maximum found from the stored bits, with
/// two instructions per vector instead of the order key's seven (FLOAT16 {4096, 16384} axis 1
/// on one AMD EPYC core: 6.5 -> 4.6 ms, the floor 4.0). As signed 16-bit integers, the bits of
/// the values with a clear sign bit order as their order keys (NaNs above infinity); as
/// unsigned ones, those with a set sign bit order by magnitude (negative NaNs above -infinity).
/// So the signed maximum `s` and the unsigned maximum `u` of the bits decide a block that
/// holds no NaN (`s <= 0x7c00`, `u <= 0xfc00`) and some value with a clear sign bit (`s >= 0`):
/// its maximum is `s`. When every sign bit is set, a second pass over the block (still in the
/// L1 cache) finds the smallest magnitude, whose negation is the maximum (-0.0 gives 0, the
/// key of both zeros). Each line is prefetched [`ARGMAX_RUN_PREFETCH_BYTES`] ahead as it is
/// read, and loads are aligned as in [`block_max`].
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `n >= 64` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn f16_block_max_by_bits(p: *const u8, n: usize) -> Option<__m256i> {
    let first = _mm512_loadu_si512(p.cast());
    let skew = bytes_to_boundary::<half::f16>(p, 64);
    let q = p.add(skew);
    let rest = n - skew;
    let whole = rest / 64;
    let vector = |j: usize| {
        if j < whole {
            q.add(j * 64)
        } else {
            p.add(n - 64)
        }
    };
    let (mut signed, mut high) = ([first; 2], [first; 2]);
    let mut j = 0;
    while j + 2 <= whole {
        for k in 0..2 {
            prefetch_ahead(q.add((j + k) * 64), ARGMAX_RUN_PREFETCH_BYTES);
            let v = _mm512_loadu_si512(q.add((j + k) * 64).cast());
            signed[k] = _mm512_max_epi16(v, signed[k]);
            high[k] = _mm512_max_epu16(v, high[k]);
        }
        j += 2;
    }
    while j < rest.div_ceil(64) {
        let v = _mm512_loadu_si512(vector(j).cast());
        signed[0] = _mm512_max_epi16(v, signed[0]);
        high[0] = _mm512_max_epu16(v, high[0]);
        j += 1;
    }
    let signed = _mm512_max_epi16(signed[0], signed[1]);
    let high = _mm512_max_epu16(high[0], high[1]);
    let negative_nan = _mm512_cmpgt_epu16_mask(high, _mm512_set1_epi16(0xfc00u16 as i16));
    let s = lane_zero(all_lanes_max::<i16>(_mm256_max_epi16(
        _mm512_castsi512_si256(signed),
        _mm512_extracti64x4_epi64::<1>(signed),
    )));
    if negative_nan != 0 || s > 0x7c00 {
        return None;
    }
    if s >= 0 {
        return Some(_mm256_set1_epi16(s));
    }
    // Every value has its sign set: the maximum is the smallest magnitude, found in a second
    // pass over the block (a few KiB, still in the L1 cache).
    let mut low = first;
    for j in 0..rest.div_ceil(64) {
        low = _mm512_min_epu16(_mm512_loadu_si512(vector(j).cast()), low);
    }
    let low = _mm256_min_epu16(
        _mm512_castsi512_si256(low),
        _mm512_extracti64x4_epi64::<1>(low),
    );
    let m = _mm_extract_epi16::<0>(_mm_minpos_epu16(_mm_min_epu16(
        _mm256_castsi256_si128(low),
        _mm256_extracti128_si256::<1>(low),
    ))) as u16;
    Some(_mm256_set1_epi16(-((m & 0x7fff) as i16)))
}

/// Lane 0 of `v` as a signed 16-bit integer.
///
/// # Safety
/// AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn lane_zero(v: __m256i) -> i16 {
    _mm_extract_epi16::<0>(_mm256_castsi256_si128(v)) as i16
}

/// The AVX-512 inner loops (x86-64): contiguous runs with 512-bit vectors, the rest AVX2.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx512Prims;

#[cfg(target_arch = "x86_64")]
impl Prims for Avx512Prims {
    #[inline(always)]
    unsafe fn piece_max<T: Lanes>(data: &[u8], piece: Piece) -> T::Key {
        // SAFETY: AVX-512 F implies AVX2.
        unsafe { Avx2Prims::piece_max::<T>(data, piece) }
    }

    #[inline(always)]
    unsafe fn locate<T: Lanes, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize> {
        // SAFETY: AVX-512 F implies AVX2.
        unsafe { Avx2Prims::locate::<T, LAST>(bytes, key) }
    }

    #[inline(always)]
    unsafe fn run_argmax<T: Lanes, const LAST: bool>(
        data: &[u8],
        start: usize,
        len: usize,
    ) -> usize {
        let bytes = &data[start..start + len];
        let found = if len <= 64 {
            // SAFETY: the caller runs with AVX-512 F and BW; 1 to 64 bytes (the run is not
            // empty: its caller's contract).
            unsafe { tiny_run_argmax::<T, LAST>(bytes.as_ptr(), len) }
        } else if len <= SMALL_RUN_BYTES {
            // SAFETY: the caller runs with AVX-512 F and BW; 65 to 256 bytes.
            unsafe { small_run_argmax::<T, LAST>(bytes.as_ptr(), len) }
        } else if len <= medium_run_bytes::<T>() {
            // SAFETY: the caller runs with AVX-512 F and BW; 257 to 512 bytes.
            unsafe { medium_run_argmax::<T, LAST>(bytes.as_ptr(), len) }
        } else if T::SIZE >= 2 && len <= T::ONE_PASS_RUN_BYTES {
            // SAFETY: the caller runs with AVX-512 F and BW; elements of 2, 4 or 8 bytes,
            // more than 384 bytes, fewer than 2^16 elements.
            unsafe { one_pass_run_argmax::<T, LAST>(bytes.as_ptr(), len) }
        } else {
            // SAFETY: the caller runs with AVX-512 F and BW; more than 64 bytes.
            unsafe { run_argmax_body::<T, LAST, Avx512Prims>(bytes) }
        };
        match found {
            Some(p) => p,
            // A NaN: the compare domain does not order it (the AVX2 kernels would meet it
            // too); the run is redone with exact keys.
            // SAFETY: the portable loops need no instruction set.
            None => unsafe { PortablePrims::run_argmax::<T, LAST>(data, start, len) },
        }
    }
}

/// The position of the first (or, with `LAST`, the last) maximum of the `n` bytes (whole
/// elements, 1 to 64) at `p`, with one masked load: the lanes past the run are set to the
/// lowest value, and the lanes equal to the maximum give the position. None when a NaN
/// appears. A masked load reads no byte past the run, so any run this short takes it.
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `1 <= n <= 64` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tiny_run_argmax<T: Lanes, const LAST: bool>(p: *const u8, n: usize) -> Option<usize> {
    let run_bytes = u64::MAX >> (64 - n);
    let raw = _mm512_maskz_loadu_epi8(run_bytes, p.cast());
    let lowest = _mm512_broadcast_i64x4(T::lowest());
    let v = _mm512_mask_blend_epi8(run_bytes, lowest, T::domain512(raw));
    if T::nan_mask512(v) != 0 {
        return None;
    }
    let halves = T::max512(v, _mm512_shuffle_i64x2::<0b01_00_11_10>(v, v));
    let max = all_lanes_max::<T>(_mm512_castsi512_si256(halves));
    let run_lanes = u64::MAX >> (64 - n / T::SIZE);
    let winners = T::eq_mask512(v, _mm512_broadcast_i64x4(max)) & run_lanes;
    Some(if LAST {
        63 - winners.leading_zeros() as usize
    } else {
        winners.trailing_zeros() as usize
    })
}

/// The longest run [`small_run_argmax`] takes: four vectors.
const SMALL_RUN_BYTES: usize = 256;

/// The position of the first (or, with `LAST`, the last) maximum of the `n` bytes (whole
/// elements, 65 to [`SMALL_RUN_BYTES`]) at `p`, as [`tiny_run_argmax`] does for one vector:
/// up to four vectors in registers, the last one a masked load, one maximum over them all,
/// then the first (last) vector holding it. None when a NaN appears. The run-block kernel
/// (blocks, a second pass to locate, alignment) took about 14 ns a run of 90 bytes: ArgMax
/// UINT8 `[150958, 90]` over axis 1 took 2.1 ms on one thread, 1.4 ms with this.
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `64 < n <= 256` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn small_run_argmax<T: Lanes, const LAST: bool>(p: *const u8, n: usize) -> Option<usize> {
    let vectors = n.div_ceil(64);
    let tail = n - 64 * (vectors - 1);
    let tail_bytes = u64::MAX >> (64 - tail);
    let lowest = _mm512_broadcast_i64x4(T::lowest());
    // Vectors: whole ones, the masked last one (its lanes past the run the lowest value), and
    // past the run all lowest. Named one by one and chosen by `vectors` (the same for every
    // run of an output), with no closure (it would not take the caller's AVX-512 features:
    // its intrinsics were calls, 44 ns a run) and no array indexed in a loop (kept in memory).
    let raw = _mm512_maskz_loadu_epi8(tail_bytes, p.add(64 * (vectors - 1)).cast());
    let last = _mm512_mask_blend_epi8(tail_bytes, lowest, T::domain512(raw));
    let v0 = T::domain512(_mm512_loadu_si512(p.cast()));
    let (v1, v2, v3) = match vectors {
        2 => (last, lowest, lowest),
        3 => (
            T::domain512(_mm512_loadu_si512(p.add(64).cast())),
            last,
            lowest,
        ),
        _ => (
            T::domain512(_mm512_loadu_si512(p.add(64).cast())),
            T::domain512(_mm512_loadu_si512(p.add(128).cast())),
            last,
        ),
    };
    if T::CAN_NAN
        && (T::nan_mask512(v0) | T::nan_mask512(v1) | T::nan_mask512(v2) | T::nan_mask512(v3)) != 0
    {
        return None;
    }
    let all = T::max512(T::max512(v0, v1), T::max512(v2, v3));
    let max = _mm512_broadcast_i64x4(all_lanes_max512::<T>(all));
    // Only the run's lanes win (the padding may equal the maximum).
    let lanes = 64 / T::SIZE;
    let whole_lanes = u64::MAX >> (64 - lanes);
    let tail_lanes = u64::MAX >> (64 - tail / T::SIZE);
    let (r1, r2, r3) = match vectors {
        2 => (tail_lanes, 0, 0),
        3 => (whole_lanes, tail_lanes, 0),
        _ => (whole_lanes, whole_lanes, tail_lanes),
    };
    let winners = [
        T::eq_mask512(v0, max),
        T::eq_mask512(v1, max) & r1,
        T::eq_mask512(v2, max) & r2,
        T::eq_mask512(v3, max) & r3,
    ];
    winning_lane::<LAST, 4>(winners, lanes)
}

/// The first (or, with `LAST`, the last) lane equal to the maximum, from each vector's mask
/// of such lanes (`winners`, vectors of `lanes` lanes in run order); None when none is. The
/// vector is found without a branch: which one holds the maximum is random, and a branch on
/// it mispredicted every other run.
#[inline(always)]
fn winning_lane<const LAST: bool, const VECTORS: usize>(
    winners: [u64; VECTORS],
    lanes: usize,
) -> Option<usize> {
    let mut holders = 0u32;
    for (k, &lanes_won) in winners.iter().enumerate() {
        holders |= u32::from(lanes_won != 0) << k;
    }
    if holders == 0 {
        return None;
    }
    Some(if LAST {
        let k = 31 - holders.leading_zeros() as usize;
        k * lanes + 63 - winners[k].leading_zeros() as usize
    } else {
        let k = holders.trailing_zeros() as usize;
        k * lanes + winners[k].trailing_zeros() as usize
    })
}

/// The longest run [`medium_run_argmax`] takes for elements of `T`: eight vectors of
/// floating-point elements of 4 bytes or more, six of the others. Longer runs go to
/// [`one_pass_run_argmax`] (elements of 2 bytes or more) or the run-block kernel. At seven
/// and eight vectors this kernel won only where the block kernel also tests for NaNs (one
/// thread, medians of 15, block kernel → this: FLOAT32 runs of 112 elements 2.17 → 1.68 ms,
/// of 128 2.09 → 1.77; INT32 runs of 112 1.93 → 2.16, INT64 runs of 64 1.82 → 2.3–2.5;
/// FLOAT16 runs of 250 2.70 → 2.73).
#[cfg(target_arch = "x86_64")]
fn medium_run_bytes<T: Lanes>() -> usize {
    if T::CAN_NAN && T::SIZE >= 4 {
        512
    } else {
        384
    }
}

/// [`small_run_argmax`] for runs of five to eight vectors (257 to [`medium_run_bytes`]
/// bytes): four whole vectors, then up to four more, the last one a masked load. The
/// run-block kernel's second pass (a branch per vector to find the one holding the maximum)
/// took about 19 ns a run of 276 bytes: INT32 `[11, 3, 2148, 69, 1]` over axis 3 took 1.38 ms
/// on one thread, 0.68–0.73 with this; FLOAT32 `[200000, 100]` over axis 1 4.53 → 3.33 ms,
/// UINT8 `[150000, 300]` 3.72 → 1.52, INT32 `[120000, 80]` 2.25 → 1.38, INT64 `[120000, 40]`
/// 2.99 → 1.56 (medians of 15, the cache flushed between calls).
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `256 < n <= 512` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn medium_run_argmax<T: Lanes, const LAST: bool>(p: *const u8, n: usize) -> Option<usize> {
    let vectors = n.div_ceil(64);
    let tail = n - 64 * (vectors - 1);
    let tail_bytes = u64::MAX >> (64 - tail);
    let lowest = _mm512_broadcast_i64x4(T::lowest());
    // A macro, not a closure: a closure would not take the caller's AVX-512 features.
    macro_rules! load {
        ($k:expr) => {
            T::domain512(_mm512_loadu_si512(p.add(64 * $k).cast()))
        };
    }
    let (v0, v1, v2, v3) = (load!(0), load!(1), load!(2), load!(3));
    let raw = _mm512_maskz_loadu_epi8(tail_bytes, p.add(64 * (vectors - 1)).cast());
    let last = _mm512_mask_blend_epi8(tail_bytes, lowest, T::domain512(raw));
    // As in `small_run_argmax`: named vectors chosen by `vectors` (the same for every run of
    // an output), no array indexed in a loop.
    let (v4, v5, v6, v7) = match vectors {
        5 => (last, lowest, lowest, lowest),
        6 => (load!(4), last, lowest, lowest),
        7 => (load!(4), load!(5), last, lowest),
        _ => (load!(4), load!(5), load!(6), last),
    };
    if T::CAN_NAN {
        let nans = T::nan_mask512(v0)
            | T::nan_mask512(v1)
            | T::nan_mask512(v2)
            | T::nan_mask512(v3)
            | T::nan_mask512(v4)
            | T::nan_mask512(v5)
            | T::nan_mask512(v6)
            | T::nan_mask512(v7);
        if nans != 0 {
            return None;
        }
    }
    let low = T::max512(T::max512(v0, v1), T::max512(v2, v3));
    let high = T::max512(T::max512(v4, v5), T::max512(v6, v7));
    let max = _mm512_broadcast_i64x4(all_lanes_max512::<T>(T::max512(low, high)));
    // Only the run's lanes win (the padding may equal the maximum).
    let lanes = 64 / T::SIZE;
    let whole_lanes = u64::MAX >> (64 - lanes);
    let tail_lanes = u64::MAX >> (64 - tail / T::SIZE);
    let (r4, r5, r6, r7) = match vectors {
        5 => (tail_lanes, 0, 0, 0),
        6 => (whole_lanes, tail_lanes, 0, 0),
        7 => (whole_lanes, whole_lanes, tail_lanes, 0),
        _ => (whole_lanes, whole_lanes, whole_lanes, tail_lanes),
    };
    let winners = [
        T::eq_mask512(v0, max),
        T::eq_mask512(v1, max),
        T::eq_mask512(v2, max),
        T::eq_mask512(v3, max),
        T::eq_mask512(v4, max) & r4,
        T::eq_mask512(v5, max) & r5,
        T::eq_mask512(v6, max) & r6,
        T::eq_mask512(v7, max) & r7,
    ];
    winning_lane::<LAST, 8>(winners, lanes)
}

/// The position of the first (or, with `LAST`, the last) maximum of the `n` bytes (whole
/// elements of 2, 4 or 8 bytes, more than four vectors) at `p`, in one pass with no branch on
/// the data: four running maxima, each lane with the position of the element it holds, then
/// the lowest (highest) position among the lanes that hold the overall maximum. None when a
/// NaN appears ([`Lanes512::watched_nan512`]). Runs up to [`Lanes512::ONE_PASS_RUN_BYTES`].
///
/// The run-block kernel (the maximum, then a second pass that stops at the vector holding
/// it) mispredicted that stop about once a run, and the next run's loads waited for it: one
/// AMD EPYC Zen 4 core, libraries alternated, medians of 15, ms, FLOAT32 over axis 1
/// `[60000, 500]` 7.8–13.3 → 4.2 (by the build's code layout; numpy 5.1), `[30000, 1000]`
/// 5.1–8.9 → 4.2, `[120000, 250]` 5.5 → 4.3, `[15000, 2000]` 4.8–5.8 → 4.3; INT64
/// `[60000, 200]` 4.3 → 3.4 (numpy 4.7).
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `T::SIZE` is 2, 4 or 8; `256 < n` readable bytes
/// at `p`, `n / T::SIZE` below 2^16.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn one_pass_run_argmax<T: Lanes, const LAST: bool>(p: *const u8, n: usize) -> Option<usize> {
    // As in `block_max`: the first vector at `p`, then whole lines from the first line
    // boundary, then the last vector ending at the run's end. A lane's `from` is the element
    // position of its vector's first lane, so a lane read twice keeps its position.
    let skew = bytes_to_boundary::<T>(p, 64);
    let q = p.add(skew);
    let whole = (n - skew) / 64;
    let at = |j: usize| (skew + j * 64) / T::SIZE;
    // Named running maxima and positions, not arrays: an array indexed in the unrolled loop
    // was kept in memory, a store per vector.
    let (mut b0, mut b1, mut b2, mut b3) = (
        T::load512(p),
        T::load512(q),
        T::load512(q.add(64)),
        T::load512(q.add(128)),
    );
    // Every lane of a vector set to element position `j` (below 2^16: the caller's bound).
    macro_rules! splat {
        ($j:expr) => {
            _mm512_broadcast_i64x4(T::splat_index($j as u32))
        };
    }
    let (mut f0, mut f1, mut f2, mut f3) = (splat!(0), splat!(at(0)), splat!(at(1)), splat!(at(2)));
    let mut nans = _mm512_setzero_si512();
    for v in [b0, b1, b2, b3] {
        nans = T::nan_watch512(nans, v);
    }
    // A macro, not a closure: a closure would not take the caller's AVX-512 features.
    macro_rules! offer {
        ($best:ident, $from:ident, $v:expr, $at:expr) => {{
            let v = $v;
            nans = T::nan_watch512(nans, v);
            let wins = if LAST {
                !T::gt_mask512($best, v)
            } else {
                T::gt_mask512(v, $best)
            };
            $best = blend_lanes512::<T>(wins, $best, v);
            $from = blend_lanes512::<T>(wins, $from, splat!($at));
        }};
    }
    let mut j = 3;
    while j + 4 <= whole {
        let r = q.add(j * 64);
        prefetch_ahead(r, ARGMAX_RUN_PREFETCH_BYTES);
        offer!(b0, f0, T::load512(r), at(j));
        prefetch_ahead(r.add(64), ARGMAX_RUN_PREFETCH_BYTES);
        offer!(b1, f1, T::load512(r.add(64)), at(j + 1));
        prefetch_ahead(r.add(128), ARGMAX_RUN_PREFETCH_BYTES);
        offer!(b2, f2, T::load512(r.add(128)), at(j + 2));
        prefetch_ahead(r.add(192), ARGMAX_RUN_PREFETCH_BYTES);
        offer!(b3, f3, T::load512(r.add(192)), at(j + 3));
        j += 4;
    }
    while j < whole {
        offer!(b0, f0, T::load512(q.add(j * 64)), at(j));
        j += 1;
    }
    if skew + whole * 64 < n {
        offer!(b0, f0, T::load512(p.add(n - 64)), (n - 64) / T::SIZE);
    }
    if T::watched_nan512(nans) {
        return None;
    }
    let all = T::max512(T::max512(b0, b1), T::max512(b2, b3));
    let max = _mm512_broadcast_i64x4(all_lanes_max512::<T>(all));
    let holders = [
        T::eq_mask512(b0, max),
        T::eq_mask512(b1, max),
        T::eq_mask512(b2, max),
        T::eq_mask512(b3, max),
    ];
    Some(extreme_position::<T, LAST>(holders, [f0, f1, f2, f3]))
}

// A run's positions fit the 16-bit lanes of 2-byte elements.
#[cfg(target_arch = "x86_64")]
const _: () = assert!(ARGMAX_ONE_PASS_RUN_BYTES / 2 <= u16::MAX as usize);

/// The lowest (or, with `LAST`, the highest) element position among the lanes set in
/// `holders` (one mask per vector of `from`): a lane's position is its `from` (lanes of
/// `T::SIZE` bytes, 2, 4 or 8, the position of the vector's first lane) plus the lane. Some
/// lane is set.
///
/// # Safety
/// AVX-512 F; `T::SIZE` is 2, 4 or 8.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn extreme_position<T: Lanes, const LAST: bool>(
    holders: [u64; 4],
    from: [__m512i; 4],
) -> usize {
    // Per lane, the lowest (highest) position held: one macro for the three lane widths.
    macro_rules! pick {
        ($lane:expr, $set1:ident, $add:ident, $max:ident, $min:ident, $mask:ty) => {{
            let mut pick = $set1(if LAST { 0 } else { -1 });
            for (mask, from) in holders.into_iter().zip(from) {
                let at = $add(from, $lane);
                pick = if LAST {
                    $max(pick, mask as $mask, pick, at)
                } else {
                    $min(pick, mask as $mask, pick, at)
                };
            }
            pick
        }};
    }
    if T::SIZE == 2 {
        let lane = _mm512_loadu_si512(LANE_NUMBERS_16.as_ptr().cast());
        let mut pick = pick!(
            lane,
            _mm512_set1_epi16,
            _mm512_add_epi16,
            _mm512_mask_max_epu16,
            _mm512_mask_min_epu16,
            u32
        );
        // The lowest of 32 lanes through `phminposuw` (the highest as the lowest complement).
        if LAST {
            pick = _mm512_xor_si512(pick, _mm512_set1_epi16(-1));
        }
        let half = _mm256_min_epu16(
            _mm512_castsi512_si256(pick),
            _mm512_extracti64x4_epi64::<1>(pick),
        );
        let quarter = _mm_min_epu16(
            _mm256_castsi256_si128(half),
            _mm256_extracti128_si256::<1>(half),
        );
        let lowest = _mm_extract_epi16::<0>(_mm_minpos_epu16(quarter)) as u16;
        usize::from(if LAST { !lowest } else { lowest })
    } else if T::SIZE == 4 {
        let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let pick = pick!(
            lane,
            _mm512_set1_epi32,
            _mm512_add_epi32,
            _mm512_mask_max_epu32,
            _mm512_mask_min_epu32,
            u16
        );
        (if LAST {
            _mm512_reduce_max_epu32(pick)
        } else {
            _mm512_reduce_min_epu32(pick)
        }) as usize
    } else {
        let lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        let pick = pick!(
            lane,
            _mm512_set1_epi64,
            _mm512_add_epi64,
            _mm512_mask_max_epu64,
            _mm512_mask_min_epu64,
            u8
        );
        (if LAST {
            _mm512_reduce_max_epu64(pick)
        } else {
            _mm512_reduce_min_epu64(pick)
        }) as usize
    }
}

/// 0 to 31, the lanes of a vector of 16-bit lanes ([`extreme_position`]).
#[cfg(target_arch = "x86_64")]
static LANE_NUMBERS_16: [u16; 32] = {
    let mut lanes = [0u16; 32];
    let mut i = 0;
    while i < 32 {
        lanes[i] = i as u16;
        i += 1;
    }
    lanes
};

/// [`Prims::run_argmax`] with AVX-512 (for tests, which call every instruction set).
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
#[cfg(all(test, target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn run_argmax_avx512<T: Lanes, const LAST: bool>(
    data: &[u8],
    start: usize,
    len: usize,
) -> usize {
    Avx512Prims::run_argmax::<T, LAST>(data, start, len)
}

#[cfg(target_arch = "x86_64")]
impl RunBlocks for Avx512Prims {
    const VECTOR: usize = 64;

    #[inline(always)]
    unsafe fn max_of_block<T: Lanes>(p: *const u8, n: usize) -> (__m256i, bool) {
        block_max::<T>(p, n)
    }

    #[inline(always)]
    unsafe fn position_in_block<T: Lanes, const LAST: bool>(
        p: *const u8,
        n: usize,
        max: __m256i,
    ) -> usize {
        locate_in_block::<T, LAST>(p, n, _mm512_broadcast_i64x4(max))
    }
}

/// The maximum of the `n` bytes (at least 64, whole elements) at `p` in every lane of a
/// 256-bit vector, in the compare domain, and whether a NaN appeared: four running maxima,
/// the last vector overlapping the one before, folded to 256 bits for the AVX2 lane
/// reduction. Each line is prefetched [`ARGMAX_RUN_PREFETCH_BYTES`] ahead as it is read.
///
/// Loads are aligned to 64 bytes (a cache line) where the elements allow it: the first
/// vector is read at `p`, and the others from the first line boundary after it, so that no
/// later load straddles two lines. A max-reduction may read an element twice.
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `n >= 64` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block_max<T: Lanes>(p: *const u8, n: usize) -> (__m256i, bool) {
    if let Some(max) = T::quick_block_max512(p, n) {
        return (max, false);
    }
    let first = T::load512(p);
    let mut nan = if T::CAN_NAN { T::nan_mask512(first) } else { 0 };
    // Bytes read by the first vector before the next line boundary.
    let skew = bytes_to_boundary::<T>(p, 64);
    let q = p.add(skew);
    let rest = n - skew;
    let whole = rest / 64;
    let mut acc = [first; 4];
    let mut j = 0;
    while j + 4 <= whole {
        for (k, acc) in acc.iter_mut().enumerate() {
            prefetch_ahead(q.add((j + k) * 64), ARGMAX_RUN_PREFETCH_BYTES);
            let v = T::load512(q.add((j + k) * 64));
            *acc = T::max512(v, *acc);
            if T::CAN_NAN {
                nan |= T::nan_mask512(v);
            }
        }
        j += 4;
    }
    while j < rest.div_ceil(64) {
        let v = T::load512(if j < whole {
            q.add(j * 64)
        } else {
            p.add(n - 64)
        });
        // One fixed accumulator: an index computed at run time would keep all four in
        // memory, each step waiting on the store before it.
        acc[0] = T::max512(v, acc[0]);
        if T::CAN_NAN {
            nan |= T::nan_mask512(v);
        }
        j += 1;
    }
    let all = T::max512(T::max512(acc[0], acc[1]), T::max512(acc[2], acc[3]));
    (all_lanes_max512::<T>(all), nan != 0)
}

/// [`super::kernels::block_max`] with AVX-512: the maximum key of the elements of `pieces`
/// (at least one, none empty) of `data`, a NaN's key if one appears. Pieces of a vector or
/// more go through [`block_max`], which reads them a line at a time and prefetches ahead;
/// each stretch of shorter ones through one call of the AVX2 body. The AVX2 loop alone (no
/// prefetch) held a reduction of every element of FLOAT32 {4096, 16384} on two Intel cores
/// to the speed of one.
///
/// # Safety
/// The CPU must support AVX-512 F and BW, and AVX2; every piece must lie inside `data`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
pub(crate) unsafe fn pieces_max_avx512<T: Lanes>(data: &[u8], pieces: &[Piece]) -> T::Key {
    let is_short = |p: &Piece| p.len * T::SIZE < 64;
    let mut wide: Option<__m256i> = None;
    let mut short = T::MIN_KEY;
    let mut i = 0;
    while i < pieces.len() {
        if is_short(&pieces[i]) {
            let end = pieces[i..]
                .iter()
                .position(|p| !is_short(p))
                .map_or(pieces.len(), |k| i + k);
            short = short.max(max_of_pieces::<T>(data, &pieces[i..end]));
            i = end;
            continue;
        }
        let piece = &pieces[i];
        let (max, nan) = block_max::<T>(
            data.as_ptr().add(piece.start * T::SIZE),
            piece.len * T::SIZE,
        );
        if nan {
            return T::nan_key();
        }
        wide = Some(wide.map_or(max, |w| T::max(w, max)));
        i += 1;
    }
    let Some(wide) = wide else {
        return short;
    };
    let mut lanes = [0u8; 32];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), wide);
    short.max(T::lane_key(&lanes[..T::SIZE]))
}

/// The maximum of the lanes of `v` (compare domain) in every lane of a 256-bit vector: its
/// halves folded, then the AVX2 lane reduction.
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn all_lanes_max512<T: Lanes>(v: __m512i) -> __m256i {
    let half = T::max(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v));
    all_lanes_max::<T>(half)
}

/// The greatest key of the 64 bytes at `p` (lanes of `T` in the compare domain, no NaN) and
/// the lanes holding it (bit `i` for lane `i`): [`super::kernels::max_lanes`] for one 64-byte
/// vector, the lanes as a mask rather than a call each.
///
/// # Safety
/// The CPU must support AVX-512 F and BW; 64 readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn vector_max_lanes_avx512<T: Lanes>(p: *const u8) -> (T::Key, u64) {
    let v = _mm512_loadu_si512(p.cast());
    let max = all_lanes_max512::<T>(v);
    let holders = T::eq_mask512(v, _mm512_broadcast_i64x4(max));
    let mut lane = [0u8; 32];
    _mm256_storeu_si256(lane.as_mut_ptr().cast(), max);
    (T::lane_key(&lane), holders)
}

/// The byte offset of the first (or, with `LAST`, the last) element of the `n` bytes (at least
/// 64, whole elements) at `p` equal to `max` (every lane the same value in the compare domain,
/// present in those bytes, no NaN).
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `n >= 64` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn locate_in_block<T: Lanes, const LAST: bool>(
    p: *const u8,
    n: usize,
    max: __m512i,
) -> usize {
    let vectors = n.div_ceil(64);
    let at = |j: usize| (j * 64).min(n - 64);
    let mask = |j: usize| T::eq_mask512(T::load512(p.add(at(j))), max);
    if LAST {
        for j in (0..vectors).rev() {
            let m = mask(j);
            if m != 0 {
                return at(j) + (63 - m.leading_zeros() as usize) * T::SIZE;
            }
        }
    } else {
        for j in 0..vectors {
            let m = mask(j);
            if m != 0 {
                return at(j) + m.trailing_zeros() as usize * T::SIZE;
            }
        }
    }
    0
}

/// The AVX-512 form of the row fold (`kernels::fold_rows_avx2`, same contract, at least 64
/// bytes of lanes) with [`Avx512Fold`]'s vectors. A 512-bit compare gives a mask register, so
/// a row costs a load, a compare, a masked blend and a max per 64 bytes, where AVX2 needs two
/// of each and a byte blend per 32: the outer-axis reductions of one-byte and two-byte
/// elements were bound by those instructions, not by memory.
///
/// # Safety
/// The CPU must support AVX-512 F and BW; each row's `values.len()` bytes must lie inside
/// `data`; `rows_of` as long as `values`, at least 64 bytes; from one to `CHUNK_ROWS` rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn fold_rows_avx512<T: Lanes, const LAST: bool, const INTO_L1: bool>(
    data: &[u8],
    rows: &[Row],
    values: &mut [u8],
    rows_of: &mut [u8],
    start: FoldStart,
) -> bool {
    fold_rows_body::<T, LAST, Avx512Fold, INTO_L1>(data, rows, values, rows_of, start)
}

/// After a running row fold (`kernels::fold_rows_running`) over rows whose reduced indices
/// step evenly (`first`, `first + step`, …): `index[lane] = first + step × row` for every lane
/// whose row number in `rows_of` (lanes of `T::SIZE` bytes) is not `unimproved`, sixteen
/// lanes at a time through a masked store. Returns the number of lanes done (a multiple of
/// 16, or of 8 for eight-byte lanes); the caller takes the rest.
///
/// A scalar pass with a branch per lane took a tenth of ArgMax UINT8 `{4096, 16384}` over
/// axis 0 on two threads, whose pieces of 512 rows improve most lanes in each chunk.
///
/// # Safety
/// The CPU must support AVX-512 F and BW; `rows_of` must hold `index.len()` lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn take_improved_avx512<T: Lanes>(
    rows_of: &[u8],
    unimproved: u32,
    (first, step): (u32, u32),
    index: &mut [u32],
) -> usize {
    let per = if T::SIZE == 8 { 8 } else { 16 };
    let lanes = index.len() / per * per;
    let (first, step) = (
        _mm512_set1_epi32(first as i32),
        _mm512_set1_epi32(step as i32),
    );
    let sentinel = _mm512_set1_epi32(unimproved as i32);
    let (rp, ip) = (rows_of.as_ptr(), index.as_mut_ptr());
    for lane in (0..lanes).step_by(per) {
        let p = rp.add(lane * T::SIZE);
        let rows = match T::SIZE {
            1 => _mm512_cvtepu8_epi32(_mm_loadu_si128(p.cast())),
            2 => _mm512_cvtepu16_epi32(_mm256_loadu_si256(p.cast())),
            4 => _mm512_loadu_si512(p.cast()),
            _ => _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_loadu_si512(p.cast()))),
        };
        let lanes_mask = if T::SIZE == 8 { 0xff } else { 0xffff };
        let improved = _mm512_cmpneq_epu32_mask(rows, sentinel) & lanes_mask;
        let at = _mm512_add_epi32(first, _mm512_mullo_epi32(rows, step));
        _mm512_mask_storeu_epi32(ip.add(lane).cast(), improved, at);
    }
    lanes
}

/// The AVX-512 vectors of the row fold, in the compare domain of [`Lanes512`].
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx512Fold;

#[cfg(target_arch = "x86_64")]
impl FoldVectors for Avx512Fold {
    type V = __m512i;
    const BYTES: usize = 64;

    #[inline(always)]
    unsafe fn lowest<T: Lanes>() -> __m512i {
        _mm512_broadcast_i64x4(T::lowest())
    }

    #[inline(always)]
    unsafe fn zero() -> __m512i {
        _mm512_setzero_si512()
    }

    #[inline(always)]
    unsafe fn index<T: Lanes>(i: u32) -> __m512i {
        _mm512_broadcast_i64x4(T::splat_index(i))
    }

    #[inline(always)]
    unsafe fn load<T: Lanes>(p: *const u8) -> __m512i {
        T::load512(p)
    }

    #[inline(always)]
    unsafe fn load_raw(p: *const u8) -> __m512i {
        _mm512_loadu_si512(p.cast())
    }

    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m512i) {
        _mm512_storeu_si512(p.cast(), v);
    }

    #[inline(always)]
    unsafe fn fold<T: Lanes, const LAST: bool>(
        value: &mut __m512i,
        row: &mut __m512i,
        v: __m512i,
        number: __m512i,
    ) {
        *row = if LAST {
            // Keep the row where the running maximum stays greater; an equal element takes
            // the later row.
            blend_lanes512::<T>(T::gt_mask512(*value, v), number, *row)
        } else {
            blend_lanes512::<T>(T::gt_mask512(v, *value), *row, number)
        };
        *value = T::max512(v, *value);
    }

    type Nans = u64;

    #[inline(always)]
    unsafe fn no_nans() -> u64 {
        0
    }

    #[inline(always)]
    unsafe fn add_nans<T: Lanes>(nans: u64, v: __m512i) -> u64 {
        nans | T::nan_mask512(v)
    }

    #[inline(always)]
    unsafe fn any_nan(nans: u64) -> bool {
        nans != 0
    }
}

/// The lanes of `b` where `mask` (a bit per lane of `T`) is set, those of `a` elsewhere.
///
/// # Safety
/// AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn blend_lanes512<T: Lanes>(mask: u64, a: __m512i, b: __m512i) -> __m512i {
    match T::SIZE {
        1 => _mm512_mask_blend_epi8(mask, a, b),
        2 => _mm512_mask_blend_epi16(mask as u32, a, b),
        4 => _mm512_mask_blend_epi32(mask as u16, a, b),
        _ => _mm512_mask_blend_epi64(mask as u8, a, b),
    }
}

/// What [`short_runs_argmax_avx512`] found in a group of short runs.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShortRunsBest<K> {
    /// The group's maximum cannot change the result (`look` said no): not located.
    Passed,
    /// The group's maximum `key`, first met (or, with `LAST`, last met) at element `element`
    /// of run `run`.
    At { key: K, run: usize, element: usize },
    /// A NaN appeared, which the compare domain does not order (or the maximum was not met
    /// again, which cannot happen): the caller takes the general path.
    Fallback,
}

/// The best element of `count` runs (at least one) of `len` elements each (1 to
/// [`SHORT_RUN_BYTES`] bytes), the first at element offset `start` of `data` and each `pitch`
/// elements after the one before, in one AVX-512 function: the group's maximum first (a run is
/// its whole 512-bit vectors and one masked load for the rest, which reads no byte past it),
/// then, if `look(maximum)`, the first run holding it (from the last with `LAST`) read again
/// from the L1 cache. It replaces the AVX2 pair of a maximum over the group and a search per
/// listed run, whose bookkeeping cost as much as the reads (FLOAT32 `[27, 252, 17, 24]`
/// padded to 28, axes 2,3: behind numpy on one core).
///
/// # Safety
/// The CPU must support AVX-512 F and BW.
///
/// # Panics
/// If a run lies outside `data`, or `count`, `len` or the run size is out of range.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn short_runs_argmax_avx512<T: Lanes, const LAST: bool>(
    data: &[u8],
    start: usize,
    pitch: usize,
    count: usize,
    len: usize,
    look: impl FnOnce(T::Key) -> bool,
) -> ShortRunsBest<T::Key> {
    let bytes = len * T::SIZE;
    assert!(
        count > 0 && bytes > 0 && bytes <= SHORT_RUN_BYTES,
        "short_runs_argmax_avx512: runs of 1 to SHORT_RUN_BYTES bytes"
    );
    assert!(
        (start + (count - 1) * pitch + len) * T::SIZE <= data.len(),
        "short_runs_argmax_avx512: run outside the input"
    );
    let runs = ShortRuns512::<T> {
        base: data.as_ptr().add(start * T::SIZE),
        pitch_bytes: pitch * T::SIZE,
        whole: bytes / 64,
        rest: u64::MAX.checked_shr(64 - (bytes % 64) as u32).unwrap_or(0),
        lowest: _mm512_broadcast_i64x4(T::lowest()),
        element: std::marker::PhantomData,
    };
    let Some(max) = runs.max(count) else {
        return ShortRunsBest::Fallback;
    };
    let mut lanes = [0u8; 32];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), max);
    let key = T::lane_key(&lanes[..T::SIZE]);
    if !look(key) {
        return ShortRunsBest::Passed;
    }
    match runs.locate::<LAST>(count, _mm512_broadcast_i64x4(max)) {
        Some((run, element)) => ShortRunsBest::At { key, run, element },
        None => ShortRunsBest::Fallback,
    }
}

/// Runs of [`short_runs_argmax_avx512`]: `whole` 512-bit vectors each, then the bytes set in
/// `rest` (a mask of the bytes after them, 0 when there are none).
#[cfg(target_arch = "x86_64")]
struct ShortRuns512<T> {
    base: *const u8,
    pitch_bytes: usize,
    whole: usize,
    rest: u64,
    lowest: __m512i,
    element: std::marker::PhantomData<T>,
}

#[cfg(target_arch = "x86_64")]
impl<T: Lanes> ShortRuns512<T> {
    /// Vector `j` (0 to `whole`, the last one the masked rest) of run `r` in the compare
    /// domain, the lanes past the run set to the lowest value.
    #[inline(always)]
    unsafe fn vector(&self, r: usize, j: usize) -> __m512i {
        let p = self.base.add(r * self.pitch_bytes + j * 64);
        if j < self.whole {
            T::load512(p)
        } else {
            let raw = _mm512_maskz_loadu_epi8(self.rest, p.cast());
            _mm512_mask_blend_epi8(self.rest, self.lowest, T::domain512(raw))
        }
    }

    /// Vectors per run.
    fn vectors(&self) -> usize {
        self.whole + usize::from(self.rest != 0)
    }

    /// The maximum of runs `0..count` in every lane of a 256-bit vector (compare domain);
    /// None when a NaN appears. Whole vectors and the rest keep separate running maxima.
    #[inline(always)]
    unsafe fn max(&self, count: usize) -> Option<__m256i> {
        let (mut whole_max, mut rest_max) = (self.lowest, self.lowest);
        let mut nan = 0u64;
        for r in 0..count {
            for j in 0..self.whole {
                let v = self.vector(r, j);
                whole_max = T::max512(v, whole_max);
                if T::CAN_NAN {
                    nan |= T::nan_mask512(v);
                }
            }
            if self.rest != 0 {
                let v = self.vector(r, self.whole);
                rest_max = T::max512(v, rest_max);
                if T::CAN_NAN {
                    nan |= T::nan_mask512(v);
                }
            }
        }
        if nan != 0 {
            return None;
        }
        Some(all_lanes_max512::<T>(T::max512(whole_max, rest_max)))
    }

    /// The (run, element) of the first lane equal to `max` in runs `0..count` (the last with
    /// `LAST`), None when no lane is; no NaN is present.
    #[inline(always)]
    unsafe fn locate<const LAST: bool>(
        &self,
        count: usize,
        max: __m512i,
    ) -> Option<(usize, usize)> {
        let per_vector = 64 / T::SIZE;
        let vectors = self.vectors();
        let lanes_of = |j: usize| {
            if j < self.whole {
                u64::MAX >> (64 - per_vector)
            } else {
                u64::MAX >> (64 - (self.rest.count_ones() as usize / T::SIZE))
            }
        };
        let hits = |r: usize, j: usize| T::eq_mask512(self.vector(r, j), max) & lanes_of(j);
        if LAST {
            for r in (0..count).rev() {
                for j in (0..vectors).rev() {
                    let m = hits(r, j);
                    if m != 0 {
                        return Some((r, j * per_vector + 63 - m.leading_zeros() as usize));
                    }
                }
            }
        } else {
            for r in 0..count {
                for j in 0..vectors {
                    let m = hits(r, j);
                    if m != 0 {
                        return Some((r, j * per_vector + m.trailing_zeros() as usize));
                    }
                }
            }
        }
        None
    }
}
