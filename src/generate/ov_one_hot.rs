//! OpenVINO `OneHot-1` edge behaviour: every axis position, negative axes, 0-D indices,
//! indices at or above depth (64-bit values never truncated), depth 1 and large depths,
//! special on/off values of every T2 type copied bit for bit, and negative indices
//! (informational: undefined by the spec).

use super::draft::{Draft, InputDraft, OutputDraft};
use super::values::{
    canonical_nan, float_specials, int_max, int_min, ints, type_lowest, type_max, Value,
};
use super::Topic;
use opconform_backend::{DataType, Level, OperatorKind};

const OP: OperatorKind = OperatorKind::OvOneHot1;
const MODULE: &str = "src/generate/ov_one_hot.rs";

/// The T2 types opconform tests (every type its tensors carry).
pub const VALUE_TYPES: [DataType; 11] = DataType::ALL;

/// The level of every OneHot-1 case.
pub fn opset1() -> Level {
    Level::Opset(1)
}

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
        topic("axis", "Every axis position of indices of rank 0 to 3, negative ones counting from the end of the output shape.", axis_cases),
        topic("indices", "0-D indices, indices at and above depth (64-bit values compared whole), depth 1 and 300; negative indices (informational).", index_cases),
        topic("values", "Special on/off values of every T2 type, copied bit for bit.", value_cases),
    ]
}

/// The output shape: `indices_sizes` with `depth` inserted at the normalised `axis`.
pub fn output_sizes(indices_sizes: &[u32], depth: u32, axis: i64) -> Vec<u32> {
    let n = indices_sizes.len() as i64;
    let position = if axis < 0 { axis + n + 1 } else { axis };
    let mut sizes = indices_sizes.to_vec();
    sizes.insert(position as usize, depth);
    sizes
}

/// A OneHot-1 draft: T1 indices and depth, T2 scalars on and off, output of T2.
#[allow(clippy::too_many_arguments)]
pub fn ov_draft(
    id: impl Into<String>,
    note: impl Into<String>,
    index_type: DataType,
    indices_sizes: &[u32],
    indices: Vec<Value>,
    depth: u32,
    value_type: DataType,
    on: Value,
    off: Value,
    axis: i64,
) -> Draft {
    let output = output_sizes(indices_sizes, depth, axis);
    Draft::positive(id, OP, note)
        .ov_axis(axis)
        .input(
            "indices",
            InputDraft::packed(index_type, indices_sizes, indices),
        )
        .input(
            "depth",
            InputDraft::packed(index_type, &[], vec![Value::Int(i128::from(depth))]),
        )
        .input("on_value", InputDraft::packed(value_type, &[], vec![on]))
        .input("off_value", InputDraft::packed(value_type, &[], vec![off]))
        .output("output", OutputDraft::packed(value_type, &output))
        .at(opset1())
}

fn axis_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    let shapes: [Vec<u32>; 4] = [vec![], vec![4], vec![2, 3], vec![2, 1, 3]];
    let types = [
        DataType::Float32,
        DataType::Int32,
        DataType::Uint8,
        DataType::Float16,
    ];
    for (rank, sizes) in shapes.iter().enumerate() {
        let n = rank as i64;
        let count: usize = sizes.iter().map(|&s| s as usize).product();
        let indices: Vec<Value> = (0..count)
            .map(|i| Value::Int(((i * 2 + rank) % 5) as i128))
            .collect();
        for axis in -(n + 1)..=n {
            let index_type = if (axis + n) % 2 == 0 {
                DataType::Int64
            } else {
                DataType::Int32
            };
            let value_type = types[rank];
            let id = if axis < 0 {
                format!("rank_{rank}_axis_minus_{}", -axis)
            } else {
                format!("rank_{rank}_axis_{axis}")
            };
            drafts.push(
                ov_draft(
                    id,
                    format!(
                        "indices {sizes:?} (values 0 to 4, depth 4), axis {axis}: output {:?}.",
                        output_sizes(sizes, 4, axis)
                    ),
                    index_type,
                    sizes,
                    indices.clone(),
                    4,
                    value_type,
                    Value::Int(1),
                    Value::Int(0),
                    axis,
                )
                .tags(&["axis"])
                .exercises(&["ONEHOT1.SELECTION", "ONEHOT1.INDEX_AT_LEAST_DEPTH"]),
            );
        }
    }
    drafts
}

