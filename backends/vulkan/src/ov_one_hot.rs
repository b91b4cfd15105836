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
    let folded = fold_dimensions(
        &desc.output.sizes,
        &strides32(&desc.output, "output")?,
        &index_strides,
        axis,
    );
    if folded.sizes.len() > MAX_RANK {
        return Err(BackendError::Unsupported {
            reason: format!(
                "an output of rank {} that folds to rank {}; the kernel takes up to {MAX_RANK}",
                n + 1,
                folded.sizes.len()
            ),
        });
    }
    let job = OneHotJob {
        sizes: folded.sizes,
        out_strides: folded.out_strides,
        index_strides: folded.index_strides,
        axis: folded.axis as u32,
        out_type: desc.output.data_type,
        index_type: desc.indices.data_type,
        negative_wraps: false,
        off,
        on,
    };
    job.run(ctx, &inputs[0], &mut outputs[0])
}

/// An output layout with fewer dimensions that addresses the same elements.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Folded {
    sizes: Vec<u32>,
    out_strides: Vec<u32>,
    index_strides: Vec<u32>,
    axis: usize,
}

/// Folds an output layout (sizes, output strides, index strides per output dimension, the
/// one-hot axis) into as few dimensions as address the same elements, so that outputs of any
/// rank reach the kernel (OneHot-1 sets no rank limit): size-1 dimensions other than the axis
/// go, and two neighbours other than the axis merge when both strides of the outer one are the
/// inner one's times its size.
fn fold_dimensions(
    sizes: &[u32],
    out_strides: &[u32],
    index_strides: &[u32],
    axis: usize,
) -> Folded {
    let mut folded = Folded {
        sizes: Vec::new(),
        out_strides: Vec::new(),
        index_strides: Vec::new(),
        axis: usize::MAX,
    };
    let merges_into = |folded: &Folded, d: usize| -> Option<usize> {
        let last = folded.sizes.len().checked_sub(1)?;
        let inner = u64::from(sizes[d]);
        let matches =
            |outer: u32, inner_stride: u32| u64::from(outer) == u64::from(inner_stride) * inner;
        (last != folded.axis
            && matches(folded.out_strides[last], out_strides[d])
            && matches(folded.index_strides[last], index_strides[d]))
        .then_some(last)
    };
    for d in 0..sizes.len() {
        if d == axis {
            folded.axis = folded.sizes.len();
        } else if sizes[d] == 1 {
            continue;
        } else if let Some(last) = merges_into(&folded, d) {
            folded.sizes[last] *= sizes[d];
            folded.out_strides[last] = out_strides[d];
            folded.index_strides[last] = index_strides[d];
            continue;
        }
        folded.sizes.push(sizes[d]);
        folded.out_strides.push(out_strides[d]);
        folded.index_strides.push(index_strides[d]);
    }
    folded
}

#[cfg(test)]
mod fold_tests {
    use super::*;

    #[test]
    fn packed_high_rank_outputs_fold_around_the_axis() {
        // Output {1,2,1,1,1,1,1,1,1,1,1,2,3} packed, axis 12 (depth 3), indices packed.
        let sizes = [1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3];
        let out = [12, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 3, 1];
        let index = [4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0];
        let folded = fold_dimensions(&sizes, &out, &index, 12);
        assert_eq!(folded.sizes, [4, 3]);
        assert_eq!(folded.out_strides, [3, 1]);
        assert_eq!(folded.index_strides, [1, 0]);
        assert_eq!(folded.axis, 1);
    }

    #[test]
    fn the_axis_and_unmergeable_strides_are_kept() {
        // {2,3,2}, axis 1, output strided with padding in the last dimension.
        let folded = fold_dimensions(&[2, 3, 2], &[12, 4, 1], &[2, 0, 1], 1);
        assert_eq!(folded.sizes, [2, 3, 2]);
        assert_eq!(folded.axis, 1);
        // Size-1 axis stays; outer size-1 dimensions go.
        let folded = fold_dimensions(&[1, 1, 5], &[5, 5, 1], &[5, 0, 1], 1);
        assert_eq!(folded.sizes, [1, 5]);
        assert_eq!(folded.axis, 0);
    }
}
