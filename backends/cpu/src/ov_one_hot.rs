//! OpenVINO `OneHot-1`: `output[..., i, ...] = on_value if indices[...] == i else off_value`,
//! with the new axis of size `depth` inserted at `axis`.
//!
//! Indices at or above `depth` give a row of off_value; so do negative indices (the spec
//! leaves them undefined; opconform reads the formula literally: no `i` in `[0, depth-1]`
//! equals a negative index).

use crate::one_hot::{fill_bytes, Indices, OneHotShape};
use crate::strided::{internal, Layout};
use opconform_backend::{BackendError, DataType, OvOneHotDesc, Tensor};

/// Runs OneHot-1 on validated, length-checked tensors.
pub(crate) fn run(
    desc: &OvOneHotDesc,
    indices: &Tensor,
    depth: &Tensor,
    on_value: &Tensor,
    off_value: &Tensor,
    output: &mut Tensor,
) -> Result<(), BackendError> {
    let indices_layout = Layout::new(&desc.indices, indices.data.len(), "indices")?;
    let depth_layout = Layout::new(&desc.depth, depth.data.len(), "depth")?;
    let on_layout = Layout::new(&desc.on_value, on_value.data.len(), "on_value")?;
    let off_layout = Layout::new(&desc.off_value, off_value.data.len(), "off_value")?;
    let output_layout = Layout::new(&desc.output, output.data.len(), "output")?;

    // The depth input must hold the descriptor's depth (the output shape is built from it).
    if depth_layout.count == 0 {
        return Err(internal("depth holds no element"));
    }
    let depth_input = match desc.depth.data_type {
        DataType::Int32 => i64::from(i32::from_le_bytes(first_bytes(&depth.data)?)),
        DataType::Int64 => i64::from_le_bytes(first_bytes(&depth.data)?),
        other => return Err(internal(format!("depth of type {other}"))),
    };
    if depth_input != desc.depth_value {
        return Err(internal(format!(
            "the depth input holds {depth_input} but the descriptor's depth_value is {}",
            desc.depth_value
        )));
    }

    let rank = indices_layout.sizes.len() as i64;
    let axis = if desc.axis < 0 {
        desc.axis + rank + 1
    } else {
        desc.axis
    };
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a <= indices_layout.sizes.len())
        .ok_or_else(|| internal("axis out of range"))?;
    let depth_size = usize::try_from(desc.depth_value).map_err(|_| internal("depth too large"))?;
    let mut expected_sizes = indices_layout.sizes.clone();
    expected_sizes.insert(axis, depth_size);
    if output_layout.sizes != expected_sizes {
        return Err(internal(
            "output shape disagrees with indices, depth and axis",
        ));
    }
    let size = output_layout.element_size;
    if on_layout.count == 0 || off_layout.count == 0 {
        return Err(internal("on_value or off_value holds no element"));
    }
    if on_layout.element_size != size || off_layout.element_size != size {
        return Err(internal("on_value, off_value and output differ in type"));
    }
    let on = &on_value.data[..size];
    let off = &off_value.data[..size];

    let indices = Indices::new(
        desc.indices.data_type,
        &indices.data,
        &indices_layout,
        depth_size as u64,
        false,
    )?;
    let shape = OneHotShape {
        outer: indices_layout.sizes[..axis].iter().product(),
        depth: depth_size,
        inner: indices_layout.sizes[axis..].iter().product(),
    };
    fill_bytes(&indices, shape, on, off, &output_layout, &mut output.data)
}

/// The first `N` bytes of `data`.
fn first_bytes<const N: usize>(data: &[u8]) -> Result<[u8; N], BackendError> {
    data.get(..N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| internal("buffer shorter than one element"))
}

#[cfg(test)]
mod tests {
    use crate::test_tensors::{elements, packed, Scalar};
    use crate::tests::execute;
    use opconform_backend::{
        BackendError, DataType, Level, OperatorDesc, OvOneHotDesc, Tensor, TensorDesc,
    };

    /// Runs OneHot-1 at opset1 with `depth` given as a T1 (the indices' type) scalar.
    fn ov_one_hot<T: Scalar>(
        indices: &Tensor,
        depth: i64,
        on: T,
        off: T,
        axis: i64,
        output_sizes: &[u32],
    ) -> Result<Tensor, BackendError> {
        let depth_tensor = match indices.desc.data_type {
            DataType::Int32 => packed::<i32>(&[], &[depth as i32]),
            _ => packed::<i64>(&[], &[depth]),
        };
        let on = packed::<T>(&[], &[on]);
        let off = packed::<T>(&[], &[off]);
        let op = OperatorDesc::OvOneHot(OvOneHotDesc {
            indices: indices.desc.clone(),
            depth: depth_tensor.desc.clone(),
            depth_value: depth,
            on_value: on.desc.clone(),
            off_value: off.desc.clone(),
            output: TensorDesc::packed(T::TYPE, output_sizes),
            axis,
        });
        execute(
            &op,
            &[indices.clone(), depth_tensor, on, off],
            Level::Opset(1),
        )
        .map(|mut outputs| outputs.remove(0))
    }

    // --- The documented examples (002_be2dbc40a5d5f474.txt) ---

