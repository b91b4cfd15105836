//! Rows from nonzero bits: a chunk's set bits become rows of `N` UINT32 coordinates, written
//! packed in increasing element order.
//!
//! A [`Cursor`] follows the run of the innermost input dimension that holds the current bit
//! (its outer coordinates as a template row), so the bits of a 64-element group inside one run
//! are rows that differ only in their last coordinate. Dense groups under AVX2 build eight rows
//! per mask byte with permutes and blends ([`dense_avx2`]); sparse ones write eight rows
//! whatever their bit count ([`sparse_batch`]) where there is room, else loop over their bits.
//! Under AVX-512, consecutive words that lie wholly inside one run go through one tight loop
//! ([`run_words_avx512`]) with the template and permute tables held in registers, and runs
//! shorter than a word are not followed one by one: their coordinates are computed in
//! vectors ([`super::short_runs`]). Sparse chunks (`NONZERO_GATHER`) gather their set bits
//! across words into blocks of sixteen whose coordinates are divided out
//! ([`super::sparse_blocks`]).

use super::short_runs::Levels;
#[cfg(target_arch = "x86_64")]
use super::short_runs::{short_runs_avx2, short_runs_avx512};
use super::sparse_blocks::{sparse_blocks_avx512, Divisors, Gathered};
use super::GROUP;
use crate::simd::{amd_cpu, copy_streaming, prefetch_ahead_into, stream_fence, Isa};
use crate::strided::MAX_DIMS;
use crate::thresholds::{
    NONZERO_DENSE_GROUP as DENSE_GROUP, NONZERO_GATHER as GATHER,
    NONZERO_SKIP_ZERO_WORDS_MAX_ROWS_PER_WORD as SKIP_ZERO_WORDS,
    NONZERO_STAGE_BYTES as STAGE_BYTES, NONZERO_WIDE_L1_READ_AHEAD_DENSITY,
};

/// The most coordinates per row (DirectML tensors have at most 8 dimensions).
pub(super) const MAX_N: usize = 8;

/// Bytes a batch of rows may store past its last row: sixteen rows of [`MAX_N`] coordinates
/// ([`rows_avx512`]; the AVX2 dense groups store up to eight).
const OVERRUN: usize = 64 * MAX_N;

/// Bytes of the staging buffer: [`STAGE_BYTES`] plus room for two more groups of rows and
/// their overrun. The stage is copied out when the next step's worst case (a group's rows and
/// the overrun) no longer fits, so with room for only one more group, wide rows left
/// [`run_words_avx512`] a word or two after it began: rows of 5 coordinates, FLOAT16
/// `[5, 1, 1026, 144, 1]` at 75 % on one thread, 0.59 ms, against 0.48 with two (one process,
/// calls alternated, medians of 21; UINT8 3e7 50 % 8.66 → 7.77 ms, FLOAT32 90 % 13.5 →
/// 14.1 ms on one thread and 12.2 → 12.1 on two).
const STAGE_CAPACITY: usize = STAGE_BYTES + 2 * GROUP * 4 * MAX_N + OVERRUN;

/// The staging buffer of [`Sink`], starting on a cache line, so that its 64-byte stores do
/// not straddle lines. A plain allocation starts on whichever 16-byte boundary the heap gives:
/// round 24's code, which only moved the allocation, took one thread's NonZeroCoordinates
/// UINT8 3e7 50 % from 12.6–13.0 to 14.0–14.7 ms (90 %: 20.7 against 23.6); aligned, 12.9.
#[repr(C, align(64))]
struct AlignedStage([u8; STAGE_CAPACITY]);

/// [`AlignedStage`] when rows are streamed, or nothing (empty) when they are written in place.
struct Stage(Option<Box<AlignedStage>>);

impl Stage {
    /// A zeroed stage when `stream`, else an empty one (no allocation).
    fn new(stream: bool) -> Stage {
        Stage(stream.then(|| Box::new(AlignedStage([0; STAGE_CAPACITY]))))
    }
}

impl std::ops::Deref for Stage {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.0.as_ref().map_or(&[], |stage| &stage.0)
    }
}

impl std::ops::DerefMut for Stage {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.0.as_mut().map_or(&mut [], |stage| &mut stage.0)
    }
}

/// The input's sizes as rows see them.
#[derive(Debug, Clone, Copy)]
pub(super) struct RowShape {
    /// Sizes, outermost first (a 0-D input is `[1]`).
    sizes: [usize; MAX_DIMS],
    rank: usize,
    /// Size of the innermost dimension (whose coordinate varies along a run).
    inner: usize,
    /// Coordinates per row.
    n: usize,
    /// Columns whose values trade places in every row written, when the innermost
    /// dimensions of size 1 were moved inside the last larger one ([`RowShape::new`]).
    swapped_columns: Option<(usize, usize)>,
    /// The innermost dimension but the last one whose size is over 1, and its template
    /// column, if it has one: where a run's end moves the cursor, but for carries
    /// ([`Cursor::next_run`]).
    stepped: Option<(usize, usize)>,
}

impl RowShape {
    /// The shape of an input of `sizes` (not all zero-sized) with rows of `n` coordinates.
    ///
    /// Innermost dimensions of size 1 (`[7, 9258, 19, 1]`) would make every element a run of
    /// its own, the cursor moving at each one (FLOAT32 at 75 %: 11.6 ns a row, 16 times the
    /// floor). Moving them inside the last larger dimension (`[7, 9258, 1, 19]`) keeps the
    /// elements in the same order and the runs long; the rows then hold that dimension's
    /// coordinate in the last column and 0 where it belongs, so those two columns trade
    /// places as the rows are written out.
    pub(super) fn new(sizes: &[usize], n: usize) -> RowShape {
        let rank = sizes.len().max(1);
        let mut shape = RowShape {
            sizes: [1; MAX_DIMS],
            rank,
            inner: 1,
            n,
            swapped_columns: None,
            stepped: None,
        };
        shape.sizes[..sizes.len()].copy_from_slice(sizes);
        if let Some(d) = sizes.iter().rposition(|&size| size > 1) {
            let ones = rank - 1 - d;
            if ones > 0 && ones < n {
                shape.sizes[..rank].swap(d, rank - 1);
                shape.swapped_columns = Some((n - 1 - ones, n - 1));
            }
        }
        shape.inner = shape.sizes[rank - 1];
        shape.stepped = (0..rank - 1)
            .rev()
            .find(|&d| shape.sizes[d] > 1)
            .and_then(|d| Some((d, (d + n).checked_sub(rank)?)));
        shape
    }
}

/// Trades the values of columns `a` and `b` in every row of `rows` (whole rows of `n`
/// 32-bit coordinates).
fn swap_columns(rows: &mut [u8], n: usize, (a, b): (usize, usize)) {
    let (a, b) = (4 * a, 4 * b);
    for row in rows.chunks_exact_mut(4 * n) {
        let value: [u8; 4] = row[a..a + 4].try_into().expect("a column");
        row.copy_within(b..b + 4, a);
        row[b..b + 4].copy_from_slice(&value);
    }
}

/// Trades two columns in every row: sixteen rows at a time with AVX-512 permutes where the
/// CPU has them, the rest (and every row elsewhere) by [`swap_columns`]. Row by row, the
/// trade took 0.4 ns a row, as long as building the rows: FLOAT16 `[1003949, 1]` at 100 %
/// took twice the time of `[1, 1003949]`.
struct ColumnSwap {
    n: usize,
    columns: (usize, usize),
    /// Output vector `k` of a block of sixteen rows takes lane `i` from vectors `k - 1` and
    /// `k` (`low[k][i]`) where bit `i` of `from_low[k]` is set, else from vectors `k` and
    /// `k + 1` (`high[k][i]`): a column moves by fewer than eight lanes, inside its row.
    /// None without AVX-512.
    tables: Option<SwapTables>,
    /// [`BLOCK_TABLES`] with the trade in them: rows built through these come out traded
    /// ([`run_words_avx512`]), with no pass of their own.
    traded_rows: [[u32; 16]; MAX_N],
}

/// [`ColumnSwap`]'s permute tables.
struct SwapTables {
    low: [[u32; 16]; MAX_N],
    high: [[u32; 16]; MAX_N],
    from_low: [u16; MAX_N],
}

impl ColumnSwap {
    /// The trade of `columns` in rows of `n` columns; `vector` when the CPU has AVX-512 F.
    fn new(n: usize, (a, b): (usize, usize), vector: bool) -> ColumnSwap {
        let tables = vector.then(|| {
            let mut tables = SwapTables {
                low: [[0; 16]; MAX_N],
                high: [[0; 16]; MAX_N],
                from_low: [0; MAX_N],
            };
            for slot in 0..16 * n {
                let (k, i) = (slot / 16, slot % 16);
                let (row, column) = (slot / n, slot % n);
                let source = row * n + traded_column(column, (a, b));
                if source < 16 * k {
                    tables.low[k][i] = (source + 16 - 16 * k) as u32;
                    tables.from_low[k] |= 1 << i;
                } else {
                    tables.high[k][i] = (source - 16 * k) as u32;
                }
            }
            tables
        });
        ColumnSwap {
            n,
            columns: (a, b),
            tables,
            traded_rows: block_table(n, Some((a, b))),
        }
    }

    /// Trades the columns in every row of `rows` (whole rows).
    fn apply(&self, rows: &mut [u8]) {
        let done = match &self.tables {
            #[cfg(target_arch = "x86_64")]
            Some(tables) => {
                let whole = rows.len() - rows.len() % (64 * self.n);
                // SAFETY: `tables` exist only where the CPU has AVX-512 F (`ColumnSwap::new`).
                unsafe { swap_blocks_avx512(&mut rows[..whole], self.n, tables) };
                whole
            }
            _ => 0,
        };
        swap_columns(&mut rows[done..], self.n, self.columns);
    }
}

/// [`ColumnSwap::apply`] on blocks of sixteen rows of `n` columns (`rows` holds whole blocks),
/// with the block's vectors and the tables in registers ([`swap_blocks`]).
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn swap_blocks_avx512(rows: &mut [u8], n: usize, tables: &SwapTables) {
    match n {
        2 => swap_blocks::<2>(rows, tables),
        3 => swap_blocks::<3>(rows, tables),
        4 => swap_blocks::<4>(rows, tables),
        5 => swap_blocks::<5>(rows, tables),
        6 => swap_blocks::<6>(rows, tables),
        7 => swap_blocks::<7>(rows, tables),
        8 => swap_blocks::<8>(rows, tables),
        // One column has nothing to trade with.
        _ => {}
    }
}

