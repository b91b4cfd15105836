//! The `opconform` command end to end: exit statuses, user case folders outside `cases/`,
//! and sharded runs merged back into the reports of a whole run.

use std::path::{Path, PathBuf};
use std::process::Command;

fn opconform(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("opconform runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opconform-cli-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn shards_merge_into_the_whole_run() {
    let root = scratch("shards");
    let dir = |name: &str| root.join(name).to_string_lossy().into_owned();
    let filter = ["--cases", "cases/documented", "cases/negative"];
    let whole = opconform(&[&["run", "--report-dir", &dir("whole")][..], &filter].concat());
    assert_eq!(
        whole.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    for shard in ["1/3", "2/3", "3/3"] {
        let name = format!("shard{}", &shard[..1]);
        let out = opconform(
            &[
                &["run", "--shard", shard, "--report-dir", &dir(&name)][..],
                &filter,
            ]
            .concat(),
        );
        assert_eq!(out.status.code(), Some(0));
    }
    let merged = opconform(&[
        "report",
        "merge",
        &dir("shard1"),
        &dir("shard2"),
        &dir("shard3"),
        "--out",
        &dir("merged"),
    ]);
    assert_eq!(
        merged.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let shard_lines: usize = ["shard1", "shard2", "shard3"]
        .iter()
        .map(|s| read(&root.join(s), "results.jsonl").lines().count())
        .sum();
    assert_eq!(
        shard_lines,
        read(&root.join("whole"), "results.jsonl").lines().count()
    );
    for file in ["results.jsonl", "junit.xml", "index.html"] {
        assert_eq!(
            read(&root.join("whole"), file),
            read(&root.join("merged"), file),
            "{file} of the merged shards differs from the whole run's"
        );
    }
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn user_case_folders_load_and_bad_files_exit_2_naming_the_place() {
    let root = scratch("user");
    std::fs::write(
        root.join("mine.yaml"),
        "format: 1\ncases:\n  - id: mine\n    operator: DML_ARGMAX\n    level: \"3_0\"\n    source: {hand_written: user}\n    attributes: {Axes: [0], AxisDirection: DML_AXIS_DIRECTION_DECREASING}\n    inputs:\n      InputTensor: {type: INT8, sizes: [3], data: [5, 5, 1]}\n    outputs:\n      OutputTensor: {type: UINT32, sizes: [1], data: [1]}\n",
    )
    .unwrap();
    let dir = root.to_string_lossy().into_owned();
    let reports = root.join("reports").to_string_lossy().into_owned();
    let good = opconform(&["run", "--cases", &dir, "--report-dir", &reports]);
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    assert!(read(&root.join("reports"), "results.jsonl").contains("dml_argmax::mine::mine"));

    std::fs::write(root.join("broken.yaml"), "format: 1\ncases:\n  - id: [\n").unwrap();
    let bad = opconform(&["run", "--cases", &dir, "--report-dir", &reports]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("broken.yaml:"), "{stderr}");
    // The good case still ran.
    assert!(read(&root.join("reports"), "results.jsonl").contains("dml_argmax::mine::mine"));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn validate_exits_non_zero_on_a_bad_case_and_zero_on_the_suite() {
    let out = opconform(&["validate", "-q", "cases"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = scratch("validate");
    std::fs::write(
        root.join("late.yaml"),
        "format: 1\ncases:\n  - id: late\n    operator: DML_ARGMAX\n    level: \"4_1\"\n    source: {hand_written: user}\n    attributes: {Axes: [0], AxisDirection: DML_AXIS_DIRECTION_DECREASING}\n    inputs:\n      InputTensor: {type: INT8, sizes: [3], data: [5, 5, 1]}\n    outputs:\n      OutputTensor: {type: UINT32, sizes: [1], data: [1]}\n",
    )
    .unwrap();
    let out = opconform(&["validate", &root.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("first valid at 3_0"));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn an_unknown_backend_is_a_usage_error() {
    let out = opconform(&["run", "--backend", "tpu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no bundled backend `tpu`"));
}
