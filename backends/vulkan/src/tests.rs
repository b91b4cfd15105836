//! Tests on a real Vulkan device: the seeds' documented examples (expected outputs typed in
//! from the documents), edge cases of the specs' readings, and randomised comparisons with a
//! small reference written here.
//!
//! Without a Vulkan driver each test prints why and returns, unless `OPCONFORM_REQUIRE_VULKAN=1`
//! is set, in which case a missing driver fails them.

use super::*;
use half::f16;
use opconform_backend::{
    ArgMaxDesc, AxisDirection, DataType, NonZeroCoordinatesDesc, OneHotDesc, OvOneHotDesc,
    TensorDesc,
};
use std::sync::OnceLock;

/// The shared backend, or `None` (after saying why) when there is no driver and
/// `OPCONFORM_REQUIRE_VULKAN` is not set.
fn backend() -> Option<&'static VulkanBackend> {
    static BACKEND: OnceLock<Result<VulkanBackend, Unavailable>> = OnceLock::new();
    match BACKEND.get_or_init(VulkanBackend::new) {
        Ok(backend) => Some(backend),
        Err(unavailable) => {
            let required =
                std::env::var("OPCONFORM_REQUIRE_VULKAN").is_ok_and(|v| v != "0" && !v.is_empty());
            if required {
                panic!("OPCONFORM_REQUIRE_VULKAN is set but {unavailable}");
            }
            eprintln!("skipping: {unavailable} (set OPCONFORM_REQUIRE_VULKAN=1 to fail instead)");
            None
        }
    }
}

macro_rules! backend_or_return {
    () => {
        match backend() {
            Some(backend) => backend,
            None => return,
        }
    };
}

/// The DirectML level the tests run at (the backend's claim).
const DML: Level = Level::Dml(DML_4_1);
const DML_4_1: opconform_backend::FeatureLevel = opconform_backend::FeatureLevel::ALL[6];

/// A Rust value of one of the tensor element types.
trait Elem: Copy + PartialEq + fmt::Debug {
    const TYPE: DataType;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! elem {
    ($t:ty, $dt:ident) => {
        impl Elem for $t {
            const TYPE: DataType = DataType::$dt;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().unwrap())
            }
        }
    };
}
elem!(f64, Float64);
elem!(f32, Float32);
elem!(f16, Float16);
elem!(i64, Int64);
elem!(i32, Int32);
elem!(i16, Int16);
elem!(i8, Int8);
elem!(u64, Uint64);
elem!(u32, Uint32);
elem!(u16, Uint16);
elem!(u8, Uint8);

/// A tensor whose buffer holds `buffer` (elements by buffer offset), zero-padded to its size.
fn strided<T: Elem>(sizes: &[u32], strides: Option<&[u32]>, buffer: &[T]) -> Tensor {
    let desc = TensorDesc::with_strides(T::TYPE, sizes, strides).unwrap();
    let mut data = Vec::new();
    for &v in buffer {
        v.put(&mut data);
    }
    assert!(
        data.len() as u64 <= desc.total_tensor_size_in_bytes,
        "too many elements"
    );
    data.resize(desc.total_tensor_size_in_bytes as usize, 0);
    Tensor::from_bytes(desc, data).unwrap()
}

/// A packed tensor.
fn packed<T: Elem>(sizes: &[u32], values: &[T]) -> Tensor {
    strided(sizes, None, values)
}

/// All coordinates of `sizes`, row-major.
fn coordinates(sizes: &[u32]) -> Vec<Vec<u64>> {
    let count: u64 = sizes.iter().map(|&s| u64::from(s)).product();
    (0..count)
        .map(|mut i| {
            let mut c = vec![0u64; sizes.len()];
            for d in (0..sizes.len()).rev() {
                c[d] = i % u64::from(sizes[d]);
                i /= u64::from(sizes[d]);
            }
            c
        })
        .collect()
}

/// The tensor's elements in row-major order, read through its strides.
fn elements<T: Elem>(tensor: &Tensor) -> Vec<T> {
    assert_eq!(tensor.desc.data_type, T::TYPE);
    if tensor.desc.strides.is_none() {
        let size = T::TYPE.size_in_bytes();
        let count = tensor.desc.element_count() as usize;
        return tensor.data[..count * size]
            .chunks(size)
            .map(T::get)
            .collect();
    }
    coordinates(&tensor.desc.sizes)
        .iter()
        .map(|c| T::get(tensor.element_bytes(tensor.desc.element_offset(c)).unwrap()))
        .collect()
}

/// Runs `op` with outputs poisoned with 0xCD bytes.
fn run(
    backend: &VulkanBackend,
    op: &OperatorDesc,
    inputs: &[Tensor],
    level: Level,
) -> Result<Vec<Tensor>, BackendError> {
    let mut outputs: Vec<Tensor> = op
        .outputs()
        .into_iter()
        .map(|d| Tensor::filled(d.clone(), 0xcd).unwrap())
        .collect();
    let start = std::time::Instant::now();
    backend.execute(op, inputs, &mut outputs, level)?;
    let elapsed = start.elapsed();
    if elapsed.as_millis() >= 100 {
        let shapes: Vec<String> = inputs.iter().map(|t| t.desc.summary()).collect();
        eprintln!("{} on {}: {elapsed:.2?}", op.kind(), shapes.join(", "));
    }
    Ok(outputs)
}

fn one_hot_op(indices: &Tensor, values: &Tensor, output: TensorDesc, axis: u32) -> OperatorDesc {
    OperatorDesc::OneHot(OneHotDesc {
        indices: indices.desc.clone(),
        values: values.desc.clone(),
        output,
        axis,
    })
}

fn argmax_op(
    input: &Tensor,
    output: TensorDesc,
    axes: &[u32],
    direction: AxisDirection,
) -> OperatorDesc {
    OperatorDesc::ArgMax(ArgMaxDesc {
        input: input.desc.clone(),
        output,
        axes: axes.to_vec(),
        axis_direction: direction,
    })
}

fn nonzero_op(input: &Tensor, n: u32) -> OperatorDesc {
    let m = input.desc.element_count() as u32;
    OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
        input: input.desc.clone(),
        output_count: TensorDesc::packed(DataType::Uint32, &[1, 1, 1, 1]),
        output_coordinates: TensorDesc::packed(DataType::Uint32, &[1, 1, m, n]),
    })
}

