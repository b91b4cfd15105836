//! The oracle: deliberately plain implementations of the four operators, used to compute the
//! expected outputs of generated cases.
//!
//! It shares no code with any backend. Every operator is a naive loop over output coordinates
//! that reads inputs through their strides, written to follow the spec sentences (and the
//! `reading:` entries of `specs/`) line by line rather than to be fast. Tensors are buffers of
//! raw element bit patterns (`u64`, one per buffer element), so values such as NaN payloads
//! and -0.0 are copied exactly.

use super::values::{float_value, int_value};
use opconform_backend::{
    ArgMaxDesc, AxisDirection, DataType, NonZeroCoordinatesDesc, OneHotDesc, OvOneHotDesc,
    TensorDesc,
};
use std::cmp::Ordering;

/// A numeric element value, for comparisons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// An integer element (signed types sign-extended).
    Int(i128),
    /// A float element, exact in binary64.
    Float(f64),
}

/// The value of the element `bits` of `data_type`.
pub fn decode(data_type: DataType, bits: u64) -> Number {
    if data_type.is_float() {
        Number::Float(float_value(data_type, bits))
    } else {
        Number::Int(int_value(data_type, bits))
    }
}

/// Every coordinate of a tensor of `sizes`, in row-major order (the last dimension fastest).
/// A 0-D tensor has one coordinate, the empty one.
pub fn all_coordinates(sizes: &[u32]) -> Vec<Vec<u64>> {
    let mut result = Vec::new();
    if sizes.contains(&0) {
        return result;
    }
    let mut coordinate = vec![0u64; sizes.len()];
    loop {
        result.push(coordinate.clone());
        // Count up like an odometer, last dimension first.
        let mut dim = sizes.len();
        loop {
            if dim == 0 {
                return result;
            }
            dim -= 1;
            coordinate[dim] += 1;
            if coordinate[dim] < u64::from(sizes[dim]) {
                break;
            }
            coordinate[dim] = 0;
        }
    }
}

/// The buffer element (offset in elements) holding the element at `coordinate` of `desc`.
pub fn offset_of(desc: &TensorDesc, coordinate: &[u64]) -> usize {
    let strides = desc.effective_strides();
    let mut offset = 0u64;
    for (c, s) in coordinate.iter().zip(strides) {
        offset += c * s;
    }
    offset as usize
}

/// The elements of a tensor in row-major logical order, read through its strides.
pub fn logical_elements(desc: &TensorDesc, buffer: &[u64]) -> Vec<u64> {
    all_coordinates(&desc.sizes)
        .iter()
        .map(|c| buffer[offset_of(desc, c)])
        .collect()
}

/// `DML_ONE_HOT`: the expected output elements in row-major order.
///
/// For each output element, the sequence it belongs to is the output coordinate with the
/// Axis coordinate replaced by 0; the index of that sequence is the IndicesTensor element at
/// that coordinate. The element is OnValue when its Axis coordinate equals the index (a
/// negative index of a signed type counts from the end of the sequence), else OffValue.
pub fn one_hot(desc: &OneHotDesc, indices: &[u64], values: &[u64]) -> Vec<u64> {
    let axis = desc.axis as usize;
    let length = i128::from(desc.output.sizes[axis]);
    // OffValue: the 0th element. OnValue: coordinate 1 along the innermost dimension of size
    // above 1, 0 elsewhere (addressed through the ValuesTensor's strides).
    let off_value = values[offset_of(&desc.values, &vec![0; desc.values.sizes.len()])];
    let mut on_coordinate = vec![0u64; desc.values.sizes.len()];
    let innermost = (0..desc.values.sizes.len())
        .rev()
        .find(|&d| desc.values.sizes[d] > 1)
        .expect("ValuesTensor has at least two elements");
    on_coordinate[innermost] = 1;
    let on_value = values[offset_of(&desc.values, &on_coordinate)];

    let mut output = Vec::new();
    for coordinate in all_coordinates(&desc.output.sizes) {
        let mut sequence = coordinate.clone();
        sequence[axis] = 0;
        let raw = indices[offset_of(&desc.indices, &sequence)];
        let index = int_value(desc.indices.data_type, raw);
        let position = if index < 0 { index + length } else { index };
        let hot = position >= 0 && position < length && position == i128::from(coordinate[axis]);
        output.push(if hot { on_value } else { off_value });
    }
    output
}

