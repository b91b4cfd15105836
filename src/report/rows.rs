//! The lines of `results.jsonl` (and of the partial and interrupted files): one per case that
//! ran ([`CaseResult`]), and one per load error ([`LoadErrorRow`], outcome `load_error`), so a
//! case whose file does not load is reported rather than missing.

use super::verdict::Verdict;
use crate::case::LoadError;
use crate::runner::CaseResult;
use serde::{Deserialize, Serialize};

/// What `results.jsonl` says of a case beyond its [`CaseResult`]: its tags, how long it took,
/// its [`Verdict`] and, when a baseline expects it, the baseline's reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseRecord {
    /// The case's tags (from its case file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Wall time of the case on its worker, in milliseconds (not part of the results digest).
    #[serde(default)]
    pub time_ms: u64,
    /// How the result counts; absent in rows written before verdicts were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The baseline's reason, for a baselined failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_reason: Option<String>,
}

/// A case line of `results.jsonl`: the result and its record, as one flat JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseLine {
    /// What the runner reported.
    #[serde(flatten)]
    pub result: CaseResult,
    /// Tags, time, verdict.
    #[serde(flatten)]
    pub record: CaseRecord,
}

/// The outcome written on a load-error line: always `load_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoadErrorOutcome {
    /// The case (or its whole file) did not load.
    #[serde(rename = "load_error")]
    LoadError,
}

/// A case, or a case file, that did not load: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadErrorRow {
    /// The case id, when the loader could read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The file, as given on the command line.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// The field, e.g. `cases[2].inputs.IndicesTensor.data` (empty when the whole file).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
    /// Always [`LoadErrorOutcome::LoadError`].
    pub outcome: LoadErrorOutcome,
    /// What is wrong.
    pub detail: String,
}

impl LoadErrorRow {
    /// `file:line:column`, and the field when there is one.
    pub fn place(&self) -> String {
        let mut place = format!("{}:{}:{}", self.file, self.line, self.column);
        if !self.field.is_empty() {
            place.push_str(": ");
            place.push_str(&self.field);
        }
        place
    }

    /// The name a report gives it: the case id when known, else its place.
    pub fn name(&self) -> String {
        self.id.clone().unwrap_or_else(|| self.place())
    }
}

impl From<&LoadError> for LoadErrorRow {
    fn from(error: &LoadError) -> LoadErrorRow {
        LoadErrorRow {
            id: error.case_id.clone(),
            file: error.file.display().to_string(),
            line: error.line,
            column: error.column,
            field: error.field.clone(),
            outcome: LoadErrorOutcome::LoadError,
            detail: error.message.clone(),
        }
    }
}

/// One line of a results file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResultRow {
    /// A case that ran.
    Case(Box<CaseLine>),
    /// A case or file that did not load.
    LoadError(LoadErrorRow),
}

impl ResultRow {
    /// The case id, or for a load error its [`LoadErrorRow::name`].
    pub fn id(&self) -> String {
        match self {
            ResultRow::Case(line) => line.result.id.clone(),
            ResultRow::LoadError(row) => row.name(),
        }
    }
}

/// Splits rows into case lines and load errors.
pub fn split(rows: Vec<ResultRow>) -> (Vec<CaseLine>, Vec<LoadErrorRow>) {
    let mut results = Vec::new();
    let mut load_errors = Vec::new();
    for row in rows {
        match row {
            ResultRow::Case(line) => results.push(*line),
            ResultRow::LoadError(row) => load_errors.push(row),
        }
    }
    (results, load_errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_load_error_is_a_line_with_outcome_load_error() {
        let error = LoadError {
            file: PathBuf::from("cases/hand/x.yaml"),
            line: 3,
            column: 7,
            field: "cases[0].level".into(),
            message: "unknown level `9_9`".into(),
            case_id: None,
        };
        let row = LoadErrorRow::from(&error);
        let line = serde_json::to_string(&row).unwrap();
        assert_eq!(
            line,
            r#"{"file":"cases/hand/x.yaml","line":3,"column":7,"field":"cases[0].level","outcome":"load_error","detail":"unknown level `9_9`"}"#
        );
        let read: ResultRow = serde_json::from_str(&line).unwrap();
        assert_eq!(read, ResultRow::LoadError(row.clone()));
        assert_eq!(read.id(), "cases/hand/x.yaml:3:7: cases[0].level");
        // Another outcome is not a load error.
        let other = line.replace("load_error", "crash");
        assert!(serde_json::from_str::<ResultRow>(&other).is_err());
    }
}
