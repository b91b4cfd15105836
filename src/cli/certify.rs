//! `opconform certify`: certifies a backend (a command speaking the backend protocol, or a
//! bundled one) with [`crate::certify::certify_backend`], writing the reports and the
//! certificate, and optionally comparing with a baseline of known failures.

use super::{
    case_paths, check_paths, default_jobs, parse_directml_level, parse_jobs, terminal,
    EXIT_FAILURES, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
};
use crate::case::load_paths;
use crate::certify::{certify_backend, Baseline, Certification, CertifyOptions};
use crate::protocol::{ProcessBackend, ProcessOptions};
use crate::report;
use crate::report::verdict::Scope;
use crate::runner::CaseResult;
use crate::selection::CasePick;
use clap::Args;
use opconform_backend::{Backend, Level};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `opconform certify`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["backend_cmd", "backend"])))]
pub struct CertifyArgs {
    /// The backend command, run with `sh -c`, speaking backend protocol v1
    /// (docs/backend-protocol.md).
    #[arg(long, value_name = "CMD")]
    pub backend_cmd: Option<String>,
    /// A bundled backend instead: cpu or vulkan.
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,
    /// DirectML feature level to certify (default: the backend's DirectML claim). The OpenVINO
    /// target is the backend's opset claim.
    #[arg(long, value_name = "LEVEL", value_parser = parse_directml_level)]
    pub feature_level: Option<Level>,
    /// Case files or folders (default: cases/).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub cases: Vec<PathBuf>,
    /// Certify only cases matching one of these (repeatable): id text, an id glob, or
    /// `tag:NAME` / `tag:GLOB`.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Vec<String>,
    /// Leave out cases matching one of these (repeatable; same patterns as --filter).
    #[arg(long, value_name = "PATTERN")]
    pub skip: Vec<String>,
    /// Certify only the cases listed in FILE: one id (or glob) per line, `#` comments.
    #[arg(long, value_name = "FILE")]
    pub case_list: Option<PathBuf>,
    /// Report folder (default: reports/<backend name from the handshake>), replaced as a whole
    /// by the certification's reports.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Baseline of known failures (docs/baseline-format.md): exit 1 only on new failures.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write this run's failures as a new baseline (each reason "to be triaged") to FILE.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Seconds one case may take on a protocol backend before it is a timeout.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
    /// Seconds a protocol backend may take to start and answer the handshake.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub handshake_timeout: f64,
    /// Worker threads, 1 to 256 (default: 1 for a protocol backend, the number of cores for a
    /// bundled one).
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
}

/// Runs `opconform certify`.
pub fn certify(args: &CertifyArgs) -> u8 {
    match certify_inner(args) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("error: {}", terminal(&message));
            EXIT_USAGE
        }
    }
}

fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{flag} {value}: give a positive number of seconds"))
}

fn certify_inner(args: &CertifyArgs) -> Result<u8, String> {
    let baseline = match &args.baseline {
        Some(path) => Some((path.display().to_string(), Baseline::load(path)?)),
        None => None,
    };
    let paths = case_paths(&args.cases);
    check_paths(&paths).map_err(|e| format!("{e}; nothing ran"))?;
    let loaded = load_paths(&paths);
    if !loaded.errors.is_empty() {
        for error in &loaded.errors {
            eprintln!("error: {}", terminal(&error.to_string()));
        }
        return Err(format!(
            "{} load error(s): a certification needs the whole case set to load; nothing ran",
            loaded.errors.len()
        ));
    }

    let (backend, protocol): (Box<dyn Backend>, bool) = match (&args.backend_cmd, &args.backend) {
        (Some(command), _) => {
            let options = ProcessOptions {
                case_timeout: seconds(args.timeout, "--timeout")?,
                handshake_timeout: seconds(args.handshake_timeout, "--handshake-timeout")?,
                ..ProcessOptions::default()
            };
            let backend = ProcessBackend::spawn(command, options).map_err(|e| e.to_string())?;
            (Box::new(backend), true)
        }
        (None, Some(name)) => (crate::bundled::open(name)?, false),
        (None, None) => unreachable!("clap requires --backend-cmd or --backend"),
    };
    let info = backend.info();
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(folder_name(&info.name)));
    let jobs = args
        .jobs
        .unwrap_or_else(|| if protocol { 1 } else { default_jobs() });
    let pick = CasePick::new(&args.filter, &args.skip, args.case_list.as_deref())?;
    let unmatched = pick.unmatched_list_entries(&loaded.cases);
    if !unmatched.is_empty() {
        return Err(format!(
            "--case-list entries that name no case: {}; nothing ran",
            unmatched.join(", ")
        ));
    }
    let options = CertifyOptions {
        feature_level: args.feature_level,
        pick: pick.clone(),
        jobs,
        report_dir: Some(dir.clone()),
        baseline,
    };
    let targets = crate::certify::targets(&info, args.feature_level).map_err(|e| e.to_string())?;
    let applicable = loaded
        .cases
        .iter()
        .filter(|c| crate::certify::is_applicable(c, &info, &targets, &pick))
        .count();
    let shown_paths = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!(
        "certifying {} {} ({}) on {applicable} applicable case(s) of {} in {}",
        terminal(&info.name),
        terminal(&info.version),
        terminal(&info.device),
        loaded.cases.len(),
        terminal(&shown_paths)
    );
    let bar = super::progress::Progress::new(applicable as u64, Scope::new(&info, &targets));
    let progress = |result: &CaseResult| bar.case_done(result);
    let certification = certify_backend(backend.as_ref(), loaded.cases, &options, &progress)
        .map_err(|e| e.to_string())?;
    bar.finish();
    drop(backend);
    if let Some(rescued) = &certification.rescued {
        eprintln!(
            "note: the results of an earlier run that was killed are kept in {}",
            terminal(&rescued.display().to_string())
        );
    }
    if let Some(error) = &certification.partial_error {
        eprintln!(
            "warning: appending to results.partial.jsonl failed ({error}); the final reports \
             are complete"
        );
    }
    if certification.interrupted {
        summarise(&certification, &dir);
        let kept = certification
            .interrupted_file
            .as_ref()
            .map_or_else(String::new, |path| {
                format!(
                    "; its results are also kept in {}",
                    terminal(&path.display().to_string())
                )
            });
        eprintln!(
            "interrupted: {} of {} applicable case(s) ran; the reports and the certificate say \
             so{kept}{}",
            certification.results.len(),
            certification.meta.case_count,
            if args.write_baseline.is_some() {
                "; no baseline written"
            } else {
                ""
            }
        );
        return Ok(EXIT_INTERRUPTED);
    }
    if let Some(path) = &args.write_baseline {
        let fresh = Baseline::from_results(&info.name, &certification.results, "to be triaged");
        report::write_atomic(path, fresh.to_yaml().as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!(
            "wrote {} ({} expected failure(s))",
            terminal(&path.display().to_string()),
            fresh.expected.len()
        );
    }
    Ok(summarise(&certification, &dir))
}

