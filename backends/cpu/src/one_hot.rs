//! `DML_ONE_HOT`, and the one-hot fill it shares with OpenVINO OneHot-1.
//!
//! The output is viewed as `outer × depth × inner` (dimensions before, at and after the Axis).
//! First every sequence's OnValue position is resolved from the indices (one per
//! `outer × inner` pair, read through the indices' strides); then each output element is
//! OnValue where its Axis coordinate equals its sequence's position, OffValue elsewhere.

use crate::element::{Bits, Element, OneHotIndex};
use crate::parallel::{for_each_chunk_mut, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::simd::{copy_streaming, stream_fence};
use crate::strided::{internal, write_packed, Layout, Nest};
use crate::thresholds::{ONE_HOT_STAGE_BYTES, STREAM_MIN_BYTES};
use opconform_backend::{BackendError, DataType, Level, OneHotDesc, Tensor};

/// Position value meaning "no OnValue in this sequence".
pub(crate) const NO_POSITION: u32 = u32::MAX;

/// Runs `DML_ONE_HOT` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &OneHotDesc,
    indices: &Tensor,
    values: &Tensor,
    output: &mut Tensor,
    level: Level,
) -> Result<(), BackendError> {
    let indices_layout = Layout::new(&desc.indices, indices.data.len(), "IndicesTensor")?;
    let values_layout = Layout::new(&desc.values, values.data.len(), "ValuesTensor")?;
    let output_layout = Layout::new(&desc.output, output.data.len(), "OutputTensor")?;
    let axis = desc.axis as usize;
    let sizes = &output_layout.sizes;
    let consistent = axis < sizes.len()
        && indices_layout.sizes.len() == sizes.len()
        && indices_layout
            .sizes
            .iter()
            .zip(sizes)
            .enumerate()
            .all(|(d, (&i, &o))| if d == axis { i == 1 } else { i == o });
    if !consistent || desc.values.data_type != desc.output.data_type {
        return Err(internal("DML_ONE_HOT tensors are inconsistent"));
    }
    let outer: usize = sizes[..axis].iter().product();
    let depth = sizes[axis];
    let inner: usize = sizes[axis + 1..].iter().product();

    // OffValue: element 0. OnValue: coordinate 1 along the innermost dimension of size > 1.
    let on_dim = values_layout
        .sizes
        .iter()
        .rposition(|&s| s > 1)
        .ok_or_else(|| internal("ValuesTensor holds fewer than two elements"))?;
    let size = values_layout.element_size;
    let on_offset = values_layout.strides[on_dim] * size;
    let off = &values.data[..size];
    let on = &values.data[on_offset..on_offset + size];

    // Negative indices count from the end from DML_FEATURE_LEVEL_3_0 (the only levels that
    // allow signed index types).
    let from_end = level.at_least(Level::dml(0x3000));
    let positions = positions_of(
        desc.indices.data_type,
        &indices.data,
        &indices_layout,
        depth as u64,
        from_end,
    )?;
    let shape = OneHotShape {
        outer,
        depth,
        inner,
    };
    fill_bytes(&positions, shape, on, off, &output_layout, &mut output.data)
}

/// Resolves the position of every index of a tensor of `data_type` (row-major order), or
/// [`NO_POSITION`] for an index outside a sequence of `depth` elements.
pub(crate) fn positions_of(
    data_type: DataType,
    data: &[u8],
    layout: &Layout,
    depth: u64,
    from_end: bool,
) -> Result<Vec<u32>, BackendError> {
    match data_type {
        DataType::Uint32 => positions::<u32>(data, layout, depth, from_end),
        DataType::Uint64 => positions::<u64>(data, layout, depth, from_end),
        DataType::Int32 => positions::<i32>(data, layout, depth, from_end),
        DataType::Int64 => positions::<i64>(data, layout, depth, from_end),
        other => Err(internal(format!("{other} is not a OneHot index type"))),
    }
}

