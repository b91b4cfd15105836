//! The backend's child process: started with `sh -c` as the leader of its own process group,
//! stdin written and stdout read on threads (so a backend that stops reading, or writes without
//! end, cannot block the harness), stdout framed into capped lines, stderr captured into a
//! bounded tail, and the whole process group killed when done.
//!
//! The leader is never reaped before its group is killed: until it is reaped its id (which is
//! the group's id) cannot be reused, so the kill can only reach the backend's own processes.
//! Unix only.

use super::framing::{Frame, LineReader, HELLO_LINE_LIMIT};
use crate::interrupt;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How many bytes of stderr are kept (the tail shown in crash and timeout messages).
pub const STDERR_TAIL_BYTES: usize = 2048;

/// How long to wait for stderr to drain after the process ends, before taking its tail.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// How often a wait for a line also checks the process and its stdin.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How long lines are still awaited after the process exited, when its stdout stays open (a
/// process it started holds it).
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// Why [`BackendProcess::recv_line`] returned no line.
pub enum RecvFailure {
    /// Nothing arrived before the deadline.
    Timeout,
    /// The process exited, stdout was closed or unreadable, writing stdin failed, or stdout
    /// carried a line that is not UTF-8 or is over the limit.
    Broken(String),
}

/// A running backend process and the plumbing around it.
pub struct BackendProcess {
    child: Child,
    /// The process group: the leader's pid.
    pgid: i32,
    /// Lines for the stdin writer thread; `None` once stdin is to be closed.
    stdin: Option<Sender<Vec<u8>>>,
    /// The pipe the writer thread writes, kept to see whether the backend closed its end.
    stdin_pipe: Option<Arc<ChildStdin>>,
    /// Why the stdin writer thread stopped, if a write failed.
    stdin_error: Arc<Mutex<Option<String>>>,
    /// Frames from the stdout reader thread (a bounded channel: a backend writing faster than
    /// opconform reads is held back by its pipe).
    frames: Receiver<Frame>,
    /// The longest stdout line accepted now, in bytes.
    line_limit: Arc<AtomicUsize>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_done: Receiver<()>,
    /// Set once the leader has been reaped.
    status: Option<ExitStatus>,
}

