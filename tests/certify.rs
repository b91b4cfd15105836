//! Certification end to end through backend protocol v1, with `tools/broken_backend.py` (a
//! numpy oracle with one planted bug per `--break` mode) as the backend: the correct oracle
//! certifies, each planted bug fails for the right case, crashes and hangs become outcomes
//! without stopping the run, results reach `results.partial.jsonl` as they come, and the CLI's
//! exit status follows the certificate or the baseline.
//!
//! Needs a Python with numpy (`.venv/bin/python`, else `python3`). Without one the tests print
//! a note and pass, except under `CI=true`, where they fail.

use opconform::case::load::load_file;
use opconform::case::Case;
use opconform::certify::{certify_backend, Baseline, Certification, CertifyOptions};
use opconform::protocol::{ProcessBackend, ProcessOptions};
use opconform::report::partial;
use opconform::report::rows::ResultRow;
use opconform::runner::Outcome;
use opconform_backend::{Level, OperatorKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Python to run the broken backend with, or `None` (after a note) when there is none with
/// numpy and the tests may be skipped. Panics under `CI=true` when there is none.
fn python() -> Option<String> {
    let venv = repo().join(".venv/bin/python");
    let candidates = if venv.exists() {
        vec![venv.display().to_string()]
    } else {
        vec!["python3".to_string()]
    };
    let found = candidates.into_iter().find(|python| {
        Command::new(python)
            .args(["-c", "import numpy"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !ci,
            "CI=true but neither .venv/bin/python nor python3 has numpy: run `python3 -m venv \
             .venv && .venv/bin/pip install -r tools/requirements-adapters.txt`"
        );
        eprintln!("note: skipped, no Python with numpy (.venv/bin/python or python3)");
    }
    found
}

/// The broken backend's command line, with `--break mode` if given.
fn command(python: &str, mode: Option<&str>) -> String {
    let script = repo().join("tools/broken_backend.py");
    let mut command = format!("'{python}' '{}'", script.display());
    if let Some(mode) = mode {
        command.push_str(&format!(" --break {mode}"));
    }
    command
}

/// The cases of the given groups of `cases/` (`documented`, `negative`, …), with `cases/` as
/// the root so that their ids are those of a full run (only these folders are read).
fn cases(groups: &[&str]) -> Vec<Case> {
    let root = repo().join("cases");
    let mut cases = Vec::new();
    for group in groups {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(group))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for file in files {
            let (loaded, errors) = load_file(&root, &file);
            assert!(errors.is_empty(), "{errors:?}");
            cases.extend(loaded);
        }
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    cases
}

/// A fresh temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "opconform-certify-{}-{n}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn certify(
    python: &str,
    mode: Option<&str>,
    case_timeout: Duration,
    cases: Vec<Case>,
    report_dir: Option<&Path>,
) -> Certification {
    let options = ProcessOptions {
        case_timeout,
        ..ProcessOptions::default()
    };
    let backend = ProcessBackend::spawn(&command(python, mode), options).unwrap();
    let options = CertifyOptions {
        jobs: 1,
        report_dir: report_dir.map(Path::to_path_buf),
        ..CertifyOptions::default()
    };
    certify_backend(&backend, cases, &options, &|_| {}).unwrap()
}

fn ids(cases: &[Case]) -> BTreeSet<String> {
    cases.iter().map(|c| c.id.clone()).collect()
}

#[test]
fn the_correct_oracle_certifies_at_4_1_and_writes_every_file() {
    let Some(python) = python() else { return };
    let cases = cases(&["documented", "negative"]);
    let expected_ids = ids(&cases);
    let dir = TempDir::new("oracle");
    let certification = certify(&python, None, Duration::from_secs(10), cases, Some(&dir.0));
    let cert = &certification.certificate;
    assert!(cert.certified, "{}", cert.to_markdown());
    assert_eq!(cert.targets, vec![Level::dml(0x4100), Level::Opset(1)]);
    for operator in &cert.operators {
        assert!(operator.claimed && operator.certified, "{operator:?}");
    }
    let levels: Vec<Option<Level>> = cert
        .operators
        .iter()
        .map(|o| o.highest_level_passed)
        .collect();
    assert_eq!(
        levels,
        vec![
            Some(Level::dml(0x4100)),
            Some(Level::dml(0x4100)),
            Some(Level::dml(0x4100)),
            Some(Level::Opset(1)),
        ]
    );
    let got: BTreeSet<String> = certification.results.iter().map(|r| r.id.clone()).collect();
    assert_eq!(got, expected_ids);
    assert!(certification.succeeded());
    for file in [
        "run.json",
        "results.jsonl",
        "junit.xml",
        "summary.md",
        "index.html",
        "certificate.json",
        "certificate.md",
    ] {
        assert!(dir.0.join(file).is_file(), "{file} is missing");
    }
    assert!(!dir.0.join(partial::PARTIAL_RESULTS).exists());
    let json = std::fs::read_to_string(dir.0.join("certificate.json")).unwrap();
    let parsed: opconform::certify::Certificate = serde_json::from_str(&json).unwrap();
    assert_eq!(&parsed, cert);
    assert!(!json.contains(&*std::env::temp_dir().to_string_lossy()));
}

#[test]
fn ties_the_wrong_way_fail_the_documented_increasing_tie_case() {
    let Some(python) = python() else { return };
    let certification = certify(
        &python,
        Some("ties-wrong-way"),
        Duration::from_secs(10),
        cases(&["documented", "negative"]),
        None,
    );
    let cert = &certification.certificate;
    assert!(!cert.certified);
    let failing: Vec<&str> = certification
        .results
        .iter()
        .filter(|r| r.outcome != Outcome::Pass)
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(
        failing,
        vec!["dml_argmax::documented::axis_direction_increasing"]
    );
    let argmax = cert
        .operators
        .iter()
        .find(|o| o.operator == OperatorKind::DmlArgMax)
        .unwrap();
    assert!(!argmax.certified);
    assert_eq!(argmax.highest_level_passed, None);
    assert_eq!(argmax.next_level, Some(Level::dml(0x3000)));
    assert_eq!(
        argmax.blocking[0].case,
        "dml_argmax::documented::axis_direction_increasing"
    );
    assert_eq!(argmax.blocking[0].outcome, Outcome::Fail);
    assert!(cert
        .operators
        .iter()
        .filter(|o| o.operator != OperatorKind::DmlArgMax)
        .all(|o| o.certified));
}

#[test]
fn a_crashing_backend_is_restarted_and_every_case_is_recorded() {
    let Some(python) = python() else { return };
    let cases = cases(&["documented"]);
    let expected_ids = ids(&cases);
    let certification = certify(&python, Some("crash"), Duration::from_secs(10), cases, None);
    let got: BTreeSet<String> = certification.results.iter().map(|r| r.id.clone()).collect();
    assert_eq!(got, expected_ids);
    let crashes: Vec<&str> = certification
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Crash)
        .map(|r| r.detail.as_str())
        .collect();
    // The backend exits on the 3rd case of each start: every 3rd case crashes.
    assert_eq!(crashes.len(), expected_ids.len() / 3, "{crashes:?}");
    assert!(crashes[0].contains("crashing on purpose"), "{}", crashes[0]);
    assert!(certification
        .results
        .iter()
        .all(|r| matches!(r.outcome, Outcome::Pass | Outcome::Crash)));
    assert!(!certification.certificate.certified);
}

#[test]
fn a_hanging_backend_times_out_and_every_case_is_recorded() {
    let Some(python) = python() else { return };
    let cases = cases(&["documented"]);
    let expected_ids = ids(&cases);
    let started = Instant::now();
    let certification = certify(&python, Some("hang"), Duration::from_secs(1), cases, None);
    let got: BTreeSet<String> = certification.results.iter().map(|r| r.id.clone()).collect();
    assert_eq!(got, expected_ids);
    let timeouts = certification
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Timeout)
        .count();
    assert_eq!(timeouts, expected_ids.len() / 3);
    assert!(certification
        .results
        .iter()
        .all(|r| matches!(r.outcome, Outcome::Pass | Outcome::Timeout)));
    // One second per timeout, plus restarts: far below a hang.
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn results_reach_the_partial_file_as_they_come() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("partial");
    // A partial file left by an interrupted run is kept aside, not lost.
    std::fs::write(dir.0.join(partial::PARTIAL_RESULTS), "{\"torn\"\n").unwrap();
    let backend =
        ProcessBackend::spawn(&command(&python, None), ProcessOptions::default()).unwrap();
    let options = CertifyOptions {
        jobs: 1,
        report_dir: Some(dir.0.clone()),
        ..CertifyOptions::default()
    };
    let cases = cases(&["documented"]);
    let count = cases.len();
    let (paused_tx, paused_rx) = std::sync::mpsc::channel::<()>();
    let (resume_tx, resume_rx) = std::sync::mpsc::channel::<()>();
    let resume_rx = std::sync::Mutex::new(resume_rx);
    let seen = AtomicU32::new(0);
    std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            certify_backend(&backend, cases, &options, &|_| {
                // Pause the run after its 5th result, as if opconform were killed there.
                if seen.fetch_add(1, Ordering::Relaxed) == 4 {
                    paused_tx.send(()).unwrap();
                    resume_rx.lock().unwrap().recv().unwrap();
                }
            })
        });
        paused_rx.recv().unwrap();
        let recorded = partial::read_partial(&dir.0.join(partial::PARTIAL_RESULTS)).unwrap();
        assert_eq!(recorded.len(), 5);
        assert!(recorded
            .iter()
            .all(|r| matches!(r, ResultRow::Case(r) if r.result.outcome == Outcome::Pass)));
        assert!(!dir.0.join("results.jsonl").exists());
        resume_tx.send(()).unwrap();
        let certification = run.join().unwrap().unwrap();
        assert_eq!(
            certification.rescued,
            Some(dir.0.join(partial::INTERRUPTED_RESULTS))
        );
        assert_eq!(certification.results.len(), count);
    });
    assert_eq!(
        std::fs::read_to_string(dir.0.join(partial::INTERRUPTED_RESULTS)).unwrap(),
        "{\"torn\"\n"
    );
    assert!(!dir.0.join(partial::PARTIAL_RESULTS).exists());
    let final_lines = std::fs::read_to_string(dir.0.join("results.jsonl")).unwrap();
    assert_eq!(final_lines.lines().count(), count);
}