/// [`swap_blocks_avx512`] for rows of `N` columns.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn swap_blocks<const N: usize>(rows: &mut [u8], tables: &SwapTables) {
    use std::arch::x86_64::*;
    let load = |table: &[u32; 16]| _mm512_loadu_si512(table.as_ptr().cast());
    let low: [__m512i; N] = std::array::from_fn(|k| load(&tables.low[k]));
    let high: [__m512i; N] = std::array::from_fn(|k| load(&tables.high[k]));
    for block in rows.chunks_exact_mut(64 * N) {
        let at = block.as_mut_ptr();
        // Every vector is read before any is written. In bounds: the block is `64 N` bytes.
        let vectors: [__m512i; N] =
            std::array::from_fn(|k| _mm512_loadu_si512(at.add(64 * k).cast()));
        for k in 0..N {
            let before = vectors[k.saturating_sub(1)];
            let after = vectors[(k + 1).min(N - 1)];
            let from_low = _mm512_permutex2var_epi32(before, low[k], vectors[k]);
            let from_high = _mm512_permutex2var_epi32(vectors[k], high[k], after);
            let traded = _mm512_mask_blend_epi32(tables.from_low[k], from_high, from_low);
            _mm512_storeu_si512(at.add(64 * k).cast(), traded);
        }
    }
}

/// Which instructions build the rows: the widest the CPU offers, or (tests) a narrower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowKernel {
    /// Plain Rust.
    Portable,
    /// Dense groups through AVX2 permutes ([`dense_avx2`]).
    Avx2,
    /// Every batch through AVX-512 F compresses ([`batch_avx512`]).
    Avx512,
    /// As `Avx512`, with a sparse word's positions compressed in one step (VBMI2
    /// `vpcompressb`).
    Avx512Vbmi2,
}

impl RowKernel {
    /// The widest row kernel that `isa` allows on this CPU.
    pub(super) fn for_isa(isa: Isa) -> RowKernel {
        #[cfg(target_arch = "x86_64")]
        {
            use std::is_x86_feature_detected as has;
            if isa.avx2() && has!("popcnt") && has!("bmi1") {
                return match isa {
                    Isa::Avx512 if has!("avx512vbmi2") => RowKernel::Avx512Vbmi2,
                    Isa::Avx512 => RowKernel::Avx512,
                    _ => RowKernel::Avx2,
                };
            }
        }
        let _ = isa;
        RowKernel::Portable
    }
}

/// Writes the rows of the set bits of `words` (bit `j` of word `w` for element
/// `start + 64 w + j`; `start` a multiple of 64) into `out`, which holds exactly their rows;
/// through a staging buffer and non-temporal stores when `stream`. `ahead` is input the
/// caller reads next (or empty): it is prefetched into L2 (L1 where [`read_ahead_into_l1`]
/// says) a slice per word, so that
/// memory keeps reading while the rows are built.
///
/// # Panics
/// If `out` does not hold exactly one row per set bit.
pub(super) fn write_rows(
    shape: &RowShape,
    kernel: RowKernel,
    words: &[u64],
    start: usize,
    out: &mut [u8],
    stream: bool,
    ahead: &[u8],
) {
    // No rows, nothing to do: the words need no scan (one core, UINT8 `[30000000]` all zero,
    // libraries alternated, medians of 15: 1.59 -> 1.47 ms), and the input is not read ahead
    // (see `rows_body`).
    if out.is_empty() {
        return;
    }
    match shape.n {
        1 => dispatch::<1>(shape, kernel, words, start, out, stream, ahead),
        2 => dispatch::<2>(shape, kernel, words, start, out, stream, ahead),
        3 => dispatch::<3>(shape, kernel, words, start, out, stream, ahead),
        4 => dispatch::<4>(shape, kernel, words, start, out, stream, ahead),
        5 => dispatch::<5>(shape, kernel, words, start, out, stream, ahead),
        6 => dispatch::<6>(shape, kernel, words, start, out, stream, ahead),
        7 => dispatch::<7>(shape, kernel, words, start, out, stream, ahead),
        8 => dispatch::<8>(shape, kernel, words, start, out, stream, ahead),
        // Rows of no coordinates take no bytes.
        _ => assert!(out.is_empty(), "NonZeroCoordinates rows miscounted"),
    }
}

/// [`write_rows`] for rows of `N` coordinates, with `kernel`.
fn dispatch<const N: usize>(
    shape: &RowShape,
    kernel: RowKernel,
    words: &[u64],
    start: usize,
    out: &mut [u8],
    stream: bool,
    ahead: &[u8],
) {
    // SAFETY (each arm): `RowKernel::for_isa` gives a kernel only when the CPU has every
    // feature its function enables (the AVX-512 ones come from `Isa::Avx512`: F and BW).
    let lines = read_ahead_lines(ahead, words);
    let into_l1 = read_ahead_into_l1(lines, out.len() / (4 * N), 64 * words.len());
    match kernel {
        #[cfg(target_arch = "x86_64")]
        RowKernel::Avx2 => unsafe {
            rows_avx2::<N, false>(shape, words, start, out, stream, ahead)
        },
        #[cfg(target_arch = "x86_64")]
        RowKernel::Avx512 if into_l1 => unsafe {
            rows_avx512::<N, true>(shape, words, start, out, stream, ahead)
        },
        #[cfg(target_arch = "x86_64")]
        RowKernel::Avx512 => unsafe {
            rows_avx512::<N, false>(shape, words, start, out, stream, ahead)
        },
        #[cfg(target_arch = "x86_64")]
        RowKernel::Avx512Vbmi2 if into_l1 => unsafe {
            rows_avx512_vbmi2::<N, true>(shape, words, start, out, stream, ahead)
        },
        #[cfg(target_arch = "x86_64")]
        RowKernel::Avx512Vbmi2 => unsafe {
            rows_avx512_vbmi2::<N, false>(shape, words, start, out, stream, ahead)
        },
        _ => rows_body::<N, PORTABLE, false>(shape, words, start, out, stream, ahead),
    }
}

/// [`RowKernel`]s as the const parameter of [`rows_body`] and [`Sink::rows`].
const PORTABLE: u8 = RowKernel::Portable as u8;
const AVX2: u8 = RowKernel::Avx2 as u8;
const AVX512: u8 = RowKernel::Avx512 as u8;
const AVX512_VBMI2: u8 = RowKernel::Avx512Vbmi2 as u8;

