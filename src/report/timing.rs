//! How long each case took, measured from the progress callback of
//! [`crate::runner::run_cases`]: the callback runs on the worker thread right after its case,
//! so the time since that thread's previous callback (or since the run started) is the case's
//! wall time on its worker.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// Per-case wall times of one run.
#[derive(Debug)]
pub struct CaseTimer {
    started: Instant,
    last: Mutex<HashMap<ThreadId, Instant>>,
    times: Mutex<BTreeMap<String, u64>>,
}

impl Default for CaseTimer {
    fn default() -> CaseTimer {
        CaseTimer::new()
    }
}

impl CaseTimer {
    /// A timer whose first lap on every thread starts now.
    pub fn new() -> CaseTimer {
        CaseTimer {
            started: Instant::now(),
            last: Mutex::new(HashMap::new()),
            times: Mutex::new(BTreeMap::new()),
        }
    }

    /// Records that case `id` just finished on this thread; returns its time.
    pub fn finished(&self, id: &str) -> Duration {
        let now = Instant::now();
        let since = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            last.insert(std::thread::current().id(), now)
                .unwrap_or(self.started)
        };
        let time = now.saturating_duration_since(since);
        let millis = u64::try_from(time.as_millis()).unwrap_or(u64::MAX);
        self.times
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_string(), millis);
        time
    }

    /// Milliseconds per case id.
    pub fn into_times(self) -> BTreeMap<String, u64> {
        self.times.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// `text` (a `results.jsonl` or `junit.xml`) with every wall time (`"time_ms":N`,
/// `time="S"`) replaced by 0: two reports of the same results then compare equal.
pub fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let json = rest.find("\"time_ms\":");
        let xml = rest.find(" time=\"");
        let (at, key_len, end_char) = match (json, xml) {
            (Some(j), Some(x)) if x < j => (x, " time=\"".len(), '"'),
            (Some(j), _) => (j, "\"time_ms\":".len(), ','),
            (None, Some(x)) => (x, " time=\"".len(), '"'),
            (None, None) => break,
        };
        out.push_str(&rest[..at + key_len]);
        out.push('0');
        rest = &rest[at + key_len..];
        let end = rest.find([end_char, '}']).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_normalised_and_nothing_else() {
        assert_eq!(
            without_times(r#"{"a":1,"time_ms":12,"v":"x"} <t time="0.013" n="2">"#),
            r#"{"a":1,"time_ms":0,"v":"x"} <t time="0" n="2">"#
        );
    }

    #[test]
    fn each_case_gets_the_time_since_its_threads_previous_case() {
        let timer = CaseTimer::new();
        std::thread::sleep(Duration::from_millis(20));
        assert!(timer.finished("a") >= Duration::from_millis(20));
        let second = timer.finished("b");
        assert!(second < Duration::from_millis(20), "{second:?}");
        let times = timer.into_times();
        assert!(times["a"] >= 20);
        assert_eq!(times.len(), 2);
    }
}
