//! Baselines: a backend's known failures, each with the outcome it has and the reason, so that
//! a runtime's CI fails on *new* failures only and learns when a known one starts passing
//! (the format is `docs/baseline-format.md`).
//!
//! ```yaml
//! format: 1
//! backend: onnxruntime
//! expected:
//!   - case: dml_argmax::documented::example_3
//!     outcome: fail
//!     reason: "ArgMax over a NaN row returns the first number, not the NaN"
//! ```

use crate::case::CaseClass;
use crate::runner::{CaseResult, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The baseline file format version this opconform reads and writes.
pub const BASELINE_FORMAT: u32 = 1;

/// A baseline file: the known failures of one backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Format version; must be [`BASELINE_FORMAT`].
    pub format: u32,
    /// The backend's name as its handshake (or [`opconform_backend::Backend::info`]) gives it.
    pub backend: String,
    /// The known failures, one per case id.
    #[serde(default)]
    pub expected: Vec<ExpectedFailure>,
}

/// One known failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// The full case id, e.g. `dml_argmax::hand::nan_increasing`.
    pub case: String,
    /// The outcome the case has: any outcome but `pass`.
    pub outcome: Outcome,
    /// Why: the behaviour of the backend, and whether it is a runtime finding or an adapter gap.
    pub reason: String,
}

impl Baseline {
    /// Parses and checks a baseline (YAML; JSON works too).
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let baseline: Baseline = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        if baseline.format != BASELINE_FORMAT {
            return Err(format!(
                "format {} is not supported; this opconform reads baseline format \
                 {BASELINE_FORMAT}",
                baseline.format
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, entry) in baseline.expected.iter().enumerate() {
            if entry.outcome == Outcome::Pass {
                return Err(format!(
                    "expected[{i}] ({}): outcome `pass` is not a failure; remove the entry",
                    entry.case
                ));
            }
            if entry.reason.trim().is_empty() {
                return Err(format!(
                    "expected[{i}] ({}): give a reason for the failure",
                    entry.case
                ));
            }
            if !seen.insert(entry.case.as_str()) {
                return Err(format!(
                    "expected[{i}]: case {} is listed more than once",
                    entry.case
                ));
            }
        }
        Ok(baseline)
    }

    /// Reads and parses a baseline file; errors name the file.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Baseline::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A baseline that expects exactly the failures of `results` (required cases that did not
    /// pass), with `reason` for every entry, e.g. to start a baseline from a first run.
    pub fn from_results(backend: &str, results: &[CaseResult], reason: &str) -> Baseline {
        Baseline {
            format: BASELINE_FORMAT,
            backend: backend.to_string(),
            expected: results
                .iter()
                .filter(|r| counts_against(r))
                .map(|r| ExpectedFailure {
                    case: r.id.clone(),
                    outcome: r.outcome,
                    reason: reason.to_string(),
                })
                .collect(),
        }
    }

    /// Compares a run with this baseline.
    pub fn compare(&self, label: &str, results: &[CaseResult]) -> BaselineComparison {
        let expected: BTreeMap<&str, &ExpectedFailure> =
            self.expected.iter().map(|e| (e.case.as_str(), e)).collect();
        let mut comparison = BaselineComparison {
            baseline: label.to_string(),
            entries: self.expected.len(),
            still_failing: 0,
            new_failures: Vec::new(),
            newly_passing: Vec::new(),
            not_run: Vec::new(),
        };
        let ran: BTreeSet<&str> = results.iter().map(|r| r.id.as_str()).collect();
        for result in results {
            let entry = expected.get(result.id.as_str()).copied();
            match entry {
                Some(entry) if result.outcome == Outcome::Pass => {
                    comparison.newly_passing.push(entry.clone());
                }
                Some(entry) if entry.outcome == result.outcome => comparison.still_failing += 1,
                _ if counts_against(result) => comparison.new_failures.push(NewFailure {
                    case: result.id.clone(),
                    outcome: result.outcome,
                    baseline_outcome: entry.map(|e| e.outcome),
                    detail: first_line(&result.detail),
                }),
                // An informational case whose outcome changed: not a failure either way.
                _ => {}
            }
        }
        comparison.not_run = self
            .expected
            .iter()
            .filter(|e| !ran.contains(e.case.as_str()))
            .map(|e| e.case.clone())
            .collect();
        comparison
    }

    /// The reason the baseline gives for `result`, when it expects this required case with
    /// this outcome (the rule [`Baseline::compare`] counts as still failing).
    pub fn expects(&self, result: &CaseResult) -> Option<&str> {
        self.expected
            .iter()
            .find(|e| e.case == result.id && e.outcome == result.outcome)
            .filter(|_| counts_against(result))
            .map(|e| e.reason.as_str())
    }

    /// The baseline as YAML, entries sorted by case id.
    pub fn to_yaml(&self) -> String {
        let mut sorted = self.clone();
        sorted.expected.sort_by(|a, b| a.case.cmp(&b.case));
        serde_yaml::to_string(&sorted).expect("a baseline serialises")
    }
}

/// True when a result counts against certification: a required case that did not pass.
pub fn counts_against(result: &CaseResult) -> bool {
    result.class == CaseClass::Required && result.outcome != Outcome::Pass
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// How a run compares with a baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineComparison {
    /// The baseline file, as given.
    pub baseline: String,
    /// How many entries the baseline has.
    pub entries: usize,
    /// Entries whose case failed again with the expected outcome.
    pub still_failing: usize,
    /// Required cases that did not pass and are not in the baseline with this outcome: these
    /// fail a baseline run.
    pub new_failures: Vec<NewFailure>,
    /// Entries whose case passed: the baseline can be tightened by removing them.
    pub newly_passing: Vec<ExpectedFailure>,
    /// Entries whose case was not in the run (filtered out, or no longer in the case set).
    pub not_run: Vec<String>,
}

impl BaselineComparison {
    /// True when the run has no failure the baseline does not expect.
    pub fn is_clean(&self) -> bool {
        self.new_failures.is_empty()
    }
}

/// A failure the baseline does not expect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewFailure {
    /// The case id.
    pub case: String,
    /// Its outcome in this run.
    pub outcome: Outcome,
    /// The outcome the baseline expects, when it lists the case with another outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_outcome: Option<Outcome>,
    /// The first line of the result's detail.
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::{Level, OperatorKind};

