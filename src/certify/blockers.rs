//! What blocks a level, grouped by cause: a support-table cell outside the backend's claims,
//! an `unsupported` reason the backend gave, a descriptor rule a negative case checks, a
//! behaviour (a wrong answer, by the rules the case exercises or its topic), a valid
//! descriptor refused, or an error. `certificate.json` carries the groups (`blocked_by`);
//! `certificate.md` lists them with their counts, then the case ids.

use super::schema;
use crate::case::{Case, Expectation};
use crate::report::escape::{markdown_code, markdown_inline};
use crate::runner::{CaseResult, Outcome};
use opconform_backend::{spec, BackendInfo, DataType, Level};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The longest group text kept from a backend's message (longer ones are cut, so two
/// messages that differ only far out share a group).
pub const GROUP_TEXT_CAP: usize = 200;

/// The rules of one case: those its descriptor breaks (negative case) and those it exercises.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaseRules {
    /// `expect_invalid` of a negative case.
    pub breaks: Vec<String>,
    /// `exercises`.
    pub exercises: Vec<String>,
}

/// Case id → its rules.
pub type RuleIndex = BTreeMap<String, CaseRules>;

/// The rules of every case in `cases`, by id.
pub fn rule_index(cases: &[Case]) -> RuleIndex {
    cases
        .iter()
        .map(|case| {
            let breaks = match &case.expectation {
                Expectation::Invalid(rules) => rules.clone(),
                Expectation::Outputs(_) => Vec::new(),
            };
            let rules = CaseRules {
                breaks,
                exercises: case.exercises.clone(),
            };
            (case.id.clone(), rules)
        })
        .collect()
}

/// Why a required case does not pass, in the order the certificate lists them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BlockCause {
    /// The case lies outside the backend's declared support: its level is above what the
    /// backend claims, so the support-table cells it uses are missing from the claim.
    MissingSupport,
    /// The backend answered `unsupported` for a case within its claims.
    Unsupported,
    /// A negative case: the backend accepted (or did not reject) a descriptor that breaks a
    /// descriptor rule.
    Rule,
    /// A wrong answer: the outputs differ from the spec's.
    Behaviour,
    /// The backend rejected a valid descriptor as invalid.
    Refused,
    /// The backend reported an internal error, crashed or timed out.
    Error,
}

impl BlockCause {
    /// The heading of the cause in `certificate.md`.
    pub fn title(self) -> &'static str {
        match self {
            BlockCause::MissingSupport => "Missing support-table cells",
            BlockCause::Unsupported => "Answered unsupported",
            BlockCause::Rule => "Descriptor rules not enforced",
            BlockCause::Behaviour => "Wrong answers",
            BlockCause::Refused => "Valid descriptors refused",
            BlockCause::Error => "Errors, crashes and timeouts",
        }
    }

    /// What the cause means for the reader, one sentence.
    pub fn meaning(self) -> &'static str {
        match self {
            BlockCause::MissingSupport => {
                "These cases are above the level the backend claims: claiming the target means \
                 supporting every cell of its support table, and these cells are not covered."
            }
            BlockCause::Unsupported => {
                "The backend claims these cases' level but answered `unsupported`, grouped by \
                 the reason it gave."
            }
            BlockCause::Rule => {
                "Negative cases: the descriptor breaks the rule shown and must be rejected as \
                 invalid; the backend accepted it or answered otherwise."
            }
            BlockCause::Behaviour => {
                "The backend ran these cases and its outputs differ from the spec's, grouped by \
                 the behaviour rules the cases exercise (or their topic)."
            }
            BlockCause::Refused => {
                "Valid descriptors the backend rejected as invalid, grouped by what it said."
            }
            BlockCause::Error => {
                "The backend failed to answer: an internal error, a crash or a timeout."
            }
        }
    }
}

/// Blocking cases that share a cause and a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlockerGroup {
    /// The cause.
    pub cause: BlockCause,
    /// What the cases share, in words: the missing cells and level, the backend's reason, the
    /// rule ids, `topic <group>`, or the outcome.
    pub group: String,
    /// The rule ids of the group (for `rule`, and for `behaviour` when the cases name the
    /// rules they exercise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// Number of cases.
    pub count: usize,
    /// The case ids, in id order.
    #[schemars(schema_with = "schema::case_ids")]
    pub cases: Vec<String>,
}

/// Groups `blocking` (required cases that did not pass) by cause and group: causes in
/// [`BlockCause`] order, then the largest group first, then by group text.
pub fn group(
    blocking: &[&CaseResult],
    backend: &BackendInfo,
    rules: &RuleIndex,
) -> Vec<BlockerGroup> {
    let mut groups: BTreeMap<(BlockCause, String), BlockerGroup> = BTreeMap::new();
    for result in blocking {
        let (cause, text, group_rules) = classify(result, backend, rules.get(&result.id));
        let entry = groups
            .entry((cause, text.clone()))
            .or_insert_with(|| BlockerGroup {
                cause,
                group: text,
                rules: group_rules,
                count: 0,
                cases: Vec::new(),
            });
        entry.count += 1;
        entry.cases.push(result.id.clone());
    }
    let mut groups: Vec<BlockerGroup> = groups.into_values().collect();
    for g in &mut groups {
        g.cases.sort();
    }
    groups.sort_by(|a, b| {
        a.cause
            .cmp(&b.cause)
            .then(b.count.cmp(&a.count))
            .then(a.group.cmp(&b.group))
    });
    groups
}

