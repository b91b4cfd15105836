//! `opconform report scoreboard DIR... --out DIR`: several backends' report folders side by
//! side on one page ([`crate::report::scoreboard`]).

use super::{terminal, EXIT_OK, EXIT_USAGE};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `opconform report scoreboard`.
#[derive(Debug, Args)]
pub struct ScoreboardArgs {
    /// Report folders (each with `run.json` and `results.jsonl`, maybe `certificate.json`),
    /// one column each, in this order.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The folder to write `index.html` into (links to each report are relative to it).
    #[arg(long)]
    pub out: PathBuf,
    /// Put reports of different case sets side by side (the page says so).
    #[arg(long)]
    pub allow_mixed: bool,
}

/// Runs `opconform report scoreboard`: 0 when written, 2 when a folder cannot be read, the
/// case sets differ without `--allow-mixed`, or the page cannot be written.
pub fn scoreboard(args: &ScoreboardArgs) -> u8 {
    match crate::report::scoreboard::write_scoreboard(&args.dirs, &args.out, args.allow_mixed) {
        Ok(page) => {
            eprintln!("wrote {}", terminal(&page.display().to_string()));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {}; nothing written", terminal(&e));
            EXIT_USAGE
        }
    }
}