/// The count and the first `count` rows of a NonZeroCoordinates run.
fn nonzero_rows(outputs: &[Tensor]) -> (u32, Vec<Vec<u32>>) {
    let count = elements::<u32>(&outputs[0])[0];
    let sizes = &outputs[1].desc.sizes;
    let n = sizes[sizes.len() - 1] as usize;
    let all = elements::<u32>(&outputs[1]);
    let rows = all
        .chunks(n)
        .take(count as usize)
        .map(<[u32]>::to_vec)
        .collect();
    (count, rows)
}

// --- the documented examples -------------------------------------------------------------

#[test]
fn info_names_the_device_and_claims() {
    let backend = backend_or_return!();
    let info = backend.info();
    assert_eq!(info.name, "vulkan");
    assert!(!info.device.is_empty());
    assert!(info.device.contains(" / "), "{}", info.device);
    assert_eq!(
        info.claims,
        [Level::dml(0x4100), Level::Opset(NEWEST_OPSET)]
    );
    assert_eq!(info.operators, OperatorKind::ALL);
    eprintln!("device: {}", info.device);
}

/// 004 (English) and 000 (Japanese) DML_ONE_HOT, examples 1 to 4.
#[test]
fn one_hot_documented_examples() {
    let backend = backend_or_return!();
    let values = packed::<f32>(&[1, 1, 1, 2], &[0.0, 1.0]);
    let out = || TensorDesc::packed(DataType::Float32, &[1, 1, 3, 4]);
    // Example 1.
    let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
    let op = one_hot_op(&indices, &values, out(), 3);
    for level in [Level::dml(0x2000), DML] {
        let got = run(backend, &op, &[indices.clone(), values.clone()], level).unwrap();
        #[rustfmt::skip]
        assert_eq!(elements::<f32>(&got[0]), [
            1.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 1.0,
            0.0, 0.0, 1.0, 0.0,
        ]);
    }
    // Example 2: a different axis.
    let indices = packed::<u32>(&[1, 1, 1, 4], &[0, 2, 1, 0]);
    let op = one_hot_op(&indices, &values, out(), 2);
    let got = run(backend, &op, &[indices, values.clone()], DML).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<f32>(&got[0]), [
        1.0, 0.0, 0.0, 1.0,
        0.0, 0.0, 1.0, 0.0,
        0.0, 1.0, 0.0, 0.0,
    ]);
    // Example 3: different on/off values (OnValue along the {1,1,3,1} values' dimension 2).
    let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
    let values3 = packed::<f32>(&[1, 1, 3, 1], &[4.0, 2.0, 9.0]);
    let op = one_hot_op(&indices, &values3, out(), 3);
    let got = run(backend, &op, &[indices, values3], DML).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<f32>(&got[0]), [
        2.0, 4.0, 4.0, 4.0,
        4.0, 4.0, 4.0, 2.0,
        4.0, 4.0, 2.0, 4.0,
    ]);
    // Example 4: negative and out-of-bounds indices.
    let indices = packed::<i32>(&[1, 1, 3, 1], &[-3, 100, 3]);
    let op = one_hot_op(&indices, &values, out(), 3);
    let got = run(backend, &op, &[indices, values], Level::dml(0x3000)).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<f32>(&got[0]), [
        0.0, 1.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 1.0,
    ]);
}

/// 001 DML_NONZERO_COORDINATES: the {1,1,2,4} example with N = 3.
#[test]
fn nonzero_coordinates_documented_example() {
    let backend = backend_or_return!();
    let input = packed::<f32>(&[1, 1, 2, 4], &[1.0, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2]);
    let op = nonzero_op(&input, 3);
    for level in [Level::dml(0x3000), DML] {
        let got = run(backend, &op, std::slice::from_ref(&input), level).unwrap();
        let (count, rows) = nonzero_rows(&got);
        assert_eq!(count, 4);
        assert_eq!(rows, [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]]);
    }
}

/// 003 DML_ARGMAX: examples 1 to 3 and the direction examples argmax({3,2,1,2,3}).
#[test]
fn argmax_documented_examples() {
    let backend = backend_or_return!();
    let input = packed::<f32>(&[3, 3], &[1.0, 2.0, 3.0, 3.0, 0.0, 4.0, 2.0, 5.0, 2.0]);
    let cases: [(&[u32], &[u32], &[u32]); 3] = [
        (&[0], &[1, 3], &[1, 2, 1]),
        (&[1], &[3, 1], &[2, 2, 1]),
        (&[0, 1], &[1, 1], &[7]),
    ];
    for (axes, out_sizes, expected) in cases {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Uint32, out_sizes),
            axes,
            AxisDirection::Increasing,
        );
        let got = run(
            backend,
            &op,
            std::slice::from_ref(&input),
            Level::dml(0x3000),
        )
        .unwrap();
        assert_eq!(elements::<u32>(&got[0]), expected, "axes {axes:?}");
    }
    let input = packed::<f32>(&[5], &[3.0, 2.0, 1.0, 2.0, 3.0]);
    for (direction, expected) in [
        (AxisDirection::Increasing, 0),
        (AxisDirection::Decreasing, 4),
    ] {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Uint32, &[1]),
            &[0],
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(elements::<u32>(&got[0]), [expected], "{direction:?}");
    }
}

fn ov_one_hot_op(
    indices: &Tensor,
    depth: &Tensor,
    depth_value: i64,
    on: &Tensor,
    off: &Tensor,
    output: &[u32],
    axis: i64,
) -> OperatorDesc {
    OperatorDesc::OvOneHot(OvOneHotDesc {
        indices: indices.desc.clone(),
        depth: depth.desc.clone(),
        depth_value,
        on_value: on.desc.clone(),
        off_value: off.desc.clone(),
        output: TensorDesc::packed(on.desc.data_type, output),
        axis,
    })
}

