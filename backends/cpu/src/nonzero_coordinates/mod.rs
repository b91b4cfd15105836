//! `DML_NONZERO_COORDINATES`: the number of nonzero input elements, and for each of them, in
//! increasing element order, a row holding its last `N` coordinates (`N` being the last size
//! of OutputCoordinatesTensor; coordinates before the input's first dimension read 0).
//! -0.0 and +0.0 are zero; NaN is not. Rows at or past the count are left untouched.
//!
//! Count, then write, chunk by chunk. The input is cut into chunks of whole 64-element groups
//! ([`NONZERO_READ_AHEAD_BYTES`] of input, fewer when there would be too few per thread), which
//! workers (one per thread, or the caller alone below [`PARALLEL_MIN_ELEMENTS`]) take in order.
//! For each chunk it takes, a worker
//!
//! 1. computes its nonzero flags into one bit per element (AVX-512 tests into mask registers,
//!    or AVX2 compare-and-movemask, on a packed input; a strided input is walked through its
//!    strides), whose bit count is the chunk's row count;
//! 2. waits until the chunks before it are counted, and publishes where its rows end (a
//!    chained prefix sum, [`Chain`]);
//! 3. writes its rows from its bits into its own part of the output, prefetching into L2 the
//!    input of the chunk it will likely take next, so that reading and writing overlap
//!    instead of taking turns; then takes its next chunk.
//!
//! The chunk's bits (an eighth of a byte per element) stay in cache between the passes, so
//! the input is read once. One parallel call wakes the pool once: the workers wait for each
//! other only at step 2, where the chunk before was taken earlier by a worker that is running
//! (see [`Chain`] for why no wait can block for good). The former design, two parallel loops
//! per window of 2^23 elements, let no thread read while the rows were written and took 1.1–1.4
//! times as long on two threads (round 24 in `docs/performance.md`).
//!
//! Rows are written by [`emit`]: the coordinates of a run of the innermost dimension are
//! followed incrementally (a division only when a set bit lies past the current run), so a
//! 64-element group inside one run is a template row (the outer coordinates) plus a varying
//! last coordinate. Dense groups build eight rows at a time with AVX2 permutes and blends;
//! sparse ones loop over their set bits. Under AVX-512, a chunk with under a row per word or
//! so builds rows only for its nonzero words, found eight at a time; an innermost dimension
//! shorter than a group is not followed run by run: [`short_runs`] computes each block of
//! sixteen rows' coordinates at once, in vectors. Under AVX-512 VBMI2, sparse chunks gather their set bits
//! across words into full blocks of sixteen and divide each block's element offsets into
//! coordinates ([`sparse_blocks`]). Outputs of at least
//! [`STREAM_MIN_BYTES`](crate::thresholds::STREAM_MIN_BYTES) are gathered in a small buffer and
//! copied out with non-temporal stores; smaller ones are written in place, and so are, on some
//! AMD CPUs, chunks by element width and density ([`Tuning::chunk_streams`]).
//!
//! On one worker, a chunk after a very sparse one of wide elements skips both passes: it is
//! scanned in blocks of a few KiB, each block's rows written as soon as its masks are made
//! ([`scattered`]).
//!
//! Inputs of at most [`NONZERO_TINY_MAX_ELEMENTS`] skip the chunks and row kernels: their
//! masks in one pass, then their rows from them ([`tiny`]), as the kernels' setup cost more
//! than such an input's rows.
//!
//! A strided output is counted first, written packed into a temporary and scattered through
//! its strides.

mod emit;
mod scattered;
mod short_runs;
mod sparse_blocks;
#[cfg(test)]
mod tests;
mod tiny;

use crate::element::{Element, Zero};
use crate::parallel::{threads, PARALLEL_MIN_ELEMENTS};
use crate::simd::{
    amd_cpu, amd_family_17h, amd_family_19h, amd_zen5, nonzero_masks, Isa, MASK_GROUP,
    STREAM_MIN_BYTES,
};
use crate::strided::{internal, write_packed, Layout, Nest, MAX_DIMS};
use crate::thresholds::{
    NONZERO_AMD_STREAM_MAX_SHARE, NONZERO_BLOCK_BYTES, NONZERO_CHUNKS_PER_WORKER,
    NONZERO_MASK_PREFETCH_BYTES, NONZERO_READ_AHEAD_BYTES, NONZERO_SCATTER_BLOCK_WORDS,
    NONZERO_SCATTER_MIN_BYTES_PER_ROW, NONZERO_SCATTER_MIN_ELEMENT_BYTES,
    NONZERO_TINY_MAX_ELEMENTS, NONZERO_ZEN2_IN_PLACE_DENSITY, NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY,
    NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES, NONZERO_ZEN4_MASK_PREFETCH_AGAIN_MIN_ELEMENT_BYTES,
    NONZERO_ZEN4_NARROW_ELEMENT_BYTES, NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY,
    NONZERO_ZEN5_NARROW_ELEMENT_BYTES, NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY,
};
use emit::{RowKernel, RowShape, MAX_N};
use half::f16;
use opconform_backend::{BackendError, DataType, NonZeroCoordinatesDesc, Tensor, TensorDesc};
use rayon::prelude::*;
use sparse_blocks::Divisors;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs `DML_NONZERO_COORDINATES` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &NonZeroCoordinatesDesc,
    input: &Tensor,
    count: &mut Tensor,
    coordinates: &mut Tensor,
) -> Result<(), BackendError> {
    run_with(desc, input, count, coordinates, Tuning::new(Isa::detect()))
}

