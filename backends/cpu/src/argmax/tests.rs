//! ArgMax tests: the documented examples, edge cases, and every path (memory-order plans,
//! both instruction sets, both sides of each threshold) against a plain reference.

use super::splits_items;
use crate::simd::Isa;
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
            out_index = out_index * out_sizes[d] + if axes.contains(&d) { 0 } else { coords[d] };
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

// --- Every path against a plain reference --------------------------------------------------

/// An element as the reference compares it: NaN above every number (all NaNs equal), -0.0
/// equal to +0.0 (as `f64` compares them), integers exactly.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum RefValue {
    Int(i128),
    Float(f64),
    Nan,
}

/// The element at byte `at` of `data`, read independently of the kernels' element code.
fn ref_value(data_type: DataType, data: &[u8], at: usize) -> RefValue {
    let b = |n: usize| -> [u8; 8] {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&data[at..at + n]);
        w
    };
    let float = |v: f64| {
        if v.is_nan() {
            RefValue::Nan
        } else {
            RefValue::Float(v)
        }
    };
    match data_type {
        DataType::Float64 => float(f64::from_le_bytes(b(8))),
        DataType::Float32 => float(f64::from(f32::from_le_bytes(b(4)[..4].try_into().unwrap()))),
        DataType::Float16 => {
            float(f16::from_bits(u16::from_le_bytes([data[at], data[at + 1]])).to_f64())
        }
        DataType::Int64 => RefValue::Int(i128::from(i64::from_le_bytes(b(8)))),
        DataType::Int32 => RefValue::Int(i128::from(i32::from_le_bytes(
            b(4)[..4].try_into().unwrap(),
        ))),
        DataType::Int16 => RefValue::Int(i128::from(i16::from_le_bytes([data[at], data[at + 1]]))),
        DataType::Int8 => RefValue::Int(i128::from(data[at] as i8)),
        DataType::Uint64 => RefValue::Int(i128::from(u64::from_le_bytes(b(8)))),
        DataType::Uint32 => RefValue::Int(i128::from(u32::from_le_bytes(
            b(4)[..4].try_into().unwrap(),
        ))),
        DataType::Uint16 => RefValue::Int(i128::from(u16::from_le_bytes([data[at], data[at + 1]]))),
        DataType::Uint8 => RefValue::Int(i128::from(data[at])),
    }
}

