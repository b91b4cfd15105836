//! `DML_ONE_HOT`, and the one-hot fill it shares with OpenVINO OneHot-1.
//!
//! The output is viewed as `outer × depth × inner` (dimensions before, at and after the Axis).
//! Each of the `outer × inner` sequences (`(o, x)`, one index each, read through the indices'
//! strides) puts OnValue at Axis coordinate `position`; every other element is OffValue. The
//! output is written once, in one pass, with no array of positions: positions are resolved
//! from the indices a block of [`ONE_HOT_POSITION_BLOCK`] at a time into a buffer on the stack.
//!
//! Two kernels, by the length of the inner run (`inner`):
//!
//! - **Scatter** (`inner <= ONE_HOT_SCATTER_MAX_INNER`, which includes the usual Axis-last
//!   case, `inner == 1`): the output is cut into contiguous tasks, and each task into pieces
//!   of [`ONE_HOT_IN_PLACE_PIECE_BYTES`] (of [`ONE_HOT_STAGE_BYTES`] when streamed). A piece is
//!   filled with OffValue in whole aligned 64-byte lines ([`fill_pattern`]), then the OnValue
//!   of every sequence whose element `(o·depth + position)·inner + x` falls in the piece is
//!   stored over it: the work is one store per 32 bytes (two per line with AVX2) plus one per
//!   sequence, whatever the depth. Written in place, an OffValue of one repeated byte (zero,
//!   most often) with rows of at least [`ONE_HOT_MEMSET_MIN_ROW_BYTES`] is filled by `memset`
//!   instead, before the lines kernel too ([`memset_byte`]).
//! - **Lines** ([`lines`], Axis last with a depth of at most
//!   [`ONE_HOT_LINES_MAX_DEPTH`](crate::thresholds::ONE_HOT_LINES_MAX_DEPTH), AVX-512 VBMI):
//!   each 64-byte line is built in registers from the positions of the rows it covers (a byte
//!   permute, a compare and a blend), the positions resolved a block of rows at a time into
//!   bytes. With AVX2 and not AVX-512, rows of at most
//!   [`ONE_HOT_HALVES_MAX_ROW_BYTES`](crate::thresholds::ONE_HOT_HALVES_MAX_ROW_BYTES) are
//!   built the same way 16 bytes at a time (a byte shuffle each). Where it runs, it replaces
//!   the scatter kernel.
//! - **Select** (longer inner runs, e.g. Axis 0): each output row `(o, a)` holds OnValue where
//!   `position(o, x) == a`. Work is cut into rectangles `o × a-range × x-range`; a block of
//!   positions is resolved once per x-block and reused by every row of the rectangle
//!   (compare-and-select, vectorised). Rectangles are not contiguous in the output, so
//!   parallel workers write them through a shared pointer (they are disjoint).
//!
//! Outputs of at least [`STREAM_MIN_BYTES`] are built in an L1-resident stage and copied out
//! with non-temporal stores ([`copy_streaming`]), so every output byte crosses the memory bus
//! once, with no read-for-ownership. Axis-last outputs with rows of at least
//! [`ONE_HOT_DIRECT_MIN_ROW_BYTES`] skip the stage: OffValue's pattern is streamed line by line
//! from a register and the lines holding an OnValue are patched on the way ([`stream_rows`]).
//! With AVX2 or AVX-512 ([`Isa`]) the streamed scatter builds no stage at all: each piece's
//! OnValues are marked in one bit mask per 64-byte line, and every line is blended from the
//! two values' patterns in registers and streamed out ([`scatter_masked`]); the stage and
//! [`stream_rows`] serve CPUs without AVX2. Both kernels are compiled a second time for AVX2.
//! Strided outputs are produced packed, then scattered ([`write_packed`]).

/// Calls `$body::<I>(bytes, out, depth, from_end)` (an `#[inline(always)]` loop the compiler
/// vectorises, writing `out: &mut [$t]`) compiled for AVX-512 F and BW or for AVX2 where the
/// CPU has them, else plain: the body of a function that resolves packed indices.
macro_rules! compiled_for_isa {
    ($body:ident::<$i:ident>($bytes:ident, $out:ident: $t:ty, $depth:ident, $from_end:ident)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            /// The body compiled for AVX-512 F and BW.
            ///
            /// # Safety
            /// The CPU must have AVX-512 F and BW.
            #[target_feature(enable = "avx512f,avx512bw")]
            unsafe fn avx512<I: OneHotIndex>(bytes: &[u8], out: &mut [$t], depth: u64, end: bool) {
                $body::<I>(bytes, out, depth, end)
            }
            /// The body compiled for AVX2.
            ///
            /// # Safety
            /// The CPU must have AVX2.
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<I: OneHotIndex>(bytes: &[u8], out: &mut [$t], depth: u64, end: bool) {
                $body::<I>(bytes, out, depth, end)
            }
            if std::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU has AVX-512 F and BW (BW implies F).
                return unsafe { avx512::<$i>($bytes, $out, $depth, $from_end) };
            }
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                return unsafe { avx2::<$i>($bytes, $out, $depth, $from_end) };
            }
        }
        $body::<$i>($bytes, $out, $depth, $from_end)
    }};
}

mod lines;

use crate::element::{Element, OneHotIndex};
use crate::parallel::{for_each_chunk_mut, map_ranges, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::simd::{copy_streaming, stream_fence, Isa, LineStreamer};
use crate::strided::{internal, write_packed, Layout, Nest};
use crate::thresholds::{
    ONE_HOT_DIRECT_MIN_ROW_BYTES, ONE_HOT_IN_PLACE_PIECE_BYTES, ONE_HOT_MEMSET_MIN_ROW_BYTES,
    ONE_HOT_POSITION_BLOCK, ONE_HOT_SCATTER_MAX_INNER, ONE_HOT_STAGE_BYTES, ONE_HOT_TASK_BYTES,
    STREAM_MIN_BYTES,
};
use opconform_backend::{BackendError, DataType, Level, OneHotDesc, Tensor};

/// Position value meaning "no OnValue in this sequence".
pub(crate) const NO_POSITION: u32 = u32::MAX;

// A select segment (a block of positions, 8 bytes per element at most) fits the stage.
const _: () = assert!(ONE_HOT_POSITION_BLOCK * 8 <= ONE_HOT_STAGE_BYTES);

/// Runs `DML_ONE_HOT` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &OneHotDesc,
    indices: &Tensor,
    values: &Tensor,
    output: &mut Tensor,
    level: Level,
) -> Result<(), BackendError> {
    let indices_layout = Layout::new(&desc.indices, indices.data.len(), "IndicesTensor")?;
    let values_layout = Layout::new(&desc.values, values.data.len(), "ValuesTensor")?;
    let output_layout = Layout::new(&desc.output, output.data.len(), "OutputTensor")?;
    let axis = desc.axis as usize;
    let sizes = &output_layout.sizes;
    let consistent = axis < sizes.len()
        && indices_layout.sizes.len() == sizes.len()
        && indices_layout
            .sizes
            .iter()
            .zip(sizes)
            .enumerate()
            .all(|(d, (&i, &o))| if d == axis { i == 1 } else { i == o });
    if !consistent || desc.values.data_type != desc.output.data_type {
        return Err(internal("DML_ONE_HOT tensors are inconsistent"));
    }
    let outer: usize = sizes[..axis].iter().product();
    let depth = sizes[axis];
    let inner: usize = sizes[axis + 1..].iter().product();

    // OffValue: element 0. OnValue: coordinate 1 along the innermost dimension of size > 1.
    let on_dim = values_layout
        .sizes
        .iter()
        .rposition(|&s| s > 1)
        .ok_or_else(|| internal("ValuesTensor holds fewer than two elements"))?;
    let size = values_layout.element_size;
    let on_offset = values_layout.strides[on_dim] * size;
    let off = &values.data[..size];
    let on = &values.data[on_offset..on_offset + size];

    // Negative indices count from the end from DML_FEATURE_LEVEL_3_0 (the only levels that
    // allow signed index types).
    let from_end = level.at_least(Level::dml(0x3000));
    let indices = Indices::new(
        desc.indices.data_type,
        &indices.data,
        &indices_layout,
        depth as u64,
        from_end,
    )?;
    let shape = OneHotShape {
        outer,
        depth,
        inner,
    };
    fill_bytes(&indices, shape, on, off, &output_layout, &mut output.data)
}

