//! Reduced dimensions lying in memory out of index order: a permuted FLOAT16 view
//! `[40, 9000, 3, 2]` (strides `[54000, 2, 18000, 1]`) reduced over axes 1,2, whose axis 2 is
//! the outer one in memory but the inner one in the index. A plan visiting rows in index order
//! jumps across the input at every row, and lists its rows again for every item.
//!
//! The reduced dimensions outside (in memory) the innermost ones that lie in index order are
//! *groups*, walked one coordinate at a time: each group's reduction is a plan of its own
//! ([`Plan::from_dims`] without them), whose reduced dimensions lie in index order, so every
//! kernel may take it; it writes each output's index (within the group) into a buffer. Each
//! output then keeps the best of its groups' results by (key, index), the key read back from
//! the input: ties resolve as in index order, whatever order the groups are walked in.

use super::lanes::Lanes;
use super::plan::{for_each_line, line_dim, Dim, Plan, Walk};
use super::{Job, Outputs};
use crate::element::{Element, FromIndex};
use crate::parallel::{for_each_chunk_mut, threads, PARALLEL_MIN_ELEMENTS};
use crate::thresholds::{
    ARGMAX_GROUP_MAX_GROUPS, ARGMAX_GROUP_MAX_TAIL_BYTES, ARGMAX_GROUP_MIN_BLOCK_BYTES,
    ARGMAX_GROUP_MIN_ELEMENTS, ARGMAX_GROUP_MIN_ROWS,
};

/// The split of an ArgMax into groups (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OutOfOrder {
    /// The reduced dimensions walked one coordinate at a time, outermost (in memory) first.
    groups: Vec<Dim>,
    /// One group's reduction: every other dimension, at the group's first element, its
    /// outputs numbered in the order [`OutOfOrder::kept`] walks them (not the output's), so
    /// that the merge reads them in turn.
    group_plan: Plan,
    /// The kept dimensions, outermost (in memory) first, with the output's slot strides.
    kept: Vec<Dim>,
    /// The group plan's reduced dimensions as (index stride, size, input stride): the digits
    /// of an index within a group.
    digits: Vec<(u32, u32, usize)>,
}

/// Outputs merged per task.
const MERGE_TASK_OUTPUTS: usize = 1 << 14;

impl OutOfOrder {
    /// The split of `plan` over `T`, or None when its reduced dimensions lie in index order
    /// in memory, or when the plan that visits rows in index order costs less
    /// ([`OutOfOrder::pays`]).
    pub(super) fn new<T: Lanes>(plan: &Plan) -> Option<OutOfOrder> {
        // Checked first without allocating: most plans' reduced dimensions lie in index order.
        let mut in_memory_order = plan.order.iter().filter(|d| d.is_reduced());
        let in_index_order = in_memory_order
            .clone()
            .zip(in_memory_order.nth(1).into_iter().chain(in_memory_order))
            .all(|(outer, inner)| outer.index_stride > inner.index_stride);
        if in_index_order {
            return None;
        }
        let reduced: Vec<Dim> = plan
            .order
            .iter()
            .filter(|d| d.is_reduced())
            .copied()
            .collect();
        // The innermost dimensions whose index strides shrink inwards, as memory order's do.
        let mut first_inner = reduced.len().checked_sub(1)?;
        while first_inner > 0
            && reduced[first_inner - 1].index_stride > reduced[first_inner].index_stride
        {
            first_inner -= 1;
        }
        let (groups, inner) = reduced.split_at(first_inner);
        if !Self::pays::<T>(plan, groups, inner) {
            return None;
        }
        let kept: Vec<Dim> = plan
            .order
            .iter()
            .filter(|d| !d.is_reduced())
            .copied()
            .collect();
        // Walk positions as the group plan's output slots: row-major over `kept`.
        let mut position = 1;
        let mut positions = vec![0; kept.len()];
        for (p, dim) in positions.iter_mut().zip(&kept).rev() {
            *p = position;
            position *= dim.size;
        }
        let mut k = 0;
        let rest: Vec<Dim> = plan
            .order
            .iter()
            .filter(|d| !groups.contains(d))
            .map(|&d| {
                if d.is_reduced() {
                    return d;
                }
                k += 1;
                Dim {
                    slot_stride: positions[k - 1],
                    ..d
                }
            })
            .collect();
        let group_plan = Plan::from_dims(rest, 0);
        let digits = group_plan
            .reduced
            .iter()
            .map(|d| (d.index_stride as u32, d.size as u32, d.stride))
            .collect();
        Some(OutOfOrder {
            groups: groups.to_vec(),
            group_plan,
            kept,
            digits,
        })
    }

