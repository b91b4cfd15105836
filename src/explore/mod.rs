//! `opconform explore`: property-based conformance. Random valid descriptors within the
//! backend's claims ([`draw`]) are finished into cases by the generator (validator level,
//! oracle outputs, class from [`crate::readings`]), loaded like case files and run with
//! [`run_case`]; a required case that fails is shrunk ([`shrink`]) to a minimal case with
//! the same outcome and the same mismatching outputs, written as a format-1 case file.
//!
//! One draw in [`INVALID_EVERY`] is an invalid descriptor ([`invalid`]) that breaks exactly
//! one rule; the backend must refuse it.
//!
//! Everything is deterministic for a seed: the draws use the generator's seeded [`Rng`] and
//! never a clock, and shrinking tries candidates in a fixed order, so the same seed on the
//! same backend finds the same minimal cases. A time budget decides how many draws are made
//! and bounds the shrinking too: at the deadline a shrink stops and keeps the smallest case
//! found so far ([`ShrinkStop::Deadline`]).

pub mod draw;
pub mod invalid;
pub mod shrink;

use crate::case::load::load_text;
use crate::case::{Case, CaseClass};
use crate::generate::emit::{self, EmittedCase};
use crate::generate::values::Rng;
use crate::runner::{run_case, CaseResult, Outcome};
use draw::Recipe;
use opconform_backend::validate::{lowest_valid_level, validate};
use opconform_backend::{Backend, BackendInfo, Level, OperatorKind};
use sha2::{Digest, Sha256};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

/// The most backend runs a shrink of a timeout makes (each may take the whole case timeout).
const MAX_TIMEOUT_SHRINK_RUNS: usize = 8;

/// How many attempts one draw gets to find a descriptor valid at the level.
const DRAW_ATTEMPTS: usize = 32;

/// The most informational findings kept (they are not shrunk).
pub const MAX_INFORMATIONAL: usize = 20;

/// One draw in this many is an invalid descriptor.
pub const INVALID_EVERY: usize = 5;

/// Why a shrink stopped before no smaller candidate failed the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShrinkStop {
    /// The time budget ran out: the case is the smallest found so far.
    Deadline,
    /// The shrink made its most backend runs.
    RunLimit,
    /// SIGINT or SIGTERM.
    Interrupted,
}

impl ShrinkStop {
    /// A few words for the summary.
    pub fn describe(self) -> &'static str {
        match self {
            ShrinkStop::Deadline => {
                "shrinking stopped at the time budget; the smallest case found so far"
            }
            ShrinkStop::RunLimit => {
                "shrinking stopped at its run limit; the smallest case found so far"
            }
            ShrinkStop::Interrupted => "shrinking interrupted; the smallest case found so far",
        }
    }
}

/// How long `explore` goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// This many draws.
    Cases(u64),
    /// Draws until this much time has passed (checked between draws), shrinking included:
    /// a shrink stops at the deadline.
    Time(Duration),
}

/// What `explore` draws and how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The seed of the draws.
    pub seed: u64,
    /// How many draws, or for how long.
    pub budget: Budget,
    /// The DirectML level descriptors must be valid at (the backend's claim or
    /// `--feature-level`); OneHot-1 cases are at opset1, its only version.
    pub level: Level,
    /// The operators drawn, in turn.
    pub operators: Vec<OperatorKind>,
    /// The most backend runs one shrink may make.
    pub max_shrink_runs: usize,
}

/// A failing case found by `explore`.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The draw (0-based) that first showed it.
    pub draw: u64,
    /// The case's operator.
    pub operator: OperatorKind,
    /// The outcome of the minimal case.
    pub outcome: Outcome,
    /// Required or informational.
    pub class: CaseClass,
    /// The runner's one line on the minimal case.
    pub detail: String,
    /// Logical elements of the minimal case's tensors (inputs and outputs).
    pub elements: usize,
    /// The minimal case's id (also its file stem).
    pub id: String,
    /// The case file text (format 1).
    pub text: String,
    /// For an invalid-descriptor draw, the rule it breaks.
    pub rule: Option<&'static str>,
    /// Why shrinking stopped early, if it did.
    pub shrink_stop: Option<ShrinkStop>,
}

/// What an exploration found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exploration {
    /// Cases drawn and run.
    pub tried: u64,
    /// Of those, invalid descriptors (negative cases).
    pub invalid_tried: u64,
    /// Backend runs made while shrinking.
    pub shrink_runs: u64,
    /// Draws for which no descriptor valid at the level was found.
    pub no_valid_draw: u64,
    /// Distinct minimal failing required cases (by case text), in the order found.
    pub findings: Vec<Finding>,
    /// Distinct failing informational cases (not shrunk; the spec is silent on them).
    pub informational: Vec<Finding>,
}

/// A recipe made into a loaded case.
struct Prepared {
    case: Case,
    spec: crate::case::format::CaseSpec,
}

