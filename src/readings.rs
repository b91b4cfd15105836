//! Which silent points of the specs a case's expectation rests on.
//!
//! A case may be `required` only when a seed sentence or a documented example decides its
//! expected result. Where the documents are silent, `specs/` holds a rule marked `silent: true`
//! whose `reading` says what opconform expects; a case whose result would change under another
//! plausible reading of that point is `informational` (docs/case-format.md, "Required and
//! informational").
//!
//! [`silent_points`] finds those points for a positive case by re-reading its inputs the way
//! a conforming implementation might: it recomputes ArgMax under the alternative orders
//! (total order of zeros, subnormals flushed, Axes taken as listed), finds the OneHot OnValue
//! under the other meanings of "fastest-changing dimension", and looks for the inputs the
//! documents say nothing about (an index equal to the sequence length, NaN, subnormals, -0.0
//! that must survive a copy, ...). The generator classifies every case with it, and a test
//! checks every case file against it, so no required case rests on a reading.

use crate::case::{Case, CaseClass, Expectation};
use crate::generate::oracle::{
    self, all_coordinates, argmax_read_as, decode, is_subnormal, offset_of, ArgMaxReading, Number,
};
use crate::generate::values::{buffer_bits, float_value, int_value};
use opconform_backend::spec;
use opconform_backend::{
    ArgMaxDesc, DataType, Level, NonZeroCoordinatesDesc, OneHotDesc, OperatorDesc, OvOneHotDesc,
};
use std::collections::BTreeSet;

pub use crate::case::Compare as Comparison;

/// The silent rule ids a positive case's expected outputs depend on: `inputs` are the input
/// buffers in descriptor order, one bit pattern per buffer element; `level` is the case's
/// level. Empty when seed sentences and documented examples decide every expected element.
pub fn silent_points(
    operator: &OperatorDesc,
    level: Level,
    inputs: &[Vec<u64>],
    comparison: Comparison,
) -> BTreeSet<&'static str> {
    let mut points = BTreeSet::new();
    match operator {
        OperatorDesc::OneHot(desc) => {
            one_hot_points(desc, &inputs[0], &inputs[1], comparison, &mut points)
        }
        OperatorDesc::NonZeroCoordinates(desc) => {
            nonzero_points(desc, level, &inputs[0], &mut points)
        }
        OperatorDesc::ArgMax(desc) => argmax_points(desc, &inputs[0], &mut points),
        OperatorDesc::OvOneHot(desc) => ov_one_hot_points(desc, inputs, comparison, &mut points),
    }
    points
}

/// True when a negative case's rejection rests only on silent rules: every rule it expects
/// is a reading, so a conforming implementation may accept the descriptor.
pub fn rejection_is_silent(rules: &[String]) -> bool {
    !rules.is_empty()
        && rules.iter().all(|id| {
            spec::all_rules()
                .find(|r| r.id == *id)
                .is_some_and(|r| r.silent)
        })
}

