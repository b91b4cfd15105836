//! `DML_ARGMAX` edge behaviour: ties in both directions, signed zeros, infinities, type
//! extremes, 64-bit values that are equal as doubles but not as integers, every axis
//! combination (one, several, non-adjacent, all, reduced axes of size 1), every output type,
//! strided and broadcast inputs, NaN and unsorted Axes (informational), and large generated
//! inputs.

use super::draft::{Draft, InputDraft, OutputDraft};
use super::shapes::{dml, element_count, small_sizes};
use super::values::{
    canonical_nan, float_specials, int_max, int_min, ints, type_lowest, type_max, Rng, Value,
};
use super::Topic;
use crate::case::data_generator::{DataGenerator, Distribution};
use opconform_backend::{AxisDirection, DataType, Level, OperatorKind};

const OP: OperatorKind = OperatorKind::DmlArgMax;
const MODULE: &str = "src/generate/argmax.rs";

/// The InputTensor types of the 4_1 table (the 3_0 table lacks the 64-bit ones).
pub const INPUT_TYPES: [DataType; 10] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int64,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint64,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
];

/// The OutputTensor types.
pub const OUTPUT_TYPES: [DataType; 4] = [
    DataType::Uint32,
    DataType::Int32,
    DataType::Uint64,
    DataType::Int64,
];

const BOTH: [AxisDirection; 2] = [AxisDirection::Increasing, AxisDirection::Decreasing];

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
        topic("ties", "Equal maxima of every input type in both directions: all equal, first and last equal, the documented {3,2,1,2,3}.", tie_cases),
        topic("special_values", "Signed zeros (a tie), infinities, subnormals and type extremes; 64-bit integers equal as doubles but not as integers; 32-bit integers equal as FLOAT32.", special_value_cases),
        topic("axes", "One axis at every position, several axes, non-adjacent axes, all axes, reduced axes of size 1; unsorted Axes (informational).", axes_cases),
        topic("output_types", "Every output index type with indices above 255 and 65535.", output_type_cases),
        topic("strided", "Strided, transposed and broadcast inputs and strided outputs.", strided_cases),
        topic("nan", "NaN inputs (informational: read as greater than every number, see ARGMAX.NAN).", nan_cases),
        topic("large", "Inputs of more than 2^20 elements from seeded generators, with small outputs.", large_cases),
    ]
}

/// The level a packed ArgMax case with this input type is first valid at.
pub fn level_for(input_type: DataType) -> Level {
    if matches!(input_type, DataType::Int64 | DataType::Uint64) {
        dml("4_1")
    } else {
        dml("3_0")
    }
}

/// Output sizes: the input's with every reduced axis set to 1.
pub fn reduced_sizes(sizes: &[u32], axes: &[u32]) -> Vec<u32> {
    sizes
        .iter()
        .enumerate()
        .map(|(d, &s)| if axes.contains(&(d as u32)) { 1 } else { s })
        .collect()
}

/// A `DML_ARGMAX` draft with a packed output of `output_type`.
pub fn argmax_draft(
    id: impl Into<String>,
    note: impl Into<String>,
    input: InputDraft,
    output_type: DataType,
    axes: &[u32],
    direction: AxisDirection,
) -> Draft {
    let output_sizes = reduced_sizes(&input.sizes, axes);
    Draft::positive(id, OP, note)
        .axes(axes, direction)
        .input("InputTensor", input)
        .output(
            "OutputTensor",
            OutputDraft::packed(output_type, &output_sizes),
        )
}

/// The exercised direction rule and `ARGMAX.REDUCTION`.
pub fn direction_rules(direction: AxisDirection) -> [&'static str; 2] {
    match direction {
        AxisDirection::Increasing => ["ARGMAX.REDUCTION", "ARGMAX.DIRECTION_INCREASING"],
        AxisDirection::Decreasing => ["ARGMAX.REDUCTION", "ARGMAX.DIRECTION_DECREASING"],
    }
}

/// `increasing` or `decreasing`.
pub fn direction_name(direction: AxisDirection) -> &'static str {
    match direction {
        AxisDirection::Increasing => "increasing",
        AxisDirection::Decreasing => "decreasing",
    }
}

