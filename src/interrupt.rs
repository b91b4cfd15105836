//! Whether the user asked the run to stop (SIGINT, SIGTERM).
//!
//! Shim until the signal handler lands: nothing sets the flag here, so [`requested`] is always
//! false. The real module installs the handler and sets the flag; its signature is the same.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// True once SIGINT or SIGTERM was received: stop taking new cases and write what ran.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
