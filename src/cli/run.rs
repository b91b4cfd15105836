//! `opconform run` (the default command) and `opconform report merge`.

use super::{EXIT_FAILURES, EXIT_OK, EXIT_USAGE};
use crate::case::load_paths;
use crate::report::{self, RunMeta};
use crate::runner::{run_cases, CaseResult};
use crate::selection::{case_set_digest, Selection, Shard};
use clap::Args;
use opconform_backend::Level;
use std::path::PathBuf;

/// Arguments of `opconform run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Bundled backend to run: cpu or vulkan.
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    /// DirectML feature level to certify; cases above it are left out.
    #[arg(long, default_value = "4_1")]
    pub feature_level: Level,
    /// Case files or folders (default: cases/); files outside cases/ work too.
    #[arg(long, num_args = 1..)]
    pub cases: Vec<PathBuf>,
    /// Run only cases whose id contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Report folder (default: reports/<backend>).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
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
            filter: None,
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
    /// Where to write the combined reports.
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `opconform run`.
pub fn run(args: &RunArgs) -> u8 {
    let backend = match crate::bundled::open(&args.backend) {
        Ok(backend) => backend,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let paths = if args.cases.is_empty() {
        vec![PathBuf::from("cases")]
    } else {
        args.cases.clone()
    };
    let loaded = load_paths(&paths);
    for error in &loaded.errors {
        eprintln!("error: {error}");
    }
    let selection = Selection {
        feature_level: args.feature_level,
        filter: args.filter.clone(),
        shard: args.shard,
    };
    let whole_run = selection.apply_unsharded(loaded.cases);
    let case_set_digest = case_set_digest(&whole_run);
    let case_count = whole_run.len();
    let cases = selection.take_shard(whole_run);
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = super::progress_bar(cases.len() as u64);
    let results = run_cases(backend.as_ref(), &cases, jobs, &|_| bar.inc(1));
    bar.finish_and_clear();
    let meta = RunMeta {
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        backend: backend.info(),
        feature_level: args.feature_level,
        case_set_digest,
        case_count,
        shard: args.shard.map(|s| s.to_string()),
    };
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&args.backend));
    let status = finish(&dir, &meta, &results);
    if !loaded.errors.is_empty() {
        eprintln!("{} load error(s): see above", loaded.errors.len());
        return EXIT_USAGE;
    }
    status
}

/// Writes the reports, prints the table and failures, and picks the exit status.
fn finish(dir: &std::path::Path, meta: &RunMeta, results: &[CaseResult]) -> u8 {
    if let Err(e) = report::write_reports(dir, meta, results) {
        eprintln!("error: cannot write reports to {}: {e}", dir.display());
        return EXIT_USAGE;
    }
    let failures: Vec<&CaseResult> = results.iter().filter(|r| r.fails_required()).collect();
    for failure in &failures {
        eprintln!(
            "FAIL {} ({}): {}",
            failure.id,
            failure.outcome.name(),
            failure.detail
        );
    }
    print!(
        "{}",
        report::terminal_table(results, Some(meta.feature_level))
    );
    println!(
        "{} case(s) on {} ({}); reports in {}",
        results.len(),
        meta.backend.name,
        meta.backend.device,
        dir.display()
    );
    if failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURES
    }
}

/// Runs `opconform report merge`.
pub fn merge(args: &MergeArgs) -> u8 {
    let dirs: Vec<&std::path::Path> = args.dirs.iter().map(PathBuf::as_path).collect();
    match report::merge(&dirs) {
        Ok((mut meta, results)) => {
            meta.case_count = results.len();
            finish(&args.out, &meta, &results)
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
    }
}
