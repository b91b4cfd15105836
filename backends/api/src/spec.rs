//! The machine-readable specs in `specs/` (format: `docs/spec-format.md`), embedded at build
//! time so a backend sees the same support tables and rule ids as the harness.

use crate::{DataType, Level, OperatorKind, SpecFamily};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One spec file: an operator (or the general buffer-tensor rules) with its tables and rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// Version of the spec file format.
    pub format: u32,
    /// The spec's name, e.g. `DML_ONE_HOT` or `DML_BUFFER_TENSOR_DESC`.
    pub name: String,
    /// The operator, absent for the general tensor rules.
    #[serde(default)]
    pub operator: Option<OperatorKind>,
    /// Which family's levels version it.
    pub family: SpecFamily,
    /// The source documents it is transcribed from.
    pub documents: Vec<SourceDocument>,
    /// The level the operator was introduced at.
    #[serde(default)]
    pub introduced: Option<Level>,
    /// The operator's tensors, in descriptor order.
    #[serde(default)]
    pub tensors: Vec<TensorRole>,
    /// Support tables, lowest level first; each holds from its level to the next one.
    #[serde(default)]
    pub support: Vec<SupportTable>,
    /// Every normative rule, with its stable id.
    pub rules: Vec<Rule>,
}

/// A document a spec is transcribed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceDocument {
    /// File name under `shared/seeds/` (or the DirectML page name).
    pub file: String,
    /// `en` or `ja`.
    pub language: String,
    /// What the document contributes.
    pub role: String,
}

/// A tensor of an operator and whether it is read or written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorRole {
    /// Name as in the document, e.g. `IndicesTensor`.
    pub name: String,
    /// `input` or `output`.
    pub kind: TensorKind,
}

/// Whether a tensor is read or written by the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TensorKind {
    /// Read by the operator.
    Input,
    /// Written by the operator.
    Output,
}

/// A "Tensor support" table: which dimension counts and data types each tensor may have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupportTable {
    /// The level the table's heading names ("… and above").
    pub from: Level,
    /// The document the table comes from.
    pub source: String,
    /// Remarks on how the table was transcribed.
    #[serde(default)]
    pub note: Option<String>,
    /// Per tensor name, its supported dimension counts and data types.
    pub tensors: BTreeMap<String, TensorSupport>,
}

/// One row of a support table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorSupport {
    /// Inclusive range `[min, max]` of dimension counts. With `unbounded`, `max` is only how
    /// far the support-table cells (and their required cases) go.
    pub dimension_counts: [usize; 2],
    /// True when the document sets no upper limit on the dimension count (OneHot-1): any
    /// count from `min` up is valid.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unbounded: bool,
    /// Supported data types.
    pub data_types: Vec<DataType>,
}

impl TensorSupport {
    /// True when `count` is within the supported dimension counts.
    pub fn allows_dimension_count(&self, count: usize) -> bool {
        count >= self.dimension_counts[0] && (self.unbounded || count <= self.dimension_counts[1])
    }

    /// True when `count` is within the listed range `[min, max]`: the counts that make
    /// support-table cells (an unbounded row allows more than it lists).
    pub fn lists_dimension_count(&self, count: usize) -> bool {
        (self.dimension_counts[0]..=self.dimension_counts[1]).contains(&count)
    }

    /// The supported dimension counts as text, e.g. `1 to 8` or `0 or more`.
    pub fn range_text(&self) -> String {
        let [low, high] = self.dimension_counts;
        if self.unbounded {
            format!("{low} or more")
        } else {
            format!("{low} to {high}")
        }
    }
}

/// A normative rule with a stable id and the sentence it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable id, e.g. `ONE_HOT.INDICES_AXIS_SIZE`.
    pub id: String,
    /// Whether the validator enforces it or positive cases exercise it.
    pub kind: RuleKind,
    /// The level from which the rule applies, when later than the operator's introduction.
    #[serde(default)]
    pub applies_from: Option<Level>,
    /// The document the sentence comes from.
    pub source: String,
    /// The sentence, in English (translated faithfully from Japanese pages).
    pub quote: String,
    /// The original Japanese sentence, for translated quotes.
    #[serde(default)]
    pub original: Option<String>,
    /// Where the document is silent or ambiguous: the reading opconform chose, and why.
    #[serde(default)]
    pub reading: Option<String>,
    /// True when the rule is opconform's reading of a point the documents leave open (its
    /// `reading` says what is expected there): a case whose expectation depends on it is
    /// `informational`, never `required`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub silent: bool,
}

impl Rule {
    /// True when a seed sentence or a documented example decides the rule, so that a case
    /// resting on it may be `required`.
    pub fn is_grounded(&self) -> bool {
        !self.silent
    }
}

/// How a rule is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// A constraint on the descriptor, enforced by [`crate::validate`]; negative cases cover it.
    Descriptor,
    /// A constraint on the results; positive cases exercise it.
    Behaviour,
}

