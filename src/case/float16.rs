//! Correctly rounded binary64 → binary16 and binary64 → binary32 conversion: the one place
//! the loader (decimal literals) and the data generators (`uniform_float`) narrow a float.
//!
//! `half::f16::from_f64` (and `from_f64_const`) drop the low mantissa bits before rounding, so
//! a value just above a tie rounds down (`2049.0000000000005` → 2048) and a value just above
//! half the smallest subnormal flushes to zero. This module rounds the exact binary64 value to
//! nearest, ties to even, as IEEE 754 `convertFormat` does.

/// The binary16 bit pattern nearest to `value` (IEEE 754 round to nearest, ties to even).
///
/// Subnormal results are rounded the same way; a finite value rounds to infinity only when
/// round-to-nearest with an unbounded exponent would give 2^16 or more (so 65519.99… → 65504,
/// 65520 → inf). A NaN stays a quiet NaN with its sign and the top 9 bits of its payload.
///
/// Two roundings without the double-rounding error: binary64 → binary32 rounding to odd, then
/// binary32 → binary16 to nearest even. Rounding to odd into a format with at least two more
/// significand bits makes the second rounding the correct one (Boldo and Melquiond, "Emulation
/// of FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008);
/// binary32 keeps 24 bits wherever binary16 has a value to round to. Both steps are a few
/// branch-free instructions: the data generators convert every element through here.
#[inline]
pub fn f16_bits_from_f64(value: f64) -> u16 {
    if !value.is_finite() {
        let bits = value.to_bits();
        let sign = ((bits >> 48) & 0x8000) as u16;
        let fraction = bits & ((1 << 52) - 1);
        return if fraction == 0 {
            sign | 0x7c00
        } else {
            sign | 0x7e00 | ((fraction >> 42) as u16 & 0x1ff)
        };
    }
    f16_bits_from_finite_f64(value)
}

/// [`f16_bits_from_f64`] of a finite `value` (an infinity or NaN gives a meaningless pattern):
/// no branch, so that a loop over many values vectorizes.
#[inline(always)]
pub fn f16_bits_from_finite_f64(value: f64) -> u16 {
    f16_bits_from_f32(f32_rounded_to_odd(value))
}

/// Finite `value` rounded to binary32 to odd: exact when representable, else the neighbour
/// (of the two around `value`) whose last significand bit is 1. Past the binary32 range that is
/// the largest finite binary32, and below it the smallest subnormal, both with `value`'s sign.
#[inline(always)]
fn f32_rounded_to_odd(value: f64) -> f32 {
    let nearest = value as f32;
    let back = f64::from(nearest);
    // Rounded away from zero: step back towards it (sign and magnitude bits: minus one).
    let away = u32::from(back.abs() > value.abs());
    let inexact = u32::from(back != value);
    f32::from_bits((nearest.to_bits() - away) | inexact)
}

/// Finite or overflowed-to-maximum binary32 `value` rounded to binary16, nearest even (F.
/// Giesen's `float_to_half_fast3_rtne`): normal results by adding the rounding bias to the
/// re-biased bits, subnormal ones by letting the FPU round `value + 0.5`, whose ulp is the
/// binary16 subnormal unit 2^-24.
#[inline(always)]
fn f16_bits_from_f32(value: f32) -> u16 {
    /// 2^16: every magnitude from here up is infinity in binary16.
    const OVERFLOW: u32 = (127 + 16) << 23;
    /// 2^-14, the smallest normal binary16.
    const SMALLEST_NORMAL: u32 = (127 - 14) << 23;
    /// 0.5, whose ulp is 2^-24.
    const SUBNORMAL_ALIGN: u32 = (127 - 1) << 23;
    /// From binary32's exponent bias to binary16's, in place (bits 23 and up).
    const REBIAS: u32 = ((15 - 127) << 23) as u32;
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let magnitude = bits & 0x7fff_ffff;
    // All three results are computed and one is selected, so that a loop over many values
    // vectorizes (the ones not selected may be meaningless, never undefined).
    let aligned = f32::from_bits(magnitude) + f32::from_bits(SUBNORMAL_ALIGN);
    let subnormal = aligned.to_bits().wrapping_sub(SUBNORMAL_ALIGN) as u16;
    let odd = (magnitude >> 13) & 1;
    // Adding 2^12 - 1 plus the kept last bit rounds the 13 dropped bits to nearest even; a
    // carry runs into the exponent (up to infinity at 65520).
    let normal = (magnitude
        .wrapping_add(REBIAS)
        .wrapping_add(0xfff)
        .wrapping_add(odd)
        >> 13) as u16;
    let half = if magnitude >= OVERFLOW {
        0x7c00
    } else if magnitude < SMALLEST_NORMAL {
        subnormal
    } else {
        normal
    };
    sign | half
}

