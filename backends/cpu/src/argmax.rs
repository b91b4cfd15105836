//! `DML_ARGMAX`: for each output element, the row-major flat index (over the reduced axes in
//! increasing axis order, whatever order `Axes` lists them in) of the maximum of its reduced
//! sub-tensor. INCREASING picks the first maximum, DECREASING the last; NaN is above every
//! number and -0.0 equals +0.0 (see [`crate::element::OrderKey`]).
//!
//! The input's dimensions of size > 1 are split into kept and reduced ones. When the innermost
//! one is kept, the trailing kept dimensions that are contiguous form a *tail* of `E` outputs
//! that are reduced side by side: for each reduced position a contiguous row of the input
//! updates `E` running maxima (cache-friendly for a reduction over an outer axis). Otherwise
//! each output reduces its elements alone, reading along the innermost reduced dimension.
//! Work is split over outputs, over tail blocks, or over the reduced range (combining partial
//! results in order) so that a single large reduction also runs in parallel.

use crate::element::{FromIndex, OrderKey};
use crate::parallel::{
    for_each_chunk_mut, map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS,
};
use crate::strided::{internal, write_packed, Layout, Nest, MAX_DIMS};
use half::f16;
use opconform_backend::{ArgMaxDesc, AxisDirection, BackendError, DataType, Tensor};

/// Outputs reduced side by side at most.
const BLOCK: usize = 4096;

/// Runs `DML_ARGMAX` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &ArgMaxDesc,
    input: &Tensor,
    output: &mut Tensor,
) -> Result<(), BackendError> {
    let input_layout = Layout::new(&desc.input, input.data.len(), "InputTensor")?;
    let output_layout = Layout::new(&desc.output, output.data.len(), "OutputTensor")?;
    let rank = input_layout.sizes.len();
    let mut reduced = [false; MAX_DIMS];
    for &axis in &desc.axes {
        let axis = axis as usize;
        if axis >= rank {
            return Err(internal("ARGMAX axis out of range"));
        }
        reduced[axis] = true;
    }
    let sizes_match = output_layout.sizes.len() == rank
        && (0..rank)
            .all(|d| output_layout.sizes[d] == if reduced[d] { 1 } else { input_layout.sizes[d] });
    if !sizes_match || desc.axes.is_empty() {
        return Err(internal(
            "ARGMAX output sizes disagree with the input and axes",
        ));
    }
    if input_layout.count == 0 {
        return Err(internal("ARGMAX input has no elements"));
    }
    let plan = Plan::new(&input_layout, &reduced[..rank]);
    if plan.reduced.len() as u64 > 1 << 32 {
        return Err(internal("ARGMAX reduces 2^32 or more elements per output"));
    }
    if plan.outer.len() * plan.tail_len != output_layout.count {
        return Err(internal("ARGMAX plan disagrees with the output"));
    }
    let last = desc.axis_direction == AxisDirection::Decreasing;
    let data = &input.data;
    write_packed(&output_layout, &mut output.data, |out| {
        dispatch_input(
            desc.input.data_type,
            desc.output.data_type,
            last,
            data,
            &plan,
            out,
        )
    })
}

/// How the input is walked: kept dimensions outside the tail, the tail, and reduced ones.
struct Plan {
    /// Kept dimensions before the tail (one output row of `tail_len` each).
    outer: Nest<1>,
    /// Reduced dimensions, in increasing axis order.
    reduced: Nest<1>,
    /// Outputs reduced side by side (1 when the innermost dimension is reduced).
    tail_len: usize,
    /// Input stride between neighbouring tail outputs.
    tail_stride: usize,
}

impl Plan {
    fn new(layout: &Layout, reduced: &[bool]) -> Plan {
        // Dimensions of size > 1: (size, stride, reduced).
        let dims: Vec<(usize, usize, bool)> = (0..reduced.len())
            .filter(|&d| layout.sizes[d] > 1)
            .map(|d| (layout.sizes[d], layout.strides[d], reduced[d]))
            .collect();
        let mut tail_len = 1;
        let mut tail_stride = 0;
        let mut tail_start = dims.len();
        if let Some(&(size, stride, false)) = dims.last() {
            tail_len = size;
            tail_stride = stride;
            tail_start -= 1;
            while tail_start > 0 {
                let (size, stride, is_reduced) = dims[tail_start - 1];
                if is_reduced || tail_stride.checked_mul(tail_len) != Some(stride) {
                    break;
                }
                tail_len *= size;
                tail_start -= 1;
            }
        }
        let pick = |want_reduced: bool, end: usize| {
            let chosen: Vec<&(usize, usize, bool)> =
                dims[..end].iter().filter(|d| d.2 == want_reduced).collect();
            let sizes: Vec<usize> = chosen.iter().map(|d| d.0).collect();
            let strides: Vec<usize> = chosen.iter().map(|d| d.1).collect();
            Nest::merged(&sizes, [&strides])
        };
        Plan {
            outer: pick(false, tail_start),
            reduced: pick(true, dims.len()),
            tail_len,
            tail_stride,
        }
    }
}

