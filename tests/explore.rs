//! `opconform explore` against a backend with planted bugs (it must find and shrink them) and
//! against the bundled CPU backend (it must find nothing).

use opconform::case::load::{load_text, Expectation};
use opconform::explore::{explore, Budget, Exploration, Options, ShrinkStop};
use opconform::protocol::{ProcessBackend, ProcessOptions};
use opconform::runner::{run_case, Outcome};
use opconform_backend::validate::validate;
use opconform_backend::{
    Backend, BackendError, BackendInfo, Level, OperatorDesc, OperatorKind, Tensor,
};
use opconform_cpu::CpuBackend;
use std::path::Path;
use std::time::{Duration, Instant};

/// The CPU backend with a bug planted in one operator.
struct Planted {
    cpu: CpuBackend,
    bug: Bug,
}

#[derive(Clone, Copy)]
enum Bug {
    /// ArgMax over two or more axes that are not adjacent, on an input of rank 5 or more: the
    /// first output index is one too large (a wrong flat index).
    ArgMaxRank5NonAdjacentAxes,
    /// NonZeroCoordinates drops the last non-zero row from the count when there are two or
    /// more.
    NonZeroDropsARow,
    /// NonZeroCoordinates drops every row past the 65,536th (the count stops there).
    NonZeroDropsRowsPast65536,
    /// DML_ONE_HOT writes a wrong first element when the output has more than 2^20 elements.
    OneHotWrongAbove2Pow20,
    /// Any descriptor whose only broken rule is TENSOR.TOTAL_SIZE is run (not refused).
    AcceptsShortBuffers,
    /// OneHot-1 with a negative index (undefined by the page): a wrong first element.
    OvWrongOnNegativeIndices,
    /// OneHot-1 reads INT64 indices through their low 32 bits.
    OvTruncates64BitIndices,
}

