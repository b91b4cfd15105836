//! SIGINT and SIGTERM during `opconform certify --backend-cmd` (issue 11): the backend's whole
//! process group is killed (a helper it started included), the results recorded so far are
//! kept, the case the signal cut short is not recorded as a crash, and opconform exits
//! non-zero at once. Unix only.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A backend that answers the first two cases with an `internal` error and hangs on the third,
/// after writing its own pid and a helper's to `DIR/backend.pid` and `DIR/helper.pid`.
const BACKEND: &str = r#"
import json, os, subprocess, sys, time
out = sys.argv[1]
helper = subprocess.Popen(["sleep", "1000"])
open(os.path.join(out, "helper.pid"), "w").write(str(helper.pid))
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "hello":
        reply = {"type": "hello", "protocol": 1, "name": "hangs", "version": "1",
                 "device": "d", "claims": ["4_1"], "operators": ["DML_ARGMAX"]}
    elif request["type"] == "execute" and request["id"] <= 2:
        reply = {"type": "error", "id": request["id"], "kind": "internal", "message": "no"}
    elif request["type"] == "execute":
        open(os.path.join(out, "backend.pid"), "w").write(str(os.getpid()))
        time.sleep(3600)
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"#;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "opconform-protocol-interrupt-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// True while the process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_for_pid(path: &Path, child: &mut std::process::Child) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("no pid in {path:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn interrupt_certify(signal: &str) {
    let dir = temp_dir(signal);
    let script = dir.join("backend.py");
    std::fs::write(&script, BACKEND).unwrap();
    let reports = dir.join("reports");
    let repo = env!("CARGO_MANIFEST_DIR");
    let mut opconform = Command::new(env!("CARGO_BIN_EXE_opconform"))
        .current_dir(repo)
        .args(["certify", "--backend-cmd"])
        .arg(format!(
            "python3 '{}' '{}'",
            script.display(),
            dir.display()
        ))
        .args([
            "--cases",
            "cases/documented/dml_argmax.yaml",
            "--timeout",
            "60",
        ])
        .arg("--report-dir")
        .arg(&reports)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let helper = wait_for_pid(&dir.join("helper.pid"), &mut opconform);
    let backend = wait_for_pid(&dir.join("backend.pid"), &mut opconform);
    assert!(alive(helper) && alive(backend));

    let sent = Instant::now();
    let kill = Command::new("kill")
        .args([&format!("-{signal}"), &opconform.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = loop {
        if opconform.try_wait().unwrap().is_some() {
            break opconform.wait_with_output().unwrap();
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = opconform.kill();
            panic!("opconform did not stop within 10 s of SIG{signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "exit 0 after SIG{signal}: {stderr}"
    );
    assert!(stderr.contains("received: stopping"), "{stderr}");
    for (pid, what) in [(backend, "backend"), (helper, "helper")] {
        let start = Instant::now();
        while alive(pid) {
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "the {what} (pid {pid}) survived SIG{signal}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // The two answered cases are kept; the one cut short is not recorded as a crash.
    let final_results = reports.join("results.jsonl");
    let results = if final_results.exists() {
        final_results
    } else {
        reports.join("results.partial.jsonl")
    };
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    let outcomes: Vec<String> = text
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["outcome"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        outcomes,
        ["error", "error"],
        "{}: {text}",
        results.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_kills_the_backend_group_and_keeps_the_results() {
    interrupt_certify("TERM");
}

#[test]
fn sigint_kills_the_backend_group_and_keeps_the_results() {
    interrupt_certify("INT");
}