fn index_cases() -> Vec<Draft> {
    let two_32 = 1i128 << 32;
    let selection = ["ONEHOT1.SELECTION"];
    let at_least = ["ONEHOT1.SELECTION", "ONEHOT1.INDEX_AT_LEAST_DEPTH"];
    vec![
        ov_draft("scalar_index", "0-D indices holding 2, depth 3: a 1-D output {3}.", DataType::Int64, &[], ints(&[2]), 3, DataType::Float32, Value::Int(1), Value::Int(0), -1)
            .tags(&["0-d"]).exercises(&selection),
        ov_draft("scalar_index_at_depth", "0-D indices holding 3, depth 3: all off_value.", DataType::Int32, &[], ints(&[3]), 3, DataType::Int8, Value::Int(5), Value::Int(-5), 0)
            .tags(&["0-d", "out-of-range"]).exercises(&at_least),
        ov_draft("int32_at_and_above_depth", "INT32 indices depth-1, depth, depth+1, 1000 and 2^31-1.", DataType::Int32, &[5], ints(&[3, 4, 5, 1000, int_max(DataType::Int32)]), 4, DataType::Int32, Value::Int(1), Value::Int(0), -1)
            .tags(&["out-of-range", "type-extremes"]).exercises(&at_least),
        ov_draft("int64_beyond_32_bits", "INT64 indices 2^32 (not 0), 2^32+1 (not 1), 2^33-1 and 2^63-1 are all at least depth.", DataType::Int64, &[5], ints(&[0, two_32, two_32 + 1, 2 * two_32 - 1, int_max(DataType::Int64)]), 4, DataType::Int32, Value::Int(1), Value::Int(0), -1)
            .tags(&["out-of-range", "type-extremes", "64-bit"]).exercises(&at_least),
        ov_draft("depth_1", "depth 1: only index 0 selects.", DataType::Int32, &[2, 2], ints(&[0, 1, 1, 0]), 1, DataType::Uint16, Value::Int(65535), Value::Int(1), 1)
            .tags(&["depth-1", "out-of-range"]).exercises(&at_least),
        ov_draft("depth_300", "depth 300 with UINT8 values: index 256 and 299 do not wrap at 8 bits.", DataType::Int64, &[3], ints(&[299, 256, 300]), 300, DataType::Uint8, Value::Int(1), Value::Int(0), -1)
            .tags(&["large-depth", "out-of-range"]).exercises(&at_least),
        ov_draft("rank_9_indices", "9-D indices {2,1,1,1,1,1,1,1,2} (a 10-D output): the page sets no rank limit.", DataType::Int32, &[2, 1, 1, 1, 1, 1, 1, 1, 2], ints(&[0, 2, 1, 3]), 3, DataType::Float32, Value::Int(1), Value::Int(0), 4)
            .tags(&["high-rank"]).exercises(&at_least),
        ov_draft("rank_12_indices", "12-D indices (a 13-D output), axis -1.", DataType::Int64, &[1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2], ints(&[2, 0, 1, 1]), 3, DataType::Int8, Value::Int(-1), Value::Int(1), -1)
            .tags(&["high-rank"]).exercises(&selection),
        ov_draft("negative_int32", "INT32 indices -1, -3 (= -depth), -4 and the minimum with depth 3: no i in [0, 2] equals them, all off_value (negative indices are undefined).", DataType::Int32, &[4], ints(&[-1, -3, -4, int_min(DataType::Int32)]), 3, DataType::Float32, Value::Int(1), Value::Int(0), -1)
            .informational().tags(&["negative-index"]).exercises(&["ONEHOT1.NEGATIVE_INDICES"]),
        ov_draft("negative_int64", "INT64 indices -1, -2^32+1 (low half 1) and the minimum with depth 3 (negative indices are undefined).", DataType::Int64, &[3], ints(&[-1, -two_32 + 1, int_min(DataType::Int64)]), 3, DataType::Int64, Value::Int(1), Value::Int(0), 0)
            .informational().tags(&["negative-index", "64-bit"]).exercises(&["ONEHOT1.NEGATIVE_INDICES"]),
    ]
}

fn value_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    for t in VALUE_TYPES {
        let name = t.name().to_lowercase();
        let pairs: Vec<(&str, &str, Value, Value)> = if t.is_float() {
            let s = float_specials(t);
            let b = Value::Bits;
            vec![
                (
                    "zeros",
                    "on_value -0.0, off_value +0.0",
                    Value::Float(-0.0),
                    Value::Float(0.0),
                ),
                (
                    "nans",
                    "on_value a NaN with a payload, off_value a negative NaN",
                    b(s.nan_payload),
                    b(s.negative_nan),
                ),
                (
                    "signalling_nan",
                    "on_value a signalling NaN, off_value the canonical NaN",
                    b(s.signalling_nan),
                    b(canonical_nan(t)),
                ),
                (
                    "infinities",
                    "on_value +inf, off_value -inf",
                    b(s.inf),
                    b(s.neg_inf),
                ),
                (
                    "subnormals",
                    "on_value the smallest subnormal, off_value the largest",
                    b(s.min_subnormal),
                    b(s.max_subnormal),
                ),
                (
                    "extremes",
                    "on_value the largest finite value, off_value the lowest",
                    b(s.max),
                    b(s.lowest),
                ),
            ]
        } else {
            vec![
                (
                    "extremes",
                    "on_value the type maximum, off_value the minimum",
                    type_max(t),
                    type_lowest(t),
                ),
                (
                    "extremes_swapped",
                    "on_value the type minimum, off_value the maximum",
                    type_lowest(t),
                    type_max(t),
                ),
            ]
        };
        for (suffix, what, on, off) in with_bit_exact_twins(pairs) {
            drafts.push(
                ov_draft(
                    format!("{name}_{suffix}"),
                    format!("{t}: {what}."),
                    DataType::Int64,
                    &[2, 2],
                    ints(&[0, 2, 3, 1]),
                    3,
                    t,
                    on,
                    off,
                    1,
                )
                .tags(&["on-off-values"])
                .compare_bits_if(suffix.ends_with("_bits"))
                .exercises(&["ONEHOT1.SELECTION", "ONEHOT1.INDEX_AT_LEAST_DEPTH"]),
            );
        }
    }
    drafts
}

/// The pairs as given, plus, for each NaN pair, a twin suffixed `_bits` that is compared bit
/// for bit (payload and sign kept): the plain one is decided by the page (a NaN is written),
/// the twin rests on the silent ONEHOT1.VALUES_BIT_COPY.
fn with_bit_exact_twins<'a>(
    pairs: Vec<(&'a str, &'a str, Value, Value)>,
) -> Vec<(String, String, Value, Value)> {
    let mut all = Vec::new();
    for (suffix, what, on, off) in pairs {
        all.push((suffix.to_string(), what.to_string(), on, off));
        if matches!(suffix, "nans" | "signalling_nan") {
            all.push((
                format!("{suffix}_bits"),
                format!("{what}, compared bit for bit"),
                on,
                off,
            ));
        }
    }
    all
}