/// Where the kernel changes path: the thresholds, or smaller values in tests.
#[derive(Debug, Clone, Copy)]
struct Tuning {
    isa: Isa,
    /// How rows are built (the widest kernel `isa` allows, or a narrower one in tests).
    rows: RowKernel,
    /// The most elements per chunk (the thresholds: no cap).
    chunk: usize,
    /// Input elements from which the passes run in parallel.
    parallel_min: usize,
    /// Output bytes from which rows are streamed out.
    stream_min: usize,
    /// The most bytes of rows per input byte a chunk streams out; a chunk with more writes
    /// its rows in place ([`NONZERO_AMD_STREAM_MAX_SHARE`] on AMD CPUs without AVX-512, else
    /// no limit).
    stream_share: f64,
    /// Chunks of elements of at most `narrow_element_bytes` whose share of nonzero elements is
    /// at most this write their rows in place: `[one worker, several]`
    /// ([`NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY`] on AMD Zen 5 with AVX-512,
    /// [`NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY`] on Zen 4, [`NONZERO_ZEN2_IN_PLACE_DENSITY`]
    /// for every width on Zen 2, else none).
    narrow_in_place_density: [f64; 2],
    /// The widest elements `narrow_in_place_density` applies to.
    narrow_element_bytes: usize,
    /// Chunks of wider elements whose share of nonzero elements is at least this write their
    /// rows in place: `[[one worker, several]; 2]` for 2-byte elements, then 4 bytes or more
    /// ([`NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY`] on AMD Zen 4, else never).
    dense_in_place_density: [[f64; 2]; 2],
    /// How far ahead (bytes) the masks pass prefetches a chunk of elements of at least
    /// [`NONZERO_ZEN4_MASK_PREFETCH_AGAIN_MIN_ELEMENT_BYTES`] that the rows before it read
    /// ahead already ([`NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES`] on AMD Zen 4, else 0: not again).
    mask_prefetch_again: usize,
    /// One worker scans a chunk in blocks of this many mask words, writing their rows at
    /// once ([`scattered`]), after a chunk with at least `scatter_min_bytes_per_row` input
    /// bytes per row ([`NONZERO_SCATTER_BLOCK_WORDS`],
    /// [`NONZERO_SCATTER_MIN_BYTES_PER_ROW`]; smaller blocks in tests).
    scatter_block_words: usize,
    scatter_min_bytes_per_row: usize,
    /// The narrowest elements scanned so ([`NONZERO_SCATTER_MIN_ELEMENT_BYTES`]).
    scatter_min_element_bytes: usize,
    /// Inputs of at most this many elements write their rows in one pass from their masks
    /// ([`Job::write_tiny`]; [`NONZERO_TINY_MAX_ELEMENTS`], 0 in tests of the other paths).
    tiny_max: usize,
}

/// The AMD cores whose NonZeroCoordinates thresholds differ from the others' (Zen 2 with AVX2,
/// Zen 4 and 5 with AVX-512).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zen {
    /// Family 17h (AVX2).
    Two,
    /// Family 19h with AVX-512.
    Four,
    /// Family 1Ah.
    Five,
}

impl Zen {
    /// Which of them runs the kernels of `isa`: `Isa::Avx2` on family 17h and `Isa::Avx512`
    /// run their tuning, other kernels (those of tests, or Zen 3's) none.
    fn of(isa: Isa) -> Option<Zen> {
        if isa == Isa::Avx2 && amd_family_17h() {
            Some(Zen::Two)
        } else if isa != Isa::Avx512 {
            None
        } else if amd_zen5() {
            Some(Zen::Five)
        } else if amd_family_19h() {
            Some(Zen::Four)
        } else {
            None
        }
    }
}

/// What decides whether one chunk streams its rows ([`Tuning::chunk_streams`]).
#[derive(Debug, Clone, Copy)]
struct ChunkLoad {
    /// Rows, and their bytes.
    rows: usize,
    row_bytes: usize,
    /// Input elements, and the bytes of one.
    elements: usize,
    element_bytes: usize,
    /// Whether several workers share the pass.
    shared: bool,
}

