//! Conformance trials: one libtest-mimic trial per (bundled backend × case), named
//! `<backend>::<case id>`, e.g. `cpu::dml_one_hot::documented::example_1`.
//!
//! Filters, `--exact`, `--ignored`, `--list` and `cargo nextest run` (including `--partition`)
//! work as for ordinary tests. Listing loads the case files (and probes for a Vulkan driver); a trial opens its backend
//! once per process. Vulkan trials are ignored, with the reason, when no Vulkan driver is
//! present, unless `OPCONFORM_REQUIRE_VULKAN=1` makes that a failure.

use libtest_mimic::{Arguments, Failed, Trial};
use opconform::case::{load_paths, Case};
use opconform::report::verdict::{verdict, Scope, Verdict};
use opconform::runner::run_case;
use opconform_backend::{Backend, BackendInfo};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// An opened backend with its info, or why it is unavailable.
type Opened = Result<(Box<dyn Backend>, BackendInfo), String>;

/// A bundled backend opened at most once per process.
struct LazyBackend {
    name: &'static str,
    opened: OnceLock<Opened>,
}

impl LazyBackend {
    fn get(&self) -> &Opened {
        self.opened.get_or_init(|| {
            opconform::bundled::open(self.name).map(|backend| {
                let info = backend.info();
                (backend, info)
            })
        })
    }
}

fn vulkan_required() -> bool {
    std::env::var("OPCONFORM_REQUIRE_VULKAN").is_ok_and(|v| v == "1")
}

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases");
    let loaded = load_paths(&[root]);
    let mut trials = Vec::new();
    for error in loaded.errors {
        let name = format!("load::{}:{}", error.file.display(), error.line);
        trials.push(Trial::test(name, move || {
            Err(Failed::from(error.to_string()))
        }));
    }
    let cases: Arc<Vec<Case>> = Arc::new(loaded.cases);
    for name in opconform::bundled::BUNDLED {
        let backend = Arc::new(LazyBackend {
            name,
            opened: OnceLock::new(),
        });
        // Only the Vulkan backend can be absent. Listing and running must agree on which
        // trials are ignored (nextest lists in one process and runs each in another), so
        // availability is decided the same way in both.
        let unavailable = if name == "vulkan" && !vulkan_required() {
            backend.get().as_ref().err().cloned()
        } else {
            None
        };
        if let Some(reason) = &unavailable {
            eprintln!("note: {name} trials are ignored: {reason}");
        }
        for index in 0..cases.len() {
            let cases = Arc::clone(&cases);
            let backend = Arc::clone(&backend);
            let trial_name = format!("{name}::{}", cases[index].id);
            let mut trial = Trial::test(trial_name, move || run_trial(&backend, &cases[index]));
            if unavailable.is_some() {
                trial = trial.with_ignored_flag(true);
            }
            trials.push(trial);
        }
    }
    libtest_mimic::run(&args, trials).exit();
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
