//! Seeded data generators: a case can describe a large input as a generator instead of listing
//! its elements, so the YAML stays small. The sequence is splitmix64, simple enough for the
//! numpy cross-check (`tools/check_expectations.py`) to reproduce bit for bit.

use super::element::{Element, EncodeError};
use super::float16::{f16_bits_from_finite_f64, f32_bits_from_f64};
use opconform_backend::DataType;
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::mem::MaybeUninit;

/// How to fill a buffer: a seed and a distribution. Element `i` of the buffer is drawn from
/// the `i`-th output of splitmix64 started at `seed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataGenerator {
    /// Seed of the splitmix64 sequence.
    pub seed: u64,
    /// What values are drawn.
    pub distribution: Distribution,
}

/// A distribution of element values, written `{kind: uniform_int, min: 0, max: 9}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Distribution {
    /// Integers uniform in `[min, max]`: `min + x mod (max - min + 1)`.
    UniformInt {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// Floats `min + (max - min) * u` with `u = (x >> 11) * 2^-53`, computed in binary64 and
    /// rounded once to the element type, to nearest even (`crate::case::float16`). `min` and
    /// `max` are finite with `min <= max`.
    UniformFloat {
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// Mostly zeros: the element is `1 + x mod max` when `(x >> 40) mod 1_000_000` is below
    /// `per_million`, else 0.
    Sparse {
        /// Nonzero elements per million.
        per_million: u64,
        /// Largest nonzero value (at least 1; 0 is refused).
        max: u64,
    },
}

/// One step of splitmix64: advances `state` and returns the next output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// splitmix64's increment: the state before output `i` (counting from 0) is
/// `seed + i * GOLDEN`, so any stretch of the sequence can be generated on its own.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Elements generated per parallel task.
const TASK_ELEMENTS: usize = 1 << 16;

impl DataGenerator {
    /// Appends `count` generated elements of `data_type` to `out`.
    ///
    /// When every value the distribution can draw encodes in `data_type` (checked once, on
    /// its bounds), the elements are generated in parallel tasks straight into `out`, each
    /// task starting its stretch of the sequence at `seed + first * GOLDEN`; otherwise one at
    /// a time through [`Element::encode`], which reports the first value that does not fit.
    /// Both give the same bytes.
    pub fn fill(
        &self,
        data_type: DataType,
        count: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        self.check()?;
        match self.fast_kind(data_type) {
            Some(kind) => {
                let size = data_type.size_in_bytes();
                let len = usize::try_from(count)
                    .ok()
                    .and_then(|n| n.checked_mul(size))
                    .ok_or_else(|| EncodeError(format!("{count} elements do not fit in memory")))?;
                out.try_reserve_exact(len)
                    .map_err(|e| EncodeError(format!("{count} elements: {e}")))?;
                // Written in place by the tasks (no zeroing pass first; each task touches its
                // own pages).
                let spare = &mut out.spare_capacity_mut()[..len];
                self.fill_fast(kind, data_type, spare);
                // SAFETY: `fill_fast` wrote all `len` bytes after the old length (every
                // element of every task; `len` is a whole number of elements).
                unsafe { out.set_len(out.len() + len) };
                Ok(())
            }
            None => self.fill_each(data_type, count, out),
        }
    }

    /// [`DataGenerator::fill`] one element at a time through [`Element::encode`].
    fn fill_each(
        &self,
        data_type: DataType,
        count: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let mut state = self.seed;
        for _ in 0..count {
            let x = splitmix64(&mut state);
            self.element(x).encode(data_type, out)?;
        }
        Ok(())
    }

    /// How the parallel path computes a value, or `None` when some value the distribution
    /// can draw might not encode in `data_type` (left to [`DataGenerator::fill_each`], which
    /// reports it).
    fn fast_kind(&self, data_type: DataType) -> Option<FastKind> {
        let float = matches!(
            data_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        );
        // The largest integer below which every integer is exact in a float type.
        let exact = match data_type {
            DataType::Float16 => 1 << 11,
            DataType::Float32 => 1 << 24,
            _ => 1 << 53,
        };
        let ints_fit = |min: i128, max: i128| {
            if float {
                min.abs() <= exact && max.abs() <= exact
            } else {
                Element::Int(min).to_bytes(data_type).is_ok()
                    && Element::Int(max).to_bytes(data_type).is_ok()
            }
        };
        match self.distribution {
            Distribution::UniformInt { min, max } => ints_fit(min.into(), max.into()).then(|| {
                let span = (i128::from(max) - i128::from(min) + 1) as u128;
                FastKind::Int {
                    min,
                    modulo: Modulo::new(span),
                }
            }),
            Distribution::UniformFloat { min, max } => {
                // Rounding is monotonic: when both bounds encode (no overflow to infinity),
                // every value between them does. `min + (max - min) * u` may land one binary64
                // step past a bound: the step beyond each bound is checked too.
                let beyond = |v: f64| f64::from_bits(v.abs().to_bits() + 1);
                let fits = float
                    && (max - min).is_finite()
                    && [min, max, beyond(min), beyond(max)]
                        .iter()
                        .all(|&v| Element::Float(v).to_bytes(data_type).is_ok());
                fits.then_some(FastKind::Float { min, max })
            }
            Distribution::Sparse { per_million, max } => {
                ints_fit(0, i128::from(max)).then(|| FastKind::Sparse {
                    per_million,
                    modulo: Modulo::new(u128::from(max)),
                })
            }
        }
    }

    /// Generates `out.len() / size` elements of `data_type` into `out`, in parallel tasks.
    /// Each kind and remainder gets a fill loop of its own, free of matches, so the compiler
    /// can vectorize it.
    fn fill_fast(&self, kind: FastKind, data_type: DataType, out: &mut [MaybeUninit<u8>]) {
        let seed = self.seed;
        match kind {
            FastKind::Float { min, max } => fill_floats(
                seed,
                data_type,
                out,
                #[inline(always)]
                move |x| uniform_float(min, max, x),
            ),
            FastKind::Int { min, modulo } => match modulo {
                Modulo::Narrow(narrow) => fill_ints(
                    seed,
                    data_type,
                    out,
                    #[inline(always)]
                    move |x| uniform_int(min, narrow, x),
                ),
                _ => fill_ints(
                    seed,
                    data_type,
                    out,
                    #[inline(always)]
                    move |x| uniform_int(min, modulo, x),
                ),
            },
            FastKind::Sparse {
                per_million,
                modulo,
            } => match modulo {
                Modulo::Narrow(narrow) => fill_ints(
                    seed,
                    data_type,
                    out,
                    #[inline(always)]
                    move |x| sparse(per_million, narrow, x),
                ),
                _ => fill_ints(
                    seed,
                    data_type,
                    out,
                    #[inline(always)]
                    move |x| sparse(per_million, modulo, x),
                ),
            },
        }
    }

    /// Refuses parameters that describe no distribution.
    fn check(&self) -> Result<(), EncodeError> {
        match self.distribution {
            Distribution::UniformInt { min, max } if min > max => Err(EncodeError(format!(
                "uniform_int: min {min} is above max {max}"
            ))),
            Distribution::UniformFloat { min, max }
                if !min.is_finite() || !max.is_finite() || min > max =>
            {
                Err(EncodeError(format!(
                    "uniform_float: min {min} and max {max} must be finite with min <= max"
                )))
            }
            Distribution::Sparse { max: 0, .. } => Err(EncodeError(
                "sparse: max must be at least 1 (nonzero elements are 1 ..= max)".to_string(),
            )),
            _ => Ok(()),
        }
    }

    fn element(&self, x: u64) -> Element {
        match self.distribution {
            Distribution::UniformInt { min, max } => {
                let span = (i128::from(max) - i128::from(min) + 1) as u128;
                Element::Int(i128::from(min) + (u128::from(x) % span) as i128)
            }
            Distribution::UniformFloat { min, max } => {
                let u = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                Element::Float(min + (max - min) * u)
            }
            Distribution::Sparse { per_million, max } => {
                if (x >> 40) % 1_000_000 < per_million {
                    Element::Int(1 + i128::from(x % max))
                } else {
                    Element::Int(0)
                }
            }
        }
    }
}

/// A distribution whose every value encodes in the element type, ready for the parallel path.
#[derive(Debug, Clone, Copy)]
enum FastKind {
    /// `min + x mod span`.
    Int { min: i64, modulo: Modulo },
    /// `min + (max - min) * u`, as [`Distribution::UniformFloat`] says.
    Float { min: f64, max: f64 },
    /// As [`Distribution::Sparse`] says (`modulo` is by `max`).
    Sparse { per_million: u64, modulo: Modulo },
}

/// [`Distribution::UniformInt`]'s value drawn from `x`: `min + x mod span`, as two's
/// complement bits (cut to the element width by the caller; every value fits,
/// [`DataGenerator::fast_kind`] checked it).
#[inline(always)]
fn uniform_int(min: i64, span: impl Remainder, x: u64) -> u64 {
    (min as u64).wrapping_add(span.of(x))
}

/// [`Distribution::Sparse`]'s value drawn from `x` (`max` is the remainder's divisor).
#[inline(always)]
fn sparse(per_million: u64, max: impl Remainder, x: u64) -> u64 {
    // Without a branch: at densities near one half it mispredicted every other element
    // (4.7 -> 2.0 ns per UINT8 element at 50%, measured by data_generator_speed).
    let nonzero = u64::from((x >> 40) % 1_000_000 < per_million);
    (1 + max.of(x)) & nonzero.wrapping_neg()
}

/// [`Distribution::UniformFloat`]'s value drawn from `x`, in binary64.
#[inline(always)]
fn uniform_float(min: f64, max: f64, x: u64) -> f64 {
    // x >> 11 < 2^53: exact through i64 (one instruction, unlike from u64).
    let u = ((x >> 11) as i64) as f64 * (1.0 / (1u64 << 53) as f64);
    min + (max - min) * u
}

/// Fills `out` with the floats `float` draws, encoded in `data_type` (a float type; every
/// value is finite and encodes, [`DataGenerator::fast_kind`] checked it).
fn fill_floats(
    seed: u64,
    data_type: DataType,
    out: &mut [MaybeUninit<u8>],
    float: impl Fn(u64) -> f64 + Sync + Copy,
) {
    match data_type {
        DataType::Float64 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| float(x).to_le_bytes(),
        ),
        DataType::Float32 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| f32_bits_from_f64(float(x)).to_le_bytes(),
        ),
        DataType::Float16 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| f16_bits_from_finite_f64(float(x)).to_le_bytes(),
        ),
        _ => unreachable!("a float distribution for {data_type:?}: fast_kind refuses it"),
    }
}

