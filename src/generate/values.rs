//! Typed scalars for generated cases: values written independently of a data type, their bit
//! patterns in a type, the special values of each type (extremes, subnormals, infinities, NaNs
//! with payloads), and the case-file [`Element`] that writes a bit pattern back exactly.

use crate::case::element::Element;
use half::f16;
use opconform_backend::DataType;

/// A scalar before it is given a data type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An integer; it must be exactly representable in the data type it is written in.
    Int(i128),
    /// A number; integer types need an integral value, float types round to nearest.
    Float(f64),
    /// An exact bit pattern of the data type's width.
    Bits(u64),
}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::Int(i128::from(v))
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(i128::from(v))
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int(i128::from(v))
    }
}

impl From<i128> for Value {
    fn from(v: i128) -> Value {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float(v)
    }
}

/// Values from integers, for short literal lists.
pub fn ints(values: &[i128]) -> Vec<Value> {
    values.iter().map(|&v| Value::Int(v)).collect()
}

/// The bit pattern of `value` in `data_type`, encoded exactly as the case loader encodes the
/// element it is written as.
///
/// # Panics
/// If the value does not fit the type (a generator bug).
pub fn bits_of(data_type: DataType, value: Value) -> u64 {
    try_bits_of(data_type, value).unwrap_or_else(|e| panic!("{e}"))
}

/// The bit pattern of `value` in `data_type`, or why it does not fit.
pub fn try_bits_of(data_type: DataType, value: Value) -> Result<u64, String> {
    let element = match value {
        Value::Int(v) => Element::Int(v),
        Value::Float(v) => Element::Float(v),
        Value::Bits(v) => Element::Bits(v),
    };
    let mut bytes = Vec::new();
    element
        .encode(data_type, &mut bytes)
        .map_err(|e| format!("{value:?} in {data_type}: {e}"))?;
    Ok(bits_from_le(&bytes))
}

