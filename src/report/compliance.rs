//! Feature-level compliance: per operator, which support-table cells (tensor × data type ×
//! dimension count × level) are covered by passing cases, and the highest level fully passed.

use crate::case::CaseClass;
use crate::runner::{CaseResult, Outcome, TensorShape};
use opconform_backend::{spec, Level, OperatorKind, SpecFamily};
use std::collections::{HashMap, HashSet};

/// The state of one matrix cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// Every required case using this cell at or below the level passed, or the ones that
    /// did not are blamed on their other cells ([`suspect_cells`]).
    Pass,
    /// A required case using this cell at or below the level did not pass, and this cell is
    /// one of its suspects ([`suspect_cells`]).
    Fail,
    /// The table in force at the level does not list this cell.
    NotRequired,
    /// The cell is required but no case in the run exercises it.
    NoCase,
}

impl Cell {
    /// Short text for tables.
    pub fn symbol(self) -> &'static str {
        match self {
            Cell::Pass => "pass",
            Cell::Fail => "FAIL",
            Cell::NotRequired => "—",
            Cell::NoCase => "no case",
        }
    }
}

/// One matrix row: a tensor with one data type and dimension count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixRow {
    /// Tensor name.
    pub tensor: String,
    /// Data type name.
    pub data_type: String,
    /// Dimension count.
    pub dimension_count: usize,
    /// One cell per column level.
    pub cells: Vec<Cell>,
}

/// The compliance matrix of one operator.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// The operator.
    pub operator: OperatorKind,
    /// Column levels: each level at which a support table starts, up to the run's target.
    pub levels: Vec<Level>,
    /// Rows, by tensor (descriptor order), data type (table order), dimension count.
    pub rows: Vec<MatrixRow>,
}

/// The newest DirectML level whose tables these operators' documents list; later levels
/// inherit its tables.
pub const NEWEST_TABLE_LEVEL: u16 = 0x4100;

/// The levels shown as matrix columns for `operator`: every DirectML level from its
/// introduction up to 4_1 (or the run's target, if lower), or the opsets of its tables.
pub fn column_levels(operator: OperatorKind, target: Option<Level>) -> Vec<Level> {
    let spec = spec::for_operator(operator);
    let levels: Vec<Level> = match operator.family() {
        SpecFamily::Directml => opconform_backend::FeatureLevel::ALL
            .into_iter()
            .map(Level::Dml)
            .filter(|l| *l >= operator.introduced() && *l <= Level::dml(NEWEST_TABLE_LEVEL))
            .collect(),
        SpecFamily::Openvino => spec.table_levels(),
    };
    levels
        .into_iter()
        .filter(|l| target.is_none_or(|t| t.family() != l.family() || *l <= t))
        .collect()
}

/// The compliance matrix of every operator in `results`, each up to the run's target of its
/// spec family (`targets`, as certificates read them). Built once per run and shared by the
/// Markdown and HTML reports, so the two always show the same columns and cells.
pub fn matrices(results: &[CaseResult], targets: &[Level]) -> Vec<Matrix> {
    super::operators_in(results)
        .into_iter()
        .map(|op| {
            matrix(
                op,
                results,
                crate::certify::certificate::target_for(targets, op.family()),
            )
        })
        .collect()
}

/// Builds the matrix of `operator` from `results` (of that operator or not).
pub fn matrix(operator: OperatorKind, results: &[CaseResult], target: Option<Level>) -> Matrix {
    let spec = spec::for_operator(operator);
    let levels = column_levels(operator, target);
    let relevant: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.operator == operator && r.class == CaseClass::Required && !r.negative)
        .collect();
    let suspects = suspect_cells(&relevant);
    let mut rows = Vec::new();
    for role in &spec.tensors {
        for (data_type, dimension_count) in table_cells(operator, &role.name) {
            let cells = levels
                .iter()
                .map(|&level| {
                    cell_state(
                        operator,
                        &role.name,
                        data_type,
                        dimension_count,
                        level,
                        &relevant,
                        &suspects,
                    )
                })
                .collect();
            rows.push(MatrixRow {
                tensor: role.name.clone(),
                data_type: data_type.to_string(),
                dimension_count,
                cells,
            });
        }
    }
    Matrix {
        operator,
        levels,
        rows,
    }
}

