//! `opconform generate` (being written).

use clap::Args;

/// Arguments of `opconform generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {}

/// Runs `opconform generate`.
pub fn generate(_args: &GenerateArgs) -> u8 {
    eprintln!("error: not implemented yet");
    super::EXIT_USAGE
}
