//! `opconform explore`: random valid cases within a backend's claims, failures shrunk to
//! minimal case files (see [`crate::explore`] and docs/explore.md).

use super::{parse_directml_level, terminal, EXIT_FAILURES, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};
use crate::explore::{self, Budget, Exploration, Finding, Options};
use crate::protocol::{ProcessBackend, ProcessOptions};
use clap::Args;
use opconform_backend::{Backend, Level, OperatorKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The default folder findings are written to.
pub const DEFAULT_OUT: &str = "explore-findings";

/// Arguments of `opconform explore`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["backend_cmd", "backend"])))]
#[command(group(clap::ArgGroup::new("budget").args(["time", "cases"])))]
pub struct ExploreArgs {
    /// A bundled backend: cpu or vulkan.
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,
    /// A backend command, run with `sh -c`, speaking backend protocol v1.
    #[arg(long, value_name = "CMD")]
    pub backend_cmd: Option<String>,
    /// Draw only this operator (DML_ARGMAX, DML_NONZERO_COORDINATES, DML_ONE_HOT, OneHot-1).
    #[arg(long, value_name = "OP", value_parser = parse_operator)]
    pub operator: Option<OperatorKind>,
    /// DirectML feature level descriptors must be valid at (default: the backend's claim).
    #[arg(long, value_name = "LEVEL", value_parser = parse_directml_level)]
    pub feature_level: Option<Level>,
    /// Seed of the draws: the same seed finds the same minimal cases.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Time budget, e.g. 60s, 5m (default 60s), shrinking included.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Number of cases to draw instead of a time budget.
    #[arg(long, value_name = "N")]
    pub cases: Option<u64>,
    /// Folder the minimal cases are written to.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    pub out: PathBuf,
    /// Seconds one case may take on a protocol backend before it is a timeout.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
}

/// Parses `--operator`: a spec name such as `DML_ARGMAX` that explore draws.
fn parse_operator(text: &str) -> Result<OperatorKind, String> {
    let operator = OperatorKind::from_name(text)
        .or_else(|| OperatorKind::from_name(&text.to_ascii_uppercase()))
        .or_else(|| {
            OperatorKind::ALL
                .into_iter()
                .find(|op| op.name().eq_ignore_ascii_case(text))
        })
        .ok_or_else(|| format!("`{text}` is not an operator name"))?;
    if explore::draw::OPERATORS.contains(&operator) {
        Ok(operator)
    } else {
        Err(format!("explore does not draw {operator} cases yet"))
    }
}

/// Parses `--time`: seconds, with an optional `s`, `m` or `h` suffix.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.char_indices().last() {
        Some((i, c @ ('s' | 'm' | 'h'))) => (&text[..i], c),
        _ => (text, 's'),
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 60s, 5m or 1h"))?;
    let seconds = match unit {
        'h' => value.checked_mul(3600),
        'm' => value.checked_mul(60),
        _ => Some(value),
    }
    .filter(|&s| s > 0)
    .ok_or_else(|| format!("`{text}` is not a positive duration"))?;
    Ok(Duration::from_secs(seconds))
}

/// Runs `opconform explore`.
pub fn explore(args: &ExploreArgs) -> u8 {
    match explore_inner(args) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("error: {}", terminal(&e));
            EXIT_USAGE
        }
    }
}

