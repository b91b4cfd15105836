//! Kernel parameters: the words of each shader's `Params` block (std430, `uint` fields and
//! `uint` arrays only), and the tensor layout facts they are made of.

use opconform_backend::{BackendError, Tensor, TensorDesc};

/// The words of a `Params` block, written field by field in the shader's declaration order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Params {
    words: Vec<u32>,
}

impl Params {
    /// An empty block.
    pub fn new() -> Params {
        Params::default()
    }

    /// Appends one `uint` field.
    pub fn word(&mut self, value: u32) -> &mut Params {
        self.words.push(value);
        self
    }

    /// Appends a `uint name[len]` field: `values`, then zeros up to `len`.
    ///
    /// # Panics
    /// If `values` is longer than `len` (callers check ranks first).
    pub fn array(&mut self, values: &[u32], len: usize) -> &mut Params {
        assert!(
            values.len() <= len,
            "{} values for uint[{len}]",
            values.len()
        );
        self.words.extend_from_slice(values);
        self.words.resize(self.words.len() + len - values.len(), 0);
        self
    }

    /// The words.
    pub fn words(&self) -> &[u32] {
        &self.words
    }
}

/// A tensor's strides in elements as the kernels take them (32-bit).
///
/// Every offset a kernel forms is below its buffer's size, which is at most
/// `maxStorageBufferRange` (a `u32`), so 32-bit arithmetic cannot wrap for the tensors the
/// kernels accept; a stride that itself does not fit is [`BackendError::Unsupported`].
pub(crate) fn strides32(desc: &TensorDesc, what: &str) -> Result<Vec<u32>, BackendError> {
    desc.effective_strides()
        .into_iter()
        .map(|s| {
            u32::try_from(s).map_err(|_| BackendError::Unsupported {
                reason: format!("{what} has a stride of {s} elements, beyond 32 bits"),
            })
        })
        .collect()
}

/// A tensor's element count as a `u32` (the validator holds DirectML tensors below 2^32).
pub(crate) fn count32(desc: &TensorDesc, what: &str) -> Result<u32, BackendError> {
    u32::try_from(desc.element_count()).map_err(|_| BackendError::Unsupported {
        reason: format!(
            "{what} has {} elements; the kernels index elements with 32 bits",
            desc.element_count()
        ),
    })
}

/// The raw bits of the element at `coordinates` as (low word, high word), zero-extended.
pub(crate) fn element_bits(
    tensor: &Tensor,
    coordinates: &[u64],
    what: &str,
) -> Result<(u32, u32), BackendError> {
    let offset = tensor.desc.element_offset(coordinates);
    let bytes = tensor
        .element_bytes(offset)
        .ok_or_else(|| BackendError::Internal {
            message: format!("{what}: element offset {offset} lies outside its buffer"),
        })?;
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    let value = u64::from_le_bytes(raw);
    Ok((value as u32, (value >> 32) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::DataType;

    #[test]
    fn arrays_are_zero_padded() {
        let mut p = Params::new();
        p.word(7).array(&[1, 2], 4).word(9);
        assert_eq!(p.words(), [7, 1, 2, 0, 0, 9]);
    }

    #[test]
    fn element_bits_follow_strides_and_width() {
        let desc = TensorDesc::with_strides(DataType::Int16, &[2, 2], Some(&[1, 0])).unwrap();
        let tensor = Tensor::from_bytes(desc, vec![0x34, 0x12, 0xff, 0xff]).unwrap();
        assert_eq!(element_bits(&tensor, &[0, 1], "t").unwrap(), (0x1234, 0));
        assert_eq!(element_bits(&tensor, &[1, 0], "t").unwrap(), (0xffff, 0));
        let wide = Tensor::from_bytes(
            TensorDesc::packed(DataType::Uint64, &[1]),
            0x1122_3344_5566_7788u64.to_le_bytes().to_vec(),
        )
        .unwrap();
        assert_eq!(
            element_bits(&wide, &[0], "t").unwrap(),
            (0x5566_7788, 0x1122_3344)
        );
    }
}
