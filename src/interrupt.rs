//! SIGINT and SIGTERM: a run stops taking cases, the backend processes are killed, and what
//! was recorded is kept.
//!
//! [`install`] (called once by the `opconform` binary) starts a thread that waits for the
//! signals. On the first one it sets the flag [`requested`] reads, kills every process group
//! registered with [`register_group`] (the out-of-process backends, see
//! [`crate::protocol::ProcessBackend`]), and lets the run wind down: the runner takes no new
//! case, results already recorded are written, and the command exits non-zero. A second signal
//! kills the groups again and exits at once with status `128 + signal`.
//!
//! Unix only: elsewhere [`install`] does nothing and [`requested`] stays false.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set once SIGINT or SIGTERM has been received.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The process groups to kill on a signal: those of the running backend processes.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// True once opconform has received SIGINT or SIGTERM (after [`install`]): stop starting
/// work, keep what is recorded, exit non-zero.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Installs the SIGINT and SIGTERM handling described in the module documentation. Call it
/// once, early in `main`; later calls do nothing.
pub fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::sync::OnceLock;
        static INSTALLED: OnceLock<()> = OnceLock::new();
        if INSTALLED.get().is_some() {
            return Ok(());
        }
        let mut signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ])?;
        std::thread::Builder::new()
            .name("opconform-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    on_signal(signal);
                }
            })?;
        let _ = INSTALLED.set(());
    }
    Ok(())
}

/// What a received signal does (runs on the signal thread, not in a signal handler).
#[cfg(unix)]
fn on_signal(signal: i32) {
    let again = REQUESTED.swap(true, Ordering::SeqCst);
    let killed = kill_registered();
    if again {
        eprintln!("opconform: signal {signal} again: exiting now");
        std::process::exit(128 + signal);
    }
    eprintln!(
        "opconform: signal {signal} received: stopping ({killed} backend process group(s) \
         killed); the results recorded so far are kept. Send it again to exit at once."
    );
}

/// Registers the process group `pgid` (a backend's, led by the process opconform started) to
/// be killed on a signal. If a signal already came, the group is killed at once. The caller
/// must [`unregister_group`] it before reaping the leader, so that a reused id is never
/// killed.
pub fn register_group(pgid: i32) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    groups.insert(pgid);
    if requested() {
        kill_group(pgid);
    }
}

/// Forgets a group registered with [`register_group`].
pub fn unregister_group(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&pgid);
}

/// SIGKILL to every registered group; returns how many there were.
fn kill_registered() -> usize {
    let groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    for &pgid in groups.iter() {
        kill_group(pgid);
    }
    groups.len()
}

/// SIGKILL to the process group `pgid` (nothing for a non-positive id, which would name the
/// caller's own group or every process).
pub fn kill_group(pgid: i32) {
    #[cfg(unix)]
    {
        if pgid > 0 {
            // SAFETY: kill(2) takes plain integers and touches no memory of ours.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(pgid: i32) -> bool {
        GROUPS.lock().unwrap().contains(&pgid)
    }

    // Killing every registered group would take down the backends of tests running beside
    // this one: the signal path is tested end to end in tests/protocol_interrupt.rs.
    #[test]
    fn groups_are_registered_until_unregistered_and_killed_by_group_id() {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        let mut child = std::process::Command::new("sleep")
            .arg("1000")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        register_group(pgid);
        assert!(registered(pgid));
        unregister_group(pgid);
        assert!(!registered(pgid));
        assert_eq!(child.try_wait().unwrap(), None);
        kill_group(pgid);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert!(!requested(), "no signal was sent");
    }
}
