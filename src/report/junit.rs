//! `junit.xml` for CI systems, via `quick-junit`: one test suite per operator, one test case
//! per case, with the verdict every other report shows ([`super::verdict`]): a `<failure>`
//! (or `<error>` for a crash, timeout or internal error) only for a failing required case;
//! baselined, informational and not-claimed cases are `<skipped>` with a message saying which;
//! every case carries its outcome, class, level and tags as properties, and every test case
//! and suite a `time`. Cases or files that did not load are errors in a suite of their own
//! (`load_errors`).

use super::rows::LoadErrorRow;
use super::verdict::Verdict;
use super::{operators_in, RunReport};
use crate::runner::{CaseResult, Outcome};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::io;
use std::time::Duration;

/// Renders the JUnit XML report.
pub fn render(run: &RunReport) -> io::Result<String> {
    let (meta, results) = (&run.meta, run.results.as_slice());
    let mut report = Report::new(format!("opconform {}", meta.backend.name));
    let mut total = Duration::ZERO;
    for op in operators_in(results) {
        let mut suite = TestSuite::new(format!("{}::{}", meta.backend.name, op.slug()));
        let mut time = Duration::ZERO;
        for r in results.iter().filter(|r| r.operator == op) {
            let case = test_case(r, run);
            time += case.time.unwrap_or_default();
            suite.add_test_case(case);
        }
        suite.set_time(time);
        total += time;
        report.add_test_suite(suite);
    }
    if !run.load_errors.is_empty() {
        let mut suite = TestSuite::new(format!("{}::load_errors", meta.backend.name));
        for row in &run.load_errors {
            suite.add_test_case(load_error_case(row));
        }
        suite.set_time(Duration::ZERO);
        report.add_test_suite(suite);
    }
    report.set_time(total);
    report.to_string().map_err(io::Error::other)
}

fn load_error_case(row: &LoadErrorRow) -> TestCase {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_message(format!("load_error: {}: {}", row.place(), row.detail));
    status.set_type("load_error");
    let mut case = TestCase::new(row.name(), status);
    case.set_classname("load_errors");
    case.set_time(Duration::ZERO);
    case
}

/// Why a non-failing, non-passing case is skipped.
fn skip_message(verdict: Verdict, result: &CaseResult, reason: Option<&str>) -> String {
    let what = match verdict {
        Verdict::Baselined => format!(
            "baselined (expected {}: {})",
            result.outcome.name(),
            reason.unwrap_or("")
        ),
        Verdict::Informational => {
            format!(
                "informational case, never failing ({})",
                result.outcome.name()
            )
        }
        _ => format!("not claimed by the backend ({})", result.outcome.name()),
    };
    if result.detail.is_empty() {
        what
    } else {
        format!("{what}: {}", result.detail)
    }
}

