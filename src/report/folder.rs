//! A report folder replaced as a whole, by one run at a time.
//!
//! [`ReportFolder::open`] locks the folder (the lock file `.NAME.lock` beside it, so two runs
//! into one folder cannot mix their files), refuses a folder that is a link or holds files
//! opconform does not write, and keeps the rows of a killed run (`results.partial.jsonl`) as
//! the next free `results.interrupted[.N].jsonl`. While the run goes on its rows are appended
//! to a fresh `results.partial.jsonl`. [`ReportFolder::commit`] writes every report into a new
//! folder beside it (`.NAME.new-XXXXXX`, each file created exclusively, never through a link),
//! carries the interrupted files over, and swaps the new folder in with one rename: a kill at
//! any moment leaves either the old reports or the new ones, never a mixture.

use super::partial::{interrupted_name, is_interrupted_name, PartialResults, PARTIAL_RESULTS};
use serde::Serialize;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Every file opconform writes into a report folder (besides the partial and interrupted
/// results): the reports of a run and the certificate of a certification.
pub const REPORT_FILES: [&str; 7] = [
    "run.json",
    "results.jsonl",
    "junit.xml",
    "summary.md",
    "index.html",
    "certificate.json",
    "certificate.md",
];

/// Why a report folder cannot be used.
#[derive(Debug)]
pub enum FolderError {
    /// Another run holds the folder's lock.
    Busy {
        /// The report folder.
        dir: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The path is not one opconform may replace: a link, a file, or a folder holding files
    /// it did not write.
    Refused {
        /// The report folder.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
    /// The operating system refused an operation.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
}

impl fmt::Display for FolderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FolderError::Busy { dir, lock } => write!(
                f,
                "{}: another opconform run is writing this report folder (it holds {}); wait \
                 for it or give another --report-dir",
                dir.display(),
                lock.display()
            ),
            FolderError::Refused { dir, reason } => write!(f, "{}: {reason}", dir.display()),
            FolderError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for FolderError {}

/// What [`ReportFolder::commit`] did besides writing the reports.
#[derive(Debug, Default)]
pub struct Committed {
    /// Where this run's rows were kept because it was interrupted.
    pub interrupted: Option<PathBuf>,
    /// The first error met appending to `results.partial.jsonl`, if any (the final reports
    /// were written all the same).
    pub partial_error: Option<io::Error>,
}

/// A locked report folder; see the module documentation.
#[derive(Debug)]
pub struct ReportFolder {
    dir: PathBuf,
    parent: PathBuf,
    name: String,
    /// Held (locked) until the folder is dropped.
    _lock: File,
    rescued: Option<PathBuf>,
    partial: Option<PartialResults>,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> FolderError + '_ {
    move |error| FolderError::Io {
        path: path.to_path_buf(),
        error,
    }
}

impl ReportFolder {
    /// Locks `dir` and makes it ready for a run: created if missing (with its parents); a link,
    /// a file, or a folder holding anything but report files is refused; the lock held by
    /// another run is [`FolderError::Busy`]. Leftovers of a killed run are dealt with: its
    /// `results.partial.jsonl` becomes the next free `results.interrupted[.N].jsonl` (see
    /// [`ReportFolder::rescued`]) and its half-written new folders are removed.
    pub fn open(dir: &Path) -> Result<ReportFolder, FolderError> {
        let refused = |reason: String| FolderError::Refused {
            dir: dir.to_path_buf(),
            reason,
        };
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.starts_with('.'))
            .ok_or_else(|| {
                refused("give the report folder by a name (not `.`, `..` or a hidden name)".into())
            })?
            .to_string();
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(io_error(&parent))?;
        let lock_path = parent.join(format!(".{name}.lock"));
        let lock = open_lock(&lock_path).map_err(io_error(&lock_path))?;
        match fs4::FileExt::try_lock(&lock) {
            Ok(()) => {}
            Err(fs4::TryLockError::WouldBlock) => {
                return Err(FolderError::Busy {
                    dir: dir.to_path_buf(),
                    lock: lock_path,
                })
            }
            Err(fs4::TryLockError::Error(error)) => {
                return Err(FolderError::Io {
                    path: lock_path,
                    error,
                })
            }
        }
        remove_stale_staging(&parent, &name);
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refused(
                    "is a symbolic link; give the folder it points to".into(),
                ))
            }
            Ok(meta) if !meta.is_dir() => return Err(refused("is not a folder".into())),
            Ok(_) => check_only_reports(dir).map_err(refused)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir(dir).map_err(io_error(dir))?;
            }
            Err(error) => {
                return Err(FolderError::Io {
                    path: dir.to_path_buf(),
                    error,
                })
            }
        }
        let mut folder = ReportFolder {
            dir: dir.to_path_buf(),
            parent,
            name,
            _lock: lock,
            rescued: None,
            partial: None,
        };
        folder.rescue_partial()?;
        Ok(folder)
    }

    /// The report folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the rows of a killed run (a `results.partial.jsonl` found by [`Self::open`])
    /// were moved, if there were any.
    pub fn rescued(&self) -> Option<&Path> {
        self.rescued.as_deref()
    }

    /// Starts `results.partial.jsonl`, to which [`Self::append`] adds rows as they come.
    pub fn start_partial(&mut self) -> Result<(), FolderError> {
        let path = self.dir.join(PARTIAL_RESULTS);
        self.partial = Some(PartialResults::create_new(&path).map_err(io_error(&path))?);
        Ok(())
    }

    /// The partial file, once started.
    pub fn partial_path(&self) -> Option<&Path> {
        self.partial.as_ref().map(PartialResults::path)
    }

    /// Appends a row to `results.partial.jsonl` (nothing before [`Self::start_partial`]).
    pub fn append<T: Serialize>(&self, row: &T) {
        if let Some(partial) = &self.partial {
            partial.append(row);
        }
    }

    /// Replaces the folder with one holding `files` (name, contents) and the interrupted
    /// results already there; when `interrupted`, this run's partial rows are kept too, as the
    /// next free `results.interrupted[.N].jsonl`. The old folder, with its partial file, goes
    /// in the same rename. The lock is released when this returns.
    pub fn commit(
        mut self,
        files: &[(&str, &[u8])],
        interrupted: bool,
    ) -> Result<Committed, FolderError> {
        let staging = tempfile::Builder::new()
            .prefix(&format!(".{}.new-", self.name))
            .tempdir_in(&self.parent)
            .map_err(io_error(&self.parent))?;
        for (name, contents) in files {
            let path = staging.path().join(name);
            write_new(&path, contents).map_err(io_error(&path))?;
        }
        carry_interrupted(&self.dir, staging.path())?;
        let mut committed = Committed::default();
        if let Some(partial) = self.partial.take() {
            committed.partial_error = partial.error();
            let path = partial.path().to_path_buf();
            drop(partial);
            if interrupted {
                let name = interrupted_name(next_interrupted(staging.path())?);
                let kept = staging.path().join(&name);
                link_or_copy(&path, &kept).map_err(io_error(&kept))?;
                committed.interrupted = Some(self.dir.join(name));
            }
        }
        sync_dir(staging.path());
        swap_in(staging, &self.dir, &self.parent, &self.name)?;
        sync_dir(&self.parent);
        Ok(committed)
    }

    /// Moves a killed run's `results.partial.jsonl` to the next free interrupted name (a link
    /// or anything but a plain file in its place is removed: it is not opconform's).
    fn rescue_partial(&mut self) -> Result<(), FolderError> {
        let partial = self.dir.join(PARTIAL_RESULTS);
        match std::fs::symlink_metadata(&partial) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(FolderError::Io {
                path: partial,
                error,
            }),
            Ok(meta) if !meta.is_file() => {
                std::fs::remove_file(&partial).map_err(io_error(&partial))
            }
            Ok(_) => loop {
                let target = self
                    .dir
                    .join(interrupted_name(next_interrupted(&self.dir)?));
                match rename_no_replace(&partial, &target) {
                    Ok(()) => {
                        self.rescued = Some(target);
                        return Ok(());
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(error) => {
                        return Err(FolderError::Io {
                            path: target,
                            error,
                        })
                    }
                }
            },
        }
    }
}