/// What `DML_NONZERO_COORDINATES` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonZeroResult {
    /// The number of nonzero input elements (OutputCountTensor).
    pub count: u32,
    /// OutputCoordinatesTensor in row-major order; `None` in the rows at or past `count`,
    /// which the spec leaves undefined.
    pub coordinates: Vec<Option<u64>>,
}

/// True when an element counts as nonzero: an integer other than 0, or a float that does not
/// compare equal to 0 (so both zeros are zero and NaN is nonzero).
pub fn is_nonzero(data_type: DataType, bits: u64) -> bool {
    match decode(data_type, bits) {
        Number::Int(v) => v != 0,
        Number::Float(v) => v != 0.0,
    }
}

/// `DML_NONZERO_COORDINATES`: the count and the coordinates of every nonzero input element,
/// in increasing element order, each row holding the last N coordinates of the element.
pub fn nonzero_coordinates(desc: &NonZeroCoordinatesDesc, input: &[u64]) -> NonZeroResult {
    let sizes = &desc.output_coordinates.sizes;
    let rows = sizes[sizes.len() - 2] as usize;
    let n = sizes[sizes.len() - 1] as usize;
    let mut coordinates = Vec::new();
    let mut count = 0u32;
    for coordinate in all_coordinates(&desc.input.sizes) {
        let bits = input[offset_of(&desc.input, &coordinate)];
        if is_nonzero(desc.input.data_type, bits) {
            count += 1;
            let last_n = &coordinate[coordinate.len() - n..];
            coordinates.extend(last_n.iter().map(|&c| Some(c)));
        }
    }
    coordinates.resize(rows * n, None);
    NonZeroResult { count, coordinates }
}

/// ArgMax's order of element values: NaN above every number and equal to NaN (our reading of
/// ARGMAX.NAN); -0.0 equal to +0.0 (ARGMAX.SIGNED_ZERO_TIE); integers compared exactly.
pub fn compare_for_argmax(a: Number, b: Number) -> Ordering {
    match (a, b) {
        (Number::Int(a), Number::Int(b)) => a.cmp(&b),
        (Number::Float(a), Number::Float(b)) => match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => a.partial_cmp(&b).expect("neither is NaN"),
        },
        _ => panic!("an input holds a single type"),
    }
}

/// How ArgMax reads the points its page leaves open. [`ArgMaxReading::default`] is
/// opconform's reading; the other settings are the alternatives a conforming implementation
/// might take, used by [`crate::readings`] to find the cases that depend on them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArgMaxReading {
    /// Order -0.0 below +0.0 (a total order) instead of calling them a tie.
    pub zeros_ordered: bool,
    /// Flush subnormal inputs to zero (keeping the sign) before comparing.
    pub flush_subnormals: bool,
    /// Run the flat index over the reduced axes in the order `Axes` lists them.
    pub axes_as_listed: bool,
}

/// `DML_ARGMAX`: per output element, the row-major index within the reduced axes (taken in
/// increasing axis order, whatever order `Axes` lists them in) of the first maximum
/// (INCREASING) or the last one (DECREASING). Results are the output type's bit patterns.
pub fn argmax(desc: &ArgMaxDesc, input: &[u64]) -> Vec<u64> {
    argmax_read_as(desc, input, ArgMaxReading::default())
}

