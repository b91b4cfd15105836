//! The spec side end to end: every case file loads, documented cases are valid exactly from
//! their tagged level, every descriptor rule has a negative case and every behaviour rule a
//! positive one, and the checked-in JSON Schema is current.

use opconform::case::{load_paths, Case, Expectation};
use opconform_backend::spec::{self, RuleKind};
use opconform_backend::validate::{candidate_levels, validate};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn all_cases() -> Vec<Case> {
    let loaded = load_paths(&[repo().join("cases")]);
    let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    assert!(
        errors.is_empty(),
        "case files do not load:\n{}",
        errors.join("\n")
    );
    loaded.cases
}

#[test]
fn documented_cases_are_valid_from_their_level_and_invalid_below_it() {
    let documented: Vec<Case> = all_cases()
        .into_iter()
        .filter(|c| c.id.contains("::documented::"))
        .collect();
    assert_eq!(
        documented.len(),
        4 + 1 + 5 + 2,
        "every documented example, one case each"
    );
    for case in documented {
        assert!(
            validate(&case.operator, case.level).is_empty(),
            "{} is invalid at its tagged level {}",
            case.id,
            case.level
        );
        for level in candidate_levels(case.level.family())
            .into_iter()
            .filter(|l| *l < case.level)
        {
            assert!(
                !validate(&case.operator, level).is_empty(),
                "{} is valid at {level}, below its tag {}",
                case.id,
                case.level
            );
        }
    }
}

#[test]
fn every_descriptor_rule_has_a_negative_case() {
    let named: BTreeSet<String> = all_cases()
        .iter()
        .filter_map(|c| match &c.expectation {
            Expectation::Invalid(rules) => Some(rules.clone()),
            Expectation::Outputs(_) => None,
        })
        .flatten()
        .collect();
    let missing: Vec<&str> = spec::all_rules()
        .filter(|r| r.kind == RuleKind::Descriptor && !named.contains(&r.id))
        .map(|r| r.id.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "descriptor rules with no negative case: {missing:?}"
    );
}

#[test]
fn every_behaviour_rule_is_exercised() {
    let exercised: BTreeSet<String> = all_cases()
        .iter()
        .flat_map(|c| c.exercises.clone())
        .collect();
    let missing: Vec<&str> = spec::all_rules()
        .filter(|r| r.kind == RuleKind::Behaviour && !exercised.contains(&r.id))
        .map(|r| r.id.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "behaviour rules no case exercises: {missing:?}"
    );
}

/// The policy of docs/case-format.md ("Required and informational"): a required case rests on
/// a grounded rule and on no silent point; an informational one on a silent point.
#[test]
fn every_case_is_required_exactly_when_the_seeds_decide_it() {
    let problems: Vec<String> = all_cases()
        .iter()
        .flat_map(|case| {
            opconform::readings::class_problems(case)
                .into_iter()
                .map(move |p| format!("{} ({}:{}) {p}", case.id, case.file.display(), case.line))
        })
        .collect();
    assert!(
        problems.is_empty(),
        "{} case(s) break the class policy:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_checked_in_json_schema_is_current() {
    let path = repo().join("cases/case.schema.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == opconform::cli::case_schema_json(),
        "{} is stale: run `cargo run -- schema --write cases/case.schema.json`",
        path.display()
    );
}
