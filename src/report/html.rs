//! `index.html`: one self-contained page (inline CSS and script, a Content-Security-Policy
//! that forbids every request) that opens on the verdict: a banner (certified or not, per
//! operator, baseline status), a contents list, then the failures first (wrong answers apart
//! from refused or unsupported cases and from errors), each with its badges and diff, then the
//! baselined, informational and not-claimed cases, the summary table, the compliance matrices
//! (all-pass rows folded) and every result in a folded table. A small filter (operator,
//! outcome, text) works offline; the results download as CSV from a `data:` link. A script
//! checks the page on load and writes what it found into `#self-check` (used by the browser
//! test). Every text from outside is HTML-escaped.

use super::compliance::{Cell, Matrix};
use super::verdict::Verdict;
use super::{operators_in, summary_rows, RunReport, SUMMARY_HEADER};
use crate::certify::certificate::Certificate;
use crate::runner::{CaseResult, Outcome};
use base64::Engine as _;
use std::fmt::Write as _;

const STYLE: &str = include_str!("html/style.css");
const SCRIPT: &str = include_str!("html/script.js");

/// Escapes text for HTML (element content and quoted attributes).
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The anchor of a case's entry: `case-` and the id with every character other than ASCII
/// letters, digits, `-` and `_` written as `.XX` (hex), so distinct ids get distinct anchors.
pub fn anchor(id: &str) -> String {
    let mut out = String::from("case-");
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            out.push(byte as char);
        } else {
            let _ = write!(out, ".{byte:02x}");
        }
    }
    out
}

/// The certificate this report's results give (the same rule as `opconform certify`; the
/// banner needs no rule grouping, so no case files are read).
pub fn certificate_of(report: &RunReport) -> Certificate {
    let meta = &report.meta;
    Certificate::build(
        &meta.harness_version,
        &meta.backend,
        &meta.targets,
        &meta.case_set_digest,
        &report.results,
        &Default::default(),
    )
}

/// Renders the HTML report, with the run's compliance `matrices` ([`super::compliance::matrices`]).
pub fn render(report: &RunReport, matrices: &[Matrix]) -> String {
    let meta = &report.meta;
    let b = &meta.backend;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>opconform: {}</title><style>{STYLE}</style></head><body>\n",
        escape(&b.name)
    );
    banner(&mut out, report);
    contents(&mut out, report);
    filter_form(&mut out, report);
    failures(&mut out, report);
    summary(&mut out, report);
    matrices_section(&mut out, matrices);
    all_results(&mut out, report);
    load_errors(&mut out, report);
    about(&mut out, report);
    let _ = write!(
        out,
        "<div id=\"self-check\" hidden></div>\n<script>{SCRIPT}</script>\n</body></html>\n"
    );
    out
}

fn banner(out: &mut String, report: &RunReport) {
    let meta = &report.meta;
    let failing = report.failures().len();
    let baselined = report
        .results
        .iter()
        .filter(|r| report.verdict(&r.id) == Verdict::Baselined)
        .count();
    let certificate = certificate_of(report);
    let targets: Vec<String> = meta.targets.iter().map(ToString::to_string).collect();
    let (class, headline) = if meta.interrupted {
        ("bad", "INTERRUPTED: not every case ran".to_string())
    } else if failing > 0 {
        (
            "bad",
            format!("FAIL: {failing} required case(s) fail (exit status 1)"),
        )
    } else if !report.load_errors.is_empty() {
        (
            "bad",
            format!(
                "LOAD ERRORS: {} case(s) or file(s) did not load (exit status 2)",
                report.load_errors.len()
            ),
        )
    } else {
        (
            "ok",
            "PASS: no required case fails (exit status 0)".to_string(),
        )
    };
    let _ = write!(
        out,
        "<header id=\"verdict\" class=\"banner {class}\"><h1>{}</h1>\
         <p class=\"headline\">{}</p><p>{} at {}: {}.",
        escape(&meta.backend.name),
        escape(&headline),
        if certificate.certified {
            "<strong>Certified</strong>"
        } else {
            "<strong>Not certified</strong>"
        },
        escape(&targets.join(" and ")),
        if certificate.certified {
            "every required case of every claimed operator passes"
        } else {
            "some required case of a claimed operator does not pass"
        }
    );
    if baselined > 0 {
        let _ = write!(
            out,
            " Baseline: {baselined} expected failure(s), none new{}.",
            if failing > 0 {
                " except those above"
            } else {
                ""
            }
        );
    }
    out.push_str("</p><ul class=\"operators\">");
    for o in &certificate.operators {
        let level = o
            .highest_level_passed
            .map_or_else(|| "none".to_string(), |l| l.to_string());
        // A certified operator also shows its highest level (the target itself); a failing one
        // says how far it gets, so "highest" never reads against "certified".
        let (class, state) = match (o.claimed, o.certified) {
            (false, _) => ("nr", format!("not claimed; highest level passed {level}")),
            (true, true) => (
                "ok",
                format!(
                    "certified at {}; highest level passed {level}",
                    target_text(o.target)
                ),
            ),
            (true, false) => ("bad", o.verdict_text(meta.interrupted)),
        };
        let _ = write!(
            out,
            "<li class=\"{class}\"><a href=\"#matrix-{}\">{}</a>: {}</li>",
            o.operator.slug(),
            o.operator.name(),
            escape(&state)
        );
    }
    out.push_str("</ul></header>\n");
}