    /// Whether splitting `plan` into `groups` of the `inner` reduced dimensions pays: some
    /// groups, at most [`ARGMAX_GROUP_MAX_GROUPS`], each a block of at least
    /// [`ARGMAX_GROUP_MIN_BLOCK_BYTES`] (finer, every group's pass reads the cache lines of
    /// all of them), with work enough to pay for its own plan and merge
    /// ([`ARGMAX_GROUP_MIN_ROWS`], [`ARGMAX_GROUP_MIN_ELEMENTS`]); and, with the innermost
    /// dimension kept, a tail under [`ARGMAX_GROUP_MAX_TAIL_BYTES`]: a wide one folds its
    /// rows in index order at little cost per row.
    fn pays<T: Lanes>(plan: &Plan, groups: &[Dim], inner: &[Dim]) -> bool {
        let Some(innermost_group) = groups.last() else {
            return false;
        };
        let group_count: usize = groups.iter().map(|d| d.size).product();
        let rows: usize = inner.iter().map(|d| d.size).product();
        let narrow_tail = plan
            .tail
            .is_none_or(|tail| tail.size.saturating_mul(T::SIZE) < ARGMAX_GROUP_MAX_TAIL_BYTES);
        group_count <= ARGMAX_GROUP_MAX_GROUPS
            && innermost_group.stride.saturating_mul(T::SIZE) >= ARGMAX_GROUP_MIN_BLOCK_BYTES
            && rows >= ARGMAX_GROUP_MIN_ROWS
            && plan.outputs().saturating_mul(rows) >= ARGMAX_GROUP_MIN_ELEMENTS
            && narrow_tail
    }

    /// The input offset (elements, from the group's first) of the element at `index` within
    /// a group: the coordinate along each reduced dimension is the index's digit in the mixed
    /// radix of the reduced axes (indices and index strides are below 2^32: `argmax::run`).
    #[inline(always)]
    fn offset_in_group(&self, index: u32) -> usize {
        if let [(index_stride, _, stride)] = self.digits[..] {
            return (index / index_stride) as usize * stride;
        }
        self.digits
            .iter()
            .map(|&(index_stride, size, stride)| (index / index_stride % size) as usize * stride)
            .sum()
    }
}