/// 002 OpenVINO OneHot-1: both examples.
#[test]
fn ov_one_hot_documented_examples() {
    let backend = backend_or_return!();
    let depth = packed::<i32>(&[], &[3]);
    // Example 1: axis -1.
    let indices = packed::<i32>(&[4], &[0, 3, 1, 2]);
    let on = packed::<i32>(&[], &[1]);
    let off = packed::<i32>(&[], &[2]);
    let op = ov_one_hot_op(&indices, &depth, 3, &on, &off, &[4, 3], -1);
    let got = run(
        backend,
        &op,
        &[indices, depth.clone(), on.clone(), off],
        Level::Opset(1),
    )
    .unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<i32>(&got[0]), [1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 1]);
    // Example 2: axis 1.
    let indices = packed::<i32>(&[2, 3], &[0, 3, 1, 1, 2, 4]);
    let off = packed::<i32>(&[], &[0]);
    let op = ov_one_hot_op(&indices, &depth, 3, &on, &off, &[2, 3, 3], 1);
    let got = run(
        backend,
        &op,
        &[indices, depth, on, off],
        Level::Opset(NEWEST_OPSET),
    )
    .unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<i32>(&got[0]), [
        1, 0, 0,  0, 0, 1,  0, 0, 0,
        0, 0, 0,  1, 0, 0,  0, 1, 0,
    ]);
}

// --- edge cases ------------------------------------------------------------------------------

#[test]
fn invalid_descriptors_are_rejected_by_rule() {
    let backend = backend_or_return!();
    let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
    let values = packed::<f32>(&[1, 1, 1, 2], &[0.0, 1.0]);
    let op = one_hot_op(
        &indices,
        &values,
        TensorDesc::packed(DataType::Float32, &[1, 1, 3, 4]),
        4,
    );
    match run(backend, &op, &[indices.clone(), values.clone()], DML) {
        Err(BackendError::Invalid { rules, .. }) => assert_eq!(rules, ["ONE_HOT.AXIS_RANGE"]),
        other => panic!("{other:?}"),
    }
    let op = one_hot_op(
        &indices,
        &values,
        TensorDesc::packed(DataType::Float32, &[1, 1, 3, 4]),
        3,
    );
    match run(backend, &op, &[indices, values], Level::dml(0x1000)) {
        Err(BackendError::Invalid { rules, .. }) => assert_eq!(rules, ["ONE_HOT.AVAILABILITY"]),
        other => panic!("{other:?}"),
    }
    // A buffer shorter than its descriptor is the caller's error, reported, not a crash.
    let input = packed::<f32>(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let op = argmax_op(
        &input,
        TensorDesc::packed(DataType::Uint32, &[1]),
        &[0],
        AxisDirection::Increasing,
    );
    let short = Tensor {
        desc: input.desc.clone(),
        data: vec![0; 8],
    };
    let mut outputs = vec![Tensor::filled(TensorDesc::packed(DataType::Uint32, &[1]), 0).unwrap()];
    assert!(matches!(
        backend.execute(&op, &[short], &mut outputs, DML),
        Err(BackendError::Internal { .. })
    ));
}

/// 64-bit indices are compared in 64 bits; negative ones count from the end only down to
/// -size; unsigned ones never do.
#[test]
fn one_hot_index_edges() {
    let backend = backend_or_return!();
    let values = packed::<f32>(&[1, 2], &[0.0, 1.0]);
    let out = TensorDesc::packed(DataType::Float32, &[7, 4]);
    let signed = packed::<i64>(&[7, 1], &[1 << 32, (1 << 32) + 1, -4, -5, -1, 3, i64::MIN]);
    let op = one_hot_op(&signed, &values, out.clone(), 1);
    let got = run(backend, &op, &[signed, values.clone()], DML).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<f32>(&got[0]), [
        0.0, 0.0, 0.0, 0.0, // 2^32: out of range, not 0
        0.0, 0.0, 0.0, 0.0, // 2^32 + 1: not 1
        1.0, 0.0, 0.0, 0.0, // -4: the first
        0.0, 0.0, 0.0, 0.0, // -5: below -size, all off
        0.0, 0.0, 0.0, 1.0, // -1: the last
        0.0, 0.0, 0.0, 1.0,
        0.0, 0.0, 0.0, 0.0,
    ]);
    let unsigned = packed::<u64>(&[7, 1], &[1 << 32, u64::MAX, 0, 2, 4, u64::MAX - 2, 1]);
    let op = one_hot_op(&unsigned, &values, out.clone(), 1);
    let got = run(backend, &op, &[unsigned, values.clone()], DML).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<f32>(&got[0]), [
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, // UINT64 max is not -1
        1.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 1.0, 0.0,
        0.0, 0.0, 0.0, 0.0, // 4 == size: out of range
        0.0, 0.0, 0.0, 0.0,
        0.0, 1.0, 0.0, 0.0,
    ]);
    let u32s = packed::<u32>(&[7, 1], &[u32::MAX, 0x8000_0000, 3, 0, 1, 2, 5]);
    let op = one_hot_op(&u32s, &values, out.clone(), 1);
    let got = run(backend, &op, &[u32s, values.clone()], DML).unwrap();
    let got = elements::<f32>(&got[0]);
    assert_eq!(
        &got[..8],
        [0.0; 8],
        "UINT32 0xFFFFFFFF and 2^31 are not negative"
    );
    assert_eq!(&got[8..12], [0.0, 0.0, 0.0, 1.0]);
    let i32s = packed::<i32>(&[7, 1], &[i32::MIN, i32::MAX, -2, -4, -5, 0, 4]);
    let op = one_hot_op(&i32s, &values, out, 1);
    let got = run(backend, &op, &[i32s, values], DML).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<f32>(&got[0]), [
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 1.0, 0.0,
        1.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        1.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
    ]);
}

