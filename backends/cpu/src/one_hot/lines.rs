//! OneHot with the Axis last and a depth of at most
//! [`ONE_HOT_LINES_MAX_DEPTH`]): every 64-byte output line is built in registers from the
//! positions of the rows it covers, with AVX-512 VBMI (with AVX2, 16 bytes at a time for
//! short rows).
//!
//! With depth `d` and `e`-byte elements, a line of `64 / e` elements whose first element is
//! row `r`, column `c` covers rows `r ..= r + (c + 64 / e - 1) / d` (at most 64 of them). The
//! positions of the 64 rows from `r`, a byte each, are loaded as one vector; a byte permute
//! by the row of every byte of the line (a table per phase `c`, [`LineTables`]) gives each
//! byte its row's position, a byte compare with the column of every byte marks the OnValue
//! bytes (all bytes of an element share its row and column, so the mask is whole elements),
//! and a masked blend of the two values' 64-byte patterns is the line.
//!
//! When a row fills a line or more (`depth × e ≥ 64`), a line holds parts of at most two
//! rows, and the lines are written a row at a time instead ([`body_rows`]): one mask from the
//! row's position, and the previous row's OnValue carried into the line the two share. Rows
//! of more than a line and less than
//! [`ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES`](crate::thresholds::ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES),
//! whose count of lines varies from row to row, build eight lines' masks at once in a vector
//! instead ([`body_groups`]).
//!
//! Without AVX-512, AVX2 builds 16 bytes at a time the same way, a byte shuffle (whose reach
//! is 16 bytes) in place of the permute, for rows of at most
//! [`ONE_HOT_HALVES_MAX_ROW_BYTES`] ([`write_halves_avx2`]).
//!
//! The scatter kernel marks each OnValue in a line mask one index at a time: at depth 1–7
//! that chain of loads and stores, and the branches of resolving each index, took about 5 ns
//! per index (INT64 → FLOAT32 at depth 2: 6.8 times the floor, behind numpy).

use super::{Fill, Indices, Value};
use crate::element::OneHotIndex;
use crate::simd::{has_avx512_vbmi, prefetch_ahead, Isa};
use crate::thresholds::{
    ONE_HOT_HALVES_MAX_ROW_BYTES, ONE_HOT_LINES_BLOCK_ROWS as BLOCK_ROWS, ONE_HOT_LINES_MAX_DEPTH,
    ONE_HOT_LINES_MIN_BYTES, ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES as GROUPS_MAX_ROW_BYTES,
    ONE_HOT_WIDE_INDEX_PREFETCH_BYTES as WIDE_PREFETCH_BYTES,
    ONE_HOT_WIDE_INDEX_STEP_BYTES as WIDE_STEP_BYTES,
};
use std::sync::OnceLock;

/// The byte position of an index outside the sequence (no column is this large).
const NO_BYTE_POSITION: u8 = 0xFF;

// Columns fit a byte below `NO_BYTE_POSITION`; a line's row offsets (at most 63, one row per
// element at most) fit a byte permute's 64 lanes whatever the depth.
const _: () = assert!(ONE_HOT_LINES_MAX_DEPTH <= NO_BYTE_POSITION as usize);
// A refilled block holds a whole window of rows past the line's first.
const _: () = assert!(BLOCK_ROWS > 64);
// OUT_OF_RANGE_PAST_THE_LINE: in `body_groups`, a row's start lies less than a row before its
// line's, so an OnValue at byte position NO_BYTE_POSITION lands at least 64 bytes on.
const _: () = assert!(GROUPS_MAX_ROW_BYTES - 1 + 64 <= NO_BYTE_POSITION as usize);

/// The byte permute and compare vectors of a line by its phase (the column of its first
/// element), and how far a line advances.
pub(super) struct LineTables {
    depth: usize,
    /// `rows[c][b]`: the row of byte `b` of a line of phase `c`, from the line's first row.
    rows: Vec<[u8; 64]>,
    /// `columns[c][b]`: the column of byte `b` of a line of phase `c`.
    columns: Vec<[u8; 64]>,
    /// A line's elements, as whole rows and the columns left: `64 / e = whole_rows · depth +
    /// extra_columns`.
    whole_rows: usize,
    extra_columns: usize,
}

impl LineTables {
    /// The tables for an output of `depth × size`-byte elements per row and `bytes` bytes in
    /// all, Axis last (`inner == 1`), when the line kernel serves it: depth at most
    /// [`ONE_HOT_LINES_MAX_DEPTH`], at least [`ONE_HOT_LINES_MIN_BYTES`] of output (the
    /// tables cost 128 bytes of writes per unit of depth), and a [`LineKernel`] for `isa` and
    /// rows of `depth × size` bytes.
    pub(super) fn for_output(
        isa: Isa,
        inner: usize,
        depth: usize,
        size: usize,
        bytes: usize,
    ) -> Option<&'static LineTables> {
        let fits = inner == 1
            && (1..=ONE_HOT_LINES_MAX_DEPTH).contains(&depth)
            && bytes >= ONE_HOT_LINES_MIN_BYTES
            && LineKernel::for_isa(isa, depth * size).is_some();
        fits.then(|| LineTables::shared(depth, size))
    }

    /// The tables of `depth` (1 to [`ONE_HOT_LINES_MAX_DEPTH`]) and `size` (1, 2, 4 or 8
    /// bytes), built on first use and kept for the process: building them per call cost a
    /// 12-index output of depth 64 thirteen times what numpy takes.
    fn shared(depth: usize, size: usize) -> &'static LineTables {
        static TABLES: [[OnceLock<LineTables>; 4]; ONE_HOT_LINES_MAX_DEPTH] =
            [const { [const { OnceLock::new() }; 4] }; ONE_HOT_LINES_MAX_DEPTH];
        TABLES[depth - 1][size.trailing_zeros() as usize]
            .get_or_init(|| LineTables::new(depth, size))
    }

    /// The tables for rows of `depth` elements of `size` bytes.
    fn new(depth: usize, size: usize) -> LineTables {
        let lanes = 64 / size;
        let mut rows = vec![[0u8; 64]; depth];
        let mut columns = vec![[0u8; 64]; depth];
        for (c, (rows, columns)) in rows.iter_mut().zip(&mut columns).enumerate() {
            for b in 0..64 {
                let element = c + b / size;
                rows[b] = (element / depth) as u8;
                columns[b] = (element % depth) as u8;
            }
        }
        LineTables {
            depth,
            rows,
            columns,
            whole_rows: lanes / depth,
            extra_columns: lanes % depth,
        }
    }
}