impl Job<'_> {
    /// Reduces every output of a plan split into groups: each group's plan into a buffer of
    /// indices, merged into each output's best (key, index); the last merge writes the
    /// outputs.
    pub(super) fn out_of_order<T: Lanes, O: FromIndex, const LAST: bool>(
        &self,
        outputs: &Outputs<O>,
        split: &OutOfOrder,
    ) {
        let n = self.plan.outputs();
        let group_count: usize = split.groups.iter().map(|d| d.size).product();
        let mut found = vec![0u8; n * 4];
        // Each output's best so far, in the order the kept dimensions are walked.
        let mut best: Vec<(T::Key, usize)> = vec![(T::MIN_KEY, 0); n];
        let rows = split.group_plan.reduced_len();
        let parallel = n.saturating_mul(rows) >= PARALLEL_MIN_ELEMENTS && threads() > 1;
        let line = line_dim(&split.kept);
        for (g, group) in Walk::new(&split.groups, 0, group_count).enumerate() {
            let job = Job {
                data: &self.data[group.offset * T::SIZE..],
                plan: &split.group_plan,
                isa: self.isa,
            };
            job.argmax::<T, u32, LAST>(&mut found);
            let (first, last) = (g == 0, g + 1 == group_count);
            let found = &found;
            for_each_chunk_mut(&mut best, MERGE_TASK_OUTPUTS, parallel, |c, part| {
                let start = c * MERGE_TASK_OUTPUTS;
                let mut p = 0;
                for_each_line(&split.kept, start, part.len(), |at, count| {
                    for j in 0..count {
                        let entry = &mut part[p];
                        let within = u32::read(&found[(start + p) * 4..]);
                        p += 1;
                        let offset = group.offset
                            + at.offset
                            + j * line.stride
                            + split.offset_in_group(within);
                        let key = T::read(&self.data[offset * T::SIZE..]).key();
                        let index = group.index + within as usize;
                        let better = first
                            || key > entry.0
                            || (key == entry.0
                                && if LAST {
                                    index > entry.1
                                } else {
                                    index < entry.1
                                });
                        if better {
                            *entry = (key, index);
                        }
                        if last {
                            // SAFETY: each output's slot is written once, by the task holding
                            // its walk position.
                            let slot = at.slot + j * line.slot_stride;
                            unsafe { outputs.set(slot, self.finish::<LAST>(entry.1)) };
                        }
                    }
                });
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argmax::plan::test_plan as plan;

    /// FLOAT32 `[59, 2, 2823, 2, 3]` stored as axes (0, 3, 4, 2, 1), reduced over axes 2,3:
    /// axis 3 is outside axis 2 in memory but inside it in the index.
    fn permuted(inner: u32, group: u32) -> Plan {
        let strides = [group * 3 * inner * 2, 1, 2, 3 * inner * 2, inner * 2];
        plan(
            &[59, 2, inner, group, 3],
            Some(&strides),
            &[false, false, true, true, false],
        )
    }

    #[test]
    fn reduced_dimensions_out_of_index_order_are_walked_as_groups() {
        let split = OutOfOrder::new::<f32>(&permuted(2823, 2)).expect("split");
        assert_eq!(split.groups.len(), 1);
        assert_eq!((split.groups[0].size, split.groups[0].index_stride), (2, 1));
        // The group's plan reduces axis 2 alone, its outputs numbered in walk order.
        assert_eq!(split.group_plan.reduced.len(), 1);
        assert_eq!(split.group_plan.reduced[0].size, 2823);
        assert_eq!(split.group_plan.outputs(), 59 * 2 * 3);
        assert_eq!(split.offset_in_group(2 * 7), 7 * 2);
        // The same dimensions in index order: no split.
        let in_order = plan(&[59, 2, 2823, 3], None, &[false, true, true, false]);
        assert!(OutOfOrder::new::<f32>(&in_order).is_none());
    }

    #[test]
    fn groups_are_taken_only_where_they_pay() {
        // Too many groups.
        assert!(OutOfOrder::new::<f32>(&permuted(40, 65)).is_none());
        assert!(OutOfOrder::new::<f32>(&permuted(400, 64)).is_some());
        // Groups closer than ARGMAX_GROUP_MIN_BLOCK_BYTES: 16 rows of 6 lanes, 96 elements.
        assert!(OutOfOrder::new::<f32>(&permuted(16, 40)).is_none());
        // Too little work per group: 59 × 2 × 3 outputs of 40 rows.
        assert!(OutOfOrder::new::<f32>(&permuted(40, 2)).is_none());
        // A wide tail folds its rows in index order cheaply: `[64, 2, 64, 64]` stored as
        // (1, 0, 2, 3), over axes 0,1.
        let wide = plan(
            &[64, 2, 64, 64],
            Some(&[4096, 262_144, 64, 1]),
            &[true, true, false, false],
        );
        assert!(OutOfOrder::new::<f32>(&wide).is_none());
    }

    #[test]
    fn an_index_within_a_group_is_read_digit_by_digit() {
        // `[3, 40, 2, 30]` reduced whole, axis 1 padded to 41 so that axes 0 and 1 do not
        // fuse, a kept axis of 300 inside axes 2 and 3 in memory, stored as (2, 3, 4, 0, 1):
        // axes 2,3 are the groups; within one, axis 0's digit has index stride 2400, axis 1's
        // 60.
        let strides = [41, 1, 30 * 300 * 123, 300 * 123, 123];
        let split = OutOfOrder::new::<f32>(&plan(
            &[3, 40, 2, 30, 300],
            Some(&strides),
            &[true, true, true, true, false],
        ))
        .expect("split");
        assert_eq!(split.groups.iter().map(|d| d.size).product::<usize>(), 60);
        assert_eq!(split.digits.len(), 2);
        assert_eq!(split.offset_in_group(2 * 2400 + 39 * 60), 2 * 41 + 39);
    }
}
