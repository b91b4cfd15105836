//! The backend's child process: started with `sh -c`, stdin written and stdout read line by
//! line on threads (so a backend that stops reading cannot block the harness), stderr captured
//! into a bounded tail, killed (with its whole process group) when done.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How many bytes of stderr are kept (the tail shown in crash and timeout messages).
pub const STDERR_TAIL_BYTES: usize = 2048;

/// How long to wait for stderr to drain after the process ends, before taking its tail.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// What the stdout reader thread passes on.
enum StdoutEvent {
    /// One line, without its line ending.
    Line(String),
    /// One line that is not UTF-8 (its first bytes).
    NotUtf8(Vec<u8>),
    /// Stdout was closed (end of file) or could not be read.
    Closed(Option<String>),
}

/// Why [`BackendProcess::recv_line`] returned no line.
pub enum RecvFailure {
    /// Nothing arrived before the deadline.
    Timeout,
    /// Stdout was closed or unreadable, or carried a line that is not UTF-8.
    Broken(String),
}

/// A running backend process and the plumbing around it.
pub struct BackendProcess {
    child: Child,
    /// Lines for the stdin writer thread; `None` once stdin is to be closed.
    stdin: Option<Sender<Vec<u8>>>,
    /// Why the stdin writer thread stopped, if a write failed.
    stdin_error: Arc<Mutex<Option<String>>>,
    lines: Receiver<StdoutEvent>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_done: Receiver<()>,
    /// Set once the child has been waited for.
    status: Option<ExitStatus>,
}

impl BackendProcess {
    /// Starts `sh -c command` in its own process group, with piped stdin, stdout and stderr.
    pub fn spawn(command: &str) -> io::Result<BackendProcess> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn()?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");

        let (stdin_tx, stdin_rx) = mpsc::channel::<Vec<u8>>();
        let stdin_error = Arc::new(Mutex::new(None));
        let write_error = Arc::clone(&stdin_error);
        thread::Builder::new()
            .name("backend-stdin".into())
            .spawn(move || {
                // Ends when the sender is dropped (stdin is then closed) or a write fails.
                for bytes in stdin_rx {
                    if let Err(e) = stdin.write_all(&bytes).and_then(|()| stdin.flush()) {
                        *write_error.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(e.to_string());
                        return;
                    }
                }
            })
            .map_err(|e| abort(&mut child, e))?;