/// The indices of a one-hot operator (sequence `s` is the `s`-th index in row-major order),
/// resolved to OnValue positions a block at a time.
pub(crate) struct Indices<'a> {
    /// The indices' buffer.
    data: &'a [u8],
    /// Row-major walk over the indices' layout.
    nest: Nest<1>,
    /// Size of the one-hot axis.
    depth: u64,
    /// Negative indices count from the end.
    from_end: bool,
    /// The resolver for the index data type.
    resolve: fn(&Indices<'a>, usize, &mut [u32]),
    /// The byte-position resolver for the index data type ([`Indices::byte_positions`]).
    narrow: fn(&Indices<'a>, usize, &mut [u8]),
    /// Bytes per index.
    element_size: usize,
}

impl<'a> Indices<'a> {
    /// The indices of `data_type` in `data` laid out as `layout`, for sequences of `depth`
    /// elements (negative indices counting from the end when `from_end`).
    pub(crate) fn new(
        data_type: DataType,
        data: &'a [u8],
        layout: &Layout,
        depth: u64,
        from_end: bool,
    ) -> Result<Indices<'a>, BackendError> {
        type Resolvers<'a> = (
            fn(&Indices<'a>, usize, &mut [u32]),
            fn(&Indices<'a>, usize, &mut [u8]),
        );
        let (resolve, narrow): Resolvers<'a> = match data_type {
            DataType::Uint32 => (resolve::<u32>, lines::byte_positions::<u32>),
            DataType::Uint64 => (resolve::<u64>, lines::byte_positions::<u64>),
            DataType::Int32 => (resolve::<i32>, lines::byte_positions::<i32>),
            DataType::Int64 => (resolve::<i64>, lines::byte_positions::<i64>),
            other => return Err(internal(format!("{other} is not a OneHot index type"))),
        };
        Ok(Indices {
            data,
            nest: Nest::merged(&layout.sizes, [&layout.strides]),
            depth,
            from_end,
            resolve,
            narrow,
            element_size: data_type.size_in_bytes(),
        })
    }

    /// Number of indices (sequences).
    fn len(&self) -> usize {
        self.nest.len()
    }

    /// Writes the positions of sequences `first..first + out.len()` into `out`
    /// ([`NO_POSITION`] for an index outside the sequence).
    #[inline]
    fn positions(&self, first: usize, out: &mut [u32]) {
        (self.resolve)(self, first, out)
    }

    /// The indices' bytes and the bytes per index when they lie packed in row-major order from
    /// offset 0 (sequence `s` at byte `s * size`).
    fn packed_bytes(&self) -> Option<(&'a [u8], usize)> {
        let packed = self.nest.dims().len() <= 1 && self.nest.inner_strides() == [1];
        packed.then_some((self.data, self.element_size))
    }

    /// As [`Indices::positions`] for a depth of at most 255, one byte per position and 0xFF
    /// for an index outside the sequence.
    #[inline]
    fn byte_positions(&self, first: usize, out: &mut [u8]) {
        debug_assert!(self.depth <= u64::from(u8::MAX));
        (self.narrow)(self, first, out)
    }
}

/// [`Indices::positions`] for indices of type `I`.
fn resolve<I: OneHotIndex>(indices: &Indices<'_>, first: usize, out: &mut [u32]) {
    let (depth, from_end) = (indices.depth, indices.from_end);
    indices.map_runs::<I, u32>(
        first,
        out,
        |bytes, out| positions_run::<I>(bytes, out, depth, from_end),
        |index| position_or_none(index, depth, from_end),
    );
}

/// The positions of the packed indices `bytes` into `out`: through AVX-512 or AVX2 where the
/// CPU has it (the loop is vectorised), else plain. With a branch and a checked conversion per
/// index, resolving took a fifth of one core's time on OneHot INT64 -> UINT8 of depth 100
/// (`perf`).
fn positions_run<I: OneHotIndex>(bytes: &[u8], out: &mut [u32], depth: u64, from_end: bool) {
    compiled_for_isa!(positions_run_body::<I>(bytes, out: u32, depth, from_end));
}

/// The loop of [`positions_run`], without a branch per index.
#[inline(always)]
fn positions_run_body<I: OneHotIndex>(bytes: &[u8], out: &mut [u32], depth: u64, from_end: bool) {
    for (slot, b) in out.iter_mut().zip(bytes.chunks_exact(I::SIZE)) {
        *slot = position_or_none(I::read(b), depth, from_end);
    }
}

/// The position `index` selects in a sequence of `depth` elements, or [`NO_POSITION`] outside
/// it or where the position does not fit below [`NO_POSITION`] (as `OneHotIndex::position`,
/// without a branch).
#[inline(always)]
fn position_or_none<I: OneHotIndex>(index: I, depth: u64, from_end: bool) -> u32 {
    let offset = index.offset_in_sequence(depth, from_end);
    if offset < depth.min(u64::from(NO_POSITION)) {
        offset as u32
    } else {
        NO_POSITION
    }
}

impl Indices<'_> {
    /// Maps the indices of sequences `first..first + out.len()` (of type `I`) into `out`:
    /// each packed run of them by `packed(bytes, out)`, each index of a strided run by
    /// `single`.
    #[inline(always)]
    fn map_runs<I: OneHotIndex, T>(
        &self,
        first: usize,
        out: &mut [T],
        mut packed: impl FnMut(&[u8], &mut [T]),
        single: impl Fn(I) -> T,
    ) {
        let [step] = self.nest.inner_strides();
        self.nest
            .rows(first, first + out.len(), |flat, [offset], len, _| {
                let out = &mut out[flat - first..flat - first + len];
                if step == 1 {
                    packed(&self.data[offset * I::SIZE..(offset + len) * I::SIZE], out);
                } else {
                    for (j, slot) in out.iter_mut().enumerate() {
                        *slot = single(I::read(&self.data[(offset + j * step) * I::SIZE..]));
                    }
                }
            });
    }
}

/// The `outer × depth × inner` view of a one-hot output.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneHotShape {
    /// Product of the sizes before the one-hot axis.
    pub outer: usize,
    /// Size of the one-hot axis.
    pub depth: usize,
    /// Product of the sizes after the one-hot axis.
    pub inner: usize,
}

/// Writes the one-hot output through `layout` (sizes `outer × depth × inner` in row-major
/// order): `on` where the Axis coordinate equals the sequence's position, `off` elsewhere.
/// `on` and `off` are the values' bytes, copied bit for bit.
pub(crate) fn fill_bytes(
    indices: &Indices<'_>,
    shape: OneHotShape,
    on: &[u8],
    off: &[u8],
    layout: &Layout,
    out: &mut [u8],
) -> Result<(), BackendError> {
    let total = shape
        .outer
        .checked_mul(shape.depth)
        .and_then(|n| n.checked_mul(shape.inner));
    if total != Some(layout.count) || indices.len() != shape.outer * shape.inner {
        return Err(internal("one-hot output and indices disagree"));
    }
    if on.len() != layout.element_size || off.len() != layout.element_size {
        return Err(internal("one-hot values have the wrong size"));
    }
    let isa = Isa::detect();
    write_packed(layout, out, |packed| {
        let mode = Mode {
            parallel: packed.len() / layout.element_size >= PARALLEL_MIN_ELEMENTS,
            stream: packed.len() >= STREAM_MIN_BYTES,
            isa,
        };
        fill_sized(indices, shape, on, off, packed, mode)
    })
}

/// [`fill`] for the element size of `on` and `off` (1, 2, 4 or 8 bytes).
fn fill_sized(
    indices: &Indices<'_>,
    shape: OneHotShape,
    on: &[u8],
    off: &[u8],
    out: &mut [u8],
    mode: Mode,
) -> Result<(), BackendError> {
    match on.len() {
        1 => fill::<u8>(indices, shape, u8::read(on), u8::read(off), out, mode),
        2 => fill::<u16>(indices, shape, u16::read(on), u16::read(off), out, mode),
        4 => fill::<u32>(indices, shape, u32::read(on), u32::read(off), out, mode),
        8 => fill::<u64>(indices, shape, u64::read(on), u64::read(off), out, mode),
        other => return Err(internal(format!("no {other}-byte element type"))),
    }
    Ok(())
}

/// How a fill runs: on several threads, with non-temporal stores, with which instructions.
#[derive(Debug, Clone, Copy)]
struct Mode {
    /// Split the work across rayon's pool.
    parallel: bool,
    /// Build the output in a stage and stream it out with non-temporal stores.
    stream: bool,
    /// The instruction set of the kernels.
    isa: Isa,
}

/// An output element: OnValue and OffValue as unsigned integers of their width (their bits,
/// little-endian), so that a select compiles to vector compares and bit blends.
trait Value: Element + PartialEq {
    /// `on` when `hit`, else `off`, without a branch or a load by address.
    fn pick(hit: bool, on: Self, off: Self) -> Self;
}

macro_rules! value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            #[inline(always)]
            fn pick(hit: bool, on: $t, off: $t) -> $t {
                let mask = <$t>::from(hit).wrapping_neg();
                off ^ ((on ^ off) & mask)
            }
        }
    )*};
}

value!(u8, u16, u32, u64);

/// What every piece of a fill shares.
struct Fill<'i, 'a, V> {
    indices: &'i Indices<'a>,
    shape: OneHotShape,
    on: V,
    off: V,
    isa: Isa,
    /// The line kernel's tables when it writes this output ([`lines`]).
    lines: Option<&'static lines::LineTables>,
}

/// The packed one-hot fill for one element size: the scatter kernel for short inner runs,
/// the select kernel for long ones (module documentation).
fn fill<V: Value>(
    indices: &Indices<'_>,
    shape: OneHotShape,
    on: V,
    off: V,
    out: &mut [u8],
    mode: Mode,
) {
    if out.is_empty() {
        return;
    }
    let f = Fill {
        indices,
        shape,
        on,
        off,
        isa: mode.isa,
        lines: lines::LineTables::for_output(
            mode.isa,
            shape.inner,
            shape.depth,
            V::SIZE,
            out.len(),
        ),
    };
    if shape.inner <= ONE_HOT_SCATTER_MAX_INNER {
        let task = ONE_HOT_TASK_BYTES / V::SIZE;
        for_each_chunk_mut(out, task * V::SIZE, mode.parallel, |c, chunk| {
            scatter_task(&f, c * task, chunk, mode.stream);
        });
    } else {
        select_all(&f, out, mode);
    }
}