/// The plain ArgMax: every logical element visited in row-major order through the strides;
/// per output, the best value and its flat index over the reduced axes (in increasing axis
/// order); ties to the lowest index, or with `last` the highest.
fn reference_argmax(desc: &TensorDesc, data: &[u8], axes: &[u32], last: bool) -> Vec<u64> {
    let sizes: Vec<usize> = desc.sizes.iter().map(|&s| s as usize).collect();
    let strides = desc.effective_strides();
    let rank = sizes.len();
    let reduced = |d: usize| axes.contains(&(d as u32));
    let outputs: usize = (0..rank)
        .filter(|&d| !reduced(d))
        .map(|d| sizes[d])
        .product();
    let mut best: Vec<Option<(RefValue, u64)>> = vec![None; outputs];
    let count: usize = sizes.iter().product();
    let mut coords = vec![0usize; rank];
    let size = desc.data_type.size_in_bytes();
    for _ in 0..count {
        let (mut out, mut index, mut offset) = (0usize, 0u64, 0u64);
        for d in 0..rank {
            if reduced(d) {
                index = index * sizes[d] as u64 + coords[d] as u64;
            } else {
                out = out * sizes[d] + coords[d];
            }
            offset += coords[d] as u64 * strides[d];
        }
        let value = ref_value(desc.data_type, data, offset as usize * size);
        let replace = match best[out] {
            None => true,
            Some((b, _)) => value > b || (last && value == b),
        };
        if replace {
            best[out] = Some((value, index));
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

/// Runs the kernels with `isa` (UINT64 output) and returns the output indices.
fn run_isa(input: &Tensor, axes: &[u32], last: bool, isa: Isa) -> Vec<u64> {
    run_isa_into(input, axes, last, isa, DataType::Uint64)
}

/// [`run_isa`] into an output of `output_type` (32- or 64-bit), read back as `u64`.
fn run_isa_into(
    input: &Tensor,
    axes: &[u32],
    last: bool,
    isa: Isa,
    output_type: DataType,
) -> Vec<u64> {
    let mut out_sizes = input.desc.sizes.clone();
    for &a in axes {
        out_sizes[a as usize] = 1;
    }
    let desc = ArgMaxDesc {
        input: input.desc.clone(),
        output: TensorDesc::packed(output_type, &out_sizes),
        axes: axes.to_vec(),
        axis_direction: if last { DEC } else { INC },
    };
    let mut output = crate::test_tensors::poisoned(&desc.output);
    super::run_with(&desc, input, &mut output, isa).unwrap();
    match output_type {
        DataType::Int32 | DataType::Uint32 => elements::<u32>(&output)
            .into_iter()
            .map(u64::from)
            .collect(),
        _ => elements::<u64>(&output),
    }
}

/// Checks every instruction set, both directions, against the reference.
fn check_all(input: &Tensor, axes: &[u32], what: &str) {
    for last in [false, true] {
        let expected = reference_argmax(&input.desc, &input.data, axes, last);
        for isa in Isa::available() {
            let got = run_isa(input, axes, last, isa);
            assert!(
                got == expected,
                "{what}: {:?} sizes {:?} strides {:?} axes {axes:?} last {last} {isa:?}: \
                 first difference at output {}",
                input.desc.data_type,
                input.desc.sizes,
                input.desc.strides,
                got.iter()
                    .zip(&expected)
                    .position(|(a, b)| a != b)
                    .unwrap_or(usize::MAX),
            );
        }
    }
}

/// Checks every instruction set, both directions and the 32- and 64-bit output types against
/// the reference.
fn check_every_output_type(input: &Tensor, axes: &[u32], what: &str) {
    for last in [false, true] {
        let expected = reference_argmax(&input.desc, &input.data, axes, last);
        for output_type in [DataType::Int32, DataType::Uint32, DataType::Int64] {
            for isa in Isa::available() {
                let got = run_isa_into(input, axes, last, isa, output_type);
                assert_eq!(
                    got, expected,
                    "{what}: axes {axes:?} last {last} into {output_type:?} {isa:?}"
                );
            }
        }
    }
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random bytes for `count` elements of `data_type` drawn from few values (many ties), with
/// signed zeros, infinities and NaNs of both signs among the floats.
fn tie_heavy(data_type: DataType, count: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(count * data_type.size_in_bytes());
    for _ in 0..count {
        let r = rng.below(1 << 20);
        let f = match r % 16 {
            0 => -0.0,
            1 => 0.0,
            2 if r % 64 == 2 => f64::NAN,
            3 if r % 64 == 3 => -f64::NAN,
            4 => f64::NEG_INFINITY,
            5 if r % 32 == 5 => f64::INFINITY,
            k => (k as f64 - 8.0) * 0.5,
        };
        let i = (r % 9) as i64 - 4;
        match data_type {
            DataType::Float64 => out.extend_from_slice(&f.to_le_bytes()),
            DataType::Float32 => out.extend_from_slice(&(f as f32).to_le_bytes()),
            DataType::Float16 => out.extend_from_slice(&f16::from_f64(f).to_bits().to_le_bytes()),
            DataType::Int64 => out.extend_from_slice(&(i * (i64::MAX / 4)).to_le_bytes()),
            DataType::Int32 => {
                out.extend_from_slice(&((i * (i32::MAX as i64 / 4)) as i32).to_le_bytes())
            }
            DataType::Int16 => out.extend_from_slice(&((i * 8000) as i16).to_le_bytes()),
            DataType::Int8 => out.push((i * 30) as i8 as u8),
            DataType::Uint64 => out.extend_from_slice(&(((i + 4) as u64) << 61).to_le_bytes()),
            DataType::Uint32 => out.extend_from_slice(&(((i + 4) as u32) << 29).to_le_bytes()),
            DataType::Uint16 => out.extend_from_slice(&(((i + 4) as u16) << 13).to_le_bytes()),
            DataType::Uint8 => out.push(((i + 4) as u8) << 5),
        }
    }
    out
}

/// A tensor of `sizes` laid out in the memory order `order` (outermost first), with `pad`
/// extra elements after each dimension's span and stride 0 for the dimensions in `broadcast`,
/// its buffer filled by [`tie_heavy`].
fn laid_out(
    data_type: DataType,
    sizes: &[u32],
    order: &[usize],
    pad: &[u32],
    broadcast: &[usize],
    rng: &mut Rng,
) -> Tensor {
    let mut strides = vec![0u32; sizes.len()];
    let mut next = 1u32;
    for &d in order.iter().rev() {
        if broadcast.contains(&d) {
            continue;
        }
        strides[d] = next;
        next *= sizes[d] + pad[d];
    }
    let desc = TensorDesc::with_strides(data_type, sizes, Some(&strides)).unwrap();
    let len = desc.total_tensor_size_in_bytes as usize / data_type.size_in_bytes();
    Tensor::from_bytes(desc, tie_heavy(data_type, len, rng)).unwrap()
}

const ALL_TYPES: [DataType; 11] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Float64,
    DataType::Uint8,
    DataType::Int8,
    DataType::Uint16,
    DataType::Int16,
    DataType::Uint32,
    DataType::Int32,
    DataType::Uint64,
    DataType::Int64,
];

#[test]
fn permuted_padded_and_broadcast_layouts_of_rank_5_to_8_match_the_reference() {
    let mut rng = Rng(2024);
    for trial in 0..160 {
        let rank = 5 + trial % 4;
        let data_type = ALL_TYPES[trial % ALL_TYPES.len()];
        let sizes: Vec<u32> = (0..rank)
            .map(|_| [1, 2, 3, 4, 5, 7][rng.below(6) as usize])
            .collect();
        // A random memory order, padding on some dimensions, a broadcast one now and then.
        let mut order: Vec<usize> = (0..rank).collect();
        for i in (1..rank).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let pad: Vec<u32> = (0..rank)
            .map(|_| {
                if rng.below(4) == 0 {
                    1 + rng.below(3) as u32
                } else {
                    0
                }
            })
            .collect();
        let broadcast: Vec<usize> = (0..rank).filter(|_| rng.below(8) == 0).collect();
        let mut axes: Vec<u32> = (0..rank as u32).filter(|_| rng.below(2) == 0).collect();
        if axes.is_empty() {
            axes.push(rng.below(rank as u64) as u32);
        }
        let input = laid_out(data_type, &sizes, &order, &pad, &broadcast, &mut rng);
        check_all(&input, &axes, &format!("trial {trial}"));
    }
}

#[test]
fn transposed_and_permuted_large_inputs_match_the_reference() {
    let mut rng = Rng(7);
    // Large enough for blocks, tails, chunks and threads; memory order not the logical one.
    for (data_type, sizes, order, axes) in [
        (
            DataType::Float32,
            vec![300u32, 257],
            vec![1usize, 0],
            vec![0u32],
        ),
        (DataType::Float32, vec![300, 257], vec![1, 0], vec![1]),
        (DataType::Float32, vec![300, 257], vec![1, 0], vec![0, 1]),
        (DataType::Uint8, vec![40, 30, 50], vec![2, 0, 1], vec![0, 2]),
        (DataType::Float16, vec![40, 30, 50], vec![1, 2, 0], vec![1]),
        (
            DataType::Int64,
            vec![16, 8, 16, 8],
            vec![3, 1, 2, 0],
            vec![1, 3],
        ),
        (
            DataType::Float32,
            vec![16, 16, 16, 16],
            vec![0, 1, 2, 3],
            vec![1, 3],
        ),
        (
            DataType::Float32,
            vec![16, 16, 16, 16],
            vec![0, 1, 2, 3],
            vec![2, 3],
        ),
    ] {
        let pad = vec![0; sizes.len()];
        let input = laid_out(data_type, &sizes, &order, &pad, &[], &mut rng);
        check_all(&input, &axes, "large");
    }
}

#[test]
fn few_items_split_their_rows_only_when_long_and_narrow() {
    use crate::thresholds::{ARGMAX_SPLIT_MAX_WIDTH_PER_ROW, ARGMAX_SPLIT_MIN_ROWS};
    let rows = ARGMAX_SPLIT_MIN_ROWS;
    let widest = rows * ARGMAX_SPLIT_MAX_WIDTH_PER_ROW;
    on_threads(2, || {
        assert!(splits_items(true, 1, rows, widest));
        assert!(splits_items(true, 1, 1 << 20, 1));
        assert!(splits_items(true, 1, 4096, 16384));
        // An item per thread, a serial call, too few rows, too wide for its rows.
        assert!(!splits_items(true, 2, rows, widest));
        assert!(!splits_items(false, 1, rows, widest));
        assert!(!splits_items(true, 1, rows - 1, 1));
        assert!(!splits_items(true, 1, rows, widest + 1));
    });
}

/// Runs `f` on a pool of `threads` threads (the thresholds depend on the thread count).
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn both_sides_of_every_argmax_threshold() {
    use crate::thresholds::*;
    let mut rng = Rng(99);
    let packed_tensor = |data_type: DataType, sizes: &[u32], rng: &mut Rng| {
        let order: Vec<usize> = (0..sizes.len()).collect();
        laid_out(data_type, sizes, &order, &vec![0; sizes.len()], &[], rng)
    };
    on_threads(2, || {
        let f32_lanes = (ARGMAX_TAIL_BYTES / 4) as u32;
        let mut shapes: Vec<(DataType, Vec<u32>, Vec<u32>)> = Vec::new();
        // Runs around the short-run and block lengths (innermost axis reduced).
        for len in [
            ARGMAX_MIN_RUN_BYTES / 4 - 1,
            ARGMAX_MIN_RUN_BYTES / 4,
            ARGMAX_SCAN_BLOCK - 1,
            ARGMAX_SCAN_BLOCK,
            ARGMAX_SCAN_BLOCK + 1,
        ] {
            shapes.push((DataType::Float32, vec![3, len as u32], vec![1]));
        }
        for len in [ARGMAX_MIN_RUN_BYTES - 1, ARGMAX_MIN_RUN_BYTES] {
            shapes.push((DataType::Uint8, vec![5, len as u32], vec![1]));
        }
        // Short runs gathered into groups (several runs per output), and long ones cut.
        shapes.push((DataType::Float32, vec![4, 70, 3, 60], vec![1, 3]));
        shapes.push((DataType::Int16, vec![3, 3, 1500], vec![1, 2]));
        // Tails around the block of side-by-side outputs, rows around a chunk.
        for tail in [f32_lanes - 1, f32_lanes, f32_lanes + 1] {
            shapes.push((DataType::Float32, vec![3, tail], vec![0]));
        }
        for rows in [
            ARGMAX_CHUNK_ROWS - 1,
            ARGMAX_CHUNK_ROWS,
            ARGMAX_CHUNK_ROWS + 1,
        ] {
            shapes.push((DataType::Uint8, vec![rows as u32, 40], vec![0]));
        }
        // Total work around the parallel threshold: 255 × 257 = 65535, 256 × 256 = 65536.
        shapes.push((DataType::Float32, vec![255, 257], vec![1]));
        shapes.push((DataType::Float32, vec![256, 256], vec![1]));
        shapes.push((DataType::Float32, vec![255, 257], vec![0]));
        shapes.push((DataType::Float32, vec![256, 256], vec![0]));
        // Outputs (and tail blocks) around the split factor: below it, each reduction is split.
        let few = (ARGMAX_SPLIT_FACTOR * 2) as u32;
        for units in [few - 1, few] {
            shapes.push((DataType::Float32, vec![units, 20_000], vec![1]));
            shapes.push((DataType::Float64, vec![units, 64, 1024], vec![1]));
        }
        // One long reduction of everything (split over the range).
        shapes.push((DataType::Int32, vec![3, 50_001], vec![0, 1]));
        // Few items of rows around the fewest split, and of widths around the most split.
        let rows = ARGMAX_SPLIT_MIN_ROWS as u32;
        let widest = rows * ARGMAX_SPLIT_MAX_WIDTH_PER_ROW as u32;
        shapes.push((DataType::Uint8, vec![rows - 1, 1024], vec![0]));
        shapes.push((DataType::Uint8, vec![rows, widest], vec![0]));
        shapes.push((DataType::Float32, vec![rows, widest + 1], vec![0]));
        shapes.push((DataType::Float16, vec![2, 3, 20_000], vec![0, 1]));
        // One item (its rows split) and one per thread (shared out).
        shapes.push((DataType::Float32, vec![1, rows, 1000], vec![1]));
        shapes.push((DataType::Float32, vec![2, rows, 1000], vec![1]));
        for (data_type, sizes, axes) in shapes {
            let input = packed_tensor(data_type, &sizes, &mut rng);
            check_all(&input, &axes, "threshold");
        }
    });
}

#[test]
fn single_thread_and_many_threads_agree() {
    let mut rng = Rng(5);
    let order = [0usize, 1, 2];
    let input = laid_out(
        DataType::Float32,
        &[64, 33, 70],
        &order,
        &[0, 0, 0],
        &[],
        &mut rng,
    );
    for axes in [vec![0u32], vec![1], vec![2], vec![0, 2], vec![0, 1, 2]] {
        on_threads(1, || check_all(&input, &axes, "1 thread"));
        on_threads(3, || check_all(&input, &axes, "3 threads"));
    }
}

#[test]
fn batched_runs_of_interleaved_outputs_with_ties_match_the_reference() {
    // Runs long enough for the vector kernels, outputs interleaved between them in memory
    // (kept dimensions between reduced ones), walks in and out of index order, many ties.
    let mut rng = Rng(31);
    for (data_type, sizes, order, axes) in [
        (
            DataType::Float32,
            vec![3u32, 5, 4, 40],
            vec![0usize, 1, 2, 3],
            vec![1u32, 3],
        ),
        (
            DataType::Uint8,
            vec![3, 5, 4, 33],
            vec![0, 1, 2, 3],
            vec![1, 3],
        ),
        (
            DataType::Int16,
            vec![2, 70, 3, 20],
            vec![0, 1, 2, 3],
            vec![1, 3],
        ),
        // Reduced dimensions out of index order: axis 3 outside axis 1 in memory.
        (
            DataType::Float32,
            vec![3, 24, 4, 9],
            vec![0, 3, 2, 1],
            vec![1, 3],
        ),
        (DataType::Float64, vec![5, 12, 7], vec![1, 0, 2], vec![0, 2]),
        // Long runs cut into several pieces of the same output within one batch.
        (DataType::Float32, vec![3, 5000], vec![0, 1], vec![1]),
        (DataType::Uint8, vec![4, 3, 1500], vec![0, 1, 2], vec![0, 2]),
    ] {
        let pad = vec![0; sizes.len()];
        let input = laid_out(data_type, &sizes, &order, &pad, &[], &mut rng);
        check_all(&input, &axes, "batched");
        on_threads(1, || check_all(&input, &axes, "batched, 1 thread"));
    }
}

#[test]
fn one_contiguous_run_per_output_in_every_type_and_padding_matches_the_reference() {
    // The innermost axis alone reduced: each output is one run (short, padded, around a
    // vector, the one-pass length and a block, with a remainder shorter than a vector), in every type; a
    // broadcast reduced axis after the run makes its index stride larger than 1.
    use crate::thresholds::{ARGMAX_SCAN_BLOCK as BLOCK, ARGMAX_SHORT_RUN_BYTES};
    let mut rng = Rng(77);
    for (t, data_type) in ALL_TYPES.iter().enumerate() {
        let vector = (32 / data_type.size_in_bytes()) as u32;
        let block = BLOCK as u32;
        let short = (ARGMAX_SHORT_RUN_BYTES / data_type.size_in_bytes()) as u32;
        let lens = [
            vector - 1,
            vector,
            vector + 1,
            2 * vector + 3,
            60,
            short - 1,
            short,
            short + 1,
            255,
            block - 1,
            block,
            block + 1,
            block + vector - 1,
            block + vector,
            2 * block + 5,
        ];
        for (k, &len) in lens.iter().enumerate() {
            let pad = [0, 0, (t + k) as u32 % 5];
            let input = laid_out(*data_type, &[3, 4, len], &[0, 1, 2], &pad, &[], &mut rng);
            check_all(&input, &[2], "runs");
            on_threads(1, || check_all(&input, &[2], "runs, 1 thread"));
        }
        let input = laid_out(
            *data_type,
            &[5, 40, 3],
            &[0, 2, 1],
            &[0, 2, 0],
            &[2],
            &mut rng,
        );
        check_all(&input, &[1, 2], "runs, broadcast after");
    }
}

#[test]
fn short_tails_with_rows_back_to_back_are_widened_and_match_the_reference() {
    // The innermost dimension (in memory) is kept and shorter than a vector, and the reduced
    // dimension just outside it holds its rows back to back: the widened fold. Reduced sizes
    // from one position to thousands, cut into groups that divide them or leave positions over
    // (4099, a prime, always does: `rows::widening_cost`). A padded row, an outer reduced
    // dimension and an outer kept one are covered too.
    let mut rng = Rng(31);
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        let vector_elements = 32 / data_type.size_in_bytes();
        for tail in [2u32, 3, 5, (vector_elements as u32 - 1).max(2)] {
            let group = 128usize.div_ceil(tail as usize * data_type.size_in_bytes()) as u32;
            for reduced in [
                1u32,
                2,
                group - 1,
                group,
                group + 1,
                3 * group + 2,
                701,
                3000,
                4099,
            ] {
                if reduced > 701 && tail > 3 {
                    continue;
                }
                // Logical [outer, reduced, tail], laid out with the tail innermost.
                let sizes = [3u32, reduced, tail];
                let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, 0], &[], &mut rng);
                check_all(&input, &[1], &format!("tail {tail} reduced {reduced}"));
                // The same memory order under a permuted logical order: [tail, outer, reduced].
                let sizes = [tail, 3, reduced];
                let input = laid_out(data_type, &sizes, &[1, 2, 0], &[0, 0, 0], &[], &mut rng);
                check_all(
                    &input,
                    &[2],
                    &format!("permuted tail {tail} reduced {reduced}"),
                );
                if t % 3 == 0 {
                    // Two reduced dimensions, the outer one in memory reduced too.
                    let sizes = [4u32, reduced, tail];
                    let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, 0], &[], &mut rng);
                    check_all(
                        &input,
                        &[0, 1],
                        &format!("two axes tail {tail} reduced {reduced}"),
                    );
                }
                // Padded tail rows: widened with the padding's lanes ignored (up to a vector
                // of padding), or the plain fold (more).
                let v = vector_elements as u32;
                for pad in [1, v / 2 + 1, v, v + 1] {
                    if t % 3 != 0 && reduced != 701 {
                        continue;
                    }
                    let input =
                        laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, pad], &[], &mut rng);
                    check_all(
                        &input,
                        &[1],
                        &format!("tail {tail} padded by {pad}, reduced {reduced}"),
                    );
                }
            }
        }
    }
    // Large enough for threads, both splitting the items and one item's widened rows.
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Float32,
                &[2, 300_000],
                &[1, 0],
                &[0, 0],
                &[],
                &mut rng,
            );
            check_all(&input, &[1], "one item, long reduction");
            let input = laid_out(
                DataType::Uint8,
                &[818, 2, 600],
                &[2, 0, 1],
                &[0, 0, 0],
                &[],
                &mut rng,
            );
            check_all(&input, &[0], "sweep row shape");
            let input = laid_out(
                DataType::Int32,
                &[1300, 118, 2],
                &[0, 1, 2],
                &[0, 0, 5],
                &[],
                &mut rng,
            );
            check_all(&input, &[0, 1], "padded sweep row shape");
            // Many small packed items (`PackedTail`), split across tasks mid-walk.
            let input = laid_out(
                DataType::Int32,
                &[3000, 34, 2],
                &[0, 1, 2],
                &[0, 0, 0],
                &[],
                &mut rng,
            );
            check_all(&input, &[1], "many packed items");
            let input = laid_out(
                DataType::Float16,
                &[2000, 3, 9, 3],
                &[1, 0, 2, 3],
                &[0, 0, 0, 2],
                &[],
                &mut rng,
            );
            check_all(&input, &[2], "many padded packed items");
        });
    }
}

