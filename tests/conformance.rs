//! Conformance trials: one libtest-mimic trial per (bundled backend × case), named
//! `<backend>::<case id>`, e.g. `cpu::dml_one_hot::documented::example_1`; with
//! `OPCONFORM_BACKEND_CMD` set, one more trial per case for that out-of-process backend
//! (protocol v1, `docs/backend-protocol.md`), named `protocol::<case id>`.
//!
//! Filters, `--exact`, `--ignored`, `--list` and `cargo nextest run` (including `--partition`)
//! work as for ordinary tests. The loaded, validated suite is cached in
//! `<target>/opconform-suite-cache/` (`opconform::case::cache`): a process that finds a current
//! entry reads the case list and then only the cases it runs, so listing and one trial cost
//! milliseconds, not a reload of every case file. `OPCONFORM_SUITE_CACHE=off` loads the files
//! directly; `OPCONFORM_SUITE_CACHE=DIR` keeps the cache in DIR.
//!
//! A trial opens its backend once per process. Vulkan trials are ignored, with the reason,
//! when no Vulkan driver is present, unless `OPCONFORM_REQUIRE_VULKAN=1` makes that a failure.
//! The protocol backend is started (and greeted) once per process when protocol trials are
//! wanted; the cases it does not claim (an operator it does not implement, a level above its
//! claim) are ignored trials, as `certify` leaves them out; informational cases that do not
//! pass print a note and pass, as they never fail a certification.
//!
//! The `harness::protocol_trials::*` trials test that: they run this binary again with
//! `OPCONFORM_BACKEND_CMD` naming `tools/broken_backend.py` (a numpy oracle; with `--break` a
//! planted bug, with `--claims` narrower claims) and check which trials fail, pass or are
//! ignored. They need a Python with numpy (`.venv/bin/python`, else `python3`); without one
//! they print why and pass, except under `CI=true`.

use libtest_mimic::{Arguments, Failed, Trial};
use opconform::case::cache::{self, CacheUse, Suite};
use opconform::case::Case;
use opconform::protocol::{ProcessBackend, ProcessOptions};
use opconform::report::verdict::{verdict, Scope, Verdict};
use opconform::runner::run_case;
use opconform_backend::{Backend, BackendInfo};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

/// Set in the processes the self-test trials start, which must not start more of them.
const SELF_TEST_CHILD: &str = "OPCONFORM_CONFORMANCE_CHILD";

/// An opened backend with its info, or why it is unavailable.
type Opened = Result<(Box<dyn Backend>, BackendInfo), String>;

/// Where a backend comes from.
enum Source {
    /// A bundled backend, by name.
    Bundled(&'static str),
    /// An out-of-process backend: the command line.
    Protocol(String),
}

/// A backend opened at most once per process.
struct LazyBackend {
    source: Source,
    opened: OnceLock<Opened>,
}

impl LazyBackend {
    fn new(source: Source) -> LazyBackend {
        LazyBackend {
            source,
            opened: OnceLock::new(),
        }
    }

    fn get(&self) -> &Opened {
        self.opened.get_or_init(|| {
            let backend: Box<dyn Backend> = match &self.source {
                Source::Bundled(name) => opconform::bundled::open(name)?,
                Source::Protocol(command) => Box::new(
                    ProcessBackend::spawn(command, ProcessOptions::default())
                        .map_err(|e| e.to_string())?,
                ),
            };
            let info = backend.info();
            Ok((backend, info))
        })
    }
}

fn vulkan_required() -> bool {
    std::env::var("OPCONFORM_REQUIRE_VULKAN").is_ok_and(|v| v == "1")
}

/// The suite cache folder: `OPCONFORM_SUITE_CACHE` (`off` for none), else in the target dir.
fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("OPCONFORM_SUITE_CACHE") {
        Some(value) if value == "off" => None,
        Some(value) if !value.is_empty() => Some(PathBuf::from(value)),
        _ => cache::default_cache_dir(),
    }
}

/// The protocol backend's command line, when `OPCONFORM_BACKEND_CMD` names one.
fn protocol_command() -> Option<String> {
    std::env::var("OPCONFORM_BACKEND_CMD")
        .ok()
        .filter(|command| !command.trim().is_empty())
}

