//! Behaviour re-checked at every level where the descriptor space grows.
//!
//! A case runs at its own (lowest valid) level, so a backend that switches code paths with the
//! level (negative indices from 3_0, new types at 2_1 and 4_1, new ranks at 3_0 and 4_0) could
//! break a behaviour only above the level where it was first tested. Each case here carries a
//! descriptor that is first valid at the level it names, and repeats the values a level switch
//! is likely to get wrong: unsigned indices and inputs with the top bit set (never negative),
//! 64-bit values beyond 32 bits, negative indices of signed types, ties in both directions.

use super::argmax::{argmax_draft, direction_rules};
use super::draft::{Draft, InputDraft};
use super::nonzero_coordinates::nonzero_draft;
use super::one_hot::{off_on, one_hot_draft};
use super::shapes::dml;
use super::values::{ints, Value};
use super::Topic;
use opconform_backend::{AxisDirection, DataType, OperatorKind};

const MODULE: &str = "src/generate/level_boundaries.rs";

/// The topics of this module, one file per operator.
pub fn topics() -> Vec<Topic> {
    vec![
        Topic {
            operator: OperatorKind::DmlOneHot,
            name: "level_boundaries",
            module: MODULE,
            description: "Unsigned indices with the top bit set (out of range, never negative), 64-bit indices beyond 32 bits and negative signed indices, in descriptors first valid at 2_1, 3_0 and 4_1: a backend that changes code paths with the level must keep them right at every level.",
            build: one_hot_cases,
        },
        Topic {
            operator: OperatorKind::DmlArgMax,
            name: "level_boundaries",
            module: MODULE,
            description: "Unsigned inputs with the top bit set (large, never negative) and ties in both directions, at 3_0 and in descriptors first valid at 4_1.",
            build: argmax_cases,
        },
        Topic {
            operator: OperatorKind::DmlNonZeroCoordinates,
            name: "level_boundaries",
            module: MODULE,
            description: "The same values at 3_0 (4-D) and in descriptors first valid at 4_0 (1-D to 3-D inputs, 2-D coordinates): -0.0 is zero, the top bit alone is nonzero.",
            build: nonzero_cases,
        },
    ]
}

const TWO_31: i128 = 1 << 31;
const TWO_32: i128 = 1 << 32;
const TWO_63: i128 = 1 << 63;

/// UINT32 indices for sequences of 4: in range, past the end and with the top bit set (which a
/// signed reading would turn into negative, in-range positions such as 2^32-1 = "-1").
fn uint32_indices() -> Vec<Value> {
    ints(&[0, 3, TWO_31, TWO_31 + 1, TWO_32 - 1, TWO_32 - 4, 5])
}

/// UINT64 indices for sequences of 4, beyond 32 bits and with the top bit set.
fn uint64_indices() -> Vec<Value> {
    ints(&[
        2,
        TWO_32,
        TWO_32 + 1,
        TWO_63,
        (1 << 64) - 1,
        (1 << 64) - 3,
        TWO_31 + 2,
    ])
}

/// Signed indices for sequences of 4: -1 to -4 count from the end.
fn negative_indices() -> Vec<Value> {
    ints(&[-1, -4, 0, 3, -2, -3, 1])
}

/// A one-hot case with the indices as a column of sequences of 4 along the last axis of an
/// output of `rank` dimensions (4-D keeps the 2_0/2_1 tables; other ranks need 3_0).
fn one_hot_row(
    id: &str,
    note: &str,
    index_type: DataType,
    indices: Vec<Value>,
    value_type: DataType,
    rank: usize,
) -> Draft {
    let mut sizes = vec![1u32; rank];
    sizes[rank - 1] = 4;
    if rank >= 2 {
        sizes[rank - 2] = indices.len() as u32;
    }
    let (off, on) = if value_type.is_float() {
        (Value::Float(-0.5), Value::Float(2.0))
    } else {
        (Value::Int(3), Value::Int(1))
    };
    let mut rules = vec!["ONE_HOT.SEQUENCE", "ONE_HOT.INDEX_RELATIVE"];
    rules.push(if index_type.is_signed_integer() {
        "ONE_HOT.NEGATIVE_INDICES"
    } else {
        "ONE_HOT.OUT_OF_RANGE_INDEX"
    });
    one_hot_draft(
        id,
        note,
        index_type,
        indices,
        off_on(value_type, rank, off, on),
        &sizes,
        (rank - 1) as u32,
    )
    .tags(&["level-boundary"])
    .exercises(&rules)
}

