//! Support-table coverage: for every operator, tensor, data type and dimension count of every
//! support table, a positive required case at the level where that cell first appears (so a
//! compliance matrix has a real case in every cell), and the same descriptors one feature
//! level too early (or with types and dimension counts no table lists) as negative cases.
//!
//! The level each case is expected at, and the rule ids each negative case must break, are
//! read from the support tables directly ([`level_of_cells`], [`support_violations`]); the
//! draft checks them against the validator.

use super::argmax::{self, argmax_draft, direction_rules};
use super::draft::{Content, Draft, Expect, InputDraft};
use super::nonzero_coordinates::{self, nonzero_draft};
use super::one_hot::{self, off_on, one_hot_draft};
use super::ov_one_hot::{self, ov_draft};
use super::shapes::{
    dml, element_count, level_below, level_of_cells, small_sizes, support_violations, with_size,
};
use super::values::{type_max, Rng, Value};
use super::Topic;
use crate::case::CaseClass;
use crate::coverage::support_cells;
use opconform_backend::{AxisDirection, DataType, Level, OperatorKind};

const MODULE: &str = "src/generate/tables.rs";

/// The topics of this module: for each operator, its support tables and what lies outside.
pub fn topics() -> Vec<Topic> {
    let table = |operator, build| {
        Topic {
        operator,
        name: "support_tables",
        module: MODULE,
        description: "One positive case for every support-table cell (tensor x data type x dimension count), at the level where the cell first appears.",
        build,
    }
    };
    let outside = |operator, build| {
        Topic {
        operator,
        name: "outside_support_tables",
        module: MODULE,
        description: "The support-table cases one feature level too early (where a cell appears after the operator's introduction), and data types and dimension counts no table lists.",
        build,
    }
    };
    vec![
        table(OperatorKind::DmlOneHot, one_hot_tables),
        outside(OperatorKind::DmlOneHot, one_hot_outside),
        table(OperatorKind::DmlNonZeroCoordinates, nonzero_tables),
        outside(OperatorKind::DmlNonZeroCoordinates, nonzero_outside),
        table(OperatorKind::DmlArgMax, argmax_tables),
        outside(OperatorKind::DmlArgMax, argmax_outside),
        table(OperatorKind::OvOneHot1, ov_tables),
        outside(OperatorKind::OvOneHot1, ov_outside),
    ]
}

/// The data types some table lists for `tensor` of `operator`, in table order.
fn listed_types(operator: OperatorKind, tensor: &str) -> Vec<DataType> {
    let mut types: Vec<DataType> = Vec::new();
    for cell in support_cells(operator)
        .into_iter()
        .filter(|c| c.tensor == tensor)
    {
        if !types.contains(&cell.data_type) {
            types.push(cell.data_type);
        }
    }
    types
}

/// The dimension counts some table lists for `tensor` of `operator` with `data_type`.
fn listed_counts(operator: OperatorKind, tensor: &str, data_type: DataType) -> Vec<usize> {
    support_cells(operator)
        .into_iter()
        .filter(|c| c.tensor == tensor && c.data_type == data_type)
        .map(|c| c.dimension_count)
        .collect()
}

/// Each tensor of a draft as (name, data type, dimension count).
fn tensor_cells(draft: &Draft) -> Vec<(String, DataType, usize)> {
    draft
        .inputs
        .iter()
        .map(|(n, t)| (n.clone(), t.data_type, t.sizes.len()))
        .chain(
            draft
                .outputs
                .iter()
                .map(|(n, t)| (n.clone(), t.data_type, t.sizes.len())),
        )
        .collect()
}

fn cells_ref(cells: &[(String, DataType, usize)]) -> Vec<(&str, DataType, usize)> {
    cells.iter().map(|(n, t, c)| (n.as_str(), *t, *c)).collect()
}

/// States the draft's level as read from the tables, and tags it.
fn table_case(draft: Draft) -> Draft {
    let cells = tensor_cells(&draft);
    let level = level_of_cells(draft.operator, &cells_ref(&cells));
    draft.at(level).tags(&["support-table"])
}

/// The draft as a negative case at `level`, breaking the support-table rules the tables say
/// it breaks there; contents are dropped (OneHot-1's depth is kept: it is part of the
/// descriptor).
fn as_negative(draft: &Draft, id: String, level: Level, note: String) -> Draft {
    let cells = tensor_cells(draft);
    let rules: Vec<String> = support_violations(draft.operator, &cells_ref(&cells), level)
        .into_iter()
        .collect();
    assert!(!rules.is_empty(), "{id}: valid at {level}");
    let mut negative = draft.clone();
    negative.id = id;
    negative.note = note;
    negative.class = CaseClass::Required;
    negative.tags = vec!["outside-support-table".to_string()];
    negative.exercises.clear();
    negative.expect = Expect::Invalid { level, rules };
    for (name, input) in &mut negative.inputs {
        if name != "depth" {
            input.content = Content::Absent;
        }
    }
    negative
}