/// Writes the output elements `first..` that `chunk` holds (whole elements, Axis last, a
/// depth of `tables`) a 64-byte line at a time (32 bytes with AVX2, [`write_halves_avx2`]),
/// streamed from the first line boundary when `stream` (the chunk's address then a multiple
/// of the element size); the partial lines before that boundary and at the end are stored
/// under a byte mask (built on the stack and copied with AVX2).
///
/// # Safety
/// `tables` must come from [`LineTables::for_output`] for `f.isa` (the CPU has the
/// instructions of the [`LineKernel`] that gave them).
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn write_lines<V: Value>(
    f: &Fill<'_, '_, V>,
    tables: &LineTables,
    first: usize,
    chunk: &mut [u8],
    stream: bool,
) {
    if chunk.is_empty() {
        return;
    }
    // SAFETY: the caller's contract; the tables exist for `f.isa` only with its kernel.
    match LineKernel::for_isa(f.isa, tables.depth * V::SIZE) {
        Some(LineKernel::Vbmi) => unsafe { write_lines_avx512(f, tables, first, chunk, stream) },
        Some(LineKernel::Halves) => unsafe { write_halves_avx2(f, tables, first, chunk, stream) },
        None => unreachable!("line tables without a line kernel"),
    }
}

/// Which instructions build the line kernel's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKernel {
    /// AVX-512 VBMI: a 64-byte line per byte permute ([`write_lines_avx512`]).
    Vbmi,
    /// AVX2 (and not AVX-512): 16 bytes per byte shuffle, for rows of at most
    /// [`ONE_HOT_HALVES_MAX_ROW_BYTES`] ([`write_halves_avx2`]).
    Halves,
}

impl LineKernel {
    /// The kernel for `isa` and rows of `row_bytes`, if one serves them: VBMI whatever the
    /// row under AVX-512, halves for short rows under AVX2 only (the class it was measured
    /// on; AVX-512 without VBMI keeps the scatter kernel).
    fn for_isa(isa: Isa, row_bytes: usize) -> Option<LineKernel> {
        match isa {
            Isa::Avx512 if has_avx512_vbmi() => Some(LineKernel::Vbmi),
            Isa::Avx2 if row_bytes <= ONE_HOT_HALVES_MAX_ROW_BYTES => Some(LineKernel::Halves),
            _ => None,
        }
    }
}

/// OffValue's and OnValue's patterns over a 64-byte line, from an element's first byte.
fn value_lines<V: Value>(f: &Fill<'_, '_, V>) -> [[u8; 64]; 2] {
    [f.off, f.on].map(|value| {
        let mut line = [0u8; 64];
        super::fill_pattern(&mut line, value);
        line
    })
}

/// [`write_lines`] for a non-empty chunk: the byte positions of a block of rows at a time
/// ([`RowPositions`]), then per line a permute, a compare and a blend ([`line_value`]).
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI; `chunk` as [`write_lines`] describes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn write_lines_avx512<V: Value>(
    f: &Fill<'_, '_, V>,
    tables: &LineTables,
    first: usize,
    chunk: &mut [u8],
    stream: bool,
) {
    use std::arch::x86_64::*;
    let depth = tables.depth;
    debug_assert_eq!(depth, f.shape.depth);
    let values = value_lines(f).map(|line| _mm512_loadu_si512(line.as_ptr().cast()));
    let mut rows = RowPositions::for_chunk(f, first, chunk.len() / V::SIZE);
    // Bytes before the first line boundary (streamed lines must be aligned), whole lines, and
    // the bytes after them. The head is whole elements: the chunk is aligned to their size.
    let head = if stream {
        chunk.as_ptr().align_offset(64).min(chunk.len())
    } else {
        0
    };
    let lines = (chunk.len() - head) / 64;
    let tail = chunk.len() - head - 64 * lines;
    let dst = chunk.as_mut_ptr();
    if head > 0 {
        let value = line_value(tables, &mut rows, first / depth, first % depth, values);
        _mm512_mask_storeu_epi8(dst.cast(), low_bytes(head), value);
    }
    let start = first + head / V::SIZE;
    let body = dst.add(head);
    // Two copies of each loop, so that none tests `stream` per line.
    let (row, column) = if stream {
        whole_lines::<true>(tables, &mut rows, start, V::SIZE, body, lines, values)
    } else {
        whole_lines::<false>(tables, &mut rows, start, V::SIZE, body, lines, values)
    };
    if tail > 0 {
        let value = line_value(tables, &mut rows, row, column, values);
        _mm512_mask_storeu_epi8(body.add(64 * lines).cast(), low_bytes(tail), value);
    }
}