/// A backend name as a folder name: characters other than letters, digits, `.`, `_` and `-`
/// become `-`.
fn folder_name(name: &str) -> String {
    let folder: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if folder.is_empty() || folder.starts_with('.') {
        format!("backend{folder}")
    } else {
        folder
    }
}

/// Prints the table, the verdict and the baseline comparison; picks the exit status.
fn summarise(certification: &Certification, dir: &Path) -> u8 {
    let cert = &certification.certificate;
    print!("{}", report::terminal_table(&certification.report()));
    for operator in cert.operators.iter().filter(|o| o.claimed && !o.certified) {
        const SHOWN: usize = 8;
        let mut blocking: Vec<String> = operator
            .blocking
            .iter()
            .take(SHOWN)
            .map(|b| format!("{} ({})", terminal(&b.case), b.outcome.name()))
            .collect();
        if operator.blocking.len() > SHOWN {
            blocking.push(format!(
                "and {} more (certificate.md)",
                operator.blocking.len() - SHOWN
            ));
        }
        match operator.next_level {
            Some(next) => println!(
                "{} does not reach {next}: {}",
                operator.operator.name(),
                blocking.join(", ")
            ),
            None => println!("{}: no required case ran", operator.operator.name()),
        }
    }
    let targets: Vec<String> = cert.targets.iter().map(ToString::to_string).collect();
    println!(
        "{} {} at {}: {} case(s), {} not applicable; reports and certificate in {}",
        terminal(&cert.backend.name),
        if cert.certified {
            "CERTIFIED"
        } else if cert.interrupted {
            "NOT CERTIFIED (interrupted)"
        } else {
            "NOT CERTIFIED"
        },
        targets.join(" and "),
        certification.results.len(),
        certification.not_applicable,
        terminal(&dir.display().to_string())
    );
    if let Some(comparison) = &cert.baseline {
        for failure in &comparison.new_failures {
            let expected = failure
                .baseline_outcome
                .map_or_else(String::new, |o| format!(", baseline expects {}", o.name()));
            println!(
                "NEW FAILURE {} ({}{expected}): {}",
                terminal(&failure.case),
                failure.outcome.name(),
                terminal(&failure.detail)
            );
        }
        for entry in &comparison.newly_passing {
            println!(
                "NEWLY PASSING {} (baseline expects {}): remove it from {} to tighten the baseline",
                terminal(&entry.case),
                entry.outcome.name(),
                terminal(&comparison.baseline)
            );
        }
        println!(
            "baseline {}: {} new failure(s), {} newly passing, {} still failing as expected, {} \
             not run",
            terminal(&comparison.baseline),
            comparison.new_failures.len(),
            comparison.newly_passing.len(),
            comparison.still_failing,
            comparison.not_run.len()
        );
    }
    if certification.succeeded() {
        EXIT_OK
    } else {
        EXIT_FAILURES
    }
}

#[cfg(test)]
mod tests {
    use super::folder_name;

    #[test]
    fn folder_names_are_safe() {
        assert_eq!(folder_name("onnxruntime"), "onnxruntime");
        assert_eq!(
            folder_name("broken_backend:ties-wrong-way"),
            "broken_backend-ties-wrong-way"
        );
        assert_eq!(folder_name("../x"), "backend..-x");
        assert_eq!(folder_name(""), "backend");
    }
}
