//! Storage buffers in host-visible, host-coherent memory, mapped for their whole life, and the
//! moves of tensor bytes into and out of them.

use crate::device::Gpu;
use ash::vk;
use opconform_backend::{BackendError, Tensor, TensorDesc};

/// A storage buffer with its own memory, mapped for the host. Dropping it frees both.
pub(crate) struct Buffer {
    device: ash::Device,
    /// The buffer handle, for descriptors.
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// Size in bytes (a multiple of 4, at least 4).
    pub size: u64,
    mapped: *mut u8,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the buffer is owned here; the executor waits for the GPU before any buffer of
        // a run is dropped, so nothing uses it any more. Freeing memory also unmaps it.
        unsafe {
            self.device.destroy_buffer(self.buffer, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

/// An allocation failure is a resource limit of the device, not a wrong answer.
pub(crate) fn vk_error(what: &str, result: vk::Result) -> BackendError {
    match result {
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
            BackendError::Unsupported {
                reason: format!("{what}: the device is out of memory ({result})"),
            }
        }
        _ => BackendError::Internal {
            message: format!("{what}: {result}"),
        },
    }
}

/// The index of a memory type allowed by `type_bits` with all of `flags`.
fn memory_type(gpu: &Gpu, type_bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
    (0..gpu.memory.memory_type_count).find(|&i| {
        type_bits & (1 << i) != 0
            && gpu.memory.memory_types[i as usize]
                .property_flags
                .contains(flags)
    })
}

impl Buffer {
    /// A buffer of at least `bytes` bytes (rounded up to 4; 4 for an empty one) for `what`.
    ///
    /// A buffer larger than the device's `maxStorageBufferRange` is
    /// [`BackendError::Unsupported`]: one descriptor could not cover it.
    pub fn new(gpu: &Gpu, bytes: u64, what: &str) -> Result<Buffer, BackendError> {
        let size = bytes.max(4).div_ceil(4) * 4;
        if size > gpu.limits.max_storage_buffer_range {
            return Err(BackendError::Unsupported {
                reason: format!(
                    "{what} needs a storage buffer of {size} bytes; this device's \
                     maxStorageBufferRange is {} bytes",
                    gpu.limits.max_storage_buffer_range
                ),
            });
        }
        let device = &gpu.device;
        // SAFETY: creation and binding of objects on a live device; every object is destroyed
        // on the error paths below or by Drop.
        unsafe {
            let info = vk::BufferCreateInfo::default()
                .size(size)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .sharing_mode(vk::SharingMode::EXCLUSIVE);
            let buffer = device
                .create_buffer(&info, None)
                .map_err(|e| vk_error(&format!("creating the buffer for {what}"), e))?;
            let requirements = device.get_buffer_memory_requirements(buffer);
            let host =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let preferred = [
                host | vk::MemoryPropertyFlags::DEVICE_LOCAL,
                host | vk::MemoryPropertyFlags::HOST_CACHED,
                host,
            ];
            let mut last_error = vk::Result::ERROR_OUT_OF_DEVICE_MEMORY;
            let mut memory = None;
            for flags in preferred {
                let Some(type_index) = memory_type(gpu, requirements.memory_type_bits, flags)
                else {
                    continue;
                };
                let allocate = vk::MemoryAllocateInfo::default()
                    .allocation_size(requirements.size)
                    .memory_type_index(type_index);
                match device.allocate_memory(&allocate, None) {
                    Ok(m) => {
                        memory = Some(m);
                        break;
                    }
                    Err(e) => last_error = e,
                }
            }
            let Some(memory) = memory else {
                device.destroy_buffer(buffer, None);
                return Err(vk_error(
                    &format!("allocating {size} bytes of host-visible memory for {what}"),
                    last_error,
                ));
            };
            let mapped = device.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            });
            match mapped {
                Ok(pointer) => Ok(Buffer {
                    device: device.clone(),
                    buffer,
                    memory,
                    size,
                    mapped: pointer.cast(),
                }),
                Err(e) => {
                    device.destroy_buffer(buffer, None);
                    device.free_memory(memory, None);
                    Err(vk_error(&format!("mapping the buffer for {what}"), e))
                }
            }
        }
    }

    /// A buffer holding `words` (kernel parameters, zero-initialised scratch).
    pub fn from_words(gpu: &Gpu, words: &[u32], what: &str) -> Result<Buffer, BackendError> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut buffer = Buffer::new(gpu, bytes.len() as u64, what)?;
        buffer.write(&bytes);
        Ok(buffer)
    }

    /// Copies `bytes` to the start of the buffer (as much as fits).
    pub fn write(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.size as usize);
        // SAFETY: `mapped` points to `size` mapped, host-coherent bytes owned by this buffer,
        // and the GPU does not use the buffer while the host writes it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.mapped, n) };
    }

    /// Copies the start of the buffer into `bytes` (as much as fits).
    pub fn read(&self, bytes: &mut [u8]) {
        let n = bytes.len().min(self.size as usize);
        // SAFETY: as in `write`; the executor waited for the GPU and made its writes visible
        // to the host before any read.
        unsafe { std::ptr::copy_nonoverlapping(self.mapped, bytes.as_mut_ptr(), n) };
    }
}

/// The bytes a kernel may touch in a tensor's buffer: the minimum size of its description.
pub(crate) fn tensor_bytes(desc: &TensorDesc) -> u64 {
    desc.min_size_in_bytes()
        .unwrap_or(desc.total_tensor_size_in_bytes)
}

/// A buffer holding the tensor's bytes. Outputs are uploaded too, so the bytes a kernel does
/// not write (padding between strided elements, rows past a count) come back unchanged.
pub(crate) fn upload(gpu: &Gpu, tensor: &Tensor, what: &str) -> Result<Buffer, BackendError> {
    let mut buffer = Buffer::new(gpu, tensor_bytes(&tensor.desc), what)?;
    buffer.write(&tensor.data);
    Ok(buffer)
}

/// Copies a buffer back into the tensor it was uploaded from.
pub(crate) fn download(buffer: &Buffer, tensor: &mut Tensor) {
    buffer.read(&mut tensor.data);
}
