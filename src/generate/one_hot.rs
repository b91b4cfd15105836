//! `DML_ONE_HOT` edge behaviour: every Axis position, depth 1 and large depths, index values
//! at and beyond the sequence ends for every index type (64-bit values never truncated),
//! negative indices, ValuesTensor shapes and strides that move the OnValue around the
//! buffer, special on/off values copied bit for bit, and strided or broadcast tensors.

use super::draft::{Draft, InputDraft, OutputDraft};
use super::shapes::{dml, ones_then, small_sizes, with_size};
use super::values::{
    canonical_nan, float_specials, int_max, int_min, ints, type_lowest, type_max, Rng, Value,
};
use super::Topic;
use opconform_backend::{DataType, OperatorKind};

const OP: OperatorKind = OperatorKind::DmlOneHot;
const MODULE: &str = "src/generate/one_hot.rs";

/// The IndicesTensor types of the 3_0 and later tables.
pub const INDEX_TYPES: [DataType; 4] = [
    DataType::Uint32,
    DataType::Int32,
    DataType::Uint64,
    DataType::Int64,
];

/// The topics of this module.
pub fn topics() -> Vec<Topic> {
    let topic = |name, description, build| Topic {
        operator: OP,
        name,
        module: MODULE,
        description,
        build,
    };
    vec![
        topic("axis", "Every Axis position of every dimension count.", axis_cases),
        topic("depth", "Sequences of length 1 and of length above 255.", depth_cases),
        topic(
            "indices",
            "Non-negative and unsigned index values at, past and far past the end of the sequence, \
             including every index type's extremes: 64-bit values are compared whole, never \
             truncated to 32 bits.",
            index_cases,
        ),
        topic(
            "negative_indices",
            "Negative indices of signed index types (3_0 and above): -1 to -size count from the \
             end (required); below -size is our reading (all OffValue, informational).",
            negative_index_cases,
        ),
        topic(
            "values_tensor",
            "ValuesTensor shapes and strides (including broadcast strides of 0) that put the \
             OnValue at different buffer positions.",
            values_tensor_cases,
        ),
        topic(
            "on_off_values",
            "Special on/off values of every value type, copied bit for bit: NaN payloads, \
             signalling NaN, infinities, -0.0, subnormals and type extremes.",
            on_off_value_cases,
        ),
        topic(
            "strided",
            "Strided and broadcast IndicesTensor and strided OutputTensor layouts.",
            strided_cases,
        ),
    ]
}

/// A `DML_ONE_HOT` draft with packed indices (the output sizes with the Axis dimension set to
/// 1), the given ValuesTensor and a packed output of the values' type.
pub fn one_hot_draft(
    id: impl Into<String>,
    note: impl Into<String>,
    index_type: DataType,
    indices: Vec<Value>,
    values: InputDraft,
    output_sizes: &[u32],
    axis: u32,
) -> Draft {
    let index_sizes = with_size(output_sizes, axis as usize, 1);
    let output_type = values.data_type;
    Draft::positive(id, OP, note)
        .dml_axis(axis)
        .input(
            "IndicesTensor",
            InputDraft::packed(index_type, &index_sizes, indices),
        )
        .input("ValuesTensor", values)
        .output(
            "OutputTensor",
            OutputDraft::packed(output_type, output_sizes),
        )
}

/// `index`, or one past the end when it equals the sequence `length`: an index equal to the
/// length is the silent ONE_HOT.INDEX_EQUAL_TO_SIZE, which a required case must not hold.
pub fn skip_equal_to_size(index: i128, length: u32) -> i128 {
    if index == i128::from(length) {
        index + 1
    } else {
        index
    }
}

/// A packed ValuesTensor `{1,…,1,2}` holding OffValue then OnValue.
pub fn off_on(value_type: DataType, rank: usize, off: Value, on: Value) -> InputDraft {
    InputDraft::packed(value_type, &ones_then(rank, 2), vec![off, on])
}

