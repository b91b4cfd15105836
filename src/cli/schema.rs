//! `opconform schema`: the JSON Schemas generated from the Rust types: the case file
//! (`cases/case.schema.json`, the default) and `certificate.json`
//! (`docs/certificate.schema.json`, `--certificate`).

use super::{EXIT_OK, EXIT_USAGE};
use crate::case::CaseFile;
use crate::certify::Certificate;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `opconform schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The schema of `certificate.json` instead of the case file's.
    #[arg(long)]
    pub certificate: bool,
    /// Write the schema to this file instead of printing it.
    #[arg(long)]
    pub write: Option<PathBuf>,
}

/// The case file JSON Schema as pretty JSON text.
pub fn case_schema_json() -> String {
    let schema = schemars::schema_for!(CaseFile);
    serde_json::to_string_pretty(&schema).expect("schema serialises") + "\n"
}

/// The `certificate.json` JSON Schema as pretty JSON text.
pub fn certificate_schema_json() -> String {
    let schema = schemars::schema_for!(Certificate);
    serde_json::to_string_pretty(&schema).expect("schema serialises") + "\n"
}

/// Runs `opconform schema`.
pub fn schema(args: &SchemaArgs) -> u8 {
    let text = if args.certificate {
        certificate_schema_json()
    } else {
        case_schema_json()
    };
    match &args.write {
        None => {
            print!("{text}");
            EXIT_OK
        }
        Some(path) => match crate::report::write_atomic(path, text.as_bytes()) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                EXIT_USAGE
            }
        },
    }
}
