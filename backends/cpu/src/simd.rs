//! Run-time selection of instruction sets for the hot loops.
//!
//! The crate is built for the baseline target (SSE2 on x86-64), so that its binary runs
//! anywhere. The hottest loops are written once, as `#[inline(always)]` generic bodies, and
//! instantiated a second time inside `#[target_feature(enable = "avx2")]` wrappers; callers pick
//! the wrapper when [`has_avx2`] says the CPU supports it. Results are identical: the bodies
//! are integer code, and only the width of the vectors the compiler emits differs. ArgMax's
//! contiguous runs have a third, AVX-512 variant ([`Isa::Avx512`]); every other loop runs its
//! AVX2 variant there.
//!
//! Setting [`BASELINE_ENV`] (`OPCONFORM_CPU_BASELINE=1`) keeps every loop on the baseline
//! variant, to test or time it on a machine with AVX2; setting [`NO_AVX512_ENV`]
//! (`OPCONFORM_CPU_NO_AVX512=1`) keeps them at AVX2 on a machine with AVX-512.

/// The environment variable that disables the AVX2 (and AVX-512) variants when set to
/// anything but `0`.
pub const BASELINE_ENV: &str = "OPCONFORM_CPU_BASELINE";

/// The environment variable that disables the AVX-512 variants when set to anything but `0`.
pub const NO_AVX512_ENV: &str = "OPCONFORM_CPU_NO_AVX512";

/// True when the environment variable `name` is set to anything but empty or `0`.
fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The widest instruction set the kernels may use here, read once (CPU features and the
/// environment), then a relaxed atomic load.
#[inline]
fn widest() -> Isa {
    use std::sync::atomic::{AtomicU8, Ordering};
    static STATE: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 portable, 2 AVX2, 3 AVX-512
    let state = match STATE.load(Ordering::Relaxed) {
        0 => {
            let state = probe();
            STATE.store(state, Ordering::Relaxed);
            state
        }
        state => state,
    };
    match state {
        3 => Isa::Avx512,
        2 => Isa::Avx2,
        _ => Isa::Portable,
    }
}

/// [`widest`] computed: 1 portable, 2 AVX2, 3 AVX-512.
fn probe() -> u8 {
    #[cfg(target_arch = "x86_64")]
    // Every AVX2 CPU has POPCNT, but the kernels rely on it, so it is checked too.
    if !env_flag(BASELINE_ENV)
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("popcnt")
    {
        return if cpu_has_avx512() && !env_flag(NO_AVX512_ENV) {
            3
        } else {
            2
        };
    }
    1
}

/// True when the CPU has AVX-512 VBMI (byte permutes across the whole vector), which the
/// OneHot line kernel and ArgMax's transposed groups of 1-byte elements need besides
/// [`Isa::Avx512`].
pub(crate) fn has_avx512_vbmi() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when the CPU has AVX-512 VBMI2 (compresses of 8- and 16-bit lanes), which ArgMax's
/// padded short runs and its segments of 2-byte elements need.
pub(crate) fn has_avx512_vbmi2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512vbmi2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when the CPU has the AVX-512 subsets the kernels use (F and BW).
#[cfg(target_arch = "x86_64")]
fn cpu_has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
}

/// True when the AVX2 variants are to run: the CPU supports AVX2 and [`BASELINE_ENV`] is not
/// set.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    widest().avx2()
}

/// True when the CPU is AMD's (CPUID vendor `AuthenticAMD`), read once (a CPUID instruction
/// traps to the hypervisor in a virtual machine), then a relaxed atomic load. A few thresholds
/// differ there (measured on Zen 3), e.g.
/// [`NONZERO_AMD_STREAM_MAX_SHARE`](crate::thresholds::NONZERO_AMD_STREAM_MAX_SHARE).
#[inline]
pub(crate) fn amd_cpu() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static STATE: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 other, 2 AMD
    match STATE.load(Ordering::Relaxed) {
        0 => {
            let amd = vendor_is_amd();
            STATE.store(if amd { 2 } else { 1 }, Ordering::Relaxed);
            amd
        }
        state => state == 2,
    }
}

/// True on AMD family 1Ah (Zen 5), read once as [`amd_cpu`] is. NonZeroCoordinates writes
/// the rows of sparse narrow inputs in place there
/// ([`NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY`](crate::thresholds::NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY)),
/// and the ArgMax row fold prefetches long rows into L1 (`argmax::kernels::fold_prefetch_into_l1`).
#[inline]
pub(crate) fn amd_zen5() -> bool {
    amd_family() == Some(0x1A)
}

