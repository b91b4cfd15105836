//! Small shapes and level arithmetic shared by the generator modules.

use crate::coverage::support_cells;
use opconform_backend::spec;
use opconform_backend::{DataType, FeatureLevel, Level, OperatorKind};
use std::collections::BTreeSet;

/// A small shape of `rank` dimensions (1 to 9, or 0 for a scalar) with a few sizes above 1
/// and at most 12 elements, mixing leading, inner and trailing size-1 dimensions.
pub fn small_sizes(rank: usize) -> Vec<u32> {
    match rank {
        0 => vec![],
        1 => vec![5],
        2 => vec![2, 3],
        3 => vec![2, 1, 3],
        4 => vec![1, 2, 1, 3],
        5 => vec![2, 1, 2, 1, 3],
        6 => vec![1, 2, 1, 1, 3, 2],
        7 => vec![2, 1, 1, 2, 1, 1, 3],
        8 => vec![1, 2, 1, 2, 1, 1, 3, 1],
        9 => vec![1, 2, 1, 1, 2, 1, 1, 3, 1],
        _ => panic!("no small shape of rank {rank}"),
    }
}

/// `sizes` with the dimension `axis` replaced by `size`.
pub fn with_size(sizes: &[u32], axis: usize, size: u32) -> Vec<u32> {
    let mut sizes = sizes.to_vec();
    sizes[axis] = size;
    sizes
}

/// `rank` dimensions of size 1 but the last, of size `last`.
pub fn ones_then(rank: usize, last: u32) -> Vec<u32> {
    let mut sizes = vec![1; rank];
    sizes[rank - 1] = last;
    sizes
}

/// Product of the sizes.
pub fn element_count(sizes: &[u32]) -> usize {
    sizes.iter().map(|&s| s as usize).product()
}

/// The DirectML feature level just below `level` (`2_0` below `2_1`, `1_0` below `2_0`).
///
/// # Panics
/// For `1_0` and OpenVINO opsets.
pub fn level_below(level: Level) -> Level {
    let Level::Dml(feature_level) = level else {
        panic!("{level} is not a DirectML level")
    };
    let index = FeatureLevel::ALL
        .iter()
        .position(|l| *l == feature_level)
        .expect("a defined level");
    Level::Dml(FeatureLevel::ALL[index.checked_sub(1).expect("a level below 1_0")])
}

/// A DirectML level from its name, e.g. `dml("4_1")`.
pub fn dml(name: &str) -> Level {
    name.parse().expect("a DirectML level name")
}

/// The lowest level at which every listed (tensor, type, dimension count) is in the support
/// table, read from the tables directly (not through the validator): the last first level
/// among the cells.
///
/// # Panics
/// If a cell is in no table.
pub fn level_of_cells(operator: OperatorKind, tensors: &[(&str, DataType, usize)]) -> Level {
    let cells = support_cells(operator);
    tensors
        .iter()
        .map(|&(name, data_type, count)| {
            cells
                .iter()
                .find(|c| {
                    c.tensor == name && c.data_type == data_type && c.dimension_count == count
                })
                .unwrap_or_else(|| panic!("{operator} {name} {data_type} {count}-D is in no table"))
                .first_level
        })
        .max()
        .expect("at least one tensor")
}

/// The rule-id prefix of an operator's rules, e.g. `ONE_HOT`.
pub fn rule_prefix(operator: OperatorKind) -> &'static str {
    match operator {
        OperatorKind::DmlOneHot => "ONE_HOT",
        OperatorKind::DmlNonZeroCoordinates => "NONZERO_COORDINATES",
        OperatorKind::DmlArgMax => "ARGMAX",
        OperatorKind::OvOneHot1 => "ONEHOT1",
    }
}

/// The support-table rule ids a descriptor with these tensors breaks at `level`, read from the
/// tables directly: availability before the first table, else a data type or dimension count
/// missing from the tensor's row.
pub fn support_violations(
    operator: OperatorKind,
    tensors: &[(&str, DataType, usize)],
    level: Level,
) -> BTreeSet<String> {
    let prefix = rule_prefix(operator);
    let mut rules = BTreeSet::new();
    let Some(table) = spec::for_operator(operator).table_at(level) else {
        rules.insert(format!("{prefix}.AVAILABILITY"));
        return rules;
    };
    for &(name, data_type, count) in tensors {
        let row = &table.tensors[name];
        if !row.data_types.contains(&data_type) {
            rules.insert(format!("{prefix}.SUPPORT_DATA_TYPE"));
        }
        if !row.allows_dimension_count(count) {
            rules.insert(format!("{prefix}.SUPPORT_DIMENSION_COUNT"));
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_below() {
        assert_eq!(level_below(dml("2_0")), dml("1_0"));
        assert_eq!(level_below(dml("3_0")), dml("2_1"));
        assert_eq!(level_below(dml("4_0")), dml("3_1"));
    }

    #[test]
    fn small_shapes_are_small() {
        for rank in 0..=9 {
            assert_eq!(small_sizes(rank).len(), rank);
            assert!(element_count(&small_sizes(rank)) <= 12);
        }
    }

    #[test]
    fn cell_levels() {
        let one_hot = OperatorKind::DmlOneHot;
        let four_d = [
            ("IndicesTensor", DataType::Uint32, 4),
            ("ValuesTensor", DataType::Int8, 4),
            ("OutputTensor", DataType::Int8, 4),
        ];
        assert_eq!(level_of_cells(one_hot, &four_d), dml("2_1"));
        assert_eq!(
            support_violations(one_hot, &four_d, dml("2_0")),
            BTreeSet::from(["ONE_HOT.SUPPORT_DATA_TYPE".to_string()])
        );
        assert_eq!(
            support_violations(one_hot, &four_d, dml("1_0")),
            BTreeSet::from(["ONE_HOT.AVAILABILITY".to_string()])
        );
    }
}