#[test]
fn wide_packed_items_store_their_row_numbers_as_vectors() {
    // Items whose position is wider than 32 bytes (`PackedTail`'s wide form; with AVX-512
    // their row numbers are stored as vectors, scaled by the reduced dimension's index
    // stride): one to four 64-byte vectors, a position under 64 bytes, padding between
    // positions (slots still consecutive) and every output type.
    let mut rng = Rng(91);
    for (data_type, sizes, pads) in [
        (DataType::Int32, [700u32, 10, 30], [0u32, 0, 0]),
        (DataType::Uint8, [500, 10, 100], [0, 0, 0]),
        (DataType::Float16, [400, 7, 50], [0, 0, 3]),
        (DataType::Int64, [300, 6, 32], [0, 0, 0]),
        (DataType::Float32, [600, 34, 12], [0, 0, 1]),
        (DataType::Int8, [300, 255, 40], [0, 0, 0]),
    ] {
        let input = laid_out(data_type, &sizes, &[0, 1, 2], &pads, &[], &mut rng);
        check_every_output_type(&input, &[1], "wide packed items");
    }
    // A broadcast reduced axis inside the packed one: each row number is scaled by its
    // size, and the last maximum offset by its last coordinate.
    let input = laid_out(
        DataType::Int32,
        &[300, 10, 30, 4],
        &[0, 1, 2, 3],
        &[0; 4],
        &[3],
        &mut rng,
    );
    check_every_output_type(&input, &[1, 3], "wide packed items over a broadcast axis");
    // An output of 4 MiB or more, 2 KiB per item: whole lines streamed.
    let input = laid_out(
        DataType::Uint8,
        &[2100, 2, 256],
        &[0, 1, 2],
        &[0; 3],
        &[],
        &mut rng,
    );
    check_all(&input, &[1], "wide packed items, streamed");
}

#[test]
fn kept_dimensions_together_in_memory_fold_as_one_tail_whatever_their_output_order() {
    // Permuted views whose kept elements lie together in memory, in an order that is not the
    // output's: the tail grows over them, and each lane's output slot comes from a walk.
    let mut rng = Rng(57);
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        // Logical [a, b, c, r] with memory order r, b, a, c (c innermost), reduce r.
        let sizes = [5u32, 7, 3, 9 + t as u32];
        let input = laid_out(data_type, &sizes, &[3, 1, 0, 2], &[0; 4], &[], &mut rng);
        check_all(&input, &[3], "three kept dimensions fused");
        // Two reduced dimensions outermost, the kept ones permuted beneath them.
        let sizes = [6u32, 4, 11, 2, 3];
        let input = laid_out(data_type, &sizes, &[4, 3, 1, 0, 2], &[0; 5], &[], &mut rng);
        check_all(&input, &[3, 4], "two reduced outside a fused tail");
        // Padding breaks the fusion between the kept dimensions.
        let input = laid_out(
            data_type,
            &sizes,
            &[4, 3, 1, 0, 2],
            &[0, 1, 0, 0, 0],
            &[],
            &mut rng,
        );
        check_all(&input, &[3, 4], "padded, not fused");
    }
    // A fused tail longer than a block (several items per unit, a block boundary inside a
    // fused dimension), on one thread and several.
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Int32,
                &[3000, 7, 3],
                &[2, 1, 0],
                &[0; 3],
                &[],
                &mut rng,
            );
            check_all(&input, &[2], "fused tail of several blocks");
            let input = laid_out(
                DataType::Float32,
                &[40, 1231, 3, 5],
                &[3, 1, 0, 2],
                &[0; 4],
                &[],
                &mut rng,
            );
            check_all(&input, &[3], "sweep row shape");
        });
    }
}

#[test]
fn short_tails_span_the_gaps_to_the_kept_dimensions_outside_them() {
    // Kept dimensions a few elements apart in memory (a short reduced axis between them, or
    // padding) fold as one range with ignored lanes in the gaps; the reduced positions and
    // the gaps come in every size up to past the largest gap that is spanned.
    let mut rng = Rng(77);
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        for tail in [1u32, 2, 3, 5] {
            for reduced in [1u32, 2, 3, 4, 7, 9, 17] {
                // [outer, reduced, tail]: the outer dimension lies reduced × tail apart.
                let sizes = [37u32, reduced, tail];
                let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0; 3], &[], &mut rng);
                check_all(&input, &[1], &format!("tail {tail} reduced {reduced}"));
                // Padded tail rows: the gap is padding.
                let pad = 1 + (reduced + t as u32) % 9;
                let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, pad], &[], &mut rng);
                check_all(
                    &input,
                    &[0],
                    &format!("tail {tail} pad {pad} reduced {reduced}"),
                );
                // Two kept dimensions outside, and a permuted output order.
                let sizes = [5u32, reduced, 6, tail];
                let input = laid_out(data_type, &sizes, &[2, 0, 1, 3], &[0; 4], &[], &mut rng);
                check_all(
                    &input,
                    &[1],
                    &format!("two outside tail {tail} reduced {reduced}"),
                );
            }
        }
    }
    // A tail too sparse to span (stride 3, 8-byte elements: not short) keeps every kept
    // dimension outside it (found by `opconform explore`, seed 7: outputs of every unit but
    // the first were left unwritten).
    for data_type in [DataType::Int64, DataType::Float32, DataType::Uint8] {
        let desc =
            TensorDesc::with_strides(data_type, &[2, 4, 4, 5, 1], Some(&[360, 72, 18, 3, 1]))
                .unwrap();
        let len = desc.total_tensor_size_in_bytes as usize / data_type.size_in_bytes();
        let input = Tensor::from_bytes(desc, tie_heavy(data_type, len, &mut rng)).unwrap();
        check_all(&input, &[0], "sparse tail with kept dimensions outside");
        check_all(&input, &[0, 1], "sparse tail, two reduced");
    }
    // Overlapping kept dimensions (a stride shorter than the tail's range) never share a lane.
    for data_type in [DataType::Float32, DataType::Uint8, DataType::Int64] {
        let desc = TensorDesc::with_strides(data_type, &[6, 3, 4], Some(&[2, 12, 1])).unwrap();
        let len = desc.total_tensor_size_in_bytes as usize / data_type.size_in_bytes();
        let input = Tensor::from_bytes(desc, tie_heavy(data_type, len, &mut rng)).unwrap();
        check_all(&input, &[1], "overlapping kept dimensions");
    }
    // Large enough for several blocks per unit and for threads, both splitting the items and
    // one item's reduced range.
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Float16,
                &[20_000, 4, 3],
                &[0, 1, 2],
                &[0; 3],
                &[],
                &mut rng,
            );
            check_all(&input, &[1], "many units");
            let input = laid_out(
                DataType::Int32,
                &[5, 30_000, 2],
                &[1, 0, 2],
                &[0, 0, 3],
                &[],
                &mut rng,
            );
            check_all(&input, &[0], "few rows, a long padded tail");
            let input = laid_out(
                DataType::Uint8,
                &[3, 70_000, 2],
                &[0, 1, 2],
                &[0, 0, 1],
                &[],
                &mut rng,
            );
            check_all(&input, &[1], "one long reduction per unit");
        });
    }
}

#[test]
fn short_runs_fold_side_by_side_as_a_spanned_tail() {
    // The innermost dimension reduced in runs of a few elements (packed, padded, or with a
    // reduced dimension outside the kept one): each output's elements are folded as the
    // lanes of a tail spanning the runs, on either side of the size limits.
    let mut rng = Rng(91);
    for data_type in ALL_TYPES {
        for run in [2u32, 3, 5, 9, 15, 16, 17, 40] {
            let sizes = [3u32, 41, run];
            let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0; 3], &[], &mut rng);
            check_all(&input, &[2], &format!("runs of {run}"));
            let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, 3], &[], &mut rng);
            check_all(&input, &[2], &format!("padded runs of {run}"));
            check_all(
                &input,
                &[0, 2],
                &format!("padded runs of {run}, outer reduced"),
            );
            let sizes = [4u32, 7, run, 5];
            let input = laid_out(data_type, &sizes, &[0, 3, 1, 2], &[0; 4], &[], &mut rng);
            check_all(&input, &[2], &format!("permuted runs of {run}"));
        }
    }
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Float16,
                &[300, 250, 9],
                &[0, 1, 2],
                &[0, 0, 0],
                &[],
                &mut rng,
            );
            check_all(&input, &[2], "many short runs");
            let input = laid_out(
                DataType::Float32,
                &[3, 30_000, 4],
                &[0, 1, 2],
                &[0, 0, 2],
                &[],
                &mut rng,
            );
            check_all(&input, &[0, 2], "padded runs, few outputs");
        });
    }
}

