//! `DML_NONZERO_COORDINATES`: the number of nonzero input elements, and for each of them, in
//! increasing element order, a row holding its last `N` coordinates (`N` being the last size
//! of OutputCoordinatesTensor; coordinates before the input's first dimension read 0).
//! -0.0 and +0.0 are zero; NaN is not. Rows at or past the count are left untouched.
//!
//! With a packed output (`Job::run_single_pass`) the input is cut into blocks that workers
//! claim in order. A block's nonzero masks (a bit per element, from AVX2 compares where the CPU
//! has them) are computed and kept; their bit counts give the block's count; the worker waits
//! for the block before it to publish where its rows end (a running prefix sum), publishes
//! where its own end, and writes its rows from the masks, so a packed input is read once and
//! the order holds. Rows are gathered in a small buffer and copied out, with non-temporal
//! stores when the output is large. A strided input is counted, then read again for its rows;
//! a strided output is counted first, written packed, and scattered through its strides.

use crate::element::{Element, Zero};
use crate::parallel::{map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::simd::{copy_streaming, nonzero_masks, stream_fence, MASK_GROUP, STREAM_MIN_BYTES};
use crate::strided::{internal, write_packed, Layout, Nest, MAX_DIMS};
use half::f16;
use opconform_backend::{BackendError, DataType, NonZeroCoordinatesDesc, Tensor};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs `DML_NONZERO_COORDINATES` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &NonZeroCoordinatesDesc,
    input: &Tensor,
    count: &mut Tensor,
    coordinates: &mut Tensor,
) -> Result<(), BackendError> {
    let input_layout = Layout::new(&desc.input, input.data.len(), "InputTensor")?;
    let count_layout = Layout::new(&desc.output_count, count.data.len(), "OutputCountTensor")?;
    let coordinates_layout = Layout::new(
        &desc.output_coordinates,
        coordinates.data.len(),
        "OutputCoordinatesTensor",
    )?;
    let rank = coordinates_layout.sizes.len();
    if rank < 2 {
        return Err(internal(
            "OutputCoordinatesTensor has fewer than 2 dimensions",
        ));
    }
    let rows = coordinates_layout.sizes[rank - 2];
    let n = coordinates_layout.sizes[rank - 1];
    if rows != input_layout.count || n > MAX_DIMS || coordinates_layout.element_size != 4 {
        return Err(internal("OutputCoordinatesTensor does not fit the input"));
    }
    if count_layout.count != 1 || count_layout.element_size != 4 {
        return Err(internal("OutputCountTensor is not a 32-bit scalar"));
    }
    let job = Job {
        data: &input.data,
        input: &input_layout,
        n,
        coordinates: &coordinates_layout,
    };
    let total = match desc.input.data_type {
        DataType::Float64 => job.run::<f64>(&mut coordinates.data)?,
        DataType::Float32 => job.run::<f32>(&mut coordinates.data)?,
        DataType::Float16 => job.run::<f16>(&mut coordinates.data)?,
        DataType::Int64 => job.run::<i64>(&mut coordinates.data)?,
        DataType::Int32 => job.run::<i32>(&mut coordinates.data)?,
        DataType::Int16 => job.run::<i16>(&mut coordinates.data)?,
        DataType::Int8 => job.run::<i8>(&mut coordinates.data)?,
        DataType::Uint64 => job.run::<u64>(&mut coordinates.data)?,
        DataType::Uint32 => job.run::<u32>(&mut coordinates.data)?,
        DataType::Uint16 => job.run::<u16>(&mut coordinates.data)?,
        DataType::Uint8 => job.run::<u8>(&mut coordinates.data)?,
    };
    let total = u32::try_from(total).map_err(|_| internal("nonzero count exceeds UINT32"))?;
    // The scalar's only element is at offset 0 whatever its strides.
    total.write(&mut count.data[..4]);
    Ok(())
}

/// Input bytes per block of the single-pass kernel: small enough that the block's masks (or,
/// for a strided input, its elements) are still in the core's cache when its rows are written.
use crate::thresholds::NONZERO_BLOCK_BYTES as BLOCK_BYTES;

/// Elements whose nonzero flags form one bit mask.
const GROUP: usize = MASK_GROUP;

/// A prefix-sum slot not yet published.
const NOT_READY: usize = usize::MAX;

/// One NonZeroCoordinates computation over checked layouts.
struct Job<'a> {
    data: &'a [u8],
    input: &'a Layout,
    /// Coordinates per row.
    n: usize,
    coordinates: &'a Layout,
}

