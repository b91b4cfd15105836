//! The certificate of a certification run: per operator, the highest level at which every
//! required case passes, what blocks the next level, and the counts; the run's identity (case
//! set digest, harness version, backend); and, with a baseline, how the run compares with it.
//! Written as `certificate.json` and `certificate.md`; neither depends on time or absolute
//! paths. Text from the backend or the baseline is escaped in `certificate.md`
//! ([`crate::report::escape`]), so it cannot forge a verdict or a heading.

use super::baseline::BaselineComparison;
use crate::case::CaseClass;
use crate::report::compliance;
use crate::report::escape::{markdown_code, markdown_inline};
use crate::runner::{CaseResult, Outcome};
use opconform_backend::{BackendInfo, Level, OperatorKind, SpecFamily};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The certificate format version written in `certificate.json`.
pub const CERTIFICATE_FORMAT: u32 = 1;

/// What a certification run established.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificate {
    /// [`CERTIFICATE_FORMAT`].
    pub format: u32,
    /// The opconform version that ran it.
    pub harness_version: String,
    /// The backend's self-description (name, version, device, claims, operators).
    pub backend: BackendInfo,
    /// The levels certified: the DirectML feature level (`--feature-level`, or the backend's
    /// DirectML claim) and the backend's OpenVINO opset claim, where it has them.
    pub targets: Vec<Level>,
    /// SHA-256 of the case set that ran (see [`crate::selection::case_set_digest`]).
    pub case_set_digest: String,
    /// SHA-256 of the results (see [`crate::report::results_digest`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub results_digest: String,
    /// Number of cases that ran.
    pub case_count: usize,
    /// True when every operator the backend claims reaches its family's target (never for an
    /// interrupted run).
    pub certified: bool,
    /// True when the run was stopped before every case ran: nothing is certified.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// One entry per operator with cases in the run or claimed by the backend, in spec order.
    pub operators: Vec<OperatorCertificate>,
    /// How the run compares with the baseline given, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
}

/// The certification of one operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorCertificate {
    /// The operator.
    pub operator: OperatorKind,
    /// True when the backend lists the operator and claims a level of its family.
    pub claimed: bool,
    /// The level it is certified against (the target of its family), when claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Level>,
    /// The highest compliance level (`report::compliance` column, at or below the target) at
    /// which every required case at or below it passes; `None` when the lowest already fails.
    pub highest_level_passed: Option<Level>,
    /// True when claimed and every required case at or below the target passes (and there is
    /// at least one).
    pub certified: bool,
    /// The level after `highest_level_passed`, when that is below the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_level: Option<Level>,
    /// The required cases at or below `next_level` that did not pass: what blocks it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocking: Vec<BlockingCase>,
    /// Outcomes of required cases.
    pub required: BTreeMap<Outcome, usize>,
    /// Outcomes of informational cases (counted apart; they never block a level).
    pub informational: BTreeMap<Outcome, usize>,
}

/// A required case that blocks a level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockingCase {
    /// The case id.
    pub case: String,
    /// Its outcome.
    pub outcome: Outcome,
    /// Its level.
    pub level: Level,
}

impl Certificate {
    /// Builds the certificate of `results` (sorted by id) for a backend certified against
    /// `targets` (at most one level per family).
    pub fn build(
        harness_version: &str,
        backend: &BackendInfo,
        targets: &[Level],
        case_set_digest: &str,
        results: &[CaseResult],
    ) -> Certificate {
        let operators: Vec<OperatorCertificate> = OperatorKind::ALL
            .into_iter()
            .filter(|op| {
                backend.operators.contains(op) || results.iter().any(|r| r.operator == *op)
            })
            .map(|op| operator_certificate(op, backend, targets, results))
            .collect();
        let claimed: Vec<&OperatorCertificate> = operators.iter().filter(|o| o.claimed).collect();
        Certificate {
            format: CERTIFICATE_FORMAT,
            harness_version: harness_version.to_string(),
            backend: backend.clone(),
            targets: targets.to_vec(),
            case_set_digest: case_set_digest.to_string(),
            results_digest: String::new(),
            case_count: results.len(),
            certified: !claimed.is_empty() && claimed.iter().all(|o| o.certified),
            interrupted: false,
            operators,
            baseline: None,
        }
    }

