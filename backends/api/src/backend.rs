//! The object-safe [`Backend`] trait every implementation under test provides.

use crate::{Level, OperatorDesc, OperatorKind, Tensor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a backend is and what it claims to implement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendInfo {
    /// Short name, e.g. `cpu`.
    pub name: String,
    /// The backend's own version.
    pub version: String,
    /// The device it runs on, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub device: String,
    /// The highest level claimed per spec family (at most one per family). Cases above these
    /// are `unsupported`, not failures.
    pub claims: Vec<Level>,
    /// The operators it implements.
    pub operators: Vec<OperatorKind>,
}

impl BackendInfo {
    /// The level claimed for the family of `level`, if any.
    pub fn claim_for(&self, level: Level) -> Option<Level> {
        self.claims
            .iter()
            .copied()
            .find(|c| c.family() == level.family())
    }

    /// True when the backend claims `operator` at `level` or above.
    pub fn claims_case(&self, operator: OperatorKind, level: Level) -> bool {
        self.operators.contains(&operator)
            && self.claim_for(level).is_some_and(|c| c.at_least(level))
    }
}

/// Why a backend did not produce outputs.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendError {
    /// The backend does not implement this (a type, rank or feature it lacks).
    Unsupported {
        /// What is missing.
        reason: String,
    },
    /// The descriptor is invalid; `rules` names the violated rule ids from `specs/`.
    Invalid {
        /// Violated rule ids, e.g. `ONE_HOT.INDICES_AXIS_SIZE`.
        rules: Vec<String>,
        /// Human-readable detail.
        message: String,
    },
    /// Something went wrong inside the backend.
    Internal {
        /// What went wrong.
        message: String,
    },
    /// The backend crashed (an out-of-process backend exited or wrote garbage).
    Crash {
        /// What happened, with the tail of the backend's stderr.
        message: String,
    },
    /// The backend did not answer within the per-case time limit.
    Timeout {
        /// The limit, in seconds.
        seconds: f64,
        /// The tail of the backend's stderr.
        message: String,
    },
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Unsupported { reason } => write!(f, "unsupported: {reason}"),
            BackendError::Invalid { rules, message } => {
                write!(f, "invalid descriptor ({}): {message}", rules.join(", "))
            }
            BackendError::Internal { message } => write!(f, "internal error: {message}"),
            BackendError::Crash { message } => write!(f, "backend crashed: {message}"),
            BackendError::Timeout { seconds, message } => {
                write!(f, "backend timed out after {seconds} s: {message}")
            }
        }
    }
}

impl std::error::Error for BackendError {}

/// An implementation of the operators under test.
///
/// The harness allocates `outputs` from the descriptor and fills them with a poison pattern
/// before calling [`Backend::execute`]; the backend must write every element the spec defines.
/// `level` is the level the run certifies: a backend rejects a descriptor invalid at that
/// level with [`BackendError::Invalid`] naming the rule ids (see [`crate::validate`]).
/// Implementations must be callable from several threads at once.
pub trait Backend: Send + Sync {
    /// Name, version, device and claims.
    fn info(&self) -> BackendInfo;

    /// Runs `operator` on `inputs` (descriptor order), writing into `outputs` (descriptor order).
    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError>;
}