impl Job<'_> {
    /// Writes the rows and returns the nonzero count.
    fn run<T: Zero>(&self, out: &mut [u8]) -> Result<usize, BackendError> {
        if self.coordinates.is_packed() {
            self.run_single_pass::<T>(out)
        } else {
            self.run_two_passes::<T>(out)
        }
    }

    /// Packed rows, in one pass over a packed input. The input is cut into blocks of
    /// [`BLOCK_BYTES`]; workers claim blocks in order, count one, wait until the block before
    /// has published where its rows end (the running prefix sum), publish where theirs end,
    /// and write their rows while the block's masks are still in cache.
    fn run_single_pass<T: Zero>(&self, out: &mut [u8]) -> Result<usize, BackendError> {
        let len = self.input.count;
        let row_bytes = self.n * 4;
        let out = out
            .get_mut(..len * row_bytes)
            .ok_or_else(|| internal("OutputCoordinatesTensor shorter than its rows"))?;
        let merged = Nest::merged(&self.input.sizes, [&self.input.strides]);
        let unmerged = Nest::unmerged(&self.input.sizes, [&self.input.strides]);
        let block = (BLOCK_BYTES / T::SIZE).max(GROUP);
        let blocks = len.div_ceil(block);
        let range = |b: usize| (b * block, ((b + 1) * block).min(len));
        // Streamed when the rows could outgrow the caches.
        let stream = out.len() >= STREAM_MIN_BYTES;
        let workers = if len >= PARALLEL_MIN_ELEMENTS {
            threads().min(blocks)
        } else {
            1
        };
        // A packed input is read once: its nonzero masks, kept per block, give the count and
        // then the rows. A strided one is read twice (counted, then rows written).
        let packed_input = self.input.is_packed();
        let count_block = |start: usize, end: usize, bitmap: &mut Vec<u64>| {
            if packed_input {
                self.block_masks::<T>(start, end, bitmap)
            } else {
                self.count::<T>(&merged, start, end)
            }
        };
        let write_block = |start: usize, end: usize, bitmap: &[u64], region: &mut [u8]| {
            let source = if packed_input {
                Source::Bitmap(bitmap)
            } else {
                Source::Input
            };
            self.write_rows::<T>(&unmerged, start, end, region, stream, source);
        };
        if workers <= 1 {
            let mut total = 0;
            let mut bitmap = Vec::new();
            for b in 0..blocks {
                let (start, end) = range(b);
                let count = count_block(start, end, &mut bitmap);
                let region = &mut out[total * row_bytes..(total + count) * row_bytes];
                write_block(start, end, &bitmap, region);
                total += count;
            }
            return Ok(total);
        }

        let next = AtomicUsize::new(0);
        let ends: Vec<AtomicUsize> = (0..blocks).map(|_| AtomicUsize::new(NOT_READY)).collect();
        let failed = AtomicBool::new(false);
        let shared = SharedBytes::new(out);
        rayon::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|_| {
                    // A panicking worker would leave the others waiting for its prefix.
                    let _guard = FailOnPanic(&failed);
                    let mut bitmap = Vec::new();
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= blocks {
                            return;
                        }
                        let (start, end) = range(b);
                        let count = count_block(start, end, &mut bitmap);
                        let first = if b == 0 {
                            0
                        } else {
                            match wait_for(&ends[b - 1], &failed) {
                                Some(end) => end,
                                None => return,
                            }
                        };
                        ends[b].store(first + count, Ordering::Release);
                        let region = shared.region(first * row_bytes, count * row_bytes);
                        // SAFETY: `region` lies inside `out` (checked by `SharedBytes::region`)
                        // and is handed to this block alone: the blocks' row ranges
                        // `first..first + count` are consecutive prefix sums of their counts,
                        // so they are disjoint, and each block is claimed once.
                        let region =
                            unsafe { std::slice::from_raw_parts_mut(region, count * row_bytes) };
                        write_block(start, end, &bitmap, region);
                    }
                });
            }
        });
        if failed.load(Ordering::Relaxed) {
            return Err(internal("a NonZeroCoordinates worker failed"));
        }
        Ok(ends[blocks - 1].load(Ordering::Acquire))
    }

    /// Strided rows: counts per range first, then writes each range's rows, packed, where the
    /// counts before it end, and scatters them through the strides.
    fn run_two_passes<T: Zero>(&self, out: &mut [u8]) -> Result<usize, BackendError> {
        let len = self.input.count;
        let parallel = len >= PARALLEL_MIN_ELEMENTS;
        let chunk = TASK_ELEMENTS.max(len.div_ceil(8 * threads()));
        let merged = Nest::merged(&self.input.sizes, [&self.input.strides]);
        let counts = map_ranges(len, chunk, parallel, |start, end| {
            self.count::<T>(&merged, start, end)
        });
        let total: usize = counts.iter().sum();
        let rows = self
            .coordinates
            .shrunk(self.coordinates.sizes.len() - 2, total);
        let unmerged = Nest::unmerged(&self.input.sizes, [&self.input.strides]);
        let row_bytes = self.n * 4;
        write_packed(&rows, out, |packed| {
            let mut slices = Vec::with_capacity(counts.len());
            let mut rest = packed;
            for &c in &counts {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(c * row_bytes);
                slices.push(head);
                rest = tail;
            }
            let write = |(i, slice): (usize, &mut [u8])| {
                let start = i * chunk;
                let end = (start + chunk).min(len);
                self.write_rows::<T>(&unmerged, start, end, slice, false, Source::Input);
            };
            if parallel {
                slices.into_par_iter().enumerate().for_each(write);
            } else {
                slices.into_iter().enumerate().for_each(write);
            }
            Ok(())
        })?;
        Ok(total)
    }

    /// The nonzero masks of elements `start..end` of a packed input into `bitmap` (bit `j` of
    /// word `w` for element `start + 64 w + j`); returns how many are nonzero.
    fn block_masks<T: Zero>(&self, start: usize, end: usize, bitmap: &mut Vec<u64>) -> usize {
        let len = end - start;
        let bytes = &self.data[start * T::SIZE..end * T::SIZE];
        let whole = len / GROUP;
        bitmap.clear();
        bitmap.resize(len.div_ceil(GROUP), 0);
        let (full, tail) = bitmap.split_at_mut(whole);
        group_masks::<T>(bytes, full);
        if let Some(last) = tail.first_mut() {
            for (j, e) in bytes[whole * GROUP * T::SIZE..]
                .chunks_exact(T::SIZE)
                .enumerate()
            {
                *last |= u64::from(T::read(e).is_nonzero()) << j;
            }
        }
        bitmap.iter().map(|m| m.count_ones() as usize).sum()
    }

    /// Nonzero elements among `start..end` (row-major).
    fn count<T: Zero>(&self, nest: &Nest<1>, start: usize, end: usize) -> usize {
        let [step] = nest.inner_strides();
        let mut count = 0;
        nest.rows(start, end, |_, [offset], len, _| {
            if step == 1 {
                count +=
                    count_contiguous::<T>(&self.data[offset * T::SIZE..(offset + len) * T::SIZE]);
            } else {
                count += (0..len)
                    .filter(|j| T::read(&self.data[(offset + j * step) * T::SIZE..]).is_nonzero())
                    .count();
            }
        });
        count
    }

    /// Writes the rows of the nonzero elements among `start..end` into `out`, packed; `out`
    /// holds exactly their rows.
    fn write_rows<T: Zero>(
        &self,
        nest: &Nest<1>,
        start: usize,
        end: usize,
        out: &mut [u8],
        stream: bool,
        source: Source<'_>,
    ) {
        let n = self.n;
        let rank = self.input.sizes.len();
        let dims = nest.dims();
        let walked = dims.len();
        let [step] = nest.inner_strides();
        // The column in a row of each input dimension's coordinate, if among the last `n`.
        let column = |d: usize| (d + n).checked_sub(rank);
        let varying = if walked == 0 {
            None
        } else {
            column(dims[walked - 1])
        };
        let mut stage = Stage::new(out, n, varying, stream);
        nest.rows(start, end, |flat, [offset], len, coords| {
            // The row of the run's first element; only the innermost walked coordinate varies
            // along the run.
            let mut row = [[0u8; 4]; MAX_DIMS];
            for (i, &d) in dims.iter().enumerate() {
                if let Some(c) = column(d) {
                    row[c] = (coords[i] as u32).to_le_bytes();
                }
            }
            let first = if walked == 0 { 0 } else { coords[walked - 1] };
            if let Source::Bitmap(bitmap) = source {
                // The masks of the run's elements, up to 64 at a time.
                let mut j = 0;
                while j < len {
                    let n = (len - j).min(GROUP);
                    let mask = bits_at(bitmap, flat - start + j, n);
                    if mask != 0 {
                        stage.emit(&row, mask, first + j);
                    }
                    j += n;
                }
            } else if step == 1 {
                // 64 elements at a time: their nonzero flags as a bit mask, then a row per set
                // bit (no branch per element).
                let bytes = &self.data[offset * T::SIZE..(offset + len) * T::SIZE];
                let full = len / GROUP * GROUP * T::SIZE;
                let mut masks = [0u64; MASKS];
                for (c, piece) in bytes[..full].chunks(MASKS * GROUP * T::SIZE).enumerate() {
                    let count = piece.len() / (GROUP * T::SIZE);
                    group_masks::<T>(piece, &mut masks[..count]);
                    for (g, &mask) in masks[..count].iter().enumerate() {
                        if mask != 0 {
                            stage.emit(&row, mask, first + (c * MASKS + g) * GROUP);
                        }
                    }
                }
                let tail_first = first + (len / GROUP) * GROUP;
                for (j, e) in bytes[full..].chunks_exact(T::SIZE).enumerate() {
                    if T::read(e).is_nonzero() {
                        stage.emit(&row, 1, tail_first + j);
                    }
                }
            } else {
                for j in 0..len {
                    if T::read(&self.data[(offset + j * step) * T::SIZE..]).is_nonzero() {
                        stage.emit(&row, 1, first + j);
                    }
                }
            }
        });
        stage.finish();
    }
}

