//! `opconform coverage [--cases DIR...] [--verbose]`: every spec rule and support-table cell
//! with the cases that cover it (see [`crate::coverage`]); exits 1 if anything is uncovered.

use super::{EXIT_FAILURES, EXIT_OK, EXIT_USAGE};
use crate::case::load_paths;
use crate::coverage::Coverage;
use clap::Args;
use opconform_backend::spec::RuleKind;
use std::path::PathBuf;

/// How many covering cases a line names unless `--verbose`.
const NAMED_CASES: usize = 3;

/// Arguments of `opconform coverage`.
#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// Case files or folders (default: cases/).
    #[arg(long, num_args = 1..)]
    pub cases: Vec<PathBuf>,
    /// Name every covering case, not just the first few.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Runs `opconform coverage`.
pub fn coverage(args: &CoverageArgs) -> u8 {
    let paths = if args.cases.is_empty() {
        vec![PathBuf::from("cases")]
    } else {
        args.cases.clone()
    };
    let loaded = load_paths(&paths);
    for error in &loaded.errors {
        eprintln!("error: {error}");
    }
    if !loaded.errors.is_empty() || loaded.cases.is_empty() {
        eprintln!("error: cases did not load; coverage needs every case");
        return EXIT_USAGE;
    }
    let coverage = Coverage::of(&loaded.cases);
    let cases_text = |ids: &[String]| -> String {
        if ids.is_empty() {
            return "NO CASE".to_string();
        }
        let shown = if args.verbose {
            ids.len()
        } else {
            ids.len().min(NAMED_CASES)
        };
        let mut text = format!("{} case(s): {}", ids.len(), ids[..shown].join(", "));
        if shown < ids.len() {
            text.push_str(", …");
        }
        text
    };
    let rules_covered = coverage.rules.len() - coverage.uncovered_rules().len();
    println!(
        "Rules ({rules_covered} of {} covered)",
        coverage.rules.len()
    );
    let mut spec = "";
    for rule in &coverage.rules {
        if rule.spec != spec {
            spec = &rule.spec;
            println!("  {spec}");
        }
        let kind = match (rule.kind, rule.silent) {
            (RuleKind::Descriptor, false) => "descriptor: negative",
            (RuleKind::Descriptor, true) => "silent descriptor reading: negative",
            (RuleKind::Behaviour, false) => "behaviour: exercised by",
            (RuleKind::Behaviour, true) => "silent reading: exercised by",
        };
        let informational: Vec<String> = rule.informational().into_iter().cloned().collect();
        if rule.silent {
            println!(
                "    {} ({kind}) informational {}",
                rule.id,
                cases_text(&informational)
            );
        } else {
            println!(
                "    {} ({kind}) required {}; informational {}",
                rule.id,
                cases_text(&rule.required),
                cases_text(&informational)
            );
        }
        if !rule.required.is_empty() {
            println!("      grounded by: {}", rule.grounding);
        }
    }
    let cells_covered = coverage.cells.len() - coverage.uncovered_cells().len();
    println!();
    println!("Support-table cells ({cells_covered} of {} covered by a required case at the cell's first level)", coverage.cells.len());
    let mut operator = None;
    for cell in &coverage.cells {
        if operator != Some(cell.cell.operator) {
            operator = Some(cell.cell.operator);
            println!("  {}", cell.cell.operator);
        }
        println!(
            "    {} {} {}-D from {}: {}",
            cell.cell.tensor,
            cell.cell.data_type,
            cell.cell.dimension_count,
            cell.cell.first_level,
            cases_text(&cell.cases)
        );
    }
    println!();
    println!(
        "coverage: {:.1}% ({rules_covered} of {} rules, {cells_covered} of {} cells) from {} cases",
        coverage.percentage(),
        coverage.rules.len(),
        coverage.cells.len(),
        loaded.cases.len()
    );
    let misclassified = coverage.required_on_silent_rules();
    for (rule, case) in &misclassified {
        println!("required case resting on the silent rule {rule}: {case}");
    }
    if coverage.is_complete() && misclassified.is_empty() {
        EXIT_OK
    } else {
        for rule in coverage.uncovered_rules() {
            println!("uncovered rule: {}", rule.id);
        }
        for cell in coverage.uncovered_cells() {
            println!("uncovered cell: {}", cell.cell.label());
        }
        EXIT_FAILURES
    }
}