    /// Marks the certificate of a run stopped before every case ran: neither the backend nor
    /// any operator is certified by it.
    pub fn mark_interrupted(&mut self) {
        self.interrupted = true;
        self.certified = false;
        for operator in &mut self.operators {
            operator.certified = false;
        }
    }

    /// The certificate as pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a certificate serialises") + "\n"
    }

    /// The certificate as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let b = &self.backend;
        let _ = writeln!(
            out,
            "# opconform certificate: {}\n",
            markdown_inline(&b.name)
        );
        if self.interrupted {
            let _ = writeln!(
                out,
                "**INTERRUPTED**: the run was stopped after {} case(s), before every case ran; \
                 it certifies nothing.\n",
                self.case_count
            );
        }
        let verdict = if self.certified {
            "**CERTIFIED**"
        } else {
            "**NOT CERTIFIED**"
        };
        let targets: Vec<String> = self.targets.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "{verdict} at {} (every operator the backend claims passes every required case at \
             or below its family's level).\n",
            if targets.is_empty() {
                "no level (the backend claims none)".to_string()
            } else {
                targets.join(" and ")
            }
        );
        let claims: Vec<String> = b.claims.iter().map(ToString::to_string).collect();
        let operators: Vec<&str> = b.operators.iter().map(|o| o.name()).collect();
        let _ = writeln!(
            out,
            "- backend: {} {}",
            markdown_inline(&b.name),
            markdown_inline(&b.version)
        );
        let _ = writeln!(out, "- device: {}", markdown_inline(&b.device));
        let _ = writeln!(out, "- claims: {}", claims.join(", "));
        let _ = writeln!(out, "- operators: {}", operators.join(", "));
        let _ = writeln!(
            out,
            "- cases: {} (case set sha256 {})",
            self.case_count, self.case_set_digest
        );
        let _ = writeln!(out, "- harness: opconform {}\n", self.harness_version);

        let _ = writeln!(out, "## Operators\n");
        let _ = writeln!(
            out,
            "| operator | target | highest level passed | certified | required passed | not \
             passing | informational passed |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|");
        for o in &self.operators {
            let level = |l: Option<Level>| l.map_or_else(|| "none".to_string(), |l| l.to_string());
            let certified = match (o.claimed, o.certified) {
                (false, _) => "not claimed",
                (true, true) => "yes",
                (true, false) => "**no**",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {}/{} | {} | {}/{} |",
                o.operator.name(),
                level(o.target),
                level(o.highest_level_passed),
                certified,
                count(&o.required, Some(Outcome::Pass)),
                count(&o.required, None),
                not_passing(&o.required),
                count(&o.informational, Some(Outcome::Pass)),
                count(&o.informational, None),
            );
        }

        let blocked: Vec<&OperatorCertificate> = self
            .operators
            .iter()
            .filter(|o| o.claimed && !o.certified)
            .collect();
        let _ = writeln!(out, "\n## What blocks the next level\n");
        if blocked.is_empty() {
            let _ = writeln!(out, "Nothing: every claimed operator reaches its target.");
        }
        for o in blocked {
            match o.next_level {
                Some(next) => {
                    let _ = writeln!(
                        out,
                        "### {} {} (highest passed: {})\n",
                        o.operator.name(),
                        next,
                        o.highest_level_passed
                            .map_or_else(|| "none".to_string(), |l| l.to_string())
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "### {}\n\nNo required case at or below {} ran.",
                        o.operator.name(),
                        o.target.map_or_else(String::new, |l| l.to_string())
                    );
                }
            }
            for case in &o.blocking {
                let _ = writeln!(
                    out,
                    "- {} ({}, level {})",
                    markdown_code(&case.case),
                    case.outcome.name(),
                    case.level
                );
            }
            let not_passing = count(&o.required, None) - count(&o.required, Some(Outcome::Pass));
            let later = not_passing.saturating_sub(o.blocking.len());
            if later > 0 {
                let _ = writeln!(
                    out,
                    "\n{later} more required case(s) above that level do not pass either (see \
                     `summary.md`)."
                );
            }
            let _ = writeln!(out);
        }

        if let Some(comparison) = &self.baseline {
            render_baseline(&mut out, comparison);
        }
        let _ = writeln!(
            out,
            "\nThe results of every case, the compliance matrices and the diffs are in \
             `summary.md`, `index.html`, `results.jsonl` and `junit.xml` beside this file."
        );
        out
    }
}

