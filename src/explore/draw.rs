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
use crate::generate::ov_one_hot::ov_draft;
use crate::generate::shapes::with_size;
use crate::generate::values::{bits_of, float_specials, int_max, int_min, int_value, Rng, Value};
use opconform_backend::{spec, AxisDirection, DataType, Level, OperatorKind};

/// The most logical elements a drawn tensor has (keeps cases small and fast).
pub const MAX_ELEMENTS: usize = 256;

/// The most dimensions a drawn tensor has.
pub const MAX_RANK: usize = 8;

/// The operators `explore` draws cases for.
pub const OPERATORS: [OperatorKind; 4] = [
    OperatorKind::DmlArgMax,
    OperatorKind::DmlNonZeroCoordinates,
    OperatorKind::DmlOneHot,
    OperatorKind::OvOneHot1,
];

/// One draw in this many is a large one, sized around a bundled backend's thresholds.
pub const LARGE_EVERY: usize = 16;

/// Element counts around which large draws are sized: the CPU backend's ArgMax scan and
/// block sizes (1024, 4096), its parallel task and parallel minimum (2^15, 2^16), and twice
/// the parallel minimum (so NonZeroCoordinates writes more than 2^16 rows).
pub const THRESHOLDS: [usize; 5] = [1 << 10, 1 << 12, 1 << 15, 1 << 16, 1 << 17];

/// The output element count that one large OneHot draw in two is sized around (2^20).
pub const ONE_HOT_OUTPUT_THRESHOLD: usize = 1 << 20;

/// Types from simplest to least simple, the order the shrinker moves types along.
pub const SIMPLE_TYPES: [DataType; 11] = [
    DataType::Int32,
    DataType::Uint32,
    DataType::Float32,
    DataType::Int64,
    DataType::Uint64,
    DataType::Int16,
    DataType::Uint16,
    DataType::Int8,
    DataType::Uint8,
    DataType::Float16,
    DataType::Float64,
];

