//! The `opconform` command line: argument parsing and one module per subcommand.

mod certify;
mod coverage;
mod explore;
mod generate;
mod progress;
mod run;
mod schema;
mod validate;
mod verify;

pub use schema::case_schema_json;

use clap::{Parser, Subcommand};
use opconform_backend::{Level, SpecFamily};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when every required case passed.
pub const EXIT_OK: u8 = 0;
/// Exit status when a required case failed.
pub const EXIT_FAILURES: u8 = 1;
/// Exit status for a usage or load error.
pub const EXIT_USAGE: u8 = 2;
/// Exit status of a run stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The most worker threads `--jobs` accepts.
pub const MAX_JOBS: usize = 256;

/// Parses `--jobs`: 1 to [`MAX_JOBS`].
fn parse_jobs(text: &str) -> Result<usize, String> {
    let jobs: usize = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of threads"))?;
    if (1..=MAX_JOBS).contains(&jobs) {
        Ok(jobs)
    } else {
        Err(format!("give 1 to {MAX_JOBS} worker threads"))
    }
}

/// The default number of worker threads: the number of cores, at most [`MAX_JOBS`].
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS))
}

/// Parses `--feature-level`: a DirectML feature level (`4_1`, `DML_FEATURE_LEVEL_4_1`); an
/// OpenVINO opset is refused, since the OpenVINO target is the backend's claim.
fn parse_directml_level(text: &str) -> Result<Level, String> {
    let level: Level = text.parse().map_err(|e| format!("{e}"))?;
    if level.family() == SpecFamily::Directml {
        Ok(level)
    } else {
        Err(format!(
            "{level} is not a DirectML feature level (OpenVINO cases run at the backend's opset \
             claim)"
        ))
    }
}

/// Checks that every path given exists (a typo is a usage error, before anything runs or is
/// written).
fn check_paths(paths: &[PathBuf]) -> Result<(), String> {
    for path in paths {
        if std::fs::symlink_metadata(path).is_err() {
            return Err(format!(
                "{}: no such file or folder",
                terminal(&path.display().to_string())
            ));
        }
    }
    Ok(())
}

/// The case paths of a command: those given, or `cases`.
fn case_paths(given: &[PathBuf]) -> Vec<PathBuf> {
    if given.is_empty() {
        vec![PathBuf::from("cases")]
    } else {
        given.to_vec()
    }
}

/// Untrusted text for the terminal (see [`crate::report::escape::terminal`]).
fn terminal(text: &str) -> std::borrow::Cow<'_, str> {
    crate::report::escape::terminal(text)
}

/// Conformance harness and validator for ML tensor operators.
#[derive(Debug, Parser)]
#[command(name = "opconform", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run cases on a bundled backend and write reports (the default command).
    Run(run::RunArgs),
    /// Validate case files: every descriptor at its level, every expectation well formed.
    Validate(validate::ValidateArgs),
    /// Print or write the case file JSON Schema.
    Schema(schema::SchemaArgs),
    /// Certify a backend (a command speaking the backend protocol, or a bundled one).
    Certify(certify::CertifyArgs),
    /// Write the generated cases (cases/generated/) deterministically.
    Generate(generate::GenerateArgs),
    /// List every spec rule and support-table cell with the cases that exercise it.
    Coverage(coverage::CoverageArgs),
    /// Check a report folder offline: results digest, verdicts, suite digest from the case
    /// files, and the certificate recomputed from the results.
    Verify(verify::VerifyArgs),
    /// Draw random valid cases within a backend's claims; shrink failures to minimal cases.
    Explore(explore::ExploreArgs),
    /// Work with report folders.
    #[command(subcommand)]
    Report(ReportCommand),
}

#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// Combine the report folders of shards into one.
    Merge(run::MergeArgs),
}

/// Parses the command line and runs the subcommand; `opconform` alone means `opconform run`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        None => run::run(&run::RunArgs::default()),
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Validate(args)) => validate::validate(&args),
        Some(Command::Schema(args)) => schema::schema(&args),
        Some(Command::Certify(args)) => certify::certify(&args),
        Some(Command::Generate(args)) => generate::generate(&args),
        Some(Command::Coverage(args)) => coverage::coverage(&args),
        Some(Command::Verify(args)) => verify::verify(&args),
        Some(Command::Explore(args)) => explore::explore(&args),
        Some(Command::Report(ReportCommand::Merge(args))) => run::merge(&args),
    };
    ExitCode::from(status)
}