fn render_baseline(out: &mut String, c: &BaselineComparison) {
    let _ = writeln!(out, "\n## Baseline {}\n", markdown_code(&c.baseline));
    let verdict = if c.is_clean() {
        "no new failures"
    } else {
        "**NEW FAILURES**"
    };
    let _ = writeln!(
        out,
        "{verdict}: {} entries, {} still failing as expected, {} new failure(s), {} newly \
         passing, {} not run.\n",
        c.entries,
        c.still_failing,
        c.new_failures.len(),
        c.newly_passing.len(),
        c.not_run.len()
    );
    if !c.new_failures.is_empty() {
        let _ = writeln!(out, "### New failures\n");
        for f in &c.new_failures {
            let was = f.baseline_outcome.map_or_else(String::new, |o| {
                format!("; the baseline expects {}", o.name())
            });
            let _ = writeln!(
                out,
                "- {} ({}{was}): {}",
                markdown_code(&f.case),
                f.outcome.name(),
                markdown_inline(&f.detail)
            );
        }
        let _ = writeln!(out);
    }
    if !c.newly_passing.is_empty() {
        let _ = writeln!(
            out,
            "### Newly passing (remove these entries to tighten the baseline)\n"
        );
        for e in &c.newly_passing {
            let _ = writeln!(
                out,
                "- {} (expected {}: {})",
                markdown_code(&e.case),
                e.outcome.name(),
                markdown_inline(&e.reason)
            );
        }
        let _ = writeln!(out);
    }
    if !c.not_run.is_empty() {
        let _ = writeln!(out, "### Entries whose case did not run\n");
        for case in &c.not_run {
            let _ = writeln!(out, "- {}", markdown_code(case));
        }
        let _ = writeln!(out);
    }
}

/// The number of cases with `outcome`, or of all cases for `None`.
fn count(counts: &BTreeMap<Outcome, usize>, outcome: Option<Outcome>) -> usize {
    match outcome {
        Some(o) => counts.get(&o).copied().unwrap_or(0),
        None => counts.values().sum(),
    }
}

/// `2 fail, 1 unsupported`, or `0`.
fn not_passing(counts: &BTreeMap<Outcome, usize>) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(o, n)| **o != Outcome::Pass && **n > 0)
        .map(|(o, n)| format!("{n} {}", o.name()))
        .collect();
    if parts.is_empty() {
        "0".to_string()
    } else {
        parts.join(", ")
    }
}

/// The target of `family` among `targets`.
pub fn target_for(targets: &[Level], family: SpecFamily) -> Option<Level> {
    targets.iter().copied().find(|t| t.family() == family)
}