/// Runs the kernel monomorphised for the input's element type.
fn dispatch_input(
    input: DataType,
    output: DataType,
    last: bool,
    data: &[u8],
    plan: &Plan,
    out: &mut [u8],
) -> Result<(), BackendError> {
    match input {
        DataType::Float64 => dispatch_output::<f64>(output, last, data, plan, out),
        DataType::Float32 => dispatch_output::<f32>(output, last, data, plan, out),
        DataType::Float16 => dispatch_output::<f16>(output, last, data, plan, out),
        DataType::Int64 => dispatch_output::<i64>(output, last, data, plan, out),
        DataType::Int32 => dispatch_output::<i32>(output, last, data, plan, out),
        DataType::Int16 => dispatch_output::<i16>(output, last, data, plan, out),
        DataType::Int8 => dispatch_output::<i8>(output, last, data, plan, out),
        DataType::Uint64 => dispatch_output::<u64>(output, last, data, plan, out),
        DataType::Uint32 => dispatch_output::<u32>(output, last, data, plan, out),
        DataType::Uint16 => dispatch_output::<u16>(output, last, data, plan, out),
        DataType::Uint8 => dispatch_output::<u8>(output, last, data, plan, out),
    }
}

/// Runs the kernel monomorphised for the output's element type and the direction.
fn dispatch_output<T: OrderKey>(
    output: DataType,
    last: bool,
    data: &[u8],
    plan: &Plan,
    out: &mut [u8],
) -> Result<(), BackendError> {
    macro_rules! go {
        ($o:ty) => {
            if last {
                argmax::<T, $o, true>(data, plan, out)
            } else {
                argmax::<T, $o, false>(data, plan, out)
            }
        };
    }
    match output {
        DataType::Int64 => go!(i64),
        DataType::Int32 => go!(i32),
        DataType::Uint64 => go!(u64),
        DataType::Uint32 => go!(u32),
        other => return Err(internal(format!("{other} is not an ARGMAX output type"))),
    }
    Ok(())
}

/// True when `candidate` replaces `best`: strictly greater for the first maximum (INCREASING),
/// greater or equal for the last (DECREASING, `LAST`).
#[inline(always)]
fn better<K: Ord, const LAST: bool>(candidate: K, best: K) -> bool {
    if LAST {
        candidate >= best
    } else {
        candidate > best
    }
}

/// Running maxima of up to [`BLOCK`] outputs: keys and flat reduced indices.
struct State<K> {
    keys: Vec<K>,
    /// Reduced positions (below 2^32: the input has fewer than 2^32 elements).
    at: Vec<u32>,
    /// Scratch positions: contiguous rows read the positions from one of `at` and `spare` and
    /// write them to the other (see [`update_row`]).
    spare: Vec<u32>,
}

impl<K: Copy> State<K> {
    fn new(len: usize, min: K) -> State<K> {
        State {
            keys: vec![min; len],
            at: vec![0; len],
            spare: vec![0; len],
        }
    }
}

