//! Random case recipes within a backend's claims, and how a recipe becomes a generator
//! [`Draft`].
//!
//! A [`Recipe`] is the small, structural description that the shrinker edits (sizes, strides,
//! element bits, axes); [`Recipe::draft`] turns it into a [`Draft`] with the generator's own
//! builders, so the level, expected outputs and class come from the validator, the oracle and
//! [`crate::readings`] exactly as for generated cases. Drawing uses only the seeded
//! [`Rng`]: the same seed draws the same recipes.

use crate::generate::argmax::argmax_draft;
use crate::generate::draft::{Content, Draft, InputDraft};
use crate::generate::nonzero_coordinates::nonzero_draft;
use crate::generate::one_hot::{off_on, one_hot_draft};
use crate::generate::shapes::with_size;
use crate::generate::values::{bits_of, float_specials, int_max, int_min, Rng, Value};
use opconform_backend::{spec, AxisDirection, DataType, Level, OperatorKind};

/// The most logical elements a drawn tensor has (keeps cases small and fast).
pub const MAX_ELEMENTS: usize = 256;

/// The most dimensions a drawn tensor has.
pub const MAX_RANK: usize = 8;

/// The operators `explore` draws cases for.
pub const OPERATORS: [OperatorKind; 3] = [
    OperatorKind::DmlArgMax,
    OperatorKind::DmlNonZeroCoordinates,
    OperatorKind::DmlOneHot,
];

/// A structural description of one case, edited by the shrinker.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Recipe {
    /// The operator.
    pub operator: OperatorKind,
    /// ArgMax and NonZeroCoordinates: the input's type; OneHot: the indices' type.
    pub input_type: DataType,
    /// ArgMax: the output's type; OneHot: the values' (and output's) type; else unused.
    pub output_type: DataType,
    /// ArgMax and NonZeroCoordinates: the input's sizes; OneHot: the output's sizes.
    pub sizes: Vec<u32>,
    /// The input's strides in elements (ArgMax and NonZeroCoordinates), or packed.
    pub strides: Option<Vec<u32>>,
    /// Element bits: the input buffer (offset 0 to the last element), or OneHot's indices in
    /// row-major order.
    pub data: Vec<u64>,
    /// ArgMax: `Axes`; OneHot: `[Axis]`.
    pub axes: Vec<u32>,
    /// ArgMax: `AxisDirection`.
    pub direction: AxisDirection,
    /// NonZeroCoordinates: (count rank, coordinates rank); OneHot: (values rank, unused), the
    /// output's rank.
    pub ranks: (usize, usize),
    /// OneHot: OffValue and OnValue bits.
    pub values: [u64; 2],
}

impl Recipe {
    /// The sizes `data` is laid out over when packed: the input's, or OneHot's index sizes.
    pub fn data_sizes(&self) -> Vec<u32> {
        if self.operator == OperatorKind::DmlOneHot {
            with_size(&self.sizes, self.axes[0] as usize, 1)
        } else {
            self.sizes.clone()
        }
    }

    /// The generator draft this recipe describes.
    pub fn draft(&self, id: &str, note: &str) -> Draft {
        let values = |bits: &[u64]| bits.iter().map(|&b| Value::Bits(b)).collect::<Vec<_>>();
        match self.operator {
            OperatorKind::DmlArgMax => argmax_draft(
                id,
                note,
                self.input(),
                self.output_type,
                &self.axes,
                self.direction,
            ),
            OperatorKind::DmlNonZeroCoordinates => nonzero_draft(
                id,
                note,
                self.input(),
                self.ranks.0,
                self.ranks.1,
                self.sizes.len() as u32,
            ),
            OperatorKind::DmlOneHot => one_hot_draft(
                id,
                note,
                self.input_type,
                values(&self.data),
                off_on(
                    self.output_type,
                    self.ranks.0,
                    Value::Bits(self.values[0]),
                    Value::Bits(self.values[1]),
                ),
                &self.sizes,
                self.axes[0],
            ),
            OperatorKind::OvOneHot1 => unreachable!("explore does not draw OneHot-1"),
        }
    }

    fn input(&self) -> InputDraft {
        InputDraft {
            data_type: self.input_type,
            sizes: self.sizes.clone(),
            strides: self.strides.clone(),
            total_size: None,
            content: Content::Data(self.data.iter().map(|&b| Value::Bits(b)).collect()),
        }
    }

