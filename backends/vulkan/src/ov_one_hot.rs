//! OpenVINO OneHot-1 on the `one_hot` kernel: the new axis of size `depth` is the kernel's
//! sequence axis, and negative indices (undefined by the spec) select nothing.

use crate::one_hot::{OneHotJob, MAX_RANK};
use crate::params::{element_bits, strides32};
use crate::Context;
use opconform_backend::{BackendError, OvOneHotDesc, Tensor};

/// OneHot-1: inputs `[indices, depth, on_value, off_value]`, outputs `[output]`.
pub(crate) fn run(
    ctx: &Context,
    desc: &OvOneHotDesc,
    inputs: &[Tensor],
    outputs: &mut [Tensor],
) -> Result<(), BackendError> {
    let n = desc.indices.dimension_count();
    if n + 1 > MAX_RANK {
        return Err(BackendError::Unsupported {
            reason: format!(
                "indices of rank {n}; the kernel takes up to {}",
                MAX_RANK - 1
            ),
        });
    }
    let axis = if desc.axis < 0 {
        desc.axis + n as i64 + 1
    } else {
        desc.axis
    };
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a <= n)
        .ok_or_else(|| BackendError::Internal {
            message: format!("axis {} out of range after validation", desc.axis),
        })?;
    let on = element_bits(&inputs[2], &[], "on_value")?;
    let off = element_bits(&inputs[3], &[], "off_value")?;
    let indices_strides = strides32(&desc.indices, "indices")?;
    let mut index_strides = indices_strides.clone();
    index_strides.insert(axis, 0);
    let job = OneHotJob {
        sizes: desc.output.sizes.clone(),
        out_strides: strides32(&desc.output, "output")?,
        index_strides,
        axis: axis as u32,
        out_type: desc.output.data_type,
        index_type: desc.indices.data_type,
        negative_wraps: false,
        off,
        on,
    };
    job.run(ctx, &inputs[0], &mut outputs[0])
}
