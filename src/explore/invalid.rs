//! Invalid-descriptor draws just past the boundary of one descriptor rule: a rank one above
//! the support row, a type just outside its table cell, an axis equal to the rank, a depth of
//! 0, a buffer one byte or one element too small, an output size off by one, one stride too
//! many, one dimension too many.
//!
//! A draw is a valid [`Recipe`] (from [`super::draw::draw`]) with an [`Invalid`]: the rule it
//! targets and the [`Edit`] that breaks it, applied to the generator's draft by [`apply`].
//! `explore` keeps a draw only when the validator's violations are exactly that one rule, so
//! every negative case it runs breaks the rule it names and nothing else. The backend must
//! refuse it (`invalid_argument`); running it is a failure, "accepted an invalid descriptor
//! of rule R", which the shrinker keeps (the rule travels with the recipe).

use super::draw::{self, span, Recipe, MAX_ELEMENTS};
use crate::generate::draft::{Content, Draft, Expect};
use crate::generate::values::{Rng, Value};
use opconform_backend::{min_buffer_size_bytes, spec, DataType, Level, OperatorKind};

/// The rule an invalid draw breaks, and how.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Invalid {
    /// The rule id (`specs/*.yaml`) the descriptor breaks, and the only one.
    pub rule: &'static str,
    /// How the valid draft is changed to break it.
    pub edit: Edit,
}

