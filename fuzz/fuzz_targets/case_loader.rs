//! Fuzzes the case loader: any text must give cases and located errors, never a panic, an
//! abort or an allocation past the caps (libFuzzer's `-rss_limit_mb` catches the last).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (cases, errors) = opconform::case::load::load_text(
        Path::new("cases"),
        Path::new("cases/fuzz/dml_argmax.yaml"),
        text,
    );
    for error in &errors {
        // A text that was read always gives a position inside it.
        assert!(error.line >= 1 && error.column >= 1, "{error}");
    }
    for case in &cases {
        assert!(!case.id.is_empty());
    }
});
