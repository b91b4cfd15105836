//! Strided addressing: a tensor's layout checked against its buffer ([`Layout`]), row-major
//! walks over index spaces shared by several strided tensors ([`Nest`]), and writing a packed
//! result into a strided output ([`write_packed`]).
//!
//! A [`Layout`] is only built after checking that every element its sizes and strides can
//! address lies inside the buffer, so kernels that stay within a layout's sizes never index out
//! of bounds.

use opconform_backend::{BackendError, TensorDesc};

/// The most dimensions a walk handles (DirectML allows 8, OpenVINO OneHot-1 outputs 9).
pub(crate) const MAX_DIMS: usize = 16;

/// A tensor's sizes and strides in elements, checked to fit its buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Size of each dimension, outermost first.
    pub sizes: Vec<usize>,
    /// Stride in elements of each dimension.
    pub strides: Vec<usize>,
    /// Bytes per element.
    pub element_size: usize,
    /// Number of logical elements (product of the sizes; 1 for 0-D).
    pub count: usize,
}

/// An internal error with `message`.
pub(crate) fn internal(message: impl Into<String>) -> BackendError {
    BackendError::Internal {
        message: message.into(),
    }
}

impl Layout {
    /// The layout of `desc` over a buffer of `buffer_len` bytes, or an error when an element
    /// it addresses would lie outside the buffer (or a size does not fit this machine).
    pub fn new(desc: &TensorDesc, buffer_len: usize, name: &str) -> Result<Layout, BackendError> {
        let fail = |what: &str| internal(format!("{name} ({}): {what}", desc.summary()));
        if desc.sizes.len() > MAX_DIMS {
            return Err(fail("too many dimensions"));
        }
        if let Some(strides) = &desc.strides {
            if strides.len() != desc.sizes.len() {
                return Err(fail("stride count differs from the dimension count"));
            }
        }
        let to_usize = |v: u64| usize::try_from(v).map_err(|_| fail("too large for this host"));
        let sizes = desc
            .sizes
            .iter()
            .map(|&s| to_usize(u64::from(s)))
            .collect::<Result<Vec<_>, _>>()?;
        let strides = desc
            .effective_strides()
            .into_iter()
            .map(to_usize)
            .collect::<Result<Vec<_>, _>>()?;
        let count = sizes
            .iter()
            .try_fold(1usize, |acc, &s| acc.checked_mul(s))
            .ok_or_else(|| fail("element count overflows"))?;
        let element_size = desc.data_type.size_in_bytes();
        if count > 0 {
            let last = sizes
                .iter()
                .zip(&strides)
                .try_fold(0usize, |acc, (&size, &stride)| {
                    acc.checked_add((size - 1).checked_mul(stride)?)
                })
                .ok_or_else(|| fail("element offset overflows"))?;
            let end = last
                .checked_add(1)
                .and_then(|n| n.checked_mul(element_size))
                .ok_or_else(|| fail("element offset overflows"))?;
            if end > buffer_len {
                return Err(fail(&format!(
                    "addresses {end} bytes but the buffer holds {buffer_len}"
                )));
            }
        }
        Ok(Layout {
            sizes,
            strides,
            element_size,
            count,
        })
    }

    /// True when the elements lie packed in row-major order from offset 0 (strides of size-1
    /// dimensions do not matter).
    pub fn is_packed(&self) -> bool {
        let mut expected = 1usize;
        for (&size, &stride) in self.sizes.iter().zip(&self.strides).rev() {
            if size > 1 && stride != expected {
                return false;
            }
            expected = expected.saturating_mul(size);
        }
        true
    }

    /// The same layout with dimension `dim` shrunk to `size` (at most its current size, so the
    /// result still fits the buffer).
    pub fn shrunk(&self, dim: usize, size: usize) -> Layout {
        let mut out = self.clone();
        if let Some(s) = out.sizes.get_mut(dim) {
            *s = size.min(*s);
        }
        out.count = out.sizes.iter().product();
        out
    }
}

/// Packed row-major strides for `sizes`.
pub(crate) fn packed_strides(sizes: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(sizes[i + 1]);
    }
    strides
}

/// A row-major walk over an index space shared by `K` tensors, each with its own strides.
///
/// Dimensions of size 1 are dropped; [`Nest::merged`] also merges neighbouring dimensions that
/// are contiguous in every tensor, so a packed tensor walks as one long row. The walk hands
/// out *rows*: runs along the innermost walked dimension.
#[derive(Debug, Clone)]
pub(crate) struct Nest<const K: usize> {
    rank: usize,
    sizes: [usize; MAX_DIMS],
    strides: [[usize; K]; MAX_DIMS],
    /// Original dimension of each walked one (meaningful for unmerged nests).
    dims: [usize; MAX_DIMS],
    len: usize,
}