impl BackendProcess {
    /// Starts `sh -c command` in its own process group, with piped stdin, stdout and stderr,
    /// and registers the group to be killed on SIGINT or SIGTERM ([`interrupt`]). Stdout
    /// lines are limited to [`HELLO_LINE_LIMIT`] until [`BackendProcess::set_line_limit`].
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
        let pgid = i32::try_from(child.id()).expect("pids fit in i32");
        interrupt::register_group(pgid);
        let stdin = Arc::new(child.stdin.take().expect("stdin is piped"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");

        let (stdin_tx, stdin_rx) = mpsc::channel::<Vec<u8>>();
        let stdin_error = Arc::new(Mutex::new(None));
        let write_error = Arc::clone(&stdin_error);
        let pipe = Arc::clone(&stdin);
        thread::Builder::new()
            .name("backend-stdin".into())
            .spawn(move || {
                // Ends when the sender is dropped or a write fails; the pipe closes once the
                // process's handle is dropped too.
                let mut pipe = &*pipe;
                for bytes in stdin_rx {
                    if let Err(e) = pipe.write_all(&bytes).and_then(|()| pipe.flush()) {
                        *write_error.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(e.to_string());
                        return;
                    }
                }
            })
            .map_err(|e| abort(&mut child, pgid, e))?;

        let line_limit = Arc::new(AtomicUsize::new(HELLO_LINE_LIMIT));
        let limit = Arc::clone(&line_limit);
        let (frame_tx, frames) = mpsc::sync_channel(1);
        thread::Builder::new()
            .name("backend-stdout".into())
            .spawn(move || {
                let mut reader = LineReader::new(stdout);
                loop {
                    let frame = reader.next_frame(|| limit.load(Ordering::SeqCst));
                    let last = matches!(frame, Frame::Closed(_) | Frame::TooLong { .. });
                    if frame_tx.send(frame).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(|e| abort(&mut child, pgid, e))?;

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
            .map_err(|e| abort(&mut child, pgid, e))?;

        Ok(BackendProcess {
            child,
            pgid,
            stdin: Some(stdin_tx),
            stdin_pipe: Some(stdin),
            stdin_error,
            frames,
            line_limit,
            stderr: tail,
            stderr_done,
            status: None,
        })
    }

    /// The operating system's id of the `sh` process (also its process group's id).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sets the longest stdout line accepted from now on, in bytes; a longer line is
    /// reported as broken. The limit applies to a line already being read, too.
    pub fn set_line_limit(&self, limit: usize) {
        self.line_limit.store(limit, Ordering::SeqCst);
    }

    /// Queues one line (a newline is appended) for the stdin writer thread. Fails when an
    /// earlier write failed (the backend closed its stdin or exited); a backend that stops
    /// reading shows up as a missing reply instead, so this never blocks.
    pub fn send_line(&mut self, line: &str) -> io::Result<()> {
        if let Some(error) = self.write_error() {
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

    /// The next stdout line (never a blank one), waiting until `deadline` at most, whatever
    /// arrives: once the deadline has passed this is a timeout, even if lines keep coming.
    /// Fails early when the process exits, or when writing its stdin fails.
    pub fn recv_line(&self, deadline: Instant) -> Result<String, RecvFailure> {
        let mut exited_at: Option<Instant> = None;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(RecvFailure::Timeout);
            }
            match self
                .frames
                .recv_timeout((deadline - now).min(POLL_INTERVAL))
            {
                Ok(frame) => return frame_to_line(frame),
                Err(RecvTimeoutError::Disconnected) => return frame_to_line(Frame::Closed(None)),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Some(error) = self.write_error() {
                return Err(RecvFailure::Broken(format!(
                    "writing to its stdin failed: {error}"
                )));
            }
            if self.has_exited() {
                // Its stdout is still open: a process it started holds it. Lines it wrote
                // before exiting may still be on their way.
                let at = *exited_at.get_or_insert_with(Instant::now);
                if at.elapsed() >= EXIT_GRACE {
                    return Err(RecvFailure::Broken(
                        "the process exited (a process it started still holds its stdout)"
                            .to_string(),
                    ));
                }
            }
        }
    }

    /// A frame that has already arrived, without waiting (`None` when there is none).
    pub fn try_frame(&self) -> Option<Frame> {
        match self.frames.try_recv() {
            Ok(frame) => Some(frame),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Frame::Closed(None)),
        }
    }

    /// Why a request could not be delivered now: a write failed, or the backend closed its
    /// end of its stdin (seen without writing). `None` while stdin is usable.
    pub fn stdin_failure(&self) -> Option<String> {
        if let Some(error) = self.write_error() {
            return Some(format!("writing to its stdin failed: {error}"));
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            if let Some(pipe) = &self.stdin_pipe {
                let mut poll = libc::pollfd {
                    fd: pipe.as_raw_fd(),
                    events: 0,
                    revents: 0,
                };
                // SAFETY: one valid pollfd (the fd lives as long as `pipe`), no waiting.
                let ready = unsafe { libc::poll(&mut poll, 1, 0) };
                if ready > 0 && poll.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                    return Some("it closed its stdin".to_string());
                }
            }
        }
        None
    }

    fn write_error(&self) -> Option<String> {
        self.stdin_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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

    /// True when the leader has exited. It is left unreaped (a zombie), so that its process
    /// group can still be killed safely.
    pub fn has_exited(&self) -> bool {
        if self.status.is_some() {
            return true;
        }
        #[cfg(unix)]
        {
            // SAFETY: waitid(2) writes one siginfo_t, which we own; WNOWAIT leaves the child
            // unreaped.
            unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let rc = libc::waitid(
                    libc::P_PID,
                    self.pgid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                );
                rc != 0 || info.si_pid() != 0
            }
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// Waits up to `wait` for the leader to exit by itself; true if it did.
    pub fn wait_exit(&self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        loop {
            if self.has_exited() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills the whole process group (whether or not the leader is still running: processes
    /// it started die too), reaps the leader, and waits briefly for stderr to drain. Returns
    /// the leader's exit status.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        self.reap();
        self.stdin = None;
        self.stdin_pipe = None;
        let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
        self.status
    }

    /// Kills the group and reaps the leader, once.
    fn reap(&mut self) {
        if self.status.is_none() {
            // The leader is not reaped yet, so its id still names its process group.
            interrupt::kill_group(self.pgid);
            interrupt::unregister_group(self.pgid);
            #[cfg(not(unix))]
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// Sends `line` (the shutdown message), closes stdin, gives the process `grace` to exit,
    /// then kills its whole process group.
    pub fn shutdown(&mut self, line: &str, grace: Duration) {
        if self.status.is_none() {
            let _ = self.send_line(line);
            self.stdin = None;
            self.stdin_pipe = None;
            self.wait_exit(grace);
        }
        self.kill();
    }
}

impl Drop for BackendProcess {
    fn drop(&mut self) {
        self.reap();
    }
}

/// The line a frame carries, or why it carries none.
fn frame_to_line(frame: Frame) -> Result<String, RecvFailure> {
    match frame {
        Frame::Line(line) => Ok(line),
        other => Err(RecvFailure::Broken(describe_frame(&other))),
    }
}

/// Says what a frame that is not a line means, for messages.
pub fn describe_frame(frame: &Frame) -> String {
    match frame {
        Frame::Line(line) => format!("it wrote `{line}`"),
        Frame::NotUtf8(bytes) => format!(
            "it wrote a line to stdout that is not UTF-8 (starting `{}`)",
            printable(bytes)
        ),
        Frame::TooLong { limit, start } => format!(
            "it wrote a line longer than the {limit} bytes allowed (starting `{}`)",
            printable(start)
        ),
        Frame::Closed(None) => "its stdout was closed (end of file)".to_string(),
        Frame::Closed(Some(error)) => format!("its stdout could not be read: {error}"),
    }
}

/// Bytes for a message: lossy UTF-8, control characters escaped (`\0`, `\u{1b}`).
fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Kills and reaps a child whose plumbing could not be set up, passing the error on.
fn abort(child: &mut Child, pgid: i32, error: io::Error) -> io::Error {
    interrupt::kill_group(pgid);
    interrupt::unregister_group(pgid);
    let _ = child.kill();
    let _ = child.wait();
    error
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `seq 1 1000000` (6.9 MB of lines nobody asked for) and waits for its first line,
    /// after which the reader keeps one line queued.
    fn flood() -> BackendProcess {
        let process = BackendProcess::spawn("seq 1 1000000").unwrap();
        let start = Instant::now();
        while process.try_frame().is_none() {
            assert!(start.elapsed() < Duration::from_secs(10), "no line came");
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(100));
        process
    }

    #[test]
    fn a_passed_deadline_is_a_timeout_even_with_lines_waiting() {
        // A backend writing without end always has a line waiting: the deadline must still
        // win, or the wait never ends (`yes ''` defeated the timeout this way).
        let mut process = flood();
        assert!(matches!(
            process.recv_line(Instant::now()),
            Err(RecvFailure::Timeout)
        ));
        let line = process.recv_line(Instant::now() + Duration::from_secs(5));
        assert!(matches!(line.as_deref(), Ok("2")));
        process.kill();
    }

    #[test]
    fn a_backend_writing_ahead_is_held_back_by_its_pipe() {
        // The reader must not take every line into memory: the writer blocks on its full
        // pipe instead of finishing.
        let mut process = flood();
        assert!(
            !process.wait_exit(Duration::from_millis(500)),
            "all lines were read"
        );
        process.kill();
    }

    #[test]
    fn rejected_lines_are_shown_printable() {
        let frame = Frame::TooLong {
            limit: 10,
            start: b"{\"a\0\x1b".to_vec(),
        };
        assert_eq!(
            describe_frame(&frame),
            "it wrote a line longer than the 10 bytes allowed (starting `{\"a\\0\\u{1b}`)"
        );
        assert_eq!(
            describe_frame(&Frame::NotUtf8(vec![b'x', 0xff])),
            "it wrote a line to stdout that is not UTF-8 (starting `x\u{fffd}`)"
        );
    }
}
