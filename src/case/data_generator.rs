//! Seeded data generators: a case can describe a large input as a generator instead of listing
//! its elements, so the YAML stays small. The sequence is splitmix64, simple enough for the
//! numpy cross-check (`tools/check_expectations.py`) to reproduce bit for bit.

use super::element::{Element, EncodeError};
use opconform_backend::DataType;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DataGenerator {
    /// Appends `count` generated elements of `data_type` to `out`.
    pub fn fill(
        &self,
        data_type: DataType,
        count: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        self.check()?;
        let mut state = self.seed;
        for _ in 0..count {
            let x = splitmix64(&mut state);
            self.element(x).encode(data_type, out)?;
        }
        Ok(())
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
}