/// Two values of a type with `low < high`, both away from the extremes.
fn low_high(t: DataType) -> (Value, Value) {
    if t.is_float() {
        (Value::Float(-2.5), Value::Float(6.5))
    } else if t.is_signed_integer() {
        (Value::Int(-7), Value::Int(9))
    } else {
        (Value::Int(3), Value::Int(200))
    }
}

fn tie_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    for (i, input_type) in INPUT_TYPES.into_iter().enumerate() {
        let (lo, hi) = low_high(input_type);
        let doc: Vec<Value> = ints(&[3, 2, 1, 2, 3]);
        // Rows: all equal; max first and last; the documented example; max twice inside.
        let rows: Vec<Value> = [
            vec![hi; 5],
            vec![hi, lo, lo, lo, hi],
            doc,
            vec![lo, hi, lo, hi, lo],
        ]
        .concat();
        for direction in BOTH {
            let name = input_type.name().to_lowercase();
            drafts.push(
                argmax_draft(
                    format!("{name}_{}", direction_name(direction)),
                    format!("{input_type} rows of 5 with equal maxima: all equal, first and last, {{3,2,1,2,3}}, two inside; {} picks the {} of them.", direction_name(direction).to_uppercase(), if direction == AxisDirection::Increasing { "first" } else { "last" }),
                    InputDraft::packed(input_type, &[4, 5], rows.clone()),
                    OUTPUT_TYPES[i % 4],
                    &[1],
                    direction,
                )
                .at(level_for(input_type))
                .tags(&["ties"])
                .exercises(&direction_rules(direction)),
            );
        }
    }
    drafts
}

/// A 1-D case over `values` in both directions, for a special-value topic.
fn special_pair(
    id: &str,
    note: &str,
    input_type: DataType,
    values: Vec<Value>,
    tags: &[&str],
) -> Vec<Draft> {
    let n = values.len() as u32;
    BOTH.into_iter()
        .map(|direction| {
            argmax_draft(
                format!("{id}_{}", direction_name(direction)),
                format!("{note} ({})", direction_name(direction).to_uppercase()),
                InputDraft::packed(input_type, &[n], values.clone()),
                DataType::Uint32,
                &[0],
                direction,
            )
            .at(level_for(input_type))
            .tags(tags)
            .exercises(&direction_rules(direction))
        })
        .collect()
}