impl Tuning {
    /// The thresholds of [`crate::thresholds`].
    fn new(isa: Isa) -> Tuning {
        let zen = Zen::of(isa);
        let (narrow_in_place_density, narrow_element_bytes) = match zen {
            Some(Zen::Five) => (
                NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY,
                NONZERO_ZEN5_NARROW_ELEMENT_BYTES,
            ),
            Some(Zen::Four) => (
                NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY,
                NONZERO_ZEN4_NARROW_ELEMENT_BYTES,
            ),
            Some(Zen::Two) => (NONZERO_ZEN2_IN_PLACE_DENSITY, usize::MAX),
            None => ([-1.0; 2], 0),
        };
        Tuning {
            isa,
            rows: RowKernel::for_isa(isa),
            chunk: usize::MAX,
            parallel_min: PARALLEL_MIN_ELEMENTS,
            stream_min: STREAM_MIN_BYTES,
            // Measured on Zen 3 (AVX2); Zen 4, with AVX-512, kept the streaming it was tuned
            // with, and Zen 2 streams by density alone (`narrow_in_place_density`).
            stream_share: if amd_cpu() && isa != Isa::Avx512 && zen != Some(Zen::Two) {
                NONZERO_AMD_STREAM_MAX_SHARE
            } else {
                f64::INFINITY
            },
            narrow_in_place_density,
            narrow_element_bytes,
            dense_in_place_density: if zen == Some(Zen::Four) {
                NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY
            } else {
                [[f64::INFINITY; 2]; 2]
            },
            mask_prefetch_again: if zen == Some(Zen::Four) {
                NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES
            } else {
                0
            },
            scatter_block_words: NONZERO_SCATTER_BLOCK_WORDS,
            scatter_min_bytes_per_row: NONZERO_SCATTER_MIN_BYTES_PER_ROW,
            scatter_min_element_bytes: NONZERO_SCATTER_MIN_ELEMENT_BYTES,
            tiny_max: NONZERO_TINY_MAX_ELEMENTS,
        }
    }

    /// How far ahead the masks pass prefetches a chunk of `T` that the rows before it read
    /// ahead ([`Tuning::mask_prefetch_again`] for wide enough elements, else 0).
    fn mask_prefetch_again<T: Zero>(&self) -> usize {
        if T::SIZE >= NONZERO_ZEN4_MASK_PREFETCH_AGAIN_MIN_ELEMENT_BYTES {
            self.mask_prefetch_again
        } else {
            0
        }
    }

    /// Whether one worker scans the chunk after one of `elements` elements of `T` holding
    /// `rows` rows block by block ([`scattered`]).
    fn scatters_after<T: Zero>(&self, rows: usize, elements: usize) -> bool {
        T::SIZE >= self.scatter_min_element_bytes
            && scattered::sparse_enough::<T>(rows, elements, self.scatter_min_bytes_per_row)
    }

    /// Whether a chunk streams its rows out, in a pass that streams (`pass_streams`).
    fn chunk_streams(&self, pass_streams: bool, chunk: ChunkLoad) -> bool {
        let density = chunk.rows as f64 / chunk.elements.max(1) as f64;
        let narrow_in_place = chunk.element_bytes <= self.narrow_element_bytes
            && density <= self.narrow_in_place_density[usize::from(chunk.shared)];
        let dense_in_place = chunk.element_bytes > self.narrow_element_bytes
            && density
                >= self.dense_in_place_density[usize::from(chunk.element_bytes >= 4)]
                    [usize::from(chunk.shared)];
        pass_streams
            && !narrow_in_place
            && !dense_in_place
            && chunk.row_bytes as f64
                <= self.stream_share * (chunk.elements * chunk.element_bytes) as f64
    }
}

/// [`run`] with explicit tuning (tests force every path with it).
fn run_with(
    desc: &NonZeroCoordinatesDesc,
    input: &Tensor,
    count: &mut Tensor,
    coordinates: &mut Tensor,
    tuning: Tuning,
) -> Result<(), BackendError> {
    let shape = Dims::new(&desc.input, input.data.len(), "InputTensor")?;
    let count_dims = Dims::new(&desc.output_count, count.data.len(), "OutputCountTensor")?;
    let out_dims = Dims::new(
        &desc.output_coordinates,
        coordinates.data.len(),
        "OutputCoordinatesTensor",
    )?;
    let rank = out_dims.rank;
    if rank < 2 {
        return Err(internal(
            "OutputCoordinatesTensor has fewer than 2 dimensions",
        ));
    }
    let rows = out_dims.sizes[rank - 2];
    let n = out_dims.sizes[rank - 1];
    if rows != shape.count || n > MAX_N || out_dims.element_size != 4 {
        return Err(internal("OutputCoordinatesTensor does not fit the input"));
    }
    if count_dims.count != 1 || count_dims.element_size != 4 {
        return Err(internal("OutputCountTensor is not a 32-bit scalar"));
    }
    let job = Job {
        data: &input.data,
        input: &shape,
        n,
        tuning,
    };
    let out = Output {
        desc: &desc.output_coordinates,
        packed: out_dims.is_packed(),
        data: &mut coordinates.data,
    };
    let total = match desc.input.data_type {
        DataType::Float64 => job.run::<f64>(out)?,
        DataType::Float32 => job.run::<f32>(out)?,
        DataType::Float16 => job.run::<f16>(out)?,
        DataType::Int64 => job.run::<i64>(out)?,
        DataType::Int32 => job.run::<i32>(out)?,
        DataType::Int16 => job.run::<i16>(out)?,
        DataType::Int8 => job.run::<i8>(out)?,
        DataType::Uint64 => job.run::<u64>(out)?,
        DataType::Uint32 => job.run::<u32>(out)?,
        DataType::Uint16 => job.run::<u16>(out)?,
        DataType::Uint8 => job.run::<u8>(out)?,
    };
    let total = u32::try_from(total).map_err(|_| internal("nonzero count exceeds UINT32"))?;
    // The scalar's only element is at offset 0 whatever its strides.
    total.write(&mut count.data[..4]);
    Ok(())
}

