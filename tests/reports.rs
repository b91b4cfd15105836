//! The committed CPU reports (`reports/cpu/`) are what the README's main command writes now
//! (times aside: `time_ms` in `results.jsonl` and `time` in `junit.xml` are wall times).

use opconform::case::load_paths;
use opconform::report::timing::without_times;
use opconform::report::{case_records, render_files, RunMeta, RunReport};
use opconform::runner::run_cases;
use opconform::selection::{case_set_digest, CasePick, Selection};
use opconform_backend::{Backend, Level};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[test]
fn committed_cpu_reports_are_current() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // Paths in reports are as given on the command line (`cases/…`), so load from the root.
    std::env::set_current_dir(&repo).unwrap();
    let loaded = load_paths(&[PathBuf::from("cases")]);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let selection = Selection {
        feature_level: Level::dml(0x4100),
        pick: CasePick::default(),
        shard: None,
    };
    let digest = case_set_digest(&loaded.cases);
    let cases = selection.apply(loaded.cases);
    let backend = opconform_cpu::CpuBackend::new();
    let results = run_cases(&backend, &cases, 2, &|_| {});
    let info = backend.info();
    let targets = opconform::certify::targets(&info, Some(selection.feature_level)).unwrap();
    let meta = RunMeta {
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        backend: info,
        feature_level: selection.feature_level,
        targets,
        case_set_digest: digest,
        results_digest: String::new(),
        selection: Default::default(),
        case_count: cases.len(),
        shard: None,
        interrupted: false,
    };
    let records = case_records(&cases, &BTreeMap::new());
    let report = RunReport::new(meta, results, Vec::new(), records);
    let files = render_files(&report).unwrap();
    assert_eq!(files.len(), 5);
    for (file, current) in files {
        let committed =
            std::fs::read_to_string(repo.join("reports/cpu").join(file)).unwrap_or_default();
        assert!(
            without_times(&committed) == without_times(&current),
            "reports/cpu/{file} is stale: run `cargo run --release --` and commit reports/cpu"
        );
    }
}

/// Every line the reports write fits `docs/results.schema.json`: keys declared, required keys
/// present, enum values listed (the schema's enums are the code's).
#[test]
fn results_lines_fit_the_published_schema() {
    use opconform::report::verdict::Verdict;
    use opconform::runner::Outcome;
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("docs/results.schema.json")).unwrap(),
    )
    .unwrap();
    let case = &schema["oneOf"][0];
    let props = case["properties"].as_object().unwrap();
    let names = |key: &str| -> Vec<String> {
        props[key]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("outcome"), Outcome::ALL.map(|o| o.name().to_string()));
    let mut verdicts = names("verdict");
    verdicts.sort();
    let mut ours: Vec<String> = Verdict::ALL.iter().map(|v| v.name().to_string()).collect();
    ours.sort();
    assert_eq!(verdicts, ours);
    assert_eq!(
        names("operator"),
        opconform_backend::OperatorKind::ALL.map(|o| o.name().to_string())
    );
    let text = std::fs::read_to_string(repo.join("reports/cpu/results.jsonl")).unwrap();
    let id = regex_lite_like(props["id"]["pattern"].as_str().unwrap());
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let object = value.as_object().unwrap();
        for key in object.keys() {
            assert!(
                props.contains_key(key),
                "{key} is not in the schema: {line}"
            );
        }
        for key in case["required"].as_array().unwrap() {
            assert!(
                object.contains_key(key.as_str().unwrap()),
                "{key} missing: {line}"
            );
        }
        assert!(id(object["id"].as_str().unwrap()), "{line}");
    }
}

/// The id pattern `^[a-z0-9_]+(::[A-Za-z0-9_.-]+)+$`, checked by hand.
fn regex_lite_like(pattern: &str) -> impl Fn(&str) -> bool {
    assert_eq!(pattern, "^[a-z0-9_]+(::[A-Za-z0-9_.-]+)+$");
    |id: &str| {
        let mut parts = id.split("::");
        let first = parts.next().unwrap_or("");
        let rest: Vec<&str> = parts.collect();
        !first.is_empty()
            && first
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !rest.is_empty()
            && rest.iter().all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            })
    }
}