/// Fills `out` with the integers `int` draws (two's complement bits), encoded in
/// `data_type`: cut to its width, or converted exactly to a float type (checked by
/// [`DataGenerator::fast_kind`]).
fn fill_ints(
    seed: u64,
    data_type: DataType,
    out: &mut [MaybeUninit<u8>],
    int: impl Fn(u64) -> u64 + Sync + Copy,
) {
    match data_type {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => fill_floats(
            seed,
            data_type,
            out,
            #[inline(always)]
            move |x| int(x) as i64 as f64,
        ),
        DataType::Int64 | DataType::Uint64 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| int(x).to_le_bytes(),
        ),
        DataType::Int32 | DataType::Uint32 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| (int(x) as u32).to_le_bytes(),
        ),
        DataType::Int16 | DataType::Uint16 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| (int(x) as u16).to_le_bytes(),
        ),
        DataType::Int8 | DataType::Uint8 => fill_typed(
            seed,
            out,
            #[inline(always)]
            |x| (int(x) as u8).to_le_bytes(),
        ),
    }
}

/// A remainder by a divisor fixed for a whole fill.
trait Remainder: Copy {
    /// `x mod d`.
    fn of(self, x: u64) -> u64;
}

/// `x mod d` for a fixed `d` in `1..=2^64` without a division per call.
#[derive(Debug, Clone, Copy)]
enum Modulo {
    /// `d` is 1: every remainder is 0.
    Zero,
    /// `d` is 2^64: the remainder is `x`.
    Identity,
    /// `2 <= d <= NARROW_MAX`, the common case.
    Narrow(NarrowModulo),
    /// Lemire, Kaser and Kurz, "Faster remainder by direct computation" (2019), with a
    /// 128-bit constant `c = ceil(2^128 / d)`, exact for every 64-bit `x`.
    Wide { d: u64, c: u128 },
}