/// For every table case that appears after the operator's introduction, the same descriptor
/// one level too early; and the first table case at the level below the introduction.
fn one_level_too_early(operator: OperatorKind, cases: &[Draft]) -> Vec<Draft> {
    let introduced = operator.introduced();
    let mut drafts = Vec::new();
    let mut availability_done = false;
    for case in cases {
        let Expect::Outputs { level: Some(level) } = case.expect else {
            panic!("table cases state their level")
        };
        if level > introduced || !availability_done {
            let below = level_below(level);
            let what = if level > introduced {
                format!("first valid at {level}, checked at {below}")
            } else {
                format!("the operator is introduced at {level}; checked at {below}")
            };
            drafts.push(as_negative(
                case,
                format!("{}_at_{below}", case.id),
                below,
                format!(
                    "The support-table case {} one level too early: {what}.",
                    case.id
                ),
            ));
            availability_done |= level == introduced;
        }
    }
    drafts
}

// --- DML_ONE_HOT ---------------------------------------------------------------------------

fn one_hot_tables() -> Vec<Draft> {
    let op = OperatorKind::DmlOneHot;
    let mut rng = Rng::new(0x7ab1_e001);
    let mut drafts = Vec::new();
    let depth = 3u32;
    let case = |id: String,
                index_type: DataType,
                value_type: DataType,
                rank: usize,
                axis: usize,
                rng: &mut Rng| {
        let output_sizes = with_size(&small_sizes(rank), axis, depth);
        let sequences = element_count(&output_sizes) / depth as usize;
        let low = if index_type.is_signed_integer() {
            -i128::from(depth)
        } else {
            0
        };
        // `depth` itself would be the silent ONE_HOT.INDEX_EQUAL_TO_SIZE: draw one past it.
        let indices: Vec<Value> = (0..sequences)
            .map(|_| {
                Value::Int(one_hot::skip_equal_to_size(
                    rng.range(low, i128::from(depth)),
                    depth,
                ))
            })
            .collect();
        let (off, on) = if value_type.is_float() {
            (Value::Float(-0.25), Value::Float(1.5))
        } else {
            (Value::Int(1), type_max(value_type))
        };
        let note = format!("{index_type} indices, {value_type} values and output, {rank}-D {output_sizes:?}, Axis {axis}.");
        let mut rules = vec![
            "ONE_HOT.SEQUENCE",
            "ONE_HOT.INDEX_RELATIVE",
            "ONE_HOT.VALUES_SELECTION",
        ];
        if indices
            .iter()
            .any(|v| matches!(v, Value::Int(i) if *i > i128::from(depth)))
        {
            rules.push("ONE_HOT.OUT_OF_RANGE_INDEX");
        }
        if indices.iter().any(|v| matches!(v, Value::Int(i) if *i < 0)) {
            rules.push("ONE_HOT.NEGATIVE_INDICES");
        }
        table_case(
            one_hot_draft(
                id,
                note,
                index_type,
                indices,
                off_on(value_type, rank, off, on),
                &output_sizes,
                axis as u32,
            )
            .exercises(&rules),
        )
    };
    // Values and output: every value type at every dimension count. 4-D cases keep UINT32
    // indices so that they stay at the 2_0 and 2_1 tables.
    for (t, value_type) in listed_types(op, "ValuesTensor").into_iter().enumerate() {
        for rank in listed_counts(op, "ValuesTensor", value_type) {
            let index_type = if rank == 4 {
                DataType::Uint32
            } else {
                one_hot::INDEX_TYPES[(t + rank) % 4]
            };
            let id = format!("values_{}_{rank}d", value_type.name().to_lowercase());
            drafts.push(case(
                id,
                index_type,
                value_type,
                rank,
                (t + rank) % rank,
                &mut rng,
            ));
        }
    }
    // Indices: every index type at every dimension count, with FLOAT32 values.
    for (t, index_type) in listed_types(op, "IndicesTensor").into_iter().enumerate() {
        for rank in listed_counts(op, "IndicesTensor", index_type) {
            let id = format!("indices_{}_{rank}d", index_type.name().to_lowercase());
            drafts.push(case(
                id,
                index_type,
                DataType::Float32,
                rank,
                (t + 2 * rank) % rank,
                &mut rng,
            ));
        }
    }
    drafts
}

