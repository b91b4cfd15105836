//! The HTML report in a real browser: headless Chromium opens generated pages (a clean CPU
//! run and a report with failures), the page's own script checks the banner, the filter, the
//! CSV link and that every in-page link has its anchor, and writes the outcome into
//! `#self-check`, which `--dump-dom` returns; screenshots are saved in
//! `target/browser-screenshots/`. The page may make no request (a Content-Security-Policy of
//! `default-src 'none'`, checked here, plus no `src` or `link href` in the DOM).
//!
//! Without Chromium (`chromium`, `chromium-browser`, `google-chrome` on PATH, or
//! `OPCONFORM_CHROMIUM`) the test prints why and passes, except under `CI=true`, where a
//! missing browser is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("OPCONFORM_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let paths = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&paths).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

fn opconform(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("opconform runs")
}

/// Runs headless Chromium on `page` with a fresh profile and no network; `mode` is
/// `--dump-dom` or `--screenshot=FILE`.
fn browse(browser: &Path, profile: &Path, page: &Path, mode: &str) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1280,1400",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(mode)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    assert!(
        out.status.success(),
        "chromium {mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `#self-check` element of a dumped DOM: (data-ok, data-height, text).
fn self_check(dom: &str) -> (String, usize, String) {
    let start = dom
        .find("<div id=\"self-check\"")
        .expect("#self-check in the DOM");
    let element = &dom[start..];
    let attribute = |name: &str| {
        let key = format!("{name}=\"");
        let at = element.find(&key).map(|i| i + key.len());
        at.map(|i| element[i..i + element[i..].find('"').unwrap()].to_string())
            .unwrap_or_default()
    };
    let text_start = element.find('>').unwrap() + 1;
    let text =
        element[text_start..text_start + element[text_start..].find("</div>").unwrap()].to_string();
    (
        attribute("data-ok"),
        attribute("data-height").parse().unwrap_or(0),
        text,
    )
}

#[test]
fn report_pages_work_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no Chromium found: install Debian's `chromium` (apt-get install chromium)"
        );
        eprintln!(
            "SKIPPED report_pages_work_in_headless_chromium: no Chromium on PATH (install \
             Debian's `chromium`, or set OPCONFORM_CHROMIUM)"
        );
        return;
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = std::env::temp_dir().join(format!("opconform-browser-{}", std::process::id()));
    std::fs::remove_dir_all(&root).ok();
    std::fs::create_dir_all(&root).unwrap();
    let shots = repo.join("target/browser-screenshots");
    std::fs::create_dir_all(&shots).unwrap();

    // A clean run, and the committed ONNX Runtime results (with failures) rendered anew.
    let clean = root.join("clean");
    let out = opconform(&[
        "run",
        "--cases",
        "cases/documented",
        "--report-dir",
        clean.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A run with failures: two cases whose expected outputs are deliberately wrong.
    let wrong_cases = root.join("wrong-cases");
    std::fs::create_dir_all(&wrong_cases).unwrap();
    std::fs::write(wrong_cases.join("wrong.yaml"), WRONG_CASES).unwrap();
    let failing = root.join("failing");
    let out = opconform(&[
        "run",
        "--cases",
        wrong_cases.to_str().unwrap(),
        "--cases",
        "cases/documented",
        "--report-dir",
        failing.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, dir, headline) in [("clean", &clean, "PASS"), ("failing", &failing, "FAIL")] {
        let page = dir.join("index.html");
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(
            html.contains("content=\"default-src 'none';"),
            "{name}: the page must forbid every request"
        );
        let profile = root.join(format!("profile-{name}"));
        let dom = browse(&browser, &profile, &page, "--dump-dom");
        let (ok, height, text) = self_check(&dom);
        assert_eq!(ok, "true", "{name}: the page's self-check failed:\n{text}");
        assert!(
            text.contains(&format!("ok banner: {headline}")),
            "{name}: banner:\n{text}"
        );
        assert!(text.contains("ok filter: all "), "{name}:\n{text}");
        assert!(text.contains(" 0 broken"), "{name}:\n{text}");
        eprintln!("{name}: page height {height} px at 1280 px wide; {text}");
        let shot = shots.join(format!("{name}.png"));
        std::fs::remove_file(&shot).ok();
        browse(
            &browser,
            &profile,
            &page,
            &format!("--screenshot={}", shot.display()),
        );
        let png = std::fs::read(&shot).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
    }
    // Every failure of the failing report has an entry the results table links to.
    let html = std::fs::read_to_string(failing.join("index.html")).unwrap();
    for id in [
        "dml_one_hot::wrong::example_1_wrong",
        "ov_one_hot_1::wrong::scalar_wrong",
    ] {
        let anchor = opconform::report::html_anchor(id);
        assert!(
            html.contains(&format!("<article class=\"case\" id=\"{anchor}\"")),
            "{id}"
        );
        assert!(html.contains(&format!("href=\"#{anchor}\"")), "{id}");
    }
    std::fs::remove_dir_all(&root).ok();
}

/// Two cases whose expected outputs are wrong on purpose, so that a correct backend fails them.
const WRONG_CASES: &str = r#"format: 1
cases:
  - id: example_1_wrong
    operator: DML_ONE_HOT
    level: "2_0"
    exercises: [ONE_HOT.SEQUENCE]
    source: {hand_written: "a deliberately wrong expectation for the browser test"}
    attributes: {Axis: 3}
    inputs:
      IndicesTensor: {type: UINT32, sizes: [1, 1, 1, 1], data: [0]}
      ValuesTensor: {type: FLOAT32, sizes: [1, 1, 1, 2], data: [0, 1]}
    outputs:
      OutputTensor: {type: FLOAT32, sizes: [1, 1, 1, 2], data: [0, 1]}
  - id: scalar_wrong
    operator: OneHot-1
    level: opset1
    exercises: [ONEHOT1.SELECTION]
    source: {hand_written: "a deliberately wrong expectation for the browser test"}
    attributes: {axis: -1}
    inputs:
      indices: {type: INT64, sizes: [], data: [1]}
      depth: {type: INT64, sizes: [], data: [2]}
      on_value: {type: FLOAT32, sizes: [], data: [1]}
      off_value: {type: FLOAT32, sizes: [], data: [0]}
    outputs:
      output: {type: FLOAT32, sizes: [2], data: [1, 0]}
"#;