/// Elements whose nonzero flags form one bit mask.
const GROUP: usize = MASK_GROUP;

/// Words of bits kept on the stack (chunks of up to `64 * SMALL_WORDS` elements need no
/// allocation).
const SMALL_WORDS: usize = 64;

/// A tensor's sizes and strides in elements, checked to fit its buffer, in fixed arrays (no
/// allocation: the per-call setup of a tiny input matters).
#[derive(Debug, Clone, Copy)]
struct Dims {
    rank: usize,
    sizes: [usize; MAX_DIMS],
    strides: [usize; MAX_DIMS],
    /// Number of logical elements (1 for 0-D).
    count: usize,
    element_size: usize,
}

impl Dims {
    /// The dimensions of `desc` over a buffer of `buffer_len` bytes, or an error when an
    /// element it addresses would lie outside the buffer (the checks of [`Layout::new`]).
    fn new(desc: &TensorDesc, buffer_len: usize, name: &str) -> Result<Dims, BackendError> {
        let fail = |what: &str| internal(format!("{name} ({}): {what}", desc.summary()));
        let rank = desc.sizes.len();
        if rank > MAX_DIMS {
            return Err(fail("too many dimensions"));
        }
        let mut dims = Dims {
            rank,
            sizes: [1; MAX_DIMS],
            strides: [0; MAX_DIMS],
            count: 1,
            element_size: desc.data_type.size_in_bytes(),
        };
        for (size, &s) in dims.sizes.iter_mut().zip(&desc.sizes) {
            *size = usize::try_from(s).map_err(|_| fail("too large for this host"))?;
        }
        match &desc.strides {
            Some(strides) if strides.len() != rank => {
                return Err(fail("stride count differs from the dimension count"));
            }
            Some(strides) => {
                for (stride, &s) in dims.strides.iter_mut().zip(strides) {
                    *stride = usize::try_from(s).map_err(|_| fail("too large for this host"))?;
                }
            }
            None => {
                let mut next = 1usize;
                for d in (0..rank).rev() {
                    dims.strides[d] = next;
                    next = next.saturating_mul(dims.sizes[d]);
                }
            }
        }
        dims.count = dims
            .sizes()
            .iter()
            .try_fold(1usize, |acc, &s| acc.checked_mul(s))
            .ok_or_else(|| fail("element count overflows"))?;
        if dims.count > 0 {
            let end = dims
                .sizes()
                .iter()
                .zip(dims.strides())
                .try_fold(0usize, |acc, (&size, &stride)| {
                    acc.checked_add((size - 1).checked_mul(stride)?)
                })
                .and_then(|last| last.checked_add(1)?.checked_mul(dims.element_size))
                .ok_or_else(|| fail("element offset overflows"))?;
            if end > buffer_len {
                return Err(fail(&format!(
                    "addresses {end} bytes but the buffer holds {buffer_len}"
                )));
            }
        }
        Ok(dims)
    }

    fn sizes(&self) -> &[usize] {
        &self.sizes[..self.rank]
    }

    fn strides(&self) -> &[usize] {
        &self.strides[..self.rank]
    }

    /// True when the elements lie packed in row-major order from offset 0 (strides of size-1
    /// dimensions do not matter).
    fn is_packed(&self) -> bool {
        let mut expected = 1usize;
        for (&size, &stride) in self.sizes().iter().zip(self.strides()).rev() {
            if size > 1 && stride != expected {
                return false;
            }
            expected = expected.saturating_mul(size);
        }
        true
    }
}

/// The coordinates tensor the rows go to.
struct Output<'a> {
    desc: &'a TensorDesc,
    /// True when its rows lie packed from offset 0.
    packed: bool,
    data: &'a mut [u8],
}