    fn result(id: &str, outcome: Outcome, class: CaseClass) -> CaseResult {
        CaseResult {
            id: id.to_string(),
            operator: OperatorKind::DmlArgMax,
            level: Level::dml(0x3000),
            class,
            negative: false,
            outcome,
            detail: format!("{} happened\nsecond line", outcome.name()),
            diff: None,
            tensors: Vec::new(),
        }
    }

    const BASELINE: &str = r#"
format: 1
backend: rt
expected:
  - case: a
    outcome: fail
    reason: "ties go the wrong way"
  - case: b
    outcome: unsupported
    reason: "no FLOAT16 kernel"
  - case: c
    outcome: fail
    reason: "NaN ignored"
  - case: gone
    outcome: crash
    reason: "used to crash"
"#;

    #[test]
    fn parses_and_checks_entries() {
        let baseline = Baseline::parse(BASELINE).unwrap();
        assert_eq!(baseline.backend, "rt");
        assert_eq!(baseline.expected.len(), 4);
        assert_eq!(baseline.expected[1].outcome, Outcome::Unsupported);

        let bad = |text: &str, needle: &str| {
            let error = Baseline::parse(text).unwrap_err();
            assert!(error.contains(needle), "{error}");
        };
        bad("format: 2\nbackend: rt\n", "format 2 is not supported");
        bad(
            "format: 1\nbackend: rt\nexpected: [{case: a, outcome: pass, reason: r}]\n",
            "is not a failure",
        );
        bad(
            "format: 1\nbackend: rt\nexpected: [{case: a, outcome: fail, reason: ' '}]\n",
            "give a reason",
        );
        bad(
            "format: 1\nbackend: rt\nexpected: [{case: a, outcome: fail, reason: r}, \
             {case: a, outcome: crash, reason: r}]\n",
            "more than once",
        );
        bad(
            "format: 1\nbackend: rt\nexpected: [{case: a, outcome: broken, reason: r}]\n",
            "unknown variant",
        );
        bad("format: 1\nbackend: rt\nextra: 1\n", "unknown field");
    }

