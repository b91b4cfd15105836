//! Reports of a run, written into a report folder replaced as a whole ([`folder`]):
//! `run.json` (what ran), `results.jsonl` (one line per case, and one per load error),
//! `junit.xml`, `summary.md` and a self-contained `index.html` with per-operator compliance
//! matrices and every failure's diff. Nothing in them depends on time or on absolute paths, so
//! committed copies stay stable.

pub mod compliance;
pub mod escape;
pub mod folder;
mod html;
mod junit;
mod markdown;
pub mod partial;
pub mod rows;

use crate::runner::{CaseResult, Outcome};
use folder::{Committed, FolderError, ReportFolder};
use opconform_backend::{BackendInfo, Level, OperatorKind};
use rows::{LoadErrorRow, ResultRow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write as _};
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
    /// True when the run was stopped (SIGINT, SIGTERM) before every case ran: the results
    /// cover only the cases that did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// Everything a report folder says about one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// What ran.
    pub meta: RunMeta,
    /// One result per case that ran, sorted by id.
    pub results: Vec<CaseResult>,
    /// The cases and files that did not load, in file order.
    pub load_errors: Vec<LoadErrorRow>,
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

/// Writes `contents` to `path` atomically: a temporary file with a unique name beside it
/// (created exclusively, so no link is followed), then a rename over `path`.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(parent)?;
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The report files of a run, by name: `run.json`, `results.jsonl`, `junit.xml`, `summary.md`
/// and `index.html`.
pub fn render_files(report: &RunReport) -> io::Result<Vec<(&'static str, String)>> {
    let meta_json = serde_json::to_string_pretty(&report.meta).map_err(io::Error::other)? + "\n";
    let mut lines = String::new();
    for result in &report.results {
        lines.push_str(&serde_json::to_string(result).map_err(io::Error::other)?);
        lines.push('\n');
    }
    for row in &report.load_errors {
        lines.push_str(&serde_json::to_string(row).map_err(io::Error::other)?);
        lines.push('\n');
    }
    Ok(vec![
        ("run.json", meta_json),
        ("results.jsonl", lines),
        ("junit.xml", junit::render(report)?),
        ("summary.md", markdown::render(report)),
        ("index.html", html::render(report)),
    ])
}

/// Writes the reports of a run as the whole contents of `dir` ([`ReportFolder`]: locked,
/// replaced in one rename, interrupted results kept).
pub fn write_reports(dir: &Path, report: &RunReport) -> Result<Committed, FolderError> {
    let folder = ReportFolder::open(dir)?;
    let files = render_files(report).map_err(|error| FolderError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_bytes())).collect();
    folder.commit(&files, report.meta.interrupted)
}

/// Reads a report folder's `run.json` and `results.jsonl`.
pub fn read_reports(dir: &Path) -> Result<RunReport, String> {
    let meta_path = dir.join("run.json");
    let meta_text =
        std::fs::read_to_string(&meta_path).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let meta: RunMeta =
        serde_json::from_str(&meta_text).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    let results_path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&results_path)
        .map_err(|e| format!("{}: {e}", results_path.display()))?;
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: ResultRow = serde_json::from_str(line).map_err(|_| {
            format!(
                "{}:{}: neither a case result nor a load error",
                results_path.display(),
                i + 1
            )
        })?;
        rows.push(row);
    }
    let (results, load_errors) = rows::split(rows);
    Ok(RunReport {
        meta,
        results,
        load_errors,
    })
}

/// Combines shard report folders into one run: same backend, level and case set required.
/// Load errors, the same in every shard, are kept once; the run is interrupted when a shard
/// was.
pub fn merge(dirs: &[&Path]) -> Result<RunReport, String> {
    let mut merged: Option<RunMeta> = None;
    let mut results: Vec<CaseResult> = Vec::new();
    let mut load_errors: Vec<LoadErrorRow> = Vec::new();
    for dir in dirs {
        let mut shard = read_reports(dir)?;
        if let Some(first) = &mut merged {
            let same = first.backend == shard.meta.backend
                && first.feature_level == shard.meta.feature_level
                && first.case_set_digest == shard.meta.case_set_digest;
            if !same {
                return Err(format!(
                    "{} is from a different run (backend, level or case set differ)",
                    dir.display()
                ));
            }
            first.interrupted |= shard.meta.interrupted;
        } else {
            merged = Some(shard.meta);
        }
        results.append(&mut shard.results);
        for row in shard.load_errors {
            if !load_errors.contains(&row) {
                load_errors.push(row);
            }
        }
    }
    let mut meta = merged.ok_or("no report folders given")?;
    results.sort_by(|a, b| a.id.cmp(&b.id));
    let before = results.len();
    results.dedup_by(|a, b| a.id == b.id);
    if results.len() != before {
        return Err("the shards overlap: a case appears in more than one".to_string());
    }
    meta.shard = None;
    Ok(RunReport {
        meta,
        results,
        load_errors,
    })
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
