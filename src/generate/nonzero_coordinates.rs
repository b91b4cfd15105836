//! `DML_NONZERO_COORDINATES` edge behaviour: all zero, all nonzero, a single nonzero first or
//! last, both zeros, subnormals, infinities, type minima, NaN (informational); N from the
//! effective rank up to the dimension count, effective rank 0, inner size-1 dimensions,
//! tensors of different dimension counts, 1-D to 8-D inputs; strided and broadcast inputs;
//! large sparse generated inputs.

use super::draft::{Draft, InputDraft, OutputDraft};
use super::oracle::{is_nonzero, logical_elements};
use super::shapes::{dml, element_count, small_sizes};
use super::values::{bits_of, canonical_nan, float_specials, ints, type_lowest, type_max, Value};
use super::Topic;
use crate::case::data_generator::{DataGenerator, Distribution};
use opconform_backend::validate::effective_rank;
use opconform_backend::{DataType, OperatorKind, TensorDesc};

const OP: OperatorKind = OperatorKind::DmlNonZeroCoordinates;
const MODULE: &str = "src/generate/nonzero_coordinates.rs";

/// The InputTensor types (the same in both tables).
pub const INPUT_TYPES: [DataType; 8] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
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
        topic("values", "Every input type: all zero, all nonzero, a single nonzero first or last, type extremes.", value_cases),
        topic("float_values", "Both zeros are zero; subnormals, infinities and the extremes are nonzero; NaN is nonzero by our reading (informational).", float_cases),
        topic("shapes", "N from the effective rank up to the dimension count, effective rank 0, inner size-1 dimensions, tensors of different dimension counts, 1-D to 8-D inputs.", shape_cases),
        topic("strided", "Strided and broadcast inputs, strided coordinate outputs.", strided_cases),
        topic("large", "Sparse inputs of more than 2^20 elements from seeded generators: the few coordinates are listed, the undefined rows after them are `fill: null`.", large_cases),
    ]
}

/// A `DML_NONZERO_COORDINATES` draft: a count of `count_rank` dimensions and coordinates
/// `{1,…,1,M,N}` of `coordinates_rank` dimensions, with the exercised rules worked out from
/// the input when its contents are listed.
pub fn nonzero_draft(
    id: impl Into<String>,
    note: impl Into<String>,
    input: InputDraft,
    count_rank: usize,
    coordinates_rank: usize,
    n: u32,
) -> Draft {
    let m = element_count(&input.sizes) as u32;
    let mut coordinates = vec![1; coordinates_rank];
    coordinates[coordinates_rank - 2] = m;
    coordinates[coordinates_rank - 1] = n;
    let rules = exercised(&input);
    Draft::positive(id, OP, note)
        .input("InputTensor", input)
        .output(
            "OutputCountTensor",
            OutputDraft::packed(DataType::Uint32, &vec![1; count_rank]),
        )
        .output(
            "OutputCoordinatesTensor",
            OutputDraft::packed(DataType::Uint32, &coordinates),
        )
        .exercises(&rules)
}

/// The behaviour rules a case with this input exercises.
fn exercised(input: &InputDraft) -> Vec<&'static str> {
    let mut rules = vec![
        "NONZERO_COORDINATES.COORDINATES",
        "NONZERO_COORDINATES.COUNT",
    ];
    let super::draft::Content::Data(values) = &input.content else {
        rules.extend([
            "NONZERO_COORDINATES.ORDER",
            "NONZERO_COORDINATES.ROWS_PAST_COUNT",
        ]);
        return rules;
    };
    let t = input.data_type;
    let desc = TensorDesc::with_strides(t, &input.sizes, input.strides.as_deref())
        .expect("strides match sizes");
    let buffer: Vec<u64> = values.iter().map(|&v| bits_of(t, v)).collect();
    let bits = logical_elements(&desc, &buffer);
    let count = bits.iter().filter(|&&b| is_nonzero(t, b)).count();
    if count >= 2 {
        rules.push("NONZERO_COORDINATES.ORDER");
    }
    if count < bits.len() {
        rules.push("NONZERO_COORDINATES.ROWS_PAST_COUNT");
    }
    if t.is_float() && bits.iter().any(|&b| !is_nonzero(t, b)) {
        rules.push("NONZERO_COORDINATES.NEGATIVE_ZERO");
    }
    rules
}