/// Writes the packed ArgMax of `data` (through `plan`) into `out` (one `O` per output).
fn argmax<T: OrderKey, O: FromIndex, const LAST: bool>(data: &[u8], plan: &Plan, out: &mut [u8]) {
    let rows = plan.outer.len();
    let tail = plan.tail_len;
    let q = plan.reduced.len();
    let row_bytes = tail * O::SIZE;
    if row_bytes == 0 || q == 0 {
        return;
    }
    let block = tail.min(BLOCK);
    let parallel = rows.saturating_mul(tail).saturating_mul(q) >= PARALLEL_MIN_ELEMENTS;
    let reduce = |base: usize,
                  e0: usize,
                  out_block: &mut [u8],
                  q0: usize,
                  q1: usize,
                  state: &mut State<T::Key>| {
        let n = out_block.len() / O::SIZE;
        reduce_block::<T, LAST>(data, plan, base + e0 * plan.tail_stride, n, q0, q1, state);
        for (dst, &at) in out_block.chunks_exact_mut(O::SIZE).zip(&state.at[..n]) {
            O::from_index(at as usize).write(dst);
        }
    };

    if !parallel || rows >= 2 * threads() {
        // Split over output rows; each task walks a range of rows.
        let per_task = (TASK_ELEMENTS / tail.saturating_mul(q).max(1)).max(1);
        let [outer_step] = plan.outer.inner_strides();
        for_each_chunk_mut(out, per_task * row_bytes, parallel, |c, chunk| {
            let first = c * per_task;
            let count = chunk.len() / row_bytes;
            if tail == 1 {
                // One output per row: scan each directly.
                plan.outer
                    .rows(first, first + count, |p, [offset], len, _| {
                        let out = &mut chunk[(p - first) * O::SIZE..(p - first + len) * O::SIZE];
                        for (j, dst) in out.chunks_exact_mut(O::SIZE).enumerate() {
                            let base = offset + j * outer_step;
                            let (_, at) = scan_one::<T, LAST>(data, plan, base, 0, q);
                            O::from_index(at).write(dst);
                        }
                    });
                return;
            }
            let mut state = State::new(block, T::MIN_KEY);
            plan.outer
                .rows(first, first + count, |p, [offset], len, _| {
                    for j in 0..len {
                        let base = offset + j * outer_step;
                        let start = (p + j - first) * row_bytes;
                        let row = &mut chunk[start..start + row_bytes];
                        for (b, out_block) in row.chunks_mut(block * O::SIZE).enumerate() {
                            reduce(base, b * block, out_block, 0, q, &mut state);
                        }
                    }
                });
        });
        return;
    }

    // Few rows: split each row's tail blocks, or its reduced range, across threads.
    let blocks = tail.div_ceil(block);
    for (p, row) in out.chunks_mut(row_bytes).enumerate() {
        let mut base = 0;
        plan.outer.rows(p, p + 1, |_, [offset], _, _| base = offset);
        if blocks >= 2 * threads() || q * block < 2 * TASK_ELEMENTS {
            for_each_chunk_mut(row, block * O::SIZE, true, |b, out_block| {
                let mut state = State::new(block, T::MIN_KEY);
                reduce(base, b * block, out_block, 0, q, &mut state);
            });
        } else {
            let q_chunk = (TASK_ELEMENTS / block)
                .max(q.div_ceil(4 * threads()))
                .max(1);
            for (b, out_block) in row.chunks_mut(block * O::SIZE).enumerate() {
                let n = out_block.len() / O::SIZE;
                let parts = map_ranges(q, q_chunk, true, |q0, q1| {
                    let mut state = State::new(n, T::MIN_KEY);
                    reduce_block::<T, LAST>(
                        data,
                        plan,
                        base + b * block * plan.tail_stride,
                        n,
                        q0,
                        q1,
                        &mut state,
                    );
                    state
                });
                // Partial results cover increasing reduced ranges: combine them in order.
                let mut parts = parts.into_iter();
                let Some(mut best) = parts.next() else {
                    continue;
                };
                for part in parts {
                    for e in 0..n {
                        if better::<_, LAST>(part.keys[e], best.keys[e]) {
                            best.keys[e] = part.keys[e];
                            best.at[e] = part.at[e];
                        }
                    }
                }
                for (dst, &at) in out_block.chunks_exact_mut(O::SIZE).zip(&best.at) {
                    O::from_index(at as usize).write(dst);
                }
            }
        }
    }
}

/// Reduces reduced positions `q0..q1` for `n` side-by-side outputs whose first input element
/// (at reduced position 0) is at `base`, leaving the maxima and their positions in `state`.
#[inline]
fn reduce_block<T: OrderKey, const LAST: bool>(
    data: &[u8],
    plan: &Plan,
    base: usize,
    n: usize,
    q0: usize,
    q1: usize,
    state: &mut State<T::Key>,
) {
    if n == 1 {
        let (key, at) = scan_one::<T, LAST>(data, plan, base, q0, q1);
        state.keys[0] = key;
        state.at[0] = at as u32;
        return;
    }
    let keys = &mut state.keys[..n];
    let at = &mut state.at[..n];
    let spare = &mut state.spare[..n];
    keys.fill(T::MIN_KEY);
    at.fill(q0 as u32);
    let [step] = plan.reduced.inner_strides();
    // Several outputs: each reduced position updates a row of `n` running maxima.
    let tail_stride = plan.tail_stride;
    // Contiguous rows alternate the positions between `at` and `spare`.
    let mut in_spare = false;
    plan.reduced.rows(q0, q1, |q, [offset], len, _| {
        for j in 0..len {
            let row = base + offset + j * step;
            let position = (q + j) as u32;
            if tail_stride == 1 {
                let bytes = &data[row * T::SIZE..(row + n) * T::SIZE];
                if in_spare {
                    update_row::<T, LAST>(bytes, keys, spare, at, position);
                } else {
                    update_row::<T, LAST>(bytes, keys, at, spare, position);
                }
                in_spare = !in_spare;
            } else {
                for (e, (key, at)) in keys.iter_mut().zip(at.iter_mut()).enumerate() {
                    let value = T::read(&data[(row + e * tail_stride) * T::SIZE..]).key();
                    if better::<_, LAST>(value, *key) {
                        *key = value;
                        *at = position;
                    }
                }
            }
        }
    });
    if in_spare {
        at.copy_from_slice(spare);
    }
}