fn positions<I: OneHotIndex>(
    data: &[u8],
    layout: &Layout,
    depth: u64,
    from_end: bool,
) -> Result<Vec<u32>, BackendError> {
    let count = layout.count;
    let mut positions = Vec::new();
    positions
        .try_reserve_exact(count)
        .map_err(|_| internal("cannot allocate the OneHot positions"))?;
    positions.resize(count, NO_POSITION);
    let nest = Nest::merged(&layout.sizes, [&layout.strides]);
    let [step] = nest.inner_strides();
    let parallel = count >= PARALLEL_MIN_ELEMENTS;
    for_each_chunk_mut(&mut positions, TASK_ELEMENTS, parallel, |c, chunk| {
        let start = c * TASK_ELEMENTS;
        nest.rows(start, start + chunk.len(), |flat, [offset], len, _| {
            let out = &mut chunk[flat - start..flat - start + len];
            for (j, slot) in out.iter_mut().enumerate() {
                let at = (offset + j * step) * I::SIZE;
                let index = I::read(&data[at..]);
                *slot = index
                    .position(depth, from_end)
                    .and_then(|p| u32::try_from(p).ok())
                    .unwrap_or(NO_POSITION);
            }
        });
    });
    Ok(positions)
}

/// The `outer × depth × inner` view of a one-hot output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneHotShape {
    /// Product of the sizes before the one-hot axis.
    pub outer: usize,
    /// Size of the one-hot axis.
    pub depth: usize,
    /// Product of the sizes after the one-hot axis.
    pub inner: usize,
}

/// Writes the one-hot output through `layout` (sizes `outer × depth × inner` in row-major
/// order): `on` where the Axis coordinate equals the sequence's position, `off` elsewhere.
/// `on` and `off` are the values' bytes, copied bit for bit.
pub(crate) fn fill_bytes(
    positions: &[u32],
    shape: OneHotShape,
    on: &[u8],
    off: &[u8],
    layout: &Layout,
    out: &mut [u8],
) -> Result<(), BackendError> {
    let total = shape
        .outer
        .checked_mul(shape.depth)
        .and_then(|n| n.checked_mul(shape.inner));
    if total != Some(layout.count) || positions.len() != shape.outer * shape.inner {
        return Err(internal("one-hot output and positions disagree"));
    }
    if on.len() != layout.element_size || off.len() != layout.element_size {
        return Err(internal("one-hot values have the wrong size"));
    }
    write_packed(layout, out, |packed| {
        match layout.element_size {
            1 => fill::<Bits<1>>(positions, shape, Bits::read(on), Bits::read(off), packed),
            2 => fill::<Bits<2>>(positions, shape, Bits::read(on), Bits::read(off), packed),
            4 => fill::<Bits<4>>(positions, shape, Bits::read(on), Bits::read(off), packed),
            8 => fill::<Bits<8>>(positions, shape, Bits::read(on), Bits::read(off), packed),
            other => return Err(internal(format!("no {other}-byte element type"))),
        }
        Ok(())
    })
}

/// The packed one-hot fill for one element size: the output is cut into tasks of
/// [`TASK_ELEMENTS`] elements, run in parallel when the output is large. An output of at least
/// [`STREAM_MIN_BYTES`] is written [`ONE_HOT_STAGE_BYTES`] at a time into a buffer that stays
/// in the L1 cache, then copied out with non-temporal stores ([`copy_streaming`]): the output
/// is far larger than the caches, and plain stores would read every line before writing it.
fn fill<V: Element>(positions: &[u32], shape: OneHotShape, on: V, off: V, out: &mut [u8]) {
    if out.is_empty() {
        return;
    }
    let parallel = out.len() / V::SIZE >= PARALLEL_MIN_ELEMENTS;
    let stream = out.len() >= STREAM_MIN_BYTES;
    for_each_chunk_mut(out, TASK_ELEMENTS * V::SIZE, parallel, |c, chunk| {
        let first = c * TASK_ELEMENTS;
        if !stream {
            fill_range(positions, shape, on, off, first, chunk);
            return;
        }
        let mut stage = [0u8; ONE_HOT_STAGE_BYTES];
        let piece = ONE_HOT_STAGE_BYTES / V::SIZE * V::SIZE;
        for (p, dst) in chunk.chunks_mut(piece).enumerate() {
            let staged = &mut stage[..dst.len()];
            fill_range(
                positions,
                shape,
                on,
                off,
                first + p * piece / V::SIZE,
                staged,
            );
            copy_streaming(dst, staged, true);
        }
        stream_fence();
    });
}