/// Runs the opconform binary; returns its exit status and stdout.
fn opconform(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

#[test]
fn the_cli_exit_status_follows_the_certificate_and_the_baseline() {
    let Some(python) = python() else { return };
    let dir = TempDir::new("cli");
    let reports = dir.0.join("reports");
    let reports = reports.to_str().unwrap();
    // Loaded from cases/documented itself, the ids read `<operator>::cases::<id>`.
    let cases = repo().join("cases/documented");
    let cases = cases.to_str().unwrap();
    let broken = command(&python, Some("ties-wrong-way"));
    let correct = command(&python, None);
    let run = |backend: &str, baseline: Option<&Path>| {
        let mut args = vec![
            "certify",
            "--backend-cmd",
            backend,
            "--cases",
            cases,
            "--report-dir",
            reports,
        ];
        if let Some(path) = baseline {
            args.extend(["--baseline", path.to_str().unwrap()]);
        }
        opconform(&args)
    };

    let (status, output) = run(&correct, None);
    assert_eq!(status, 0, "{output}");
    assert!(output.contains("CERTIFIED at 4_1 and opset1"), "{output}");

    let (status, output) = run(&broken, None);
    assert_eq!(status, 1, "{output}");
    assert!(
        output.contains(
            "DML_ARGMAX does not reach 3_0: dml_argmax::cases::axis_direction_increasing (fail)"
        ),
        "{output}"
    );

    // A baseline that expects the failure: exit 0.
    let baseline = dir.0.join("baseline.yaml");
    let expected = Baseline::parse(
        "format: 1\nbackend: \"broken_backend:ties-wrong-way\"\nexpected:\n  - case: \
         dml_argmax::cases::axis_direction_increasing\n    outcome: fail\n    reason: \
         INCREASING returns the last of equal maxima\n",
    )
    .unwrap();
    std::fs::write(&baseline, expected.to_yaml()).unwrap();
    let (status, output) = run(&broken, Some(&baseline));
    assert_eq!(status, 0, "{output}");
    assert!(
        output.contains("0 new failure(s), 0 newly passing, 1 still failing"),
        "{output}"
    );
    let certificate = std::fs::read_to_string(Path::new(reports).join("certificate.md")).unwrap();
    assert!(certificate.contains("no new failures"), "{certificate}");

    // The same baseline for another failure: the real one is new, the listed one passes.
    let other = expected
        .to_yaml()
        .replace("axis_direction_increasing", "example_1");
    std::fs::write(&baseline, other).unwrap();
    let (status, output) = run(&broken, Some(&baseline));
    assert_eq!(status, 1, "{output}");
    assert!(
        output.contains("NEW FAILURE dml_argmax::cases::axis_direction_increasing (fail)"),
        "{output}"
    );
    assert!(
        output.contains("NEWLY PASSING dml_argmax::cases::example_1"),
        "{output}"
    );
    let json = std::fs::read_to_string(Path::new(reports).join("certificate.json")).unwrap();
    let cert: opconform::certify::Certificate = serde_json::from_str(&json).unwrap();
    let comparison = cert.baseline.unwrap();
    assert_eq!(comparison.new_failures.len(), 1);
    assert_eq!(comparison.newly_passing.len(), 1);

    // A baseline for another backend, and a missing backend: usage errors.
    let (status, output) = run(&correct, Some(&baseline));
    assert_eq!(status, 2, "{output}");
    assert!(
        output.contains("is for backend `broken_backend:ties-wrong-way`"),
        "{output}"
    );
    let (status, output) = opconform(&["certify", "--cases", cases]);
    assert_eq!(status, 2, "{output}");
}

/// Any `python3` (these tests need no numpy), or `None` (after a note) when there is none;
/// panics under `CI=true` when there is none.
fn plain_python() -> Option<String> {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(!ci, "CI=true but there is no python3");
        eprintln!("note: skipped, no python3");
        return None;
    }
    Some("python3".to_string())
}

