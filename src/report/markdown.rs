//! `summary.md`: the run, per-operator counts and compliance matrices, every failure, and the
//! cases that did not load. Text from outside (backend strings, messages, ids) goes through
//! [`super::escape`], so it cannot add structure to the document.

use super::compliance::Matrix;
use super::escape::{markdown_code, markdown_fenced, markdown_inline, markdown_paragraph};
use super::verdict::Verdict;
use super::{summary_rows, RunReport, SUMMARY_HEADER};
use crate::runner::CaseResult;
use std::fmt::Write as _;

/// Renders the Markdown summary, with the run's compliance `matrices`
/// ([`super::compliance::matrices`]).
pub fn render(report: &RunReport, matrices: &[Matrix]) -> String {
    let (meta, results) = (&report.meta, report.results.as_slice());
    let mut out = String::new();
    let b = &meta.backend;
    let _ = writeln!(out, "# opconform report: {}\n", markdown_inline(&b.name));
    if meta.interrupted {
        let _ = writeln!(
            out,
            "**INTERRUPTED**: the run was stopped before every case ran; these results cover \
             the {} case(s) that did.\n",
            results.len()
        );
    }
    let _ = writeln!(
        out,
        "- backend: {} {} on {}",
        markdown_inline(&b.name),
        markdown_inline(&b.version),
        markdown_inline(&b.device)
    );
    let claims: Vec<String> = b.claims.iter().map(ToString::to_string).collect();
    let _ = writeln!(out, "- claims: {}", claims.join(", "));
    let targets: Vec<String> = meta.targets.iter().map(ToString::to_string).collect();
    let _ = writeln!(out, "- judged at: {}", targets.join(", "));
    let _ = writeln!(
        out,
        "- cases: {} (suite sha256 {}; results sha256 {})",
        meta.case_count, meta.case_set_digest, meta.results_digest
    );
    if !report.load_errors.is_empty() {
        let _ = writeln!(
            out,
            "- load errors: {} (cases or files that did not load, listed at the end)",
            report.load_errors.len()
        );
    }
    let _ = writeln!(out, "- harness: opconform {}\n", meta.harness_version);
    let _ = writeln!(out, "## Summary\n");
    let _ = writeln!(out, "| {} |", SUMMARY_HEADER.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(SUMMARY_HEADER.len()));
    for row in summary_rows(report) {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    for matrix in matrices {
        let _ = writeln!(out, "\n## {} compliance matrix\n", matrix.operator.name());
        let _ = writeln!(
            out,
            "Rows: tensor × data type × dimension count; columns: levels. `pass`: every required \
             case using the cell at or below the level passed; `—`: not in the table in force.\n"
        );
        render_matrix(&mut out, matrix);
    }
    for (verdict, title) in [
        (Verdict::Failure, "Failures (required, failing the run)"),
        (Verdict::Baselined, "Baselined (expected failures)"),
        (Verdict::Informational, "Informational cases not passing"),
        (Verdict::NotClaimed, "Not claimed by the backend"),
    ] {
        let listed: Vec<&CaseResult> = results
            .iter()
            .filter(|r| report.verdict(&r.id) == verdict)
            .collect();
        if listed.is_empty() && verdict != Verdict::Failure {
            continue;
        }
        let _ = writeln!(out, "\n## {title}: {}\n", listed.len());
        if listed.is_empty() {
            let _ = writeln!(out, "None.");
        }
        for r in listed {
            let _ = writeln!(
                out,
                "### {} ({}, {}, {:?})\n\n{}\n",
                markdown_code(&r.id),
                r.outcome.name(),
                r.level,
                r.class,
                markdown_paragraph(&r.detail)
            );
            if let Some(reason) = report
                .record(&r.id)
                .and_then(|c| c.baseline_reason.as_deref())
            {
                let _ = writeln!(out, "Baseline: {}\n", markdown_inline(reason));
            }
            if let Some(diff) = &r.diff {
                let _ = writeln!(out, "{}", markdown_fenced(diff, "diff"));
            }
        }
    }
    if !report.load_errors.is_empty() {
        let _ = writeln!(out, "\n## Load errors ({})\n", report.load_errors.len());
        for row in &report.load_errors {
            let id = row
                .id
                .as_deref()
                .map_or_else(String::new, |id| format!("{} ", markdown_code(id)));
            let _ = writeln!(
                out,
                "- {id}{}: {}",
                markdown_code(&row.place()),
                markdown_inline(&row.detail)
            );
        }
    }
    out
}

fn render_matrix(out: &mut String, matrix: &Matrix) {
    let levels: Vec<String> = matrix.levels.iter().map(ToString::to_string).collect();
    let _ = writeln!(
        out,
        "| tensor | data type | dims | {} |",
        levels.join(" | ")
    );
    let _ = writeln!(out, "|---|---|---|{}", "---|".repeat(levels.len()));
    for row in &matrix.rows {
        let cells: Vec<&str> = row.cells.iter().map(|c| c.symbol()).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            row.tensor,
            row.data_type,
            row.dimension_count,
            cells.join(" | ")
        );
    }
}