#[test]
fn short_runs_inside_kept_dimensions_fold_lane_by_lane_and_match_the_reference() {
    // The innermost axis reduced in runs of at most ARGMAX_RUN_LANES_MAX_RUN_BYTES, packed
    // inside kept axes, with reduced axes outside: `run_lanes`. Blocks whose outputs do not
    // fill whole chunks, rows past a chunk of ARGMAX_CHUNK_ROWS (row numbers in the narrowest
    // lanes), reduced axes outside in and out of index order, few items (the rows split over
    // threads) and many, every type (tie-heavy, with NaNs of both signs among the floats).
    use crate::thresholds::{ARGMAX_CHUNK_ROWS, ARGMAX_RUN_LANES_MAX_RUN_BYTES};
    let mut rng = Rng(4242);
    let rows = ARGMAX_CHUNK_ROWS as u32 + 3;
    for (t, data_type) in ALL_TYPES.iter().enumerate() {
        let longest = (ARGMAX_RUN_LANES_MAX_RUN_BYTES / data_type.size_in_bytes()) as u32;
        let shapes: [(Vec<u32>, Vec<usize>, Vec<u32>); 9] = [
            // {u, r, k, run} axes 1,3 in logical order.
            (vec![3, 9, 37, 16], vec![0, 1, 2, 3], vec![1, 3]),
            // The longest run, and one element past it (then the scan kernels).
            (vec![2, 5, 3, longest], vec![0, 1, 2, 3], vec![1, 3]),
            (vec![2, 5, 3, longest + 1], vec![0, 1, 2, 3], vec![1, 3]),
            // More rows than a chunk, one unit: the rows split across threads.
            (vec![rows, 6, 8], vec![0, 1, 2], vec![0, 2]),
            // Two reduced axes outside, stored against their index order; two kept axes in
            // the block.
            (vec![4, 3, 2, 5, 6], vec![3, 1, 0, 2, 4], vec![1, 3, 4]),
            // A kept axis outside the rows, two reduced axes fused into one row dimension.
            (vec![3, 4, 5, 6, 7], vec![0, 1, 2, 3, 4], vec![1, 2, 4]),
            // The run is logical axis 1, innermost in memory: its index stride is axis 3's
            // size.
            (vec![3, 6, 5, 4], vec![0, 3, 2, 1], vec![1, 3]),
            // Blocks narrower than a vector (one vector per row, its lanes past the block
            // ignored; the last rows end the input), past a chunk of rows and within one.
            (vec![3, rows, 3, 2], vec![0, 1, 2, 3], vec![1, 3]),
            (vec![5, 7, 2, 3], vec![0, 1, 2, 3], vec![1, 3]),
        ];
        for (k, (sizes, order, axes)) in shapes.into_iter().enumerate() {
            // Packed, and with padding after each run of up to a vector (lanes folded and
            // ignored) or past it.
            let most = (32 / data_type.size_in_bytes()) as u32;
            for run_pad in [0, 1 + (t + k) as u32 % most, most, most + 1] {
                let mut pad = vec![0; sizes.len()];
                pad[*order.last().unwrap()] = run_pad;
                let input = laid_out(*data_type, &sizes, &order, &pad, &[], &mut rng);
                let what = format!("run lanes {t}.{k}, padding {run_pad}");
                on_threads(2, || check_all(&input, &axes, &what));
                on_threads(1, || check_all(&input, &axes, &what));
            }
        }
    }
}

#[test]
fn lone_runs_of_up_to_two_vectors_match_the_reference_whatever_the_order_of_their_outputs() {
    // One contiguous run of 1 to 64 bytes per output (`window_runs` under AVX2), packed or
    // padded, with the kept dimensions in another memory order than the outputs' (lines of runs
    // whose slots lie apart, tasks that start inside a line), both directions; the last runs
    // reach the buffer's end.
    let mut rng = Rng(6060);
    for data_type in ALL_TYPES {
        for len in 1..=(64 / data_type.size_in_bytes()) as u32 {
            let pad = len % 3;
            let input = laid_out(
                data_type,
                &[5, 3, len],
                &[1, 0, 2],
                &[0, 0, pad],
                &[],
                &mut rng,
            );
            check_all(&input, &[2], "lone runs, kept dimensions swapped");
            let input = laid_out(
                data_type,
                &[2, 3, len, 4],
                &[3, 0, 1, 2],
                &[0, 1, pad, 0],
                &[],
                &mut rng,
            );
            check_all(
                &input,
                &[2],
                "lone runs, kept dimensions permuted and padded",
            );
        }
    }
}

#[test]
fn items_of_up_to_two_vectors_at_a_power_of_two_pitch_match_the_reference() {
    // A reduced dimension whose stride (the pitch) is a power of two of 2 to 32 bytes holding
    // a short tail of outputs (`window_items` under AVX2): every pitch, tails that fill it or
    // leave gaps, items of one vector (short of it or filling it) and of two (overlapping or
    // not), the outer dimensions swapped in memory, both directions; the last items reach the
    // buffer's end. Then a tail whose elements lie two apart.
    let mut rng = Rng(6161);
    for data_type in ALL_TYPES {
        let size = data_type.size_in_bytes();
        for pitch in [2usize, 4, 8, 16, 32].into_iter().filter(|&p| p >= size) {
            let per_pitch = pitch / size;
            let tails = [1, 2, per_pitch / 2 + 1, per_pitch];
            let rows = [2, 3, 32 / pitch, 32 / pitch + 1, 64 / pitch];
            for &tail in tails.iter().filter(|&&k| k <= per_pitch) {
                for &rows in rows.iter().filter(|&&r| r >= 2 && r * pitch <= 64) {
                    let pad = (per_pitch - tail) as u32;
                    let input = laid_out(
                        data_type,
                        &[7, 5, rows as u32, tail as u32],
                        &[1, 0, 2, 3],
                        &[0, 0, 0, pad],
                        &[],
                        &mut rng,
                    );
                    check_all(&input, &[2], "items at a power-of-two pitch");
                }
            }
        }
        // Three outputs two elements apart at a pitch of 8 elements (32 bytes at most).
        let (tail, pitch) = (3u32, 8u32);
        for rows in [2, 64 / (8 * size as u32)] {
            if pitch as usize * size > 32 || rows < 2 {
                continue;
            }
            let strides = [rows * pitch, pitch, 2];
            let desc =
                TensorDesc::with_strides(data_type, &[9, rows, tail], Some(&strides)).unwrap();
            let len = desc.total_tensor_size_in_bytes as usize / size;
            let input = Tensor::from_bytes(desc, tie_heavy(data_type, len, &mut rng)).unwrap();
            check_all(&input, &[1], "items whose tail's elements lie two apart");
        }
    }
}

#[test]
fn stacked_items_of_a_window_of_up_to_two_vectors_per_row_match_the_reference() {
    // One reduced dimension of 2 to 257 rows (256 at most are stacked), each row's outputs
    // (the tail and a kept dimension inside the row, padded) spanning one vector or two,
    // the outer dimensions swapped in memory, both directions; the last items reach the
    // buffer's end.
    let mut rng = Rng(6262);
    for data_type in ALL_TYPES {
        let size = data_type.size_in_bytes() as u32;
        for (kept, tail, pad) in [(2u32, 3u32, 1u32), (4, 4, 7), (3, 2, 0), (2, 1, 2)] {
            if ((kept - 1) * (tail + pad) + tail) * size > 64 {
                continue;
            }
            for rows in [2u32, 3, 17, 256, 257] {
                let outer = if rows > 17 { [2, 3] } else { [7, 5] };
                let input = laid_out(
                    data_type,
                    &[outer[0], outer[1], rows, kept, tail],
                    &[1, 0, 2, 3, 4],
                    &[0, 0, 0, 0, pad],
                    &[],
                    &mut rng,
                );
                check_all(&input, &[2], "stacked items");
            }
        }
        // Rows that overlap (a row's outputs span 8 elements, the rows lie 2 apart), and a
        // broadcast outer dimension (stride 0: its outputs share their elements).
        for (sizes, strides, what) in [
            (
                [9u32, 4, 8],
                [8u32, 2, 1],
                "stacked items whose rows overlap",
            ),
            (
                [6, 5, 2],
                [0, 2, 1],
                "items under a broadcast kept dimension",
            ),
        ] {
            if sizes[2] * size > 64 {
                continue;
            }
            let desc = TensorDesc::with_strides(data_type, &sizes, Some(&strides)).unwrap();
            let len = desc.total_tensor_size_in_bytes as usize / size as usize;
            let input = Tensor::from_bytes(desc, tie_heavy(data_type, len, &mut rng)).unwrap();
            check_all(&input, &[1], what);
        }
        // Two rows 4096 bytes apart (the widest stacked item) and one element further.
        for pitch in [4096 / size, 4096 / size + 1] {
            let strides = [2 * pitch, pitch, 1];
            let desc = TensorDesc::with_strides(data_type, &[3, 2, 4], Some(&strides)).unwrap();
            let len = desc.total_tensor_size_in_bytes as usize / size as usize;
            let input = Tensor::from_bytes(desc, tie_heavy(data_type, len, &mut rng)).unwrap();
            check_all(&input, &[1], "stacked items at the widest span");
        }
    }
}

#[test]
fn runs_shorter_than_a_vector_match_the_reference_alone_or_many_per_output() {
    // Runs of 1 to 64 bytes, padded or not: one per output (a vector from the run's start,
    // or near the buffer's end one ending there, its other lanes ignored), and many per
    // output with every axis or the outer and inner ones reduced (groups of runs reduced
    // with no list of pieces, an output's range split across threads at any element).
    let mut rng = Rng(4242);
    for (t, data_type) in ALL_TYPES.iter().enumerate() {
        let size = data_type.size_in_bytes();
        let lens: Vec<u32> = [1, 2, 3, 5, 31 / size, 32 / size + 1, 64 / size]
            .into_iter()
            .filter(|&n| n >= 1)
            .map(|n| n as u32)
            .collect();
        for (k, &len) in lens.iter().enumerate() {
            let pad = (t + k) as u32 % 4;
            let input = laid_out(
                *data_type,
                &[3, 4, len],
                &[0, 1, 2],
                &[0, 0, pad],
                &[],
                &mut rng,
            );
            check_all(&input, &[2], "short runs");
            let input = laid_out(
                *data_type,
                &[3, 7, len],
                &[0, 1, 2],
                &[0, 0, pad],
                &[],
                &mut rng,
            );
            check_all(&input, &[0, 1, 2], "short runs, every axis");
            check_all(&input, &[0, 2], "short runs, outer and inner axes");
            on_threads(1, || {
                check_all(&input, &[0, 1, 2], "short runs, every axis, 1 thread")
            });
        }
        // A buffer shorter than a vector.
        let input = laid_out(*data_type, &[2, 3], &[0, 1], &[0, 0], &[], &mut rng);
        check_all(&input, &[1], "tiny buffer");
        check_all(&input, &[0, 1], "tiny buffer, every axis");
    }
    // Enough work to split one output's range over threads, at ranges that cut runs.
    for (data_type, len, pad) in [
        (DataType::Float32, 5u32, 3u32),
        (DataType::Float16, 9, 0),
        (DataType::Uint8, 7, 2),
    ] {
        let input = laid_out(
            data_type,
            &[31, 700, len],
            &[0, 1, 2],
            &[0, 0, pad],
            &[],
            &mut rng,
        );
        on_threads(3, || check_all(&input, &[0, 1, 2], "short runs split"));
        on_threads(2, || check_all(&input, &[1, 2], "short runs, few outputs"));
        on_threads(1, || check_all(&input, &[0, 1, 2], "short runs, one task"));
    }
}