/// A change that takes a valid descriptor just past one rule's boundary.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Edit {
    /// None: the recipe's rank is already one above the support row.
    RankAboveRow,
    /// These tensors get a type outside their support-table cell.
    DataType {
        /// Tensor names.
        tensors: Vec<&'static str>,
        /// The type.
        data_type: DataType,
    },
    /// ArgMax's last axis equal to the rank; OneHot's Axis equal to the rank; OneHot-1's axis
    /// equal to N + 1 (one past the output's last position).
    AxisPastEnd,
    /// OneHot-1's axis -(N + 2), one before the first position counted from the end.
    AxisBeforeStart,
    /// ArgMax's first axis listed twice.
    AxisRepeated,
    /// OneHot-1's depth 0.
    DepthZero,
    /// `TotalTensorSizeInBytes` one byte below the minimum.
    TotalSizeOneByteShort(&'static str),
    /// `TotalTensorSizeInBytes` one element short of what the sizes and strides reach.
    BufferOneElementShort(&'static str),
    /// One size off by one, counted from the last dimension.
    SizeOffByOne {
        /// Tensor name.
        tensor: &'static str,
        /// 0 for the last dimension.
        from_end: usize,
        /// One larger (else one smaller, or larger where the size is 1).
        up: bool,
    },
    /// One stride more than the tensor has dimensions.
    OneStrideTooMany(&'static str),
    /// A leading size-1 dimension more on one tensor.
    ExtraDimension(&'static str),
}

/// The number of edit kinds [`draw_invalid`] picks from.
const KINDS: usize = 11;

/// The prefix of the operator's rule ids.
fn prefix(operator: OperatorKind) -> &'static str {
    match operator {
        OperatorKind::DmlArgMax => "ARGMAX",
        OperatorKind::DmlNonZeroCoordinates => "NONZERO_COORDINATES",
        OperatorKind::DmlOneHot => "ONE_HOT",
        OperatorKind::OvOneHot1 => "ONEHOT1",
    }
}

/// `PREFIX.NAME` as a static rule id.
fn rule(operator: OperatorKind, name: &str) -> &'static str {
    let id = format!("{}.{name}", prefix(operator));
    spec::all_rules()
        .find(|r| r.id == id)
        .map(|r| r.id.as_str())
        .unwrap_or_else(|| panic!("no rule {id} in specs/"))
}

/// Draws an invalid recipe for `operator` at `level`: a small valid draw with one edit, or
/// `None` when the edit picked does not apply to the draw (the caller draws again). Whether
/// the edit breaks exactly its rule is checked when the case is made ([`apply`] and the
/// validator).
pub fn draw_invalid(rng: &mut Rng, operator: OperatorKind, level: Level) -> Option<Recipe> {
    let mut recipe = draw::draw(rng, operator, level)?;
    if recipe.elements() > 4 * MAX_ELEMENTS {
        return None;
    }
    // Input contents are not sent for a negative case (the loader zero-fills them).
    recipe.data.iter_mut().for_each(|b| *b = 0);
    let (inputs, outputs) = operator.tensor_names();
    let all: Vec<&'static str> = inputs.iter().chain(outputs).copied().collect();
    let any_tensor = |rng: &mut Rng| all[rng.below(all.len())];
    let table = spec::for_operator(operator).table_at(level)?;
    let invalid = match rng.below(KINDS) {
        0 => {
            let main = match operator {
                OperatorKind::DmlOneHot => "OutputTensor",
                OperatorKind::OvOneHot1 => return None,
                _ => "InputTensor",
            };
            let max = table.tensors.get(main)?.dimension_counts[1];
            let k = (max + 1)
                .checked_sub(recipe.sizes.len())
                .filter(|&k| k > 0)?;
            raise_rank(&mut recipe, k);
            Invalid {
                rule: rule(operator, "SUPPORT_DIMENSION_COUNT"),
                edit: Edit::RankAboveRow,
            }
        }
        1 => {
            let tensor = any_tensor(rng);
            let cell = &table.tensors.get(tensor)?.data_types;
            let outside: Vec<DataType> = DataType::ALL
                .into_iter()
                .filter(|t| !cell.contains(t))
                .collect();
            // OneHot-1: T2 takes every type, and a case file's depth is INT32 or INT64, so
            // indices of another type also break ONEHOT1.T1_SAME_TYPE: two rules, not drawn
            // (cases/generated covers it).
            if outside.is_empty() || operator == OperatorKind::OvOneHot1 {
                return None;
            }
            let tensors = vec![tensor];
            Invalid {
                rule: rule(operator, "SUPPORT_DATA_TYPE"),
                edit: Edit::DataType {
                    tensors,
                    data_type: outside[rng.below(outside.len())],
                },
            }
        }
        2 => Invalid {
            rule: match operator {
                OperatorKind::DmlArgMax => rule(operator, "AXES_RANGE"),
                OperatorKind::DmlNonZeroCoordinates => return None,
                _ => rule(operator, "AXIS_RANGE"),
            },
            edit: Edit::AxisPastEnd,
        },
        3 if operator == OperatorKind::OvOneHot1 => Invalid {
            rule: rule(operator, "AXIS_RANGE"),
            edit: Edit::AxisBeforeStart,
        },
        4 if operator == OperatorKind::DmlArgMax => Invalid {
            rule: rule(operator, "AXES_DISTINCT"),
            edit: Edit::AxisRepeated,
        },
        5 if operator == OperatorKind::OvOneHot1 => Invalid {
            rule: rule(operator, "DEPTH_POSITIVE"),
            edit: Edit::DepthZero,
        },
        6 => Invalid {
            rule: "TENSOR.TOTAL_SIZE",
            edit: Edit::TotalSizeOneByteShort(any_tensor(rng)),
        },
        7 => Invalid {
            rule: "TENSOR.TOTAL_SIZE",
            edit: Edit::BufferOneElementShort(any_tensor(rng)),
        },
        8 => size_off_by_one(rng, &recipe)?,
        9 => Invalid {
            rule: "TENSOR.STRIDES_COUNT",
            edit: Edit::OneStrideTooMany(any_tensor(rng)),
        },
        10 => match operator {
            OperatorKind::DmlArgMax => Invalid {
                rule: rule(operator, "DIMENSION_COUNT_EQUAL"),
                edit: Edit::ExtraDimension("OutputTensor"),
            },
            OperatorKind::DmlOneHot => Invalid {
                rule: rule(operator, "DIMENSION_COUNT_EQUAL"),
                edit: Edit::ExtraDimension("ValuesTensor"),
            },
            OperatorKind::OvOneHot1 => Invalid {
                rule: rule(operator, "OUTPUT_SHAPE"),
                edit: Edit::ExtraDimension("output"),
            },
            OperatorKind::DmlNonZeroCoordinates => return None,
        },
        _ => return None,
    };
    recipe.invalid = Some(invalid);
    Some(recipe)
}

/// An output (or index) size off by one, with the rule that forbids it.
fn size_off_by_one(rng: &mut Rng, recipe: &Recipe) -> Option<Invalid> {
    let operator = recipe.operator;
    let up = rng.below(2) == 0;
    let edit = |tensor, from_end| Edit::SizeOffByOne {
        tensor,
        from_end,
        up,
    };
    let (name, edit) = match operator {
        OperatorKind::DmlArgMax => (
            "OUTPUT_SIZES",
            edit("OutputTensor", rng.below(recipe.sizes.len())),
        ),
        OperatorKind::DmlNonZeroCoordinates => match rng.below(3) {
            0 => ("COORDINATES_N", edit("OutputCoordinatesTensor", 0)),
            1 => ("COORDINATES_M", edit("OutputCoordinatesTensor", 1)),
            _ => (
                "COUNT_SCALAR",
                Edit::SizeOffByOne {
                    tensor: "OutputCountTensor",
                    from_end: 0,
                    up: true,
                },
            ),
        },
        OperatorKind::DmlOneHot => {
            let rank = recipe.sizes.len();
            let axis_from_end = rank - 1 - recipe.axes[0] as usize;
            match rng.below(3) {
                0 => ("INDICES_AXIS_SIZE", edit("IndicesTensor", axis_from_end)),
                1 => {
                    let from_end = rng.below(rank);
                    if from_end == axis_from_end {
                        return None;
                    }
                    ("INDICES_SIZES", edit("OutputTensor", from_end))
                }
                _ => ("VALUES_ELEMENT_COUNT", edit("ValuesTensor", 0)),
            }
        }
        OperatorKind::OvOneHot1 => (
            "OUTPUT_SHAPE",
            edit("output", rng.below(recipe.sizes.len() + 1)),
        ),
    };
    Some(Invalid {
        rule: rule(operator, name),
        edit,
    })
}

/// `k` leading size-1 dimensions more on the recipe's main tensor (and the tensors whose
/// rank follows it), axes renumbered.
fn raise_rank(recipe: &mut Recipe, k: usize) {
    for _ in 0..k {
        recipe.sizes.insert(0, 1);
        if let Some(strides) = &mut recipe.strides {
            strides.insert(0, 1);
        }
    }
    recipe.axes.iter_mut().for_each(|a| *a += k as u32);
    if recipe.operator == OperatorKind::DmlOneHot {
        recipe.ranks.0 += k;
    }
}

/// The fields of one tensor of a draft.
struct Fields<'a> {
    data_type: &'a mut DataType,
    sizes: &'a mut Vec<u32>,
    strides: &'a mut Option<Vec<u32>>,
    total_size: &'a mut Option<u64>,
}