/// Values through strides (OnValue: coordinate 1 of the innermost dimension of size > 1),
/// copied bit for bit; narrow outputs written through strides leave the padding alone.
#[test]
fn one_hot_values_strides_and_narrow_outputs() {
    let backend = backend_or_return!();
    // Values {2,1,3} strides {1,0,5}: OffValue at offset 0, OnValue at offset 5 (dimension 2).
    let values = strided::<u8>(
        &[2, 1, 3],
        Some(&[1, 0, 5]),
        &[7, 8, 0, 0, 0, 9, 0, 0, 0, 0, 10],
    );
    let indices = strided::<u32>(&[2, 1, 3], Some(&[0, 1, 1]), &[2, 0, 1]);
    // Output {2,4,3} strides {1,6,2}: element (a, b, c) at a + 6b + 2c; odd... all covered.
    let output = TensorDesc::with_strides(DataType::Uint8, &[2, 4, 3], Some(&[1, 6, 2])).unwrap();
    let op = one_hot_op(&indices, &values, output, 1);
    let got = run(backend, &op, &[indices, values], DML).unwrap();
    #[rustfmt::skip]
    assert_eq!(elements::<u8>(&got[0]), [
        7, 9, 7,  7, 7, 9,  9, 7, 7,  7, 7, 7,
        7, 9, 7,  7, 7, 9,  9, 7, 7,  7, 7, 7,
    ]);
    // Padding between strided INT16 elements keeps the poison.
    let values = packed::<i16>(&[1, 2], &[-1, 0x1234]);
    let indices = packed::<u32>(&[3, 1], &[1, 0, 9]);
    let output = TensorDesc::with_strides(DataType::Int16, &[3, 2], Some(&[4, 2])).unwrap();
    let op = one_hot_op(&indices, &values, output, 1);
    let got = run(backend, &op, &[indices, values], DML).unwrap();
    assert_eq!(elements::<i16>(&got[0]), [-1, 0x1234, 0x1234, -1, -1, -1]);
    let raw: Vec<i16> = got[0].data.chunks(2).map(i16::get).collect();
    let poison = i16::from_le_bytes([0xcd, 0xcd]);
    assert_eq!(raw[1], poison);
    assert_eq!(raw[3], poison);
    // FLOAT64 NaN payloads and -0.0 survive bit for bit.
    let nan = f64::from_bits(0x7ff4_0000_dead_beef);
    let values = packed::<f64>(&[1, 2], &[-0.0, nan]);
    let indices = packed::<i64>(&[2, 1], &[0, -1]);
    let op = one_hot_op(
        &indices,
        &values,
        TensorDesc::packed(DataType::Float64, &[2, 3]),
        1,
    );
    let got = run(backend, &op, &[indices, values], DML).unwrap();
    let bits: Vec<u64> = elements::<f64>(&got[0])
        .iter()
        .map(|v| v.to_bits())
        .collect();
    let (z, n) = ((-0.0f64).to_bits(), nan.to_bits());
    assert_eq!(bits, [n, z, z, z, z, n]);
}

#[test]
fn ov_one_hot_edges() {
    let backend = backend_or_return!();
    // 0-D indices, INT64, negative (all off), index >= depth (all off).
    let depth = packed::<i64>(&[], &[4]);
    let on = packed::<u8>(&[], &[200]);
    let off = packed::<u8>(&[], &[3]);
    for (index, expected) in [
        (2i64, [3, 3, 200, 3]),
        (-1, [3; 4]),
        (4, [3; 4]),
        (1 << 32, [3; 4]),
    ] {
        let indices = packed::<i64>(&[], &[index]);
        let op = ov_one_hot_op(&indices, &depth, 4, &on, &off, &[4], 0);
        let got = run(
            backend,
            &op,
            &[indices, depth.clone(), on.clone(), off.clone()],
            Level::Opset(1),
        )
        .unwrap();
        assert_eq!(elements::<u8>(&got[0]), expected, "index {index}");
    }
    // The new axis in the middle of a rank-3 output, FLOAT16 values.
    let depth = packed::<i32>(&[], &[2]);
    let on = packed::<f16>(&[], &[f16::from_f32(1.5)]);
    let off = packed::<f16>(&[], &[f16::from_f32(-0.0)]);
    let indices = packed::<i32>(&[2, 2], &[1, 0, -2, 5]);
    let op = ov_one_hot_op(&indices, &depth, 2, &on, &off, &[2, 2, 2], -2);
    let got = run(backend, &op, &[indices, depth, on, off], Level::Opset(1)).unwrap();
    let bits: Vec<u16> = elements::<f16>(&got[0])
        .iter()
        .map(|v| v.to_bits())
        .collect();
    let (z, o) = (f16::from_f32(-0.0).to_bits(), f16::from_f32(1.5).to_bits());
    assert_eq!(bits, [z, o, o, z, z, z, z, z]);
    // A 0 dimension: an empty output, nothing to do.
    let depth = packed::<i32>(&[], &[3]);
    let on = packed::<i32>(&[], &[1]);
    let off = packed::<i32>(&[], &[0]);
    let indices = packed::<i32>(&[0, 2], &[]);
    let op = ov_one_hot_op(&indices, &depth, 3, &on, &off, &[0, 2, 3], -1);
    let got = run(backend, &op, &[indices, depth, on, off], Level::Opset(1)).unwrap();
    assert!(got[0].data.is_empty());
}

#[test]
fn argmax_ties_nan_and_signed_zero() {
    let backend = backend_or_return!();
    let nan = f32::NAN;
    let input = packed::<f32>(
        &[5, 4],
        &[
            1.0,
            nan,
            3.0,
            nan, // NaN above every number
            -0.0,
            0.0,
            -1.0,
            0.0, // -0.0 == +0.0
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE / 2.0,
            0.0,
            -0.0, // a denormal above zero
            2.0,
            2.0,
            2.0,
            f32::INFINITY,
            -nan,
            5.0,
            nan,
            -3.0, // NaN sign is irrelevant
        ],
    );
    for (direction, expected) in [
        (AxisDirection::Increasing, [1, 0, 1, 3, 0]),
        (AxisDirection::Decreasing, [3, 3, 1, 3, 2]),
    ] {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Int64, &[5, 1]),
            &[1],
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(elements::<i64>(&got[0]), expected, "{direction:?}");
    }
    // FLOAT16 with ties across both axes (flat index over {2,3}).
    let h = |v: f32| f16::from_f32(v);
    let input = packed::<f16>(&[2, 3], &[h(1.0), h(4.0), h(-2.0), h(4.0), h(0.5), h(4.0)]);
    for (direction, expected) in [
        (AxisDirection::Increasing, 1u64),
        (AxisDirection::Decreasing, 5),
    ] {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Uint64, &[1, 1]),
            &[1, 0],
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(elements::<u64>(&got[0]), [expected], "{direction:?}");
    }
}