/// The largest divisor [`NarrowModulo`] takes: its first remainder estimate stays below
/// `3075 * d`, which must be exact in binary64 (below 2^53).
const NARROW_MAX: u128 = 1 << 40;

impl Modulo {
    /// The remainder by `d` (`1 <= d <= 2^64`).
    fn new(d: u128) -> Modulo {
        debug_assert!((1..=1u128 << 64).contains(&d));
        match d {
            1 => Modulo::Zero,
            _ if d == 1u128 << 64 => Modulo::Identity,
            _ if d <= NARROW_MAX => Modulo::Narrow(NarrowModulo {
                d: d as u64,
                inverse: 1.0 / d as f64,
            }),
            _ => Modulo::Wide {
                d: d as u64,
                c: u128::MAX / d + 1,
            },
        }
    }
}

impl Remainder for Modulo {
    #[inline(always)]
    fn of(self, x: u64) -> u64 {
        match self {
            Modulo::Zero => 0,
            Modulo::Identity => x,
            Modulo::Narrow(narrow) => narrow.of(x),
            Modulo::Wide { d, c } => {
                let low = c.wrapping_mul(u128::from(x));
                // The high 64 bits of the 192-bit product low * d.
                let d = u128::from(d);
                let bottom = ((low as u64) as u128 * d) >> 64;
                (((low >> 64) * d + bottom) >> 64) as u64
            }
        }
    }
}

