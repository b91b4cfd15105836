//! Buffer tensors: a description mirroring `DML_BUFFER_TENSOR_DESC` plus little-endian bytes.

use crate::DataType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Describes a tensor in a buffer, as `DML_BUFFER_TENSOR_DESC` does.
///
/// `sizes` may be empty only for OpenVINO 0-D tensors; DirectML tensors have 1 to 8 sizes.
/// `strides`, when present, are counted in elements; absent strides mean packed row-major.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorDesc {
    /// Element type.
    pub data_type: DataType,
    /// Size of each dimension, outermost first.
    pub sizes: Vec<u32>,
    /// Distance in elements between neighbours along each dimension; `None` means packed.
    pub strides: Option<Vec<u32>>,
    /// Size of the backing buffer in bytes (`TotalTensorSizeInBytes`).
    pub total_tensor_size_in_bytes: u64,
}

/// Why a tensor description or buffer cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorError {
    /// `strides` does not have one entry per dimension.
    StrideCountMismatch {
        /// Number of sizes.
        sizes: usize,
        /// Number of strides.
        strides: usize,
    },
    /// The buffer would not fit in this process's address space.
    TooLarge {
        /// Bytes the buffer would need.
        bytes: u64,
    },
    /// The byte buffer's length does not equal `total_tensor_size_in_bytes`.
    BufferLength {
        /// Expected length.
        expected: u64,
        /// Actual length.
        found: u64,
    },
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::StrideCountMismatch { sizes, strides } => {
                write!(f, "{strides} strides given for {sizes} sizes")
            }
            TensorError::TooLarge { bytes } => {
                write!(f, "a buffer of {bytes} bytes is too large to allocate here")
            }
            TensorError::BufferLength { expected, found } => {
                write!(
                    f,
                    "buffer holds {found} bytes, the description needs {expected}"
                )
            }
        }
    }
}

impl std::error::Error for TensorError {}

/// The minimum `TotalTensorSizeInBytes`, computed as DirectMLX's `DMLCalcBufferTensorSize`
/// does but in 64 bits: index of the last element plus one (or the element count when packed),
/// times the element size, rounded up to a multiple of 4 bytes.
///
/// Returns `None` when `strides` has the wrong length or the size overflows `u64`.
pub fn min_buffer_size_bytes(
    data_type: DataType,
    sizes: &[u32],
    strides: Option<&[u32]>,
) -> Option<u64> {
    let element_bytes = data_type.size_in_bytes() as u64;
    let index_span: u64 = match strides {
        None => sizes
            .iter()
            .try_fold(1u64, |acc, &s| acc.checked_mul(u64::from(s)))?,
        Some(strides) => {
            if strides.len() != sizes.len() {
                return None;
            }
            if sizes.contains(&0) {
                0
            } else {
                let last = sizes.iter().zip(strides).try_fold(0u64, |acc, (&s, &st)| {
                    acc.checked_add(u64::from(s - 1).checked_mul(u64::from(st))?)
                })?;
                last.checked_add(1)?
            }
        }
    };
    let bytes = index_span.checked_mul(element_bytes)?;
    bytes.checked_add(3).map(|b| b & !3)
}

impl TensorDesc {
    /// A packed (stride-less) description with the minimum buffer size.
    ///
    /// # Panics
    /// If the buffer size overflows `u64` (sizes are `u32`, at most 8 of them cannot do that
    /// for the counts a caller can allocate; use [`TensorDesc::with_strides`] for checked use).
    pub fn packed(data_type: DataType, sizes: &[u32]) -> TensorDesc {
        TensorDesc::with_strides(data_type, sizes, None).expect("buffer size fits in u64")
    }

    /// A description with optional strides and the minimum buffer size, or `None` when the
    /// strides have the wrong length or the size overflows.
    pub fn with_strides(
        data_type: DataType,
        sizes: &[u32],
        strides: Option<&[u32]>,
    ) -> Option<TensorDesc> {
        let total = min_buffer_size_bytes(data_type, sizes, strides)?;
        Some(TensorDesc {
            data_type,
            sizes: sizes.to_vec(),
            strides: strides.map(<[u32]>::to_vec),
            total_tensor_size_in_bytes: total,
        })
    }

    /// Number of dimensions (`DimensionCount`).
    pub fn dimension_count(&self) -> usize {
        self.sizes.len()
    }

    /// Product of the sizes, in 64 bits (1 for a 0-D tensor).
    pub fn element_count(&self) -> u64 {
        self.sizes.iter().map(|&s| u64::from(s)).product()
    }

    /// The strides in elements, packed row-major ones when none are given.
    ///
    /// Packed strides that overflow `u64` saturate; such a tensor cannot be allocated anyway.
    pub fn effective_strides(&self) -> Vec<u64> {
        match &self.strides {
            Some(strides) => strides.iter().map(|&s| u64::from(s)).collect(),
            None => {
                let mut strides = vec![1u64; self.sizes.len()];
                for i in (0..self.sizes.len().saturating_sub(1)).rev() {
                    strides[i] = strides[i + 1].saturating_mul(u64::from(self.sizes[i + 1]));
                }
                strides
            }
        }
    }