/// The level an operator's cases are drawn at: `options.level`, or opset1 for OneHot-1.
pub fn level_for(operator: OperatorKind, options: &Options) -> Level {
    if operator == OperatorKind::OvOneHot1 {
        Level::Opset(1)
    } else {
        options.level
    }
}

/// Runs an exploration on `backend`; `progress` is called after each draw and each shrink
/// step.
pub fn explore(
    backend: &dyn Backend,
    options: &Options,
    progress: &mut dyn FnMut(&Exploration),
) -> Exploration {
    let info = backend.info();
    let mut rng = Rng::new(options.seed);
    let mut result = Exploration::default();
    let deadline = match options.budget {
        Budget::Time(limit) => Some(Instant::now() + limit),
        Budget::Cases(_) => None,
    };
    let operators: Vec<OperatorKind> = options
        .operators
        .iter()
        .copied()
        .filter(|&op| {
            draw::OPERATORS.contains(&op)
                && info.operators.contains(&op)
                && info.claims_case(op, level_for(op, options))
        })
        .collect();
    if operators.is_empty() {
        return result;
    }
    let mut index = 0u64;
    loop {
        let done = match options.budget {
            Budget::Cases(n) => index >= n,
            Budget::Time(_) => deadline.is_some_and(|d| Instant::now() >= d),
        };
        if done || crate::interrupt::requested() {
            break;
        }
        let operator = operators[(index % operators.len() as u64) as usize];
        let level = level_for(operator, options);
        let negative = rng.below(INVALID_EVERY) == 0;
        let found = (0..DRAW_ATTEMPTS).find_map(|_| {
            let recipe = if negative {
                invalid::draw_invalid(&mut rng, operator, level)?
            } else {
                draw::draw(&mut rng, operator, level)?
            };
            let prepared = prepare(&recipe, options)?;
            Some((recipe, prepared))
        });
        match found {
            None => result.no_valid_draw += 1,
            Some((recipe, prepared)) => {
                result.tried += 1;
                if recipe.invalid.is_some() {
                    result.invalid_tried += 1;
                }
                let outcome = run_case(backend, &info, &prepared.case);
                if outcome.outcome.is_failure() {
                    let found = Found {
                        index,
                        recipe,
                        prepared,
                        outcome,
                    };
                    record(
                        backend,
                        &info,
                        options,
                        deadline,
                        found,
                        &mut result,
                        progress,
                    );
                }
            }
        }
        index += 1;
        progress(&result);
    }
    result
}

/// A failing draw.
struct Found {
    index: u64,
    recipe: Recipe,
    prepared: Prepared,
    outcome: CaseResult,
}

/// Shrinks (required cases) and records a failure unless an equal minimal case is known.
fn record(
    backend: &dyn Backend,
    info: &BackendInfo,
    options: &Options,
    deadline: Option<Instant>,
    found: Found,
    result: &mut Exploration,
    progress: &mut dyn FnMut(&Exploration),
) {
    let Found {
        index,
        recipe,
        prepared,
        outcome,
    } = found;
    if outcome.class == CaseClass::Informational {
        if result.informational.len() < MAX_INFORMATIONAL {
            let finding = finding(options, index, &recipe, &prepared, &outcome, None);
            if !result.informational.iter().any(|f| f.id == finding.id) {
                result.informational.push(finding);
            }
        }
        return;
    }
    let wanted = signature(&outcome);
    let shrunk = shrink(
        backend,
        info,
        options,
        deadline,
        Found {
            index,
            recipe,
            prepared,
            outcome,
        },
        &wanted,
        result,
        progress,
    );
    let finding = finding(
        options,
        index,
        &shrunk.best.recipe,
        &shrunk.best.prepared,
        &shrunk.best.outcome,
        shrunk.stop,
    );
    if !result.findings.iter().any(|f| f.id == finding.id) {
        result.findings.push(finding);
    }
}

