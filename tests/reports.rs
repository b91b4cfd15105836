//! The committed CPU reports (`reports/cpu/`) are what the README's main command writes now
//! (times aside: `time_ms` in `results.jsonl` and `time` in `junit.xml` are wall times).

use opconform::case::load_paths;
use opconform::report::timing::without_times;
use opconform::report::{case_records, render_files, RunMeta, RunReport};
use opconform::runner::run_cases;
use opconform::selection::{case_set_digest, CasePick, Selection};
use opconform_backend::{Backend, Level};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[test]
fn committed_cpu_reports_are_current() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // Paths in reports are as given on the command line (`cases/…`), so load from the root.
    std::env::set_current_dir(&repo).unwrap();
    let loaded = load_paths(&[PathBuf::from("cases")]);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let selection = Selection {
        feature_level: Level::dml(0x4100),
        pick: CasePick::default(),
        shard: None,
    };
    let digest = case_set_digest(&loaded.cases);
    let cases = selection.apply(loaded.cases);
    let backend = opconform_cpu::CpuBackend::new();
    let results = run_cases(&backend, &cases, 2, &|_| {});
    let info = backend.info();
    let targets = opconform::certify::targets(&info, Some(selection.feature_level)).unwrap();
    let meta = RunMeta {
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        backend: info,
        feature_level: selection.feature_level,
        targets,
        case_set_digest: digest,
        results_digest: String::new(),
        selection: Default::default(),
        case_count: cases.len(),
        shard: None,
        interrupted: false,
    };
    let records = case_records(&cases, &BTreeMap::new());
    let report = RunReport::new(meta, results, Vec::new(), records);
    let files = render_files(&report).unwrap();
    assert_eq!(files.len(), 5);
    for (file, current) in files {
        let committed =
            std::fs::read_to_string(repo.join("reports/cpu").join(file)).unwrap_or_default();
        assert!(
            without_times(&committed) == without_times(&current),
            "reports/cpu/{file} is stale: run `cargo run --release --` and commit reports/cpu"
        );
    }
}
