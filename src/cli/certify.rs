//! `opconform certify` (being written).

use clap::Args;

/// Arguments of `opconform certify`.
#[derive(Debug, Args)]
pub struct CertifyArgs {}

/// Runs `opconform certify`.
pub fn certify(_args: &CertifyArgs) -> u8 {
    eprintln!("error: not implemented yet");
    super::EXIT_USAGE
}