/// Exercised rules for a case with these indices along a sequence of `length`.
fn exercised(index_type: DataType, indices: &[Value], length: i128) -> Vec<&'static str> {
    let mut rules = vec![
        "ONE_HOT.SEQUENCE",
        "ONE_HOT.INDEX_RELATIVE",
        "ONE_HOT.VALUES_SELECTION",
    ];
    let as_int = |v: &Value| match *v {
        Value::Int(i) => i,
        _ => panic!("indices are integers"),
    };
    if indices.iter().any(|v| as_int(v) > length) {
        rules.push("ONE_HOT.OUT_OF_RANGE_INDEX");
    }
    if index_type.is_signed_integer() && indices.iter().any(|v| as_int(v) < 0) {
        rules.push("ONE_HOT.NEGATIVE_INDICES");
    }
    rules
}

fn axis_cases() -> Vec<Draft> {
    let mut rng = Rng::new(0x0a15);
    let mut drafts = Vec::new();
    for rank in 1..=8usize {
        for axis in 0..rank {
            let depth = 4;
            let output_sizes = with_size(&small_sizes(rank), axis, depth);
            let sequences: u32 = output_sizes.iter().product::<u32>() / depth;
            // Index type: UINT32 keeps 4-D cases at 2_0; other ranks rotate through the types.
            let index_type = if rank == 4 {
                DataType::Uint32
            } else {
                INDEX_TYPES[(rank + axis) % 4]
            };
            let indices: Vec<Value> = (0..sequences)
                .map(|_| Value::Int(skip_equal_to_size(rng.range(0, i128::from(depth)), depth)))
                .collect();
            let level = if rank == 4 { dml("2_0") } else { dml("3_0") };
            let rules = exercised(index_type, &indices, i128::from(depth));
            drafts.push(
                one_hot_draft(
                    format!("rank_{rank}_axis_{axis}"),
                    format!("{rank}-D output {output_sizes:?}, Axis {axis}; indices 0 to 3 and 5 (past the end) with sequences of 4."),
                    index_type,
                    indices,
                    off_on(DataType::Float32, rank, Value::Int(0), Value::Int(1)),
                    &output_sizes,
                    axis as u32,
                )
                .at(level)
                .tags(&["axis"])
                .exercises(&rules),
            );
        }
    }
    drafts
}

fn depth_cases() -> Vec<Draft> {
    let values = |t| off_on(t, 4, Value::Int(5), Value::Int(7));
    vec![
        one_hot_draft(
            "length_1_unsigned",
            "Sequences of length 1: index 0 is the only position, 1 and 2 are past the end.",
            DataType::Uint32,
            ints(&[0, 1, 2]),
            values(DataType::Float32),
            &[1, 1, 3, 1],
            3,
        )
        .at(dml("2_0"))
        .tags(&["depth-1", "out-of-range"])
        .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.OUT_OF_RANGE_INDEX", "ONE_HOT.VALUES_SELECTION"]),
        one_hot_draft(
            "length_1_axis_0",
            "Sequences of length 1 along Axis 0 of a 4-D output.",
            DataType::Uint32,
            ints(&[0, 1, 0, 4, 0, 0]),
            values(DataType::Uint8),
            &[1, 2, 1, 3],
            0,
        )
        .at(dml("2_1"))
        .tags(&["depth-1", "out-of-range"])
        .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.OUT_OF_RANGE_INDEX", "ONE_HOT.VALUES_SELECTION"]),
        one_hot_draft(
            "length_1_signed",
            "Sequences of length 1 with signed indices: -1 is the last (and only) element.",
            DataType::Int32,
            ints(&[-1, 0, 1]),
            values(DataType::Float16),
            &[1, 1, 3, 1],
            3,
        )
        .at(dml("3_0"))
        .tags(&["depth-1", "negative-index"])
        .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.NEGATIVE_INDICES", "ONE_HOT.OUT_OF_RANGE_INDEX"]),
        one_hot_draft(
            "length_1_below_minus_length",
            "Sequences of length 1: -2 is below -size, read as out of range (all OffValue).",
            DataType::Int64,
            ints(&[-2, -1]),
            values(DataType::Float32),
            &[1, 2, 1, 1],
            3,
        )
        .at(dml("3_0"))
        .informational()
        .tags(&["depth-1", "negative-index", "below-minus-size"])
        .exercises(&["ONE_HOT.NEGATIVE_INDICES"]),
        one_hot_draft(
            "length_300_uint8_values",
            "Sequences of 300 with UINT8 values: index 256 and 299 must not wrap at 8 bits; 300 is past the end.",
            DataType::Uint32,
            ints(&[299, 256, 300]),
            values(DataType::Uint8),
            &[1, 1, 3, 300],
            3,
        )
        .at(dml("2_1"))
        .tags(&["large-depth", "out-of-range"])
        .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.INDEX_RELATIVE", "ONE_HOT.OUT_OF_RANGE_INDEX"]),
        one_hot_draft(
            "length_300_negative",
            "Sequences of 300 with INT16 values: -300 is the first element, -44 the 256th.",
            DataType::Int32,
            ints(&[-300, -44]),
            off_on(DataType::Int16, 2, Value::Int(5), Value::Int(7)),
            &[2, 300],
            1,
        )
        .at(dml("3_0"))
        .tags(&["large-depth", "negative-index"])
        .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.NEGATIVE_INDICES"]),
    ]
}

