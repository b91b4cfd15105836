//! The compute kernels' SPIR-V, built from `shaders/*.comp` by `shaders/build.sh` and embedded
//! at compile time (no shader compiler is needed to build the crate).

/// One compute kernel. Every kernel uses descriptor set 0 with storage buffers at bindings
/// 0 (parameters) to 3, and at most one `u32` of push constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// `one_hot.comp`: DML_ONE_HOT and OpenVINO OneHot-1, one invocation per output element.
    OneHot,
    /// `argmax.comp`: DML_ARGMAX.
    ArgMax,
    /// `nonzero_count.comp`: nonzero elements per block.
    NonZeroCount,
    /// `nonzero_scan.comp`: first output row per block and the total count.
    NonZeroScan,
    /// `nonzero_write.comp`: the coordinates.
    NonZeroWrite,
}

impl Kernel {
    /// Every kernel, in pipeline-table order.
    pub const ALL: [Kernel; 5] = [
        Kernel::OneHot,
        Kernel::ArgMax,
        Kernel::NonZeroCount,
        Kernel::NonZeroScan,
        Kernel::NonZeroWrite,
    ];

    /// Invocations per workgroup (`GROUP_SIZE` in `shaders/common.glsl`).
    pub const GROUP_SIZE: u32 = 128;

    /// Position in [`Kernel::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The shader's file name without extension.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::OneHot => "one_hot",
            Kernel::ArgMax => "argmax",
            Kernel::NonZeroCount => "nonzero_count",
            Kernel::NonZeroScan => "nonzero_scan",
            Kernel::NonZeroWrite => "nonzero_write",
        }
    }

    /// The SPIR-V module, as bytes (not necessarily 4-byte aligned).
    pub fn spirv(self) -> &'static [u8] {
        match self {
            Kernel::OneHot => include_bytes!("../shaders/one_hot.spv"),
            Kernel::ArgMax => include_bytes!("../shaders/argmax.spv"),
            Kernel::NonZeroCount => include_bytes!("../shaders/nonzero_count.spv"),
            Kernel::NonZeroScan => include_bytes!("../shaders/nonzero_scan.spv"),
            Kernel::NonZeroWrite => include_bytes!("../shaders/nonzero_write.spv"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_spirv() {
        for kernel in Kernel::ALL {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(kernel.spirv()))
                .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
            assert_eq!(words[0], 0x0723_0203, "{} magic", kernel.name());
            assert_eq!(Kernel::ALL[kernel.index()], kernel);
        }
    }
}
