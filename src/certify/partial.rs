//! `results.partial.jsonl`: results appended to the report folder as they arrive, one JSON line
//! per case, so that an interrupted certification loses nothing already recorded. The final
//! reports replace it at the end of the run.

use crate::runner::CaseResult;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file results are appended to during a run.
pub const PARTIAL_RESULTS: &str = "results.partial.jsonl";

/// Where a partial file left by an interrupted run is moved when a new run starts.
pub const INTERRUPTED_RESULTS: &str = "results.interrupted.jsonl";

/// An open `results.partial.jsonl`, safe to append to from several threads.
pub struct PartialResults {
    path: PathBuf,
    file: Mutex<File>,
    error: Mutex<Option<io::Error>>,
}

impl PartialResults {
    /// Creates `dir/results.partial.jsonl` (and `dir`). A partial file already there is from an
    /// interrupted run: it is moved to `results.interrupted.jsonl` rather than lost. Returns
    /// the writer and whether such a file was moved.
    pub fn create(dir: &Path) -> io::Result<(PartialResults, bool)> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(PARTIAL_RESULTS);
        let moved = path.exists();
        if moved {
            std::fs::rename(&path, dir.join(INTERRUPTED_RESULTS))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)?;
        Ok((
            PartialResults {
                path,
                file: Mutex::new(file),
                error: Mutex::new(None),
            },
            moved,
        ))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one result as a JSON line with a single write (the file is unbuffered, so the
    /// line reaches the operating system at once). The first error is kept for
    /// [`PartialResults::finish`]; later results are still attempted.
    pub fn append(&self, result: &CaseResult) {
        let outcome = serde_json::to_string(result)
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

    /// Ends the run's appends: the first error an append met, if any. The file stays until
    /// [`PartialResults::remove`].
    pub fn finish(&self) -> io::Result<()> {
        match self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Removes the file, once the final reports are written.
    pub fn remove(self) -> io::Result<()> {
        drop(self.file);
        std::fs::remove_file(&self.path)
    }
}

/// Reads the results a partial (or interrupted) file holds, skipping a torn last line.
pub fn read_partial(path: &Path) -> io::Result<Vec<CaseResult>> {
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
    use crate::runner::Outcome;
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
    fn appends_lines_and_keeps_an_interrupted_file() {
        let dir = std::env::temp_dir().join(format!("opconform-partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (partial, moved) = PartialResults::create(&dir).unwrap();
        assert!(!moved);
        partial.append(&result("a"));
        partial.append(&result("b"));
        // Readable while the run goes on, as after an interruption.
        let read = read_partial(partial.path()).unwrap();
        assert_eq!(
            read.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        drop(partial);

        let (partial, moved) = PartialResults::create(&dir).unwrap();
        assert!(moved);
        let kept = read_partial(&dir.join(INTERRUPTED_RESULTS)).unwrap();
        assert_eq!(kept.len(), 2);
        partial.append(&result("c"));
        partial.finish().unwrap();
        partial.remove().unwrap();
        assert!(!dir.join(PARTIAL_RESULTS).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