        let (line_tx, lines) = mpsc::channel();
        thread::Builder::new()
            .name("backend-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut buf = Vec::new();
                    let event = match reader.read_until(b'\n', &mut buf) {
                        Ok(0) => StdoutEvent::Closed(None),
                        Ok(_) => {
                            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                                buf.pop();
                            }
                            match String::from_utf8(buf) {
                                Ok(line) => StdoutEvent::Line(line),
                                Err(e) => {
                                    let mut bytes = e.into_bytes();
                                    bytes.truncate(64);
                                    StdoutEvent::NotUtf8(bytes)
                                }
                            }
                        }
                        Err(e) => StdoutEvent::Closed(Some(e.to_string())),
                    };
                    let last = matches!(event, StdoutEvent::Closed(_));
                    if line_tx.send(event).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(|e| abort(&mut child, e))?;

        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
        let (done_tx, stderr_done) = mpsc::channel();
        let sink = Arc::clone(&tail);
        thread::Builder::new()
            .name("backend-stderr".into())
            .spawn(move || {
                let mut stderr = stderr;
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = stderr.read(&mut chunk) {
                    let mut tail = sink.lock().unwrap_or_else(|e| e.into_inner());
                    tail.extend(&chunk[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                    tail.drain(..excess);
                }
                let _ = done_tx.send(());
            })
            .map_err(|e| abort(&mut child, e))?;

        Ok(BackendProcess {
            child,
            stdin: Some(stdin_tx),
            stdin_error,
            lines,
            stderr: tail,
            stderr_done,
            status: None,
        })
    }

    /// The operating system's id of the `sh` process.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Queues one line (a newline is appended) for the stdin writer thread. Fails when an
    /// earlier write failed (the backend closed its stdin or exited); a backend that stops
    /// reading shows up as a missing reply instead, so this never blocks.
    pub fn send_line(&mut self, line: &str) -> io::Result<()> {
        let failed = self
            .stdin_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(error) = failed {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, error));
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        match &self.stdin {
            Some(stdin) if stdin.send(bytes).is_ok() => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the backend's stdin is closed",
            )),
        }
    }

    /// The next stdout line, waiting until `deadline` at most.
    pub fn recv_line(&self, deadline: Instant) -> Result<String, RecvFailure> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(StdoutEvent::Line(line)) => Ok(line),
            Ok(StdoutEvent::NotUtf8(bytes)) => Err(RecvFailure::Broken(format!(
                "it wrote a line to stdout that is not UTF-8 (starting {})",
                String::from_utf8_lossy(&bytes)
            ))),
            Ok(StdoutEvent::Closed(None)) | Err(RecvTimeoutError::Disconnected) => Err(
                RecvFailure::Broken("its stdout was closed (end of file)".to_string()),
            ),
            Ok(StdoutEvent::Closed(Some(error))) => Err(RecvFailure::Broken(format!(
                "its stdout could not be read: {error}"
            ))),
            Err(RecvTimeoutError::Timeout) => Err(RecvFailure::Timeout),
        }
    }

    /// The last [`STDERR_TAIL_BYTES`] bytes of stderr so far, as (lossy) UTF-8.
    pub fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = tail.as_slices();
        let mut bytes = Vec::with_capacity(tail.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Waits up to `wait` for the process to exit by itself; returns its status if it did.
    pub fn exit_within(&mut self, wait: Duration) -> Option<ExitStatus> {
        if self.status.is_some() {
            return self.status;
        }
        let deadline = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.status = Some(status);
                    return self.status;
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }

    /// Kills the process group (unless the process already exited and was reaped), reaps the
    /// process, and waits briefly for stderr to drain. Returns the exit status.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            // The leader is not reaped yet, so its id still names its process group.
            kill_group(&mut self.child);
            self.status = self.child.wait().ok();
        }
        self.stdin = None;
        let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
        self.status
    }

    /// Sends `line` (the shutdown message), closes stdin, gives the process `grace` to exit,
    /// then kills whatever is left.
    pub fn shutdown(&mut self, line: &str, grace: Duration) {
        if self.status.is_none() {
            let _ = self.send_line(line);
            self.stdin = None;
            self.exit_within(grace);
        }
        self.kill();
    }
}

impl Drop for BackendProcess {
    fn drop(&mut self) {
        if self.status.is_none() {
            kill_group(&mut self.child);
            self.status = self.child.wait().ok();
        }
    }
}

/// Kills and reaps a child whose plumbing could not be set up, passing the error on.
fn abort(child: &mut Child, error: io::Error) -> io::Error {
    kill_group(child);
    let _ = child.wait();
    error
}

/// SIGKILL to the child's process group (the child leads it), so that processes `sh` started
/// die too; falls back to killing the child alone.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        extern "C" {
            fn kill(pid: i32, sig: i32) -> i32;
        }
        const SIGKILL: i32 = 9;
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) takes plain integers and touches no memory of ours. The group id
            // is the child's pid, which cannot be reused while the child is unreaped.
            if unsafe { kill(-pid, SIGKILL) } == 0 {
                return;
            }
        }
    }
    let _ = child.kill();
}

/// Describes an exit status for messages, e.g. `exit status: 3` or `killed by signal 9`.
pub fn describe_status(status: Option<ExitStatus>) -> String {
    match status {
        None => "exit status unknown".to_string(),
        Some(status) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                if let Some(signal) = status.signal() {
                    return format!("killed by signal {signal}");
                }
            }
            match status.code() {
                Some(code) => format!("exit status {code}"),
                None => status.to_string(),
            }
        }
    }
}
