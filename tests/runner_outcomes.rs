//! The runner classifies what a backend does: wrong values, unwritten elements, rejections of
//! valid descriptors, acceptance of invalid ones, panics and internal errors — each one case's
//! outcome, never the end of the run.

use opconform::case::load::load_text;
use opconform::case::Case;
use opconform::runner::{run_case, run_cases, Outcome};
use opconform_backend::{
    Backend, BackendError, BackendInfo, Level, OperatorDesc, OperatorKind, Tensor,
};
use std::path::Path;

/// What a scripted backend does with a call.
type Script = fn(&OperatorDesc, &[Tensor], &mut [Tensor]) -> Result<(), BackendError>;

/// A backend whose behaviour each test chooses.
struct Scripted(Script);

impl Backend for Scripted {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "scripted".into(),
            version: "0".into(),
            device: "test".into(),
            claims: vec![Level::dml(0x4100)],
            operators: vec![OperatorKind::DmlArgMax],
        }
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        _level: Level,
    ) -> Result<(), BackendError> {
        (self.0)(operator, inputs, outputs)
    }
}

/// ArgMax of {3,2,1,2,3}: 0 increasing (the page's one-liner), and a negative case.
fn cases() -> Vec<Case> {
    let text = r#"format: 1
cases:
  - id: ties
    operator: DML_ARGMAX
    level: "3_0"
    source: {hand_written: test}
    attributes: {Axes: [0], AxisDirection: DML_AXIS_DIRECTION_INCREASING}
    inputs:
      InputTensor: {type: FLOAT32, sizes: [5], data: [3, 2, 1, 2, 3]}
    outputs:
      OutputTensor: {type: UINT32, sizes: [1], data: [0]}
  - id: bad_axis
    operator: DML_ARGMAX
    level: "3_0"
    source: {hand_written: test}
    attributes: {Axes: [1], AxisDirection: DML_AXIS_DIRECTION_INCREASING}
    inputs:
      InputTensor: {type: FLOAT32, sizes: [5], data: [3, 2, 1, 2, 3]}
    outputs:
      OutputTensor: {type: UINT32, sizes: [5]}
    expect_invalid: [ARGMAX.AXES_RANGE]
"#;
    let (cases, errors) = load_text(Path::new("t"), Path::new("t/dml_argmax.yaml"), text);
    assert!(errors.is_empty(), "{errors:?}");
    cases
}

fn outcome_of(backend: Scripted, id: &str) -> (Outcome, String, Option<String>) {
    let cases = cases();
    let case = cases.iter().find(|c| c.id.ends_with(id)).unwrap();
    let result = run_case(&backend, &backend.info(), case);
    (result.outcome, result.detail, result.diff)
}

fn write_u32(outputs: &mut [Tensor], value: u32) {
    outputs[0].data[..4].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn right_answer_passes() {
    let backend = Scripted(|_, _, out| {
        write_u32(out, 0);
        Ok(())
    });
    assert_eq!(outcome_of(backend, "ties").0, Outcome::Pass);
}

#[test]
fn ties_the_wrong_way_fail_with_a_diff() {
    let backend = Scripted(|_, _, out| {
        write_u32(out, 4);
        Ok(())
    });
    let (outcome, detail, diff) = outcome_of(backend, "ties");
    assert_eq!(outcome, Outcome::Fail);
    assert!(
        detail.contains("first at [0]: expected 0, got 4"),
        "{detail}"
    );
    let diff = diff.unwrap();
    assert!(
        diff.contains("-[:] [0]") && diff.contains("+[:] [4]"),
        "{diff}"
    );
}

#[test]
fn an_unwritten_element_is_caught_by_the_poison() {
    let backend = Scripted(|_, _, _| Ok(()));
    assert_eq!(outcome_of(backend, "ties").0, Outcome::Fail);
}

#[test]
fn rejecting_a_valid_descriptor_is_rejected() {
    let backend = Scripted(|_, _, _| {
        Err(BackendError::Invalid {
            rules: vec![],
            message: "no".into(),
        })
    });
    assert_eq!(outcome_of(backend, "ties").0, Outcome::Rejected);
}

#[test]
fn negative_cases_pass_only_when_rejected() {
    let rejects = Scripted(|_, _, _| {
        Err(BackendError::Invalid {
            rules: vec!["ARGMAX.AXES_RANGE".into()],
            message: "axis".into(),
        })
    });
    assert_eq!(outcome_of(rejects, "bad_axis").0, Outcome::Pass);
    let accepts = Scripted(|_, _, _| Ok(()));
    let (outcome, detail, _) = outcome_of(accepts, "bad_axis");
    assert_eq!(outcome, Outcome::Fail);
    assert!(detail.contains("accepted"), "{detail}");
}

#[test]
fn panics_and_internal_errors_are_errors_and_the_run_goes_on() {
    let panics = Scripted(|_, _, _| panic!("boom"));
    let results = run_cases(&panics, &cases(), 2, &|_| {});
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.outcome == Outcome::Error));
    assert!(results[0].detail.contains("boom"));
    let internal = Scripted(|_, _, _| {
        Err(BackendError::Internal {
            message: "oops".into(),
        })
    });
    assert_eq!(outcome_of(internal, "ties").0, Outcome::Error);
}

#[test]
fn cases_above_the_claim_are_unsupported() {
    struct Low;
    impl Backend for Low {
        fn info(&self) -> BackendInfo {
            BackendInfo {
                name: "low".into(),
                version: "0".into(),
                device: "test".into(),
                claims: vec![Level::dml(0x2100)],
                operators: vec![OperatorKind::DmlArgMax],
            }
        }
        fn execute(
            &self,
            _: &OperatorDesc,
            _: &[Tensor],
            _: &mut [Tensor],
            _: Level,
        ) -> Result<(), BackendError> {
            unreachable!("never called above its claim")
        }
    }
    let cases = cases();
    let result = run_case(&Low, &Low.info(), &cases[0]);
    assert_eq!(result.outcome, Outcome::Unsupported);
}