/// A 4-D case `{1,1,n,length}` on Axis 3 with FLOAT32 values 0/1 (2_0 for UINT32 indices).
fn index_row_case(
    id: &str,
    note: &str,
    index_type: DataType,
    indices: Vec<Value>,
    length: u32,
) -> Draft {
    let n = indices.len() as u32;
    let rules = exercised(index_type, &indices, i128::from(length));
    one_hot_draft(
        id,
        note,
        index_type,
        indices,
        off_on(DataType::Float32, 4, Value::Int(0), Value::Int(1)),
        &[1, 1, n, length],
        3,
    )
    .exercises(&rules)
}

fn index_cases() -> Vec<Draft> {
    let two_32 = 1i128 << 32;
    vec![
        index_row_case(
            "uint32_range",
            "UINT32 indices 0, size-1, size+1, far past the end, 2^31 and 2^32-1 (not -1).",
            DataType::Uint32,
            ints(&[0, 3, 5, 1000, 0x7fff_ffff, 0x8000_0000, int_max(DataType::Uint32)]),
            4,
        )
        .at(dml("2_0"))
        .tags(&["indices", "out-of-range", "type-extremes"]),
        index_row_case(
            "uint64_range",
            "UINT64 indices: 2^32 is out of range (not 0), 2^32+1 (not 1), 2^63 and 2^64-1 (not -1).",
            DataType::Uint64,
            ints(&[0, 3, 5, two_32, two_32 + 1, two_32 + 3, 1 << 63, int_max(DataType::Uint64)]),
            4,
        )
        .at(dml("3_0"))
        .tags(&["indices", "out-of-range", "type-extremes", "64-bit"]),
        index_row_case(
            "int32_non_negative",
            "INT32 indices 0, size-1, size+1, 1000 and 2^31-1.",
            DataType::Int32,
            ints(&[0, 3, 5, 1000, int_max(DataType::Int32)]),
            4,
        )
        .at(dml("3_0"))
        .tags(&["indices", "out-of-range", "type-extremes"]),
        index_row_case(
            "int64_beyond_32_bits",
            "INT64 indices beyond 32 bits: 2^32 (not 0), 2^32+2 (not 2), 2^33-1 (low half -1, not the last), 2^31 and 2^63-1.",
            DataType::Int64,
            ints(&[0, 3, 5, two_32, two_32 + 2, 2 * two_32 - 1, 1 << 31, int_max(DataType::Int64)]),
            4,
        )
        .at(dml("3_0"))
        .tags(&["indices", "out-of-range", "type-extremes", "64-bit"]),
        index_row_case(
            "index_equal_to_size_uint32",
            "UINT32 index 4 with sequences of 4: \"exceeds\" is silent on equality; read as past the end.",
            DataType::Uint32,
            ints(&[0, 4, 3]),
            4,
        )
        .at(dml("2_0"))
        .tags(&["indices", "out-of-range"]),
        index_row_case(
            "index_equal_to_size_int64",
            "INT64 index 4 with sequences of 4 (silent on equality; read as past the end).",
            DataType::Int64,
            ints(&[4, -1, 2]),
            4,
        )
        .at(dml("3_0"))
        .tags(&["indices", "out-of-range", "64-bit"]),
        index_row_case(
            "uint32_all_positions",
            "UINT32 indices at every position of a sequence of 7.",
            DataType::Uint32,
            ints(&[6, 5, 4, 3, 2, 1, 0]),
            7,
        )
        .at(dml("2_0"))
        .tags(&["indices"]),
        one_hot_draft(
            "int64_one_dimension",
            "A 1-D output (a single sequence of 5) with INT64 index 2^32+4 (out of range, not 4).",
            DataType::Int64,
            ints(&[two_32 + 4]),
            off_on(DataType::Int32, 1, Value::Int(-7), Value::Int(9)),
            &[5],
            0,
        )
        .at(dml("3_0"))
        .tags(&["indices", "out-of-range", "64-bit"])
        .exercises(&["ONE_HOT.OUT_OF_RANGE_INDEX"]),
        one_hot_draft(
            "uint64_one_dimension",
            "A 1-D output (a single sequence of 5) with UINT64 index 4, the last position.",
            DataType::Uint64,
            ints(&[4]),
            off_on(DataType::Int32, 1, Value::Int(-7), Value::Int(9)),
            &[5],
            0,
        )
        .at(dml("3_0"))
        .tags(&["indices"])
        .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.INDEX_RELATIVE"]),
    ]
}

