//! Vulkan-compute backend (being written).