/// [`argmax`] under another reading of the page's open points.
pub fn argmax_read_as(desc: &ArgMaxDesc, input: &[u64], reading: ArgMaxReading) -> Vec<u64> {
    let rank = desc.input.sizes.len();
    let reduced: Vec<usize> = if reading.axes_as_listed {
        desc.axes.iter().map(|&a| a as usize).collect()
    } else {
        (0..rank)
            .filter(|d| desc.axes.contains(&(*d as u32)))
            .collect()
    };
    let reduced_sizes: Vec<u32> = reduced.iter().map(|&d| desc.input.sizes[d]).collect();
    let data_type = desc.input.data_type;
    let read = |bits: u64| {
        let value = decode(data_type, bits);
        match value {
            Number::Float(v) if reading.flush_subnormals && is_subnormal(data_type, v) => {
                Number::Float(if v < 0.0 { -0.0 } else { 0.0 })
            }
            other => other,
        }
    };
    let compare = |a: Number, b: Number| match (a, b) {
        (Number::Float(x), Number::Float(y)) if reading.zeros_ordered && x == 0.0 && y == 0.0 => {
            x.is_sign_positive().cmp(&y.is_sign_positive())
        }
        _ => compare_for_argmax(a, b),
    };
    let mut output = Vec::new();
    for kept in all_coordinates(&desc.output.sizes) {
        let mut best: Option<(u64, Number)> = None;
        for (flat, inner) in all_coordinates(&reduced_sizes).iter().enumerate() {
            let mut coordinate = kept.clone();
            for (&axis, &c) in reduced.iter().zip(inner) {
                coordinate[axis] = c;
            }
            let value = read(input[offset_of(&desc.input, &coordinate)]);
            let take = match best {
                None => true,
                Some((_, best_value)) => {
                    let order = compare(value, best_value);
                    match desc.axis_direction {
                        AxisDirection::Increasing => order == Ordering::Greater,
                        AxisDirection::Decreasing => order != Ordering::Less,
                    }
                }
            };
            if take {
                best = Some((flat as u64, value));
            }
        }
        let (index, _) = best.expect("a reduction covers at least one element");
        output.push(index);
    }
    output
}

/// True when `value` (an element of the float type `data_type`) is subnormal in that type.
pub fn is_subnormal(data_type: DataType, value: f64) -> bool {
    let smallest_normal = match data_type {
        DataType::Float16 => 2f64.powi(-14),
        DataType::Float32 => 2f64.powi(-126),
        DataType::Float64 => f64::MIN_POSITIVE,
        _ => return false,
    };
    value != 0.0 && value.abs() < smallest_normal
}

/// OpenVINO `OneHot-1`: `output[…, i, …] = on_value if indices[…] == i else off_value`, with
/// `i` at the (normalised) axis position and ranging over `[0, depth-1]`.
pub fn ov_one_hot(desc: &OvOneHotDesc, indices: &[u64], on: u64, off: u64) -> Vec<u64> {
    let n = desc.indices.sizes.len() as i64;
    let axis = if desc.axis < 0 {
        desc.axis + n + 1
    } else {
        desc.axis
    } as usize;
    let mut output = Vec::new();
    for coordinate in all_coordinates(&desc.output.sizes) {
        let i = coordinate[axis];
        let mut index_coordinate = coordinate.clone();
        index_coordinate.remove(axis);
        let index = int_value(
            desc.indices.data_type,
            indices[offset_of(&desc.indices, &index_coordinate)],
        );
        output.push(if index == i128::from(i) { on } else { off });
    }
    output
}

#[cfg(test)]
mod tests {
    //! The documented examples of each page, computed by the oracle.

    use super::*;
    use opconform_backend::TensorDesc;

    fn f32s(values: &[f32]) -> Vec<u64> {
        values.iter().map(|v| u64::from(v.to_bits())).collect()
    }

    fn u64s(values: &[u64]) -> Vec<u64> {
        values.to_vec()
    }

    fn one_hot_desc(
        indices: (DataType, &[u32]),
        values: &[u32],
        output: &[u32],
        axis: u32,
    ) -> OneHotDesc {
        OneHotDesc {
            indices: TensorDesc::packed(indices.0, indices.1),
            values: TensorDesc::packed(DataType::Float32, values),
            output: TensorDesc::packed(DataType::Float32, output),
            axis,
        }
    }