/// A little-endian element (1 to 8 bytes) as its bit pattern.
pub fn bits_from_le(bytes: &[u8]) -> u64 {
    let mut full = [0u8; 8];
    full[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(full)
}

/// Splits a little-endian buffer of `data_type` elements into bit patterns.
pub fn buffer_bits(data_type: DataType, bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(data_type.size_in_bytes())
        .map(bits_from_le)
        .collect()
}

/// The canonical quiet NaN the case loader writes for `.nan` (positive sign).
pub fn canonical_nan(data_type: DataType) -> u64 {
    match data_type {
        DataType::Float64 => 0x7ff8_0000_0000_0000,
        DataType::Float32 => 0x7fc0_0000,
        DataType::Float16 => 0x7e00,
        other => panic!("{other} has no NaN"),
    }
}

/// Special bit patterns of a float type.
#[derive(Debug, Clone, Copy)]
pub struct FloatSpecials {
    /// +infinity.
    pub inf: u64,
    /// -infinity.
    pub neg_inf: u64,
    /// -0.0.
    pub neg_zero: u64,
    /// Largest finite value.
    pub max: u64,
    /// Most negative finite value.
    pub lowest: u64,
    /// Smallest positive normal value.
    pub min_normal: u64,
    /// Smallest positive subnormal value.
    pub min_subnormal: u64,
    /// Largest subnormal value.
    pub max_subnormal: u64,
    /// Smallest-magnitude negative subnormal value.
    pub neg_min_subnormal: u64,
    /// A quiet NaN with a nonzero payload.
    pub nan_payload: u64,
    /// A quiet NaN with the sign bit set.
    pub negative_nan: u64,
    /// A signalling NaN (quiet bit clear, payload 1).
    pub signalling_nan: u64,
}

/// The special values of `data_type` (a float type).
pub fn float_specials(data_type: DataType) -> FloatSpecials {
    match data_type {
        DataType::Float16 => FloatSpecials {
            inf: 0x7c00,
            neg_inf: 0xfc00,
            neg_zero: 0x8000,
            max: 0x7bff,
            lowest: 0xfbff,
            min_normal: 0x0400,
            min_subnormal: 0x0001,
            max_subnormal: 0x03ff,
            neg_min_subnormal: 0x8001,
            nan_payload: 0x7e2a,
            negative_nan: 0xfe00,
            signalling_nan: 0x7c01,
        },
        DataType::Float32 => FloatSpecials {
            inf: 0x7f80_0000,
            neg_inf: 0xff80_0000,
            neg_zero: 0x8000_0000,
            max: 0x7f7f_ffff,
            lowest: 0xff7f_ffff,
            min_normal: 0x0080_0000,
            min_subnormal: 0x0000_0001,
            max_subnormal: 0x007f_ffff,
            neg_min_subnormal: 0x8000_0001,
            nan_payload: 0x7fc1_2345,
            negative_nan: 0xffc0_0000,
            signalling_nan: 0x7f80_0001,
        },
        DataType::Float64 => FloatSpecials {
            inf: 0x7ff0_0000_0000_0000,
            neg_inf: 0xfff0_0000_0000_0000,
            neg_zero: 0x8000_0000_0000_0000,
            max: 0x7fef_ffff_ffff_ffff,
            lowest: 0xffef_ffff_ffff_ffff,
            min_normal: 0x0010_0000_0000_0000,
            min_subnormal: 0x0000_0000_0000_0001,
            max_subnormal: 0x000f_ffff_ffff_ffff,
            neg_min_subnormal: 0x8000_0000_0000_0001,
            nan_payload: 0x7ff8_0000_dead_beef,
            negative_nan: 0xfff8_0000_0000_0000,
            signalling_nan: 0x7ff0_0000_0000_0001,
        },
        other => panic!("{other} is not a float type"),
    }
}

/// The smallest value of an integer type.
pub fn int_min(data_type: DataType) -> i128 {
    match data_type {
        DataType::Int64 => i128::from(i64::MIN),
        DataType::Int32 => i128::from(i32::MIN),
        DataType::Int16 => i128::from(i16::MIN),
        DataType::Int8 => i128::from(i8::MIN),
        DataType::Uint64 | DataType::Uint32 | DataType::Uint16 | DataType::Uint8 => 0,
        other => panic!("{other} is not an integer type"),
    }
}

/// The largest value of an integer type.
pub fn int_max(data_type: DataType) -> i128 {
    match data_type {
        DataType::Int64 => i128::from(i64::MAX),
        DataType::Int32 => i128::from(i32::MAX),
        DataType::Int16 => i128::from(i16::MAX),
        DataType::Int8 => i128::from(i8::MAX),
        DataType::Uint64 => i128::from(u64::MAX),
        DataType::Uint32 => i128::from(u32::MAX),
        DataType::Uint16 => i128::from(u16::MAX),
        DataType::Uint8 => i128::from(u8::MAX),
        other => panic!("{other} is not an integer type"),
    }
}

/// The largest value of any type, as a [`Value`].
pub fn type_max(data_type: DataType) -> Value {
    if data_type.is_float() {
        Value::Bits(float_specials(data_type).max)
    } else {
        Value::Int(int_max(data_type))
    }
}

/// The smallest (most negative) finite value of any type, as a [`Value`].
pub fn type_lowest(data_type: DataType) -> Value {
    if data_type.is_float() {
        Value::Bits(float_specials(data_type).lowest)
    } else {
        Value::Int(int_min(data_type))
    }
}

/// A float element's value (exact: every FLOAT16 and FLOAT32 value is a binary64 value).
pub fn float_value(data_type: DataType, bits: u64) -> f64 {
    match data_type {
        DataType::Float64 => f64::from_bits(bits),
        DataType::Float32 => f64::from(f32::from_bits(bits as u32)),
        DataType::Float16 => f16::from_bits(bits as u16).to_f64(),
        other => panic!("{other} is not a float type"),
    }
}

/// An integer element's value, sign-extended for signed types.
pub fn int_value(data_type: DataType, bits: u64) -> i128 {
    match data_type {
        DataType::Int64 => i128::from(bits as i64),
        DataType::Int32 => i128::from(bits as u32 as i32),
        DataType::Int16 => i128::from(bits as u16 as i16),
        DataType::Int8 => i128::from(bits as u8 as i8),
        DataType::Uint64 | DataType::Uint32 | DataType::Uint16 | DataType::Uint8 => {
            i128::from(bits)
        }
        other => panic!("{other} is not an integer type"),
    }
}

/// The case-file element that writes `bits` of `data_type` back exactly and most readably:
/// integers in decimal; floats as integers when integral, as the shortest decimal that
/// round-trips, as `.nan`/`.inf`/`-0.0`, and as `bits:0x…` for NaNs with payloads.
pub fn element_of(data_type: DataType, bits: u64) -> Element {
    let element = if data_type.is_float() {
        float_element(data_type, bits)
    } else {
        Element::Int(int_value(data_type, bits))
    };
    debug_assert_eq!(bits_of_element(data_type, &element), bits);
    element
}

fn bits_of_element(data_type: DataType, element: &Element) -> u64 {
    let mut bytes = Vec::new();
    element
        .encode(data_type, &mut bytes)
        .expect("an element built for its type encodes");
    bits_from_le(&bytes)
}

fn float_element(data_type: DataType, bits: u64) -> Element {
    let value = float_value(data_type, bits);
    if value.is_nan() {
        return if bits == canonical_nan(data_type) {
            Element::Float(f64::NAN)
        } else {
            Element::Bits(bits)
        };
    }
    let negative_zero = value == 0.0 && value.is_sign_negative();
    if value.fract() == 0.0 && value.abs() < 9.0e15 && !negative_zero {
        return Element::Int(value as i128);
    }
    // The shortest decimal that reads back as this value of the element type.
    let shortest: f64 = match data_type {
        DataType::Float32 => f32::from_bits(bits as u32)
            .to_string()
            .parse()
            .expect("a formatted f32 parses"),
        _ => value,
    };
    let element = Element::Float(shortest);
    if bits_of_element(data_type, &element) == bits {
        element
    } else {
        Element::Bits(bits)
    }
}

/// A deterministic pseudo-random sequence (splitmix64) for choosing case contents.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A sequence started at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        crate::case::data_generator::splitmix64(&mut self.0)
    }

    /// An integer uniform in `[low, high]` (slightly biased; only used to pick test data).
    pub fn range(&mut self, low: i128, high: i128) -> i128 {
        let span = (high - low + 1) as u128;
        low + (u128::from(self.next_u64()) % span) as i128
    }

    /// An index below `len`.
    pub fn below(&mut self, len: usize) -> usize {
        (self.next_u64() % len as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_write_bits_back_exactly() {
        for data_type in [DataType::Float16, DataType::Float32, DataType::Float64] {
            let s = float_specials(data_type);
            for bits in [
                s.inf,
                s.neg_inf,
                s.neg_zero,
                s.max,
                s.lowest,
                s.min_normal,
                s.min_subnormal,
                s.max_subnormal,
                s.neg_min_subnormal,
                s.nan_payload,
                s.negative_nan,
                s.signalling_nan,
                canonical_nan(data_type),
            ] {
                assert_eq!(
                    bits_of_element(data_type, &element_of(data_type, bits)),
                    bits
                );
            }
        }
        assert_eq!(
            element_of(DataType::Float32, 0x3dcc_cccd),
            Element::Float(0.1)
        );
        assert_eq!(element_of(DataType::Float32, 0x4040_0000), Element::Int(3));
        assert_eq!(
            element_of(DataType::Float32, 0x7fc1_2345),
            Element::Bits(0x7fc1_2345)
        );
        assert_eq!(element_of(DataType::Int8, 0x80), Element::Int(-128));
        assert_eq!(
            element_of(DataType::Uint64, u64::MAX),
            Element::Int(i128::from(u64::MAX))
        );
    }

    #[test]
    fn values_encode_in_their_types() {
        assert_eq!(bits_of(DataType::Int8, Value::Int(-1)), 0xff);
        assert_eq!(bits_of(DataType::Float16, Value::Int(1)), 0x3c00);
        assert_eq!(bits_of(DataType::Float32, Value::Float(-0.0)), 0x8000_0000);
        assert_eq!(int_value(DataType::Int32, 0xffff_ffff), -1);
        assert_eq!(int_value(DataType::Uint32, 0xffff_ffff), 4_294_967_295);
    }
}