#[test]
fn permuted_packed_tensors_reduced_over_every_axis_match_the_reference() {
    // Every axis reduced of a permuted packed tensor: the elements fill one range out of
    // index order (one maximum of the range, then the index of each element holding it).
    // Tie-heavy values hold the maximum many times; few distinct values, more than the
    // ties a dense reduction takes (then run by run); kept axes outside the range.
    let mut rng = Rng(808);
    for (t, data_type) in ALL_TYPES.iter().enumerate() {
        let sizes = [5u32, 7, 3, 11];
        let orders = [[3usize, 1, 0, 2], [1, 0, 3, 2], [0, 2, 1, 3]];
        let order = orders[t % orders.len()];
        let input = laid_out(*data_type, &sizes, &order, &[0; 4], &[], &mut rng);
        check_all(&input, &[0, 1, 2, 3], "permuted, every axis");
        check_all(&input, &[1, 2, 3], "permuted, inner axes");
        on_threads(1, || {
            check_all(&input, &[0, 1, 2, 3], "permuted, one thread")
        });
    }
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Int64,
                &[40, 700, 5, 3],
                &[0, 1, 3, 2],
                &[0; 4],
                &[],
                &mut rng,
            );
            check_all(&input, &[0, 1, 2, 3], "permuted, split");
            let input = laid_out(
                DataType::Uint8,
                &[40, 700, 5, 3],
                &[2, 0, 1, 3],
                &[0; 4],
                &[],
                &mut rng,
            );
            check_all(&input, &[0, 1, 2, 3], "permuted, many ties");
        });
    }
}

#[test]
fn a_dense_range_read_once_keeps_the_lowest_index_of_a_maximum_met_twice() {
    // An INT32 [2, 20000] stored with axis 0 innermost (logical index i * 20000 + j at offset
    // i + 2j), reduced over both axes in blocks of memory order: the maximum is held twice,
    // once in the first block and once several blocks later in the same task's range (offsets
    // 10 or 11, and 30000 or 30001), the lower index first in memory or last.
    let desc = TensorDesc::with_strides(DataType::Int32, &[2, 20000], Some(&[1, 2])).unwrap();
    for (early, late) in [((0, 5), (1, 15000)), ((1, 5), (0, 15000))] {
        let mut values: Vec<i32> = (0..40000).map(|k: i32| k * 7919 % 97).collect();
        for (i, j) in [early, late] {
            values[i + 2 * j] = 1000;
        }
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let input = Tensor::from_bytes(desc.clone(), bytes).unwrap();
        for threads in [1, 2] {
            on_threads(threads, || {
                check_all(
                    &input,
                    &[0, 1],
                    &format!("maximum at {early:?} and {late:?}"),
                )
            });
        }
    }
}

#[test]
fn a_dense_range_searches_each_run_for_its_first_or_last_holder_only() {
    // An INT32 [100, 400] stored with axis 0 innermost (logical index 400i + j at offset
    // i + 100j): runs of 100 along which the index grows, many to a block of memory. The
    // maximum is held twice in runs 3 and 4 each; the lowest index is the first holder of
    // run 4, the highest the last holder of run 3, so a search that skips a run too many, or
    // stops at the first holder met from either end, gives another answer.
    let desc = TensorDesc::with_strides(DataType::Int32, &[100, 400], Some(&[1, 100])).unwrap();
    let mut values: Vec<i32> = (0..40000).map(|k: i32| k * 7919 % 97).collect();
    for (i, j) in [(50, 3), (99, 3), (10, 4), (60, 4)] {
        values[i + 100 * j] = 1000;
    }
    let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = Tensor::from_bytes(desc, bytes).unwrap();
    for last in [false, true] {
        let expected = reference_argmax(&input.desc, &input.data, &[0, 1], last);
        assert_eq!(expected, [if last { 39603 } else { 4004 }], "the reference");
    }
    for threads in [1, 2] {
        on_threads(threads, || {
            check_all(&input, &[0, 1], "holders in two runs")
        });
    }
}

#[test]
fn element_strided_tails_are_folded_as_the_range_they_span_and_match_the_reference() {
    // A padded innermost dimension of size 1 leaves the tail's outputs `1 + pad` elements
    // apart, at most a line: the fold covers the whole range and ignores the padding's lanes.
    let mut rng = Rng(4242);
    for data_type in ALL_TYPES {
        for pad in [1, 3, 7] {
            let sizes = [3u32, 4, 300, 1];
            let input = laid_out(
                data_type,
                &sizes,
                &[0, 1, 2, 3],
                &[0, 0, 0, pad],
                &[],
                &mut rng,
            );
            check_all(&input, &[1], &format!("strided tail, padded by {pad}"));
            check_all(
                &input,
                &[0, 1],
                &format!("strided tail over two axes, padded by {pad}"),
            );
        }
    }
    // NaNs in the padding only: the vector fold meets them, the exact fold takes over, and
    // the results are the run elements' alone.
    let pad = 3usize;
    let (outer, rows, tail) = (2usize, 5usize, 200usize);
    let strides = [
        (rows * tail * (1 + pad)) as u32,
        (tail * (1 + pad)) as u32,
        (1 + pad) as u32,
        1,
    ];
    let desc = TensorDesc::with_strides(
        DataType::Float32,
        &[outer as u32, rows as u32, tail as u32, 1],
        Some(&strides),
    )
    .unwrap();
    let len = desc.total_tensor_size_in_bytes as usize / 4;
    let values: Vec<f32> = (0..len)
        .map(|i| {
            if i % (1 + pad) == 0 {
                (i * 7919 % 13) as f32
            } else {
                f32::NAN
            }
        })
        .collect();
    let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = Tensor::from_bytes(desc, bytes).unwrap();
    check_all(&input, &[1], "strided tail, NaN padding");
}

#[test]
fn element_strided_runs_are_swept_in_vectors_and_match_the_reference() {
    // The innermost dimension is padded: each output's elements lie a few apart, the span
    // swept a vector at a time with the other lanes ignored. Whole-tensor, one run per output
    // (inner axis of a padded `[n, len, 1]`), and runs split over threads.
    let mut rng = Rng(77);
    for data_type in ALL_TYPES {
        let vector = 32 / data_type.size_in_bytes() as u32;
        for pad in [1, 2, vector - 1] {
            let sizes = [3u32, 700, 1];
            let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, pad], &[], &mut rng);
            check_all(&input, &[0, 1, 2], &format!("whole, padded by {pad}"));
            check_all(&input, &[1], &format!("inner runs, padded by {pad}"));
        }
    }
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Float16,
                &[2, 90_000, 1],
                &[0, 1, 2],
                &[0, 0, 5],
                &[],
                &mut rng,
            );
            check_all(&input, &[0, 1, 2], "whole, on threads");
            check_all(&input, &[1], "two long runs, on threads");
        });
    }
}

#[test]
fn long_tails_of_permuted_inputs_walk_in_output_order_and_match_the_reference() {
    // A permuted `[3, 2, 1100, 4]` stored as (axis 1, axis 3, axis 0, axis 2), reduced over
    // axis 1: the tail (axis 2, 1,100 lanes, at least ARGMAX_OUTPUT_ORDER_MIN_TAIL_BYTES of
    // every type) spans axis 0 but not axis 3, innermost in the output, whose units are
    // walked fastest over blocks of the tail; on one thread and split over two and three.
    let mut rng = Rng(4242);
    for data_type in ALL_TYPES.iter().copied() {
        let input = laid_out(
            data_type,
            &[3, 2, 1100, 4],
            &[1, 3, 0, 2],
            &[0; 4],
            &[],
            &mut rng,
        );
        for threads in [1, 2, 3] {
            on_threads(threads, || check_all(&input, &[1], "output-order tail"));
        }
        let padded = laid_out(
            data_type,
            &[3, 2, 1100, 4],
            &[1, 3, 0, 2],
            &[0, 0, 5, 0],
            &[],
            &mut rng,
        );
        on_threads(2, || check_all(&padded, &[1], "padded output-order tail"));
        // 100 units (axis 3): each one's share of the tail's bytes falls below the block
        // floor, so the tail is cut into blocks of 1024 outputs (512 of 8-byte elements), the
        // last one short.
        let many = laid_out(
            data_type,
            &[3, 2, 1100, 100],
            &[1, 3, 0, 2],
            &[0; 4],
            &[],
            &mut rng,
        );
        for threads in [1, 2] {
            on_threads(threads, || check_all(&many, &[1], "many units over blocks"));
        }
    }
}

#[test]
fn wide_packed_tails_are_reduced_per_item_and_match_the_reference() {
    // The kept elements just inside one reduced dimension fill one to eight vectors (a tail of
    // one dimension, or of two dense ones under a permuted logical order), each item reduced
    // in registers; past 256 positions or eight vectors the other paths take over.
    let mut rng = Rng(4242);
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        let vector = 32 / data_type.size_in_bytes() as u32;
        for tail in [vector + 1, 2 * vector + 3, 8 * vector, 8 * vector + 1] {
            for reduced in [2u32, 7, 256, 257] {
                if t % 2 == 1 && reduced == 257 {
                    continue;
                }
                let sizes = [5u32, reduced, tail];
                let input = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, 0], &[], &mut rng);
                check_all(&input, &[1], &format!("tail {tail} reduced {reduced}"));
                let padded = laid_out(data_type, &sizes, &[0, 1, 2], &[0, 0, 3], &[], &mut rng);
                check_all(&padded, &[1], &format!("tail {tail}+3 reduced {reduced}"));
            }
        }
        // A permuted `[2, n, 9, 8]` over its last axis: the tail is the dense (9, 2).
        let input = laid_out(
            data_type,
            &[2, 40, 9, 8],
            &[1, 3, 2, 0],
            &[0; 4],
            &[],
            &mut rng,
        );
        check_all(&input, &[3], "two-dimension tail");
    }
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            let input = laid_out(
                DataType::Int64,
                &[900, 1, 260, 5],
                &[0, 1, 2, 3],
                &[0; 4],
                &[],
                &mut rng,
            );
            check_all(&input, &[2], "many wide items, over a chunk of rows");
            let input = laid_out(
                DataType::Float32,
                &[2, 3000, 9, 8],
                &[1, 3, 2, 0],
                &[0; 4],
                &[],
                &mut rng,
            );
            check_all(&input, &[3], "many wide items");
        });
    }
}