fn special_value_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    let two_53 = 1i128 << 53;
    for t in [DataType::Float32, DataType::Float16] {
        let s = float_specials(t);
        let name = t.name().to_lowercase();
        let b = Value::Bits;
        drafts.extend(special_pair(
            &format!("{name}_signed_zeros"),
            &format!("{t} -0.0, +0.0, -1, -0.0: the zeros tie"),
            t,
            vec![
                Value::Float(-0.0),
                Value::Float(0.0),
                Value::Float(-1.0),
                Value::Float(-0.0),
            ],
            &["negative-zero", "ties"],
        ));
        drafts.extend(special_pair(
            &format!("{name}_infinities"),
            &format!("{t} +inf twice among the largest finite values"),
            t,
            vec![b(s.max), b(s.inf), b(s.lowest), b(s.inf), b(s.max)],
            &["infinity", "ties"],
        ));
        drafts.extend(special_pair(
            &format!("{name}_all_negative_infinity"),
            &format!("{t} all -inf: every element ties"),
            t,
            vec![b(s.neg_inf); 4],
            &["infinity", "ties"],
        ));
        drafts.extend(special_pair(
            &format!("{name}_subnormals"),
            &format!(
                "{t} the smallest subnormal is above both zeros and below the smallest normal"
            ),
            t,
            vec![
                Value::Float(0.0),
                b(s.min_subnormal),
                Value::Float(-0.0),
                b(s.neg_min_subnormal),
            ],
            &["subnormal"],
        ));
        drafts.extend(special_pair(
            &format!("{name}_negative_subnormal"),
            &format!("{t} -0.0 is above the negative subnormals and the lowest value"),
            t,
            vec![
                b(s.neg_min_subnormal),
                b(s.lowest),
                Value::Float(-0.0),
                b(s.neg_min_subnormal | 0x2),
            ],
            &["subnormal", "negative-zero"],
        ));
        drafts.extend(special_pair(
            &format!("{name}_extremes"),
            &format!("{t} lowest, max and max's predecessor"),
            t,
            vec![b(s.lowest), b(s.max - 1), b(s.max), b(s.lowest)],
            &["type-extremes"],
        ));
    }
    for t in INPUT_TYPES.into_iter().filter(|t| !t.is_float()) {
        let name = t.name().to_lowercase();
        let (min, max) = (int_min(t), int_max(t));
        drafts.extend(special_pair(
            &format!("{name}_extremes"),
            &format!("{t} minimum, maximum - 1, maximum, minimum + 1"),
            t,
            ints(&[min, max - 1, max, min + 1]),
            &["type-extremes"],
        ));
        drafts.extend(special_pair(
            &format!("{name}_all_minimum"),
            &format!("{t} all at the minimum: every element ties"),
            t,
            vec![Value::Int(min); 3],
            &["type-extremes", "ties"],
        ));
        if t.is_unsigned_integer() {
            drafts.extend(special_pair(
                &format!("{name}_high_bit"),
                &format!("{t} values with the high bit set are the largest (not negative)"),
                t,
                ints(&[max / 2, max / 2 + 1, 1, max / 2 + 1]),
                &["type-extremes", "sign"],
            ));
        } else {
            drafts.extend(special_pair(
                &format!("{name}_minus_one"),
                &format!("{t} -1 (all bits set) is below 0 and 1"),
                t,
                ints(&[-1, 0, 1, -1]),
                &["sign"],
            ));
        }
    }
    drafts.extend(special_pair("int64_equal_as_double", "INT64 2^53 and 2^53+1 are one double but different integers: 2^53+1 wins in both directions", DataType::Int64, ints(&[two_53, two_53 + 1, two_53, two_53 - 1]), &["64-bit", "precision"]));
    drafts.extend(special_pair(
        "int64_equal_as_double_negative",
        "INT64 -2^63 and -2^63+1 are one double; -2^63+1 wins",
        DataType::Int64,
        ints(&[
            int_min(DataType::Int64),
            int_min(DataType::Int64) + 1,
            int_min(DataType::Int64),
        ]),
        &["64-bit", "precision"],
    ));
    drafts.extend(special_pair(
        "int64_beyond_32_bits",
        "INT64 2^32 is above 2^32-1 and -1 (low halves 0, all ones)",
        DataType::Int64,
        ints(&[(1 << 32) - 1, 1 << 32, -1]),
        &["64-bit"],
    ));
    drafts.extend(special_pair(
        "uint64_equal_as_double",
        "UINT64 2^64-2 and 2^64-1 are one double; 2^64-1 wins",
        DataType::Uint64,
        ints(&[
            int_max(DataType::Uint64) - 1,
            int_max(DataType::Uint64),
            int_max(DataType::Uint64) - 1,
        ]),
        &["64-bit", "precision"],
    ));
    drafts.extend(special_pair(
        "uint64_beyond_53_bits",
        "UINT64 2^53+1 is above 2^53",
        DataType::Uint64,
        ints(&[two_53 + 1, two_53, two_53]),
        &["64-bit", "precision"],
    ));
    drafts.extend(special_pair(
        "int32_equal_as_float",
        "INT32 2^24 and 2^24+1 are one FLOAT32 but different integers",
        DataType::Int32,
        ints(&[1 << 24, (1 << 24) + 1, 1 << 24]),
        &["precision"],
    ));
    drafts.extend(special_pair(
        "uint32_equal_as_float",
        "UINT32 2^32-2 and 2^32-1 are one FLOAT32; 2^32-1 wins",
        DataType::Uint32,
        ints(&[int_max(DataType::Uint32) - 1, int_max(DataType::Uint32)]),
        &["precision"],
    ));
    drafts
}