fn operator_certificate(
    operator: OperatorKind,
    backend: &BackendInfo,
    targets: &[Level],
    results: &[CaseResult],
) -> OperatorCertificate {
    let target = target_for(targets, operator.family());
    let claimed = backend.operators.contains(&operator) && target.is_some();
    let mine: Vec<&CaseResult> = results.iter().filter(|r| r.operator == operator).collect();
    let mut required = BTreeMap::new();
    let mut informational = BTreeMap::new();
    for r in &mine {
        let counts = match r.class {
            CaseClass::Required => &mut required,
            CaseClass::Informational => &mut informational,
        };
        *counts.entry(r.outcome).or_insert(0) += 1;
    }
    let highest = compliance::highest_level_passed(operator, results, target);
    let (certified, next_level, blocking) = match target {
        Some(target) => {
            let in_scope: Vec<&&CaseResult> = mine
                .iter()
                .filter(|r| r.class == CaseClass::Required && target.at_least(r.level))
                .collect();
            let certified = claimed
                && !in_scope.is_empty()
                && in_scope.iter().all(|r| r.outcome == Outcome::Pass);
            let columns = compliance::column_levels(operator, Some(target));
            let next = if certified || in_scope.is_empty() {
                None
            } else {
                // The next column, or the target itself when only cases between the last
                // column and the target fail.
                match highest {
                    None => columns.first().copied(),
                    Some(h) => columns.iter().copied().find(|c| *c > h),
                }
                .or(Some(target))
            };
            let blocking = next.map_or_else(Vec::new, |next| {
                mine.iter()
                    .filter(|r| r.class == CaseClass::Required && next.at_least(r.level))
                    .filter(|r| r.outcome != Outcome::Pass)
                    .map(|r| BlockingCase {
                        case: r.id.clone(),
                        outcome: r.outcome,
                        level: r.level,
                    })
                    .collect()
            });
            (certified, next, blocking)
        }
        None => (false, None, Vec::new()),
    };
    OperatorCertificate {
        operator,
        claimed,
        target,
        highest_level_passed: highest,
        certified,
        next_level,
        blocking,
        required,
        informational,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::TensorShape;

    fn info() -> BackendInfo {
        BackendInfo {
            name: "rt".into(),
            version: "1".into(),
            device: "cpu".into(),
            claims: vec![Level::dml(0x4100), Level::Opset(16)],
            operators: vec![OperatorKind::DmlArgMax, OperatorKind::OvOneHot1],
        }
    }

    fn result(id: &str, op: OperatorKind, level: Level, outcome: Outcome) -> CaseResult {
        CaseResult {
            id: id.into(),
            operator: op,
            level,
            class: CaseClass::Required,
            negative: false,
            outcome,
            detail: String::new(),
            diff: None,
            tensors: vec![TensorShape {
                tensor: "InputTensor".into(),
                data_type: "FLOAT32".into(),
                dimension_count: 1,
            }],
        }
    }

    #[test]
    fn certifies_when_every_claimed_operator_passes() {
        let results = vec![
            result(
                "a",
                OperatorKind::DmlArgMax,
                Level::dml(0x3000),
                Outcome::Pass,
            ),
            result(
                "b",
                OperatorKind::DmlArgMax,
                Level::dml(0x4100),
                Outcome::Pass,
            ),
            result("c", OperatorKind::OvOneHot1, Level::Opset(1), Outcome::Pass),
        ];
        let targets = [Level::dml(0x4100), Level::Opset(16)];
        let cert = Certificate::build("0.1.0", &info(), &targets, "d1g", &results);
        assert!(cert.certified, "{cert:#?}");
        let argmax = &cert.operators[0];
        assert_eq!(argmax.operator, OperatorKind::DmlArgMax);
        assert_eq!(argmax.highest_level_passed, Some(Level::dml(0x4100)));
        assert_eq!(argmax.next_level, None);
        assert_eq!(argmax.required.get(&Outcome::Pass), Some(&2));
        let ov = &cert.operators[1];
        assert_eq!(ov.target, Some(Level::Opset(16)));
        assert_eq!(ov.highest_level_passed, Some(Level::Opset(1)));
        assert!(ov.certified);
        let json: Certificate = serde_json::from_str(&cert.to_json()).unwrap();
        assert_eq!(json, cert);
        assert!(cert
            .to_markdown()
            .contains("**CERTIFIED** at 4_1 and opset16"));
    }

    #[test]
    fn names_what_blocks_the_next_level() {
        let results = vec![
            result(
                "a",
                OperatorKind::DmlArgMax,
                Level::dml(0x3000),
                Outcome::Pass,
            ),
            result(
                "b",
                OperatorKind::DmlArgMax,
                Level::dml(0x4100),
                Outcome::Fail,
            ),
            result(
                "c",
                OperatorKind::DmlArgMax,
                Level::dml(0x4100),
                Outcome::Unsupported,
            ),
            result("d", OperatorKind::OvOneHot1, Level::Opset(1), Outcome::Pass),
        ];
        let targets = [Level::dml(0x4100), Level::Opset(16)];
        let cert = Certificate::build("0.1.0", &info(), &targets, "d1g", &results);
        assert!(!cert.certified);
        let argmax = &cert.operators[0];
        assert!(!argmax.certified);
        assert_eq!(argmax.highest_level_passed, Some(Level::dml(0x4000)));
        assert_eq!(argmax.next_level, Some(Level::dml(0x4100)));
        let blocking: Vec<(&str, Outcome)> = argmax
            .blocking
            .iter()
            .map(|b| (b.case.as_str(), b.outcome))
            .collect();
        assert_eq!(
            blocking,
            vec![("b", Outcome::Fail), ("c", Outcome::Unsupported)]
        );
        let md = cert.to_markdown();
        assert!(md.contains("**NOT CERTIFIED**"), "{md}");
        assert!(
            md.contains("### DML_ARGMAX 4_1 (highest passed: 4_0)"),
            "{md}"
        );
        assert!(md.contains("- `c` (unsupported, level 4_1)"), "{md}");
        assert!(
            md.contains("| DML_ARGMAX | 4_1 | 4_0 | **no** | 1/3 | 1 fail, 1 unsupported | 0/0 |"),
            "{md}"
        );
    }

    #[test]
    fn an_operator_without_cases_is_not_certified_and_unclaimed_ones_do_not_count() {
        let results = vec![result(
            "c",
            OperatorKind::OvOneHot1,
            Level::Opset(1),
            Outcome::Pass,
        )];
        let cert = Certificate::build(
            "0.1.0",
            &info(),
            &[Level::dml(0x4100), Level::Opset(16)],
            "d",
            &results,
        );
        assert!(!cert.certified);
        assert_eq!(cert.operators[0].next_level, None);
        assert!(cert
            .to_markdown()
            .contains("No required case at or below 4_1 ran."));

        // Without a DirectML target the ArgMax claim does not count.
        let cert = Certificate::build("0.1.0", &info(), &[Level::Opset(16)], "d", &results);
        assert!(cert.certified);
        assert!(!cert.operators[0].claimed);
    }

    #[test]
    fn backend_text_cannot_forge_a_verdict_in_the_markdown() {
        let mut backend = info();
        backend.name = "rt\n## Verdict: CERTIFIED\n**CERTIFIED**".into();
        backend.version = "1 | [x](http://e)".into();
        backend.device = "<b>gpu</b>\u{1b}[31m".into();
        let mut failing = result(
            "a`b",
            OperatorKind::DmlArgMax,
            Level::dml(0x3000),
            Outcome::Fail,
        );
        failing.detail = "x\n# CERTIFIED".into();
        let cert = Certificate::build("0.1.0", &backend, &[Level::dml(0x4100)], "d", &[failing]);
        let markdown = cert.to_markdown();
        let lines: Vec<&str> = markdown.lines().collect();
        assert!(
            lines
                .iter()
                .all(|l| !l.starts_with("## Verdict") && !l.starts_with("**CERTIFIED")),
            "{markdown}"
        );
        assert!(lines.contains(&"**NOT CERTIFIED** at 4_1 (every operator the backend claims passes every required case at or below its family's level)."));
        assert!(!markdown.contains('\u{1b}'));
        assert!(
            !markdown.contains("<b>") && !markdown.contains("[x]("),
            "{markdown}"
        );
        assert!(
            markdown.contains("- ``a`b`` (fail, level 3_0)"),
            "{markdown}"
        );
    }

    #[test]
    fn an_interrupted_run_certifies_nothing() {
        let results = vec![result(
            "a",
            OperatorKind::DmlArgMax,
            Level::dml(0x3000),
            Outcome::Pass,
        )];
        let backend = BackendInfo {
            operators: vec![OperatorKind::DmlArgMax],
            claims: vec![Level::dml(0x3000)],
            ..info()
        };
        let mut cert = Certificate::build("0.1.0", &backend, &[Level::dml(0x3000)], "d", &results);
        assert!(cert.certified);
        cert.mark_interrupted();
        assert!(!cert.certified && cert.operators.iter().all(|o| !o.certified));
        assert!(cert.to_json().contains("\"interrupted\": true"));
        let markdown = cert.to_markdown();
        assert!(markdown.contains("**INTERRUPTED**"), "{markdown}");
        assert!(markdown.contains("**NOT CERTIFIED**"), "{markdown}");
    }
}