/// `x mod d` for `2 <= d <=` [`NARROW_MAX`] by two binary64 quotient estimates and one
/// correction. Unlike the 128-bit products of [`Modulo::Wide`], every step has a vector
/// instruction, so the fill loop vectorizes (INT32 generation 2.13 -> 1.49 ns per element,
/// measured by `data_generator_speed`).
#[derive(Debug, Clone, Copy)]
struct NarrowModulo {
    d: u64,
    /// `1 / d`, rounded.
    inverse: f64,
}

impl Remainder for NarrowModulo {
    #[inline(always)]
    fn of(self, x: u64) -> u64 {
        // x / d < 2^63 (d >= 2), and the estimate's relative error is below 3 * 2^-53 (three
        // roundings), so q1 is within 3074 of the quotient and |r1| < 3075 * d <= 2^52.
        // The conversions are unchecked because `as` saturates, which does not vectorize.
        // SAFETY: the estimate is finite and in 0 .. 2^63 * (1 + 2^-50), inside u64.
        let q1: u64 = unsafe { (x as f64 * self.inverse).to_int_unchecked() };
        let r1 = x.wrapping_sub(q1.wrapping_mul(self.d)) as i64;
        // r1 is exact in binary64: q2 is r1's quotient by d, or one off when r1 / d is within
        // an ulp of an integer, so r2 lies in [-d, 2d).
        // SAFETY: |r1 / d| < 3076, finite and inside i64.
        let q2: i64 = unsafe { (r1 as f64 * self.inverse).floor().to_int_unchecked() };
        let d = self.d as i64;
        let r2 = r1 - q2 * d;
        // Below 0 only if the product rounds up onto an integer, which needs |r1| near 2^52.
        let r2 = if r2 < 0 { r2 + d } else { r2 };
        (if r2 >= d { r2 - d } else { r2 }) as u64
    }
}