fn value_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    let sizes = [1u32, 1, 2, 3];
    for t in INPUT_TYPES {
        let name = t.name().to_lowercase();
        let zero = if t.is_float() {
            Value::Float(-0.0)
        } else {
            Value::Int(0)
        };
        let one = Value::Int(1);
        let mut cases: Vec<(&str, String, Vec<Value>)> = vec![
            (
                "all_zero",
                format!("{t} all zero: count 0, every row undefined."),
                vec![
                    Value::Int(0),
                    zero,
                    Value::Int(0),
                    zero,
                    Value::Int(0),
                    Value::Int(0),
                ],
            ),
            (
                "all_nonzero",
                format!("{t} all nonzero: count 6, every row defined."),
                ints(&[1, 2, 3, 4, 5, 6]),
            ),
            (
                "first_only",
                format!("{t} only the first element nonzero."),
                vec![one, zero, zero, zero, zero, zero],
            ),
            (
                "last_only",
                format!("{t} only the last element nonzero."),
                vec![zero, zero, zero, zero, zero, type_max(t)],
            ),
        ];
        let extremes = if t.is_unsigned_integer() {
            vec![
                Value::Int(0),
                type_max(t),
                Value::Int(0),
                Value::Int(1),
                Value::Int(0),
                type_max(t),
            ]
        } else {
            vec![
                Value::Int(0),
                type_lowest(t),
                Value::Int(0),
                type_max(t),
                Value::Int(-1),
                Value::Int(0),
            ]
        };
        cases.push((
            "extremes",
            format!("{t} type extremes (the minimum and -1 for signed types) are nonzero."),
            extremes,
        ));
        for (suffix, note, values) in cases {
            drafts.push(
                nonzero_draft(
                    format!("{name}_{suffix}"),
                    note,
                    InputDraft::packed(t, &sizes, values),
                    4,
                    4,
                    2,
                )
                .at(dml("3_0"))
                .tags(&["values"]),
            );
        }
    }
    drafts
}

fn float_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    for t in [DataType::Float32, DataType::Float16] {
        let s = float_specials(t);
        let name = t.name().to_lowercase();
        let b = Value::Bits;
        let z = Value::Float(0.0);
        let nz = Value::Float(-0.0);
        drafts.push(
            nonzero_draft(
                format!("{name}_both_zeros"),
                format!("{t} +0.0 and -0.0 only: count 0."),
                InputDraft::packed(t, &[1, 1, 2, 4], vec![z, nz, nz, z, nz, nz, z, z]),
                4,
                4,
                2,
            )
            .at(dml("3_0"))
            .tags(&["negative-zero"]),
        );
        drafts.push(
            nonzero_draft(
                format!("{name}_subnormals"),
                format!("{t} subnormals of both signs are nonzero; the zeros around them are not."),
                InputDraft::packed(
                    t,
                    &[1, 1, 2, 4],
                    vec![
                        nz,
                        b(s.min_subnormal),
                        z,
                        b(s.neg_min_subnormal),
                        b(s.max_subnormal),
                        nz,
                        z,
                        b(s.min_normal),
                    ],
                ),
                4,
                4,
                2,
            )
            .at(dml("3_0"))
            .tags(&["subnormal", "negative-zero"]),
        );
        drafts.push(
            nonzero_draft(
                format!("{name}_infinities_and_extremes"),
                format!("{t} infinities and the extremes are nonzero."),
                InputDraft::packed(
                    t,
                    &[1, 1, 2, 3],
                    vec![b(s.inf), z, b(s.neg_inf), b(s.lowest), nz, b(s.max)],
                ),
                4,
                4,
                3,
            )
            .at(dml("3_0"))
            .tags(&["infinity", "type-extremes"]),
        );
        drafts.push(
            nonzero_draft(format!("{name}_nan"), format!("{t} NaNs (canonical, with a payload, negative) among zeros: NaN is not zero, so it is counted."), InputDraft::packed(t, &[1, 1, 2, 3], vec![z, Value::Bits(canonical_nan(t)), nz, b(s.nan_payload), z, b(s.negative_nan)]), 4, 4, 2)
                .at(dml("3_0"))
                .informational()
                .tags(&["nan"]),
        );
    }
    drafts
}

/// A mostly-zero pattern over `count` elements: every third element (from 1) nonzero.
fn sparse_pattern(t: DataType, count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            if i % 3 == 1 {
                Value::Int((i % 7) as i128 + 1)
            } else if t.is_float() && i % 2 == 0 {
                Value::Float(-0.0)
            } else {
                Value::Int(0)
            }
        })
        .collect()
}

