//! How an ArgMax walks its input: dimensions in memory order, not logical order.
//!
//! Each input dimension of size > 1 is either *kept* (one output per coordinate) or *reduced*.
//! Besides its size and input stride, a reduced dimension carries an *index stride*: the stride
//! of the flat index over the reduced axes in increasing axis order (the value ArgMax
//! returns); a kept one a *slot stride*: the stride of the packed output.
//!
//! The plan sorts the dimensions by input stride (outermost first) and fuses neighbours that
//! are contiguous in both the input and the index, so that a transposed or permuted input is
//! read in the order it lies in memory, and a packed run of several dimensions is one long run.
//! A reduced dimension of stride 0 (broadcast) holds equal values: it is dropped, and its
//! last coordinate is remembered for DECREASING ([`Plan::last_offset`]).
//!
//! Then the innermost dimension decides the kernel:
//! - reduced ([`Shape::Scan`]): each output scans its elements as runs along that dimension;
//! - kept ([`Shape::Rows`]): a *tail* of neighbouring outputs is reduced side by side, one
//!   input row of the tail per reduced position, visited in increasing index order.

use crate::strided::Layout;

/// One dimension of the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dim {
    /// Number of coordinates.
    pub size: usize,
    /// Input stride in elements.
    pub stride: usize,
    /// Reduced dimension: stride of the returned index (at least 1). Kept dimension: 0.
    pub index_stride: usize,
    /// Kept dimension: stride of the packed output (at least 1). Reduced dimension: 0.
    pub slot_stride: usize,
}

impl Dim {
    /// True for a reduced dimension.
    pub fn is_reduced(&self) -> bool {
        self.index_stride > 0
    }
}

/// Which kernel reduces the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The innermost dimension is reduced: each output scans runs of its own elements.
    Scan,
    /// The innermost dimension is kept: outputs along it (the tail) are reduced side by side.
    Rows,
}

/// The walk of one ArgMax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The kernel.
    pub shape: Shape,
    /// Every dimension, outermost (in memory) first.
    pub order: Vec<Dim>,
    /// Kept dimensions outside the tail, outermost (in memory) first.
    pub outer: Vec<Dim>,
    /// Reduced dimensions. [`Shape::Scan`]: in memory order, the innermost last (the runs).
    /// [`Shape::Rows`]: in increasing axis order, so that the index grows along the walk.
    pub reduced: Vec<Dim>,
    /// [`Shape::Rows`]: the innermost kept dimension, whose outputs are reduced side by side.
    pub tail: Option<Dim>,
    /// Index to add for DECREASING: the last coordinate of every dropped broadcast dimension.
    pub last_offset: usize,
    /// [`Shape::Scan`]: the walk visits reduced elements in increasing index order.
    pub monotonic: bool,
    /// [`Shape::Rows`] made from short runs ([`Plan::short_runs_as_rows`]): the input
    /// elements per output the tail spans; `None` for a plan as [`Plan::new`] makes it.
    pub tail_gap: Option<usize>,
}

impl Plan {
    /// The plan for `layout` with the dimensions flagged in `reduced` reduced.
    pub fn new(layout: &Layout, reduced: &[bool]) -> Plan {
        let rank = reduced.len();
        let mut dims: Vec<Dim> = Vec::with_capacity(rank);
        let mut last_offset = 0;
        let (mut reduced_index, mut kept_slot) = (1usize, 1usize);
        for d in (0..rank).rev() {
            let (size, stride) = (layout.sizes[d], layout.strides[d]);
            let dim = if reduced[d] {
                let dim = Dim {
                    size,
                    stride,
                    index_stride: reduced_index,
                    slot_stride: 0,
                };
                reduced_index = reduced_index.saturating_mul(size);
                dim
            } else {
                let dim = Dim {
                    size,
                    stride,
                    index_stride: 0,
                    slot_stride: kept_slot,
                };
                kept_slot = kept_slot.saturating_mul(size);
                dim
            };
            if size <= 1 {
                continue;
            }
            if reduced[d] && stride == 0 {
                last_offset += (size - 1) * dim.index_stride;
                continue;
            }
            dims.push(dim);
        }
        dims.reverse();
        Plan::from_dims(dims, last_offset)
    }