/// One NonZeroCoordinates computation over checked dimensions.
struct Job<'a> {
    data: &'a [u8],
    input: &'a Dims,
    /// Coordinates per row.
    n: usize,
    tuning: Tuning,
}

impl Job<'_> {
    /// Writes the rows and returns the nonzero count.
    fn run<T: Zero>(&self, out: Output<'_>) -> Result<usize, BackendError> {
        let row_bytes = self.n * 4;
        if out.packed {
            let rows = out
                .data
                .get_mut(..self.input.count * row_bytes)
                .ok_or_else(|| internal("OutputCoordinatesTensor shorter than its rows"))?;
            return Ok(self.write_all::<T>(rows));
        }
        // Strided rows: counted first, so that the packed rows have their final length.
        let total = self.count_all::<T>();
        let layout = Layout::new(out.desc, out.data.len(), "OutputCoordinatesTensor")?;
        let rows = layout.shrunk(layout.sizes.len() - 2, total);
        write_packed(&rows, out.data, |packed| {
            let written = self.write_all::<T>(packed);
            if written == total {
                Ok(())
            } else {
                Err(internal("NonZeroCoordinates rows miscounted"))
            }
        })?;
        Ok(total)
    }

    /// How many workers share the passes over `len` elements: one per thread of the pool,
    /// or the caller alone below the parallel threshold.
    fn workers(&self, len: usize) -> usize {
        if len >= self.tuning.parallel_min {
            threads()
        } else {
            1
        }
    }

    /// The nonzero count, without writing rows.
    fn count_all<T: Zero>(&self) -> usize {
        let len = self.input.count;
        let workers = self.workers(len);
        let chunk = self.chunk_len::<T>(len, workers).min(64 * SMALL_WORDS);
        let count = |c: usize| {
            let start = c * chunk;
            let end = (start + chunk).min(len);
            let mut words = [0u64; SMALL_WORDS];
            let ahead = NONZERO_MASK_PREFETCH_BYTES;
            self.masks::<T>(
                start,
                end,
                &mut words[..(end - start).div_ceil(GROUP)],
                ahead,
            )
        };
        let chunks = len.div_ceil(chunk);
        if workers > 1 {
            (0..chunks).into_par_iter().map(count).sum()
        } else {
            (0..chunks).map(count).sum()
        }
    }

    /// Writes the rows (packed, into `out`, which has room for all of them) and returns how
    /// many there are: the input cut into chunks that workers take in order ([`Chain`]).
    fn write_all<T: Zero>(&self, out: &mut [u8]) -> usize {
        let len = self.input.count;
        if len == 0 {
            return 0;
        }
        if len <= self.tuning.tiny_max.min(GROUP * tiny::TINY_WORDS) {
            return self.write_tiny::<T>(out);
        }
        let workers = self.workers(len);
        let chunk = self.chunk_len::<T>(len, workers);
        let chain = Chain::new(len.div_ceil(chunk), workers > 1);
        let rows = SharedRows::new(out, self.n * 4);
        let pass = Pass {
            shape: RowShape::new(self.input.sizes(), self.n),
            chunk,
            stream: len * self.n * 4 >= self.tuning.stream_min,
            workers,
            chain: &chain,
            rows: &rows,
        };
        if workers > 1 {
            (0..workers)
                .into_par_iter()
                .for_each(|_| self.worker::<T>(&pass));
        } else {
            self.worker::<T>(&pass);
        }
        chain.total()
    }

    /// [`Job::write_all`] for an input of at most `64 * TINY_WORDS` elements: its masks in
    /// one pass, then its rows from them ([`tiny::write_rows_from_masks`]).
    fn write_tiny<T: Zero>(&self, out: &mut [u8]) -> usize {
        let len = self.input.count;
        let mut words = [0u64; tiny::TINY_WORDS];
        let words = &mut words[..len.div_ceil(GROUP)];
        self.masks::<T>(0, len, words, 0);
        tiny::write_rows_from_masks(words, self.input.sizes(), self.n, out)
    }

    /// Elements per chunk: the input bytes one thread prefetches while it writes a chunk's rows
    /// ([`NONZERO_READ_AHEAD_BYTES`]), fewer when `workers` would otherwise get fewer than
    /// [`NONZERO_CHUNKS_PER_WORKER`] chunks each (but at least [`NONZERO_BLOCK_BYTES`]); a
    /// whole number of groups, and no more than the input or the tuning's cap.
    fn chunk_len<T: Zero>(&self, len: usize, workers: usize) -> usize {
        let most = NONZERO_READ_AHEAD_BYTES / T::SIZE;
        let chunk = if workers > 1 {
            let least = NONZERO_BLOCK_BYTES / T::SIZE;
            len.div_ceil(NONZERO_CHUNKS_PER_WORKER * workers)
                .clamp(least, most)
        } else {
            most
        };
        chunk
            .min(len)
            .min(self.tuning.chunk)
            .max(1)
            .next_multiple_of(GROUP)
    }

    /// One worker of [`Job::write_all`]: takes the next chunk, computes its nonzero bits and
    /// count, waits for the rows before it to be counted, then writes its rows while
    /// prefetching the input of the chunk it will likely take next; until none is left.
    fn worker<T: Zero>(&self, pass: &Pass<'_>) {
        let _poison = PoisonOnPanic(&pass.chain.failed);
        let len = self.input.count;
        let range = |c: usize| (c * pass.chunk, ((c + 1) * pass.chunk).min(len));
        let mut small = [0u64; SMALL_WORDS];
        let mut large = Vec::new();
        let words = pass.chunk.div_ceil(GROUP);
        let bitmap: &mut [u64] = if words <= SMALL_WORDS {
            &mut small[..words]
        } else {
            large.resize(words, 0);
            &mut large
        };
        let Some(mut c) = pass.chain.claim() else {
            return;
        };
        let packed = self.input.is_packed();
        // A chunk not prefetched by rows before it: on several threads its masks pass
        // prefetches (on one, the hardware prefetcher alone was faster: see
        // `NONZERO_MASK_PREFETCH_BYTES`).
        let unprefetched = if pass.chain.shared {
            NONZERO_MASK_PREFETCH_BYTES
        } else {
            0
        };
        // A chunk the rows read ahead: not again, but where that read-ahead falls behind.
        let again = self.tuning.mask_prefetch_again::<T>();
        let mut ahead = unprefetched;
        // One worker scans the chunks after a sparse enough one block by block.
        // (Rows by `Divisors::row_of`: elements under 2^47.)
        let divisors = (pass.workers == 1 && len < 1 << 47)
            .then(|| Divisors::new(self.input.sizes(), self.n))
            .flatten();
        let mut scatter = false;
        loop {
            let (start, end) = range(c);
            if let (true, Some(divisors)) = (scatter, &divisors) {
                let count = self.scattered_chunk::<T>(pass, c, (start, end), divisors, bitmap);
                scatter = self.tuning.scatters_after::<T>(count, end - start);
                let Some(next) = pass.chain.claim() else {
                    return;
                };
                // Nothing was read ahead.
                ahead = unprefetched;
                c = next;
                continue;
            }
            let bits = &mut bitmap[..(end - start).div_ceil(GROUP)];
            let count = self.masks::<T>(start, end, bits, ahead);
            let before = pass.chain.publish(c, count);
            // The next chunk is claimed after this one's rows, so that a worker waiting for
            // its count does not wait for these rows too; the one prefetched is a guess (the
            // workers usually take turns), right on one thread.
            let guess = c + pass.workers;
            let next_input = if packed && guess < pass.chain.chunks {
                let (from, to) = range(guess);
                &self.data[from * T::SIZE..to * T::SIZE]
            } else {
                &[]
            };
            // SAFETY: `publish` gave chunk `c` rows `before..before + count`, which no other
            // chunk gets (chunks are claimed once and their row ranges follow each other).
            let rows = unsafe { pass.rows.region(before, count) };
            let kernel = self.tuning.rows;
            let load = ChunkLoad {
                rows: count,
                row_bytes: rows.len(),
                elements: end - start,
                element_bytes: T::SIZE,
                shared: pass.workers > 1,
            };
            let stream = self.tuning.chunk_streams(pass.stream, load);
            emit::write_rows(&pass.shape, kernel, bits, start, rows, stream, next_input);
            scatter = self.tuning.scatters_after::<T>(count, end - start);
            let Some(next) = pass.chain.claim() else {
                return;
            };
            // A chunk guessed right was prefetched while the rows were written (a strided
            // input is not prefetched at all).
            ahead = if next == guess { again } else { unprefetched };
            c = next;
        }
    }

    /// Writes the rows of chunk `c` (elements `start..end`) on the only worker: scanned
    /// block by block ([`Job::scatter_rows`]), then, from the first block too dense for
    /// that, through the usual passes (masks into `bitmap`, then [`emit::write_rows`],
    /// nothing read ahead). Returns the chunk's row count, published.
    fn scattered_chunk<T: Zero>(
        &self,
        pass: &Pass<'_>,
        c: usize,
        (start, end): (usize, usize),
        divisors: &Divisors,
        bitmap: &mut [u64],
    ) -> usize {
        let before = pass.chain.rows_before(c);
        // SAFETY: the only worker writes every chunk's rows in turn. The region is a row per
        // element of the chunk, or the rows left where the output holds only the counted
        // rows (a strided output's packed rows), which the chunk's rows fit.
        let room = (end - start).min(pass.rows.rows_from(before));
        let out = unsafe { pass.rows.region(before, room) };
        let tuning = &self.tuning;
        let scanned = self.scatter_rows::<T>(start, end, out, divisors, tuning.scatter_block_words);
        let mut count = scanned.rows;
        if scanned.end < end {
            let bits = &mut bitmap[..(end - scanned.end).div_ceil(GROUP)];
            let rest = self.masks::<T>(scanned.end, end, bits, 0);
            // SAFETY: as above; `out` is no longer used, and these rows follow its rows.
            let rows = unsafe { pass.rows.region(before + count, rest) };
            let load = ChunkLoad {
                rows: rest,
                row_bytes: rows.len(),
                elements: end - scanned.end,
                element_bytes: T::SIZE,
                shared: false,
            };
            let stream = tuning.chunk_streams(pass.stream, load);
            emit::write_rows(
                &pass.shape,
                tuning.rows,
                bits,
                scanned.end,
                rows,
                stream,
                &[],
            );
            count += rest;
        }
        pass.chain.publish(c, count);
        count
    }

    /// The nonzero flags of elements `start..end` (`start` a multiple of [`GROUP`]) into
    /// `words` (bit `j` of word `w` for element `start + 64 w + j`; bits past `end` clear);
    /// returns how many are set. A packed input's lines `ahead` bytes on are prefetched as it
    /// goes (0: none).
    fn masks<T: Zero>(&self, start: usize, end: usize, words: &mut [u64], ahead: usize) -> usize {
        debug_assert_eq!(words.len(), (end - start).div_ceil(GROUP));
        if self.input.is_packed() {
            let bytes = &self.data[start * T::SIZE..end * T::SIZE];
            let whole = (end - start) / GROUP;
            let (full, tail) = words.split_at_mut(whole);
            let mut count = group_masks::<T>(self.tuning.isa, bytes, full, ahead);
            if let Some(last) = tail.first_mut() {
                *last = 0;
                for (j, e) in bytes[whole * GROUP * T::SIZE..]
                    .chunks_exact(T::SIZE)
                    .enumerate()
                {
                    *last |= u64::from(T::read(e).is_nonzero()) << j;
                }
                count += last.count_ones() as usize;
            }
            count
        } else {
            words.fill(0);
            let nest = Nest::merged(self.input.sizes(), [self.input.strides()]);
            let [step] = nest.inner_strides();
            nest.rows(start, end, |flat, [offset], len, _| {
                for j in 0..len {
                    let e = &self.data[(offset + j * step) * T::SIZE..];
                    let at = flat - start + j;
                    words[at / GROUP] |= u64::from(T::read(e).is_nonzero()) << (at % GROUP);
                }
            });
            words.iter().map(|w| w.count_ones() as usize).sum()
        }
    }
}