/// One `axes` case before its input values are drawn.
struct AxesSpec {
    id: String,
    note: String,
    input_type: DataType,
    sizes: Vec<u32>,
    axes: Vec<u32>,
    direction: AxisDirection,
    /// Axes listed out of order: informational (ARGMAX.REDUCTION's reading).
    unsorted: bool,
}

impl AxesSpec {
    fn new(
        id: String,
        note: String,
        input_type: DataType,
        sizes: &[u32],
        axes: &[u32],
        direction: AxisDirection,
    ) -> AxesSpec {
        AxesSpec {
            id: format!("{id}_{}", direction_name(direction)),
            note,
            input_type,
            sizes: sizes.to_vec(),
            axes: axes.to_vec(),
            direction,
            unsorted: false,
        }
    }
}

fn axes_cases() -> Vec<Draft> {
    let mut specs = Vec::new();
    // One axis at every position of 3-D and 4-D inputs.
    for (sizes, t) in [
        (vec![3u32, 4, 2], DataType::Float32),
        (vec![2, 3, 2, 4], DataType::Int8),
    ] {
        for axis in 0..sizes.len() as u32 {
            for direction in BOTH {
                let id = format!("rank_{}_axis_{axis}", sizes.len());
                specs.push(AxesSpec::new(
                    id,
                    format!("{t} {sizes:?} reduced over axis {axis}."),
                    t,
                    &sizes,
                    &[axis],
                    direction,
                ));
            }
        }
    }
    let several: [(&str, &[u32], &[u32], DataType); 8] = [
        ("adjacent_0_1", &[3, 4, 2], &[0, 1], DataType::Int32),
        ("adjacent_1_2", &[3, 4, 2], &[1, 2], DataType::Float16),
        ("non_adjacent_0_2", &[3, 4, 2], &[0, 2], DataType::Uint16),
        ("non_adjacent_1_3", &[2, 3, 2, 4], &[1, 3], DataType::Int16),
        (
            "non_adjacent_0_3",
            &[2, 3, 2, 4],
            &[0, 3],
            DataType::Float32,
        ),
        (
            "three_of_five",
            &[2, 2, 3, 2, 2],
            &[0, 2, 4],
            DataType::Int32,
        ),
        ("all_of_three", &[3, 4, 2], &[0, 1, 2], DataType::Uint8),
        (
            "all_of_eight",
            &[2, 1, 2, 1, 2, 1, 3, 2],
            &[0, 1, 2, 3, 4, 5, 6, 7],
            DataType::Float32,
        ),
    ];
    for (id, sizes, axes, t) in several {
        for direction in BOTH {
            let note = format!("{t} {sizes:?} reduced over axes {axes:?}: the index is row-major within the reduced axes.");
            specs.push(AxesSpec::new(
                id.to_string(),
                note,
                t,
                sizes,
                axes,
                direction,
            ));
        }
    }
    let size_one: [(&str, &[u32], &[u32]); 3] = [
        ("size_1_axis", &[2, 1, 3], &[1]),
        ("size_1_axis_among_others", &[2, 1, 3], &[1, 2]),
        ("all_size_1", &[1, 1, 1, 1], &[0, 1, 2, 3]),
    ];
    for (id, sizes, axes) in size_one {
        for direction in BOTH {
            let note = format!("FLOAT32 {sizes:?} reduced over axes {axes:?}, where size-1 axes contribute nothing to the index.");
            specs.push(AxesSpec::new(
                id.to_string(),
                note,
                DataType::Float32,
                sizes,
                axes,
                direction,
            ));
        }
    }
    let unsorted: [(&str, &[u32], &[u32]); 3] = [
        ("unsorted_1_0", &[3, 4], &[1, 0]),
        ("unsorted_2_0", &[3, 2, 4], &[2, 0]),
        ("unsorted_3_1_2", &[2, 3, 2, 2], &[3, 1, 2]),
    ];
    for (id, sizes, axes) in unsorted {
        for direction in BOTH {
            let note = format!("INT32 {sizes:?} with Axes {axes:?} out of order: read as the same reduction as sorted Axes (ARGMAX.REDUCTION's reading; informational).");
            let mut spec = AxesSpec::new(
                id.to_string(),
                note,
                DataType::Int32,
                sizes,
                axes,
                direction,
            );
            spec.unsorted = true;
            specs.push(spec);
        }
    }
    // Every dimension count, reducing the first and last axes.
    for rank in 1..=8usize {
        let sizes = small_sizes(rank);
        let axes: Vec<u32> = if rank == 1 {
            vec![0]
        } else {
            vec![0, rank as u32 - 1]
        };
        let note = format!("UINT32 {sizes:?} reduced over the first and last axes.");
        specs.push(AxesSpec::new(
            format!("rank_{rank}_first_and_last"),
            note,
            DataType::Uint32,
            &sizes,
            &axes,
            BOTH[rank % 2],
        ));
    }
    let mut rng = Rng::new(0xa8e5);
    specs
        .into_iter()
        .enumerate()
        .map(|(i, spec)| {
            // Few distinct values, so that ties are common.
            let values = random_values(&mut rng, spec.input_type, element_count(&spec.sizes));
            let draft = argmax_draft(
                spec.id,
                spec.note,
                InputDraft::packed(spec.input_type, &spec.sizes, values),
                OUTPUT_TYPES[i % 4],
                &spec.axes,
                spec.direction,
            )
            .at(level_for(spec.input_type))
            .tags(&["axes"])
            .exercises(&direction_rules(spec.direction));
            if spec.unsorted {
                draft.tags(&["unsorted-axes"])
            } else {
                draft
            }
        })
        .collect()
}