/// The binary32 bit pattern nearest to `value` (round to nearest, ties to even; NaN stays NaN).
///
/// Rust's `as f32` from `f64` is specified to round to nearest, ties to even (tested below on
/// every tie and near-tie pattern), so this only names the rule next to its binary16 twin.
pub fn f32_bits_from_f64(value: f64) -> u32 {
    (value as f32).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn next_up(v: f64) -> f64 {
        f64::from_bits(if v >= 0.0 {
            v.to_bits() + 1
        } else {
            v.to_bits() - 1
        })
    }

    fn next_down(v: f64) -> f64 {
        -next_up(-v)
    }

    /// Checks the tie between two neighbours `low` < `high` (bit patterns, `high` possibly the
    /// overflow pattern) and the binary64 values one ulp either side of it.
    fn check_tie(low: u16, high: u16, low_value: f64, high_value: f64) {
        let mid = (low_value + high_value) / 2.0;
        assert!(mid > low_value && mid < high_value, "{low:#x} {high:#x}");
        let even = if low & 1 == 0 { low } else { high };
        assert_eq!(f16_bits_from_f64(mid), even, "tie {mid:e}");
        assert_eq!(f16_bits_from_f64(next_down(mid)), low, "below {mid:e}");
        assert_eq!(f16_bits_from_f64(next_up(mid)), high, "above {mid:e}");
    }

    /// The exact rounding, step by step (the implementation before the round-to-odd one): the
    /// oracle of the random comparison below.
    ///
    /// Subnormal results are rounded the same way; a finite value rounds to infinity only when
    /// round-to-nearest with an unbounded exponent would give 2^16 or more (so 65519.99… → 65504,
    /// 65520 → inf). A NaN stays a quiet NaN with its sign and the top 9 bits of its payload.
    fn reference(value: f64) -> u16 {
        let bits = value.to_bits();
        let sign = ((bits >> 48) & 0x8000) as u16;
        let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1 << 52) - 1);
        if biased_exponent == 0x7ff {
            return if fraction == 0 {
                sign | 0x7c00
            } else {
                sign | 0x7e00 | ((fraction >> 42) as u16 & 0x1ff)
            };
        }
        if biased_exponent == 0 && fraction == 0 {
            return sign;
        }
        // value = significand × 2^exponent exactly, significand < 2^53.
        let (significand, exponent) = if biased_exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1 << 52), biased_exponent - 1075)
        };
        // floor(log2(value)), and the binary16 ulp exponent at that magnitude (2^-24 at least).
        let magnitude = 63 - significand.leading_zeros() as i32 + exponent;
        let ulp_exponent = (magnitude - 10).max(-24);
        // Always positive: binary64 has more fraction bits than binary16 at every magnitude.
        let shift = (ulp_exponent - exponent) as u32;
        if shift > 54 {
            // Below 2^-25 = half the smallest subnormal: rounds to zero.
            return sign;
        }
        let mut units = significand >> shift;
        let remainder = significand & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if remainder > half || (remainder == half && units & 1 == 1) {
            units += 1;
        }
        // value ≈ units × 2^ulp_exponent with units ≤ 2^11. Adding the units to the biased
        // exponent field lets a carry out of the fraction bump the exponent, and a subnormal
        // (ulp_exponent = -24, units < 2^10) come out with a zero exponent field.
        let magnitude_bits = (((ulp_exponent + 24) as u64) << 10) + units;
        if magnitude_bits >= 0x7c00 {
            sign | 0x7c00
        } else {
            sign | magnitude_bits as u16
        }
    }

    #[test]
    fn round_to_odd_then_nearest_even_agrees_with_the_exact_rounding() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = || crate::case::data_generator::splitmix64(&mut state);
        for _ in 0..4_000_000 {
            let x = next();
            // Half the draws near binary16's range (exponents 2^-40 … 2^20), half any bits.
            let bits = if x & 1 == 0 {
                let exponent = 1023 - 40 + (x >> 1) % 61;
                (x & 0x800f_ffff_ffff_ffff) | (exponent << 52)
            } else {
                next()
            };
            let value = f64::from_bits(bits);
            let (fast, exact) = (f16_bits_from_f64(value), reference(value));
            if value.is_nan() {
                assert_eq!(fast, exact, "{bits:#x}");
            } else {
                assert_eq!(fast, exact, "{value:e} ({bits:#x})");
            }
        }
    }

    #[test]
    fn every_binary16_value_converts_back_to_itself() {
        for bits in 0..=u16::MAX {
            let value = f16::from_bits(bits);
            if value.is_nan() {
                assert!(f16::from_bits(f16_bits_from_f64(value.to_f64())).is_nan());
            } else {
                assert_eq!(f16_bits_from_f64(value.to_f64()), bits, "{bits:#x}");
            }
        }
    }

    #[test]
    fn every_tie_rounds_to_even_and_every_near_tie_to_the_nearer() {
        for sign in [0u16, 0x8000] {
            // Every pair of neighbouring finite magnitudes, 0 … 65504.
            for low in 0..0x7bffu16 {
                let (low, high) = (sign | low, sign | (low + 1));
                let (a, b) = (f16::from_bits(low).to_f64(), f16::from_bits(high).to_f64());
                if sign == 0 {
                    check_tie(low, high, a, b);
                } else {
                    // Negative: `low` has the smaller magnitude; mirror the check.
                    let mid = (a + b) / 2.0;
                    let even = if low & 1 == 0 { low } else { high };
                    assert_eq!(f16_bits_from_f64(mid), even, "tie {mid:e}");
                    assert_eq!(f16_bits_from_f64(next_up(mid)), low, "{mid:e}");
                    assert_eq!(f16_bits_from_f64(next_down(mid)), high, "{mid:e}");
                }
            }
            // The largest finite value and the overflow threshold 2^16: 65520 is a tie whose
            // even side is 2^16, so it overflows; anything below stays 65504.
            let max = f16::MAX.to_f64();
            let mid = (max + 65536.0) / 2.0;
            let s = if sign == 0 { 1.0 } else { -1.0 };
            assert_eq!(f16_bits_from_f64(s * mid), sign | 0x7c00);
            assert_eq!(f16_bits_from_f64(s * next_down(mid)), sign | 0x7bff);
            assert_eq!(f16_bits_from_f64(s * next_up(mid)), sign | 0x7c00);
        }
    }

    #[test]
    fn the_reported_double_rounding_cases_are_right() {
        // `half` gives 2048 and 0 here.
        assert_eq!(f16_bits_from_f64(2049.0000000000005), 0x6801); // 2050
        assert_eq!(f16_bits_from_f64(2.980232238769532e-08), 0x0001); // 2^-24
        assert_eq!(f16_bits_from_f64(2.0f64.powi(-25)), 0x0000); // tie to even: 0
        assert_eq!(f16_bits_from_f64(-(2.0f64.powi(-25))), 0x8000);
        assert_eq!(f16_bits_from_f64(3.0 * 2.0f64.powi(-25)), 0x0002); // tie 1.5 → 2
        assert_eq!(f16_bits_from_f64(f64::MIN_POSITIVE), 0x0000);
        assert_eq!(f16_bits_from_f64(5e-324), 0x0000);
        assert_eq!(f16_bits_from_f64(1e300), 0x7c00);
        assert_eq!(f16_bits_from_f64(-1e300), 0xfc00);
        assert_eq!(f16_bits_from_f64(f64::INFINITY), 0x7c00);
        assert_eq!(f16_bits_from_f64(-0.0), 0x8000);
    }

    #[test]
    fn nan_stays_nan_with_its_sign() {
        assert_eq!(f16_bits_from_f64(f64::NAN), 0x7e00);
        assert_eq!(f16_bits_from_f64(-f64::NAN), 0xfe00);
        // A signalling binary64 NaN whose payload sits below binary16's width stays a NaN.
        assert_eq!(
            f16_bits_from_f64(f64::from_bits(0x7ff0_0000_0000_0001)),
            0x7e00
        );
    }

    #[test]
    fn binary32_ties_round_to_even_and_near_ties_to_the_nearer() {
        // Every exponent, with fractions at both ends and a spread between; the subnormal range
        // and the overflow threshold included.
        let fractions = (0..0x7f_ffffu32)
            .step_by(0x1_0001)
            .chain([0, 1, 2, 0x7f_fffe, 0x7f_ffff]);
        for exponent in 0..=0xfeu32 {
            for fraction in fractions.clone() {
                let low = (exponent << 23) | fraction;
                let high = low + 1;
                let a = f64::from(f32::from_bits(low));
                let b = if high == 0x7f80_0000 {
                    2.0f64.powi(128)
                } else {
                    f64::from(f32::from_bits(high))
                };
                let mid = (a + b) / 2.0;
                let even = if low & 1 == 0 { low } else { high };
                assert_eq!(f32_bits_from_f64(mid), even, "tie {mid:e}");
                assert_eq!(f32_bits_from_f64(next_down(mid)), low, "{mid:e}");
                assert_eq!(f32_bits_from_f64(next_up(mid)), high, "{mid:e}");
                assert_eq!(f32_bits_from_f64(-mid), even | 0x8000_0000, "tie -{mid:e}");
            }
        }
        assert!(f32::from_bits(f32_bits_from_f64(f64::NAN)).is_nan());
    }
}