/// Defines `unsafe fn $name<const N: usize>`: [`rows_body`] with kernel `$kernel`, compiled
/// with the target features `$features` (the CPU must support every one of them).
macro_rules! row_kernel {
    ($(#[$doc:meta])* $name:ident, $kernel:ident, $features:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("The CPU must support ", $features, ".")]
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        unsafe fn $name<const N: usize, const L1: bool>(
            shape: &RowShape,
            words: &[u64],
            start: usize,
            out: &mut [u8],
            stream: bool,
            ahead: &[u8],
        ) {
            rows_body::<N, $kernel, L1>(shape, words, start, out, stream, ahead);
        }
    };
}

row_kernel!(
    /// [`rows_body`] compiled for AVX2 (with POPCNT and TZCNT), with the dense groups built by
    /// [`dense_avx2`].
    rows_avx2,
    AVX2,
    "avx2,popcnt,bmi1"
);

row_kernel!(
    /// [`rows_body`] compiled for AVX-512 (with POPCNT and TZCNT): every batch of rows is built
    /// by [`batch_avx512`].
    rows_avx512,
    AVX512,
    "avx512f,avx512bw,avx2,popcnt,bmi1"
);
row_kernel!(
    /// [`rows_avx512`] with VBMI2 for sparse words ([`few_vbmi2`]).
    rows_avx512_vbmi2,
    AVX512_VBMI2,
    "avx512f,avx512bw,avx512vbmi2,avx2,popcnt,bmi1"
);

/// Cache lines of the read-ahead `ahead` per word of `words`: whole lines, so that a word's
/// prefetches are a short loop with no slicing (one line for 1-byte elements).
fn read_ahead_lines(ahead: &[u8], words: &[u64]) -> usize {
    ahead.len().div_ceil(64 * words.len().max(1))
}

/// Whether the read-ahead of the next chunk goes into L1 (`prefetcht0`), for a chunk of
/// `elements` elements holding `rows` nonzero ones whose words each read `lines` cache lines
/// ahead: with the AVX-512 row kernels on AMD CPUs, for one-byte elements (one line a word)
/// at most a quarter nonzero and wider ones at most [`NONZERO_WIDE_L1_READ_AHEAD_DENSITY`],
/// where it was faster; elsewhere into L2.
///
/// AMD EPYC (Zen 5), libraries alternated, medians of 14–30, UINT8 `[3, 10, 1000, 1000]`, one
/// thread, at 5 %: 1.60–1.78 → 1.50–1.67 ms back to back, 1.78–2.07 → 1.72–2.03 after another
/// call (the bandwidth probe's, ONNX Runtime's, numpy's); two threads 1.00 → 0.99. At 50 %
/// 1–3 % slower (7.43–7.80 → 7.67–8.01), at 90 % 1 %, hence the density. FLOAT32 went both
/// ways (5 %: one thread 4.72 → 4.66, two 2.75 → 2.83; 50 % 9.43 → 9.57), so wider elements
/// keep L2 above a few per cent. On Sapphire Rapids `prefetcht0` made one thread's FLOAT32
/// rows 20 % slower (see [`prefetch_ahead`](crate::simd::prefetch_ahead)).
fn read_ahead_into_l1(lines: usize, rows: usize, elements: usize) -> bool {
    let most = if lines == 1 {
        0.25
    } else {
        NONZERO_WIDE_L1_READ_AHEAD_DENSITY
    };
    amd_cpu() && rows as f64 <= most * elements as f64
}

/// The body of [`write_rows`]: for each set bit, the run that holds it (the cursor moves
/// forward only when a bit lies past its run), then the bits of the word inside that run as
/// one batch of rows. The read-ahead goes into L1 with `L1` ([`read_ahead_into_l1`]), else
/// L2: a constant, as a flag read per word cost 1–3 % at 50 % nonzero.
#[inline(always)]
fn rows_body<const N: usize, const KERNEL: u8, const L1: bool>(
    shape: &RowShape,
    words: &[u64],
    start: usize,
    out: &mut [u8],
    stream: bool,
    ahead: &[u8],
) {
    let lines = read_ahead_lines(ahead, words);
    let stride = 64 * lines;
    // The first line out of the loop, and the stride multiplied once: in the kernels' loops
    // the read-ahead of a word of UINT8 took 18 instructions so, 8 now, and UINT8
    // `[3, 10, 1000, 1000]` at 5 % 2.32 → 2.11 ms on one thread.
    let read_ahead = |w: usize| {
        let from = w * stride;
        if from < ahead.len() {
            prefetch_ahead_into(ahead.as_ptr(), from, L1);
            for line in 1..lines {
                prefetch_ahead_into(ahead.as_ptr(), from + 64 * line, L1);
            }
        }
    };
    // The read-ahead of words `from..to` in one loop.
    let read_ahead_of = |from: usize, to: usize| {
        let end = (to * lines * 64).min(ahead.len());
        for at in (from * lines * 64..end).step_by(64) {
            prefetch_ahead_into(ahead.as_ptr(), at, L1);
        }
    };
    let mut cursor = Cursor::new(shape, start);
    let mut lanes = Lanes::<N>::new();
    let has_rows = !out.is_empty();
    let mut sink = Sink::new(out, stream, shape, KERNEL >= AVX512);
    // Runs shorter than a word: their coordinates are computed, not followed run by run.
    let short_runs = (KERNEL >= AVX2 && shape.inner < GROUP)
        .then(|| Levels::new(&shape.sizes[..shape.rank], N))
        .flatten();
    // Sparse words: their set bits gathered into full blocks, whatever their runs.
    let mut gathered = (KERNEL == AVX512_VBMI2
        && gathers(sink.rows_left(N), words.len(), shape.inner))
    .then(|| Divisors::new(&shape.sizes[..shape.rank], N))
    .flatten()
    .map(|divisors| Gathered::new(divisors, start));
    // Sparse chunks skip their zero words in the run kernel ([`run_words_avx512`]).
    let skip_zero_words = sink.rows_left(N) as f64 <= SKIP_ZERO_WORDS * words.len() as f64;
    let mut w = 0;
    while w < words.len() {
        let word = words[w];
        if word == 0 {
            // Zero words write nothing: skipped together, before any kernel is set up (a
            // kernel left with too little room for a word returns at once, and a chunk with
            // no rows has none at all: UINT8 `[3, 10, 1000, 1000]` at 0 % took 2.05 ms so,
            // 2.5 times its floor, and 1.1 ms skipped). A chunk with no rows reads no input
            // ahead: its burst of prefetches took 1.28 ms against the hardware's 1.1.
            let zeros = words[w..].iter().take_while(|&&word| word == 0).count();
            if has_rows {
                read_ahead_of(w, w + zeros);
            }
            w += zeros;
            continue;
        }
        let base = start + w * GROUP;
        if let Some(gathered) = &mut gathered {
            let done =
                sink.sparse_blocks::<N, KERNEL>(&words[w..], base, gathered, |k| read_ahead(w + k));
            if done > 0 {
                w += done;
                continue;
            }
            // Too little room left for a word: the gathered rows go first, then this word's.
            sink.flush_gathered::<N, KERNEL>(gathered);
        } else if let Some(levels) = &short_runs {
            let done =
                sink.short_runs::<N, KERNEL>(&words[w..], base, levels, |k| read_ahead(w + k));
            if done > 0 {
                w += done;
                continue;
            }
        } else if KERNEL >= AVX2 {
            if base >= cursor.run_end {
                cursor.advance(base);
                lanes.stale = true;
            }
            // AVX-512 follows runs of a word or more across their ends; AVX2 takes the words
            // wholly inside the current run.
            let words_taken = if KERNEL >= AVX512 {
                (shape.inner >= GROUP).then_some(words.len() - w)
            } else {
                (base + GROUP <= cursor.run_end)
                    .then(|| ((cursor.run_end - base) / GROUP).min(words.len() - w))
            };
            if let Some(taken) = words_taken {
                let done = sink.run_words::<N, KERNEL>(
                    &words[w..w + taken],
                    base,
                    &mut cursor,
                    skip_zero_words,
                    |k| read_ahead(w + k),
                );
                lanes.stale = true;
                if done > 0 {
                    w += done;
                    continue;
                }
            }
        }
        read_ahead(w);
        w += 1;
        let mut bits = word;
        while bits != 0 {
            let part = cursor.part_in_run(base, bits);
            lanes.stale |= part.moved;
            sink.rows::<N, KERNEL>(part.bits, part.first, &cursor.template, &mut lanes);
            bits &= !part.bits;
        }
    }
    if let Some(gathered) = &mut gathered {
        sink.flush_gathered::<N, KERNEL>(gathered);
    }
    sink.finish();
}

/// Whether `rows` rows over `words` words, with runs of `inner` elements, are sparse enough
/// for [`sparse_blocks_avx512`] ([`GATHER`]) and their offsets fit its 32-bit lanes.
fn gathers(rows: usize, words: usize, inner: usize) -> bool {
    let elements = words * GROUP;
    if elements == 0 || elements > u32::MAX as usize {
        return false;
    }
    let density = rows as f64 / elements as f64;
    GATHER
        .iter()
        .any(|&(runs, most)| inner <= runs && density <= most)
}

/// The bits of a word that lie in one run ([`Cursor::part_in_run`]).
struct RunPart {
    /// The word's set bits inside the run.
    bits: u64,
    /// The last coordinate of the word's bit 0 (wrapping when bit 0 lies before the run).
    first: u32,
    /// True when the cursor moved to reach the run (its template changed).
    moved: bool,
}

/// The run of the innermost dimension that holds the current bit, and its template row.
struct Cursor<'a> {
    shape: &'a RowShape,
    /// Element index of the run's first element, and one past its last.
    run_start: usize,
    run_end: usize,
    /// Coordinates of the run (the innermost one unused).
    coords: [usize; MAX_DIMS],
    /// The run's row as bytes: its outer coordinates, the last column 0.
    template: [u8; 4 * MAX_N],
}

impl Cursor<'_> {
    /// The cursor on the run holding element `start`.
    fn new(shape: &RowShape, start: usize) -> Cursor<'_> {
        let run = start / shape.inner;
        let mut cursor = Cursor {
            shape,
            run_start: run * shape.inner,
            run_end: (run + 1) * shape.inner,
            coords: [0; MAX_DIMS],
            template: [0; 4 * MAX_N],
        };
        let mut rest = run;
        for d in (0..shape.rank - 1).rev() {
            cursor.coords[d] = rest % shape.sizes[d];
            rest /= shape.sizes[d];
        }
        cursor.fill_template();
        cursor
    }

    /// The set bits of `bits` (bit `j` is element `base + j`) in the run holding the lowest
    /// of them, the cursor moved to that run first when it lies past the current one.
    #[inline(always)]
    fn part_in_run(&mut self, base: usize, bits: u64) -> RunPart {
        let at = base + bits.trailing_zeros() as usize;
        let moved = at >= self.run_end;
        if moved {
            self.advance(at);
        }
        let limit = self.run_end - base;
        let bits = if limit >= GROUP {
            bits
        } else {
            bits & ((1u64 << limit) - 1)
        };
        RunPart {
            bits,
            // Wrapping when bit 0 lies before the run: only bits inside it are written.
            first: base.wrapping_sub(self.run_start) as u32,
            moved,
        }
    }

    /// Moves to the next run. Returns true when that changed only the template's column of
    /// [`RowShape`]'s `stepped` dimension, by one, as it does for all but one run in that
    /// dimension's size; the caller's template vector then takes a step instead of being
    /// rebuilt from the bytes.
    #[inline(always)]
    fn next_run(&mut self) -> bool {
        match self.shape.stepped {
            Some((d, column)) if self.coords[d] + 1 < self.shape.sizes[d] => {
                self.coords[d] += 1;
                self.run_start = self.run_end;
                self.run_end += self.shape.inner;
                self.template[4 * column..4 * column + 4]
                    .copy_from_slice(&(self.coords[d] as u32).to_le_bytes());
                true
            }
            _ => {
                self.advance(self.run_end);
                false
            }
        }
    }

    /// Moves to the run holding element `at` (past the current run).
    #[inline]
    fn advance(&mut self, at: usize) {
        let inner = self.shape.inner;
        let runs = if at < self.run_end + inner {
            1
        } else {
            (at - self.run_start) / inner
        };
        self.run_start += runs * inner;
        self.run_end = self.run_start + inner;
        // Add `runs` to the outer coordinates, a mixed-radix number.
        let mut carry = runs;
        let mut d = self.shape.rank - 1;
        while carry > 0 && d > 0 {
            d -= 1;
            let size = self.shape.sizes[d];
            let sum = self.coords[d] + carry;
            if sum < size {
                self.coords[d] = sum;
                carry = 0;
            } else {
                self.coords[d] = sum % size;
                carry = sum / size;
            }
        }
        self.fill_template();
    }

    /// The template row from the outer coordinates: column `c` holds dimension
    /// `c + rank - n` (0 before the first dimension); the last column is left 0.
    fn fill_template(&mut self) {
        let (rank, n) = (self.shape.rank, self.shape.n);
        for c in 0..n.saturating_sub(1) {
            let value = (c + rank)
                .checked_sub(n)
                .map_or(0, |d| self.coords[d] as u32);
            self.template[4 * c..4 * c + 4].copy_from_slice(&value.to_le_bytes());
        }
    }
}

/// Where rows go: straight into the output, or (`stream`) into a staging buffer copied out
/// with non-temporal stores in pieces that end on 64-byte boundaries.
struct Sink<'a> {
    out: &'a mut [u8],
    /// Bytes of `out` written.
    written: usize,
    stream: bool,
    /// The staging buffer (empty unless `stream`) and its bytes in use.
    stage: Stage,
    staged: usize,
    /// How [`RowShape`]'s columns are traded in every row, if they are, and the bytes at
    /// the start of the stage (of `out`, unless `stream`) whose rows have them traded
    /// already.
    swap: Option<ColumnSwap>,
    settled: usize,
}

