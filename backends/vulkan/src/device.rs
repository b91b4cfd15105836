//! Which Vulkan device runs the kernels: loading the loader, creating the instance, choosing a
//! physical device (see [`DEVICE_ENV`]) and creating the logical device with one compute queue.

use crate::Unavailable;
use ash::vk;
use std::ffi::{c_char, CStr};

/// Environment variable that picks the device: a number is an index into the loader's device
/// list, anything else a case-insensitive substring of the device name. Unset or empty: the
/// first discrete GPU, else integrated GPU, else virtual GPU, else CPU device.
pub const DEVICE_ENV: &str = "OPCONFORM_VULKAN_DEVICE";

/// The device limits the kernels depend on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// `maxStorageBufferRange`: the largest buffer a storage-buffer descriptor may cover.
    pub max_storage_buffer_range: u64,
    /// `maxComputeWorkGroupCount[0]`: the most workgroups one dispatch may have along x.
    pub max_group_count_x: u32,
}

/// An open Vulkan device with one compute queue. Dropping it destroys the device and instance.
pub(crate) struct Gpu {
    /// The logical device.
    pub device: ash::Device,
    /// The compute queue (externally synchronised: used under the backend's mutex only).
    pub queue: vk::Queue,
    /// The queue's family index.
    pub queue_family: u32,
    /// Memory heaps and types of the physical device.
    pub memory: vk::PhysicalDeviceMemoryProperties,
    /// Limits the kernels depend on.
    pub limits: Limits,
    /// Device and driver, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) / Mesa 22.3.6 (LLVM 15.0.6)`.
    pub description: String,
    instance: ash::Instance,
    // Keeps libvulkan loaded while the instance and device live; dropped last.
    _entry: ash::Entry,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: every object created from the device was destroyed by its owner before (the
        // executor is dropped first), and nothing else uses these handles.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// What the loader says about one physical device.
struct Candidate {
    handle: vk::PhysicalDevice,
    index: usize,
    name: String,
    kind: vk::PhysicalDeviceType,
    api_version: u32,
    compute_family: Option<u32>,
}

impl Candidate {
    /// Preference when no device is named: discrete, integrated, virtual, CPU, other.
    fn rank(&self) -> u32 {
        match self.kind {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            vk::PhysicalDeviceType::CPU => 3,
            _ => 4,
        }
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            vk::PhysicalDeviceType::DISCRETE_GPU => "discrete GPU",
            vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated GPU",
            vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual GPU",
            vk::PhysicalDeviceType::CPU => "CPU",
            _ => "other",
        }
    }
}

fn unavailable(reason: impl Into<String>) -> Unavailable {
    Unavailable {
        reason: reason.into(),
    }
}

fn c_text(bytes: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    bytes
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Gpu {
    /// Loads libvulkan, creates an instance and opens the chosen device.
    pub fn open() -> Result<Gpu, Unavailable> {
        // SAFETY: loading the system's Vulkan loader runs its initialisers; that is the
        // documented way to use it, and a missing library is an error, not a crash.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| {
            unavailable(format!(
                "cannot load the Vulkan loader ({e}); install libvulkan1 and a driver such as \
                 mesa-vulkan-drivers"
            ))
        })?;
        // SAFETY: plain queries and object creation on a loaded entry; every pointer passed
        // lives across the call.
        unsafe {
            let loader_version = entry
                .try_enumerate_instance_version()
                .ok()
                .flatten()
                .unwrap_or(vk::API_VERSION_1_0);
            let api_version = if loader_version >= vk::API_VERSION_1_1 {
                vk::API_VERSION_1_1
            } else {
                vk::API_VERSION_1_0
            };
            let app_name = c"opconform";
            let app_info = vk::ApplicationInfo::default()
                .application_name(app_name)
                .application_version(1)
                .engine_name(app_name)
                .engine_version(1)
                .api_version(api_version);
            let available = entry
                .enumerate_instance_extension_properties(None)
                .unwrap_or_default();
            let portability = available.iter().any(|e| {
                e.extension_name_as_c_str().ok() == Some(ash::khr::portability_enumeration::NAME)
            });
            let mut extensions: Vec<*const c_char> = Vec::new();
            let mut flags = vk::InstanceCreateFlags::empty();
            if portability {
                extensions.push(ash::khr::portability_enumeration::NAME.as_ptr());
                flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
            }
            let create_info = vk::InstanceCreateInfo::default()
                .application_info(&app_info)
                .enabled_extension_names(&extensions)
                .flags(flags);
            let instance = entry.create_instance(&create_info, None).map_err(|e| {
                unavailable(format!(
                    "the Vulkan loader found no usable driver (vkCreateInstance: {e}); install \
                     one, e.g. mesa-vulkan-drivers for the lavapipe CPU driver"
                ))
            })?;
            match Gpu::open_device(&instance, api_version) {
                Ok((device, queue, queue_family, memory, limits, description)) => Ok(Gpu {
                    device,
                    queue,
                    queue_family,
                    memory,
                    limits,
                    description,
                    instance,
                    _entry: entry,
                }),
                Err(reason) => {
                    instance.destroy_instance(None);
                    Err(reason)
                }
            }
        }
    }