#[test]
fn argmax_integer_types() {
    let backend = backend_or_return!();
    let out = || TensorDesc::packed(DataType::Uint32, &[1]);
    let inc = AxisDirection::Increasing;
    let check = |input: Tensor, expected: u32| {
        let op = argmax_op(&input, out(), &[0], inc);
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(
            elements::<u32>(&got[0]),
            [expected],
            "{}",
            input.desc.summary()
        );
    };
    check(packed::<i8>(&[5], &[-128, -1, -3, 127, 0]), 3);
    check(packed::<i8>(&[3], &[-128, -1, -3]), 1);
    check(packed::<u8>(&[5], &[128, 1, 255, 127, 0]), 2);
    check(packed::<i16>(&[4], &[-300, -2, -1, -32768]), 2);
    check(packed::<u16>(&[4], &[40000, 2, 65535, 1]), 2);
    check(packed::<i32>(&[3], &[i32::MIN, -1, -7]), 1);
    check(packed::<u32>(&[3], &[1, u32::MAX, 0x8000_0000]), 1);
    check(
        packed::<i64>(&[4], &[-(1 << 40), 1 << 33, (1 << 33) - 1, i64::MIN]),
        1,
    );
    check(packed::<i64>(&[3], &[-5, -(1 << 35), -4]), 2);
    check(packed::<u64>(&[3], &[1 << 32, u64::MAX, (1 << 63) - 1]), 1);
}

#[test]
fn argmax_strides_broadcast_and_unsorted_axes() {
    let backend = backend_or_return!();
    // Input {2,3} broadcast along dimension 0 (stride 0): rows are equal, ties everywhere.
    let input = strided::<i32>(&[2, 3], Some(&[0, 1]), &[5, 9, 9]);
    let op = argmax_op(
        &input,
        TensorDesc::packed(DataType::Uint32, &[1, 1]),
        &[1, 0],
        AxisDirection::Increasing,
    );
    let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
    assert_eq!(elements::<u32>(&got[0]), [1]);
    let op = argmax_op(
        &input,
        TensorDesc::packed(DataType::Uint32, &[1, 1]),
        &[0, 1],
        AxisDirection::Decreasing,
    );
    let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
    assert_eq!(elements::<u32>(&got[0]), [5]);
    // A transposed input and a strided output: {3,2} strides {1,3} over [[0,4,2],[7,1,3]].
    let input = strided::<f32>(&[3, 2], Some(&[1, 3]), &[0.0, 4.0, 2.0, 7.0, 1.0, 3.0]);
    let output = TensorDesc::with_strides(DataType::Int32, &[3, 1], Some(&[2, 1])).unwrap();
    let op = argmax_op(&input, output, &[1], AxisDirection::Increasing);
    let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
    assert_eq!(elements::<i32>(&got[0]), [1, 0, 1]);
    let raw: Vec<i32> = got[0].data.chunks(4).map(i32::get).collect();
    assert_eq!(raw[1], i32::from_le_bytes([0xcd; 4]), "padding untouched");
}

#[test]
fn nonzero_coordinates_edges() {
    let backend = backend_or_return!();
    // NaN is nonzero, -0.0 is zero, a denormal is nonzero.
    let h = |v: f32| f16::from_f32(v);
    let input = packed::<f16>(
        &[2, 3],
        &[
            h(-0.0),
            f16::NAN,
            h(0.0),
            f16::from_bits(1),
            h(0.0),
            h(-2.0),
        ],
    );
    let got = run(
        backend,
        &nonzero_op(&input, 2),
        std::slice::from_ref(&input),
        DML,
    )
    .unwrap();
    assert_eq!(
        nonzero_rows(&got),
        (3, vec![vec![0, 1], vec![1, 0], vec![1, 2]])
    );
    // Integers, a strided (transposed) input, N equal to the rank.
    let input = strided::<i8>(&[3, 2], Some(&[1, 3]), &[0, -1, 0, 5, 0, -128]);
    let got = run(
        backend,
        &nonzero_op(&input, 2),
        std::slice::from_ref(&input),
        DML,
    )
    .unwrap();
    assert_eq!(
        nonzero_rows(&got),
        (3, vec![vec![0, 1], vec![1, 0], vec![2, 1]])
    );
    // All zero: count 0.
    let input = packed::<u16>(&[1, 5], &[0; 5]);
    let got = run(
        backend,
        &nonzero_op(&input, 1),
        std::slice::from_ref(&input),
        DML,
    )
    .unwrap();
    assert_eq!(nonzero_rows(&got).0, 0);
    // A rank-5 input at 3_0 with 5-D outputs and a strided coordinates tensor.
    let input = packed::<u32>(&[1, 1, 2, 1, 2], &[0, 7, 7, 0]);
    let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
        input: input.desc.clone(),
        output_count: TensorDesc::packed(DataType::Uint32, &[1, 1, 1, 1, 1]),
        output_coordinates: TensorDesc::with_strides(
            DataType::Uint32,
            &[1, 1, 1, 4, 4],
            Some(&[0, 0, 0, 5, 1]),
        )
        .unwrap(),
    });
    let got = run(
        backend,
        &op,
        std::slice::from_ref(&input),
        Level::dml(0x3000),
    )
    .unwrap();
    let count = elements::<u32>(&got[0])[0];
    let rows = elements::<u32>(&got[1]);
    assert_eq!(count, 2);
    assert_eq!(&rows[..8], [0, 0, 0, 1, 0, 1, 0, 0]);
}

// --- randomised comparison with a reference ------------------------------------------------

/// xorshift64*: reproducible pseudo-random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random sizes from 1 to `max_size`.
fn random_sizes(rng: &mut Rng, rank: usize, max_size: u64) -> Vec<u32> {
    (0..rank).map(|_| 1 + rng.below(max_size) as u32).collect()
}