/// The spec files' text, embedded from `specs/`, with their file names.
pub const SPEC_SOURCES: [(&str, &str); 5] = [
    (
        "dml_buffer_tensor.yaml",
        include_str!("../../../specs/dml_buffer_tensor.yaml"),
    ),
    (
        "dml_one_hot.yaml",
        include_str!("../../../specs/dml_one_hot.yaml"),
    ),
    (
        "dml_nonzero_coordinates.yaml",
        include_str!("../../../specs/dml_nonzero_coordinates.yaml"),
    ),
    (
        "dml_argmax.yaml",
        include_str!("../../../specs/dml_argmax.yaml"),
    ),
    (
        "ov_one_hot_1.yaml",
        include_str!("../../../specs/ov_one_hot_1.yaml"),
    ),
];

/// Every embedded spec, parsed once.
///
/// # Panics
/// If an embedded spec does not parse; the crate's tests guarantee they do.
pub fn all() -> &'static [SpecFile] {
    static SPECS: OnceLock<Vec<SpecFile>> = OnceLock::new();
    SPECS.get_or_init(|| {
        SPEC_SOURCES
            .iter()
            .map(|(name, text)| {
                serde_yaml::from_str(text)
                    .unwrap_or_else(|e| panic!("embedded specs/{name} does not parse: {e}"))
            })
            .collect()
    })
}

/// The spec of `operator`.
pub fn for_operator(operator: OperatorKind) -> &'static SpecFile {
    all()
        .iter()
        .find(|s| s.operator == Some(operator))
        .expect("every operator has a spec")
}

/// The spec holding the general `DML_BUFFER_TENSOR_DESC` rules.
pub fn buffer_tensor_rules() -> &'static SpecFile {
    all()
        .iter()
        .find(|s| s.operator.is_none())
        .expect("specs/dml_buffer_tensor.yaml is embedded")
}

/// Every rule of every spec.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    all().iter().flat_map(|s| s.rules.iter())
}

impl SpecFile {
    /// The support table in force at `level`: the last one whose `from` is at or below it.
    pub fn table_at(&self, level: Level) -> Option<&SupportTable> {
        self.support
            .iter()
            .filter(|t| level.at_least(t.from))
            .max_by_key(|t| t.from)
    }

    /// The levels at which a support table starts, lowest first.
    pub fn table_levels(&self) -> Vec<Level> {
        let mut levels: Vec<Level> = self.support.iter().map(|t| t.from).collect();
        levels.sort();
        levels
    }

    /// The rule with `id`, if this spec has it.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_silent_rule_states_its_reading() {
        for rule in all_rules().filter(|r| r.silent) {
            assert!(
                rule.reading
                    .as_deref()
                    .is_some_and(|r| !r.trim().is_empty()),
                "{} is silent but states no reading",
                rule.id
            );
        }
    }

    #[test]
    fn unbounded_rows_allow_any_higher_count() {
        let row = TensorSupport {
            dimension_counts: [0, 8],
            unbounded: true,
            data_types: vec![],
        };
        assert!(row.allows_dimension_count(0) && row.allows_dimension_count(40));
        let bounded = TensorSupport {
            unbounded: false,
            ..row
        };
        assert!(!bounded.allows_dimension_count(9));
    }

    #[test]
    fn every_embedded_spec_parses_and_ids_are_unique() {
        let mut ids: Vec<&str> = all_rules().map(|r| r.id.as_str()).collect();
        let count = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count, "duplicate rule ids");
        for op in OperatorKind::ALL {
            assert_eq!(for_operator(op).family, op.family());
            assert_eq!(for_operator(op).introduced, Some(op.introduced()));
        }
    }

    #[test]
    fn tables_hold_until_the_next_listed_level() {
        let one_hot = for_operator(OperatorKind::DmlOneHot);
        assert!(one_hot.table_at(Level::dml(0x1000)).is_none());
        assert_eq!(
            one_hot.table_at(Level::dml(0x3100)).unwrap().from,
            Level::dml(0x3000)
        );
        assert_eq!(
            one_hot.table_at(Level::dml(0x4000)).unwrap().from,
            Level::dml(0x3000)
        );
        assert_eq!(
            one_hot.table_at(Level::dml(0x6400)).unwrap().from,
            Level::dml(0x4100)
        );
        let ov = for_operator(OperatorKind::OvOneHot1);
        assert!(ov.table_at(Level::dml(0x4100)).is_none());
        assert_eq!(ov.table_at(Level::Opset(13)).unwrap().from, Level::Opset(1));
    }

    #[test]
    fn every_table_names_every_tensor() {
        for spec in all().iter().filter(|s| s.operator.is_some()) {
            for table in &spec.support {
                let names: Vec<&String> = table.tensors.keys().collect();
                for role in &spec.tensors {
                    assert!(names.contains(&&role.name), "{} {}", spec.name, role.name);
                }
                assert_eq!(names.len(), spec.tensors.len(), "{}", spec.name);
            }
        }
    }

    #[test]
    fn tensor_roles_match_descriptor_names() {
        for op in OperatorKind::ALL {
            let (inputs, outputs) = op.tensor_names();
            let spec = for_operator(op);
            let names: Vec<&str> = spec.tensors.iter().map(|t| t.name.as_str()).collect();
            let expected: Vec<&str> = inputs.iter().chain(outputs).copied().collect();
            assert_eq!(names, expected);
        }
    }
}
