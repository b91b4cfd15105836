//! `opconform validate FILE...`: loads case files and prints, per case, its validity at its
//! level and the lowest level at which its descriptor is valid.

use super::{case_paths, check_paths, terminal, EXIT_FAILURES, EXIT_OK, EXIT_USAGE};
use crate::case::{load_paths, Expectation};
use clap::Args;
use opconform_backend::validate::{lowest_valid_level, validate as validate_descriptor};
use std::path::PathBuf;

/// Arguments of `opconform validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Case files or folders (default: cases/).
    pub paths: Vec<PathBuf>,
    /// Print only errors and the final count.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `opconform validate`.
pub fn validate(args: &ValidateArgs) -> u8 {
    let paths = case_paths(&args.paths);
    if let Err(e) = check_paths(&paths) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    let loaded = load_paths(&paths);
    for case in &loaded.cases {
        if args.quiet {
            continue;
        }
        let lowest = lowest_valid_level(&case.operator)
            .map_or_else(|| "never".to_string(), |l| l.to_string());
        match &case.expectation {
            Expectation::Outputs(_) => println!(
                "ok   {} (valid from {lowest}, tagged {})",
                terminal(&case.id),
                case.level
            ),
            Expectation::Invalid(_) => {
                let rules: Vec<String> = validate_descriptor(&case.operator, case.level)
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                println!(
                    "ok   {} (negative at {}: {}; valid from {lowest})",
                    terminal(&case.id),
                    case.level,
                    rules.join("; ")
                );
            }
        }
    }
    for error in &loaded.errors {
        eprintln!("error: {}", terminal(&error.to_string()));
    }
    println!(
        "{} case(s) valid, {} error(s)",
        loaded.cases.len(),
        loaded.errors.len()
    );
    if !loaded.errors.is_empty() {
        EXIT_FAILURES
    } else if loaded.cases.is_empty() {
        eprintln!("error: no cases found under the given paths");
        EXIT_USAGE
    } else {
        EXIT_OK
    }
}