/// Opens (creating) the lock file without following a link in its place.
fn open_lock(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options.open(path)
}

/// Removes the new and old folders a killed run left beside the report folder (under the lock,
/// so no other run is using them). Failures are left for the next run.
fn remove_stale_staging(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let prefixes = [format!(".{name}.new-"), format!(".{name}.old-")];
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if prefixes.iter().any(|p| file_name.starts_with(p.as_str())) {
            let path = entry.path();
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path).ok(),
                Ok(_) => std::fs::remove_file(&path).ok(),
                Err(_) => None,
            };
        }
    }
}

/// True for a name opconform writes into a report folder, or a leftover of its older
/// file-by-file writes (`index.html.tmp`).
fn is_report_name(name: &str) -> bool {
    let base = name.strip_suffix(".tmp").unwrap_or(name);
    REPORT_FILES.contains(&base) || base == PARTIAL_RESULTS || is_interrupted_name(base)
}

/// Refuses a folder with entries opconform does not write (a folder among them): replacing it
/// would delete them.
fn check_only_reports(dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read: {e}"))?;
    let mut foreign = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read: {e}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir || !is_report_name(&name) {
            foreign.push(name);
        }
    }
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    const SHOWN: usize = 5;
    let more = foreign.len().saturating_sub(SHOWN);
    foreign.truncate(SHOWN);
    let mut list = foreign.join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    Err(format!(
        "holds files opconform does not write ({}); reports replace the whole folder, so give \
         an empty or new folder, or a report folder",
        super::escape::terminal(&list)
    ))
}