/// Nonzero elements of contiguous `bytes`.
///
/// On x86-64 the loop is compiled a second time for AVX2, used when the CPU has it.
#[inline]
fn count_contiguous<T: Zero>(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { count_contiguous_avx2::<T>(bytes) };
    }
    count_contiguous_generic::<T>(bytes)
}

/// [`count_contiguous_generic`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_contiguous_avx2<T: Zero>(bytes: &[u8]) -> usize {
    count_contiguous_generic::<T>(bytes)
}

/// The body of [`count_contiguous`]: 32-bit counters (vector lanes as wide as the elements),
/// summed per piece of at most 2^20 elements.
#[inline(always)]
fn count_contiguous_generic<T: Zero>(bytes: &[u8]) -> usize {
    bytes
        .chunks((1 << 20) * T::SIZE)
        .map(|piece| {
            piece
                .chunks_exact(T::SIZE)
                .fold(0u32, |n, e| n + u32::from(T::read(e).is_nonzero())) as usize
        })
        .sum()
}

/// Masks computed at a time for a contiguous run of a strided input.
const MASKS: usize = 16;

/// Where [`Job::write_rows`] finds which elements are nonzero.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// The block's masks ([`Job::block_masks`]).
    Bitmap(&'a [u64]),
    /// The input itself.
    Input,
}

