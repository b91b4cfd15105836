//! `opconform certify`: certifies a backend (a command speaking the backend protocol, or a
//! bundled one) with [`crate::certify::certify_backend`], writing the reports and the
//! certificate, and optionally comparing with a baseline of known failures.

use super::{EXIT_FAILURES, EXIT_OK, EXIT_USAGE};
use crate::case::load_paths;
use crate::certify::{certify_backend, Baseline, Certification, CertifyOptions};
use crate::protocol::{ProcessBackend, ProcessOptions};
use crate::report;
use crate::runner::CaseResult;
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
    #[arg(long, value_name = "LEVEL")]
    pub feature_level: Option<Level>,
    /// Case files or folders (default: cases/).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub cases: Vec<PathBuf>,
    /// Run only cases whose id contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Report folder (default: reports/<backend name from the handshake>).
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
    /// Worker threads (default: 1 for a protocol backend, the number of cores for a bundled
    /// one).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// Runs `opconform certify`.
pub fn certify(args: &CertifyArgs) -> u8 {
    match certify_inner(args) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("error: {message}");
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
    let paths = if args.cases.is_empty() {
        vec![PathBuf::from("cases")]
    } else {
        args.cases.clone()
    };
    let loaded = load_paths(&paths);
    if !loaded.errors.is_empty() {
        for error in &loaded.errors {
            eprintln!("error: {error}");
        }
        return Err(format!(
            "{} load error(s): a certification needs the whole case set to load",
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
    let jobs = args.jobs.unwrap_or_else(|| {
        if protocol {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    });
    let options = CertifyOptions {
        feature_level: args.feature_level,
        filter: args.filter.clone(),
        jobs,
        report_dir: Some(dir.clone()),
        baseline,
    };
    let targets = crate::certify::targets(&info, args.feature_level).map_err(|e| e.to_string())?;
    let applicable = loaded
        .cases
        .iter()
        .filter(|c| crate::certify::is_applicable(c, &info, &targets, args.filter.as_deref()))
        .count();
    eprintln!(
        "certifying {} {} ({}) on {applicable} applicable case(s) of {} in {}",
        info.name,
        info.version,
        info.device,
        loaded.cases.len(),
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let bar = super::progress_bar(applicable as u64);
    let progress = |result: &CaseResult| {
        bar.inc(1);
        if bar.is_hidden() && result.outcome.is_failure() {
            eprintln!("{} {}", result.outcome.name(), result.id);
        }
    };
    let certification = certify_backend(backend.as_ref(), loaded.cases, &options, &progress)
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    drop(backend);
    if certification.moved_interrupted {
        eprintln!(
            "note: {} held the results of an interrupted run; they are now in {}",
            dir.join(crate::certify::partial::PARTIAL_RESULTS).display(),
            dir.join(crate::certify::partial::INTERRUPTED_RESULTS)
                .display()
        );
    }
    if let Some(path) = &args.write_baseline {
        let fresh = Baseline::from_results(&info.name, &certification.results, "to be triaged");
        report::write_atomic(path, fresh.to_yaml().as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!(
            "wrote {} ({} expected failure(s))",
            path.display(),
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
    print!(
        "{}",
        report::terminal_table(
            &certification.results,
            Some(certification.meta.feature_level)
        )
    );
    for operator in cert.operators.iter().filter(|o| o.claimed && !o.certified) {
        const SHOWN: usize = 8;
        let mut blocking: Vec<String> = operator
            .blocking
            .iter()
            .take(SHOWN)
            .map(|b| format!("{} ({})", b.case, b.outcome.name()))
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
        cert.backend.name,
        if cert.certified {
            "CERTIFIED"
        } else {
            "NOT CERTIFIED"
        },
        targets.join(" and "),
        certification.results.len(),
        certification.not_applicable,
        dir.display()
    );
    if let Some(comparison) = &cert.baseline {
        for failure in &comparison.new_failures {
            let expected = failure
                .baseline_outcome
                .map_or_else(String::new, |o| format!(", baseline expects {}", o.name()));
            println!(
                "NEW FAILURE {} ({}{expected}): {}",
                failure.case,
                failure.outcome.name(),
                failure.detail
            );
        }
        for entry in &comparison.newly_passing {
            println!(
                "NEWLY PASSING {} (baseline expects {}): remove it from {} to tighten the baseline",
                entry.case,
                entry.outcome.name(),
                comparison.baseline
            );
        }
        println!(
            "baseline {}: {} new failure(s), {} newly passing, {} still failing as expected, {} \
             not run",
            comparison.baseline,
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