/// [`write_lines`] with AVX2 for rows of at most [`ONE_HOT_HALVES_MAX_ROW_BYTES`]: the output
/// 32 bytes at a time (streamed from the first 32-byte boundary when `stream`), each 16-byte
/// half built as [`body_lines`] builds a line, with a byte shuffle of the positions of the
/// rows from the half's first (at most 16: the shuffle's reach) in place of the permute. The
/// tables are the line kernel's, of which a half reads the first 16 bytes of its phase's.
/// The partial pieces before the first boundary and at the end are built whole on the stack
/// and copied.
///
/// The scatter kernel marks each OnValue in a line's mask one index at a time: at depth 2,
/// AMD Zen 3 (AVX2, one core) took 4 ns per index, OneHot INT32 -> UINT8 9.2 times the floor.
///
/// # Safety
/// The CPU must have AVX2; `chunk` non-empty, as [`write_lines`] describes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn write_halves_avx2<V: Value>(
    f: &Fill<'_, '_, V>,
    tables: &LineTables,
    first: usize,
    chunk: &mut [u8],
    stream: bool,
) {
    use std::arch::x86_64::*;
    let depth = tables.depth;
    debug_assert_eq!(depth, f.shape.depth);
    debug_assert!(depth * V::SIZE <= ONE_HOT_HALVES_MAX_ROW_BYTES);
    let values = value_lines(f).map(|line| _mm256_loadu_si256(line.as_ptr().cast()));
    let mut rows = RowPositions::for_chunk(f, first, chunk.len() / V::SIZE);
    let step = HalfStep::new(depth, V::SIZE);
    // Whole elements before the first boundary (the chunk is aligned to their size when
    // streamed), whole pairs of halves, and the bytes after them.
    let head = if stream {
        chunk.as_ptr().align_offset(32).min(chunk.len())
    } else {
        0
    };
    let pairs = (chunk.len() - head) / 32;
    let tail = chunk.len() - head - 32 * pairs;
    let at_element = |element: usize| (element / depth, element % depth);
    let dst = chunk.as_mut_ptr();
    if head > 0 {
        partial_pair(
            tables,
            &mut rows,
            at_element(first),
            step,
            values,
            dst,
            head,
        );
    }
    let start = at_element(first + head / V::SIZE);
    let body = dst.add(head);
    // Two copies of each loop, so that none tests `stream` per store.
    let args = (tables, &mut rows, start, step, body, pairs, values);
    match (32 % (depth * V::SIZE) == 0, stream) {
        (true, true) => body_periodic::<true>(args),
        (true, false) => body_periodic::<false>(args),
        (false, true) => body_cyclic::<true>(args),
        (false, false) => body_cyclic::<false>(args),
    }
    if tail > 0 {
        let end = at_element(first + (head + 32 * pairs) / V::SIZE);
        let dst = body.add(32 * pairs);
        partial_pair(tables, &mut rows, end, step, values, dst, tail);
    }
}

/// How far a 16-byte half advances: `16 / e = whole_rows · depth + extra_columns` elements.
#[derive(Debug, Clone, Copy)]
struct HalfStep {
    depth: usize,
    whole_rows: usize,
    extra_columns: usize,
}

impl HalfStep {
    fn new(depth: usize, size: usize) -> HalfStep {
        let lanes = 16 / size;
        HalfStep {
            depth,
            whole_rows: lanes / depth,
            extra_columns: lanes % depth,
        }
    }

    /// The column of the half after one starting at `column`, and how many rows after that
    /// one's it starts.
    #[inline(always)]
    fn next(self, column: usize) -> (usize, usize) {
        let (mut rows, mut column) = (self.whole_rows, column + self.extra_columns);
        if column >= self.depth {
            column -= self.depth;
            rows += 1;
        }
        (column, rows)
    }
}

/// The OnValue bytes of the 16-byte half whose first element is at `column` of the row whose
/// position is at `window` (the next rows' follow): the rows' positions shuffled to each byte,
/// compared with each byte's column.
///
/// # Safety
/// The CPU must have AVX2 (this is inlined into a function compiled for it); 16 bytes
/// readable at `window`; `column` below the tables' depth.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn half_hits(
    tables: &LineTables,
    window: *const u8,
    column: usize,
) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::*;
    let positions = _mm_loadu_si128(window.cast());
    let lanes = _mm_loadu_si128(tables.rows.as_ptr().add(column).cast());
    let columns = _mm_loadu_si128(tables.columns.as_ptr().add(column).cast());
    _mm_cmpeq_epi8(_mm_shuffle_epi8(positions, lanes), columns)
}

/// Pairs of halves between two read-ahead steps of [`body_periodic`] and [`body_cyclic`]
/// (4 KiB).
const PAIRS_PER_STEP: usize = 128;

/// The arguments of [`body_periodic`] and [`body_cyclic`]: the tables, the rows' positions,
/// the row and column of the first pair's first element, the step of a half, where the
/// pairs go and how many, and OffValue's and OnValue's patterns.
#[cfg(target_arch = "x86_64")]
type PairArgs<'t, 'r, 'i, 'a> = (
    &'t LineTables,
    &'r mut RowPositions<'i, 'a>,
    (usize, usize),
    HalfStep,
    *mut u8,
    usize,
    [std::arch::x86_64::__m256i; 2],
);

/// Stores a pair of halves at `out`: streamed when `STREAM` (`out` then on a 32-byte
/// boundary), else plain.
///
/// # Safety
/// The CPU must have AVX2 (this is inlined into a function compiled for it); 32 bytes
/// writable at `out`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store_pair<const STREAM: bool>(out: *mut u8, value: std::arch::x86_64::__m256i) {
    use std::arch::x86_64::*;
    if STREAM {
        _mm256_stream_si256(out.cast(), value);
    } else {
        _mm256_storeu_si256(out.cast(), value);
    }
}

/// One phase of pairs of halves: the byte shuffle and the columns of both halves' tables, the
/// rows from the pair's first to its high half's, and to the next pair's first.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct PairPhase {
    lanes: std::arch::x86_64::__m256i,
    columns: std::arch::x86_64::__m256i,
    high_rows: usize,
    pair_rows: usize,
}

#[cfg(target_arch = "x86_64")]
impl PairPhase {
    /// The phase of a pair whose low half starts at `column`, and the column the next pair
    /// starts at.
    ///
    /// # Safety
    /// The CPU must have AVX2 (this is inlined into a function compiled for it); `column`
    /// below the depth.
    #[inline(always)]
    unsafe fn at(tables: &LineTables, step: HalfStep, column: usize) -> (PairPhase, usize) {
        use std::arch::x86_64::*;
        let (high_column, high_rows) = step.next(column);
        let (next_column, from_high) = step.next(high_column);
        let table = |table: &Vec<[u8; 64]>| {
            _mm256_loadu2_m128i(
                table.as_ptr().add(high_column).cast(),
                table.as_ptr().add(column).cast(),
            )
        };
        let phase = PairPhase {
            lanes: table(&tables.rows),
            columns: table(&tables.columns),
            high_rows,
            pair_rows: high_rows + from_high,
        };
        (phase, next_column)
    }
}