/// Chunks whose ends a [`Chain`] keeps inline.
const FEW_CHUNKS: usize = 8;

/// What every worker of one [`Job::write_all`] shares.
struct Pass<'a> {
    shape: RowShape,
    /// Elements per chunk (a multiple of [`GROUP`]).
    chunk: usize,
    /// True when rows go out through non-temporal stores (each chunk within
    /// [`Tuning::stream_share`]).
    stream: bool,
    /// How many workers share the chunks.
    workers: usize,
    chain: &'a Chain,
    rows: &'a SharedRows<'a>,
}

/// Chunks handed out in order, and the rows counted up to each: a chained prefix sum.
///
/// A worker claims chunk `c` ([`Chain::claim`]), counts its nonzero elements, then waits until
/// the rows up to chunk `c - 1` are known and publishes the rows up to `c` ([`Chain::publish`]).
/// No wait can block for good: a worker claims its next chunk only after publishing its
/// current one, and counts a chunk without waiting, so the owner of chunk `c - 1` is always
/// running towards its publication (by induction from chunk 0, which waits for nothing).
/// A task that never starts (a busy pool) claims nothing; the running ones take its share.
struct Chain {
    /// The next chunk to hand out.
    next: AtomicUsize,
    /// True when several workers claim chunks (one alone claims without a locked
    /// read-modify-write: tens of cycles a call, which a tiny input notices).
    shared: bool,
    /// For each chunk, 1 + the rows of all chunks up to and including it; 0 until published:
    /// in `few` when there are at most [`FEW_CHUNKS`] chunks (no allocation for small
    /// inputs), else in `many`.
    few: [AtomicUsize; FEW_CHUNKS],
    many: Vec<AtomicUsize>,
    chunks: usize,
    /// Set when a worker panicked, so that the others stop waiting for it.
    failed: AtomicBool,
}

