//! opconform's reference CPU backend.
//!
//! [`CpuBackend`] implements every operator opconform certifies — `DML_ONE_HOT`,
//! `DML_NONZERO_COORDINATES`, `DML_ARGMAX` and OpenVINO `OneHot-1` — for every data type and
//! dimension count the specs' support tables allow, up to `DML_FEATURE_LEVEL_4_1` and the
//! newest OpenVINO opset opconform knows.
//!
//! It first validates the descriptor with [`opconform_backend::validate()`] (so an invalid
//! descriptor is rejected by rule id), checks every buffer against its description, and then
//! runs kernels that are generic over the element type (monomorphised, no per-element
//! dispatch), take a contiguous fast path where the layout allows it, honour strides
//! (including 0 for broadcast) everywhere, and split large work across threads with rayon.
//!
//! Performance (measured in `docs/performance.md`): the hot loops are branch-free so that they
//! vectorise, and are compiled a second time for AVX2 (ArgMax's contiguous runs also for
//! AVX-512), chosen at run time (`simd`; set [`BASELINE_ENV`] to keep the baseline,
//! [`NO_AVX512_ENV`] to stop at AVX2); ArgMax reduces inner axes a block at a time (maximum
//! first, position only when it improves) and outer axes as rows of running maxima;
//! NonZeroCoordinates reads a packed input once (per chunk, taken in order by one worker per
//! thread: bit masks and a count, a chained prefix sum, then the rows while the next chunk's
//! input is prefetched) and streams large outputs with non-temporal stores.

mod argmax;
mod element;
mod nonzero_coordinates;
mod one_hot;
mod ov_one_hot;
mod parallel;
mod simd;
mod strided;
#[cfg(test)]
mod test_tensors;
pub mod thresholds;

use opconform_backend::validate::NEWEST_OPSET;
use opconform_backend::{
    validate, Backend, BackendError, BackendInfo, Level, OperatorDesc, OperatorKind, Tensor,
    TensorDesc, Violation,
};
pub use simd::{copy_streaming, stream_fence, BASELINE_ENV, NO_AVX512_ENV};
use std::panic::{catch_unwind, AssertUnwindSafe};
use strided::internal;

/// True when the CPU backend runs its explicit AVX2 kernels on this machine (x86-64 with AVX2,
/// and [`BASELINE_ENV`] not set); false when it runs the portable ones.
pub fn uses_avx2() -> bool {
    simd::Isa::detect().avx2()
}

/// The widest instruction set the CPU backend's kernels use on this machine: `avx512`
/// (ArgMax's contiguous runs; AVX2 elsewhere), `avx2` or `portable` (see [`BASELINE_ENV`] and
/// [`NO_AVX512_ENV`]).
pub fn isa_name() -> &'static str {
    simd::Isa::detect().name()
}

/// The reference CPU backend: exact results for every claimed operator, level and data type.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend;

impl CpuBackend {
    /// A CPU backend (it holds no state; rayon's global thread pool runs its parallel work).
    pub fn new() -> CpuBackend {
        CpuBackend
    }
}

impl Backend for CpuBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "cpu".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            device: format!("host CPU ({})", std::env::consts::ARCH),
            claims: vec![Level::dml(0x4100), Level::Opset(NEWEST_OPSET)],
            operators: OperatorKind::ALL.to_vec(),
        }
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError> {
        let violations = validate(operator, level);
        if !violations.is_empty() {
            return Err(invalid(&violations));
        }
        check_tensors("input", &operator.inputs(), inputs)?;
        let output_descs = operator.outputs();
        check_tensors("output", &output_descs, outputs)?;
        // The kernels check their own preconditions and stay inside checked layouts; this is
        // a last line of defence so that a bug surfaces as an error rather than a crash.
        catch_unwind(AssertUnwindSafe(|| run(operator, inputs, outputs, level))).unwrap_or_else(
            |_| {
                Err(internal(format!(
                    "the CPU kernel for {} panicked",
                    operator.kind().name()
                )))
            },
        )
    }
}

