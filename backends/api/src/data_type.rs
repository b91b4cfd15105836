//! The eleven DirectML tensor data types.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A tensor element type, named as in `DML_TENSOR_DATA_TYPE` without the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum DataType {
    /// IEEE 754 binary64.
    Float64,
    /// IEEE 754 binary32.
    Float32,
    /// IEEE 754 binary16 (via the `half` crate).
    Float16,
    /// Signed 64-bit integer.
    Int64,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 16-bit integer.
    Int16,
    /// Signed 8-bit integer.
    Int8,
    /// Unsigned 64-bit integer.
    Uint64,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Unsigned 16-bit integer.
    Uint16,
    /// Unsigned 8-bit integer.
    Uint8,
}

impl DataType {
    /// Every data type, widest float first, in DirectML's table order.
    pub const ALL: [DataType; 11] = [
        DataType::Float64,
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

    /// Size of one element in bytes.
    pub fn size_in_bytes(self) -> usize {
        match self {
            DataType::Float64 | DataType::Int64 | DataType::Uint64 => 8,
            DataType::Float32 | DataType::Int32 | DataType::Uint32 => 4,
            DataType::Float16 | DataType::Int16 | DataType::Uint16 => 2,
            DataType::Int8 | DataType::Uint8 => 1,
        }
    }

    /// True for the three floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DataType::Float64 | DataType::Float32 | DataType::Float16
        )
    }

    /// True for the signed integer types.
    pub fn is_signed_integer(self) -> bool {
        matches!(
            self,
            DataType::Int64 | DataType::Int32 | DataType::Int16 | DataType::Int8
        )
    }

    /// True for the unsigned integer types.
    pub fn is_unsigned_integer(self) -> bool {
        matches!(
            self,
            DataType::Uint64 | DataType::Uint32 | DataType::Uint16 | DataType::Uint8
        )
    }

    /// The name used in specs, case files and reports, e.g. `FLOAT32`.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Float64 => "FLOAT64",
            DataType::Float32 => "FLOAT32",
            DataType::Float16 => "FLOAT16",
            DataType::Int64 => "INT64",
            DataType::Int32 => "INT32",
            DataType::Int16 => "INT16",
            DataType::Int8 => "INT8",
            DataType::Uint64 => "UINT64",
            DataType::Uint32 => "UINT32",
            DataType::Uint16 => "UINT16",
            DataType::Uint8 => "UINT8",
        }
    }

    /// Parses a name such as `FLOAT32`.
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in DataType::ALL {
            assert_eq!(DataType::from_name(t.name()), Some(t));
        }
        assert_eq!(DataType::from_name("BOOL"), None);
    }

    #[test]
    fn sizes_match_dml() {
        assert_eq!(DataType::Float16.size_in_bytes(), 2);
        assert_eq!(DataType::Uint64.size_in_bytes(), 8);
        assert_eq!(DataType::Int8.size_in_bytes(), 1);
    }
}