impl Chain {
    /// A chain of `chunks` chunks, none claimed, for several workers when `shared`.
    fn new(chunks: usize, shared: bool) -> Chain {
        let many = if chunks > FEW_CHUNKS {
            (0..chunks).map(|_| AtomicUsize::new(0)).collect()
        } else {
            Vec::new()
        };
        Chain {
            next: AtomicUsize::new(0),
            shared,
            few: Default::default(),
            many,
            chunks,
            failed: AtomicBool::new(false),
        }
    }

    /// Where chunk `c`'s end is published.
    fn end(&self, c: usize) -> &AtomicUsize {
        if self.chunks > FEW_CHUNKS {
            &self.many[c]
        } else {
            &self.few[c]
        }
    }

    /// The next unclaimed chunk, or `None` when all are taken.
    fn claim(&self) -> Option<usize> {
        let c = if self.shared {
            self.next.fetch_add(1, Ordering::Relaxed)
        } else {
            let c = self.next.load(Ordering::Relaxed);
            self.next.store(c + 1, Ordering::Relaxed);
            c
        };
        (c < self.chunks).then_some(c)
    }

    /// The rows of the chunks before chunk `c`, once they are counted.
    fn rows_before(&self, c: usize) -> usize {
        match c.checked_sub(1) {
            None => 0,
            Some(previous) => self.wait_for(previous),
        }
    }