impl<'a> Sink<'a> {
    /// A sink for rows of `shape` into `out`; `vector` when the CPU has AVX-512 F.
    fn new(out: &'a mut [u8], stream: bool, shape: &RowShape, vector: bool) -> Sink<'a> {
        Sink {
            out,
            written: 0,
            stream,
            stage: Stage::new(stream),
            staged: 0,
            swap: shape
                .swapped_columns
                .map(|columns| ColumnSwap::new(shape.n, columns, vector)),
            settled: 0,
        }
    }

    /// Appends the rows of the set bits `j` of `mask`: `template` with `first + j` in the last
    /// column.
    #[inline(always)]
    fn rows<const N: usize, const KERNEL: u8>(
        &mut self,
        mask: u64,
        first: u32,
        template: &[u8; 4 * MAX_N],
        lanes: &mut Lanes<N>,
    ) {
        let count = mask.count_ones() as usize;
        let bytes = count * 4 * N;
        let (region, at) = self.room(bytes + OVERRUN);
        if KERNEL >= AVX512 && region.len() >= bytes + 64 * N {
            batch::<N>(region, mask, first, template, KERNEL == AVX512_VBMI2);
        } else if KERNEL >= AVX2 && count >= DENSE_GROUP && region.len() >= bytes + 32 * N {
            lanes.refresh(template);
            dense::<N>(region, mask, first, lanes);
        } else if count < SPARSE_BATCH && region.len() >= SPARSE_BATCH * 4 * N {
            sparse_batch::<N>(region, mask, first, template);
        } else {
            sparse::<N>(&mut region[..bytes], mask, first, template);
        }
        *at += bytes;
    }

    /// Appends the rows of consecutive words (word `k`'s bit `j` is element `start + 64 k + j`),
    /// calling `before(k)` before word `k`, in one tight loop with the template and tables in
    /// registers: under AVX2, words wholly inside `cursor`'s run ([`run_words_avx2`]); under
    /// AVX-512, words of runs of at least a word, `cursor` moved along as their runs end
    /// ([`run_words_avx512`]). Returns how many words it took (from the first, none when there
    /// is too little room left, which the caller then handles word by word), instead of the
    /// cursor and room checks per word.
    #[inline(always)]
    fn run_words<const N: usize, const KERNEL: u8>(
        &mut self,
        words: &[u64],
        start: usize,
        cursor: &mut Cursor,
        skip_zero_words: bool,
        before: impl FnMut(usize),
    ) -> usize {
        #[cfg(target_arch = "x86_64")]
        if KERNEL >= AVX512 {
            return self.vector_run_words::<N, KERNEL>(
                words,
                start,
                cursor,
                skip_zero_words,
                before,
            );
        }
        let (region, at) = self.room(GROUP * 4 * N + 64 * N);
        #[cfg(target_arch = "x86_64")]
        if KERNEL == AVX2 {
            let (dst, room) = (region.as_mut_ptr(), region.len());
            let first = (start - cursor.run_start) as u32;
            // SAFETY: only the AVX2 instantiation of `rows_body` gets here (the CPU has AVX2,
            // POPCNT and BMI1: `RowKernel::for_isa`); the kernel writes a word only while a
            // whole word's rows and the overrun fit in `region`.
            let (done, bytes) =
                unsafe { run_words_avx2::<N>(dst, room, words, first, &cursor.template, before) };
            *at += bytes;
            return done;
        }
        let _ = (region, words, start, cursor, before, skip_zero_words);
        0
    }

    /// [`Sink::run_words`] under AVX-512. Where the columns trade places, its rows come out
    /// traded ([`ColumnSwap`]'s `traded_rows`): the rows before them are traded first, and
    /// they count as traded. A pass of its own over the rows took a third of the time of
    /// FLOAT16 `[5, 1, 1026, 144, 1]` at 75 % on one thread (0.44 ms, `[5, 1, 1, 1026, 144]`
    /// 0.32).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn vector_run_words<const N: usize, const KERNEL: u8>(
        &mut self,
        words: &[u64],
        start: usize,
        cursor: &mut Cursor,
        skip_zero_words: bool,
        before: impl FnMut(usize),
    ) -> usize {
        self.settle();
        let (region, _) = self.room(GROUP * 4 * N + 64 * N);
        let (dst, room, vbmi2) = (region.as_mut_ptr(), region.len(), KERNEL == AVX512_VBMI2);
        // Borrowed, not copied: with a stage of `NONZERO_STAGE_BYTES`, this runs every few KiB
        // of rows.
        let traded = self.swap.as_ref().map(|swap| &swap.traded_rows);
        // One call per kernel and table, each with the same arguments.
        macro_rules! run_words {
            ($kernel:ident, $traded:literal, $tables:expr) => {
                $kernel::<N, $traded>(
                    dst,
                    room,
                    words,
                    start,
                    cursor,
                    $tables,
                    skip_zero_words,
                    before,
                )
            };
        }
        // The tables a constant where untraded: as a runtime value, the untraded loop took
        // 3–10 % longer (UINT8 `[1, 1, 1000, 1000]` at 5 %: 40.1 → 44.3 µs). The loop is
        // compiled with VBMI2 where the kernel has it (`run_words_kernel!`).
        // SAFETY: only the AVX-512 instantiations of `rows_body` get here (the CPU has
        // AVX-512 F, and VBMI2 with `AVX512_VBMI2`), for runs of a word or more whose cursor
        // holds `start`; the kernel writes a word only while a whole word's rows and the
        // overrun fit in `region`.
        let (done, bytes) = unsafe {
            match (traded, vbmi2) {
                (Some(traded), true) => run_words!(run_words_vbmi2, true, traded),
                (None, true) => run_words!(run_words_vbmi2, false, UNTRADED),
                (Some(traded), false) => run_words!(run_words_avx512f, true, traded),
                (None, false) => run_words!(run_words_avx512f, false, UNTRADED),
            }
        };
        let traded = traded.is_some();
        if self.stream {
            self.staged += bytes;
        } else {
            self.written += bytes;
        }
        if traded {
            self.settled = self.filled();
        }
        done
    }

    /// Bytes of rows in the buffer [`Sink::room`] gives: the stage when streaming, else `out`.
    fn filled(&self) -> usize {
        if self.stream {
            self.staged
        } else {
            self.written
        }
    }

    /// Trades the columns of the rows written since the last rows traded, if they trade.
    fn settle(&mut self) {
        let at = self.filled();
        if let Some(swap) = &self.swap {
            let buffer = if self.stream {
                &mut self.stage[..]
            } else {
                &mut self.out[..]
            };
            swap.apply(&mut buffer[self.settled..at]);
            self.settled = at;
        }
    }

    /// Appends the rows of consecutive words of runs shorter than a word (word `k`'s bit `j`
    /// is element `start + 64 k + j`), their coordinates computed from `levels`
    /// ([`short_runs_avx512`], [`short_runs_avx2`]), calling `before(k)` before word `k`.
    /// Returns how many words it took, as [`Sink::run_words`] does.
    #[inline(always)]
    fn short_runs<const N: usize, const KERNEL: u8>(
        &mut self,
        words: &[u64],
        start: usize,
        levels: &Levels,
        before: impl FnMut(usize),
    ) -> usize {
        let (region, at) = self.room(GROUP * 4 * N + 64 * N);
        #[cfg(target_arch = "x86_64")]
        if KERNEL >= AVX512 {
            let (dst, room, vbmi2) = (region.as_mut_ptr(), region.len(), KERNEL == AVX512_VBMI2);
            // SAFETY: as in `run_words`.
            let (done, bytes) =
                unsafe { short_runs_avx512::<N>(dst, room, words, start, levels, vbmi2, before) };
            *at += bytes;
            return done;
        }
        #[cfg(target_arch = "x86_64")]
        if KERNEL == AVX2 {
            let (dst, room) = (region.as_mut_ptr(), region.len());
            // SAFETY: only the AVX2 instantiation of `rows_body` gets here (the CPU has AVX2,
            // POPCNT and BMI1: `RowKernel::for_isa`); the kernel writes a word only while a
            // whole word's rows and the overrun fit in `region`.
            let (done, bytes) =
                unsafe { short_runs_avx2::<N>(dst, room, words, start, levels, before) };
            *at += bytes;
            return done;
        }
        let _ = (region, words, start, levels, before);
        0
    }

    /// Appends the rows of consecutive sparse words (word `k`'s bit `j` is element
    /// `start + 64 k + j`), gathered sixteen at a time across words ([`sparse_blocks_avx512`]),
    /// calling `before(k)` before word `k`; up to fifteen rows stay in `gathered` for
    /// [`Sink::flush_gathered`]. Returns how many words it took, as [`Sink::run_words`] does.
    #[inline(always)]
    fn sparse_blocks<const N: usize, const KERNEL: u8>(
        &mut self,
        words: &[u64],
        start: usize,
        gathered: &mut Gathered,
        before: impl FnMut(usize),
    ) -> usize {
        let (region, at) = self.room((16 + GROUP) * 4 * N + 64 * N);
        #[cfg(target_arch = "x86_64")]
        if KERNEL == AVX512_VBMI2 {
            let (dst, room) = (region.as_mut_ptr(), region.len());
            // SAFETY: only the VBMI2 instantiation of `rows_body` gets here (the CPU has
            // AVX-512 F, BW and VBMI2), and it gathers only words whose elements lie less than
            // 2^32 past the origin (`gathers`); the kernel writes a word only while its rows,
            // the gathered ones and the overrun fit in `region`.
            let (done, bytes) = unsafe {
                sparse_blocks_avx512::<N>(dst, room, words, start, gathered, false, before)
            };
            *at += bytes;
            return done;
        }
        let _ = (region, words, start, gathered, before);
        0
    }

    /// Appends the rows still gathered in `gathered`, exactly (no byte past them).
    fn flush_gathered<const N: usize, const KERNEL: u8>(&mut self, gathered: &mut Gathered) {
        if gathered.pending() == 0 {
            return;
        }
        let (region, at) = self.room(16 * 4 * N);
        #[cfg(target_arch = "x86_64")]
        if KERNEL == AVX512_VBMI2 {
            let (dst, room) = (region.as_mut_ptr(), region.len());
            // SAFETY: as in `sparse_blocks`; with no words, the kernel writes only the
            // gathered rows, which the output has room for (it holds every row).
            let (_, bytes) =
                unsafe { sparse_blocks_avx512::<N>(dst, room, &[], 0, gathered, true, |_| {}) };
            *at += bytes;
        }
        let _ = (region, at);
    }

    /// Rows the output still has room for (staged ones count as written).
    fn rows_left(&self, n: usize) -> usize {
        (self.out.len() - self.written - self.staged) / (4 * n)
    }

    /// Where the next rows go, from the first unwritten byte, and the count of bytes written
    /// there to advance: the stage (flushed first when fewer than `need` bytes of it are free)
    /// or the output.
    #[inline(always)]
    fn room(&mut self, need: usize) -> (&mut [u8], &mut usize) {
        if self.stream && self.stage.len() - self.staged < need {
            self.flush(false);
        }
        let (buffer, at) = if self.stream {
            (&mut self.stage[..], &mut self.staged)
        } else {
            (&mut self.out[..], &mut self.written)
        };
        (&mut buffer[*at..], at)
    }

    /// Copies the staged rows out: all of them, or (`all` false) as many as end on a 64-byte
    /// boundary of the output's memory, so that streamed pieces join up.
    fn flush(&mut self, all: bool) {
        // Rows are staged whole, and `settled` ends on a row.
        self.settle();
        let mut n = self.staged;
        if !all {
            let end = self.out.as_ptr() as usize + self.written + n;
            n -= (end % 64).min(n);
        }
        copy_streaming(
            &mut self.out[self.written..self.written + n],
            &self.stage[..n],
            true,
        );
        self.written += n;
        self.stage.copy_within(n..self.staged, 0);
        self.staged -= n;
        if self.swap.is_some() {
            // Every staged row was traded above.
            self.settled = self.staged;
        }
    }

