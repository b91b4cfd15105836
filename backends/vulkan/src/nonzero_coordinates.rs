//! DML_NONZERO_COORDINATES as a three-pass stream compaction that keeps element order:
//! `nonzero_count` counts each block's nonzero elements, `nonzero_scan` turns the counts into
//! each block's first output row (and writes the total to OutputCountTensor), and
//! `nonzero_write` writes each block's coordinates from its first row on.

use crate::buffers::{download, upload, Buffer};
use crate::params::{count32, strides32, Params};
use crate::pipeline::Dispatch;
use crate::shaders::Kernel;
use crate::Context;
use opconform_backend::{BackendError, DataType, NonZeroCoordinatesDesc, Tensor};

/// Most input dimensions the kernels take (DirectML's limit).
const MAX_RANK: usize = 8;

/// Elements per block: `GROUP_SIZE * PER_INVOCATION` in `shaders/nonzero_common.glsl`.
const BLOCK: u32 = Kernel::GROUP_SIZE * 8;

/// The bits that make an element nonzero: all of them for integers, all but the sign for
/// floats (so -0.0 is zero; NaN and denormals are nonzero).
fn value_mask(data_type: DataType) -> Result<u32, BackendError> {
    match data_type {
        DataType::Float32 => Ok(0x7fff_ffff),
        DataType::Float16 => Ok(0x7fff),
        DataType::Int32 | DataType::Uint32 => Ok(0xffff_ffff),
        DataType::Int16 | DataType::Uint16 => Ok(0xffff),
        DataType::Int8 | DataType::Uint8 => Ok(0xff),
        other => Err(BackendError::Unsupported {
            reason: format!("{other} NonZeroCoordinates input (no DirectML table allows it)"),
        }),
    }
}

/// DML_NONZERO_COORDINATES: inputs `[InputTensor]`, outputs `[OutputCountTensor,
/// OutputCoordinatesTensor]`.
pub(crate) fn run(
    ctx: &Context,
    desc: &NonZeroCoordinatesDesc,
    inputs: &[Tensor],
    outputs: &mut [Tensor],
) -> Result<(), BackendError> {
    let rank = desc.input.dimension_count();
    if rank > MAX_RANK {
        return Err(BackendError::Unsupported {
            reason: format!("rank {rank}; the kernels take up to {MAX_RANK}"),
        });
    }
    let mask = value_mask(desc.input.data_type)?;
    let count = count32(&desc.input, "InputTensor")?;
    let coordinates = &desc.output_coordinates;
    let c_rank = coordinates.dimension_count();
    let columns = coordinates.sizes[c_rank - 1];
    let c_strides = strides32(coordinates, "OutputCoordinatesTensor")?;
    let block_count = count.div_ceil(BLOCK);
    let mut params = Params::new();
    params
        .word(count)
        .word(rank as u32)
        .word(columns)
        .word(desc.input.data_type.size_in_bytes() as u32)
        .word(mask)
        .word(block_count)
        .word(c_strides[c_rank - 2])
        .word(c_strides[c_rank - 1])
        .array(&desc.input.sizes, MAX_RANK)
        .array(&strides32(&desc.input, "InputTensor")?, MAX_RANK);

    let gpu = &ctx.gpu;
    let params = Buffer::from_words(gpu, params.words(), "the NonZeroCoordinates parameters")?;
    let input = upload(gpu, &inputs[0], "InputTensor")?;
    let count_out = upload(gpu, &outputs[0], "OutputCountTensor")?;
    let coordinates_out = upload(gpu, &outputs[1], "OutputCoordinatesTensor")?;
    let scratch_bytes = u64::from(block_count) * 4;
    let block_counts = Buffer::new(gpu, scratch_bytes, "the per-block counts")?;
    let block_offsets = Buffer::new(gpu, scratch_bytes, "the per-block offsets")?;

    // Passes 1 and 3 have one workgroup per block, split at the device's dispatch limit.
    let max_groups = gpu.limits.max_group_count_x.max(1);
    fn splits<'a>(kernel: Kernel, buffers: &[&'a Buffer], blocks: u32, max_groups: u32) -> Vec<Dispatch<'a>> {
        (0..blocks)
            .step_by(max_groups as usize)
            .map(|base| Dispatch {
                kernel,
                buffers: buffers.to_vec(),
                groups: (blocks - base).min(max_groups),
                push: base,
            })
            .collect()
    }
    let mut dispatches = splits(
        Kernel::NonZeroCount,
        &[&params, &input, &block_counts],
        block_count,
        max_groups,
    );
    dispatches.push(Dispatch {
        kernel: Kernel::NonZeroScan,
        buffers: vec![&params, &block_counts, &block_offsets, &count_out],
        groups: 1,
        push: 0,
    });
    dispatches.extend(splits(
        Kernel::NonZeroWrite,
        &[&params, &input, &block_offsets, &coordinates_out],
        block_count,
        max_groups,
    ));
    ctx.executor.run(gpu, &dispatches)?;
    download(&count_out, &mut outputs[0]);
    download(&coordinates_out, &mut outputs[1]);
    Ok(())
}
