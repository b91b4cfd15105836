//! DML_ONE_HOT on the `one_hot` kernel, and the kernel's host side shared with OpenVINO
//! OneHot-1 ([`crate::ov_one_hot`]).

use crate::buffers::{download, upload, Buffer};
use crate::params::{count32, element_bits, strides32, Params};
use crate::pipeline::Dispatch;
use crate::shaders::Kernel;
use crate::Context;
use opconform_backend::{BackendError, DataType, OneHotDesc, Tensor};

/// Most output dimensions the kernel takes (OpenVINO's rank-8 indices give rank 9).
pub(crate) const MAX_RANK: usize = 9;

/// One run of the `one_hot` kernel: for each output element, OnValue when its sequence's
/// index designates its position along `axis`, OffValue otherwise.
#[derive(Debug, Clone)]
pub(crate) struct OneHotJob {
    /// Output sizes.
    pub sizes: Vec<u32>,
    /// Output strides in elements.
    pub out_strides: Vec<u32>,
    /// For each output dimension, the stride of the matching indices dimension (0 for `axis`).
    pub index_strides: Vec<u32>,
    /// The output dimension the sequences run along.
    pub axis: u32,
    /// Output element type.
    pub out_type: DataType,
    /// Index element type (INT32, INT64, UINT32 or UINT64).
    pub index_type: DataType,
    /// Whether a negative index counts from the end (DirectML) or selects nothing (OpenVINO).
    pub negative_wraps: bool,
    /// OffValue bits, (low word, high word).
    pub off: (u32, u32),
    /// OnValue bits, (low word, high word).
    pub on: (u32, u32),
}

impl OneHotJob {
    /// Runs the kernel, reading `indices` and writing `output`.
    pub fn run(
        &self,
        ctx: &Context,
        indices: &Tensor,
        output: &mut Tensor,
    ) -> Result<(), BackendError> {
        let rank = self.sizes.len();
        if rank == 0 || rank > MAX_RANK {
            return Err(BackendError::Unsupported {
                reason: format!("one-hot output of rank {rank}; the kernel takes 1 to {MAX_RANK}"),
            });
        }
        let count = count32(&output.desc, "the output")?;
        if count == 0 {
            return Ok(()); // an OpenVINO output with a 0 dimension: nothing to write
        }
        let index_size = match self.index_type {
            DataType::Int32 | DataType::Uint32 => 4,
            DataType::Int64 | DataType::Uint64 => 8,
            other => {
                return Err(BackendError::Unsupported {
                    reason: format!("{other} indices (the kernel reads 32- and 64-bit indices)"),
                })
            }
        };
        let mut params = Params::new();
        params
            .word(count)
            .word(rank as u32)
            .word(self.axis)
            .word(self.sizes[self.axis as usize])
            .word(self.out_type.size_in_bytes() as u32)
            .word(index_size)
            .word(u32::from(self.index_type.is_signed_integer()))
            .word(u32::from(self.negative_wraps))
            .word(self.off.0)
            .word(self.off.1)
            .word(self.on.0)
            .word(self.on.1)
            .array(&self.sizes, MAX_RANK)
            .array(&self.out_strides, MAX_RANK)
            .array(&self.index_strides, MAX_RANK);
        let gpu = &ctx.gpu;
        let params = Buffer::from_words(gpu, params.words(), "the one-hot parameters")?;
        let index_buffer = upload(gpu, indices, "the indices")?;
        let output_buffer = upload(gpu, output, "the output")?;
        let dispatches = Dispatch::split(
            Kernel::OneHot,
            &[&params, &index_buffer, &output_buffer],
            u64::from(count.div_ceil(Kernel::GROUP_SIZE)),
            [0; 3],
            gpu.limits.max_group_count_x,
        )?;
        ctx.executor.run(gpu, &dispatches)?;
        download(&output_buffer, output);
        Ok(())
    }
}

/// DML_ONE_HOT: inputs `[IndicesTensor, ValuesTensor]`, outputs `[OutputTensor]`.
pub(crate) fn run(
    ctx: &Context,
    desc: &OneHotDesc,
    inputs: &[Tensor],
    outputs: &mut [Tensor],
) -> Result<(), BackendError> {
    let values = &inputs[1];
    let rank = desc.values.dimension_count();
    // OffValue: element 0. OnValue: coordinate 1 along the innermost dimension of size > 1.
    let off = element_bits(values, &vec![0; rank], "ValuesTensor OffValue")?;
    let on_axis = (0..rank)
        .rev()
        .find(|&d| desc.values.sizes[d] > 1)
        .ok_or_else(|| BackendError::Internal {
            message: "ValuesTensor has no dimension of size > 1".to_string(),
        })?;
    let mut on_coordinates = vec![0u64; rank];
    on_coordinates[on_axis] = 1;
    let on = element_bits(values, &on_coordinates, "ValuesTensor OnValue")?;

    let axis = desc.axis as usize;
    let mut index_strides = strides32(&desc.indices, "IndicesTensor")?;
    index_strides[axis] = 0; // the indices' Axis dimension has size 1
    let job = OneHotJob {
        sizes: desc.output.sizes.clone(),
        out_strides: strides32(&desc.output, "OutputTensor")?,
        index_strides,
        axis: desc.axis,
        out_type: desc.output.data_type,
        index_type: desc.indices.data_type,
        negative_wraps: true,
        off,
        on,
    };
    job.run(ctx, &inputs[0], &mut outputs[0])
}