/// Folds a contiguous row of elements, all at reduced position `position`, into the running
/// maxima `keys` (one per element), reading their positions from `at` and writing the updated
/// ones to `next`.
///
/// The key is a plain maximum and the position a blend written unconditionally to another
/// array (updated in place, the compiler would turn it into masked stores, slow on AMD Zen), so
/// the loop has no branch and vectorises. On x86-64 it is compiled a second time for AVX2,
/// used when the CPU has it.
#[inline]
fn update_row<T: OrderKey, const LAST: bool>(
    bytes: &[u8],
    keys: &mut [T::Key],
    at: &[u32],
    next: &mut [u32],
    position: u32,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { update_row_avx2::<T, LAST>(bytes, keys, at, next, position) };
        return;
    }
    update_row_generic::<T, LAST>(bytes, keys, at, next, position);
}

/// [`update_row_generic`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn update_row_avx2<T: OrderKey, const LAST: bool>(
    bytes: &[u8],
    keys: &mut [T::Key],
    at: &[u32],
    next: &mut [u32],
    position: u32,
) {
    update_row_generic::<T, LAST>(bytes, keys, at, next, position);
}

/// The body of [`update_row`], inlined into each of its target-feature variants.
#[inline(always)]
fn update_row_generic<T: OrderKey, const LAST: bool>(
    bytes: &[u8],
    keys: &mut [T::Key],
    at: &[u32],
    next: &mut [u32],
    position: u32,
) {
    for (((element, key), &at), next) in bytes
        .chunks_exact(T::SIZE)
        .zip(keys.iter_mut())
        .zip(at)
        .zip(next.iter_mut())
    {
        let value = T::read(element).key();
        *next = if better::<_, LAST>(value, *key) {
            position
        } else {
            at
        };
        *key = (*key).max(value);
    }
}

/// Elements whose maximum is found before their position is looked for.
const SCAN_BLOCK: usize = 1024;

/// Elements per chunk in [`locate`]'s first, vectorised, pass.
const LANES: usize = 32;

/// The maximum key among the contiguous elements of `block` (`T::MIN_KEY` when empty): a
/// plain max-reduction, which the compiler vectorises (branch-free keys, no per-element
/// branch).
#[inline(always)]
fn block_max<T: OrderKey>(block: &[u8]) -> T::Key {
    block
        .chunks_exact(T::SIZE)
        .map(|e| T::read(e).key())
        .fold(T::MIN_KEY, Ord::max)
}

/// The maximum key and its reduced position among positions `q0..q1` of one output whose
/// first input element (at reduced position 0) is at `base`.
#[inline]
fn scan_one<T: OrderKey, const LAST: bool>(
    data: &[u8],
    plan: &Plan,
    base: usize,
    q0: usize,
    q1: usize,
) -> (T::Key, usize) {
    let [step] = plan.reduced.inner_strides();
    let mut best = T::MIN_KEY;
    let mut best_at = q0;
    let mut scan = |start: usize, first_q: usize, len: usize| {
        if step == 1 {
            scan_contiguous::<T, LAST>(
                &data[start * T::SIZE..(start + len) * T::SIZE],
                first_q,
                &mut best,
                &mut best_at,
            );
        } else {
            for j in 0..len {
                let key = T::read(&data[(start + j * step) * T::SIZE..]).key();
                if better::<_, LAST>(key, best) {
                    best = key;
                    best_at = first_q + j;
                }
            }
        }
    };
    if plan.reduced.dims().len() <= 1 {
        // A single reduced run (the common case): no walk needed.
        let q1 = q1.min(plan.reduced.len());
        if q0 < q1 {
            scan(base + q0 * step, q0, q1 - q0);
        }
    } else {
        plan.reduced
            .rows(q0, q1, |q, [offset], len, _| scan(base + offset, q, len));
    }
    (best, best_at)
}

/// Folds contiguous elements at reduced positions `first_q..` into the running maximum:
/// each block's maximum is found first ([`block_max`]), and the block is searched for its
/// position ([`locate`]) only when that maximum replaces the running one.
///
/// On x86-64 the loops are compiled a second time for AVX2, used when the CPU has it.
#[inline]
fn scan_contiguous<T: OrderKey, const LAST: bool>(
    bytes: &[u8],
    first_q: usize,
    best: &mut T::Key,
    best_at: &mut usize,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { scan_contiguous_avx2::<T, LAST>(bytes, first_q, best, best_at) };
        return;
    }
    scan_contiguous_generic::<T, LAST>(bytes, first_q, best, best_at);
}

/// [`scan_contiguous_generic`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_contiguous_avx2<T: OrderKey, const LAST: bool>(
    bytes: &[u8],
    first_q: usize,
    best: &mut T::Key,
    best_at: &mut usize,
) {
    scan_contiguous_generic::<T, LAST>(bytes, first_q, best, best_at);
}

