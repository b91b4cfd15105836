//! Sizes and layouts where fast implementations change strategy: outputs above 2^20 elements,
//! more than 65,536 nonzeros, ties across reductions longer than 65,536 elements, strided and
//! permuted inputs at ranks 5 to 8, and strided OneHot-1 indices. Real backends split work into
//! chunks, threads, SIMD blocks and GPU dispatches at sizes like these; a merge or offset bug
//! there passes every small case.

use super::argmax::{argmax_draft, direction_rules};
use super::draft::{Draft, InputDraft};
use super::nonzero_coordinates::nonzero_draft;
use super::one_hot::{off_on, one_hot_draft};
use super::ov_one_hot::ov_draft;
use super::shapes::dml;
use super::values::{ints, Value};
use super::Topic;
use crate::case::data_generator::{DataGenerator, Distribution};
use opconform_backend::{AxisDirection, DataType, OperatorKind};

const MODULE: &str = "src/generate/scale.rs";

/// The topics of this module, one file per operator.
pub fn topics() -> Vec<Topic> {
    let topic = |operator, description, build| Topic {
        operator,
        name: "scale",
        module: MODULE,
        description,
        build,
    };
    vec![
        topic(OperatorKind::DmlOneHot, "An output above 2^20 elements with OnValues on both sides of element 2^20.", one_hot_cases),
        topic(OperatorKind::DmlArgMax, "Ties across reductions longer than 65,536 elements in both directions (inner, outer and all axes), and strided, permuted, padded and broadcast inputs at ranks 5 to 8 with non-adjacent axes.", argmax_cases),
        topic(OperatorKind::DmlNonZeroCoordinates, "More than 65,536 nonzeros (dense generated inputs).", nonzero_cases),
        topic(OperatorKind::OvOneHot1, "An output above 2^20 elements, and strided, transposed and broadcast indices.", ov_cases),
    ]
}

/// Indices of 16 sequences of `length`: the first and last positions, the middle, and the last
/// position of the last sequence (past element 2^20 of a 16 × 65,537 output).
fn spread_indices(length: i128) -> Vec<Value> {
    let last = length - 1;
    ints(&[
        last,
        0,
        last - 1,
        1,
        length / 2,
        last,
        2,
        last - 2,
        7,
        length / 3,
        last,
        0,
        length - 16,
        5,
        1,
        last,
    ])
}

/// 65,537: 16 sequences of it make an output of 1,048,592 elements, just above 2^20.
const LONG_SEQUENCE: u32 = 65_537;

fn one_hot_cases() -> Vec<Draft> {
    vec![one_hot_draft(
        "output_above_2_20",
        "FLOAT16 output {1,1,16,65537} (1,048,592 elements): OnValues before and after element 2^20.",
        DataType::Uint32,
        spread_indices(i128::from(LONG_SEQUENCE)),
        off_on(DataType::Float16, 4, Value::Int(0), Value::Int(1)),
        &[1, 1, 16, LONG_SEQUENCE],
        3,
    )
    .at(dml("2_0"))
    .tags(&["large", "scale"])
    .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.INDEX_RELATIVE"]),
    one_hot_draft(
        "output_above_dispatch_limit",
        "FLOAT16 output {1,1,2049,4096} (8,392,704 elements, 16.8 MB) on Axis 2: above 65,535 workgroups of 128 (one GPU dispatch) and the CPU's 16 MiB streaming-store threshold; OnValues in the first rows, the rest OffValue.",
        DataType::Uint32,
        low_indices_with_one_past_end(BIG_AXIS),
        off_on(DataType::Float16, 4, Value::Int(0), Value::Int(1)),
        &[1, 1, BIG_AXIS, BIG_ROW],
        2,
    )
    .at(dml("2_0"))
    .tags(&["large", "scale"])
    .exercises(&["ONE_HOT.SEQUENCE", "ONE_HOT.INDEX_RELATIVE", "ONE_HOT.OUT_OF_RANGE_INDEX"])]
}

/// Sequences of the outer-axis case above the dispatch limit.
const BIG_ROW: u32 = 4096;

/// Its Axis size: 2049 × 4096 elements is above 65,535 × 128 and above 16 MiB of FLOAT16.
const BIG_AXIS: u32 = 2049;

/// `BIG_ROW` indices in [0, 3] (so every OnValue lies in the first rows and the expected
/// output is short data plus `fill`), with index `length + 7` (past the end) every 97th.
fn low_indices_with_one_past_end(length: u32) -> Vec<Value> {
    (0..BIG_ROW)
        .map(|i| {
            Value::Int(if i % 97 == 0 {
                i128::from(length) + 7
            } else {
                i128::from((i * 7 + i / 5) % 4)
            })
        })
        .collect()
}

