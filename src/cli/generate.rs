//! `opconform generate [--out DIR] [--check]`: writes the generated cases, or checks that the
//! committed ones are current.

use super::{EXIT_FAILURES, EXIT_OK, EXIT_USAGE};
use crate::generate::{differences, generate_files, write_files, DEFAULT_OUT_DIR};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `opconform generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Folder to write the generated case files into.
    #[arg(long, default_value = DEFAULT_OUT_DIR)]
    pub out: PathBuf,
    /// Write nothing: exit 1, listing them, if the files under --out differ from what the
    /// generator writes.
    #[arg(long)]
    pub check: bool,
}

/// Runs `opconform generate`.
pub fn generate(args: &GenerateArgs) -> u8 {
    let files = generate_files();
    let cases: usize = files.iter().map(|f| f.case_count).sum();
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    if args.check {
        let found = differences(&args.out, &files);
        for difference in &found {
            println!("{difference}");
        }
        if found.is_empty() {
            println!(
                "{} generated file(s) under {} are current ({cases} cases)",
                files.len(),
                args.out.display()
            );
            EXIT_OK
        } else {
            println!(
                "{} file(s) under {} are not what `opconform generate` writes; rerun it",
                found.len(),
                args.out.display()
            );
            EXIT_FAILURES
        }
    } else {
        match write_files(&args.out, &files) {
            Ok(changes) => {
                for change in &changes {
                    println!("{change}");
                }
                println!(
                    "{} file(s), {cases} cases, {:.1} MB under {}; {} changed",
                    files.len(),
                    bytes as f64 / 1e6,
                    args.out.display(),
                    changes.len()
                );
                EXIT_OK
            }
            Err(e) => {
                eprintln!("error: cannot write under {}: {e}", args.out.display());
                EXIT_USAGE
            }
        }
    }
}