    /// Chooses a physical device and creates the logical device on it.
    #[allow(clippy::type_complexity)]
    unsafe fn open_device(
        instance: &ash::Instance,
        instance_version: u32,
    ) -> Result<
        (
            ash::Device,
            vk::Queue,
            u32,
            vk::PhysicalDeviceMemoryProperties,
            Limits,
            String,
        ),
        Unavailable,
    > {
        let handles = instance
            .enumerate_physical_devices()
            .map_err(|e| unavailable(format!("vkEnumeratePhysicalDevices failed: {e}")))?;
        if handles.is_empty() {
            return Err(unavailable(
                "no Vulkan device found; install a driver, e.g. mesa-vulkan-drivers (lavapipe)",
            ));
        }
        let candidates: Vec<Candidate> = handles
            .iter()
            .enumerate()
            .map(|(index, &handle)| {
                let props = instance.get_physical_device_properties(handle);
                let compute_family = instance
                    .get_physical_device_queue_family_properties(handle)
                    .iter()
                    .position(|f| {
                        f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count > 0
                    })
                    .map(|i| i as u32);
                Candidate {
                    handle,
                    index,
                    name: c_text(props.device_name_as_c_str()),
                    kind: props.device_type,
                    api_version: props.api_version,
                    compute_family,
                }
            })
            .collect();
        let chosen = choose(&candidates, std::env::var(DEVICE_ENV).ok().as_deref())?;
        let family = chosen.compute_family.ok_or_else(|| {
            unavailable(format!(
                "device {} ({}) has no compute queue",
                chosen.index, chosen.name
            ))
        })?;
        let props = instance.get_physical_device_properties(chosen.handle);
        let limits = Limits {
            max_storage_buffer_range: u64::from(props.limits.max_storage_buffer_range),
            max_group_count_x: props.limits.max_compute_work_group_count[0],
        };
        let description = describe(instance, instance_version, chosen);
        let memory = instance.get_physical_device_memory_properties(chosen.handle);

        let device_extensions = instance
            .enumerate_device_extension_properties(chosen.handle)
            .unwrap_or_default();
        let mut extensions: Vec<*const c_char> = Vec::new();
        // A portability (non-conformant) implementation requires this extension enabled.
        let subset = c"VK_KHR_portability_subset";
        if device_extensions
            .iter()
            .any(|e| e.extension_name_as_c_str().ok() == Some(subset))
        {
            extensions.push(subset.as_ptr());
        }
        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let create_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_extension_names(&extensions);
        let device = instance
            .create_device(chosen.handle, &create_info, None)
            .map_err(|e| {
                unavailable(format!(
                    "vkCreateDevice failed on device {} ({}): {e}",
                    chosen.index, chosen.name
                ))
            })?;
        let queue = device.get_device_queue(family, 0);
        Ok((device, queue, family, memory, limits, description))
    }
}