fn ov_cases() -> Vec<Draft> {
    let selection = ["ONEHOT1.SELECTION"];
    let at_least = ["ONEHOT1.SELECTION", "ONEHOT1.INDEX_AT_LEAST_DEPTH"];
    let strided = |draft: Draft, sizes: &[u32], strides: &[u32], logical: &[i128]| {
        let index_type = draft.inputs[0].1.data_type;
        let mut draft = draft;
        draft.inputs[0].1 =
            InputDraft::strided(index_type, sizes, strides, &ints(logical), Value::Int(1));
        draft
    };
    let base = |id: &str, note: &str, t: DataType, sizes: &[u32], depth: u32, axis: i64| {
        let count: u32 = sizes.iter().product();
        ov_draft(
            id,
            note,
            t,
            sizes,
            vec![Value::Int(0); count as usize],
            depth,
            DataType::Int16,
            Value::Int(-7),
            Value::Int(9),
            axis,
        )
    };
    vec![
        ov_draft(
            "output_above_2_20",
            "INT32 indices {16}, depth 65537, axis -1: an output {16,65537} of 1,048,592 elements with on_values before and after element 2^20.",
            DataType::Int32,
            &[16],
            spread_indices(i128::from(LONG_SEQUENCE)),
            LONG_SEQUENCE,
            DataType::Float16,
            Value::Int(1),
            Value::Int(0),
            -1,
        )
        .tags(&["large", "scale"])
        .exercises(&selection),
        ov_draft(
            "output_above_dispatch_limit",
            "INT32 indices {4096}, depth 2049, axis 0: an output {2049,4096} of 8,392,704 FLOAT16 elements (above one GPU dispatch and 16 MiB), on_values in the first rows.",
            DataType::Int32,
            &[BIG_ROW],
            low_indices_with_one_past_end(BIG_AXIS),
            BIG_AXIS,
            DataType::Float16,
            Value::Int(1),
            Value::Int(0),
            0,
        )
        .tags(&["large", "scale"])
        .exercises(&at_least),
        strided(base("transposed_indices", "INT64 indices {3,4} strides {1,3} (stored column-major), depth 4, axis 1.", DataType::Int64, &[3, 4], 4, 1), &[3, 4], &[1, 3], &[0, 1, 2, 3, 3, 2, 1, 0, 4, 0, 5, 2])
            .tags(&["strided"])
            .exercises(&at_least),
        strided(base("broadcast_indices", "INT32 indices {2,3} strides {0,1}: both rows read the same three indices, depth 3, axis -1.", DataType::Int32, &[2, 3], 3, -1), &[2, 3], &[0, 1], &[2, 0, 1, 2, 0, 1])
            .tags(&["broadcast"])
            .exercises(&selection),
        strided(base("padded_indices", "INT32 indices {2,2,2} strides {8,3,1} with padding, depth 5, axis 0.", DataType::Int32, &[2, 2, 2], 5, 0), &[2, 2, 2], &[8, 3, 1], &[4, 0, 1, 5, 2, 3, 0, 4])
            .tags(&["strided"])
            .exercises(&at_least),
    ]
}

fn generated(t: DataType, sizes: &[u32], seed: u64, distribution: Distribution) -> InputDraft {
    InputDraft::generated(t, sizes, DataGenerator { seed, distribution })
}

fn ints_in(min: i64, max: i64) -> Distribution {
    Distribution::UniformInt { min, max }
}

/// A long ArgMax reduction: id, description, input type, sizes, axes, values.
type LongReduction = (
    &'static str,
    &'static str,
    DataType,
    &'static [u32],
    &'static [u32],
    Distribution,
);

/// A strided ArgMax layout: id, description, sizes, strides, axes.
type StridedLayout = (
    &'static str,
    &'static str,
    &'static [u32],
    &'static [u32],
    &'static [u32],
);

