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
pub mod scoreboard;
pub mod timing;
pub mod verdict;

use crate::runner::{CaseResult, Outcome};
use folder::{Committed, FolderError, ReportFolder};
use opconform_backend::{BackendInfo, Level, OperatorKind};
use rows::{CaseLine, CaseRecord, LoadErrorRow, ResultRow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::Path;
use verdict::{Scope, Verdict};

/// What a run was: the backend, the level it certified, and the exact case set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMeta {
    /// The opconform version that ran it.
    pub harness_version: String,
    /// The backend's self-description.
    pub backend: BackendInfo,
    /// The DirectML level the run targets (cases above it are left out).
    pub feature_level: Level,
    /// The levels the results are judged at, one per family (the DirectML feature level and
    /// the backend's OpenVINO claim); empty in reports written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Level>,
    /// SHA-256 of the suite (see `selection::case_set_digest`): the cases selected by the
    /// user's filters, whatever the backend claims, so the same suite gives the same digest on
    /// every backend; for a shard, the digest of the whole suite it is part of.
    pub case_set_digest: String,
    /// SHA-256 of the results (see [`results_digest`]), so a report names what it says.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub results_digest: String,
    /// The user's selection (`--filter`, `--skip`, `--case-list`), for `opconform verify`.
    #[serde(
        default,
        skip_serializing_if = "crate::selection::SelectionRecord::is_empty"
    )]
    pub selection: crate::selection::SelectionRecord,
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
    /// Per case id: tags, time and verdict (every result has one, see [`RunReport::new`]).
    pub records: BTreeMap<String, CaseRecord>,
}

impl RunReport {
    /// A report of `results` (sorted by id): fills every missing verdict from the scope of
    /// `meta` (its targets, or the backend's claims at its feature level) and sets
    /// `meta.results_digest`.
    pub fn new(
        mut meta: RunMeta,
        results: Vec<CaseResult>,
        load_errors: Vec<LoadErrorRow>,
        mut records: BTreeMap<String, CaseRecord>,
    ) -> RunReport {
        if meta.targets.is_empty() {
            meta.targets = default_targets(&meta.backend, meta.feature_level);
        }
        let scope = Scope::new(&meta.backend, &meta.targets);
        for result in &results {
            let record = records.entry(result.id.clone()).or_default();
            if record.verdict.is_none() {
                let baselined = record.baseline_reason.is_some();
                record.verdict = Some(verdict::verdict(result, &scope, baselined));
            }
        }
        records.retain(|id, _| results.binary_search_by(|r| r.id.as_str().cmp(id)).is_ok());
        meta.results_digest = results_digest(&results, &records);
        RunReport {
            meta,
            results,
            load_errors,
            records,
        }
    }

    /// The verdict of the case `id` ([`Verdict::Pass`] for an unknown id).
    pub fn verdict(&self, id: &str) -> Verdict {
        self.records
            .get(id)
            .and_then(|r| r.verdict)
            .unwrap_or(Verdict::Pass)
    }

    /// The record of the case `id`, if any.
    pub fn record(&self, id: &str) -> Option<&CaseRecord> {
        self.records.get(id)
    }

    /// The results whose verdict is [`Verdict::Failure`]: what fails the run.
    pub fn failures(&self) -> Vec<&CaseResult> {
        self.results
            .iter()
            .filter(|r| self.verdict(&r.id) == Verdict::Failure)
            .collect()
    }

    /// The case lines of `results.jsonl`, in id order.
    pub fn lines(&self) -> Vec<CaseLine> {
        self.results
            .iter()
            .map(|r| CaseLine {
                result: r.clone(),
                record: self.records.get(&r.id).cloned().unwrap_or_default(),
            })
            .collect()
    }
}

/// The targets of a run report written before targets were recorded: `feature_level` and the
/// backend's OpenVINO claims.
fn default_targets(backend: &BackendInfo, feature_level: Level) -> Vec<Level> {
    let mut targets = vec![feature_level];
    targets.extend(
        backend
            .claims
            .iter()
            .copied()
            .filter(|c| c.family() != feature_level.family()),
    );
    targets
}