/// The body of [`scan_contiguous`], inlined into each of its target-feature variants.
#[inline(always)]
fn scan_contiguous_generic<T: OrderKey, const LAST: bool>(
    bytes: &[u8],
    first_q: usize,
    best: &mut T::Key,
    best_at: &mut usize,
) {
    for (b, block) in bytes.chunks(SCAN_BLOCK * T::SIZE).enumerate() {
        let max = block_max::<T>(block);
        if better::<_, LAST>(max, *best) {
            *best = max;
            *best_at = first_q + b * SCAN_BLOCK + locate::<T, LAST>(block, max);
        }
    }
}

/// The position of the first (or, with `LAST`, the last) element of `block` whose key is
/// `max`, the block's maximum: the [`LANES`]-element chunk holding it is found with a
/// vectorisable comparison, then searched element by element.
#[inline(always)]
fn locate<T: OrderKey, const LAST: bool>(block: &[u8], max: T::Key) -> usize {
    let holds = |chunk: &[u8]| {
        let mut hits = [false; LANES];
        for (hit, element) in hits.iter_mut().zip(chunk.chunks_exact(T::SIZE)) {
            *hit = T::read(element).key() == max;
        }
        hits.contains(&true)
    };
    let chunk_bytes = LANES * T::SIZE;
    let found = if LAST {
        block
            .chunks(chunk_bytes)
            .enumerate()
            .rev()
            .find(|(_, c)| holds(c))
    } else {
        block
            .chunks(chunk_bytes)
            .enumerate()
            .find(|(_, c)| holds(c))
    };
    let Some((c, chunk)) = found else {
        return 0;
    };
    let mut keys = chunk.chunks_exact(T::SIZE).map(|e| T::read(e).key());
    let position = if LAST {
        keys.rposition(|k| k == max)
    } else {
        keys.position(|k| k == max)
    };
    c * LANES + position.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use crate::test_tensors::{elements, packed, strided, Scalar};
    use crate::tests::execute;
    use half::f16;
    use opconform_backend::{
        ArgMaxDesc, AxisDirection, BackendError, DataType, Level, OperatorDesc, Tensor, TensorDesc,
    };

    const INC: AxisDirection = AxisDirection::Increasing;
    const DEC: AxisDirection = AxisDirection::Decreasing;

    /// Runs ArgMax at 4_1 with a packed output of `O`.
    fn argmax<O: Scalar>(
        input: &Tensor,
        axes: &[u32],
        direction: AxisDirection,
    ) -> Result<Vec<O>, BackendError> {
        let mut sizes = input.desc.sizes.clone();
        for &a in axes {
            sizes[a as usize] = 1;
        }
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: input.desc.clone(),
            output: TensorDesc::packed(O::TYPE, &sizes),
            axes: axes.to_vec(),
            axis_direction: direction,
        });
        let outputs = execute(&op, std::slice::from_ref(input), Level::dml(0x4100))?;
        Ok(elements::<O>(&outputs[0]))
    }

    fn example_input() -> Tensor {
        #[rustfmt::skip]
        let values = [
            1., 2., 3.,
            3., 0., 4.,
            2., 5., 2.,
        ];
        packed::<f32>(&[3, 3], &values)
    }

    // --- The documented examples (003_b0ebd827180f1e7d.txt) ---

    #[test]
    fn example_1_columns() {
        assert_eq!(
            argmax::<u32>(&example_input(), &[0], INC).unwrap(),
            [1, 2, 1]
        );
    }

    #[test]
    fn example_2_rows() {
        assert_eq!(
            argmax::<u32>(&example_input(), &[1], INC).unwrap(),
            [2, 2, 1]
        );
    }

    #[test]
    fn example_3_whole_tensor() {
        assert_eq!(argmax::<u32>(&example_input(), &[0, 1], INC).unwrap(), [7]);
    }

    #[test]
    fn documented_tie_example_both_directions() {
        let input = packed::<f32>(&[5], &[3., 2., 1., 2., 3.]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [4]);
    }

    #[test]
    fn examples_at_3_0_with_every_output_type() {
        let op = |output: DataType| {
            OperatorDesc::ArgMax(ArgMaxDesc {
                input: TensorDesc::packed(DataType::Float32, &[3, 3]),
                output: TensorDesc::packed(output, &[1, 3]),
                axes: vec![0],
                axis_direction: INC,
            })
        };
        let run = |output| {
            execute(&op(output), &[example_input()], Level::dml(0x3000))
                .unwrap()
                .remove(0)
        };
        assert_eq!(elements::<u32>(&run(DataType::Uint32)), [1, 2, 1]);
        assert_eq!(elements::<i32>(&run(DataType::Int32)), [1, 2, 1]);
        assert_eq!(elements::<u64>(&run(DataType::Uint64)), [1, 2, 1]);
        assert_eq!(elements::<i64>(&run(DataType::Int64)), [1, 2, 1]);
    }

    // --- Edge cases ---

    #[test]
    fn unsorted_axes_give_the_increasing_axis_order_index() {
        assert_eq!(argmax::<u32>(&example_input(), &[1, 0], INC).unwrap(), [7]);
    }

    #[test]
    fn ties_in_both_directions_and_signed_zero() {
        let input = packed::<i8>(&[6], &[-5, 7, -9, 7, 7, 0]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [1]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [4]);
        // -0.0 and +0.0 tie.
        let input = packed::<f32>(&[4], &[-1., -0.0, 0.0, -2.]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [1]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [2]);
        let input = packed::<f32>(&[3], &[0.0, -0.0, -3.]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [1]);
        // All equal: first and last.
        let input = packed::<u8>(&[2, 3], &[4; 6]);
        assert_eq!(argmax::<u32>(&input, &[1], INC).unwrap(), [0, 0]);
        assert_eq!(argmax::<u32>(&input, &[1], DEC).unwrap(), [2, 2]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [1, 1, 1]);
        // The smallest value everywhere (the running maximum starts below it).
        let input = packed::<i64>(&[3], &[i64::MIN; 3]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [2]);
    }

    #[test]
    fn nan_is_the_maximum() {
        let nan = f32::NAN;
        let negative_nan = f32::from_bits(0xffc0_0001);
        let input = packed::<f32>(&[5], &[1., nan, f32::INFINITY, negative_nan, 5.]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [1]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [3]);
        let input = packed::<f16>(
            &[2, 3],
            &[
                f16::from_f32(1.),
                f16::NAN,
                f16::INFINITY,
                f16::from_f32(-1.),
                f16::NEG_INFINITY,
                f16::from_f32(-0.5),
            ],
        );
        assert_eq!(argmax::<u32>(&input, &[1], INC).unwrap(), [1, 2]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0, 0, 0]);
        assert_eq!(argmax::<u32>(&input, &[0, 1], DEC).unwrap(), [1]);
    }

    #[test]
    fn wide_integers_compare_exactly() {
        // Through f64 the first two would be equal (2^63 - 2 and 2^63 - 1 round alike).
        let input = packed::<i64>(&[3], &[i64::MAX - 1, i64::MAX, i64::MAX - 2]);
        assert_eq!(argmax::<u64>(&input, &[0], INC).unwrap(), [1]);
        assert_eq!(argmax::<u64>(&input, &[0], DEC).unwrap(), [1]);
        let input = packed::<u64>(&[3], &[u64::MAX, u64::MAX - 1, 1 << 63]);
        assert_eq!(argmax::<i64>(&input, &[0], DEC).unwrap(), [0]);
        let input = packed::<u32>(&[2], &[u32::MAX - 1, u32::MAX]);
        assert_eq!(argmax::<i32>(&input, &[0], INC).unwrap(), [1]);
        let input = packed::<i16>(&[3], &[-1, i16::MIN, i16::MAX]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [2]);
        let input = packed::<u16>(&[3], &[u16::MAX, 0, 1]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0]);
    }

    #[test]
    fn middle_and_multiple_axes() {
        // Input {2,3,2}: element (a,b,c) at row-major index 6a + 2b + c.
        #[rustfmt::skip]
        let values = [
            5, 1,   9, 0,   5, 8,
            2, 2,   2, 7,   3, 7,
        ];
        let input = packed::<i32>(&[2, 3, 2], &values);
        // Axis 1: (a, c) sequences: (0,0) {5,9,5} -> 1; (0,1) {1,0,8} -> 2;
        // (1,0) {2,2,3} -> 2; (1,1) {2,7,7} -> 1 first, 2 last.
        assert_eq!(argmax::<u32>(&input, &[1], INC).unwrap(), [1, 2, 2, 1]);
        assert_eq!(argmax::<u32>(&input, &[1], DEC).unwrap(), [1, 2, 2, 2]);
        // Axes {0,2}: per b, elements in (a, c) order: b=0 {5,1,2,2} -> 0; b=1 {9,0,2,7} -> 0;
        // b=2 {5,8,3,7} -> 1.
        assert_eq!(argmax::<u32>(&input, &[0, 2], INC).unwrap(), [0, 0, 1]);
        assert_eq!(argmax::<u32>(&input, &[2, 0], INC).unwrap(), [0, 0, 1]);
        // Axes {1,2}: per a: a=0 {5,1,9,0,5,8} -> 2; a=1 {2,2,2,7,3,7} -> 3 first, 5 last.
        assert_eq!(argmax::<u32>(&input, &[1, 2], INC).unwrap(), [2, 3]);
        assert_eq!(argmax::<u32>(&input, &[1, 2], DEC).unwrap(), [2, 5]);
        // Axis 0: per (b,c): {5,2} {1,2} {9,2} {0,7} {5,3} {8,7} -> 0 1 0 1 0 0.
        assert_eq!(
            argmax::<u32>(&input, &[0], INC).unwrap(),
            [0, 1, 0, 1, 0, 0]
        );
        // A reduced axis of size 1 contributes nothing to the index.
        let input = packed::<i32>(&[1, 3], &[4, 6, 5]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0, 0, 0]);
        assert_eq!(argmax::<u32>(&input, &[0, 1], INC).unwrap(), [1]);
    }

    #[test]
    fn strided_and_broadcast_inputs() {
        // Logical {2,3} stored transposed: strides {1,2}; buffer [a00, a10, a01, a11, a02, a12].
        let input = strided::<f32>(&[2, 3], Some(&[1, 2]), &[1., 6., 3., 4., 2., 5.]);
        // Logical rows: [1, 3, 2] and [6, 4, 5].
        assert_eq!(argmax::<u32>(&input, &[1], INC).unwrap(), [1, 0]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [1, 1, 1]);
        assert_eq!(argmax::<u32>(&input, &[0, 1], INC).unwrap(), [3]);
        // Broadcast: {4,2} with strides {0,1}: every row is [7, 3] so all rows tie.
        let input = strided::<u8>(&[4, 2], Some(&[0, 1]), &[7, 3]);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0, 0]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [3, 3]);
        assert_eq!(argmax::<u32>(&input, &[0, 1], DEC).unwrap(), [6]);
        // Padded rows: {2,2} with strides {3,1}, buffer [9, 1, 100, 2, 8].
        let input = strided::<i16>(&[2, 2], Some(&[3, 1]), &[9, 1, 100, 2, 8]);
        assert_eq!(argmax::<u32>(&input, &[0, 1], INC).unwrap(), [0]);
        assert_eq!(argmax::<u32>(&input, &[1], INC).unwrap(), [0, 1]);
    }

    #[test]
    fn strided_tail_of_side_by_side_outputs() {
        // Logical {3,4} stored column-major (strides {1,3}): element (r,c) at r + 3c.
        //   r0: [5, 1, 7, 7]
        //   r1: [2, 9, 7, 3]
        //   r2: [5, 0, 1, 8]
        let buffer = [5, 2, 5, 1, 9, 0, 7, 7, 1, 7, 3, 8];
        let input = strided::<i32>(&[3, 4], Some(&[1, 3]), &buffer);
        assert_eq!(argmax::<u32>(&input, &[0], INC).unwrap(), [0, 1, 0, 2]);
        assert_eq!(argmax::<u32>(&input, &[0], DEC).unwrap(), [2, 1, 1, 2]);
        assert_eq!(argmax::<u32>(&input, &[1], INC).unwrap(), [2, 1, 3]);
        assert_eq!(argmax::<u32>(&input, &[1], DEC).unwrap(), [3, 1, 3]);
    }

    #[test]
    fn strided_output() {
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[3, 3]),
            output: TensorDesc::with_strides(DataType::Uint32, &[3, 1], Some(&[2, 1])).unwrap(),
            axes: vec![1],
            axis_direction: INC,
        });
        let out = execute(&op, &[example_input()], Level::dml(0x3000))
            .unwrap()
            .remove(0);
        assert_eq!(elements::<u32>(&out), [2, 2, 1]);
        assert_eq!(&out.data[4..8], &[0xAB; 4]);
    }

    #[test]
    fn sixty_four_bit_inputs_need_4_1() {
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: TensorDesc::packed(DataType::Int64, &[2]),
            output: TensorDesc::packed(DataType::Uint32, &[1]),
            axes: vec![0],
            axis_direction: INC,
        });
        let input = packed::<i64>(&[2], &[1, 2]);
        let err = execute(&op, &[input], Level::dml(0x4000)).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ARGMAX.SUPPORT_DATA_TYPE"]),
            "{err}"
        );
    }

    /// A naive ArgMax, written independently of the kernels, for large generated inputs:
    /// visits every input element in row-major order and keeps, per output, the best value
    /// and its flat index over the reduced axes.
    fn reference(values: &[f32], sizes: &[usize], axes: &[usize], last: bool) -> Vec<u32> {
        let rank = sizes.len();
        let out_sizes: Vec<usize> = (0..rank)
            .map(|d| if axes.contains(&d) { 1 } else { sizes[d] })
            .collect();
        let out_count: usize = out_sizes.iter().product();
        let mut best: Vec<Option<(f32, u32)>> = vec![None; out_count];
        let mut coords = vec![0usize; rank];
        for &v in values {
            let mut out_index = 0;
            let mut reduced_index = 0;
            for d in 0..rank {
                out_index =
                    out_index * out_sizes[d] + if axes.contains(&d) { 0 } else { coords[d] };
                if axes.contains(&d) {
                    reduced_index = reduced_index * sizes[d] + coords[d];
                }
            }
            let replace = match best[out_index] {
                None => true,
                Some((b, _)) => v > b || (last && v == b),
            };
            if replace {
                best[out_index] = Some((v, reduced_index as u32));
            }
            for d in (0..rank).rev() {
                coords[d] += 1;
                if coords[d] < sizes[d] {
                    break;
                }
                coords[d] = 0;
            }
        }
        best.into_iter().map(|b| b.unwrap().1).collect()
    }

    #[test]
    fn large_inputs_match_the_naive_reference() {
        // Small integers as floats: many ties, exercising both directions.
        let make = |count: usize| -> Vec<f32> {
            let mut x: u32 = 12345;
            (0..count)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    ((x >> 16) % 97) as f32
                })
                .collect()
        };
        let cases: &[(&[usize], &[usize])] = &[
            (&[300, 400], &[1]),         // innermost axis, many rows
            (&[300, 400], &[0]),         // outer axis, tail of 400
            (&[120_000], &[0]),          // one large reduction (split over the range)
            (&[100_000, 3], &[0]),       // few outputs, long outer reduction
            (&[4, 50_000], &[1]),        // few rows, long inner reduction
            (&[2, 70_000], &[0]),        // few rows, many tail blocks
            (&[20, 30, 40, 5], &[1, 3]), // interleaved axes
            (&[20, 30, 40, 5], &[0, 2]), // interleaved axes, tail of 5
            (&[7, 11, 13, 17], &[0, 1, 2, 3]),
        ];
        for &(sizes, axes) in cases {
            let count: usize = sizes.iter().product();
            let values = make(count);
            let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
            let axes32: Vec<u32> = axes.iter().map(|&a| a as u32).collect();
            let input = packed::<f32>(&sizes32, &values);
            for (direction, last) in [(INC, false), (DEC, true)] {
                let got = argmax::<u32>(&input, &axes32, direction).unwrap();
                let expected = reference(&values, sizes, axes, last);
                assert_eq!(got, expected, "sizes {sizes:?} axes {axes:?} last {last}");
            }
        }
    }

    #[test]
    fn nan_and_signed_zero_in_large_vectorised_scans() {
        // Large enough for the vectorised paths (whole blocks, the outer-axis rows, split
        // ranges): the maximum is a NaN (of either sign) where one is planted, and ties
        // between -0.0 and +0.0 where the maximum is zero.
        let rank_of = |v: f32| -> (u8, f32) {
            if v.is_nan() {
                (1, 0.0)
            } else {
                (0, if v == 0.0 { 0.0 } else { v })
            }
        };
        let reference = |values: &[f32], rows: usize, cols: usize, axis: usize, last: bool| {
            let (outer, reduced) = if axis == 1 {
                (rows, cols)
            } else {
                (cols, rows)
            };
            (0..outer)
                .map(|o| {
                    let at = |q: usize| {
                        if axis == 1 {
                            o * cols + q
                        } else {
                            q * cols + o
                        }
                    };
                    let mut best = 0;
                    for q in 1..reduced {
                        let (a, b) = (rank_of(values[at(q)]), rank_of(values[at(best)]));
                        if a > b || (last && a == b) {
                            best = q;
                        }
                    }
                    best as u32
                })
                .collect::<Vec<u32>>()
        };
        let (rows, cols) = (257usize, 3000usize);
        let mut x: u32 = 99;
        let mut values: Vec<f32> = (0..rows * cols)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                match x >> 28 {
                    0..=5 => -(((x >> 8) % 1000) as f32) - 1.0,
                    6..=10 => 0.0,
                    _ => -0.0,
                }
            })
            .collect();
        // Rows 0..100: a NaN somewhere (negative ones too); columns 0..50: likewise.
        for r in 0..100 {
            let nan = if r % 2 == 0 { f32::NAN } else { -f32::NAN };
            values[r * cols + (r * 37) % cols] = nan;
            values[r * cols + (r * 91) % cols] = nan;
        }
        for c in 0..50 {
            values[((c * 13) % rows) * cols + c] = f32::from_bits(0xffc0_0000 | c as u32);
        }
        let input = packed::<f32>(&[rows as u32, cols as u32], &values);
        for (direction, last) in [(INC, false), (DEC, true)] {
            for axis in [0usize, 1] {
                let got = argmax::<u32>(&input, &[axis as u32], direction).unwrap();
                assert_eq!(
                    got,
                    reference(&values, rows, cols, axis, last),
                    "axis {axis} last {last}"
                );
            }
            // The whole tensor: the first (last) NaN in row-major order.
            let whole = argmax::<u32>(&input, &[0, 1], direction).unwrap();
            let nans: Vec<usize> = (0..values.len()).filter(|&i| values[i].is_nan()).collect();
            let expected = if last { nans[nans.len() - 1] } else { nans[0] };
            assert_eq!(whole, [expected as u32], "whole, last {last}");
        }
    }
}