/// Random strides for `sizes`: packed (None), padded row-major in a random dimension order,
/// or (when `aliasing` is allowed) broadcasting and arbitrary small strides.
fn random_strides(rng: &mut Rng, sizes: &[u32], aliasing: bool) -> Option<Vec<u32>> {
    let rank = sizes.len();
    match rng.below(if aliasing { 3 } else { 2 }) {
        0 => None,
        1 => {
            let mut order: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut strides = vec![0u32; rank];
            let mut next = 1u32;
            for &d in order.iter().rev() {
                strides[d] = if aliasing && rng.below(6) == 0 {
                    0
                } else {
                    next
                };
                next = next * sizes[d] + rng.below(2) as u32;
            }
            Some(strides)
        }
        _ => Some(sizes.iter().map(|_| rng.below(4) as u32).collect()),
    }
}

/// Random sizes and strides.
fn random_layout(rng: &mut Rng, rank: usize, max_size: u64) -> (Vec<u32>, Option<Vec<u32>>) {
    let sizes = random_sizes(rng, rank, max_size);
    let strides = random_strides(rng, &sizes, true);
    (sizes, strides)
}

/// Random raw bytes for a tensor, biased towards repeated values, zeros and (for floats) NaN
/// and signed zeros.
fn random_tensor(
    rng: &mut Rng,
    data_type: DataType,
    sizes: &[u32],
    strides: Option<&[u32]>,
) -> Tensor {
    let desc = TensorDesc::with_strides(data_type, sizes, strides).unwrap();
    let size = data_type.size_in_bytes();
    let elements = desc.total_tensor_size_in_bytes as usize / size;
    let mut data = Vec::with_capacity(elements * size);
    for _ in 0..elements {
        let v: u64 = match rng.below(8) {
            0 => 0,
            1 => 1u64 << (size * 8 - 1), // -0.0 for floats, the minimum for signed integers
            2 => u64::MAX,               // NaN for floats, -1 for signed integers
            3 => rng.below(3),
            _ => rng.next(),
        };
        data.extend_from_slice(&v.to_le_bytes()[..size]);
    }
    data.resize(desc.total_tensor_size_in_bytes as usize, 0);
    Tensor::from_bytes(desc, data).unwrap()
}

/// An element as a comparable number: integers exactly, floats as f64 (NaN stays NaN).
fn number(tensor: &Tensor, coordinates: &[u64]) -> f64 {
    let b = tensor
        .element_bytes(tensor.desc.element_offset(coordinates))
        .unwrap();
    match tensor.desc.data_type {
        DataType::Float32 => f32::get(b) as f64,
        DataType::Float16 => f16::get(b).to_f64(),
        DataType::Float64 => f64::get(b),
        _ => unreachable!(),
    }
}

/// An integer element, widened.
fn integer(tensor: &Tensor, coordinates: &[u64]) -> i128 {
    let b = tensor
        .element_bytes(tensor.desc.element_offset(coordinates))
        .unwrap();
    match tensor.desc.data_type {
        DataType::Int64 => i64::get(b).into(),
        DataType::Int32 => i32::get(b).into(),
        DataType::Int16 => i16::get(b).into(),
        DataType::Int8 => i8::get(b).into(),
        DataType::Uint64 => u64::get(b).into(),
        DataType::Uint32 => u32::get(b).into(),
        DataType::Uint16 => u16::get(b).into(),
        DataType::Uint8 => u8::get(b).into(),
        _ => unreachable!(),
    }
}

/// Reference ArgMax: a plain scan in flat-index order with the spec's readings.
fn argmax_reference(input: &Tensor, axes: &[u32], direction: AxisDirection) -> Vec<u64> {
    let sizes = &input.desc.sizes;
    let out_sizes: Vec<u32> = (0..sizes.len())
        .map(|d| {
            if axes.contains(&(d as u32)) {
                1
            } else {
                sizes[d]
            }
        })
        .collect();
    let reduced: Vec<usize> = (0..sizes.len())
        .filter(|d| axes.contains(&(*d as u32)))
        .collect();
    let red_sizes: Vec<u32> = reduced.iter().map(|&d| sizes[d]).collect();
    let float = input.desc.data_type.is_float();
    coordinates(&out_sizes)
        .iter()
        .map(|base| {
            let mut best: Option<(usize, f64, i128)> = None;
            for (r, rc) in coordinates(&red_sizes).iter().enumerate() {
                let mut c = base.clone();
                for (k, &d) in reduced.iter().enumerate() {
                    c[d] = rc[k];
                }
                let (f, i) = if float {
                    (number(input, &c), 0)
                } else {
                    (0.0, integer(input, &c))
                };
                let replace = match best {
                    None => true,
                    Some((_, bf, bi)) => {
                        let (greater, equal) = if float {
                            match (f.is_nan(), bf.is_nan()) {
                                (true, true) => (false, true),
                                (true, false) => (true, false),
                                (false, true) => (false, false),
                                (false, false) => (f > bf, f == bf),
                            }
                        } else {
                            (i > bi, i == bi)
                        };
                        greater || (equal && direction == AxisDirection::Decreasing)
                    }
                };
                if replace {
                    best = Some((r, f, i));
                }
            }
            best.unwrap().0 as u64
        })
        .collect()
}