// --- Scatter: short inner runs ---------------------------------------------------------------

/// Writes the output elements `first..` that `chunk` holds, a stage-sized piece at a time.
fn scatter_task<V: Value>(f: &Fill<'_, '_, V>, first: usize, chunk: &mut [u8], stream: bool) {
    let piece = ONE_HOT_STAGE_BYTES / V::SIZE;
    let memset_byte = if stream { None } else { memset_byte(f) };
    #[cfg(target_arch = "x86_64")]
    if let (Some(tables), None) = (f.lines, memset_byte) {
        if !stream || (chunk.as_ptr() as usize).is_multiple_of(V::SIZE) {
            // SAFETY: the tables exist only when the CPU has the instructions of their line
            // kernel (`f.isa`'s); a streamed chunk's elements are aligned to their size.
            unsafe { lines::write_lines(f, tables, first, chunk, stream) };
            if stream {
                stream_fence();
            }
            return;
        }
    }
    let mut cache = PositionCache::new(sequences_touched(f.shape, first, chunk.len() / V::SIZE));
    if !stream {
        let in_place_piece = ONE_HOT_IN_PLACE_PIECE_BYTES / V::SIZE;
        for (p, dst) in chunk.chunks_mut(in_place_piece * V::SIZE).enumerate() {
            let start = first + p * in_place_piece;
            if let Some(byte) = memset_byte {
                dst.fill(byte);
                put_on_values(f, start, dst, &mut cache);
            } else {
                scatter_piece(f, start, dst, &mut cache);
            }
        }
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if f.isa.avx2() && (chunk.as_ptr() as usize).is_multiple_of(V::SIZE) {
        // SAFETY: `Isa::Avx512` only holds when the CPU has AVX-512 F and BW (and AVX2),
        // `Isa::avx2()` when it has AVX2; the chunk's elements are aligned to their size, as
        // the kernels require.
        unsafe {
            if f.isa == Isa::Avx512 {
                scatter_masked_avx512(f, first, chunk, &mut cache);
            } else {
                scatter_masked_avx2(f, first, chunk, &mut cache);
            }
        }
        stream_fence();
        return;
    }
    if streams_rows_directly(f.shape, V::SIZE, chunk) {
        stream_rows(f, first, chunk, &mut cache);
        stream_fence();
        return;
    }
    let mut stage = [0u8; ONE_HOT_STAGE_BYTES];
    for (p, dst) in chunk.chunks_mut(piece * V::SIZE).enumerate() {
        let staged = &mut stage[..dst.len()];
        scatter_piece(f, first + p * piece, staged, &mut cache);
        copy_streaming(dst, staged, true);
    }
    stream_fence();
}

/// [`scatter_task`]'s streamed write with AVX2 or AVX-512 (`B`), for any shape: a piece of
/// [`ONE_HOT_STAGE_BYTES`] of whole 64-byte lines at a time, the piece's OnValues are marked
/// in one bit mask per line (a bit per byte), and each line is then built in registers,
/// OffValue's pattern blended with OnValue's under its mask, and streamed out. Nothing is
/// staged: 8 bytes of mask per line are written and read instead of the line itself, and no
/// byte store is read back as a vector (which stalled store forwarding). The unaligned head
/// and tail of the chunk are written in place by [`scatter_body`].
///
/// # Safety
/// The CPU must support `B`'s instructions (this is inlined into functions compiled for
/// them), and `chunk`'s address must be a multiple of the element size (so that every element
/// lies inside one line, at the same place in every line's pattern).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn scatter_masked<V: Value, B: LineBlend>(
    f: &Fill<'_, '_, V>,
    first: usize,
    chunk: &mut [u8],
    cache: &mut PositionCache,
) {
    let head = chunk.as_ptr().align_offset(64).min(chunk.len());
    let body_end = head + (chunk.len() - head) / 64 * 64;
    if head > 0 {
        scatter_body(f, first, &mut chunk[..head], cache);
    }
    let line_of = |value: V| {
        let mut line = [0u8; 64];
        fill_pattern(&mut line, value);
        line
    };
    let blend = B::new(&line_of(f.off), &line_of(f.on));
    let element_bits = u64::MAX >> (64 - V::SIZE);
    let mut masks = [0u64; ONE_HOT_STAGE_BYTES / 64];
    let mut piece_start = head;
    while piece_start < body_end {
        let len = ONE_HOT_STAGE_BYTES.min(body_end - piece_start);
        let piece_first = first + piece_start / V::SIZE;
        for_each_on_value(f, piece_first, len / V::SIZE, cache, |at| {
            let byte = at * V::SIZE;
            masks[byte / 64] |= element_bits << (byte % 64);
        });
        let lines = chunk.as_mut_ptr().add(piece_start);
        for (l, mask) in masks[..len / 64].iter_mut().enumerate() {
            // In bounds and aligned: line `l` of the piece lies in the chunk's aligned body.
            blend.stream(lines.add(64 * l), *mask);
            *mask = 0;
        }
        piece_start += len;
    }
    if body_end < chunk.len() {
        scatter_body(f, first + body_end / V::SIZE, &mut chunk[body_end..], cache);
    }
}

/// [`scatter_masked`] with AVX-512 ([`Blend512`]).
///
/// # Safety
/// The CPU must support AVX-512 F and BW and AVX2; as [`scatter_masked`] for `chunk`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
unsafe fn scatter_masked_avx512<V: Value>(
    f: &Fill<'_, '_, V>,
    first: usize,
    chunk: &mut [u8],
    cache: &mut PositionCache,
) {
    scatter_masked::<V, Blend512>(f, first, chunk, cache);
}

/// [`scatter_masked`] with AVX2 ([`Blend256`]).
///
/// # Safety
/// The CPU must support AVX2; as [`scatter_masked`] for `chunk`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scatter_masked_avx2<V: Value>(
    f: &Fill<'_, '_, V>,
    first: usize,
    chunk: &mut [u8],
    cache: &mut PositionCache,
) {
    scatter_masked::<V, Blend256>(f, first, chunk, cache);
}

/// How [`scatter_masked`] builds and streams a 64-byte line with one vector width.
#[cfg(target_arch = "x86_64")]
trait LineBlend: Copy {
    /// The two 64-byte patterns, loaded.
    ///
    /// # Safety
    /// The CPU must support the width's instructions.
    unsafe fn new(off: &[u8; 64], on: &[u8; 64]) -> Self;

    /// Streams to `dst` (64-byte aligned, 64 writable bytes) the line whose byte `i` comes
    /// from OnValue's pattern where bit `i` of `mask` is set, else from OffValue's.
    ///
    /// # Safety
    /// As [`LineBlend::new`], and `dst` as described.
    unsafe fn stream(self, dst: *mut u8, mask: u64);
}

/// [`LineBlend`] with AVX-512 BW: one masked byte blend per line.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Blend512 {
    off: std::arch::x86_64::__m512i,
    on: std::arch::x86_64::__m512i,
}

#[cfg(target_arch = "x86_64")]
impl LineBlend for Blend512 {
    #[inline(always)]
    unsafe fn new(off: &[u8; 64], on: &[u8; 64]) -> Self {
        use std::arch::x86_64::_mm512_loadu_si512;
        Blend512 {
            off: _mm512_loadu_si512(off.as_ptr().cast()),
            on: _mm512_loadu_si512(on.as_ptr().cast()),
        }
    }

    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8, mask: u64) {
        use std::arch::x86_64::{_mm512_mask_blend_epi8, _mm512_stream_si512};
        _mm512_stream_si512(dst.cast(), _mm512_mask_blend_epi8(mask, self.off, self.on));
    }
}

/// [`LineBlend`] with AVX2: each half line's 32 mask bits spread to a byte mask (broadcast,
/// a byte shuffle, one bit tested per byte), a byte blend, and 32-byte non-temporal stores
/// (on AMD Zen twice as fast as 16-byte ones).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Blend256 {
    off: [std::arch::x86_64::__m256i; 2],
    on: [std::arch::x86_64::__m256i; 2],
}

#[cfg(target_arch = "x86_64")]
impl LineBlend for Blend256 {
    #[inline(always)]
    unsafe fn new(off: &[u8; 64], on: &[u8; 64]) -> Self {
        use std::arch::x86_64::_mm256_loadu_si256;
        let halves = |line: &[u8; 64]| {
            [
                _mm256_loadu_si256(line.as_ptr().cast()),
                _mm256_loadu_si256(line.as_ptr().add(32).cast()),
            ]
        };
        Blend256 {
            off: halves(off),
            on: halves(on),
        }
    }

    #[inline(always)]
    unsafe fn stream(self, dst: *mut u8, mask: u64) {
        use std::arch::x86_64::*;
        // Byte j of a half takes byte j / 8 of its 32 mask bits, then keeps bit j % 8.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3,
            3, 3, 3,
        );
        let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        for half in 0..2 {
            let bits = _mm256_set1_epi32((mask >> (32 * half)) as u32 as i32);
            let selected = _mm256_and_si256(_mm256_shuffle_epi8(bits, spread), bit);
            let take_on = _mm256_cmpeq_epi8(selected, bit);
            let line = _mm256_blendv_epi8(self.off[half], self.on[half], take_on);
            _mm256_stream_si256(dst.add(32 * half).cast(), line);
        }
    }
}

