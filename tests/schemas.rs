//! The published JSON Schemas hold what they promise, checked with a real validator
//! (`jsonschema`): `cases/case.schema.json` accepts every committed case file and catches a
//! misspelt operator, data type, level or id as the loader does; `docs/certificate.schema.json`
//! is what `opconform schema --certificate` generates and accepts real certificates;
//! `docs/results.schema.json` accepts every committed results line.

use opconform::certify::blockers::{BlockCause, RuleIndex};
use opconform::certify::Certificate;
use opconform::runner::{CaseResult, Outcome, TensorShape};
use opconform_backend::{BackendInfo, Level, OperatorKind};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validator(path: &str) -> jsonschema::Validator {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(path)).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{path} is no schema: {e}"))
}

/// The errors of `value` against `validator`, as text.
fn errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

fn yaml(text: &str) -> Value {
    serde_yaml::from_str(text).unwrap()
}

#[test]
fn every_committed_case_file_fits_the_case_schema() {
    let validator = validator("cases/case.schema.json");
    let mut files = Vec::new();
    yaml_files(&repo().join("cases"), &mut files);
    assert!(files.len() > 40, "{}", files.len());
    for file in files {
        let value = yaml(&std::fs::read_to_string(&file).unwrap());
        let problems = errors(&validator, &value);
        assert!(problems.is_empty(), "{}: {problems:?}", file.display());
    }
}

const GOOD: &str = r#"format: 1
cases:
  - id: example_1
    operator: DML_ONE_HOT
    level: "2_0"
    source: {hand_written: "schema test"}
    attributes: {Axis: 1}
    inputs:
      IndicesTensor: {type: UINT32, sizes: [1, 1, 2, 1], data: [1, 0]}
      ValuesTensor: {type: FLOAT32, sizes: [1, 1, 1, 2], data: [0, 1]}
    outputs:
      OutputTensor: {type: FLOAT32, sizes: [1, 1, 2, 2], data: [0, 1, 1, 0]}
"#;

#[test]
fn the_case_schema_catches_misspelt_operators_types_levels_and_ids() {
    let validator = validator("cases/case.schema.json");
    assert_eq!(errors(&validator, &yaml(GOOD)), Vec::<String>::new());
    for (from, to) in [
        ("DML_ONE_HOT", "DML_ONEHOT"),
        ("type: UINT32", "type: UINT23"),
        ("id: example_1", "id: Example-1"),
        ("\"2_0\"", "\"2_9\""),
        ("\"2_0\"", "\"opset0\""),
        ("format: 1", "format: 2"),
        (
            "attributes: {Axis: 1}",
            "attributes: {Axis: 1, AxisDirection: UP}",
        ),
        (
            "source:",
            "expect_invalid: [ONE_HOT.NO_SUCH_RULE]\n    source:",
        ),
    ] {
        let bad = GOOD.replacen(from, to, 1);
        assert_ne!(bad, GOOD);
        assert!(
            !errors(&validator, &yaml(&bad)).is_empty(),
            "the schema accepts `{to}`"
        );
        // The loader refuses the same file.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.yaml");
        std::fs::write(&file, &bad).unwrap();
        let (cases, load_errors) = opconform::case::load::load_file(dir.path(), &file);
        assert!(
            cases.is_empty() && !load_errors.is_empty(),
            "the loader accepts `{to}`"
        );
    }
    for level in ["opset1", "opset16", "DML_FEATURE_LEVEL_2_0"] {
        let other = GOOD.replacen("\"2_0\"", &format!("\"{level}\""), 1);
        assert_eq!(errors(&validator, &yaml(&other)), Vec::<String>::new());
    }
}

#[test]
fn the_committed_certificate_schema_is_current() {
    let committed =
        std::fs::read_to_string(repo().join("docs/certificate.schema.json")).unwrap_or_default();
    assert!(
        committed == opconform::cli::certificate_schema_json(),
        "docs/certificate.schema.json is stale: run `cargo run -- schema --certificate --write \
         docs/certificate.schema.json`"
    );
}

fn result(id: &str, level: Level, outcome: Outcome, negative: bool) -> CaseResult {
    CaseResult {
        id: id.into(),
        operator: OperatorKind::DmlArgMax,
        level,
        class: opconform::case::CaseClass::Required,
        negative,
        outcome,
        detail: "unsupported: no <fp16>".into(),
        diff: None,
        tensors: vec![TensorShape {
            tensor: "InputTensor".into(),
            data_type: "UINT64".into(),
            dimension_count: 2,
        }],
    }
}