    #[test]
    fn one_hot_examples_1_to_4() {
        // Example 1: the encoding is formed across the rows.
        let desc = one_hot_desc(
            (DataType::Uint32, &[1, 1, 3, 1]),
            &[1, 1, 1, 2],
            &[1, 1, 3, 4],
            3,
        );
        let out = one_hot(&desc, &u64s(&[0, 3, 2]), &f32s(&[0.0, 1.0]));
        assert_eq!(out, f32s(&[1., 0., 0., 0., 0., 0., 0., 1., 0., 0., 1., 0.]));
        // Example 2: across the columns.
        let desc = one_hot_desc(
            (DataType::Uint32, &[1, 1, 1, 4]),
            &[1, 1, 1, 2],
            &[1, 1, 3, 4],
            2,
        );
        let out = one_hot(&desc, &u64s(&[0, 2, 1, 0]), &f32s(&[0.0, 1.0]));
        assert_eq!(out, f32s(&[1., 0., 0., 1., 0., 0., 1., 0., 0., 1., 0., 0.]));
        // Example 3: ValuesTensor {1,1,3,1}: off 4, on 2, 9 unused.
        let desc = one_hot_desc(
            (DataType::Uint32, &[1, 1, 3, 1]),
            &[1, 1, 3, 1],
            &[1, 1, 3, 4],
            3,
        );
        let out = one_hot(&desc, &u64s(&[0, 3, 2]), &f32s(&[4.0, 2.0, 9.0]));
        assert_eq!(out, f32s(&[2., 4., 4., 4., 4., 4., 4., 2., 4., 4., 2., 4.]));
        // Example 4: INT32 indices -3, 100, 3.
        let desc = one_hot_desc(
            (DataType::Int32, &[1, 1, 3, 1]),
            &[1, 1, 1, 2],
            &[1, 1, 3, 4],
            3,
        );
        let indices = [-3i32, 100, 3].map(|v| u64::from(v as u32));
        let out = one_hot(&desc, &indices, &f32s(&[0.0, 1.0]));
        assert_eq!(out, f32s(&[0., 1., 0., 0., 0., 0., 0., 0., 0., 0., 0., 1.]));
    }

    #[test]
    fn one_hot_values_are_read_through_strides() {
        // {1,1,2,3} strides {0,0,1,2}: the innermost dimension of size > 1 is the last, whose
        // stride is 2, so OnValue is buffer element 2, not 1.
        let mut desc = one_hot_desc(
            (DataType::Uint32, &[1, 1, 1, 1]),
            &[1, 1, 2, 3],
            &[1, 1, 1, 2],
            3,
        );
        desc.values =
            TensorDesc::with_strides(DataType::Float32, &[1, 1, 2, 3], Some(&[0, 0, 1, 2]))
                .unwrap();
        let out = one_hot(&desc, &u64s(&[1]), &f32s(&[7.0, 8.0, 9.0, 0.0, 0.0, 0.0]));
        assert_eq!(out, f32s(&[7.0, 9.0]));
    }

    #[test]
    fn sixty_four_bit_indices_are_not_truncated() {
        let desc = one_hot_desc(
            (DataType::Int64, &[1, 1, 2, 1]),
            &[1, 1, 1, 2],
            &[1, 1, 2, 4],
            3,
        );
        let out = one_hot(&desc, &u64s(&[1 << 32, (1 << 32) + 1]), &f32s(&[0.0, 1.0]));
        assert_eq!(out, f32s(&[0.0; 8]));
    }

    #[test]
    fn nonzero_coordinates_example() {
        let desc = NonZeroCoordinatesDesc {
            input: TensorDesc::packed(DataType::Float32, &[1, 1, 2, 4]),
            output_count: TensorDesc::packed(DataType::Uint32, &[1, 1, 1, 1]),
            output_coordinates: TensorDesc::packed(DataType::Uint32, &[1, 1, 8, 3]),
        };
        let input = f32s(&[1.0, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2]);
        let result = nonzero_coordinates(&desc, &input);
        assert_eq!(result.count, 4);
        let defined: Vec<u64> = result.coordinates.iter().flatten().copied().collect();
        assert_eq!(defined, [0, 0, 0, 0, 0, 3, 0, 1, 1, 0, 1, 3]);
        assert!(result.coordinates[12..].iter().all(Option::is_none));
    }