fn shape_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    // The page's {1,1,12,5} input (effective rank 2): N = 2, 3 and 4 are all valid.
    for n in 2..=4 {
        drafts.push(
            nonzero_draft(format!("page_shape_n_{n}"), format!("Input {{1,1,12,5}} (effective rank 2) with N = {n}: rows hold the last {n} coordinates."), InputDraft::packed(DataType::Int16, &[1, 1, 12, 5], sparse_pattern(DataType::Int16, 60)), 4, 4, n)
                .at(dml("3_0"))
                .tags(&["n", "effective-rank"]),
        );
    }
    // Effective rank 0: every N from 1 to the dimension count.
    for n in 1..=4 {
        drafts.push(
            nonzero_draft(
                format!("effective_rank_0_n_{n}"),
                format!(
                    "Input {{1,1,1,1}} (effective rank 0) holding 5, N = {n}: one row of zeros."
                ),
                InputDraft::packed(DataType::Uint8, &[1, 1, 1, 1], ints(&[5])),
                4,
                4,
                n,
            )
            .at(dml("3_0"))
            .tags(&["n", "effective-rank-0"]),
        );
    }
    drafts.push(
        nonzero_draft(
            "effective_rank_0_zero",
            "Input {1,1,1,1} holding 0: count 0, the one row undefined.",
            InputDraft::packed(DataType::Float32, &[1, 1, 1, 1], vec![Value::Float(-0.0)]),
            4,
            4,
            1,
        )
        .at(dml("3_0"))
        .tags(&["effective-rank-0", "negative-zero"]),
    );
    let inner: [(&str, Vec<u32>, u32, &str); 4] = [
        (
            "inner_ones_n_3",
            vec![1, 3, 1, 2],
            3,
            "effective rank 3 (the leading 1 only), N = 3",
        ),
        (
            "inner_ones_n_4",
            vec![1, 3, 1, 2],
            4,
            "effective rank 3, N = 4",
        ),
        (
            "leading_and_inner_ones",
            vec![2, 1, 1, 3],
            4,
            "effective rank 4: inner size-1 dimensions count",
        ),
        (
            "trailing_one",
            vec![1, 1, 4, 1],
            2,
            "effective rank 2 with a trailing size-1 dimension, N = 2",
        ),
    ];
    for (id, sizes, n, what) in inner {
        let count = element_count(&sizes);
        drafts.push(
            nonzero_draft(
                id,
                format!("Input {sizes:?}: {what}."),
                InputDraft::packed(
                    DataType::Int32,
                    &sizes,
                    sparse_pattern(DataType::Int32, count),
                ),
                4,
                4,
                n,
            )
            .at(dml("3_0"))
            .tags(&["n", "effective-rank"]),
        );
    }
    // 5-D at 3_0, and tensors of different dimension counts.
    let mixed: [(&str, Vec<u32>, usize, usize, u32); 4] = [
        ("five_d", vec![1, 2, 1, 2, 3], 5, 5, 4),
        ("five_d_input_four_d_outputs", vec![2, 1, 2, 1, 3], 4, 4, 5),
        ("four_d_input_five_d_outputs", vec![1, 2, 2, 3], 5, 5, 3),
        ("mixed_output_counts", vec![1, 2, 2, 3], 5, 4, 4),
    ];
    for (id, sizes, count_rank, coordinates_rank, n) in mixed {
        let count = element_count(&sizes);
        drafts.push(
            nonzero_draft(id, format!("Input {sizes:?}, a {count_rank}-D count and {coordinates_rank}-D coordinates with N = {n}."), InputDraft::packed(DataType::Float16, &sizes, sparse_pattern(DataType::Float16, count)), count_rank, coordinates_rank, n)
                .at(dml("3_0"))
                .tags(&["dimension-count"]),
        );
    }
    // 1-D to 8-D inputs (4_0 for all but 4-D and 5-D), N from effective rank to rank.
    for rank in 1..=8usize {
        let sizes = small_sizes(rank);
        let low = effective_rank(&sizes).max(1) as u32;
        let count = element_count(&sizes);
        for n in [low, rank as u32] {
            let coordinates_rank = (rank).clamp(2, 8);
            let level = if rank == 4 || rank == 5 {
                dml("3_0")
            } else {
                dml("4_0")
            };
            drafts.push(
                nonzero_draft(
                    format!("rank_{rank}_n_{n}"),
                    format!("{rank}-D input {sizes:?} with N = {n}."),
                    InputDraft::packed(
                        DataType::Uint16,
                        &sizes,
                        sparse_pattern(DataType::Uint16, count),
                    ),
                    rank,
                    coordinates_rank,
                    n,
                )
                .at(level)
                .tags(&["dimension-count", "n"]),
            );
            if low == rank as u32 {
                break;
            }
        }
    }
    drafts.push(
        nonzero_draft(
            "eight_d_input_two_d_outputs",
            "8-D input, a 1-D count {1} and 2-D coordinates {M,N}.",
            InputDraft::packed(
                DataType::Int8,
                &small_sizes(8),
                sparse_pattern(DataType::Int8, 12),
            ),
            1,
            2,
            7,
        )
        .at(dml("4_0"))
        .tags(&["dimension-count"]),
    );
    drafts.push(
        nonzero_draft(
            "one_d_input_eight_d_outputs",
            "1-D input, an 8-D count and 8-D coordinates {1,1,1,1,1,1,M,1}.",
            InputDraft::packed(DataType::Int8, &[7], ints(&[0, 3, 0, 0, -2, 0, 1])),
            8,
            8,
            1,
        )
        .at(dml("4_0"))
        .tags(&["dimension-count"]),
    );
    drafts
}

