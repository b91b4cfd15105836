//! The runner: executes a case on a backend and turns what happens into a [`CaseResult`].
//!
//! load → validate (at load time) → execute (outputs poisoned first, panics caught) →
//! compare → result. One case never stops a run.

pub mod compare;
pub mod values;

use crate::case::{Case, CaseClass, Expectation};
use compare::{compare, Mismatch};
use opconform_backend::{Backend, BackendError, BackendInfo, Level, OperatorKind, Tensor};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The byte outputs are filled with before a run, and the alternative used to re-check when
/// an expected element happens to equal the first poison.
const POISONS: [u8; 2] = [0xA5, 0x5A];

/// What happened when a case ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Outputs matched (or, for a negative case, the backend rejected the descriptor).
    Pass,
    /// Outputs differed, or a negative case was accepted.
    Fail,
    /// The backend refused a valid descriptor it claims.
    Rejected,
    /// Above what the backend claims, or the backend said it lacks a feature: skipped, counted.
    Unsupported,
    /// The backend panicked or reported an internal error.
    Error,
    /// An out-of-process backend crashed.
    Crash,
    /// An out-of-process backend did not answer in time.
    Timeout,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 7] = [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Rejected,
        Outcome::Unsupported,
        Outcome::Error,
        Outcome::Crash,
        Outcome::Timeout,
    ];

    /// The lower-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Rejected => "rejected",
            Outcome::Unsupported => "unsupported",
            Outcome::Error => "error",
            Outcome::Crash => "crash",
            Outcome::Timeout => "timeout",
        }
    }

    /// True for outcomes that fail a required case (unsupported is counted apart).
    pub fn is_failure(self) -> bool {
        !matches!(self, Outcome::Pass | Outcome::Unsupported)
    }
}

/// The result of one case on one backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseResult {
    /// Full case id.
    pub id: String,
    /// Operator spec name.
    pub operator: OperatorKind,
    /// The case's level.
    pub level: Level,
    /// Required or informational.
    pub class: CaseClass,
    /// True for a negative case.
    pub negative: bool,
    /// What happened.
    pub outcome: Outcome,
    /// One line on why (empty on a plain pass).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Expected against actual, for a failed comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Data type and dimension count of each tensor, for the compliance matrix.
    pub tensors: Vec<TensorShape>,
}

/// The data type and dimension count of one tensor of a case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TensorShape {
    /// Tensor name, e.g. `IndicesTensor`.
    pub tensor: String,
    /// Data type name.
    pub data_type: String,
    /// Dimension count.
    pub dimension_count: usize,
}

impl CaseResult {
    fn new(case: &Case, outcome: Outcome, detail: impl Into<String>) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            operator: case.kind(),
            level: case.level,
            class: case.class,
            negative: case.is_negative(),
            outcome,
            detail: detail.into(),
            diff: None,
            tensors: case
                .operator
                .named_tensors()
                .into_iter()
                .map(|(name, desc)| TensorShape {
                    tensor: name.to_string(),
                    data_type: desc.data_type.to_string(),
                    dimension_count: desc.dimension_count(),
                })
                .collect(),
        }
    }

    /// True when this result fails a required case.
    pub fn fails_required(&self) -> bool {
        self.class == CaseClass::Required && self.outcome.is_failure()
    }
}

/// Runs one case on `backend` (whose `info` the caller fetched once).
pub fn run_case(backend: &dyn Backend, info: &BackendInfo, case: &Case) -> CaseResult {
    if !info.claims_case(case.kind(), case.level) {
        return CaseResult::new(
            case,
            Outcome::Unsupported,
            format!(
                "above what the backend claims ({} at {})",
                case.kind(),
                case.level
            ),
        );
    }
    match &case.expectation {
        Expectation::Invalid(rules) => run_negative(backend, case, rules),
        Expectation::Outputs(expected) => run_positive(backend, case, expected),
    }
}

