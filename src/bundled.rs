//! The backends that ship with opconform, opened by name.

use opconform_backend::Backend;

/// Names of the bundled backends, for `--backend`.
pub const BUNDLED: [&str; 2] = ["cpu", "vulkan"];

/// Opens a bundled backend, or says why it is unavailable (unknown name, no Vulkan driver).
pub fn open(name: &str) -> Result<Box<dyn Backend>, String> {
    match name {
        "cpu" => Ok(Box::new(opconform_cpu::CpuBackend::new())),
        "vulkan" => opconform_vulkan::VulkanBackend::new()
            .map(|b| Box::new(b) as Box<dyn Backend>)
            .map_err(|e| format!("the Vulkan backend is unavailable: {e}")),
        other => Err(format!(
            "no bundled backend `{other}`; choose one of {} or use `certify --backend-cmd`",
            BUNDLED.join(", ")
        )),
    }
}