/// The number after the highest interrupted-results file in `dir` (1 when there is none).
fn next_interrupted(dir: &Path) -> Result<usize, FolderError> {
    let entries = std::fs::read_dir(dir).map_err(io_error(dir))?;
    let mut highest = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if is_interrupted_name(name) {
            let n = name
                .strip_prefix("results.interrupted.")
                .and_then(|r| r.strip_suffix(".jsonl"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            highest = highest.max(n);
        }
    }
    Ok(highest + 1)
}

/// Copies the plain interrupted-results files of `from` into `to` (links are left behind).
fn carry_interrupted(from: &Path, to: &Path) -> Result<(), FolderError> {
    let entries = match std::fs::read_dir(from) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(FolderError::Io {
                path: from.to_path_buf(),
                error,
            })
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let plain = entry.file_type().is_ok_and(|t| t.is_file());
        if plain && name.to_str().is_some_and(is_interrupted_name) {
            let target = to.join(&name);
            link_or_copy(&entry.path(), &target).map_err(io_error(&target))?;
        }
    }
    Ok(())
}

/// A hard link of `from` at `to`, or a copy where links are not supported; `to` must not
/// exist.
fn link_or_copy(from: &Path, to: &Path) -> io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        Err(_) => write_new(to, &std::fs::read(from)?),
    }
}

/// Creates `path` (which must not exist: no link is followed) with `contents`, flushed to disk.
fn write_new(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

/// Flushes a folder's entries to disk where the platform allows it (best effort).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        dir.sync_all().ok();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Renames `from` to `to`, failing with `AlreadyExists` rather than replacing `to`.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Without the flag: we hold the lock, so no other opconform creates `to` meanwhile.
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    std::fs::rename(from, to)
}