/// The pairs of [`write_halves_avx2`] for rows whose length divides 32 bytes: every pair
/// starts at the same column and `32 / row bytes` rows after the one before, so one
/// [`PairPhase`] serves them all, held in registers, and a pair is two loads of positions,
/// a shuffle, a compare and a blend. With the tables looked up per half, INT32 -> INT32 at
/// depth 2 took 4 ns per pair in cache (AMD Zen 3, one core).
///
/// # Safety
/// The CPU must have AVX2 (this is inlined into a function compiled for it); `32 * pairs`
/// bytes writable at `dst` (on a 32-byte boundary when `STREAM`); the pairs' rows below
/// `rows`' end; the row's length (depth × element size) divides 32.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn body_periodic<const STREAM: bool>(
    (tables, rows, (mut row, column), step, dst, pairs, values): PairArgs<'_, '_, '_, '_>,
) {
    use std::arch::x86_64::*;
    let (phase, _) = PairPhase::at(tables, step, column);
    let PairPhase {
        lanes,
        columns,
        high_rows,
        pair_rows,
    } = phase;
    let mut pair = 0;
    while pair < pairs {
        let (mut at, limit) = rows.held_from(row);
        let step_end = (pair + PAIRS_PER_STEP).min(pairs);
        while pair < step_end && row < limit {
            // In bounds: 64 positions are readable from `at` for a row below `limit`, and a
            // pair's rows lie within 32 of its first.
            let window = _mm256_loadu2_m128i(at.add(high_rows).cast(), at.cast());
            let hits = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(window, lanes), columns);
            let value = _mm256_blendv_epi8(values[0], values[1], hits);
            store_pair::<STREAM>(dst.add(32 * pair), value);
            at = at.add(pair_rows);
            row += pair_rows;
            pair += 1;
        }
    }
}

/// The most pairs of halves before their columns repeat: `row / gcd(row, 32)` for rows of at
/// most [`ONE_HOT_HALVES_MAX_ROW_BYTES`] bytes.
const MAX_PAIR_PHASES: usize = ONE_HOT_HALVES_MAX_ROW_BYTES;

/// [`body_periodic`] for rows that do not divide 32 bytes: the columns pairs start at repeat
/// every `row / gcd(row, 32)` pairs (at most [`MAX_PAIR_PHASES`]), so each phase's tables and
/// row steps are built once, on the stack, and the pairs cycle through them. With each half's
/// tables and next column worked out as it went, INT32 -> INT32 at depth 3 took 3.9–4.7 ms
/// (6.36 M indices, one core of AMD Zen 3; the floor about 3.6).
///
/// # Safety
/// The CPU must have AVX2 (this is inlined into a function compiled for it); `32 * pairs`
/// bytes writable at `dst` (on a 32-byte boundary when `STREAM`); the pairs' rows below
/// `rows`' end; rows of at most [`ONE_HOT_HALVES_MAX_ROW_BYTES`] bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn body_cyclic<const STREAM: bool>(
    (tables, rows, (mut row, column), step, dst, pairs, values): PairArgs<'_, '_, '_, '_>,
) {
    use std::arch::x86_64::*;
    let (first, mut low_column) = PairPhase::at(tables, step, column);
    let mut cycle = [first; MAX_PAIR_PHASES];
    let mut phases = 1;
    while low_column != column {
        (cycle[phases], low_column) = PairPhase::at(tables, step, low_column);
        phases += 1;
    }
    let mut pair = 0;
    let mut phase = 0;
    while pair < pairs {
        let (mut at, limit) = rows.held_from(row);
        let step_end = (pair + PAIRS_PER_STEP).min(pairs);
        while pair < step_end && row < limit {
            // In bounds: 64 positions are readable from `at` for a row below `limit`, and a
            // pair's rows lie within 32 of its first; `phase` is below `phases`.
            let current = &cycle[phase];
            let window = _mm256_loadu2_m128i(at.add(current.high_rows).cast(), at.cast());
            let hits =
                _mm256_cmpeq_epi8(_mm256_shuffle_epi8(window, current.lanes), current.columns);
            let value = _mm256_blendv_epi8(values[0], values[1], hits);
            store_pair::<STREAM>(dst.add(32 * pair), value);
            at = at.add(current.pair_rows);
            row += current.pair_rows;
            pair += 1;
            phase += 1;
            if phase == phases {
                phase = 0;
            }
        }
    }
}

/// Writes the first `n` (below 32) bytes of the pair of halves whose first element is at
/// `from` to `dst`: the pair built whole on the stack, then copied.
///
/// # Safety
/// The CPU must have AVX2 (this is inlined into a function compiled for it); `n` bytes
/// writable at `dst`; `from`'s row below `rows`' end.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn partial_pair(
    tables: &LineTables,
    rows: &mut RowPositions,
    (row, column): (usize, usize),
    step: HalfStep,
    values: [std::arch::x86_64::__m256i; 2],
    dst: *mut u8,
    n: usize,
) {
    use std::arch::x86_64::*;
    debug_assert!(n < 32);
    let window = rows.window(row);
    let low = half_hits(tables, window, column);
    let (high_column, advanced) = step.next(column);
    let high = half_hits(tables, window.add(advanced), high_column);
    let value = _mm256_blendv_epi8(values[0], values[1], _mm256_set_m128i(high, low));
    let mut bytes = [0u8; 32];
    _mm256_storeu_si256(bytes.as_mut_ptr().cast(), value);
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, n);
}

/// Lines between two read-ahead steps of [`body_lines`].
const LINES_PER_STEP: usize = 64;

/// Writes `lines` whole 64-byte lines at `dst` (streamed when `STREAM`, the address then on a
/// line boundary), the first's first element at row and column `from`, and returns the row
/// and column after the last: [`line_value`]'s permute, compare and blend, in a loop that
/// runs while the block holds every row its lines need ([`RowPositions::held_from`]), with
/// the tables and values in registers and no check per line but the row's.
///
/// The loop of [`line_value`] calls, one per line, kept the values and table pointers on the
/// stack and tested the block and `stream` per line: OneHot INT32 -> FLOAT16, depth 64 took
/// about 1.35 times a streamed fill of its bytes on one thread and on two.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI (this is inlined into a function compiled for
/// them); `64 * lines` bytes writable at `dst`; the lines' rows below `rows`' end.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn body_lines<const STREAM: bool>(
    tables: &LineTables,
    rows: &mut RowPositions,
    (mut row, mut column): (usize, usize),
    dst: *mut u8,
    lines: usize,
    values: [std::arch::x86_64::__m512i; 2],
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let (depth, whole_rows, extra_columns) =
        (tables.depth, tables.whole_rows, tables.extra_columns);
    let (lane_rows, lane_columns) = (tables.rows.as_ptr(), tables.columns.as_ptr());
    let mut line = 0;
    while line < lines {
        let (mut at, limit) = rows.held_from(row);
        let step_end = (line + LINES_PER_STEP).min(lines);
        while line < step_end && row < limit {
            // In bounds: `held_from` gave 64 readable bytes from every row below `limit`, and
            // `column` is below the depth, the tables' length.
            let window = _mm512_loadu_si512(at.cast());
            let lanes = _mm512_loadu_si512(lane_rows.add(column).cast());
            let columns = _mm512_loadu_si512(lane_columns.add(column).cast());
            let hit = _mm512_cmpeq_epi8_mask(_mm512_permutexvar_epi8(lanes, window), columns);
            let value = _mm512_mask_blend_epi8(hit, values[0], values[1]);
            store_line::<STREAM>(dst.add(64 * line), value);
            line += 1;
            row += whole_rows;
            at = at.add(whole_rows);
            column += extra_columns;
            if column >= depth {
                column -= depth;
                row += 1;
                at = at.add(1);
            }
        }
    }
    (row, column)
}

