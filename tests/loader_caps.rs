//! Every size in a case file is checked against the documented caps before anything is
//! allocated (issue 11, item 6). Before the caps each of these aborted or ran for hours.

use opconform::case::caps::{MAX_ELEMENTS, MAX_FILE_BYTES};
use opconform::case::load::{load_file, load_text};
use opconform::case::LoadError;
use std::path::Path;
use std::time::{Duration, Instant};

fn load(text: &str) -> Vec<LoadError> {
    let start = Instant::now();
    let (cases, errors) = load_text(
        Path::new("cases"),
        Path::new("cases/caps/dml_nonzero_coordinates.yaml"),
        text,
    );
    assert!(cases.is_empty(), "nothing should load");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "refused only after {:?}",
        start.elapsed()
    );
    errors
}

const NONZERO_HEAD: &str = "format: 1\ncases:\n  - id: big\n    operator: DML_NONZERO_COORDINATES\n    level: \"3_0\"\n    source: {generator: test}\n";

#[test]
fn a_broadcast_output_with_fill_is_refused_before_filling() {
    // 2^40 logical elements in a 4-byte buffer: 35 TB of expected data once filled.
    let text = format!(
        "{NONZERO_HEAD}    inputs:\n      InputTensor: {{type: UINT8, sizes: [1, 1, 1048576, 1048576], strides: [0, 0, 0, 0], data: [0]}}\n    outputs:\n      OutputCountTensor: {{type: UINT32, sizes: [1, 1, 1, 1], data: [0]}}\n      OutputCoordinatesTensor: {{type: UINT32, sizes: [1, 1, 1048576, 1048576], strides: [0, 0, 0, 0], data: [], fill: 0}}\n"
    );
    let errors = load(&text);
    assert!(
        errors.iter().any(|e| e.message.contains("logical elements")
            && e.field == "cases[0].outputs.OutputCoordinatesTensor.sizes"),
        "{errors:#?}"
    );
    assert!(errors.iter().all(|e| e.line > 0), "{errors:#?}");
}

#[test]
fn a_generator_on_a_huge_shape_with_a_small_buffer_is_refused_before_drawing() {
    // total_size_in_bytes 16 but 2^40 elements to draw.
    let text = format!(
        "{NONZERO_HEAD}    inputs:\n      InputTensor: {{type: UINT8, sizes: [1, 1, 1048576, 1048576], total_size_in_bytes: 16, generate: {{seed: 1, distribution: {{kind: uniform_int, min: 0, max: 1}}}}}}\n    outputs:\n      OutputCountTensor: {{type: UINT32, sizes: [1, 1, 1, 1], data: [0]}}\n      OutputCoordinatesTensor: {{type: UINT32, sizes: [1, 1, 16, 4], data: [], fill: 0}}\n"
    );
    let errors = load(&text);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].field, "cases[0].inputs.InputTensor.generate");
    assert!(
        errors[0].message.contains(&MAX_ELEMENTS.to_string()),
        "{}",
        errors[0]
    );
}

#[test]
fn a_generator_needing_more_than_its_buffer_is_refused_before_drawing() {
    let text = format!(
        "{NONZERO_HEAD}    inputs:\n      InputTensor: {{type: UINT8, sizes: [1, 1, 1024, 1024], total_size_in_bytes: 16, generate: {{seed: 1, distribution: {{kind: uniform_int, min: 0, max: 1}}}}}}\n    outputs:\n      OutputCountTensor: {{type: UINT32, sizes: [1, 1, 1, 1], data: [0]}}\n      OutputCoordinatesTensor: {{type: UINT32, sizes: [1, 1, 16, 4], data: [], fill: 0}}\n"
    );
    let errors = load(&text);
    assert!(
        errors[0].message.contains("TENSOR.TOTAL_SIZE"),
        "{}",
        errors[0]
    );
}

#[test]
fn an_alias_bomb_is_refused_by_the_expanded_size_cap() {
    // A 1 MB string aliased 5,000 times: 5 GB once expanded.
    let mut text = format!("format: 1\nbig: &s {}\ncases:\n  - [", "x".repeat(1 << 20));
    for _ in 0..5000 {
        text.push_str("*s, ");
    }
    text.push_str("]\n");
    let errors = load(&text);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].message.contains("expands to more than"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[0].line, 4);
}

#[test]
fn nested_alias_bombs_are_refused_too() {
    let mut text = "format: 1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n".to_string();
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    text.push_str("cases: []\n");
    let errors = load(&text);
    assert!(errors[0].message.contains("YAML nodes"), "{}", errors[0]);
}

#[test]
fn a_file_over_the_size_cap_is_refused_before_it_is_read() {
    let dir = std::env::temp_dir().join(format!("opconform-loader-caps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.yaml");
    // A 210 MB data list peaked at 4.3 GB; anything past the cap is refused unread.
    let line = "0, ".repeat(1000) + "\n";
    let mut text = "format: 1\ncases:\n  - data: [\n".to_string();
    while (text.len() as u64) <= MAX_FILE_BYTES {
        text.push_str(&line);
    }
    text.push_str("]\n");
    std::fs::write(&file, &text).unwrap();
    let (cases, errors) = load_file(&dir, &file);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(cases.is_empty());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].message.contains("capped at 16777216 bytes"),
        "{}",
        errors[0]
    );
}

#[test]
fn the_largest_data_list_under_the_caps_loads_within_bounded_memory() {
    // 200,000 listed elements for a 16-element tensor: refused for its length, after a parse
    // whose memory the node cap bounds.
    let mut data = "0, ".repeat(200_000);
    data.push('0');
    let text = format!(
        "{NONZERO_HEAD}    inputs:\n      InputTensor: {{type: UINT8, sizes: [1, 1, 4, 4], data: [{data}]}}\n    outputs:\n      OutputCountTensor: {{type: UINT32, sizes: [1, 1, 1, 1], data: [0]}}\n      OutputCoordinatesTensor: {{type: UINT32, sizes: [1, 1, 16, 4], data: [], fill: 0}}\n"
    );
    let errors = load(&text);
    assert!(
        errors[0].message.contains("200001 elements given"),
        "{}",
        errors[0]
    );
}