/// Puts the staging folder in the place of `dir` (which exists: [`ReportFolder::open`] made
/// it) and removes the old one. On Linux the two folders are exchanged atomically; elsewhere
/// the old folder is renamed aside first.
fn swap_in(
    staging: tempfile::TempDir,
    dir: &Path,
    parent: &Path,
    name: &str,
) -> Result<(), FolderError> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, staging.path(), CWD, dir, RenameFlags::EXCHANGE) {
            // `staging` now names the old folder: dropping it removes it.
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            Err(e) => return Err(io_error(dir)(e.into())),
        }
    }
    let old = tempfile::Builder::new()
        .prefix(&format!(".{name}.old-"))
        .tempdir_in(parent)
        .map_err(io_error(parent))?;
    let old_path = old.path().join(name);
    std::fs::rename(dir, &old_path).map_err(io_error(dir))?;
    let staging_path = staging.keep();
    std::fs::rename(&staging_path, dir).map_err(io_error(dir))?;
    drop(old);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_commit_replaces_the_whole_folder_and_leaves_nothing_beside_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("cpu");
        let folder = ReportFolder::open(&dir).unwrap();
        folder
            .commit(&[("run.json", b"1"), ("certificate.md", b"old")], false)
            .unwrap();
        let folder = ReportFolder::open(&dir).unwrap();
        folder.commit(&[("run.json", b"2")], false).unwrap();
        // The stale certificate of the first run is gone with it: no mixed folder.
        assert_eq!(names(&dir), ["run.json"]);
        assert_eq!(std::fs::read_to_string(dir.join("run.json")).unwrap(), "2");
        assert_eq!(names(root.path()), [".cpu.lock", "cpu"]);
    }

    #[test]
    fn a_second_run_into_the_folder_is_refused_while_the_first_holds_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        let first = ReportFolder::open(&dir).unwrap();
        let second = ReportFolder::open(&dir);
        assert!(
            matches!(second, Err(FolderError::Busy { .. })),
            "{second:?}"
        );
        first.commit(&[("run.json", b"x")], false).unwrap();
        assert!(ReportFolder::open(&dir).is_ok());
    }

    #[test]
    fn interrupted_rows_are_kept_and_never_overwritten() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        // A run killed after one row: its partial file stays.
        let mut killed = ReportFolder::open(&dir).unwrap();
        killed.start_partial().unwrap();
        killed.append(&"killed");
        drop(killed);
        assert!(dir.join(PARTIAL_RESULTS).exists());
        // The next run rescues it, then is interrupted itself.
        let mut second = ReportFolder::open(&dir).unwrap();
        assert_eq!(
            second.rescued(),
            Some(dir.join(interrupted_name(1)).as_path())
        );
        second.start_partial().unwrap();
        second.append(&"second");
        let committed = second.commit(&[("run.json", b"2")], true).unwrap();
        assert_eq!(committed.interrupted, Some(dir.join(interrupted_name(2))));
        // A third run completes: both interrupted files are carried over, untouched.
        let mut third = ReportFolder::open(&dir).unwrap();
        assert!(third.rescued().is_none());
        third.start_partial().unwrap();
        third.append(&"third");
        let committed = third.commit(&[("run.json", b"3")], false).unwrap();
        assert!(committed.interrupted.is_none());
        assert_eq!(
            names(&dir),
            [
                "results.interrupted.2.jsonl",
                "results.interrupted.jsonl",
                "run.json"
            ]
        );
        let read = |n| std::fs::read_to_string(dir.join(interrupted_name(n))).unwrap();
        assert_eq!(read(1), "\"killed\"\n");
        assert_eq!(read(2), "\"second\"\n");
    }

    #[test]
    fn a_folder_with_other_files_is_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("home");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("thesis.tex"), "precious").unwrap();
        std::fs::create_dir(dir.join("summary.md")).unwrap();
        let error = ReportFolder::open(&dir).unwrap_err().to_string();
        assert!(
            error.contains("thesis.tex") && error.contains("summary.md"),
            "{error}"
        );
        assert_eq!(names(&dir), ["summary.md", "thesis.tex"]);
        assert!(ReportFolder::open(Path::new("..")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn links_in_and_around_the_folder_are_never_followed() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let dir = root.path().join("r");
        std::fs::create_dir(&dir).unwrap();
        for name in ["index.html.tmp", "summary.md", PARTIAL_RESULTS, INTERRUPTED] {
            symlink(&outside, dir.join(name)).unwrap();
        }
        let mut folder = ReportFolder::open(&dir).unwrap();
        assert!(folder.rescued().is_none());
        folder.start_partial().unwrap();
        folder.append(&"row");
        folder
            .commit(&[("summary.md", b"new"), ("index.html", b"new")], true)
            .unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert_eq!(
            names(&dir),
            ["index.html", "results.interrupted.jsonl", "summary.md"]
        );
        assert!(!std::fs::symlink_metadata(dir.join(INTERRUPTED))
            .unwrap()
            .file_type()
            .is_symlink());

        // The folder itself as a link, and the lock file as a link, are refused.
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        symlink(&real, root.path().join("alias")).unwrap();
        let error = ReportFolder::open(&root.path().join("alias")).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        symlink(&outside, root.path().join(".locked.lock")).unwrap();
        assert!(ReportFolder::open(&root.path().join("locked")).is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    }

    const INTERRUPTED: &str = super::super::partial::INTERRUPTED_RESULTS;

    #[test]
    fn leftovers_of_a_killed_commit_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        std::fs::create_dir_all(root.path().join(".r.new-abc123")).unwrap();
        std::fs::write(root.path().join(".r.new-abc123/run.json"), "half").unwrap();
        std::fs::create_dir_all(root.path().join(".r.old-xyz")).unwrap();
        std::fs::create_dir_all(root.path().join(".other.new-1")).unwrap();
        ReportFolder::open(&dir)
            .unwrap()
            .commit(&[("run.json", b"x")], false)
            .unwrap();
        assert_eq!(names(root.path()), [".other.new-1", ".r.lock", "r"]);
    }
}