#[test]
fn padded_ranges_of_short_runs_are_packed_and_match_the_reference() {
    // A padded tensor of 1- or 2-byte elements reduced over every axis (or all but the
    // outermost): runs shorter than a vector at a pitch, the span packed by compresses into L1
    // buffers. Several buffers per output, a tail shorter than a vector, pitches that do and
    // do not divide a vector (every phase), tie-heavy values with NaN, one or two threads.
    let mut rng = Rng(4242);
    let shapes: [([u32; 3], [u32; 3]); 4] = [
        ([3, 1751, 2], [0, 0, 6]),
        ([2, 700, 5], [0, 0, 4]),
        ([4, 333, 3], [0, 0, 2]),
        ([5, 97, 31], [0, 0, 9]),
    ];
    for data_type in [
        DataType::Uint8,
        DataType::Int8,
        DataType::Float16,
        DataType::Uint16,
        DataType::Int16,
    ] {
        for (sizes, pad) in shapes {
            let input = laid_out(data_type, &sizes, &[0, 1, 2], &pad, &[], &mut rng);
            let what = format!("padded by {pad:?}");
            check_all(&input, &[0, 1, 2], &format!("{what}, every axis"));
            check_all(
                &input,
                &[1, 2],
                &format!("{what}, an output per outer index"),
            );
            on_threads(2, || {
                check_all(&input, &[0, 1, 2], &format!("{what}, two threads"))
            });
        }
    }
}

#[test]
fn lone_short_runs_of_narrow_elements_fold_as_a_tail_and_match_the_reference() {
    // One contiguous run per output of a few 1- or 2-byte elements, packed or padded (pitch
    // at most 16): folded side by side as a spanned tail rather than a call per output. Runs
    // at the byte threshold and past it, many outputs (several vectors of the tail) and tie-heavy
    // values with NaN, one or two threads.
    let mut rng = Rng(1717);
    for data_type in [
        DataType::Uint8,
        DataType::Int8,
        DataType::Float16,
        DataType::Int16,
    ] {
        let size = data_type.size_in_bytes() as u32;
        for run in [1u32, 2, 3, 5, 10 / size, 10 / size + 1] {
            for pad in [0u32, 1, 6] {
                let input = laid_out(
                    data_type,
                    &[3, 257, run],
                    &[0, 1, 2],
                    &[0, 0, pad],
                    &[],
                    &mut rng,
                );
                let what = format!("runs of {run} padded by {pad}");
                check_all(&input, &[2], &what);
                on_threads(2, || {
                    check_all(&input, &[2], &format!("{what}, two threads"))
                });
            }
        }
    }
}

/// `input` with every NaN replaced by 1.5 (types without NaN unchanged): groups of many
/// elements drawn by [`tie_heavy`] almost always hold a NaN, which sends them down the
/// general path.
fn without_nans(input: &Tensor) -> Tensor {
    let size = input.desc.data_type.size_in_bytes();
    let mut bytes = input.data.clone();
    for e in bytes.chunks_exact_mut(size) {
        match input.desc.data_type {
            DataType::Float64 if f64::from_le_bytes(e.try_into().unwrap()).is_nan() => {
                e.copy_from_slice(&1.5f64.to_le_bytes())
            }
            DataType::Float32 if f32::from_le_bytes(e.try_into().unwrap()).is_nan() => {
                e.copy_from_slice(&1.5f32.to_le_bytes())
            }
            DataType::Float16 if f16::from_le_bytes(e.try_into().unwrap()).is_nan() => {
                e.copy_from_slice(&f16::from_f32(1.5).to_le_bytes())
            }
            _ => {}
        }
    }
    Tensor::from_bytes(input.desc.clone(), bytes).unwrap()
}

#[test]
fn groups_of_short_runs_inside_reduced_dimensions_match_the_reference() {
    // Whole runs of up to ARGMAX_SHORT_RUN_BYTES inside another reduced dimension (the
    // innermost axes reduced, padded after each run): groups of runs reduced at once, with
    // AVX-512 in one pass over whole vectors and a masked rest. Run lengths on either side of
    // a 512-bit vector and up to the limit; one group per output and several (ties across
    // groups); with and without NaNs; one thread and two (few outputs: each split).
    use crate::thresholds::ARGMAX_SHORT_RUN_BYTES;
    let mut rng = Rng(1717);
    for data_type in ALL_TYPES {
        let size = data_type.size_in_bytes();
        let vector = (64 / size) as u32;
        let longest = (ARGMAX_SHORT_RUN_BYTES / size) as u32;
        for run in [
            1,
            3,
            7,
            vector - 1,
            vector,
            vector + 1,
            24,
            2 * vector + 5,
            longest,
        ] {
            for pad in [0, 4] {
                let shapes: [(Vec<u32>, Vec<u32>); 3] = [
                    (vec![3, 5, 9, run], vec![2, 3]),
                    (vec![2, 4, 3, run], vec![1, 2, 3]),
                    (vec![2, 1200 / run + 3, run], vec![1, 2]),
                ];
                for (sizes, axes) in shapes {
                    let order: Vec<usize> = (0..sizes.len()).collect();
                    let mut pads = vec![0; sizes.len()];
                    pads[sizes.len() - 1] = pad;
                    let input = laid_out(data_type, &sizes, &order, &pads, &[], &mut rng);
                    let what = format!("groups of runs of {run} padded by {pad}");
                    check_all(&input, &axes, &what);
                    let clean = without_nans(&input);
                    check_all(&clean, &axes, &format!("{what}, no NaN"));
                    on_threads(2, || {
                        check_all(&clean, &axes, &format!("{what}, no NaN, 2"))
                    });
                }
            }
        }
    }
}

#[test]
fn run_lanes_of_several_vectors_collapse_each_run_and_match_the_reference() {
    // Runs of more than one vector inside kept axes, with reduced axes outside
    // (`collapsed_runs`): each run's vectors folded into one, the last vector overlapping the
    // one before when the run is not whole vectors. Runs of two vectors, a lane past, and up
    // to the run-lanes limit; padding after each run; two reduced axes outside, stored
    // against their index order; a run whose logical axis lies outside the rows' (not
    // collapsed: its codes would not follow the index); for one-byte lanes, rows × vectors
    // (rounded up to a power of two) on either side of 256 (the codes' limit); with and without NaNs (a NaN sends the item back
    // to the lane fold); one thread and two.
    use crate::thresholds::ARGMAX_RUN_LANES_MAX_RUN_BYTES;
    let mut rng = Rng(2626);
    for data_type in ALL_TYPES {
        let size = data_type.size_in_bytes();
        let vector = (64 / size) as u32;
        let longest = (ARGMAX_RUN_LANES_MAX_RUN_BYTES / size) as u32;
        for run in [2 * vector, 2 * vector + 1, 3 * vector - 3, longest] {
            // Rows whose codes just fill 256 with 512- and 256-bit vectors (a row's codes
            // rounded up to a power of two).
            let limit_512 = 256 / run.div_ceil(vector).next_power_of_two();
            let limit_256 = 256 / run.div_ceil(vector / 2).next_power_of_two();
            for pad in [0, 3] {
                let shapes: [(Vec<u32>, Vec<usize>, Vec<u32>); 7] = [
                    // {units, rows, outputs, run} axes 1,3.
                    (vec![3, 9, 5, run], vec![0, 1, 2, 3], vec![1, 3]),
                    // Rows × vectors at and just past 256.
                    (vec![2, limit_512, 3, run], vec![0, 1, 2, 3], vec![1, 3]),
                    (vec![2, limit_512 + 1, 3, run], vec![0, 1, 2, 3], vec![1, 3]),
                    (vec![2, limit_256, 3, run], vec![0, 1, 2, 3], vec![1, 3]),
                    (vec![2, limit_256 + 1, 3, run], vec![0, 1, 2, 3], vec![1, 3]),
                    // Two reduced axes outside, stored against their index order.
                    (vec![3, 2, 4, 3, run], vec![2, 1, 0, 3, 4], vec![1, 2, 4]),
                    // The run is logical axis 1, innermost in memory: the row axis (3) lies
                    // inside it in index order, so the lane fold takes it.
                    (vec![3, run, 5, 4], vec![0, 3, 2, 1], vec![1, 3]),
                ];
                for (sizes, order, axes) in shapes {
                    let mut pads = vec![0; sizes.len()];
                    pads[sizes.len() - 1] = pad;
                    let input = laid_out(data_type, &sizes, &order, &pads, &[], &mut rng);
                    let what = format!("collapsed runs of {run} padded by {pad}");
                    let clean = without_nans(&input);
                    // One thread folds each item's rows at once (the codes' limit); two split
                    // the rows of few items.
                    for threads in [1, 2] {
                        on_threads(threads, || {
                            check_all(&input, &axes, &format!("{what}, {threads}"));
                            check_all(&clean, &axes, &format!("{what}, no NaN, {threads}"));
                        });
                    }
                }
            }
        }
    }
}

#[test]
fn running_row_folds_over_many_chunks_match_the_reference_with_a_late_nan() {
    // Reductions of many rows over contiguous outputs keep their maxima running across chunks
    // of rows (`fold_rows_running`): rows listed whole or walked (over 4096), one reduced
    // dimension (indices in even steps) or two, alone or split across threads; a NaN met only
    // after several clean chunks sends the whole range to the exact fold.
    let running = crate::argmax::kernels::RUNNING_CHUNK_ROWS as u32;
    let mut rng = Rng(41);
    let shapes: [(Vec<u32>, Vec<u32>); 5] = [
        (vec![2 * running + 1, 40], vec![0]),
        (vec![4500, 40], vec![0]),
        (vec![700, 3, 40], vec![0, 1]),
        (vec![3 * running, 5, 17], vec![0]),
        (vec![9000, 16], vec![0]),
    ];
    for (sizes, axes) in shapes {
        let count: u32 = sizes.iter().product();
        let values: Vec<f32> = (0..count).map(|_| rng.below(50) as f32 - 25.0).collect();
        let bytes: Vec<u8> = values.iter().map(|&v| v as i8 as u8).collect();
        let ints: Vec<i64> = values.iter().map(|&v| v as i64 * 1_000_003).collect();
        let mut late_nan = values.clone();
        late_nan[count as usize - 3 * *sizes.last().unwrap() as usize + 5] = f32::NAN;
        for threads in [1, 2] {
            on_threads(threads, || {
                check_all(&packed(&sizes, &values), &axes, "running f32");
                check_all(&packed(&sizes, &late_nan), &axes, "running f32, late NaN");
                check_all(&packed(&sizes, &bytes), &axes, "running u8");
                check_all(&packed(&sizes, &ints), &axes, "running i64");
            });
        }
    }
}

