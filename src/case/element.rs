//! One element of a tensor's `data` list in a case file, and its encoding as little-endian
//! bytes of a data type.
//!
//! An element is an integer (kept as `i128`, so 64-bit values never pass through `f64`), a
//! decimal number (YAML float, including `.nan`, `.inf`, `-.inf`, `-0.0`), an exact bit pattern
//! written `bits:0x…`, or `null` (an expected output element the spec leaves undefined).

use super::float16::{f16_bits_from_f64, f32_bits_from_f64};
use half::f16;
use opconform_backend::DataType;
use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A scalar as written in a case file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Element {
    /// An integer literal.
    Int(i128),
    /// A decimal or special float literal.
    Float(f64),
    /// An exact bit pattern (`bits:0x7fc00001`).
    Bits(u64),
    /// `null`: undefined by the spec, not compared (expected outputs only).
    Null,
}

impl<'de> Deserialize<'de> for Element {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Element, D::Error> {
        deserializer.deserialize_any(ElementVisitor)
    }
}

struct ElementVisitor;

impl Visitor<'_> for ElementVisitor {
    type Value = Element;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, .nan, .inf, -.inf, a bit pattern `bits:0x…`, or null")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Element, E> {
        Ok(Element::Int(i128::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Element, E> {
        Ok(Element::Int(i128::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Element, E> {
        Ok(Element::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Element, E> {
        i128::try_from(v)
            .map(Element::Int)
            .map_err(|_| E::custom(format!("integer {v} is out of range of every data type")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Element, E> {
        Ok(Element::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Element, E> {
        parse_bits(v).map(Element::Bits).ok_or_else(|| {
            E::custom(format!(
                "`{v}` is not a number; exact bit patterns are written `bits:0x…` (hex)"
            ))
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Element, E> {
        Ok(Element::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Element, E> {
        Ok(Element::Null)
    }
}

fn parse_bits(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("bits:")?.trim();
    let hex = hex.strip_prefix("0x").or_else(|| hex.strip_prefix("0X"))?;
    u64::from_str_radix(&hex.replace('_', ""), 16).ok()
}

impl Serialize for Element {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Element::Int(v) => match i64::try_from(v) {
                Ok(small) => serializer.serialize_i64(small),
                Err(_) => serializer.serialize_u64(v as u64),
            },
            Element::Float(v) => serializer.serialize_f64(v),
            Element::Bits(v) => serializer.collect_str(&format_args!("bits:0x{v:x}")),
            Element::Null => serializer.serialize_unit(),
        }
    }
}

impl JsonSchema for Element {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Element".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number (integers are exact, up to 64 bits), .nan, .inf, -.inf, \
                            an exact bit pattern `bits:0x…`, or null for an expected element \
                            the spec leaves undefined.",
            "anyOf": [
                {"type": "integer"},
                {"type": "number"},
                {"type": "string", "pattern": "^(bits:0[xX][0-9a-fA-F_]+|[-+]?\\.(nan|NaN|NAN|inf|Inf|INF))$"},
                {"type": "null"}
            ]
        })
    }
}

/// Why an element cannot be encoded in a data type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(pub String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Element {
    /// Appends this element's little-endian bytes in `data_type` to `out`.
    ///
    /// Integers must fit the type exactly; decimals are rounded to nearest-even in float types
    /// (read through binary64, rounded once by [`super::float16`]) and refused for integer types
    /// or when they round to infinity; bit patterns must fit the width.
    pub fn encode(&self, data_type: DataType, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match *self {
            Element::Null => Err(EncodeError(
                "null is only allowed in expected outputs".to_string(),
            )),
            Element::Bits(bits) => encode_bits(bits, data_type, out),
            Element::Int(v) => encode_int(v, data_type, out),
            Element::Float(v) => encode_float(v, data_type, out),
        }
    }

    /// The element's bytes in `data_type`, or `None` for `null`.
    pub fn to_bytes(&self, data_type: DataType) -> Result<Option<Vec<u8>>, EncodeError> {
        if *self == Element::Null {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(data_type.size_in_bytes());
        self.encode(data_type, &mut out)?;
        Ok(Some(out))
    }
}

fn encode_bits(bits: u64, data_type: DataType, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let size = data_type.size_in_bytes();
    if size < 8 && bits >> (size * 8) != 0 {
        return Err(EncodeError(format!(
            "bit pattern 0x{bits:x} is wider than {data_type} ({} bits)",
            size * 8
        )));
    }
    out.extend_from_slice(&bits.to_le_bytes()[..size]);
    Ok(())
}

fn encode_int(v: i128, data_type: DataType, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let range_error = || EncodeError(format!("{v} is out of range of {data_type}"));
    macro_rules! int {
        ($t:ty) => {
            out.extend_from_slice(&<$t>::try_from(v).map_err(|_| range_error())?.to_le_bytes())
        };
    }
    match data_type {
        DataType::Int64 => int!(i64),
        DataType::Int32 => int!(i32),
        DataType::Int16 => int!(i16),
        DataType::Int8 => int!(i8),
        DataType::Uint64 => int!(u64),
        DataType::Uint32 => int!(u32),
        DataType::Uint16 => int!(u16),
        DataType::Uint8 => int!(u8),
        DataType::Float64 | DataType::Float32 | DataType::Float16 => {
            return encode_exact_integer_as_float(v, data_type, out)
        }
    }
    Ok(())
}

fn encode_exact_integer_as_float(
    v: i128,
    data_type: DataType,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let inexact = || {
        EncodeError(format!(
            "integer {v} is not exactly representable in {data_type}; write it as a decimal \
             (rounded) or as bits:0x…"
        ))
    };
    let as_f64 = v as f64;
    if as_f64 as i128 != v {
        return Err(inexact());
    }
    // Encoded in place (no buffer per element), taken back when it does not read back exactly.
    let start = out.len();
    encode_float(as_f64, data_type, out)?;
    if decode_float(&out[start..], data_type) != as_f64 {
        out.truncate(start);
        return Err(inexact());
    }
    Ok(())
}

fn encode_float(v: f64, data_type: DataType, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match data_type {
        DataType::Float64 => {
            let bits = if v.is_nan() {
                0x7ff8_0000_0000_0000u64 | (v.to_bits() & (1 << 63))
            } else {
                v.to_bits()
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
        DataType::Float32 => {
            let bits = if v.is_nan() {
                0x7fc0_0000u32 | ((v.to_bits() >> 32) as u32 & 0x8000_0000)
            } else {
                f32_bits_from_f64(v)
            };
            refuse_overflow(v, bits & 0x7fff_ffff == 0x7f80_0000, data_type)?;
            out.extend_from_slice(&bits.to_le_bytes());
        }
        DataType::Float16 => {
            let bits = if v.is_nan() {
                0x7e00u16 | ((v.to_bits() >> 48) as u16 & 0x8000)
            } else {
                f16_bits_from_f64(v)
            };
            refuse_overflow(v, bits & 0x7fff == 0x7c00, data_type)?;
            out.extend_from_slice(&bits.to_le_bytes());
        }
        _ if v.fract() == 0.0 && v.is_finite() => return encode_int(v as i128, data_type, out),
        _ => {
            return Err(EncodeError(format!(
                "{v} is not an integer; {data_type} data must be integers"
            )))
        }
    }
    Ok(())
}

/// Refuses a finite decimal that rounds to infinity in `data_type` (write `.inf` for that).
fn refuse_overflow(
    v: f64,
    rounded_to_infinity: bool,
    data_type: DataType,
) -> Result<(), EncodeError> {
    if v.is_finite() && rounded_to_infinity {
        return Err(EncodeError(format!(
            "{v:e} is out of range of {data_type} (it rounds to infinity; write .inf or -.inf \
             for an infinity)"
        )));
    }
    Ok(())
}

/// Reads a float element's value from little-endian bytes (used to check exactness).
fn decode_float(bytes: &[u8], data_type: DataType) -> f64 {
    match data_type {
        DataType::Float64 => f64::from_le_bytes(bytes.try_into().expect("8 bytes")),
        DataType::Float32 => f64::from(f32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        DataType::Float16 => f16::from_le_bytes(bytes.try_into().expect("2 bytes")).to_f64(),
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Vec<Element> {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn bytes(e: Element, t: DataType) -> Vec<u8> {
        e.to_bytes(t).unwrap().unwrap()
    }

    #[test]
    fn parses_every_literal_form() {
        let elements =
            parse("[1, -2, 18446744073709551615, 1.5, .nan, -.inf, -0.0, bits:0x7e01, null]");
        assert_eq!(elements[0], Element::Int(1));
        assert_eq!(elements[1], Element::Int(-2));
        assert_eq!(elements[2], Element::Int(i128::from(u64::MAX)));
        assert_eq!(elements[3], Element::Float(1.5));
        assert!(matches!(elements[4], Element::Float(v) if v.is_nan()));
        assert_eq!(elements[5], Element::Float(f64::NEG_INFINITY));
        assert!(matches!(elements[6], Element::Float(v) if v == 0.0 && v.is_sign_negative()));
        assert_eq!(elements[7], Element::Bits(0x7e01));
        assert_eq!(elements[8], Element::Null);
    }

    #[test]
    fn sixty_four_bit_integers_stay_exact() {
        let big = parse("[9007199254740993, -9223372036854775808]");
        assert_eq!(
            bytes(big[0], DataType::Int64),
            9007199254740993i64.to_le_bytes()
        );
        assert_eq!(bytes(big[1], DataType::Int64), i64::MIN.to_le_bytes());
        assert!(
            big[0].to_bytes(DataType::Float64).is_err(),
            "2^53+1 is not a double"
        );
    }

    #[test]
    fn floats_encode_bit_exact() {
        assert_eq!(
            bytes(Element::Float(-0.0), DataType::Float32),
            0x8000_0000u32.to_le_bytes()
        );
        assert_eq!(
            bytes(Element::Float(f64::NAN), DataType::Float16),
            0x7e00u16.to_le_bytes()
        );
        assert_eq!(
            bytes(Element::Bits(0x7fc0_0001), DataType::Float32),
            0x7fc0_0001u32.to_le_bytes()
        );
        assert_eq!(
            bytes(Element::Float(-5.2), DataType::Float32),
            (-5.2f32).to_le_bytes()
        );
        assert_eq!(
            bytes(Element::Int(3), DataType::Float16),
            f16::from_f32(3.0).to_le_bytes()
        );
    }

    #[test]
    fn refuses_what_does_not_fit() {
        assert!(Element::Int(256).to_bytes(DataType::Uint8).is_err());
        assert!(Element::Int(-1).to_bytes(DataType::Uint32).is_err());
        assert!(Element::Float(1.5).to_bytes(DataType::Int32).is_err());
        assert!(Element::Bits(0x1_0000).to_bytes(DataType::Float16).is_err());
        assert!(Element::Int(2049).to_bytes(DataType::Float16).is_err());
        assert_eq!(Element::Null.to_bytes(DataType::Int8), Ok(None));
    }

    #[test]
    fn an_inexact_integer_leaves_the_output_as_it_was() {
        let mut out = vec![7u8];
        assert!(Element::Int(2049)
            .encode(DataType::Float16, &mut out)
            .is_err());
        assert!(Element::Int((1 << 53) + 1)
            .encode(DataType::Float64, &mut out)
            .is_err());
        assert_eq!(out, [7]);
        Element::Int(2048)
            .encode(DataType::Float16, &mut out)
            .unwrap();
        assert_eq!(out[1..], f16::from_f32(2048.0).to_le_bytes());
    }

    #[test]
    fn decimals_that_overflow_the_type_are_refused() {
        let error = Element::Float(1e300)
            .to_bytes(DataType::Float32)
            .unwrap_err();
        assert!(error.0.contains("out of range of FLOAT32"), "{error}");
        assert!(Element::Float(-1e39).to_bytes(DataType::Float32).is_err());
        assert!(Element::Float(65520.0).to_bytes(DataType::Float16).is_err());
        assert_eq!(
            bytes(Element::Float(65519.0), DataType::Float16),
            0x7bffu16.to_le_bytes()
        );
        assert_eq!(
            bytes(Element::Float(f64::INFINITY), DataType::Float32),
            f32::INFINITY.to_le_bytes()
        );
        assert_eq!(
            bytes(Element::Float(1e300), DataType::Float64),
            1e300f64.to_le_bytes()
        );
    }

    #[test]
    fn float16_decimals_round_once_to_nearest_even() {
        // `half::f16::from_f64` gives 2048 and 0 for these two.
        let value = parse("[2049.0000000000005, 2.980232238769532e-08]");
        assert_eq!(bytes(value[0], DataType::Float16), 0x6801u16.to_le_bytes());
        assert_eq!(bytes(value[1], DataType::Float16), 0x0001u16.to_le_bytes());
    }
}