fn one_hot_outside() -> Vec<Draft> {
    let mut drafts = one_level_too_early(OperatorKind::DmlOneHot, &one_hot_tables());
    let newest = dml("4_1");
    let base = |id: &str,
                index_type: DataType,
                value_type: DataType,
                output_type: DataType,
                rank: usize| {
        let output_sizes = with_size(&small_sizes(rank), rank - 1, 3);
        let mut draft = one_hot_draft(
            id,
            "",
            index_type,
            Vec::new(),
            off_on(value_type, rank, Value::Int(0), Value::Int(1)),
            &output_sizes,
            rank as u32 - 1,
        );
        draft.outputs[0].1.data_type = output_type;
        draft
    };
    for index_type in DataType::ALL
        .into_iter()
        .filter(|t| !one_hot::INDEX_TYPES.contains(t))
    {
        let id = format!("indices_{}", index_type.name().to_lowercase());
        let note = format!("{index_type} indices: no table lists them.");
        drafts.push(as_negative(
            &base(&id, index_type, DataType::Float32, DataType::Float32, 4),
            id,
            newest,
            note,
        ));
    }
    drafts.push(as_negative(
        &base(
            "rank_9",
            DataType::Uint32,
            DataType::Float32,
            DataType::Float32,
            9,
        ),
        "rank_9".to_string(),
        newest,
        "9-D tensors: the tables stop at 8.".to_string(),
    ));
    drafts
}

// --- DML_NONZERO_COORDINATES ------------------------------------------------------------------

fn nonzero_tables() -> Vec<Draft> {
    let op = OperatorKind::DmlNonZeroCoordinates;
    let mut rng = Rng::new(0x7ab1_e002);
    let mut drafts = Vec::new();
    for (t, input_type) in listed_types(op, "InputTensor").into_iter().enumerate() {
        for rank in listed_counts(op, "InputTensor", input_type) {
            let sizes = small_sizes(rank);
            let count = element_count(&sizes);
            // About half the elements nonzero; float zeros alternate in sign.
            let values: Vec<Value> = (0..count)
                .map(|i| match rng.range(0, 3) {
                    0 if input_type.is_float() && i % 2 == 0 => Value::Float(-0.0),
                    0 | 1 => Value::Int(0),
                    _ => Value::Int(rng.range(1, 100)),
                })
                .collect();
            // Every output takes the input's rank (coordinates at least 2-D): mixing 4-D and
            // 5-D tensors at 3_0 is the silent NONZERO_COORDINATES.DIMENSION_COUNTS_AT_3_0.
            let (count_rank, coordinates_rank) = (rank, rank.max(2));
            let low = opconform_backend::validate::effective_rank(&sizes).max(1);
            let n = if t % 2 == 0 { rank } else { low } as u32;
            let id = format!("input_{}_{rank}d", input_type.name().to_lowercase());
            let note = format!("{input_type} {rank}-D input {sizes:?}, {count_rank}-D count, {coordinates_rank}-D coordinates, N = {n}.");
            drafts.push(table_case(nonzero_draft(
                id,
                note,
                InputDraft::packed(input_type, &sizes, values),
                count_rank,
                coordinates_rank,
                n,
            )));
        }
    }
    drafts
}

fn nonzero_outside() -> Vec<Draft> {
    let mut drafts = one_level_too_early(OperatorKind::DmlNonZeroCoordinates, &nonzero_tables());
    let newest = dml("4_1");
    let shape = |id: &str, input_type: DataType, rank: usize| {
        nonzero_draft(
            id,
            "",
            InputDraft::shape(input_type, &small_sizes(rank)),
            4,
            4,
            rank as u32,
        )
    };
    for input_type in DataType::ALL
        .into_iter()
        .filter(|t| !nonzero_coordinates::INPUT_TYPES.contains(t))
    {
        let id = format!("input_{}", input_type.name().to_lowercase());
        let note = format!("{input_type} input: no table lists it.");
        drafts.push(as_negative(&shape(&id, input_type, 4), id, newest, note));
    }
    let id = "input_rank_9".to_string();
    // {1,2,1,1,2,1,1,3,1} has effective rank 8; N = 9 is within the coordinates rule.
    drafts.push(as_negative(
        &shape(&id, DataType::Float32, 9),
        id,
        newest,
        "A 9-D input: the tables stop at 8 dimensions.".into(),
    ));
    for count_type in [DataType::Int32, DataType::Uint64] {
        let id = format!("count_{}", count_type.name().to_lowercase());
        let mut draft = shape(&id, DataType::Float32, 4);
        draft.outputs[0].1.data_type = count_type;
        let mut negative = as_negative(
            &draft,
            id,
            newest,
            format!("A {count_type} OutputCountTensor: the tables and the count rule want UINT32."),
        );
        if let Expect::Invalid { rules, .. } = &mut negative.expect {
            rules.push("NONZERO_COORDINATES.COUNT_TYPE".into());
        }
        drafts.push(negative);
    }
    for coordinates_type in [DataType::Int32, DataType::Int64, DataType::Uint64] {
        let id = format!("coordinates_{}", coordinates_type.name().to_lowercase());
        let mut draft = shape(&id, DataType::Float32, 4);
        draft.outputs[1].1.data_type = coordinates_type;
        drafts.push(as_negative(
            &draft,
            id,
            newest,
            format!("A {coordinates_type} OutputCoordinatesTensor: no table lists it."),
        ));
    }
    drafts
}