fn output_type_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    for (i, output_type) in OUTPUT_TYPES.into_iter().enumerate() {
        let name = output_type.name().to_lowercase();
        let mut values = vec![Value::Int(0); 300];
        values[257] = Value::Int(5);
        values[299] = Value::Int(5);
        for direction in BOTH {
            drafts.push(
                argmax_draft(
                    format!("{name}_index_above_255_{}", direction_name(direction)),
                    format!("{output_type} output: maxima at 257 and 299 of 300 (indices above 8 bits)."),
                    InputDraft::packed(DataType::Int16, &[300], values.clone()),
                    output_type,
                    &[0],
                    direction,
                )
                .at(dml("3_0"))
                .tags(&["output-type"])
                .exercises(&direction_rules(direction)),
            );
        }
        let generator = DataGenerator {
            seed: 0x5eed_0000 + i as u64,
            distribution: Distribution::UniformInt {
                min: -30000,
                max: 30000,
            },
        };
        drafts.push(
            argmax_draft(
                format!("{name}_index_above_65535"),
                format!("{output_type} output over 70000 generated INT32 elements (the last maximum is past index 65535)."),
                InputDraft::generated(DataType::Int32, &[70000], generator),
                output_type,
                &[0],
                AxisDirection::Decreasing,
            )
            .at(dml("3_0"))
            .tags(&["output-type", "generated"])
            .exercises(&direction_rules(AxisDirection::Decreasing)),
        );
    }
    drafts
}