fn explore_inner(args: &ExploreArgs) -> Result<u8, String> {
    let backend: Box<dyn Backend> = match (&args.backend_cmd, &args.backend) {
        (Some(command), _) => {
            if !(args.timeout.is_finite() && args.timeout > 0.0) {
                return Err("--timeout needs a positive number of seconds".to_string());
            }
            let options = ProcessOptions {
                case_timeout: Duration::from_secs_f64(args.timeout.min(3600.0)),
                ..ProcessOptions::default()
            };
            Box::new(ProcessBackend::spawn(command, options).map_err(|e| e.to_string())?)
        }
        (None, Some(name)) => crate::bundled::open(name)?,
        (None, None) => unreachable!("clap requires --backend-cmd or --backend"),
    };
    let info = backend.info();
    let level = match args.feature_level {
        Some(level) => level,
        None => match info.claim_for(Level::dml(0x4100)) {
            Some(level) => level,
            // OneHot-1 only: DirectML operators are left out (the backend claims no level).
            None if info.claim_for(Level::Opset(1)).is_some() => Level::dml(0x4100),
            None => return Err(format!("{} claims no feature level or opset", info.name)),
        },
    };
    let operators = match args.operator {
        Some(op) => vec![op],
        None => explore::draw::OPERATORS.to_vec(),
    };
    let budget = match (args.cases, args.time) {
        (Some(n), _) => Budget::Cases(n),
        (None, Some(t)) => Budget::Time(t),
        (None, None) => Budget::Time(Duration::from_secs(60)),
    };
    let options = Options {
        seed: args.seed,
        budget,
        level,
        operators,
        max_shrink_runs: 500,
    };
    let bar = progress_bar(budget);
    let result = explore::explore(backend.as_ref(), &options, &mut |r: &Exploration| {
        bar.set_position(r.tried);
        bar.set_message(format!(
            "{} failure(s), {} shrink run(s)",
            r.findings.len(),
            r.shrink_runs
        ));
    });
    bar.finish_and_clear();
    if result.tried == 0 {
        return Err(format!(
            "no case could be drawn for {} at {level} (does it claim DML_ARGMAX, \
             DML_NONZERO_COORDINATES, DML_ONE_HOT or OneHot-1 at opset1?)",
            info.name
        ));
    }
    write_findings(&args.out, &result)?;
    print_summary(&args.out, &options, &result);
    if crate::interrupt::requested() {
        eprintln!(
            "interrupted after {} case(s); the findings so far are written",
            result.tried
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(if result.findings.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURES
    })
}

fn progress_bar(budget: Budget) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let (bar, template) = match budget {
        Budget::Cases(n) => (
            indicatif::ProgressBar::new(n),
            "{bar:40} {pos}/{len} cases, {msg} {elapsed}",
        ),
        Budget::Time(_) => (
            indicatif::ProgressBar::new_spinner(),
            "{spinner} {pos} cases, {msg} {elapsed}",
        ),
    };
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("static template"));
    bar
}

/// Writes each finding as `<id>.yaml` under `out` (informational ones under
/// `out/informational/`); nothing is written when nothing was found.
fn write_findings(out: &Path, result: &Exploration) -> Result<(), String> {
    let write = |dir: &Path, finding: &Finding| -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(format!("{}.yaml", finding.id));
        std::fs::write(&path, &finding.text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    for finding in &result.findings {
        write(out, finding)?;
    }
    for finding in &result.informational {
        write(&out.join("informational"), finding)?;
    }
    Ok(())
}

fn print_summary(out: &Path, options: &Options, result: &Exploration) {
    let shown = out.display().to_string();
    println!(
        "{} case(s) drawn at {} with seed {}: {} distinct failure(s), {} informational",
        result.tried,
        options.level,
        options.seed,
        result.findings.len(),
        result.informational.len()
    );
    println!(
        "{} of them invalid descriptors the backend must refuse; {} backend run(s) while shrinking",
        result.invalid_tried, result.shrink_runs
    );
    if result.no_valid_draw > 0 {
        println!(
            "{} draw(s) found no descriptor valid at {}",
            result.no_valid_draw, options.level
        );
    }
    for finding in &result.findings {
        let what = match finding.rule {
            Some(rule) if finding.outcome == crate::runner::Outcome::Fail => {
                format!("accepted an invalid descriptor of rule {rule}")
            }
            _ => finding.outcome.name().to_string(),
        };
        println!(
            "FAIL {}/{}.yaml ({what}, {} elements): {}",
            terminal(&shown),
            finding.id,
            finding.elements,
            terminal(&finding.detail)
        );
        if let Some(stop) = finding.shrink_stop {
            println!("  ({})", stop.describe());
        }
    }
    for finding in &result.informational {
        println!(
            "informational {}/informational/{}.yaml ({}): {}",
            terminal(&shown),
            finding.id,
            finding.outcome.name(),
            terminal(&finding.detail)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn operators_are_spec_names() {
        assert_eq!(parse_operator("DML_ARGMAX"), Ok(OperatorKind::DmlArgMax));
        assert_eq!(parse_operator("OneHot-1"), Ok(OperatorKind::OvOneHot1));
        assert_eq!(parse_operator("onehot-1"), Ok(OperatorKind::OvOneHot1));
        assert!(parse_operator("DML_SOFTMAX").is_err());
    }
}