// --- DML_ARGMAX ------------------------------------------------------------------------------

fn argmax_tables() -> Vec<Draft> {
    let op = OperatorKind::DmlArgMax;
    let mut rng = Rng::new(0x7ab1_e003);
    let mut drafts = Vec::new();
    for (t, input_type) in listed_types(op, "InputTensor").into_iter().enumerate() {
        for rank in listed_counts(op, "InputTensor", input_type) {
            let sizes = small_sizes(rank);
            let count = element_count(&sizes);
            let mut values = argmax::random_values(&mut rng, input_type, count);
            // Put the type's extremes somewhere, so full-width comparisons matter.
            let extremes = argmax::extremes(input_type);
            let at = rng.below(count.saturating_sub(2).max(1));
            for (k, v) in extremes.into_iter().enumerate().take(count) {
                values[(at + k) % count] = v;
            }
            // One or two axes, chosen among the dimensions of size above 1 when there are any.
            let big: Vec<u32> = (0..rank as u32)
                .filter(|&d| sizes[d as usize] > 1)
                .collect();
            let axes: Vec<u32> = match big.len() {
                0 => vec![0],
                1 => vec![big[0]],
                _ if (t + rank) % 3 == 0 => vec![big[0], big[big.len() - 1]],
                _ => vec![big[(t + rank) % big.len()]],
            };
            // Rotate output types within each level's group of input types, so that every
            // output type meets every dimension count at 3_0 (64-bit inputs are 4_1 cases).
            let group: Vec<DataType> = argmax::INPUT_TYPES
                .into_iter()
                .filter(|&x| argmax::level_for(x) == argmax::level_for(input_type))
                .collect();
            let k = group
                .iter()
                .position(|&x| x == input_type)
                .expect("in its group");
            let output_type = argmax::OUTPUT_TYPES[(k + rank) % 4];
            let direction = if (t + rank / 2) % 2 == 0 {
                AxisDirection::Increasing
            } else {
                AxisDirection::Decreasing
            };
            let id = format!("input_{}_{rank}d", input_type.name().to_lowercase());
            let note = format!("{input_type} {rank}-D input {sizes:?} reduced over axes {axes:?} into {output_type}, {}.", argmax::direction_name(direction).to_uppercase());
            drafts.push(table_case(
                argmax_draft(
                    id,
                    note,
                    InputDraft::packed(input_type, &sizes, values),
                    output_type,
                    &axes,
                    direction,
                )
                .exercises(&direction_rules(direction)),
            ));
        }
    }
    drafts
}

fn argmax_outside() -> Vec<Draft> {
    let mut drafts = one_level_too_early(OperatorKind::DmlArgMax, &argmax_tables());
    let newest = dml("4_1");
    let shape = |id: &str, input_type: DataType, output_type: DataType, rank: usize| {
        argmax_draft(
            id,
            "",
            InputDraft::shape(input_type, &small_sizes(rank)),
            output_type,
            &[rank as u32 - 1],
            AxisDirection::Increasing,
        )
    };
    let id = "input_float64".to_string();
    drafts.push(as_negative(
        &shape(&id, DataType::Float64, DataType::Uint32, 2),
        id,
        newest,
        "FLOAT64 input: no table lists it.".into(),
    ));
    for output_type in DataType::ALL
        .into_iter()
        .filter(|t| !argmax::OUTPUT_TYPES.contains(t))
    {
        let id = format!("output_{}", output_type.name().to_lowercase());
        drafts.push(as_negative(
            &shape(&id, DataType::Float32, output_type, 2),
            id.clone(),
            newest,
            format!("{output_type} output: indices are 32- or 64-bit integers only."),
        ));
    }
    let id = "rank_9".to_string();
    drafts.push(as_negative(
        &shape(&id, DataType::Float32, DataType::Uint32, 9),
        id,
        newest,
        "9-D tensors: the tables stop at 8.".into(),
    ));
    drafts
}