fn test_case(result: &CaseResult, run: &RunReport) -> TestCase {
    let record = run.record(&result.id);
    let verdict = run.verdict(&result.id);
    let status = match verdict {
        Verdict::Pass => TestCaseStatus::success(),
        Verdict::Failure => {
            let kind = match result.outcome {
                Outcome::Fail | Outcome::Rejected | Outcome::Unsupported => NonSuccessKind::Failure,
                _ => NonSuccessKind::Error,
            };
            let mut status = TestCaseStatus::non_success(kind);
            status.set_message(format!("{}: {}", result.outcome.name(), result.detail));
            status.set_type(result.outcome.name());
            if let Some(diff) = &result.diff {
                status.set_description(diff.clone());
            }
            status
        }
        other => {
            let mut status = TestCaseStatus::skipped();
            let reason = record.and_then(|r| r.baseline_reason.as_deref());
            status.set_message(skip_message(other, result, reason));
            status.set_type(other.name());
            if let Some(diff) = &result.diff {
                status.set_description(diff.clone());
            }
            status
        }
    };
    let mut case = TestCase::new(result.id.clone(), status);
    case.set_classname(result.operator.slug());
    case.set_time(Duration::from_millis(record.map_or(0, |r| r.time_ms)));
    case.add_property(Property::new("outcome", result.outcome.name()));
    case.add_property(Property::new("verdict", verdict.name()));
    case.add_property(Property::new(
        "class",
        match result.class {
            crate::case::CaseClass::Required => "required",
            crate::case::CaseClass::Informational => "informational",
        },
    ));
    case.add_property(Property::new("level", result.level.to_string()));
    if let Some(record) = record.filter(|r| !r.tags.is_empty()) {
        case.add_property(Property::new("tags", record.tags.join(",")));
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::CaseClass;
    use crate::report::rows::CaseRecord;
    use crate::report::RunMeta;
    use opconform_backend::{BackendInfo, Level, OperatorKind};
    use std::collections::BTreeMap;

    fn result(id: &str, class: CaseClass, outcome: Outcome, level: Level) -> CaseResult {
        CaseResult {
            id: id.into(),
            operator: OperatorKind::DmlArgMax,
            level,
            class,
            negative: false,
            outcome,
            detail: format!("{id} detail"),
            diff: None,
            tensors: Vec::new(),
        }
    }

    #[test]
    fn only_required_unbaselined_failures_fail_and_everything_has_a_time() {
        use CaseClass::{Informational, Required};
        let at = Level::dml(0x3000);
        let results = vec![
            result("a_pass", Required, Outcome::Pass, at),
            result("b_baselined", Required, Outcome::Fail, at),
            result("c_informational", Informational, Outcome::Fail, at),
            result("d_unsupported", Required, Outcome::Unsupported, at),
            result(
                "e_above",
                Required,
                Outcome::Unsupported,
                Level::dml(0x4100),
            ),
            result("f_fail", Required, Outcome::Fail, at),
        ];
        let mut records = BTreeMap::new();
        records.insert(
            "b_baselined".to_string(),
            CaseRecord {
                baseline_reason: Some("known".into()),
                time_ms: 1500,
                ..CaseRecord::default()
            },
        );
        let meta = RunMeta {
            harness_version: "0".into(),
            backend: BackendInfo {
                name: "b".into(),
                version: "1".into(),
                device: "d".into(),
                claims: vec![Level::dml(0x3000)],
                operators: vec![OperatorKind::DmlArgMax],
            },
            feature_level: Level::dml(0x3000),
            targets: vec![Level::dml(0x3000)],
            case_set_digest: "s".into(),
            results_digest: String::new(),
            selection: Default::default(),
            case_count: results.len(),
            shard: None,
            interrupted: false,
        };
        let report = RunReport::new(meta, results, Vec::new(), records);
        let xml = render(&report).unwrap();
        let case = |id: &str| {
            let start = xml.find(&format!("<testcase name=\"{id}\"")).unwrap();
            let end = start + xml[start..].find("</testcase>").unwrap();
            xml[start..end].to_string()
        };
        assert!(!case("a_pass").contains("<failure") && !case("a_pass").contains("<skipped"));
        assert!(case("b_baselined").contains("<skipped message=\"baselined (expected fail: known)"));
        assert!(
            case("b_baselined").contains("time=\"1.500\""),
            "{}",
            case("b_baselined")
        );
        assert!(case("c_informational").contains("<skipped message=\"informational case"));
        assert!(
            case("d_unsupported").contains("<failure"),
            "{}",
            case("d_unsupported")
        );
        assert!(case("e_above").contains("<skipped message=\"not claimed"));
        assert!(case("f_fail").contains("<failure"));
        assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
        assert_eq!(
            xml.matches("<testcase ").count(),
            xml.matches("<testcase name=\"").count()
        );
        for element in ["<testcase ", "<testsuite ", "<testsuites "] {
            for (i, _) in xml.match_indices(element) {
                let tag = &xml[i..i + xml[i..].find('>').unwrap()];
                assert!(tag.contains(" time=\""), "no time in {tag}");
            }
        }
        assert_eq!(report.failures().len(), 2);
    }
}
