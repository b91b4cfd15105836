//! Test-only builders for tensors from typed values and readers of their logical elements.
//!
//! Independent of the kernels' own element code: bytes are made with `to_le_bytes` here and
//! elements are located with the API crate's `TensorDesc::element_offset`.

use half::f16;
use opconform_backend::{DataType, Tensor, TensorDesc};

/// A Rust type standing for one of the tensor data types.
pub(crate) trait Scalar: Copy {
    /// The data type it stands for.
    const TYPE: DataType;
    /// Little-endian bytes.
    fn le(self) -> Vec<u8>;
    /// From little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
}

macro_rules! scalar {
    ($($t:ty => $dt:ident),*) => {$(
        impl Scalar for $t {
            const TYPE: DataType = DataType::$dt;
            fn le(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().unwrap())
            }
        }
    )*};
}

scalar!(f64 => Float64, f32 => Float32, i64 => Int64, i32 => Int32, i16 => Int16, i8 => Int8,
        u64 => Uint64, u32 => Uint32, u16 => Uint16, u8 => Uint8);

impl Scalar for f16 {
    const TYPE: DataType = DataType::Float16;
    fn le(self) -> Vec<u8> {
        self.to_bits().to_le_bytes().to_vec()
    }
    fn from_le(bytes: &[u8]) -> Self {
        f16::from_bits(u16::from_le_bytes(bytes.try_into().unwrap()))
    }
}

/// A tensor whose buffer holds `buffer` (in buffer order, padded with zero bytes to the
/// description's minimum size).
pub(crate) fn strided<T: Scalar>(sizes: &[u32], strides: Option<&[u32]>, buffer: &[T]) -> Tensor {
    let desc = TensorDesc::with_strides(T::TYPE, sizes, strides).unwrap();
    let mut data: Vec<u8> = buffer.iter().flat_map(|v| v.le()).collect();
    assert!(
        data.len() as u64 <= desc.total_tensor_size_in_bytes,
        "buffer too long"
    );
    data.resize(desc.total_tensor_size_in_bytes as usize, 0);
    Tensor::from_bytes(desc, data).unwrap()
}

/// A packed tensor holding `values` in row-major order.
pub(crate) fn packed<T: Scalar>(sizes: &[u32], values: &[T]) -> Tensor {
    let count: u64 = sizes.iter().map(|&s| u64::from(s)).product();
    assert_eq!(values.len() as u64, count, "value count");
    strided(sizes, None, values)
}

/// An output tensor for `desc`, filled with the poison byte 0xAB.
pub(crate) fn poisoned(desc: &TensorDesc) -> Tensor {
    Tensor::filled(desc.clone(), 0xAB).unwrap()
}

/// Every logical element of `tensor` in row-major order, read through its strides.
pub(crate) fn elements<T: Scalar>(tensor: &Tensor) -> Vec<T> {
    let sizes: Vec<u64> = tensor.desc.sizes.iter().map(|&s| u64::from(s)).collect();
    let count: u64 = sizes.iter().product();
    let mut coords = vec![0u64; sizes.len()];
    let mut out = Vec::new();
    for _ in 0..count {
        let offset = tensor.desc.element_offset(&coords);
        out.push(T::from_le(tensor.element_bytes(offset).unwrap()));
        for d in (0..sizes.len()).rev() {
            coords[d] += 1;
            if coords[d] < sizes[d] {
                break;
            }
            coords[d] = 0;
        }
    }
    out
}

/// [`seeded_bytes`] for a `pick` of the random number alone (its high bits: `random >> 22`).
pub(crate) fn seeded_values<T: Scalar>(
    count: usize,
    seed: u64,
    mut pick: impl FnMut(u64) -> T,
) -> Vec<u8> {
    seeded_bytes(count, seed, |_, random| pick(random >> 22))
}

/// The bytes of `count` elements `pick(position, random)` gives, with a seeded generator (a
/// linear congruential one: the kernels' tests draw from small sets of values, many ties).
pub(crate) fn seeded_bytes<T: Scalar>(
    count: usize,
    seed: u64,
    mut pick: impl FnMut(usize, u64) -> T,
) -> Vec<u8> {
    let mut state = seed;
    let mut bytes = Vec::with_capacity(count * std::mem::size_of::<T>());
    for i in 0..count {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        bytes.extend(pick(i, state >> 11).le());
    }
    bytes
}