/// Where a loaded case breaks the class policy: a `required` case must rest on at least one
/// grounded rule (a behaviour rule it exercises, or a descriptor rule it breaks) and on no
/// silent point; an `informational` case must rest on a silent point. Empty when it follows
/// the policy.
pub fn class_problems(case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let rule = |id: &str| spec::all_rules().find(|r| r.id == id);
    let silent_listed: Vec<&String> = case
        .exercises
        .iter()
        .filter(|id| rule(id).is_some_and(|r| r.silent))
        .collect();
    let (grounded, silent) = match &case.expectation {
        Expectation::Invalid(rules) => (
            rules
                .iter()
                .any(|id| rule(id).is_some_and(|r| r.is_grounded())),
            rejection_is_silent(rules),
        ),
        Expectation::Outputs(_) => {
            let buffers: Vec<Vec<u64>> = case
                .inputs
                .iter()
                .map(|t| buffer_bits(t.desc.data_type, &t.data))
                .collect();
            let points = silent_points(&case.operator, case.level, &buffers, case.compare);
            for point in &points {
                if !case.exercises.iter().any(|e| e == point) {
                    problems.push(format!(
                        "rests on the silent rule {point} but does not list it in `exercises`"
                    ));
                }
            }
            (
                case.exercises
                    .iter()
                    .any(|id| rule(id).is_some_and(|r| r.is_grounded())),
                !points.is_empty() || !silent_listed.is_empty(),
            )
        }
    };
    match case.class {
        CaseClass::Required => {
            if !grounded {
                problems.push("is required but names no grounded rule (a behaviour rule in `exercises` or a descriptor rule in `expect_invalid`) whose sentence decides it".into());
            }
            if silent {
                problems.push(format!(
                    "is required but rests on a silent point ({}): it must be informational",
                    silent_listed
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        CaseClass::Informational => {
            if !silent {
                problems.push("is informational but rests on no silent rule: a seed sentence decides it, so it must be required".into());
            }
        }
    }
    problems
}

/// What a float element's bits hold, for the points about copying and ordering them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FloatClass {
    Nan,
    NegativeZero,
    Subnormal,
    Other,
}

fn float_class(data_type: DataType, bits: u64) -> FloatClass {
    let value = float_value(data_type, bits);
    if value.is_nan() {
        FloatClass::Nan
    } else if value == 0.0 && value.is_sign_negative() {
        FloatClass::NegativeZero
    } else if is_subnormal(data_type, value) {
        FloatClass::Subnormal
    } else {
        FloatClass::Other
    }
}

/// True when writing the values `written` (bit patterns of a float type) relies on a bit-exact
/// copy: -0.0 or a subnormal always, a NaN only when compared bit for bit.
fn needs_bit_copy(data_type: DataType, written: &BTreeSet<u64>, comparison: Comparison) -> bool {
    data_type.is_float()
        && written
            .iter()
            .any(|&bits| match float_class(data_type, bits) {
                FloatClass::NegativeZero | FloatClass::Subnormal => true,
                FloatClass::Nan => comparison == Comparison::Bits,
                FloatClass::Other => false,
            })
}

fn one_hot_points(
    desc: &OneHotDesc,
    indices: &[u64],
    values: &[u64],
    comparison: Comparison,
    points: &mut BTreeSet<&'static str>,
) {
    let length = i128::from(desc.output.sizes[desc.axis as usize]);
    let signed = desc.indices.data_type.is_signed_integer();
    for coordinate in all_coordinates(&desc.indices.sizes) {
        let index = int_value(
            desc.indices.data_type,
            indices[offset_of(&desc.indices, &coordinate)],
        );
        if index == length {
            points.insert("ONE_HOT.INDEX_EQUAL_TO_SIZE");
        }
        if signed && index < -length {
            points.insert("ONE_HOT.INDEX_BELOW_MINUS_SIZE");
        }
    }
    let ours = values[offset_of(&desc.values, &on_value_coordinate(desc, innermost_above_1))];
    let alternatives = [smallest_stride_above_1, innermost_moving_above_1];
    if alternatives.iter().any(|pick| {
        let coordinate = on_value_coordinate(desc, *pick);
        values[offset_of(&desc.values, &coordinate)] != ours
    }) {
        points.insert("ONE_HOT.VALUES_STRIDED_POSITION");
    }
    let written: BTreeSet<u64> = oracle::one_hot(desc, indices, values).into_iter().collect();
    if needs_bit_copy(desc.output.data_type, &written, comparison) {
        points.insert("ONE_HOT.VALUES_BIT_COPY");
    }
}

/// The ValuesTensor coordinate of the OnValue when `pick` chooses the "fastest-changing
/// dimension of size >1" from the sizes and effective strides (coordinate 1 there, 0
/// elsewhere); the innermost dimension above 1 when `pick` finds none.
fn on_value_coordinate(desc: &OneHotDesc, pick: fn(&[u32], &[u64]) -> Option<usize>) -> Vec<u64> {
    let sizes = &desc.values.sizes;
    let strides = desc.values.effective_strides();
    let dimension = pick(sizes, &strides)
        .or_else(|| innermost_above_1(sizes, &strides))
        .expect("a ValuesTensor has at least two elements");
    let mut coordinate = vec![0u64; sizes.len()];
    coordinate[dimension] = 1;
    coordinate
}

/// Our reading: the innermost logical dimension whose size exceeds 1.
fn innermost_above_1(sizes: &[u32], _strides: &[u64]) -> Option<usize> {
    (0..sizes.len()).rev().find(|&d| sizes[d] > 1)
}

/// Memory order: the dimension above 1 with the smallest nonzero stride.
fn smallest_stride_above_1(sizes: &[u32], strides: &[u64]) -> Option<usize> {
    (0..sizes.len())
        .rev()
        .filter(|&d| sizes[d] > 1 && strides[d] > 0)
        .min_by_key(|&d| strides[d])
}

/// Skipping broadcast dimensions: the innermost dimension above 1 whose stride is not 0.
fn innermost_moving_above_1(sizes: &[u32], strides: &[u64]) -> Option<usize> {
    (0..sizes.len())
        .rev()
        .find(|&d| sizes[d] > 1 && strides[d] > 0)
}

fn nonzero_points(
    desc: &NonZeroCoordinatesDesc,
    level: Level,
    input: &[u64],
    points: &mut BTreeSet<&'static str>,
) {
    let ranks = [
        desc.input.dimension_count(),
        desc.output_count.dimension_count(),
        desc.output_coordinates.dimension_count(),
    ];
    if level < Level::dml(0x4000) && ranks.iter().any(|&r| r != ranks[0]) {
        points.insert("NONZERO_COORDINATES.DIMENSION_COUNTS_AT_3_0");
    }
    let data_type = desc.input.data_type;
    if !data_type.is_float() {
        return;
    }
    for coordinate in all_coordinates(&desc.input.sizes) {
        match float_class(data_type, input[offset_of(&desc.input, &coordinate)]) {
            FloatClass::Nan => {
                points.insert("NONZERO_COORDINATES.NAN");
            }
            FloatClass::Subnormal => {
                points.insert("NONZERO_COORDINATES.SUBNORMAL");
            }
            _ => {}
        }
    }
}

fn argmax_points(desc: &ArgMaxDesc, input: &[u64], points: &mut BTreeSet<&'static str>) {
    let data_type = desc.input.data_type;
    if data_type.is_float()
        && all_coordinates(&desc.input.sizes)
            .iter()
            .any(|c| matches!(decode(data_type, input[offset_of(&desc.input, c)]), Number::Float(v) if v.is_nan()))
    {
        points.insert("ARGMAX.NAN");
    }
    let ours = oracle::argmax(desc, input);
    let alternatives = [
        (
            "ARGMAX.SIGNED_ZERO_TIE",
            ArgMaxReading {
                zeros_ordered: true,
                ..ArgMaxReading::default()
            },
        ),
        (
            "ARGMAX.SUBNORMAL_ORDER",
            ArgMaxReading {
                flush_subnormals: true,
                ..ArgMaxReading::default()
            },
        ),
        (
            "ARGMAX.AXES_ORDER",
            ArgMaxReading {
                axes_as_listed: true,
                ..ArgMaxReading::default()
            },
        ),
    ];
    for (rule, reading) in alternatives {
        let relevant = match rule {
            "ARGMAX.AXES_ORDER" => !desc.axes.windows(2).all(|w| w[0] < w[1]),
            _ => data_type.is_float(),
        };
        if relevant && argmax_read_as(desc, input, reading) != ours {
            points.insert(rule);
        }
    }
}

fn ov_one_hot_points(
    desc: &OvOneHotDesc,
    inputs: &[Vec<u64>],
    comparison: Comparison,
    points: &mut BTreeSet<&'static str>,
) {
    let indices = &inputs[0];
    if desc.indices.dimension_count() > 8 {
        points.insert("ONEHOT1.RANK_ABOVE_8");
    }
    if all_coordinates(&desc.indices.sizes)
        .iter()
        .any(|c| int_value(desc.indices.data_type, indices[offset_of(&desc.indices, c)]) < 0)
    {
        points.insert("ONEHOT1.NEGATIVE_INDICES");
    }
    let (on, off) = (inputs[2][0], inputs[3][0]);
    let written: BTreeSet<u64> = oracle::ov_one_hot(desc, indices, on, off)
        .into_iter()
        .collect();
    if needs_bit_copy(desc.output.data_type, &written, comparison) {
        points.insert("ONEHOT1.VALUES_BIT_COPY");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::{AxisDirection, TensorDesc};

    fn f32_bits(values: &[f32]) -> Vec<u64> {
        values.iter().map(|v| u64::from(v.to_bits())).collect()
    }

    fn one_hot(values: TensorDesc, output_sizes: &[u32]) -> OneHotDesc {
        let mut index_sizes = output_sizes.to_vec();
        *index_sizes.last_mut().unwrap() = 1;
        OneHotDesc {
            indices: TensorDesc::packed(DataType::Int32, &index_sizes),
            output: TensorDesc::packed(values.data_type, output_sizes),
            values,
            axis: output_sizes.len() as u32 - 1,
        }
    }

    fn points(desc: OperatorDesc, inputs: &[Vec<u64>]) -> Vec<&'static str> {
        silent_points(&desc, Level::dml(0x4100), inputs, Comparison::Value)
            .into_iter()
            .collect()
    }

    #[test]
    fn one_hot_index_at_the_size_and_below_minus_size_are_silent() {
        let desc = one_hot(TensorDesc::packed(DataType::Float32, &[1, 2]), &[3, 4]);
        let values = f32_bits(&[0.0, 1.0]);
        let decided = vec![0, 3, (-4i32) as u32 as u64];
        assert!(points(
            OperatorDesc::OneHot(desc.clone()),
            &[decided, values.clone()]
        )
        .is_empty());
        let at_size = vec![0, 4, 1];
        assert_eq!(
            points(
                OperatorDesc::OneHot(desc.clone()),
                &[at_size, values.clone()]
            ),
            ["ONE_HOT.INDEX_EQUAL_TO_SIZE"]
        );
        let below = vec![0, (-5i32) as u32 as u64, 1];
        assert_eq!(
            points(OperatorDesc::OneHot(desc), &[below, values]),
            ["ONE_HOT.INDEX_BELOW_MINUS_SIZE"]
        );
    }

    #[test]
    fn one_hot_on_value_position_is_silent_only_where_readings_differ() {
        // Logical {2,2} strides {1,2}: innermost logical dimension (stride 2) holds element 2,
        // the smallest stride (dimension 0) element 1.
        let values = TensorDesc::with_strides(DataType::Float32, &[2, 2], Some(&[1, 2])).unwrap();
        let desc = one_hot(values, &[1, 2]);
        let buffer = f32_bits(&[0.0, 5.0, 7.0, 9.0]);
        assert_eq!(
            points(OperatorDesc::OneHot(desc.clone()), &[vec![0], buffer]),
            ["ONE_HOT.VALUES_STRIDED_POSITION"]
        );
        // The same layout with equal candidates decides nothing differently.
        let buffer = f32_bits(&[0.0, 7.0, 7.0, 9.0]);
        assert!(points(OperatorDesc::OneHot(desc), &[vec![0], buffer]).is_empty());
        // A broadcast innermost dimension: one reading makes OnValue the OffValue itself.
        let values = TensorDesc::with_strides(DataType::Float32, &[2, 2], Some(&[1, 0])).unwrap();
        let desc = one_hot(values, &[1, 2]);
        assert_eq!(
            points(
                OperatorDesc::OneHot(desc),
                &[vec![0], f32_bits(&[3.0, 4.0])]
            ),
            ["ONE_HOT.VALUES_STRIDED_POSITION"]
        );
    }

    #[test]
    fn one_hot_bit_copies_are_silent_but_plain_nans_are_not() {
        let desc = one_hot(TensorDesc::packed(DataType::Float32, &[1, 2]), &[1, 3]);
        let op = OperatorDesc::OneHot(desc);
        let run = |values: &[f32], comparison| {
            silent_points(
                &op,
                Level::dml(0x4100),
                &[vec![1], f32_bits(values)],
                comparison,
            )
        };
        assert!(run(&[0.0, f32::NAN], Comparison::Value).is_empty());
        assert!(!run(&[0.0, f32::NAN], Comparison::Bits).is_empty());
        assert!(!run(&[-0.0, 1.0], Comparison::Value).is_empty());
        assert!(!run(&[1e-40, 1.0], Comparison::Value).is_empty());
        assert!(run(&[f32::NEG_INFINITY, f32::MAX], Comparison::Value).is_empty());
    }

    #[test]
    fn argmax_alternative_readings_flag_only_when_they_change_the_result() {
        let argmax = |values: &[f32], axes: &[u32], sizes: &[u32], direction| {
            let mut out = sizes.to_vec();
            for &a in axes {
                out[a as usize] = 1;
            }
            let desc = OperatorDesc::ArgMax(ArgMaxDesc {
                input: TensorDesc::packed(DataType::Float32, sizes),
                output: TensorDesc::packed(DataType::Uint32, &out),
                axes: axes.to_vec(),
                axis_direction: direction,
            });
            points(desc, &[f32_bits(values)])
        };
        let inc = AxisDirection::Increasing;
        assert_eq!(
            argmax(&[-0.0, 0.0], &[0], &[2], inc),
            ["ARGMAX.SIGNED_ZERO_TIE"]
        );
        assert!(argmax(&[-0.0, 0.0, 1.0], &[0], &[3], inc).is_empty());
        assert_eq!(
            argmax(&[1e-40, 0.0], &[0], &[2], AxisDirection::Decreasing),
            ["ARGMAX.SUBNORMAL_ORDER"]
        );
        assert_eq!(argmax(&[f32::NAN, 1.0], &[0], &[2], inc), ["ARGMAX.NAN"]);
        // Unsorted axes: the maximum at {0,1} of {2,2} is flat 1 in axis order, 2 as listed.
        assert_eq!(
            argmax(&[0.0, 5.0, 1.0, 2.0], &[1, 0], &[2, 2], inc),
            ["ARGMAX.AXES_ORDER"]
        );
        assert!(argmax(&[5.0, 0.0, 1.0, 2.0], &[1, 0], &[2, 2], inc).is_empty());
    }

    #[test]
    fn a_rejection_is_silent_only_when_every_rule_is() {
        assert!(rejection_is_silent(&["ARGMAX.AXES_DISTINCT".to_string()]));
        assert!(!rejection_is_silent(&[
            "ONEHOT1.T1_SAME_TYPE".to_string(),
            "ONEHOT1.SUPPORT_DATA_TYPE".to_string()
        ]));
        assert!(!rejection_is_silent(&[]));
    }
}
