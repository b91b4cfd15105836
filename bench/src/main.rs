//! `opconform-bench`: benchmarks of opconform's bundled backends (run by `tools/bench.sh`; see
//! `docs/performance.md`).
//!
//! ```text
//! opconform-bench cpu    [--data DIR] [--reps N] [--out FILE] [--only TEXT] [--quick] [--dev]
//! opconform-bench report --ours FILE [--peers FILE] [--markdown FILE]
//! opconform-bench vulkan [--reps N] [--out FILE] [--markdown FILE] [--quick]
//! ```
//!
//! - `cpu` writes the inputs as `.npy` files into `--data` (for `tools/bench_peers.py`), times
//!   the CPU backend through `Backend::execute` on each row, measures the memory bandwidth, and
//!   writes the results (with a manifest of the rows for the peers) as JSON to `--out`.
//! - `report` merges those results with `bench_peers.py`'s and prints the table.
//! - `vulkan` times one large case per operator on the Vulkan backend and on the CPU backend.

mod cpu;
mod data;
mod ops;
mod report;
mod timing;
mod vulkan;

use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

/// Parsed command-line options (every subcommand takes the ones it needs).
#[derive(Debug, Default)]
struct Options {
    data: Option<PathBuf>,
    reps: Option<usize>,
    out: Option<PathBuf>,
    ours: Option<PathBuf>,
    peers: Option<PathBuf>,
    markdown: Option<PathBuf>,
    only: Option<String>,
    dev: bool,
    quick: bool,
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
        match arg.as_str() {
            "--data" => options.data = Some(value()?.into()),
            "--reps" => {
                let v = value()?;
                options.reps = Some(v.parse().map_err(|_| format!("--reps {v}: not a count"))?);
            }
            "--out" => options.out = Some(value()?.into()),
            "--ours" => options.ours = Some(value()?.into()),
            "--peers" => options.peers = Some(value()?.into()),
            "--markdown" => options.markdown = Some(value()?.into()),
            "--only" => options.only = Some(value()?),
            "--quick" => options.quick = true,
            "--dev" => options.dev = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

fn read_json(path: &PathBuf) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &PathBuf, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn main_result() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        return Err("usage: opconform-bench cpu|report|vulkan [options] (see --help)".into());
    };
    let options = parse(rest)?;
    match command.as_str() {
        "cpu" => {
            let mut settings = if options.quick {
                cpu::Settings::quick()
            } else {
                cpu::Settings::default()
            };
            if let Some(reps) = options.reps {
                settings.reps = reps;
            }
            settings.only = options.only.clone();
            settings.dev = options.dev;
            let data = options
                .data
                .unwrap_or_else(|| std::env::temp_dir().join("opconform-bench"));
            let doc = cpu::run(&settings, &data)?;
            let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
            match &options.out {
                Some(path) => write(path, &text),
                None => {
                    println!("{text}");
                    Ok(())
                }
            }
        }
        "report" => {
            let ours = read_json(options.ours.as_ref().ok_or("report needs --ours FILE")?)?;
            let peers = match &options.peers {
                Some(path) => read_json(path)?,
                None => Value::Null,
            };
            let lines = report::lines(&ours, &peers);
            let bw = &ours["bandwidth_gbs"];
            println!(
                "memcpy bandwidth (read + written): {:.1} GB/s on 1 thread, {:.1} GB/s on {}; \
                 floor = bytes read + written / {:.1} GB/s",
                bw["memcpy_1t"].as_f64().unwrap_or(f64::NAN),
                bw["memcpy_all"].as_f64().unwrap_or(f64::NAN),
                ours["threads"],
                bw["floor"].as_f64().unwrap_or(f64::NAN),
            );
            println!(
                "medians of {} runs; numpy {}, onnxruntime {}\n",
                ours["reps"],
                peers["numpy"].as_str().unwrap_or("—"),
                peers["onnxruntime"].as_str().unwrap_or("—"),
            );
            print!("{}", report::text(&lines));
            if let Some(path) = &options.markdown {
                write(path, &report::markdown(&lines))?;
            }
            Ok(())
        }
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
        "--help" | "-h" | "help" => {
            println!(
                "opconform-bench cpu    [--data DIR] [--reps N] [--out FILE] [--only TEXT] [--quick] [--dev]\n\
                 opconform-bench report --ours FILE [--peers FILE] [--markdown FILE]\n\
                 opconform-bench vulkan [--reps N] [--out FILE] [--markdown FILE] [--quick]"
            );
            Ok(())
        }
        other => Err(format!("unknown command {other} (cpu, report, vulkan)")),
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
