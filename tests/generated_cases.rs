//! The generated cases (`cases/generated/`): the committed files are what `opconform generate`
//! writes, every case loads, and together they cover every spec rule and every support-table
//! cell (see `opconform coverage`).

use opconform::case::{load_paths, Case};
use opconform::coverage::Coverage;
use opconform::generate::{differences, generate_files, DEFAULT_OUT_DIR};
use std::path::PathBuf;
use std::sync::OnceLock;

fn generated_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_OUT_DIR)
}

/// The generated cases, loaded once; panics listing every load error.
fn generated_cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let loaded = load_paths(&[generated_dir()]);
        let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
        assert!(
            errors.is_empty(),
            "generated cases do not load:\n{}",
            errors.join("\n")
        );
        loaded.cases
    })
}

#[test]
fn committed_files_are_what_the_generator_writes() {
    let found = differences(&generated_dir(), &generate_files());
    let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(
        lines.is_empty(),
        "cases/generated is stale; run `cargo run -- generate`:\n{}",
        lines.join("\n")
    );
}

#[test]
fn every_generated_case_loads_and_names_its_generator() {
    let cases = generated_cases();
    assert!(cases.len() > 1000, "only {} generated cases", cases.len());
    for case in cases {
        let generator = case.source.generator.as_deref().unwrap_or_default();
        assert!(
            generator.starts_with("opconform generate ("),
            "{} has source {:?}",
            case.id,
            case.source
        );
    }
}

#[test]
fn generated_cases_cover_every_rule_and_support_cell() {
    let coverage = Coverage::of(generated_cases());
    let mut missing: Vec<String> = coverage
        .uncovered_rules()
        .iter()
        .map(|r| format!("rule {}", r.id))
        .collect();
    missing.extend(
        coverage
            .uncovered_cells()
            .iter()
            .map(|c| format!("cell {}", c.cell.label())),
    );
    assert!(
        missing.is_empty(),
        "not covered by cases/generated (see `opconform coverage --cases cases/generated`):\n{}",
        missing.join("\n")
    );
}