/// Writes `lines` whole 64-byte lines at `dst` (streamed when `STREAM`, the address then on a
/// line boundary), the first's first element being element `start` of the output, and returns
/// the row and column after the last: through [`body_rows`] when a row fills a line or more
/// (compiled apart for rows of 1, 2 and 4 whole lines), except rows of more than a line and
/// less than [`ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES`], through [`body_groups`]; shorter rows
/// through [`body_lines`].
///
/// Rows of 8 lines (INT64, depth 64) ran 7–10 % slower with their fixed-count loop than with
/// the loop of any length (13.3–14.4 against 12.2–12.9 ms on one thread, AMD Zen 5): eight
/// streamed stores back to back; rows of 2 lines (FLOAT16) ran 4.0 → 3.4 ms with theirs.
///
/// # Safety
/// As [`body_lines`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn whole_lines<const STREAM: bool>(
    tables: &LineTables,
    rows: &mut RowPositions,
    start: usize,
    size: usize,
    dst: *mut u8,
    lines: usize,
    values: [std::arch::x86_64::__m512i; 2],
) -> (usize, usize) {
    let depth = tables.depth;
    let args = (tables, rows, start, size, dst, lines, values);
    match depth * size {
        64 => body_rows::<STREAM, 1>(args),
        128 => body_rows::<STREAM, 2>(args),
        256 => body_rows::<STREAM, 4>(args),
        row_bytes if row_bytes >= GROUPS_MAX_ROW_BYTES => body_rows::<STREAM, 0>(args),
        row_bytes if row_bytes > 64 => body_groups::<STREAM>(args),
        _ => body_lines::<STREAM>(
            tables,
            args.1,
            (start / depth, start % depth),
            dst,
            lines,
            values,
        ),
    }
}

/// The arguments of [`whole_lines`], as [`body_rows`] takes them.
#[cfg(target_arch = "x86_64")]
type BodyArgs<'t, 'r, 'i, 'a> = (
    &'t LineTables,
    &'r mut RowPositions<'i, 'a>,
    usize,
    usize,
    *mut u8,
    usize,
    [std::arch::x86_64::__m512i; 2],
);

/// Rows read between two read-ahead steps of [`body_rows`].
const ROWS_PER_STEP: usize = 64;

/// [`whole_lines`] for rows of at least 64 bytes, whose lines hold parts of at most two
/// rows: the lines before the first that a row starts in go through [`body_lines`]; then each
/// row writes the lines from the one it starts in to the one before the next row's, OffValue's
/// pattern with OnValue's under a mask: the row's own position in the line that holds it, and
/// in its first line the previous row's when that reached so far ([`carried_on_bytes`] for
/// the first). The lines after the last whole row go through [`body_lines`] again. `LINES`
/// is the row's length in lines when [`whole_lines`] fixes it (the loop then has a fixed
/// count), 0 for any length.
///
/// A line of [`body_lines`] costs a byte permute of the rows' positions, loads of two tables
/// and a compare: about 1.8 ns on one thread whatever the element size (OneHot INT32 ->
/// FLOAT32, depth 64: 37 GB/s, against 92 GB/s for a C loop that writes each row's four lines
/// from a table of patterns by its position). Here, on one thread of AMD Zen 5, the three
/// OneHot rows of depth 64 took: FLOAT32 14.9 → 6.5 ms, FLOAT16 7.5 → 3.4 ms, INT64
/// 29.3 → 12.2–12.9 ms.
///
/// # Safety
/// As [`body_lines`]; `depth * size` is at least 64 bytes, `64 * LINES` when `LINES` is not 0.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn body_rows<const STREAM: bool, const LINES: usize>(
    (tables, rows, start, size, dst, lines, values): BodyArgs<'_, '_, '_, '_>,
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let depth = tables.depth;
    let (lanes, row_bytes) = (64 / size, depth * size);
    debug_assert!(row_bytes >= 64 && (LINES == 0 || row_bytes == 64 * LINES));
    let at_line = |line: usize| {
        let element = start + line * lanes;
        (element / depth, element % depth)
    };
    // The first row that starts in the body, its first byte from the body's and its line.
    let mut row = start.div_ceil(depth);
    let mut from = (row * depth - start) * size;
    let mut line = (from / 64).min(lines);
    body_lines::<STREAM>(tables, rows, at_line(0), dst, line, values);
    if line == lines {
        return at_line(lines);
    }
    // A row's OnValue bytes, by its position `p`, in the line that holds them, and that
    // line's number from the line the row starts in, `phase` bytes before it.
    let on_bytes = |p: u8, phase: usize| {
        let byte = phase + p as usize * size;
        (byte / 64, on_value_mask(p, size, byte))
    };
    let when = |hit: bool, mask: u64| if hit { mask } else { 0 };
    let store = |line: usize, mask: u64| {
        let value = _mm512_mask_blend_epi8(mask, values[0], values[1]);
        store_line::<STREAM>(dst.add(64 * line), value);
    };
    let mut carry = if start % depth == 0 {
        0
    } else {
        carried_on_bytes(*rows.window(row - 1), size, row_bytes, from)
    };
    let phase = from % 64;
    'rows: while row < rows.end {
        let (mut at, _) = rows.held_from(row);
        let step_end = (row + ROWS_PER_STEP).min(rows.end).min(rows.held_end);
        while row < step_end {
            let n = if LINES > 0 {
                LINES
            } else {
                (from + row_bytes) / 64 - line
            };
            if line + n > lines {
                break 'rows;
            }
            let (on_line, mask) = on_bytes(*at, if LINES > 0 { phase } else { from % 64 });
            store(line, carry | when(on_line == 0, mask));
            for k in 1..n {
                store(line + k, when(on_line == k, mask));
            }
            carry = when(on_line == n, mask);
            (from, line, row) = (from + row_bytes, line + n, row + 1);
            at = at.add(1);
        }
    }
    body_lines::<STREAM>(
        tables,
        rows,
        at_line(line),
        dst.add(64 * line),
        lines - line,
        values,
    )
}