fn fields<'a>(draft: &'a mut Draft, name: &str) -> Option<Fields<'a>> {
    if let Some((_, t)) = draft.inputs.iter_mut().find(|(n, _)| n == name) {
        return Some(Fields {
            data_type: &mut t.data_type,
            sizes: &mut t.sizes,
            strides: &mut t.strides,
            total_size: &mut t.total_size,
        });
    }
    draft
        .outputs
        .iter_mut()
        .find(|(n, _)| n == name)
        .map(|(_, t)| Fields {
            data_type: &mut t.data_type,
            sizes: &mut t.sizes,
            strides: &mut t.strides,
            total_size: &mut t.total_size,
        })
}

/// Row-major strides of `sizes`.
fn packed_strides(sizes: &[u32]) -> Vec<u32> {
    let mut strides = vec![1u32; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].saturating_mul(sizes[d + 1]);
    }
    strides
}

/// The recipe's valid draft made into a negative one breaking `invalid.rule` at `level`
/// (input contents dropped but OneHot-1's depth, which is part of the descriptor), or `None`
/// when the edit does not apply to this draft (a dimension the shrinker removed). The caller
/// checks with the validator that exactly the rule is broken.
pub fn apply(mut draft: Draft, invalid: &Invalid, level: Level) -> Option<Draft> {
    draft.expect = Expect::Invalid {
        level,
        rules: vec![invalid.rule.to_string()],
    };
    draft.tags = vec!["descriptor-rule".to_string(), "explore-invalid".to_string()];
    draft.exercises.clear();
    for (name, input) in &mut draft.inputs {
        if name != "depth" {
            input.content = Content::Absent;
        }
    }
    let rank_of = |draft: &Draft, name: &str| {
        draft
            .inputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.sizes.len())
    };
    match &invalid.edit {
        Edit::RankAboveRow => {}
        Edit::DataType { tensors, data_type } => {
            for tensor in tensors {
                *fields(&mut draft, tensor)?.data_type = *data_type;
            }
        }
        Edit::AxisPastEnd => match draft.operator {
            OperatorKind::DmlArgMax => {
                let rank = rank_of(&draft, "InputTensor")? as u32;
                let axes = draft.attributes.axes.as_mut()?;
                *axes.last_mut()? = rank;
            }
            OperatorKind::DmlOneHot => {
                let rank = draft.outputs[0].1.sizes.len() as u32;
                draft.attributes.dml_axis = Some(rank);
            }
            OperatorKind::OvOneHot1 => {
                let n = rank_of(&draft, "indices")? as i64;
                draft.attributes.ov_axis = Some(n + 1);
            }
            OperatorKind::DmlNonZeroCoordinates => return None,
        },
        Edit::AxisBeforeStart => {
            let n = rank_of(&draft, "indices")? as i64;
            draft.attributes.ov_axis = Some(-(n + 2));
        }
        Edit::AxisRepeated => {
            let axes = draft.attributes.axes.as_mut()?;
            let first = *axes.first()?;
            axes.insert(1, first);
        }
        Edit::DepthZero => {
            let (_, depth) = draft.inputs.iter_mut().find(|(n, _)| n == "depth")?;
            depth.content = Content::Data(vec![Value::Int(0)]);
        }
        Edit::TotalSizeOneByteShort(tensor) => {
            let f = fields(&mut draft, tensor)?;
            let minimum = min_buffer_size_bytes(*f.data_type, f.sizes, f.strides.as_deref())?;
            *f.total_size = Some(minimum.checked_sub(1)?);
        }
        Edit::BufferOneElementShort(tensor) => {
            let f = fields(&mut draft, tensor)?;
            let elements = span(f.sizes, f.strides.as_deref());
            *f.total_size = Some((elements.checked_sub(1)? * f.data_type.size_in_bytes()) as u64);
        }
        Edit::SizeOffByOne {
            tensor,
            from_end,
            up,
        } => {
            let f = fields(&mut draft, tensor)?;
            let d = f.sizes.len().checked_sub(1 + from_end)?;
            if *up || f.sizes[d] == 1 {
                f.sizes[d] += 1;
            } else {
                f.sizes[d] -= 1;
            }
        }
        Edit::OneStrideTooMany(tensor) => {
            let f = fields(&mut draft, tensor)?;
            let minimum = min_buffer_size_bytes(*f.data_type, f.sizes, f.strides.as_deref())?;
            let mut strides = f.strides.clone().unwrap_or_else(|| packed_strides(f.sizes));
            strides.push(1);
            *f.strides = Some(strides);
            *f.total_size = Some(minimum);
        }
        Edit::ExtraDimension(tensor) => {
            let f = fields(&mut draft, tensor)?;
            f.sizes.insert(0, 1);
            if let Some(strides) = f.strides {
                strides.insert(0, 1);
            }
        }
    }
    Some(draft)
}

