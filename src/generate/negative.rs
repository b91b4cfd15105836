//! Negative cases for every descriptor rule of every operator, and for the general
//! `DML_BUFFER_TENSOR_DESC` rules carried by each operator's tensors. Each case names every
//! rule id it breaks, written out here (not taken from the validator), and is checked at the
//! operator's first level and at the newest table's level. Cases for rules that are our
//! readings of a silent page (`ARGMAX.AXES_DISTINCT`, `ARGMAX.AXIS_COUNT`,
//! `ONEHOT1.T1_SAME_TYPE`) are informational.

use super::argmax::argmax_draft;
use super::draft::{Content, Draft, Expect, InputDraft, OutputDraft};
use super::nonzero_coordinates::nonzero_draft;
use super::one_hot::{off_on, one_hot_draft};
use super::ov_one_hot::{opset1, ov_draft};
use super::shapes::dml;
use super::values::Value;
use super::Topic;
use crate::case::CaseClass;
use opconform_backend::{AxisDirection, DataType, Level, OperatorKind};

const MODULE: &str = "src/generate/negative.rs";

/// The topics of this module: one `descriptor_rules` file per operator.
pub fn topics() -> Vec<Topic> {
    let topic = |operator, build| {
        Topic {
        operator,
        name: "descriptor_rules",
        module: MODULE,
        description: "Negative cases for every descriptor rule (and the general buffer-tensor rules), each naming every rule id the validator must report.",
        build,
    }
    };
    vec![
        topic(OperatorKind::DmlOneHot, one_hot_rules),
        topic(OperatorKind::DmlNonZeroCoordinates, nonzero_rules),
        topic(OperatorKind::DmlArgMax, argmax_rules),
        topic(OperatorKind::OvOneHot1, ov_rules),
    ]
}

/// `draft` as a negative case breaking exactly `rules` at each of `levels` (one case per
/// level, the level appended to the id when there are several). Input contents are dropped
/// (the loader zero-fills them) except OneHot-1's depth, which is part of the descriptor.
fn invalid(draft: Draft, id: &str, levels: &[Level], rules: &[&str], note: &str) -> Vec<Draft> {
    levels
        .iter()
        .map(|&level| {
            let mut negative = draft.clone();
            negative.id = if levels.len() > 1 {
                format!("{id}_at_{level}")
            } else {
                id.to_string()
            };
            negative.note = note.to_string();
            negative.tags = vec!["descriptor-rule".to_string()];
            negative.exercises.clear();
            negative.expect = Expect::Invalid {
                level,
                rules: rules.iter().map(|r| r.to_string()).collect(),
            };
            for (name, input) in &mut negative.inputs {
                if name != "depth" {
                    input.content = Content::Absent;
                }
            }
            negative
        })
        .collect()
}

/// Marks every draft informational.
fn informational(drafts: Vec<Draft>) -> Vec<Draft> {
    drafts
        .into_iter()
        .map(|d| Draft {
            class: CaseClass::Informational,
            ..d
        })
        .collect()
}

// --- DML_ONE_HOT ---------------------------------------------------------------------------

/// Example 1's descriptor: UINT32 indices {1,1,3,1}, FLOAT32 values {1,1,1,2}, output
/// {1,1,3,4}, Axis 3 (valid from 2_0).
fn one_hot_base() -> Draft {
    one_hot_draft(
        "base",
        "",
        DataType::Uint32,
        vec![Value::Int(0); 3],
        off_on(DataType::Float32, 4, Value::Int(0), Value::Int(1)),
        &[1, 1, 3, 4],
        3,
    )
}

