//! `opconform run` (the default command) and `opconform report merge`.

use super::{
    case_paths, check_paths, default_jobs, parse_directml_level, parse_jobs, terminal,
    EXIT_FAILURES, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
};
use crate::case::load_paths;
use crate::report::folder::ReportFolder;
use crate::report::rows::LoadErrorRow;
use crate::report::timing::CaseTimer;
use crate::report::verdict::Scope;
use crate::report::{self, RunMeta, RunReport};
use crate::runner::run_cases;
use crate::selection::{case_set_digest, CasePick, Selection, Shard};
use clap::Args;
use opconform_backend::Level;
use std::path::{Path, PathBuf};

/// Arguments of `opconform run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Bundled backend to run: cpu or vulkan.
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    /// DirectML feature level to certify; cases above it are left out.
    #[arg(long, default_value = "4_1", value_parser = parse_directml_level)]
    pub feature_level: Level,
    /// Case files or folders (default: cases/); files outside cases/ work too.
    #[arg(long, num_args = 1..)]
    pub cases: Vec<PathBuf>,
    /// Run only cases matching one of these (repeatable): id text, an id glob
    /// (`dml_argmax::*::uint32_*`), or `tag:NAME` / `tag:GLOB`.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Vec<String>,
    /// Leave out cases matching one of these (repeatable; same patterns as --filter).
    #[arg(long, value_name = "PATTERN")]
    pub skip: Vec<String>,
    /// Run only the cases listed in FILE: one id (or glob) per line, `#` comments.
    #[arg(long, value_name = "FILE")]
    pub case_list: Option<PathBuf>,
    /// Report folder (default: reports/<backend>), replaced as a whole by the run's reports.
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Worker threads, 1 to 256 (default: the number of cores).
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Run only shard K of N (deterministic), e.g. 2/4.
    #[arg(long)]
    pub shard: Option<Shard>,
}

impl Default for RunArgs {
    fn default() -> RunArgs {
        RunArgs {
            backend: "cpu".to_string(),
            feature_level: Level::dml(0x4100),
            cases: Vec::new(),
            filter: Vec::new(),
            skip: Vec::new(),
            case_list: None,
            report_dir: None,
            jobs: None,
            shard: None,
        }
    }
}

/// Arguments of `opconform report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard report folders to combine.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the combined reports (replaced as a whole).
    #[arg(long)]
    pub out: PathBuf,
    /// Merge even when shards are missing (the merged run is marked interrupted).
    #[arg(long)]
    pub allow_partial: bool,
}

/// Runs `opconform run`: nothing is written unless cases load and are selected; then the
/// report folder is locked, rows are appended to its `results.partial.jsonl` as they come, and
/// the reports replace the folder at the end (marked interrupted after SIGINT or SIGTERM).
pub fn run(args: &RunArgs) -> u8 {
    let paths = case_paths(&args.cases);
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&args.backend));
    let shown_dir = dir.display().to_string();
    let shown_dir = terminal(&shown_dir);
    if let Err(e) = check_paths(&paths) {
        eprintln!("error: {e}; nothing ran, {shown_dir} is left as it is");
        return EXIT_USAGE;
    }
    let backend = match crate::bundled::open(&args.backend) {
        Ok(backend) => backend,
        Err(e) => {
            eprintln!("error: {}", terminal(&e.to_string()));
            return EXIT_USAGE;
        }
    };
    let loaded = load_paths(&paths);
    for error in &loaded.errors {
        eprintln!("error: {}", terminal(&error.to_string()));
    }
    let pick = match CasePick::new(&args.filter, &args.skip, args.case_list.as_deref()) {
        Ok(pick) => pick,
        Err(e) => {
            eprintln!("error: {}; nothing ran", terminal(&e));
            return EXIT_USAGE;
        }
    };
    let unmatched = pick.unmatched_list_entries(&loaded.cases);
    if !unmatched.is_empty() {
        eprintln!(
            "error: --case-list entries that name no case: {}; nothing ran",
            terminal(&unmatched.join(", "))
        );
        return EXIT_USAGE;
    }
    let suite = pick.apply(loaded.cases);
    let case_set_digest = case_set_digest(&suite);
    let selection = Selection {
        feature_level: args.feature_level,
        pick,
        shard: args.shard,
    };
    let whole_run = selection.apply_unsharded(suite);
    if whole_run.is_empty() {
        eprintln!(
            "error: no case selected ({} load error(s); the level, --filter, --skip and \
             --case-list leave none); nothing ran, {shown_dir} is left as it is",
            loaded.errors.len()
        );
        return EXIT_USAGE;
    }
    let case_count = whole_run.len();
    let cases = selection.take_shard(whole_run);
    let folder = match ReportFolder::open(&dir).and_then(|mut folder| {
        folder.start_partial()?;
        Ok(folder)
    }) {
        Ok(folder) => folder,
        Err(e) => {
            eprintln!("error: {}; nothing ran", terminal(&e.to_string()));
            return EXIT_USAGE;
        }
    };
    note_rescued(&folder);
    let load_errors: Vec<LoadErrorRow> = loaded.errors.iter().map(LoadErrorRow::from).collect();
    for row in &load_errors {
        folder.append(row);
    }
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let info = backend.info();
    let targets = crate::certify::targets(&info, Some(args.feature_level))
        .expect("--feature-level is a DirectML level");
    let progress = super::progress::Progress::new(cases.len() as u64, Scope::new(&info, &targets));
    let timer = CaseTimer::new();
    let mut results = run_cases(backend.as_ref(), &cases, jobs, &|result| {
        timer.finished(&result.id);
        folder.append(result);
        progress.case_done(result);
    });
    progress.finish();
    let interrupted = crate::interrupt::requested() || results.len() < cases.len();
    results.sort_by(|a, b| a.id.cmp(&b.id));
    let meta = RunMeta {
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        backend: info,
        feature_level: args.feature_level,
        targets,
        case_set_digest,
        results_digest: String::new(),
        selection: selection.pick.record(),
        case_count,
        shard: args.shard.map(|s| s.to_string()),
        interrupted,
    };
    let records = report::case_records(&cases, &timer.into_times());
    let report = RunReport::new(meta, results, load_errors, records);
    finish(folder, &report)
}