/// [`BackendError::Invalid`] for `violations`: the distinct rule ids in order of first
/// appearance, and every violation in the message.
fn invalid(violations: &[Violation]) -> BackendError {
    let mut rules: Vec<String> = Vec::new();
    for v in violations {
        if !rules.contains(&v.rule) {
            rules.push(v.rule.clone());
        }
    }
    BackendError::Invalid {
        rules,
        message: violations
            .iter()
            .map(Violation::to_string)
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Checks that `tensors` match the descriptor's `descs` one to one, each buffer as long as
/// its description says.
fn check_tensors(
    role: &str,
    descs: &[&TensorDesc],
    tensors: &[Tensor],
) -> Result<(), BackendError> {
    if descs.len() != tensors.len() {
        return Err(internal(format!(
            "the operator takes {} {role}s, {} were given",
            descs.len(),
            tensors.len()
        )));
    }
    for (i, (&desc, tensor)) in descs.iter().zip(tensors).enumerate() {
        if tensor.desc != *desc {
            return Err(internal(format!(
                "{role} {i} is described as {} but the operator's description is {}",
                tensor.desc.summary(),
                desc.summary()
            )));
        }
        if tensor.data.len() as u64 != desc.total_tensor_size_in_bytes {
            return Err(internal(format!(
                "{role} {i} holds {} bytes, its TotalTensorSizeInBytes is {}",
                tensor.data.len(),
                desc.total_tensor_size_in_bytes
            )));
        }
    }
    Ok(())
}

/// Runs the kernel of `operator` on checked tensors.
fn run(
    operator: &OperatorDesc,
    inputs: &[Tensor],
    outputs: &mut [Tensor],
    level: Level,
) -> Result<(), BackendError> {
    match (operator, inputs, outputs) {
        (OperatorDesc::OneHot(desc), [indices, values], [output]) => {
            one_hot::run(desc, indices, values, output, level)
        }
        (OperatorDesc::NonZeroCoordinates(desc), [input], [count, coordinates]) => {
            nonzero_coordinates::run(desc, input, count, coordinates)
        }
        (OperatorDesc::ArgMax(desc), [input], [output]) => argmax::run(desc, input, output),
        (OperatorDesc::OvOneHot(desc), [indices, depth, on_value, off_value], [output]) => {
            ov_one_hot::run(desc, indices, depth, on_value, off_value, output)
        }
        _ => Err(internal("wrong number of tensors for the operator")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tensors::{packed, poisoned};
    use opconform_backend::{ArgMaxDesc, AxisDirection, DataType};

    /// Runs `op` at `level` on `inputs` with poisoned outputs.
    pub(crate) fn execute(
        op: &OperatorDesc,
        inputs: &[Tensor],
        level: Level,
    ) -> Result<Vec<Tensor>, BackendError> {
        let mut outputs: Vec<Tensor> = op.outputs().into_iter().map(poisoned).collect();
        CpuBackend::new().execute(op, inputs, &mut outputs, level)?;
        Ok(outputs)
    }

    #[test]
    fn info_claims_everything() {
        let info = CpuBackend::new().info();
        assert_eq!(info.name, "cpu");
        assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
        assert!(info.device.starts_with("host CPU ("));
        assert_eq!(
            info.claims,
            vec![Level::dml(0x4100), Level::Opset(NEWEST_OPSET)]
        );
        assert_eq!(info.operators.len(), 4);
        assert!(info.claims_case(OperatorKind::DmlArgMax, Level::dml(0x3000)));
        assert!(!info.claims_case(OperatorKind::DmlArgMax, Level::dml(0x5000)));
    }

    fn argmax_3x3() -> (OperatorDesc, Tensor) {
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[3, 3]),
            output: TensorDesc::packed(DataType::Uint32, &[1, 3]),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        });
        let input = packed::<f32>(&[3, 3], &[1., 2., 3., 3., 0., 4., 2., 5., 2.]);
        (op, input)
    }

    #[test]
    fn wrong_tensor_counts_are_internal_errors() {
        let (op, input) = argmax_3x3();
        let mut outputs = vec![poisoned(op.outputs()[0])];
        let backend = CpuBackend::new();
        let err = backend
            .execute(&op, &[], &mut outputs, Level::dml(0x3000))
            .unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
        let err = backend
            .execute(
                &op,
                &[input.clone(), input.clone()],
                &mut outputs,
                Level::dml(0x3000),
            )
            .unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
        let err = backend
            .execute(&op, &[input], &mut [], Level::dml(0x3000))
            .unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
    }

    #[test]
    fn short_buffers_are_internal_errors() {
        let (op, mut input) = argmax_3x3();
        input.data.truncate(20);
        let err = execute(&op, &[input], Level::dml(0x3000)).unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
        let (op, input) = argmax_3x3();
        let mut outputs = vec![poisoned(op.outputs()[0])];
        outputs[0].data.pop();
        let err = CpuBackend::new()
            .execute(&op, &[input], &mut outputs, Level::dml(0x3000))
            .unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
    }

    #[test]
    fn mismatched_tensor_descriptions_are_internal_errors() {
        let (op, _) = argmax_3x3();
        let other = packed::<f32>(&[9], &[0.; 9]);
        let err = execute(&op, &[other], Level::dml(0x3000)).unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
    }

    #[test]
    fn invalid_descriptor_names_distinct_rules() {
        // Axes {0, 0, 2} on a 2-D input: a duplicate axis, an axis out of range, and output
        // sizes that do not match.
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[3, 3]),
            output: TensorDesc::packed(DataType::Uint32, &[1, 1]),
            axes: vec![0, 0, 2],
            axis_direction: AxisDirection::Increasing,
        });
        let input = packed::<f32>(&[3, 3], &[0.; 9]);
        let err = execute(&op, &[input], Level::dml(0x3000)).unwrap_err();
        let BackendError::Invalid { rules, message } = err else {
            panic!("expected Invalid, got {err}");
        };
        assert_eq!(
            rules,
            [
                "ARGMAX.AXES_DISTINCT",
                "ARGMAX.AXES_RANGE",
                "ARGMAX.OUTPUT_SIZES"
            ]
        );
        assert!(
            message.contains("ARGMAX.AXES_DISTINCT: Axes[1]"),
            "{message}"
        );

        // Axes {0, 0, 0}: AXES_DISTINCT is broken at Axes[1] and Axes[2] but named once.
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[3, 3]),
            output: TensorDesc::packed(DataType::Uint32, &[1, 3]),
            axes: vec![0, 0, 0],
            axis_direction: AxisDirection::Increasing,
        });
        let input = packed::<f32>(&[3, 3], &[0.; 9]);
        let err = execute(&op, &[input], Level::dml(0x3000)).unwrap_err();
        let BackendError::Invalid { rules, message } = err else {
            panic!("expected Invalid, got {err}");
        };
        assert_eq!(rules, ["ARGMAX.AXES_DISTINCT"]);
        assert!(
            message.contains("Axes[1]") && message.contains("Axes[2]"),
            "{message}"
        );
    }

    #[test]
    fn level_of_the_wrong_family_is_invalid() {
        let (op, input) = argmax_3x3();
        let err = execute(&op, &[input], Level::Opset(1)).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ARGMAX.AVAILABILITY"]),
            "{err}"
        );
    }
}