fn strided_cases() -> Vec<Draft> {
    let f = |v: f64| Value::Float(v);
    let logical: Vec<Value> = [1.0, 7.0, 3.0, 7.0, 2.0, 9.0, 9.0, 0.0, -1.0, 4.0, 4.0, 4.0]
        .map(f)
        .to_vec();
    let mut drafts = Vec::new();
    for direction in BOTH {
        let d = direction_name(direction);
        drafts.push(
            argmax_draft(format!("padded_rows_{d}"), "FLOAT32 {3,4} strides {6,1}: two padding elements (holding 100, above every value) after each row.", InputDraft::strided(DataType::Float32, &[3, 4], &[6, 1], &logical, f(100.0)), DataType::Uint32, &[1], direction)
                .at(dml("3_0")).tags(&["strided"]).exercises(&direction_rules(direction)),
        );
        drafts.push(
            argmax_draft(format!("transposed_{d}"), "FLOAT32 {3,4} strides {1,3}: the input is stored column-major; reduced over axis 0.", InputDraft::strided(DataType::Float32, &[3, 4], &[1, 3], &logical, f(100.0)), DataType::Int64, &[0], direction)
                .at(dml("3_0")).tags(&["strided"]).exercises(&direction_rules(direction)),
        );
        let row: Vec<Value> = ints(&[4, 8, 8, 1]);
        let broadcast: Vec<Value> = [row.clone(), row.clone(), row].concat();
        drafts.push(
            argmax_draft(format!("broadcast_rows_axis_0_{d}"), "INT16 {3,4} strides {0,1}: three identical rows; reduced over the broadcast axis every element ties.", InputDraft::strided(DataType::Int16, &[3, 4], &[0, 1], &broadcast, Value::Int(0)), DataType::Uint32, &[0], direction)
                .at(dml("3_0")).tags(&["broadcast", "ties"]).exercises(&direction_rules(direction)),
        );
        drafts.push(
            argmax_draft(
                format!("broadcast_rows_axis_1_{d}"),
                "INT16 {3,4} strides {0,1} reduced over axis 1: every row gives the same answer.",
                InputDraft::strided(
                    DataType::Int16,
                    &[3, 4],
                    &[0, 1],
                    &[
                        ints(&[4, 8, 8, 1]),
                        ints(&[4, 8, 8, 1]),
                        ints(&[4, 8, 8, 1]),
                    ]
                    .concat(),
                    Value::Int(0),
                ),
                DataType::Uint32,
                &[1],
                direction,
            )
            .at(dml("3_0"))
            .tags(&["broadcast", "ties"])
            .exercises(&direction_rules(direction)),
        );
        drafts.push(
            argmax_draft(format!("broadcast_scalar_all_axes_{d}"), "UINT8 {2,3,2} with all strides 0: one element read everywhere; over all axes every position ties.", InputDraft::strided(DataType::Uint8, &[2, 3, 2], &[0, 0, 0], &[Value::Int(42); 12], Value::Int(0)), DataType::Uint64, &[0, 1, 2], direction)
                .at(dml("3_0")).tags(&["broadcast", "ties"]).exercises(&direction_rules(direction)),
        );
    }
    drafts.push(
        Draft::positive("strided_output", OP, "INT8 {4,3} reduced over axis 1 into an output {4,1} with strides {3,1} (padding between results).")
            .axes(&[1], AxisDirection::Increasing)
            .input("InputTensor", InputDraft::packed(DataType::Int8, &[4, 3], ints(&[1, 2, 3, 3, 2, 1, -5, -5, -6, 0, 0, 0])))
            .output("OutputTensor", OutputDraft::packed(DataType::Uint32, &[4, 1]).with_strides(&[3, 1]))
            .at(dml("3_0"))
            .tags(&["strided"])
            .exercises(&direction_rules(AxisDirection::Increasing)),
    );
    drafts
}

fn nan_cases() -> Vec<Draft> {
    let mut drafts = Vec::new();
    for t in [DataType::Float32, DataType::Float16] {
        let s = float_specials(t);
        let name = t.name().to_lowercase();
        let nan = Value::Bits(canonical_nan(t));
        let rows: [(&str, &str, Vec<Value>); 4] = [
            (
                "nan_twice",
                "NaN at positions 1 and 3 among numbers",
                vec![Value::Float(1.0), nan, Value::Float(3.0), nan],
            ),
            (
                "nan_above_infinity",
                "NaN after +inf",
                vec![
                    Value::Bits(s.inf),
                    Value::Float(0.0),
                    Value::Bits(s.nan_payload),
                ],
            ),
            (
                "negative_nan",
                "a NaN with the sign bit set is still NaN",
                vec![
                    Value::Bits(s.max),
                    Value::Bits(s.negative_nan),
                    Value::Float(2.0),
                ],
            ),
            (
                "all_nan",
                "every element NaN (payloads differ)",
                vec![nan, Value::Bits(s.nan_payload), Value::Bits(s.negative_nan)],
            ),
        ];
        for (id, what, values) in rows {
            for direction in BOTH {
                let n = values.len() as u32;
                drafts.push(
                    argmax_draft(
                        format!("{name}_{id}_{}", direction_name(direction)),
                        format!("{t}: {what}; NaN is read as the greatest value, the first (INCREASING) or last (DECREASING) NaN wins."),
                        InputDraft::packed(t, &[n], values.clone()),
                        DataType::Uint32,
                        &[0],
                        direction,
                    )
                    .at(dml("3_0"))
                    .informational()
                    .tags(&["nan"])
                    .exercises(&["ARGMAX.NAN"]),
                );
            }
        }
    }
    drafts
}