fn one_hot_cases() -> Vec<Draft> {
    vec![
        one_hot_row("uint32_top_bit_at_2_1", "INT8 values (first valid at 2_1): UINT32 indices 2^31, 2^31+1, 2^32-1 and 2^32-4 are past the end, never negative.", DataType::Uint32, uint32_indices(), DataType::Int8, 4).at(dml("2_1")),
        one_hot_row("uint32_top_bit_at_3_0", "A 3-D output (first valid at 3_0, where signed indices may be negative): UINT32 indices with the top bit set stay past the end.", DataType::Uint32, uint32_indices(), DataType::Float32, 3).at(dml("3_0")),
        one_hot_row("uint32_top_bit_1d_at_3_0", "A 1-D output (3_0): UINT32 index 2^32-1 is past the end, not the last element.", DataType::Uint32, ints(&[TWO_32 - 1]), DataType::Uint16, 1).at(dml("3_0")),
        one_hot_row("uint64_top_bit_at_3_0", "A 2-D output (3_0): UINT64 indices beyond 32 bits and with the top bit set are past the end.", DataType::Uint64, uint64_indices(), DataType::Float16, 2).at(dml("3_0")),
        one_hot_row("uint32_top_bit_at_4_1", "FLOAT64 values (first valid at 4_1): UINT32 indices with the top bit set are past the end.", DataType::Uint32, uint32_indices(), DataType::Float64, 4).at(dml("4_1")),
        one_hot_row("uint64_top_bit_at_4_1", "UINT64 values (first valid at 4_1): UINT64 indices with the top bit set are past the end.", DataType::Uint64, uint64_indices(), DataType::Uint64, 5).at(dml("4_1")),
        one_hot_row("int32_negative_at_4_1", "INT64 values (first valid at 4_1): INT32 indices -1 to -4 count from the end.", DataType::Int32, negative_indices(), DataType::Int64, 4).at(dml("4_1")),
        one_hot_row("int64_negative_at_4_1", "FLOAT64 values (first valid at 4_1): INT64 indices -1 to -4 count from the end.", DataType::Int64, negative_indices(), DataType::Float64, 6).at(dml("4_1")),
    ]
}

fn argmax_row(
    id: &str,
    note: &str,
    t: DataType,
    values: Vec<Value>,
    direction: AxisDirection,
) -> Draft {
    let n = values.len() as u32;
    argmax_draft(
        id,
        note,
        InputDraft::packed(t, &[1, n], values),
        DataType::Uint32,
        &[1],
        direction,
    )
    .tags(&["level-boundary", "ties"])
    .exercises(&direction_rules(direction))
}

fn argmax_cases() -> Vec<Draft> {
    use AxisDirection::{Decreasing, Increasing};
    let uint32 = || ints(&[1, TWO_31, TWO_32 - 1, 7, TWO_32 - 1, TWO_31 + 1]);
    let uint64 = || ints(&[1, TWO_63, (1 << 64) - 1, TWO_32, (1 << 64) - 1, TWO_63 + 1]);
    let int64 = || ints(&[-TWO_32, TWO_32 + 5, -1, TWO_32 + 5, i128::from(i64::MIN)]);
    vec![
        argmax_row("uint32_top_bit_increasing_at_3_0", "UINT32 2^32-1 is the largest value (not -1): the first of its two copies.", DataType::Uint32, uint32(), Increasing).at(dml("3_0")),
        argmax_row("uint32_top_bit_decreasing_at_3_0", "UINT32 2^32-1 is the largest value (not -1): the last of its two copies.", DataType::Uint32, uint32(), Decreasing).at(dml("3_0")),
        argmax_row("uint64_top_bit_increasing_at_4_1", "UINT64 inputs (first valid at 4_1): 2^64-1 is the largest value (not -1), first copy.", DataType::Uint64, uint64(), Increasing).at(dml("4_1")),
        argmax_row("uint64_top_bit_decreasing_at_4_1", "UINT64 inputs (first valid at 4_1): 2^64-1 is the largest value (not -1), last copy.", DataType::Uint64, uint64(), Decreasing).at(dml("4_1")),
        argmax_row("int64_beyond_32_bits_increasing_at_4_1", "INT64 inputs (4_1): 2^32+5 ties twice and beats -1 (whose low half is all ones), first copy.", DataType::Int64, int64(), Increasing).at(dml("4_1")),
        argmax_row("int64_beyond_32_bits_decreasing_at_4_1", "INT64 inputs (4_1): 2^32+5 ties twice, last copy.", DataType::Int64, int64(), Decreasing).at(dml("4_1")),
    ]
}

fn nonzero_cases() -> Vec<Draft> {
    let values = |t: DataType| -> Vec<Value> {
        if t.is_float() {
            vec![
                Value::Float(-0.0),
                Value::Float(1.5),
                Value::Float(0.0),
                Value::Float(-2.0),
                Value::Float(-0.0),
                Value::Float(0.25),
            ]
        } else {
            let bits = t.size_in_bytes() * 8 - 1;
            let top = if t.is_signed_integer() {
                -(1i128 << bits)
            } else {
                1i128 << bits
            };
            ints(&[0, top, 0, 1, top + 1, 0])
        }
    };
    let mut drafts = Vec::new();
    for t in [
        DataType::Float32,
        DataType::Float16,
        DataType::Uint32,
        DataType::Uint8,
        DataType::Int16,
    ] {
        let name = t.name().to_lowercase();
        drafts.push(
            nonzero_draft(
                format!("{name}_4d_at_3_0"),
                format!("{t} {{1,1,2,3}} at 3_0."),
                InputDraft::packed(t, &[1, 1, 2, 3], values(t)),
                4,
                4,
                2,
            )
            .at(dml("3_0"))
            .tags(&["level-boundary"]),
        );
        drafts.push(
            nonzero_draft(
                format!("{name}_2d_at_4_0"),
                format!("{t} {{2,3}} with 2-D count and coordinates (first valid at 4_0)."),
                InputDraft::packed(t, &[2, 3], values(t)),
                2,
                2,
                2,
            )
            .at(dml("4_0"))
            .tags(&["level-boundary"]),
        );
        drafts.push(
            nonzero_draft(
                format!("{name}_1d_at_4_0"),
                format!("{t} {{6}} with a 1-D count (first valid at 4_0)."),
                InputDraft::packed(t, &[6], values(t)),
                1,
                2,
                1,
            )
            .at(dml("4_0"))
            .tags(&["level-boundary"]),
        );
    }
    drafts
}