#[test]
fn argmax_matches_the_reference_on_random_inputs() {
    let backend = backend_or_return!();
    let mut rng = Rng(0x005e_eda1_1ce5);
    let types = [
        DataType::Float32,
        DataType::Float16,
        DataType::Int64,
        DataType::Int32,
        DataType::Int16,
        DataType::Int8,
        DataType::Uint64,
        DataType::Uint32,
        DataType::Uint16,
        DataType::Uint8,
    ];
    for round in 0..80 {
        // Some rounds have reductions long enough for the workgroup mode.
        let (rank, max_size) = if round % 5 == 0 {
            (1 + rng.below(3) as usize, 40)
        } else {
            (1 + rng.below(5) as usize, 5)
        };
        let (sizes, strides) = random_layout(&mut rng, rank, max_size);
        let data_type = types[rng.below(types.len() as u64) as usize];
        let input = random_tensor(&mut rng, data_type, &sizes, strides.as_deref());
        let mut axes: Vec<u32> = (0..rank as u32).filter(|_| rng.below(2) == 0).collect();
        if axes.is_empty() {
            axes.push(rng.below(rank as u64) as u32);
        }
        if rng.below(2) == 0 {
            axes.reverse();
        }
        let direction = if rng.below(2) == 0 {
            AxisDirection::Increasing
        } else {
            AxisDirection::Decreasing
        };
        let out_type = [
            DataType::Int64,
            DataType::Int32,
            DataType::Uint64,
            DataType::Uint32,
        ][rng.below(4) as usize];
        let out_sizes: Vec<u32> = (0..rank)
            .map(|d| {
                if axes.contains(&(d as u32)) {
                    1
                } else {
                    sizes[d]
                }
            })
            .collect();
        let op = argmax_op(
            &input,
            TensorDesc::packed(out_type, &out_sizes),
            &axes,
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        let got: Vec<u64> = coordinates(&out_sizes)
            .iter()
            .map(|c| integer(&got[0], c) as u64)
            .collect();
        assert_eq!(
            got,
            argmax_reference(&input, &axes, direction),
            "round {round}: {} axes {axes:?} {direction:?}",
            input.desc.summary()
        );
    }
}

/// Reference DML OneHot (negative indices wrap once) on raw bytes.
fn one_hot_reference(
    indices: &Tensor,
    values: &Tensor,
    output: &TensorDesc,
    axis: usize,
) -> Vec<Vec<u8>> {
    let vsizes = &values.desc.sizes;
    let on_dim = (0..vsizes.len()).rev().find(|&d| vsizes[d] > 1).unwrap();
    let mut on_c = vec![0u64; vsizes.len()];
    on_c[on_dim] = 1;
    let off = values.element_bytes(0).unwrap().to_vec();
    let on = values
        .element_bytes(values.desc.element_offset(&on_c))
        .unwrap()
        .to_vec();
    let size = i128::from(output.sizes[axis]);
    coordinates(&output.sizes)
        .iter()
        .map(|c| {
            let mut ic = c.clone();
            ic[axis] = 0;
            let mut index = integer(indices, &ic);
            if index < 0 {
                index += size;
            }
            if (0..size).contains(&index) && index == i128::from(c[axis]) {
                on.clone()
            } else {
                off.clone()
            }
        })
        .collect()
}

#[test]
fn one_hot_matches_the_reference_on_random_inputs() {
    let backend = backend_or_return!();
    let mut rng = Rng(0x0e4e_4071);
    let index_types = [
        DataType::Int64,
        DataType::Int32,
        DataType::Uint64,
        DataType::Uint32,
    ];
    for round in 0..80 {
        let (rank, max_size) = if round % 10 == 0 {
            (1 + rng.below(2) as usize, 30)
        } else {
            (1 + rng.below(5) as usize, 5)
        };
        let out_sizes = random_sizes(&mut rng, rank, max_size);
        // Output elements must not alias: packed or padded layouts only.
        let out_strides = random_strides(&mut rng, &out_sizes, false);
        let axis = rng.below(rank as u64) as usize;
        let mut index_sizes = out_sizes.clone();
        index_sizes[axis] = 1;
        let index_strides = random_strides(&mut rng, &index_sizes, true);
        let index_type = index_types[rng.below(4) as usize];
        let mut indices =
            random_tensor(&mut rng, index_type, &index_sizes, index_strides.as_deref());
        // Mostly in-range indices (some negative), so that OnValues appear.
        let width = index_type.size_in_bytes();
        let axis_size = i64::from(out_sizes[axis]);
        for chunk in indices.data.chunks_mut(width) {
            if rng.below(4) != 0 {
                let v = rng.below(2 * axis_size as u64 + 2) as i64 - axis_size - 1;
                chunk.copy_from_slice(&v.to_le_bytes()[..width]);
            }
        }
        let value_type = DataType::ALL[rng.below(11) as usize];
        let (value_sizes, value_strides) = loop {
            let (s, st) = random_layout(&mut rng, rank, 3);
            if s.iter().product::<u32>() >= 2 {
                break (s, st);
            }
        };
        let values = random_tensor(&mut rng, value_type, &value_sizes, value_strides.as_deref());
        let output =
            TensorDesc::with_strides(value_type, &out_sizes, out_strides.as_deref()).unwrap();
        let op = one_hot_op(&indices, &values, output.clone(), axis as u32);
        let got = run(backend, &op, &[indices.clone(), values.clone()], DML).unwrap();
        let got: Vec<Vec<u8>> = coordinates(&out_sizes)
            .iter()
            .map(|c| {
                got[0]
                    .element_bytes(output.element_offset(c))
                    .unwrap()
                    .to_vec()
            })
            .collect();
        assert_eq!(
            got,
            one_hot_reference(&indices, &values, &output, axis),
            "round {round}: indices {} values {} output {} axis {axis}",
            indices.desc.summary(),
            values.desc.summary(),
            output.summary()
        );
    }
}

#[test]
fn nonzero_coordinates_match_the_reference_on_random_inputs() {
    let backend = backend_or_return!();
    let mut rng = Rng(0x0000_2e05);
    let types = [
        DataType::Float32,
        DataType::Float16,
        DataType::Int32,
        DataType::Int16,
        DataType::Int8,
        DataType::Uint32,
        DataType::Uint16,
        DataType::Uint8,
    ];
    for round in 0..40 {
        // Some inputs span several blocks of 1024 elements.
        let (rank, max_size) = if round % 8 == 0 {
            (1 + rng.below(3) as usize, 40)
        } else {
            (1 + rng.below(6) as usize, 6)
        };
        let (sizes, strides) = random_layout(&mut rng, rank, max_size);
        let data_type = types[rng.below(types.len() as u64) as usize];
        let input = random_tensor(&mut rng, data_type, &sizes, strides.as_deref());
        let low = opconform_backend::validate::effective_rank(&sizes).max(1);
        let n = low as u32 + rng.below((rank - low) as u64 + 1) as u32;
        let op = nonzero_op(&input, n);
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        let expected: Vec<Vec<u32>> = coordinates(&sizes)
            .into_iter()
            .filter(|c| {
                if data_type.is_float() {
                    let v = number(&input, c);
                    v.is_nan() || v != 0.0
                } else {
                    integer(&input, c) != 0
                }
            })
            .map(|c| c[rank - n as usize..].iter().map(|&x| x as u32).collect())
            .collect();
        let (count, rows) = nonzero_rows(&got);
        assert_eq!(
            count as usize,
            expected.len(),
            "round {round}: {}",
            input.desc.summary()
        );
        assert_eq!(rows, expected, "round {round}: {}", input.desc.summary());
    }
}

#[test]
fn runs_from_several_threads() {
    let backend = backend_or_return!();
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            scope.spawn(move || {
                for i in 0..10u32 {
                    let values: Vec<u32> = (0..64).map(|k| (k * 7 + i + t) % 61).collect();
                    let input = packed::<u32>(&[64], &values);
                    let op = argmax_op(
                        &input,
                        TensorDesc::packed(DataType::Uint32, &[1]),
                        &[0],
                        AxisDirection::Increasing,
                    );
                    let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
                    let expected = values
                        .iter()
                        .enumerate()
                        .max_by_key(|(k, v)| (**v, std::cmp::Reverse(*k)))
                        .unwrap()
                        .0;
                    assert_eq!(elements::<u32>(&got[0]), [expected as u32]);
                }
            });
        }
    });
}