/// A protocol backend (Python, standard library only) whose name, version, device and error
/// messages carry Markdown headings and terminal escape sequences. It answers every `execute`
/// with an internal error; with an argument N it hangs (for at most 20 s) at the (N+1)-th.
const HOSTILE_BACKEND: &str = r#"
import json, os, sys, time
hang_after = int(sys.argv[1]) if len(sys.argv) > 1 else -1
seen = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        out = {"type": "hello", "protocol": 1,
               "name": "evil\n## Verdict: CERTIFIED\n\x1b[2J\x1b]0;pwned\x07",
               "version": "1 | [x](http://e)", "device": "<b>gpu</b>\x1b[31m",
               "claims": ["4_1"], "operators": ["DML_ARGMAX"]}
    elif msg["type"] == "execute":
        seen += 1
        if seen == hang_after + 1:
            parent = os.getppid()
            for _ in range(200):
                if os.getppid() != parent:
                    break
                time.sleep(0.1)
            sys.exit(0)
        out = {"type": "error", "id": msg["id"], "kind": "internal",
               "message": "boom\n# CERTIFIED\x1b[31m"}
    else:
        break
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"#;

fn hostile_backend(dir: &Path, python: &str, hang_after: Option<u32>) -> String {
    let script = dir.join("hostile.py");
    std::fs::write(&script, HOSTILE_BACKEND).unwrap();
    let mut command = format!("'{python}' '{}'", script.display());
    if let Some(n) = hang_after {
        command.push_str(&format!(" {n}"));
    }
    command
}

