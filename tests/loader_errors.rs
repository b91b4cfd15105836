//! A bad case never hides the good ones: every error of a file is reported with its line,
//! column, field and case id, and the other cases still load (issue 11, items 5 and 8).

use opconform::case::load::{load_file, load_text};
use opconform::case::{Compare, LoadError};
use std::path::{Path, PathBuf};

/// A DML_ARGMAX case at 3_0 with `id`, input `input` and one extra line `extra` (may be empty).
fn case(id: &str, input: &str, extra: &str) -> String {
    format!(
        "  - id: {id}\n    operator: DML_ARGMAX\n    level: \"3_0\"\n    source: {{hand_written: test}}\n    attributes: {{Axes: [0], AxisDirection: DML_AXIS_DIRECTION_INCREASING}}\n{extra}    inputs:\n      InputTensor: {input}\n    outputs:\n      OutputTensor: {{type: UINT32, sizes: [1], data: [1]}}\n"
    )
}

const GOOD_INPUT: &str = "{type: FLOAT32, sizes: [3], data: [1, 3, 2]}";

fn load(text: &str) -> (Vec<opconform::case::Case>, Vec<LoadError>) {
    load_text(
        Path::new("cases"),
        Path::new("cases/probe/dml_argmax.yaml"),
        text,
    )
}

/// 1-based line and column of the first occurrence of `marker` in `text`.
fn position_of(text: &str, marker: &str) -> (usize, usize) {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in text"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

#[test]
fn every_bad_case_is_reported_where_it_is_and_the_good_ones_load() {
    // (id, input, extra line, marker of where the error must point, words of the message)
    let probes: &[(&str, &str, &str, &str, &str)] = &[
        (
            "unknown_field",
            GOOD_INPUT,
            "    colour: blue\n",
            "colour:",
            "unknown field `colour`",
        ),
        (
            "wrong_type",
            "{type: FLOAT32, sizes: [three], data: [1, 3, 2]}",
            "",
            "three",
            "invalid type",
        ),
        (
            "unknown_enum",
            "{type: FLOAT99, sizes: [3], data: [1, 3, 2]}",
            "",
            "FLOAT99",
            "FLOAT99",
        ),
        (
            "duplicate_key",
            "{type: FLOAT32, sizes: [3], sizes: [3], data: [1, 3, 2]}",
            "",
            "sizes: [3], data",
            "duplicate key `sizes`",
        ),
        (
            "malformed_bits",
            "{type: FLOAT32, sizes: [3], data: [1, bits:0xZZ, 2]}",
            "",
            "bits:0xZZ",
            "bits:0x",
        ),
        (
            "wrong_compare",
            GOOD_INPUT,
            "    compare: loose\n",
            "loose",
            "unknown variant `loose`",
        ),
        (
            "float32_overflow",
            "{type: FLOAT32, sizes: [3], data: [1, 1e300, 2]}",
            "",
            "data: [1, 1e300",
            "out of range of FLOAT32",
        ),
    ];
    let mut text = "format: 1\ncases:\n".to_string();
    text.push_str(&case("good_first", GOOD_INPUT, ""));
    for (id, input, extra, _, _) in probes {
        text.push_str(&case(id, input, extra));
    }
    text.push_str(&case("good_last", GOOD_INPUT, ""));
    let (cases, errors) = load(&text);
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "dml_argmax::probe::good_first",
            "dml_argmax::probe::good_last"
        ]
    );
    assert_eq!(errors.len(), probes.len(), "{errors:#?}");
    for (error, (id, _, _, marker, words)) in errors.iter().zip(probes) {
        // Markers are searched after the case's own id so they point into the right case.
        let case_start = text.find(&format!("id: {id}\n")).unwrap();
        let (line, column) = position_of(&text[case_start..], marker);
        let case_line = text[..case_start].matches('\n').count();
        let expected = (case_line + line, column);
        assert_eq!((error.line, error.column), expected, "{id}: {error}");
        assert!(error.message.contains(words), "{id}: {error}");
        assert_eq!(
            error.case_id.as_deref(),
            Some(format!("dml_argmax::probe::{id}").as_str()),
            "{error}"
        );
        assert!(error.field.starts_with("cases["), "{error}");
    }
}