// --- sizes that need several passes or dispatches -------------------------------------------

/// Reductions of 300,000 and 17,000,000 elements: two and three passes of partials.
#[test]
fn argmax_long_reductions() {
    let backend = backend_or_return!();
    let n = 300_000u32;
    let input = packed::<u32>(&[n], &vec![7; n as usize]);
    for (direction, expected) in [
        (AxisDirection::Increasing, 0),
        (AxisDirection::Decreasing, n - 1),
    ] {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Uint32, &[1]),
            &[0],
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(elements::<u32>(&got[0]), [expected], "{direction:?}");
    }
    // Two outputs over {3, 50000} with NaNs in one and a tie of maxima in the other.
    let mut values = vec![f32::from_bits(0x3f80_0000); 2 * 150_000];
    for &i in &[123, 77_777, 149_999] {
        values[i] = f32::NAN;
    }
    for &i in &[150_000 + 5, 150_000 + 140_000] {
        values[i] = 9.0;
    }
    let input = packed::<f32>(&[2, 3, 50_000], &values);
    for (direction, expected) in [
        (AxisDirection::Increasing, [123, 5]),
        (AxisDirection::Decreasing, [149_999, 140_000]),
    ] {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Uint64, &[2, 1, 1]),
            &[2, 1],
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(elements::<u64>(&got[0]), expected, "{direction:?}");
    }
    let n = 17_000_000u32;
    let mut values = vec![3u8; n as usize];
    values[4_096 * 4_096 + 10] = 200;
    values[16_900_000] = 200;
    let input = packed::<u8>(&[n], &values);
    for (direction, expected) in [
        (AxisDirection::Increasing, 4_096 * 4_096 + 10),
        (AxisDirection::Decreasing, 16_900_000),
    ] {
        let op = argmax_op(
            &input,
            TensorDesc::packed(DataType::Uint32, &[1]),
            &[0],
            direction,
        );
        let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
        assert_eq!(elements::<u32>(&got[0]), [expected], "{direction:?}");
    }
}

/// Many short reductions (one invocation each) past one dispatch's workgroup limit.
#[test]
fn argmax_many_outputs() {
    let backend = backend_or_return!();
    let rows = 9_000_000u32;
    let values: Vec<i8> = (0..rows * 2).map(|i| (i % 7) as i8 - 3).collect();
    let input = packed::<i8>(&[rows, 2], &values);
    let op = argmax_op(
        &input,
        TensorDesc::packed(DataType::Int32, &[rows, 1]),
        &[1],
        AxisDirection::Decreasing,
    );
    let got = run(backend, &op, std::slice::from_ref(&input), DML).unwrap();
    let got = elements::<i32>(&got[0]);
    for (row, &index) in got.iter().enumerate() {
        let (a, b) = (values[2 * row], values[2 * row + 1]);
        assert_eq!(index, i32::from(b >= a), "row {row}: {a} {b}");
    }
}

/// 9,000,000 output elements: more workgroups than one dispatch may have.
#[test]
fn one_hot_past_one_dispatch() {
    let backend = backend_or_return!();
    let rows = 3_000_000u32;
    let indices_values: Vec<i32> = (0..rows as i32).map(|i| i % 4 - 1).collect();
    let indices = packed::<i32>(&[rows, 1], &indices_values);
    let values = packed::<u8>(&[1, 2], &[0, 1]);
    let op = one_hot_op(
        &indices,
        &values,
        TensorDesc::packed(DataType::Uint8, &[rows, 3]),
        1,
    );
    let got = run(backend, &op, &[indices, values], DML).unwrap();
    for (row, chunk) in got[0].data[..3 * rows as usize].chunks(3).enumerate() {
        // -1 counts from the end: the last of 3, as 2 is.
        let expected: [u8; 3] = match indices_values[row] {
            0 => [1, 0, 0],
            1 => [0, 1, 0],
            _ => [0, 0, 1],
        };
        assert_eq!(chunk, expected, "row {row}");
    }
}

/// 300,000 elements: 293 blocks in 3 scan segments.
#[test]
fn nonzero_coordinates_over_several_segments() {
    let backend = backend_or_return!();
    let mut rng = Rng(0x05e9_3e47);
    let sizes = [1u32, 300, 1000];
    let values: Vec<u16> = (0..300_000)
        .map(|_| {
            if rng.below(3) == 0 {
                0
            } else {
                rng.below(65535) as u16 + 1
            }
        })
        .collect();
    let input = packed::<u16>(&sizes, &values);
    let got = run(
        backend,
        &nonzero_op(&input, 3),
        std::slice::from_ref(&input),
        DML,
    )
    .unwrap();
    let expected: Vec<Vec<u32>> = values
        .iter()
        .enumerate()
        .filter(|(_, &v)| v != 0)
        .map(|(i, _)| vec![0, i as u32 / 1000, i as u32 % 1000])
        .collect();
    let (count, rows) = nonzero_rows(&got);
    assert_eq!(count as usize, expected.len());
    assert_eq!(rows, expected);
}