fn negative_index_cases() -> Vec<Draft> {
    let two_32 = 1i128 << 32;
    let mut drafts = Vec::new();
    for index_type in [DataType::Int32, DataType::Int64] {
        let name = index_type.name().to_lowercase();
        drafts.push(
            index_row_case(
                &format!("{name}_minus_1_to_minus_size"),
                "Indices -1 to -size count from the end of the sequence.",
                index_type,
                ints(&[-1, -2, -3, -4, -5]),
                5,
            )
            .at(dml("3_0"))
            .tags(&["negative-index"]),
        );
        drafts.push(
            one_hot_draft(
                format!("{name}_negative_axis_0"),
                "Negative indices along Axis 0 of a 2-D output {4,3}.",
                index_type,
                ints(&[-1, -4, 2]),
                off_on(DataType::Uint16, 2, Value::Int(1), Value::Int(65535)),
                &[4, 3],
                0,
            )
            .at(dml("3_0"))
            .tags(&["negative-index"])
            .exercises(&[
                "ONE_HOT.SEQUENCE",
                "ONE_HOT.NEGATIVE_INDICES",
                "ONE_HOT.INDEX_RELATIVE",
            ]),
        );
        let below: Vec<i128> = if index_type == DataType::Int32 {
            vec![
                -5,
                -6,
                -1000,
                int_min(DataType::Int32),
                int_min(DataType::Int32) + 4,
            ]
        } else {
            vec![
                -5,
                -1000,
                -two_32,
                -two_32 + 3,
                -(1 << 31) - 1,
                int_min(DataType::Int64),
                int_min(DataType::Int64) + 2,
            ]
        };
        drafts.push(
            index_row_case(
                &format!("{name}_below_minus_size"),
                "Indices below -size (including the type minimum and, for INT64, values whose low 32 bits are small) read as out of range: all OffValue.",
                index_type,
                ints(&below),
                4,
            )
            .at(dml("3_0"))
            .informational()
            .tags(&["negative-index", "below-minus-size", "type-extremes"]),
        );
    }
    drafts
}

/// A 4-D case `{1,1,3,4}` on Axis 3 with UINT32 indices 0, 3 and 9 and the given values.
fn values_case(id: &str, note: &str, values: InputDraft) -> Draft {
    one_hot_draft(
        id,
        note,
        DataType::Uint32,
        ints(&[0, 3, 9]),
        values,
        &[1, 1, 3, 4],
        3,
    )
    .exercises(&[
        "ONE_HOT.VALUES_SELECTION",
        "ONE_HOT.SEQUENCE",
        "ONE_HOT.OUT_OF_RANGE_INDEX",
    ])
}

