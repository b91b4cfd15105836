//! `index.html`: the same content as `summary.md`, self-contained (inline CSS, no assets);
//! every text from outside is HTML-escaped.

use super::compliance::{self, Cell};
use super::{operators_in, summary_rows, RunReport, SUMMARY_HEADER};
use crate::runner::CaseResult;
use std::fmt::Write as _;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\
.pass{background:#d4f7d4}.fail{background:#f7d4d4;font-weight:bold}.nr{color:#999}.nocase{background:#f7f0c0}\
pre{background:#f6f6f6;padding:1em;overflow:auto}.del{color:#a00}.ins{color:#070}";

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders the HTML report.
pub fn render(report: &RunReport) -> String {
    let (meta, results) = (&report.meta, report.results.as_slice());
    let mut out = String::new();
    let b = &meta.backend;
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>opconform: {}</title>\
         <style>{STYLE}</style></head><body>\n<h1>opconform report: {}</h1>\n<ul>\
         <li>backend: {} {} on {}</li><li>target feature level: {}</li>\
         <li>cases: {} (case set sha256 <code>{}</code>)</li><li>harness: opconform {}</li></ul>\n",
        escape(&b.name),
        escape(&b.name),
        escape(&b.name),
        escape(&b.version),
        escape(&b.device),
        meta.feature_level,
        meta.case_count,
        meta.case_set_digest,
        escape(&meta.harness_version)
    );
    if meta.interrupted {
        let _ = writeln!(
            out,
            "<p class=\"fail\">INTERRUPTED: the run was stopped before every case ran; these \
             results cover the {} case(s) that did.</p>",
            results.len()
        );
    }
    if !report.load_errors.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"fail\">{} load error(s): cases or files that did not load, listed at \
             the end.</p>",
            report.load_errors.len()
        );
    }
    let target = Some(meta.feature_level);
    out.push_str("<h2>Summary</h2><table><tr>");
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
    out.push_str("</table>\n");
    for op in operators_in(results) {
        let matrix = compliance::matrix(op, results, target);
        let _ = write!(out, "<h2>{} compliance matrix</h2><table><tr><th>tensor</th><th>data type</th><th>dims</th>", op.name());
        for level in &matrix.levels {
            let _ = write!(out, "<th>{level}</th>");
        }
        out.push_str("</tr>\n");
        for row in &matrix.rows {
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
    let failures: Vec<&CaseResult> = results.iter().filter(|r| r.outcome.is_failure()).collect();
    let _ = writeln!(out, "<h2>Failures ({})</h2>", failures.len());
    for r in failures {
        let _ = writeln!(
            out,
            "<h3><code>{}</code> ({}, {})</h3><p>{}</p>",
            escape(&r.id),
            r.outcome.name(),
            r.level,
            escape(&r.detail)
        );
        if let Some(diff) = &r.diff {
            out.push_str("<pre>");
            for line in diff.lines() {
                let class = match line.chars().next() {
                    Some('-') if !line.starts_with("---") => " class=\"del\"",
                    Some('+') if !line.starts_with("+++") => " class=\"ins\"",
                    _ => "",
                };
                let _ = writeln!(out, "<span{class}>{}</span>", escape(line));
            }
            out.push_str("</pre>\n");
        }
    }
    if !report.load_errors.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Load errors ({})</h2><ul>",
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
        out.push_str("</ul>\n");
    }
    out.push_str("</body></html>\n");
    out
}