/// True on AMD family 17h (Zen, Zen+ and Zen 2), read once as [`amd_cpu`] is. There
/// NonZeroCoordinates streams only dense chunks' rows
/// ([`NONZERO_ZEN2_IN_PLACE_DENSITY`](crate::thresholds::NONZERO_ZEN2_IN_PLACE_DENSITY)).
#[inline]
pub(crate) fn amd_family_17h() -> bool {
    amd_family() == Some(0x17)
}

/// True on AMD family 19h (Zen 3 and Zen 4), read once as [`amd_cpu`] is. With AVX-512 (Zen 4
/// only) NonZeroCoordinates writes one-byte elements' rows in place
/// ([`NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY`](crate::thresholds::NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY))
/// and its masks pass prefetches wide elements even where the rows read them ahead
/// ([`NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES`](crate::thresholds::NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES)).
#[inline]
pub(crate) fn amd_family_19h() -> bool {
    amd_family() == Some(0x19)
}

/// The CPU's family ([`cpu_family`]) when it is AMD's, read once (CPUID traps to the
/// hypervisor in a virtual machine); `None` on other CPUs.
fn amd_family() -> Option<u32> {
    static FAMILY: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *FAMILY.get_or_init(|| if amd_cpu() { cpu_family() } else { None })
}

/// The CPU's family from CPUID leaf 1 (base family, plus the extended family when the base is
/// 0Fh), or `None` off x86-64.
fn cpu_family() -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: CPUID leaf 1 exists on every x86-64 CPU.
        #[allow(unused_unsafe)]
        let eax = unsafe { std::arch::x86_64::__cpuid(1) }.eax;
        let base = (eax >> 8) & 0xF;
        let extended = (eax >> 20) & 0xFF;
        Some(if base == 0xF { base + extended } else { base })
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// [`amd_cpu`] read from CPUID leaf 0 (the vendor string).
fn vendor_is_amd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: CPUID leaf 0 exists on every x86-64 CPU.
        #[allow(unused_unsafe)]
        let id = unsafe { std::arch::x86_64::__cpuid(0) };
        let mut name = [0u8; 12];
        name[..4].copy_from_slice(&id.ebx.to_le_bytes());
        name[4..8].copy_from_slice(&id.edx.to_le_bytes());
        name[8..].copy_from_slice(&id.ecx.to_le_bytes());
        &name == b"AuthenticAMD"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The instruction set a kernel runs with, chosen once per call ([`Isa::detect`]) and passed
/// down, so that tests can run every kernel both ways on the same input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// Plain Rust, for any CPU (the compiler vectorises what it can: SSE2 on x86-64, NEON on
    /// aarch64).
    Portable,
    /// Explicit AVX2 kernels (x86-64 only).
    Avx2,
    /// AVX-512 (F and BW) where a kernel has such a form (ArgMax's contiguous runs and row
    /// folds, among others), AVX2 for everything else (x86-64 only).
    Avx512,
}

impl Isa {
    /// The widest instruction set this CPU has, as far as the environment allows
    /// ([`BASELINE_ENV`], [`NO_AVX512_ENV`]).
    #[inline]
    pub(crate) fn detect() -> Isa {
        widest()
    }

    /// True when the AVX2 kernels may run (AVX2 or AVX-512).
    #[inline]
    pub(crate) fn avx2(self) -> bool {
        matches!(self, Isa::Avx2 | Isa::Avx512)
    }

    /// The instruction set's name, as reports and benchmarks print it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Every instruction set this CPU can run (for tests).
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Isa> {
        let mut all = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            all.push(Isa::Avx2);
            if cpu_has_avx512() {
                all.push(Isa::Avx512);
            }
        }
        all
    }
}

/// Outputs at least this large are written with non-temporal stores ([`copy_streaming`]):
/// they do not fit the caches, so caching their lines only costs reads.
pub(crate) use crate::thresholds::STREAM_MIN_BYTES;