/// SHA-256 over every result and its verdict and tags, in id order (times are left out, so
/// two runs that said the same thing have the same digest).
pub fn results_digest(results: &[CaseResult], records: &BTreeMap<String, CaseRecord>) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for result in results {
        hasher.update(serde_json::to_vec(result).expect("a result serialises"));
        if let Some(record) = records.get(&result.id) {
            let verdict = record.verdict.map_or("", Verdict::name);
            hasher.update(verdict.as_bytes());
            hasher.update(record.tags.join(",").as_bytes());
            hasher.update(record.baseline_reason.as_deref().unwrap_or("").as_bytes());
        }
        hasher.update(b"\n");
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Per-operator counts: required and informational cases apart, and every verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Outcome → number of cases (required and informational together).
    pub by_outcome: BTreeMap<Outcome, usize>,
    /// Verdict → number of cases.
    pub by_verdict: BTreeMap<Verdict, usize>,
    /// Outcomes of the cases whose verdict is [`Verdict::Failure`].
    pub failing_outcomes: BTreeMap<Outcome, usize>,
    /// Required cases.
    pub required: usize,
    /// Required cases that passed.
    pub required_passed: usize,
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

    /// Number of cases with `verdict`.
    pub fn verdict(&self, verdict: Verdict) -> usize {
        self.by_verdict.get(&verdict).copied().unwrap_or(0)
    }

    /// The failing cell: `0`, or `2 (1 fail, 1 unsupported)`.
    pub fn failing_text(&self) -> String {
        let failing = self.verdict(Verdict::Failure);
        if failing == 0 {
            return "0".to_string();
        }
        let parts: Vec<String> = self
            .failing_outcomes
            .iter()
            .map(|(o, n)| format!("{n} {}", o.name()))
            .collect();
        format!("{failing} ({})", parts.join(", "))
    }
}

/// Counts the cases of `operator` in `report`.
pub fn counts(operator: OperatorKind, report: &RunReport) -> Counts {
    let mut counts = Counts::default();
    for r in report.results.iter().filter(|r| r.operator == operator) {
        *counts.by_outcome.entry(r.outcome).or_default() += 1;
        let verdict = report.verdict(&r.id);
        *counts.by_verdict.entry(verdict).or_default() += 1;
        if verdict == Verdict::Failure {
            *counts.failing_outcomes.entry(r.outcome).or_default() += 1;
        }
        let passed = usize::from(r.outcome == Outcome::Pass);
        if r.class == crate::case::CaseClass::Informational {
            counts.informational += 1;
            counts.informational_passed += passed;
        } else {
            counts.required += 1;
            counts.required_passed += passed;
        }
    }
    counts
}

/// The summary table's header cells, shared by the console, `summary.md` and `index.html`.
pub const SUMMARY_HEADER: [&str; 7] = [
    "operator",
    "required passed",
    "failing",
    "baselined",
    "not claimed",
    "informational passed",
    "highest level passed",
];