fn values_tensor_cases() -> Vec<Draft> {
    let f = |v: f64| Value::Float(v);
    let filler = Value::Float(-99.0);
    vec![
        values_case(
            "innermost_dimension",
            "ValuesTensor {1,1,1,2}: OnValue is element 1.",
            InputDraft::packed(DataType::Float32, &[1, 1, 1, 2], vec![f(-1.5), f(2.25)]),
        )
        .at(dml("2_0"))
        .tags(&["values-tensor"]),
        values_case(
            "column",
            "ValuesTensor {1,1,3,1} (example 3's shape): the fastest-changing dimension of size above 1 is dimension 2.",
            InputDraft::packed(DataType::Float16, &[1, 1, 3, 1], vec![f(0.5), f(-0.75), f(9.0)]),
        )
        .at(dml("2_0"))
        .tags(&["values-tensor"]),
        values_case(
            "matrix_takes_element_1",
            "ValuesTensor {1,1,2,3}: OnValue is element 1 along the last dimension (not element 3, the first of the next row).",
            InputDraft::packed(DataType::Int8, &[1, 1, 2, 3], ints(&[-3, 4, -5, 6, -7, 8])),
        )
        .at(dml("2_1"))
        .tags(&["values-tensor"]),
        values_case(
            "outer_dimension",
            "ValuesTensor {2,1,1,1}: only dimension 0 has size above 1, so OnValue is element 1.",
            InputDraft::packed(DataType::Uint16, &[2, 1, 1, 1], ints(&[40000, 3])),
        )
        .at(dml("2_1"))
        .tags(&["values-tensor"]),
        values_case(
            "second_dimension_long",
            "ValuesTensor {1,5,1,1}: dimension 1 is the only one above 1; elements 2 to 4 are unused.",
            InputDraft::packed(DataType::Int32, &[1, 5, 1, 1], ints(&[10, 20, 30, 40, 50])),
        )
        .at(dml("2_1"))
        .tags(&["values-tensor"]),
        values_case(
            "strided_last_dimension",
            "ValuesTensor {1,1,2,3} strides {0,0,1,2}: the last dimension's stride is 2, so OnValue is buffer element 2 (buffer element 1 is the element at {0,0,1,0}).",
            InputDraft::strided(DataType::Float32, &[1, 1, 2, 3], &[0, 0, 1, 2], &[f(1.0), f(2.0), f(3.0), f(4.0), f(5.0), f(6.0)], filler),
        )
        .at(dml("2_0"))
        .tags(&["values-tensor", "strided"]),
        values_case(
            "padded_pair",
            "ValuesTensor {1,1,1,2} strides {0,0,0,5}: OnValue is buffer element 5; elements 1 to 4 are padding.",
            InputDraft::strided(DataType::Float32, &[1, 1, 1, 2], &[0, 0, 0, 5], &[f(0.125), f(8.0)], filler),
        )
        .at(dml("2_0"))
        .tags(&["values-tensor", "strided"]),
        values_case(
            "padded_column",
            "ValuesTensor {1,1,3,1} strides {7,7,4,1}: OnValue is buffer element 4.",
            InputDraft::strided(DataType::Uint8, &[1, 1, 3, 1], &[7, 7, 4, 1], &ints(&[11, 22, 33]), Value::Int(99)),
        )
        .at(dml("2_1"))
        .tags(&["values-tensor", "strided"]),
        values_case(
            "broadcast_innermost",
            "ValuesTensor {1,1,2,2} strides {0,0,1,0}: the innermost dimension of size above 1 broadcasts (stride 0), so OnValue is the element at offset 0 — the OffValue itself; every output is that value.",
            InputDraft::strided(DataType::Float32, &[1, 1, 2, 2], &[0, 0, 1, 0], &[f(3.5), f(3.5), f(-2.0), f(-2.0)], filler),
        )
        .at(dml("2_0"))
        .tags(&["values-tensor", "broadcast"]),
        values_case(
            "broadcast_outer",
            "ValuesTensor {1,1,2,2} strides {0,0,0,1}: the outer dimension broadcasts, OnValue is buffer element 1.",
            InputDraft::strided(DataType::Int16, &[1, 1, 2, 2], &[0, 0, 0, 1], &ints(&[-300, 300, -300, 300]), Value::Int(7)),
        )
        .at(dml("2_1"))
        .tags(&["values-tensor", "broadcast"]),
        values_case(
            "larger_total_size",
            "ValuesTensor {1,1,1,2} with a TotalTensorSizeInBytes of 64 (more than the 8 needed).",
            InputDraft::packed(DataType::Float32, &[1, 1, 1, 2], vec![f(-4.0), f(4.0)]).with_total_size(64),
        )
        .at(dml("2_0"))
        .tags(&["values-tensor", "total-size"]),
        one_hot_draft(
            "one_dimension_strided",
            "1-D ValuesTensor {5} strides {2}: OnValue is buffer element 2.",
            DataType::Int32,
            ints(&[4]),
            InputDraft::strided(DataType::Uint32, &[5], &[2], &ints(&[100, 200, 300, 400, 500]), Value::Int(1)),
            &[6],
            0,
        )
        .at(dml("3_0"))
        .tags(&["values-tensor", "strided"])
        .exercises(&["ONE_HOT.VALUES_SELECTION"]),
        one_hot_draft(
            "two_dimensions_column_strided",
            "2-D ValuesTensor {3,1} strides {2,1}: dimension 0 is the innermost of size above 1, OnValue is buffer element 2.",
            DataType::Uint64,
            ints(&[0, 2, 3]),
            InputDraft::strided(DataType::Int8, &[3, 1], &[2, 1], &ints(&[-1, 2, -3]), Value::Int(77)),
            &[3, 3],
            1,
        )
        .at(dml("3_0"))
        .tags(&["values-tensor", "strided"])
        .exercises(&["ONE_HOT.VALUES_SELECTION", "ONE_HOT.OUT_OF_RANGE_INDEX"]),
        one_hot_draft(
            "three_dimensions",
            "3-D ValuesTensor {2,3,4}: OnValue is element 1 along the last dimension.",
            DataType::Uint32,
            ints(&[1, 0]),
            InputDraft::packed(DataType::Float16, &[2, 3, 4], (0..24).map(|i| Value::Int(i * 3 - 20)).collect()),
            &[2, 1, 3],
            2,
        )
        .at(dml("3_0"))
        .tags(&["values-tensor"])
        .exercises(&["ONE_HOT.VALUES_SELECTION"]),
    ]
}