    /// Copies out what is staged and orders the streamed stores.
    ///
    /// # Panics
    /// If the rows did not fill the output exactly (the count and the rows disagree).
    fn finish(mut self) {
        if self.stream {
            self.flush(true);
            stream_fence();
        } else {
            self.settle();
        }
        assert_eq!(
            self.written,
            self.out.len(),
            "NonZeroCoordinates rows miscounted"
        );
    }
}

/// Rows [`sparse_batch`] writes whatever the mask holds.
const SPARSE_BATCH: usize = 8;

/// Writes the rows of the set bits of `mask` (fewer than [`SPARSE_BATCH`]) as
/// [`sparse`] does, but always [`SPARSE_BATCH`] of them into `out` (room for that many):
/// rows past the set bits hold garbage that the next rows overwrite, and the loop has no
/// branch on the bit count, which a sparse random input mispredicts about once per word.
#[inline(always)]
fn sparse_batch<const N: usize>(out: &mut [u8], mask: u64, first: u32, template: &[u8; 4 * MAX_N]) {
    let mut mask = mask;
    for dst in out[..SPARSE_BATCH * 4 * N].chunks_exact_mut(4 * N) {
        write_row::<N>(dst, template, first.wrapping_add(mask.trailing_zeros()));
        mask &= mask.wrapping_sub(1);
    }
}

/// Writes one row of `N` coordinates into `dst`: `template` with `coordinate` in the last
/// column.
#[inline(always)]
fn write_row<const N: usize>(dst: &mut [u8], template: &[u8; 4 * MAX_N], coordinate: u32) {
    dst.copy_from_slice(&template[..4 * N]);
    dst[4 * (N - 1)..].copy_from_slice(&coordinate.to_le_bytes());
}

/// Writes into `out` (room for exactly one row per set bit of `mask`) the rows of `N`
/// coordinates of the set bits `j` of `mask`: `template` with `first + j` in the last column.
#[inline(always)]
fn sparse<const N: usize>(out: &mut [u8], mask: u64, first: u32, template: &[u8; 4 * MAX_N]) {
    for_each_row::<N>(out, mask, first, |dst, coordinate| {
        write_row::<N>(dst, template, coordinate);
    });
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
pub(super) const SET_BITS: [[u8; 8]; 256] = {
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

/// Eight rows of `N` coordinates fill `N` vectors of eight lanes: lane `l` of vector `k` holds
/// flat slot `8 k + l`, which is column `(8 k + l) % N` of row `(8 k + l) / N`. The table gives
/// each lane's column.
const fn lane_columns(n: usize) -> [[u32; 8]; MAX_N] {
    let mut table = [[0u32; 8]; MAX_N];
    let mut k = 0;
    while k < n {
        let mut l = 0;
        while l < 8 {
            table[k][l] = ((8 * k + l) % n) as u32;
            l += 1;
        }
        k += 1;
    }
    table
}

/// [`lane_columns`] for every `N` from 0 to [`MAX_N`].
pub(super) const LANE_COLUMNS: [[[u32; 8]; MAX_N]; MAX_N + 1] = {
    let mut tables = [[[0u32; 8]; MAX_N]; MAX_N + 1];
    let mut n = 1;
    while n <= MAX_N {
        tables[n] = lane_columns(n);
        n += 1;
    }
    tables
};

/// How [`dense_bytes_avx2`] puts eight rows' last coordinates in their lanes with in-lane
/// byte shuffles only (AVX2's lane-crossing permutes issue one a cycle on AMD Zen 3; the
/// in-lane ones two).
///
/// A byte's set-bit positions are broadcast to both 128-bit halves, and `expand` widens them
/// to eight 32-bit lanes in the order this layout chose. Vector `k`'s half `h` can then take
/// a row's coordinate only from half `h` of what it shuffles, so each row is placed in the half
/// of the vector its coordinate lands in: for `N` below 8 four rows land in each half. At
/// `N = 8` every row's coordinate is in the high half (lane 7), so vectors 0–3 shuffle the
/// expanded lanes with their halves swapped (`swapped`).
#[derive(Clone, Copy)]
struct InLaneLayout {
    /// Byte shuffle of the broadcast positions: 32-bit lane `λ` takes the position of the row
    /// placed there, zero-extended.
    expand: [u8; 32],
    /// Per vector, the byte shuffle of the expanded coordinates: each lane that holds a row's
    /// last column takes that row's coordinate, every other lane is zeroed.
    picks: [[u8; 32]; MAX_N],
    /// Per vector, whether it shuffles the expanded coordinates with their halves swapped.
    swapped: [bool; MAX_N],
}

/// [`InLaneLayout`] for rows of `n` coordinates; a layout that cannot exist fails the build.
const fn in_lane_layout(n: usize) -> InLaneLayout {
    const ZERO: u8 = 0x80;
    let mut layout = InLaneLayout {
        expand: [ZERO; 32],
        picks: [[ZERO; 32]; MAX_N],
        swapped: [false; MAX_N],
    };
    if n == 0 {
        return layout;
    }
    let mut k = 0;
    while k < n {
        layout.swapped[k] = n == 8 && k < 4;
        k += 1;
    }
    // Place each row's position in the half its coordinate's vector shuffles from.
    let mut lane_of_row = [0usize; 8];
    let mut filled = [0usize; 2];
    let mut row = 0;
    while row < 8 {
        let slot = row * n + n - 1;
        let (vector, half) = (slot / 8, slot % 8 / 4);
        let source = if layout.swapped[vector] {
            1 - half
        } else {
            half
        };
        assert!(filled[source] < 4, "no in-lane layout for this row length");
        lane_of_row[row] = 4 * source + filled[source];
        layout.expand[4 * lane_of_row[row]] = row as u8;
        filled[source] += 1;
        row += 1;
    }
    // Each lane of a row's last column takes that row's lane, within its own half.
    let mut slot = n - 1;
    while slot < 8 * n {
        let (vector, lane) = (slot / 8, slot % 8);
        let from = lane_of_row[slot / n] % 4;
        let mut b = 0;
        while b < 4 {
            layout.picks[vector][16 * (lane / 4) + 4 * (lane % 4) + b] = (4 * from + b) as u8;
            b += 1;
        }
        slot += n;
    }
    layout
}

/// [`in_lane_layout`] for every `N` from 0 to [`MAX_N`].
const IN_LANE_LAYOUTS: [InLaneLayout; MAX_N + 1] = {
    let mut layouts = [in_lane_layout(0); MAX_N + 1];
    let mut n = 1;
    while n <= MAX_N {
        layouts[n] = in_lane_layout(n);
        n += 1;
    }
    layouts
};

/// The `N` template vectors of eight rows (lane `l` of vector `k` holds the template's column
/// of that slot), rebuilt from the template when the run changed.
struct Lanes<const N: usize> {
    vectors: [[u32; 8]; N],
    /// True when the run moved since the vectors were built.
    stale: bool,
}

impl<const N: usize> Lanes<N> {
    fn new() -> Lanes<N> {
        Lanes {
            vectors: [[0; 8]; N],
            stale: true,
        }
    }

    /// Rebuilds the vectors from `template` if the run moved.
    #[inline(always)]
    fn refresh(&mut self, template: &[u8; 4 * MAX_N]) {
        if !self.stale {
            return;
        }
        self.stale = false;
        for (vector, columns) in self.vectors.iter_mut().zip(&LANE_COLUMNS[N]) {
            for (lane, &c) in vector.iter_mut().zip(columns) {
                let c = c as usize;
                *lane = u32::from_le_bytes(template[4 * c..4 * c + 4].try_into().unwrap());
            }
        }
    }
}

/// The rows of a dense mask with AVX2 ([`dense_avx2`]); `out` has room for the rows plus
/// `32 * N` bytes. Only reached from the AVX2 instantiation of [`rows_body`].
#[inline(always)]
fn dense<const N: usize>(out: &mut [u8], mask: u64, first: u32, lanes: &Lanes<N>) {
    let need = mask.count_ones() as usize * 4 * N + 32 * N;
    assert!(out.len() >= need, "dense rows: too little room");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: only called from `rows_avx2` (the CPU has AVX2; `AVX2` is false elsewhere), and
    // `out` has room for the rows and the overrun (asserted above).
    unsafe {
        dense_avx2::<N>(out.as_mut_ptr(), mask, first, lanes);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (first, lanes);
}

/// For each byte of `mask`: its set bits' coordinates in eight lanes (a table of positions
/// plus the byte's first coordinate), permuted into each row's last column and blended with
/// the template, as `N` unaligned 32-byte stores; the pointer moves by the byte's rows.
///
/// # Safety
/// The CPU must support AVX2; `out` must have room for one row of `N` coordinates per set bit
/// plus `32 * N` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn dense_avx2<const N: usize>(out: *mut u8, mask: u64, first: u32, lanes: &Lanes<N>) {
    use std::arch::x86_64::*;
    let templates =
        std::array::from_fn(|k| _mm256_loadu_si256(lanes.vectors[k].as_ptr().cast::<__m256i>()));
    dense_bytes_avx2::<N>(out, mask, first, &DenseTables::with_templates(templates));
}

/// [`dense_avx2`]'s vectors for rows of `N` coordinates, built once per run: the template's
/// columns in each row slot (zero where a row's last column goes), the in-lane shuffles of
/// [`InLaneLayout`].
#[cfg(target_arch = "x86_64")]
struct DenseTables<const N: usize> {
    templates: [std::arch::x86_64::__m256i; N],
    expand: std::arch::x86_64::__m256i,
    picks: [std::arch::x86_64::__m256i; N],
}

#[cfg(target_arch = "x86_64")]
impl<const N: usize> DenseTables<N> {
    /// The tables of rows whose outer columns are those of `template` (a row as a vector).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn new(template: std::arch::x86_64::__m256i) -> DenseTables<N> {
        use std::arch::x86_64::*;
        DenseTables::with_templates(std::array::from_fn(|k| {
            let columns = LANE_COLUMNS[N][k].as_ptr().cast::<__m256i>();
            _mm256_permutevar8x32_epi32(template, _mm256_loadu_si256(columns))
        }))
    }

    /// The tables with the template vectors given ([`Lanes`]).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn with_templates(templates: [std::arch::x86_64::__m256i; N]) -> DenseTables<N> {
        use std::arch::x86_64::*;
        let load = |v: *const u8| _mm256_loadu_si256(v.cast::<__m256i>());
        let last = _mm256_set1_epi32(N as i32 - 1);
        let layout = &IN_LANE_LAYOUTS[N];
        DenseTables {
            templates: std::array::from_fn(|k| {
                let columns = load(LANE_COLUMNS[N][k].as_ptr().cast());
                _mm256_andnot_si256(_mm256_cmpeq_epi32(columns, last), templates[k])
            }),
            expand: load(layout.expand.as_ptr()),
            picks: std::array::from_fn(|k| load(layout.picks[k].as_ptr())),
        }
    }
}