/// Writes the one-hot output's elements from row-major index `first` on, as many as `out`
/// holds: runs of OffValue with the OnValue placed where a sequence's position falls.
#[inline]
fn fill_range<V: Element>(
    positions: &[u32],
    shape: OneHotShape,
    on: V,
    off: V,
    first: usize,
    out: &mut [u8],
) {
    let OneHotShape { depth, inner, .. } = shape;
    let mut rest = out;
    if inner == 1 {
        // Contiguous sequences: element s * depth + a.
        let (mut s, mut a) = (first / depth, first % depth);
        while !rest.is_empty() {
            let n = (depth - a).min(rest.len() / V::SIZE);
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(n * V::SIZE);
            for dst in run.chunks_exact_mut(V::SIZE) {
                off.write(dst);
            }
            let position = positions[s] as usize;
            if (a..a + n).contains(&position) {
                on.write(&mut run[(position - a) * V::SIZE..]);
            }
            (rest, s, a) = (tail, s + 1, 0);
        }
        return;
    }
    // Rows of `inner` elements, one per (outer, axis) pair: element (o * depth + a) * inner + x.
    let row = first / inner;
    let (mut o, mut a, mut x) = (row / depth, row % depth, first % inner);
    while !rest.is_empty() {
        let n = (inner - x).min(rest.len() / V::SIZE);
        let (run, tail) = std::mem::take(&mut rest).split_at_mut(n * V::SIZE);
        let here = a as u32;
        let run_positions = &positions[o * inner + x..o * inner + x + n];
        for (dst, &position) in run.chunks_exact_mut(V::SIZE).zip(run_positions) {
            let value = if position == here { on } else { off };
            value.write(dst);
        }
        (rest, x, a) = (tail, 0, a + 1);
        if a == depth {
            (a, o) = (0, o + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_tensors::{elements, packed, strided};
    use crate::tests::execute;
    use half::f16;
    use opconform_backend::{
        BackendError, DataType, Level, OneHotDesc, OperatorDesc, Tensor, TensorDesc,
    };

    const L4_1: u16 = 0x4100;

    fn one_hot(
        indices: &Tensor,
        values: &Tensor,
        output_type: DataType,
        output_sizes: &[u32],
        axis: u32,
        level: u16,
    ) -> Result<Tensor, BackendError> {
        let op = OperatorDesc::OneHot(OneHotDesc {
            indices: indices.desc.clone(),
            values: values.desc.clone(),
            output: TensorDesc::packed(output_type, output_sizes),
            axis,
        });
        execute(&op, &[indices.clone(), values.clone()], Level::dml(level))
            .map(|mut outputs| outputs.remove(0))
    }

    // --- The documented examples (004_2f0448eeeaeae8b3.txt, 000_257a17ba323924f1.txt) ---

    #[test]
    fn example_1() {
        let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x2000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            1., 0., 0., 0.,
            0., 0., 0., 1.,
            0., 0., 1., 0.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    #[test]
    fn example_2_different_axis() {
        let indices = packed::<u32>(&[1, 1, 1, 4], &[0, 2, 1, 0]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            2,
            0x2000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            1., 0., 0., 1.,
            0., 0., 1., 0.,
            0., 1., 0., 0.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    #[test]
    fn example_3_different_on_off_values() {
        let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
        let values = packed::<f32>(&[1, 1, 3, 1], &[4., 2., 9.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x2000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            2., 4., 4., 4.,
            4., 4., 4., 2.,
            4., 4., 2., 4.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    #[test]
    fn example_4_negative_and_out_of_bounds_indices() {
        let indices = packed::<i32>(&[1, 1, 3, 1], &[-3, 100, 3]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x3000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            0., 1., 0., 0.,
            0., 0., 0., 0.,
            0., 0., 0., 1.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    // --- Edge cases derived from the spec text ---

    #[test]
    fn negative_indices_at_and_below_minus_depth() {
        // Axis size 4: -4 is position 0, -5 and below are out of range (all OffValue).
        let indices = packed::<i64>(&[5, 1], &[-4, -5, i64::MIN, -1, 4]);
        let values = packed::<i32>(&[1, 2], &[7, 9]);
        let out = one_hot(&indices, &values, DataType::Int32, &[5, 4], 1, L4_1).unwrap();
        #[rustfmt::skip]
        let expected: [i32; 20] = [
            9, 7, 7, 7,
            7, 7, 7, 7,
            7, 7, 7, 7,
            7, 7, 7, 9,
            7, 7, 7, 7,
        ];
        assert_eq!(elements::<i32>(&out), expected);
    }

    #[test]
    fn huge_unsigned_and_wide_indices_are_out_of_range() {
        // u64::MAX must not wrap to -1; 2^32 must not truncate to 0.
        let indices = packed::<u64>(&[1, 3], &[u64::MAX, 1 << 32, 2]);
        let values = packed::<u8>(&[1, 2], &[0, 1]);
        let out = one_hot(&indices, &values, DataType::Uint8, &[3, 3], 0, L4_1).unwrap();
        // Axis 0: column j is the sequence of index j.
        #[rustfmt::skip]
        let expected: [u8; 9] = [
            0, 0, 0,
            0, 0, 0,
            0, 0, 1,
        ];
        assert_eq!(elements::<u8>(&out), expected);

        let indices = packed::<i64>(&[3, 1], &[1 << 32, (1 << 32) + 1, 1]);
        let out = one_hot(&indices, &values, DataType::Uint8, &[3, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<u8>(&out), [0, 0, 0, 0, 0, 1]);

        let indices = packed::<u32>(&[2, 1], &[u32::MAX, 4]);
        let out = one_hot(&indices, &values, DataType::Uint8, &[2, 5], 1, L4_1).unwrap();
        assert_eq!(elements::<u8>(&out), [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn on_value_is_first_element_of_innermost_non_unit_dimension() {
        // Values {2,3} packed: the innermost size > 1 is dimension 1, so OnValue is element
        // (0,1) = 20, not (1,0) = 40.
        let indices = packed::<u32>(&[1, 1], &[0]);
        let values = packed::<f32>(&[2, 3], &[10., 20., 30., 40., 50., 60.]);
        let out = one_hot(&indices, &values, DataType::Float32, &[1, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<f32>(&out), [20., 10.]);

        // Values {3,1}: innermost size > 1 is dimension 0; OnValue is element (1,0).
        let values = packed::<f32>(&[3, 1], &[10., 20., 30.]);
        let out = one_hot(&indices, &values, DataType::Float32, &[1, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<f32>(&out), [20., 10.]);
    }

    #[test]
    fn values_through_strides() {
        // Values {2,2} with strides {1,3}: buffer [a, b, c, d]; element (0,0) = a (OffValue),
        // element (0,1) sits at offset 3 = d (OnValue).
        let values = strided::<i16>(&[2, 2], Some(&[1, 3]), &[-1, -2, -3, -4]);
        let indices = packed::<u32>(&[3, 1], &[2, 0, 5]);
        let out = one_hot(&indices, &values, DataType::Int16, &[3, 3], 1, L4_1).unwrap();
        assert_eq!(elements::<i16>(&out), [-1, -1, -4, -4, -1, -1, -1, -1, -1]);

        // Values {2,4} with strides {5,0}: dimension 1 broadcasts, so its coordinate 1 is at
        // offset 0 too: OnValue equals OffValue.
        let values = strided::<i16>(&[2, 4], Some(&[5, 0]), &[6, 1, 1, 1, 1, 8]);
        let indices = packed::<u32>(&[1, 1], &[1]);
        let out = one_hot(&indices, &values, DataType::Int16, &[1, 3], 1, L4_1).unwrap();
        assert_eq!(elements::<i16>(&out), [6, 6, 6]);

        // Values {2,1} with strides {2,7}: OnValue is (1,0) at offset 2.
        let values = strided::<i16>(&[2, 1], Some(&[2, 7]), &[6, 1, 8]);
        let out = one_hot(&indices, &values, DataType::Int16, &[1, 3], 1, L4_1).unwrap();
        assert_eq!(elements::<i16>(&out), [6, 8, 6]);
    }

    #[test]
    fn strided_indices_and_output() {
        // Indices {2,1,2} with strides {1,0,2}: buffer [i0, i1, i2, i3] holds logical
        // (0,0,0)=i0, (0,0,1)=i2, (1,0,0)=i1, (1,0,1)=i3.
        let indices = strided::<i32>(&[2, 1, 2], Some(&[1, 0, 2]), &[0, 1, 2, -1]);
        let values = packed::<u16>(&[1, 1, 2], &[0, 1]);
        let op = OperatorDesc::OneHot(OneHotDesc {
            indices: indices.desc.clone(),
            values: values.desc.clone(),
            // Output {2,3,2} stored with padded strides {8,2,1}.
            output: TensorDesc::with_strides(DataType::Uint16, &[2, 3, 2], Some(&[8, 2, 1]))
                .unwrap(),
            axis: 1,
        });
        let out = execute(&op, &[indices, values], Level::dml(L4_1))
            .unwrap()
            .remove(0);
        // Sequences: (o=0,i=0) index 0; (0,1) index 2; (1,0) index 1; (1,1) index -1 = 2.
        #[rustfmt::skip]
        let expected: [u16; 12] = [
            1, 0,
            0, 0,
            0, 1,

            0, 0,
            1, 0,
            0, 1,
        ];
        assert_eq!(elements::<u16>(&out), expected);
        // Padding between rows keeps the poison.
        assert_eq!(&out.data[12..16], &[0xAB; 4]);
    }

    #[test]
    fn values_are_copied_bit_for_bit() {
        let nan = f32::from_bits(0x7fc1_2345);
        let values = packed::<f32>(&[1, 2], &[-0.0, nan]);
        let indices = packed::<u32>(&[2, 1], &[1, 0]);
        let out = one_hot(&indices, &values, DataType::Float32, &[2, 2], 1, L4_1).unwrap();
        assert_eq!(
            elements::<u32>(&out),
            [0x8000_0000, 0x7fc1_2345, 0x7fc1_2345, 0x8000_0000]
        );

        let values = packed::<f64>(&[1, 2], &[-0.0, f64::from_bits(0xfff0_0000_0000_0001)]);
        let out = one_hot(&indices, &values, DataType::Float64, &[2, 2], 1, L4_1).unwrap();
        assert_eq!(
            elements::<u64>(&out),
            [
                0x8000_0000_0000_0000,
                0xfff0_0000_0000_0001,
                0xfff0_0000_0000_0001,
                0x8000_0000_0000_0000
            ]
        );

        let values = packed::<f16>(&[1, 2], &[f16::from_bits(0x8000), f16::from_bits(0x7e01)]);
        let out = one_hot(&indices, &values, DataType::Float16, &[2, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<u16>(&out), [0x8000, 0x7e01, 0x7e01, 0x8000]);
    }

    #[test]
    fn every_value_type_at_4_1() {
        let indices = packed::<u32>(&[1], &[1]);
        macro_rules! check {
            ($t:ty, $off:expr, $on:expr) => {{
                let values = packed::<$t>(&[2], &[$off, $on]);
                let out = one_hot(&indices, &values, values.desc.data_type, &[3], 0, L4_1).unwrap();
                assert_eq!(elements::<$t>(&out), [$off, $on, $off]);
            }};
        }
        check!(f64, 0.5, -2.5);
        check!(f32, 0.5, -2.5);
        check!(f16, f16::from_f32(0.5), f16::from_f32(-2.5));
        check!(i64, i64::MIN, i64::MAX);
        check!(i32, -7, 7);
        check!(i16, -7, 7);
        check!(i8, -7, 7);
        check!(u64, 3, u64::MAX);
        check!(u32, 3, u32::MAX);
        check!(u16, 3, u16::MAX);
        check!(u8, 3, u8::MAX);
    }

    #[test]
    fn eight_dimensions_and_large_parallel_output() {
        // 8-D, Axis 7 of size 5; indices run 0..=6 repeating (5 and 6 are out of range).
        let count = 2 * 3 * 2 * 2 * 3 * 2 * 2u32;
        let index_sizes = [2, 3, 2, 2, 3, 2, 2, 1];
        let indices_values: Vec<i32> = (0..count as i32).map(|i| i % 7).collect();
        let indices = packed::<i32>(&index_sizes, &indices_values);
        let values = packed::<i8>(&[1, 1, 1, 1, 1, 1, 1, 2], &[0, 1]);
        let out_sizes = [2, 3, 2, 2, 3, 2, 2, 5];
        let out = one_hot(&indices, &values, DataType::Int8, &out_sizes, 7, L4_1).unwrap();
        let got = elements::<i8>(&out);
        for (s, &index) in indices_values.iter().enumerate() {
            for a in 0..5 {
                let expected = i8::from(index == a);
                assert_eq!(
                    got[s * 5 + a as usize],
                    expected,
                    "sequence {s}, position {a}"
                );
            }
        }

        // Large enough to run in parallel: {300, 1000} with Axis 0 and Axis 1.
        let n = 300 * 1000;
        let idx: Vec<u32> = (0..1000).map(|i| (i * 7) % 311).collect();
        let indices = packed::<u32>(&[1, 1000], &idx);
        let values = packed::<f32>(&[1, 2], &[-1., 1.]);
        let out = one_hot(&indices, &values, DataType::Float32, &[300, 1000], 0, L4_1).unwrap();
        let got = elements::<f32>(&out);
        assert_eq!(got.len(), n);
        for a in 0..300 {
            for (i, &index) in idx.iter().enumerate() {
                let expected = if index == a as u32 { 1. } else { -1. };
                assert_eq!(got[a * 1000 + i], expected);
            }
        }
        let idx: Vec<u32> = (0..1000).map(|i| (i * 13) % 317).collect();
        let indices = packed::<u32>(&[1000, 1], &idx);
        let out = one_hot(&indices, &values, DataType::Float32, &[1000, 300], 1, L4_1).unwrap();
        let got = elements::<f32>(&out);
        for (s, &index) in idx.iter().enumerate() {
            for a in 0..300 {
                let expected = if index == a as u32 { 1. } else { -1. };
                assert_eq!(got[s * 300 + a], expected);
            }
        }
    }

    #[test]
    fn invalid_descriptors_name_rules() {
        // Indices Axis dimension of size 2.
        let indices = packed::<u32>(&[1, 1, 3, 2], &[0; 6]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let err =
            one_hot(&indices, &values, DataType::Float32, &[1, 1, 3, 4], 3, L4_1).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.INDICES_AXIS_SIZE"]),
            "{err}"
        );
        // Signed indices before 3_0.
        let indices = packed::<i32>(&[1, 1, 3, 1], &[0, 1, 2]);
        let err = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x2100,
        )
        .unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.SUPPORT_DATA_TYPE"]),
            "{err}"
        );
        // FLOAT64 values before 4_1.
        let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 1, 2]);
        let values = packed::<f64>(&[1, 1, 1, 2], &[0., 1.]);
        let err = one_hot(
            &indices,
            &values,
            DataType::Float64,
            &[1, 1, 3, 4],
            3,
            0x4000,
        )
        .unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.SUPPORT_DATA_TYPE"]),
            "{err}"
        );
        // A one-element ValuesTensor.
        let values = packed::<f32>(&[1, 1, 1, 1], &[0.]);
        let err =
            one_hot(&indices, &values, DataType::Float32, &[1, 1, 3, 4], 3, L4_1).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.VALUES_ELEMENT_COUNT"]),
            "{err}"
        );
    }
}
