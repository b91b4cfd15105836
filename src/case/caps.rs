//! The documented caps on what one case file may make the loader read or allocate
//! (`docs/case-format.md`, "Caps"). Each is checked before the allocation it bounds, and going
//! over one is a located load error, never an abort.

/// Largest case file read (16 MiB; the largest file in `cases/` is about 100 KiB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Most YAML nodes (scalars, lists, mappings) a file may expand to, aliases counted once per
/// use.
pub const MAX_NODES: u64 = 4_000_000;

/// Most scalar text a file may expand to, aliases counted once per use (64 MiB).
pub const MAX_EXPANDED_BYTES: u64 = 64 << 20;

/// Deepest nesting of lists and mappings.
pub const MAX_DEPTH: usize = 64;

/// Largest buffer (`total_size_in_bytes`, given or computed) a tensor may describe (1 GiB).
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// Most logical elements (product of the sizes) a tensor of a positive case may have, and most
/// elements a `generate` input may draw. Broadcast strides can describe a huge tensor in a small
/// buffer; the runner compares (and backends compute) every logical element.
pub const MAX_ELEMENTS: u64 = 1 << 28;

/// Most bytes the logical elements of one tensor of a positive case may take when packed
/// (the expected outputs are held packed).
pub const MAX_LOGICAL_BYTES: u64 = 1 << 30;
