//! `opconform verify DIR`: checks a report folder offline (see [`crate::certify::verify`]).

use super::{case_paths, check_paths, terminal, EXIT_FAILURES, EXIT_OK, EXIT_USAGE};
use crate::case::load_paths;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `opconform verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The report folder (with run.json, results.jsonl and perhaps certificate.json).
    pub dir: PathBuf,
    /// The case files or folders the run used (default: cases/).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub cases: Vec<PathBuf>,
}

/// Runs `opconform verify`: exit 0 when every check holds, 1 when one does not, 2 when the
/// folder or the cases cannot be read.
pub fn verify(args: &VerifyArgs) -> u8 {
    let paths = case_paths(&args.cases);
    if let Err(e) = check_paths(&paths) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    let loaded = load_paths(&paths);
    if !loaded.errors.is_empty() {
        for error in &loaded.errors {
            eprintln!("error: {}", terminal(&error.to_string()));
        }
        return EXIT_USAGE;
    }
    match crate::certify::verify::verify(&args.dir, loaded.cases) {
        Ok(verification) => {
            for (name, ok, detail) in &verification.checks {
                println!(
                    "{} {name}: {}",
                    if *ok { "ok" } else { "MISMATCH" },
                    terminal(detail)
                );
            }
            if verification.holds() {
                EXIT_OK
            } else {
                EXIT_FAILURES
            }
        }
        Err(e) => {
            eprintln!("error: {}", terminal(&e));
            EXIT_USAGE
        }
    }
}