/// The `n <= 64` bits of `bitmap` from bit `at` on.
#[inline]
fn bits_at(bitmap: &[u64], at: usize, n: usize) -> u64 {
    let (word, shift) = (at / 64, at % 64);
    let mut bits = bitmap[word] >> shift;
    if shift != 0 {
        if let Some(&next) = bitmap.get(word + 1) {
            bits |= next << (64 - shift);
        }
    }
    if n < 64 {
        bits & ((1 << n) - 1)
    } else {
        bits
    }
}

/// The nonzero masks of the `masks.len()` whole groups at the start of `bytes`: with AVX2
/// compares where the CPU has them ([`nonzero_masks`]), else [`nonzero_mask`] per group.
#[inline]
fn group_masks<T: Zero>(bytes: &[u8], masks: &mut [u64]) {
    if !nonzero_masks(bytes, T::SIZE, T::SIGNIFICANT, masks) {
        for (mask, group) in masks.iter_mut().zip(bytes.chunks_exact(GROUP * T::SIZE)) {
            *mask = nonzero_mask::<T>(group);
        }
    }
}

/// The nonzero flags of the [`GROUP`] elements of `group` as a bit mask (bit `j` for element
/// `j`): flags as bytes (a vectorisable loop), gathered eight at a time by a multiplication.
#[inline(always)]
fn nonzero_mask<T: Zero>(group: &[u8]) -> u64 {
    let mut flags = [0u8; GROUP];
    for (flag, e) in flags.iter_mut().zip(group.chunks_exact(T::SIZE)) {
        *flag = u8::from(T::read(e).is_nonzero());
    }
    let mut mask = 0u64;
    for (i, eight) in flags.chunks_exact(8).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(eight);
        // Byte k (0 or 1) lands in bit 56 + k; no two partial products share a bit.
        let bits = u64::from_le_bytes(word).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= bits << (8 * i);
    }
    mask
}

/// Bytes of rows gathered before they are copied out.
use crate::thresholds::NONZERO_STAGE_BYTES as STAGE_BYTES;

/// Groups with at least this many nonzero elements compute their coordinates without a branch
/// per bit ([`compress`]).
use crate::thresholds::NONZERO_DENSE_GROUP as DENSE_GROUP;

/// Rows gathered in a small buffer (in L1) and copied to their place in large pieces, with
/// non-temporal stores when `stream`.
struct Stage<'a> {
    out: &'a mut [u8],
    written: usize,
    buffer: [u8; STAGE_BYTES],
    len: usize,
    /// Coordinates per row.
    n: usize,
    /// The column of the varying coordinate (`usize::MAX` when none varies).
    varying: usize,
    stream: bool,
}