/// Fills `out` (whole elements of `N` bytes) with `value` of each output of splitmix64 from
/// `seed`, in parallel tasks of [`TASK_ELEMENTS`]. Each element is written as one `[u8; N]`
/// store (a byte-by-byte copy cost about 12% more per element).
fn fill_typed<const N: usize>(
    seed: u64,
    out: &mut [MaybeUninit<u8>],
    value: impl Fn(u64) -> [u8; N] + Sync,
) {
    debug_assert_eq!(out.len() % N, 0);
    // SAFETY: `[u8; N]` has alignment 1 and size N, so `out.len() / N` of them cover exactly
    // the first `out.len() / N * N` bytes of `out` (all of it: whole elements), and
    // `MaybeUninit<[u8; N]>` has the layout of `[MaybeUninit<u8>; N]`.
    let elements: &mut [MaybeUninit<[u8; N]>] =
        unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), out.len() / N) };
    elements
        .par_chunks_mut(TASK_ELEMENTS)
        .enumerate()
        .for_each(|(task, chunk)| {
            let first = (task * TASK_ELEMENTS) as u64;
            let state = seed.wrapping_add(first.wrapping_mul(GOLDEN));
            #[cfg(target_arch = "x86_64")]
            if wide_vectors() {
                // SAFETY: the CPU has every feature `fill_stretch_avx512` enables (checked).
                unsafe { fill_stretch_avx512(state, chunk, &value) };
                return;
            }
            fill_stretch(state, chunk, &value);
        });
}

/// Writes `value` of the splitmix64 outputs after `state` into `chunk`, in order. Each element
/// depends only on its index, so the compiler vectorizes the loop where the instruction set
/// allows (the whole draw, conversions included, with AVX-512).
#[inline(always)]
fn fill_stretch<const N: usize>(
    mut state: u64,
    chunk: &mut [MaybeUninit<[u8; N]>],
    value: &impl Fn(u64) -> [u8; N],
) {
    for element in chunk {
        element.write(value(splitmix64(&mut state)));
    }
}

/// [`fill_stretch`] compiled for AVX-512 (F, DQ for 64-bit multiplies and conversions, VL,
/// BW) and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,f16c")]
unsafe fn fill_stretch_avx512<const N: usize>(
    state: u64,
    chunk: &mut [MaybeUninit<[u8; N]>],
    value: &impl Fn(u64) -> [u8; N],
) {
    fill_stretch(state, chunk, value)
}