fn on_off_value_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    let level_of = |t: DataType| match t {
        DataType::Float32 | DataType::Float16 => dml("2_0"),
        DataType::Float64 | DataType::Int64 | DataType::Uint64 => dml("4_1"),
        _ => dml("2_1"),
    };
    for value_type in DataType::ALL {
        let name = value_type.name().to_lowercase();
        let pairs: Vec<(&str, &str, Value, Value)> = if value_type.is_float() {
            let s = float_specials(value_type);
            let b = Value::Bits;
            vec![
                (
                    "zeros",
                    "OffValue +0.0, OnValue -0.0",
                    Value::Float(0.0),
                    Value::Float(-0.0),
                ),
                (
                    "zeros_swapped",
                    "OffValue -0.0, OnValue +0.0",
                    Value::Float(-0.0),
                    Value::Float(0.0),
                ),
                (
                    "nan_payloads",
                    "OffValue a quiet NaN with a payload, OnValue a negative NaN",
                    b(s.nan_payload),
                    b(s.negative_nan),
                ),
                (
                    "signalling_nan",
                    "OffValue a signalling NaN, OnValue the canonical NaN",
                    b(s.signalling_nan),
                    b(canonical_nan(value_type)),
                ),
                (
                    "infinities",
                    "OffValue -inf, OnValue +inf",
                    b(s.neg_inf),
                    b(s.inf),
                ),
                (
                    "subnormals",
                    "OffValue the smallest subnormal, OnValue the largest subnormal",
                    b(s.min_subnormal),
                    b(s.max_subnormal),
                ),
                (
                    "extremes",
                    "OffValue the lowest finite value, OnValue the largest",
                    b(s.lowest),
                    b(s.max),
                ),
                (
                    "tiny",
                    "OffValue the smallest negative subnormal, OnValue the smallest normal",
                    b(s.neg_min_subnormal),
                    b(s.min_normal),
                ),
            ]
        } else if value_type.is_signed_integer() {
            vec![
                (
                    "extremes",
                    "OffValue the type minimum, OnValue the maximum",
                    type_lowest(value_type),
                    type_max(value_type),
                ),
                (
                    "extremes_swapped",
                    "OffValue the type maximum, OnValue the minimum",
                    type_max(value_type),
                    type_lowest(value_type),
                ),
                (
                    "minus_one",
                    "OffValue -1 (all bits set), OnValue 0",
                    Value::Int(-1),
                    Value::Int(0),
                ),
            ]
        } else {
            vec![
                (
                    "extremes",
                    "OffValue 0, OnValue the type maximum",
                    Value::Int(0),
                    type_max(value_type),
                ),
                (
                    "extremes_swapped",
                    "OffValue the type maximum, OnValue 1",
                    type_max(value_type),
                    Value::Int(1),
                ),
                (
                    "high_bit",
                    "OffValue the high bit alone, OnValue the high bit plus 1",
                    Value::Int(int_max(value_type) / 2 + 1),
                    Value::Int(int_max(value_type) / 2 + 2),
                ),
            ]
        };
        for (suffix, what, off, on) in nan_bit_exact_twins(pairs) {
            let suffix = suffix.as_str();
            let mut tags = vec!["on-off-values"];
            if value_type.is_float() {
                tags.push(match suffix {
                    "zeros" | "zeros_swapped" => "negative-zero",
                    "nan_payloads"
                    | "signalling_nan"
                    | "nan_payloads_bits"
                    | "signalling_nan_bits" => "nan",
                    "infinities" => "infinity",
                    "subnormals" | "tiny" => "subnormal",
                    _ => "type-extremes",
                });
            } else {
                tags.push("type-extremes");
            }
            drafts.push(
                values_case(
                    &format!("{name}_{suffix}"),
                    &format!("{value_type}: {what} (index 9 is past the end: all OffValue)."),
                    off_on(value_type, 4, off, on),
                )
                .at(level_of(value_type))
                .tags(&tags)
                .compare_bits_if(suffix.ends_with("_bits")),
            );
        }
    }
    drafts
}

