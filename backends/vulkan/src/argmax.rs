//! DML_ARGMAX on the `argmax` kernel.
//!
//! The host splits the dimensions into kept ones (one output element per combination) and
//! reduced ones (sorted by axis: the flat index runs row-major over them in increasing axis
//! order, whatever order `Axes` lists them in); dimensions of size 1 are dropped from both, as
//! they move no offset and no index, and neighbours that form one linear run are merged (a full
//! reduction of a packed tensor becomes one dimension), which spares the kernel divisions.
//!
//! Short reductions run one invocation per output. Longer ones are a tree: each workgroup
//! reduces a chunk of [`CHUNK`] elements of one output to a partial (key, flat index), and
//! further passes combine [`CHUNK`] partials at a time until one per output is left.

use crate::buffers::{download, upload, Buffer};
use crate::params::{count32, strides32, Params};
use crate::pipeline::Dispatch;
use crate::shaders::Kernel;
use crate::Context;
use opconform_backend::{ArgMaxDesc, AxisDirection, BackendError, DataType, Tensor};

/// Most dimensions the kernel takes (DirectML's limit).
const MAX_RANK: usize = 8;

/// Elements (or partials) one workgroup reduces: `CHUNK` in `shaders/argmax.comp`.
const CHUNK: u32 = Kernel::GROUP_SIZE * 32;

/// Reductions at least this long use workgroups; shorter ones one invocation per output
/// element (unless there are too few outputs to occupy the device).
const WORKGROUP_REDUCTION_FROM: u32 = 128;

/// Below this many outputs workgroups are used whatever the reduction's length.
const FEW_OUTPUTS: u32 = 64;

/// Bytes per partial: key high word, key low word, flat index.
const PARTIAL_BYTES: u64 = 12;

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

/// Merges neighbours of a list of dimensions (outermost first, each a size and its strides in
/// several tensors) that form one linear run in every tensor: the outer one's stride is the
/// inner one's times the inner size. Row-major order over the list is unchanged.
fn merge_runs(dims: Vec<(u32, Vec<u32>)>) -> Vec<(u32, Vec<u32>)> {
    let mut merged: Vec<(u32, Vec<u32>)> = Vec::with_capacity(dims.len());
    for (size, strides) in dims {
        if let Some((outer_size, outer_strides)) = merged.last_mut() {
            let linear = outer_strides
                .iter()
                .zip(&strides)
                .all(|(&outer, &inner)| u64::from(outer) == u64::from(inner) * u64::from(size));
            if linear {
                *outer_size *= size;
                *outer_strides = strides;
                continue;
            }
        }
        merged.push((size, strides));
    }
    merged
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
    let mut kept = Vec::new();
    let mut reduced = Vec::new();
    for d in 0..rank {
        let size = desc.input.sizes[d];
        if size == 1 {
            continue;
        }
        if desc.axes.contains(&(d as u32)) {
            reduced.push((size, vec![in_strides[d]]));
        } else {
            kept.push((size, vec![in_strides[d], out_strides[d]]));
        }
    }
    let kept = merge_runs(kept);
    let reduced = merge_runs(reduced);
    let kept_sizes: Vec<u32> = kept.iter().map(|(size, _)| *size).collect();
    let kept_in: Vec<u32> = kept.iter().map(|(_, s)| s[0]).collect();
    let kept_out: Vec<u32> = kept.iter().map(|(_, s)| s[1]).collect();
    let red_sizes: Vec<u32> = reduced.iter().map(|(size, _)| *size).collect();
    let red_in: Vec<u32> = reduced.iter().map(|(_, s)| s[0]).collect();
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
        .array(&kept_sizes, MAX_RANK)
        .array(&kept_in, MAX_RANK)
        .array(&kept_out, MAX_RANK)
        .array(&red_sizes, MAX_RANK)
        .array(&red_in, MAX_RANK);

    let gpu = &ctx.gpu;
    let params = Buffer::from_words(gpu, params.words(), "the ArgMax parameters")?;
    let input = upload(gpu, &inputs[0], "InputTensor")?;
    let output = upload(gpu, &outputs[0], "OutputTensor")?;
    let max_groups = gpu.limits.max_group_count_x;
    let count64 = u64::from(count);
    if !per_workgroup {
        let dispatches = Dispatch::split(
            Kernel::ArgMax,
            &[&params, &input, &output],
            u64::from(count.div_ceil(Kernel::GROUP_SIZE)),
            [0, 1, 0], // mode 0 (one invocation per output)
            max_groups,
        )?;
        ctx.executor.run(gpu, &dispatches)?;
        download(&output, &mut outputs[0]);
        return Ok(());
    }
    // Partials per output after each pass: ceil(red_count / CHUNK), then ceil(that / CHUNK), …
    let mut widths = vec![red_count.div_ceil(CHUNK)];
    while let Some(&last) = widths.last().filter(|&&w| w > 1) {
        widths.push(last.div_ceil(CHUNK));
    }
    let partials: Vec<Buffer> = widths
        .iter()
        .filter(|&&w| w > 1)
        .map(|&w| {
            Buffer::new(
                gpu,
                count64 * u64::from(w) * PARTIAL_BYTES,
                "ArgMax partials",
            )
        })
        .collect::<Result<_, _>>()?;
    let mut dispatches = Vec::new();
    for (pass, &width) in widths.iter().enumerate() {
        // Pass 0 reads the input (mode 1); later passes read the previous pass's partials.
        let (mode, read, entries) = match pass {
            0 => (1, &params, 0),
            _ => (2, &partials[pass - 1], widths[pass - 1]),
        };
        let write = partials.get(pass).unwrap_or(&params);
        dispatches.extend(Dispatch::split(
            Kernel::ArgMax,
            &[&params, &input, &output, read, write],
            count64 * u64::from(width),
            [mode, width, entries],
            max_groups,
        )?);
    }
    ctx.executor.run(gpu, &dispatches)?;
    download(&output, &mut outputs[0]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_runs_merge() {
        // Packed {2,3,4}: one run of 24.
        let dims = vec![(2, vec![12]), (3, vec![4]), (4, vec![1])];
        assert_eq!(merge_runs(dims), [(24, vec![1])]);
        // Transposed or padded neighbours stay apart; a broadcast pair merges (0 = 0 * size).
        let dims = vec![(2, vec![1]), (3, vec![2]), (4, vec![0]), (5, vec![0])];
        assert_eq!(
            merge_runs(dims),
            [(2, vec![1]), (3, vec![2]), (20, vec![0])]
        );
        // Every tensor must agree.
        let dims = vec![(2, vec![3, 4]), (3, vec![1, 1])];
        assert_eq!(merge_runs(dims.clone()), dims);
    }
}
