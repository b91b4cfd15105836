//! Reading and showing single elements: bit-exact equality and the text used in diffs.

use half::f16;
use opconform_backend::DataType;

/// How floats are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NanRule {
    /// Any NaN matches any NaN (the default).
    AnyNan,
    /// NaNs must match bit for bit, payload and sign included (cases tagged `bit-exact`).
    BitExact,
}

/// True when two elements of `data_type` match: equal bits, or both NaN for float types under
/// [`NanRule::AnyNan`] (-0.0 and +0.0 always differ).
pub fn elements_match(data_type: DataType, expected: &[u8], actual: &[u8], nans: NanRule) -> bool {
    expected == actual
        || (nans == NanRule::AnyNan
            && data_type.is_float()
            && is_nan(data_type, expected)
            && is_nan(data_type, actual))
}

fn is_nan(data_type: DataType, bytes: &[u8]) -> bool {
    match data_type {
        DataType::Float64 => f64::from_le_bytes(bytes.try_into().expect("8 bytes")).is_nan(),
        DataType::Float32 => f32::from_le_bytes(bytes.try_into().expect("4 bytes")).is_nan(),
        DataType::Float16 => f16::from_le_bytes(bytes.try_into().expect("2 bytes")).is_nan(),
        _ => false,
    }
}

/// An element as text: shortest round-trip decimal for floats (`-0`, `nan`, `inf`, with the
/// bits of a NaN whose payload is not the canonical one), decimal for integers.
pub fn format_element(data_type: DataType, bytes: &[u8]) -> String {
    macro_rules! int {
        ($t:ty) => {
            <$t>::from_le_bytes(bytes.try_into().expect("element width")).to_string()
        };
    }
    match data_type {
        DataType::Float64 => {
            let v = f64::from_le_bytes(bytes.try_into().expect("8 bytes"));
            format_float(v, v.to_bits() as u128, 0x7ff8_0000_0000_0000)
        }
        DataType::Float32 => {
            let v = f32::from_le_bytes(bytes.try_into().expect("4 bytes"));
            format_float(f64::from(v), u128::from(v.to_bits()), 0x7fc0_0000)
        }
        DataType::Float16 => {
            let v = f16::from_le_bytes(bytes.try_into().expect("2 bytes"));
            format_float(v.to_f64(), u128::from(v.to_bits()), 0x7e00)
        }
        DataType::Int64 => int!(i64),
        DataType::Int32 => int!(i32),
        DataType::Int16 => int!(i16),
        DataType::Int8 => int!(i8),
        DataType::Uint64 => int!(u64),
        DataType::Uint32 => int!(u32),
        DataType::Uint16 => int!(u16),
        DataType::Uint8 => int!(u8),
    }
}

fn format_float(value: f64, bits: u128, canonical_nan: u128) -> String {
    if value.is_nan() {
        if bits == canonical_nan {
            "nan".to_string()
        } else {
            format!("nan(0x{bits:x})")
        }
    } else if value == 0.0 && value.is_sign_negative() {
        "-0".to_string()
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_zeros_differ_and_nans_match() {
        let t = DataType::Float32;
        let any = NanRule::AnyNan;
        let zeros = (0.0f32.to_le_bytes(), (-0.0f32).to_le_bytes());
        assert!(!elements_match(t, &zeros.0, &zeros.1, any));
        let payload = 0x7fc0_0001u32.to_le_bytes();
        assert!(elements_match(t, &f32::NAN.to_le_bytes(), &payload, any));
        assert!(!elements_match(
            t,
            &f32::NAN.to_le_bytes(),
            &payload,
            NanRule::BitExact
        ));
        assert!(!elements_match(
            DataType::Uint32,
            &[1, 0, 0, 0],
            &[2, 0, 0, 0],
            any
        ));
    }

    #[test]
    fn formats_specials() {
        assert_eq!(
            format_element(DataType::Float32, &(-0.0f32).to_le_bytes()),
            "-0"
        );
        assert_eq!(
            format_element(DataType::Float32, &f32::NAN.to_le_bytes()),
            "nan"
        );
        assert_eq!(
            format_element(DataType::Float32, &0x7fc0_0001u32.to_le_bytes()),
            "nan(0x7fc00001)"
        );
        assert_eq!(
            format_element(DataType::Float16, &f16::from_f32(1.5).to_le_bytes()),
            "1.5"
        );
        assert_eq!(
            format_element(DataType::Int64, &i64::MIN.to_le_bytes()),
            i64::MIN.to_string()
        );
    }
}