/// [`Recipe::weight`]: compared lexicographically.
pub type Weight = (
    usize,
    usize,
    bool,
    usize,
    usize,
    usize,
    (u128, usize, usize, bool),
);

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
    /// OneHot and OneHot-1: OffValue and OnValue bits.
    pub values: [u64; 2],
    /// OneHot-1: `depth` (the indices' sizes are `sizes`).
    pub depth: u32,
    /// OneHot-1: `axis`, a position in the output's shape, negative from the end.
    pub ov_axis: i64,
    /// For an invalid-descriptor draw: the rule it breaks and how (see [`super::invalid`]).
    pub invalid: Option<super::invalid::Invalid>,
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
            OperatorKind::OvOneHot1 => ov_draft(
                id,
                note,
                self.input_type,
                &self.sizes,
                values(&self.data),
                self.depth,
                self.output_type,
                Value::Bits(self.values[1]),
                Value::Bits(self.values[0]),
                self.ov_axis,
            ),
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

    /// Logical elements of the main tensors: the input (or the output, for OneHot) and the
    /// data (OneHot's indices); OneHot-1 counts its indices and its output.
    pub fn elements(&self) -> usize {
        let product = |sizes: &[u32]| sizes.iter().map(|&s| s as usize).product::<usize>();
        if self.operator == OperatorKind::OvOneHot1 {
            product(&self.sizes) * (self.depth as usize + 1)
        } else {
            product(&self.sizes) + product(&self.data_sizes())
        }
    }

    /// OneHot and OneHot-1: the sum of the indices' magnitudes (0 for other operators).
    pub fn index_magnitude(&self) -> u128 {
        let indices = matches!(
            self.operator,
            OperatorKind::DmlOneHot | OperatorKind::OvOneHot1
        );
        if !indices || self.input_type.is_float() {
            return 0;
        }
        self.data
            .iter()
            .map(|&b| int_value(self.input_type, b).unsigned_abs())
            .sum()
    }

    /// A size measure the shrinker drives down, most important first: logical elements,
    /// dimensions, strided or packed, non-zero data elements, extra ranks, axes; then what
    /// makes equal failures print alike: the types' places in [`SIMPLE_TYPES`], the axis
    /// numbers and the direction (increasing first).
    pub fn weight(&self) -> Weight {
        let simplicity = |t: DataType| SIMPLE_TYPES.iter().position(|&s| s == t).unwrap_or(0);
        (
            self.elements(),
            self.sizes.len(),
            self.strides.is_some(),
            self.data.iter().filter(|&&b| b != 0).count(),
            self.ranks.0 + self.ranks.1,
            self.axes.len(),
            (
                self.index_magnitude(),
                simplicity(self.input_type) + simplicity(self.output_type),
                self.axes.iter().map(|&a| a as usize).sum::<usize>(),
                self.direction == AxisDirection::Decreasing,
            ),
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
/// when the operator has no table at that level. One draw in [`LARGE_EVERY`] is large:
/// sized just below or above one of the [`THRESHOLDS`] (OneHot's output, one time in two,
/// around [`ONE_HOT_OUTPUT_THRESHOLD`]), packed, with dense data.
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
    let large = rng.below(LARGE_EVERY) == 0;
    let target = |rng: &mut Rng| -> usize {
        let threshold = THRESHOLDS[rng.below(THRESHOLDS.len())];
        // Just below, at or just above the threshold, or a little further away.
        let offsets = [
            -2i64,
            -1,
            0,
            1,
            2,
            -(threshold as i64) / 16,
            threshold as i64 / 16,
        ];
        (threshold as i64 + offsets[rng.below(offsets.len())]) as usize
    };
    // An input's sizes and strides: packed and near a threshold when large, else small with
    // drawn strides (padding, permutation, broadcast).
    let input_layout = |rng: &mut Rng, rank: usize| -> (Vec<u32>, Option<Vec<u32>>) {
        if large {
            let count = target(rng);
            (sizes_near(rng, rank, count), None)
        } else {
            let sizes = draw_sizes(rng, rank);
            let strides = draw_strides(rng, &sizes);
            (sizes, strides)
        }
    };
    let mut recipe = Recipe {
        operator,
        input_type: DataType::Uint32,
        output_type: DataType::Uint32,
        sizes: Vec::new(),
        strides: None,
        data: Vec::new(),
        axes: Vec::new(),
        direction: AxisDirection::Increasing,
        ranks: (0, 0),
        values: [0, 0],
        depth: 0,
        ov_axis: 0,
        invalid: None,
    };
    match operator {
        OperatorKind::DmlArgMax => {
            let input_type = pick_type(rng, "InputTensor")?;
            let rank = pick_rank(rng, "InputTensor");
            let (sizes, strides) = input_layout(rng, rank);
            let data = draw_data(rng, input_type, span(&sizes, strides.as_deref()), false);
            let axes: Vec<u32> = (0..rank as u32).filter(|_| rng.below(2) == 0).collect();
            let axes = if axes.is_empty() {
                vec![rng.below(rank) as u32]
            } else {
                axes
            };
            recipe.input_type = input_type;
            recipe.output_type = pick_type(rng, "OutputTensor")?;
            recipe.sizes = sizes;
            recipe.strides = strides;
            recipe.data = data;
            recipe.axes = axes;
            if rng.below(2) != 0 {
                recipe.direction = AxisDirection::Decreasing;
            }
        }
        OperatorKind::DmlNonZeroCoordinates => {
            let input_type = pick_type(rng, "InputTensor")?;
            let rank = pick_rank(rng, "InputTensor");
            let (sizes, strides) = input_layout(rng, rank);
            // Large inputs are dense (few zeros), so that the count crosses the thresholds too.
            let data = draw_data(rng, input_type, span(&sizes, strides.as_deref()), !large);
            let count_rank = pick_rank(rng, "OutputCountTensor");
            let coordinates_rank = pick_rank(rng, "OutputCoordinatesTensor").max(2);
            recipe.input_type = input_type;
            recipe.sizes = sizes;
            recipe.strides = strides;
            recipe.data = data;
            recipe.ranks = (count_rank, coordinates_rank);
        }
        OperatorKind::DmlOneHot => {
            let index_type = pick_type(rng, "IndicesTensor")?;
            let value_type = pick_type(rng, "ValuesTensor")?;
            let rank = pick_rank(rng, "OutputTensor");
            let sizes = if !large {
                draw_sizes(rng, rank)
            } else if rng.below(2) == 0 {
                let near = ONE_HOT_OUTPUT_THRESHOLD as i64 + [-1i64, 1, 4096][rng.below(3)];
                sizes_near(rng, rank, near as usize)
            } else {
                {
                    let count = target(rng);
                    sizes_near(rng, rank, count)
                }
            };
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
            let pair = if large {
                // Short values keep the expected output's text small.
                vec![small_value(rng, value_type), small_value(rng, value_type)]
            } else {
                draw_data(rng, value_type, 2, false)
            };
            recipe.input_type = index_type;
            recipe.output_type = value_type;
            recipe.sizes = sizes;
            recipe.data = data;
            recipe.axes = vec![axis as u32];
            // ONE_HOT.DIMENSION_COUNT_EQUAL: the values have the output's dimension count.
            recipe.ranks = (rank, 0);
            recipe.values = [pair[0], pair[1]];
        }
        OperatorKind::OvOneHot1 => {
            let index_type = pick_type(rng, "indices")?;
            let value_type = pick_type(rng, "on_value")?;
            // indices of rank 0 to 8 (an output of rank 1 to 9).
            let rank = rng.below(MAX_RANK + 1);
            let depth = match rng.below(8) {
                0 => 1,
                1 => [255u32, 256, 257, 300][rng.below(4)],
                _ => 1 + rng.below(6) as u32,
            };
            let sizes = if large && rank > 0 {
                let count = target(rng) / depth as usize + 1;
                sizes_near(rng, rank, count)
            } else {
                let mut sizes = draw_sizes(rng, rank);
                while element_count(&sizes) * depth as usize > 4 * MAX_ELEMENTS {
                    let largest = (0..rank).max_by_key(|&d| sizes[d]).expect("rank >= 1");
                    sizes[largest] = 1;
                }
                sizes
            };
            let n = rank as i64;
            // axis -1 (append) half the time, else any position of the output, from either end.
            let ov_axis = if rng.below(2) == 0 {
                -1
            } else {
                rng.range(-(i128::from(n) + 1), i128::from(n)) as i64
            };
            let depth_i = i128::from(depth);
            let data = (0..element_count(&sizes))
                .map(|_| {
                    let value = match rng.below(16) {
                        0 => int_max(index_type),
                        1 => int_min(index_type),
                        2 if index_type == DataType::Int64 => (1i128 << 32) + rng.range(0, depth_i),
                        3 | 4 => rng.range(-depth_i - 1, -1),
                        _ => rng.range(0, depth_i + 1),
                    };
                    bits_of(index_type, Value::Int(value))
                })
                .collect();
            let pair = if large {
                vec![small_value(rng, value_type), small_value(rng, value_type)]
            } else {
                draw_data(rng, value_type, 2, false)
            };
            recipe.input_type = index_type;
            recipe.output_type = value_type;
            recipe.sizes = sizes;
            recipe.data = data;
            recipe.values = [pair[0], pair[1]];
            recipe.depth = depth;
            recipe.ov_axis = ov_axis;
        }
    }
    Some(recipe)
}

fn element_count(sizes: &[u32]) -> usize {
    sizes.iter().map(|&s| s as usize).product()
}

/// Sizes of `rank` dimensions, often 1, at most [`MAX_ELEMENTS`] elements.
fn draw_sizes(rng: &mut Rng, rank: usize) -> Vec<u32> {
    const CHOICES: [u32; 7] = [1, 1, 2, 2, 3, 4, 5];
    let mut sizes: Vec<u32> = (0..rank)
        .map(|_| CHOICES[rng.below(CHOICES.len())])
        .collect();
    while element_count(&sizes) > MAX_ELEMENTS {
        let largest = (0..rank).max_by_key(|&d| sizes[d]).expect("rank >= 1");
        sizes[largest] -= 1;
    }
    sizes
}

/// Sizes of `rank` dimensions with exactly `count` elements: the outer dimensions small
/// (1 to 3, while their product divides `count`), the innermost taking the rest.
fn sizes_near(rng: &mut Rng, rank: usize, count: usize) -> Vec<u32> {
    let count = count.max(1);
    let mut sizes = vec![1u32; rank];
    let mut rest = count;
    for size in sizes.iter_mut().take(rank.saturating_sub(1)) {
        let pick = 1 + rng.below(3);
        if rest.is_multiple_of(pick) {
            *size = pick as u32;
            rest /= pick;
        }
    }
    if let Some(last) = sizes.last_mut() {
        *last = rest as u32;
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

/// A small value of `data_type` (halves from -3 to 3, small integers).
pub fn small_value(rng: &mut Rng, data_type: DataType) -> u64 {
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
        for operator in OPERATORS {
            let level = if operator == OperatorKind::OvOneHot1 {
                Level::Opset(1)
            } else {
                Level::dml(0x4100)
            };
            let a = draw(&mut Rng::new(7), operator, level);
            let b = draw(&mut Rng::new(7), operator, level);
            assert_eq!(a, b);
            assert!(a.is_some());
        }
    }

    #[test]
    fn drawn_data_fills_the_buffer_span() {
        let mut rng = Rng::new(3);
        let mut large = 0;
        for _ in 0..200 {
            let recipe = draw(&mut rng, OperatorKind::DmlArgMax, Level::dml(0x4100)).unwrap();
            let elements = element_count(&recipe.sizes);
            if elements > MAX_ELEMENTS {
                // A large draw: packed, near a threshold.
                large += 1;
                assert!(recipe.strides.is_none());
                assert!(THRESHOLDS.iter().any(|&t| elements.abs_diff(t) <= t / 16));
            }
            assert_eq!(
                recipe.data.len(),
                span(&recipe.sizes, recipe.strides.as_deref())
            );
        }
        assert!((4..=30).contains(&large), "{large} large draws in 200");
    }
}
