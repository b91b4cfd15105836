//! The element types' vector operations for the AVX2 ArgMax kernels ([`Lanes`]).
//!
//! A 256-bit vector is loaded into a *compare domain* where the native signed-integer or float
//! compares order the elements as ArgMax does: unsigned integers have their sign bit flipped,
//! FLOAT16 is turned into its order key ([`OrderKey`]), other types are unchanged. In that
//! domain FLOAT32 and FLOAT64 order every number correctly (-0.0 equals +0.0) but not NaN: the
//! kernels flag a NaN ([`Lanes::nan`]) and redo that piece of work with exact keys.

use super::avx512::Lanes512;
use crate::element::OrderKey;
use half::f16;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// An ArgMax element type with AVX2 operations (on x86-64; elsewhere only the portable kernels
/// exist and the trait is a marker).
pub(crate) trait Lanes: OrderKey + Lanes512 {
    /// True for FLOAT32 and FLOAT64: the compare domain does not order NaN.
    const CAN_NAN: bool;

    /// The key of a NaN (the largest key); unused for types without NaN.
    fn nan_key() -> Self::Key;

    /// The key of one lane of a vector in the compare domain (`SIZE` bytes).
    fn lane_key(bytes: &[u8]) -> Self::Key;

    /// One lane of an index vector (`SIZE` bytes, unsigned).
    fn lane_index(bytes: &[u8]) -> usize {
        let mut word = [0u8; 8];
        word[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
        u64::from_le_bytes(word) as usize
    }

    /// 32 bytes at `p` in the compare domain.
    ///
    /// # Safety
    /// AVX2; 32 readable bytes at `p`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load(p: *const u8) -> __m256i;

    /// Every lane the lowest value of the compare domain.
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn lowest() -> __m256i;

    /// Lanes of `a` greater than those of `b` (all ones), in the compare domain.
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn gt(a: __m256i, b: __m256i) -> __m256i;

    /// The lane-wise maximum in the compare domain (either operand where they are equal).
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn max(a: __m256i, b: __m256i) -> __m256i;

    /// Lanes of `a` equal to those of `b` (all ones), in the compare domain (neither holding a
    /// NaN: -0.0 equals +0.0).
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn eq(a: __m256i, b: __m256i) -> __m256i;

    /// NaN lanes of `v` (all ones); all zero for types without NaN.
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn nan(v: __m256i) -> __m256i;

    /// Every lane `i` (below 256 for 1-byte elements, below 2^16 for 2-byte ones), as an
    /// unsigned integer of the element's width.
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn splat_index(i: u32) -> __m256i;

    /// Lanes of the raw elements `raw` (as stored) whose key is `key`.
    ///
    /// # Safety
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    unsafe fn eq_key(raw: __m256i, key: Self::Key) -> __m256i;
}

/// Reads the little-endian `N` bytes at the start of `bytes`.
#[inline(always)]
fn bytes_of<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[..N]);
    a
}