/// Every (data type, dimension count) any table lists for `tensor`, in table order.
pub fn table_cells(
    operator: OperatorKind,
    tensor: &str,
) -> Vec<(opconform_backend::DataType, usize)> {
    let spec = spec::for_operator(operator);
    let mut cells = Vec::new();
    for data_type in opconform_backend::DataType::ALL {
        for count in 0..=9 {
            let listed = spec.support.iter().any(|t| {
                t.tensors.get(tensor).is_some_and(|row| {
                    row.data_types.contains(&data_type) && row.allows_dimension_count(count)
                })
            });
            if listed {
                cells.push((data_type, count));
            }
        }
    }
    cells
}

fn cell_state(
    operator: OperatorKind,
    tensor: &str,
    data_type: opconform_backend::DataType,
    dimension_count: usize,
    level: Level,
    results: &[&CaseResult],
    suspects: &HashSet<(String, TensorShape)>,
) -> Cell {
    let in_table = spec::for_operator(operator)
        .table_at(level)
        .and_then(|t| t.tensors.get(tensor))
        .is_some_and(|row| {
            row.data_types.contains(&data_type) && row.allows_dimension_count(dimension_count)
        });
    if !in_table {
        return Cell::NotRequired;
    }
    let using: Vec<&&CaseResult> = results
        .iter()
        .filter(|r| level.at_least(r.level))
        .filter(|r| {
            r.tensors.iter().any(|t| {
                t.tensor == tensor
                    && t.data_type == data_type.name()
                    && t.dimension_count == dimension_count
            })
        })
        .collect();
    let blamed = using.iter().any(|r| {
        r.outcome != Outcome::Pass
            && r.tensors.iter().any(|t| {
                t.tensor == tensor
                    && t.data_type == data_type.name()
                    && t.dimension_count == dimension_count
                    && suspects.contains(&(r.id.clone(), t.clone()))
            })
    });
    if using.is_empty() {
        Cell::NoCase
    } else if blamed {
        Cell::Fail
    } else {
        Cell::Pass
    }
}

/// The cells each failing case is blamed on, as (case id, cell): of a failing case's cells
/// (tensor × data type × dimension count), those whose failure rate among the `results` using
/// them is at least half the highest rate among its cells. A cell that hundreds of passing
/// cases use (the UINT32 indices of a FLOAT16 NaN case) is not blamed for one failure; the
/// cells few cases vouch for (its FLOAT16 values and output) are.
pub fn suspect_cells(results: &[&CaseResult]) -> HashSet<(String, TensorShape)> {
    let mut uses: HashMap<&TensorShape, (usize, usize)> = HashMap::new();
    for r in results {
        for t in &r.tensors {
            let entry = uses.entry(t).or_default();
            entry.0 += 1;
            entry.1 += usize::from(r.outcome != Outcome::Pass);
        }
    }
    let rate = |t: &TensorShape| {
        let (all, failing) = uses.get(t).copied().unwrap_or((1, 1));
        failing as f64 / all.max(1) as f64
    };
    let mut suspects = HashSet::new();
    for r in results.iter().filter(|r| r.outcome != Outcome::Pass) {
        let highest = r.tensors.iter().map(rate).fold(0.0, f64::max);
        for t in r.tensors.iter().filter(|t| rate(t) * 2.0 >= highest) {
            suspects.insert((r.id.clone(), t.clone()));
        }
    }
    suspects
}

/// The highest level at which every required case of `operator` at or below it passed: the
/// `target` itself when every required case at or below it passes (so a backend certified at
/// opset16 reads "highest level passed opset16", not the opset1 of OneHot-1's only table),
/// else the highest matrix column fully passed (`None` when the lowest one already has a
/// failure or no case).
pub fn highest_level_passed(
    operator: OperatorKind,
    results: &[CaseResult],
    target: Option<Level>,
) -> Option<Level> {
    let mine: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.operator == operator && r.class == CaseClass::Required)
        .collect();
    let mut passed = None;
    for level in column_levels(operator, target) {
        let at_or_below: Vec<&&CaseResult> =
            mine.iter().filter(|r| level.at_least(r.level)).collect();
        if at_or_below.is_empty() || at_or_below.iter().any(|r| r.outcome != Outcome::Pass) {
            break;
        }
        passed = Some(level);
    }
    let every_case_passes = |target: Level| {
        let in_scope: Vec<&&CaseResult> =
            mine.iter().filter(|r| target.at_least(r.level)).collect();
        !in_scope.is_empty() && in_scope.iter().all(|r| r.outcome == Outcome::Pass)
    };
    match target {
        Some(target)
            if target.family() == operator.family()
                && passed.is_some()
                && every_case_passes(target) =>
        {
            Some(target)
        }
        _ => passed,
    }
}