    /// A size measure the shrinker drives down, most important first: logical elements,
    /// dimensions, strided or packed, non-zero data elements, extra ranks, axes.
    pub fn weight(&self) -> (usize, usize, bool, usize, usize, usize) {
        let product = |sizes: &[u32]| sizes.iter().map(|&s| s as usize).product::<usize>();
        (
            product(&self.sizes) + product(&self.data_sizes()),
            self.sizes.len(),
            self.strides.is_some(),
            self.data.iter().filter(|&&b| b != 0).count(),
            self.ranks.0 + self.ranks.1,
            self.axes.len(),
        )
    }
}

/// Buffer elements from offset 0 to the last element's offset.
pub fn span(sizes: &[u32], strides: Option<&[u32]>) -> usize {
    match strides {
        None => sizes.iter().map(|&s| s as usize).product(),
        Some(strides) => {
            if sizes.contains(&0) {
                return 0;
            }
            sizes
                .iter()
                .zip(strides)
                .map(|(&s, &st)| (s as usize - 1) * st as usize)
                .sum::<usize>()
                + 1
        }
    }
}

/// The strides of a packed tensor whose dimensions are laid out in `order` (outermost first),
/// each padded by `padding[d]` elements.
fn strides_in_order(sizes: &[u32], order: &[usize], padding: &[u32]) -> Vec<u32> {
    let mut strides = vec![0; sizes.len()];
    let mut step = 1u32;
    for &d in order.iter().rev() {
        strides[d] = step;
        step *= sizes[d] + padding[d];
    }
    strides
}

/// Draws one recipe for `operator` at `level` (its support table in force there), or `None`
/// when the operator has no table at that level.
pub fn draw(rng: &mut Rng, operator: OperatorKind, level: Level) -> Option<Recipe> {
    let table = spec::for_operator(operator).table_at(level)?;
    let pick_type = |rng: &mut Rng, tensor: &str| -> Option<DataType> {
        let types = &table.tensors.get(tensor)?.data_types;
        (!types.is_empty()).then(|| types[rng.below(types.len())])
    };
    let pick_rank = |rng: &mut Rng, tensor: &str| -> usize {
        table.tensors.get(tensor).map_or(4, |t| {
            let low = t.dimension_counts[0].max(1);
            let high = t.dimension_counts[1].clamp(low, MAX_RANK);
            rng.range(low as i128, high as i128) as usize
        })
    };
    let recipe = match operator {
        OperatorKind::DmlArgMax => {
            let input_type = pick_type(rng, "InputTensor")?;
            let rank = pick_rank(rng, "InputTensor");
            let sizes = draw_sizes(rng, rank);
            let strides = draw_strides(rng, &sizes);
            let data = draw_data(rng, input_type, span(&sizes, strides.as_deref()), false);
            let axes: Vec<u32> = (0..rank as u32).filter(|_| rng.below(2) == 0).collect();
            let axes = if axes.is_empty() {
                vec![rng.below(rank) as u32]
            } else {
                axes
            };
            Recipe {
                operator,
                input_type,
                output_type: pick_type(rng, "OutputTensor")?,
                sizes,
                strides,
                data,
                axes,
                direction: if rng.below(2) == 0 {
                    AxisDirection::Increasing
                } else {
                    AxisDirection::Decreasing
                },
                ranks: (0, 0),
                values: [0, 0],
            }
        }
        OperatorKind::DmlNonZeroCoordinates => {
            let input_type = pick_type(rng, "InputTensor")?;
            let rank = pick_rank(rng, "InputTensor");
            let sizes = draw_sizes(rng, rank);
            let strides = draw_strides(rng, &sizes);
            let data = draw_data(rng, input_type, span(&sizes, strides.as_deref()), true);
            let count_rank = pick_rank(rng, "OutputCountTensor");
            let coordinates_rank = pick_rank(rng, "OutputCoordinatesTensor").max(2);
            Recipe {
                operator,
                input_type,
                output_type: DataType::Uint32,
                sizes,
                strides,
                data,
                axes: Vec::new(),
                direction: AxisDirection::Increasing,
                ranks: (count_rank, coordinates_rank),
                values: [0, 0],
            }
        }
        OperatorKind::DmlOneHot => {
            let index_type = pick_type(rng, "IndicesTensor")?;
            let value_type = pick_type(rng, "ValuesTensor")?;
            let rank = pick_rank(rng, "OutputTensor");
            let sizes = draw_sizes(rng, rank);
            let axis = rng.below(rank);
            let depth = i128::from(sizes[axis]);
            let count = with_size(&sizes, axis, 1).iter().product::<u32>() as usize;
            let low = if index_type.is_signed_integer() {
                -depth - 1
            } else {
                0
            };
            let data = (0..count)
                .map(|_| bits_of(index_type, Value::Int(rng.range(low, depth + 1))))
                .collect();
            let pair = draw_data(rng, value_type, 2, false);
            Recipe {
                operator,
                input_type: index_type,
                output_type: value_type,
                sizes,
                strides: None,
                data,
                axes: vec![axis as u32],
                direction: AxisDirection::Increasing,
                // ONE_HOT.DIMENSION_COUNT_EQUAL: the values have the output's dimension count.
                ranks: (rank, 0),
                values: [pair[0], pair[1]],
            }
        }
        OperatorKind::OvOneHot1 => return None,
    };
    Some(recipe)
}