    #[test]
    fn example_1_axis_minus_one() {
        let indices = packed::<i64>(&[4], &[0, 3, 1, 2]);
        let out = ov_one_hot::<i32>(&indices, 3, 1, 2, -1, &[4, 3]).unwrap();
        #[rustfmt::skip]
        let expected = [
            1, 2, 2,
            2, 2, 2,
            2, 1, 2,
            2, 2, 1,
        ];
        assert_eq!(elements::<i32>(&out), expected);
        // The same with int32 indices and float values.
        let indices = packed::<i32>(&[4], &[0, 3, 1, 2]);
        let out = ov_one_hot::<f32>(&indices, 3, 1., 2., -1, &[4, 3]).unwrap();
        assert_eq!(
            elements::<f32>(&out),
            [1., 2., 2., 2., 2., 2., 2., 1., 2., 2., 2., 1.]
        );
    }

    #[test]
    fn example_2_axis_one() {
        let indices = packed::<i32>(&[2, 3], &[0, 3, 1, 1, 2, 4]);
        let out = ov_one_hot::<i64>(&indices, 3, 1, 0, 1, &[2, 3, 3]).unwrap();
        #[rustfmt::skip]
        let expected = [
            1, 0, 0,
            0, 0, 1,
            0, 0, 0,

            0, 0, 0,
            1, 0, 0,
            0, 1, 0,
        ];
        assert_eq!(elements::<i64>(&out), expected);
    }

    // --- Edge cases ---

    #[test]
    fn negative_indices_give_off_value() {
        let indices = packed::<i64>(&[3], &[-1, -3, 2]);
        let out = ov_one_hot::<u8>(&indices, 3, 9, 4, 1, &[3, 3]).unwrap();
        assert_eq!(elements::<u8>(&out), [4, 4, 4, 4, 4, 4, 4, 4, 9]);
        // Wide indices are not truncated: 2^32 + 1 is not 1.
        let indices = packed::<i64>(&[2], &[(1 << 32) + 1, 1]);
        let out = ov_one_hot::<u8>(&indices, 2, 9, 4, 0, &[2, 2]).unwrap();
        // Axis 0: output[i][j] = on if indices[j] == i.
        assert_eq!(elements::<u8>(&out), [4, 4, 4, 9]);
    }

    #[test]
    fn zero_d_indices_and_axis_variants() {
        let indices = packed::<i32>(&[], &[2]);
        let out = ov_one_hot::<i16>(&indices, 4, -1, 5, 0, &[4]).unwrap();
        assert_eq!(elements::<i16>(&out), [5, 5, -1, 5]);
        let out = ov_one_hot::<i16>(&indices, 4, -1, 5, -1, &[4]).unwrap();
        assert_eq!(elements::<i16>(&out), [5, 5, -1, 5]);
        // Axis -3 on rank-2 indices is axis 0.
        let indices = packed::<i32>(&[1, 2], &[1, 0]);
        let out = ov_one_hot::<u16>(&indices, 2, 1, 0, -3, &[2, 1, 2]).unwrap();
        assert_eq!(elements::<u16>(&out), [0, 1, 1, 0]);
    }

    #[test]
    fn values_are_copied_bit_for_bit() {
        let indices = packed::<i32>(&[2], &[1, 0]);
        let on = f64::from_bits(0x7ff8_0000_dead_beef);
        let out = ov_one_hot::<f64>(&indices, 2, on, -0.0, 1, &[2, 2]).unwrap();
        assert_eq!(
            elements::<u64>(&out),
            [
                0x8000_0000_0000_0000,
                0x7ff8_0000_dead_beef,
                0x7ff8_0000_dead_beef,
                0x8000_0000_0000_0000
            ]
        );
    }

    #[test]
    fn empty_indices_make_an_empty_output() {
        let indices = packed::<i32>(&[0], &[]);
        let out = ov_one_hot::<u8>(&indices, 3, 1, 0, 1, &[0, 3]).unwrap();
        assert!(elements::<u8>(&out).is_empty());
    }

    #[test]
    fn invalid_descriptors_and_mismatched_depth() {
        let indices = packed::<i32>(&[2], &[0, 1]);
        let err = ov_one_hot::<u8>(&indices, 0, 1, 0, 1, &[2, 0]).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules.contains(&"ONEHOT1.DEPTH_POSITIVE".to_string())),
            "{err}"
        );
        let err = ov_one_hot::<u8>(&indices, 3, 1, 0, 2, &[2, 3]).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONEHOT1.AXIS_RANGE"]),
            "{err}"
        );

        // A depth input that disagrees with depth_value.
        let depth = packed::<i32>(&[], &[5]);
        let on = packed::<u8>(&[], &[1]);
        let off = packed::<u8>(&[], &[0]);
        let op = OperatorDesc::OvOneHot(OvOneHotDesc {
            indices: indices.desc.clone(),
            depth: depth.desc.clone(),
            depth_value: 3,
            on_value: on.desc.clone(),
            off_value: off.desc.clone(),
            output: TensorDesc::packed(DataType::Uint8, &[2, 3]),
            axis: 1,
        });
        let err = execute(&op, &[indices.clone(), depth, on, off], Level::Opset(1)).unwrap_err();
        assert!(matches!(err, BackendError::Internal { .. }), "{err}");
        // OneHot-1 at a DirectML level.
        let err = execute(&op, &[], Level::dml(0x4100)).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONEHOT1.AVAILABILITY"]),
            "{err}"
        );
    }
}
