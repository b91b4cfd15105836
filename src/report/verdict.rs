//! The one verdict of a case result that the exit status, `junit.xml`, the console table,
//! `summary.md`, `index.html` and the certificate all share: a required case within what the
//! backend is certified at that did not pass is a failure, unless a baseline expects exactly
//! that outcome; informational cases and cases outside the backend's claims never fail a run.

use crate::case::CaseClass;
use crate::runner::{CaseResult, Outcome};
use opconform_backend::{BackendInfo, Level, OperatorKind};
use serde::{Deserialize, Serialize};

/// How one result counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The case passed.
    Pass,
    /// A required case within the targets that did not pass (an `unsupported` answer within
    /// the claims included): it fails the run and blocks certification.
    Failure,
    /// Such a failure that the baseline expects with this outcome: reported, not failing.
    Baselined,
    /// An informational case that did not pass: reported, never failing.
    Informational,
    /// A required case of an operator the backend does not implement or above its targets:
    /// skipped.
    NotClaimed,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Verdict; 5] = [
        Verdict::Failure,
        Verdict::Baselined,
        Verdict::Informational,
        Verdict::NotClaimed,
        Verdict::Pass,
    ];

    /// The lower-case name used in reports and filters.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Failure => "failure",
            Verdict::Baselined => "baselined",
            Verdict::Informational => "informational",
            Verdict::NotClaimed => "not_claimed",
        }
    }
}

/// What a run is judged against: the operators the backend implements and one target level
/// per family (see [`crate::certify::targets`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// Operators the backend implements.
    pub operators: Vec<OperatorKind>,
    /// At most one level per family.
    pub targets: Vec<Level>,
}

impl Scope {
    /// The scope of `backend` judged at `targets`.
    pub fn new(backend: &BackendInfo, targets: &[Level]) -> Scope {
        Scope {
            operators: backend.operators.clone(),
            targets: targets.to_vec(),
        }
    }

    /// True when a required case of `operator` at `level` must pass.
    pub fn covers(&self, operator: OperatorKind, level: Level) -> bool {
        self.operators.contains(&operator)
            && self
                .targets
                .iter()
                .any(|t| t.family() == level.family() && t.at_least(level))
    }
}

/// The verdict of `result` in `scope`; `baselined` says whether a baseline expects this
/// required case with this outcome.
pub fn verdict(result: &CaseResult, scope: &Scope, baselined: bool) -> Verdict {
    if result.outcome == Outcome::Pass {
        Verdict::Pass
    } else if result.class == CaseClass::Informational {
        Verdict::Informational
    } else if !scope.covers(result.operator, result.level) {
        Verdict::NotClaimed
    } else if baselined {
        Verdict::Baselined
    } else {
        Verdict::Failure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(class: CaseClass, outcome: Outcome, level: Level) -> CaseResult {
        CaseResult {
            id: "x".into(),
            operator: OperatorKind::DmlArgMax,
            level,
            class,
            negative: false,
            outcome,
            detail: String::new(),
            diff: None,
            tensors: Vec::new(),
        }
    }

    #[test]
    fn unsupported_within_the_claims_fails_and_informational_never_does() {
        let scope = Scope {
            operators: vec![OperatorKind::DmlArgMax],
            targets: vec![Level::dml(0x4000), Level::Opset(1)],
        };
        let at = Level::dml(0x3000);
        let v = |class, outcome, level, baselined| {
            verdict(&result(class, outcome, level), &scope, baselined)
        };
        use CaseClass::{Informational, Required};
        assert_eq!(v(Required, Outcome::Pass, at, false), Verdict::Pass);
        assert_eq!(
            v(Required, Outcome::Unsupported, at, false),
            Verdict::Failure
        );
        assert_eq!(v(Required, Outcome::Fail, at, true), Verdict::Baselined);
        assert_eq!(
            v(Informational, Outcome::Fail, at, false),
            Verdict::Informational
        );
        assert_eq!(
            v(Required, Outcome::Unsupported, Level::dml(0x4100), false),
            Verdict::NotClaimed
        );
        let other_operator = CaseResult {
            operator: OperatorKind::DmlOneHot,
            ..result(Required, Outcome::Fail, at)
        };
        assert_eq!(verdict(&other_operator, &scope, false), Verdict::NotClaimed);
    }
}