/// Tells where a killed run's results were moved, if any were found.
fn note_rescued(folder: &ReportFolder) {
    if let Some(rescued) = folder.rescued() {
        eprintln!(
            "note: the results of an earlier run that was killed are kept in {}",
            terminal(&rescued.display().to_string())
        );
    }
}

/// Writes the reports, prints the table and failures, and picks the exit status: 130 when
/// interrupted, 2 on load errors, 1 when a required case failed, else 0.
fn finish(folder: ReportFolder, report: &RunReport) -> u8 {
    let dir = folder.dir().to_path_buf();
    let shown_dir = terminal(&dir.display().to_string()).into_owned();
    let files = match report::render_files(report) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: cannot render the reports: {e}");
            return EXIT_USAGE;
        }
    };
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_bytes())).collect();
    let committed = match folder.commit(&files, report.meta.interrupted) {
        Ok(committed) => committed,
        Err(e) => {
            eprintln!(
                "error: cannot write the reports: {}",
                terminal(&e.to_string())
            );
            return EXIT_USAGE;
        }
    };
    if let Some(error) = committed.partial_error {
        eprintln!("warning: appending to results.partial.jsonl failed ({error}); the final reports are complete");
    }
    let meta = &report.meta;
    let results = &report.results;
    let failures = report.failures();
    print!("{}", report::terminal_table(report));
    if !failures.is_empty() {
        eprintln!(
            "{} required case(s) failing (diffs in summary.md and index.html)",
            failures.len()
        );
    }
    println!(
        "{} case(s) on {} ({}); reports in {shown_dir}",
        results.len(),
        terminal(&meta.backend.name),
        terminal(&meta.backend.device),
    );
    if meta.interrupted {
        let kept = committed.interrupted.map_or_else(String::new, |path| {
            format!(
                "; its results are also kept in {}",
                terminal(&path.display().to_string())
            )
        });
        eprintln!(
            "interrupted: {} of {} case(s) ran; the reports say so{kept}",
            results.len(),
            meta.case_count
        );
        return EXIT_INTERRUPTED;
    }
    if !report.load_errors.is_empty() {
        eprintln!(
            "{} load error(s): see above; the reports list them as load_error",
            report.load_errors.len()
        );
        return EXIT_USAGE;
    }
    if failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURES
    }
}

/// Runs `opconform report merge`.
pub fn merge(args: &MergeArgs) -> u8 {
    let dirs: Vec<&Path> = args.dirs.iter().map(PathBuf::as_path).collect();
    let report = match report::merge(&dirs, args.allow_partial) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {}", terminal(&e));
            return EXIT_USAGE;
        }
    };
    match ReportFolder::open(&args.out) {
        Ok(folder) => {
            note_rescued(&folder);
            finish(folder, &report)
        }
        Err(e) => {
            eprintln!("error: {}", terminal(&e.to_string()));
            EXIT_USAGE
        }
    }
}