    /// Buffer offset in elements of the element at `coordinates` (one per dimension).
    pub fn element_offset(&self, coordinates: &[u64]) -> u64 {
        coordinates
            .iter()
            .zip(self.effective_strides())
            .map(|(c, s)| c * s)
            .sum()
    }

    /// The minimum buffer size for this description (see [`min_buffer_size_bytes`]).
    pub fn min_size_in_bytes(&self) -> Option<u64> {
        min_buffer_size_bytes(self.data_type, &self.sizes, self.strides.as_deref())
    }

    /// The number of elements the buffer holds: `total_tensor_size_in_bytes / element size`.
    pub fn buffer_element_count(&self) -> u64 {
        self.total_tensor_size_in_bytes / self.data_type.size_in_bytes() as u64
    }

    /// Short text form, e.g. `FLOAT32{1,1,3,4}` or `UINT8{2,3} strides {4,1}`.
    pub fn summary(&self) -> String {
        let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        match &self.strides {
            None => format!("{}{{{}}}", self.data_type, join(&self.sizes)),
            Some(strides) => format!(
                "{}{{{}}} strides {{{}}}",
                self.data_type,
                join(&self.sizes),
                join(strides)
            ),
        }
    }
}

/// A tensor: its description and its buffer of `total_tensor_size_in_bytes` little-endian bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// What the buffer holds and how it is laid out.
    pub desc: TensorDesc,
    /// The buffer, little-endian, `desc.total_tensor_size_in_bytes` long.
    pub data: Vec<u8>,
}

impl Tensor {
    /// A tensor whose buffer is filled with `fill` bytes, or an error when it cannot be
    /// allocated (callers use this to poison outputs before a run).
    pub fn filled(desc: TensorDesc, fill: u8) -> Result<Tensor, TensorError> {
        let bytes = desc.total_tensor_size_in_bytes;
        let len = usize::try_from(bytes).map_err(|_| TensorError::TooLarge { bytes })?;
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .map_err(|_| TensorError::TooLarge { bytes })?;
        data.resize(len, fill);
        Ok(Tensor { desc, data })
    }

    /// Wraps bytes, checking their length against the description.
    pub fn from_bytes(desc: TensorDesc, data: Vec<u8>) -> Result<Tensor, TensorError> {
        if data.len() as u64 != desc.total_tensor_size_in_bytes {
            return Err(TensorError::BufferLength {
                expected: desc.total_tensor_size_in_bytes,
                found: data.len() as u64,
            });
        }
        Ok(Tensor { desc, data })
    }

    /// The bytes of the element at buffer offset `offset` (in elements), if in bounds.
    pub fn element_bytes(&self, offset: u64) -> Option<&[u8]> {
        let size = self.desc.data_type.size_in_bytes();
        let start = usize::try_from(offset).ok()?.checked_mul(size)?;
        self.data.get(start..start.checked_add(size)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_size_matches_the_dml_examples() {
        // Examples from the DML_BUFFER_TENSOR_DESC rules.
        assert_eq!(
            min_buffer_size_bytes(DataType::Float16, &[1, 1, 1, 3], None),
            Some(8)
        );
        assert_eq!(
            min_buffer_size_bytes(DataType::Float32, &[4, 3], Some(&[0, 1])),
            Some(12)
        );
        assert_eq!(
            min_buffer_size_bytes(DataType::Uint8, &[2, 3], Some(&[4, 1])),
            Some(8)
        );
    }

    #[test]
    fn min_size_is_computed_in_64_bits() {
        let size = min_buffer_size_bytes(DataType::Float64, &[65536, 65536], None);
        assert_eq!(size, Some(65536u64 * 65536 * 8));
        assert_eq!(
            min_buffer_size_bytes(DataType::Float32, &[2, 2], Some(&[1])),
            None
        );
    }

    #[test]
    fn offsets_follow_strides() {
        let packed = TensorDesc::packed(DataType::Int32, &[2, 3, 4]);
        assert_eq!(packed.effective_strides(), vec![12, 4, 1]);
        assert_eq!(packed.element_offset(&[1, 2, 3]), 23);
        let broadcast = TensorDesc::with_strides(DataType::Int32, &[2, 3], Some(&[0, 1])).unwrap();
        assert_eq!(broadcast.element_offset(&[1, 2]), 2);
    }

    #[test]
    fn from_bytes_checks_length() {
        let desc = TensorDesc::packed(DataType::Uint8, &[3]);
        assert!(Tensor::from_bytes(desc.clone(), vec![0; 4]).is_ok());
        assert_eq!(
            Tensor::from_bytes(desc, vec![0; 3]),
            Err(TensorError::BufferLength {
                expected: 4,
                found: 3
            })
        );
    }
}