/// The cause, group text and rule ids of one blocking result.
fn classify(
    result: &CaseResult,
    backend: &BackendInfo,
    rules: Option<&CaseRules>,
) -> (BlockCause, String, Vec<String>) {
    if !backend.claims_case(result.operator, result.level) {
        return (
            BlockCause::MissingSupport,
            missing_cells(result, backend),
            Vec::new(),
        );
    }
    if result.negative {
        let breaks = rules.map(|r| r.breaks.clone()).unwrap_or_default();
        let text = if breaks.is_empty() {
            "a descriptor rule (the case's rules are not known here)".to_string()
        } else {
            breaks.join(", ")
        };
        return (BlockCause::Rule, text, breaks);
    }
    match result.outcome {
        Outcome::Unsupported => {
            let reason = result
                .detail
                .strip_prefix("unsupported: ")
                .unwrap_or(&result.detail);
            (BlockCause::Unsupported, capped(reason), Vec::new())
        }
        Outcome::Rejected => (BlockCause::Refused, capped(&result.detail), Vec::new()),
        Outcome::Error | Outcome::Crash | Outcome::Timeout => (
            BlockCause::Error,
            result.outcome.name().to_string(),
            Vec::new(),
        ),
        Outcome::Fail | Outcome::Pass => {
            let exercises = rules.map(|r| r.exercises.clone()).unwrap_or_default();
            if exercises.is_empty() {
                (
                    BlockCause::Behaviour,
                    format!("topic {}", topic(&result.id)),
                    Vec::new(),
                )
            } else {
                (BlockCause::Behaviour, exercises.join(", "), exercises)
            }
        }
    }
}

/// The topic of a case id: what lies between the operator and the case name
/// (`dml_argmax::generated::special_values::x` → `generated::special_values`).
pub fn topic(id: &str) -> String {
    let parts: Vec<&str> = id.split("::").collect();
    if parts.len() > 2 {
        parts[1..parts.len() - 1].join("::")
    } else {
        parts.first().copied().unwrap_or("").to_string()
    }
}

/// The support-table cells `result` uses that the table at its level lists and the table at
/// the backend's claim does not (`ValuesTensor INT64 4-D`), with the level and the claim.
fn missing_cells(result: &CaseResult, backend: &BackendInfo) -> String {
    let claim = backend.claim_for(result.level);
    let table = spec::for_operator(result.operator);
    let listed = |level: Option<Level>, tensor: &str, data_type: &str, dims: usize| {
        let Some(data_type) = DataType::from_name(data_type) else {
            return false;
        };
        level
            .and_then(|l| table.table_at(l))
            .and_then(|t| t.tensors.get(tensor))
            .is_some_and(|row| {
                row.data_types.contains(&data_type) && row.allows_dimension_count(dims)
            })
    };
    let cells: Vec<String> = result
        .tensors
        .iter()
        .filter(|t| {
            listed(
                Some(result.level),
                &t.tensor,
                &t.data_type,
                t.dimension_count,
            ) && !listed(claim, &t.tensor, &t.data_type, t.dimension_count)
        })
        .map(|t| format!("{} {} {}-D", t.tensor, t.data_type, t.dimension_count))
        .collect();
    let claim = match (backend.operators.contains(&result.operator), claim) {
        (false, _) => format!("the backend does not implement {}", result.operator),
        (true, Some(claim)) => format!("the backend claims {claim}"),
        (true, None) => format!("the backend claims no {} level", result.level.family()),
    };
    if cells.is_empty() {
        format!("level {} ({claim})", result.level)
    } else {
        format!("{} at {} ({claim})", cells.join(", "), result.level)
    }
}

/// `text` cut to [`GROUP_TEXT_CAP`] characters, control characters replaced.
fn capped(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(GROUP_TEXT_CAP)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > GROUP_TEXT_CAP {
        out.push('…');
    }
    out
}