/// Lines that [`body_groups`] builds at once: one 64-bit lane of line mask each.
const GROUP_LINES: usize = 8;

/// [`whole_lines`] for rows of more than 64 and less than
/// [`ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES`] bytes, whose lines hold parts of at most two rows:
/// eight lines at a time, their masks built in the eight 64-bit lanes of a vector, without a
/// branch. Lane `k` holds the line `offset + 64·k` bytes past the start of the group's first
/// row; its first row is `rel = (offset + 64·k) / row_bytes` rows on (a multiply and a shift,
/// [`RowInverse`]), and its mask is each OnValue's element bits shifted to that OnValue's
/// byte from the line's start, for that row and the next (`vpsllvq` leaves 0 for a byte
/// outside the line, before it or past it). The lines left after the last whole group go
/// through [`body_lines`].
///
/// [`body_rows`]' loop over a row's lines branches on their count, which varies from row to
/// row here. One core, AMD Zen 4, outputs of 10–45 MB: OneHot INT32 -> FLOAT16 at depth 33
/// 0.75 → 0.52 ms, INT32 -> UINT8 at depth 80 0.53 → 0.42, depth 140 0.55 → 0.53, INT64 ->
/// INT64 at depth 9 0.14 → 0.095; at depth 192 (192-byte rows) it lost, 0.43 → 0.47.
///
/// # Safety
/// As [`body_lines`]; `depth * size` is more than 64 bytes and less than
/// [`ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn body_groups<const STREAM: bool>(
    (tables, rows, start, size, dst, lines, values): BodyArgs<'_, '_, '_, '_>,
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let depth = tables.depth;
    let row_bytes = depth * size;
    debug_assert!(row_bytes > 64 && row_bytes < GROUPS_MAX_ROW_BYTES);
    let inverse = RowInverse::new(row_bytes);
    let (mut row, mut offset) = (start / depth, start % depth * size);
    let element = _mm512_set1_epi64((u64::MAX >> (64 - size)) as i64);
    let row_bytes_v = _mm512_set1_epi64(row_bytes as i64);
    let inverse_v = _mm512_set1_epi64(inverse.0 as i64);
    let line_starts = _mm512_setr_epi64(0, 64, 128, 192, 256, 320, 384, 448);
    let shift = _mm_cvtsi64_si128(size.trailing_zeros() as i64);
    let byte = _mm512_set1_epi64(0xFF);
    let next_row = _mm512_set1_epi64(1);
    let mut line = 0;
    while line + GROUP_LINES <= lines {
        let (mut at, limit) = rows.held_from(row);
        let step_end = (line + LINES_PER_STEP).min(lines);
        while line + GROUP_LINES <= step_end && row < limit {
            // The positions of the rows from `row`: the group's lines need at most 9 of them
            // (a row is more than a line), all held below `limit`.
            let window = _mm512_loadu_si512(at.cast());
            // Per lane, the line's start from the start of row `row`, the first row it holds
            // from `row`, and that row's start from the line's start (at most 0).
            let x = _mm512_add_epi64(_mm512_set1_epi64(offset as i64), line_starts);
            let rel = _mm512_srli_epi64::<32>(_mm512_mul_epu32(x, inverse_v));
            let row_start = _mm512_sub_epi64(_mm512_mul_epu32(rel, row_bytes_v), x);
            // The two rows' positions: their bytes of the window, the lane's low byte picking.
            let p0 = _mm512_and_si512(_mm512_permutexvar_epi8(rel, window), byte);
            let p1 = _mm512_and_si512(
                _mm512_permutexvar_epi8(_mm512_add_epi64(rel, next_row), window),
                byte,
            );
            // Each OnValue's byte from the line's start; an index out of range (position
            // NO_BYTE_POSITION) lands past the line (`OUT_OF_RANGE_PAST_THE_LINE`).
            let d0 = _mm512_add_epi64(row_start, _mm512_sll_epi64(p0, shift));
            let d1 = _mm512_add_epi64(
                _mm512_add_epi64(row_start, row_bytes_v),
                _mm512_sll_epi64(p1, shift),
            );
            let masks = _mm512_or_si512(
                _mm512_sllv_epi64(element, d0),
                _mm512_sllv_epi64(element, d1),
            );
            let mut lane = [0u64; GROUP_LINES];
            _mm512_storeu_si512(lane.as_mut_ptr().cast(), masks);
            for (k, &mask) in lane.iter().enumerate() {
                let value = _mm512_mask_blend_epi8(mask, values[0], values[1]);
                store_line::<STREAM>(dst.add(64 * (line + k)), value);
            }
            line += GROUP_LINES;
            let next = offset + 64 * GROUP_LINES;
            let rows_past = inverse.quotient(next);
            row += rows_past;
            at = at.add(rows_past);
            offset = next - rows_past * row_bytes;
        }
    }
    body_lines::<STREAM>(
        tables,
        rows,
        (row, offset / size),
        dst.add(64 * line),
        lines - line,
        values,
    )
}

/// Division by a row's length in bytes (64 to 2040) as a multiply by `⌊2^32 / row⌋ + 1` and a
/// shift by 32. Its quotients are exact below `2^32 / row`, far above a group's reach: the
/// product exceeds `x / row` by `x · e / (row · 2^32)`, where the excess `e = inverse · row −
/// 2^32` is at most `row`, and that stays below `1 / row`.
#[derive(Clone, Copy)]
struct RowInverse(u64);

