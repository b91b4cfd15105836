//! opconform's Vulkan-compute backend.
//!
//! [`VulkanBackend`] runs DML_ONE_HOT, DML_NONZERO_COORDINATES, DML_ARGMAX and OpenVINO
//! OneHot-1 as SPIR-V compute shaders (`shaders/*.comp`, compiled SPIR-V checked in beside
//! them). The Vulkan loader is opened at run time: building needs no Vulkan SDK, and on a machine
//! without a loader or driver [`VulkanBackend::new`] returns [`Unavailable`] with the reason.
//!
//! Every tensor is bound as an array of 32-bit words and decoded with bit operations, and every
//! comparison works on the elements' bits, so all eleven data types run on any Vulkan 1.0
//! device, without shaderInt8/Int16/Int64 or Float16/Float64.
//!
//! Environment: [`DEVICE_ENV`] (`OPCONFORM_VULKAN_DEVICE`) picks the device; see README.md.

#![warn(missing_docs)]

mod argmax;
mod buffers;
mod device;
mod nonzero_coordinates;
mod one_hot;
mod ov_one_hot;
mod params;
mod pipeline;
mod shaders;

pub use device::DEVICE_ENV;

use device::Gpu;
use opconform_backend::{
    validate, validate::NEWEST_OPSET, Backend, BackendError, BackendInfo, Level, OperatorDesc,
    OperatorKind, Tensor,
};
use pipeline::Executor;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Why no Vulkan backend could be opened (no loader, no driver, no device, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// What is missing, and what to install or set.
    pub reason: String,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no Vulkan backend: {}", self.reason)
    }
}

impl std::error::Error for Unavailable {}

/// The device and the pipelines built on it. Fields drop in order: the executor's objects
/// before the device that owns them.
pub(crate) struct Context {
    executor: Executor,
    gpu: Gpu,
}

/// The Vulkan-compute backend: one device, one compute queue, a pipeline per kernel.
///
/// Runs are serialised on an internal mutex (one queue), so the backend is `Send + Sync` and
/// may be shared between threads.
pub struct VulkanBackend {
    context: Mutex<Context>,
    info: BackendInfo,
}

impl fmt::Debug for VulkanBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VulkanBackend")
            .field("device", &self.info.device)
            .finish_non_exhaustive()
    }
}

/// The levels the backend claims: DirectML 4_1 (the newest tables of the three operators) and
/// every OpenVINO opset opconform knows.
pub fn claims() -> Vec<Level> {
    vec![Level::dml(0x4100), Level::Opset(NEWEST_OPSET)]
}

impl VulkanBackend {
    /// Opens the device chosen by [`DEVICE_ENV`] (or the preferred one) and builds the
    /// pipelines; [`Unavailable`] says why when there is no usable loader, driver or device.
    pub fn new() -> Result<VulkanBackend, Unavailable> {
        let opened = catch_unwind(|| -> Result<VulkanBackend, Unavailable> {
            let gpu = Gpu::open()?;
            let executor = Executor::new(&gpu).map_err(|e| Unavailable {
                reason: format!(
                    "building the compute pipelines on {} failed: {e}",
                    gpu.description
                ),
            })?;
            let info = BackendInfo {
                name: "vulkan".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                device: gpu.description.clone(),
                claims: claims(),
                operators: OperatorKind::ALL.to_vec(),
            };
            Ok(VulkanBackend {
                context: Mutex::new(Context { executor, gpu }),
                info,
            })
        });
        opened.unwrap_or_else(|panic| {
            Err(Unavailable {
                reason: format!("opening Vulkan panicked: {}", panic_text(&*panic)),
            })
        })
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// Checks that the tensors passed match the descriptor: count, and bytes enough for each.
fn check_tensors(
    operator: &OperatorDesc,
    inputs: &[Tensor],
    outputs: &[Tensor],
) -> Result<(), BackendError> {
    let (input_names, output_names) = operator.kind().tensor_names();
    let groups = [
        ("input", input_names, operator.inputs(), inputs),
        ("output", output_names, operator.outputs(), outputs),
    ];
    for (kind, names, descs, tensors) in groups {
        if tensors.len() != descs.len() {
            return Err(BackendError::Internal {
                message: format!(
                    "{} {kind} tensors passed, {} takes {}",
                    tensors.len(),
                    operator.kind(),
                    descs.len()
                ),
            });
        }
        for ((name, desc), tensor) in names.iter().zip(descs).zip(tensors) {
            // The kernels touch the bytes of the descriptor's minimum size (the validator has
            // checked TotalTensorSizeInBytes covers it); the buffer must hold them.
            let needed = buffers::tensor_bytes(desc).min(desc.total_tensor_size_in_bytes);
            if (tensor.data.len() as u64) < needed {
                return Err(BackendError::Internal {
                    message: format!(
                        "{name}: the {kind} buffer passed holds {} bytes; {} needs {needed}",
                        tensor.data.len(),
                        desc.summary()
                    ),
                });
            }
        }
    }
    Ok(())
}

impl Backend for VulkanBackend {
    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    fn execute(
        &self,
        operator: &OperatorDesc,
        inputs: &[Tensor],
        outputs: &mut [Tensor],
        level: Level,
    ) -> Result<(), BackendError> {
        let ran = catch_unwind(AssertUnwindSafe(|| {
            let violations = validate(operator, level);
            if !violations.is_empty() {
                let mut rules: Vec<String> = Vec::new();
                for v in &violations {
                    if !rules.contains(&v.rule) {
                        rules.push(v.rule.clone());
                    }
                }
                return Err(BackendError::Invalid {
                    rules,
                    message: violations
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                });
            }
            check_tensors(operator, inputs, outputs)?;
            // A panic while the lock was held leaves nothing half-done that the next run relies
            // on (each run resets its command buffer and fence), so a poisoned lock is reused.
            let context = self
                .context
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match operator {
                OperatorDesc::OneHot(desc) => one_hot::run(&context, desc, inputs, outputs),
                OperatorDesc::NonZeroCoordinates(desc) => {
                    nonzero_coordinates::run(&context, desc, inputs, outputs)
                }
                OperatorDesc::ArgMax(desc) => argmax::run(&context, desc, inputs, outputs),
                OperatorDesc::OvOneHot(desc) => ov_one_hot::run(&context, desc, inputs, outputs),
            }
        }));
        ran.unwrap_or_else(|panic| {
            Err(BackendError::Internal {
                message: format!("the Vulkan backend panicked: {}", panic_text(&*panic)),
            })
        })
    }
}

#[cfg(test)]
mod tests;
