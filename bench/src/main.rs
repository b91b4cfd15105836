//! `opconform-bench`: the Vulkan backend against the CPU backend, and quick CPU timings for
//! kernel work (the CPU benchmark against numpy and ONNX Runtime is `tools/bench_peers.py`,
//! which loads this crate's library; see `docs/performance.md`).
//!
//! ```text
//! opconform-bench vulkan [--reps N] [--out FILE] [--markdown FILE] [--quick]
//! opconform-bench dev    [--threads N] [--reps N] [--only TEXT] [--cold]
//! ```

mod dev;
mod vulkan;

use std::path::PathBuf;
use std::process::ExitCode;

/// Parsed command-line options (every subcommand takes the ones it needs).
#[derive(Debug, Default)]
struct Options {
    reps: Option<usize>,
    threads: Option<usize>,
    out: Option<PathBuf>,
    markdown: Option<PathBuf>,
    only: Option<String>,
    quick: bool,
    cold: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{arg} needs a value"))
        };
        let count = |v: String| v.parse().map_err(|_| format!("{arg} {v}: not a count"));
        match arg.as_str() {
            "--reps" => options.reps = Some(count(value()?)?),
            "--threads" => options.threads = Some(count(value()?)?),
            "--out" => options.out = Some(value()?.into()),
            "--markdown" => options.markdown = Some(value()?.into()),
            "--only" => options.only = Some(value()?),
            "--quick" => options.quick = true,
            "--cold" => options.cold = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

fn write(path: &PathBuf, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

const USAGE: &str = "opconform-bench vulkan [--reps N] [--out FILE] [--markdown FILE] [--quick]\n\
                     opconform-bench dev    [--threads N] [--reps N] [--only TEXT] [--cold]";

fn main_result() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        return Err(format!("usage:\n{USAGE}"));
    };
    if matches!(command.as_str(), "--help" | "-h" | "help") {
        println!("{USAGE}");
        return Ok(());
    }
    let options = parse(rest)?;
    match command.as_str() {
        "vulkan" => {
            let reps = options.reps.unwrap_or(5);
            let scale = if options.quick { 16 } else { 1 };
            let doc = vulkan::run(reps, scale)?;
            if let Some(path) = &options.out {
                let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
                write(path, &text)?;
            }
            let table = vulkan::markdown(&doc);
            println!("{table}");
            if let Some(path) = &options.markdown {
                write(path, &table)?;
            }
            Ok(())
        }
        "dev" => dev::run(
            options
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            options.reps.unwrap_or(5),
            options.only.as_deref(),
            options.cold,
        ),
        other => Err(format!("unknown command {other}\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    match main_result() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("opconform-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