fn target_text(level: Option<opconform_backend::Level>) -> String {
    level.map_or_else(|| "—".to_string(), |l| l.to_string())
}

/// The failure groups, in page order: (anchor, title, which results).
type Group = (&'static str, &'static str, fn(&CaseResult, Verdict) -> bool);

const GROUPS: [Group; 6] = [
    ("wrong-answers", "Wrong answers", |r, v| {
        v == Verdict::Failure && r.outcome == Outcome::Fail
    }),
    (
        "refused",
        "Refused or unsupported within the claims",
        |r, v| {
            v == Verdict::Failure && matches!(r.outcome, Outcome::Rejected | Outcome::Unsupported)
        },
    ),
    ("errors", "Errors, crashes and timeouts", |r, v| {
        v == Verdict::Failure
            && matches!(
                r.outcome,
                Outcome::Error | Outcome::Crash | Outcome::Timeout
            )
    }),
    ("baselined", "Baselined (expected failures)", |_, v| {
        v == Verdict::Baselined
    }),
    (
        "informational",
        "Informational cases not passing",
        |_, v| v == Verdict::Informational,
    ),
    ("not-claimed", "Not claimed by the backend", |_, v| {
        v == Verdict::NotClaimed
    }),
];

fn grouped<'a>(report: &'a RunReport, group: &Group) -> Vec<&'a CaseResult> {
    report
        .results
        .iter()
        .filter(|r| (group.2)(r, report.verdict(&r.id)))
        .collect()
}

fn contents(out: &mut String, report: &RunReport) {
    out.push_str("<nav id=\"contents\"><h2>Contents</h2><ol>");
    for group in &GROUPS {
        let n = grouped(report, group).len();
        if n > 0 || group.0 == "wrong-answers" {
            let _ = write!(
                out,
                "<li><a href=\"#{}\">{} ({n})</a></li>",
                group.0, group.1
            );
        }
    }
    out.push_str("<li><a href=\"#summary\">Summary</a></li><li><a href=\"#matrices\">Compliance matrices</a><ol>");
    for op in operators_in(&report.results) {
        let _ = write!(
            out,
            "<li><a href=\"#matrix-{}\">{}</a></li>",
            op.slug(),
            op.name()
        );
    }
    let _ = write!(
        out,
        "</ol></li><li><a href=\"#results\">All results ({})</a></li>",
        report.results.len()
    );
    if !report.load_errors.is_empty() {
        let _ = write!(
            out,
            "<li><a href=\"#load-errors\">Load errors ({})</a></li>",
            report.load_errors.len()
        );
    }
    out.push_str("<li><a href=\"#about\">About this run</a></li></ol></nav>\n");
}

fn filter_form(out: &mut String, report: &RunReport) {
    out.push_str(
        "<form id=\"filter\" role=\"search\" onsubmit=\"return false\"><label>operator \
         <select id=\"filter-op\"><option value=\"\">all</option>",
    );
    for op in operators_in(&report.results) {
        let _ = write!(out, "<option>{}</option>", op.name());
    }
    out.push_str(
        "</select></label> <label>outcome <select id=\"filter-outcome\"><option value=\"\">all\
         </option>",
    );
    for outcome in Outcome::ALL {
        let _ = write!(out, "<option>{}</option>", outcome.name());
    }
    out.push_str(
        "</select></label> <label>text <input id=\"filter-text\" type=\"search\" \
         placeholder=\"id, tag or detail\"></label> <span id=\"filter-count\"></span> ",
    );
    let _ = writeln!(
        out,
        "<a id=\"csv\" download=\"results.csv\" href=\"data:text/csv;base64,{}\">results as CSV</a>\
         </form>",
        base64::engine::general_purpose::STANDARD.encode(results_csv(report))
    );
}