impl RowInverse {
    /// The inverse of `row_bytes`.
    fn new(row_bytes: usize) -> Self {
        debug_assert!((64..=ONE_HOT_LINES_MAX_DEPTH * 8).contains(&row_bytes));
        RowInverse((1u64 << 32) / row_bytes as u64 + 1)
    }

    /// `x / row_bytes`, for `x` below `2^20`.
    #[inline(always)]
    fn quotient(self, x: usize) -> usize {
        ((x as u64 * self.0) >> 32) as usize
    }
}

/// The OnValue bytes, in the line that a row starts in `from` bytes after the body's start,
/// of the row before it (`row_bytes` long, of `size`-byte elements), whose position is `p`:
/// none unless that row ends in the same line and its OnValue lies there.
fn carried_on_bytes(p: u8, size: usize, row_bytes: usize, from: usize) -> u64 {
    // From the body's start; the previous row can start before it.
    let byte = (from + p as usize * size) as isize - row_bytes as isize;
    if byte >= (from & !63) as isize {
        on_value_mask(p, size, byte as usize)
    } else {
        0
    }
}

/// The line mask of the `size` bytes of an OnValue at `byte` (from any line boundary) of a
/// row whose position is `p`: none when `p` is [`NO_BYTE_POSITION`].
#[inline(always)]
fn on_value_mask(p: u8, size: usize, byte: usize) -> u64 {
    if p == NO_BYTE_POSITION {
        0
    } else {
        (u64::MAX >> (64 - size)) << (byte % 64)
    }
}

/// Stores the 64-byte line `value` at `out`: streamed (non-temporal) when `STREAM`, `out` then
/// on a line boundary.
///
/// # Safety
/// The CPU must have AVX-512 F (this is inlined into functions compiled for it); 64 bytes
/// writable at `out`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store_line<const STREAM: bool>(out: *mut u8, value: std::arch::x86_64::__m512i) {
    use std::arch::x86_64::*;
    if STREAM {
        _mm512_stream_si512(out.cast(), value);
    } else {
        _mm512_storeu_si512(out.cast(), value);
    }
}

/// The mask of the first `n` (below 64) bytes of a line.
#[inline(always)]
fn low_bytes(n: usize) -> u64 {
    (1u64 << n) - 1
}

/// The 64 bytes of the line whose first element is row `row`, column `column`: OffValue's
/// pattern (`values[0]`) with OnValue's (`values[1]`) where an element's column is its row's
/// position.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VBMI (this is inlined into a function compiled for
/// them); `row` below `rows`' end.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn line_value(
    tables: &LineTables,
    rows: &mut RowPositions,
    row: usize,
    column: usize,
    values: [std::arch::x86_64::__m512i; 2],
) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let window = _mm512_loadu_si512(rows.window(row).cast());
    let lanes = _mm512_loadu_si512(tables.rows[column].as_ptr().cast());
    let columns = _mm512_loadu_si512(tables.columns[column].as_ptr().cast());
    let hit = _mm512_cmpeq_epi8_mask(_mm512_permutexvar_epi8(lanes, window), columns);
    _mm512_mask_blend_epi8(hit, values[0], values[1])
}

/// The byte positions of a block of rows, resolved on demand, with 64 bytes of room after the
/// block so that a window of 64 rows can always be loaded.
struct RowPositions<'i, 'a> {
    indices: &'i Indices<'a>,
    /// One past the last row any line needs.
    end: usize,
    /// The rows held: `first..held_end`, at `block[0..]`.
    first: usize,
    held_end: usize,
    block: [u8; BLOCK_ROWS + 64],
    /// Packed indices' bytes and bytes per index, read ahead of the block in use.
    packed: Option<(&'a [u8], usize)>,
    /// The first row not yet read ahead.
    read_ahead: usize,
}

impl<'i, 'a> RowPositions<'i, 'a> {
    /// Nothing held yet; the rows of the output elements `first..first + elements`
    /// (`elements` > 0) can be asked for.
    fn for_chunk<V: Value>(f: &Fill<'i, 'a, V>, first: usize, elements: usize) -> Self {
        let last_row = (first + elements - 1) / f.shape.depth;
        RowPositions::new(f.indices, last_row + 1)
    }

    /// Nothing held yet; rows below `end` can be asked for.
    fn new(indices: &'i Indices<'a>, end: usize) -> Self {
        RowPositions {
            indices,
            end,
            first: 0,
            held_end: 0,
            block: [NO_BYTE_POSITION; BLOCK_ROWS + 64],
            packed: indices.packed_bytes(),
            read_ahead: 0,
        }
    }

    /// A pointer to 64 readable bytes whose first is the position of `row` (below the end)
    /// and whose next ones are those of the following rows, as far as they lie below the end
    /// (the others hold stale or [`NO_BYTE_POSITION`] bytes): resolves a block from `row`
    /// first unless it holds them.
    #[inline(always)]
    fn window(&mut self, row: usize) -> *const u8 {
        debug_assert!(row < self.end);
        let needed = (row + 64).min(self.end);
        if row < self.first || needed > self.held_end {
            let len = (self.end - row).min(BLOCK_ROWS);
            self.indices.byte_positions(row, &mut self.block[..len]);
            (self.first, self.held_end) = (row, row + len);
            self.read_ahead = self.read_ahead.max(self.held_end);
        }
        // Wide indices prefetch their own lines as they are resolved (`byte_positions_run`).
        if let Some((data, size)) = self
            .packed
            .filter(|&(_, size)| !prefetched_as_resolved(size))
        {
            // The indices of the next block start arriving while this one's lines are
            // written (non-temporal stores and the hardware prefetcher compete otherwise).
            let target = (row + BLOCK_ROWS).min(self.end);
            while self.read_ahead < target {
                prefetch_ahead(data.as_ptr(), self.read_ahead * size);
                self.read_ahead += 64 / size;
            }
        }
        // `row - first` is at most BLOCK_ROWS - 64 when a full block holds the window, and
        // below the block's length otherwise, so 64 bytes from it lie in `block`.
        self.block[row - self.first..][..64].as_ptr()
    }

