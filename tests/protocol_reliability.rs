//! Backend protocol v1 against hostile backends (issue 11): a backend that writes blank lines
//! or bytes without end, answers twice, closes its stdin, exits between cases, or leaves
//! helper processes behind. Each must end in a bounded time as the right outcome, charged to
//! the case that caused it, with no process left running. Unix only (process groups).
#![cfg(unix)]

use opconform::protocol::framing::HELLO_LINE_LIMIT;
use opconform::protocol::{ProcessBackend, ProcessOptions, ProtocolError};
use opconform_backend::{
    ArgMaxDesc, AxisDirection, Backend, BackendError, DataType, Level, OperatorDesc, Tensor,
    TensorDesc,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Python shared by the test backends: reads requests, answers with `handle(request)`.
const PRELUDE: &str = r#"
import base64, json, os, subprocess, sys, time

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

def hello():
    return {"type": "hello", "protocol": 1, "name": "test", "version": "0.1",
            "device": "pid %d" % os.getpid(), "claims": ["4_1"], "operators": ["DML_ARGMAX"]}

def echo(request):
    """Answers with the first input's bytes in every output, repeated or cut to size."""
    data = base64.b64decode(request["inputs"][0]["data"])
    outputs = []
    for out in request["outputs"]:
        size = out["desc"]["total_tensor_size_in_bytes"]
        buf = (data * (size // max(len(data), 1) + 1))[:size]
        outputs.append({"name": out["name"], "data": base64.b64encode(buf).decode()})
    return {"type": "result", "id": request["id"], "outputs": outputs}

def serve(handle):
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "hello":
            send(hello())
        elif request["type"] == "shutdown":
            return
        else:
            handle(request)
"#;

/// The `hello` reply, for shell backends.
const HELLO: &str = r#"{"type":"hello","protocol":1,"name":"t","version":"1","device":"d","claims":["4_1"],"operators":["DML_ARGMAX"]}"#;

/// A temp dir for one test, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "opconform-protocol-reliability-{}-{n}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    /// Writes a Python backend (the prelude, then `body`) and returns its command.
    fn python(&self, body: &str) -> String {
        let path = self.0.join("backend.py");
        std::fs::write(&path, format!("{PRELUDE}\n{body}\n")).unwrap();
        format!("python3 '{}'", path.display())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn options(case_timeout_ms: u64) -> ProcessOptions {
    ProcessOptions {
        case_timeout: Duration::from_millis(case_timeout_ms),
        handshake_timeout: Duration::from_secs(20),
        shutdown_grace: Duration::from_millis(300),
    }
}

/// ArgMax over axis 0 of an INT32 {n} input into an INT32 {1} output.
fn run_sized(backend: &ProcessBackend, n: u32) -> Result<Vec<u8>, BackendError> {
    let input = TensorDesc::packed(DataType::Int32, &[n]);
    let output = TensorDesc::packed(DataType::Int32, &[1]);
    let operator = OperatorDesc::ArgMax(ArgMaxDesc {
        input: input.clone(),
        output: output.clone(),
        axes: vec![0],
        axis_direction: AxisDirection::Increasing,
    });
    let data: Vec<u8> = (5..5 + n as i32).flat_map(|v| v.to_le_bytes()).collect();
    let inputs = vec![Tensor::from_bytes(input, data).unwrap()];
    let mut outputs = vec![Tensor::filled(output, 0xCD).unwrap()];
    backend.execute(&operator, &inputs, &mut outputs, Level::dml(0x4100))?;
    Ok(outputs.remove(0).data)
}

fn run(backend: &ProcessBackend) -> Result<Vec<u8>, BackendError> {
    run_sized(backend, 4)
}

/// True while the process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits (briefly) for a pid file the backend writes.
fn read_pid(path: &std::path::Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no pid in {path:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts that `pid` is gone, allowing a moment for the kernel to deliver the kill.
fn assert_gone(pid: u32, what: &str) {
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{what} (pid {pid}) survived"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn endless_blank_lines_cannot_outlast_the_handshake_timeout() {
    // `yes ''`: before, each blank line restarted the wait and the channel grew without end.
    let mut opts = options(1000);
    opts.handshake_timeout = Duration::from_millis(500);
    let started = Instant::now();
    let result = ProcessBackend::spawn("yes ''", opts);
    assert!(
        matches!(result, Err(ProtocolError::HandshakeTimeout { seconds, .. }) if seconds == 0.5),
        "{:?}",
        result.err()
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn endless_blank_lines_during_a_case_are_a_timeout() {
    let command = format!("read l; echo '{HELLO}'; read l; yes ''");
    let backend = ProcessBackend::spawn(&command, options(500)).unwrap();
    let started = Instant::now();
    let result = run(&backend);
    assert!(
        matches!(result, Err(BackendError::Timeout { seconds, .. }) if seconds == 0.5),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn endless_bytes_without_a_newline_fail_the_handshake_at_the_line_limit() {
    // `cat /dev/zero`: before, the harness read it into one line until it aborted.
    let started = Instant::now();
    match ProcessBackend::spawn("cat /dev/zero", options(1000)) {
        Err(ProtocolError::Handshake { message, .. }) => assert!(
            message.contains(&format!("longer than the {HELLO_LINE_LIMIT} bytes allowed")),
            "{message}"
        ),
        other => panic!("expected a handshake failure, got {:?}", other.err()),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_over_long_reply_is_a_crash_of_its_case_and_the_run_goes_on() {
    let dir = Dir::new("long");
    // Case 1 gets a 1 MiB line (its limit is 64 KiB and a few bytes); the others are echoed,
    // including a 3 MiB input whose reply stays within its limit.
    let command = dir.python(
        r#"
def handle(request):
    if request["id"] == 1:
        sys.stdout.write('{"type":"result","id":1,"outputs":[{"name":"OutputTensor","data":"'
                         + "A" * (1 << 20) + '"}]}\n')
        sys.stdout.flush()
    else:
        send(echo(request))
serve(handle)
"#,
    );
    let backend = ProcessBackend::spawn(&command, options(5000)).unwrap();
    match run(&backend) {
        Err(BackendError::Crash { message }) => {
            assert!(message.contains("case 1"), "{message}");
            assert!(message.contains("bytes allowed"), "{message}");
        }
        other => panic!("expected a crash, got {other:?}"),
    }
    assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    assert_eq!(backend.restarts(), 1);
}

#[test]
fn a_large_reply_within_its_limit_is_accepted() {
    // The limit follows the case's outputs: a 1 MiB output buffer comes back whole.
    let dir = Dir::new("large");
    let command = dir.python("serve(lambda request: send(echo(request)))");
    let backend = ProcessBackend::spawn(&command, options(10_000)).unwrap();
    let input = TensorDesc::packed(DataType::Int32, &[1 << 18]);
    let output = TensorDesc::packed(DataType::Int32, &[1 << 18]);
    let operator = OperatorDesc::ArgMax(ArgMaxDesc {
        input: input.clone(),
        output: output.clone(),
        axes: vec![0],
        axis_direction: AxisDirection::Increasing,
    });
    let inputs = vec![Tensor::filled(input, 7).unwrap()];
    let mut outputs = vec![Tensor::filled(output, 0).unwrap()];
    backend
        .execute(&operator, &inputs, &mut outputs, Level::dml(0x4100))
        .unwrap();
    assert_eq!(outputs[0].data, vec![7u8; 1 << 20]);
}

#[test]
fn helpers_do_not_survive_a_crash_even_when_they_hold_stdout() {
    let dir = Dir::new("crash-helper");
    let pid_file = dir.path("helper.pid");
    // The helper inherits stdout, so stdout never reaches end of file: only the exit shows.
    let command = dir.python(&format!(
        r#"
helper = subprocess.Popen(["sleep", "1000"])
open({pid:?}, "w").write(str(helper.pid))
def handle(request):
    os._exit(4)
serve(handle)
"#,
        pid = pid_file.display().to_string()
    ));
    let backend = ProcessBackend::spawn(&command, options(30_000)).unwrap();
    let helper = read_pid(&pid_file);
    assert!(alive(helper));
    let started = Instant::now();
    match run(&backend) {
        Err(BackendError::Crash { message }) => {
            assert!(message.contains("exit status 4"), "{message}")
        }
        other => panic!("expected a crash, got {other:?}"),
    }
    // Before, this was a timeout: the helper kept stdout open.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_gone(helper, "the helper of a crashed backend");
}

#[test]
fn helpers_do_not_survive_shutdown_or_a_failed_handshake() {
    let dir = Dir::new("shutdown-helper");
    let pid_file = dir.path("helper.pid");
    let body = format!(
        r#"
helper = subprocess.Popen(["sleep", "1000"], stdout=subprocess.DEVNULL)
open({pid:?}, "w").write(str(helper.pid))
serve(lambda request: send(echo(request)))
"#,
        pid = pid_file.display().to_string()
    );
    // The backend exits on shutdown; its helper, in the same process group, must go too.
    let backend = ProcessBackend::spawn(&dir.python(&body), options(5000)).unwrap();
    let helper = read_pid(&pid_file);
    assert!(run(&backend).is_ok());
    assert!(alive(helper));
    drop(backend);
    assert_gone(helper, "the helper of a backend that was shut down");

    // A handshake that fails after a helper started.
    std::fs::remove_file(&pid_file).unwrap();
    let command = format!(
        "sleep 1000 & echo $! > '{}'; read l; echo 'not a hello'",
        pid_file.display()
    );
    assert!(matches!(
        ProcessBackend::spawn(&command, options(5000)),
        Err(ProtocolError::Handshake { .. })
    ));
    assert_gone(
        read_pid(&pid_file),
        "the helper of a backend whose handshake failed",
    );
}

#[test]
fn a_second_answer_is_the_previous_requests_fault_not_the_next_cases() {
    let dir = Dir::new("twice");
    let command = dir.python(
        r#"
def handle(request):
    send(echo(request))
    if request["id"] == 1:
        send(echo(request))
serve(handle)
"#,
    );
    let backend = ProcessBackend::spawn(&command, options(5000)).unwrap();
    assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    // Before, case 2 was recorded as a crash ("answered request 1 to case 2").
    assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    assert_eq!(backend.restarts(), 0);
    let violations = backend.violations();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(
        violations[0].contains("answered case 1 (DML_ARGMAX at 4_1) a second time"),
        "{violations:?}"
    );
}

#[test]
fn a_second_answer_arriving_during_the_next_case_is_not_charged_to_it() {
    let dir = Dir::new("twice-late");
    // The duplicate of case 1 comes after case 2 was sent, before case 2's answer.
    let command = dir.python(
        r#"
previous = None
def handle(request):
    global previous
    if previous is not None:
        send(previous)
    previous = echo(request)
    send(previous)
serve(handle)
"#,
    );
    let backend = ProcessBackend::spawn(&command, options(5000)).unwrap();
    for _ in 0..3 {
        assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    }
    assert_eq!(backend.restarts(), 0);
    let violations = backend.violations();
    assert_eq!(violations.len(), 2, "{violations:?}");
    assert!(
        violations[0].contains("answered case 1 (DML_ARGMAX at 4_1) a second time"),
        "{violations:?}"
    );
}

#[test]
fn a_backend_that_closes_its_stdin_costs_the_next_case_nothing() {
    let dir = Dir::new("close-stdin");
    // After answering case 1 the backend closes its stdin and lingers. (`exec`: with `sh`
    // left as its parent, the shell would still hold the pipe open.)
    let command = "exec ".to_string()
        + &dir.python(
            r#"
marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "started")
first = not os.path.exists(marker)
open(marker, "a").close()
sys.stdin.readline()
send(hello())
request = json.loads(sys.stdin.readline())
send(echo(request))
if first:
    os.close(0)
    time.sleep(3600)
serve(lambda request: send(echo(request)))
"#,
        );
    let backend = ProcessBackend::spawn(&command, options(30_000)).unwrap();
    assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    // Before, case 2 waited for its full timeout and was recorded as a timeout.
    assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(backend.restarts(), 1);
    let violations = backend.violations();
    assert!(
        violations.iter().any(|v| v.contains("after case 1")
            && v.contains("it closed its stdin")
            && v.contains("the backend was restarted")),
        "{violations:?}"
    );
}

#[test]
fn a_backend_without_stdin_is_a_crash_not_a_timeout() {
    // Every start closes stdin after the handshake: writing the 4 MiB request fails.
    let command = format!("read l; echo '{HELLO}'; exec 0<&-; sleep 1000");
    let backend = ProcessBackend::spawn(&command, options(30_000)).unwrap();
    let started = Instant::now();
    let result = run_sized(&backend, 1 << 20);
    assert!(
        matches!(&result, Err(BackendError::Crash { message }) if message.contains("stdin")),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_exit_or_a_stray_line_between_cases_costs_the_next_case_nothing() {
    let dir = Dir::new("between");
    let command = dir.python(
        r#"
def handle(request):
    send(echo(request))
    if request["id"] == 1:
        sys.stdout.write("progress: 100%\n")
        sys.stdout.flush()
    elif request["id"] == 3:
        os._exit(0)
serve(handle)
"#,
    );
    let backend = ProcessBackend::spawn(&command, options(5000)).unwrap();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(100));
        // Before, cases 2 and 4 were crashes.
        assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
    }
    assert_eq!(backend.restarts(), 2);
    let violations = backend.violations();
    assert_eq!(violations.len(), 2, "{violations:?}");
    assert!(
        violations[0].contains("after case 1")
            && violations[0].contains("`progress: 100%` with no request outstanding"),
        "{violations:?}"
    );
    assert!(
        violations[1].contains("after case 3") && violations[1].contains("exit status 0"),
        "{violations:?}"
    );
}
