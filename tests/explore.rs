//! `opconform explore` against a backend with planted bugs (it must find and shrink them) and
//! against the bundled CPU backend (it must find nothing).

use opconform::case::load::load_text;
use opconform::explore::{explore, Budget, Exploration, Options};
use opconform::runner::{run_case, Outcome};
use opconform_backend::{
    Backend, BackendError, BackendInfo, Level, OperatorDesc, OperatorKind, Tensor,
};
use opconform_cpu::CpuBackend;
use std::path::Path;

/// The CPU backend with a bug planted in one operator.
struct Planted {
    cpu: CpuBackend,
    bug: Bug,
}

#[derive(Clone, Copy)]
enum Bug {
    /// ArgMax over two or more axes that are not adjacent: the first output element is off
    /// by one.
    ArgMaxNonAdjacentAxes,
    /// NonZeroCoordinates drops the last non-zero row from the count when there are two or
    /// more.
    NonZeroDropsARow,
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
        self.cpu.execute(operator, inputs, outputs, level)?;
        match (self.bug, operator) {
            (Bug::ArgMaxNonAdjacentAxes, OperatorDesc::ArgMax(desc)) => {
                let gap = desc.axes.windows(2).any(|w| w[1] > w[0] + 1);
                if gap {
                    outputs[0].data[0] ^= 1;
                }
            }
            (Bug::NonZeroDropsARow, OperatorDesc::NonZeroCoordinates(_)) => {
                let count = u32::from_le_bytes(outputs[0].data[..4].try_into().unwrap());
                if count >= 2 {
                    outputs[0].data[..4].copy_from_slice(&(count - 1).to_le_bytes());
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

/// The minimal case loads as a case file and still fails on `backend`, passes on the CPU.
fn check_minimal_case(backend: &dyn Backend, text: &str) {
    let (cases, errors) = load_text(Path::new("."), Path::new("finding.yaml"), text);
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
}

#[test]
fn a_planted_argmax_bug_is_found_and_shrunk() {
    let backend = Planted {
        cpu: CpuBackend::new(),
        bug: Bug::ArgMaxNonAdjacentAxes,
    };
    let options = options(11, 100, OperatorKind::DmlArgMax);
    let result = run(&backend, &options);
    assert!(!result.findings.is_empty(), "{result:?}");
    for finding in &result.findings {
        assert_eq!(finding.outcome, Outcome::Fail);
        // The smallest failing ArgMax: three dimensions of size 1, axes [0, 2], one output.
        assert!(
            finding.elements <= 4,
            "{} elements\n{}",
            finding.elements,
            finding.text
        );
        check_minimal_case(&backend, &finding.text);
    }
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
