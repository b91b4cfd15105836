//! The `opconform` command line: argument parsing and one module per subcommand.

mod certify;
mod coverage;
mod generate;
mod run;
mod schema;
mod validate;

pub use schema::case_schema_json;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit status when every required case passed.
pub const EXIT_OK: u8 = 0;
/// Exit status when a required case failed.
pub const EXIT_FAILURES: u8 = 1;
/// Exit status for a usage or load error.
pub const EXIT_USAGE: u8 = 2;

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
    /// Work with report folders.
    #[command(subcommand)]
    Report(ReportCommand),
}

#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// Combine the report folders of shards into one.
    Merge(run::MergeArgs),
}

/// A progress bar over `length` cases on a terminal; hidden when stderr is not one.
fn progress_bar(length: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(length);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases {elapsed}")
            .expect("static template"),
    );
    bar
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
        Some(Command::Report(ReportCommand::Merge(args))) => run::merge(&args),
    };
    ExitCode::from(status)
}