#[cfg(test)]
mod tests {
    use super::super::{prepare, Budget, Options};
    use super::*;
    use opconform_backend::validate::validate;
    use std::collections::BTreeSet;

    fn options(operator: OperatorKind) -> Options {
        Options {
            seed: 1,
            budget: Budget::Cases(0),
            level: Level::dml(0x4100),
            operators: vec![operator],
            max_shrink_runs: 0,
        }
    }

    /// The rules the invalid draws of `operator` reach, each checked to be the only one the
    /// validator reports for its case.
    fn rules_reached(operator: OperatorKind, draws: usize) -> BTreeSet<&'static str> {
        let options = options(operator);
        let level = super::super::level_for(operator, &options);
        let mut rng = Rng::new(42);
        let mut reached = BTreeSet::new();
        for _ in 0..draws {
            let Some(recipe) = draw_invalid(&mut rng, operator, level) else {
                continue;
            };
            let Some(prepared) = prepare(&recipe, &options) else {
                continue;
            };
            let rule = recipe.invalid.as_ref().unwrap().rule;
            let found: BTreeSet<String> = validate(&prepared.case.operator, level)
                .into_iter()
                .map(|v| v.rule)
                .collect();
            assert_eq!(found, BTreeSet::from([rule.to_string()]), "{recipe:?}");
            assert!(prepared.case.is_negative());
            assert_eq!(prepared.case.level, level);
            reached.insert(rule);
        }
        reached
    }

    #[test]
    fn each_invalid_draw_breaks_exactly_its_rule_and_every_kind_is_reached() {
        let expected: [(OperatorKind, &[&str]); 4] = [
            (
                OperatorKind::DmlArgMax,
                &[
                    "ARGMAX.SUPPORT_DIMENSION_COUNT",
                    "ARGMAX.SUPPORT_DATA_TYPE",
                    "ARGMAX.AXES_RANGE",
                    "ARGMAX.AXES_DISTINCT",
                    "ARGMAX.OUTPUT_SIZES",
                    "ARGMAX.DIMENSION_COUNT_EQUAL",
                    "TENSOR.TOTAL_SIZE",
                    "TENSOR.STRIDES_COUNT",
                ],
            ),
            (
                OperatorKind::DmlNonZeroCoordinates,
                &[
                    "NONZERO_COORDINATES.SUPPORT_DIMENSION_COUNT",
                    "NONZERO_COORDINATES.SUPPORT_DATA_TYPE",
                    "NONZERO_COORDINATES.COORDINATES_N",
                    "NONZERO_COORDINATES.COORDINATES_M",
                    "NONZERO_COORDINATES.COUNT_SCALAR",
                    "TENSOR.TOTAL_SIZE",
                    "TENSOR.STRIDES_COUNT",
                ],
            ),
            (
                OperatorKind::DmlOneHot,
                &[
                    "ONE_HOT.SUPPORT_DIMENSION_COUNT",
                    "ONE_HOT.SUPPORT_DATA_TYPE",
                    "ONE_HOT.AXIS_RANGE",
                    "ONE_HOT.INDICES_AXIS_SIZE",
                    "ONE_HOT.INDICES_SIZES",
                    "ONE_HOT.VALUES_ELEMENT_COUNT",
                    "ONE_HOT.DIMENSION_COUNT_EQUAL",
                    "TENSOR.TOTAL_SIZE",
                    "TENSOR.STRIDES_COUNT",
                ],
            ),
            (
                OperatorKind::OvOneHot1,
                &[
                    "ONEHOT1.AXIS_RANGE",
                    "ONEHOT1.DEPTH_POSITIVE",
                    "ONEHOT1.OUTPUT_SHAPE",
                ],
            ),
        ];
        for (operator, rules) in expected {
            let reached = rules_reached(operator, 600);
            let missing: Vec<_> = rules.iter().filter(|r| !reached.contains(*r)).collect();
            assert!(missing.is_empty(), "{operator}: never reached {missing:?}");
        }
    }
}