/// The template row as an AVX2 vector: its `N` columns in the low lanes, the rest zero.
///
/// Built column by column from 4-byte loads, not by one vector load: the cursor has just
/// written the template with 4-byte stores when a run starts, and a 32-byte load of them
/// cannot be forwarded from those stores. It waited for them to reach the cache (8 % of one
/// thread's rows time at UINT8 5 %, runs of 1000, two loads per run).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn template_vector_avx2<const N: usize>(
    template: &[u8; 4 * MAX_N],
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // Volatile, or the compiler joins the loads into one vector load again.
    let column = |c: usize| {
        if c < N {
            // In bounds: `c < N <= MAX_N`, 4 bytes per column.
            i32::from_le_bytes(std::ptr::read_volatile(
                template.as_ptr().add(4 * c).cast::<[u8; 4]>(),
            ))
        } else {
            0
        }
    };
    _mm256_setr_epi32(
        column(0),
        column(1),
        column(2),
        column(3),
        column(4),
        column(5),
        column(6),
        column(7),
    )
}

/// AVX2 rows over consecutive words of one run (word `k`'s bit `j` has the last coordinate
/// `first + 64 k + j`), the template and tables held in registers: rows from `dst`, while at
/// least one full word's rows and the overrun fit in `room` bytes; calls `before(k)` before
/// word `k`. A word of at most [`SPARSE_BATCH`] set bits writes that many rows whatever its
/// count (the template as one vector store, the coordinate over its last column), a denser
/// one goes through [`dense_avx2`]'s table. Returns the words taken and the bytes written.
///
/// Word by word through [`rows_body`]'s general loop, with its cursor, room and path checks
/// per word, AMD Zen 3 (AVX2) took 16 ns a word: UINT8 3e7 at 5 % on one thread 8–10 ms
/// against a floor of 2.7.
///
/// # Safety
/// The CPU must support AVX2, POPCNT and BMI1; `room` bytes writable at `dst`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1")]
#[inline]
unsafe fn run_words_avx2<const N: usize>(
    dst: *mut u8,
    room: usize,
    words: &[u64],
    first: u32,
    template: &[u8; 4 * MAX_N],
    mut before: impl FnMut(usize),
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let worst = GROUP * 4 * N + 32 * N;
    let row = template_vector_avx2::<N>(template);
    let tables = DenseTables::<N>::new(row);
    let mut written = 0;
    let mut first = first;
    for (k, &mask) in words.iter().enumerate() {
        if room - written < worst {
            return (k, written);
        }
        before(k);
        let at = dst.add(written);
        let count = mask.count_ones() as usize;
        if count <= SPARSE_BATCH {
            let mut bits = mask;
            for r in 0..SPARSE_BATCH {
                let position = bits.trailing_zeros();
                bits &= bits.wrapping_sub(1);
                // In bounds: `worst` bytes remain from `at`, and row `r < 8` ends by
                // `4 N r + 32 <= worst`.
                let slot = at.add(4 * N * r);
                _mm256_storeu_si256(slot.cast::<__m256i>(), row);
                slot.add(4 * (N - 1))
                    .cast::<u32>()
                    .write_unaligned(first.wrapping_add(position));
            }
        } else {
            dense_bytes_avx2::<N>(at, mask, first, &tables);
        }
        written += count * 4 * N;
        first = first.wrapping_add(GROUP as u32);
    }
    (words.len(), written)
}

/// [`dense_avx2`]'s loop over the bytes of `mask`, with its tables built already: per byte, its
/// set-bit positions broadcast from a table, widened and offset by the byte's first coordinate
/// ([`InLaneLayout`]), then per vector one byte shuffle, an OR with the template and a store.
/// A zero byte writes its vectors too (they are overwritten or past the end) rather than branch.
///
/// With `vpermd` per vector and a lane-crossing widening and broadcast per byte, six of the
/// byte's ops issued one a cycle on AMD Zen 3 (45–58 ns a mask word at rows of 4, in cache).
/// In-lane, one thread, calls alternated, medians of 11 (ms): UINT8 `[30000000]` 50 % 13.2 →
/// 8.6, `[3, 10, 1000, 1000]` 30 % 27.8 → 20.7, `[5477, 5477]` 50 % 20.7 → 16.3.
///
/// # Safety
/// As [`dense_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
#[inline]
unsafe fn dense_bytes_avx2<const N: usize>(
    out: *mut u8,
    mask: u64,
    first: u32,
    tables: &DenseTables<N>,
) {
    use std::arch::x86_64::*;
    let swapped = &IN_LANE_LAYOUTS[N].swapped;
    let eight = _mm256_set1_epi32(8);
    let mut base = _mm256_set1_epi32(first as i32);
    let mut at = out;
    for byte in mask.to_le_bytes() {
        let positions = _mm256_set1_epi64x(i64::from_le_bytes(SET_BITS[usize::from(byte)]));
        let coordinates = _mm256_add_epi32(_mm256_shuffle_epi8(positions, tables.expand), base);
        let halves_swapped = if N == 8 {
            _mm256_permute2x128_si256::<1>(coordinates, coordinates)
        } else {
            coordinates
        };
        let vectors = tables.templates.iter().zip(&tables.picks).zip(swapped);
        for (k, ((&template, &pick), &swapped)) in vectors.enumerate() {
            let source = if swapped { halves_swapped } else { coordinates };
            let row = _mm256_or_si256(template, _mm256_shuffle_epi8(source, pick));
            // The store lies inside the room the caller guarantees: `at` is at most the end of
            // the rows, and `32 * N` bytes past it are in bounds.
            _mm256_storeu_si256(at.add(32 * k).cast::<__m256i>(), row);
        }
        at = at.add(byte.count_ones() as usize * 4 * N);
        base = _mm256_add_epi32(base, eight);
    }
}