impl Backend for Planted {
    fn info(&self) -> BackendInfo {
        let mut info = self.cpu.info();
        info.name = "planted".to_string();
        info
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError> {
        if let Bug::AcceptsShortBuffers = self.bug {
            let violations = validate(operator, level);
            if !violations.is_empty() && violations.iter().all(|v| v.rule == "TENSOR.TOTAL_SIZE") {
                return Ok(());
            }
        }
        if let (Bug::OvTruncates64BitIndices, OperatorDesc::OvOneHot(desc)) = (self.bug, operator) {
            if desc.indices.data_type == opconform_backend::DataType::Int64 {
                let mut data = inputs[0].data.clone();
                for element in data.chunks_exact_mut(8) {
                    let low = i32::from_le_bytes(element[..4].try_into().unwrap());
                    element.copy_from_slice(&i64::from(low).to_le_bytes());
                }
                let mut inputs = inputs.to_vec();
                inputs[0] = Tensor::from_bytes(inputs[0].desc.clone(), data).unwrap();
                return self.cpu.execute(operator, &inputs, outputs, level);
            }
        }
        self.cpu.execute(operator, inputs, outputs, level)?;
        match (self.bug, operator) {
            (Bug::ArgMaxRank5NonAdjacentAxes, OperatorDesc::ArgMax(desc)) => {
                let mut axes = desc.axes.clone();
                axes.sort_unstable();
                let gap = axes.windows(2).any(|w| w[1] > w[0] + 1);
                if gap && desc.input.sizes.len() >= 5 {
                    outputs[0].data[0] = outputs[0].data[0].wrapping_add(1);
                }
            }
            (Bug::NonZeroDropsARow, OperatorDesc::NonZeroCoordinates(_)) => {
                let count = u32::from_le_bytes(outputs[0].data[..4].try_into().unwrap());
                if count >= 2 {
                    outputs[0].data[..4].copy_from_slice(&(count - 1).to_le_bytes());
                }
            }
            (Bug::NonZeroDropsRowsPast65536, OperatorDesc::NonZeroCoordinates(_)) => {
                let count = u32::from_le_bytes(outputs[0].data[..4].try_into().unwrap());
                if count > 65_536 {
                    outputs[0].data[..4].copy_from_slice(&65_536u32.to_le_bytes());
                }
            }
            (Bug::OneHotWrongAbove2Pow20, OperatorDesc::OneHot(desc))
                if desc.output.element_count() > 1 << 20 =>
            {
                // An exponent bit (floats) or a high bit (integers) of the first element.
                let width = desc.output.data_type.size_in_bytes();
                outputs[0].data[width - 1] ^= 0x40;
            }
            (Bug::OvWrongOnNegativeIndices, OperatorDesc::OvOneHot(desc)) => {
                let width = desc.indices.data_type.size_in_bytes();
                let negative = inputs[0]
                    .data
                    .chunks_exact(width)
                    .any(|e| e[width - 1] & 0x80 != 0);
                if negative {
                    let width = desc.output.data_type.size_in_bytes();
                    outputs[0].data[width - 1] ^= 0x40;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn options(seed: u64, cases: u64, operator: OperatorKind) -> Options {
    Options {
        seed,
        budget: Budget::Cases(cases),
        level: Level::dml(0x4100),
        operators: vec![operator],
        max_shrink_runs: 500,
    }
}

fn run(backend: &dyn Backend, options: &Options) -> Exploration {
    explore(backend, options, &mut |_| {})
}

/// The minimal case loads as a case file and still fails on `backend`, passes on the CPU;
/// returns it.
fn check_minimal_case(backend: &dyn Backend, text: &str) -> opconform::case::Case {
    let (mut cases, errors) = load_text(Path::new("."), Path::new("finding.yaml"), text);
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    assert_eq!(cases.len(), 1);
    let failing = run_case(backend, &backend.info(), &cases[0]);
    assert_eq!(failing.outcome, Outcome::Fail, "{text}");
    let cpu = CpuBackend::new();
    assert_eq!(
        run_case(&cpu, &cpu.info(), &cases[0]).outcome,
        Outcome::Pass
    );
    assert!(text.contains("source: {generator: \"opconform explore (seed "));
    cases.remove(0)
}

#[test]
fn a_planted_argmax_bug_is_found_and_shrunk() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::ArgMaxRank5NonAdjacentAxes,
    };
    let options = options(11, 100, OperatorKind::DmlArgMax);
    let result = run(&backend, &options);
    assert!(!result.findings.is_empty(), "{result:?}");
    for finding in &result.findings {
        assert_eq!(finding.outcome, Outcome::Fail);
        // The smallest failing ArgMax: five dimensions of size 1, axes [0, 2], one output.
        assert!(
            finding.elements <= 4,
            "{} elements\n{}",
            finding.elements,
            finding.text
        );
        let case = check_minimal_case(&backend, &finding.text);
        let OperatorDesc::ArgMax(desc) = &case.operator else {
            panic!("{}", finding.text)
        };
        assert_eq!(desc.input.sizes.len(), 5, "{}", finding.text);
        assert_eq!(
            desc.axes,
            [0, 2],
            "the simplest non-adjacent axes\n{}",
            finding.text
        );
    }
    // Every failing draw shrinks to the same minimal case.
    assert_eq!(result.findings.len(), 1, "{:#?}", result.findings);
    // The same seed finds the same minimal cases.
    let again = run(&backend, &options);
    assert_eq!(
        again.findings.iter().map(|f| &f.text).collect::<Vec<_>>(),
        result.findings.iter().map(|f| &f.text).collect::<Vec<_>>()
    );
}

#[test]
fn a_planted_nonzero_bug_is_found_and_shrunk() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::NonZeroDropsARow,
    };
    let result = run(
        &backend,
        &options(5, 100, OperatorKind::DmlNonZeroCoordinates),
    );
    assert!(!result.findings.is_empty(), "{result:?}");
    for finding in &result.findings {
        assert!(
            finding.elements <= 16,
            "{} elements\n{}",
            finding.elements,
            finding.text
        );
        check_minimal_case(&backend, &finding.text);
    }
}

/// Size is the cause, so every shrink step runs a case of the threshold's size: minutes in a
/// debug build, seconds in release. `cargo test --release` (and CI's explore step) runs it.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "cases past the size threshold: run with `cargo test --release --test explore`"
)]
fn nonzero_dropping_rows_past_65536_is_found_and_shrunk_near_the_threshold() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::NonZeroDropsRowsPast65536,
    };
    let started = Instant::now();
    let result = run(
        &backend,
        &options(1, 200, OperatorKind::DmlNonZeroCoordinates),
    );
    eprintln!(
        "{:?}, {} shrink runs",
        started.elapsed(),
        result.shrink_runs
    );
    assert!(!result.findings.is_empty(), "{} tried", result.tried);
    for finding in &result.findings {
        let case = check_minimal_case(&backend, &finding.text);
        let input = case.operator.inputs()[0].element_count();
        // Size is the cause: more than 65,536 non-zero elements (a few percent of the drawn
        // elements are zeros), and not many more.
        assert!(
            (65_537..=65_536 * 11 / 10).contains(&input),
            "{input} input elements"
        );
    }
}