/// Applies [`DEVICE_ENV`] (`wanted`) or the type preference to the loader's devices.
fn choose<'a>(
    candidates: &'a [Candidate],
    wanted: Option<&str>,
) -> Result<&'a Candidate, Unavailable> {
    let list = || {
        candidates
            .iter()
            .map(|c| format!("{}: {} ({})", c.index, c.name, c.kind_name()))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match wanted.map(str::trim).filter(|w| !w.is_empty()) {
        Some(wanted) => {
            let found = match wanted.parse::<usize>() {
                Ok(index) => candidates.get(index),
                Err(_) => {
                    let needle = wanted.to_lowercase();
                    candidates
                        .iter()
                        .find(|c| c.name.to_lowercase().contains(&needle))
                }
            };
            found.ok_or_else(|| {
                unavailable(format!(
                    "{DEVICE_ENV}={wanted} matches no Vulkan device; devices: {}",
                    list()
                ))
            })
        }
        None => candidates
            .iter()
            .filter(|c| c.compute_family.is_some())
            .min_by_key(|c| (c.rank(), c.index))
            .ok_or_else(|| {
                unavailable(format!(
                    "no Vulkan device has a compute queue; devices: {}",
                    list()
                ))
            }),
    }
}

/// `name / driver info`, from VkPhysicalDeviceDriverProperties where the device has it.
unsafe fn describe(instance: &ash::Instance, instance_version: u32, chosen: &Candidate) -> String {
    if instance_version >= vk::API_VERSION_1_1 && chosen.api_version >= vk::API_VERSION_1_2 {
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
        instance.get_physical_device_properties2(chosen.handle, &mut props2);
        let info = c_text(driver.driver_info_as_c_str());
        let name = c_text(driver.driver_name_as_c_str());
        // Mesa's info names the release ("Mesa 22.3.6 (LLVM 15.0.6)"); NVIDIA's is a bare
        // version number, which reads better after the driver's name.
        let driver_text = if info.is_empty() {
            name
        } else if info.starts_with(|c: char| c.is_ascii_digit()) && !name.is_empty() {
            format!("{name} {info}")
        } else {
            info
        };
        if !driver_text.is_empty() {
            return format!("{} / {driver_text}", chosen.name);
        }
    }
    let props = instance.get_physical_device_properties(chosen.handle);
    let v = props.driver_version;
    format!(
        "{} / driver version {}.{}.{} (Vulkan {}.{})",
        chosen.name,
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v),
        vk::api_version_major(chosen.api_version),
        vk::api_version_minor(chosen.api_version)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(index: usize, name: &str, kind: vk::PhysicalDeviceType) -> Candidate {
        Candidate {
            handle: vk::PhysicalDevice::null(),
            index,
            name: name.to_string(),
            kind,
            api_version: vk::API_VERSION_1_3,
            compute_family: Some(0),
        }
    }

    #[test]
    fn prefers_discrete_then_integrated_then_virtual_then_cpu() {
        let list = [
            candidate(0, "llvmpipe", vk::PhysicalDeviceType::CPU),
            candidate(1, "virtio", vk::PhysicalDeviceType::VIRTUAL_GPU),
            candidate(2, "Intel UHD", vk::PhysicalDeviceType::INTEGRATED_GPU),
            candidate(3, "NVIDIA H100", vk::PhysicalDeviceType::DISCRETE_GPU),
        ];
        assert_eq!(choose(&list, None).unwrap().index, 3);
        assert_eq!(choose(&list[..3], None).unwrap().index, 2);
        assert_eq!(choose(&list[..2], None).unwrap().index, 1);
        assert_eq!(choose(&list[..1], None).unwrap().index, 0);
    }

    #[test]
    fn the_environment_picks_by_index_or_name() {
        let list = [
            candidate(0, "llvmpipe (LLVM 15)", vk::PhysicalDeviceType::CPU),
            candidate(1, "NVIDIA H100", vk::PhysicalDeviceType::DISCRETE_GPU),
        ];
        assert_eq!(choose(&list, Some("0")).unwrap().index, 0);
        assert_eq!(choose(&list, Some("LLVMPIPE")).unwrap().index, 0);
        assert_eq!(choose(&list, Some("h100")).unwrap().index, 1);
        assert_eq!(choose(&list, Some("")).unwrap().index, 1);
        let missing = choose(&list, Some("radeon")).err().unwrap();
        assert!(
            missing.reason.contains("matches no Vulkan device"),
            "{missing}"
        );
        assert!(choose(&list, Some("7")).is_err());
    }
}