    #[test]
    fn finds_new_failures_and_newly_passing_cases() {
        let baseline = Baseline::parse(BASELINE).unwrap();
        let results = vec![
            // In the baseline with the same outcome: expected.
            result("a", Outcome::Fail, CaseClass::Required),
            // In the baseline, now passing: the baseline can be tightened.
            result("b", Outcome::Pass, CaseClass::Required),
            // In the baseline with another outcome: a new failure.
            result("c", Outcome::Crash, CaseClass::Required),
            // Not in the baseline: new failures (unsupported blocks certification too).
            result("d", Outcome::Fail, CaseClass::Required),
            result("e", Outcome::Unsupported, CaseClass::Required),
            // Informational cases never fail a baseline run.
            result("f", Outcome::Fail, CaseClass::Informational),
            result("g", Outcome::Pass, CaseClass::Required),
        ];
        let comparison = baseline.compare("base.yaml", &results);
        assert_eq!(comparison.baseline, "base.yaml");
        assert_eq!(comparison.entries, 4);
        assert_eq!(comparison.still_failing, 1);
        let new: Vec<(&str, Outcome, Option<Outcome>)> = comparison
            .new_failures
            .iter()
            .map(|f| (f.case.as_str(), f.outcome, f.baseline_outcome))
            .collect();
        assert_eq!(
            new,
            vec![
                ("c", Outcome::Crash, Some(Outcome::Fail)),
                ("d", Outcome::Fail, None),
                ("e", Outcome::Unsupported, None),
            ]
        );
        assert_eq!(comparison.new_failures[1].detail, "fail happened");
        assert_eq!(comparison.newly_passing.len(), 1);
        assert_eq!(comparison.newly_passing[0].case, "b");
        assert_eq!(comparison.newly_passing[0].reason, "no FLOAT16 kernel");
        assert_eq!(comparison.not_run, vec!["gone".to_string()]);
        assert!(!comparison.is_clean());
    }

    #[test]
    fn a_run_matching_its_baseline_is_clean() {
        let baseline = Baseline::parse(BASELINE).unwrap();
        let results = vec![
            result("a", Outcome::Fail, CaseClass::Required),
            result("b", Outcome::Unsupported, CaseClass::Required),
            result("c", Outcome::Fail, CaseClass::Required),
            result("gone", Outcome::Crash, CaseClass::Required),
            result("x", Outcome::Pass, CaseClass::Required),
        ];
        let comparison = baseline.compare("b.yaml", &results);
        assert!(comparison.is_clean());
        assert_eq!(comparison.still_failing, 4);
        assert!(comparison.newly_passing.is_empty());
        assert!(comparison.not_run.is_empty());
    }

    #[test]
    fn from_results_round_trips_through_yaml() {
        let results = vec![
            result("z", Outcome::Timeout, CaseClass::Required),
            result("y", Outcome::Pass, CaseClass::Required),
            result("x", Outcome::Fail, CaseClass::Informational),
            result("w", Outcome::Rejected, CaseClass::Required),
        ];
        let baseline = Baseline::from_results("rt", &results, "to triage");
        let text = baseline.to_yaml();
        let parsed = Baseline::parse(&text).unwrap();
        let cases: Vec<&str> = parsed.expected.iter().map(|e| e.case.as_str()).collect();
        assert_eq!(cases, vec!["w", "z"]);
        assert!(parsed.compare("b", &results).is_clean());
    }
}