/// Integer types whose compare domain is signed: `$flip` is XORed in on load (the sign bit
/// for unsigned types, 0 for signed ones).
macro_rules! integer_lanes {
    ($t:ty, $s:ty, $flip:expr, $set1:ident, $cmpgt:ident, $cmpeq:ident, $max:ident) => {
        impl Lanes for $t {
            const CAN_NAN: bool = false;

            fn nan_key() -> $t {
                <$t>::MAX
            }

            #[inline(always)]
            fn lane_key(bytes: &[u8]) -> $t {
                (<$s>::from_le_bytes(bytes_of(bytes)) ^ ($flip as $s)) as $t
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn load(p: *const u8) -> __m256i {
                let v = _mm256_loadu_si256(p.cast());
                if $flip == 0 {
                    v
                } else {
                    _mm256_xor_si256(v, $set1($flip as $s as _))
                }
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn lowest() -> __m256i {
                $set1(<$s>::MIN as _)
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn gt(a: __m256i, b: __m256i) -> __m256i {
                $cmpgt(a, b)
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn max(a: __m256i, b: __m256i) -> __m256i {
                $max(a, b)
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn eq(a: __m256i, b: __m256i) -> __m256i {
                $cmpeq(a, b)
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn nan(_: __m256i) -> __m256i {
                _mm256_setzero_si256()
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn splat_index(i: u32) -> __m256i {
                $set1(i as $s as _)
            }

            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn eq_key(raw: __m256i, key: $t) -> __m256i {
                $cmpeq(raw, $set1(key as $s as _))
            }
        }
    };
}

/// `max` of two signed 64-bit lane vectors (AVX2 has no `max_epi64`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn max_epi64(a: __m256i, b: __m256i) -> __m256i {
    _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b))
}

integer_lanes!(
    i8,
    i8,
    0,
    _mm256_set1_epi8,
    _mm256_cmpgt_epi8,
    _mm256_cmpeq_epi8,
    _mm256_max_epi8
);
integer_lanes!(
    u8,
    i8,
    0x80u8 as i8,
    _mm256_set1_epi8,
    _mm256_cmpgt_epi8,
    _mm256_cmpeq_epi8,
    _mm256_max_epi8
);
integer_lanes!(
    i16,
    i16,
    0,
    _mm256_set1_epi16,
    _mm256_cmpgt_epi16,
    _mm256_cmpeq_epi16,
    _mm256_max_epi16
);
integer_lanes!(
    u16,
    i16,
    0x8000u16 as i16,
    _mm256_set1_epi16,
    _mm256_cmpgt_epi16,
    _mm256_cmpeq_epi16,
    _mm256_max_epi16
);
integer_lanes!(
    i32,
    i32,
    0,
    _mm256_set1_epi32,
    _mm256_cmpgt_epi32,
    _mm256_cmpeq_epi32,
    _mm256_max_epi32
);
integer_lanes!(
    u32,
    i32,
    0x8000_0000u32 as i32,
    _mm256_set1_epi32,
    _mm256_cmpgt_epi32,
    _mm256_cmpeq_epi32,
    _mm256_max_epi32
);
integer_lanes!(
    i64,
    i64,
    0,
    _mm256_set1_epi64x,
    _mm256_cmpgt_epi64,
    _mm256_cmpeq_epi64,
    max_epi64
);
integer_lanes!(
    u64,
    i64,
    0x8000_0000_0000_0000u64 as i64,
    _mm256_set1_epi64x,
    _mm256_cmpgt_epi64,
    _mm256_cmpeq_epi64,
    max_epi64
);

impl Lanes for f32 {
    const CAN_NAN: bool = true;

    fn nan_key() -> i32 {
        f32::NAN.key()
    }

    #[inline(always)]
    fn lane_key(bytes: &[u8]) -> i32 {
        f32::from_le_bytes(bytes_of(bytes)).key()
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        _mm256_loadu_si256(p.cast())
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn lowest() -> __m256i {
        _mm256_castps_si256(_mm256_set1_ps(f32::NEG_INFINITY))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gt(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(
            _mm256_castsi256_ps(a),
            _mm256_castsi256_ps(b),
        ))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn max(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castps_si256(_mm256_max_ps(
            _mm256_castsi256_ps(a),
            _mm256_castsi256_ps(b),
        ))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn eq(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(
            _mm256_castsi256_ps(a),
            _mm256_castsi256_ps(b),
        ))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn nan(v: __m256i) -> __m256i {
        let v = _mm256_castsi256_ps(v);
        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn splat_index(i: u32) -> __m256i {
        _mm256_set1_epi32(i as i32)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn eq_key(raw: __m256i, key: i32) -> __m256i {
        if key == Self::nan_key() {
            return Self::nan(raw);
        }
        if key < f32::NEG_INFINITY.key() {
            return _mm256_setzero_si256(); // no element has this key
        }
        // The number with this key (+0.0 for key 0; equal compares -0.0 too).
        let bits = if key >= 0 {
            key as u32
        } else {
            key.unsigned_abs() | 0x8000_0000
        };
        let v = _mm256_castsi256_ps(raw);
        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(
            v,
            _mm256_set1_ps(f32::from_bits(bits)),
        ))
    }
}

impl Lanes for f64 {
    const CAN_NAN: bool = true;

    fn nan_key() -> i64 {
        f64::NAN.key()
    }

    #[inline(always)]
    fn lane_key(bytes: &[u8]) -> i64 {
        f64::from_le_bytes(bytes_of(bytes)).key()
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        _mm256_loadu_si256(p.cast())
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn lowest() -> __m256i {
        _mm256_castpd_si256(_mm256_set1_pd(f64::NEG_INFINITY))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gt(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(
            _mm256_castsi256_pd(a),
            _mm256_castsi256_pd(b),
        ))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn max(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castpd_si256(_mm256_max_pd(
            _mm256_castsi256_pd(a),
            _mm256_castsi256_pd(b),
        ))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn eq(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_EQ_OQ>(
            _mm256_castsi256_pd(a),
            _mm256_castsi256_pd(b),
        ))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn nan(v: __m256i) -> __m256i {
        let v = _mm256_castsi256_pd(v);
        _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_UNORD_Q>(v, v))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn splat_index(i: u32) -> __m256i {
        _mm256_set1_epi64x(i64::from(i))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn eq_key(raw: __m256i, key: i64) -> __m256i {
        if key == Self::nan_key() {
            return Self::nan(raw);
        }
        if key < f64::NEG_INFINITY.key() {
            return _mm256_setzero_si256(); // no element has this key
        }
        let bits = if key >= 0 {
            key as u64
        } else {
            key.unsigned_abs() | 0x8000_0000_0000_0000
        };
        let v = _mm256_castsi256_pd(raw);
        _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_EQ_OQ>(
            v,
            _mm256_set1_pd(f64::from_bits(bits)),
        ))
    }
}

/// The FLOAT16 order keys of 16 raw elements, as [`OrderKey::key`] computes them: the
/// magnitude, negated when the sign is set, every NaN clamped to infinity + 1.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn f16_keys(bits: __m256i) -> __m256i {
    let magnitude = _mm256_and_si256(bits, _mm256_set1_epi16(0x7fff));
    let nan = _mm256_cmpgt_epi16(magnitude, _mm256_set1_epi16(0x7c00));
    let sign = _mm256_andnot_si256(nan, _mm256_srai_epi16::<15>(bits));
    let clamped = _mm256_min_epi16(magnitude, _mm256_set1_epi16(0x7c01));
    _mm256_sub_epi16(_mm256_xor_si256(clamped, sign), sign)
}

impl Lanes for f16 {
    const CAN_NAN: bool = false;

    fn nan_key() -> i16 {
        f16::NAN.key()
    }

    #[inline(always)]
    fn lane_key(bytes: &[u8]) -> i16 {
        i16::from_le_bytes(bytes_of(bytes))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        f16_keys(_mm256_loadu_si256(p.cast()))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn lowest() -> __m256i {
        _mm256_set1_epi16(i16::MIN)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn gt(a: __m256i, b: __m256i) -> __m256i {
        _mm256_cmpgt_epi16(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn max(a: __m256i, b: __m256i) -> __m256i {
        _mm256_max_epi16(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn eq(a: __m256i, b: __m256i) -> __m256i {
        _mm256_cmpeq_epi16(a, b)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn nan(_: __m256i) -> __m256i {
        _mm256_setzero_si256()
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn splat_index(i: u32) -> __m256i {
        _mm256_set1_epi16(i as i16)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn eq_key(raw: __m256i, key: i16) -> __m256i {
        _mm256_cmpeq_epi16(f16_keys(raw), _mm256_set1_epi16(key))
    }
}