#[test]
fn kept_dimensions_between_reduced_ones_walk_in_memory_order_and_match_the_reference() {
    // Rows plans with mid kept dimensions (`interleaved`): padded rank 5 over axes 1,3 as in
    // the bench, two levels of mid dimensions, several units, none (blocks of the outermost mid
    // dimension split across threads), rows over one chunk, and the reduced dimensions out of
    // index order in memory (not interleaved). Tie-heavy floats hold NaNs, which send their
    // items to the exact fold; integers stay on the interleaved one.
    let mut rng = Rng(2026);
    // Sizes, memory order (outermost first), padding per dimension, reduced axes.
    type Layout<'a> = (&'a [u32], &'a [usize], &'a [u32], &'a [u32]);
    let shapes: [Layout; 7] = [
        (
            &[3, 4, 5, 8, 40],
            &[0, 1, 2, 3, 4],
            &[0, 0, 0, 0, 4],
            &[1, 3],
        ),
        (
            &[4, 5, 3, 6, 8, 33],
            &[0, 1, 2, 3, 4, 5],
            &[0; 6],
            &[0, 2, 4],
        ),
        (
            &[2, 3, 4, 5, 8, 40],
            &[0, 1, 2, 3, 4, 5],
            &[1, 0, 2, 0, 0, 0],
            &[2, 4],
        ),
        (&[6, 9, 8, 40], &[0, 1, 2, 3], &[0, 0, 0, 8], &[0, 2]),
        (&[3, 2, 300, 40], &[0, 1, 2, 3], &[0; 4], &[0, 2]),
        (&[4, 5, 6, 40], &[2, 1, 0, 3], &[0; 4], &[0, 2]),
        (
            &[5, 4, 3, 8, 36],
            &[0, 1, 2, 3, 4],
            &[0, 0, 0, 1, 0],
            &[1, 3],
        ),
    ];
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        for &(sizes, order, pad, axes) in &shapes {
            let input = laid_out(data_type, sizes, order, pad, &[], &mut rng);
            let what = format!("interleaved {sizes:?} order {order:?} #{t}");
            check_all(&input, axes, &what);
        }
    }
    // Large enough to split across threads: one unit (blocks of the mid dimension), and many.
    for (sizes, axes) in [
        (vec![8u32, 32, 8, 40], vec![0u32, 2]),
        (vec![3u32, 8, 10, 8, 40], vec![1u32, 3]),
    ] {
        check_on_threads_with_a_late_nan(&sizes, &axes, "interleaved", &mut rng);
    }
}

/// Checks packed FLOAT32 and INT32 inputs of `sizes` (tie-heavy values) and the FLOAT32 one
/// with a NaN near its end, on one thread and two.
fn check_on_threads_with_a_late_nan(sizes: &[u32], axes: &[u32], what: &str, rng: &mut Rng) {
    let count: u32 = sizes.iter().product();
    let values: Vec<f32> = (0..count).map(|_| rng.below(50) as f32 - 25.0).collect();
    let ints: Vec<i32> = values.iter().map(|&v| v as i32 * 1_000_003).collect();
    let mut late_nan = values.clone();
    late_nan[count as usize - 100] = f32::NAN;
    for threads in [1, 2] {
        on_threads(threads, || {
            check_all(&packed(sizes, &values), axes, &format!("{what} f32"));
            check_all(&packed(sizes, &ints), axes, &format!("{what} i32"));
            check_all(
                &packed(sizes, &late_nan),
                axes,
                &format!("{what}, late NaN"),
            );
        });
    }
}

#[test]
fn packed_items_of_short_rows_reduce_as_interleaved_runs_and_match_the_reference() {
    // `[n, r, k]` over axis 1 with `k` of at most a vector's `64 / SIZE` elements, taken with
    // AVX-512 as runs interleaved by `k` (`transposed_runs`, `Transposed::for_packed_items`):
    // packed and padded items, kept dimensions outside the items (one padded), a group cut
    // short at the end, a broadcast reduced axis (a scaled index and the last maximum's
    // offset), rows of 16 elements, and rows of 3, 5, 6 and 9 elements that do not divide a
    // vector (groups of the whole items that fit; 9 is too long for 8-byte elements). Tie-heavy
    // floats hold NaNs, whose groups are reduced output by output.
    let mut rng = Rng(49);
    // Sizes, memory order (outermost first), padding per dimension, broadcast, reduced axes.
    type Layout<'a> = (&'a [u32], &'a [usize], &'a [u32], &'a [usize], &'a [u32]);
    let shapes: [Layout; 12] = [
        (&[70, 8, 2], &[0, 1, 2], &[0; 3], &[], &[1]),
        (&[33, 2, 8], &[0, 1, 2], &[0; 3], &[], &[1]),
        (&[45, 3, 4], &[0, 1, 2], &[0, 2, 0], &[], &[1]),
        (&[3, 50, 4, 2], &[0, 1, 2, 3], &[0; 4], &[], &[2]),
        (&[2, 100, 2, 4], &[0, 1, 2, 3], &[0, 1, 0, 0], &[], &[2]),
        (&[129, 5, 2], &[0, 1, 2], &[0; 3], &[], &[1]),
        (&[64, 2, 16], &[0, 1, 2], &[0; 3], &[], &[1]),
        (&[40, 4, 4, 3], &[0, 1, 2, 3], &[0; 4], &[3], &[1, 3]),
        (&[50, 2, 3], &[0, 1, 2], &[0; 3], &[], &[1]),
        (&[130, 2, 6], &[0, 1, 2], &[0; 3], &[], &[1]),
        (&[41, 3, 5], &[0, 1, 2], &[0, 1, 0], &[], &[1]),
        (&[60, 2, 9], &[0, 1, 2], &[0; 3], &[], &[1]),
    ];
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        for &(sizes, order, pad, broadcast, axes) in &shapes {
            let input = laid_out(data_type, sizes, order, pad, broadcast, &mut rng);
            let what = format!("packed short rows {sizes:?} pad {pad:?} #{t}");
            check_every_output_type(&input, axes, &what);
        }
    }
    // Large enough to split across threads, tasks starting on whole groups.
    check_on_threads_with_a_late_nan(&[20011, 4, 2], &[1], "packed short rows", &mut rng);
    check_on_threads_with_a_late_nan(&[20011, 2, 6], &[1], "packed rows of six", &mut rng);
}

#[test]
fn folded_tails_write_every_output_type_with_the_index_scale_and_offset() {
    // A contiguous tail of kept outputs over one reduced dimension (the fold of rows, its
    // results stored as vectors with AVX-512): `[u, 5, t]` over axis 1, and `[u, 5, t, 3]` with
    // the last dimension broadcast, over axes 1 and 3 (each result `row * 3`, plus 2 with
    // DECREASING), into 4- and 8-byte outputs.
    let mut rng = Rng(7);
    for data_type in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Int32,
        DataType::Float64,
    ] {
        for t in [37u32, 300] {
            let plain = laid_out(data_type, &[9, 5, t], &[0, 1, 2], &[0, 0, 0], &[], &mut rng);
            let broadcast = laid_out(
                data_type,
                &[9, 5, t, 3],
                &[0, 1, 2, 3],
                &[0; 4],
                &[3],
                &mut rng,
            );
            for (input, axes) in [(&plain, &[1u32][..]), (&broadcast, &[1, 3][..])] {
                check_every_output_type(input, axes, &format!("{data_type:?} t {t}"));
            }
        }
    }
}

#[test]
fn transposed_groups_write_every_output_type_with_the_index_scale_and_offset() {
    // `[rows, L, 3]` with the last dimension broadcast (stride 0), reduced over axes 1 and 2:
    // each result is `position * 3`, plus 2 with DECREASING (the broadcast copy's last
    // index); and the packed `[rows, L]`. Written a group at a time into 4- and 8-byte
    // outputs, groups and a tail (tasks of at least 64 rows, a UINT8 group, only at 2053
    // rows).
    let mut rng = Rng(99);
    for data_type in [
        DataType::Uint8,
        DataType::Int8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        for len in [2u32, 3, 4] {
            for rows in [70u32, 131, 2053] {
                let broadcast = laid_out(
                    data_type,
                    &[rows, len, 3],
                    &[0, 1, 2],
                    &[0, 0, 0],
                    &[2],
                    &mut rng,
                );
                let plain = laid_out(data_type, &[rows, len], &[0, 1], &[0, 0], &[], &mut rng);
                for (input, axes) in [(&broadcast, &[1u32, 2][..]), (&plain, &[1][..])] {
                    check_every_output_type(input, axes, &format!("{data_type:?} [{rows}, {len}]"));
                }
            }
        }
    }
}

/// Rows of `[rows, L]` that give a task (one thread) of fewer runs than a group, exactly one
/// group, and two groups and a tail, for `group` runs a group.
fn rows_for_tasks_of_groups(group: u32) -> [u32; 3] {
    // One thread splits the runs into ARGMAX_SPLIT_FACTOR tasks.
    let tasks = crate::thresholds::ARGMAX_SPLIT_FACTOR as u32;
    [7, tasks * group, tasks * (2 * group + 5)]
}

#[test]
fn short_runs_at_a_wide_pitch_play_a_tournament_and_match_the_reference() {
    // `[rows, L]` over axis 1 at a pitch over 32 bytes (16 for 1-byte elements), runs of one,
    // two or four vectors (`tournament` under AVX-512; the per-output kernel past its longest
    // run), the last vector partial or whole, packed or padded, in tasks of fewer runs than a
    // group, exactly one, and groups with a tail. Tie-heavy floats hold NaNs, which send
    // their groups to the per-output kernel.
    let mut rng = Rng(1789);
    on_threads(1, || {
        for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
            let size = data_type.size_in_bytes() as u32;
            for run_bytes in [2 * size, 34, 64, 66, 100, 128, 130, 192, 256, 258] {
                let len = (run_bytes / size).max(2);
                for pad in [0u32, 1, 40 / size] {
                    if (len + pad) * size <= 32 {
                        continue;
                    }
                    for rows in rows_for_tasks_of_groups(64 / size) {
                        let input =
                            laid_out(data_type, &[rows, len], &[0, 1], &[0, pad], &[], &mut rng);
                        let what = format!("tournament [{rows}, {len}] pad {pad} #{t}");
                        check_all(&input, &[1], &what);
                    }
                }
            }
        }
    });
}

#[test]
fn runs_under_several_kept_dimensions_are_grouped_along_the_innermost_one() {
    // `[a, b, L]` over axis 2 with padding after each kept dimension, so that the kept
    // dimensions do not merge, in either memory order: segments of runs along the innermost
    // kept dimension, which tasks (one thread, four tasks) cut anywhere, a group at a time
    // (`transposed_runs` and `tournament` under AVX-512), or run by run when it holds fewer
    // runs than a group.
    let mut rng = Rng(1848);
    on_threads(1, || {
        for data_type in [
            DataType::Float32,
            DataType::Float16,
            DataType::Uint8,
            DataType::Int64,
        ] {
            let size = data_type.size_in_bytes() as u32;
            let group = 64 / size;
            for len in [3u32, 9, 40] {
                for (sizes, order) in [
                    ([3, 2 * group + 5, len], [0, 1, 2]),
                    ([5, group - 1, len], [0, 1, 2]),
                    ([group + 3, 3, len], [1, 0, 2]),
                ] {
                    let input = laid_out(data_type, &sizes, &order, &[1, 2, 3], &[], &mut rng);
                    let what = format!("{data_type:?} {sizes:?} order {order:?}");
                    check_all(&input, &[2], &what);
                }
            }
        }
    });
}