/// Copies `src` into `dst` (of the same length). With `stream` on x86-64, the 16-byte-aligned
/// middle of `dst` is written with non-temporal stores, which bypass the caches: for outputs
/// far larger than the caches they spare the read-for-ownership of every line written, which
/// otherwise doubles the memory traffic of a write. Call [`stream_fence`] before the written
/// memory is handed to another thread.
///
/// Public so that the benchmark's write floor (`opconform-bench`) writes with the same
/// streamed stores as the kernels.
///
/// # Panics
/// If the lengths differ.
#[inline]
pub fn copy_streaming(dst: &mut [u8], src: &[u8], stream: bool) {
    assert_eq!(dst.len(), src.len(), "copy_streaming: lengths differ");
    #[cfg(target_arch = "x86_64")]
    if stream {
        let head = dst.as_ptr().align_offset(32).min(dst.len());
        let (dst_head, dst_rest) = dst.split_at_mut(head);
        let (src_head, src_rest) = src.split_at(head);
        dst_head.copy_from_slice(src_head);
        let body = dst_rest.len() & !31;
        if has_avx2() {
            // SAFETY: the CPU has AVX2 (so AVX); `dst_rest` starts 32-byte aligned and both
            // slices hold `body` bytes.
            unsafe { stream_32(dst_rest.as_mut_ptr(), src_rest.as_ptr(), body) };
        } else {
            // SAFETY: as above with 16-byte stores (SSE2, the x86-64 baseline); a 32-byte
            // aligned start is 16-byte aligned.
            unsafe { stream_16(dst_rest.as_mut_ptr(), src_rest.as_ptr(), body) };
        }
        dst_rest[body..].copy_from_slice(&src_rest[body..]);
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = stream;
    dst.copy_from_slice(src);
}

/// Copies `len` bytes (a multiple of 32) from `src` to `dst` with 32-byte non-temporal
/// stores. On AMD Zen these write about twice as fast as 16-byte ones (a 512 MiB fill: 19–20
/// against 10 GB/s, as fast as `memset`), so every streamed write goes through them where
/// the CPU has AVX.
///
/// # Safety
/// The CPU must support AVX; `dst` must be 32-byte aligned; `len` bytes readable at `src` and
/// writable at `dst`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn stream_32(dst: *mut u8, src: *const u8, len: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};
    for i in (0..len).step_by(32) {
        let v = _mm256_loadu_si256(src.add(i).cast::<__m256i>());
        _mm256_stream_si256(dst.add(i).cast::<__m256i>(), v);
    }
}

/// [`stream_32`] with 16-byte stores, for CPUs without AVX.
///
/// # Safety
/// `dst` must be 16-byte aligned; `len` (a multiple of 16) bytes readable at `src` and
/// writable at `dst`.
#[cfg(target_arch = "x86_64")]
unsafe fn stream_16(dst: *mut u8, src: *const u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    for i in (0..len).step_by(16) {
        let v = _mm_loadu_si128(src.add(i).cast::<__m128i>());
        _mm_stream_si128(dst.add(i).cast::<__m128i>(), v);
    }
}

/// Writes a buffer made of one repeating 64-byte `pattern` (every 64-byte-aligned line of the
/// buffer holds exactly `pattern`) with a few patched bytes, line by line from registers: the
/// aligned lines with non-temporal stores on x86-64, no line read or staged. The unaligned
/// head and tail are written at once with plain stores.
///
/// Patches come in increasing byte order ([`LineStreamer::patch`]); [`LineStreamer::finish`]
/// writes the rest. Call [`stream_fence`] before the memory is handed to another thread.
pub(crate) struct LineStreamer<'o> {
    out: &'o mut [u8],
    pattern: [u8; 64],
    /// The aligned body, `body.start..body.end`, in whole lines.
    body: std::ops::Range<usize>,
    /// The next line of the body not yet written.
    next_line: usize,
    /// The line being patched (its offset), and its bytes.
    open: Option<(usize, [u8; 64])>,
}