#[test]
fn certificates_fit_the_certificate_schema() {
    let validator = validator("docs/certificate.schema.json");
    // The committed certificates of the adapters.
    for backend in ["onnxruntime", "openvino"] {
        let path = repo()
            .join("reports")
            .join(backend)
            .join("certificate.json");
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            errors(&validator, &value),
            Vec::<String>::new(),
            "{}",
            path.display()
        );
    }
    // A certificate with a blocker of every cause, a baseline and an interruption.
    let backend = BackendInfo {
        name: "rt".into(),
        version: "1".into(),
        device: "d".into(),
        claims: vec![Level::dml(0x3000), Level::Opset(1)],
        operators: vec![OperatorKind::DmlArgMax],
    };
    let results = vec![
        result(
            "dml_argmax::a::above",
            Level::dml(0x4100),
            Outcome::Unsupported,
            false,
        ),
        result(
            "dml_argmax::a::crash",
            Level::dml(0x3000),
            Outcome::Crash,
            false,
        ),
        result(
            "dml_argmax::a::neg",
            Level::dml(0x3000),
            Outcome::Fail,
            true,
        ),
        result(
            "dml_argmax::a::refused",
            Level::dml(0x3000),
            Outcome::Rejected,
            false,
        ),
        result(
            "dml_argmax::a::unsupported",
            Level::dml(0x3000),
            Outcome::Unsupported,
            false,
        ),
        result(
            "dml_argmax::a::wrong",
            Level::dml(0x3000),
            Outcome::Fail,
            false,
        ),
    ];
    let mut certificate = Certificate::build(
        "0.1.0",
        &backend,
        &[Level::dml(0x4100), Level::Opset(1)],
        &"0".repeat(64),
        &results,
        &RuleIndex::new(),
    );
    let baseline = opconform::certify::Baseline::from_results("rt", &results[..2], "known");
    certificate.baseline = Some(baseline.compare("baseline.yaml", &results));
    assert_eq!(
        certificate.operators[0].blocked_by.len(),
        5,
        "{certificate:#?}"
    );
    // Missing support blocks once 3_0 passes: a 4_1 case above the claim.
    let above = Certificate::build(
        "0.1.0",
        &backend,
        &[Level::dml(0x4100)],
        &"0".repeat(64),
        &[
            result(
                "dml_argmax::a::above",
                Level::dml(0x4100),
                Outcome::Unsupported,
                false,
            ),
            result(
                "dml_argmax::a::ok",
                Level::dml(0x3000),
                Outcome::Pass,
                false,
            ),
        ],
        &RuleIndex::new(),
    );
    let groups = &above.operators[0].blocked_by;
    assert_eq!(groups.len(), 1, "{above:#?}");
    assert_eq!(groups[0].cause, BlockCause::MissingSupport);
    assert!(above.to_json().contains("\"missing_support\""));
    let value: Value = serde_json::from_str(&above.to_json()).unwrap();
    assert_eq!(errors(&validator, &value), Vec::<String>::new());
    let value: Value = serde_json::from_str(&certificate.to_json()).unwrap();
    assert_eq!(errors(&validator, &value), Vec::<String>::new());
    certificate.mark_interrupted();
    let value: Value = serde_json::from_str(&certificate.to_json()).unwrap();
    assert_eq!(errors(&validator, &value), Vec::<String>::new());
    // A misspelt cause or outcome is caught.
    let bad = above
        .to_json()
        .replace("\"missing_support\"", "\"missing\"");
    assert!(!errors(&validator, &serde_json::from_str(&bad).unwrap()).is_empty());
}

#[test]
fn every_committed_results_line_fits_the_results_schema() {
    let validator = validator("docs/results.schema.json");
    for backend in ["cpu", "vulkan-lavapipe", "onnxruntime", "openvino"] {
        let path = repo().join("reports").join(backend).join("results.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let value: Value = serde_json::from_str(line).unwrap();
            let problems = errors(&validator, &value);
            assert!(
                problems.is_empty(),
                "{}:{}: {problems:?}",
                path.display(),
                n + 1
            );
        }
    }
}
