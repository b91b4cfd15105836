//! Out-of-process backends: backend protocol v1 (`docs/backend-protocol.md`).
//!
//! A backend in any language is a command that opconform starts with `sh -c` and speaks JSON
//! lines with over its stdin and stdout: a `hello` handshake, one `execute` request per case
//! answered by a `result` or an `error`, and a final `shutdown`. [`ProcessBackend`] is the
//! harness side: it implements [`opconform_backend::Backend`] over such a process, turning a
//! crash or a hang into [`opconform_backend::BackendError::Crash`] or
//! [`opconform_backend::BackendError::Timeout`] and restarting the process for the next case.
//!
//! - [`messages`]: the wire messages (serde types), reply parsing and base64 helpers;
//! - [`framing`]: stdout as capped lines (the limits on a reply line);
//! - `process`: the child process and its process group, its stdout reader and stderr
//!   capture;
//! - `backend`: [`ProcessBackend`] and [`ProcessOptions`].

mod backend;
pub mod framing;
pub mod messages;
mod process;

pub use backend::{ProcessBackend, ProcessOptions};
pub use messages::PROTOCOL_VERSION;
pub use process::STDERR_TAIL_BYTES;

use std::fmt;

/// Why a backend process could not be started and greeted.
#[derive(Debug, Clone, PartialEq)]
pub enum ProtocolError {
    /// `sh` itself could not be started.
    Spawn {
        /// The backend command.
        command: String,
        /// The operating system's error.
        message: String,
    },
    /// The backend exited, or answered something other than a protocol v1 `hello`, during the
    /// handshake.
    Handshake {
        /// The backend command.
        command: String,
        /// What went wrong, with the exit status.
        message: String,
        /// The last bytes the backend wrote to stderr.
        stderr_tail: String,
    },
    /// The backend did not answer `hello` within the handshake timeout.
    HandshakeTimeout {
        /// The backend command.
        command: String,
        /// The limit, in seconds.
        seconds: f64,
        /// The last bytes the backend wrote to stderr.
        stderr_tail: String,
    },
    /// The backend answered `hello` with a protocol version opconform does not speak.
    Version {
        /// The version opconform offered.
        offered: u32,
        /// The version the backend answered.
        answered: u32,
    },
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tail = |f: &mut fmt::Formatter<'_>, stderr: &str| {
            if stderr.trim().is_empty() {
                Ok(())
            } else {
                write!(
                    f,
                    "\n--- backend stderr (last {STDERR_TAIL_BYTES} bytes) ---\n{stderr}"
                )
            }
        };
        match self {
            ProtocolError::Spawn { command, message } => {
                write!(f, "could not start backend `{command}`: {message}")
            }
            ProtocolError::Handshake {
                command,
                message,
                stderr_tail,
            } => {
                write!(f, "handshake with backend `{command}` failed: {message}")?;
                tail(f, stderr_tail)
            }
            ProtocolError::HandshakeTimeout {
                command,
                seconds,
                stderr_tail,
            } => {
                write!(
                    f,
                    "backend `{command}` did not answer hello within {seconds} s"
                )?;
                tail(f, stderr_tail)
            }
            ProtocolError::Version { offered, answered } => write!(
                f,
                "the backend answered protocol version {answered}; opconform speaks version \
                 {offered}"
            ),
        }
    }
}

impl std::error::Error for ProtocolError {}