/// The rows of any mask with AVX-512 ([`batch_avx512`]); `out` has room for the rows plus
/// `64 * N` bytes. Only reached from the AVX-512 instantiations of [`rows_body`]; `vbmi2` only
/// from [`rows_avx512_vbmi2`].
#[inline(always)]
fn batch<const N: usize>(
    out: &mut [u8],
    mask: u64,
    first: u32,
    template: &[u8; 4 * MAX_N],
    vbmi2: bool,
) {
    let need = mask.count_ones() as usize * 4 * N + 64 * N;
    assert!(out.len() >= need, "AVX-512 rows: too little room");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: only called from `rows_avx512` and `rows_avx512_vbmi2` (the CPU has AVX-512 F,
    // and VBMI2 when `vbmi2`), and `out` has room for the rows and the overrun (asserted
    // above).
    unsafe {
        batch_avx512::<N>(out.as_mut_ptr(), mask, first, template, vbmi2);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (first, template, vbmi2);
}

/// For each 16-element lane group of a row block: which coordinate it takes, as an index for
/// `vpermt2d` over two vectors (the sixteen rows' last coordinates, then the template). Slot
/// `16 k + l` of the block is column `c = (16 k + l) % N` of row `(16 k + l) / N`: the
/// coordinate when `c` is the last column, else the template's column `c` (index `16 + c`);
/// with `trade`, each of those two columns takes the other's.
const fn block_table(n: usize, trade: Option<(usize, usize)>) -> [[u32; 16]; MAX_N] {
    let mut table = [[0u32; 16]; MAX_N];
    let mut k = 0;
    while k < n {
        let mut l = 0;
        while l < 16 {
            let slot = 16 * k + l;
            let (row, column) = (slot / n, slot % n);
            let from = match trade {
                Some(columns) => traded_column(column, columns),
                None => column,
            };
            table[k][l] = if from == n - 1 { row } else { 16 + from } as u32;
            l += 1;
        }
        k += 1;
    }
    table
}

/// The column whose value `column` takes when columns `a` and `b` trade places.
const fn traded_column(column: usize, (a, b): (usize, usize)) -> usize {
    if column == a {
        b
    } else if column == b {
        a
    } else {
        column
    }
}

/// [`block_table`] for every `N` from 0 to [`MAX_N`].
const BLOCK_TABLES: [[[u32; 16]; MAX_N]; MAX_N + 1] = {
    let mut tables = [[[0u32; 16]; MAX_N]; MAX_N + 1];
    let mut n = 1;
    while n <= MAX_N {
        tables[n] = block_table(n, None);
        n += 1;
    }
    tables
};

/// The rows of the set bits of `mask` with no branch per bit. A mask of at most sixteen bits
/// is one block: its coordinates `first + j` in one vector ([`few_vbmi2`] or
/// [`few_expanded`]), which becomes sixteen rows in `N` vectors (one `vpermt2d` of the
/// coordinates and the template per vector, then an unaligned 64-byte store), of which only
/// the first `N.div_ceil(2)` (eight rows or more) are built when the rows fit them: on AMD Zen 4
/// the permutes and the position compress bound this loop, and a word at 5 % density has
/// eight bits or fewer all but 0.2 % of the time (UINT8 3e7 at 5 %, one thread: 4.1 → 3.8
/// ms in one process, same buffers). A denser mask
/// is four blocks, one per sixteen bits (`vpcompressd`), each followed by the pointer moving by
/// its real rows; with VBMI2, its positions in one `vpcompressb`, cut into blocks of sixteen
/// that are full but the last (two to four: a quarter to a half fewer permutes at 30–50 %
/// density, in a C model of the loop 12.7 → 6.3–7.9 ns per word). Everything stays in
/// registers: a list of coordinates stored and loaded again stalled on store forwarding.
///
/// # Safety
/// The CPU must support AVX-512 F, and VBMI2 when `vbmi2`; `out` must have room for one row of
/// `N` coordinates per set bit plus `64 * N` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,popcnt")]
#[inline]
unsafe fn batch_avx512<const N: usize>(
    out: *mut u8,
    mask: u64,
    first: u32,
    template: &[u8; 4 * MAX_N],
    vbmi2: bool,
) {
    let (template, tables) = row_tables::<N>(template);
    word_rows::<N>(out, mask, first, template, &tables, vbmi2);
}

/// The template row as a vector (its `N` columns in the low lanes) and the `N` permute tables
/// of [`BLOCK_TABLES`] for rows of `N` coordinates.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
#[inline]
unsafe fn row_tables<const N: usize>(
    template: &[u8; 4 * MAX_N],
) -> (std::arch::x86_64::__m512i, [std::arch::x86_64::__m512i; N]) {
    use std::arch::x86_64::*;
    (
        template_vector::<N>(template),
        std::array::from_fn(|k| _mm512_loadu_si512(BLOCK_TABLES[N][k].as_ptr().cast())),
    )
}

/// The template row as a vector: its columns in the low lanes, the rest zero
/// ([`template_vector_avx2`], widened).
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
#[inline]
unsafe fn template_vector<const N: usize>(
    template: &[u8; 4 * MAX_N],
) -> std::arch::x86_64::__m512i {
    std::arch::x86_64::_mm512_zextsi256_si512(template_vector_avx2::<N>(template))
}

/// The rows of one word's set bits from `at` (the body of [`batch_avx512`], with the template
/// and tables of [`row_tables`]).
///
/// # Safety
/// As [`batch_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,popcnt")]
#[inline]
unsafe fn word_rows<const N: usize>(
    at: *mut u8,
    mask: u64,
    first: u32,
    template: std::arch::x86_64::__m512i,
    tables: &[std::arch::x86_64::__m512i; N],
    vbmi2: bool,
) {
    use std::arch::x86_64::*;
    // Rows from `block`'s coordinates at `at`: the vectors `vectors` of its sixteen. In
    // bounds: `at` is at most the start of the last row, and the caller's room covers
    // `64 * N` bytes past it.
    let store = |at: *mut u8, block: __m512i, vectors: std::ops::Range<usize>| {
        for k in vectors {
            let rows = _mm512_permutex2var_epi32(block, tables[k], template);
            _mm512_storeu_si512(at.add(64 * k).cast(), rows);
        }
    };
    let count = mask.count_ones() as usize;
    if count <= 16 {
        let block = if vbmi2 {
            few_vbmi2(mask, first)
        } else {
            few_expanded(mask, first)
        };
        // A sparse word's rows usually fit the first half of the vectors (eight rows or
        // more): the permutes, not the stores, bound this loop, so the rest are built only
        // when its rows reach them.
        let half = N.div_ceil(2);
        store(at, block, 0..half);
        if count * N > 16 * half {
            store(at, block, half..N);
        }
    } else if vbmi2 {
        // A dense word's positions in one compress, cut into blocks of sixteen: every block
        // but the last is full, so its rows take the fewest permutes (two blocks at least,
        // as the word has more than sixteen bits). Block `b` starts at row `16 b`.
        let positions = set_bit_positions(mask);
        store(at, lane_coordinates::<0>(positions, first), 0..N);
        store(
            at.add(64 * N),
            lane_coordinates::<1>(positions, first),
            0..N,
        );
        if count > 32 {
            store(
                at.add(128 * N),
                lane_coordinates::<2>(positions, first),
                0..N,
            );
            if count > 48 {
                store(
                    at.add(192 * N),
                    lane_coordinates::<3>(positions, first),
                    0..N,
                );
            }
        }
    } else {
        let mut at = at;
        for quarter in 0..4 {
            let (bits, coordinates) = quarter_coordinates(mask, first, quarter);
            store(at, coordinates, 0..N);
            at = at.add(bits.count_ones() as usize * 4 * N);
        }
    }
}

/// [`batch_avx512`] over consecutive words (word `k`'s bit `j` is element `start + 64 k + j`)
/// of runs of at least a word, from `cursor`'s run (which holds `start`), the template and
/// tables in registers: rows from `dst`, while at least one full word's rows and the overrun
/// fit in `room` bytes; calls `before(k)` before word `k`. A word holds the end of at most
/// one run: its bits before that end take the run's template, the rest the next run's, the
/// cursor moved on between them. Returns the words taken and the bytes of rows written; the
/// cursor is left on the run holding the next word's first element, or the run before.
///
/// Ending the loop at each run's end, with the word across it written through
/// [`rows_body`]'s general path, cost about 20 ns a run: FLOAT16 `[62539, 215]` at 25 % on
/// one thread took 1.6 times the memory floor.
///
/// The words wholly inside the current run, as many as surely fit the room, go through an
/// inner loop with no run or room check; the word that ends the run is taken alone. With the
/// checks in every word, a word of UINT8 (64 bytes of input) cost about 3.4 ns however few
/// its set bits: `[3, 10, 1000, 1000]` at 5 % took 1.80 ms on one thread, 1.58 so.
///
/// With `TRADED`, `traded` (a [`ColumnSwap`]'s tables) in place of [`BLOCK_TABLES`]: the rows
/// come out with their columns traded.
///
/// With `skip_zero_words` (a sparse chunk: [`SKIP_ZERO_WORDS`]), the words inside a run are
/// taken eight at a time: one test finds the nonzero ones, and only they build rows, each
/// checked against the room (its rows and the overrun). Without it, the room bound assumes
/// full words, which in a sparse chunk let a few words through at a time and left the
/// chunk's last 80 rows or so to the general path, a word at a time.
///
/// Always inlined, into [`run_words_vbmi2`] or [`run_words_avx512f`], which set the target
/// features: compiled with AVX-512 F alone, this loop called the VBMI2 compress of every word
/// ([`few_vbmi2`], [`set_bit_positions`]) out of line, its vectors spilled around the call.
/// Inlined, on one core (one process, libraries alternated, medians of 21), rank 1
/// `[30000000]` at 5 % went 2.58–2.66 → 1.72–1.97 ms in UINT8 and 6.4–6.6 → 5.8–6.2 in
/// FLOAT32; with rows of 4 coordinates (`[3, 10, 1000, 1000]`), whose permutes and stores
/// weigh more, UINT8 5 % 2.51 → 2.42 and FLOAT32 6.65 → 6.57, and 50 % did not move.
///
/// # Safety
/// The CPU must support AVX-512 F, and VBMI2 when `vbmi2`; `room` bytes writable at `dst`;
/// the cursor's runs at least [`GROUP`] elements long.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn run_words_avx512<const N: usize, const TRADED: bool>(
    dst: *mut u8,
    room: usize,
    words: &[u64],
    start: usize,
    cursor: &mut Cursor,
    vbmi2: bool,
    traded: &[[u32; 16]; MAX_N],
    skip_zero_words: bool,
    mut before: impl FnMut(usize),
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let worst = GROUP * 4 * N + 64 * N;
    let inner = cursor.shape.inner;
    let (mut template, mut tables) = row_tables::<N>(&cursor.template);
    if TRADED {
        tables = std::array::from_fn(|k| _mm512_loadu_si512(traded[k].as_ptr().cast()));
    }
    // The template of the next run: the current one a step on in the stepped column, or
    // rebuilt where a carry changed more (`Cursor::next_run`). Rebuilt at every run, with
    // the cursor's general advance, a run cost about 4 ns: a quarter of a word's time at runs
    // of 1000 UINT8 elements (`[3, 10, 1000, 1000]`).
    let step = match cursor.shape.stepped {
        Some((_, column)) => _mm512_maskz_set1_epi32(1 << column, 1),
        None => _mm512_setzero_si512(),
    };
    let next_run = |cursor: &mut Cursor, template: __m512i| {
        if cursor.next_run() {
            _mm512_add_epi32(template, step)
        } else {
            template_vector::<N>(&cursor.template)
        }
    };
    // The rows of `mask`'s set bits at `dst + at` with `template`, `first` the last
    // coordinate of its bit 0; returns their bytes. In bounds where it is called: `worst`
    // bytes remain from `at` (the rows of a word's two parts together are the word's).
    let rows_at = |at: usize, mask: u64, first: usize, template| {
        // SAFETY: as above, and this function's contract.
        unsafe { word_rows::<N>(dst.add(at), mask, first as u32, template, &tables, vbmi2) };
        mask.count_ones() as usize * 4 * N
    };
    let mut written = 0;
    // The last coordinate of the word's bit 0: under `inner + GROUP` at the top of the loop,
    // under `inner` once the cursor caught up (runs are at least a word long).
    let mut first = start - cursor.run_start;
    // Whether the rows of `mask` and the overrun fit from `written`.
    let fits =
        |written: usize, mask: u64| room - written >= mask.count_ones() as usize * 4 * N + 64 * N;
    let mut k = 0;
    while k < words.len() {
        if first >= inner {
            template = next_run(cursor, template);
            first -= inner;
        }
        // The words wholly inside the run, in loops with no run check.
        let in_run = ((inner - first) / GROUP).min(words.len() - k);
        if skip_zero_words {
            // Zero words skipped eight at a time; each word's rows checked against the room.
            let mut left = in_run;
            while left > 0 {
                let take = left.min(8);
                for j in 0..take {
                    before(k + j);
                }
                let lanes = ((1u32 << take) - 1) as u8;
                let group = _mm512_maskz_loadu_epi64(lanes, words.as_ptr().add(k).cast());
                let mut nonzero = _mm512_test_epi64_mask(group, group);
                while nonzero != 0 {
                    let j = nonzero.trailing_zeros() as usize;
                    nonzero &= nonzero - 1;
                    let mask = words[k + j];
                    if !fits(written, mask) {
                        return (k + j, written);
                    }
                    written += rows_at(written, mask, first + GROUP * j, template);
                }
                first += take * GROUP;
                k += take;
                left -= take;
            }
        } else {
            if room - written < worst {
                return (k, written);
            }
            // As many as surely fit the room, with no room check.
            let inside = in_run.min((room - written - worst) / (GROUP * 4 * N) + 1);
            for &mask in &words[k..k + inside] {
                before(k);
                // In bounds: each of these words' rows and the overrun fit (`inside` above).
                written += rows_at(written, mask, first, template);
                first += GROUP;
                k += 1;
            }
        }
        if k == words.len() {
            continue;
        }
        if !fits(written, words[k]) {
            return (k, written);
        }
        let mask = words[k];
        before(k);
        k += 1;
        if first >= inner {
            template = next_run(cursor, template);
            first -= inner;
        }
        // In bounds below: the word's rows and the overrun fit (`fits` above), and the rows
        // of the word's two parts together are the word's.
        let left_in_run = inner - first;
        if left_in_run >= GROUP || mask >> left_in_run == 0 {
            written += rows_at(written, mask, first, template);
        } else {
            let before_end = mask & ((1u64 << left_in_run) - 1);
            written += rows_at(written, before_end, first, template);
            template = next_run(cursor, template);
            // Wrapping: bit 0 lies before the new run, and only bits inside it are written.
            first = first.wrapping_sub(inner);
            let after_end = mask & !before_end;
            written += rows_at(written, after_end, first, template);
        }
        first = first.wrapping_add(GROUP);
    }
    (words.len(), written)
}

/// Defines `unsafe fn $name<const N: usize, const TRADED: bool>`: [`run_words_avx512`]
/// compiled with the target features `$features`, VBMI2 among them when `$vbmi2`, so that the
/// set bits' compress ([`few_vbmi2`], [`set_bit_positions`]) is inlined into the word loop.
macro_rules! run_words_kernel {
    ($(#[$doc:meta])* $name:ident, $vbmi2:literal, $features:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("As [`run_words_avx512`]; the CPU must support ", $features, ".")]
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $name<const N: usize, const TRADED: bool>(
            dst: *mut u8,
            room: usize,
            words: &[u64],
            start: usize,
            cursor: &mut Cursor,
            traded: &[[u32; 16]; MAX_N],
            skip_zero_words: bool,
            before: impl FnMut(usize),
        ) -> (usize, usize) {
            run_words_avx512::<N, TRADED>(
                dst,
                room,
                words,
                start,
                cursor,
                $vbmi2,
                traded,
                skip_zero_words,
                before,
            )
        }
    };
}

run_words_kernel!(
    /// [`run_words_avx512`] with VBMI2.
    run_words_vbmi2,
    true,
    "avx512f,avx512bw,avx512vbmi2,avx2,popcnt"
);
run_words_kernel!(
    /// [`run_words_avx512`] without VBMI2.
    run_words_avx512f,
    false,
    "avx512f,avx2,popcnt"
);

/// The tables [`run_words_avx512`] takes for untraded rows (unread: it uses [`BLOCK_TABLES`]).
const UNTRADED: &[[u32; 16]; MAX_N] = &[[0; 16]; MAX_N];

/// Bits `16 quarter ..` of `mask`, and their coordinates `first + j` packed into the low lanes.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn quarter_coordinates(
    mask: u64,
    first: u32,
    quarter: u32,
) -> (u16, std::arch::x86_64::__m512i) {
    use std::arch::x86_64::*;
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let bits = (mask >> (16 * quarter)) as u16;
    let base = _mm512_set1_epi32(first.wrapping_add(16 * quarter) as i32);
    (
        bits,
        _mm512_maskz_compress_epi32(bits, _mm512_add_epi32(iota, base)),
    )
}

/// The coordinates `first + j` of the set bits of `mask` (at most sixteen) in the low lanes,
/// from its four quarters, each expanded into the lanes after the previous ones.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
#[inline]
unsafe fn few_expanded(mask: u64, first: u32) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let mut block = _mm512_setzero_si512();
    let mut count = 0u32;
    for quarter in 0..4 {
        let (bits, coordinates) = quarter_coordinates(mask, first, quarter);
        // Lanes from `count` on take the quarter's coordinates, in order.
        let free = (0xffff_u32 << count) as u16;
        block = _mm512_mask_expand_epi32(block, free, coordinates);
        count += bits.count_ones();
    }
    block
}