#[test]
fn an_unreadable_operator_still_names_field_and_position_without_an_id() {
    let text = format!(
        "format: 1\ncases:\n{}",
        case("x", GOOD_INPUT, "").replace("DML_ARGMAX", "DML_NOPE")
    );
    let (cases, errors) = load(&text);
    assert!(cases.is_empty());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "cases[0].operator");
    assert_eq!((errors[0].line, errors[0].column), (4, 15), "{}", errors[0]);
    assert_eq!(errors[0].case_id, None);
}

#[test]
fn json_style_files_give_real_positions() {
    let text = r#"{
  "format": 1,
  "cases": [
    {"id": "j", "operator": "DML_ARGMAX", "level": "3_0",
     "source": {"hand_written": "test"},
     "attributes": {"Axes": [0], "AxisDirection": "DML_AXIS_DIRECTION_INCREASING"},
     "inputs": {"InputTensor": {"type": "FLOAT32", "sizes": [3], "data": [1, 3]}},
     "outputs": {"OutputTensor": {"type": "UINT32", "sizes": [1], "data": [1]}}}
  ]
}"#;
    let (cases, errors) = load(text);
    assert!(cases.is_empty());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "cases[0].inputs.InputTensor.data");
    assert_eq!(
        (errors[0].line, errors[0].column),
        position_of(text, "\"data\": [1, 3]")
    );
    let bad_syntax = load("{\"format\": 1, \"cases\": [}\n").1;
    assert!(
        bad_syntax[0].line >= 1 && bad_syntax[0].column > 1,
        "{bad_syntax:?}"
    );
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let text = format!("\u{feff}format: 1\ncases:\n{}", case("bom", GOOD_INPUT, ""));
    let (cases, errors) = load(&text);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(cases.len(), 1);
}

#[test]
fn file_level_errors_are_located() {
    let errors = load("format: 2\ncases: []\n").1;
    assert_eq!((errors[0].field.as_str(), errors[0].line), ("format", 1));
    assert!(errors[0].message.contains("format 2 is not supported"));
    let errors = load("format: 1\ncases: []\nextra: 1\n").1;
    assert_eq!((errors[0].line, errors[0].column), (3, 1), "{errors:?}");
    let errors = load("format: 1\ncases: {}\n").1;
    assert_eq!((errors[0].line, errors[0].column), (2, 1), "{errors:?}");
    let errors = load("- 1\n").1;
    assert_eq!((errors[0].line, errors[0].column), (1, 1), "{errors:?}");
}

#[test]
fn invalid_utf8_is_located() {
    let dir = temp_dir("utf8");
    let file = dir.join("dml_argmax.yaml");
    let mut bytes = b"format: 1\ncases:\n  - id: ab".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b"\n");
    std::fs::write(&file, &bytes).unwrap();
    let (_, errors) = load_file(&dir, &file);
    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].line, errors[0].column), (3, 11), "{}", errors[0]);
    assert!(errors[0].message.contains("UTF-8"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn compare_is_read_as_a_typed_field() {
    let text = format!(
        "format: 1\ncases:\n{}{}",
        case("by_value", GOOD_INPUT, ""),
        case("by_bits", GOOD_INPUT, "    compare: bits\n")
    );
    let (cases, errors) = load(&text);
    assert!(errors.is_empty(), "{errors:?}");
    let compare = |id: &str| cases.iter().find(|c| c.id.ends_with(id)).unwrap().compare;
    assert_eq!(compare("by_value"), Compare::Value);
    assert_eq!(compare("by_bits"), Compare::Bits);
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "opconform-loader-errors-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