/// Whether this CPU runs [`fill_stretch_avx512`] (detected once).
#[cfg(target_arch = "x86_64")]
fn wide_vectors() -> bool {
    static DETECTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DETECTED.get_or_init(|| {
        use std::arch::is_x86_feature_detected as has;
        has!("avx512f")
            && has!("avx512dq")
            && has!("avx512vl")
            && has!("avx512bw")
            && has!("avx2")
            && has!("fma")
            && has!("f16c")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs for seed 0 of the published splitmix64 reference implementation.
        let mut state = 0;
        assert_eq!(splitmix64(&mut state), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut state), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn uniform_int_stays_in_range() {
        let generator = DataGenerator {
            seed: 7,
            distribution: Distribution::UniformInt { min: -3, max: 3 },
        };
        let mut bytes = Vec::new();
        generator.fill(DataType::Int8, 1000, &mut bytes).unwrap();
        assert!(bytes.iter().all(|&b| (-3..=3).contains(&(b as i8))));
        assert!(bytes.contains(&(-3i8 as u8)) && bytes.contains(&3));
    }

    #[test]
    fn sparse_max_zero_is_refused() {
        let generator = DataGenerator {
            seed: 1,
            distribution: Distribution::Sparse {
                per_million: 10,
                max: 0,
            },
        };
        let error = generator
            .fill(DataType::Uint8, 4, &mut Vec::new())
            .unwrap_err();
        assert!(error.0.contains("at least 1"), "{error}");
    }

    #[test]
    fn uniform_float_bounds_must_be_finite_and_ordered() {
        for (min, max) in [(1.0, 0.0), (f64::NAN, 1.0), (0.0, f64::INFINITY)] {
            let generator = DataGenerator {
                seed: 1,
                distribution: Distribution::UniformFloat { min, max },
            };
            assert!(generator
                .fill(DataType::Float32, 1, &mut Vec::new())
                .is_err());
        }
    }

    #[test]
    fn uniform_float16_rounds_each_binary64_draw_once() {
        // Every generated FLOAT16 element is the correctly rounded binary64 draw; `half`'s
        // `from_f64` is off by one ulp on about 1 in 2000 of these.
        let (min, max) = (1.0, 70000.0 / 3.0);
        let generator = DataGenerator {
            seed: 11,
            distribution: Distribution::UniformFloat { min, max },
        };
        let count = 200_000;
        let mut bytes = Vec::new();
        generator
            .fill(DataType::Float16, count, &mut bytes)
            .unwrap();
        let mut state = 11;
        let mut half_differs = 0;
        for chunk in bytes.chunks(2) {
            let x = splitmix64(&mut state);
            let u = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let exact = min + (max - min) * u;
            let got = half::f16::from_bits(u16::from_le_bytes([chunk[0], chunk[1]]));
            // Nearest: no binary16 neighbour is closer to the exact draw.
            let error = (got.to_f64() - exact).abs();
            for neighbour in [got.to_bits() - 1, got.to_bits() + 1] {
                let other = half::f16::from_bits(neighbour).to_f64();
                assert!((other - exact).abs() >= error, "{exact} -> {got}");
            }
            if half::f16::from_f64(exact) != got {
                half_differs += 1;
            }
        }
        assert!(
            half_differs > 0,
            "the draws include values half rounds wrongly"
        );
    }

    #[test]
    fn sparse_density_is_roughly_right() {
        let generator = DataGenerator {
            seed: 1,
            distribution: Distribution::Sparse {
                per_million: 10_000,
                max: 5,
            },
        };
        let mut bytes = Vec::new();
        generator
            .fill(DataType::Uint8, 100_000, &mut bytes)
            .unwrap();
        let nonzero = bytes.iter().filter(|&&b| b != 0).count();
        assert!((700..1300).contains(&nonzero), "{nonzero}");
    }

    /// Every distribution in every type, through both paths (or the one-at-a-time path alone
    /// where some value does not fit): the same bytes or the same error.
    #[test]
    fn the_parallel_path_gives_the_bytes_of_the_one_at_a_time_path() {
        let distributions = [
            Distribution::UniformInt { min: -3, max: 3 },
            Distribution::UniformInt { min: 0, max: 255 },
            Distribution::UniformInt {
                min: -2048,
                max: 2048,
            },
            Distribution::UniformInt {
                min: 1000,
                max: 1000,
            },
            Distribution::UniformInt {
                min: i64::MIN,
                max: i64::MAX,
            },
            Distribution::UniformInt {
                min: -(1 << 40),
                max: 1 << 40,
            },
            Distribution::UniformInt { min: 5, max: 300 },
            Distribution::UniformFloat {
                min: -1.0,
                max: 1.0,
            },
            Distribution::UniformFloat {
                min: -70000.0,
                max: 70000.0,
            },
            Distribution::UniformFloat { min: 0.0, max: 0.0 },
            Distribution::UniformFloat {
                min: -65504.0,
                max: 65504.0,
            },
            Distribution::UniformFloat {
                min: 0.0,
                max: 3e38,
            },
            Distribution::Sparse {
                per_million: 500_000,
                max: 7,
            },
            Distribution::Sparse {
                per_million: 1_000_000,
                max: u64::MAX,
            },
            Distribution::Sparse {
                per_million: 300_000,
                max: 255,
            },
            Distribution::Sparse {
                per_million: 300_000,
                max: 5000,
            },
        ];
        // More than one task, and not a whole number of them.
        let count = (2 * TASK_ELEMENTS + 123) as u64;
        let mut fast = 0;
        for distribution in distributions {
            let generator = DataGenerator {
                seed: 0x1234_5678,
                distribution,
            };
            for data_type in DataType::ALL {
                let (mut a, mut b) = (vec![9u8], vec![9u8]);
                let ra = generator.fill(data_type, count, &mut a);
                let rb = generator.fill_each(data_type, count, &mut b);
                let what = format!("{:?} in {data_type}", generator.distribution);
                match (ra, rb) {
                    (Ok(()), Ok(())) => assert!(a == b, "{what}: bytes differ"),
                    (Err(ea), Err(eb)) => assert_eq!(ea.to_string(), eb.to_string(), "{what}"),
                    (ra, rb) => panic!("{what}: {ra:?} vs {rb:?}"),
                }
                fast += usize::from(generator.fast_kind(data_type).is_some());
            }
        }
        // The parallel path is the common one.
        assert!(fast > 80, "{fast}");
    }

    #[test]
    fn the_remainder_without_division_is_exact() {
        let mut state = 99;
        let divisors = [
            2u128,
            3,
            7,
            10,
            255,
            256,
            1_000_000,
            (1 << 32) + 1,
            u64::MAX as u128 - 1,
            u64::MAX as u128,
            1 << 63,
            (1 << 63) + 12345,
            // Either side of the binary64 path's limit, and the widest INT32 span.
            NARROW_MAX - 1,
            NARROW_MAX,
            NARROW_MAX + 1,
            (1 << 32) - 1,
            1 << 32,
        ];
        let random_divisors = (0..200).map(|_| {
            let x = splitmix64(&mut state);
            // Spread over every bit length up to 2^40, where the binary64 path serves.
            u128::from(x >> (x % 40 + 24)).max(2)
        });
        let divisors: Vec<u128> = divisors.into_iter().chain(random_divisors).collect();
        for d in divisors {
            let m = Modulo::new(d);
            let wide = u128::from(u64::MAX);
            // Around the largest multiples of d, where a quotient estimate is most likely off.
            let near_multiples = (0..3u128).flat_map(|j| {
                let multiple = (wide / d).saturating_sub(j) * d;
                [multiple, multiple + 1, multiple + d - 1].map(|x| x.min(wide) as u64)
            });
            let edges = [
                0,
                1,
                u64::MAX,
                u64::MAX - 1,
                d as u64,
                (d as u64).wrapping_sub(1),
            ];
            for x in edges.into_iter().chain(near_multiples) {
                assert_eq!(u128::from(m.of(x)), u128::from(x) % d, "{x} mod {d}");
            }
            for _ in 0..10_000 {
                let x = splitmix64(&mut state);
                assert_eq!(u128::from(m.of(x)), u128::from(x) % d, "{x} mod {d}");
            }
        }
        assert_eq!(Modulo::new(1).of(12345), 0);
        assert_eq!(Modulo::new(1 << 64).of(12345), 12345);
    }

    /// Generation speed, in release: `cargo test --release --lib data_generator_speed --
    /// --ignored --nocapture` (2^26 FLOAT32 elements, both paths).
    #[cfg(unix)]
    #[test]
    #[ignore = "a measurement, run by hand in release"]
    fn data_generator_speed() {
        let count = 1u64 << 26;
        for (name, distribution, data_type) in [
            (
                "uniform_float FLOAT32",
                Distribution::UniformFloat {
                    min: -1.0,
                    max: 1.0,
                },
                DataType::Float32,
            ),
            (
                "uniform_float FLOAT16",
                Distribution::UniformFloat {
                    min: -1.0,
                    max: 1.0,
                },
                DataType::Float16,
            ),
            (
                "uniform_int INT32",
                Distribution::UniformInt {
                    min: -1000,
                    max: 1000,
                },
                DataType::Int32,
            ),
            (
                "sparse UINT8",
                Distribution::Sparse {
                    per_million: 500_000,
                    max: 255,
                },
                DataType::Uint8,
            ),
        ] {
            let generator = DataGenerator {
                seed: 1,
                distribution,
            };
            // Wall and process CPU time per element: on a shared machine the CPU time is the
            // steadier of the two (wall ≈ CPU / threads when the cores are free).
            let time = |f: &dyn Fn(&mut Vec<u8>)| {
                let mut out = Vec::new();
                let (wall, cpu) = (std::time::Instant::now(), process_cpu_seconds());
                f(&mut out);
                let per = |seconds: f64| seconds * 1e9 / count as f64;
                (
                    per(wall.elapsed().as_secs_f64()),
                    per(process_cpu_seconds() - cpu),
                )
            };
            let (each, each_cpu) = time(&|out| generator.fill_each(data_type, count, out).unwrap());
            let (fast, fast_cpu) = time(&|out| generator.fill(data_type, count, out).unwrap());
            println!(
                "{name}: one at a time {each:.2} ns/element ({each_cpu:.2} CPU), \
                 parallel {fast:.2} ns/element ({fast_cpu:.2} CPU, {} threads)",
                rayon::current_num_threads()
            );
        }
    }

    /// CPU time of the whole process so far (every thread), in seconds.
    #[cfg(unix)]
    fn process_cpu_seconds() -> f64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write; the clock id is a constant Linux knows.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    }
}