/// Sizes of `rank` dimensions, often 1, at most [`MAX_ELEMENTS`] elements.
fn draw_sizes(rng: &mut Rng, rank: usize) -> Vec<u32> {
    const CHOICES: [u32; 7] = [1, 1, 2, 2, 3, 4, 5];
    let mut sizes: Vec<u32> = (0..rank)
        .map(|_| CHOICES[rng.below(CHOICES.len())])
        .collect();
    while sizes.iter().map(|&s| s as usize).product::<usize>() > MAX_ELEMENTS {
        let largest = (0..rank).max_by_key(|&d| sizes[d]).expect("rank >= 1");
        sizes[largest] -= 1;
    }
    sizes
}

/// Packed (none), padded, permuted or broadcast (a stride of 0) strides.
fn draw_strides(rng: &mut Rng, sizes: &[u32]) -> Option<Vec<u32>> {
    let rank = sizes.len();
    let natural: Vec<usize> = (0..rank).collect();
    let no_padding = vec![0; rank];
    match rng.below(5) {
        0 | 1 => None,
        2 => {
            let padding: Vec<u32> = (0..rank).map(|_| rng.below(3) as u32).collect();
            Some(strides_in_order(sizes, &natural, &padding))
        }
        3 => {
            let mut order = natural;
            for i in (1..rank).rev() {
                order.swap(i, rng.below(i + 1));
            }
            Some(strides_in_order(sizes, &order, &no_padding))
        }
        _ => {
            let mut strides = strides_in_order(sizes, &natural, &no_padding);
            strides[rng.below(rank)] = 0;
            Some(strides)
        }
    }
}

/// `count` elements of `data_type`: a few small values (so ties are common), zeros (often,
/// when `zeros`), and the type's extremes and float specials (NaN, -0.0, infinities,
/// subnormals).
pub fn draw_data(rng: &mut Rng, data_type: DataType, count: usize, zeros: bool) -> Vec<u64> {
    let pool: Vec<u64> = (0..1 + rng.below(4))
        .map(|_| small_value(rng, data_type))
        .collect();
    let specials = special_values(data_type);
    (0..count)
        .map(|_| match rng.below(8) {
            0 | 1 if zeros => 0,
            2 => specials[rng.below(specials.len())],
            _ => pool[rng.below(pool.len())],
        })
        .collect()
}

fn small_value(rng: &mut Rng, data_type: DataType) -> u64 {
    if data_type.is_float() {
        bits_of(data_type, Value::Float(rng.range(-6, 6) as f64 * 0.5))
    } else if data_type.is_signed_integer() {
        bits_of(data_type, Value::Int(rng.range(-4, 4)))
    } else {
        bits_of(data_type, Value::Int(rng.range(0, 8)))
    }
}

fn special_values(data_type: DataType) -> Vec<u64> {
    if data_type.is_float() {
        let s = float_specials(data_type);
        vec![
            crate::generate::values::canonical_nan(data_type),
            s.neg_zero,
            s.inf,
            s.neg_inf,
            s.max,
            s.lowest,
            s.min_subnormal,
            0,
        ]
    } else {
        vec![
            bits_of(data_type, Value::Int(int_min(data_type))),
            bits_of(data_type, Value::Int(int_max(data_type))),
            0,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_recipes() {
        let level = Level::dml(0x4100);
        for operator in OPERATORS {
            let a = draw(&mut Rng::new(7), operator, level);
            let b = draw(&mut Rng::new(7), operator, level);
            assert_eq!(a, b);
            assert!(a.is_some());
        }
    }

    #[test]
    fn drawn_data_fills_the_buffer_span() {
        let mut rng = Rng::new(3);
        for _ in 0..200 {
            let recipe = draw(&mut rng, OperatorKind::DmlArgMax, Level::dml(0x4100)).unwrap();
            assert!(recipe.sizes.iter().product::<u32>() as usize <= MAX_ELEMENTS);
            assert_eq!(
                recipe.data.len(),
                span(&recipe.sizes, recipe.strides.as_deref())
            );
        }
    }
}
