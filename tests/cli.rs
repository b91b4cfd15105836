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

/// A report file, its wall times set to 0.
fn read(dir: &Path, file: &str) -> String {
    opconform::report::timing::without_times(&std::fs::read_to_string(dir.join(file)).unwrap())
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

/// Runs opconform in `dir` (a scratch folder standing for a checkout).
fn opconform_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("opconform runs")
}

/// Every file of `dir` with its contents, sorted by name.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

fn repo_path(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// A report folder of a small real run, at `root/reports/cpu`.
fn committed_reports(root: &Path) -> PathBuf {
    let reports = root.join("reports/cpu");
    let out = opconform_in(
        root,
        &[
            "run",
            "--cases",
            &repo_path("cases/documented"),
            "--jobs",
            "2",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reports.join("results.jsonl").exists());
    reports
}

#[test]
fn a_typo_or_an_empty_selection_leaves_the_reports_alone() {
    let root = scratch("typo");
    let reports = committed_reports(&root);
    let before = snapshot(&reports);
    std::fs::write(root.join("broken.yaml"), "format: 1\ncases: [\n").unwrap();
    let documented = repo_path("cases/documented");
    for args in [
        // The default report folder (reports/cpu), a case folder that does not exist.
        &["run", "--cases", "nosuchdir"][..],
        &["run", "--cases", &documented, "nosuchdir"][..],
        // Only a broken file: nothing loads.
        &["run", "--cases", "broken.yaml"][..],
        // Cases load, but none is selected.
        &["run", "--cases", &documented, "--filter", "no-such-case"][..],
    ] {
        let out = opconform_in(&root, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("is left as it is"), "{args:?}: {stderr}");
        assert_eq!(snapshot(&reports), before, "{args:?} changed the reports");
    }
    let out = opconform_in(&root, &["run", "--cases", "nosuchdir"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuchdir: no such file or folder"));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn cases_that_do_not_load_are_reported_as_load_error() {
    let root = scratch("load-error");
    std::fs::create_dir_all(root.join("mine")).unwrap();
    std::fs::copy(
        repo_path("cases/documented/dml_argmax.yaml"),
        root.join("mine/good.yaml"),
    )
    .unwrap();
    std::fs::write(
        root.join("mine/bad.yaml"),
        "format: 1\ncases:\n  - id: x\n    operator: DML_ARGMAX\n    level: \"9_9\"\n",
    )
    .unwrap();
    let out = opconform_in(&root, &["run", "--cases", "mine", "--report-dir", "out"]);
    assert_eq!(out.status.code(), Some(2));
    let results = read(&root.join("out"), "results.jsonl");
    let load_errors: Vec<&str> = results
        .lines()
        .filter(|l| l.contains("\"outcome\":\"load_error\""))
        .collect();
    assert_eq!(load_errors.len(), 1, "{results}");
    assert!(
        load_errors[0].contains("\"file\":\"mine/bad.yaml\""),
        "{results}"
    );
    assert!(
        results.contains("\"id\":\"dml_argmax::good::"),
        "the good file still ran"
    );
    let summary = read(&root.join("out"), "summary.md");
    assert!(summary.contains("## Load errors (1)"), "{summary}");
    assert!(summary.contains("`mine/bad.yaml:"), "{summary}");
    let junit = read(&root.join("out"), "junit.xml");
    assert!(junit.contains("type=\"load_error\""), "{junit}");
    assert!(read(&root.join("out"), "index.html").contains("Load errors (1)"));
    // A merge keeps them (once, though every shard has them).
    let shard = |k: &str| {
        let out = opconform_in(
            &root,
            &[
                "run",
                "--cases",
                "mine",
                "--shard",
                k,
                "--report-dir",
                &format!("s{}", &k[..1]),
            ],
        );
        assert_eq!(out.status.code(), Some(2));
    };
    shard("1/2");
    shard("2/2");
    let merged = opconform_in(&root, &["report", "merge", "s1", "s2", "--out", "merged"]);
    assert_eq!(merged.status.code(), Some(2));
    assert_eq!(
        read(&root.join("merged"), "results.jsonl"),
        results,
        "the merged shards differ from the whole run"
    );
    std::fs::remove_dir_all(&root).ok();
}

/// Starts `opconform run` in `root` into `reports/cpu` and kills it (SIGKILL) once its partial
/// file holds a load-error row and at least one result; returns the partial file's lines.
fn run_and_kill(root: &Path) -> Vec<String> {
    let reports = root.join("reports/cpu");
    let partial = reports.join("results.partial.jsonl");
    let interrupted_files = || {
        std::fs::read_dir(&reports)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("results.interrupted")
            })
            .count()
    };
    // A partial file already there is a killed run's: wait until this run has moved it aside.
    let rescued_before_start = interrupted_files() + usize::from(partial.exists());
    let mut child = Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args([
            "run",
            "--jobs",
            "1",
            "--cases",
            &repo_path("cases"),
            "broken.yaml",
        ])
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        // Count the rescued files before reading the rows: read the other way round, the rows
        // could be the killed run's, read just before this run moved them aside.
        let rescued = interrupted_files() == rescued_before_start;
        let lines = std::fs::read_to_string(&partial).unwrap_or_default();
        if rescued && lines.lines().count() >= 2 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(120));
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&partial).unwrap();
    assert!(text
        .lines()
        .next()
        .unwrap()
        .contains("\"outcome\":\"load_error\""));
    // Only complete lines count: the kill may tear the last one.
    text.lines()
        .filter(|l| l.ends_with('}'))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_killed_run_keeps_its_results_and_the_next_ones_never_overwrite_them() {
    let root = scratch("killed");
    let reports = committed_reports(&root);
    let before = snapshot(&reports);
    std::fs::write(root.join("broken.yaml"), "format: 1\ncases: [\n").unwrap();

    let first = run_and_kill(&root);
    // The complete reports of the last run are untouched; the rows so far are beside them.
    let mut now = snapshot(&reports);
    now.retain(|(name, _)| name != "results.partial.jsonl");
    assert_eq!(now, before);

    let second = run_and_kill(&root);
    let lines = |name: &str| -> Vec<String> {
        read(&reports, name)
            .lines()
            .filter(|l| l.ends_with('}'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(lines("results.interrupted.jsonl"), first);
    assert_eq!(lines("results.partial.jsonl"), second);
    for (name, contents) in &before {
        assert_eq!(
            &std::fs::read(reports.join(name)).unwrap(),
            contents,
            "{name}"
        );
    }

    // A complete run replaces the reports and carries the interrupted results over.
    let out = opconform_in(&root, &["run", "--cases", &repo_path("cases/documented")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("results.interrupted.2.jsonl"));
    assert_eq!(lines("results.interrupted.jsonl"), first);
    assert_eq!(lines("results.interrupted.2.jsonl"), second);
    assert!(!reports.join("results.partial.jsonl").exists());
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn the_folder_is_replaced_whole_and_one_run_at_a_time() {
    let root = scratch("whole");
    let reports = committed_reports(&root);
    let documented = repo_path("cases/documented");
    // A certification leaves a certificate; a later run into the folder drops it with the rest
    // rather than leaving a certificate of other results beside its own.
    let out = opconform_in(
        &root,
        &[
            "certify",
            "--backend",
            "cpu",
            "--cases",
            &documented,
            "--report-dir",
            "reports/cpu",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reports.join("certificate.md").exists());
    let out = opconform_in(&root, &["run", "--cases", &documented]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!reports.join("certificate.md").exists());
    let mut beside: Vec<String> = std::fs::read_dir(root.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    beside.sort();
    assert_eq!(beside, [".cpu.lock", "cpu"]);

    // While another run holds the folder, a second one is refused and changes nothing.
    let before = snapshot(&reports);
    let held = opconform::report::folder::ReportFolder::open(&reports).unwrap();
    let out = opconform_in(&root, &["run", "--cases", &documented]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("another opconform run"));
    assert_eq!(snapshot(&reports), before);
    drop(held);

    // A folder holding other files is refused, not replaced.
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/todo.txt"), "keep").unwrap();
    let out = opconform_in(
        &root,
        &["run", "--cases", &documented, "--report-dir", "notes"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("todo.txt"));
    assert_eq!(read(&root.join("notes"), "todo.txt"), "keep");
    std::fs::remove_dir_all(&root).ok();
}

#[cfg(unix)]
#[test]
fn report_writes_never_follow_links() {
    let root = scratch("links");
    let reports = committed_reports(&root);
    let outside = root.join("outside.txt");
    std::fs::write(&outside, "keep").unwrap();
    for name in ["index.html.tmp", "run.json.tmp", "results.partial.jsonl"] {
        std::os::unix::fs::symlink(&outside, reports.join(name)).unwrap();
    }
    let out = opconform_in(&root, &["run", "--cases", &repo_path("cases/documented")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&root, "outside.txt"), "keep");
    assert!(read(&reports, "index.html").starts_with("<!DOCTYPE html>"));
    assert!(!reports.join("index.html.tmp").exists());

    // `schema --write` through a planted temporary name.
    std::os::unix::fs::symlink(&outside, root.join("schema.json.tmp")).unwrap();
    let out = opconform_in(&root, &["schema", "--write", "schema.json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(read(&root, "outside.txt"), "keep");
    assert!(read(&root, "schema.json").contains("\"$schema\""));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn jobs_paths_and_levels_are_checked_before_anything_runs() {
    let root = scratch("usage");
    let documented = repo_path("cases/documented");
    for (args, message) in [
        (
            &["run", "--jobs", "20000", "--cases", &documented][..],
            "1 to 256",
        ),
        (
            &["run", "--jobs", "0", "--cases", &documented][..],
            "1 to 256",
        ),
        (
            &["certify", "--backend", "cpu", "--jobs", "20000"][..],
            "1 to 256",
        ),
        (
            &["validate", "nosuchdir"][..],
            "nosuchdir: no such file or folder",
        ),
        (
            &["run", "--feature-level", "opset1"][..],
            "not a DirectML feature level",
        ),
        (
            &["certify", "--backend", "cpu", "--feature-level", "opset1"][..],
            "not a DirectML feature level",
        ),
    ] {
        let out = opconform_in(&root, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert!(
        !root.join("reports").exists(),
        "a refused command wrote reports"
    );
    std::fs::remove_dir_all(&root).ok();
}

fn run_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

#[test]
fn zero_selected_cases_fail_with_exit_2_for_run_and_certify() {
    let root = scratch("zero");
    let dir = root.join("r");
    let dir = dir.to_str().unwrap();
    let run = opconform(&["run", "--filter", "no-case-has-this", "--report-dir", dir]);
    assert_eq!(run.status.code(), Some(2));
    let certify = opconform(&[
        "certify",
        "--backend",
        "cpu",
        "--cases",
        "cases/documented",
        "--filter",
        "no-case-has-this",
        "--report-dir",
        dir,
    ]);
    assert_eq!(
        certify.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&certify.stderr)
    );
    assert!(String::from_utf8_lossy(&certify.stderr).contains("no case selected"));
    assert!(!Path::new(dir).exists(), "nothing is written");
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn merge_refuses_an_incomplete_set_of_shards_unless_allowed() {
    let root = scratch("partial-merge");
    let dir = |name: &str| root.join(name).to_string_lossy().into_owned();
    for shard in ["1/3", "2/3"] {
        let name = format!("s{}", &shard[..1]);
        let out = opconform(&[
            "run",
            "--cases",
            "cases/documented",
            "--shard",
            shard,
            "--report-dir",
            &dir(&name),
        ]);
        assert_eq!(out.status.code(), Some(0));
    }
    let merged = opconform(&[
        "report",
        "merge",
        &dir("s1"),
        &dir("s2"),
        "--out",
        &dir("m"),
    ]);
    assert_eq!(merged.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert!(stderr.contains("3/3 missing"), "{stderr}");
    let twice = opconform(&[
        "report",
        "merge",
        &dir("s1"),
        &dir("s1"),
        "--out",
        &dir("m"),
    ]);
    assert_eq!(twice.status.code(), Some(2));
    let allowed = opconform(&[
        "report",
        "merge",
        &dir("s1"),
        &dir("s2"),
        "--out",
        &dir("m"),
        "--allow-partial",
    ]);
    assert_eq!(allowed.status.code(), Some(130));
    assert_eq!(run_json(&root.join("m"))["interrupted"], true);
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn the_suite_digest_is_the_same_for_every_backend_and_verify_recomputes_it() {
    let root = scratch("digest");
    let dir = |name: &str| root.join(name).to_string_lossy().into_owned();
    let cases = ["--cases", "cases/documented", "cases/negative"];
    let run = opconform(&[&["run", "--report-dir", &dir("run")][..], &cases].concat());
    assert_eq!(run.status.code(), Some(0));
    let low = opconform(
        &[
            &[
                "certify",
                "--backend",
                "cpu",
                "--feature-level",
                "3_0",
                "--report-dir",
                &dir("low"),
            ][..],
            &cases,
        ]
        .concat(),
    );
    assert_eq!(
        low.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&low.stderr)
    );
    let (a, b) = (run_json(&root.join("run")), run_json(&root.join("low")));
    assert_eq!(a["case_set_digest"], b["case_set_digest"]);
    assert_ne!(
        a["case_count"], b["case_count"],
        "the targets differ, the suite does not"
    );
    let cert: serde_json::Value =
        serde_json::from_str(&read(&root.join("low"), "certificate.json")).unwrap();
    assert_eq!(cert["case_set_digest"], a["case_set_digest"]);
    assert_eq!(cert["results_digest"], b["results_digest"]);

    for name in ["run", "low"] {
        let verify = opconform(&[&["verify", &dir(name)][..], &cases].concat());
        let stdout = String::from_utf8_lossy(&verify.stdout);
        assert_eq!(verify.status.code(), Some(0), "{stdout}");
        assert!(stdout.contains("ok suite digest"), "{stdout}");
    }
    // A tampered result is caught by the results digest and the certificate check.
    let results = root.join("low/results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let tampered = text.replacen("\"outcome\":\"pass\"", "\"outcome\":\"fail\"", 1);
    std::fs::write(&results, tampered).unwrap();
    let verify = opconform(&[&["verify", &dir("low")][..], &cases].concat());
    let stdout = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("MISMATCH results digest"), "{stdout}");
    assert!(stdout.contains("MISMATCH certificate verdict"), "{stdout}");
    // Other case files: the suite digest differs.
    let verify = opconform(&["verify", &dir("run"), "--cases", "cases/documented"]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("MISMATCH suite digest"));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn filters_take_globs_and_tags_skips_and_case_lists() {
    let root = scratch("select");
    let dir = |name: &str| root.join(name).to_string_lossy().into_owned();
    let ids = |name: &str| -> Vec<String> {
        read(&root.join(name), "results.jsonl")
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let out = opconform(&[
        "run",
        "--cases",
        "cases/documented",
        "--filter",
        "dml_argmax::*",
        "--filter",
        "ov_one_hot_1::*",
        "--skip",
        "*example_1",
        "--report-dir",
        &dir("glob"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = ids("glob");
    assert!(!got.is_empty());
    assert!(got.iter().all(|id| (id.starts_with("dml_argmax::")
        || id.starts_with("ov_one_hot_1::"))
        && !id.ends_with("example_1")));
    let list = root.join("list.txt");
    std::fs::write(&list, format!("# two cases\n{}\n\n{}\n", got[0], got[1])).unwrap();
    let out = opconform(&[
        "run",
        "--cases",
        "cases/documented",
        "--case-list",
        list.to_str().unwrap(),
        "--report-dir",
        &dir("list"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(ids("list"), got[..2]);
    assert_eq!(
        run_json(&root.join("list"))["selection"]["case_list"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    std::fs::write(&list, "dml_argmax::cases::no_such_case\n").unwrap();
    let out = opconform(&[
        "run",
        "--cases",
        "cases/documented",
        "--case-list",
        list.to_str().unwrap(),
        "--report-dir",
        &dir("typo"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_case"));
    // Tags are recorded and can be filtered on.
    let tagged = read(&root.join("glob"), "results.jsonl");
    let tag = tagged
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| {
            v["tags"]
                .as_array()
                .and_then(|t| t.first())
                .and_then(|t| t.as_str().map(String::from))
        });
    if let Some(tag) = tag {
        let out = opconform(&[
            "run",
            "--cases",
            "cases/documented",
            "--filter",
            &format!("tag:{tag}"),
            "--report-dir",
            &dir("tag"),
        ]);
        assert_eq!(out.status.code(), Some(0));
        assert!(read(&root.join("tag"), "results.jsonl")
            .lines()
            .all(|l| l.contains(&format!("\"{tag}\""))));
    }
    std::fs::remove_dir_all(&root).ok();
}