/// Size is the cause, so every shrink step runs a case of the threshold's size: minutes in a
/// debug build, seconds in release. `cargo test --release` (and CI's explore step) runs it.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "cases past the size threshold: run with `cargo test --release --test explore`"
)]
fn one_hot_wrong_above_2_pow_20_outputs_is_found_and_shrunk_near_the_threshold() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::OneHotWrongAbove2Pow20,
    };
    let started = Instant::now();
    let result = run(&backend, &options(1, 300, OperatorKind::DmlOneHot));
    eprintln!(
        "{:?}, {} shrink runs",
        started.elapsed(),
        result.shrink_runs
    );
    assert!(!result.findings.is_empty(), "{} tried", result.tried);
    for finding in &result.findings {
        let case = check_minimal_case(&backend, &finding.text);
        let output = case.operator.outputs()[0].element_count();
        // Size is the cause: more than 2^20 output elements, and not many more.
        assert!(
            ((1 << 20) + 1..=(1 << 20) + (1 << 14)).contains(&output),
            "{output} output elements"
        );
    }
}

#[test]
fn an_accepted_invalid_descriptor_is_found_and_shrunk_keeping_its_rule() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::AcceptsShortBuffers,
    };
    let mut options = options(4, 300, OperatorKind::DmlArgMax);
    options.operators = opconform::explore::draw::OPERATORS.to_vec();
    let result = run(&backend, &options);
    assert!(
        result.invalid_tried >= 30,
        "{} invalid",
        result.invalid_tried
    );
    assert!(!result.findings.is_empty(), "{} tried", result.tried);
    for finding in &result.findings {
        assert_eq!(finding.rule, Some("TENSOR.TOTAL_SIZE"), "{}", finding.text);
        assert!(finding
            .text
            .contains("accepted an invalid descriptor of rule TENSOR.TOTAL_SIZE"));
        assert!(
            finding.elements <= 8,
            "{} elements\n{}",
            finding.elements,
            finding.text
        );
        let case = check_minimal_case(&backend, &finding.text);
        let Expectation::Invalid(rules) = &case.expectation else {
            panic!("not a negative case\n{}", finding.text)
        };
        assert_eq!(rules, &["TENSOR.TOTAL_SIZE"]);
    }
}

#[test]
fn one_hot_1_wrong_only_on_negative_indices_is_informational_never_a_failure() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::OvWrongOnNegativeIndices,
    };
    let result = run(&backend, &options(8, 150, OperatorKind::OvOneHot1));
    assert!(result.findings.is_empty(), "{:#?}", result.findings);
    assert!(!result.informational.is_empty(), "{} tried", result.tried);
    for finding in &result.informational {
        assert!(
            finding.text.contains("ONEHOT1.NEGATIVE_INDICES"),
            "{}",
            finding.text
        );
        assert!(
            finding.text.contains("class: informational"),
            "{}",
            finding.text
        );
    }
}

#[test]
fn one_hot_1_truncating_64_bit_indices_is_found_and_shrunk() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::OvTruncates64BitIndices,
    };
    let result = run(&backend, &options(8, 150, OperatorKind::OvOneHot1));
    assert!(!result.findings.is_empty(), "{} tried", result.tried);
    for finding in &result.findings {
        // One index past 2^32 whose low half is in range, and a short output.
        assert!(
            finding.elements <= 8,
            "{} elements\n{}",
            finding.elements,
            finding.text
        );
        let case = check_minimal_case(&backend, &finding.text);
        let OperatorDesc::OvOneHot(desc) = &case.operator else {
            panic!("{}", finding.text)
        };
        assert_eq!(desc.indices.data_type, opconform_backend::DataType::Int64);
    }
}

/// The CPU backend, slowed down, failing every ArgMax case of 64 input elements or more (a
/// size-caused bug: its shrink tries many candidates that pass).
struct SlowAndWrong(CpuBackend, Duration);