    /// The plan walking `dims` (each of size > 1, none a reduced broadcast), with
    /// `last_offset` for DECREASING: [`Plan::new`] after it has read the layout.
    pub fn from_dims(mut dims: Vec<Dim>, last_offset: usize) -> Plan {
        // Memory order: larger strides outside. A kept broadcast dimension (stride 0) goes
        // outermost (its outputs are independent copies); ties keep the logical order.
        let sort_key = |dim: &Dim| {
            if dim.stride == 0 && !dim.is_reduced() {
                usize::MAX
            } else {
                dim.stride
            }
        };
        dims.sort_by_key(|d| std::cmp::Reverse(sort_key(d)));
        let order = fuse(dims);
        let shape = match order.last() {
            Some(d) if !d.is_reduced() => Shape::Rows,
            _ => Shape::Scan,
        };
        let mut outer: Vec<Dim> = order.iter().filter(|d| !d.is_reduced()).copied().collect();
        let mut reduced: Vec<Dim> = order.iter().filter(|d| d.is_reduced()).copied().collect();
        let tail = match shape {
            Shape::Rows => outer.pop(),
            Shape::Scan => None,
        };
        let monotonic = reduced
            .windows(2)
            .all(|w| w[0].index_stride > w[1].index_stride);
        if shape == Shape::Rows {
            reduced.sort_by_key(|d| std::cmp::Reverse(d.index_stride));
        }
        Plan {
            shape,
            order,
            outer,
            reduced,
            tail,
            last_offset,
            monotonic,
            tail_gap: None,
        }
    }

    /// A [`Shape::Scan`] plan whose outputs each reduce a few short runs, as a
    /// [`Shape::Rows`] plan: the innermost kept dimension becomes a tail spanning the runs
    /// between its elements, so that a vector folds neighbouring outputs' elements of one
    /// reduced position instead of each output scanning its runs one at a time. `None` unless
    /// each output reduces at most `max_bytes` of input including the gaps between the
    /// tail's elements (elements of `element_size` bytes), with at most `max_gap` input
    /// elements per output. Any reduced dimension may lie outside the tail: it only adds rows.
    pub fn short_runs_as_rows(
        &self,
        element_size: usize,
        max_gap: usize,
        max_bytes: usize,
    ) -> Option<Plan> {
        if self.shape != Shape::Scan {
            return None;
        }
        let (&tail, outer) = self.outer.split_last()?;
        let gap = tail.stride;
        let folded = self
            .reduced_len()
            .checked_mul(gap)?
            .checked_mul(element_size)?;
        if tail.size < 2 || gap == 0 || gap > max_gap || folded > max_bytes {
            return None;
        }
        let mut reduced = self.reduced.clone();
        reduced.sort_by_key(|d| std::cmp::Reverse(d.index_stride));
        Some(Plan {
            shape: Shape::Rows,
            order: self.order.clone(),
            outer: outer.to_vec(),
            reduced,
            tail: Some(tail),
            last_offset: self.last_offset,
            monotonic: true,
            tail_gap: Some(gap),
        })
    }

    /// Elements each output reduces (1 when nothing is left to reduce).
    pub fn reduced_len(&self) -> usize {
        self.reduced.iter().map(|d| d.size).product()
    }

    /// Number of outputs.
    pub fn outputs(&self) -> usize {
        self.outer.iter().map(|d| d.size).product::<usize>() * self.tail.map_or(1, |t| t.size)
    }
}

/// Fuses neighbours (outermost first) of the same kind that are contiguous in the input and
/// in the index or output: the outer one's strides are the inner one's times the inner size.
fn fuse(dims: Vec<Dim>) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::with_capacity(dims.len());
    for dim in dims {
        if let Some(outer) = out.last_mut() {
            let times = |inner: usize, outer: usize| inner.checked_mul(dim.size) == Some(outer);
            let contiguous = outer.is_reduced() == dim.is_reduced()
                && times(dim.stride, outer.stride)
                && times(dim.index_stride, outer.index_stride)
                && times(dim.slot_stride, outer.slot_stride);
            if contiguous {
                *outer = Dim {
                    size: outer.size * dim.size,
                    ..dim
                };
                continue;
            }
        }
        out.push(dim);
    }
    out
}

