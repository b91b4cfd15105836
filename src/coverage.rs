//! Coverage of the specs by cases: which rules and which support-table cells the loaded cases
//! exercise (`opconform coverage`).
//!
//! - A descriptor rule is covered by the negative cases whose `expect_invalid` names it.
//! - A behaviour rule is covered by the cases whose `exercises` lists it.
//! - A support-table cell (operator × tensor × data type × dimension count, first listed at
//!   some level) is covered by the positive, required cases whose tensor has that data type
//!   and dimension count and whose level is the cell's first level, so a compliance matrix
//!   has a real case in every cell from the level where the cell appears.

use crate::case::{Case, CaseClass};
use opconform_backend::spec::{self, RuleKind};
use opconform_backend::{DataType, Level, OperatorKind};

/// One cell of an operator's support tables.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SupportCell {
    /// The operator.
    pub operator: OperatorKind,
    /// Tensor name, e.g. `IndicesTensor`.
    pub tensor: String,
    /// Data type.
    pub data_type: DataType,
    /// Dimension count.
    pub dimension_count: usize,
    /// The lowest level whose support table lists the cell.
    pub first_level: Level,
}

impl SupportCell {
    /// Short text, e.g. `DML_ONE_HOT IndicesTensor UINT32 4-D from 2_0`.
    pub fn label(&self) -> String {
        format!(
            "{} {} {} {}-D from {}",
            self.operator, self.tensor, self.data_type, self.dimension_count, self.first_level
        )
    }
}

/// The largest dimension count any support table lists (OneHot-1's output, 9).
const MAX_TABLE_DIMENSION_COUNT: usize = 9;

/// Every cell of `operator`'s support tables: tensors in descriptor order, data types in
/// DirectML's table order, dimension counts ascending.
pub fn support_cells(operator: OperatorKind) -> Vec<SupportCell> {
    let spec = spec::for_operator(operator);
    let mut cells = Vec::new();
    for role in &spec.tensors {
        for data_type in DataType::ALL {
            for dimension_count in 0..=MAX_TABLE_DIMENSION_COUNT {
                let first_level = spec
                    .support
                    .iter()
                    .filter(|table| {
                        table.tensors.get(&role.name).is_some_and(|row| {
                            row.data_types.contains(&data_type)
                                && row.lists_dimension_count(dimension_count)
                        })
                    })
                    .map(|table| table.from)
                    .min();
                if let Some(first_level) = first_level {
                    cells.push(SupportCell {
                        operator,
                        tensor: role.name.clone(),
                        data_type,
                        dimension_count,
                        first_level,
                    });
                }
            }
        }
    }
    cells
}

/// Every support cell of every operator.
pub fn all_support_cells() -> Vec<SupportCell> {
    OperatorKind::ALL
        .into_iter()
        .flat_map(support_cells)
        .collect()
}

/// True when `case` covers `cell` (see the module documentation).
pub fn case_covers_cell(case: &Case, cell: &SupportCell) -> bool {
    !case.is_negative()
        && case.class == CaseClass::Required
        && case.kind() == cell.operator
        && case.level == cell.first_level
        && case.operator.named_tensors().iter().any(|(name, desc)| {
            *name == cell.tensor
                && desc.data_type == cell.data_type
                && desc.dimension_count() == cell.dimension_count
        })
}

/// True when `case` covers the rule `id` of `kind`.
pub fn case_covers_rule(case: &Case, id: &str, kind: RuleKind) -> bool {
    match kind {
        RuleKind::Descriptor => match &case.expectation {
            crate::case::Expectation::Invalid(rules) => rules.iter().any(|r| r == id),
            crate::case::Expectation::Outputs(_) => false,
        },
        RuleKind::Behaviour => case.exercises.iter().any(|r| r == id),
    }
}

/// A rule with the cases covering it.
#[derive(Debug, Clone)]
pub struct RuleCoverage {
    /// The spec the rule belongs to, e.g. `DML_ONE_HOT`.
    pub spec: String,
    /// Rule id.
    pub id: String,
    /// Descriptor or behaviour.
    pub kind: RuleKind,
    /// Ids of the covering cases, sorted.
    pub cases: Vec<String>,
    /// Ids of the covering `required` cases, sorted (a subset of `cases`).
    pub required: Vec<String>,
    /// True when the rule is a reading of a silent point: it grounds no required case.
    pub silent: bool,
    /// The sentence that grounds the rule's required cases (the rule's quote and source).
    pub grounding: String,
}

impl RuleCoverage {
    /// Ids of the covering `informational` cases, sorted.
    pub fn informational(&self) -> Vec<&String> {
        self.cases
            .iter()
            .filter(|id| self.required.binary_search(id).is_err())
            .collect()
    }
}

/// A support cell with the cases covering it.
#[derive(Debug, Clone)]
pub struct CellCoverage {
    /// The cell.
    pub cell: SupportCell,
    /// Ids of the covering cases, sorted.
    pub cases: Vec<String>,
}

/// The coverage of every rule and every support cell by a set of cases.
#[derive(Debug, Clone)]
pub struct Coverage {
    /// Every rule of every spec, in spec order.
    pub rules: Vec<RuleCoverage>,
    /// Every support cell of every operator.
    pub cells: Vec<CellCoverage>,
}