// --- OneHot-1 --------------------------------------------------------------------------------

fn ov_tables() -> Vec<Draft> {
    let op = OperatorKind::OvOneHot1;
    let mut rng = Rng::new(0x7ab1_e004);
    let mut drafts = Vec::new();
    let depth = 3u32;
    for (t, value_type) in listed_types(op, "output").into_iter().enumerate() {
        for output_rank in listed_counts(op, "output", value_type) {
            let rank = output_rank - 1;
            let sizes = small_sizes(rank);
            let index_type = if (t + rank) % 2 == 0 {
                DataType::Int64
            } else {
                DataType::Int32
            };
            let n = rank as i64;
            let axis = ((t + rank) % (2 * rank + 2)) as i64 - (n + 1);
            let indices: Vec<Value> = (0..element_count(&sizes))
                .map(|_| Value::Int(rng.range(0, i128::from(depth))))
                .collect();
            let mut rules = vec!["ONEHOT1.SELECTION"];
            if indices.contains(&Value::Int(i128::from(depth))) {
                rules.push("ONEHOT1.INDEX_AT_LEAST_DEPTH");
            }
            let (on, off) = if value_type.is_float() {
                (Value::Float(0.75), Value::Float(-3.0))
            } else {
                (type_max(value_type), Value::Int(2))
            };
            let id = format!("output_{}_{output_rank}d", value_type.name().to_lowercase());
            let note = format!("{index_type} indices {sizes:?}, depth 3, {value_type} values, axis {axis}: a {output_rank}-D output.");
            drafts.push(table_case(
                ov_draft(
                    id, note, index_type, &sizes, indices, depth, value_type, on, off, axis,
                )
                .exercises(&rules),
            ));
        }
    }
    drafts
}

fn ov_outside() -> Vec<Draft> {
    let mut drafts = Vec::new();
    let opset1 = ov_one_hot::opset1();
    let base = |index_type: DataType, depth_type: DataType, rank: usize| {
        let sizes = small_sizes(rank);
        let mut draft = ov_draft(
            "base",
            "",
            index_type,
            &sizes,
            vec![Value::Int(0); element_count(&sizes)],
            3,
            DataType::Float32,
            Value::Int(1),
            Value::Int(0),
            -1,
        );
        draft.inputs[1].1.data_type = depth_type;
        draft
    };
    drafts.push(as_negative(
        &base(DataType::Int64, DataType::Int64, 1),
        "at_a_directml_level".into(),
        dml("4_1"),
        "OneHot-1 checked at a DirectML feature level (4_1): it is versioned by opsets.".into(),
    ));
    // The loader reads depth as INT32 or INT64 only, so these keep an INT64 depth and also
    // break T1_SAME_TYPE; the unsupported indices type alone makes them invalid.
    for index_type in DataType::ALL
        .into_iter()
        .filter(|t| !matches!(t, DataType::Int32 | DataType::Int64))
    {
        let id = format!("indices_{}", index_type.name().to_lowercase());
        let note = format!("{index_type} indices (T1 is int32 or int64), with an INT64 depth.");
        let mut negative = as_negative(&base(index_type, DataType::Int64, 2), id, opset1, note);
        if let Expect::Invalid { rules, .. } = &mut negative.expect {
            rules.push("ONEHOT1.T1_SAME_TYPE".into());
        }
        drafts.push(negative);
    }
    for (position, name) in [(1usize, "depth"), (2, "on_value"), (3, "off_value")] {
        let mut draft = base(DataType::Int64, DataType::Int64, 1);
        draft.inputs[position].1.sizes = vec![1];
        drafts.push(as_negative(
            &draft,
            format!("{name}_1d"),
            opset1,
            format!("{name} as a 1-D tensor {{1}}: it must be a scalar (0-D)."),
        ));
    }
    drafts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_has_a_table_case_at_its_first_level() {
        for topic in topics().into_iter().filter(|t| t.name == "support_tables") {
            let drafts = (topic.build)();
            for cell in support_cells(topic.operator) {
                let covered = drafts.iter().any(|d| {
                    d.expect
                        == (Expect::Outputs {
                            level: Some(cell.first_level),
                        })
                        && tensor_cells(d).iter().any(|(n, t, c)| {
                            *n == cell.tensor && *t == cell.data_type && *c == cell.dimension_count
                        })
                });
                assert!(covered, "no table case for {}", cell.label());
            }
        }
    }
}