/// The group as Markdown: rule ids and topics as code, text from the backend escaped.
pub fn group_markdown(group: &BlockerGroup) -> String {
    if !group.rules.is_empty() {
        let rules: Vec<String> = group.rules.iter().map(|r| markdown_code(r)).collect();
        let noun = if group.cause == BlockCause::Rule {
            "breaks"
        } else {
            "exercises"
        };
        return format!("{noun} {}", rules.join(", "));
    }
    if let Some(topic) = group.group.strip_prefix("topic ") {
        return format!("topic {}", markdown_code(topic));
    }
    match group.cause {
        BlockCause::Unsupported => format!("reason: {}", markdown_inline(&group.group)),
        BlockCause::Refused => format!("said: {}", markdown_inline(&group.group)),
        _ => markdown_inline(&group.group),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::CaseClass;
    use crate::runner::TensorShape;
    use opconform_backend::OperatorKind;

    fn backend() -> BackendInfo {
        BackendInfo {
            name: "rt".into(),
            version: "1".into(),
            device: "cpu".into(),
            claims: vec![Level::dml(0x3000)],
            operators: vec![OperatorKind::DmlArgMax],
        }
    }

    fn result(id: &str, level: u16, outcome: Outcome, detail: &str) -> CaseResult {
        CaseResult {
            id: id.into(),
            operator: OperatorKind::DmlArgMax,
            level: Level::dml(level),
            class: CaseClass::Required,
            negative: false,
            outcome,
            detail: detail.into(),
            diff: None,
            tensors: vec![
                TensorShape {
                    tensor: "InputTensor".into(),
                    data_type: "INT64".into(),
                    dimension_count: 2,
                },
                TensorShape {
                    tensor: "OutputTensor".into(),
                    data_type: "UINT32".into(),
                    dimension_count: 2,
                },
            ],
        }
    }

    #[test]
    fn every_cause_gets_its_group_with_counts() {
        let mut negative = result("dml_argmax::negative::n", 0x3000, Outcome::Fail, "accepted");
        negative.negative = true;
        let results = [
            result(
                "dml_argmax::g::above",
                0x4100,
                Outcome::Unsupported,
                "above what the backend claims",
            ),
            result(
                "dml_argmax::g::u1",
                0x3000,
                Outcome::Unsupported,
                "unsupported: no fp16",
            ),
            result(
                "dml_argmax::g::u2",
                0x3000,
                Outcome::Unsupported,
                "unsupported: no fp16",
            ),
            result(
                "dml_argmax::g::u3",
                0x3000,
                Outcome::Unsupported,
                "unsupported: no 8-D",
            ),
            negative,
            result("dml_argmax::special::w1", 0x3000, Outcome::Fail, "differ"),
            result("dml_argmax::special::w2", 0x3000, Outcome::Fail, "differ"),
            result("dml_argmax::ties::w3", 0x3000, Outcome::Fail, "differ"),
            result(
                "dml_argmax::g::r",
                0x3000,
                Outcome::Rejected,
                "invalid descriptor (X): y",
            ),
            result("dml_argmax::g::t", 0x3000, Outcome::Timeout, "slow"),
        ];
        let mut rules = RuleIndex::new();
        rules.insert(
            "dml_argmax::negative::n".into(),
            CaseRules {
                breaks: vec!["ARGMAX.AXES_IN_RANGE".into()],
                exercises: vec![],
            },
        );
        rules.insert(
            "dml_argmax::ties::w3".into(),
            CaseRules {
                breaks: vec![],
                exercises: vec!["ARGMAX.TIES".into()],
            },
        );
        let refs: Vec<&CaseResult> = results.iter().collect();
        let groups = group(&refs, &backend(), &rules);
        let summary: Vec<(BlockCause, &str, usize)> = groups
            .iter()
            .map(|g| (g.cause, g.group.as_str(), g.count))
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    BlockCause::MissingSupport,
                    "InputTensor INT64 2-D at 4_1 (the backend claims 3_0)",
                    1
                ),
                (BlockCause::Unsupported, "no fp16", 2),
                (BlockCause::Unsupported, "no 8-D", 1),
                (BlockCause::Rule, "ARGMAX.AXES_IN_RANGE", 1),
                (BlockCause::Behaviour, "topic special", 2),
                (BlockCause::Behaviour, "ARGMAX.TIES", 1),
                (BlockCause::Refused, "invalid descriptor (X): y", 1),
                (BlockCause::Error, "timeout", 1),
            ]
        );
        assert_eq!(
            groups[4].cases,
            vec!["dml_argmax::special::w1", "dml_argmax::special::w2"]
        );
        assert_eq!(groups[3].rules, vec!["ARGMAX.AXES_IN_RANGE"]);
        assert_eq!(group_markdown(&groups[5]), "exercises `ARGMAX.TIES`");
        assert_eq!(group_markdown(&groups[4]), "topic `special`");
    }

    #[test]
    fn backend_text_is_capped_and_escaped() {
        let long = format!("unsupported: {}\n# CERTIFIED", "x".repeat(500));
        let results = [result(
            "dml_argmax::g::u",
            0x3000,
            Outcome::Unsupported,
            &long,
        )];
        let refs: Vec<&CaseResult> = results.iter().collect();
        let groups = group(&refs, &backend(), &RuleIndex::new());
        assert_eq!(groups[0].group.chars().count(), GROUP_TEXT_CAP + 1);
        assert!(!groups[0].group.contains('\n'));
        let markdown = group_markdown(&BlockerGroup {
            group: "<b>[x](http://e)</b>".into(),
            ..groups[0].clone()
        });
        assert!(
            !markdown.contains("<b>") && !markdown.contains("[x]("),
            "{markdown}"
        );
    }

    #[test]
    fn topics_are_the_middle_of_the_id() {
        assert_eq!(
            topic("dml_argmax::generated::special_values::x"),
            "generated::special_values"
        );
        assert_eq!(topic("dml_argmax::documented::example_1"), "documented");
    }
}