/// False when the arguments select trials of other backends only (nextest runs each trial as
/// `--exact NAME`): then the protocol backend need not be started in this process.
fn may_run_prefix(args: &Arguments, prefix: &str) -> bool {
    match &args.filter {
        Some(filter) if args.exact => filter.starts_with(prefix),
        _ => true,
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases");
    let (suite, used) = Suite::load(&[root], cache_dir().as_deref());
    if let CacheUse::WriteFailed(reason) = &used {
        eprintln!("note: the suite cache could not be written: {reason}");
    }
    let suite = Arc::new(suite);
    let mut trials = Vec::new();
    for error in suite.errors() {
        let name = format!("load::{}:{}", error.file.display(), error.line);
        let message = error.to_string();
        trials.push(Trial::test(name, move || Err(Failed::from(message))));
    }
    for name in opconform::bundled::BUNDLED {
        let backend = Arc::new(LazyBackend::new(Source::Bundled(name)));
        // Only the Vulkan backend can be absent. Listing and running must agree on which
        // trials are ignored (nextest lists in one process and runs each in another), so
        // availability is decided the same way in both (a process running only another
        // backend's trials need not probe: those trials are filtered out).
        let probe = may_run_prefix(&args, &format!("{name}::"));
        let unavailable = if name == "vulkan" && !vulkan_required() && probe {
            backend.get().as_ref().err().cloned()
        } else {
            None
        };
        if let Some(reason) = &unavailable {
            eprintln!("note: {name} trials are ignored: {reason}");
        }
        add_trials(&mut trials, name, &suite, &backend, |_| {
            unavailable.is_some()
        });
    }
    let protocol = protocol_command().map(|command| {
        opconform::interrupt::install().expect("SIGINT/SIGTERM handling");
        Arc::new(LazyBackend::new(Source::Protocol(command)))
    });
    if let Some(backend) = &protocol {
        // The backend's claims decide which trials are ignored; a backend that does not
        // start leaves every trial in, failing with the reason.
        let scope = if may_run_prefix(&args, "protocol::") {
            scope_of(backend)
        } else {
            None
        };
        if let Some(scope) = &scope {
            let claimed = suite
                .entries()
                .iter()
                .filter(|e| scope.covers(e.operator, e.level))
                .count();
            eprintln!(
                "note: protocol backend: {claimed} of {} cases within its claims; the others \
                 are ignored trials",
                suite.entries().len()
            );
        }
        add_trials(&mut trials, "protocol", &suite, backend, |index| {
            let entry = &suite.entries()[index];
            scope
                .as_ref()
                .is_some_and(|s| !s.covers(entry.operator, entry.level))
        });
    }
    if std::env::var_os(SELF_TEST_CHILD).is_none() {
        trials.extend(self_test_trials());
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // The trials are gone; dropping the last handle shuts the backend process down.
    drop(protocol);
    conclusion.exit();
}

/// The scope `certify` judges `backend` in (its operators, its claims as targets), if it opens.
fn scope_of(backend: &LazyBackend) -> Option<Scope> {
    let (_, info) = backend.get().as_ref().ok()?;
    let targets = opconform::certify::targets(info, None).ok()?;
    Some(Scope::new(info, &targets))
}

/// Adds one trial per case of `suite` on `backend`, named `<prefix>::<case id>`; `ignored`
/// says, per case index, whether the trial is ignored.
fn add_trials(
    trials: &mut Vec<Trial>,
    prefix: &str,
    suite: &Arc<Suite>,
    backend: &Arc<LazyBackend>,
    ignored: impl Fn(usize) -> bool,
) {
    for (index, entry) in suite.entries().iter().enumerate() {
        let suite = Arc::clone(suite);
        let backend = Arc::clone(backend);
        let trial_name = format!("{prefix}::{}", entry.id);
        let trial = Trial::test(trial_name, move || {
            let case = suite.case(index).map_err(Failed::from)?;
            run_trial(&backend, &case)
        });
        trials.push(trial.with_ignored_flag(ignored(index)));
    }
}

fn run_trial(backend: &LazyBackend, case: &Case) -> Result<(), Failed> {
    let (backend, info) = backend
        .get()
        .as_ref()
        .map_err(|e| Failed::from(e.as_str()))?;
    let result = run_case(backend.as_ref(), info, case);
    // The verdict every report uses: only a required case within the claims fails a trial.
    let targets =
        opconform::certify::targets(info, None).map_err(|e| Failed::from(e.to_string()))?;
    let scope = Scope::new(info, &targets);
    match verdict(&result, &scope, false) {
        Verdict::Pass | Verdict::NotClaimed | Verdict::Baselined => Ok(()),
        Verdict::Informational => {
            eprintln!(
                "note: informational {} {}: {}",
                case.id,
                result.outcome.name(),
                result.detail
            );
            Ok(())
        }
        Verdict::Failure => {
            let outcome = result.outcome;
            let mut message = format!(
                "{} ({}:{}): {}: {}",
                case.id,
                case.file.display(),
                case.line,
                outcome.name(),
                result.detail
            );
            if let Some(diff) = result.diff {
                message.push('\n');
                message.push_str(&diff);
            }
            Err(Failed::from(message))
        }
    }
}

/// The self-test trials of the `protocol::` trials (see the module documentation).
fn self_test_trials() -> Vec<Trial> {
    let name = |n: &str| format!("harness::protocol_trials::{n}");
    vec![
        Trial::test(name("a_planted_bug_fails_its_trials"), || {
            let filter = ["protocol::dml_argmax::documented::"];
            let Some(run) = run_self(&["--break", "ties-wrong-way"], &filter)? else {
                return Ok(());
            };
            expect(&run, !run.success, "the run fails")?;
            let failing = "protocol::dml_argmax::documented::axis_direction_increasing";
            expect_outcome(&run, failing, "FAILED")?;
            expect(
                &run,
                run.output.contains("expected 0, got 4"),
                "the diff is shown",
            )?;
            expect_outcome(&run, "protocol::dml_argmax::documented::example_1", "ok")
        }),
        Trial::test(
            name("the_oracle_passes_and_unclaimed_cases_are_ignored"),
            || {
                // Every documented ArgMax case is at 3_0 (claimed); OneHot-1 (opset1) is not.
                let claims = ["--claims", "3_0"];
                let Some(run) = run_self(&claims, &["protocol::dml_argmax::documented::"])? else {
                    return Ok(());
                };
                expect(&run, run.success, "the run passes")?;
                expect_outcome(&run, "protocol::dml_argmax::documented::example_1", "ok")?;
                let Some(run) = run_self(&claims, &["protocol::ov_one_hot_1::documented::"])?
                else {
                    return Ok(());
                };
                expect(&run, run.success, "the run passes")?;
                expect_outcome(
                    &run,
                    "protocol::ov_one_hot_1::documented::example_1",
                    "ignored",
                )
            },
        ),
        Trial::test(name("an_informational_failure_passes_with_a_note"), || {
            let case = "protocol::dml_argmax::generated::axes::unsorted_2_0_increasing";
            let Some(run) = run_self(&["--break", "ties-wrong-way"], &[case, "--exact"])? else {
                return Ok(());
            };
            expect(&run, run.success, "the run passes")?;
            expect_outcome(&run, case, "ok")?;
            let note =
                "note: informational dml_argmax::generated::axes::unsorted_2_0_increasing fail";
            expect(&run, run.output.contains(note), note)
        }),
    ]
}

/// Checks that the child reported trial `name` with `outcome` (`ok`, `FAILED`, `ignored`).
fn expect_outcome(run: &SelfRun, name: &str, outcome: &str) -> Result<(), Failed> {
    let prefix = format!("test {name} ");
    let found = run
        .output
        .lines()
        .find(|line| line.starts_with(&prefix))
        .and_then(|line| line.split_whitespace().last());
    expect(run, found == Some(outcome), &format!("{name}: {outcome}"))
}

/// What a child run of this binary printed and whether it succeeded.
struct SelfRun {
    success: bool,
    output: String,
}

fn expect(run: &SelfRun, holds: bool, what: &str) -> Result<(), Failed> {
    if holds {
        Ok(())
    } else {
        Err(Failed::from(format!(
            "expected: {what}\n--- child output ---\n{}",
            run.output
        )))
    }
}

/// Runs this binary with `OPCONFORM_BACKEND_CMD` = the broken backend with `backend_args`,
/// passing `args`; `None` (after a note) when no Python with numpy is found outside CI.
fn run_self(backend_args: &[&str], args: &[&str]) -> Result<Option<SelfRun>, Failed> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(python) = python(repo)? else {
        return Ok(None);
    };
    let script = repo.join("tools/broken_backend.py");
    let command = format!(
        "'{python}' '{}' {}",
        script.display(),
        backend_args.join(" ")
    );
    let exe = std::env::current_exe().map_err(|e| Failed::from(e.to_string()))?;
    let output = Command::new(exe)
        .args(args)
        .env("OPCONFORM_BACKEND_CMD", command)
        .env(SELF_TEST_CHILD, "1")
        .output()
        .map_err(|e| Failed::from(e.to_string()))?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Ok(Some(SelfRun {
        success: output.status.success(),
        output: text,
    }))
}

/// A Python with numpy: `.venv/bin/python`, else `python3`. None outside CI when neither has
/// it (with a note); a failure under `CI=true`.
fn python(repo: &Path) -> Result<Option<String>, Failed> {
    let venv = repo.join(".venv/bin/python").display().to_string();
    let found = [venv, "python3".to_string()].into_iter().find(|python| {
        Command::new(python)
            .args(["-c", "import numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    match found {
        Some(python) => Ok(Some(python)),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => Err(Failed::from(
            "CI=true but neither .venv/bin/python nor python3 has numpy: run \
             `bash .ci/certify-adapters --setup-only`",
        )),
        None => {
            eprintln!("note: skipped, no Python with numpy (.venv/bin/python or python3)");
            Ok(None)
        }
    }
}
