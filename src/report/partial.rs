//! `results.partial.jsonl`: the rows of a run appended to the report folder as they arrive, one
//! JSON line each, so that a run that is interrupted or killed loses nothing already recorded.
//! [`super::folder::ReportFolder`] creates it, keeps it when a run is cut short, and drops it
//! with the old reports when the new ones are in place.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::rows::ResultRow;

/// The file rows are appended to during a run.
pub const PARTIAL_RESULTS: &str = "results.partial.jsonl";

/// The name of the first interrupted run's rows; later ones are `results.interrupted.2.jsonl`,
/// `results.interrupted.3.jsonl` and so on, so no interruption overwrites another.
pub const INTERRUPTED_RESULTS: &str = "results.interrupted.jsonl";

/// The name of the `n`-th file of interrupted results (1-based).
pub fn interrupted_name(n: usize) -> String {
    if n <= 1 {
        INTERRUPTED_RESULTS.to_string()
    } else {
        format!("results.interrupted.{n}.jsonl")
    }
}

/// True when `name` is an interrupted-results file ([`interrupted_name`] of some `n`).
pub fn is_interrupted_name(name: &str) -> bool {
    name == INTERRUPTED_RESULTS
        || name
            .strip_prefix("results.interrupted.")
            .and_then(|rest| rest.strip_suffix(".jsonl"))
            .is_some_and(|n| {
                n.parse::<usize>()
                    .is_ok_and(|n| n >= 2 && interrupted_name(n) == name)
            })
}

/// An open `results.partial.jsonl`, safe to append to from several threads.
#[derive(Debug)]
pub struct PartialResults {
    path: PathBuf,
    file: Mutex<File>,
    error: Mutex<Option<io::Error>>,
}

impl PartialResults {
    /// Creates the file at `path`, which must not exist: a file or a link already there is an
    /// error, so nothing is written through a link.
    pub fn create_new(path: &Path) -> io::Result<PartialResults> {
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(PartialResults {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            error: Mutex::new(None),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one row as a JSON line with a single write (the file is unbuffered, so the line
    /// reaches the operating system at once and survives a kill). The first error is kept for
    /// [`PartialResults::error`]; later rows are still attempted.
    pub fn append<T: Serialize>(&self, row: &T) {
        let outcome = serde_json::to_string(row)
            .map_err(io::Error::other)
            .and_then(|mut line| {
                line.push('\n');
                let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
                file.write_all(line.as_bytes())?;
                file.flush()
            });
        if let Err(error) = outcome {
            let mut first = self.error.lock().unwrap_or_else(|e| e.into_inner());
            first.get_or_insert(error);
        }
    }

    /// The first error an append met, if any (taken: a second call returns `None`).
    pub fn error(&self) -> Option<io::Error> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Reads the rows a partial (or interrupted) file holds, skipping lines that do not parse (a
/// torn last line).
pub fn read_partial(path: &Path) -> io::Result<Vec<ResultRow>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::CaseClass;
    use crate::runner::{CaseResult, Outcome};
    use opconform_backend::{Level, OperatorKind};

    fn result(id: &str) -> CaseResult {
        CaseResult {
            id: id.into(),
            operator: OperatorKind::DmlArgMax,
            level: Level::dml(0x3000),
            class: CaseClass::Required,
            negative: false,
            outcome: Outcome::Pass,
            detail: String::new(),
            diff: None,
            tensors: Vec::new(),
        }
    }

    #[test]
    fn appends_lines_readable_while_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PARTIAL_RESULTS);
        let partial = PartialResults::create_new(&path).unwrap();
        partial.append(&result("a"));
        partial.append(&result("b"));
        let read = read_partial(partial.path()).unwrap();
        assert_eq!(
            read.iter().map(ResultRow::id).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(partial.error().is_none());
        // A second writer cannot take over the file.
        assert!(PartialResults::create_new(&path).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_its_place_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let path = dir.path().join(PARTIAL_RESULTS);
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        assert!(PartialResults::create_new(&path).is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    }

    #[test]
    fn interrupted_names_count_up() {
        assert_eq!(interrupted_name(1), "results.interrupted.jsonl");
        assert_eq!(interrupted_name(3), "results.interrupted.3.jsonl");
        for n in 1..5 {
            assert!(is_interrupted_name(&interrupted_name(n)));
        }
        for other in [
            "results.interrupted.1.jsonl",
            "results.interrupted.02.jsonl",
            "results.interrupted.x.jsonl",
            "results.jsonl",
        ] {
            assert!(!is_interrupted_name(other), "{other}");
        }
    }
}