/// Runs every case on `backend` with `jobs` threads, calling `progress` after each; results
/// are in the order of `cases`. Once SIGINT or SIGTERM is received ([`crate::interrupt`]) no
/// case starts, and a case running then is left out (its backend was killed under it).
pub fn run_cases(
    backend: &dyn Backend,
    cases: &[Case],
    jobs: usize,
    progress: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult> {
    let info = backend.info();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .expect("thread pool");
    pool.install(|| {
        cases
            .par_iter()
            .filter_map(|case| {
                if crate::interrupt::requested() {
                    return None;
                }
                let result = run_case(backend, &info, case);
                if crate::interrupt::requested() {
                    return None;
                }
                progress(&result);
                Some(result)
            })
            .collect()
    })
}

/// Calls the backend with outputs poisoned with `poison`, catching panics.
fn execute(
    backend: &dyn Backend,
    case: &Case,
    poison: u8,
) -> Result<Result<Vec<Tensor>, BackendError>, String> {
    let mut outputs = Vec::new();
    for desc in case.operator.outputs() {
        match Tensor::filled(desc.clone(), poison) {
            Ok(tensor) => outputs.push(tensor),
            Err(e) => return Err(format!("cannot allocate output {}: {e}", desc.summary())),
        }
    }
    let call = catch_unwind(AssertUnwindSafe(|| {
        backend.execute(&case.operator, &case.inputs, &mut outputs, case.level)
    }));
    match call {
        Ok(Ok(())) => Ok(Ok(outputs)),
        Ok(Err(e)) => Ok(Err(e)),
        Err(panic) => Err(panic_message(panic.as_ref())),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic payload)".to_string());
    format!("backend panicked: {text}")
}

fn error_outcome(case: &Case, error: BackendError) -> CaseResult {
    let outcome = match &error {
        BackendError::Unsupported { .. } => Outcome::Unsupported,
        BackendError::Invalid { .. } => Outcome::Rejected,
        BackendError::Internal { .. } => Outcome::Error,
        BackendError::Crash { .. } => Outcome::Crash,
        BackendError::Timeout { .. } => Outcome::Timeout,
    };
    CaseResult::new(case, outcome, error.to_string())
}

fn run_negative(backend: &dyn Backend, case: &Case, rules: &[String]) -> CaseResult {
    match execute(backend, case, POISONS[0]) {
        Err(panic) => CaseResult::new(case, Outcome::Error, panic),
        Ok(Err(BackendError::Invalid {
            rules: reported, ..
        })) => {
            let missing: Vec<&String> = rules.iter().filter(|r| !reported.contains(r)).collect();
            let detail = if missing.is_empty() {
                format!("rejected ({})", reported.join(", "))
            } else {
                format!(
                    "rejected, but without naming {} (named: {})",
                    missing
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    reported.join(", ")
                )
            };
            CaseResult::new(case, Outcome::Pass, detail)
        }
        Ok(Err(BackendError::Unsupported { reason })) => CaseResult::new(
            case,
            Outcome::Fail,
            format!(
                "answered unsupported ({reason}) instead of rejecting a descriptor that breaks {}",
                rules.join(", ")
            ),
        ),
        Ok(Err(other)) => error_outcome(case, other),
        Ok(Ok(_)) => CaseResult::new(
            case,
            Outcome::Fail,
            format!(
                "accepted a descriptor that breaks {} at {}",
                rules.join(", "),
                case.level
            ),
        ),
    }
}

fn run_positive(
    backend: &dyn Backend,
    case: &Case,
    expected: &[crate::case::ExpectedTensor],
) -> CaseResult {
    let mut last = None;
    for poison in poisons_needed(expected) {
        let outputs = match execute(backend, case, poison) {
            Err(panic) => return CaseResult::new(case, Outcome::Error, panic),
            Ok(Err(error)) => return error_outcome(case, error),
            Ok(Ok(outputs)) => outputs,
        };
        let nans = if case.compare == crate::case::Compare::Bits {
            values::NanRule::BitExact
        } else {
            values::NanRule::AnyNan
        };
        let mismatches: Vec<Mismatch> = expected
            .iter()
            .zip(&outputs)
            .filter_map(|(want, got)| compare(want, got, nans))
            .collect();
        if !mismatches.is_empty() {
            let mut result = CaseResult::new(
                case,
                Outcome::Fail,
                mismatches
                    .iter()
                    .map(Mismatch::summary)
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            result.diff = Some(
                mismatches
                    .iter()
                    .map(|m| format!("{}:\n{}", m.tensor, m.diff))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            return result;
        }
        last = Some(CaseResult::new(case, Outcome::Pass, ""));
    }
    last.expect("at least one poison")
}

/// The first poison, plus the second when some defined expected element equals the first
/// poison's pattern (an unwritten element would otherwise pass unnoticed).
fn poisons_needed(expected: &[crate::case::ExpectedTensor]) -> Vec<u8> {
    let collides = expected.iter().any(|tensor| {
        let size = tensor.desc.data_type.size_in_bytes();
        tensor
            .bytes
            .chunks_exact(size)
            .enumerate()
            .any(|(i, element)| tensor.is_defined(i) && element.iter().all(|&b| b == POISONS[0]))
    });
    if collides {
        POISONS.to_vec()
    } else {
        vec![POISONS[0]]
    }
}