/// Whether [`stream_rows`] writes this output: OnValues in rows of their own (Axis last) of at
/// least [`ONE_HOT_DIRECT_MIN_ROW_BYTES`], and elements aligned to their size in memory (so that no
/// element straddles two lines and every aligned line holds the same OffValue pattern).
fn streams_rows_directly(shape: OneHotShape, size: usize, out: &[u8]) -> bool {
    shape.inner == 1
        && shape.depth * size >= ONE_HOT_DIRECT_MIN_ROW_BYTES
        && (out.as_ptr() as usize).is_multiple_of(size)
}

/// Writes the output elements `start..` that `out` holds, for an Axis-last output with deep
/// rows: the OffValue pattern is streamed line by line from a register, and the few lines that
/// hold an OnValue are patched on the way ([`LineStreamer`]). Nothing is staged, so every byte
/// is written once and read never. Sequence `s` puts its OnValue at element `s·depth + p`:
/// increasing with `s`, as the streamer needs.
fn stream_rows<V: Value>(
    f: &Fill<'_, '_, V>,
    start: usize,
    out: &mut [u8],
    cache: &mut PositionCache,
) {
    let n = out.len() / V::SIZE;
    if n == 0 {
        return;
    }
    let depth = f.shape.depth;
    let mut pattern = [0u8; 64];
    fill_pattern(&mut pattern, f.off);
    let mut on = [0u8; 8];
    f.on.write(&mut on);
    let on = &on[..V::SIZE];
    let mut lines = LineStreamer::new(out, pattern);
    let (mut s, end) = (start / depth, sequences_touched(f.shape, start, n));
    while s < end {
        let positions = cache.from(f.indices, s, end);
        for (k, &p) in positions.iter().enumerate() {
            if p != NO_POSITION {
                let at = ((s + k) * depth + p as usize).wrapping_sub(start);
                if at < n {
                    lines.patch(at * V::SIZE, on);
                }
            }
        }
        s += positions.len();
    }
    lines.finish();
}

/// The end of the sequences whose elements the output elements `first..first + n` (n > 0)
/// can hold: those of every outer block the range touches.
fn sequences_touched(shape: OneHotShape, first: usize, n: usize) -> usize {
    let block = shape.depth * shape.inner;
    ((first + n.max(1) - 1) / block + 1) * shape.inner
}

/// The positions of a block of consecutive sequences, resolved once and read by every piece
/// of a task that needs them (a piece of a deep output holds few sequences, and resolving
/// them piece by piece cost more than writing the piece). Never resolves past the task's
/// last sequence: with a deep axis a task holds only a few (16 rows of 4096 bytes), and
/// resolving a full block for each cost as much as writing the output.
struct PositionCache {
    /// The first sequence held, and how many.
    first: usize,
    len: usize,
    /// The end of the sequences the task can need.
    limit: usize,
    positions: [u32; ONE_HOT_POSITION_BLOCK],
}

impl PositionCache {
    fn new(limit: usize) -> PositionCache {
        PositionCache {
            first: 0,
            len: 0,
            limit,
            positions: [NO_POSITION; ONE_HOT_POSITION_BLOCK],
        }
    }

    /// The positions of sequences `s..` (at least one, at most up to `end`, which is at most
    /// the task's limit and the sequence count), resolving a new block from `s` when `s` is
    /// not held.
    #[inline(always)]
    fn from(&mut self, indices: &Indices<'_>, s: usize, end: usize) -> &[u32] {
        if s < self.first || s >= self.first + self.len {
            let m = (self.limit.min(indices.len()) - s).min(ONE_HOT_POSITION_BLOCK);
            indices.positions(s, &mut self.positions[..m]);
            (self.first, self.len) = (s, m);
        }
        let to = self.len.min(end - self.first);
        &self.positions[s - self.first..to]
    }
}

/// OffValue's byte when an output written in place is better filled by `memset` and then
/// patched with its OnValues ([`scatter_task`]) than built line by line: OffValue is one byte
/// repeated (zero, as most often) and rows are long enough that few lines hold an OnValue (at
/// least [`ONE_HOT_MEMSET_MIN_ROW_BYTES`]).
fn memset_byte<V: Value>(f: &Fill<'_, '_, V>) -> Option<u8> {
    if f.shape.depth * V::SIZE < ONE_HOT_MEMSET_MIN_ROW_BYTES {
        return None;
    }
    let mut bytes = [0u8; 8];
    f.off.write(&mut bytes);
    let bytes = &bytes[..V::SIZE];
    bytes.iter().all(|&b| b == bytes[0]).then_some(bytes[0])
}

/// [`scatter_body`] with the instructions of `f.isa`.
#[inline]
fn scatter_piece<V: Value>(
    f: &Fill<'_, '_, V>,
    start: usize,
    out: &mut [u8],
    cache: &mut PositionCache,
) {
    #[cfg(target_arch = "x86_64")]
    if f.isa.avx2() {
        // SAFETY: `Isa::avx2()` only holds when the CPU supports AVX2.
        unsafe { scatter_avx2(f, start, out, cache) };
        return;
    }
    scatter_body(f, start, out, cache);
}

/// [`scatter_body`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scatter_avx2<V: Value>(
    f: &Fill<'_, '_, V>,
    start: usize,
    out: &mut [u8],
    cache: &mut PositionCache,
) {
    scatter_body(f, start, out, cache);
}

/// Writes the output elements `start..start + out.len() / size`: OffValue everywhere, then
/// the OnValue of every sequence of the outer blocks the range touches, where it falls inside
/// (positions read through `cache`).
#[inline(always)]
fn scatter_body<V: Value>(
    f: &Fill<'_, '_, V>,
    start: usize,
    out: &mut [u8],
    cache: &mut PositionCache,
) {
    fill_pattern(out, f.off);
    put_on_values(f, start, out, cache);
}

/// Stores OnValue over `out` (the output elements `start..start + out.len() / size`, filled
/// with OffValue) wherever a sequence's OnValue falls in it (positions read through `cache`).
#[inline(always)]
fn put_on_values<V: Value>(
    f: &Fill<'_, '_, V>,
    start: usize,
    out: &mut [u8],
    cache: &mut PositionCache,
) {
    for_each_on_value(f, start, out.len() / V::SIZE, cache, |at| {
        f.on.write(&mut out[at * V::SIZE..]);
    });
}

/// Calls `put(at)` for the OnValue of every sequence of the outer blocks that the output
/// elements `start..start + n` touch, where it falls inside (`at` relative to `start`, below
/// `n`), in increasing order of `at` for an Axis-last output.
#[inline(always)]
fn for_each_on_value<V: Value>(
    f: &Fill<'_, '_, V>,
    start: usize,
    n: usize,
    cache: &mut PositionCache,
    mut put: impl FnMut(usize),
) {
    let OneHotShape { depth, inner, .. } = f.shape;
    let block = depth * inner;
    let o_first = start / block;
    let (mut s, seq_end) = (o_first * inner, sequences_touched(f.shape, start, n));
    // `base` is sequence `s`'s element at Axis coordinate 0: o * block + x.
    let (mut x, mut base) = (0usize, o_first * block);
    while s < seq_end {
        let positions = cache.from(f.indices, s, seq_end);
        for &p in positions {
            if p != NO_POSITION {
                let at = (base + p as usize * inner).wrapping_sub(start);
                if at < n {
                    put(at);
                }
            }
            x += 1;
            base += 1;
            if x == inner {
                x = 0;
                base += block - inner;
            }
        }
        s += positions.len();
    }
}

/// Fills `out` (whole elements) with `value`: the bytes before its first 64-byte boundary,
/// then whole aligned lines, then the rest. Stores that straddle lines were half of them in a
/// buffer 16 bytes past a boundary (as malloc returns a large one): OneHot INT64 -> INT64 of
/// 8 indices at depth 4096 (256 KiB, in the L2 cache) took 4.0 µs a call, against 2.3 µs for
/// memset to write its bytes.
#[inline(always)]
fn fill_pattern<V: Value>(out: &mut [u8], value: V) {
    // The value's bytes repeated over two lines: a line's worth from any phase of an element.
    let mut pattern = [0u8; 128];
    for c in pattern.chunks_exact_mut(V::SIZE) {
        value.write(c);
    }
    let head = out.as_ptr().align_offset(64).min(out.len());
    let (head_bytes, body) = out.split_at_mut(head);
    head_bytes.copy_from_slice(&pattern[..head]);
    let phase = head % V::SIZE;
    let line: [u8; 64] = pattern[phase..phase + 64].try_into().expect("64 bytes");
    let mut lines = body.chunks_exact_mut(64);
    for l in &mut lines {
        l.copy_from_slice(&line);
    }
    let rest = lines.into_remainder();
    let len = rest.len();
    rest.copy_from_slice(&line[..len]);
}

// --- Select: long inner runs -----------------------------------------------------------------

/// The output's base pointer, shared by the select workers, which write disjoint rectangles.
#[derive(Clone, Copy)]
struct SharedOut(*mut u8);

impl SharedOut {
    /// The `bytes` bytes at offset `at`.
    ///
    /// # Safety
    /// They must lie inside the output, and no other live reference may cover them.
    unsafe fn slice<'o>(self, at: usize, bytes: usize) -> &'o mut [u8] {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(at), bytes) }
    }
}

