//! Folder walking never loops and never loads a case twice: symbolic links to folders are
//! reported, not followed (issue 11, item 7).
#![cfg(unix)]

use opconform::case::load_paths;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

const CASE: &str = "format: 1\ncases:\n  - id: one\n    operator: DML_ARGMAX\n    level: \"3_0\"\n    source: {hand_written: test}\n    attributes: {Axes: [0], AxisDirection: DML_AXIS_DIRECTION_INCREASING}\n    inputs:\n      InputTensor: {type: FLOAT32, sizes: [3], data: [1, 3, 2]}\n    outputs:\n      OutputTensor: {type: UINT32, sizes: [1], data: [1]}\n";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "opconform-loader-folders-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/dml_argmax.yaml"), CASE).unwrap();
    dir
}

/// Loads `dir` on a thread, failing the test if it has not finished in 60 s.
fn load_with_deadline(dir: PathBuf) -> opconform::case::LoadedCases {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || send.send(load_paths(&[dir])).unwrap());
    receive
        .recv_timeout(Duration::from_secs(60))
        .expect("loading a folder with a symlink loop never finished")
}

#[test]
fn a_symlink_loop_is_reported_not_followed() {
    let dir = temp_dir("loop");
    symlink(dir.join("sub"), dir.join("sub/again")).unwrap();
    let loaded = load_with_deadline(dir.clone());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(loaded.cases.len(), 1);
    assert_eq!(loaded.cases[0].id, "dml_argmax::sub::one");
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
    assert!(loaded.errors[0].file.ends_with("sub/again"));
    assert!(loaded.errors[0].message.contains("not followed"));
}

#[test]
fn a_link_to_the_parent_does_not_run_cases_again_under_invented_ids() {
    let dir = temp_dir("parent");
    symlink("..", dir.join("sub/up")).unwrap();
    let loaded = load_with_deadline(dir.clone());
    std::fs::remove_dir_all(&dir).unwrap();
    let ids: Vec<&str> = loaded.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["dml_argmax::sub::one"]);
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
}

#[test]
fn a_symlinked_file_and_a_symlinked_root_are_read() {
    let dir = temp_dir("file");
    symlink(dir.join("sub/dml_argmax.yaml"), dir.join("linked.yaml")).unwrap();
    let root_link = dir.with_extension("link");
    let _ = std::fs::remove_file(&root_link);
    symlink(dir.join("sub"), &root_link).unwrap();
    let loaded = load_with_deadline(root_link.clone());
    assert_eq!(loaded.cases.len(), 1, "{:?}", loaded.errors);
    let loaded = load_with_deadline(dir.clone());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&root_link).unwrap();
    let ids: Vec<&str> = loaded.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["dml_argmax::linked::one", "dml_argmax::sub::one"]);
}