/// Where a walk stands: the sums of coordinate × stride, × index stride and × slot stride.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct At {
    /// Input offset in elements.
    pub offset: usize,
    /// Reduced index.
    pub index: usize,
    /// Output slot.
    pub slot: usize,
}

/// A row-major walk over `dims` (outermost first).
#[derive(Debug, Clone)]
pub(crate) struct Walk<'a> {
    dims: &'a [Dim],
    coords: [usize; crate::strided::MAX_DIMS],
    at: At,
    left: usize,
}

impl<'a> Walk<'a> {
    /// The walk from row-major position `start` on, `len` steps long.
    pub fn new(dims: &'a [Dim], start: usize, len: usize) -> Walk<'a> {
        let mut walk = Walk {
            dims,
            coords: [0; crate::strided::MAX_DIMS],
            at: At::default(),
            left: len,
        };
        let mut rest = start;
        for (d, dim) in dims.iter().enumerate().rev() {
            let c = rest % dim.size;
            rest /= dim.size;
            walk.coords[d] = c;
            walk.at.offset += c * dim.stride;
            walk.at.index += c * dim.index_stride;
            walk.at.slot += c * dim.slot_stride;
        }
        walk
    }
}

/// The dimension a line of [`for_each_line`] over `dims` steps along: the innermost one, or,
/// with no dimensions, a single step whose strides are never used.
pub(crate) fn line_dim(dims: &[Dim]) -> Dim {
    dims.last().copied().unwrap_or(Dim {
        size: 1,
        stride: 0,
        index_stride: 0,
        slot_stride: 0,
    })
}

/// The row-major walk of `len` steps over `dims` (outermost first) from position
/// `start`, a line of the innermost dimension at a time: `line(at, n)` for each, `at` where the
/// line's first step stands and `n` its steps (the first and last lines may be partial). The
/// caller steps along a line with the innermost dimension's strides in registers: a [`Walk`]
/// keeps its coordinates in memory and pays for them per step (about a quarter of a short-run
/// ArgMax's time).
pub(crate) fn for_each_line(
    dims: &[Dim],
    start: usize,
    len: usize,
    mut line: impl FnMut(At, usize),
) {
    let Some((inner, outer)) = dims.split_last() else {
        // No dimensions: one line, of the single step a walk over them has.
        if len > 0 {
            line(At::default(), len);
        }
        return;
    };
    if len == 0 {
        return;
    }
    // The lines' starts come from a walk over the outer dimensions, one step a line: no
    // division per line. The first line may start inside the innermost dimension.
    let first_line = start / inner.size;
    let lines = (start + len - 1) / inner.size - first_line + 1;
    let (mut skip, mut left) = (start % inner.size, len);
    for mut at in Walk::new(outer, first_line, lines) {
        at.offset += skip * inner.stride;
        at.index += skip * inner.index_stride;
        at.slot += skip * inner.slot_stride;
        let n = (inner.size - skip).min(left);
        line(at, n);
        left -= n;
        skip = 0;
    }
}

impl Iterator for Walk<'_> {
    type Item = At;

    #[inline]
    fn next(&mut self) -> Option<At> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let item = self.at;
        for (d, dim) in self.dims.iter().enumerate().rev() {
            self.coords[d] += 1;
            self.at.offset += dim.stride;
            self.at.index += dim.index_stride;
            self.at.slot += dim.slot_stride;
            if self.coords[d] < dim.size {
                return Some(item);
            }
            self.at.offset -= dim.size * dim.stride;
            self.at.index -= dim.size * dim.index_stride;
            self.at.slot -= dim.size * dim.slot_stride;
            self.coords[d] = 0;
        }
        Some(item)
    }
}

