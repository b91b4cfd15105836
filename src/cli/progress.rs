//! What a run shows on the terminal while it goes on: a progress bar with pass and failure
//! counts and an estimate of the time left (on a terminal only), and each failing case id as
//! it happens (on a terminal above the bar, else as a plain line), in colour when stderr is a
//! terminal that supports it and `NO_COLOR` is not set.

use super::terminal;
use crate::report::verdict::{verdict, Scope, Verdict};
use crate::runner::CaseResult;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};

/// True when stderr should get colour: a terminal, `NO_COLOR` unset or empty, `TERM` not
/// `dumb`.
pub fn colour_wanted() -> bool {
    colour_allowed(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    )
}

/// The rule of [`colour_wanted`], on given facts.
fn colour_allowed(
    terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
    term: Option<&std::ffi::OsStr>,
) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty()) && term.is_none_or(|t| t != "dumb")
}

/// The progress of one run.
pub struct Progress {
    bar: indicatif::ProgressBar,
    colour: bool,
    scope: Scope,
    passed: AtomicUsize,
    failing: AtomicUsize,
    other: AtomicUsize,
}

impl Progress {
    /// Progress over `length` cases judged in `scope`; the bar is hidden when stderr is not a
    /// terminal.
    pub fn new(length: u64, scope: Scope) -> Progress {
        let colour = colour_wanted();
        let bar = if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(length);
            let template = if colour {
                "{bar:40.cyan/blue} {pos}/{len} cases {msg} {elapsed}, about {eta} left"
            } else {
                "{bar:40} {pos}/{len} cases {msg} {elapsed}, about {eta} left"
            };
            bar.set_style(
                indicatif::ProgressStyle::with_template(template).expect("static template"),
            );
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        Progress {
            bar,
            colour,
            scope,
            passed: AtomicUsize::new(0),
            failing: AtomicUsize::new(0),
            other: AtomicUsize::new(0),
        }
    }

    /// Counts a finished case and prints it at once when it fails the run.
    pub fn case_done(&self, result: &CaseResult) {
        let verdict = verdict(result, &self.scope, false);
        let counter = match verdict {
            Verdict::Pass => &self.passed,
            Verdict::Failure => &self.failing,
            _ => &self.other,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if verdict == Verdict::Failure {
            let label = if self.colour {
                "\u{1b}[1;31mFAIL\u{1b}[0m"
            } else {
                "FAIL"
            };
            let line = format!(
                "{label} {} ({}): {}",
                terminal(&result.id),
                result.outcome.name(),
                terminal(result.detail.lines().next().unwrap_or(""))
            );
            if self.bar.is_hidden() {
                eprintln!("{line}");
            } else {
                self.bar.println(line);
            }
        }
        self.bar.set_message(self.counts_text());
        self.bar.inc(1);
    }

    /// `12 pass, 1 failing, 3 other`.
    pub fn counts_text(&self) -> String {
        format!(
            "{} pass, {} failing, {} other",
            self.passed.load(Ordering::Relaxed),
            self.failing.load(Ordering::Relaxed),
            self.other.load(Ordering::Relaxed)
        )
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::colour_allowed;
    use std::ffi::OsStr;

    #[test]
    fn no_color_and_dumb_terminals_get_no_colour() {
        assert!(colour_allowed(true, None, Some(OsStr::new("xterm"))));
        assert!(colour_allowed(true, Some(OsStr::new("")), None));
        assert!(!colour_allowed(true, Some(OsStr::new("1")), None));
        assert!(!colour_allowed(true, None, Some(OsStr::new("dumb"))));
        assert!(!colour_allowed(false, None, None));
    }
}