impl<const K: usize> Nest<K> {
    /// A walk over `sizes` with dimensions contiguous in every tensor merged.
    ///
    /// `sizes` and each of `strides` have the same length, at most [`MAX_DIMS`].
    pub fn merged(sizes: &[usize], strides: [&[usize]; K]) -> Nest<K> {
        Nest::build(sizes, strides, true)
    }

    // Only the tests use it since NonZeroCoordinates follows runs itself.
    #[cfg_attr(not(test), allow(dead_code))]
    /// A walk over `sizes` keeping every dimension of size > 1 (so [`Nest::dims`] maps walked
    /// coordinates back to the original dimensions).
    pub fn unmerged(sizes: &[usize], strides: [&[usize]; K]) -> Nest<K> {
        Nest::build(sizes, strides, false)
    }

    fn build(sizes: &[usize], strides: [&[usize]; K], merge: bool) -> Nest<K> {
        let mut nest = Nest {
            rank: 0,
            sizes: [1; MAX_DIMS],
            strides: [[0; K]; MAX_DIMS],
            dims: [0; MAX_DIMS],
            len: sizes.iter().product(),
        };
        for (d, &size) in sizes.iter().enumerate().take(MAX_DIMS) {
            if size == 1 {
                continue;
            }
            let stride: [usize; K] =
                std::array::from_fn(|k| strides[k].get(d).copied().unwrap_or(0));
            if merge && nest.rank > 0 {
                let prev = nest.rank - 1;
                let contiguous =
                    (0..K).all(|k| stride[k].checked_mul(size) == Some(nest.strides[prev][k]));
                if contiguous {
                    nest.sizes[prev] *= size;
                    nest.strides[prev] = stride;
                    nest.dims[prev] = d;
                    continue;
                }
            }
            nest.sizes[nest.rank] = size;
            nest.strides[nest.rank] = stride;
            nest.dims[nest.rank] = d;
            nest.rank += 1;
        }
        nest
    }

    /// Number of elements walked.
    pub fn len(&self) -> usize {
        self.len
    }

    // Only the tests use it since NonZeroCoordinates follows runs itself.
    #[cfg_attr(not(test), allow(dead_code))]
    /// Original dimension of each walked dimension.
    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.rank]
    }

    /// Strides of the innermost walked dimension (those of rows), zero when nothing is walked.
    pub fn inner_strides(&self) -> [usize; K] {
        if self.rank == 0 {
            [0; K]
        } else {
            self.strides[self.rank - 1]
        }
    }

    /// Calls `row(flat, offsets, len, coordinates)` for each run of elements `start..end` in
    /// row-major order, where a run lies along the innermost walked dimension: `flat` is the
    /// row-major index of its first element, `offsets` that element's offset in each tensor,
    /// `len` the run's length and `coordinates` the walked coordinates of its first element.
    /// Successive elements of a run lie [`Nest::inner_strides`] apart.
    #[inline]
    pub fn rows(
        &self,
        start: usize,
        end: usize,
        mut row: impl FnMut(usize, [usize; K], usize, &[usize]),
    ) {
        let end = end.min(self.len);
        if start >= end {
            return;
        }
        let rank = self.rank;
        if rank == 0 {
            row(0, [0; K], 1, &[]);
            return;
        }
        let mut coords = [0usize; MAX_DIMS];
        let mut offsets = [0usize; K];
        if start > 0 {
            let mut rest = start;
            for d in (0..rank).rev() {
                coords[d] = rest % self.sizes[d];
                rest /= self.sizes[d];
                for (k, offset) in offsets.iter_mut().enumerate() {
                    *offset += coords[d] * self.strides[d][k];
                }
            }
        }
        let last = rank - 1;
        let mut flat = start;
        loop {
            let run = (self.sizes[last] - coords[last]).min(end - flat);
            row(flat, offsets, run, &coords[..rank]);
            flat += run;
            if flat >= end {
                return;
            }
            // The run reached the end of its row: carry into the outer dimensions.
            coords[last] += run;
            for (k, offset) in offsets.iter_mut().enumerate() {
                *offset += run * self.strides[last][k];
            }
            let mut d = last;
            while coords[d] >= self.sizes[d] {
                for (k, offset) in offsets.iter_mut().enumerate() {
                    *offset -= coords[d] * self.strides[d][k];
                }
                coords[d] = 0;
                if d == 0 {
                    return;
                }
                d -= 1;
                coords[d] += 1;
                for (k, offset) in offsets.iter_mut().enumerate() {
                    *offset += self.strides[d][k];
                }
            }
        }
    }
}

/// Copies `packed` (the elements of `layout` in row-major order) into `out` through `layout`'s
/// strides. Where strides make elements share a slot, the last in row-major order wins.
pub(crate) fn scatter(packed: &[u8], layout: &Layout, out: &mut [u8]) {
    let size = layout.element_size;
    let source = packed_strides(&layout.sizes);
    let nest = Nest::merged(&layout.sizes, [&layout.strides, &source]);
    let [dst_step, src_step] = nest.inner_strides();
    nest.rows(0, nest.len(), |_, [dst, src], len, _| {
        for j in 0..len {
            let d = (dst + j * dst_step) * size;
            let s = (src + j * src_step) * size;
            out[d..d + size].copy_from_slice(&packed[s..s + size]);
        }
    });
}