impl<'a> Stage<'a> {
    fn new(out: &'a mut [u8], n: usize, varying: Option<usize>, stream: bool) -> Stage<'a> {
        Stage {
            out,
            written: 0,
            buffer: [0; STAGE_BYTES],
            len: 0,
            n,
            varying: varying.unwrap_or(usize::MAX),
            stream,
        }
    }

    /// Appends a row per set bit `j` of `mask` (a [`GROUP`]'s flags): `row` with `first + j`
    /// in its varying column.
    #[inline(always)]
    fn emit(&mut self, row: &[[u8; 4]; MAX_DIMS], mask: u64, first: usize) {
        let bytes = mask.count_ones() as usize * self.n * 4;
        if self.len + bytes > STAGE_BYTES {
            self.flush(false);
        }
        let out = &mut self.buffer[self.len..self.len + bytes];
        self.len += bytes;
        let (varying, first) = (self.varying, first as u32);
        match self.n {
            1 => emit_rows::<1>(out, row, varying, mask, first),
            2 => emit_rows::<2>(out, row, varying, mask, first),
            3 => emit_rows::<3>(out, row, varying, mask, first),
            4 => emit_rows::<4>(out, row, varying, mask, first),
            5 => emit_rows::<5>(out, row, varying, mask, first),
            6 => emit_rows::<6>(out, row, varying, mask, first),
            7 => emit_rows::<7>(out, row, varying, mask, first),
            8 => emit_rows::<8>(out, row, varying, mask, first),
            _ => emit_rows::<MAX_DIMS>(out, row, varying, mask, first),
        }
    }

    /// Copies the gathered rows out: all of them, or (`all` false) as many as end on a
    /// 64-byte boundary of `out`'s memory, so that streamed pieces join up.
    fn flush(&mut self, all: bool) {
        let mut n = self.len;
        if !all {
            let end = self.out.as_ptr() as usize + self.written + n;
            n -= (end % 64).min(n);
        }
        copy_streaming(
            &mut self.out[self.written..self.written + n],
            &self.buffer[..n],
            self.stream,
        );
        self.written += n;
        self.buffer.copy_within(n..self.len, 0);
        self.len -= n;
    }

    /// Copies out what is left.
    ///
    /// # Panics
    /// If the rows did not fill `out` exactly (the count and the rows disagree).
    fn finish(mut self) {
        self.flush(true);
        if self.stream {
            stream_fence();
        }
        assert_eq!(
            self.written,
            self.out.len(),
            "NonZeroCoordinates rows miscounted"
        );
    }
}

/// Writes into `out` (room for exactly one row per set bit of `mask`) the rows of `N`
/// coordinates of the set bits `j` of `mask`: `row` with `first + j` in column `varying`.
///
/// `N` is a constant, so every row is a fixed-size copy of the template plus one 4-byte store
/// of its coordinate.
#[inline(always)]
fn emit_rows<const N: usize>(
    out: &mut [u8],
    row: &[[u8; 4]; MAX_DIMS],
    varying: usize,
    mask: u64,
    first: u32,
) {
    let template = &row.as_flattened()[..4 * N];
    if varying < N {
        let at = 4 * varying;
        for_each_row::<N>(out, mask, first, |dst, coordinate| {
            dst.copy_from_slice(template);
            dst[at..at + 4].copy_from_slice(&coordinate.to_le_bytes());
        });
    } else {
        for_each_row::<N>(out, mask, first, |dst, _| dst.copy_from_slice(template));
    }
}

/// Calls `write(row, first + j)` for each set bit `j` of `mask`, in increasing order, with the
/// consecutive `4 * N`-byte rows of `out`. Dense masks have their coordinates computed first
/// ([`compress`]), so that the row loop is a counted loop with no branch per bit.
#[inline(always)]
fn for_each_row<const N: usize>(
    out: &mut [u8],
    mask: u64,
    first: u32,
    write: impl Fn(&mut [u8], u32),
) {
    let rows = out.chunks_exact_mut(4 * N);
    if rows.len() >= DENSE_GROUP {
        let mut coordinates = [0u32; GROUP + 8];
        let count = compress(mask, first, &mut coordinates);
        for (dst, &coordinate) in rows.zip(&coordinates[..count]) {
            write(dst, coordinate);
        }
    } else {
        let mut mask = mask;
        for dst in rows {
            write(dst, first.wrapping_add(mask.trailing_zeros()));
            mask &= mask.wrapping_sub(1);
        }
    }
}

/// For each byte value, the positions of its set bits, lowest first (unused slots 0).
const SET_BITS: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if (byte >> bit) & 1 == 1 {
                table[byte][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// The coordinates `first + j` of the set bits `j` of `mask`, in increasing order, written
/// to the start of `out`; returns how many. Eight bits at a time: eight slots are written
/// from a table and the end moves by the byte's bit count (the extra slots are overwritten
/// or ignored), so there is no branch per bit.
#[inline(always)]
fn compress(mask: u64, first: u32, out: &mut [u32; GROUP + 8]) -> usize {
    let mut count = 0;
    for (i, byte) in mask.to_le_bytes().into_iter().enumerate() {
        let base = first.wrapping_add(8 * i as u32);
        let slots = &mut out[count..count + 8];
        for (slot, &bit) in slots.iter_mut().zip(&SET_BITS[usize::from(byte)]) {
            *slot = base.wrapping_add(u32::from(bit));
        }
        count += byte.count_ones() as usize;
    }
    count
}

/// A byte buffer whose disjoint regions are written by several threads.
struct SharedBytes {
    start: *mut u8,
    len: usize,
}

// SAFETY: `SharedBytes` only hands out pointers; the code that turns them into slices makes
// sure no two threads get overlapping regions.
unsafe impl Sync for SharedBytes {}

impl SharedBytes {
    fn new(bytes: &mut [u8]) -> SharedBytes {
        SharedBytes {
            start: bytes.as_mut_ptr(),
            len: bytes.len(),
        }
    }

    /// The start of `len` bytes at `offset`.
    ///
    /// # Panics
    /// If they are not inside the buffer.
    fn region(&self, offset: usize, len: usize) -> *mut u8 {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "region outside the buffer"
        );
        // SAFETY: `offset <= self.len`, so the pointer stays inside (or one past) the buffer.
        unsafe { self.start.add(offset) }
    }
}

/// Sets its flag when dropped during a panic.
struct FailOnPanic<'a>(&'a AtomicBool);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Waits until `slot` is published and returns it, or `None` when `failed` is set first.
fn wait_for(slot: &AtomicUsize, failed: &AtomicBool) -> Option<usize> {
    let mut spins = 0u32;
    loop {
        let value = slot.load(Ordering::Acquire);
        if value != NOT_READY {
            return Some(value);
        }
        if failed.load(Ordering::Relaxed) {
            return None;
        }
        spins = spins.saturating_add(1);
        if spins < 256 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_tensors::{elements, packed, strided, Scalar};
    use crate::tests::execute;
    use half::f16;
    use opconform_backend::{
        BackendError, DataType, Level, NonZeroCoordinatesDesc, OperatorDesc, Tensor, TensorDesc,
    };

    /// Runs NonZeroCoordinates; returns the count and the coordinates tensor.
    fn nonzero(
        input: &Tensor,
        count_sizes: &[u32],
        coordinates: TensorDesc,
        level: u16,
    ) -> Result<(u32, Tensor), BackendError> {
        let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
            input: input.desc.clone(),
            output_count: TensorDesc::packed(DataType::Uint32, count_sizes),
            output_coordinates: coordinates,
        });
        let mut outputs = execute(&op, std::slice::from_ref(input), Level::dml(level))?;
        let coordinates = outputs.remove(1);
        let count = elements::<u32>(&outputs[0])[0];
        Ok((count, coordinates))
    }

    /// The first `count` rows of a coordinates tensor with `n` columns.
    fn rows(coordinates: &Tensor, count: u32, n: usize) -> Vec<Vec<u32>> {
        elements::<u32>(coordinates)
            .chunks(n)
            .take(count as usize)
            .map(<[u32]>::to_vec)
            .collect()
    }

