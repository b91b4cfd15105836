//! Reports of a run, written atomically into a report folder:
//! `run.json` (what ran), `results.jsonl` (one line per case), `junit.xml`, `summary.md` and a
//! self-contained `index.html` with per-operator compliance matrices and every failure's diff.
//! Nothing in them depends on time or on absolute paths, so committed copies stay stable.

pub mod compliance;
mod html;
mod junit;
mod markdown;

use crate::runner::{CaseResult, Outcome};
use opconform_backend::{BackendInfo, Level, OperatorKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// What a run was: the backend, the level it certified, and the exact case set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMeta {
    /// The opconform version that ran it.
    pub harness_version: String,
    /// The backend's self-description.
    pub backend: BackendInfo,
    /// The DirectML level the run targets (cases above it are left out).
    pub feature_level: Level,
    /// SHA-256 of the case set (see `selection::case_set_digest`), so a report names what
    /// ran; for a shard, the digest of the whole run it is part of.
    pub case_set_digest: String,
    /// Number of cases in the whole run (all shards).
    pub case_count: usize,
    /// `K/N` when this is one shard of a sharded run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

/// Per-operator counts of outcomes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Outcome → number of cases (required and informational together).
    pub by_outcome: BTreeMap<Outcome, usize>,
    /// Informational cases, counted apart.
    pub informational: usize,
    /// Informational cases that passed.
    pub informational_passed: usize,
}

impl Counts {
    /// Number of cases with `outcome`.
    pub fn get(&self, outcome: Outcome) -> usize {
        self.by_outcome.get(&outcome).copied().unwrap_or(0)
    }

    /// Cases that failed in any way (fail, rejected, error, crash, timeout).
    pub fn failed(&self) -> usize {
        Outcome::ALL
            .iter()
            .filter(|o| o.is_failure())
            .map(|&o| self.get(o))
            .sum()
    }
}

/// Counts outcomes of `operator`'s cases.
pub fn counts(operator: OperatorKind, results: &[CaseResult]) -> Counts {
    let mut counts = Counts::default();
    for r in results.iter().filter(|r| r.operator == operator) {
        *counts.by_outcome.entry(r.outcome).or_default() += 1;
        if r.class == crate::case::CaseClass::Informational {
            counts.informational += 1;
            counts.informational_passed += usize::from(r.outcome == Outcome::Pass);
        }
    }
    counts
}

/// The summary table's header cells, shared by `summary.md` and `index.html`.
pub const SUMMARY_HEADER: [&str; 10] = [
    "operator",
    "pass",
    "fail",
    "rejected",
    "unsupported",
    "error",
    "crash",
    "timeout",
    "informational passed",
    "highest level passed",
];

/// One summary row per operator present in `results`, as text cells matching
/// [`SUMMARY_HEADER`].
pub fn summary_rows(results: &[CaseResult], target: Option<Level>) -> Vec<Vec<String>> {
    operators_in(results)
        .into_iter()
        .map(|op| {
            let c = counts(op, results);
            let level = compliance::highest_level_passed(op, results, target)
                .map_or_else(|| "none".to_string(), |l| l.to_string());
            let mut row = vec![op.name().to_string()];
            row.extend(
                [
                    Outcome::Pass,
                    Outcome::Fail,
                    Outcome::Rejected,
                    Outcome::Unsupported,
                    Outcome::Error,
                    Outcome::Crash,
                    Outcome::Timeout,
                ]
                .iter()
                .map(|&o| c.get(o).to_string()),
            );
            row.push(format!("{}/{}", c.informational_passed, c.informational));
            row.push(level);
            row
        })
        .collect()
}

/// Operators present in `results`, in spec order.
pub fn operators_in(results: &[CaseResult]) -> Vec<OperatorKind> {
    OperatorKind::ALL
        .into_iter()
        .filter(|op| results.iter().any(|r| r.operator == *op))
        .collect()
}

/// Writes `contents` to `path` atomically: a temporary file beside it, then a rename.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    std::fs::write(&temporary, contents)?;
    std::fs::rename(&temporary, path)
}

/// Writes every report of a run into `dir` (created if needed). `results` must be sorted by id.
pub fn write_reports(dir: &Path, meta: &RunMeta, results: &[CaseResult]) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let meta_json = serde_json::to_string_pretty(meta).map_err(io::Error::other)? + "\n";
    write_atomic(&dir.join("run.json"), meta_json.as_bytes())?;
    let mut lines = String::new();
    for result in results {
        lines.push_str(&serde_json::to_string(result).map_err(io::Error::other)?);
        lines.push('\n');
    }
    write_atomic(&dir.join("results.jsonl"), lines.as_bytes())?;
    write_atomic(
        &dir.join("junit.xml"),
        junit::render(meta, results)?.as_bytes(),
    )?;
    write_atomic(
        &dir.join("summary.md"),
        markdown::render(meta, results).as_bytes(),
    )?;
    write_atomic(
        &dir.join("index.html"),
        html::render(meta, results).as_bytes(),
    )?;
    Ok(())
}

/// Reads a report folder's `run.json` and `results.jsonl`.
pub fn read_reports(dir: &Path) -> Result<(RunMeta, Vec<CaseResult>), String> {
    let meta_path = dir.join("run.json");
    let meta_text =
        std::fs::read_to_string(&meta_path).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let meta: RunMeta =
        serde_json::from_str(&meta_text).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let results_path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&results_path)
        .map_err(|e| format!("{}: {e}", results_path.display()))?;
    let mut results = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        results.push(
            serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", results_path.display(), i + 1))?,
        );
    }
    Ok((meta, results))
}

/// Combines shard report folders into one run: same backend, level and case set required.
pub fn merge(dirs: &[&Path]) -> Result<(RunMeta, Vec<CaseResult>), String> {
    let mut merged: Option<RunMeta> = None;
    let mut results: Vec<CaseResult> = Vec::new();
    for dir in dirs {
        let (meta, mut shard_results) = read_reports(dir)?;
        if let Some(first) = &merged {
            let same = first.backend == meta.backend
                && first.feature_level == meta.feature_level
                && first.case_set_digest == meta.case_set_digest;
            if !same {
                return Err(format!(
                    "{} is from a different run (backend, level or case set differ)",
                    dir.display()
                ));
            }
        } else {
            merged = Some(meta);
        }
        results.append(&mut shard_results);
    }
    let mut meta = merged.ok_or("no report folders given")?;
    results.sort_by(|a, b| a.id.cmp(&b.id));
    let before = results.len();
    results.dedup_by(|a, b| a.id == b.id);
    if results.len() != before {
        return Err("the shards overlap: a case appears in more than one".to_string());
    }
    meta.shard = None;
    Ok((meta, results))
}

/// The short table printed at the end of a run: per operator, outcomes and the highest level
/// fully passed.
pub fn terminal_table(results: &[CaseResult], target: Option<Level>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<26} {:>6} {:>6} {:>11} {:>13}  highest level passed",
        "operator", "pass", "fail", "unsupported", "informational"
    );
    for op in operators_in(results) {
        let c = counts(op, results);
        let level = compliance::highest_level_passed(op, results, target)
            .map_or_else(|| "none".to_string(), |l| l.to_string());
        let _ = writeln!(
            out,
            "{:<26} {:>6} {:>6} {:>11} {:>13}  {level}",
            op.name(),
            c.get(Outcome::Pass),
            c.failed(),
            c.get(Outcome::Unsupported),
            format!("{}/{}", c.informational_passed, c.informational),
        );
    }
    out
}
