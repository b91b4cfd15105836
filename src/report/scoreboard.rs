//! `opconform report scoreboard DIR... --out DIR`: several backends' report folders side by
//! side on one self-contained page (`index.html` in the output folder; inline CSS and script,
//! a Content-Security-Policy that forbids every request), like the ONNX backend scoreboard:
//! per operator and level, the required cases each backend passes; each backend's verdict
//! (from its `certificate.json`, or recomputed from its results by the same rule); the
//! informational cases apart; links to each backend's own `index.html` by relative path.
//! Folders that ran different case sets are refused unless `allow_mixed`. Nothing on the
//! page depends on time or absolute paths, so a committed scoreboard stays byte for byte.

use super::html::{certificate_of, escape};
use super::{operators_in, read_reports, RunReport};
use crate::case::CaseClass;
use crate::certify::Certificate;
use crate::runner::{CaseResult, Outcome};
use opconform_backend::{Level, OperatorKind};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

const STYLE: &str = include_str!("html/scoreboard.css");
const SCRIPT: &str = include_str!("html/scoreboard.js");

/// One backend's column: its report and certificate, and where its pages are.
#[derive(Debug, Clone)]
pub struct Column {
    /// The report folder as given.
    pub dir: PathBuf,
    /// The folder relative to the scoreboard's folder, `/`-separated (`cpu`, `../x/cpu`).
    pub link: String,
    /// Its run.
    pub report: RunReport,
    /// Its certificate: `certificate.json` when the folder has one, else recomputed.
    pub certificate: Certificate,
    /// True when the certificate came from `certificate.json`.
    pub certificate_file: bool,
}

/// Reads every folder of `dirs` as a column of a scoreboard written into `out`. Refuses
/// folders of different case sets unless `allow_mixed`.
pub fn columns(dirs: &[PathBuf], out: &Path, allow_mixed: bool) -> Result<Vec<Column>, String> {
    if dirs.is_empty() {
        return Err("no report folder given".into());
    }
    let mut columns = Vec::new();
    for dir in dirs {
        let report = read_reports(dir)?;
        let cert_path = dir.join("certificate.json");
        let (certificate, certificate_file) = if cert_path.is_file() {
            let text = std::fs::read_to_string(&cert_path)
                .map_err(|e| format!("{}: {e}", cert_path.display()))?;
            let certificate: Certificate =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", cert_path.display()))?;
            (certificate, true)
        } else {
            (certificate_of(&report), false)
        };
        columns.push(Column {
            dir: dir.clone(),
            link: relative_link(out, dir)?,
            report,
            certificate,
            certificate_file,
        });
    }
    let first = &columns[0];
    if let Some(other) = columns
        .iter()
        .find(|c| c.report.meta.case_set_digest != first.report.meta.case_set_digest)
    {
        if !allow_mixed {
            return Err(format!(
                "{} and {} ran different case sets (suite sha256 {} and {}): their pass counts \
                 do not compare case for case. Run them on the same cases (the same `--cases` \
                 and filters), or pass --allow-mixed to show them side by side anyway (the page \
                 then says the suites differ)",
                first.dir.display(),
                other.dir.display(),
                first.report.meta.case_set_digest,
                other.report.meta.case_set_digest
            ));
        }
    }
    Ok(columns)
}