    #[test]
    fn nonzero_order_is_by_element_index() {
        // The page's ordering sentence: nonzeros at {1,0}, {1,2}, {0,5} come out sorted.
        let desc = NonZeroCoordinatesDesc {
            input: TensorDesc::packed(DataType::Int32, &[1, 1, 2, 6]),
            output_count: TensorDesc::packed(DataType::Uint32, &[1, 1, 1, 1]),
            output_coordinates: TensorDesc::packed(DataType::Uint32, &[1, 1, 12, 2]),
        };
        let mut input = vec![0u64; 12];
        input[6] = 1;
        input[8] = 1;
        input[5] = 1;
        let result = nonzero_coordinates(&desc, &input);
        let defined: Vec<u64> = result.coordinates.iter().flatten().copied().collect();
        assert_eq!(defined, [0, 5, 1, 0, 1, 2]);
    }

    fn argmax_desc(axes: &[u32], output: &[u32], direction: AxisDirection) -> ArgMaxDesc {
        ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[3, 3]),
            output: TensorDesc::packed(DataType::Uint32, output),
            axes: axes.to_vec(),
            axis_direction: direction,
        }
    }

    #[test]
    fn argmax_examples_1_to_3() {
        let input = f32s(&[1., 2., 3., 3., 0., 4., 2., 5., 2.]);
        let inc = AxisDirection::Increasing;
        assert_eq!(argmax(&argmax_desc(&[0], &[1, 3], inc), &input), [1, 2, 1]);
        assert_eq!(argmax(&argmax_desc(&[1], &[3, 1], inc), &input), [2, 2, 1]);
        assert_eq!(argmax(&argmax_desc(&[0, 1], &[1, 1], inc), &input), [7]);
    }

    #[test]
    fn argmax_direction_examples() {
        let desc = ArgMaxDesc {
            input: TensorDesc::packed(DataType::Int32, &[5]),
            output: TensorDesc::packed(DataType::Uint32, &[1]),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        };
        let input = u64s(&[3, 2, 1, 2, 3]);
        assert_eq!(argmax(&desc, &input), [0]);
        let desc = ArgMaxDesc {
            axis_direction: AxisDirection::Decreasing,
            ..desc
        };
        assert_eq!(argmax(&desc, &input), [4]);
    }

    #[test]
    fn argmax_nan_is_greatest_and_zeros_tie() {
        let mut desc = ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[4]),
            output: TensorDesc::packed(DataType::Uint32, &[1]),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        };
        let nan = f32s(&[1.0, f32::NAN, 3.0, f32::NAN]);
        assert_eq!(argmax(&desc, &nan), [1]);
        let zeros = f32s(&[-0.0, 0.0, -1.0, -0.0]);
        assert_eq!(argmax(&desc, &zeros), [0]);
        desc.axis_direction = AxisDirection::Decreasing;
        assert_eq!(argmax(&desc, &nan), [3]);
        assert_eq!(argmax(&desc, &zeros), [3]);
    }

    fn ov_desc(indices: &[u32], depth: i64, output: &[u32], axis: i64) -> OvOneHotDesc {
        OvOneHotDesc {
            indices: TensorDesc::packed(DataType::Int64, indices),
            depth: TensorDesc::packed(DataType::Int64, &[]),
            depth_value: depth,
            on_value: TensorDesc::packed(DataType::Int32, &[]),
            off_value: TensorDesc::packed(DataType::Int32, &[]),
            output: TensorDesc::packed(DataType::Int32, output),
            axis,
        }
    }

    #[test]
    fn ov_one_hot_examples() {
        let desc = ov_desc(&[4], 3, &[4, 3], -1);
        let out = ov_one_hot(&desc, &u64s(&[0, 3, 1, 2]), 1, 2);
        assert_eq!(out, [1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 1]);
        let desc = ov_desc(&[2, 3], 3, &[2, 3, 3], 1);
        let out = ov_one_hot(&desc, &u64s(&[0, 3, 1, 1, 2, 4]), 1, 0);
        assert_eq!(out, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn coordinates_count_like_an_odometer() {
        assert_eq!(all_coordinates(&[]), vec![Vec::<u64>::new()]);
        assert_eq!(
            all_coordinates(&[2, 2]),
            vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
    }
}
