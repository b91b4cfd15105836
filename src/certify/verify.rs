//! `opconform verify DIR`: recomputes, offline and without a backend, what a report folder
//! claims: its results digest from `results.jsonl`, each recorded verdict from the result and
//! the targets in `run.json`, the suite digest from the case files (with the selection
//! `run.json` records), and, when there is a `certificate.json`, the certificate from the
//! results.

use super::certificate::Certificate;
use crate::case::Case;
use crate::report::rows::ResultRow;
use crate::report::verdict::{verdict, Scope};
use crate::report::{read_reports, results_digest, RunMeta};
use crate::selection::case_set_digest;
use std::collections::BTreeMap;
use std::path::Path;

/// What `verify` found: every check, and whether it held.
#[derive(Debug, Clone, Default)]
pub struct Verification {
    /// (check, held, detail).
    pub checks: Vec<(String, bool, String)>,
}

impl Verification {
    /// True when every check held.
    pub fn holds(&self) -> bool {
        self.checks.iter().all(|(_, ok, _)| *ok)
    }

    fn check(&mut self, name: &str, ok: bool, detail: impl Into<String>) {
        self.checks.push((name.to_string(), ok, detail.into()));
    }
}

/// Verifies the report folder `dir` against the loaded case files `cases` (sorted by id).
/// `Err` when the folder cannot be read.
pub fn verify(dir: &Path, cases: Vec<Case>) -> Result<Verification, String> {
    let meta_path = dir.join("run.json");
    let recorded: RunMeta = serde_json::from_str(
        &std::fs::read_to_string(&meta_path)
            .map_err(|e| format!("{}: {e}", meta_path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let raw_rows = raw_verdicts(&dir.join("results.jsonl"))?;
    let report = read_reports(dir)?;
    let mut v = Verification::default();

    // Verdicts, recomputed from each result and the recorded targets.
    let scope = Scope::new(&report.meta.backend, &report.meta.targets);
    let mut wrong = Vec::new();
    for result in &report.results {
        let baselined = report
            .record(&result.id)
            .is_some_and(|r| r.baseline_reason.is_some());
        let expected = verdict(result, &scope, baselined);
        if let Some(Some(written)) = raw_rows.get(&result.id) {
            if *written != expected.name() {
                wrong.push(format!(
                    "{} says {written}, recomputed {}",
                    result.id,
                    expected.name()
                ));
            }
        }
    }
    v.check(
        "verdicts",
        wrong.is_empty(),
        if wrong.is_empty() {
            format!("{} results", report.results.len())
        } else {
            wrong.join("; ")
        },
    );

    // The results digest.
    let digest = results_digest(&report.results, &report.records);
    v.check(
        "results digest",
        recorded.results_digest == digest,
        format!("run.json {}, recomputed {digest}", recorded.results_digest),
    );

    // The suite digest, from the case files and the recorded selection.
    let pick = recorded.selection.to_pick()?;
    let suite = pick.apply(cases);
    let suite_digest = case_set_digest(&suite);
    v.check(
        "suite digest",
        recorded.case_set_digest == suite_digest,
        format!(
            "run.json {}, recomputed from {} case(s) {suite_digest}",
            recorded.case_set_digest,
            suite.len()
        ),
    );
    let by_id: BTreeMap<&str, &Case> = suite.iter().map(|c| (c.id.as_str(), c)).collect();
    let strangers: Vec<&str> = report
        .results
        .iter()
        .filter(|r| {
            by_id
                .get(r.id.as_str())
                .is_none_or(|c| c.level != r.level || c.class != r.class || c.kind() != r.operator)
        })
        .map(|r| r.id.as_str())
        .collect();
    v.check(
        "results match the case files",
        strangers.is_empty(),
        if strangers.is_empty() {
            "every result names a case of the suite with its level, class and operator".into()
        } else {
            format!("not in the suite as reported: {}", strangers.join(", "))
        },
    );

    // The certificate, rebuilt from the results.
    let cert_path = dir.join("certificate.json");
    if cert_path.exists() {
        let text = std::fs::read_to_string(&cert_path)
            .map_err(|e| format!("{}: {e}", cert_path.display()))?;
        let written: Certificate =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", cert_path.display()))?;
        let mut rebuilt = Certificate::build(
            &written.harness_version,
            &written.backend,
            &written.targets,
            &written.case_set_digest,
            &report.results,
        );
        if written.interrupted {
            rebuilt.mark_interrupted();
        }
        v.check(
            "certificate verdict",
            rebuilt.certified == written.certified && rebuilt.operators == written.operators,
            format!(
                "certificate.json certified={}, recomputed certified={}",
                written.certified, rebuilt.certified
            ),
        );
        v.check(
            "certificate digests",
            written.case_set_digest == recorded.case_set_digest && written.results_digest == digest,
            "certificate.json names the same suite and results as run.json",
        );
    }
    Ok(v)
}

/// The verdict each line of a results file records, by case id.
fn raw_verdicts(path: &Path) -> Result<BTreeMap<String, Option<&'static str>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Ok(ResultRow::Case(line)) = serde_json::from_str::<ResultRow>(line) {
            out.insert(
                line.result.id.clone(),
                line.record.verdict.map(|v| v.name()),
            );
        }
    }
    Ok(out)
}