/// The required cases at `level` (or below) that did not pass: what blocks that level.
pub fn blocking_cases(operator: OperatorKind, results: &[CaseResult], level: Level) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.operator == operator && r.class == CaseClass::Required)
        .filter(|r| level.at_least(r.level) && r.outcome != Outcome::Pass)
        .map(|r| r.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(tensor: &str, data_type: &str) -> TensorShape {
        TensorShape {
            tensor: tensor.into(),
            data_type: data_type.into(),
            dimension_count: 4,
        }
    }

    fn one_hot(id: &str, values: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            id: id.into(),
            operator: OperatorKind::DmlOneHot,
            level: Level::dml(0x2000),
            class: CaseClass::Required,
            negative: false,
            outcome,
            detail: String::new(),
            diff: None,
            tensors: vec![
                shape("IndicesTensor", "UINT32"),
                shape("ValuesTensor", values),
                shape("OutputTensor", values),
            ],
        }
    }

    #[test]
    fn matrices_cover_each_operator_once_up_to_its_familys_target() {
        let results = vec![
            one_hot("a", "FLOAT32", Outcome::Pass),
            one_hot("b", "FLOAT32", Outcome::Fail),
        ];
        let at = |target: u16| matrices(&results, &[Level::dml(target)]);
        let low = at(0x3000);
        assert_eq!(low.len(), 1, "one matrix per operator in the results");
        assert_eq!(low[0].operator, OperatorKind::DmlOneHot);
        assert_eq!(low[0].levels.last(), Some(&Level::dml(0x3000)));
        // A target of another family leaves DirectML's columns whole; a lower DirectML
        // target cuts them.
        let other = matrices(&results, &[]);
        assert_eq!(
            other[0].levels.last(),
            Some(&Level::dml(NEWEST_TABLE_LEVEL))
        );
        assert!(at(0x2100)[0].levels.len() < low[0].levels.len());
        assert!(low[0]
            .rows
            .iter()
            .any(|row| row.cells.contains(&Cell::Fail)));
    }

    #[test]
    fn a_float16_nan_failure_does_not_redden_the_indices_row() {
        let mut results: Vec<CaseResult> = (0..20)
            .map(|i| one_hot(&format!("f32_{i}"), "FLOAT32", Outcome::Pass))
            .collect();
        results.extend((0..4).map(|i| one_hot(&format!("f16_{i}"), "FLOAT16", Outcome::Pass)));
        results.push(one_hot("f16_nan", "FLOAT16", Outcome::Fail));
        let refs: Vec<&CaseResult> = results.iter().collect();
        let suspects = suspect_cells(&refs);
        let blamed: Vec<&str> = suspects
            .iter()
            .filter(|(id, _)| id == "f16_nan")
            .map(|(_, t)| t.tensor.as_str())
            .collect();
        assert_eq!(blamed.len(), 2, "{blamed:?}");
        assert!(!blamed.contains(&"IndicesTensor"), "{blamed:?}");
        let matrix = matrix(OperatorKind::DmlOneHot, &results, Some(Level::dml(0x2000)));
        let row = |tensor: &str, data_type: &str| {
            matrix
                .rows
                .iter()
                .find(|r| r.tensor == tensor && r.data_type == data_type && r.dimension_count == 4)
                .map(|r| r.cells[0])
        };
        assert_eq!(row("IndicesTensor", "UINT32"), Some(Cell::Pass));
        assert_eq!(row("OutputTensor", "FLOAT16"), Some(Cell::Fail));
    }
}
