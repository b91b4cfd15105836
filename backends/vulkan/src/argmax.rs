//! DML_ARGMAX on the `argmax` kernel.
//!
//! The host splits the dimensions into kept ones (one output element per combination) and
//! reduced ones (sorted by axis: the flat index runs row-major over them in increasing axis
//! order, whatever order `Axes` lists them in); dimensions of size 1 are dropped from both, as
//! they move no offset and no index.

use crate::buffers::{download, upload, Buffer};
use crate::params::{count32, strides32, Params};
use crate::pipeline::Dispatch;
use crate::shaders::Kernel;
use crate::Context;
use opconform_backend::{ArgMaxDesc, AxisDirection, BackendError, DataType, Tensor};

/// Most dimensions the kernel takes (DirectML's limit).
const MAX_RANK: usize = 8;

/// Reductions at least this long use a whole workgroup per output element; shorter ones one
/// invocation per output element (unless there are too few outputs to occupy the device).
const WORKGROUP_REDUCTION_FROM: u32 = 128;

/// Below this many outputs a workgroup per output is used whatever the reduction's length.
const FEW_OUTPUTS: u32 = 64;

/// The kernel's element kinds: how bits become an order-preserving key.
fn input_kind(data_type: DataType) -> Result<u32, BackendError> {
    match data_type {
        DataType::Uint8 | DataType::Uint16 | DataType::Uint32 | DataType::Uint64 => Ok(0),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Ok(1),
        DataType::Float32 | DataType::Float16 => Ok(2),
        DataType::Float64 => Err(BackendError::Unsupported {
            reason: "FLOAT64 ArgMax input (no DirectML table allows it)".to_string(),
        }),
    }
}

/// DML_ARGMAX: inputs `[InputTensor]`, outputs `[OutputTensor]`.
pub(crate) fn run(
    ctx: &Context,
    desc: &ArgMaxDesc,
    inputs: &[Tensor],
    outputs: &mut [Tensor],
) -> Result<(), BackendError> {
    let rank = desc.input.dimension_count();
    if rank > MAX_RANK {
        return Err(BackendError::Unsupported {
            reason: format!("rank {rank}; the kernel takes up to {MAX_RANK}"),
        });
    }
    let in_kind = input_kind(desc.input.data_type)?;
    let out_size = match desc.output.data_type {
        DataType::Int32 | DataType::Uint32 => 4,
        DataType::Int64 | DataType::Uint64 => 8,
        other => {
            return Err(BackendError::Unsupported {
                reason: format!("{other} ArgMax output (the kernel writes 32- and 64-bit indices)"),
            })
        }
    };
    let in_strides = strides32(&desc.input, "InputTensor")?;
    let out_strides = strides32(&desc.output, "OutputTensor")?;
    let (mut kept_sizes, mut kept_in, mut kept_out) = (Vec::new(), Vec::new(), Vec::new());
    let (mut red_sizes, mut red_in) = (Vec::new(), Vec::new());
    for d in 0..rank {
        let size = desc.input.sizes[d];
        if size == 1 {
            continue;
        }
        if desc.axes.contains(&(d as u32)) {
            red_sizes.push(size);
            red_in.push(in_strides[d]);
        } else {
            kept_sizes.push(size);
            kept_in.push(in_strides[d]);
            kept_out.push(out_strides[d]);
        }
    }
    let count = count32(&desc.output, "OutputTensor")?;
    let red_count = red_sizes.iter().product::<u32>();
    let per_workgroup = red_count >= WORKGROUP_REDUCTION_FROM || count < FEW_OUTPUTS;
    let mut params = Params::new();
    params
        .word(count)
        .word(kept_sizes.len() as u32)
        .word(red_sizes.len() as u32)
        .word(red_count)
        .word(desc.input.data_type.size_in_bytes() as u32)
        .word(in_kind)
        .word(out_size)
        .word(u32::from(desc.axis_direction == AxisDirection::Decreasing))
        .word(u32::from(per_workgroup))
        .array(&[], 3)
        .array(&kept_sizes, MAX_RANK)
        .array(&kept_in, MAX_RANK)
        .array(&kept_out, MAX_RANK)
        .array(&red_sizes, MAX_RANK)
        .array(&red_in, MAX_RANK);

    let gpu = &ctx.gpu;
    let params = Buffer::from_words(gpu, params.words(), "the ArgMax parameters")?;
    let input = upload(gpu, &inputs[0], "InputTensor")?;
    let output = upload(gpu, &outputs[0], "OutputTensor")?;
    let groups = if per_workgroup {
        count
    } else {
        count.div_ceil(Kernel::GROUP_SIZE)
    };
    ctx.executor.run(
        gpu,
        &[Dispatch {
            kernel: Kernel::ArgMax,
            buffers: vec![&params, &input, &output],
            groups: groups.min(gpu.limits.max_group_count_x),
            push: 0,
        }],
    )?;
    download(&output, &mut outputs[0]);
    Ok(())
}