#[test]
fn outputs_of_several_mebibytes_are_streamed_and_match_the_reference() {
    // `[3, n]` FLOAT32 over axis 0: the row fold's results go out a tail block at a time
    // through `Outputs::store_scaled`, whose whole lines are streamed in an output of 4 MiB
    // or more (`STREAM_MIN_BYTES`), 32- and 64-bit, from a head that reaches the first line
    // boundary. One thread and two.
    let n = crate::thresholds::STREAM_MIN_BYTES / 4 + 1000;
    let mut rng = Rng(7);
    let values: Vec<f32> = (0..3 * n).map(|_| rng.below(5) as f32).collect();
    let input = packed(&[3, n as u32], &values);
    for threads in [1, 2] {
        on_threads(threads, || {
            check_every_output_type(&input, &[0], &format!("[3, {n}] on {threads} threads"))
        });
    }
}

/// The bytes of `data_type`'s lowest value (the padding of the tournament and the segments).
fn lowest_bytes(data_type: DataType) -> Vec<u8> {
    let size = data_type.size_in_bytes();
    match data_type {
        DataType::Float64 => f64::NEG_INFINITY.to_le_bytes().to_vec(),
        DataType::Float32 => f32::NEG_INFINITY.to_le_bytes().to_vec(),
        DataType::Float16 => f16::NEG_INFINITY.to_bits().to_le_bytes().to_vec(),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            let mut min = vec![0u8; size];
            min[size - 1] = 0x80;
            min
        }
        _ => vec![0u8; size],
    }
}

#[test]
fn tournament_padding_loses_every_tie_to_a_run_of_the_lowest_value() {
    // Runs of the type's lowest value (the tournament's padding), one element raised in
    // every third run: the first maximum or, with DECREASING, the last, never a padding lane.
    on_threads(1, || {
        for data_type in ALL_TYPES {
            let size = data_type.size_in_bytes();
            for run_bytes in [36, 100, 200] {
                let len = run_bytes / size;
                let rows = rows_for_tasks_of_groups(64 / size as u32)[2] as usize;
                let mut data = lowest_bytes(data_type).repeat(rows * len);
                for row in (0..rows).step_by(3) {
                    // The number 1 (a tiny FLOAT16/32/64), above the lowest value of every type.
                    let at = (row * len + row % len) * size;
                    data[at..at + size].fill(0);
                    data[at] = 1;
                }
                let desc = TensorDesc::packed(data_type, &[rows as u32, len as u32]);
                let input = Tensor::from_bytes(desc, data).unwrap();
                check_all(&input, &[1], &format!("lowest {data_type:?} runs of {len}"));
            }
        }
    });
}

#[test]
fn short_runs_at_a_constant_pitch_are_transposed_a_group_at_a_time_and_match_the_reference() {
    // `[rows, L]` over axis 1, packed or padded (`transposed_runs` under AVX-512 for elements
    // of 2 bytes or more up to a 32-byte pitch, the per-output kernel elsewhere): fewer rows
    // than a group, exactly one, groups and a tail, the last row's padding past the buffer.
    // Tie-heavy floats hold NaNs, which send their groups to the per-output kernel.
    let mut rng = Rng(4711);
    for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
        for len in [2u32, 3, 4, 5, 8, 9, 16] {
            for pad in [0u32, 1, 3] {
                for rows in [7u32, 16, 33, 70, 131] {
                    let input =
                        laid_out(data_type, &[rows, len], &[0, 1], &[0, pad], &[], &mut rng);
                    check_all(
                        &input,
                        &[1],
                        &format!("transposed [{rows}, {len}] pad {pad} #{t}"),
                    );
                }
            }
        }
    }
    // Many tasks on two threads, and rank 3 with kept dimensions merged into one unit.
    let count = 3 * 40_000 * 4;
    let values: Vec<f32> = (0..count).map(|_| rng.below(7) as f32 - 3.0).collect();
    let mut late_nan = values.clone();
    late_nan[count - 5] = f32::NAN;
    let halves: Vec<f16> = values.iter().map(|&v| f16::from_f32(v)).collect();
    for threads in [1, 2] {
        on_threads(threads, || {
            for sizes in [[3u32, 40_000, 4], [1, 120_000, 4]] {
                check_all(&packed(&sizes, &values), &[2], "transposed f32");
                check_all(&packed(&sizes, &late_nan), &[2], "transposed f32, late NaN");
                check_all(&packed(&sizes, &halves), &[2], "transposed f16");
            }
        });
    }
}

#[test]
fn short_runs_sharing_a_vector_are_reduced_in_segments_and_match_the_reference() {
    // `[rows, L]` over axis 1 with two to four runs to a vector (`segment_tree` under AVX-512
    // where its segments have 8 lanes or more, 16 when the runs are permuted into them):
    // runs filling their segments or shorter, packed or padded (fewer runs then fit a
    // vector), in tasks of fewer runs than a group, exactly one, and groups with a tail.
    // Tie-heavy floats hold NaNs, which send their groups run by run; FLOAT32 and FLOAT16
    // runs without NaN, and runs of the lowest value with one element raised (the padding
    // lanes hold the lowest key, so a tie with them must lose, with DECREASING too).
    let mut rng = Rng(1905);
    on_threads(1, || {
        for (t, data_type) in ALL_TYPES.iter().copied().enumerate() {
            let lanes = 64 / data_type.size_in_bytes() as u32;
            let mut lens = vec![
                lanes / 8 + 1,
                lanes / 4 - 1,
                lanes / 4,
                lanes / 2 - 1,
                lanes / 2,
            ];
            lens.retain(|&len| len >= 2);
            lens.dedup();
            for len in lens {
                for pad in [0u32, 1, 3, lanes / 4] {
                    for rows in rows_for_tasks_of_groups(lanes) {
                        let input =
                            laid_out(data_type, &[rows, len], &[0, 1], &[0, pad], &[], &mut rng);
                        let what = format!("segments [{rows}, {len}] pad {pad} #{t}");
                        check_all(&input, &[1], &what);
                    }
                }
            }
        }
        let rows = rows_for_tasks_of_groups(32)[2];
        for (len, pad) in [(8u32, 0u32), (16, 0), (12, 0), (9, 7), (16, 1)] {
            let pitch = len + pad;
            let values: Vec<f32> = (0..(rows - 1) * pitch + len)
                .map(|_| rng.below(7) as f32 - 3.0)
                .collect();
            let halves: Vec<f16> = values.iter().map(|&v| f16::from_f32(v)).collect();
            let strides = [pitch, 1];
            let what = format!("segments without NaN [{rows}, {len}] pad {pad}");
            check_all(&strided(&[rows, len], Some(&strides), &values), &[1], &what);
            check_all(&strided(&[rows, len], Some(&strides), &halves), &[1], &what);
        }
        for data_type in ALL_TYPES {
            let lanes = 64 / data_type.size_in_bytes();
            let rows = rows_for_tasks_of_groups(lanes as u32)[2] as usize;
            let len = lanes / 2 - 1;
            if len < 2 {
                continue;
            }
            // Padded by one, so that the runs lie in their segments short of a lane.
            let pitch = len + 1;
            let mut data = lowest_bytes(data_type).repeat(rows * pitch);
            let size = data_type.size_in_bytes();
            for row in (0..rows).step_by(3) {
                // The number 1 (a tiny FLOAT16/32/64), above the lowest value of every type.
                let at = (row * pitch + row % len) * size;
                data[at..at + size].fill(0);
                data[at] = 1;
            }
            let (sizes, strides) = ([rows as u32, len as u32], [pitch as u32, 1]);
            let desc = TensorDesc::with_strides(data_type, &sizes, Some(&strides)).unwrap();
            data.truncate(desc.total_tensor_size_in_bytes as usize);
            let input = Tensor::from_bytes(desc, data).unwrap();
            check_all(
                &input,
                &[1],
                &format!("segments of the lowest {data_type:?}"),
            );
        }
    });
}

#[test]
fn spanned_tails_of_short_and_long_segments_match_the_reference() {
    // `[3, 50, k]` padded after `k`, over axis 0: a tail spanned over rows of `k` outputs, whose
    // results go out a segment of `k` at a time as vectors from
    // `ARGMAX_SPANNED_SEGMENT_MIN_OUTPUTS` on and one at a time below, around that bound.
    let mut rng = Rng(1517);
    let bound = crate::thresholds::ARGMAX_SPANNED_SEGMENT_MIN_OUTPUTS as u32;
    for data_type in ALL_TYPES {
        for k in [2, bound - 1, bound, bound + 1, 13] {
            for pad in [1u32, 3] {
                let input = laid_out(
                    data_type,
                    &[3, 50, k],
                    &[0, 1, 2],
                    &[0, 0, pad],
                    &[],
                    &mut rng,
                );
                check_all(
                    &input,
                    &[0],
                    &format!("spanned segments of {k}, padded by {pad}"),
                );
            }
        }
    }
}

#[test]
fn reduced_dimensions_out_of_index_order_in_memory_match_the_reference_group_by_group() {
    let mut rng = Rng(65);
    // (sizes, memory order outermost first, padding, axes): each taken as groups
    // (`out_of_order`), checked below for FLOAT32; many ties, so that a merge across groups
    // that kept the wrong one of two equal keys would show.
    type Case = (
        &'static [u32],
        &'static [usize],
        &'static [u32],
        &'static [u32],
    );
    let cases: [Case; 4] = [
        // The inner axis 2 lies inside axis 3 in memory; a tail of 2 (rows), more outputs
        // than one merge task holds per thread.
        (&[20, 2, 900, 2, 3], &[0, 3, 4, 2, 1], &[0; 5], &[2, 3]),
        (&[10, 2000, 3, 2], &[0, 2, 1, 3], &[0; 4], &[1, 2]),
        // One output (a scan), four groups.
        (&[40_000, 4], &[1, 0], &[0; 2], &[0, 1]),
        // Two group axes; within a group two reduced axes that do not fuse (padding).
        (
            &[3, 40, 2, 3, 300],
            &[2, 3, 4, 0, 1],
            &[0, 1, 0, 0, 0],
            &[0, 1, 2, 3],
        ),
    ];
    for (sizes, order, pad, axes) in cases {
        for data_type in ALL_TYPES {
            let input = laid_out(data_type, sizes, order, pad, &[], &mut rng);
            if data_type == DataType::Float32 {
                let flags: Vec<bool> = (0..sizes.len() as u32).map(|d| axes.contains(&d)).collect();
                let plan = super::plan::test_plan(sizes, input.desc.strides.as_deref(), &flags);
                assert!(
                    super::out_of_order::OutOfOrder::new::<f32>(&plan).is_some(),
                    "{sizes:?} {axes:?}: not split into groups"
                );
            }
            check_all(&input, axes, "groups");
            on_threads(1, || check_all(&input, axes, "groups, one thread"));
        }
    }
}