fn one_hot_rules() -> Vec<Draft> {
    let both = [dml("2_0"), dml("4_1")];
    let from_3_0 = [dml("3_0"), dml("4_1")];
    let mut drafts = Vec::new();
    let mut add = |draft: Draft, id: &str, levels: &[Level], rules: &[&str], note: &str| {
        drafts.extend(invalid(draft, id, levels, rules, note))
    };
    let base = one_hot_base;

    // FLOAT16 values {1,1,1,3}: 6 bytes of elements, 8 the minimum (rounded to 4 bytes).
    for (declared, id) in [
        (6u64, "values_total_size_raw_bytes"),
        (7, "values_total_size_one_below_rounded"),
    ] {
        let mut d = one_hot_draft(
            "base",
            "",
            DataType::Uint32,
            vec![Value::Int(0); 3],
            off_on(DataType::Float16, 4, Value::Int(0), Value::Int(1)),
            &[1, 1, 3, 4],
            3,
        );
        d.inputs[1].1 =
            InputDraft::shape(DataType::Float16, &[1, 1, 1, 3]).with_total_size(declared);
        add(d, id, &both, &["TENSOR.TOTAL_SIZE"], &format!("FLOAT16 ValuesTensor {{1,1,1,3}}: 6 bytes of elements declared as {declared}, below the 8-byte minimum (bytes round up to a multiple of 4)."));
    }
    let mut d = one_hot_draft(
        "base",
        "",
        DataType::Uint32,
        vec![Value::Int(0); 3],
        off_on(DataType::Float16, 4, Value::Int(0), Value::Int(1)),
        &[1, 1, 3, 1],
        3,
    );
    d.outputs[0].1 = d.outputs[0].1.clone().with_total_size(6);
    add(d, "output_total_size_raw_bytes", &both, &["TENSOR.TOTAL_SIZE"], "FLOAT16 OutputTensor {1,1,3,1}: 6 bytes of elements declared as 6, below the 8-byte minimum.");

    add(
        base(),
        "availability_1_0",
        &[dml("1_0")],
        &["ONE_HOT.AVAILABILITY"],
        "Example 1's descriptor at 1_0, before the operator's introduction at 2_0.",
    );
    let mut d = base();
    d.inputs[0].1.data_type = DataType::Int32;
    add(
        d,
        "signed_indices_at_2_1",
        &[dml("2_1")],
        &["ONE_HOT.SUPPORT_DATA_TYPE"],
        "INT32 indices at 2_1: signed indices arrive with the 3_0 table.",
    );
    let mut d = base();
    d.inputs[1].1.data_type = DataType::Int8;
    d.outputs[0].1.data_type = DataType::Int8;
    add(
        d,
        "int8_values_at_2_0",
        &[dml("2_0")],
        &["ONE_HOT.SUPPORT_DATA_TYPE"],
        "INT8 values and output at 2_0: integer values arrive with the 2_1 table.",
    );
    let mut d = base();
    for (_, t) in &mut d.inputs {
        t.sizes.insert(0, 1);
    }
    d.outputs[0].1.sizes.insert(0, 1);
    d.attributes.dml_axis = Some(4);
    add(
        d,
        "five_d_at_2_1",
        &[dml("2_1")],
        &["ONE_HOT.SUPPORT_DIMENSION_COUNT"],
        "Example 1 as 5-D tensors at 2_1: the 2_0 and 2_1 tables allow 4-D only.",
    );

    let mut d = base();
    d.inputs[1].1.sizes = vec![1, 2];
    add(
        d,
        "values_rank_differs",
        &from_3_0,
        &["ONE_HOT.DIMENSION_COUNT_EQUAL"],
        "A 2-D ValuesTensor {1,2} with 4-D indices and output.",
    );
    let mut d = base();
    d.inputs[1].1.sizes = vec![1, 2];
    add(
        d,
        "values_rank_differs_at_2_0",
        &[dml("2_0")],
        &[
            "ONE_HOT.DIMENSION_COUNT_EQUAL",
            "ONE_HOT.SUPPORT_DIMENSION_COUNT",
        ],
        "A 2-D ValuesTensor at 2_0, where only 4-D is supported as well.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![3, 4];
    add(
        d,
        "output_rank_differs",
        &from_3_0,
        &["ONE_HOT.DIMENSION_COUNT_EQUAL"],
        "A 2-D output {3,4} with 4-D indices and values.",
    );
    let mut d = base();
    d.outputs[0].1.data_type = DataType::Float16;
    add(
        d,
        "output_type_differs",
        &both,
        &["ONE_HOT.OUTPUT_VALUES_SAME_TYPE"],
        "FLOAT32 values with a FLOAT16 output.",
    );
    let mut d = base();
    d.inputs[1].1.data_type = DataType::Int8;
    d.outputs[0].1.data_type = DataType::Uint8;
    add(
        d,
        "output_signedness_differs",
        &[dml("2_1"), dml("4_1")],
        &["ONE_HOT.OUTPUT_VALUES_SAME_TYPE"],
        "INT8 values with a UINT8 output.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 2, 3, 1];
    add(
        d,
        "indices_size_differs",
        &both,
        &["ONE_HOT.INDICES_SIZES"],
        "Indices {1,2,3,1} for an output {1,1,3,4}: dimension 1 differs.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 1, 1, 1];
    add(
        d,
        "indices_size_smaller",
        &both,
        &["ONE_HOT.INDICES_SIZES"],
        "Indices {1,1,1,1} for an output {1,1,3,4}: dimension 2 differs.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 1, 3, 2];
    add(
        d,
        "indices_axis_size_2",
        &both,
        &["ONE_HOT.INDICES_AXIS_SIZE"],
        "Indices {1,1,3,2}: the Axis dimension must have size 1.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 1, 3, 4];
    add(
        d,
        "indices_same_as_output",
        &both,
        &["ONE_HOT.INDICES_AXIS_SIZE"],
        "Indices with the output's sizes {1,1,3,4}.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![1, 1, 3, 0];
    add(
        d,
        "output_axis_size_0",
        &both,
        &["ONE_HOT.OUTPUT_AXIS_SIZE", "TENSOR.SIZES_NONZERO"],
        "An output Axis dimension of size 0 (also a zero size).",
    );
    let mut d = base();
    d.inputs[1].1.sizes = vec![1, 1, 1, 1];
    add(
        d,
        "values_one_element",
        &both,
        &["ONE_HOT.VALUES_ELEMENT_COUNT"],
        "A ValuesTensor of one element: at least two are needed.",
    );
    let mut d = base();
    d.attributes.dml_axis = Some(4);
    add(
        d,
        "axis_4",
        &both,
        &["ONE_HOT.AXIS_RANGE"],
        "Axis 4 of 4-D tensors.",
    );
    let mut d = base();
    d.attributes.dml_axis = Some(u32::MAX);
    add(
        d,
        "axis_max",
        &both,
        &["ONE_HOT.AXIS_RANGE"],
        "Axis 2^32-1 (not -1).",
    );
    let d = one_hot_draft(
        "base",
        "",
        DataType::Uint32,
        vec![Value::Int(0)],
        off_on(DataType::Float32, 1, Value::Int(0), Value::Int(1)),
        &[4],
        0,
    );
    let mut d1 = d.clone();
    d1.attributes.dml_axis = Some(1);
    add(
        d1,
        "axis_1_of_1_d",
        &from_3_0,
        &["ONE_HOT.AXIS_RANGE"],
        "Axis 1 of 1-D tensors.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 1, 0, 1];
    d.outputs[0].1.sizes = vec![1, 1, 0, 4];
    add(
        d,
        "zero_size",
        &both,
        &["TENSOR.SIZES_NONZERO"],
        "Indices {1,1,0,1} and output {1,1,0,4}: a size of 0.",
    );
    let mut d = base();
    d.inputs[0].1 =
        InputDraft::shape(DataType::Uint32, &[1, 1, 65537, 1]).with_strides(&[0, 0, 0, 0]);
    d.outputs[0].1 =
        OutputDraft::packed(DataType::Float32, &[1, 1, 65537, 65536]).with_strides(&[0, 0, 0, 0]);
    add(d, "element_count_above_32_bits", &both, &["TENSOR.ELEMENT_COUNT_32BIT"], "Output {1,1,65537,65536}: 2^32 + 65536 elements (broadcast strides keep the buffer small).");
    drafts.extend(tensor_rules(
        one_hot_base(),
        &both,
        TensorTarget {
            input: 1,
            output: 0,
        },
    ));
    drafts
}

/// Which input and output of a base draft the general tensor rules are broken on.
#[derive(Debug, Clone, Copy)]
struct TensorTarget {
    input: usize,
    output: usize,
}

/// Negative cases for the operator-independent `TENSOR.*` rules on `base`'s tensors: strides
/// of the wrong count, and buffers smaller than the minimum (packed, strided, and an output of
/// 0 bytes). The zero-size and 32-bit element count rules depend on each operator's shapes
/// and are written beside its other rules.
fn tensor_rules(base: Draft, levels: &[Level], target: TensorTarget) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let (input_name, input) = base.inputs[target.input].clone();
    let output_name = base.outputs[target.output].0.clone();
    let element = input.data_type.size_in_bytes() as u64;
    let strides = vec![1; input.sizes.len() + 1];
    let mut d = base.clone();
    d.inputs[target.input].1 = input
        .clone()
        .with_strides(&strides)
        .with_total_size(element * 64);
    drafts.extend(invalid(
        d,
        "strides_count",
        levels,
        &["TENSOR.STRIDES_COUNT"],
        &format!(
            "{input_name} with {} strides for {} sizes.",
            strides.len(),
            input.sizes.len()
        ),
    ));
    let minimum = opconform_backend::min_buffer_size_bytes(input.data_type, &input.sizes, None)
        .expect("small");
    let mut d = base.clone();
    d.inputs[target.input].1 = input.clone().with_total_size(minimum - 4);
    drafts.extend(invalid(
        d,
        "total_size_too_small",
        levels,
        &["TENSOR.TOTAL_SIZE"],
        &format!("{input_name} declared 4 bytes smaller than the {minimum} bytes it needs."),
    ));
    let strides: Vec<u32> = vec![64; input.sizes.len()];
    let strided_minimum =
        opconform_backend::min_buffer_size_bytes(input.data_type, &input.sizes, Some(&strides))
            .expect("small");
    let mut d = base.clone();
    d.inputs[target.input].1 = input
        .with_strides(&strides)
        .with_total_size(strided_minimum - 4);
    drafts.extend(invalid(d, "strided_total_size_too_small", levels, &["TENSOR.TOTAL_SIZE"], &format!("{input_name} with strides of 64 declared 4 bytes smaller than the {strided_minimum} bytes its last element needs.")));
    drafts.extend(rounding_cases(&base, levels, target));
    let mut d = base;
    d.outputs[target.output].1 = d.outputs[target.output].1.clone().with_total_size(0);
    drafts.extend(invalid(
        d,
        "output_total_size_0",
        levels,
        &["TENSOR.TOTAL_SIZE"],
        &format!("{output_name} declared 0 bytes."),
    ));
    drafts
}

/// Buffers declared between the raw byte count of their elements and the minimum, which
/// rounds up to a multiple of 4 (`TENSOR.TOTAL_SIZE`): the input becomes 3 elements of a
/// 16-bit type (6 raw bytes, 8 minimum) or 5 of an 8-bit one (5 raw bytes, 8 minimum) where
/// the base's level allows that type, declared at the raw count and one byte below the
/// minimum.
fn rounding_cases(base: &Draft, levels: &[Level], target: TensorTarget) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let (name, input) = base.inputs[target.input].clone();
    let narrow = [DataType::Float16, DataType::Uint8]
        .into_iter()
        .find(|&t| t.size_in_bytes() < 4 && narrow_type_fits(base, target.input, t, levels));
    let Some(narrow) = narrow else {
        return drafts;
    };
    let count = if narrow.size_in_bytes() == 2 { 3 } else { 5 };
    let mut sizes = input.sizes.clone();
    let last = sizes.len() - 1;
    sizes[last] = count;
    let raw = u64::from(count) * narrow.size_in_bytes() as u64;
    for (declared, id) in [
        (raw, "total_size_raw_bytes"),
        (7, "total_size_one_below_rounded"),
    ] {
        let mut d = base.clone();
        d.inputs[target.input].1 = InputDraft::shape(narrow, &sizes).with_total_size(declared);
        if narrow_type_fits(&d, target.input, narrow, levels) {
            drafts.extend(invalid(
                d,
                id,
                levels,
                &["TENSOR.TOTAL_SIZE"],
                &format!("{name} {narrow} {sizes:?}: {raw} bytes of elements declared as {declared}, below the 8-byte minimum (bytes round up to a multiple of 4)."),
            ));
        }
    }
    drafts
}

/// True when `base` with input `input` of `data_type` (minimum buffer) breaks no rule at
/// any of `levels`, so that a case built on it breaks only the rule it is about.
fn narrow_type_fits(base: &Draft, input: usize, data_type: DataType, levels: &[Level]) -> bool {
    let mut d = base.clone();
    let entry = &mut d.inputs[input].1;
    entry.data_type = data_type;
    entry.total_size = None;
    let last = entry.sizes.len() - 1;
    entry.sizes[last] = if data_type.size_in_bytes() == 2 { 3 } else { 5 };
    for output in &mut d.outputs {
        output.1.total_size = None;
    }
    let operator = d.operator_desc();
    levels
        .iter()
        .all(|&level| opconform_backend::validate::validate(&operator, level).is_empty())
}

// --- DML_NONZERO_COORDINATES ------------------------------------------------------------------

/// The page example's descriptor: FLOAT32 input {1,1,2,4}, count {1,1,1,1}, coordinates
/// {1,1,8,3} (valid from 3_0).
fn nonzero_base() -> Draft {
    nonzero_draft(
        "base",
        "",
        InputDraft::shape(DataType::Float32, &[1, 1, 2, 4]),
        4,
        4,
        3,
    )
}

fn nonzero_rules() -> Vec<Draft> {
    let both = [dml("3_0"), dml("4_1")];
    let mut drafts = Vec::new();
    let mut add = |draft: Draft, id: &str, levels: &[Level], rules: &[&str], note: &str| {
        drafts.extend(invalid(draft, id, levels, rules, note))
    };
    let base = nonzero_base;
    // UINT8 input {1,1,1,5}: 5 bytes of elements, 8 the minimum (rounded to 4 bytes).
    for (declared, id) in [
        (5u64, "input_total_size_raw_bytes"),
        (7, "input_total_size_one_below_rounded"),
    ] {
        let input = InputDraft::shape(DataType::Uint8, &[1, 1, 1, 5]).with_total_size(declared);
        add(nonzero_draft("base", "", input, 4, 4, 1), id, &both, &["TENSOR.TOTAL_SIZE"], &format!("UINT8 InputTensor {{1,1,1,5}}: 5 bytes of elements declared as {declared}, below the 8-byte minimum (bytes round up to a multiple of 4)."));
    }
    add(
        base(),
        "availability_2_1",
        &[dml("2_1")],
        &["NONZERO_COORDINATES.AVAILABILITY"],
        "The page example's descriptor at 2_1, before the operator's introduction at 3_0.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![2, 4];
    d.outputs[1].1.sizes = vec![1, 1, 8, 2];
    add(
        d,
        "two_d_input_at_3_1",
        &[dml("3_1")],
        &["NONZERO_COORDINATES.SUPPORT_DIMENSION_COUNT"],
        "A 2-D input at 3_1: the 3_0 table allows 4-D and 5-D only.",
    );
    let mut d = base();
    d.inputs[0].1.data_type = DataType::Float64;
    add(
        d,
        "float64_input",
        &both,
        &["NONZERO_COORDINATES.SUPPORT_DATA_TYPE"],
        "A FLOAT64 input: no table lists it.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![1, 1, 1, 2];
    add(
        d,
        "count_not_scalar",
        &both,
        &["NONZERO_COORDINATES.COUNT_SCALAR"],
        "OutputCountTensor {1,1,1,2}: all sizes must be 1.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![2, 1, 1, 1];
    add(
        d,
        "count_leading_2",
        &both,
        &["NONZERO_COORDINATES.COUNT_SCALAR"],
        "OutputCountTensor {2,1,1,1}: all sizes must be 1.",
    );
    let mut d = base();
    d.outputs[0].1.data_type = DataType::Float32;
    add(
        d,
        "count_float32",
        &both,
        &[
            "NONZERO_COORDINATES.COUNT_TYPE",
            "NONZERO_COORDINATES.SUPPORT_DATA_TYPE",
        ],
        "A FLOAT32 OutputCountTensor: it must be UINT32.",
    );
    let mut d = base();
    d.outputs[1].1.sizes = vec![1, 2, 8, 3];
    add(
        d,
        "coordinates_leading_2",
        &both,
        &["NONZERO_COORDINATES.COORDINATES_SHAPE"],
        "OutputCoordinatesTensor {1,2,8,3}: dimensions before M and N must be 1.",
    );
    let mut d = base();
    d.outputs[1].1.sizes = vec![24];
    add(
        d,
        "coordinates_one_d",
        &[dml("4_0"), dml("4_1")],
        &[
            "NONZERO_COORDINATES.COORDINATES_SHAPE",
            "NONZERO_COORDINATES.SUPPORT_DIMENSION_COUNT",
        ],
        "A 1-D OutputCoordinatesTensor {24}: it must be {…,M,N}.",
    );
    let mut d = base();
    d.outputs[1].1.sizes = vec![1, 1, 7, 3];
    add(
        d,
        "coordinates_m_too_small",
        &both,
        &["NONZERO_COORDINATES.COORDINATES_M"],
        "M = 7 for an input of 8 elements.",
    );
    let mut d = base();
    d.outputs[1].1.sizes = vec![1, 1, 9, 3];
    add(
        d,
        "coordinates_m_too_large",
        &both,
        &["NONZERO_COORDINATES.COORDINATES_M"],
        "M = 9 for an input of 8 elements.",
    );
    let mut d = base();
    d.outputs[1].1.sizes = vec![1, 1, 8, 1];
    add(
        d,
        "coordinates_n_below_effective_rank",
        &both,
        &["NONZERO_COORDINATES.COORDINATES_N"],
        "N = 1 for an input {1,1,2,4} of effective rank 2.",
    );
    let mut d = base();
    d.outputs[1].1.sizes = vec![1, 1, 8, 5];
    add(
        d,
        "coordinates_n_above_dimension_count",
        &both,
        &["NONZERO_COORDINATES.COORDINATES_N"],
        "N = 5 for a 4-D input.",
    );
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 3, 1, 2];
    d.outputs[1].1.sizes = vec![1, 1, 6, 2];
    add(d, "coordinates_n_ignores_inner_ones", &both, &["NONZERO_COORDINATES.COORDINATES_N"], "N = 2 for an input {1,3,1,2}: inner size-1 dimensions count towards the effective rank (3).");
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 1, 1, 1];
    d.outputs[1].1.sizes = vec![1, 1, 1, 0];
    add(d, "coordinates_n_0_for_effective_rank_0", &both, &["TENSOR.SIZES_NONZERO"], "N = 0 for an input of effective rank 0: allowed by the N rule, but a size of 0 is invalid.");
    let mut d = base();
    d.inputs[0].1.sizes = vec![1, 1, 0, 4];
    d.outputs[1].1.sizes = vec![1, 1, 0, 3];
    add(
        d,
        "zero_size",
        &both,
        &["TENSOR.SIZES_NONZERO"],
        "Input {1,1,0,4} (and so M = 0): a size of 0.",
    );
    let mut d = base();
    d.inputs[0].1 =
        InputDraft::shape(DataType::Float32, &[1, 1, 65536, 65537]).with_strides(&[0, 0, 0, 0]);
    d.outputs[1].1.sizes = vec![1, 1, 65536, 2];
    add(d, "element_count_above_32_bits", &both, &["TENSOR.ELEMENT_COUNT_32BIT", "NONZERO_COORDINATES.COORDINATES_M"], "Input {1,1,65536,65537}: 2^32 + 65536 elements, more than any M can say (broadcast strides keep the buffer small).");
    drafts.extend(tensor_rules(
        nonzero_base(),
        &both,
        TensorTarget {
            input: 0,
            output: 1,
        },
    ));
    drafts
}

// --- DML_ARGMAX ------------------------------------------------------------------------------

/// The page examples' input {3,3} FLOAT32 reduced over axis 0 into UINT32 {1,3} (3_0).
fn argmax_base() -> Draft {
    argmax_draft(
        "base",
        "",
        InputDraft::shape(DataType::Float32, &[3, 3]),
        DataType::Uint32,
        &[0],
        AxisDirection::Increasing,
    )
}

fn argmax_rules() -> Vec<Draft> {
    let both = [dml("3_0"), dml("4_1")];
    let mut drafts = Vec::new();
    let base = argmax_base;
    let mut add = |draft: Draft, id: &str, levels: &[Level], rules: &[&str], note: &str| {
        drafts.extend(invalid(draft, id, levels, rules, note))
    };
    add(
        base(),
        "availability_2_1",
        &[dml("2_1")],
        &["ARGMAX.AVAILABILITY"],
        "Example 1's descriptor at 2_1, before the operator's introduction at 3_0.",
    );
    let mut d = base();
    d.inputs[0].1.data_type = DataType::Uint64;
    add(
        d,
        "uint64_input_at_4_0",
        &[dml("4_0")],
        &["ARGMAX.SUPPORT_DATA_TYPE"],
        "A UINT64 input at 4_0: 64-bit inputs arrive with the 4_1 table.",
    );
    let mut d = base();
    d.outputs[0].1.data_type = DataType::Int16;
    add(
        d,
        "int16_output",
        &both,
        &["ARGMAX.SUPPORT_DATA_TYPE"],
        "An INT16 output: indices are 32- or 64-bit integers.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![3];
    add(
        d,
        "output_rank_differs",
        &both,
        &["ARGMAX.DIMENSION_COUNT_EQUAL"],
        "Output {3} for input {3,3}: the rank is kept.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![1, 1, 3];
    add(
        d,
        "output_rank_above",
        &both,
        &["ARGMAX.DIMENSION_COUNT_EQUAL"],
        "Output {1,1,3} for input {3,3}.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![3, 3];
    add(
        d,
        "reduced_axis_not_1",
        &both,
        &["ARGMAX.OUTPUT_SIZES"],
        "Output {3,3} reduced over axis 0: the reduced axis must have size 1.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![1, 2];
    add(
        d,
        "kept_axis_differs",
        &both,
        &["ARGMAX.OUTPUT_SIZES"],
        "Output {1,2} for input {3,3}: a kept axis must match.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![1, 1];
    add(
        d,
        "kept_axis_reduced",
        &both,
        &["ARGMAX.OUTPUT_SIZES"],
        "Output {1,1} reduced over axis 0 only: axis 1 is not reduced.",
    );
    let mut d = base();
    d.attributes.axes = Some(vec![2]);
    d.outputs[0].1.sizes = vec![3, 3];
    add(
        d,
        "axis_2_of_2_d",
        &both,
        &["ARGMAX.AXES_RANGE"],
        "Axes {2} of a 2-D input.",
    );
    let mut d = base();
    d.attributes.axes = Some(vec![0, u32::MAX]);
    add(
        d,
        "axis_max",
        &both,
        &["ARGMAX.AXES_RANGE"],
        "Axes {0, 2^32-1} (not -1).",
    );
    drafts.extend(informational(
        [
            {
                let mut d = base();
                d.attributes.axes = Some(vec![0, 0]);
                invalid(
                    d,
                    "axis_listed_twice",
                    &both,
                    &["ARGMAX.AXES_DISTINCT"],
                    "Axes {0, 0}: an axis listed twice (our reading; informational).",
                )
            },
            {
                let mut d = base();
                d.attributes.axes = Some(vec![1, 0, 1]);
                d.outputs[0].1.sizes = vec![1, 1];
                invalid(
                    d,
                    "axes_repeat_out_of_order",
                    &both,
                    &["ARGMAX.AXES_DISTINCT"],
                    "Axes {1, 0, 1} (our reading; informational).",
                )
            },
            {
                let mut d = base();
                d.attributes.axes = Some(vec![]);
                d.outputs[0].1.sizes = vec![3, 3];
                invalid(
                    d,
                    "no_axes",
                    &both,
                    &["ARGMAX.AXIS_COUNT"],
                    "AxisCount 0 (our reading: at least one axis; informational).",
                )
            },
        ]
        .concat(),
    ));
    let mut d = base();
    d.inputs[0].1.sizes = vec![3, 0];
    d.outputs[0].1.sizes = vec![1, 0];
    drafts.extend(invalid(
        d,
        "zero_size",
        &both,
        &["TENSOR.SIZES_NONZERO"],
        "Input {3,0} and output {1,0}: a size of 0.",
    ));
    let mut d = base();
    d.inputs[0].1 = InputDraft::shape(DataType::Float32, &[65536, 65537]).with_strides(&[0, 0]);
    d.outputs[0].1 = OutputDraft::packed(DataType::Uint32, &[1, 65537]);
    drafts.extend(invalid(
        d,
        "element_count_above_32_bits",
        &both,
        &["TENSOR.ELEMENT_COUNT_32BIT"],
        "Input {65536,65537}: 2^32 + 65536 elements (broadcast strides keep the buffer small).",
    ));
    drafts.extend(tensor_rules(
        argmax_base(),
        &both,
        TensorTarget {
            input: 0,
            output: 0,
        },
    ));
    drafts
}

// --- OneHot-1 --------------------------------------------------------------------------------

/// Example 1's descriptor: INT64 indices {4}, depth 3, INT32 values, axis -1 (opset1).
fn ov_base() -> Draft {
    ov_draft(
        "base",
        "",
        DataType::Int64,
        &[4],
        vec![Value::Int(0); 4],
        3,
        DataType::Int32,
        Value::Int(1),
        Value::Int(2),
        -1,
    )
}

fn ov_rules() -> Vec<Draft> {
    let levels = [opset1()];
    let mut drafts = Vec::new();
    let base = ov_base;
    let mut add = |draft: Draft, id: &str, levels: &[Level], rules: &[&str], note: &str| {
        drafts.extend(invalid(draft, id, levels, rules, note))
    };
    add(
        base(),
        "availability_at_2_0",
        &[dml("2_0")],
        &["ONEHOT1.AVAILABILITY"],
        "OneHot-1 checked at DirectML level 2_0: it is versioned by opsets.",
    );
    let mut d = base();
    d.inputs[2].1.data_type = DataType::Int16;
    d.inputs[3].1.data_type = DataType::Int16;
    d.outputs[0].1.data_type = DataType::Int16;
    d.inputs[0].1.data_type = DataType::Uint32;
    d.inputs[1].1.data_type = DataType::Int32;
    add(
        d,
        "uint32_indices",
        &levels,
        &["ONEHOT1.SUPPORT_DATA_TYPE", "ONEHOT1.T1_SAME_TYPE"],
        "UINT32 indices (T1 is int32 or int64) with an INT32 depth.",
    );
    let mut d = base();
    d.inputs[1].1.data_type = DataType::Int32;
    drafts.extend(informational(invalid(
        d,
        "depth_type_differs",
        &levels,
        &["ONEHOT1.T1_SAME_TYPE"],
        "INT64 indices with an INT32 depth (our reading: one T1; informational).",
    )));
    let mut add = |draft: Draft, id: &str, rules: &[&str], note: &str| {
        drafts.extend(invalid(draft, id, &levels, rules, note))
    };
    for (depth, id) in [(0i128, "depth_0"), (-1, "depth_minus_1")] {
        let mut d = base();
        d.inputs[1].1.content = Content::Data(vec![Value::Int(depth)]);
        add(
            d,
            id,
            &["ONEHOT1.DEPTH_POSITIVE"],
            &format!("depth {depth}: it must be positive."),
        );
    }
    // A depth beyond 32 bits: no output size can equal it, so the shape rule must still fire
    // (the output {4,3} keeps the depth 3 it would have had).
    for (depth, id) in [
        ((1i128 << 32) + 3, "depth_2_pow_32_plus_3"),
        (i128::from(i64::MAX), "depth_int64_max"),
    ] {
        let mut d = base();
        d.inputs[1].1.content = Content::Data(vec![Value::Int(depth)]);
        add(
            d,
            id,
            &["ONEHOT1.OUTPUT_SHAPE"],
            &format!("INT64 depth {depth} (beyond 32 bits) with an output {{4,3}}: the output cannot hold a new axis of that size."),
        );
    }
    let mut d = base();
    d.inputs[3].1.data_type = DataType::Float16;
    add(
        d,
        "off_value_type_differs",
        &["ONEHOT1.VALUES_SAME_TYPE"],
        "INT32 on_value with a FLOAT16 off_value.",
    );
    let mut d = base();
    d.outputs[0].1.data_type = DataType::Int64;
    add(
        d,
        "output_type_differs",
        &["ONEHOT1.VALUES_SAME_TYPE"],
        "INT32 on/off values with an INT64 output.",
    );
    let mut d = base();
    d.attributes.ov_axis = Some(2);
    add(
        d,
        "axis_2_of_1_d",
        &["ONEHOT1.AXIS_RANGE"],
        "axis 2 for 1-D indices (a 2-D output): at most 1.",
    );
    let mut d = base();
    d.attributes.ov_axis = Some(-3);
    add(
        d,
        "axis_minus_3_of_1_d",
        &["ONEHOT1.AXIS_RANGE"],
        "axis -3 for 1-D indices: at least -2.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![4, 4];
    add(
        d,
        "output_depth_differs",
        &["ONEHOT1.OUTPUT_SHAPE"],
        "Output {4,4} for depth 3.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![3, 4];
    add(
        d,
        "depth_on_wrong_axis",
        &["ONEHOT1.OUTPUT_SHAPE"],
        "Output {3,4} with axis -1: depth goes last, {4,3}.",
    );
    let mut d = base();
    d.outputs[0].1.sizes = vec![12];
    add(
        d,
        "output_rank_differs",
        &["ONEHOT1.OUTPUT_SHAPE"],
        "Output {12}: the rank must be N+1 = 2.",
    );
    // The TENSOR.* rules are DirectML buffer rules: they do not apply to OpenVINO tensors.
    drafts
}
