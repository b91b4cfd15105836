//! `summary.md`: the run, per-operator counts and compliance matrices, then every failure.

use super::compliance::{self, Matrix};
use super::{operators_in, summary_rows, RunMeta, SUMMARY_HEADER};
use crate::runner::CaseResult;
use std::fmt::Write as _;

/// Renders the Markdown summary.
pub fn render(meta: &RunMeta, results: &[CaseResult]) -> String {
    let mut out = String::new();
    let b = &meta.backend;
    let _ = writeln!(out, "# opconform report: {}\n", b.name);
    let _ = writeln!(out, "- backend: {} {} on {}", b.name, b.version, b.device);
    let claims: Vec<String> = b.claims.iter().map(ToString::to_string).collect();
    let _ = writeln!(out, "- claims: {}", claims.join(", "));
    let _ = writeln!(out, "- target feature level: {}", meta.feature_level);
    let _ = writeln!(
        out,
        "- cases: {} (case set sha256 {})",
        meta.case_count, meta.case_set_digest
    );
    let _ = writeln!(out, "- harness: opconform {}\n", meta.harness_version);
    let target = Some(meta.feature_level);
    let _ = writeln!(out, "## Summary\n");
    let _ = writeln!(out, "| {} |", SUMMARY_HEADER.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(SUMMARY_HEADER.len()));
    for row in summary_rows(results, target) {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    for op in operators_in(results) {
        let _ = writeln!(out, "\n## {} compliance matrix\n", op.name());
        let _ = writeln!(
            out,
            "Rows: tensor × data type × dimension count; columns: levels. `pass`: every required \
             case using the cell at or below the level passed; `—`: not in the table in force.\n"
        );
        render_matrix(&mut out, &compliance::matrix(op, results, target));
    }
    let failures: Vec<&CaseResult> = results.iter().filter(|r| r.outcome.is_failure()).collect();
    let _ = writeln!(out, "\n## Failures ({})\n", failures.len());
    if failures.is_empty() {
        let _ = writeln!(out, "None.");
    }
    for r in failures {
        let _ = writeln!(
            out,
            "### `{}` ({}, {}, {:?})\n\n{}\n",
            r.id,
            r.outcome.name(),
            r.level,
            r.class,
            r.detail
        );
        if let Some(diff) = &r.diff {
            let _ = writeln!(out, "```diff\n{}```\n", diff);
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
