//! Descriptors of the benchmarked operators, and digests of their outputs that the Python
//! side recomputes from numpy's results to check that every implementation agreed.

use opconform_backend::{
    ArgMaxDesc, AxisDirection, DataType, NonZeroCoordinatesDesc, OneHotDesc, OperatorDesc,
    OvOneHotDesc, Tensor, TensorDesc,
};

/// `DML_ARGMAX` over `axes` of a packed `input` type `sizes`, INCREASING, INT64 output.
pub fn argmax(data_type: DataType, sizes: &[u32], axes: &[u32]) -> OperatorDesc {
    let mut out = sizes.to_vec();
    for &a in axes {
        out[a as usize] = 1;
    }
    OperatorDesc::ArgMax(ArgMaxDesc {
        input: TensorDesc::packed(data_type, sizes),
        output: TensorDesc::packed(DataType::Int64, &out),
        axes: axes.to_vec(),
        axis_direction: AxisDirection::Increasing,
    })
}

/// `DML_NONZERO_COORDINATES` of a packed FLOAT32 input: one row of `sizes.len()` coordinates
/// per element.
pub fn nonzero(sizes: &[u32]) -> OperatorDesc {
    let count: u32 = sizes.iter().product();
    let rank = sizes.len();
    let mut count_sizes = vec![1u32; rank.max(2)];
    let mut coordinate_sizes = vec![1u32; rank.max(2)];
    count_sizes.truncate(rank.max(1));
    let len = coordinate_sizes.len();
    coordinate_sizes[len - 2] = count;
    coordinate_sizes[len - 1] = rank as u32;
    OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
        input: TensorDesc::packed(DataType::Float32, sizes),
        output_count: TensorDesc::packed(DataType::Uint32, &count_sizes),
        output_coordinates: TensorDesc::packed(DataType::Uint32, &coordinate_sizes),
    })
}

/// `DML_ONE_HOT` of `count` INT32 indices (`{1,1,count,1}`) into `depth` FLOAT32 values along
/// axis 3, with values `{1,1,1,2}` (OffValue, OnValue).
pub fn one_hot(count: u32, depth: u32) -> OperatorDesc {
    OperatorDesc::OneHot(OneHotDesc {
        indices: TensorDesc::packed(DataType::Int32, &[1, 1, count, 1]),
        values: TensorDesc::packed(DataType::Float32, &[1, 1, 1, 2]),
        output: TensorDesc::packed(DataType::Float32, &[1, 1, count, depth]),
        axis: 3,
    })
}

/// OpenVINO `OneHot-1` of `count` INT32 indices into `depth` FLOAT32 values on a new last axis.
pub fn ov_one_hot(count: u32, depth: u32) -> OperatorDesc {
    OperatorDesc::OvOneHot(OvOneHotDesc {
        indices: TensorDesc::packed(DataType::Int32, &[count]),
        depth: TensorDesc::packed(DataType::Int32, &[]),
        depth_value: i64::from(depth),
        on_value: TensorDesc::packed(DataType::Float32, &[]),
        off_value: TensorDesc::packed(DataType::Float32, &[]),
        output: TensorDesc::packed(DataType::Float32, &[count, depth]),
        axis: -1,
    })
}

/// The scalar inputs of [`ov_one_hot`]: depth, on value 1.0, off value 0.0.
pub fn ov_one_hot_scalars(depth: u32) -> [Tensor; 3] {
    let scalar = |data_type, bytes: [u8; 4]| {
        Tensor::from_bytes(TensorDesc::packed(data_type, &[]), bytes.to_vec())
            .expect("a 4-byte scalar")
    };
    [
        scalar(DataType::Int32, (depth as i32).to_le_bytes()),
        scalar(DataType::Float32, 1.0f32.to_le_bytes()),
        scalar(DataType::Float32, 0.0f32.to_le_bytes()),
    ]
}

/// The `{1,1,1,2}` values tensor of [`one_hot`]: OffValue 0.0, OnValue 1.0.
pub fn one_hot_values() -> Tensor {
    let mut bytes = 0.0f32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&1.0f32.to_le_bytes());
    Tensor::from_bytes(TensorDesc::packed(DataType::Float32, &[1, 1, 1, 2]), bytes)
        .expect("two FLOAT32 values")
}

/// Reads little-endian `u32` number `i` of `bytes`.
fn u32_at(bytes: &[u8], i: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[i * 4..i * 4 + 4]);
    u32::from_le_bytes(word)
}

/// The NonZeroCoordinates result as `(count, digest)`: the digest is the wrapping sum over rows
/// `r` of `(r + 1) × flat index` (row-major over `sizes`) of the row's element, so it checks
/// both the rows and their order.
pub fn nonzero_digest(count: &Tensor, coordinates: &Tensor, sizes: &[u32]) -> (u64, u64) {
    let total = u32_at(&count.data, 0) as usize;
    let rank = sizes.len();
    let mut digest = 0u64;
    for r in 0..total {
        let mut flat = 0u64;
        for (d, &size) in sizes.iter().enumerate() {
            flat = flat * u64::from(size) + u64::from(u32_at(&coordinates.data, r * rank + d));
        }
        digest = digest.wrapping_add(flat.wrapping_mul(r as u64 + 1));
    }
    (total as u64, digest)
}

/// A FLOAT32 one-hot output as `(on_count, on_flat_sum, other)`: how many elements are 1.0,
/// the sum of their flat indices, and how many are neither 1.0 nor 0.0 (should be none).
pub fn one_hot_digest(output: &Tensor) -> (u64, u64, u64) {
    let (mut on, mut sum, mut other) = (0u64, 0u64, 0u64);
    for (i, e) in output.data.chunks_exact(4).enumerate() {
        match u32::from_le_bytes([e[0], e[1], e[2], e[3]]) {
            0x3f80_0000 => {
                on += 1;
                sum = sum.wrapping_add(i as u64);
            }
            0 => {}
            _ => other += 1,
        }
    }
    (on, sum, other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::{validate, Level};

    #[test]
    fn descriptors_are_valid() {
        let level = Level::dml(0x4100);
        for op in [
            argmax(DataType::Float32, &[4, 8], &[1]),
            argmax(DataType::Int32, &[4, 8], &[0, 1]),
            nonzero(&[2, 3, 4, 5]),
            one_hot(16, 64),
        ] {
            assert!(validate(&op, level).is_empty(), "{op:?}");
        }
        assert!(validate(&ov_one_hot(16, 64), Level::Opset(1)).is_empty());
    }

    #[test]
    fn digests() {
        let count = Tensor::from_bytes(
            TensorDesc::packed(DataType::Uint32, &[1, 1]),
            2u32.to_le_bytes().to_vec(),
        )
        .unwrap();
        // Rows (0,1) and (1,0) of a {2,3} tensor: flat 1 and 3; digest 1*1 + 3*2.
        let words: Vec<u8> = [0u32, 1, 1, 0, 9, 9]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let coordinates =
            Tensor::from_bytes(TensorDesc::packed(DataType::Uint32, &[3, 2]), words).unwrap();
        assert_eq!(nonzero_digest(&count, &coordinates, &[2, 3]), (2, 7));
        let out: Vec<u8> = [0.0f32, 1.0, 0.0, 1.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let out = Tensor::from_bytes(TensorDesc::packed(DataType::Float32, &[4]), out).unwrap();
        assert_eq!(one_hot_digest(&out), (2, 4, 0));
    }
}