impl Backend for SlowAndWrong {
    fn info(&self) -> BackendInfo {
        self.0.info()
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError> {
        std::thread::sleep(self.1);
        self.0.execute(operator, inputs, outputs, level)?;
        if operator.inputs()[0].element_count() >= 64 {
            outputs[0].data[0] = outputs[0].data[0].wrapping_add(1);
        }
        Ok(())
    }
}

#[test]
fn a_time_budget_bounds_the_shrinking_too() {
    let backend = SlowAndWrong(CpuBackend::new(), Duration::from_millis(50));
    let budget = Duration::from_millis(2500);
    let mut options = options(6, 0, OperatorKind::DmlArgMax);
    options.budget = Budget::Time(budget);
    let started = Instant::now();
    let result = run(&backend, &options);
    let took = started.elapsed();
    // One backend run (50 ms) and one case's preparation may pass the deadline.
    assert!(took <= budget + Duration::from_millis(500), "{took:?}");
    // The first failing draw's shrink takes the rest of the budget.
    assert_eq!(result.findings.len(), 1, "{:#?}", result.findings);
    let finding = &result.findings[0];
    assert_eq!(finding.shrink_stop, Some(ShrinkStop::Deadline));
    assert!(finding
        .text
        .contains("Not fully shrunk: shrinking stopped at the time budget"));
    // What was found so far is written, and it is a valid failing case.
    check_minimal_case(&backend, &finding.text);
}

#[test]
fn the_cpu_backend_has_no_findings() {
    let cpu = CpuBackend::new();
    let mut options = options(2024, 200, OperatorKind::DmlArgMax);
    options.operators = opconform::explore::draw::OPERATORS.to_vec();
    let result = run(&cpu, &options);
    assert!(
        result.tried >= 190,
        "only {} cases were drawn",
        result.tried
    );
    assert!(result.findings.is_empty(), "{:#?}", result.findings);
}

/// Runs the `opconform` binary; returns the exit status and stdout plus stderr.
fn opconform(args: &[&str]) -> (i32, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_opconform"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

#[test]
fn the_cli_exits_0_with_nothing_found_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("opconform-explore-cli-{}", std::process::id()));
    let out = dir.join("findings");
    let (status, output) = opconform(&[
        "explore",
        "--backend",
        "cpu",
        "--cases",
        "40",
        "--seed",
        "9",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{output}");
    assert!(
        output.contains("40 case(s) drawn at 4_1 with seed 9: 0 distinct failure(s)"),
        "{output}"
    );
    assert!(!out.exists(), "nothing found, nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cli_exits_2_on_usage_errors() {
    for args in [
        &["explore", "--cases", "5"][..],
        &["explore", "--backend", "nosuch", "--cases", "5"],
        &[
            "explore",
            "--backend",
            "cpu",
            "--cases",
            "5",
            "--time",
            "5s",
        ],
        &["explore", "--backend", "cpu", "--time", "soon"],
        &["explore", "--backend", "cpu", "--operator", "DML_SOFTMAX"],
        &["explore", "--backend", "cpu", "--feature-level", "opset1"],
    ] {
        let (status, output) = opconform(args);
        assert_eq!(status, 2, "{args:?}: {output}");
    }
}

/// The CPU backend with DML_ONE_HOT treating negative indices as out of range (OffValue
/// everywhere in their sequence).
struct NegativeIndicesIgnored(CpuBackend);

impl Backend for NegativeIndicesIgnored {
    fn info(&self) -> BackendInfo {
        self.0.info()
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError> {
        let OperatorDesc::OneHot(desc) = operator else {
            return self.0.execute(operator, inputs, outputs, level);
        };
        let indices = &inputs[0];
        let signed = desc.indices.data_type.is_signed_integer();
        let width = desc.indices.data_type.size_in_bytes();
        let negative = signed
            && indices
                .data
                .chunks_exact(width)
                .any(|e| e[width - 1] & 0x80 != 0);
        if !negative {
            return self.0.execute(operator, inputs, outputs, level);
        }
        // Replace each negative index by one far out of range, then run the CPU backend.
        let mut data = indices.data.clone();
        for element in data.chunks_exact_mut(width) {
            if element[width - 1] & 0x80 != 0 {
                element.fill(0);
                element[width / 2] = 0x7f;
            }
        }
        let changed = Tensor::from_bytes(indices.desc.clone(), data).unwrap();
        let inputs = [changed, inputs[1].clone()];
        self.0.execute(operator, &inputs, outputs, level)
    }
}

#[test]
fn a_planted_one_hot_bug_is_found_and_shrunk() {
    let backend = NegativeIndicesIgnored(CpuBackend::new());
    let result = run(&backend, &options(3, 60, OperatorKind::DmlOneHot));
    assert!(!result.findings.is_empty(), "{result:?}");
    for finding in &result.findings {
        // One negative index and a sequence of one or two elements.
        assert!(
            finding.elements <= 8,
            "{} elements\n{}",
            finding.elements,
            finding.text
        );
        check_minimal_case(&backend, &finding.text);
    }
}

/// Any `python3` (the explore fixture backend needs no third-party module), or `None` (after
/// a note) when there is none. Panics under `CI=true` when there is none.
fn python3() -> Option<&'static str> {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(!ci, "CI=true but there is no python3");
        eprintln!("note: skipped, no python3");
        return None;
    }
    Some("python3")
}

/// The command line of `tests/fixtures/explore_argmax_backend.py` with `options`.
fn fixture_backend(python: &str, options: &str) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explore_argmax_backend.py");
    format!("{python} '{}' {options}", script.display())
}

/// A fresh temp folder for one test.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("opconform-explore-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_protocol_backend_with_a_planted_bug_is_found_shrunk_and_written() {
    let Some(python) = python3() else { return };
    let command = fixture_backend(python, "--break rank5-gap");
    let dir = temp_dir("protocol-broken");
    let out = dir.join("findings");
    let (status, output) = opconform(&[
        "explore",
        "--backend-cmd",
        &command,
        "--cases",
        "60",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 1, "{output}");
    assert!(
        output.contains("60 case(s) drawn at 4_1 with seed 3: 1 distinct failure(s)"),
        "{output}"
    );
    let files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    // A valid case file: it loads, names its source, and still fails on the broken backend
    // while the CPU backend passes it.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let (cases, errors) = load_text(&dir, &files[0], &text);
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    assert!(
        text.contains("source: {generator: \"opconform explore (seed 3)\"}"),
        "{text}"
    );
    let OperatorDesc::ArgMax(desc) = &cases[0].operator else {
        panic!("{text}")
    };
    assert_eq!(
        desc.input.sizes,
        [1, 1, 1, 1, 1],
        "shrunk to one element\n{text}"
    );
    let broken = ProcessBackend::spawn(&command, ProcessOptions::default()).unwrap();
    assert_eq!(
        run_case(&broken, &broken.info(), &cases[0]).outcome,
        Outcome::Fail
    );
    let cpu = CpuBackend::new();
    assert_eq!(
        run_case(&cpu, &cpu.info(), &cases[0]).outcome,
        Outcome::Pass
    );
    let (status, output) = opconform(&["validate", files[0].to_str().unwrap()]);
    assert_eq!(status, 0, "{output}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_correct_protocol_backend_survives_with_exit_0() {
    let Some(python) = python3() else { return };
    let dir = temp_dir("protocol-correct");
    let out = dir.join("findings");
    let (status, output) = opconform(&[
        "explore",
        "--backend-cmd",
        &fixture_backend(python, ""),
        "--cases",
        "150",
        "--seed",
        "12",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{output}");
    assert!(
        output.contains("150 case(s) drawn at 4_1 with seed 12: 0 distinct failure(s)"),
        "{output}"
    );
    assert!(!out.exists(), "nothing found, nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cli_time_budget_includes_shrinking() {
    let Some(python) = python3() else { return };
    let dir = temp_dir("protocol-slow");
    let out = dir.join("findings");
    let started = Instant::now();
    let (status, output) = opconform(&[
        "explore",
        "--backend-cmd",
        &fixture_backend(python, "--break from-64 --sleep 0.1"),
        "--time",
        "3s",
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    let took = started.elapsed();
    assert_eq!(status, 1, "{output}");
    // The budget, one backend run that may cross it, and the backend's start and shutdown.
    assert!(
        took <= Duration::from_millis(3000 + 1500),
        "{took:?}\n{output}"
    );
    assert!(
        output.contains("shrinking stopped at the time budget"),
        "{output}"
    );
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "the case found so far is written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