/// One summary row per operator present in the report, as text cells matching
/// [`SUMMARY_HEADER`]: required cases apart from informational ones, failures by verdict.
pub fn summary_rows(report: &RunReport) -> Vec<Vec<String>> {
    let results = report.results.as_slice();
    operators_in(results)
        .into_iter()
        .map(|op| {
            let c = counts(op, report);
            let target = crate::certify::certificate::target_for(&report.meta.targets, op.family())
                .or(Some(report.meta.feature_level));
            let level = compliance::highest_level_passed(op, results, target)
                .map_or_else(|| "none".to_string(), |l| l.to_string());
            vec![
                op.name().to_string(),
                format!("{}/{}", c.required_passed, c.required),
                c.failing_text(),
                c.verdict(Verdict::Baselined).to_string(),
                c.verdict(Verdict::NotClaimed).to_string(),
                format!("{}/{}", c.informational_passed, c.informational),
                level,
            ]
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

/// The anchor of a case's entry in `index.html` (`index.html#<anchor>`).
pub fn html_anchor(id: &str) -> String {
    html::anchor(id)
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
    let matrices = compliance::matrices(&report.results, &report.meta.targets);
    let meta_json = serde_json::to_string_pretty(&report.meta).map_err(io::Error::other)? + "\n";
    let mut lines = String::new();
    for line in report.lines() {
        lines.push_str(&serde_json::to_string(&line).map_err(io::Error::other)?);
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
        ("summary.md", markdown::render(report, &matrices)),
        ("index.html", html::render(report, &matrices)),
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
    let (lines, load_errors) = rows::split(rows);
    let mut results = Vec::new();
    let mut records = BTreeMap::new();
    for line in lines {
        records.insert(line.result.id.clone(), line.record);
        results.push(line.result);
    }
    results.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(RunReport::new(meta, results, load_errors, records))
}

/// Combines shard report folders into one run: same backend, level and suite digest
/// required, and (unless `allow_partial`) every shard `K/N` of one `N` present exactly once.
/// Load errors, the same in every shard, are kept once; the run is interrupted when a shard
/// was, or when shards are missing.
pub fn merge(dirs: &[&Path], allow_partial: bool) -> Result<RunReport, String> {
    let mut merged: Option<RunMeta> = None;
    let mut results: Vec<CaseResult> = Vec::new();
    let mut records: BTreeMap<String, CaseRecord> = BTreeMap::new();
    let mut load_errors: Vec<LoadErrorRow> = Vec::new();
    let mut shards: Vec<(String, Option<crate::selection::Shard>)> = Vec::new();
    for dir in dirs {
        let shard = read_reports(dir)?;
        let shard_of = match &shard.meta.shard {
            Some(text) => Some(
                text.parse::<crate::selection::Shard>()
                    .map_err(|e| format!("{}: run.json: shard: {e}", dir.display()))?,
            ),
            None => None,
        };
        shards.push((dir.display().to_string(), shard_of));
        if let Some(first) = &mut merged {
            let same = first.backend == shard.meta.backend
                && first.feature_level == shard.meta.feature_level
                && first.case_set_digest == shard.meta.case_set_digest;
            if !same {
                return Err(format!(
                    "{} is from a different run (backend, level or case set digest differ)",
                    dir.display()
                ));
            }
            first.interrupted |= shard.meta.interrupted;
        } else {
            merged = Some(shard.meta.clone());
        }
        results.extend(shard.results);
        records.extend(shard.records);
        for row in shard.load_errors {
            if !load_errors.contains(&row) {
                load_errors.push(row);
            }
        }
    }
    let mut meta = merged.ok_or("no report folders given")?;
    let missing = check_shards(&shards)?;
    if !missing.is_empty() {
        if !allow_partial {
            return Err(format!(
                "incomplete set of shards: {} missing (give --allow-partial to merge them \
                 anyway; the merged run is then marked interrupted)",
                missing.join(", ")
            ));
        }
        meta.interrupted = true;
    }
    results.sort_by(|a, b| a.id.cmp(&b.id));
    let before = results.len();
    results.dedup_by(|a, b| a.id == b.id);
    if results.len() != before {
        return Err("the shards overlap: a case appears in more than one".to_string());
    }
    meta.shard = None;
    meta.results_digest.clear();
    Ok(RunReport::new(meta, results, load_errors, records))
}

/// Checks the shards of a merge: all of one count `N`, none twice; returns the missing ones
/// (`2/4`). A folder that is not a shard (a whole run) may only be merged alone.
fn check_shards(
    shards: &[(String, Option<crate::selection::Shard>)],
) -> Result<Vec<String>, String> {
    let mut count = None;
    let mut seen = std::collections::BTreeSet::new();
    for (dir, shard) in shards {
        let Some(shard) = shard else {
            if shards.len() > 1 {
                return Err(format!("{dir} is a whole run, not a shard"));
            }
            return Ok(Vec::new());
        };
        if *count.get_or_insert(shard.count) != shard.count {
            return Err(format!(
                "{dir} is shard {shard}, of another count of shards"
            ));
        }
        if !seen.insert(shard.index) {
            return Err(format!("{dir}: shard {shard} is given twice"));
        }
    }
    let count = count.unwrap_or(0);
    Ok((1..=count)
        .filter(|k| !seen.contains(k))
        .map(|k| format!("{k}/{count}"))
        .collect())
}

/// The table printed at the end of a run: [`summary_rows`] in aligned columns.
pub fn terminal_table(report: &RunReport) -> String {
    let rows = summary_rows(report);
    let mut widths: Vec<usize> = SUMMARY_HEADER.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = SUMMARY_HEADER.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

/// The records of `cases`: their tags, and their times from `times` (milliseconds by id);
/// verdicts are filled in by [`RunReport::new`].
pub fn case_records(
    cases: &[crate::case::Case],
    times: &BTreeMap<String, u64>,
) -> BTreeMap<String, CaseRecord> {
    cases
        .iter()
        .map(|case| {
            let record = CaseRecord {
                tags: case.tags.clone(),
                time_ms: times.get(&case.id).copied().unwrap_or(0),
                verdict: None,
                baseline_reason: None,
            };
            (case.id.clone(), record)
        })
        .collect()
}