/// `to` relative to `from` (both folders), `/`-separated; both are resolved first.
fn relative_link(from: &Path, to: &Path) -> Result<String, String> {
    let resolve = |p: &Path| {
        std::path::absolute(p)
            .map(|p| normalise(&p))
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let (from, to) = (resolve(from)?, resolve(to)?);
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Ok(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

/// `path` without `.` and with `..` applied (lexically).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Required (or informational) results of `operator` at exactly `level`: (passed, all).
fn tally(
    results: &[CaseResult],
    operator: OperatorKind,
    class: CaseClass,
    level: Option<Level>,
) -> (usize, usize) {
    let mine = results
        .iter()
        .filter(|r| r.operator == operator && r.class == class)
        .filter(|r| level.is_none_or(|l| r.level == l));
    let (mut passed, mut all) = (0, 0);
    for r in mine {
        all += 1;
        passed += usize::from(r.outcome == Outcome::Pass);
    }
    (passed, all)
}

/// A count cell: `passed/all`, green when all pass, red when one does not, grey when none.
fn count_cell(out: &mut String, (passed, all): (usize, usize)) {
    let class = if all == 0 {
        "none"
    } else if passed == all {
        "pass"
    } else {
        "fail"
    };
    if all == 0 {
        let _ = write!(out, "<td class=\"{class}\">—</td>");
    } else {
        let _ = write!(out, "<td class=\"{class}\">{passed}/{all}</td>");
    }
}

/// The levels of `operator`'s rows: those with a required case in some column, in order.
fn levels_of(operator: OperatorKind, columns: &[Column]) -> Vec<Level> {
    let mut levels: Vec<Level> = columns
        .iter()
        .flat_map(|c| c.report.results.iter())
        .filter(|r| r.operator == operator && r.class == CaseClass::Required)
        .map(|r| r.level)
        .collect();
    levels.sort();
    levels.dedup();
    levels
}

/// Renders the scoreboard page.
pub fn render(columns: &[Column]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>opconform scoreboard</title><style>{STYLE}</style></head><body>\n\
         <h1>opconform scoreboard</h1>\n<p>Each column is one backend's report folder; each \
         cell counts the <strong>required</strong> cases of that operator and level the \
         backend passes (<code>passed/all</code>). A backend is certified at a level when \
         every required case of every operator it claims at or below that level passes; \
         informational cases (where the spec is silent) are counted apart and never \
         count.</p>\n"
    );
    let digests: Vec<&str> = columns
        .iter()
        .map(|c| c.report.meta.case_set_digest.as_str())
        .collect();
    if digests.windows(2).any(|w| w[0] != w[1]) {
        out.push_str(
            "<p class=\"warning\" id=\"mixed\">These reports ran <strong>different case \
             sets</strong> (--allow-mixed): their counts do not compare case for case.</p>\n",
        );
    } else if let Some(digest) = digests.first() {
        let _ = writeln!(
            out,
            "<p>Every report ran the same case set (suite sha256 <code>{}</code>).</p>",
            escape(digest)
        );
    }
    header_table(&mut out, columns);
    required_table(&mut out, columns);
    informational_table(&mut out, columns);
    let _ = write!(
        out,
        "<div id=\"self-check\" hidden></div>\n<script>{SCRIPT}</script>\n</body></html>\n"
    );
    out
}

fn backend_headers(out: &mut String, columns: &[Column]) {
    for c in columns {
        let b = &c.report.meta.backend;
        let _ = write!(
            out,
            "<th class=\"backend\"><a href=\"{}/index.html\">{}</a><br><small>{} · {}</small></th>",
            escape(&c.link),
            escape(&b.name),
            escape(&b.version),
            escape(&b.device)
        );
    }
}

fn header_table(out: &mut String, columns: &[Column]) {
    out.push_str("<h2 id=\"verdicts\">Verdicts</h2>\n<table class=\"board\"><thead><tr><th></th>");
    backend_headers(out, columns);
    out.push_str("</tr></thead><tbody>\n<tr><th>verdict</th>");
    for c in columns {
        let cert = &c.certificate;
        let targets: Vec<String> = cert.targets.iter().map(ToString::to_string).collect();
        let (class, text) = if cert.certified {
            ("pass", format!("certified at {}", targets.join(" and ")))
        } else {
            (
                "fail",
                format!("not certified at {}", targets.join(" and ")),
            )
        };
        let source = if c.certificate_file {
            format!(
                " (<a href=\"{}/certificate.md\">certificate</a>)",
                escape(&c.link)
            )
        } else {
            " (from its results)".to_string()
        };
        let _ = write!(out, "<td class=\"{class}\">{}{source}</td>", escape(&text));
    }
    out.push_str("</tr>\n<tr><th>cases</th>");
    for c in columns {
        let failures = c.report.failures().len();
        let baselined = c
            .report
            .results
            .iter()
            .filter(|r| c.report.verdict(&r.id) == super::verdict::Verdict::Baselined)
            .count();
        let _ = write!(
            out,
            "<td>{} run, {} failing, {} baselined{}</td>",
            c.report.results.len(),
            failures,
            baselined,
            if c.report.meta.interrupted {
                ", interrupted"
            } else {
                ""
            }
        );
    }
    out.push_str("</tr>\n</tbody></table>\n");
}

fn all_operators(columns: &[Column]) -> Vec<OperatorKind> {
    let mut ops: Vec<OperatorKind> = columns
        .iter()
        .flat_map(|c| operators_in(&c.report.results))
        .collect();
    ops.sort_by_key(|op| OperatorKind::ALL.iter().position(|o| o == op));
    ops.dedup();
    ops
}

fn required_table(out: &mut String, columns: &[Column]) {
    out.push_str(
        "<h2 id=\"required\">Required cases by operator and level</h2>\n<table class=\"board\">\
         <thead><tr><th>operator</th><th>level</th>",
    );
    backend_headers(out, columns);
    out.push_str("</tr></thead><tbody>\n");
    for op in all_operators(columns) {
        let _ = write!(
            out,
            "<tr class=\"operator\" id=\"op-{}\"><th colspan=\"2\">{}</th>",
            op.slug(),
            op.name()
        );
        for c in columns {
            let verdict = c
                .certificate
                .operators
                .iter()
                .find(|o| o.operator == op)
                .map_or_else(
                    || "not run".to_string(),
                    |o| o.verdict_text(c.certificate.interrupted),
                );
            let class = if verdict.starts_with("certified") {
                "pass"
            } else if verdict.starts_with("not certified") {
                "fail"
            } else {
                "none"
            };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", escape(&verdict));
        }
        out.push_str("</tr>\n");
        for level in levels_of(op, columns) {
            let _ = write!(out, "<tr><td></td><td>{level}</td>");
            for c in columns {
                count_cell(
                    out,
                    tally(&c.report.results, op, CaseClass::Required, Some(level)),
                );
            }
            out.push_str("</tr>\n");
        }
        let _ = write!(out, "<tr class=\"total\"><td></td><td>all levels</td>");
        for c in columns {
            count_cell(out, tally(&c.report.results, op, CaseClass::Required, None));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

fn informational_table(out: &mut String, columns: &[Column]) {
    out.push_str(
        "<h2 id=\"informational\">Informational cases (counted apart)</h2>\n<p>Where the \
         spec is silent or leaves a result undefined; they never affect a verdict.</p>\n\
         <table class=\"board\"><thead><tr><th>operator</th>",
    );
    backend_headers(out, columns);
    out.push_str("</tr></thead><tbody>\n");
    for op in all_operators(columns) {
        let _ = write!(out, "<tr><th>{}</th>", op.name());
        for c in columns {
            let (passed, all) = tally(&c.report.results, op, CaseClass::Informational, None);
            let class = if all == 0 { "none" } else { "info" };
            let _ = write!(out, "<td class=\"{class}\">{passed}/{all}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// Reads `dirs`, renders the scoreboard and writes it as `out/index.html` (atomically; the
/// folder is created if missing, once every folder has been read and accepted). Returns the
/// page's path.
pub fn write_scoreboard(
    dirs: &[PathBuf],
    out: &Path,
    allow_mixed: bool,
) -> Result<PathBuf, String> {
    let columns = columns(dirs, out, allow_mixed)?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let page = out.join("index.html");
    super::write_atomic(&page, render(&columns).as_bytes())
        .map_err(|e| format!("{}: {e}", page.display()))?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_to_the_scoreboard() {
        assert_eq!(
            relative_link(Path::new("reports"), Path::new("reports/cpu")).unwrap(),
            "cpu"
        );
        assert_eq!(
            relative_link(Path::new("out/board"), Path::new("reports/./cpu")).unwrap(),
            "../../reports/cpu"
        );
        assert_eq!(relative_link(Path::new("a"), Path::new("a")).unwrap(), ".");
    }
}