/// The pairs as given, plus, for each NaN pair, a twin suffixed `_bits` compared bit for bit:
/// the plain one is decided by the page (a NaN is written, any NaN matches), the twin rests on
/// the silent ONE_HOT.VALUES_BIT_COPY.
fn nan_bit_exact_twins(
    pairs: Vec<(&str, &str, Value, Value)>,
) -> Vec<(String, String, Value, Value)> {
    let mut all = Vec::new();
    for (suffix, what, off, on) in pairs {
        all.push((suffix.to_string(), what.to_string(), off, on));
        if matches!(suffix, "nan_payloads" | "signalling_nan") {
            all.push((
                format!("{suffix}_bits"),
                format!("{what}, compared bit for bit"),
                off,
                on,
            ));
        }
    }
    all
}

fn strided_cases() -> Vec<Draft> {
    let values = off_on(DataType::Float32, 4, Value::Int(0), Value::Int(1));
    let exercised = [
        "ONE_HOT.SEQUENCE",
        "ONE_HOT.INDEX_RELATIVE",
        "ONE_HOT.VALUES_SELECTION",
    ];
    vec![
        Draft::positive("padded_indices", OP, "IndicesTensor {1,1,3,1} strides {0,0,2,0}: buffer elements 1 and 3 are padding (holding 1, a valid index).")
            .dml_axis(3)
            .input("IndicesTensor", InputDraft::strided(DataType::Uint32, &[1, 1, 3, 1], &[0, 0, 2, 0], &ints(&[3, 0, 2]), Value::Int(1)))
            .input("ValuesTensor", values.clone())
            .output("OutputTensor", OutputDraft::packed(DataType::Float32, &[1, 1, 3, 4]))
            .at(dml("2_0"))
            .tags(&["strided"])
            .exercises(&exercised),
        Draft::positive("broadcast_indices", OP, "IndicesTensor {2,3,1} strides {0,1,0}: both rows of sequences read the same three indices.")
            .dml_axis(2)
            .input("IndicesTensor", InputDraft::strided(DataType::Int64, &[2, 3, 1], &[0, 1, 0], &ints(&[2, -1, 0, 2, -1, 0]), Value::Int(0)))
            .input("ValuesTensor", off_on(DataType::Int8, 3, Value::Int(-1), Value::Int(1)))
            .output("OutputTensor", OutputDraft::packed(DataType::Int8, &[2, 3, 4]))
            .at(dml("3_0"))
            .tags(&["broadcast"])
            .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.NEGATIVE_INDICES"]),
        Draft::positive("padded_output", OP, "OutputTensor {1,1,3,4} strides {0,0,8,1}: rows are 8 elements apart in the output buffer.")
            .dml_axis(3)
            .input("IndicesTensor", InputDraft::packed(DataType::Uint32, &[1, 1, 3, 1], ints(&[1, 3, 0])))
            .input("ValuesTensor", values.clone())
            .output("OutputTensor", OutputDraft::packed(DataType::Float32, &[1, 1, 3, 4]).with_strides(&[0, 0, 8, 1]))
            .at(dml("2_0"))
            .tags(&["strided"])
            .exercises(&exercised),
        Draft::positive("transposed_output", OP, "OutputTensor {1,1,3,4} strides {12,12,1,3}: the output is written column-major.")
            .dml_axis(3)
            .input("IndicesTensor", InputDraft::packed(DataType::Uint32, &[1, 1, 3, 1], ints(&[1, 3, 0])))
            .input("ValuesTensor", off_on(DataType::Float16, 4, Value::Int(2), Value::Int(-2)))
            .output("OutputTensor", OutputDraft::packed(DataType::Float16, &[1, 1, 3, 4]).with_strides(&[12, 12, 1, 3]))
            .at(dml("2_0"))
            .tags(&["strided"])
            .exercises(&exercised),
        Draft::positive("strided_everything", OP, "5-D indices, values and output all strided with padding, Axis 1.")
            .dml_axis(1)
            .input("IndicesTensor", InputDraft::strided(DataType::Int32, &[2, 1, 1, 2, 1], &[5, 0, 0, 2, 0], &ints(&[0, 2, -1, 7]), Value::Int(1)))
            .input("ValuesTensor", InputDraft::strided(DataType::Uint16, &[1, 1, 1, 1, 2], &[0, 0, 0, 0, 3], &ints(&[10, 20]), Value::Int(99)))
            .output("OutputTensor", OutputDraft::packed(DataType::Uint16, &[2, 3, 1, 2, 1]).with_strides(&[20, 6, 0, 3, 0]))
            .at(dml("3_0"))
            .tags(&["strided"])
            .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.NEGATIVE_INDICES", "ONE_HOT.OUT_OF_RANGE_INDEX"]),
        Draft::positive("larger_output_buffer", OP, "OutputTensor with a TotalTensorSizeInBytes of 256, more than the 48 needed.")
            .dml_axis(3)
            .input("IndicesTensor", InputDraft::packed(DataType::Uint32, &[1, 1, 3, 1], ints(&[2, 2, 2])))
            .input("ValuesTensor", values)
            .output("OutputTensor", OutputDraft::packed(DataType::Float32, &[1, 1, 3, 4]).with_total_size(256))
            .at(dml("2_0"))
            .tags(&["total-size"])
            .exercises(&exercised),
    ]
}
