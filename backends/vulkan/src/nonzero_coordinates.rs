//! DML_NONZERO_COORDINATES as a stream compaction that keeps element order:
//! `nonzero_count` counts each block's nonzero elements; `nonzero_scan` turns the counts into
//! each block's first output row, in two levels (within segments of blocks, then over the
//! segment totals, whose sum it writes to OutputCountTensor); `nonzero_write` writes each
//! block's coordinates from its first row on.

use crate::buffers::{download, upload, Buffer};
use crate::params::{count32, strides32, Params};
use crate::pipeline::Dispatch;
use crate::shaders::Kernel;
use crate::Context;
use opconform_backend::{BackendError, DataType, NonZeroCoordinatesDesc, Tensor};

/// Most input dimensions the kernels take (DirectML's limit).
const MAX_RANK: usize = 8;

/// Elements per block: `BLOCK` in `shaders/nonzero_common.glsl`.
const BLOCK: u32 = Kernel::GROUP_SIZE * 8;

/// Blocks per scan segment: the smallest multiple of the group size, times a power of two,
/// whose square covers `blocks`, so that one workgroup can scan the segment totals too. Each
/// scan invocation then loops over `segment / GROUP_SIZE` entries (at most 16 for 2^32
/// elements).
fn segment_size(blocks: u32) -> u32 {
    let mut segment = Kernel::GROUP_SIZE;
    while u64::from(segment) * u64::from(segment) < u64::from(blocks) {
        segment *= 2;
    }
    segment
}

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
    let segment = segment_size(block_count);
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
        .word(segment)
        .array(&desc.input.sizes, MAX_RANK)
        .array(&strides32(&desc.input, "InputTensor")?, MAX_RANK);

    let gpu = &ctx.gpu;
    let params = Buffer::from_words(gpu, params.words(), "the NonZeroCoordinates parameters")?;
    let input = upload(gpu, &inputs[0], "InputTensor")?;
    let count_out = upload(gpu, &outputs[0], "OutputCountTensor")?;
    let coordinates_out = upload(gpu, &outputs[1], "OutputCoordinatesTensor")?;
    let segments = block_count.div_ceil(segment); // at most `segment`
    let block_counts = Buffer::new(gpu, u64::from(block_count) * 4, "the block counts")?;
    let block_offsets = Buffer::new(gpu, u64::from(block_count) * 4, "the block offsets")?;
    let segment_totals = Buffer::new(gpu, u64::from(segments) * 4, "the segment totals")?;
    let segment_offsets = Buffer::new(gpu, u64::from(segments) * 4, "the segment offsets")?;

    let max_groups = gpu.limits.max_group_count_x;
    let mut dispatches = Dispatch::split(
        Kernel::NonZeroCount,
        &[&params, &input, &block_counts],
        block_count.into(),
        [0; 3],
        max_groups,
    )?;
    dispatches.extend(Dispatch::split(
        Kernel::NonZeroScan,
        &[&params, &block_counts, &block_offsets, &segment_totals],
        segments.into(),
        [block_count, 0, 0],
        max_groups,
    )?);
    dispatches.extend(Dispatch::split(
        Kernel::NonZeroScan,
        &[&params, &segment_totals, &segment_offsets, &count_out],
        1,
        [segments, 0, 0],
        max_groups,
    )?);
    dispatches.extend(Dispatch::split(
        Kernel::NonZeroWrite,
        &[
            &params,
            &input,
            &block_offsets,
            &segment_offsets,
            &coordinates_out,
        ],
        block_count.into(),
        [0; 3],
        max_groups,
    )?);
    ctx.executor.run(gpu, &dispatches)?;
    download(&count_out, &mut outputs[0]);
    download(&coordinates_out, &mut outputs[1]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_scan_levels_cover_every_input() {
        assert_eq!(segment_size(1), 128);
        assert_eq!(segment_size(128 * 128), 128);
        assert_eq!(segment_size(128 * 128 + 1), 256);
        let most = u32::MAX.div_ceil(BLOCK);
        let segment = segment_size(most);
        assert!(most.div_ceil(segment) <= segment);
        assert!(segment / Kernel::GROUP_SIZE <= 16);
    }
}