/// The layout of a FLOAT32 tensor of `sizes` (and `strides`, in elements), for unit tests.
#[cfg(test)]
pub(super) fn test_layout(sizes: &[u32], strides: Option<&[u32]>) -> Layout {
    use opconform_backend::{DataType, TensorDesc};
    let desc = TensorDesc::with_strides(DataType::Float32, sizes, strides).unwrap();
    Layout::new(&desc, desc.total_tensor_size_in_bytes as usize, "t").unwrap()
}

/// The plan of [`test_layout`]`(sizes, strides)` with the dimensions flagged in `reduced`
/// reduced (a plan counts elements, whatever their type), for unit tests.
#[cfg(test)]
pub(super) fn test_plan(sizes: &[u32], strides: Option<&[u32]>, reduced: &[bool]) -> Plan {
    Plan::new(&test_layout(sizes, strides), reduced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cover_the_walk_step_by_step_from_any_start() {
        // Three dimensions, none fusable; every start and length, against the step-by-step walk.
        let dims = [
            Dim {
                size: 3,
                stride: 40,
                index_stride: 0,
                slot_stride: 1,
            },
            Dim {
                size: 2,
                stride: 7,
                index_stride: 0,
                slot_stride: 9,
            },
            Dim {
                size: 4,
                stride: 1,
                index_stride: 0,
                slot_stride: 3,
            },
        ];
        let total = 24;
        for start in 0..total {
            for len in 0..=total - start {
                let mut lines = Vec::new();
                for_each_line(&dims, start, len, |at, n| {
                    assert!(n >= 1, "an empty line");
                    lines.extend((0..n).map(|i| (at.offset + i, at.slot + 3 * i)));
                });
                let walked: Vec<_> = Walk::new(&dims, start, len)
                    .map(|a| (a.offset, a.slot))
                    .collect();
                assert_eq!(lines, walked, "start {start} len {len}");
            }
        }
        // No dimensions: the walk's one step, as one line at the origin.
        let mut lines = Vec::new();
        for_each_line(&[], 0, 1, |at, n| lines.push((at, n)));
        assert_eq!(lines, [(At::default(), 1)]);
    }

    /// A reduced dimension.
    fn dim(size: usize, stride: usize, index_stride: usize) -> Dim {
        Dim {
            size,
            stride,
            index_stride,
            slot_stride: 0,
        }
    }

    /// A kept dimension.
    fn kept(size: usize, stride: usize, slot_stride: usize) -> Dim {
        Dim {
            size,
            stride,
            index_stride: 0,
            slot_stride,
        }
    }

    #[test]
    fn packed_inner_reduction_fuses_into_one_run() {
        // {4, 5, 6} reducing axes 1 and 2: one run of 30 per output.
        let plan = Plan::new(&test_layout(&[4, 5, 6], None), &[false, true, true]);
        assert_eq!(plan.shape, Shape::Scan);
        assert_eq!(plan.outer, [kept(4, 30, 1)]);
        assert_eq!(plan.reduced, [dim(30, 1, 1)]);
        assert!(plan.monotonic);
    }

    #[test]
    fn transposed_input_is_walked_in_memory_order() {
        // Logical {3, 4} stored transposed (strides {1, 3}).
        // Axis 1 (logical inner) lies outermost in memory: side-by-side outputs along axis 0.
        let plan = Plan::new(&test_layout(&[3, 4], Some(&[1, 3])), &[false, true]);
        assert_eq!(plan.shape, Shape::Rows);
        assert_eq!(plan.tail, Some(kept(3, 1, 1)));
        assert_eq!(plan.reduced, [dim(4, 3, 1)]);
        assert!(plan.outer.is_empty());
        // Axis 0 is contiguous in memory: runs.
        let plan = Plan::new(&test_layout(&[3, 4], Some(&[1, 3])), &[true, false]);
        assert_eq!(plan.shape, Shape::Scan);
        assert_eq!(plan.outer, [kept(4, 3, 1)]);
        assert_eq!(plan.reduced, [dim(3, 1, 1)]);
        // Both: the walk runs along axis 0 (index stride 4), not in index order.
        let plan = Plan::new(&test_layout(&[3, 4], Some(&[1, 3])), &[true, true]);
        assert_eq!(plan.reduced, [dim(4, 3, 1), dim(3, 1, 4)]);
        assert!(!plan.monotonic);
    }

    #[test]
    fn broadcast_reductions_are_dropped_with_their_last_index() {
        // {2, 5, 3} with strides {3, 0, 1}, reducing axes 1 and 2: axis 1 repeats the same
        // elements, so its last coordinate (4, index stride 3) only matters for DECREASING.
        let plan = Plan::new(
            &test_layout(&[2, 5, 3], Some(&[3, 0, 1])),
            &[false, true, true],
        );
        assert_eq!(plan.reduced, [dim(3, 1, 1)]);
        assert_eq!(plan.last_offset, 12);
        // A kept broadcast dimension goes outermost.
        let plan = Plan::new(&test_layout(&[4, 6], Some(&[0, 1])), &[false, true]);
        assert_eq!(plan.outer, [kept(4, 0, 1)]);
    }

    #[test]
    fn padded_rank_five_keeps_padded_dimensions_apart() {
        // {2, 3, 4, 5, 6} with the innermost padded to 8: axis 3 cannot fuse with axis 4.
        let strides = [3 * 4 * 5 * 8, 4 * 5 * 8, 5 * 8, 8, 1];
        let plan = Plan::new(
            &test_layout(&[2, 3, 4, 5, 6], Some(&strides)),
            &[false, true, false, true, true],
        );
        assert_eq!(plan.shape, Shape::Scan);
        assert_eq!(plan.outer, [kept(2, 480, 4), kept(4, 40, 1)]);
        assert_eq!(plan.reduced, [dim(3, 160, 30), dim(5, 8, 6), dim(6, 1, 1)]);
        assert!(plan.monotonic);
        assert_eq!(plan.reduced_len(), 90);
        assert_eq!(plan.outputs(), 8);
    }

    #[test]
    fn rows_walk_reduced_dimensions_in_index_order() {
        // Logical {4, 3, 5} with strides {1, 20, 4}: memory order is axis 1, axis 2, axis 0.
        // Reducing axes 1 and 2 leaves axis 0 innermost: rows in index order (axis 1, then 2).
        let plan = Plan::new(
            &test_layout(&[4, 3, 5], Some(&[1, 20, 4])),
            &[false, true, true],
        );
        assert_eq!(plan.shape, Shape::Rows);
        assert_eq!(plan.tail, Some(kept(4, 1, 1)));
        assert_eq!(plan.reduced, [dim(15, 4, 1)]);
        let plan = Plan::new(
            &test_layout(&[4, 3, 5], Some(&[1, 4, 12])),
            &[false, true, true],
        );
        assert_eq!(plan.reduced, [dim(3, 4, 5), dim(5, 12, 1)]);
    }

    #[test]
    fn padded_order_keeps_kept_and_reduced_interleaved() {
        let strides = [3 * 4 * 5 * 8, 4 * 5 * 8, 5 * 8, 8, 1];
        let plan = Plan::new(
            &test_layout(&[2, 3, 4, 5, 6], Some(&strides)),
            &[false, true, false, true, true],
        );
        assert_eq!(
            plan.order,
            [
                kept(2, 480, 4),
                dim(3, 160, 30),
                kept(4, 40, 1),
                dim(5, 8, 6),
                dim(6, 1, 1)
            ]
        );
    }

    #[test]
    fn walk_enumerates_offsets_indices_and_slots() {
        let dims = [kept(2, 10, 3), dim(3, 1, 1)];
        let all: Vec<(usize, usize, usize)> = Walk::new(&dims, 0, 6)
            .map(|a| (a.offset, a.index, a.slot))
            .collect();
        assert_eq!(
            all,
            [
                (0, 0, 0),
                (1, 1, 0),
                (2, 2, 0),
                (10, 0, 3),
                (11, 1, 3),
                (12, 2, 3)
            ]
        );
        let part: Vec<(usize, usize, usize)> = Walk::new(&dims, 2, 3)
            .map(|a| (a.offset, a.index, a.slot))
            .collect();
        assert_eq!(part, all[2..5]);
        assert_eq!(Walk::new(&[], 0, 1).collect::<Vec<_>>(), [At::default()]);
    }
}
