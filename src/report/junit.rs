//! `junit.xml` for CI systems, via `quick-junit`: one test suite per operator, one test case
//! per case; failures carry the detail and the diff, unsupported cases are skipped. Cases or
//! files that did not load are errors in a suite of their own (`load_errors`).

use super::rows::LoadErrorRow;
use super::{operators_in, RunReport};
use crate::runner::{CaseResult, Outcome};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::io;

/// Renders the JUnit XML report.
pub fn render(run: &RunReport) -> io::Result<String> {
    let (meta, results) = (&run.meta, run.results.as_slice());
    let mut report = Report::new(format!("opconform {}", meta.backend.name));
    for op in operators_in(results) {
        let mut suite = TestSuite::new(format!("{}::{}", meta.backend.name, op.slug()));
        for r in results.iter().filter(|r| r.operator == op) {
            suite.add_test_case(test_case(r));
        }
        report.add_test_suite(suite);
    }
    if !run.load_errors.is_empty() {
        let mut suite = TestSuite::new(format!("{}::load_errors", meta.backend.name));
        for row in &run.load_errors {
            suite.add_test_case(load_error_case(row));
        }
        report.add_test_suite(suite);
    }
    report.to_string().map_err(io::Error::other)
}

fn load_error_case(row: &LoadErrorRow) -> TestCase {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_message(format!("load_error: {}: {}", row.place(), row.detail));
    status.set_type("load_error");
    let mut case = TestCase::new(row.name(), status);
    case.set_classname("load_errors");
    case
}

fn test_case(result: &CaseResult) -> TestCase {
    let status = match result.outcome {
        Outcome::Pass => TestCaseStatus::success(),
        Outcome::Unsupported => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(result.detail.clone());
            status
        }
        outcome => {
            let kind = if outcome == Outcome::Fail {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            };
            let mut status = TestCaseStatus::non_success(kind);
            status.set_message(format!("{}: {}", outcome.name(), result.detail));
            status.set_type(outcome.name());
            if let Some(diff) = &result.diff {
                status.set_description(diff.clone());
            }
            status
        }
    };
    let mut case = TestCase::new(result.id.clone(), status);
    case.set_classname(result.operator.slug());
    case
}