    /// Records that chunk `c` holds `count` rows, once the chunks before it are counted;
    /// returns the rows before it.
    ///
    /// # Panics
    /// If another worker panicked while this one waited.
    fn publish(&self, c: usize, count: usize) -> usize {
        let before = self.rows_before(c);
        self.end(c).store(1 + before + count, Ordering::Release);
        before
    }

    /// The rows up to and including chunk `c`, once published: a short spin, then yielding
    /// the core (an oversubscribed machine may have descheduled the owner).
    fn wait_for(&self, c: usize) -> usize {
        let mut spins = 0u32;
        loop {
            let end = self.end(c).load(Ordering::Acquire);
            if end != 0 {
                return end - 1;
            }
            assert!(
                !self.failed.load(Ordering::Relaxed),
                "another NonZeroCoordinates worker failed"
            );
            if spins < 1 << 10 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// The total row count, once every chunk is published.
    fn total(&self) -> usize {
        match self.chunks.checked_sub(1) {
            Some(last) => self.end(last).load(Ordering::Acquire) - 1,
            None => 0,
        }
    }
}

/// Marks its chain failed if dropped while its thread panics.
struct PoisonOnPanic<'a>(&'a AtomicBool);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// The packed output rows, written by several workers in disjoint regions (it borrows the
/// output exclusively for its lifetime).
struct SharedRows<'a> {
    data: *mut u8,
    len: usize,
    row_bytes: usize,
    output: PhantomData<&'a mut [u8]>,
}

// SAFETY: workers only write through `region`, whose callers guarantee disjoint regions.
unsafe impl Sync for SharedRows<'_> {}

impl<'a> SharedRows<'a> {
    /// Rows of `row_bytes` each, in `out`.
    fn new(out: &'a mut [u8], row_bytes: usize) -> SharedRows<'a> {
        SharedRows {
            data: out.as_mut_ptr(),
            len: out.len(),
            row_bytes,
            output: PhantomData,
        }
    }

    /// How many rows fit from row `first` on (any number for rows of no bytes).
    fn rows_from(&self, first: usize) -> usize {
        match self.len.checked_div(self.row_bytes) {
            Some(rows) => rows.saturating_sub(first),
            None => usize::MAX,
        }
    }

    /// Rows `first..first + count`.
    ///
    /// # Safety
    /// No other live slice from this `SharedRows` may overlap them.
    ///
    /// # Panics
    /// If they lie past the end of the output.
    #[allow(clippy::mut_from_ref)]
    unsafe fn region(&self, first: usize, count: usize) -> &mut [u8] {
        let bytes = count.checked_mul(self.row_bytes);
        let start = first.checked_mul(self.row_bytes);
        let (Some(start), Some(bytes)) = (start, bytes) else {
            panic!("NonZeroCoordinates rows miscounted");
        };
        assert!(
            start.checked_add(bytes).is_some_and(|end| end <= self.len),
            "NonZeroCoordinates rows miscounted"
        );
        // SAFETY: in bounds (checked above); exclusive by the caller's guarantee.
        unsafe { std::slice::from_raw_parts_mut(self.data.add(start), bytes) }
    }
}

/// The nonzero masks of the `masks.len()` whole groups at the start of `bytes`, and how many
/// bits they set: AVX-512 tests or AVX2 compares as `isa` allows ([`nonzero_masks`]), else
/// [`nonzero_mask`] per group.
#[inline]
fn group_masks<T: Zero>(isa: Isa, bytes: &[u8], masks: &mut [u64], ahead: usize) -> usize {
    if let Some(count) = nonzero_masks(isa, bytes, T::SIZE, T::SIGNIFICANT, masks, ahead) {
        return count;
    }
    let mut count = 0;
    for (mask, group) in masks.iter_mut().zip(bytes.chunks_exact(GROUP * T::SIZE)) {
        *mask = nonzero_mask::<T>(group);
        count += mask.count_ones() as usize;
    }
    count
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