fn argmax_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    let both = [AxisDirection::Increasing, AxisDirection::Decreasing];
    let long_reductions: [LongReduction; 4] = [
        ("uint8_inner_70000", "UINT8 {2,70000} in [0,3] reduced over the inner axis: the maximum 3 ties thousands of times", DataType::Uint8, &[2, 70_000], &[1], ints_in(0, 3)),
        ("float32_constant_70001", "FLOAT32 {3,70001}, every element 5: the whole row ties", DataType::Float32, &[3, 70_001], &[1], ints_in(5, 5)),
        ("int16_outer_70000", "INT16 {70000,2} in [0,2] reduced over the outer axis", DataType::Int16, &[70_000, 2], &[0], ints_in(0, 2)),
        ("float16_all_axes_90000", "FLOAT16 {300,300} in [-3,3] reduced over both axes (90,000 elements)", DataType::Float16, &[300, 300], &[0, 1], ints_in(-3, 3)),
    ];
    for (seed, (id, what, t, sizes, axes, distribution)) in long_reductions.into_iter().enumerate()
    {
        for direction in both {
            let suffix = direction_suffix(direction);
            drafts.push(
                argmax_draft(
                    format!("{id}_{suffix}"),
                    format!("{what}, {suffix}."),
                    generated(t, sizes, 0x5ca1e + seed as u64, distribution.clone()),
                    DataType::Uint32,
                    axes,
                    direction,
                )
                .at(dml("3_0"))
                .tags(&["large", "scale", "ties", "generated"])
                .exercises(&direction_rules(direction)),
            );
        }
    }
    for direction in both {
        let suffix = direction_suffix(direction);
        let uniform = Distribution::UniformFloat {
            min: -2.0,
            max: 2.0,
        };
        drafts.push(
            argmax_draft(format!("float16_uniform_float_{suffix}"), format!("FLOAT16 {{64,1000}} drawn by uniform_float in [-2,2] (every value rounded to nearest even from binary64), reduced over rows, {suffix}."), generated(DataType::Float16, &[64, 1000], 0xf16, uniform), DataType::Uint32, &[1], direction)
                .at(dml("3_0"))
                .tags(&["generated", "float16"])
                .exercises(&direction_rules(direction)),
        );
    }
    let layouts: [StridedLayout; 6] = [
        ("rank_5_transposed", "{2,3,2,3,2} stored in reverse dimension order (strides {1,2,6,12,36}), axes {1,3}", &[2, 3, 2, 3, 2], &[1, 2, 6, 12, 36], &[1, 3]),
        ("rank_5_padded", "{2,2,3,2,3} with padded strides {96,40,12,5,1}, axes {0,2,4}", &[2, 2, 3, 2, 3], &[96, 40, 12, 5, 1], &[0, 2, 4]),
        ("rank_6_permuted", "{2,2,2,3,2,2} with permuted strides {2,24,1,4,48,96}, axes {2,5}", &[2, 2, 2, 3, 2, 2], &[2, 24, 1, 4, 48, 96], &[2, 5]),
        ("rank_7_broadcast", "{2,3,2,2,2,2,2} with a broadcast dimension (strides {32,0,16,8,4,2,1}), axes {1,3,6}", &[2, 3, 2, 2, 2, 2, 2], &[32, 0, 16, 8, 4, 2, 1], &[1, 3, 6]),
        ("rank_8_transposed", "{2,2,2,2,2,2,2,3} stored in reverse order (strides {1,2,4,8,16,32,64,128}), axes {0,7}", &[2, 2, 2, 2, 2, 2, 2, 3], &[1, 2, 4, 8, 16, 32, 64, 128], &[0, 7]),
        ("rank_8_padded_all_but_one", "{2,2,2,2,2,2,2,2} with padded strides {512,256,64,32,16,8,4,1}, axes {0,1,2,3,4,5,7}", &[2, 2, 2, 2, 2, 2, 2, 2], &[512, 256, 64, 32, 16, 8, 4, 1], &[0, 1, 2, 3, 4, 5, 7]),
    ];
    let types = [
        DataType::Float32,
        DataType::Int8,
        DataType::Float16,
        DataType::Uint16,
        DataType::Int32,
        DataType::Uint8,
    ];
    for (i, (id, what, sizes, strides, axes)) in layouts.into_iter().enumerate() {
        let t = types[i % types.len()];
        for direction in both {
            let suffix = direction_suffix(direction);
            let input = generated(t, sizes, 0x1a70 + i as u64, ints_in(0, 4)).with_strides(strides);
            drafts.push(
                argmax_draft(
                    format!("{id}_{suffix}"),
                    format!("{t} {what}, values in [0,4] (many ties), {suffix}."),
                    input,
                    DataType::Int64,
                    axes,
                    direction,
                )
                .at(dml("3_0"))
                .tags(&["strided", "high-rank"])
                .exercises(&direction_rules(direction)),
            );
        }
    }
    drafts
}

fn direction_suffix(direction: AxisDirection) -> &'static str {
    match direction {
        AxisDirection::Increasing => "increasing",
        AxisDirection::Decreasing => "decreasing",
    }
}

fn nonzero_cases() -> Vec<Draft> {
    let dense = |per_million, max| Distribution::Sparse { per_million, max };
    vec![
        nonzero_draft(
            "float32_70000_dense",
            "FLOAT32 {1,1,280,250} with about 95% nonzeros (over 65,536 rows of coordinates).",
            generated(
                DataType::Float32,
                &[1, 1, 280, 250],
                0xde5e,
                dense(950_000, 100),
            ),
            4,
            4,
            2,
        )
        .at(dml("3_0"))
        .tags(&["large", "scale", "generated"]),
        nonzero_draft(
            "uint8_70000_dense_2d",
            "UINT8 {280,250} with about 99% nonzeros and 2-D coordinates (4_0).",
            generated(DataType::Uint8, &[280, 250], 0xde5f, dense(990_000, 255)),
            2,
            2,
            2,
        )
        .at(dml("4_0"))
        .tags(&["large", "scale", "generated"]),
    ]
}