impl Coverage {
    /// Computes coverage of the specs by `cases`.
    pub fn of(cases: &[Case]) -> Coverage {
        let rules = spec::all()
            .iter()
            .flat_map(|spec| {
                spec.rules.iter().map(move |rule| {
                    let covering = || {
                        cases
                            .iter()
                            .filter(|c| case_covers_rule(c, &rule.id, rule.kind))
                    };
                    RuleCoverage {
                        spec: spec.name.clone(),
                        id: rule.id.clone(),
                        kind: rule.kind,
                        cases: sorted_ids(covering()),
                        required: sorted_ids(covering().filter(|c| c.class == CaseClass::Required)),
                        silent: rule.silent,
                        grounding: format!("{} ({})", rule.quote.trim(), rule.source),
                    }
                })
            })
            .collect();
        let cells = all_support_cells()
            .into_iter()
            .map(|cell| CellCoverage {
                cases: sorted_ids(cases.iter().filter(|c| case_covers_cell(c, &cell))),
                cell,
            })
            .collect();
        Coverage { rules, cells }
    }

    /// Required cases that exercise a silent behaviour rule: each breaks the class policy (a
    /// reading never grounds a required case), as (rule id, case id). A negative case may
    /// break a silent descriptor rule beside a grounded one, which grounds it.
    pub fn required_on_silent_rules(&self) -> Vec<(&str, &str)> {
        self.rules
            .iter()
            .filter(|r| r.silent && r.kind == RuleKind::Behaviour)
            .flat_map(|r| r.required.iter().map(move |c| (r.id.as_str(), c.as_str())))
            .collect()
    }

    /// The rules no case covers.
    pub fn uncovered_rules(&self) -> Vec<&RuleCoverage> {
        self.rules.iter().filter(|r| r.cases.is_empty()).collect()
    }

    /// The cells no case covers.
    pub fn uncovered_cells(&self) -> Vec<&CellCoverage> {
        self.cells.iter().filter(|c| c.cases.is_empty()).collect()
    }

    /// Covered items (rules and cells) out of all, as a percentage.
    pub fn percentage(&self) -> f64 {
        let total = self.rules.len() + self.cells.len();
        let covered = total - self.uncovered_rules().len() - self.uncovered_cells().len();
        if total == 0 {
            100.0
        } else {
            100.0 * covered as f64 / total as f64
        }
    }

    /// True when every rule and every cell is covered.
    pub fn is_complete(&self) -> bool {
        self.uncovered_rules().is_empty() && self.uncovered_cells().is_empty()
    }
}

fn sorted_ids<'a>(cases: impl Iterator<Item = &'a Case>) -> Vec<String> {
    let mut ids: Vec<String> = cases.map(|c| c.id.clone()).collect();
    ids.sort();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(
        operator: OperatorKind,
        tensor: &str,
        data_type: DataType,
        count: usize,
    ) -> Option<Level> {
        support_cells(operator)
            .into_iter()
            .find(|c| c.tensor == tensor && c.data_type == data_type && c.dimension_count == count)
            .map(|c| c.first_level)
    }

    #[test]
    fn cells_start_at_the_first_table_listing_them() {
        let one_hot = OperatorKind::DmlOneHot;
        assert_eq!(
            cell(one_hot, "IndicesTensor", DataType::Uint32, 4),
            Some(Level::dml(0x2000))
        );
        assert_eq!(
            cell(one_hot, "IndicesTensor", DataType::Uint32, 3),
            Some(Level::dml(0x3000))
        );
        assert_eq!(
            cell(one_hot, "ValuesTensor", DataType::Int8, 4),
            Some(Level::dml(0x2100))
        );
        assert_eq!(
            cell(one_hot, "ValuesTensor", DataType::Float64, 1),
            Some(Level::dml(0x4100))
        );
        assert_eq!(cell(one_hot, "IndicesTensor", DataType::Int8, 4), None);
        let nonzero = OperatorKind::DmlNonZeroCoordinates;
        assert_eq!(
            cell(nonzero, "InputTensor", DataType::Int8, 5),
            Some(Level::dml(0x3000))
        );
        assert_eq!(
            cell(nonzero, "OutputCoordinatesTensor", DataType::Uint32, 2),
            Some(Level::dml(0x4000))
        );
        assert_eq!(
            cell(nonzero, "OutputCoordinatesTensor", DataType::Uint32, 1),
            None
        );
        let ov = OperatorKind::OvOneHot1;
        assert_eq!(
            cell(ov, "output", DataType::Uint8, 9),
            Some(Level::Opset(1))
        );
        assert_eq!(
            cell(ov, "indices", DataType::Int32, 0),
            Some(Level::Opset(1))
        );
    }

    #[test]
    fn cell_counts_match_the_tables() {
        let count = |op| support_cells(op).len();
        // Indices 4 types x 8 counts; values and output 11 types x 8 counts.
        assert_eq!(count(OperatorKind::DmlOneHot), 32 + 88 + 88);
        // Input 8 types x 8; count UINT32 x 8; coordinates UINT32 x 7 (2 to 8).
        assert_eq!(count(OperatorKind::DmlNonZeroCoordinates), 64 + 8 + 7);
        // Input 10 types x 8; output 4 types x 8.
        assert_eq!(count(OperatorKind::DmlArgMax), 80 + 32);
        // indices 2 x 9, depth 2, on/off 11 each, output 11 x 9.
        assert_eq!(count(OperatorKind::OvOneHot1), 18 + 2 + 11 + 11 + 99);
    }
}