/// Allocates `len` zero bytes, reporting failure instead of aborting.
pub(crate) fn zeroed(len: usize) -> Result<Vec<u8>, BackendError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| internal(format!("cannot allocate {len} bytes")))?;
    v.resize(len, 0);
    Ok(v)
}

/// Lets `produce` write the elements of `layout` packed in row-major order, then stores them
/// into `out`: directly when `layout` is packed, otherwise through a temporary buffer that is
/// scattered through the strides.
pub(crate) fn write_packed(
    layout: &Layout,
    out: &mut [u8],
    produce: impl FnOnce(&mut [u8]) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let bytes = layout.count * layout.element_size;
    if layout.is_packed() {
        let target = out
            .get_mut(..bytes)
            .ok_or_else(|| internal("output buffer shorter than its elements"))?;
        produce(target)
    } else {
        let mut packed = zeroed(bytes)?;
        produce(&mut packed)?;
        scatter(&packed, layout, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::DataType;

    fn collect<const K: usize>(
        nest: &Nest<K>,
        start: usize,
        end: usize,
    ) -> Vec<(usize, [usize; K])> {
        let step = nest.inner_strides();
        let mut out = Vec::new();
        nest.rows(start, end, |flat, offsets, len, _| {
            for j in 0..len {
                out.push((flat + j, std::array::from_fn(|k| offsets[k] + j * step[k])));
            }
        });
        out
    }

    #[test]
    fn packed_tensor_walks_as_one_row() {
        let nest = Nest::merged(&[2, 3, 4], [&[12, 4, 1]]);
        assert_eq!(nest.dims().len(), 1);
        let seen = collect(&nest, 0, 24);
        assert_eq!(seen.len(), 24);
        assert!(seen.iter().all(|&(f, [o])| f == o));
    }

    #[test]
    fn strided_walk_matches_hand_offsets() {
        // sizes {2,3}, strides {4,1} (padded rows) and {0,1} (broadcast rows).
        let nest = Nest::merged(&[2, 3], [&[4, 1], &[0, 1]]);
        let seen = collect(&nest, 0, 6);
        let expected = [
            (0, [0, 0]),
            (1, [1, 1]),
            (2, [2, 2]),
            (3, [4, 0]),
            (4, [5, 1]),
            (5, [6, 2]),
        ];
        assert_eq!(seen, expected);
        // Starting mid-row.
        assert_eq!(collect(&nest, 2, 5), expected[2..5]);
    }

    #[test]
    fn unmerged_keeps_dims_and_coordinates() {
        let nest = Nest::<1>::unmerged(&[1, 2, 1, 3], [&[6, 3, 3, 1]]);
        assert_eq!(nest.dims(), &[1, 3]);
        let mut rows = Vec::new();
        nest.rows(1, 6, |flat, [off], len, coords| {
            rows.push((flat, off, len, coords.to_vec()))
        });
        assert_eq!(rows, vec![(1, 1, 2, vec![0, 1]), (3, 3, 3, vec![1, 0])]);
    }

    #[test]
    fn zero_d_walks_one_element() {
        let nest = Nest::<1>::merged(&[], [&[]]);
        assert_eq!(collect(&nest, 0, 1), vec![(0, [0])]);
        let empty = Nest::<1>::merged(&[2, 0], [&[0, 1]]);
        assert!(collect(&empty, 0, 10).is_empty());
    }

    #[test]
    fn layout_rejects_short_buffers() {
        let desc = TensorDesc::with_strides(DataType::Uint8, &[2, 3], Some(&[4, 1])).unwrap();
        assert!(Layout::new(&desc, 8, "t").is_ok());
        // The last element, (1,2), is at offset 4 + 2 = 6: seven bytes are needed.
        assert!(Layout::new(&desc, 7, "t").is_ok());
        assert!(Layout::new(&desc, 6, "t").is_err());
        assert!(!Layout::new(&desc, 8, "t").unwrap().is_packed());
        let packed = TensorDesc::with_strides(DataType::Uint8, &[1, 3], Some(&[7, 1])).unwrap();
        assert!(Layout::new(&packed, 4, "t").unwrap().is_packed());
    }

    #[test]
    fn scatter_follows_strides() {
        let desc = TensorDesc::with_strides(DataType::Uint8, &[2, 2], Some(&[3, 1])).unwrap();
        let layout = Layout::new(&desc, 8, "t").unwrap();
        let mut out = vec![9u8; 8];
        scatter(&[1, 2, 3, 4], &layout, &mut out);
        assert_eq!(out, [1, 2, 9, 3, 4, 9, 9, 9]);
    }
}
