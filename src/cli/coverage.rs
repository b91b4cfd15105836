//! `opconform coverage` (being written).

use clap::Args;

/// Arguments of `opconform coverage`.
#[derive(Debug, Args)]
pub struct CoverageArgs {}

/// Runs `opconform coverage`.
pub fn coverage(_args: &CoverageArgs) -> u8 {
    eprintln!("error: not implemented yet");
    super::EXIT_USAGE
}
