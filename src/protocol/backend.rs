//! [`ProcessBackend`]: a [`Backend`] that runs each case in a child process speaking protocol
//! v1, restarting it after a crash or a timeout.

use super::framing::{reply_line_limit, Frame};
use super::messages::{
    decode_outputs, encode_bytes, parse_reply, ErrorKind, ErrorReply, ExecuteRequest, HelloRequest,
    Reply, Request, ResultReply, TensorPayload, PROTOCOL_VERSION,
};
use super::process::{
    describe_frame, describe_status, BackendProcess, RecvFailure, STDERR_TAIL_BYTES,
};
use super::ProtocolError;
use crate::interrupt;
use opconform_backend::{Backend, BackendError, BackendInfo, Level, OperatorDesc, Tensor};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Time limits for a [`ProcessBackend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessOptions {
    /// How long one case may take, from sending `execute` to the reply (default 10 s).
    pub case_timeout: Duration,
    /// How long the backend may take to start and answer `hello` (default 30 s).
    pub handshake_timeout: Duration,
    /// How long the backend may take to exit after `shutdown` before it is killed
    /// (default 1 s).
    pub shutdown_grace: Duration,
}

impl Default for ProcessOptions {
    fn default() -> ProcessOptions {
        ProcessOptions {
            case_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(1),
        }
    }
}

/// How many protocol violations between cases are kept (later ones are only counted).
const MAX_VIOLATIONS: usize = 100;

/// A backend in a child process, started as `sh -c COMMAND`, spoken to with protocol v1
/// (`docs/backend-protocol.md`) over its stdin and stdout.
///
/// Cases through one `ProcessBackend` are serialised. After a crash or a timeout the process is
/// killed; the next [`Backend::execute`] starts it again (with a handshake), so a run goes on.
/// If that restart fails, every later case fails at once with [`BackendError::Crash`].
/// Faults that show between cases (a second reply to a request, a line with no request
/// outstanding, a closed stdin, an exit) are not charged to the next case: they are kept as
/// [`ProcessBackend::violations`], and the process is restarted if it is unusable.
/// Dropping the backend sends `shutdown`, then kills the process's whole process group.
/// Once SIGINT or SIGTERM was received ([`crate::interrupt`]), no case is sent and the process
/// is not restarted. Unix only.
pub struct ProcessBackend {
    command: String,
    options: ProcessOptions,
    info: BackendInfo,
    state: Mutex<State>,
}

/// What changes as cases run.
struct State {
    /// The running process; `None` after a crash or timeout, until the next case restarts it.
    process: Option<BackendProcess>,
    /// The id for the next `execute`.
    next_id: u64,
    /// How many times the process was restarted.
    restarts: u64,
    /// Why the last restart failed; once set, cases fail without trying again.
    dead: Option<String>,
    /// The id and description of the last request the running process answered.
    last_answered: Option<(u64, String)>,
    /// Protocol violations seen between cases, oldest first (at most [`MAX_VIOLATIONS`]).
    violations: Vec<String>,
    /// How many violations were not kept.
    violations_dropped: u64,
}

impl State {
    /// Records a protocol violation that no case is charged with.
    fn violation(&mut self, what: String) {
        if self.violations.len() < MAX_VIOLATIONS {
            self.violations.push(what);
        } else {
            self.violations_dropped += 1;
        }
    }
}

impl ProcessBackend {
    /// Starts `sh -c command` and performs the handshake; the reply's name, version, device,
    /// claims and operators become [`Backend::info`].
    pub fn spawn(command: &str, options: ProcessOptions) -> Result<ProcessBackend, ProtocolError> {
        let (process, info) = start(command, &options)?;
        Ok(ProcessBackend {
            command: command.to_string(),
            options,
            info,
            state: Mutex::new(State {
                process: Some(process),
                next_id: 1,
                restarts: 0,
                dead: None,
                last_answered: None,
                violations: Vec::new(),
                violations_dropped: 0,
            }),
        })
    }

    /// The command the backend runs as.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The time limits in force.
    pub fn options(&self) -> ProcessOptions {
        self.options
    }

    /// How many times the process has been restarted after a crash or timeout.
    pub fn restarts(&self) -> u64 {
        self.lock().restarts
    }

    /// The last bytes the running process wrote to stderr (empty when none is running).
    pub fn stderr_tail(&self) -> String {
        self.lock()
            .process
            .as_ref()
            .map(BackendProcess::stderr_tail)
            .unwrap_or_default()
    }

    /// The operating system's process id of the running `sh -c` process, if one is running.
    pub fn process_id(&self) -> Option<u32> {
        self.lock().process.as_ref().map(BackendProcess::id)
    }

    /// The protocol violations seen between cases, which no case result carries: each says
    /// which request it follows and what the backend did (answered it twice, wrote with no
    /// request outstanding, closed its stdin or stdout, exited). Empty for a backend that keeps
    /// to the protocol.
    pub fn violations(&self) -> Vec<String> {
        let state = self.lock();
        let mut all = state.violations.clone();
        if state.violations_dropped > 0 {
            all.push(format!(
                "... and {} more violation(s)",
                state.violations_dropped
            ));
        }
        all
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Restarts the process if a crash or timeout took it down.
    fn ensure_running<'s>(
        &self,
        state: &'s mut State,
    ) -> Result<&'s mut BackendProcess, BackendError> {
        if interrupt::requested() {
            return Err(BackendError::Crash {
                message: "opconform is stopping (SIGINT or SIGTERM): the case was not sent"
                    .to_string(),
            });
        }
        if state.process.is_none() {
            if let Some(why) = &state.dead {
                return Err(BackendError::Crash {
                    message: format!("the backend could not be restarted earlier: {why}"),
                });
            }
            match start(&self.command, &self.options) {
                Ok((process, _info)) => {
                    state.process = Some(process);
                    state.last_answered = None;
                    state.restarts += 1;
                }
                Err(error) => {
                    let why = error.to_string();
                    state.dead = Some(why.clone());
                    return Err(BackendError::Crash {
                        message: format!("the backend could not be restarted: {why}"),
                    });
                }
            }
        }
        Ok(state.process.as_mut().expect("a process runs"))
    }

    /// Runs one case on a running process; leaves `state.process` `None` after a crash or a
    /// timeout.
    fn run_case(
        &self,
        state: &mut State,
        request: &ExecuteRequest,
        outputs: &mut [Tensor],
    ) -> Result<(), BackendError> {
        let id = request.id;
        let case = format!(
            "case {id} ({} at {})",
            request.operator.kind(),
            request.level
        );
        let line = request.to_line().map_err(|e| BackendError::Internal {
            message: format!("could not encode the request: {e}"),
        })?;
        check_between_cases(state, &case);
        let process = self.ensure_running(state)?;
        process.set_line_limit(reply_line_limit(
            request
                .outputs
                .iter()
                .map(|o| o.desc.total_tensor_size_in_bytes),
        ));
        if let Err(error) = process.send_line(&line) {
            return Err(crash(
                state,
                format!("could not send {case} to the backend: {error}"),
            ));
        }
        let deadline = Instant::now() + self.options.case_timeout;
        loop {
            let process = state.process.as_ref().expect("a process runs");
            let line = match process.recv_line(deadline) {
                Ok(line) => line,
                Err(RecvFailure::Broken(why)) => {
                    return Err(crash(
                        state,
                        format!("the backend died while running {case}: {why}"),
                    ))
                }
                Err(RecvFailure::Timeout) => return Err(timeout(state, &self.options, &case)),
            };
            let reply = match parse_reply(&line) {
                Ok(reply) => reply,
                Err(error) => {
                    return Err(crash(
                        state,
                        format!(
                            "while running {case} the backend wrote a line that is not a \
                             protocol v1 reply ({error}): {}",
                            excerpt(&line)
                        ),
                    ))
                }
            };
            if let Some(earlier) = second_answer(&reply, state.last_answered.as_ref()) {
                // The previous request's fault, not this case's: noted, and the wait goes on.
                state.violation(format!(
                    "the backend answered {earlier} a second time (seen while {case} ran)"
                ));
                continue;
            }
            let answered = match &reply {
                Reply::Result(result) => result.id == id,
                Reply::Error(error) => error.id == Some(id),
                Reply::Hello(_) => false,
            };
            if answered {
                state.last_answered = Some((id, case.clone()));
            }
            return match reply {
                Reply::Result(result) if answered => copy_outputs(&case, request, &result, outputs),
                Reply::Error(error) if answered => Err(map_error(error)),
                Reply::Result(ResultReply { id: other, .. }) => Err(crash(
                    state,
                    format!("the backend answered request {other} to {case}"),
                )),
                Reply::Error(ErrorReply { id: other, .. }) => Err(crash(
                    state,
                    format!(
                        "the backend answered an error for request {} to {case}",
                        other.map_or_else(|| "(no id)".to_string(), |o| o.to_string())
                    ),
                )),
                Reply::Hello(_) => Err(crash(
                    state,
                    format!("the backend answered {case} with a hello"),
                )),
            };
        }
    }
}

impl Backend for ProcessBackend {
    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError> {
        let (input_names, output_names) = operator.kind().tensor_names();
        if inputs.len() != input_names.len() || outputs.len() != output_names.len() {
            return Err(BackendError::Internal {
                message: format!(
                    "{} takes {} inputs and {} outputs; {} and {} were given",
                    operator.kind(),
                    input_names.len(),
                    output_names.len(),
                    inputs.len(),
                    outputs.len()
                ),
            });
        }
        let payload = |name: &str, tensor: &Tensor| TensorPayload {
            name: name.to_string(),
            desc: tensor.desc.clone(),
            data: encode_bytes(&tensor.data),
        };
        let mut state = self.lock();
        let request = ExecuteRequest {
            id: state.next_id,
            level,
            operator: operator.clone(),
            inputs: input_names
                .iter()
                .zip(inputs)
                .map(|(n, t)| payload(n, t))
                .collect(),
            outputs: output_names
                .iter()
                .zip(outputs.iter())
                .map(|(n, t)| payload(n, t))
                .collect(),
        };
        state.next_id += 1;
        self.run_case(&mut state, &request, outputs)
    }
}

impl Drop for ProcessBackend {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(mut process) = state.process.take() {
            let shutdown = serde_json::to_string(&Request::Shutdown).expect("encodes");
            process.shutdown(&shutdown, self.options.shutdown_grace);
        }
    }
}

/// Spawns the process and performs the handshake.
fn start(
    command: &str,
    options: &ProcessOptions,
) -> Result<(BackendProcess, BackendInfo), ProtocolError> {
    let mut process = BackendProcess::spawn(command).map_err(|e| ProtocolError::Spawn {
        command: command.to_string(),
        message: e.to_string(),
    })?;
    let failed = |process: &mut BackendProcess, message: String| {
        process.wait_exit(Duration::from_millis(200));
        let status = describe_status(process.kill());
        ProtocolError::Handshake {
            command: command.to_string(),
            message: format!("{message} ({status})"),
            stderr_tail: process.stderr_tail(),
        }
    };
    let hello = serde_json::to_string(&Request::Hello(HelloRequest {
        protocol: PROTOCOL_VERSION,
    }))
    .expect("encodes");
    if let Err(error) = process.send_line(&hello) {
        return Err(failed(
            &mut process,
            format!("could not send hello: {error}"),
        ));
    }
    let deadline = Instant::now() + options.handshake_timeout;
    let line = match process.recv_line(deadline) {
        Ok(line) => line,
        Err(RecvFailure::Broken(why)) => {
            return Err(failed(
                &mut process,
                format!("the backend ended before answering hello: {why}"),
            ))
        }
        Err(RecvFailure::Timeout) => {
            process.kill();
            return Err(ProtocolError::HandshakeTimeout {
                command: command.to_string(),
                seconds: options.handshake_timeout.as_secs_f64(),
                stderr_tail: process.stderr_tail(),
            });
        }
    };
    match parse_reply(&line) {
        Ok(Reply::Hello(reply)) if reply.protocol == PROTOCOL_VERSION => {
            Ok((process, reply.info()))
        }
        Ok(Reply::Hello(reply)) => {
            process.kill();
            Err(ProtocolError::Version {
                offered: PROTOCOL_VERSION,
                answered: reply.protocol,
            })
        }
        Ok(Reply::Error(error)) => Err(failed(
            &mut process,
            format!(
                "the backend refused the handshake ({}): {}",
                error.kind, error.message
            ),
        )),
        Ok(other) => Err(failed(
            &mut process,
            format!("the backend answered hello with {other:?}"),
        )),
        Err(error) => Err(failed(
            &mut process,
            format!(
                "the backend answered hello with a line that is not a protocol v1 reply \
                 ({error}): {}",
                excerpt(&line)
            ),
        )),
    }
}

/// Checks a `result` reply against the request and copies its buffers, whole (bytes that
/// belong to no element included), into `outputs`.
fn copy_outputs(
    case: &str,
    request: &ExecuteRequest,
    result: &ResultReply<'_>,
    outputs: &mut [Tensor],
) -> Result<(), BackendError> {
    let expected: Vec<(&str, u64)> = request
        .outputs
        .iter()
        .map(|o| (o.name.as_str(), o.desc.total_tensor_size_in_bytes))
        .collect();
    let buffers = decode_outputs(result, &expected).map_err(|what| BackendError::Internal {
        message: format!("protocol violation in the result of {case}: {what}"),
    })?;
    for (tensor, bytes) in outputs.iter_mut().zip(buffers) {
        tensor.data = bytes;
    }
    Ok(())
}

/// The request a reply answers a second time: the last one answered, when the reply carries
/// its id.
fn second_answer<'s>(
    reply: &Reply<'_>,
    last_answered: Option<&'s (u64, String)>,
) -> Option<&'s str> {
    let (id, case) = last_answered?;
    let repeated = match reply {
        Reply::Result(result) => result.id == *id,
        Reply::Error(error) => error.id == Some(*id),
        Reply::Hello(_) => false,
    };
    repeated.then_some(case.as_str())
}

/// Before `case` is sent: whatever the running process did since its last reply is its own
/// fault, not `case`'s. A second reply to the last request is noted and dropped; anything
/// else that shows the process out of step (another line, a closed stdin or stdout, an exit)
/// is noted and the process is killed, so that `case` runs on a fresh one.
fn check_between_cases(state: &mut State, case: &str) {
    let Some(process) = state.process.as_ref() else {
        return;
    };
    let after = state
        .last_answered
        .as_ref()
        .map_or_else(|| "the handshake".to_string(), |(_, c)| c.clone());
    let mut notes = Vec::new();
    let mut problem = None;
    while let Some(frame) = process.try_frame() {
        let Frame::Line(line) = frame else {
            problem = Some(describe_frame(&frame));
            break;
        };
        match parse_reply(&line) {
            Ok(reply) if second_answer(&reply, state.last_answered.as_ref()).is_some() => {
                notes.push(format!("the backend answered {after} a second time"));
            }
            _ => {
                problem = Some(format!(
                    "it wrote {} with no request outstanding",
                    excerpt(&line)
                ));
                break;
            }
        }
    }
    let problem = problem
        .or_else(|| process.stdin_failure())
        .or_else(|| process.has_exited().then(|| "it exited".to_string()));
    for note in notes {
        state.violation(note);
    }
    if let Some(problem) = problem {
        let mut process = state.process.take().expect("a process runs");
        let status = describe_status(process.kill());
        state.violation(format!(
            "after {after}, before {case}: {problem} ({status}); the backend was restarted{}",
            stderr_section(&process)
        ));
    }
}

/// Maps an `error` reply to the harness's error.
fn map_error(error: ErrorReply) -> BackendError {
    match ErrorKind::from_name(&error.kind) {
        Some(ErrorKind::Unsupported) => BackendError::Unsupported {
            reason: error.message,
        },
        Some(ErrorKind::InvalidArgument) => BackendError::Invalid {
            rules: error.rules,
            message: error.message,
        },
        Some(ErrorKind::Internal) => BackendError::Internal {
            message: error.message,
        },
        None => BackendError::Internal {
            message: format!(
                "protocol violation: unknown error kind `{}`: {}",
                error.kind, error.message
            ),
        },
    }
}

/// Takes the process down after it died or broke the protocol; the next case restarts it.
fn crash(state: &mut State, what: String) -> BackendError {
    let what = if interrupt::requested() {
        format!("opconform is stopping (SIGINT or SIGTERM) and killed the backend: {what}")
    } else {
        what
    };
    let Some(mut process) = state.process.take() else {
        return BackendError::Crash { message: what };
    };
    process.wait_exit(Duration::from_millis(500));
    let status = describe_status(process.kill());
    BackendError::Crash {
        message: format!("{what} ({status}){}", stderr_section(&process)),
    }
}

/// Kills a process that did not answer in time; the next case restarts it.
fn timeout(state: &mut State, options: &ProcessOptions, case: &str) -> BackendError {
    let seconds = options.case_timeout.as_secs_f64();
    let mut message = format!("no answer to {case} within {seconds} s; the backend was killed");
    if let Some(mut process) = state.process.take() {
        process.kill();
        message.push_str(&stderr_section(&process));
    }
    BackendError::Timeout { seconds, message }
}

/// The stderr tail as a message section, or nothing when stderr was empty.
fn stderr_section(process: &BackendProcess) -> String {
    let tail = process.stderr_tail();
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- backend stderr (last {STDERR_TAIL_BYTES} bytes) ---\n{tail}")
    }
}

/// The start of a line for messages.
fn excerpt(line: &str) -> String {
    const MAX: usize = 200;
    if line.len() <= MAX {
        return format!("`{line}`");
    }
    let mut end = MAX;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("`{}…` ({} bytes)", &line[..end], line.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::{ArgMaxDesc, AxisDirection, DataType, OperatorKind, TensorDesc};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Python shared by the test backends: reads requests, answers with `handle(request)`.
    const PRELUDE: &str = r#"
import base64, json, os, sys, time

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

def hello():
    return {"type": "hello", "protocol": 1, "name": "test", "version": "0.1",
            "device": "pid %d" % os.getpid(), "claims": ["4_1"],
            "operators": ["DML_ARGMAX"]}

def echo(request):
    """Answers with the first input's bytes in every output, padded or cut to size."""
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
            send(handle(request))
"#;

    /// A test backend script in its own temp dir, removed on drop.
    struct Script {
        dir: PathBuf,
        command: String,
    }

    impl Script {
        fn new(name: &str, body: &str) -> Script {
            static COUNTER: AtomicU32 = AtomicU32::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "opconform-protocol-{}-{n}-{name}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("backend.py");
            std::fs::write(&path, format!("{PRELUDE}\n{body}\n")).unwrap();
            let command = format!("python3 '{}'", path.display());
            Script { dir, command }
        }
    }

    impl Drop for Script {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn options(case_timeout_ms: u64) -> ProcessOptions {
        ProcessOptions {
            case_timeout: Duration::from_millis(case_timeout_ms),
            handshake_timeout: Duration::from_secs(20),
            shutdown_grace: Duration::from_millis(500),
        }
    }

    /// ArgMax over axis 0 of an INT32 {4} input into an INT32 {1} output.
    fn case() -> (OperatorDesc, Vec<Tensor>, Vec<Tensor>) {
        let input = TensorDesc::packed(DataType::Int32, &[4]);
        let output = TensorDesc::packed(DataType::Int32, &[1]);
        let operator = OperatorDesc::ArgMax(ArgMaxDesc {
            input: input.clone(),
            output: output.clone(),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        });
        let data: Vec<u8> = [5i32, 6, 7, 8]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let inputs = vec![Tensor::from_bytes(input, data).unwrap()];
        let outputs = vec![Tensor::filled(output, 0xCD).unwrap()];
        (operator, inputs, outputs)
    }

    fn run(backend: &ProcessBackend) -> Result<Vec<u8>, BackendError> {
        let (operator, inputs, mut outputs) = case();
        backend.execute(&operator, &inputs, &mut outputs, Level::dml(0x4100))?;
        Ok(outputs.remove(0).data)
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn handshake_and_round_trip() {
        assert_send_sync::<ProcessBackend>();
        let script = Script::new(
            "round-trip",
            r#"
def handle(request):
    assert request["level"] == "4_1", request["level"]
    assert request["operator"]["operator"] == "DML_ARGMAX"
    assert request["operator"]["axes"] == [0]
    assert request["inputs"][0]["name"] == "InputTensor"
    assert request["outputs"][0]["name"] == "OutputTensor"
    assert base64.b64decode(request["outputs"][0]["data"]) == b"\xcd" * 4
    return echo(request)
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        let info = backend.info();
        assert_eq!(info.name, "test");
        assert_eq!(info.version, "0.1");
        assert_eq!(info.claims, vec![Level::dml(0x4100)]);
        assert_eq!(info.operators, vec![OperatorKind::DmlArgMax]);
        assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
        assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
        assert_eq!(backend.restarts(), 0);
    }

    #[test]
    fn error_replies_map_to_backend_errors() {
        let script = Script::new(
            "errors",
            r#"
def handle(request):
    kinds = {1: ("unsupported", []), 2: ("invalid_argument", ["ARGMAX.AXES_RANGE"]),
             3: ("internal", []), 4: ("fatal", [])}
    kind, rules = kinds[request["id"]]
    return {"type": "error", "id": request["id"], "kind": kind, "message": "m" + kind,
            "rules": rules}
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        assert_eq!(
            run(&backend),
            Err(BackendError::Unsupported {
                reason: "munsupported".into()
            })
        );
        assert_eq!(
            run(&backend),
            Err(BackendError::Invalid {
                rules: vec!["ARGMAX.AXES_RANGE".into()],
                message: "minvalid_argument".into()
            })
        );
        assert_eq!(
            run(&backend),
            Err(BackendError::Internal {
                message: "minternal".into()
            })
        );
        assert!(
            matches!(run(&backend), Err(BackendError::Internal { message })
            if message.contains("unknown error kind `fatal`"))
        );
        assert_eq!(backend.restarts(), 0);
    }

    #[test]
    fn crash_is_reported_with_stderr_and_the_backend_restarts() {
        let script = Script::new(
            "crash",
            r#"
def handle(request):
    if request["id"] == 2:
        sys.stderr.write("about to fall over\n")
        sys.stderr.flush()
        os._exit(3)
    return echo(request)
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        let first_pid = backend.process_id();
        assert!(run(&backend).is_ok());
        match run(&backend) {
            Err(BackendError::Crash { message }) => {
                assert!(message.contains("about to fall over"), "{message}");
                assert!(message.contains("exit status 3"), "{message}");
                assert!(message.contains("case 2"), "{message}");
            }
            other => panic!("expected a crash, got {other:?}"),
        }
        assert_eq!(backend.process_id(), None);
        assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
        assert_eq!(backend.restarts(), 1);
        assert_ne!(backend.process_id(), first_pid);
    }

    #[test]
    fn hang_times_out_and_the_backend_restarts() {
        let script = Script::new(
            "hang",
            r#"
def handle(request):
    if request["id"] == 1:
        sys.stderr.write("sleeping\n")
        time.sleep(3600)
    return echo(request)
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(1000)).unwrap();
        let started = Instant::now();
        match run(&backend) {
            Err(BackendError::Timeout { seconds, message }) => {
                assert_eq!(seconds, 1.0);
                assert!(message.contains("sleeping"), "{message}");
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(run(&backend).unwrap(), 5i32.to_le_bytes());
        assert_eq!(backend.restarts(), 1);
    }

    #[test]
    fn a_backend_that_stops_reading_times_out() {
        let script = Script::new(
            "no-read",
            r#"
sys.stdin.readline()
send(hello())
time.sleep(3600)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(1000)).unwrap();
        // 4 MiB of input, far more than a pipe buffers: writing it must not block the case.
        let input = TensorDesc::packed(DataType::Int32, &[1 << 20]);
        let output = TensorDesc::packed(DataType::Int32, &[1]);
        let operator = OperatorDesc::ArgMax(ArgMaxDesc {
            input: input.clone(),
            output: output.clone(),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        });
        let inputs = vec![Tensor::filled(input, 0).unwrap()];
        let mut outputs = vec![Tensor::filled(output, 0).unwrap()];
        let started = Instant::now();
        let result = backend.execute(&operator, &inputs, &mut outputs, Level::dml(0x4100));
        assert!(
            matches!(result, Err(BackendError::Timeout { .. })),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn garbage_on_stdout_is_a_crash() {
        let script = Script::new(
            "garbage",
            r#"
def handle(request):
    if request["id"] == 1:
        print("Loading model... done")
        sys.stdout.flush()
        time.sleep(3600)
    return echo(request)
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        match run(&backend) {
            Err(BackendError::Crash { message }) => {
                assert!(message.contains("Loading model... done"), "{message}");
                assert!(message.contains("not a protocol v1 reply"), "{message}");
            }
            other => panic!("expected a crash, got {other:?}"),
        }
        assert!(run(&backend).is_ok());
        assert_eq!(backend.restarts(), 1);
    }

    #[test]
    fn wrong_byte_length_and_names_are_rejected() {
        let script = Script::new(
            "wrong-length",
            r#"
def handle(request):
    reply = echo(request)
    if request["id"] == 1:
        reply["outputs"][0]["data"] = base64.b64encode(b"\x00" * 3).decode()
    elif request["id"] == 2:
        reply["outputs"][0]["name"] = "Output"
    elif request["id"] == 3:
        reply["outputs"].append(reply["outputs"][0])
    elif request["id"] == 4:
        reply["outputs"][0]["data"] = "!!!"
    return reply
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        let expect = |needle: &str| match run(&backend) {
            Err(BackendError::Internal { message }) => {
                assert!(message.contains(needle), "{message}")
            }
            other => panic!("expected a protocol violation, got {other:?}"),
        };
        expect("holds 3 bytes; its total_tensor_size_in_bytes is 4");
        expect("output `Output` returned where `OutputTensor` was expected");
        expect("2 outputs returned, 1 expected");
        expect("not valid base64");
        assert!(run(&backend).is_ok());
        assert_eq!(backend.restarts(), 0);
    }

    #[test]
    fn mismatched_id_is_a_crash() {
        let script = Script::new(
            "wrong-id",
            r#"
def handle(request):
    reply = echo(request)
    reply["id"] = request["id"] + 100
    return reply
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        assert!(matches!(run(&backend), Err(BackendError::Crash { message })
            if message.contains("answered request 101 to case 1")));
    }

    #[test]
    fn handshake_failures_are_protocol_errors() {
        let version = Script::new(
            "version",
            r#"
for line in sys.stdin:
    send({"type": "hello", "protocol": 2, "name": "n", "version": "v", "device": "d"})
"#,
        );
        assert!(matches!(
            ProcessBackend::spawn(&version.command, options(5000)),
            Err(ProtocolError::Version {
                offered: 1,
                answered: 2
            })
        ));

        let missing = ProcessBackend::spawn("exec /nonexistent/backend --flag", options(5000));
        match missing {
            Err(ProtocolError::Handshake { stderr_tail, .. }) => {
                assert!(
                    stderr_tail.contains("/nonexistent/backend"),
                    "{stderr_tail}"
                )
            }
            other => panic!("expected a handshake error, got {:?}", other.err()),
        }

        let silent = Script::new("silent", "time.sleep(3600)");
        let mut opts = options(5000);
        opts.handshake_timeout = Duration::from_millis(500);
        assert!(matches!(
            ProcessBackend::spawn(&silent.command, opts),
            Err(ProtocolError::HandshakeTimeout { seconds, .. }) if seconds == 0.5
        ));
    }

    #[test]
    fn failed_restart_is_sticky() {
        let script = Script::new(
            "no-restart",
            r#"
marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "started")
if os.path.exists(marker):
    sys.exit(5)
open(marker, "w").close()
def handle(request):
    os._exit(1)
serve(handle)
"#,
        );
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        assert!(matches!(run(&backend), Err(BackendError::Crash { .. })));
        assert!(matches!(run(&backend), Err(BackendError::Crash { message })
            if message.contains("could not be restarted: ")));
        assert!(matches!(run(&backend), Err(BackendError::Crash { message })
            if message.contains("could not be restarted earlier")));
    }

    /// A Python with numpy for `tools/broken_backend.py`: the repository's `.venv`, or
    /// `python3` if it has numpy; `None` when neither does.
    fn python_with_numpy() -> Option<String> {
        let root = env!("CARGO_MANIFEST_DIR");
        let venv = format!("{root}/.venv/bin/python");
        [venv, "python3".to_string()].into_iter().find(|python| {
            std::process::Command::new(python)
                .args(["-c", "import numpy"])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    }

    #[test]
    fn broken_backend_runs_the_one_hot_example_and_restarts_after_its_crash() {
        let Some(python) = python_with_numpy() else {
            // Under CI the broken backend must really run; elsewhere a missing numpy is a note.
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1"),
                "CI=true but no Python with numpy (.venv/bin/python or python3): run \
                 `python3 -m venv .venv && .venv/bin/pip install -r tools/requirements-adapters.txt`"
            );
            eprintln!("skipped: no Python with numpy (.venv/bin/python or python3)");
            return;
        };
        let script = format!("{}/tools/broken_backend.py", env!("CARGO_MANIFEST_DIR"));
        let backend = ProcessBackend::spawn(
            &format!("'{python}' '{script}' --break crash"),
            options(10_000),
        )
        .unwrap();
        assert!(backend.info().operators.contains(&OperatorKind::DmlOneHot));
        // DML_ONE_HOT example 1 (004_2f0448eeeaeae8b3.txt).
        let indices = TensorDesc::packed(DataType::Uint32, &[1, 1, 3, 1]);
        let values = TensorDesc::packed(DataType::Float32, &[1, 1, 1, 2]);
        let output = TensorDesc::packed(DataType::Float32, &[1, 1, 3, 4]);
        let operator = OperatorDesc::OneHot(opconform_backend::OneHotDesc {
            indices: indices.clone(),
            values: values.clone(),
            output: output.clone(),
            axis: 3,
        });
        let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let inputs = vec![
            Tensor::from_bytes(indices, le(&[0, 3, 2])).unwrap(),
            Tensor::from_bytes(values, le(&[0f32.to_bits(), 1f32.to_bits()])).unwrap(),
        ];
        let expected: Vec<u32> = [1., 0., 0., 0., 0., 0., 0., 1., 0., 0., 1., 0.]
            .iter()
            .map(|v: &f32| v.to_bits())
            .collect();
        let run = || {
            let mut outputs = vec![Tensor::filled(output.clone(), 0xCD).unwrap()];
            backend
                .execute(&operator, &inputs, &mut outputs, Level::dml(0x4100))
                .map(|()| outputs.remove(0).data)
        };
        assert_eq!(run().unwrap(), le(&expected));
        assert_eq!(run().unwrap(), le(&expected));
        match run() {
            Err(BackendError::Crash { message }) => {
                assert!(message.contains("crashing on purpose"), "{message}")
            }
            other => panic!("expected the planted crash, got {other:?}"),
        }
        assert_eq!(run().unwrap(), le(&expected));
        assert_eq!(backend.restarts(), 1);
    }

    #[test]
    fn drop_shuts_the_process_down() {
        let script = Script::new("drop", "serve(echo)");
        let backend = ProcessBackend::spawn(&script.command, options(5000)).unwrap();
        let pid = backend.process_id().unwrap();
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        drop(backend);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}