/// The results as CSV: id, operator, level, class, outcome, verdict, tags, detail (first
/// line). No times, so the page of a run does not depend on how fast it was.
pub fn results_csv(report: &RunReport) -> String {
    let field = |text: &str| {
        // Quoted; a leading formula character is neutralised for spreadsheets.
        let text = if text.starts_with(['=', '+', '-', '@']) {
            format!("'{text}")
        } else {
            text.to_string()
        };
        format!("\"{}\"", text.replace('"', "\"\""))
    };
    let mut csv = String::from("id,operator,level,class,outcome,verdict,tags,detail\n");
    for r in &report.results {
        let record = report.record(&r.id);
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{}",
            field(&r.id),
            field(r.operator.name()),
            field(&r.level.to_string()),
            field(class_name(r)),
            field(r.outcome.name()),
            field(report.verdict(&r.id).name()),
            field(&record.map_or_else(String::new, |c| c.tags.join(" "))),
            field(r.detail.lines().next().unwrap_or("")),
        );
    }
    csv
}

fn class_name(r: &CaseResult) -> &'static str {
    match r.class {
        crate::case::CaseClass::Required => "required",
        crate::case::CaseClass::Informational => "informational",
    }
}

/// `data-…` attributes the filter reads.
fn filter_attributes(report: &RunReport, r: &CaseResult) -> String {
    let tags = report
        .record(&r.id)
        .map_or_else(String::new, |c| c.tags.join(" "));
    format!(
        "data-op=\"{}\" data-outcome=\"{}\" data-text=\"{}\"",
        r.operator.name(),
        r.outcome.name(),
        escape(&format!("{} {} {}", r.id, tags, r.detail).to_lowercase())
    )
}

fn failures(out: &mut String, report: &RunReport) {
    for group in &GROUPS {
        let listed = grouped(report, group);
        if listed.is_empty() && group.0 != "wrong-answers" {
            continue;
        }
        let _ = writeln!(
            out,
            "<section id=\"{}\" class=\"group\"><h2>{} ({})</h2>",
            group.0,
            group.1,
            listed.len()
        );
        if listed.is_empty() {
            out.push_str("<p>None.</p>");
        }
        for r in listed {
            case_entry(out, report, r);
        }
        out.push_str("</section>\n");
    }
}

fn case_entry(out: &mut String, report: &RunReport, r: &CaseResult) {
    let verdict = report.verdict(&r.id);
    let record = report.record(&r.id);
    let _ = write!(
        out,
        "<article class=\"case\" id=\"{}\" {}><h3><code>{}</code></h3><p class=\"badges\">\
         <span class=\"badge {}\">{}</span> <span class=\"badge outcome\">{}</span> \
         <span class=\"badge level\">{}</span>",
        anchor(&r.id),
        filter_attributes(report, r),
        escape(&r.id),
        class_name(r),
        class_name(r),
        r.outcome.name(),
        r.level
    );
    if verdict == Verdict::Baselined {
        out.push_str(" <span class=\"badge baselined\">baselined</span>");
    }
    if let Some(record) = record {
        for tag in &record.tags {
            let _ = write!(out, " <span class=\"badge tag\">{}</span>", escape(tag));
        }
    }
    out.push_str("</p>");
    if !r.detail.is_empty() {
        let _ = write!(out, "<p class=\"detail\">{}</p>", escape(&r.detail));
    }
    if let Some(reason) = record.and_then(|c| c.baseline_reason.as_deref()) {
        let _ = write!(out, "<p>Baseline: {}</p>", escape(reason));
    }
    if let Some(diff) = &r.diff {
        out.push_str("<pre class=\"diff\">");
        for line in diff.lines() {
            let class = match line.chars().next() {
                Some('-') if !line.starts_with("---") => " class=\"del\"",
                Some('+') if !line.starts_with("+++") => " class=\"ins\"",
                _ => "",
            };
            let _ = writeln!(out, "<span{class}>{}</span>", escape(line));
        }
        out.push_str("</pre>");
    }
    out.push_str("</article>\n");
}

