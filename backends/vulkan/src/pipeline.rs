//! Compute pipelines for every [`Kernel`] and the executor that records a run's dispatches into
//! one command buffer, submits it and waits for it.

use crate::buffers::{vk_error, Buffer};
use crate::device::Gpu;
use crate::shaders::Kernel;
use ash::vk;
use opconform_backend::BackendError;

/// Storage-buffer bindings every kernel's descriptor set has (0 is the parameters).
pub(crate) const BINDINGS: usize = 5;

/// Bytes of push constants every kernel's layout has: four `u32`, the first always
/// `base_group` (the index of the dispatch's first workgroup).
const PUSH_BYTES: u32 = 16;

/// One dispatch of a kernel.
#[derive(Clone)]
pub(crate) struct Dispatch<'a> {
    /// The kernel.
    pub kernel: Kernel,
    /// Buffers for bindings 0, 1, …; bindings past the end repeat the first buffer (the
    /// kernels that have fewer bindings never read them).
    pub buffers: Vec<&'a Buffer>,
    /// Workgroups along x (at most the device's `maxComputeWorkGroupCount[0]`).
    pub groups: u32,
    /// The push constants: `base_group` and three kernel-specific words.
    pub push: [u32; 4],
}

impl<'a> Dispatch<'a> {
    /// `groups` workgroups of `kernel` in as many dispatches as the device's
    /// `maxComputeWorkGroupCount[0]` needs, each told its first group in `push[0]`.
    pub fn split(
        kernel: Kernel,
        buffers: &[&'a Buffer],
        groups: u64,
        push: [u32; 3],
        max_groups: u32,
    ) -> Result<Vec<Dispatch<'a>>, BackendError> {
        let groups = u32::try_from(groups).map_err(|_| BackendError::Unsupported {
            reason: format!("{} would need {groups} workgroups", kernel.name()),
        })?;
        let max_groups = max_groups.max(1);
        Ok((0..groups)
            .step_by(max_groups as usize)
            .map(|base| Dispatch {
                kernel,
                buffers: buffers.to_vec(),
                groups: (groups - base).min(max_groups),
                push: [base, push[0], push[1], push[2]],
            })
            .collect())
    }

    /// The buffer bound at each binding.
    fn bound(&self) -> Option<[vk::Buffer; BINDINGS]> {
        let first = self.buffers.first()?;
        Some(std::array::from_fn(|i| {
            self.buffers.get(i).unwrap_or(first).buffer
        }))
    }
}

/// The pipelines, their layouts and the command objects one run needs.
pub(crate) struct Executor {
    device: ash::Device,
    set_layout: vk::DescriptorSetLayout,
    pipeline_layout: vk::PipelineLayout,
    pipelines: Vec<vk::Pipeline>,
    command_pool: vk::CommandPool,
    command_buffer: vk::CommandBuffer,
    fence: vk::Fence,
}