    /// [`RowPositions::window`] of `row`, and the row below which every line's rows are held
    /// too: each line starting at a row from `row` up to it reads its window at the returned
    /// pointer advanced by its rows past `row` (a line needs at most 64 rows from its first,
    /// and every row but those past the end when the block reaches it).
    #[inline(always)]
    fn held_from(&mut self, row: usize) -> (*const u8, usize) {
        let at = self.window(row);
        let limit = if self.held_end == self.end {
            self.end
        } else {
            self.held_end - 63
        };
        (at, limit)
    }
}

/// [`Indices::byte_positions`] for indices of type `I`: each contiguous run of indices
/// through [`byte_positions_run`], others one at a time.
pub(super) fn byte_positions<I: OneHotIndex>(indices: &Indices<'_>, first: usize, out: &mut [u8]) {
    let (depth, from_end) = (indices.depth, indices.from_end);
    indices.map_runs::<I, u8>(
        first,
        out,
        |bytes, out| byte_positions_run::<I>(bytes, out, depth, from_end),
        |index| byte_position(index, depth, from_end),
    );
}

/// The byte positions of the packed indices `bytes` into `out`: through AVX-512 or AVX2 where
/// the CPU has it (the loop is vectorised), else plain.
fn byte_positions_run<I: OneHotIndex>(bytes: &[u8], out: &mut [u8], depth: u64, from_end: bool) {
    compiled_for_isa!(byte_positions_run_body::<I>(bytes, out: u8, depth, from_end));
}

/// The loop of [`byte_positions_run`], without a branch per index.
#[inline(always)]
fn byte_positions_run_body<I: OneHotIndex>(
    bytes: &[u8],
    out: &mut [u8],
    depth: u64,
    from_end: bool,
) {
    if prefetched_as_resolved(I::SIZE) {
        // Wide indices: a step at a time, each step's lines prefetched ahead of it
        // (`ONE_HOT_WIDE_INDEX_STEP_BYTES`); the block read-ahead of `RowPositions` is off.
        let per_step = WIDE_STEP_BYTES / I::SIZE;
        for (k, (out, step)) in out
            .chunks_mut(per_step)
            .zip(bytes.chunks(WIDE_STEP_BYTES))
            .enumerate()
        {
            for line in (0..WIDE_STEP_BYTES).step_by(64) {
                prefetch_ahead(
                    bytes.as_ptr(),
                    WIDE_PREFETCH_BYTES + WIDE_STEP_BYTES * k + line,
                );
            }
            for (slot, b) in out.iter_mut().zip(step.chunks_exact(I::SIZE)) {
                *slot = byte_position(I::read(b), depth, from_end);
            }
        }
        return;
    }
    for (slot, b) in out.iter_mut().zip(bytes.chunks_exact(I::SIZE)) {
        *slot = byte_position(I::read(b), depth, from_end);
    }
}

/// Whether packed indices of `size` bytes are prefetched line by line as they are resolved
/// ([`byte_positions_run_body`]) rather than a block ahead ([`RowPositions::window`]): the
/// 8-byte ones ([`ONE_HOT_WIDE_INDEX_STEP_BYTES`](crate::thresholds::ONE_HOT_WIDE_INDEX_STEP_BYTES)).
fn prefetched_as_resolved(size: usize) -> bool {
    size == 8
}

/// The position `index` selects in a sequence of `depth` (at most 255) elements as a byte, or
/// [`NO_BYTE_POSITION`] outside it.
#[inline(always)]
fn byte_position<I: OneHotIndex>(index: I, depth: u64, from_end: bool) -> u8 {
    // At most 255: the depth fits 32 bits.
    let depth = depth as u32;
    let offset = index.offset_in_sequence_narrow(depth, from_end);
    if offset < depth {
        offset as u8
    } else {
        NO_BYTE_POSITION
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_positions_match_the_readable_definition() {
        // Every index type, in and out of range, from the end or not, every depth a byte
        // position serves, through the vectorised loop of this CPU and the plain one, against
        // `OneHotIndex::position`.
        fn check<I: OneHotIndex + Copy + std::fmt::Debug>(values: &[I]) {
            let mut bytes = vec![0u8; values.len() * I::SIZE];
            for (v, b) in values.iter().zip(bytes.chunks_exact_mut(I::SIZE)) {
                v.write(b);
            }
            for depth in [1u64, 2, 4, 100, 254, 255] {
                for from_end in [false, true] {
                    let mut vectorised = vec![0u8; values.len()];
                    byte_positions_run::<I>(&bytes, &mut vectorised, depth, from_end);
                    let mut plain = vec![0u8; values.len()];
                    byte_positions_run_body::<I>(&bytes, &mut plain, depth, from_end);
                    for ((&v, &got), &plain) in values.iter().zip(&vectorised).zip(&plain) {
                        let expected = v
                            .position(depth, from_end)
                            .map_or(NO_BYTE_POSITION, |p| p as u8);
                        let at = format!("{v:?} depth {depth} from_end {from_end}");
                        assert_eq!(got, expected, "{at}");
                        assert_eq!(plain, expected, "{at}, plain");
                    }
                }
            }
        }
        // Enough values that the vectorised loops run whole vectors, not only their tails.
        let spread = |k: i64| [k, -k, 255 - k, -255 + k, k << 31, k << 32];
        let wide: Vec<i64> = (0..40)
            .flat_map(spread)
            .chain([i64::MIN, i64::MAX])
            .collect();
        check::<i64>(&wide);
        check::<u64>(&wide.iter().map(|&v| v as u64).collect::<Vec<_>>());
        let narrow: Vec<i32> = (0..40)
            .flat_map(|k| [k, -k, 255 - k, -255 + k, -256, 256, k << 24, -(k << 24)])
            .chain([i32::MIN, i32::MAX, i32::MIN + 1, i32::MIN + 255])
            .collect();
        check::<i32>(&narrow);
        check::<u32>(&narrow.iter().map(|&v| v as u32).collect::<Vec<_>>());
    }

    #[test]
    fn row_inverse_divides_exactly_as_far_as_a_group_reaches_and_beyond() {
        // Every row length the line kernel can meet (depth 1–255 of 1–8 bytes, a line or
        // more), every offset a group starts at and reaches, and a stretch far past it.
        for row_bytes in 64..=ONE_HOT_LINES_MAX_DEPTH * 8 {
            let inverse = RowInverse::new(row_bytes);
            for x in (0..row_bytes + 64 * GROUP_LINES).chain((1 << 20) - 4096..1 << 20) {
                assert_eq!(inverse.quotient(x), x / row_bytes, "{x} / {row_bytes}");
            }
        }
    }
}