fn summary(out: &mut String, report: &RunReport) {
    out.push_str("<section id=\"summary\"><h2>Summary</h2><table><tr>");
    for cell in SUMMARY_HEADER {
        let _ = write!(out, "<th>{cell}</th>");
    }
    out.push_str("</tr>\n");
    for row in summary_rows(report) {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></section>\n");
}

fn matrices_section(out: &mut String, matrices: &[Matrix]) {
    out.push_str(
        "<section id=\"matrices\"><h2>Compliance matrices</h2><p>Rows: tensor × data type × \
         dimension count; columns: levels. <span class=\"pass\">pass</span>: the required \
         cases using the cell at or below the level pass (or their failures are blamed on \
         other cells: a cell turns <span class=\"fail\">FAIL</span> only when a failing case \
         really rests on it, i.e. few passing cases vouch for it); — not in the table in force; \
         <span class=\"nocase\">no case</span>: required, but no case uses it. Rows where \
         every cell passes are folded.</p>\n",
    );
    for matrix in matrices {
        let op = matrix.operator;
        let _ = write!(out, "<h3 id=\"matrix-{}\">{}</h3>", op.slug(), op.name());
        let (open, folded): (Vec<usize>, Vec<usize>) = (0..matrix.rows.len()).partition(|&i| {
            matrix.rows[i]
                .cells
                .iter()
                .any(|c| matches!(c, Cell::Fail | Cell::NoCase))
        });
        if open.is_empty() {
            out.push_str("<p>Every required cell passes.</p>");
        } else {
            matrix_table(out, matrix, &open);
        }
        if !folded.is_empty() {
            let _ = write!(
                out,
                "<details class=\"folded\"><summary>{} row(s) where every cell passes</summary>",
                folded.len()
            );
            matrix_table(out, matrix, &folded);
            out.push_str("</details>");
        }
    }
    out.push_str("</section>\n");
}

fn matrix_table(out: &mut String, matrix: &Matrix, rows: &[usize]) {
    out.push_str("<table class=\"matrix\"><tr><th>tensor</th><th>data type</th><th>dims</th>");
    for level in &matrix.levels {
        let _ = write!(out, "<th>{level}</th>");
    }
    out.push_str("</tr>\n");
    for &i in rows {
        let row = &matrix.rows[i];
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            row.tensor, row.data_type, row.dimension_count
        );
        for cell in &row.cells {
            let class = match cell {
                Cell::Pass => "pass",
                Cell::Fail => "fail",
                Cell::NotRequired => "nr",
                Cell::NoCase => "nocase",
            };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", cell.symbol());
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn all_results(out: &mut String, report: &RunReport) {
    let _ = writeln!(
        out,
        "<section id=\"results\"><h2>All results</h2><details id=\"all-results\"><summary>{} \
         result(s), one row each (the filter opens this)</summary><table class=\"results\">\
         <tr><th>case</th><th>operator</th><th>level</th><th>class</th><th>outcome</th>\
         <th>verdict</th></tr>",
        report.results.len()
    );
    for r in &report.results {
        let verdict = report.verdict(&r.id);
        let id = if verdict == Verdict::Pass {
            format!("<code>{}</code>", escape(&r.id))
        } else {
            format!(
                "<a href=\"#{}\"><code>{}</code></a>",
                anchor(&r.id),
                escape(&r.id)
            )
        };
        let _ = writeln!(
            out,
            "<tr class=\"row {}\" {}><td>{id}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            verdict.name(),
            filter_attributes(report, r),
            r.operator.name(),
            r.level,
            class_name(r),
            r.outcome.name(),
            verdict.name()
        );
    }
    out.push_str("</table></details></section>\n");
}

fn load_errors(out: &mut String, report: &RunReport) {
    if report.load_errors.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"load-errors\"><h2>Load errors ({})</h2><ul>",
        report.load_errors.len()
    );
    for row in &report.load_errors {
        let id = row
            .id
            .as_deref()
            .map_or_else(String::new, |id| format!("<code>{}</code> ", escape(id)));
        let _ = writeln!(
            out,
            "<li>{id}<code>{}</code>: {}</li>",
            escape(&row.place()),
            escape(&row.detail)
        );
    }
    out.push_str("</ul></section>\n");
}

fn about(out: &mut String, report: &RunReport) {
    let meta = &report.meta;
    let b = &meta.backend;
    let claims: Vec<String> = b.claims.iter().map(ToString::to_string).collect();
    let _ = writeln!(
        out,
        "<section id=\"about\"><h2>About this run</h2><ul>\
         <li>backend: {} {} on {}</li><li>claims: {}</li>\
         <li>cases: {} (suite sha256 <code>{}</code>)</li>\
         <li>results sha256 <code>{}</code></li><li>harness: opconform {}</li></ul></section>",
        escape(&b.name),
        escape(&b.version),
        escape(&b.device),
        escape(&claims.join(", ")),
        meta.case_count,
        meta.case_set_digest,
        meta.results_digest,
        escape(&meta.harness_version)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_distinct_and_safe() {
        assert_eq!(anchor("a::b"), "case-a.3a.3ab");
        assert_ne!(anchor("a.b"), anchor("a_b"));
        assert!(anchor("x\"><script>")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')));
    }
}