fn strided_cases() -> Vec<Draft> {
    let logical = ints(&[0, 5, 0, 7, 0, 0, 9, 0, 1, 0, 0, 2]);
    vec![
        nonzero_draft("padded_rows", "INT32 {1,1,3,4} strides {0,0,6,1}: padding elements (nonzero, 42) after each row are not part of the tensor.", InputDraft::strided(DataType::Int32, &[1, 1, 3, 4], &[0, 0, 6, 1], &logical, Value::Int(42)), 4, 4, 2)
            .at(dml("3_0"))
            .tags(&["strided"]),
        nonzero_draft("transposed", "INT32 {1,1,3,4} strides {0,0,1,3}: stored column-major; coordinates still come in row-major order.", InputDraft::strided(DataType::Int32, &[1, 1, 3, 4], &[0, 0, 1, 3], &logical, Value::Int(42)), 4, 4, 2)
            .at(dml("3_0"))
            .tags(&["strided"]),
        nonzero_draft("broadcast_rows", "UINT8 {1,1,3,4} strides {0,0,0,1}: one row read three times.", InputDraft::strided(DataType::Uint8, &[1, 1, 3, 4], &[0, 0, 0, 1], &[ints(&[0, 3, 0, 4]), ints(&[0, 3, 0, 4]), ints(&[0, 3, 0, 4])].concat(), Value::Int(0)), 4, 4, 2)
            .at(dml("3_0"))
            .tags(&["broadcast"]),
        nonzero_draft("broadcast_scalar", "FLOAT32 {2,1,3} with all strides 0: one nonzero element read everywhere, so every element is nonzero.", InputDraft::strided(DataType::Float32, &[2, 1, 3], &[0, 0, 0], &[Value::Float(0.5); 6], Value::Float(0.0)), 1, 2, 3)
            .at(dml("4_0"))
            .tags(&["broadcast"]),
        Draft::positive("strided_coordinates", OP, "OutputCoordinatesTensor {1,1,6,2} strides {0,0,4,1}: rows 4 elements apart in the output buffer.")
            .input("InputTensor", InputDraft::packed(DataType::Int16, &[1, 1, 2, 3], ints(&[0, 1, 0, 2, 0, 3])))
            .output("OutputCountTensor", OutputDraft::packed(DataType::Uint32, &[1, 1, 1, 1]))
            .output("OutputCoordinatesTensor", OutputDraft::packed(DataType::Uint32, &[1, 1, 6, 2]).with_strides(&[0, 0, 4, 1]))
            .at(dml("3_0"))
            .tags(&["strided"])
            .exercises(&["NONZERO_COORDINATES.COORDINATES", "NONZERO_COORDINATES.ORDER", "NONZERO_COORDINATES.COUNT", "NONZERO_COORDINATES.ROWS_PAST_COUNT"]),
    ]
}

fn large_cases() -> Vec<Draft> {
    let sparse = |seed, per_million, max| DataGenerator {
        seed,
        distribution: Distribution::Sparse { per_million, max },
    };
    vec![
        nonzero_draft(
            "uint8_sparse_4d",
            "UINT8 {1,1,1024,1100}, about 200 nonzeros per million.",
            InputDraft::generated(DataType::Uint8, &[1, 1, 1024, 1100], sparse(11, 200, 255)),
            4,
            4,
            2,
        )
        .at(dml("3_0"))
        .tags(&["large", "generated"]),
        nonzero_draft(
            "int32_sparse_5d",
            "INT32 {1,2,4,360,400}, about 50 nonzeros per million, N = 4.",
            InputDraft::generated(DataType::Int32, &[1, 2, 4, 360, 400], sparse(12, 50, 1000)),
            5,
            5,
            4,
        )
        .at(dml("3_0"))
        .tags(&["large", "generated"]),
        nonzero_draft(
            "float32_sparse_1d",
            "FLOAT32 {1200000} (1-D, 4_0), about 100 nonzeros per million, N = 1.",
            InputDraft::generated(DataType::Float32, &[1_200_000], sparse(13, 100, 2000)),
            1,
            2,
            1,
        )
        .at(dml("4_0"))
        .tags(&["large", "generated"]),
    ]
}