#[test]
fn backend_strings_reach_neither_the_markdown_structure_nor_the_terminal_raw() {
    let Some(python) = plain_python() else { return };
    let dir = TempDir::new("hostile");
    let reports = dir.0.join("reports");
    let backend = hostile_backend(&dir.0, &python, None);
    let cases = repo().join("cases/documented");
    let (status, output) = opconform(&[
        "certify",
        "--backend-cmd",
        &backend,
        "--cases",
        cases.to_str().unwrap(),
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(status, 1, "{output}");
    assert!(!output.contains('\u{1b}'), "{output:?}");
    assert!(
        output.lines().all(|l| !l.starts_with("## Verdict")),
        "{output}"
    );
    assert!(output.contains("\\u{1b}[2J"), "{output}");
    for file in ["certificate.md", "summary.md"] {
        let text = std::fs::read_to_string(reports.join(file)).unwrap();
        assert!(!text.contains('\u{1b}'), "{file}");
        assert!(
            !text.contains("<b>") && !text.contains("[x]("),
            "{file}: {text}"
        );
        // Outside code blocks (where a multi-line message is shown as it is), no line is a
        // heading the backend wrote.
        let mut in_fence = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            assert!(
                in_fence || (!line.starts_with("## Verdict") && !line.starts_with("# CERTIFIED")),
                "{file}: {line}"
            );
        }
        assert!(!in_fence, "{file}: a code block is left open");
    }
    let certificate = std::fs::read_to_string(reports.join("certificate.md")).unwrap();
    assert!(certificate.contains("**NOT CERTIFIED**"), "{certificate}");
}

#[test]
fn sigint_loses_nothing_already_run() {
    let Some(python) = plain_python() else { return };
    let dir = TempDir::new("sigint");
    let reports = dir.0.join("reports");
    let cases = repo().join("cases/documented");
    let args = |backend: &str| {
        vec![
            "certify".to_string(),
            "--backend-cmd".into(),
            backend.to_string(),
            "--cases".into(),
            cases.display().to_string(),
            "--report-dir".into(),
            reports.display().to_string(),
            "--timeout".into(),
            "2".into(),
        ]
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args(args(&hostile_backend(&dir.0, &python, Some(3))))
        .current_dir(repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let partial = reports.join(partial::PARTIAL_RESULTS);
    let started = Instant::now();
    let seen = loop {
        let text = std::fs::read_to_string(&partial).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.len() >= 3 {
            break lines;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no results came"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let signalled = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let status = child.wait().unwrap();
    let interrupted = reports.join(partial::INTERRUPTED_RESULTS);
    match status.code() {
        // With the signal handler: the reports are written, marked interrupted, exit 130.
        Some(code) => {
            assert_eq!(code, 130);
            let run = std::fs::read_to_string(reports.join("run.json")).unwrap();
            assert!(run.contains("\"interrupted\": true"), "{run}");
            let certificate = std::fs::read_to_string(reports.join("certificate.md")).unwrap();
            assert!(certificate.contains("**INTERRUPTED**"), "{certificate}");
            assert!(!partial.exists());
            let kept = std::fs::read_to_string(&interrupted).unwrap();
            assert!(kept.lines().count() >= seen.len());
        }
        // Without one, SIGINT kills the process: the partial file holds what ran.
        None => {
            let kept = std::fs::read_to_string(&partial).unwrap();
            assert!(kept.lines().count() >= seen.len());
        }
    }
    // The next run keeps those results, whichever way the first one ended.
    let (code, output) = opconform(
        &args(&hostile_backend(&dir.0, &python, None))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, 1, "{output}");
    let kept: Vec<String> = std::fs::read_to_string(&interrupted)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(kept[..seen.len()], seen[..]);
    assert!(!partial.exists());
}