impl<'o> LineStreamer<'o> {
    /// Starts writing `out`. The caller guarantees that byte `i` of `out` is meant to hold
    /// `pattern[(i - head) % 64]` where `head` is the offset of the first aligned line; the
    /// head and the tail are written here from the same pattern.
    pub(crate) fn new(out: &'o mut [u8], pattern: [u8; 64]) -> LineStreamer<'o> {
        let head = out.as_ptr().align_offset(64).min(out.len());
        let end = head + (out.len() - head) / 64 * 64;
        for (i, byte) in out[..head].iter_mut().enumerate() {
            *byte = pattern[(i + 64 - head) % 64];
        }
        for (i, byte) in out[end..].iter_mut().enumerate() {
            *byte = pattern[i];
        }
        LineStreamer {
            out,
            pattern,
            body: head..end,
            next_line: head,
            open: None,
        }
    }

    /// Writes `bytes` at offset `at` (not before any earlier patch's line; within one line
    /// of the body, or anywhere in the head or tail).
    #[inline]
    pub(crate) fn patch(&mut self, at: usize, bytes: &[u8]) {
        if !self.body.contains(&at) {
            self.out[at..at + bytes.len()].copy_from_slice(bytes);
            return;
        }
        let line = self.body.start + (at - self.body.start) / 64 * 64;
        match &mut self.open {
            Some((open, _)) if *open == line => {}
            _ => {
                self.close_line();
                self.stream_pattern_to(line);
                self.open = Some((line, self.pattern));
            }
        }
        let (_, bytes_of_line) = self.open.as_mut().expect("a line was just opened");
        let offset = at - line;
        bytes_of_line[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    /// Writes every line not written yet.
    pub(crate) fn finish(mut self) {
        self.close_line();
        self.stream_pattern_to(self.body.end);
    }

    fn close_line(&mut self) {
        if let Some((line, bytes)) = self.open.take() {
            self.store_line(line, &bytes);
            self.next_line = line + 64;
        }
    }

    /// Writes the pattern over the lines from `next_line` up to `end`.
    fn stream_pattern_to(&mut self, end: usize) {
        let pattern = self.pattern;
        let mut line = self.next_line;
        while line < end {
            self.store_line(line, &pattern);
            line += 64;
        }
        self.next_line = end.max(self.next_line);
    }

    #[inline(always)]
    fn store_line(&mut self, line: usize, bytes: &[u8; 64]) {
        let dst = &mut self.out[line..line + 64];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `dst` is 64 bytes long and 64-byte aligned (a line of the body), and `bytes`
        // 64 bytes long (SSE2 is part of the x86-64 baseline). Sixteen-byte stores: with
        // `stream_32`, called once per line, this path took 1.4–1.8 times as long on AMD Zen.
        unsafe {
            stream_16(dst.as_mut_ptr(), bytes.as_ptr(), 64)
        };
        #[cfg(not(target_arch = "x86_64"))]
        dst.copy_from_slice(bytes);
    }
}

/// Asks the CPU to bring the cache line at `p + distance` into its L2 cache. The address may
/// lie past the end of the caller's data (it is computed with `wrapping_add` and never read):
/// a prefetch has no architectural effect and never faults.
///
/// The L2 hint (`prefetcht1`), not the L1 one: a NonZeroCoordinates window's read-ahead of
/// 256 KiB fits L2 either way, and on Intel Xeon (Sapphire Rapids) one thread's FLOAT32 rows
/// at 5 % took 13.3 ms with `prefetcht0`, 11.0–11.6 with `prefetcht1` (50 %: 23.0 →
/// 20.6–21.7 ms; `prefetcht2` about the same as `t1`, `prefetchnta` 2.3 times as long). On
/// AMD Zen 4 `prefetcht0` was 2–8 % faster on those rows, less than that loss.
#[inline(always)]
pub(crate) fn prefetch_ahead(p: *const u8, distance: usize) {
    prefetch_ahead_into(p, distance, false);
}

/// [`prefetch_ahead`], into the L1 cache (`prefetcht0`) instead when `into_l1`: for lines read
/// within a few hundred nanoseconds, as the ArgMax row fold reads each of a group's long rows
/// 2 KiB behind its prefetches (seven rows, 14 KiB in flight): see
/// `argmax::kernels::fold_prefetch_into_l1` (on AMD Zen 5 only).
#[inline(always)]
pub(crate) fn prefetch_ahead_into(p: *const u8, distance: usize, into_l1: bool) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect, whatever the address; SSE is part of the
    // x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        let at = p.wrapping_add(distance).cast();
        if into_l1 {
            _mm_prefetch::<_MM_HINT_T0>(at);
        } else {
            _mm_prefetch::<_MM_HINT_T1>(at);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, distance, into_l1);
}

/// Prefetches ([`prefetch_ahead`]) the `lines` cache lines `ahead` bytes past `group` (the
/// lines of one mask group), or nothing when `ahead` is 0.
#[inline(always)]
fn prefetch_group(group: *const u8, lines: usize, ahead: usize) {
    if ahead > 0 {
        for line in 0..lines {
            prefetch_ahead(group, ahead + 64 * line);
        }
    }
}

/// Orders the non-temporal stores of [`copy_streaming`] before every later store (`sfence`).
#[inline]
pub fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
}

/// Elements per nonzero mask of [`nonzero_masks`].
pub(crate) use crate::thresholds::NONZERO_MASK_GROUP as MASK_GROUP;

/// Sets `masks[g]` to the nonzero mask of group `g` of `bytes` (bit `j` set when element
/// `g * 64 + j` has one of the `significant` bits set), for the `masks.len()` whole groups of
/// elements of `size` bytes at the start of `bytes`: AVX-512 BW tests into mask registers
/// when `isa` is [`Isa::Avx512`], else AVX2 compare-and-movemask. Returns how many bits are
/// set (counted with POPCNT as the masks are made: the caller's portable count compiles to an
/// SSE2 emulation, 7 % of one thread's UINT8 time at 5 %), or None, touching nothing, where
/// neither is available (no AVX2, an element size other than 1, 2, 4 or 8): the caller then
/// computes the masks itself. With `ahead` > 0, each group's lines `ahead` bytes further on
/// are prefetched ([`prefetch_ahead`]; the caller passes 0 where it prefetches otherwise).
///
/// # Panics
/// If `bytes` is shorter than `masks.len() * 64 * size`.
#[inline]
pub(crate) fn nonzero_masks(
    isa: Isa,
    bytes: &[u8],
    size: usize,
    significant: u64,
    masks: &mut [u64],
    ahead: usize,
) -> Option<usize> {
    assert!(
        bytes.len() >= masks.len() * MASK_GROUP * size,
        "nonzero_masks: too few bytes"
    );
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 && widest() == Isa::Avx512 {
        // SAFETY: the CPU supports AVX-512 F and BW (`widest` found them) and `bytes` holds
        // the groups (asserted above).
        return unsafe {
            match size {
                1 => Some(nonzero_masks_avx512::<1>(bytes, significant, masks, ahead)),
                2 => Some(nonzero_masks_avx512::<2>(bytes, significant, masks, ahead)),
                4 => Some(nonzero_masks_avx512::<4>(bytes, significant, masks, ahead)),
                8 => Some(nonzero_masks_avx512::<8>(bytes, significant, masks, ahead)),
                _ => None,
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    if matches!(size, 1 | 2 | 4 | 8) && isa.avx2() && has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above) and `bytes` holds the groups
        // (asserted above).
        return Some(unsafe { nonzero_masks_avx2(bytes, size, significant, masks, ahead) });
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (isa, significant, ahead);
    None
}

/// The AVX-512 body of [`nonzero_masks`] for elements of `SIZE` bytes: one `vptest` per
/// 64 bytes straight into a mask register (one per group of bytes, two of 2-byte elements,
/// four of 4-byte, eight of 8-byte), joined into the group's word. About a third of the
/// instructions of the AVX2 compare, mask-and-movemask chain, which bounds counting on one
/// core when the input is in cache. The set bits are counted after the loop, over the words
/// in L1: counted in it (a mask register to a general one, a `popcnt`, an add per word),
/// UINT8 at 0 % in L2 took 1.82 µs per 1e5 elements, 1.61 so.
///
/// # Safety
/// The CPU must support AVX-512 F and BW, and `bytes` must hold `masks.len() * 64 * SIZE`
/// bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,popcnt")]
unsafe fn nonzero_masks_avx512<const SIZE: usize>(
    bytes: &[u8],
    significant: u64,
    masks: &mut [u64],
    ahead: usize,
) -> usize {
    use std::arch::x86_64::*;
    for (g, mask) in masks.iter_mut().enumerate() {
        // The 64-byte vectors at `base + 64 k` are inside the group, in bounds by the contract.
        let base = bytes.as_ptr().add(g * MASK_GROUP * SIZE);
        prefetch_group(base, SIZE, ahead);
        let load = |k: usize| _mm512_loadu_si512(base.add(64 * k).cast());
        *mask = match SIZE {
            1 => _mm512_test_epi8_mask(load(0), _mm512_set1_epi8(significant as u8 as i8)),
            2 => {
                let bits = _mm512_set1_epi16(significant as u16 as i16);
                let low = _mm512_test_epi16_mask(load(0), bits);
                let high = _mm512_test_epi16_mask(load(1), bits);
                u64::from(low) | u64::from(high) << 32
            }
            4 => {
                let bits = _mm512_set1_epi32(significant as u32 as i32);
                (0..4).fold(0u64, |word, k| {
                    word | u64::from(_mm512_test_epi32_mask(load(k), bits)) << (16 * k)
                })
            }
            _ => {
                let bits = _mm512_set1_epi64(significant as i64);
                (0..8).fold(0u64, |word, k| {
                    word | u64::from(_mm512_test_epi64_mask(load(k), bits)) << (8 * k)
                })
            }
        };
    }
    masks.iter().map(|mask| mask.count_ones() as usize).sum()
}

/// The AVX2 body of [`nonzero_masks`].
///
/// # Safety
/// The CPU must support AVX2, and `bytes` must hold `masks.len() * 64 * size` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn nonzero_masks_avx2(
    bytes: &[u8],
    size: usize,
    significant: u64,
    masks: &mut [u64],
    ahead: usize,
) -> usize {
    use std::arch::x86_64::*;
    let mut count = 0;
    let zero = _mm256_setzero_si256();
    let group_bytes = MASK_GROUP * size;
    for (g, mask) in masks.iter_mut().enumerate() {
        // The 32-byte vectors at `base + at` are inside the group, in bounds by the contract.
        let base = bytes.as_ptr().add(g * group_bytes);
        prefetch_group(base, size, ahead);
        // Bits set for the zero elements, then inverted.
        let mut zeros = 0u64;
        match size {
            1 => {
                let bits = _mm256_set1_epi8(significant as u8 as i8);
                for k in 0..2 {
                    let z = _mm256_cmpeq_epi8(
                        _mm256_and_si256(
                            _mm256_loadu_si256(base.add(32 * k).cast::<__m256i>()),
                            bits,
                        ),
                        zero,
                    );
                    zeros |= u64::from(_mm256_movemask_epi8(z) as u32) << (32 * k);
                }
            }
            2 => {
                let bits = _mm256_set1_epi16(significant as u16 as i16);
                for k in 0..2 {
                    let a = _mm256_cmpeq_epi16(
                        _mm256_and_si256(
                            _mm256_loadu_si256(base.add(64 * k).cast::<__m256i>()),
                            bits,
                        ),
                        zero,
                    );
                    let b = _mm256_cmpeq_epi16(
                        _mm256_and_si256(
                            _mm256_loadu_si256(base.add(64 * k + 32).cast::<__m256i>()),
                            bits,
                        ),
                        zero,
                    );
                    // Packing interleaves the 128-bit halves: a.lo b.lo a.hi b.hi; restore order.
                    let packed =
                        _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(a, b));
                    zeros |= u64::from(_mm256_movemask_epi8(packed) as u32) << (32 * k);
                }
            }
            4 => {
                let bits = _mm256_set1_epi32(significant as u32 as i32);
                for k in 0..8 {
                    let z = _mm256_cmpeq_epi32(
                        _mm256_and_si256(
                            _mm256_loadu_si256(base.add(32 * k).cast::<__m256i>()),
                            bits,
                        ),
                        zero,
                    );
                    zeros |=
                        u64::from(_mm256_movemask_ps(_mm256_castsi256_ps(z)) as u32) << (8 * k);
                }
            }
            _ => {
                let bits = _mm256_set1_epi64x(significant as i64);
                for k in 0..16 {
                    let z = _mm256_cmpeq_epi64(
                        _mm256_and_si256(
                            _mm256_loadu_si256(base.add(32 * k).cast::<__m256i>()),
                            bits,
                        ),
                        zero,
                    );
                    zeros |=
                        u64::from(_mm256_movemask_pd(_mm256_castsi256_pd(z)) as u32) << (4 * k);
                }
            }
        }
        *mask = !zeros;
        count += mask.count_ones() as usize;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first value of `field` in /proc/cpuinfo, or `None` where there is no such file
    /// (not Linux) or field (an architecture whose cpuinfo does not name it): then nothing
    /// independent to compare with.
    fn cpuinfo_field(field: &str) -> Option<String> {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
        cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_owned())
    }

    #[test]
    fn the_vendor_agrees_with_proc_cpuinfo() {
        let Some(vendor) = cpuinfo_field("vendor_id") else {
            return;
        };
        assert_eq!(amd_cpu(), vendor == "AuthenticAMD", "vendor_id {vendor}");
    }

    #[test]
    fn the_family_agrees_with_proc_cpuinfo() {
        let Some(family) = cpuinfo_field("cpu family") else {
            return;
        };
        let family: u32 = family.parse().expect("cpuinfo's cpu family is a number");
        assert_eq!(cpu_family(), Some(family));
        assert_eq!(amd_zen5(), amd_cpu() && family == 0x1A);
        assert_eq!(amd_family_19h(), amd_cpu() && family == 0x19);
    }

    #[test]
    fn the_line_streamer_writes_the_pattern_and_every_patch_at_any_alignment() {
        // A pattern of 64 different bytes: any misplaced line or head byte shows.
        let pattern: [u8; 64] = std::array::from_fn(|i| 100 + i as u8);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..2000 {
            let (at, len) = (next(64), next(700));
            let mut buffer = vec![0u8; len + 128];
            let head = buffer[at..].as_ptr().align_offset(64).min(len);
            let mut expected: Vec<u8> = (0..len)
                .map(|i| pattern[(i + 64 * 16 - head) % 64])
                .collect();
            let mut patches = Vec::new();
            let mut offset = 0;
            while len > 0 && offset < len {
                offset += next(200);
                let width = 1 + next(4);
                if offset + width <= len {
                    patches.push((offset, width));
                }
                offset += width;
            }
            let mut lines = LineStreamer::new(&mut buffer[at..at + len], pattern);
            for &(offset, width) in &patches {
                let bytes = vec![offset as u8 ^ 0x5a; width];
                // A patch stays within one line (as elements aligned to their size do):
                // ones that would cross a line boundary are left out.
                let crosses = if offset < head {
                    offset + width > head
                } else {
                    (offset - head) % 64 + width > 64
                };
                if !crosses {
                    lines.patch(offset, &bytes);
                    expected[offset..offset + width].copy_from_slice(&bytes);
                }
            }
            lines.finish();
            stream_fence();
            assert_eq!(&buffer[at..at + len], &expected[..], "at {at}, len {len}");
            assert!(buffer[..at].iter().all(|&b| b == 0), "before");
            assert!(buffer[at + len..].iter().all(|&b| b == 0), "after");
        }
    }

    #[test]
    fn vector_masks_match_a_scalar_check_for_every_size_and_isa() {
        for (size, significant) in [
            (1usize, 0xffu64),
            (2, 0x7fff),
            (2, 0xffff),
            (4, 0x7fff_ffff),
            (8, u64::MAX),
        ] {
            let groups = 3;
            let mut x = 12345u64;
            let bytes: Vec<u8> = (0..groups * MASK_GROUP * size)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    // Mostly zero bytes, some sign-only bytes (0x80), some others.
                    match (x >> 60) as u8 {
                        0..=9 => 0,
                        10..=12 => 0x80,
                        v => v,
                    }
                })
                .collect();
            for isa in [Isa::Avx2, Isa::Avx512] {
                let mut masks = vec![0u64; groups];
                let Some(count) = nonzero_masks(isa, &bytes, size, significant, &mut masks, 0)
                else {
                    continue; // not on this CPU
                };
                let set: u32 = masks.iter().map(|m| m.count_ones()).sum();
                assert_eq!(count, set as usize, "{isa:?} size {size}: count");
                for (g, &mask) in masks.iter().enumerate() {
                    for j in 0..MASK_GROUP {
                        let at = (g * MASK_GROUP + j) * size;
                        let mut word = [0u8; 8];
                        word[..size].copy_from_slice(&bytes[at..at + size]);
                        let nonzero = u64::from_le_bytes(word) & significant != 0;
                        assert_eq!(
                            (mask >> j) & 1 == 1,
                            nonzero,
                            "{isa:?}: size {size} group {g} bit {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn streaming_copies_every_byte_at_any_alignment() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        for offset in 0..20 {
            for len in [0, 1, 15, 16, 17, 63, 64, 100, 250] {
                let mut dst = vec![0u8; 300];
                copy_streaming(&mut dst[offset..offset + len], &src[..len], true);
                stream_fence();
                assert_eq!(&dst[offset..offset + len], &src[..len]);
                assert!(dst[..offset].iter().all(|&b| b == 0));
                assert!(dst[offset + len..].iter().all(|&b| b == 0));
            }
        }
    }
}