fn large_cases() -> Vec<Draft> {
    let generated = |t, sizes: &[u32], seed, distribution| {
        InputDraft::generated(t, sizes, DataGenerator { seed, distribution })
    };
    let ints_from = |min, max| Distribution::UniformInt { min, max };
    vec![
        argmax_draft("float32_rows_increasing", "FLOAT32 {1024,1025} of integers in [-1000, 1000] (many ties), reduced over rows, INCREASING.", generated(DataType::Float32, &[1024, 1025], 1, ints_from(-1000, 1000)), DataType::Uint32, &[1], AxisDirection::Increasing)
            .at(dml("3_0")).tags(&["large", "generated", "ties"]).exercises(&direction_rules(AxisDirection::Increasing)),
        argmax_draft("int32_columns_decreasing", "INT32 {1024,1025} of integers in [-1000, 1000], reduced over columns, DECREASING.", generated(DataType::Int32, &[1024, 1025], 2, ints_from(-1000, 1000)), DataType::Int64, &[0], AxisDirection::Decreasing)
            .at(dml("3_0")).tags(&["large", "generated", "ties"]).exercises(&direction_rules(AxisDirection::Decreasing)),
        argmax_draft("float32_uniform_all_axes", "FLOAT32 {1024,1100} uniform in [-1, 1], reduced over both axes to one index.", generated(DataType::Float32, &[1024, 1100], 3, Distribution::UniformFloat { min: -1.0, max: 1.0 }), DataType::Uint64, &[0, 1], AxisDirection::Increasing)
            .at(dml("3_0")).tags(&["large", "generated"]).exercises(&direction_rules(AxisDirection::Increasing)),
        argmax_draft("uint8_rows_decreasing", "UINT8 {1024,1100} (every row has several 255s), reduced over rows, DECREASING.", generated(DataType::Uint8, &[1024, 1100], 4, ints_from(0, 255)), DataType::Int32, &[1], AxisDirection::Decreasing)
            .at(dml("3_0")).tags(&["large", "generated", "ties"]).exercises(&direction_rules(AxisDirection::Decreasing)),
        argmax_draft("float16_three_dimensions", "FLOAT16 {16,256,260} of integers in [-2048, 2048], reduced over axes 0 and 2.", generated(DataType::Float16, &[16, 256, 260], 5, ints_from(-2048, 2048)), DataType::Uint32, &[0, 2], AxisDirection::Increasing)
            .at(dml("3_0")).tags(&["large", "generated", "ties"]).exercises(&direction_rules(AxisDirection::Increasing)),
        argmax_draft("int64_rows_increasing", "INT64 {1024,1025} spanning the whole type, reduced over rows.", generated(DataType::Int64, &[1024, 1025], 6, ints_from(i64::MIN, i64::MAX)), DataType::Uint32, &[1], AxisDirection::Increasing)
            .at(dml("4_1")).tags(&["large", "generated", "64-bit"]).exercises(&direction_rules(AxisDirection::Increasing)),
    ]
}

/// Random input values for table cases: few distinct values (ties are common), in range of
/// the type.
pub fn random_values(rng: &mut Rng, input_type: DataType, count: usize) -> Vec<Value> {
    (0..count)
        .map(|_| {
            if input_type.is_float() {
                Value::Float(rng.range(-8, 8) as f64 / 2.0)
            } else if input_type.is_signed_integer() {
                Value::Int(rng.range(-4, 4))
            } else {
                Value::Int(rng.range(0, 8))
            }
        })
        .collect()
}

/// Extremes of a type as input values, for table cases: lowest, max, lowest.
pub fn extremes(input_type: DataType) -> Vec<Value> {
    vec![
        type_lowest(input_type),
        type_max(input_type),
        type_lowest(input_type),
    ]
}