impl Drop for Executor {
    fn drop(&mut self) {
        // SAFETY: the device is idle after the wait; every handle is owned here and valid or
        // null (destroying a null handle is a no-op).
        unsafe {
            let _ = self.device.device_wait_idle();
            for &pipeline in &self.pipelines {
                self.device.destroy_pipeline(pipeline, None);
            }
            self.device
                .destroy_pipeline_layout(self.pipeline_layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_command_pool(self.command_pool, None);
        }
    }
}

fn internal(what: &str, e: impl std::fmt::Display) -> BackendError {
    BackendError::Internal {
        message: format!("{what}: {e}"),
    }
}

impl Executor {
    /// Builds every kernel's pipeline on `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Executor, BackendError> {
        let device = &gpu.device;
        // Null handles until created: Drop tolerates a partly built executor.
        let mut executor = Executor {
            device: device.clone(),
            set_layout: vk::DescriptorSetLayout::null(),
            pipeline_layout: vk::PipelineLayout::null(),
            pipelines: Vec::new(),
            command_pool: vk::CommandPool::null(),
            command_buffer: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
        };
        // SAFETY: object creation on a live device with create infos that outlive each call.
        unsafe {
            let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..BINDINGS as u32)
                .map(|binding| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(binding)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            executor.set_layout = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(|e| internal("vkCreateDescriptorSetLayout", e))?;
            let push_ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(PUSH_BYTES)];
            let set_layouts = [executor.set_layout];
            executor.pipeline_layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&push_ranges),
                    None,
                )
                .map_err(|e| internal("vkCreatePipelineLayout", e))?;
            for kernel in Kernel::ALL {
                let pipeline = executor.create_pipeline(kernel)?;
                executor.pipelines.push(pipeline);
            }
            executor.command_pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(gpu.queue_family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(|e| internal("vkCreateCommandPool", e))?;
            executor.command_buffer = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(executor.command_pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(|e| internal("vkAllocateCommandBuffers", e))?[0];
            executor.fence = device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(|e| internal("vkCreateFence", e))?;
        }
        Ok(executor)
    }

    /// Creates `kernel`'s compute pipeline.
    unsafe fn create_pipeline(&self, kernel: Kernel) -> Result<vk::Pipeline, BackendError> {
        let code = ash::util::read_spv(&mut std::io::Cursor::new(kernel.spirv()))
            .map_err(|e| internal(&format!("reading {}.spv", kernel.name()), e))?;
        let module = self
            .device
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
            .map_err(|e| internal(&format!("vkCreateShaderModule({})", kernel.name()), e))?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let info = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(self.pipeline_layout)];
        let created = self
            .device
            .create_compute_pipelines(vk::PipelineCache::null(), &info, None);
        self.device.destroy_shader_module(module, None);
        match created {
            Ok(pipelines) => Ok(pipelines[0]),
            Err((_, e)) => Err(internal(
                &format!("vkCreateComputePipelines({})", kernel.name()),
                e,
            )),
        }
    }

    /// Records `dispatches` in order, each seeing the previous ones' writes, submits them and
    /// waits until the GPU is done and its writes are visible to the host.
    pub fn run(&self, gpu: &Gpu, dispatches: &[Dispatch<'_>]) -> Result<(), BackendError> {
        if dispatches.is_empty() {
            return Ok(());
        }
        // One descriptor set per distinct binding list (split dispatches share theirs).
        let mut bindings: Vec<[vk::Buffer; BINDINGS]> = Vec::new();
        let mut set_of = Vec::with_capacity(dispatches.len());
        for dispatch in dispatches {
            let bound = dispatch
                .bound()
                .ok_or_else(|| internal(dispatch.kernel.name(), "a dispatch without buffers"))?;
            let index = match bindings.iter().position(|b| *b == bound) {
                Some(index) => index,
                None => {
                    bindings.push(bound);
                    bindings.len() - 1
                }
            };
            set_of.push(index);
        }
        let device = &gpu.device;
        // SAFETY: the caller holds the backend's mutex, so the queue, command buffer and fence
        // are used by this thread alone; every buffer outlives the wait below.
        unsafe {
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count((bindings.len() * BINDINGS) as u32)];
            let pool = device
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(bindings.len() as u32)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(|e| vk_error("vkCreateDescriptorPool", e))?;
            let result = self.record_and_submit(gpu, pool, &bindings, dispatches, &set_of);
            device.destroy_descriptor_pool(pool, None);
            result
        }
    }

    unsafe fn record_and_submit(
        &self,
        gpu: &Gpu,
        pool: vk::DescriptorPool,
        bindings: &[[vk::Buffer; BINDINGS]],
        dispatches: &[Dispatch<'_>],
        set_of: &[usize],
    ) -> Result<(), BackendError> {
        let device = &gpu.device;
        let layouts = vec![self.set_layout; bindings.len()];
        let sets = device
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
            .map_err(|e| vk_error("vkAllocateDescriptorSets", e))?;
        for (buffers, &set) in bindings.iter().zip(&sets) {
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
                .iter()
                .map(|&buffer| {
                    [vk::DescriptorBufferInfo::default()
                        .buffer(buffer)
                        .offset(0)
                        .range(vk::WHOLE_SIZE)]
                })
                .collect();
            let writes: Vec<vk::WriteDescriptorSet> = infos
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(i as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            device.update_descriptor_sets(&writes, &[]);
        }

        let cb = self.command_buffer;
        device
            .reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
            .map_err(|e| vk_error("vkResetCommandBuffer", e))?;
        device
            .begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(|e| vk_error("vkBeginCommandBuffer", e))?;
        for (i, (dispatch, &set_index)) in dispatches.iter().zip(set_of).enumerate() {
            let set = sets[set_index];
            if i > 0 {
                let barrier = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
                device.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::DependencyFlags::empty(),
                    &barrier,
                    &[],
                    &[],
                );
            }
            device.cmd_bind_pipeline(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.pipelines[dispatch.kernel.index()],
            );
            device.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.pipeline_layout,
                0,
                &[set],
                &[],
            );
            device.cmd_push_constants(
                cb,
                self.pipeline_layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &dispatch
                    .push
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect::<Vec<u8>>(),
            );
            device.cmd_dispatch(cb, dispatch.groups.max(1), 1, 1);
        }
        let to_host = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)];
        device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &to_host,
            &[],
            &[],
        );
        device
            .end_command_buffer(cb)
            .map_err(|e| vk_error("vkEndCommandBuffer", e))?;

        device
            .reset_fences(&[self.fence])
            .map_err(|e| vk_error("vkResetFences", e))?;
        let command_buffers = [cb];
        let submit = [vk::SubmitInfo::default().command_buffers(&command_buffers)];
        device
            .queue_submit(gpu.queue, &submit, self.fence)
            .map_err(|e| vk_error("vkQueueSubmit", e))?;
        device
            .wait_for_fences(&[self.fence], true, u64::MAX)
            .map_err(|e| vk_error("vkWaitForFences", e))
    }
}