// SAFETY: the pointer is only used to build slices over disjoint rectangles of one output
// buffer that outlives every worker (`select_all` borrows it mutably for its whole run).
unsafe impl Send for SharedOut {}
// SAFETY: as above.
unsafe impl Sync for SharedOut {}

/// Runs the select kernel over the whole packed output: units of `o × a-range × x-range`,
/// sized to about [`TASK_ELEMENTS`] elements, in parallel when `mode.parallel`.
fn select_all<V: Value>(f: &Fill<'_, '_, V>, out: &mut [u8], mode: Mode) {
    let OneHotShape {
        outer,
        depth,
        inner,
    } = f.shape;
    let x_width = (TASK_ELEMENTS / depth)
        .next_multiple_of(ONE_HOT_POSITION_BLOCK)
        .max(ONE_HOT_POSITION_BLOCK)
        .min(inner);
    let a_width = (TASK_ELEMENTS / x_width).clamp(1, depth);
    let (x_units, a_units) = (inner.div_ceil(x_width), depth.div_ceil(a_width));
    let units = outer * x_units * a_units;
    let len = out.len();
    let base = SharedOut(out.as_mut_ptr());
    let stream = mode.stream;
    map_ranges(units, 1, mode.parallel, |u, _| {
        let (o, rest) = (u / (x_units * a_units), u % (x_units * a_units));
        let (xu, au) = (rest / a_units, rest % a_units);
        let x = xu * x_width..((xu + 1) * x_width).min(inner);
        let a = au * a_width..((au + 1) * a_width).min(depth);
        select_unit(f, o, a, x, stream, |at, bytes| {
            assert!(at + bytes <= len, "one-hot select: segment out of range");
            // SAFETY: `at + bytes` lies inside the output (asserted), which `select_all`
            // borrows mutably for the whole run; units partition the `(o, a, x)` space, so
            // no two segments (of this or any other unit) overlap, and each slice lives only
            // while its segment is written.
            unsafe { base.slice(at, bytes) }
        });
    });
}

/// Writes the rectangle `o × a × x` of the output; `segment(at, bytes)` gives the output
/// bytes `at..at + bytes`.
fn select_unit<'o, V: Value>(
    f: &Fill<'_, '_, V>,
    o: usize,
    a: std::ops::Range<usize>,
    x: std::ops::Range<usize>,
    stream: bool,
    segment: impl Fn(usize, usize) -> &'o mut [u8],
) {
    let OneHotShape { depth, inner, .. } = f.shape;
    let mut positions = [NO_POSITION; ONE_HOT_POSITION_BLOCK];
    let mut stage = [0u8; ONE_HOT_STAGE_BYTES];
    for x0 in x.clone().step_by(ONE_HOT_POSITION_BLOCK) {
        let m = (x.end - x0).min(ONE_HOT_POSITION_BLOCK);
        let positions = &mut positions[..m];
        f.indices.positions(o * inner + x0, positions);
        for row in a.clone() {
            let dst = segment(((o * depth + row) * inner + x0) * V::SIZE, m * V::SIZE);
            if stream {
                let staged = &mut stage[..m * V::SIZE];
                select_row(f, row as u32, positions, staged);
                copy_streaming(dst, staged, true);
            } else {
                select_row(f, row as u32, positions, dst);
            }
        }
    }
    if stream {
        stream_fence();
    }
}

/// [`select_body`] with the instructions of `f.isa`.
#[inline]
fn select_row<V: Value>(f: &Fill<'_, '_, V>, row: u32, positions: &[u32], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if f.isa.avx2() {
        // SAFETY: `Isa::avx2()` only holds when the CPU supports AVX2.
        unsafe { select_avx2(f, row, positions, out) };
        return;
    }
    select_body(f, row, positions, out);
}

/// [`select_body`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn select_avx2<V: Value>(f: &Fill<'_, '_, V>, row: u32, positions: &[u32], out: &mut [u8]) {
    select_body(f, row, positions, out);
}

/// Writes one row segment: OnValue where the position is `row`, OffValue elsewhere.
#[inline(always)]
fn select_body<V: Value>(f: &Fill<'_, '_, V>, row: u32, positions: &[u32], out: &mut [u8]) {
    let n = positions.len().min(out.len() / V::SIZE);
    let dst = out.as_mut_ptr().cast::<V>();
    let (on, off) = (f.on, f.off);
    for (j, &p) in positions[..n].iter().enumerate() {
        let value = V::pick(p == row, on, off);
        // SAFETY: `j < n <= out.len() / size`, so the element's bytes lie inside `out`; the
        // store is unaligned, and every bit pattern is a valid unsigned integer.
        unsafe { dst.add(j).write_unaligned(value) };
    }
}

#[cfg(test)]
mod tests {
    use super::{positions_run, NO_POSITION};
    use crate::element::OneHotIndex;
    use crate::test_tensors::{elements, packed, strided};
    use crate::tests::execute;
    use half::f16;
    use opconform_backend::{
        BackendError, DataType, Level, OneHotDesc, OperatorDesc, Tensor, TensorDesc,
    };

    const L4_1: u16 = 0x4100;

    fn one_hot(
        indices: &Tensor,
        values: &Tensor,
        output_type: DataType,
        output_sizes: &[u32],
        axis: u32,
        level: u16,
    ) -> Result<Tensor, BackendError> {
        let op = OperatorDesc::OneHot(OneHotDesc {
            indices: indices.desc.clone(),
            values: values.desc.clone(),
            output: TensorDesc::packed(output_type, output_sizes),
            axis,
        });
        execute(&op, &[indices.clone(), values.clone()], Level::dml(level))
            .map(|mut outputs| outputs.remove(0))
    }

    /// `fill_pattern` into `len` elements starting `offset` bytes into an aligned buffer, the
    /// bytes around them untouched.
    fn check_fill<V: super::Value + Copy>(value: V, bytes: &[u8], offset: usize, len: usize) {
        #[repr(align(64))]
        struct Aligned([u8; 512]);
        let mut buffer = Aligned([0xA5; 512]);
        let end = offset + len * bytes.len();
        super::fill_pattern(&mut buffer.0[offset..end], value);
        for (i, &b) in buffer.0.iter().enumerate() {
            let expected = if (offset..end).contains(&i) {
                bytes[(i - offset) % bytes.len()]
            } else {
                0xA5
            };
            assert_eq!(b, expected, "byte {i}, offset {offset}, {len} elements");
        }
    }

    #[test]
    fn off_value_fills_every_start_and_length_whole_elements() {
        for offset in 0..72 {
            for len in [0, 1, 7, 8, 9, 17, 40] {
                check_fill(0xC1u8, &[0xC1], offset, len);
                check_fill(0xB2C1u16, &[0xC1, 0xB2], offset, len);
                check_fill(0xD4C3_B2A1u32, &[0xA1, 0xB2, 0xC3, 0xD4], offset, len);
                let wide = 0x0807_0605_0403_0201u64;
                check_fill(wide, &wide.to_le_bytes(), offset, len);
            }
        }
    }

    #[test]
    fn positions_match_the_readable_definition_and_fit_below_no_position() {
        // Every index type, in and out of range, from the end or not, against
        // `OneHotIndex::position`; positions at or past `NO_POSITION` (depths beyond 2^32) read
        // as none.
        fn check<I: OneHotIndex + Copy + std::fmt::Debug>(values: &[I]) {
            for depth in [1u64, 4, 100, 1 << 20, 1 << 33] {
                for from_end in [false, true] {
                    let mut bytes = vec![0u8; values.len() * I::SIZE];
                    for (v, b) in values.iter().zip(bytes.chunks_exact_mut(I::SIZE)) {
                        v.write(b);
                    }
                    let mut out = vec![0u32; values.len()];
                    positions_run::<I>(&bytes, &mut out, depth, from_end);
                    for (&v, &got) in values.iter().zip(&out) {
                        let expected = v
                            .position(depth, from_end)
                            .and_then(|p| u32::try_from(p).ok())
                            .unwrap_or(NO_POSITION);
                        assert_eq!(got, expected, "{v:?} depth {depth} from_end {from_end}");
                    }
                }
            }
        }
        check::<i64>(&[
            0,
            3,
            4,
            99,
            -1,
            -4,
            -5,
            -100,
            1 << 32,
            (1 << 32) - 1,
            i64::MIN,
            i64::MAX,
        ]);
        check::<i32>(&[0, 3, 4, 99, -1, -4, -5, -100, i32::MIN, i32::MAX]);
        check::<u64>(&[0, 3, 4, 99, u64::MAX, 1 << 32, (1 << 32) - 1, (1 << 33) - 1]);
        check::<u32>(&[0, 3, 4, 99, u32::MAX, u32::MAX - 1]);
    }

    // --- The documented examples (004_2f0448eeeaeae8b3.txt, 000_257a17ba323924f1.txt) ---