/// [`few_expanded`] in one compress: the set bits' positions as bytes (`vpcompressb`), widened
/// to 32 bits.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
#[inline]
unsafe fn few_vbmi2(mask: u64, first: u32) -> std::arch::x86_64::__m512i {
    lane_coordinates::<0>(set_bit_positions(mask), first)
}

/// The positions `j` of the set bits of `mask`, in increasing order, as the low bytes of a
/// vector (`vpcompressb`; the bytes past them zero).
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
#[inline]
pub(super) unsafe fn set_bit_positions(mask: u64) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let positions: [u8; 64] = std::array::from_fn(|j| j as u8);
    _mm512_maskz_compress_epi8(mask, _mm512_loadu_si512(positions.as_ptr().cast()))
}

/// The coordinates `first + p` of the sixteen byte positions `p` in 128-bit lane `LANE` of
/// `positions`, as 32-bit lanes.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn lane_coordinates<const LANE: i32>(
    positions: std::arch::x86_64::__m512i,
    first: u32,
) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let bytes = _mm512_extracti32x4_epi32::<LANE>(positions);
    _mm512_add_epi32(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(first as i32))
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// `vpshufb` on one 32-byte vector, in scalar: each half picks from its own 16 bytes, and
    /// a control byte with its top bit set gives zero.
    fn shuffle_bytes(source: &[u8; 32], control: &[u8; 32]) -> [u8; 32] {
        std::array::from_fn(|i| {
            let c = control[i];
            if c & 0x80 != 0 {
                0
            } else {
                source[16 * (i / 16) + usize::from(c & 15)]
            }
        })
    }

    #[test]
    fn in_lane_layouts_put_each_rows_position_in_its_last_column_and_zero_elsewhere() {
        for n in 1..=MAX_N {
            let layout = &IN_LANE_LAYOUTS[n];
            // Eight distinct positions, broadcast to every 8 bytes as the load does.
            let positions: [u8; 8] = std::array::from_fn(|r| 10 + r as u8);
            let broadcast: [u8; 32] = std::array::from_fn(|i| positions[i % 8]);
            let expanded = shuffle_bytes(&broadcast, &layout.expand);
            let swapped: [u8; 32] = std::array::from_fn(|i| expanded[(i + 16) % 32]);
            for k in 0..n {
                let source = if layout.swapped[k] {
                    &swapped
                } else {
                    &expanded
                };
                let vector = shuffle_bytes(source, &layout.picks[k]);
                for lane in 0..8 {
                    let slot = 8 * k + lane;
                    let value =
                        u32::from_le_bytes(vector[4 * lane..4 * lane + 4].try_into().unwrap());
                    let expected = if slot % n == n - 1 {
                        u32::from(positions[slot / n])
                    } else {
                        0
                    };
                    assert_eq!(value, expected, "rows of {n}: vector {k}, lane {lane}");
                }
            }
        }
    }

    #[test]
    fn read_ahead_goes_into_l1_on_amd_for_sparse_chunks_only() {
        let amd = amd_cpu();
        // One line a word: up to a quarter nonzero.
        assert_eq!(read_ahead_into_l1(1, 25, 100), amd);
        assert!(!read_ahead_into_l1(1, 26, 100));
        // Several lines a word: up to `NONZERO_WIDE_L1_READ_AHEAD_DENSITY`.
        assert_eq!(read_ahead_into_l1(2, 2, 100), amd);
        assert_eq!(read_ahead_into_l1(4, 0, 100), amd);
        assert!(!read_ahead_into_l1(2, 3, 100));
        assert!(!read_ahead_into_l1(8, 25, 100));
    }

    /// The rows `batch` must write for `mask`: `template` with `first + j` last, per set bit.
    fn expected_rows(n: usize, mask: u64, first: u32, template: &[u8; 4 * MAX_N]) -> Vec<u8> {
        let mut rows = Vec::new();
        for j in (0..64).filter(|j| mask >> j & 1 == 1) {
            rows.extend_from_slice(&template[..4 * (n - 1)]);
            rows.extend_from_slice(&first.wrapping_add(j).to_le_bytes());
        }
        rows
    }

    /// Masks that put sixteen bits or fewer in one block, sixteen in one quarter, full
    /// quarters, the edges, every bit count, and random ones of every density.
    fn masks() -> Vec<u64> {
        let mut masks = vec![
            0,
            1,
            1 << 15,
            1 << 63,
            0xffff,
            u64::MAX,
            0x8000_0000_0000_8000,
        ];
        masks.extend((0..4).map(|q| 0xffff << (16 * q)));
        masks.extend((0..4).map(|q| 0x7fff << (16 * q + 1)));
        masks.push(0x0001_0001_0001_0001 * 0xf);
        // Every bit count, at both ends of the word and spread over it: the counts around
        // eight rows decide how many vectors a sparse block stores, those around 32 and 48
        // how many blocks a dense word stores.
        for count in 1..=64 {
            let low = u64::MAX >> (64 - count);
            masks.extend([low, low << (64 - count), spread(count)]);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..400 {
            let (x, y) = (next(), next());
            masks.extend([x, x & y, x & y & (y >> 7), x | y]);
        }
        masks
    }

    /// `count` (1 to 64) bits spread evenly over the word.
    fn spread(count: u32) -> u64 {
        (0..count).fold(0, |mask, j| mask | 1 << (j * 64 / count))
    }

    fn check<const N: usize>(vbmi2: bool) {
        let template: [u8; 4 * MAX_N] = std::array::from_fn(|i| 0xa0 ^ i as u8);
        for mask in masks() {
            for first in [0u32, 7, u32::MAX - 20] {
                let want = expected_rows(N, mask, first, &template);
                let mut out = vec![0x5a_u8; want.len() + 64 * N];
                batch::<N>(&mut out, mask, first, &template, vbmi2);
                assert!(
                    out[..want.len()] == want[..],
                    "N {N}, mask {mask:#018x}, first {first}, vbmi2 {vbmi2}"
                );
            }
        }
    }

    #[test]
    fn the_stage_starts_on_a_cache_line_and_only_when_streaming() {
        // Held together, with small allocations between them, so that the allocator cannot
        // hand back one address every time.
        let mut held = Vec::new();
        for k in 0..8 {
            let stage = Stage::new(true);
            assert_eq!(stage.as_ptr() as usize % 64, 0);
            assert_eq!(stage.len(), STAGE_CAPACITY);
            held.push((stage, vec![0u8; 8 + 24 * k]));
        }
        assert!(Stage::new(false).is_empty());
    }

    #[test]
    fn column_swaps_by_vectors_match_the_row_by_row_trade() {
        if !std::is_x86_feature_detected!("avx512f") {
            return;
        }
        for n in 2..=MAX_N {
            for a in 0..n {
                for b in a + 1..n {
                    for rows in [0, 1, 15, 16, 17, 47, 48, 100] {
                        let original: Vec<u8> =
                            (0..rows * 4 * n).map(|i| (i * 7 + 3) as u8).collect();
                        let mut expected = original.clone();
                        swap_columns(&mut expected, n, (a, b));
                        let mut traded = original.clone();
                        ColumnSwap::new(n, (a, b), true).apply(&mut traded);
                        assert_eq!(traded, expected, "n {n} columns {a} {b} rows {rows}");
                    }
                }
            }
        }
    }

    #[test]
    fn avx512_batches_write_the_rows_of_every_mask() {
        let has = |f: &str| match f {
            "avx512f" => std::is_x86_feature_detected!("avx512f"),
            _ => std::is_x86_feature_detected!("avx512vbmi2"),
        };
        if !has("avx512f") {
            eprintln!("no AVX-512 on this CPU: the batch kernel is not reachable here");
            return;
        }
        let modes = if has("avx512vbmi2") {
            vec![false, true]
        } else {
            vec![false]
        };
        for vbmi2 in modes {
            check::<1>(vbmi2);
            check::<2>(vbmi2);
            check::<3>(vbmi2);
            check::<4>(vbmi2);
            check::<5>(vbmi2);
            check::<6>(vbmi2);
            check::<7>(vbmi2);
            check::<8>(vbmi2);
        }
    }
}