/// What makes two failures the same: the outcome, the class and the outputs that differ.
fn signature(result: &CaseResult) -> (Outcome, CaseClass, Vec<String>) {
    let tensors = result
        .diff
        .as_deref()
        .map(|diff| {
            diff.lines()
                .filter(|l| !l.starts_with([' ', '-', '+', '@']) && l.ends_with(':'))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    (result.outcome, result.class, tensors)
}

/// The end of a shrink: the smallest failing case and why it stopped early, if it did.
struct Shrunk {
    best: Found,
    stop: Option<ShrinkStop>,
}

/// Greedy shrinking: takes the first smaller candidate that fails the same way, until none
/// does, `max_shrink_runs` runs are spent ([`MAX_TIMEOUT_SHRINK_RUNS`] for a timeout), the
/// deadline passes or an interrupt arrives. An invalid draw keeps its rule (it travels with
/// the recipe, and a candidate is made only when it breaks exactly that rule).
#[allow(clippy::too_many_arguments)]
fn shrink(
    backend: &dyn Backend,
    info: &BackendInfo,
    options: &Options,
    deadline: Option<Instant>,
    found: Found,
    wanted: &(Outcome, CaseClass, Vec<String>),
    result: &mut Exploration,
    progress: &mut dyn FnMut(&Exploration),
) -> Shrunk {
    let mut best = found;
    let mut runs = 0usize;
    let limit = if wanted.0 == Outcome::Timeout {
        options.max_shrink_runs.min(MAX_TIMEOUT_SHRINK_RUNS)
    } else {
        options.max_shrink_runs
    };
    let mut start = 0;
    let stop = 'outer: loop {
        let current = best.recipe.clone();
        for (place, candidate) in shrink::candidates_from(&current, start) {
            if crate::interrupt::requested() {
                break 'outer Some(ShrinkStop::Interrupted);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break 'outer Some(ShrinkStop::Deadline);
            }
            if runs >= limit {
                break 'outer Some(ShrinkStop::RunLimit);
            }
            let Some(prepared) = prepare(&candidate, options) else {
                continue;
            };
            runs += 1;
            result.shrink_runs += 1;
            let outcome = run_case(backend, info, &prepared.case);
            progress(result);
            if signature(&outcome) == *wanted {
                start = place;
                best = Found {
                    index: best.index,
                    recipe: candidate,
                    prepared,
                    outcome,
                };
                continue 'outer;
            }
        }
        break None;
    };
    Shrunk { best, stop }
}

/// The generator's label for explored cases.
fn generator_label(seed: u64) -> String {
    format!("opconform explore (seed {seed})")
}

/// Finishes a recipe into a loaded case, or `None` when its descriptor is not valid at or
/// below the level (or the generator cannot finish it). An invalid recipe is made only when
/// the validator reports exactly its rule at the level.
fn prepare(recipe: &Recipe, options: &Options) -> Option<Prepared> {
    let level = level_for(recipe.operator, options);
    let spec = catch_unwind(AssertUnwindSafe(|| {
        let draft = recipe.draft("explore", "explored");
        match &recipe.invalid {
            None => {
                let lowest = lowest_valid_level(&draft.operator_desc())?;
                level
                    .at_least(lowest)
                    .then(|| draft.finish(&generator_label(options.seed)))
            }
            Some(broken) => {
                let draft = invalid::apply(draft, broken, level)?;
                let rules: Vec<String> = validate(&draft.operator_desc(), level)
                    .into_iter()
                    .map(|v| v.rule)
                    .collect();
                rules
                    .iter()
                    .all(|r| r == broken.rule)
                    .then_some(())
                    .filter(|()| !rules.is_empty())?;
                Some(draft.finish(&generator_label(options.seed)))
            }
        }
    }))
    .ok()??;
    let text = case_text(&spec, "explored", &[]);
    let (mut cases, errors) = load_text(Path::new("."), Path::new("explore.yaml"), &text);
    if !errors.is_empty() || cases.len() != 1 {
        return None;
    }
    Some(Prepared {
        case: cases.remove(0),
        spec,
    })
}

fn case_text(spec: &crate::case::format::CaseSpec, note: &str, header: &[String]) -> String {
    emit::file_text(
        header,
        &[EmittedCase {
            note: note.to_string(),
            spec: spec.clone(),
        }],
    )
}

/// The finding for a (minimal) case: its id is `explore_<operator>_` and the start of the SHA-256 of
/// its text, so equal cases get equal ids and files.
fn finding(
    options: &Options,
    index: u64,
    recipe: &Recipe,
    prepared: &Prepared,
    outcome: &CaseResult,
    shrink_stop: Option<ShrinkStop>,
) -> Finding {
    let what = match &recipe.invalid {
        Some(broken) if outcome.outcome == Outcome::Fail => {
            format!("accepted an invalid descriptor of rule {}", broken.rule)
        }
        _ => outcome.outcome.name().to_string(),
    };
    let note = format!(
        "Found by opconform explore (seed {}, draw {index}): {what} on {} at {}.",
        options.seed, recipe.operator, prepared.spec.level
    );
    let digest = Sha256::digest(case_text(&prepared.spec, "explored", &[]).as_bytes());
    let id = format!(
        "explore_{}_{}",
        recipe.operator.slug(),
        digest[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let mut spec = prepared.spec.clone();
    spec.id.clone_from(&id);
    let header = vec![
        "A minimal case found by `opconform explore`; rerun it with `opconform run --cases \
         <this file>` and keep it as a regression case."
            .to_string(),
        format!("{what}: {}", outcome.detail),
    ];
    let mut header = header;
    if let Some(stop) = shrink_stop {
        header.push(format!("Not fully shrunk: {}.", stop.describe()));
    }
    let elements = prepared
        .case
        .operator
        .named_tensors()
        .iter()
        .map(|(_, desc)| desc.element_count() as usize)
        .sum();
    Finding {
        draw: index,
        operator: recipe.operator,
        outcome: outcome.outcome,
        class: outcome.class,
        detail: outcome.detail.clone(),
        elements,
        id,
        text: case_text(&spec, &note, &header),
        rule: recipe.invalid.as_ref().map(|i| i.rule),
        shrink_stop,
    }
}