    #[test]
    fn example_1() {
        let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x2000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            1., 0., 0., 0.,
            0., 0., 0., 1.,
            0., 0., 1., 0.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    #[test]
    fn example_2_different_axis() {
        let indices = packed::<u32>(&[1, 1, 1, 4], &[0, 2, 1, 0]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            2,
            0x2000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            1., 0., 0., 1.,
            0., 0., 1., 0.,
            0., 1., 0., 0.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    #[test]
    fn example_3_different_on_off_values() {
        let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 3, 2]);
        let values = packed::<f32>(&[1, 1, 3, 1], &[4., 2., 9.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x2000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            2., 4., 4., 4.,
            4., 4., 4., 2.,
            4., 4., 2., 4.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    #[test]
    fn example_4_negative_and_out_of_bounds_indices() {
        let indices = packed::<i32>(&[1, 1, 3, 1], &[-3, 100, 3]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let out = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x3000,
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [f32; 12] = [
            0., 1., 0., 0.,
            0., 0., 0., 0.,
            0., 0., 0., 1.,
        ];
        assert_eq!(elements::<f32>(&out), expected);
    }

    // --- Edge cases derived from the spec text ---

    #[test]
    fn negative_indices_at_and_below_minus_depth() {
        // Axis size 4: -4 is position 0, -5 and below are out of range (all OffValue).
        let indices = packed::<i64>(&[5, 1], &[-4, -5, i64::MIN, -1, 4]);
        let values = packed::<i32>(&[1, 2], &[7, 9]);
        let out = one_hot(&indices, &values, DataType::Int32, &[5, 4], 1, L4_1).unwrap();
        #[rustfmt::skip]
        let expected: [i32; 20] = [
            9, 7, 7, 7,
            7, 7, 7, 7,
            7, 7, 7, 7,
            7, 7, 7, 9,
            7, 7, 7, 7,
        ];
        assert_eq!(elements::<i32>(&out), expected);
    }

    #[test]
    fn huge_unsigned_and_wide_indices_are_out_of_range() {
        // u64::MAX must not wrap to -1; 2^32 must not truncate to 0.
        let indices = packed::<u64>(&[1, 3], &[u64::MAX, 1 << 32, 2]);
        let values = packed::<u8>(&[1, 2], &[0, 1]);
        let out = one_hot(&indices, &values, DataType::Uint8, &[3, 3], 0, L4_1).unwrap();
        // Axis 0: column j is the sequence of index j.
        #[rustfmt::skip]
        let expected: [u8; 9] = [
            0, 0, 0,
            0, 0, 0,
            0, 0, 1,
        ];
        assert_eq!(elements::<u8>(&out), expected);

        let indices = packed::<i64>(&[3, 1], &[1 << 32, (1 << 32) + 1, 1]);
        let out = one_hot(&indices, &values, DataType::Uint8, &[3, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<u8>(&out), [0, 0, 0, 0, 0, 1]);

        let indices = packed::<u32>(&[2, 1], &[u32::MAX, 4]);
        let out = one_hot(&indices, &values, DataType::Uint8, &[2, 5], 1, L4_1).unwrap();
        assert_eq!(elements::<u8>(&out), [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn on_value_is_first_element_of_innermost_non_unit_dimension() {
        // Values {2,3} packed: the innermost size > 1 is dimension 1, so OnValue is element
        // (0,1) = 20, not (1,0) = 40.
        let indices = packed::<u32>(&[1, 1], &[0]);
        let values = packed::<f32>(&[2, 3], &[10., 20., 30., 40., 50., 60.]);
        let out = one_hot(&indices, &values, DataType::Float32, &[1, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<f32>(&out), [20., 10.]);

        // Values {3,1}: innermost size > 1 is dimension 0; OnValue is element (1,0).
        let values = packed::<f32>(&[3, 1], &[10., 20., 30.]);
        let out = one_hot(&indices, &values, DataType::Float32, &[1, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<f32>(&out), [20., 10.]);
    }

    #[test]
    fn values_through_strides() {
        // Values {2,2} with strides {1,3}: buffer [a, b, c, d]; element (0,0) = a (OffValue),
        // element (0,1) sits at offset 3 = d (OnValue).
        let values = strided::<i16>(&[2, 2], Some(&[1, 3]), &[-1, -2, -3, -4]);
        let indices = packed::<u32>(&[3, 1], &[2, 0, 5]);
        let out = one_hot(&indices, &values, DataType::Int16, &[3, 3], 1, L4_1).unwrap();
        assert_eq!(elements::<i16>(&out), [-1, -1, -4, -4, -1, -1, -1, -1, -1]);

        // Values {2,4} with strides {5,0}: dimension 1 broadcasts, so its coordinate 1 is at
        // offset 0 too: OnValue equals OffValue.
        let values = strided::<i16>(&[2, 4], Some(&[5, 0]), &[6, 1, 1, 1, 1, 8]);
        let indices = packed::<u32>(&[1, 1], &[1]);
        let out = one_hot(&indices, &values, DataType::Int16, &[1, 3], 1, L4_1).unwrap();
        assert_eq!(elements::<i16>(&out), [6, 6, 6]);

        // Values {2,1} with strides {2,7}: OnValue is (1,0) at offset 2.
        let values = strided::<i16>(&[2, 1], Some(&[2, 7]), &[6, 1, 8]);
        let out = one_hot(&indices, &values, DataType::Int16, &[1, 3], 1, L4_1).unwrap();
        assert_eq!(elements::<i16>(&out), [6, 8, 6]);
    }

    #[test]
    fn strided_indices_and_output() {
        // Indices {2,1,2} with strides {1,0,2}: buffer [i0, i1, i2, i3] holds logical
        // (0,0,0)=i0, (0,0,1)=i2, (1,0,0)=i1, (1,0,1)=i3.
        let indices = strided::<i32>(&[2, 1, 2], Some(&[1, 0, 2]), &[0, 1, 2, -1]);
        let values = packed::<u16>(&[1, 1, 2], &[0, 1]);
        let op = OperatorDesc::OneHot(OneHotDesc {
            indices: indices.desc.clone(),
            values: values.desc.clone(),
            // Output {2,3,2} stored with padded strides {8,2,1}.
            output: TensorDesc::with_strides(DataType::Uint16, &[2, 3, 2], Some(&[8, 2, 1]))
                .unwrap(),
            axis: 1,
        });
        let out = execute(&op, &[indices, values], Level::dml(L4_1))
            .unwrap()
            .remove(0);
        // Sequences: (o=0,i=0) index 0; (0,1) index 2; (1,0) index 1; (1,1) index -1 = 2.
        #[rustfmt::skip]
        let expected: [u16; 12] = [
            1, 0,
            0, 0,
            0, 1,

            0, 0,
            1, 0,
            0, 1,
        ];
        assert_eq!(elements::<u16>(&out), expected);
        // Padding between rows keeps the poison.
        assert_eq!(&out.data[12..16], &[0xAB; 4]);
    }

    #[test]
    fn values_are_copied_bit_for_bit() {
        let nan = f32::from_bits(0x7fc1_2345);
        let values = packed::<f32>(&[1, 2], &[-0.0, nan]);
        let indices = packed::<u32>(&[2, 1], &[1, 0]);
        let out = one_hot(&indices, &values, DataType::Float32, &[2, 2], 1, L4_1).unwrap();
        assert_eq!(
            elements::<u32>(&out),
            [0x8000_0000, 0x7fc1_2345, 0x7fc1_2345, 0x8000_0000]
        );

        let values = packed::<f64>(&[1, 2], &[-0.0, f64::from_bits(0xfff0_0000_0000_0001)]);
        let out = one_hot(&indices, &values, DataType::Float64, &[2, 2], 1, L4_1).unwrap();
        assert_eq!(
            elements::<u64>(&out),
            [
                0x8000_0000_0000_0000,
                0xfff0_0000_0000_0001,
                0xfff0_0000_0000_0001,
                0x8000_0000_0000_0000
            ]
        );

        let values = packed::<f16>(&[1, 2], &[f16::from_bits(0x8000), f16::from_bits(0x7e01)]);
        let out = one_hot(&indices, &values, DataType::Float16, &[2, 2], 1, L4_1).unwrap();
        assert_eq!(elements::<u16>(&out), [0x8000, 0x7e01, 0x7e01, 0x8000]);
    }

    #[test]
    fn every_value_type_at_4_1() {
        let indices = packed::<u32>(&[1], &[1]);
        macro_rules! check {
            ($t:ty, $off:expr, $on:expr) => {{
                let values = packed::<$t>(&[2], &[$off, $on]);
                let out = one_hot(&indices, &values, values.desc.data_type, &[3], 0, L4_1).unwrap();
                assert_eq!(elements::<$t>(&out), [$off, $on, $off]);
            }};
        }
        check!(f64, 0.5, -2.5);
        check!(f32, 0.5, -2.5);
        check!(f16, f16::from_f32(0.5), f16::from_f32(-2.5));
        check!(i64, i64::MIN, i64::MAX);
        check!(i32, -7, 7);
        check!(i16, -7, 7);
        check!(i8, -7, 7);
        check!(u64, 3, u64::MAX);
        check!(u32, 3, u32::MAX);
        check!(u16, 3, u16::MAX);
        check!(u8, 3, u8::MAX);
    }

    #[test]
    fn eight_dimensions_and_large_parallel_output() {
        // 8-D, Axis 7 of size 5; indices run 0..=6 repeating (5 and 6 are out of range).
        let count = 2 * 3 * 2 * 2 * 3 * 2 * 2u32;
        let index_sizes = [2, 3, 2, 2, 3, 2, 2, 1];
        let indices_values: Vec<i32> = (0..count as i32).map(|i| i % 7).collect();
        let indices = packed::<i32>(&index_sizes, &indices_values);
        let values = packed::<i8>(&[1, 1, 1, 1, 1, 1, 1, 2], &[0, 1]);
        let out_sizes = [2, 3, 2, 2, 3, 2, 2, 5];
        let out = one_hot(&indices, &values, DataType::Int8, &out_sizes, 7, L4_1).unwrap();
        let got = elements::<i8>(&out);
        for (s, &index) in indices_values.iter().enumerate() {
            for a in 0..5 {
                let expected = i8::from(index == a);
                assert_eq!(
                    got[s * 5 + a as usize],
                    expected,
                    "sequence {s}, position {a}"
                );
            }
        }

        // Large enough to run in parallel: {300, 1000} with Axis 0 and Axis 1.
        let n = 300 * 1000;
        let idx: Vec<u32> = (0..1000).map(|i| (i * 7) % 311).collect();
        let indices = packed::<u32>(&[1, 1000], &idx);
        let values = packed::<f32>(&[1, 2], &[-1., 1.]);
        let out = one_hot(&indices, &values, DataType::Float32, &[300, 1000], 0, L4_1).unwrap();
        let got = elements::<f32>(&out);
        assert_eq!(got.len(), n);
        for a in 0..300 {
            for (i, &index) in idx.iter().enumerate() {
                let expected = if index == a as u32 { 1. } else { -1. };
                assert_eq!(got[a * 1000 + i], expected);
            }
        }
        let idx: Vec<u32> = (0..1000).map(|i| (i * 13) % 317).collect();
        let indices = packed::<u32>(&[1000, 1], &idx);
        let out = one_hot(&indices, &values, DataType::Float32, &[1000, 300], 1, L4_1).unwrap();
        let got = elements::<f32>(&out);
        for (s, &index) in idx.iter().enumerate() {
            for a in 0..300 {
                let expected = if index == a as u32 { 1. } else { -1. };
                assert_eq!(got[s * 300 + a], expected);
            }
        }
    }

    #[test]
    fn invalid_descriptors_name_rules() {
        // Indices Axis dimension of size 2.
        let indices = packed::<u32>(&[1, 1, 3, 2], &[0; 6]);
        let values = packed::<f32>(&[1, 1, 1, 2], &[0., 1.]);
        let err =
            one_hot(&indices, &values, DataType::Float32, &[1, 1, 3, 4], 3, L4_1).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.INDICES_AXIS_SIZE"]),
            "{err}"
        );
        // Signed indices before 3_0.
        let indices = packed::<i32>(&[1, 1, 3, 1], &[0, 1, 2]);
        let err = one_hot(
            &indices,
            &values,
            DataType::Float32,
            &[1, 1, 3, 4],
            3,
            0x2100,
        )
        .unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.SUPPORT_DATA_TYPE"]),
            "{err}"
        );
        // FLOAT64 values before 4_1.
        let indices = packed::<u32>(&[1, 1, 3, 1], &[0, 1, 2]);
        let values = packed::<f64>(&[1, 1, 1, 2], &[0., 1.]);
        let err = one_hot(
            &indices,
            &values,
            DataType::Float64,
            &[1, 1, 3, 4],
            3,
            0x4000,
        )
        .unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.SUPPORT_DATA_TYPE"]),
            "{err}"
        );
        // A one-element ValuesTensor.
        let values = packed::<f32>(&[1, 1, 1, 1], &[0.]);
        let err =
            one_hot(&indices, &values, DataType::Float32, &[1, 1, 3, 4], 3, L4_1).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["ONE_HOT.VALUES_ELEMENT_COUNT"]),
            "{err}"
        );
    }

    // --- The kernels against a plain reference, on every path ---

    use super::{fill_sized, Indices, Mode, OneHotShape};
    use crate::simd::Isa;
    use crate::strided::Layout;
    use crate::thresholds::{
        ONE_HOT_LINES_BLOCK_ROWS, ONE_HOT_LINES_MAX_DEPTH, ONE_HOT_POSITION_BLOCK,
        ONE_HOT_SCATTER_MAX_INNER, ONE_HOT_TASK_BYTES, TASK_ELEMENTS,
    };

    /// splitmix64, for reproducible test data.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// An index value of `data_type` around `0..depth` (some out of range, some negative for
    /// signed types, some extreme), its bytes, and the position it selects.
    fn draw_index(
        rng: &mut Rng,
        data_type: DataType,
        depth: i64,
        from_end: bool,
    ) -> (Vec<u8>, Option<usize>) {
        let r = rng.next();
        let signed = matches!(data_type, DataType::Int32 | DataType::Int64);
        let mut v: i128 = match r % 16 {
            0 => i128::from(depth),
            1 => i128::from(depth) + 1 + (r >> 40) as i128 % 5,
            2 => -1,
            3 => -i128::from(depth),
            4 => -i128::from(depth) - 1,
            5 => i128::from(i32::MAX) + 2,
            _ => ((r >> 8) % depth as u64) as i128,
        };
        if !signed && v < 0 {
            v = match data_type {
                DataType::Uint32 => v.rem_euclid(1 << 32),
                _ => v.rem_euclid(1 << 64),
            };
        }
        let (bytes, v) = match data_type {
            DataType::Uint32 => ((v as u32).to_le_bytes().to_vec(), i128::from(v as u32)),
            DataType::Uint64 => ((v as u64).to_le_bytes().to_vec(), i128::from(v as u64)),
            DataType::Int32 => ((v as i32).to_le_bytes().to_vec(), i128::from(v as i32)),
            _ => ((v as i64).to_le_bytes().to_vec(), i128::from(v as i64)),
        };
        let depth = i128::from(depth);
        let position = if (0..depth).contains(&v) {
            Some(v as usize)
        } else if from_end && (-depth..0).contains(&v) {
            Some((depth + v) as usize)
        } else {
            None
        };
        (bytes, position)
    }

    /// The output a plain loop gives: element (o, a, x) is `on` when sequence (o, x) selects a.
    fn reference(
        positions: &[Option<usize>],
        shape: OneHotShape,
        on: &[u8],
        off: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        for o in 0..shape.outer {
            for a in 0..shape.depth {
                for x in 0..shape.inner {
                    let hit = positions[o * shape.inner + x] == Some(a);
                    out.extend_from_slice(if hit { on } else { off });
                }
            }
        }
        out
    }

    /// Runs the fill on `shape` with every element size, a rotating index type, packed and
    /// strided indices, every ISA and every mode, against [`reference`].
    fn check_shape(rng: &mut Rng, outer: usize, depth: usize, inner: usize) {
        let shape = OneHotShape {
            outer,
            depth,
            inner,
        };
        let count = outer * inner;
        let types = [
            DataType::Int32,
            DataType::Uint32,
            DataType::Int64,
            DataType::Uint64,
        ];
        for (k, size) in [1usize, 2, 4, 8].into_iter().enumerate() {
            let data_type = types[(k + rng.next() as usize) % 4];
            let from_end = !rng.next().is_multiple_of(4);
            let isize = data_type.size_in_bytes();
            // Packed {outer, inner}, or strides {2·inner + 3, 2} (gaps in the buffer).
            let strides = if rng.next().is_multiple_of(2) {
                vec![inner as u32, 1]
            } else {
                vec![2 * inner as u32 + 3, 2]
            };
            let sizes = [outer as u32, inner as u32];
            let desc = TensorDesc::with_strides(data_type, &sizes, Some(&strides)).unwrap();
            let slots = (outer - 1) * strides[0] as usize + (inner - 1) * strides[1] as usize + 1;
            let mut data = vec![0xEEu8; slots * isize];
            let mut positions = vec![None; count];
            for o in 0..outer {
                for x in 0..inner {
                    let (bytes, p) = draw_index(rng, data_type, depth as i64, from_end);
                    let at = (o * strides[0] as usize + x * strides[1] as usize) * isize;
                    data[at..at + isize].copy_from_slice(&bytes);
                    positions[o * inner + x] = p;
                }
            }
            let layout = Layout::new(&desc, data.len(), "indices").unwrap();
            let indices = Indices::new(data_type, &data, &layout, depth as u64, from_end).unwrap();
            let on: Vec<u8> = (0..size).map(|i| 0xC0 | i as u8).collect();
            // Half the time one byte repeated, as zero is: deep rows written in place are
            // then filled by `memset` (`memset_byte`).
            let off: Vec<u8> = match rng.next() % 4 {
                0 => vec![0; size],
                1 => vec![0x5A; size],
                _ => (0..size).map(|i| 0x10 | i as u8).collect(),
            };
            let expected = reference(&positions, shape, &on, &off);
            for isa in Isa::available() {
                for (parallel, stream) in
                    [(false, false), (true, false), (false, true), (true, true)]
                {
                    let mode = Mode {
                        parallel,
                        stream,
                        isa,
                    };
                    // Every start within a line, element-aligned or not (the direct stream
                    // of deep rows needs aligned elements; the stage takes the others).
                    let at = (rng.next() % 64) as usize;
                    let mut buffer = vec![0xABu8; expected.len() + 64];
                    let out = &mut buffer[at..at + expected.len()];
                    fill_sized(&indices, shape, &on, &off, out, mode).unwrap();
                    assert!(
                        out == expected,
                        "{outer}x{depth}x{inner}, {size}-byte values, {data_type} indices \
                         (strides {strides:?}, from_end {from_end}), {mode:?}, at {at}"
                    );
                    assert!(buffer[..at].iter().all(|&b| b == 0xAB), "before the output");
                    let after = &buffer[at + expected.len()..];
                    assert!(after.iter().all(|&b| b == 0xAB), "after the output");
                }
            }
        }
    }

    #[test]
    fn scatter_kernel_matches_the_reference() {
        let mut rng = Rng(1);
        let limit = ONE_HOT_SCATTER_MAX_INNER;
        for (outer, depth, inner) in [
            (1, 1, 1),
            (3, 1, 1),
            (37, 5, 1),
            (9, 2, 3),
            (5, 3, 7),
            (100, 64, 1),
            // Deep rows, streamed line by line when streaming (rows of 256 bytes and more).
            (20, 1000, 1),
            (9, 4096, 1),
            (31, 300, 1),
            (3, 65, 1),
            (20, 33, 31),
            (2, 300, limit),
            // Many sequences per piece: several blocks of positions.
            (3 * ONE_HOT_POSITION_BLOCK + 5, 1, 1),
            (ONE_HOT_POSITION_BLOCK + 1, 3, 2),
            // Shallow Axis-last outputs of at least ONE_HOT_LINES_MIN_BYTES: the line kernel
            // (AVX-512 VBMI; with AVX2, in halves for rows of at most 32 bytes, those that
            // divide 32 bytes with fixed tables), every phase, and several blocks of rows.
            (5 * ONE_HOT_LINES_BLOCK_ROWS + 77, 1, 1),
            (2500, 2, 1),
            (1501, 3, 1),
            (700, 7, 1),
            (300, 16, 1),
            (150, 33, 1),
            (67, 63, 1),
            // Rows of more than 64 elements (a line holds parts of at most two rows), up to
            // the deepest whose positions fit a byte below the out-of-range one.
            (70, 65, 1),
            (301, 100, 1),
            (45, 254, 1),
            (200, ONE_HOT_LINES_MAX_DEPTH, 1),
            (ONE_HOT_TASK_BYTES / 200 + 9, 200, 1),
            // Rows of 1–2.5 lines (eight lines at a time) over several blocks of rows.
            (3 * ONE_HOT_LINES_BLOCK_ROWS + 5, 40, 1),
            (2 * ONE_HOT_LINES_BLOCK_ROWS + 3, 65, 1),
            // Several tasks (of ONE_HOT_TASK_BYTES: the most elements per task are UINT8's).
            (ONE_HOT_TASK_BYTES / 64 + 7, 64, 1),
            (ONE_HOT_TASK_BYTES / 3 + 7, 3, 1),
            (3, ONE_HOT_TASK_BYTES / 40 + 1, 13),
        ] {
            check_shape(&mut rng, outer, depth, inner);
        }
    }

    #[test]
    fn rows_of_a_line_or_more_keep_the_on_value_of_a_row_cut_by_the_chunk() {
        // Every row's OnValue in its last element, so that whenever a row ends inside a line
        // the next row starts in, that line holds it: at every element-aligned start of the
        // output within a line, every row length of 1 to 3 lines and a half, and over several
        // tasks (chunks that start inside a row).
        for size in [1usize, 2, 4, 8] {
            for depth in [64 / size, 96 / size, 128 / size + 1, 200 / size, 255 / size]
                .into_iter()
                .filter(|&d| d <= ONE_HOT_LINES_MAX_DEPTH)
            {
                let outer = (2 * ONE_HOT_TASK_BYTES / (depth * size)).max(64) + 3;
                let shape = OneHotShape {
                    outer,
                    depth,
                    inner: 1,
                };
                let idx = vec![depth as i32 - 1; outer];
                let desc = TensorDesc::packed(DataType::Int32, &[outer as u32]);
                let data: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
                let layout = Layout::new(&desc, data.len(), "indices").unwrap();
                let indices =
                    Indices::new(DataType::Int32, &data, &layout, depth as u64, false).unwrap();
                let (on, off) = (vec![0xC5u8; size], vec![0x1Au8; size]);
                let expected = reference(&vec![Some(depth - 1); outer], shape, &on, &off);
                for at in (0..64).step_by(size) {
                    for isa in Isa::available() {
                        for (parallel, stream) in [(false, true), (true, true), (false, false)] {
                            let mode = Mode {
                                parallel,
                                stream,
                                isa,
                            };
                            let mut buffer = vec![0xABu8; expected.len() + 64];
                            let out = &mut buffer[at..at + expected.len()];
                            fill_sized(&indices, shape, &on, &off, out, mode).unwrap();
                            assert!(
                                out == expected,
                                "depth {depth}, {size}-byte values, at {at}, {mode:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn select_kernel_matches_the_reference() {
        let mut rng = Rng(2);
        let limit = ONE_HOT_SCATTER_MAX_INNER;
        let block = ONE_HOT_POSITION_BLOCK;
        for (outer, depth, inner) in [
            (1, 1, limit + 1),
            (2, 7, limit + 1),
            (3, 5, block + 300),
            (1, 2, 3 * block + 1),
            // Several units along every axis of the rectangle space.
            (2, 40, block + 76),
            (1, 3, TASK_ELEMENTS + 5),
            (2, TASK_ELEMENTS / block + 9, block * 2),
        ] {
            check_shape(&mut rng, outer, depth, inner);
        }
    }

    #[test]
    fn through_execute_with_both_layouts_of_a_large_output() {
        // Axis last and Axis 0 on an output large enough to run in parallel and stream
        // (at least STREAM_MIN_BYTES): compared with the plain reference.
        let n = (crate::thresholds::STREAM_MIN_BYTES / 4 / 64 + 100) as u32;
        let mut rng = Rng(3);
        let idx: Vec<i32> = (0..n).map(|_| (rng.next() % 70) as i32 - 3).collect();
        let positions: Vec<Option<usize>> = idx
            .iter()
            .map(|&i| match i {
                0..=63 => Some(i as usize),
                -64..=-1 => Some((64 + i) as usize),
                _ => None,
            })
            .collect();
        let values = packed::<f32>(&[1, 2], &[0.5, -1.5]);
        let (on, off) = ((-1.5f32).to_le_bytes(), 0.5f32.to_le_bytes());
        let indices = packed::<i32>(&[n, 1], &idx);
        let out = one_hot(&indices, &values, DataType::Float32, &[n, 64], 1, L4_1).unwrap();
        let shape = OneHotShape {
            outer: n as usize,
            depth: 64,
            inner: 1,
        };
        assert!(out.data == reference(&positions, shape, &on, &off));
        let indices = packed::<i32>(&[1, n], &idx);
        let out = one_hot(&indices, &values, DataType::Float32, &[64, n], 0, L4_1).unwrap();
        let shape = OneHotShape {
            outer: 1,
            depth: 64,
            inner: n as usize,
        };
        assert!(out.data == reference(&positions, shape, &on, &off));
    }

    /// Streams `value` over `out` with 16-byte non-temporal stores (the benchmark's write
    /// floor).
    fn stream_fill(out: &mut [u8], value: u8) {
        let src = [value; 8192];
        for c in out.chunks_mut(8192) {
            crate::simd::copy_streaming(c, &src[..c.len()], true);
        }
        crate::simd::stream_fence();
    }

    /// Times the fill against a non-temporal memset of the same output, interleaved, on 1 and
    /// 2 threads: `cargo test --release --lib one_hot_speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn one_hot_speed() {
        use std::time::Instant;
        let n = 1usize << 21;
        let mut rng = Rng(9);
        let idx: Vec<u8> = (0..n)
            .flat_map(|_| ((rng.next() % 64) as i32).to_le_bytes())
            .collect();
        for (size, depth, axis_last) in [
            (4usize, 64usize, true),
            (2, 64, true),
            (8, 64, true),
            (4, 64, false),
            (1, 3, true),
        ] {
            let (outer, inner) = if axis_last { (n, 1) } else { (1, n) };
            let desc = TensorDesc::packed(DataType::Int32, &[outer as u32, inner as u32]);
            let layout = crate::strided::Layout::new(&desc, idx.len(), "i").unwrap();
            let indices = Indices::new(DataType::Int32, &idx, &layout, depth as u64, true).unwrap();
            let shape = OneHotShape {
                outer,
                depth,
                inner,
            };
            let mut out = vec![0u8; n * depth * size];
            let (on, off) = (vec![1u8; size], vec![0u8; size]);
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mode = Mode {
                    parallel: threads > 1,
                    stream: true,
                    isa: Isa::detect(),
                };
                let (mut ours, mut floor) = (Vec::new(), Vec::new());
                for _ in 0..7 {
                    let t = Instant::now();
                    pool.install(|| {
                        fill_sized(&indices, shape, &on, &off, &mut out, mode).unwrap()
                    });
                    ours.push(t.elapsed().as_secs_f64());
                    let t = Instant::now();
                    pool.install(|| {
                        use rayon::prelude::*;
                        let chunk = out.len().div_ceil(threads);
                        out.par_chunks_mut(chunk).for_each(|c| stream_fill(c, 3));
                    });
                    floor.push(t.elapsed().as_secs_f64());
                }
                ours.sort_by(f64::total_cmp);
                floor.sort_by(f64::total_cmp);
                println!(
                    "{size}-byte depth {depth} axis_last {axis_last} {threads}t: ours {:.2} ms, nt fill {:.2} ms, ratio {:.2}",
                    ours[3] * 1e3, floor[3] * 1e3, ours[3] / floor[3]
                );
            }
        }
    }
}