    fn packed_coordinates(sizes: &[u32]) -> TensorDesc {
        TensorDesc::packed(DataType::Uint32, sizes)
    }

    // --- The documented example (001_3a78d9feca2f1488.txt) ---

    #[test]
    fn documented_example() {
        #[rustfmt::skip]
        let values = [
            1.0f32, 0.0, 0.0, 2.0,
            -0.0, 3.5, 0.0, -5.2,
        ];
        let input = packed::<f32>(&[1, 1, 2, 4], &values);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 8, 3]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 4);
        assert_eq!(
            rows(&coordinates, count, 3),
            [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]]
        );
        // Rows at and past the count are left as they were (poisoned).
        assert!(coordinates.data[4 * 3 * 4..].iter().all(|&b| b == 0xAB));
    }

    // --- Edge cases ---

    #[test]
    fn signed_zero_is_zero_and_nan_is_not() {
        let input = packed::<f16>(
            &[1, 1, 1, 4],
            &[
                f16::from_bits(0x8000),
                f16::NAN,
                f16::from_bits(0x0000),
                f16::from_bits(0x8001),
            ],
        );
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 4, 1]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 2);
        assert_eq!(rows(&coordinates, count, 1), [[1], [3]]);

        let input = packed::<f32>(&[1, 1, 1, 3], &[f32::NAN, -0.0, -1e-45]);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 3, 1]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 2);
        assert_eq!(rows(&coordinates, count, 1), [[0], [2]]);
    }

    #[test]
    fn increasing_element_order_from_the_documented_sentence() {
        // Nonzero values at {1,0}, {1,2} and {0,5} come out as [[0,5],[1,0],[1,2]].
        let mut values = [0i32; 12];
        values[6] = 4; // {1,0}
        values[8] = -2; // {1,2}
        values[5] = 9; // {0,5}
        let input = packed::<i32>(&[1, 1, 2, 6], &values);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 12, 2]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 3);
        assert_eq!(rows(&coordinates, count, 2), [[0, 5], [1, 0], [1, 2]]);
    }

    #[test]
    fn n_between_effective_rank_and_dimension_count() {
        // Input {1,3,1,2}: effective rank 3. N = 3 gives (d1, d2, d3), N = 4 adds d0 = 0.
        let input = packed::<u8>(&[1, 3, 1, 2], &[0, 1, 0, 0, 7, 7]);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 6, 3]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 3);
        assert_eq!(
            rows(&coordinates, count, 3),
            [[0, 0, 1], [2, 0, 0], [2, 0, 1]]
        );
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 6, 4]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 3);
        assert_eq!(
            rows(&coordinates, count, 4),
            [[0, 0, 0, 1], [0, 2, 0, 0], [0, 2, 0, 1]]
        );
    }

    #[test]
    fn five_dimensions_and_trailing_unit_dimension() {
        // Input {1,2,1,2,1}: nonzero at (0,0,0,1,0) and (0,1,0,0,0).
        let input = packed::<i16>(&[1, 2, 1, 2, 1], &[0, -3, 5, 0]);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1, 1],
            packed_coordinates(&[1, 1, 1, 4, 5]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 2);
        assert_eq!(
            rows(&coordinates, count, 5),
            [[0, 0, 0, 1, 0], [0, 1, 0, 0, 0]]
        );
    }

    #[test]
    fn strided_and_broadcast_inputs() {
        // Logical {2,3} stored transposed (strides {1,2}): buffer [a00,a10,a01,a11,a02,a12].
        let input = strided::<i8>(&[2, 3], Some(&[1, 2]), &[0, 1, 2, 0, 0, 3]);
        // Logical rows: [0, 2, 0] and [1, 0, 3].
        let (count, coordinates) =
            nonzero(&input, &[1, 1], packed_coordinates(&[6, 2]), 0x4000).unwrap();
        assert_eq!(count, 3);
        assert_eq!(rows(&coordinates, count, 2), [[0, 1], [1, 0], [1, 2]]);
        // Broadcast rows: {3,2} with strides {0,1} over [0, 5].
        let input = strided::<u16>(&[3, 2], Some(&[0, 1]), &[0, 5]);
        let (count, coordinates) =
            nonzero(&input, &[1, 1], packed_coordinates(&[6, 2]), 0x4000).unwrap();
        assert_eq!(count, 3);
        assert_eq!(rows(&coordinates, count, 2), [[0, 1], [1, 1], [2, 1]]);
    }

    #[test]
    fn strided_outputs() {
        // Coordinates {4,2} stored column-major (strides {1,4}); count {1,1} with strides {5,9}.
        let input = packed::<u32>(&[2, 2], &[0, 8, 9, 0]);
        let coordinates =
            TensorDesc::with_strides(DataType::Uint32, &[4, 2], Some(&[1, 4])).unwrap();
        let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
            input: input.desc.clone(),
            output_count: TensorDesc::with_strides(DataType::Uint32, &[1, 1], Some(&[5, 9]))
                .unwrap(),
            output_coordinates: coordinates,
        });
        let outputs = execute(&op, &[input], Level::dml(0x4000)).unwrap();
        assert_eq!(elements::<u32>(&outputs[0]), [2]);
        let words: Vec<u32> = outputs[1]
            .data
            .chunks(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let poison = 0xABAB_ABAB;
        // Column 0 at offsets 0..4, column 1 at offsets 4..8; rows 2 and 3 untouched.
        assert_eq!(words, [0, 1, poison, poison, 1, 0, poison, poison]);
    }

    #[test]
    fn rank_one_and_every_input_type_at_4_0() {
        fn check<T: Scalar>(zero: T, one: T) {
            let input = packed::<T>(&[5], &[one, zero, zero, one, one]);
            let (count, coordinates) =
                nonzero(&input, &[1], packed_coordinates(&[5, 1]), 0x4000).unwrap();
            assert_eq!(count, 3, "{}", T::TYPE);
            assert_eq!(rows(&coordinates, count, 1), [[0], [3], [4]]);
        }
        check::<f32>(-0.0, 0.25);
        check::<f16>(f16::from_bits(0x8000), f16::from_f32(-2.0));
        check::<i32>(0, i32::MIN);
        check::<i16>(0, -1);
        check::<i8>(0, i8::MIN);
        check::<u32>(0, u32::MAX);
        check::<u16>(0, 1 << 15);
        check::<u8>(0, 128);
    }

    #[test]
    fn large_inputs_of_every_element_size() {
        // 70001 elements of each size (1, 2 and 4 bytes), in two rows: whole 64-element groups in several blocks
        // and workers, a partial last group, and signed zeros of the float types.
        fn check<T: Scalar>(values: impl Fn(usize) -> (T, bool)) {
            let count = 2 * 70_001;
            let (data, flags): (Vec<T>, Vec<bool>) = (0..count).map(values).unzip();
            let input = packed::<T>(&[2, 70_001], &data);
            let (got, coordinates) = nonzero(
                &input,
                &[1, 1],
                packed_coordinates(&[count as u32, 2]),
                0x4100,
            )
            .unwrap();
            let expected: Vec<Vec<u32>> = (0..count)
                .filter(|&i| flags[i])
                .map(|i| vec![(i / 70_001) as u32, (i % 70_001) as u32])
                .collect();
            assert_eq!(got as usize, expected.len(), "{}", T::TYPE);
            assert_eq!(rows(&coordinates, got, 2), expected, "{}", T::TYPE);
        }
        let pattern = |i: usize| (i * 7919 + i / 300) % 11 < 3;
        check::<u8>(|i| {
            if pattern(i) {
                ((i % 255 + 1) as u8, true)
            } else {
                (0, false)
            }
        });
        check::<f16>(|i| {
            if pattern(i) {
                (f16::from_bits(0x8001 + (i % 7) as u16), true)
            } else {
                (f16::from_bits(0x8000 * (i % 2) as u16), false)
            }
        });
        check::<i16>(|i| {
            if pattern(i) {
                ((i as i16) | 1, true)
            } else {
                (0, false)
            }
        });
        check::<f32>(|i| {
            if pattern(i) {
                (f32::from_bits(0x8000_0001 + i as u32 % 5), true)
            } else {
                (if i % 2 == 0 { 0.0 } else { -0.0 }, false)
            }
        });
        check::<u32>(|i| {
            if pattern(i) {
                (1 << (i % 32), true)
            } else {
                (0, false)
            }
        });
    }

    #[test]
    fn all_unit_sizes() {
        // Effective rank 0: N = 1, and the single row holds the last coordinate, 0.
        let input = packed::<i8>(&[1, 1, 1, 1], &[-4]);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 1, 1]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 1);
        assert_eq!(rows(&coordinates, count, 1), [[0]]);
    }

    #[test]
    fn dense_eight_dimensional_input_with_wide_rows() {
        // {1,1,1,2,3,4,5,6}: effective rank 5; N = 6 and N = 8 (24- and 32-byte rows).
        let sizes = [1usize, 1, 1, 2, 3, 4, 5, 6];
        let count: usize = sizes.iter().product();
        let values: Vec<f32> = (0..count)
            .map(|i| if (i * 37) % 10 < 7 { i as f32 } else { -0.0 })
            .collect();
        let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
        let input = packed::<f32>(&sizes32, &values);
        for n in [6usize, 8] {
            let mut expected = Vec::new();
            for (i, &v) in values.iter().enumerate() {
                if v != 0.0 {
                    let mut coords = [0u32; 8];
                    let mut rest = i;
                    for d in (0..8).rev() {
                        coords[d] = (rest % sizes[d]) as u32;
                        rest /= sizes[d];
                    }
                    expected.push(coords[8 - n..].to_vec());
                }
            }
            let (got, coordinates) = nonzero(
                &input,
                &[1; 8],
                packed_coordinates(&[1, 1, 1, 1, 1, 1, count as u32, n as u32]),
                0x4000,
            )
            .unwrap();
            assert_eq!(got as usize, expected.len());
            assert_eq!(rows(&coordinates, got, n), expected, "N = {n}");
        }
    }

    #[test]
    fn all_zero_input() {
        let input = packed::<f32>(&[1, 1, 2, 2], &[0.0, -0.0, 0.0, -0.0]);
        let (count, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 4, 2]),
            0x3000,
        )
        .unwrap();
        assert_eq!(count, 0);
        assert!(coordinates.data.iter().all(|&b| b == 0xAB));
    }

    #[test]
    fn large_input_matches_a_naive_scan() {
        // {3, 300, 250}: nonzero where a simple pattern says so; parallel ranges must keep
        // increasing order across range boundaries.
        let sizes = [3usize, 300, 250];
        let count = sizes.iter().product::<usize>();
        let values: Vec<u16> = (0..count)
            .map(|i| {
                if (i * 7919) % 13 < 4 {
                    (i % 500) as u16 + 1
                } else {
                    0
                }
            })
            .collect();
        let input = packed::<u16>(&[3, 300, 250], &values);
        let (got_count, coordinates) = nonzero(
            &input,
            &[1, 1, 1],
            packed_coordinates(&[1, count as u32, 3]),
            0x4000,
        )
        .unwrap();
        let mut expected = Vec::new();
        for a in 0..sizes[0] {
            for b in 0..sizes[1] {
                for c in 0..sizes[2] {
                    if values[(a * sizes[1] + b) * sizes[2] + c] != 0 {
                        expected.push(vec![a as u32, b as u32, c as u32]);
                    }
                }
            }
        }
        assert_eq!(got_count as usize, expected.len());
        assert_eq!(rows(&coordinates, got_count, 3), expected);
    }

    /// The rows of the nonzero elements of a packed tensor of `sizes`, last `n` coordinates.
    fn naive_rows(values: &[f32], sizes: &[usize], n: usize) -> Vec<Vec<u32>> {
        let rank = sizes.len();
        let mut rows = Vec::new();
        for (i, v) in values.iter().enumerate() {
            if v.to_bits() & 0x7fff_ffff != 0 {
                let mut coords = vec![0u32; rank];
                let mut rest = i;
                for d in (0..rank).rev() {
                    coords[d] = (rest % sizes[d]) as u32;
                    rest /= sizes[d];
                }
                let mut row = vec![0u32; n.saturating_sub(rank)];
                row.extend_from_slice(&coords[rank.saturating_sub(n)..]);
                rows.push(row);
            }
        }
        rows
    }

    #[test]
    fn single_pass_at_every_density_matches_a_naive_scan() {
        // {1, 6, 4, 9000}: 216000 elements, many blocks and workers. Each of the 24 rows of 9000
        // has its own density, from empty to full, so that mask groups are empty, sparse
        // (the bit loop), dense (the table path) and full, with -0.0 and NaN mixed in.
        let sizes = [1usize, 6, 4, 9000];
        let count: usize = sizes.iter().product();
        let percents = [0, 1, 3, 10, 12, 25, 50, 75, 90, 99, 100];
        let mut x: u64 = 7;
        let values: Vec<f32> = (0..count)
            .map(|i| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let percent = percents[(i / sizes[3]) % percents.len()];
                if (x >> 33) % 100 < percent {
                    match (x >> 20) % 50 {
                        0 => f32::NAN,
                        _ => 1.0 + (x >> 40) as f32,
                    }
                } else if (x >> 20) & 1 == 0 {
                    -0.0
                } else {
                    0.0
                }
            })
            .collect();
        let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
        let input = packed::<f32>(&sizes32, &values);
        for n in [3usize, 4] {
            let (got, coordinates) = nonzero(
                &input,
                &[1, 1, 1, 1],
                packed_coordinates(&[1, 1, count as u32, n as u32]),
                0x4000,
            )
            .unwrap();
            let expected = naive_rows(&values, &sizes, n);
            assert_eq!(got as usize, expected.len(), "N = {n}");
            assert_eq!(rows(&coordinates, got, n), expected, "N = {n}");
            // Rows past the count keep the poison.
            assert!(coordinates.data[got as usize * n * 4..]
                .iter()
                .all(|&b| b == 0xAB));
        }

        // The same through a strided coordinates tensor (the two-pass path): rows padded to 4.
        let strided_desc = TensorDesc::with_strides(
            DataType::Uint32,
            &[1, 1, count as u32, 3],
            Some(&[0, 0, 4, 1]),
        )
        .unwrap();
        let (got, coordinates) = nonzero(&input, &[1, 1, 1, 1], strided_desc, 0x4000).unwrap();
        let expected = naive_rows(&values, &sizes, 3);
        assert_eq!(got as usize, expected.len());
        let words = elements::<u32>(&coordinates);
        let strided_rows: Vec<Vec<u32>> = words
            .chunks(3)
            .take(got as usize)
            .map(<[u32]>::to_vec)
            .collect();
        assert_eq!(strided_rows, expected);
    }

    #[test]
    fn invalid_descriptors_name_rules() {
        let input = packed::<f32>(&[1, 1, 12, 5], &[0.0; 60]);
        // N = 1 is below the effective rank 2.
        let err = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, 60, 1]),
            0x3000,
        )
        .unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["NONZERO_COORDINATES.COORDINATES_N"]),
            "{err}"
        );
        // A 2-D input is not allowed before 4_0.
        let input = packed::<f32>(&[2, 2], &[0.0; 4]);
        let err = nonzero(&input, &[1, 1], packed_coordinates(&[4, 2]), 0x3000).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["NONZERO_COORDINATES.SUPPORT_DIMENSION_COUNT"]),
            "{err}"
        );
        // FLOAT64 input is in no table.
        let input = packed::<f64>(&[2, 2], &[0.0; 4]);
        let err = nonzero(&input, &[1, 1], packed_coordinates(&[4, 2]), 0x4100).unwrap_err();
        assert!(
            matches!(&err, BackendError::Invalid { rules, .. } if rules == &["NONZERO_COORDINATES.SUPPORT_DATA_TYPE"]),
            "{err}"
        );
    }
}
