//! The `opconform` command; see `opconform --help`.

use std::process::ExitCode;

/// The exit status of a run stopped by SIGINT or SIGTERM that would otherwise have succeeded.
const INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    if let Err(error) = opconform::interrupt::install() {
        eprintln!("warning: SIGINT and SIGTERM will not stop backends cleanly: {error}");
    }
    let code = opconform::cli::main();
    if opconform::interrupt::requested() && code == ExitCode::SUCCESS {
        // An interrupted run proves nothing, whatever the cases that ran said.
        return ExitCode::from(INTERRUPTED);
    }
    code
}
