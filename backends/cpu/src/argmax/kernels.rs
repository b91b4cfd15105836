//! The ArgMax inner loops, portable and AVX2, chosen by [`Isa`]:
//!
//! - [`block_max`] and [`locate`]: a run of contiguous elements is reduced a block at a time,
//!   maximum first (a plain max-reduction), and the block is searched for the maximum's
//!   position only when it can change the result;
//! - [`Prims::run_argmax`]: a whole contiguous run reduced the same way in one call, the
//!   maximum staying in a vector register (every lane) from the max pass to the search for
//!   its position, with no key conversion between them;
//! - [`fold_rows`]: a tail of neighbouring outputs takes one contiguous input row per reduced
//!   position, updating a running maximum and the row it came from per output.
//!
//! Both flavours give identical results: the AVX2 kernels compare in a domain where native
//! compares order elements as ArgMax does ([`Lanes`]), and fall back to exact keys for a piece
//! of work where a NaN appears.

use super::lanes::Lanes;
use crate::element::OrderKey;
use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use crate::simd::{prefetch_ahead, prefetch_ahead_into};
#[cfg(target_arch = "x86_64")]
use crate::thresholds::{
    ARGMAX_FOLD_PREFETCH_BYTES, ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES,
    ARGMAX_FOLD_PREFETCH_MAX_SPAN_BYTES, ARGMAX_FOLD_PREFETCH_STREAM_BYTES,
    ARGMAX_RUN_PREFETCH_BYTES,
};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::ops::Range;

pub(crate) use crate::thresholds::{
    ARGMAX_CHUNK_ROWS as CHUNK_ROWS, ARGMAX_SCAN_BLOCK as SCAN_BLOCK,
    ARGMAX_SHORT_RUN_BYTES as SHORT_RUN_BYTES,
};

/// One input row of a tail: its first element's offset, and its reduced index.
pub(crate) type Row = (usize, u32);

/// True when `candidate` replaces `best` met earlier in increasing index order: strictly
/// greater for the first maximum (INCREASING), greater or equal for the last (`LAST`).
#[inline(always)]
pub(crate) fn better<K: Ord, const LAST: bool>(candidate: K, best: K) -> bool {
    if LAST {
        candidate >= best
    } else {
        candidate > best
    }
}

/// A contiguous piece of one output's elements: `len` elements from element offset `start`,
/// the first at reduced index `index` (the others following it along one dimension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub start: usize,
    pub len: usize,
    pub index: usize,
}

/// The inner loops of one instruction set, for kernels written once over them
/// (`#[inline(always)]` bodies instantiated inside an AVX2 function and outside).
pub(crate) trait Prims: Copy {
    /// The maximum key of `piece` (not empty) of `data`.
    ///
    /// # Safety
    /// The instruction set must be available (call only from a function compiled for it).
    ///
    /// # Panics
    /// If the piece lies outside `data`.
    unsafe fn piece_max<T: Lanes>(data: &[u8], piece: Piece) -> T::Key;

    /// [`locate`] with this instruction set.
    ///
    /// # Safety
    /// As [`Prims::piece_max`].
    unsafe fn locate<T: Lanes, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize>;

    /// The position of the first (or, with `LAST`, the last) maximum of the `len` bytes
    /// (whole elements, at least one) at byte `start` of `data`: [`run_argmax`] with this
    /// instruction set. A run shorter than a vector may be read with a vector that covers
    /// bytes of `data` around it (ignored).
    ///
    /// # Safety
    /// As [`Prims::piece_max`].
    ///
    /// # Panics
    /// If the run lies outside `data`.
    unsafe fn run_argmax<T: Lanes, const LAST: bool>(
        data: &[u8],
        start: usize,
        len: usize,
    ) -> usize;
}

/// The portable inner loops.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PortablePrims;

impl Prims for PortablePrims {
    #[inline(always)]
    unsafe fn piece_max<T: Lanes>(data: &[u8], piece: Piece) -> T::Key {
        block_max_portable::<T>(&data[piece.start * T::SIZE..(piece.start + piece.len) * T::SIZE])
    }

    #[inline(always)]
    unsafe fn locate<T: Lanes, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize> {
        locate_portable::<T, LAST>(bytes, key)
    }

    #[inline(always)]
    unsafe fn run_argmax<T: Lanes, const LAST: bool>(
        data: &[u8],
        start: usize,
        len: usize,
    ) -> usize {
        run_argmax_portable::<T, LAST>(&data[start..start + len])
    }
}

/// The AVX2 inner loops (x86-64).
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2Prims;

#[cfg(target_arch = "x86_64")]
impl Prims for Avx2Prims {
    #[inline(always)]
    unsafe fn piece_max<T: Lanes>(data: &[u8], piece: Piece) -> T::Key {
        assert!(
            (piece.start + piece.len) * T::SIZE <= data.len(),
            "piece outside the input"
        );
        // SAFETY: the caller runs with AVX2; the piece lies inside `data` (asserted).
        unsafe { max_of_pieces::<T>(data, std::slice::from_ref(&piece)) }
    }

    #[inline(always)]
    unsafe fn locate<T: Lanes, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize> {
        // SAFETY: the caller runs with AVX2.
        unsafe { locate_body::<T, LAST>(bytes, key) }
    }

    #[inline(always)]
    unsafe fn run_argmax<T: Lanes, const LAST: bool>(
        data: &[u8],
        start: usize,
        len: usize,
    ) -> usize {
        let bytes = &data[start..start + len];
        let found = if len < 32 {
            // SAFETY: the caller runs with AVX2; the run lies inside `data` (sliced above).
            unsafe { tiny_run_argmax::<T, LAST>(data, start, len) }
        } else if len <= SHORT_RUN_BYTES {
            // SAFETY: the caller runs with AVX2; 32 to SHORT_RUN_BYTES bytes.
            unsafe { short_run_argmax::<T, LAST>(bytes.as_ptr(), bytes.len()) }
        } else {
            // SAFETY: the caller runs with AVX2; at least 32 bytes.
            unsafe { run_argmax_body::<T, LAST, Avx2Prims>(bytes) }
        };
        match found {
            Some(p) => p,
            // A NaN (the compare domain does not order it), or a short run in data shorter
            // than a vector: redo the run exactly.
            None => run_argmax_portable::<T, LAST>(bytes),
        }
    }
}

/// The position of the first (or, with `LAST`, the last) maximum of the elements of `bytes`
/// (at least one): a block at a time, its maximum first and its position only when it beats
/// the blocks before. (The kernels call [`Prims::run_argmax`]; this is its dispatch for tests.)
#[cfg(test)]
pub(crate) fn run_argmax<T: Lanes, const LAST: bool>(isa: Isa, bytes: &[u8]) -> usize {
    run_argmax_in::<T, LAST>(isa, bytes, 0, bytes.len())
}

/// [`run_argmax`] of the `len` bytes at byte `start` of `data` (for tests of short runs read
/// with a vector that covers bytes around them).
#[cfg(test)]
pub(crate) fn run_argmax_in<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    start: usize,
    len: usize,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 {
        // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW.
        return unsafe { super::avx512::run_argmax_avx512::<T, LAST>(data, start, len) };
    }
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: `Isa::avx2()` only holds when the CPU has AVX2.
        return unsafe { run_argmax_avx2::<T, LAST>(data, start, len) };
    }
    let _ = isa;
    // SAFETY: the portable loops need no instruction set.
    unsafe { PortablePrims::run_argmax::<T, LAST>(data, start, len) }
}

/// The maximum key of the elements of `pieces` (at least one, none empty) of `data`.
///
/// # Panics
/// If a piece lies outside `data`.
#[inline]
pub(crate) fn block_max<T: Lanes>(isa: Isa, data: &[u8], pieces: &[Piece]) -> T::Key {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        for p in pieces {
            assert!(
                (p.start + p.len) * T::SIZE <= data.len(),
                "block_max: piece outside the input"
            );
        }
        if isa == Isa::Avx512 {
            // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW (and
            // AVX2); every piece lies inside `data` (asserted above).
            return unsafe { super::avx512::pieces_max_avx512::<T>(data, pieces) };
        }
        // SAFETY: `Isa::avx2()` only holds when the CPU has AVX2; every piece lies inside
        // `data` (asserted above).
        return unsafe { block_max_avx2::<T>(data, pieces) };
    }
    let _ = isa;
    pieces
        .iter()
        .map(|p| block_max_portable::<T>(&data[p.start * T::SIZE..(p.start + p.len) * T::SIZE]))
        .fold(T::MIN_KEY, Ord::max)
}

/// The maximum key of `count` runs (at least one) of `len` elements each, at most
/// [`SHORT_RUN_BYTES`], the first at element offset `start` of `data` and each `pitch`
/// elements after the one before: the short runs of one output (a padded `[…, 5]` reduced
/// over every axis).
///
/// # Panics
/// If a run lies outside `data`, or is empty or longer than [`SHORT_RUN_BYTES`].
pub(crate) fn short_runs_max<T: Lanes>(
    isa: Isa,
    data: &[u8],
    start: usize,
    pitch: usize,
    count: usize,
    len: usize,
) -> T::Key {
    let bytes = len * T::SIZE;
    assert!(
        count > 0 && bytes > 0 && bytes <= SHORT_RUN_BYTES,
        "short_runs_max: runs of 1 to SHORT_RUN_BYTES bytes"
    );
    let last = start + (count - 1) * pitch;
    assert!(
        (last + len) * T::SIZE <= data.len(),
        "short_runs_max: run outside the input"
    );
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() && data.len() >= 32 {
        // SAFETY: `Isa::avx2()` only holds when the CPU has AVX2; every run lies inside
        // `data`, which holds a vector (checked above).
        return unsafe { short_runs_max_avx2::<T>(data, start, pitch, count, bytes) };
    }
    let _ = isa;
    (0..count)
        .map(|r| {
            let at = (start + r * pitch) * T::SIZE;
            block_max_portable::<T>(&data[at..at + bytes])
        })
        .fold(T::MIN_KEY, Ord::max)
}

/// [`short_runs_max`] with AVX2: a run shorter than a vector is one vector from its start
/// with the lanes past it set to the lowest value (a mask the same for every run), the last
/// ones near the end of `data` through [`run_window`]; a longer one its whole vectors and a
/// last one ending at its end; two running maxima and a NaN flag.
///
/// # Safety
/// The CPU must support AVX2; every run lies inside `data`, which holds at least 32 bytes;
/// `bytes` (per run) is at least 1.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn short_runs_max_avx2<T: Lanes>(
    data: &[u8],
    start: usize,
    pitch: usize,
    count: usize,
    bytes: usize,
) -> T::Key {
    let base = data.as_ptr();
    let head = _mm256_loadu_si256(WINDOW_BYTES.as_ptr().add(64 - bytes.min(32)).cast());
    let lowest = T::lowest();
    let last_full = data.len() - 32;
    let mut acc = [lowest; 2];
    let mut nan = _mm256_setzero_si256();
    if bytes >= 32 {
        let (whole, rest) = (bytes / 32, bytes % 32);
        for r in 0..count {
            let p = base.add((start + r * pitch) * T::SIZE);
            for j in 0..whole {
                let v = T::load(p.add(j * 32));
                acc[j % 2] = T::max(v, acc[j % 2]);
                if T::CAN_NAN {
                    nan = _mm256_or_si256(nan, T::nan(v));
                }
            }
            if rest > 0 {
                let v = T::load(p.add(bytes - 32));
                acc[1] = T::max(v, acc[1]);
                if T::CAN_NAN {
                    nan = _mm256_or_si256(nan, T::nan(v));
                }
            }
        }
    }
    for r in 0..if bytes < 32 { count } else { 0 } {
        let at = (start + r * pitch) * T::SIZE;
        let v = if at <= last_full {
            _mm256_blendv_epi8(lowest, T::load(base.add(at)), head)
        } else {
            match run_window::<T>(data, at, bytes) {
                Some((v, _)) => v,
                None => lowest,
            }
        };
        acc[r % 2] = T::max(v, acc[r % 2]);
        if T::CAN_NAN {
            nan = _mm256_or_si256(nan, T::nan(v));
        }
    }
    if T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0 {
        return T::nan_key();
    }
    let all = all_lanes_max::<T>(T::max(acc[0], acc[1]));
    let mut lanes = [0u8; 32];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), all);
    T::lane_key(&lanes[..T::SIZE])
}

/// The position of the first (or, with `LAST`, the last) element of `bytes` whose key is
/// `key`, if any.
#[inline]
pub(crate) fn locate<T: Lanes, const LAST: bool>(
    isa: Isa,
    bytes: &[u8],
    key: T::Key,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: `Isa::avx2()` only holds when the CPU has AVX2.
        return unsafe { locate_avx2::<T, LAST>(bytes, key) };
    }
    let _ = isa;
    locate_portable::<T, LAST>(bytes, key)
}

/// The greatest key among the lanes in `bytes` (values in the compare domain, no NaN), with
/// `f` called with the position of each lane holding it (a lane may come twice: the caller
/// keeps the best of them). With AVX2 a vector of lanes at a time, the maximum first: an
/// output's run of 64 FLOAT32 lanes costs a few instructions instead of a key and a compare
/// per lane.
///
/// # Panics
/// If `bytes` holds no lane.
pub(crate) fn max_lanes<T: Lanes>(isa: Isa, bytes: &[u8], mut f: impl FnMut(usize)) -> T::Key {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() && bytes.len() >= 32 {
        // SAFETY: the CPU has AVX2 (`isa`); at least 32 bytes.
        return unsafe { max_lanes_avx2::<T>(bytes, &mut f) };
    }
    let _ = isa;
    let lanes = bytes.len() / T::SIZE;
    let key = |lane: usize| T::lane_key(&bytes[lane * T::SIZE..]);
    let max = (0..lanes).map(key).max().expect("max_lanes: no lane");
    for lane in (0..lanes).filter(|&lane| key(lane) == max) {
        f(lane);
    }
    max
}

/// Scratch buffers of [`fold_rows`], reused across calls.
#[derive(Debug, Default)]
pub(crate) struct FoldScratch {
    values: Vec<u8>,
    rows: Vec<u8>,
}

/// Folds `rows` (in increasing index order, at most [`CHUNK_ROWS`]) into the running maxima
/// of `keys.len()` outputs whose elements lie `stride` apart from each row's offset: where an
/// element beats its output's key ([`better`]), the key and `index` take its key and row index.
///
/// # Panics
/// If an element lies outside `data`, or `keys` and `index` differ in length.
#[inline]
pub(crate) fn fold_rows<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    rows: &[Row],
    stride: usize,
    keys: &mut [T::Key],
    index: &mut [u32],
    scratch: &mut FoldScratch,
) {
    assert_eq!(keys.len(), index.len(), "fold_rows: keys and index differ");
    assert!(rows.len() <= CHUNK_ROWS, "fold_rows: too many rows");
    let lanes = keys.len();
    if lanes == 0 || rows.is_empty() {
        return;
    }
    let end = (lanes - 1) * stride + 1;
    for &(offset, _) in rows {
        assert!(
            (offset + end) * T::SIZE <= data.len(),
            "fold_rows: row outside the input"
        );
    }
    if stride == 1 && fold_rows_fresh::<T, LAST>(isa, data, rows, lanes, scratch) {
        #[cfg(target_arch = "x86_64")]
        {
            let (values, rows_of) = scratch.buffers(lanes * T::SIZE);
            merge::<T, LAST>(values, rows_of, rows, keys, index);
        }
        return;
    }
    // No vector kernel for these lanes, or a NaN (the compare domain does not order it): the
    // exact fold.
    fold_rows_portable::<T, LAST>(data, rows, stride, keys, index);
}

/// Folds `rows` (in increasing index order, at most [`CHUNK_ROWS`]) of `lanes` contiguous
/// outputs into fresh maxima with the vector kernel, leaving each output's row number (into
/// `rows`) in `scratch` ([`FoldScratch::row_of`]): no running keys to fill or merge, for an
/// output's whole reduction in one chunk (rows narrower than a vector through
/// [`fold_rows_narrow_avx2`]). Returns false, leaving nothing, when there is no vector kernel
/// for it (no AVX2) or a NaN was met; the caller then folds with [`fold_rows`].
///
/// # Panics
/// If an element lies outside `data`.
#[inline]
pub(crate) fn fold_rows_fresh<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    rows: &[Row],
    lanes: usize,
    scratch: &mut FoldScratch,
) -> bool {
    assert!(rows.len() <= CHUNK_ROWS, "fold_rows_fresh: too many rows");
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() && !rows.is_empty() && lanes > 0 {
        for &(offset, _) in rows {
            assert!(
                (offset + lanes) * T::SIZE <= data.len(),
                "fold_rows_fresh: row outside the input"
            );
        }
        if lanes * T::SIZE < 32 {
            let (values, rows_of) = scratch.buffers(32);
            // SAFETY: the CPU has AVX2 (`Isa::Avx2` or better); every row's `lanes` elements
            // lie inside `data` (asserted above), fewer than 32 bytes; the scratch buffers
            // hold 32.
            return unsafe {
                fold_rows_narrow_avx2::<T, LAST>(data, rows, lanes * T::SIZE, values, rows_of)
            };
        }
        let (values, rows_of) = scratch.buffers(lanes * T::SIZE);
        // SAFETY: the CPU has AVX2 (`isa.avx2()`); every row's `lanes` elements lie inside
        // `data` (asserted above); the scratch buffers hold `lanes` lanes, at least 32 bytes.
        return unsafe {
            fold_rows_wide::<T, LAST>(isa, data, rows, values, rows_of, FoldStart::Fresh)
        };
    }
    let _ = (isa, data, lanes, &scratch);
    false
}

/// How many rows [`fold_rows_running`] takes at a time: a row number must stay below the
/// sentinel that marks an unimproved lane, 255 in one-byte lanes.
pub(crate) const RUNNING_CHUNK_ROWS: usize = CHUNK_ROWS - 1;

/// How one chunk of a [`fold_rows_running`] starts and reads its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunningChunk {
    /// The first chunk: the maxima start fresh; later chunks go on from the last.
    pub first: bool,
    /// The step between the reduced indices of consecutive rows, when even (as with one
    /// reduced dimension).
    pub step: Option<u32>,
    /// The rows are read in memory order, the chunk after this one lying just after it
    /// (`argmax::interleaved`): the fold prefetches [`ARGMAX_FOLD_PREFETCH_STREAM_BYTES`]
    /// ahead of each row, not a few rows ahead as for rows of one tail.
    pub in_memory_order: bool,
}

/// Folds `rows` (in increasing index order, at most [`RUNNING_CHUNK_ROWS`]) of `lanes`
/// contiguous outputs into running maxima kept in `scratch` from one call to the next: the
/// `first` call starts them fresh, later ones (with the same `lanes`) go on from the last,
/// as `chunk` says.
/// Each lane this chunk improves takes the improving row's index in `index`; the others keep
/// theirs. No merge of a chunk's maxima into running keys: a lane a chunk does not improve
/// costs nothing after the fold. [`FoldScratch::key_of`] then gives each lane's key. Returns
/// false when there is no vector kernel for these lanes (rows under 32 bytes, no AVX2) or a
/// NaN was met; `scratch` and `index` then hold nothing meaningful, and the caller folds the
/// whole range again with [`fold_rows`].
///
/// With `CHUNK_ROWS` rows per chunk and a scalar merge after each, the merge took a tenth of
/// ArgMax UINT8 `{4096, 16384}` over axis 0 (a branch per lane that the data decides).
///
/// # Panics
/// If an element lies outside `data`, or `index` is not `lanes` long.
#[inline]
pub(crate) fn fold_rows_running<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    rows: &[Row],
    chunk: RunningChunk,
    index: &mut [u32],
    scratch: &mut FoldScratch,
) -> bool {
    assert!(
        rows.len() <= RUNNING_CHUNK_ROWS,
        "fold_rows_running: too many rows"
    );
    let lanes = index.len();
    #[cfg(target_arch = "x86_64")]
    if can_fold_running::<T>(isa, lanes) && !rows.is_empty() {
        for &(offset, _) in rows {
            assert!(
                (offset + lanes) * T::SIZE <= data.len(),
                "fold_rows_running: row outside the input"
            );
        }
        let (values, rows_of) = scratch.buffers(lanes * T::SIZE);
        let start = FoldStart::Running {
            first: chunk.first,
            in_memory_order: chunk.in_memory_order,
        };
        // SAFETY: the CPU has AVX2 (`isa.avx2()`); every row's `lanes` elements lie inside
        // `data` (asserted above); the scratch buffers hold `lanes` lanes, at least 32 bytes.
        let clean = unsafe { fold_rows_wide::<T, LAST>(isa, data, rows, values, rows_of, start) };
        if clean {
            take_improved::<T>(isa, rows_of, rows, chunk.step, index);
        }
        return clean;
    }
    let _ = (isa, data, rows, chunk, lanes, &scratch);
    false
}

/// Whether [`fold_rows_running`] has a vector kernel for `lanes` lanes of `T` with `isa`.
pub(crate) fn can_fold_running<T: Lanes>(isa: Isa, lanes: usize) -> bool {
    cfg!(target_arch = "x86_64") && isa.avx2() && lanes * T::SIZE >= 32
}

/// The row number [`FoldStart::Running`] leaves in a lane no row improved: the lane's bits of
/// `u32::MAX` (255 in one-byte lanes, `u32::MAX` in four- and eight-byte ones).
fn unimproved<T: Lanes>() -> u64 {
    u64::from(u32::MAX) & (u64::MAX >> (64 - 8 * T::SIZE))
}

/// After a running fold: `index[lane]` takes the index of the row (`rows[row]`) whose number
/// lane `lane` holds in `rows_of`, for every lane but those holding [`unimproved`]. With
/// AVX-512 and rows whose indices step evenly by `step`, sixteen lanes at a time with no
/// branch; else eight bytes at a time, a word with no improved lane being one compare.
fn take_improved<T: Lanes>(
    isa: Isa,
    rows_of: &[u8],
    rows: &[Row],
    step: Option<u32>,
    index: &mut [u32],
) {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 {
        if let (Some(step), Some(&(_, first))) = (step, rows.first()) {
            let steps = (first, step);
            // SAFETY: `Isa::Avx512` is only chosen when the CPU has AVX-512 F and BW;
            // `rows_of` holds `index.len()` lanes (the fold's scratch).
            let done = unsafe {
                super::avx512::take_improved_avx512::<T>(
                    rows_of,
                    unimproved::<T>() as u32,
                    steps,
                    index,
                )
            };
            take_improved_portable::<T>(&rows_of[done * T::SIZE..], rows, &mut index[done..]);
            return;
        }
    }
    let _ = (isa, step);
    take_improved_portable::<T>(rows_of, rows, index);
}

/// [`take_improved`] in plain Rust.
fn take_improved_portable<T: Lanes>(rows_of: &[u8], rows: &[Row], index: &mut [u32]) {
    let lane = unimproved::<T>();
    let per_word = 8 / T::SIZE;
    let word = (0..per_word).fold(0u64, |w, k| w | lane << (8 * T::SIZE * k));
    let mut take = |first: usize, bytes: &[u8]| {
        for (k, number) in bytes.chunks_exact(T::SIZE).enumerate() {
            let row = T::lane_index(number);
            if row as u64 != lane {
                index[first + k] = rows[row].1;
            }
        }
    };
    let words = rows_of.chunks_exact(8);
    let rest = words.remainder();
    for (w, bytes) in words.enumerate() {
        if u64::from_le_bytes(bytes.try_into().expect("8 bytes")) != word {
            take(w * per_word, bytes);
        }
    }
    take((rows_of.len() - rest.len()) / T::SIZE, rest);
}

/// Folds `rows` into `values` and `rows_of` (at least 32 bytes of lanes) with AVX-512 when
/// `isa` has it and the lanes fill a 64-byte vector, else AVX2, started as `start` says.
/// Returns false when a NaN was met.
///
/// # Safety
/// The CPU must support AVX2; each row's `values.len()` bytes must lie inside `data`;
/// `rows_of` as long as `values`, at least 32 bytes; from one to [`CHUNK_ROWS`] rows.
#[cfg(target_arch = "x86_64")]
unsafe fn fold_rows_wide<T: Lanes, const LAST: bool>(
    isa: Isa,
    data: &[u8],
    rows: &[Row],
    values: &mut [u8],
    rows_of: &mut [u8],
    start: FoldStart,
) -> bool {
    let into_l1 = fold_prefetch_into_l1(values.len());
    match (isa == Isa::Avx512 && values.len() >= 64, into_l1) {
        // SAFETY (both AVX-512 arms): `Isa::Avx512` is only chosen when the CPU has AVX-512 F
        // and BW; the rest is the caller's.
        (true, true) => {
            super::avx512::fold_rows_avx512::<T, LAST, true>(data, rows, values, rows_of, start)
        }
        (true, false) => {
            super::avx512::fold_rows_avx512::<T, LAST, false>(data, rows, values, rows_of, start)
        }
        (false, true) => fold_rows_avx2::<T, LAST, true>(data, rows, values, rows_of, start),
        (false, false) => fold_rows_avx2::<T, LAST, false>(data, rows, values, rows_of, start),
    }
}

impl FoldScratch {
    /// After a clean [`fold_rows_fresh`]: every lane's row number, `T::SIZE` bytes each
    /// (unsigned), as [`FoldScratch::row_of`] reads them.
    pub(crate) fn rows_lanes(&self) -> &[u8] {
        &self.rows
    }

    /// After a clean [`fold_rows_fresh`]: the row number of lane `lane`'s maximum.
    #[inline]
    pub(crate) fn row_of<T: Lanes>(&self, lane: usize) -> usize {
        T::lane_index(&self.rows[lane * T::SIZE..(lane + 1) * T::SIZE])
    }

    /// After a clean [`fold_rows_fresh`] or [`fold_rows_running`]: the key of lane `lane`'s
    /// maximum.
    #[inline]
    pub(crate) fn key_of<T: Lanes>(&self, lane: usize) -> T::Key {
        T::lane_key(&self.values[lane * T::SIZE..(lane + 1) * T::SIZE])
    }

    /// After a clean [`fold_rows_fresh`] with `isa`: the greatest key among the lanes
    /// `lanes`, with `f` called for each lane holding it ([`max_lanes`]).
    pub(crate) fn max_lanes<T: Lanes>(
        &self,
        isa: Isa,
        lanes: Range<usize>,
        mut f: impl FnMut(usize),
    ) -> T::Key {
        let bytes = &self.values[lanes.start * T::SIZE..lanes.end * T::SIZE];
        max_lanes::<T>(isa, bytes, |lane| f(lanes.start + lane))
    }

    /// The two buffers, `len` bytes each.
    #[cfg(target_arch = "x86_64")]
    fn buffers(&mut self, len: usize) -> (&mut [u8], &mut [u8]) {
        self.values.resize(len, 0);
        self.rows.resize(len, 0);
        (&mut self.values[..len], &mut self.rows[..len])
    }
}

/// Merges a chunk's maxima (`values`, lanes in the compare domain) and the rows they came from
/// (`rows_of`, lane-wide row numbers into `rows`) into the running `keys` and `index`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn merge<T: Lanes, const LAST: bool>(
    values: &[u8],
    rows_of: &[u8],
    rows: &[Row],
    keys: &mut [T::Key],
    index: &mut [u32],
) {
    let lanes = values
        .chunks_exact(T::SIZE)
        .zip(rows_of.chunks_exact(T::SIZE));
    for ((value, row), (key, at)) in lanes.zip(keys.iter_mut().zip(index.iter_mut())) {
        let candidate = T::lane_key(value);
        if better::<_, LAST>(candidate, *key) {
            *key = candidate;
            *at = rows[T::lane_index(row)].1;
        }
    }
}

// --- Portable ---------------------------------------------------------------------------

/// [`block_max`] in plain Rust: a max-reduction over branch-free keys, which the compiler
/// vectorises.
#[inline]
fn block_max_portable<T: OrderKey>(bytes: &[u8]) -> T::Key {
    bytes
        .chunks_exact(T::SIZE)
        .map(|e| T::read(e).key())
        .fold(T::MIN_KEY, Ord::max)
}

/// [`run_argmax`] in plain Rust.
#[inline]
pub(super) fn run_argmax_portable<T: OrderKey, const LAST: bool>(bytes: &[u8]) -> usize {
    let (mut best, mut at, mut found) = (T::MIN_KEY, 0, false);
    for (b, block) in bytes.chunks(SCAN_BLOCK * T::SIZE).enumerate() {
        let max = block_max_portable::<T>(block);
        if !found || better::<_, LAST>(max, best) {
            if let Some(p) = locate_portable::<T, LAST>(block, max) {
                (best, at, found) = (max, b * SCAN_BLOCK + p, true);
            }
        }
    }
    at
}

/// Elements per chunk in [`locate_portable`]'s first, vectorisable, pass.
const LOCATE_LANES: usize = 32;

/// [`locate`] in plain Rust: the chunk holding the key is found with a vectorisable
/// comparison, then searched element by element.
#[inline]
fn locate_portable<T: OrderKey, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize> {
    let holds = |chunk: &[u8]| {
        let mut hits = [false; LOCATE_LANES];
        for (hit, element) in hits.iter_mut().zip(chunk.chunks_exact(T::SIZE)) {
            *hit = T::read(element).key() == key;
        }
        hits.contains(&true)
    };
    let chunk_bytes = LOCATE_LANES * T::SIZE;
    let mut chunks = bytes.chunks(chunk_bytes).enumerate();
    let found = if LAST {
        chunks.rev().find(|(_, c)| holds(c))
    } else {
        chunks.find(|(_, c)| holds(c))
    };
    let (c, chunk) = found?;
    let mut keys = chunk.chunks_exact(T::SIZE).map(|e| T::read(e).key());
    let position = if LAST {
        keys.rposition(|k| k == key)
    } else {
        keys.position(|k| k == key)
    };
    Some(c * LOCATE_LANES + position?)
}

/// [`fold_rows`] in plain Rust.
#[inline]
fn fold_rows_portable<T: OrderKey, const LAST: bool>(
    data: &[u8],
    rows: &[Row],
    stride: usize,
    keys: &mut [T::Key],
    index: &mut [u32],
) {
    let lanes = keys.len();
    for &(offset, row_index) in rows {
        if stride == 1 {
            let bytes = &data[offset * T::SIZE..(offset + lanes) * T::SIZE];
            for ((element, key), at) in bytes
                .chunks_exact(T::SIZE)
                .zip(keys.iter_mut())
                .zip(index.iter_mut())
            {
                let value = T::read(element).key();
                // Unconditional stores of selects: no branch, no masked store.
                *at = if better::<_, LAST>(value, *key) {
                    row_index
                } else {
                    *at
                };
                *key = (*key).max(value);
            }
        } else {
            for (e, (key, at)) in keys.iter_mut().zip(index.iter_mut()).enumerate() {
                let value = T::read(&data[(offset + e * stride) * T::SIZE..]).key();
                if better::<_, LAST>(value, *key) {
                    *key = value;
                    *at = row_index;
                }
            }
        }
    }
}

// --- AVX2 -------------------------------------------------------------------------------

/// The lane-wise maximum of all lanes of `v`, in every lane (shuffles, in the compare domain).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn all_lanes_max<T: Lanes>(v: __m256i) -> __m256i {
    let mut v = T::max(v, _mm256_permute2x128_si256::<1>(v, v));
    v = T::max(v, _mm256_shuffle_epi32::<0b01_00_11_10>(v));
    if T::SIZE <= 4 {
        v = T::max(v, _mm256_shuffle_epi32::<0b10_11_00_01>(v));
    }
    if T::SIZE <= 2 {
        let swap16 = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        );
        v = T::max(v, _mm256_shuffle_epi8(v, swap16));
    }
    if T::SIZE == 1 {
        let swap8 = _mm256_setr_epi8(
            1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11,
            10, 13, 12, 15, 14,
        );
        v = T::max(v, _mm256_shuffle_epi8(v, swap8));
    }
    v
}

/// [`block_max`] with AVX2: four running maxima in the compare domain and a NaN flag. A piece
/// of at least a vector ends with a vector that overlaps the one before (the maximum does not
/// mind); a shorter one is one vector with its lanes outside the piece set to the lowest value
/// ([`run_window`]), or, in data shorter than a vector, read element by element.
///
/// # Safety
/// The CPU must support AVX2; every piece must lie inside `data`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_max_avx2<T: Lanes>(data: &[u8], pieces: &[Piece]) -> T::Key {
    max_of_pieces::<T>(data, pieces)
}

/// The body of [`block_max_avx2`]: the maximum key of the elements of `pieces` of `data`.
///
/// # Safety
/// The CPU must support AVX2 (this is inlined into AVX2 functions only); every piece must lie
/// inside `data`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn max_of_pieces<T: Lanes>(data: &[u8], pieces: &[Piece]) -> T::Key {
    let base = data.as_ptr();
    let mut acc = [T::lowest(); 4];
    let mut nan = _mm256_setzero_si256();
    let mut max = T::MIN_KEY;
    let mut any_vector = false;
    for piece in pieces {
        let bytes = piece.len * T::SIZE;
        let p = base.add(piece.start * T::SIZE);
        if bytes < 32 {
            if let Some((v, _)) = run_window::<T>(data, piece.start * T::SIZE, bytes) {
                any_vector = true;
                acc[1] = T::max(v, acc[1]);
                if T::CAN_NAN {
                    nan = _mm256_or_si256(nan, T::nan(v));
                }
                continue;
            }
            for e in 0..piece.len {
                let element = std::slice::from_raw_parts(p.add(e * T::SIZE), T::SIZE);
                max = max.max(T::read(element).key());
            }
            continue;
        }
        any_vector = true;
        // Vector starts: 0, 32, … and the last one ending at `bytes` (all in bounds: the piece
        // lies inside `data` and holds at least 32 bytes).
        let whole = bytes / 32;
        let mut j = 0;
        while j + 4 <= whole {
            for (k, acc) in acc.iter_mut().enumerate() {
                let v = T::load(p.add((j + k) * 32));
                *acc = T::max(v, *acc);
                if T::CAN_NAN {
                    nan = _mm256_or_si256(nan, T::nan(v));
                }
            }
            j += 4;
        }
        // The rest: whole vectors, then one ending at `bytes` (overlapping the one before).
        let vectors = bytes.div_ceil(32);
        while j < vectors {
            let at = if j < whole { j * 32 } else { bytes - 32 };
            let v = T::load(p.add(at));
            acc[0] = T::max(v, acc[0]);
            if T::CAN_NAN {
                nan = _mm256_or_si256(nan, T::nan(v));
            }
            j += 1;
        }
    }
    if !any_vector {
        return max;
    }
    if T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0 {
        return T::nan_key();
    }
    let all = all_lanes_max::<T>(T::max(T::max(acc[0], acc[1]), T::max(acc[2], acc[3])));
    let mut lanes = [0u8; 32];
    _mm256_storeu_si256(lanes.as_mut_ptr().cast(), all);
    max.max(T::lane_key(&lanes[..T::SIZE]))
}

/// [`run_argmax`] with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(all(test, target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn run_argmax_avx2<T: Lanes, const LAST: bool>(
    data: &[u8],
    start: usize,
    len: usize,
) -> usize {
    Avx2Prims::run_argmax::<T, LAST>(data, start, len)
}

/// The blocks of one vector width for [`run_argmax_body`]: a block's maximum and where it
/// lies. AVX2 ([`Avx2Prims`], [`vector_max`] and [`locate_vector`]) and AVX-512
/// (`avx512::Avx512Prims`) each give one.
#[cfg(target_arch = "x86_64")]
pub(crate) trait RunBlocks {
    /// Bytes per vector: a block (and a run) holds at least this many.
    const VECTOR: usize;

    /// The maximum of the `n` bytes (at least [`RunBlocks::VECTOR`], whole elements) at `p`
    /// in every lane of a 256-bit vector, in the compare domain, and whether a NaN appeared.
    ///
    /// # Safety
    /// The CPU must support the width's instructions; `n` readable bytes at `p`.
    unsafe fn max_of_block<T: Lanes>(p: *const u8, n: usize) -> (__m256i, bool);

    /// The byte offset of the first (or, with `LAST`, the last) element of the `n` bytes at
    /// `p` equal to `max` (every lane the same value, present in those bytes, no NaN).
    ///
    /// # Safety
    /// As [`RunBlocks::max_of_block`].
    unsafe fn position_in_block<T: Lanes, const LAST: bool>(
        p: *const u8,
        n: usize,
        max: __m256i,
    ) -> usize;
}

#[cfg(target_arch = "x86_64")]
impl RunBlocks for Avx2Prims {
    const VECTOR: usize = 32;

    #[inline(always)]
    unsafe fn max_of_block<T: Lanes>(p: *const u8, n: usize) -> (__m256i, bool) {
        vector_max::<T>(p, n)
    }

    #[inline(always)]
    unsafe fn position_in_block<T: Lanes, const LAST: bool>(
        p: *const u8,
        n: usize,
        max: __m256i,
    ) -> usize {
        locate_vector::<T, LAST>(p, n, max)
    }
}

/// The bytes from `p` to the next multiple of `boundary` (a power of two up to 64), whole
/// elements only: 0 when `p` itself is not aligned to the element size, where no element
/// starts on the boundary.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn bytes_to_boundary<T: Lanes>(p: *const u8, boundary: usize) -> usize {
    if (p as usize).is_multiple_of(T::SIZE) {
        (p as usize).wrapping_neg() % boundary
    } else {
        0
    }
}

/// The body of [`Prims::run_argmax`] with the vectors of `W`, on a run of at least
/// `W::VECTOR` bytes: blocks of about [`SCAN_BLOCK`] elements (the last one takes a remainder
/// shorter than a vector), each reduced to its maximum in every lane, which is located in the
/// block only when it beats the best so far, all in the compare domain. None when a NaN
/// appears.
///
/// # Safety
/// The CPU must support `W`'s instructions (this is inlined into such functions only);
/// `bytes.len() >= W::VECTOR`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn run_argmax_body<T: Lanes, const LAST: bool, W: RunBlocks>(
    bytes: &[u8],
) -> Option<usize> {
    let block = SCAN_BLOCK * T::SIZE;
    let len = bytes.len();
    let p = bytes.as_ptr();
    let mut best = T::lowest();
    let mut at = 0;
    // The first block also takes the bytes up to the first line boundary, so that the later
    // blocks start on one and read whole lines with no overlapping last vector.
    let lead = bytes_to_boundary::<T>(p, 64);
    let mut j = 0;
    while j < len {
        let want = if j == 0 { block + lead } else { block };
        let n = if len - j < want + W::VECTOR {
            len - j
        } else {
            want
        };
        let (max, nan) = W::max_of_block::<T>(p.add(j), n);
        if nan {
            return None;
        }
        // The first block always counts; later ones when strictly greater (first maximum) or
        // not smaller (last maximum). Every lane holds the block's maximum.
        let take = j == 0
            || if LAST {
                _mm256_movemask_epi8(T::gt(best, max)) == 0
            } else {
                _mm256_movemask_epi8(T::gt(max, best)) != 0
            };
        if take {
            best = max;
            at = j + W::position_in_block::<T, LAST>(p.add(j), n, max);
        }
        j += n;
    }
    Some(at / T::SIZE)
}

/// Bytes 32..64 set, the rest clear: a 32-byte load at `64 - k` has its first `k` bytes
/// set, one at `32 - k` its bytes from `k` on ([`tiny_run_argmax`]'s window of a run,
/// [`fold_rows_narrow_avx2`]'s lanes of a row).
#[cfg(target_arch = "x86_64")]
static WINDOW_BYTES: [u8; 96] = {
    let mut table = [0u8; 96];
    let mut i = 32;
    while i < 64 {
        table[i] = 0xff;
        i += 1;
    }
    table
};

/// The `n` bytes (whole elements, 1 to 31) at byte `start` of `data` as one vector in the
/// compare domain, its other lanes the lowest value, and the bytes before the run in it: the
/// vector starts at the run, or, near the end of `data`, ends at `data`'s end. None when
/// `data` is shorter than a vector.
///
/// # Safety
/// The CPU must support AVX2; `start + n <= data.len()`, `n < 32`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn run_window<T: Lanes>(data: &[u8], start: usize, n: usize) -> Option<(__m256i, usize)> {
    // Bytes of the vector before the run: 0, or as many as keep it inside `data`, in whole
    // elements (at most 32 - n, so the run still fits).
    let skip = (start + 32)
        .saturating_sub(data.len())
        .next_multiple_of(T::SIZE);
    // With at least a vector of data, `skip <= start`: `start` is a multiple of the element
    // size, so rounding `start + 32 - data.len()` up to one stays at or below it.
    if data.len() < 32 {
        return None;
    }
    let p = data.as_ptr().add(start - skip);
    let table = WINDOW_BYTES.as_ptr();
    let inside = _mm256_and_si256(
        _mm256_loadu_si256(table.add(64 - skip - n).cast()),
        _mm256_loadu_si256(table.add(32 - skip).cast()),
    );
    Some((_mm256_blendv_epi8(T::lowest(), T::load(p), inside), skip))
}

/// The vector at byte `at` of `data` in the compare domain; near the end of `data`, its bytes
/// past the end are zero (the caller ignores their lanes).
///
/// # Safety
/// The CPU must support AVX2; `at < data.len()`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn load_inside<T: Lanes>(data: &[u8], at: usize) -> __m256i {
    if at + 32 <= data.len() {
        return T::load(data.as_ptr().add(at));
    }
    let mut bytes = [0u8; 32];
    let inside = &data[at..];
    bytes[..inside.len()].copy_from_slice(inside);
    T::load(bytes.as_ptr())
}

/// The position of the first (or, with `LAST`, the last) maximum of the `n` bytes (whole
/// elements, 1 to 31) at byte `start` of `data`, with one vector: it starts at the run, or,
/// near the end of `data`, ends at `data`'s end; its lanes outside the run are set to the
/// lowest value, and the lanes equal to its maximum give the position. None when a NaN
/// appears, or when `data` is too short to hold a vector around the run (the caller then
/// reduces the run exactly).
///
/// Runs this short were read element by element: a padded `[n, 9]` FLOAT16 or a `[n, 5]`
/// FLOAT32 reduced over its inner axis cost about three times as long.
///
/// # Safety
/// The CPU must support AVX2; `start + n <= data.len()`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tiny_run_argmax<T: Lanes, const LAST: bool>(
    data: &[u8],
    start: usize,
    n: usize,
) -> Option<usize> {
    let (v, skip) = run_window::<T>(data, start, n)?;
    let byte = window_best_byte::<T, LAST>(v, ((1u32 << n) - 1) << skip)?;
    Some((byte - skip) / T::SIZE)
}

/// The byte of `v` where the first (or, with `LAST`, the last) maximum of a run lies, the
/// run's bytes being the set bits of `run_bits` and every other lane of `v` the lowest value
/// (which the maximum may equal, hence the bits). None when a NaN appears.
///
/// # Safety
/// The CPU must support AVX2 (inlined into such functions only).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn window_best_byte<T: Lanes, const LAST: bool>(
    v: __m256i,
    run_bits: u32,
) -> Option<usize> {
    if T::CAN_NAN {
        let nan = T::nan(v);
        if _mm256_testz_si256(nan, nan) == 0 {
            return None;
        }
    }
    let winners = _mm256_movemask_epi8(T::eq(v, all_lanes_max::<T>(v))) as u32 & run_bits;
    Some(if LAST {
        31 - winners.leading_zeros() as usize
    } else {
        winners.trailing_zeros() as usize
    })
}

/// The position of the first (or, with `LAST`, the last) maximum of the `n` bytes (32 to
/// [`SHORT_RUN_BYTES`], whole elements) at `p`, in one pass with no branch per vector: each
/// lane keeps its best value and the number of the vector it came from (the last vector
/// overlaps the one before), then the lanes holding the run's maximum give their positions and
/// the lowest (highest with `LAST`) is taken. [`run_argmax_body`] reads the maximum first and
/// searches for it after, whose exit at a random vector costs a mispredicted branch per run:
/// most of the time of a run this short. None when a NaN appears.
///
/// # Safety
/// The CPU must support AVX2; `32 <= n <= SHORT_RUN_BYTES` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn short_run_argmax<T: Lanes, const LAST: bool>(p: *const u8, n: usize) -> Option<usize> {
    let vectors = n.div_ceil(32);
    let at = |j: usize| (j * 32).min(n - 32);
    let mut best = T::load(p);
    let mut number = _mm256_setzero_si256();
    let mut nan = T::nan(best);
    for j in 1..vectors {
        let v = T::load(p.add(at(j)));
        let j = T::splat_index(j as u32);
        number = if LAST {
            _mm256_blendv_epi8(j, number, T::gt(best, v))
        } else {
            _mm256_blendv_epi8(number, j, T::gt(v, best))
        };
        best = T::max(v, best);
        if T::CAN_NAN {
            nan = _mm256_or_si256(nan, T::nan(v));
        }
    }
    if T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0 {
        return None;
    }
    let winners = _mm256_movemask_epi8(T::eq(best, all_lanes_max::<T>(best))) as u32;
    let mut numbers = [0u8; 32];
    _mm256_storeu_si256(numbers.as_mut_ptr().cast(), number);
    let lane_bits = if T::SIZE >= 4 {
        u32::MAX >> (32 - T::SIZE)
    } else {
        (1u32 << T::SIZE) - 1
    };
    let mut found = if LAST { 0 } else { usize::MAX };
    let mut left = winners;
    while left != 0 {
        let byte = left.trailing_zeros() as usize;
        let j = T::lane_index(&numbers[byte..byte + T::SIZE]);
        let position = at(j) + byte;
        found = if LAST {
            found.max(position)
        } else {
            found.min(position)
        };
        left &= !(lane_bits << byte);
    }
    Some(found / T::SIZE)
}

/// The maximum of the `n` bytes (at least 32, whole elements) at `p` in every lane, in the
/// compare domain, and whether a NaN appeared: four running maxima, the last vector
/// overlapping the one before.
///
/// Loads are aligned to 32 bytes where the elements allow it: the first vector is read at
/// `p`, and the others from the first 32-byte boundary after it, so that no later load
/// straddles two cache lines. A max-reduction may read an element twice.
///
/// # Safety
/// The CPU must support AVX2; `n >= 32` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn vector_max<T: Lanes>(p: *const u8, n: usize) -> (__m256i, bool) {
    let first = T::load(p);
    let mut nan = T::nan(first);
    // Bytes read by the first vector before the next boundary.
    let skew = bytes_to_boundary::<T>(p, 32);
    let q = p.add(skew);
    let rest = n - skew;
    let whole = rest / 32;
    let mut acc = [first; 4];
    let mut j = 0;
    while j + 4 <= whole {
        for (k, acc) in acc.iter_mut().enumerate() {
            if k % 2 == 0 {
                prefetch_ahead(q.add((j + k) * 32), ARGMAX_RUN_PREFETCH_BYTES);
            }
            let v = T::load(q.add((j + k) * 32));
            *acc = T::max(v, *acc);
            if T::CAN_NAN {
                nan = _mm256_or_si256(nan, T::nan(v));
            }
        }
        j += 4;
    }
    while j < rest.div_ceil(32) {
        let v = T::load(if j < whole {
            q.add(j * 32)
        } else {
            p.add(n - 32)
        });
        acc[j % 4] = T::max(v, acc[j % 4]);
        if T::CAN_NAN {
            nan = _mm256_or_si256(nan, T::nan(v));
        }
        j += 1;
    }
    let all = all_lanes_max::<T>(T::max(T::max(acc[0], acc[1]), T::max(acc[2], acc[3])));
    let nan = T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0;
    (all, nan)
}

/// The byte offset of the first (or, with `LAST`, the last) element of the `n` bytes (at least
/// 32, whole elements) at `p` equal to `max` (every lane the same value in the compare domain,
/// present in those bytes, no NaN).
///
/// # Safety
/// The CPU must support AVX2; `n >= 32` readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn locate_vector<T: Lanes, const LAST: bool>(p: *const u8, n: usize, max: __m256i) -> usize {
    let vectors = n.div_ceil(32);
    let at = |j: usize| (j * 32).min(n - 32);
    let mask = |j: usize| _mm256_movemask_epi8(T::eq(T::load(p.add(at(j))), max)) as u32;
    if LAST {
        for j in (0..vectors).rev() {
            let m = mask(j);
            if m != 0 {
                return at(j) + 31 - m.leading_zeros() as usize + 1 - T::SIZE;
            }
        }
    } else {
        for j in 0..vectors {
            let m = mask(j);
            if m != 0 {
                return at(j) + m.trailing_zeros() as usize;
            }
        }
    }
    0
}

/// [`locate`] with AVX2: the lanes equal to the key, as a byte mask per vector. A run of at
/// least a vector ends with a vector overlapping the one before; a shorter one is searched
/// element by element.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn locate_avx2<T: Lanes, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize> {
    locate_body::<T, LAST>(bytes, key)
}

/// The body of [`locate_avx2`].
///
/// # Safety
/// The CPU must support AVX2 (this is inlined into AVX2 functions only).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn locate_body<T: Lanes, const LAST: bool>(bytes: &[u8], key: T::Key) -> Option<usize> {
    let len = bytes.len();
    if len < 32 {
        let mut keys = bytes.chunks_exact(T::SIZE).map(|e| T::read(e).key());
        return if LAST {
            keys.rposition(|k| k == key)
        } else {
            keys.position(|k| k == key)
        };
    }
    let p = bytes.as_ptr();
    let vectors = len.div_ceil(32);
    // Vector j covers bytes at(j) .. at(j) + 32 <= len.
    let at = |j: usize| (j * 32).min(len - 32);
    if LAST {
        for j in (0..vectors).rev() {
            let m = equal_lanes::<T>(p.add(at(j)), key);
            if m != 0 {
                return Some((at(j) + 31 - m.leading_zeros() as usize) / T::SIZE);
            }
        }
    } else {
        for j in 0..vectors {
            let m = equal_lanes::<T>(p.add(at(j)), key);
            if m != 0 {
                return Some((at(j) + m.trailing_zeros() as usize) / T::SIZE);
            }
        }
    }
    None
}

/// The byte mask of the elements of the vector at `p` whose key is `key`.
///
/// # Safety
/// The CPU must support AVX2; 32 readable bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn equal_lanes<T: Lanes>(p: *const u8, key: T::Key) -> u32 {
    _mm256_movemask_epi8(T::eq_key(_mm256_loadu_si256(p.cast()), key)) as u32
}

/// [`max_lanes`] with AVX2: the greatest key of the lanes in `bytes` (values in
/// the compare domain, at least 32 bytes, no NaN), `f` called with the position of each lane
/// holding it.
///
/// # Safety
/// The CPU must support AVX2; `bytes.len() >= 32`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn max_lanes_avx2<T: Lanes>(bytes: &[u8], f: &mut dyn FnMut(usize)) -> T::Key {
    let n = bytes.len();
    let p = bytes.as_ptr();
    let vectors = n.div_ceil(32);
    // Vector j covers bytes at(j) .. at(j) + 32 <= n; the last may overlap the one before.
    let at = |j: usize| (j * 32).min(n - 32);
    let mut max = _mm256_loadu_si256(p.cast());
    for j in 1..vectors {
        max = T::max(max, _mm256_loadu_si256(p.add(at(j)).cast()));
    }
    let max = all_lanes_max::<T>(max);
    let lane_bits = u32::MAX >> (32 - T::SIZE);
    for j in 0..vectors {
        let equal = T::eq(_mm256_loadu_si256(p.add(at(j)).cast()), max);
        let mut bits = _mm256_movemask_epi8(equal) as u32;
        while bits != 0 {
            let byte = bits.trailing_zeros() as usize;
            f((at(j) + byte) / T::SIZE);
            bits &= !(lane_bits << byte);
        }
    }
    let mut lane = [0u8; 32];
    _mm256_storeu_si256(lane.as_mut_ptr().cast(), max);
    T::lane_key(&lane)
}

/// How [`fold_rows_body`] starts its lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FoldStart {
    /// Fresh maxima, every lane's row number 0 ([`fold_rows_fresh`]).
    Fresh,
    /// Running maxima ([`fold_rows_running`]): fresh (`first`) or as the last fold left them,
    /// every lane's row number [`unimproved`], so that afterwards only the lanes this fold
    /// improved hold a row number.
    Running {
        /// The first chunk: the maxima start fresh.
        first: bool,
        /// The rows are read in memory order ([`RunningChunk::in_memory_order`]).
        in_memory_order: bool,
    },
}

/// The vectors of one width for [`fold_rows_body`]: AVX2 ([`Avx2Fold`]) and AVX-512
/// (`avx512::Avx512Fold`) each give one.
#[cfg(target_arch = "x86_64")]
pub(crate) trait FoldVectors {
    /// A vector.
    type V: Copy;

    /// Bytes per vector.
    const BYTES: usize;

    /// Every lane the lowest value of the compare domain.
    ///
    /// # Safety
    /// The CPU must support the width's instructions (as every method here).
    unsafe fn lowest<T: Lanes>() -> Self::V;

    /// Every lane zero.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`].
    unsafe fn zero() -> Self::V;

    /// Every lane `i` (below 256), as an unsigned integer of the element's width.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`].
    unsafe fn index<T: Lanes>(i: u32) -> Self::V;

    /// The bytes at `p` in the compare domain.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`]; [`FoldVectors::BYTES`] readable bytes at `p`.
    unsafe fn load<T: Lanes>(p: *const u8) -> Self::V;

    /// The bytes at `p` as they are.
    ///
    /// # Safety
    /// As [`FoldVectors::load`].
    unsafe fn load_raw(p: *const u8) -> Self::V;

    /// Stores `v` at `p`.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`]; [`FoldVectors::BYTES`] writable bytes at `p`.
    unsafe fn store(p: *mut u8, v: Self::V);

    /// Folds `v` (the elements of row `number`) into the running maxima `value` and their
    /// rows `row`: where `v` is greater (with `LAST`, not smaller), the row becomes `number`.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`].
    unsafe fn fold<T: Lanes, const LAST: bool>(
        value: &mut Self::V,
        row: &mut Self::V,
        v: Self::V,
        number: Self::V,
    );

    /// What [`FoldVectors::add_nans`] gathers: whether a NaN was met.
    type Nans: Copy;

    /// No NaN met yet.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`].
    unsafe fn no_nans() -> Self::Nans;

    /// `nans` and the NaN lanes of `v`.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`].
    unsafe fn add_nans<T: Lanes>(nans: Self::Nans, v: Self::V) -> Self::Nans;

    /// True when `nans` holds a NaN.
    ///
    /// # Safety
    /// As [`FoldVectors::lowest`].
    unsafe fn any_nan(nans: Self::Nans) -> bool;
}

/// The AVX2 vectors of the row fold.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2Fold;

#[cfg(target_arch = "x86_64")]
impl FoldVectors for Avx2Fold {
    type V = __m256i;
    const BYTES: usize = 32;

    #[inline(always)]
    unsafe fn lowest<T: Lanes>() -> __m256i {
        T::lowest()
    }

    #[inline(always)]
    unsafe fn zero() -> __m256i {
        _mm256_setzero_si256()
    }

    #[inline(always)]
    unsafe fn index<T: Lanes>(i: u32) -> __m256i {
        T::splat_index(i)
    }

    #[inline(always)]
    unsafe fn load<T: Lanes>(p: *const u8) -> __m256i {
        T::load(p)
    }

    #[inline(always)]
    unsafe fn load_raw(p: *const u8) -> __m256i {
        _mm256_loadu_si256(p.cast())
    }

    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m256i) {
        _mm256_storeu_si256(p.cast(), v);
    }

    #[inline(always)]
    unsafe fn fold<T: Lanes, const LAST: bool>(
        value: &mut __m256i,
        row: &mut __m256i,
        v: __m256i,
        number: __m256i,
    ) {
        *row = if LAST {
            _mm256_blendv_epi8(number, *row, T::gt(*value, v))
        } else {
            _mm256_blendv_epi8(*row, number, T::gt(v, *value))
        };
        *value = T::max(v, *value);
    }

    type Nans = __m256i;

    #[inline(always)]
    unsafe fn no_nans() -> __m256i {
        _mm256_setzero_si256()
    }

    #[inline(always)]
    unsafe fn add_nans<T: Lanes>(nans: __m256i, v: __m256i) -> __m256i {
        _mm256_or_si256(nans, T::nan(v))
    }

    #[inline(always)]
    unsafe fn any_nan(nans: __m256i) -> bool {
        _mm256_testz_si256(nans, nans) == 0
    }
}

/// Rows whose elements are loaded together in [`fold_rows_body`] (fewer loads and stores of
/// the running maxima). 8 rather than 4 took about a seventh off the outer-axis rows on one
/// AMD EPYC core; 16 was much slower (its row numbers and streams no longer fit, with AVX2;
/// with AVX-512, FLOAT32 {4096,16384} axis 0 took 12.9 ms against 9.9).
#[cfg(target_arch = "x86_64")]
const ROW_GROUP: usize = 8;

/// [`ROW_GROUP`] for 64-byte vectors of elements other than 2-byte ones. On one AMD EPYC
/// (Zen 5) core, one process per group size, medians of 11 (group 8 → 7 → 6): FLOAT32
/// `{64}^4` axes 1,3 2.24–2.89 → 2.06–2.14 → 2.07–2.33 ms; FLOAT32 `{4096,16384}` axis 0 9.3–9.4
/// → – → 8.95; INT32 axis 0 8.96 → 8.61 → 8.56; UINT8 axis 0 2.14–2.21 → 1.98 → 2.00–2.02;
/// the padded rank-5 axes 1,3 3.44–3.54 → 3.36 → 3.37; two threads FLOAT32 axis 0 7.63 → – →
/// 6.91. FLOAT16 axis 0 went the other way (3.86–3.96 → 4.23 → 4.60–4.64), so 2-byte elements
/// keep [`ROW_GROUP`]; 4 was slower still for both (FLOAT16 4.74–4.78, padded 4.89). Against
/// the library before, processes alternated: FLOAT32 axis 0 9.32–9.43 → 8.76–8.85 ms, `{64}^4`
/// axes 1,3 2.16 → 2.09–2.11 (the host in its fast state), FLOAT16 and both axes unchanged.
#[cfg(target_arch = "x86_64")]
const WIDE_ROW_GROUP: usize = 7;

/// Rows [`fold_rows_body`] loads together for elements of `T` in vectors of `W`.
#[cfg(target_arch = "x86_64")]
fn row_group<T: Lanes, W: FoldVectors>() -> usize {
    if W::BYTES >= 64 && T::SIZE != 2 {
        WIDE_ROW_GROUP
    } else {
        ROW_GROUP
    }
}

/// Folds `rows` into fresh running maxima of `values.len() / T::SIZE` lanes (at least a
/// vector's worth): `values` gets each lane's maximum in the compare domain and `rows_of` the
/// number of the row it came from (the first or, with `LAST`, the last such row). Returns
/// false when a NaN was met (the results are then meaningless). Each row is prefetched
/// as it is read: to the next group's rows where the rows are evenly spaced
/// ([`next_group_distance`]), else [`fold_prefetch_bytes`] ahead
/// ([`ARGMAX_FOLD_PREFETCH_STREAM_BYTES`] for rows read in memory order,
/// [`RunningChunk::in_memory_order`]); into L1 when `INTO_L1`
/// ([`fold_prefetch_into_l1`]), else into L2.
///
/// # Safety
/// The CPU must support AVX2; each row's `values.len()` bytes must lie inside `data`;
/// `rows_of` as long as `values`, at least 32 bytes; at most [`CHUNK_ROWS`] rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_rows_avx2<T: Lanes, const LAST: bool, const INTO_L1: bool>(
    data: &[u8],
    rows: &[Row],
    values: &mut [u8],
    rows_of: &mut [u8],
    start: FoldStart,
) -> bool {
    fold_rows_body::<T, LAST, Avx2Fold, INTO_L1>(data, rows, values, rows_of, start)
}

/// [`fold_rows_avx2`] for rows of `bytes` < 32 bytes: one vector per row, read from the row's
/// start (or, within 32 bytes of the end of `data`, through [`load_inside`]), its lanes past
/// the row set to the lowest value before the fold, so that what lies after the row (another
/// output's elements, a NaN even) changes nothing. The first 32 bytes of `values` and
/// `rows_of` get the lanes. Rows this narrow were folded element by element: short runs
/// folded lane by lane (`run_lanes`) over blocks of 18 bytes cost about 5 ns a row.
///
/// # Safety
/// The CPU must support AVX2; each row's `bytes` bytes must lie inside `data`; `values` and
/// `rows_of` at least 32 bytes; at most [`CHUNK_ROWS`] rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_rows_narrow_avx2<T: Lanes, const LAST: bool>(
    data: &[u8],
    rows: &[Row],
    bytes: usize,
    values: &mut [u8],
    rows_of: &mut [u8],
) -> bool {
    let inside = _mm256_loadu_si256(WINDOW_BYTES.as_ptr().add(64 - bytes).cast());
    let lowest = T::lowest();
    let mut value = lowest;
    let mut row = _mm256_setzero_si256();
    let mut nans = Avx2Fold::no_nans();
    for (r, &(offset, _)) in rows.iter().enumerate() {
        let v = _mm256_blendv_epi8(lowest, load_inside::<T>(data, offset * T::SIZE), inside);
        Avx2Fold::fold::<T, LAST>(&mut value, &mut row, v, T::splat_index(r as u32));
        if T::CAN_NAN {
            nans = Avx2Fold::add_nans::<T>(nans, v);
        }
    }
    _mm256_storeu_si256(values.as_mut_ptr().cast(), value);
    _mm256_storeu_si256(rows_of.as_mut_ptr().cast(), row);
    !T::CAN_NAN || !Avx2Fold::any_nan(nans)
}

/// The body of the row folds ([`fold_rows_avx2`], `avx512::fold_rows_avx512`) with the
/// vectors of `W`: see [`fold_rows_avx2`].
///
/// # Safety
/// The CPU must support `W`'s instructions (this is inlined into such functions only); each
/// row's `values.len()` bytes must lie inside `data`; `rows_of` as long as `values`, at least
/// `W::BYTES`; at least one row (the first group writes the start of every vector) and at
/// most [`CHUNK_ROWS`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn fold_rows_body<
    T: Lanes,
    const LAST: bool,
    W: FoldVectors,
    const INTO_L1: bool,
>(
    data: &[u8],
    rows: &[Row],
    values: &mut [u8],
    rows_of: &mut [u8],
    start: FoldStart,
) -> bool {
    debug_assert!(!rows.is_empty(), "fold_rows_body: no rows");
    let bytes = values.len();
    let vectors = bytes.div_ceil(W::BYTES);
    // Vector j covers bytes at(j) .. at(j) + W::BYTES <= bytes; the last one may overlap the
    // one before, which folds the same rows into the shared lanes twice (no change the second
    // time: an equal element replaces nothing for INCREASING, and gives the same row for
    // DECREASING).
    let at = |j: usize| (j * W::BYTES).min(bytes - W::BYTES);
    let (vp, rp) = (values.as_mut_ptr(), rows_of.as_mut_ptr());
    let (fresh_values, first_row) = match start {
        FoldStart::Fresh => (true, W::zero()),
        FoldStart::Running { first, .. } => (first, W::index::<T>(u32::MAX)),
    };
    // The first group starts its pairs of vectors in registers (the lowest value or the
    // running maxima, and `first_row`); only a lone last vector, which
    // [`fold_one_vector`] folds from memory, starts there. Stored first for every vector,
    // the start cost a fifth of a two-row fold (ArgMax INT64 `[33, 2, 28202, 1, 1]` padded
    // over axis 1).
    if vectors % 2 == 1 {
        let o = at(vectors - 1);
        if fresh_values {
            W::store(vp.add(o), W::lowest::<T>());
        }
        W::store(rp.add(o), first_row);
    }
    let base = data.as_ptr();
    let row_group = row_group::<T, W>();
    let ahead = next_group_distance(rows, row_group, T::SIZE).unwrap_or(match start {
        FoldStart::Running {
            in_memory_order: true,
            ..
        } => ARGMAX_FOLD_PREFETCH_STREAM_BYTES,
        _ => fold_prefetch_bytes(bytes),
    });
    let mut nans = W::no_nans();
    let mut r = 0;
    while r < rows.len() {
        let group = (rows.len() - r).min(row_group);
        let mut starts = [base; ROW_GROUP];
        let mut numbers = [W::zero(); ROW_GROUP];
        for k in 0..group {
            starts[k] = base.add(rows[r + k].0 * T::SIZE);
            numbers[k] = W::index::<T>((r + k) as u32);
        }
        // Two vectors at a time: their dependency chains (compare, blend, max per row)
        // overlap. With an odd count the last vector is taken alone.
        for j in (0..vectors).step_by(2) {
            let (o1, o2) = (at(j), at((j + 1).min(vectors - 1)));
            if o1 == o2 {
                let (starts, numbers) = (&starts[..group], &numbers[..group]);
                nans = fold_one_vector::<T, LAST, W, INTO_L1>(
                    starts,
                    numbers,
                    (vp, rp),
                    o1,
                    ahead,
                    nans,
                );
                continue;
            }
            let (mut value1, mut row1, mut value2, mut row2) = if r > 0 {
                (
                    W::load_raw(vp.add(o1)),
                    W::load_raw(rp.add(o1)),
                    W::load_raw(vp.add(o2)),
                    W::load_raw(rp.add(o2)),
                )
            } else if fresh_values {
                (W::lowest::<T>(), first_row, W::lowest::<T>(), first_row)
            } else {
                (
                    W::load_raw(vp.add(o1)),
                    first_row,
                    W::load_raw(vp.add(o2)),
                    first_row,
                )
            };
            for k in 0..group {
                // One prefetch per line: a 64-byte vector takes one of its own.
                prefetch_ahead_into(starts[k].add(o1), ahead, INTO_L1);
                if W::BYTES >= 64 {
                    prefetch_ahead_into(starts[k].add(o2), ahead, INTO_L1);
                }
                let (v1, v2) = (
                    W::load::<T>(starts[k].add(o1)),
                    W::load::<T>(starts[k].add(o2)),
                );
                W::fold::<T, LAST>(&mut value1, &mut row1, v1, numbers[k]);
                W::fold::<T, LAST>(&mut value2, &mut row2, v2, numbers[k]);
                if T::CAN_NAN {
                    nans = W::add_nans::<T>(W::add_nans::<T>(nans, v1), v2);
                }
            }
            W::store(vp.add(o1), value1);
            W::store(rp.add(o1), row1);
            W::store(vp.add(o2), value2);
            W::store(rp.add(o2), row2);
        }
        r += group;
    }
    !T::CAN_NAN || !W::any_nan(nans)
}

/// Whether rows of `row_bytes` bytes are long for [`fold_rows_body`]: its prefetches then stay
/// inside the rows being folded, [`ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES`] ahead. A short row's
/// prefetch lands in the rows after it, read later or, in another item's memory, not soon.
#[cfg(target_arch = "x86_64")]
fn long_fold_rows(row_bytes: usize) -> bool {
    row_bytes >= 2 * ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES
}

/// Whether [`fold_rows_body`] prefetches rows of `row_bytes` bytes into L1 (`prefetcht0`, its
/// const `INTO_L1`) rather than L2 (`prefetcht1`): long rows ([`long_fold_rows`]) on AMD Zen 5
/// only. There, medians of 16–40, libraries alternated, L2 → L1: UINT8 `{4096,16384}`
/// over axis 0 2.42 → 2.35 ms, FLOAT16 5.08 → 4.42, FLOAT32 8.59 → 8.25, INT32 8.70 → 8.43 (two
/// threads 2–7 % faster). On an AMD EPYC Zen 4 core (family 19h, 32 KiB L1D) the same
/// prefetches into L1 were ruinous: L1 → L2, medians of 24–30 calls in alternating
/// processes, UINT8 3.98 → 2.63 ms, FLOAT16 9.03 → 4.57, FLOAT32 17.2 → 9.95 (with 5 rows per
/// group instead of 7, L1 still 4.11 against 2.89: not the 8-way sets alone). Other CPUs keep
/// L2, as every machine did before round 37. Short rows stay in L2 everywhere: on Zen 5 L1
/// gained on some (INT64 `[344, 4545, 8]` axis 1 5.04 → 4.46 ms, UINT8 `[150000, 300]` axis 0
/// 1.86 → 1.44), but the slowdown that kept them out (INT32 `[38143, 10, 10, 1, 1]` permuted
/// over axis 4) was noise of a row that takes no fold, and they were not measured again there.
#[cfg(target_arch = "x86_64")]
fn fold_prefetch_into_l1(row_bytes: usize) -> bool {
    long_fold_rows(row_bytes) && crate::simd::amd_zen5()
}

/// How far ahead [`fold_rows_body`] prefetches in rows of `row_bytes` bytes:
/// [`ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES`] in rows at least twice that long (the prefetch stays
/// inside the row), else [`ARGMAX_FOLD_PREFETCH_BYTES`] (a short row's prefetch lands in the
/// rows after it, which must be further ahead to arrive before the group gets there).
#[cfg(target_arch = "x86_64")]
fn fold_prefetch_bytes(row_bytes: usize) -> usize {
    if long_fold_rows(row_bytes) {
        ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES
    } else {
        ARGMAX_FOLD_PREFETCH_BYTES
    }
}

/// How far ahead [`fold_rows_body`] prefetches rows that lie evenly spaced in increasing
/// memory order, `group` of them read side by side: to the rows of the next group (the group's
/// span, [`ARGMAX_FOLD_PREFETCH_BYTES`] at least), or `None` (the distance by row length,
/// [`fold_prefetch_bytes`]) when the rows are not so spaced or the span is over
/// [`ARGMAX_FOLD_PREFETCH_MAX_SPAN_BYTES`]. Only the ends are checked: a list spaced otherwise
/// between them prefetches less usefully, with the same results.
#[cfg(target_arch = "x86_64")]
fn next_group_distance(rows: &[Row], group: usize, size: usize) -> Option<usize> {
    let (&(first, _), &(last, _)) = (rows.first()?, rows.last()?);
    let spacing = rows.get(1)?.0.checked_sub(first).filter(|&s| s > 0)?;
    if spacing.checked_mul(rows.len() - 1)?.checked_add(first)? != last {
        return None;
    }
    let span = spacing * size * group;
    (span <= ARGMAX_FOLD_PREFETCH_MAX_SPAN_BYTES).then(|| span.max(ARGMAX_FOLD_PREFETCH_BYTES))
}

/// One vector (bytes `o..o + W::BYTES` of every row) of [`fold_rows_body`]: rows starting at
/// `starts`, numbered `numbers`, folded into the running maxima at `vp + o` and their rows at
/// `rp + o`; returns `nans` with this vector's NaNs added. Taken as a pair with itself, a
/// row of one vector (INT64 `[344, 4545, 8]` over axis 1) cost twice the loads and folds.
///
/// # Safety
/// As [`fold_rows_body`], `o + W::BYTES` within each row and the lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn fold_one_vector<T: Lanes, const LAST: bool, W: FoldVectors, const INTO_L1: bool>(
    starts: &[*const u8],
    numbers: &[W::V],
    (vp, rp): (*mut u8, *mut u8),
    o: usize,
    ahead: usize,
    mut nans: W::Nans,
) -> W::Nans {
    let mut value = W::load_raw(vp.add(o));
    let mut row = W::load_raw(rp.add(o));
    for (&start, &number) in starts.iter().zip(numbers) {
        prefetch_ahead_into(start.add(o), ahead, INTO_L1);
        let v = W::load::<T>(start.add(o));
        W::fold::<T, LAST>(&mut value, &mut row, v, number);
        if T::CAN_NAN {
            nans = W::add_nans::<T>(nans, v);
        }
    }
    W::store(vp.add(o), value);
    W::store(rp.add(o), row);
    nans
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tensors::{seeded_bytes, Scalar};
    use half::f16;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn evenly_spaced_rows_prefetch_the_next_group_and_others_by_row_length() {
        let rows =
            |offsets: &[usize]| -> Vec<Row> { offsets.iter().map(|&offset| (offset, 0)).collect() };
        let min = ARGMAX_FOLD_PREFETCH_BYTES;
        // 7 rows of 100 four-byte elements span less than the least distance.
        let short: Vec<usize> = (0..20).map(|k| 5 + 100 * k).collect();
        assert_eq!(next_group_distance(&rows(&short), 7, 4), Some(min));
        // Rows of 8 KiB: the next group is 7 rows on.
        let long: Vec<usize> = (0..20).map(|k| 2048 * k).collect();
        assert_eq!(next_group_distance(&rows(&long), 7, 4), Some(7 * 8192));
        // A span over the most: by row length.
        let max = ARGMAX_FOLD_PREFETCH_MAX_SPAN_BYTES;
        let wide: Vec<usize> = (0..20).map(|k| max * k).collect();
        assert_eq!(next_group_distance(&rows(&wide), 2, 1), None);
        assert_eq!(next_group_distance(&rows(&wide), 1, 1), Some(max));
        // Uneven, descending, repeated or single rows: by row length.
        assert_eq!(next_group_distance(&rows(&[0, 10, 30]), 7, 4), None);
        assert_eq!(next_group_distance(&rows(&[30, 20, 10]), 7, 4), None);
        assert_eq!(next_group_distance(&rows(&[10, 10, 10]), 7, 4), None);
        assert_eq!(next_group_distance(&rows(&[10]), 7, 4), None);
        assert_eq!(next_group_distance(&[], 7, 4), None);
    }

    /// Keys and positions the plain way: every element compared by its key.
    fn reference_locate<T: OrderKey>(bytes: &[u8], key: T::Key, last: bool) -> usize {
        let keys: Vec<T::Key> = bytes
            .chunks_exact(T::SIZE)
            .map(|e| T::read(e).key())
            .collect();
        if last {
            keys.iter().rposition(|&k| k == key).unwrap()
        } else {
            keys.iter().position(|&k| k == key).unwrap()
        }
    }

    /// [`super::super::avx512::short_runs_argmax_avx512`] (where the CPU has AVX-512) over
    /// runs of lengths around a 512-bit vector and up to [`SHORT_RUN_BYTES`], packed and `3`
    /// elements apart: the maximum key of every run and the first (or last) element holding
    /// it; the general path only when a NaN is among them.
    #[cfg(target_arch = "x86_64")]
    fn check_short_runs_argmax<T: Lanes>(bytes: &[u8]) {
        use super::super::avx512::{short_runs_argmax_avx512, ShortRunsBest};
        if !Isa::available().contains(&Isa::Avx512) {
            return;
        }
        let len = bytes.len() / T::SIZE;
        let key = |e: usize| T::read(&bytes[e * T::SIZE..]).key();
        let vector = 64 / T::SIZE;
        for n in [
            1,
            2,
            5,
            vector - 1,
            vector,
            vector + 3,
            SHORT_RUN_BYTES / T::SIZE,
        ] {
            for pitch in [n, n + 3] {
                if n > len {
                    continue;
                }
                let count = (len - n) / pitch + 1;
                let elements: Vec<(usize, usize)> = (0..count)
                    .flat_map(|r| (0..n).map(move |e| (r, e)))
                    .collect();
                let key_of = |&(r, e): &(usize, usize)| key(r * pitch + e);
                let max = elements.iter().map(key_of).max().unwrap();
                let nan = T::CAN_NAN && elements.iter().any(|p| key_of(p) == T::nan_key());
                for last in [false, true] {
                    // SAFETY: the CPU has AVX-512 F and BW (checked above).
                    let got = unsafe {
                        if last {
                            short_runs_argmax_avx512::<T, true>(bytes, 0, pitch, count, n, |_| true)
                        } else {
                            short_runs_argmax_avx512::<T, false>(bytes, 0, pitch, count, n, |_| {
                                true
                            })
                        }
                    };
                    let holders = elements.iter().filter(|p| key_of(p) == max);
                    let wanted = if last { holders.last() } else { holders.min() };
                    let what = format!("{count} runs of {n}, pitch {pitch}, last {last}");
                    match got {
                        ShortRunsBest::At { key, run, element } => {
                            assert!(key == max, "{what}: maximum");
                            assert_eq!(Some(&(run, element)), wanted, "{what}: position");
                        }
                        ShortRunsBest::Fallback => assert!(nan, "{what}: fell back with no NaN"),
                        ShortRunsBest::Passed => panic!("{what}: passed though looked at"),
                    }
                }
                // SAFETY: as above.
                let passed = unsafe {
                    short_runs_argmax_avx512::<T, false>(bytes, 0, pitch, count, n, |_| false)
                };
                assert!(matches!(
                    passed,
                    ShortRunsBest::Passed | ShortRunsBest::Fallback
                ));
            }
        }
    }

    fn check_block<T: Lanes>(bytes: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        check_short_runs_argmax::<T>(bytes);
        let len = bytes.len() / T::SIZE;
        let expected = bytes
            .chunks_exact(T::SIZE)
            .map(|e| T::read(e).key())
            .max()
            .unwrap();
        let whole = [Piece {
            start: 0,
            len,
            index: 0,
        }];
        // The same elements as pieces of every length from 1 up.
        let mut pieces = Vec::new();
        let (mut start, mut n) = (0, 1);
        while start < len {
            pieces.push(Piece {
                start,
                len: n.min(len - start),
                index: 0,
            });
            start += n;
            n += 5;
        }
        for isa in Isa::available() {
            let max = block_max::<T>(isa, bytes, &whole);
            assert!(max == expected, "{isa:?} max");
            assert!(
                block_max::<T>(isa, bytes, &pieces) == expected,
                "{isa:?} pieces max"
            );
            assert_eq!(
                locate::<T, false>(isa, bytes, max),
                Some(reference_locate::<T>(bytes, max, false)),
                "{isa:?} first"
            );
            assert_eq!(
                locate::<T, true>(isa, bytes, max),
                Some(reference_locate::<T>(bytes, max, true)),
                "{isa:?} last"
            );
            assert_eq!(
                run_argmax::<T, false>(isa, bytes),
                reference_locate::<T>(bytes, expected, false),
                "{isa:?} run first"
            );
            assert_eq!(
                run_argmax::<T, true>(isa, bytes),
                reference_locate::<T>(bytes, expected, true),
                "{isa:?} run last"
            );
            // A key that is not there.
            if max != T::MIN_KEY {
                assert_eq!(
                    locate::<T, false>(isa, bytes, T::MIN_KEY).is_some(),
                    reference_has::<T>(bytes, T::MIN_KEY)
                );
            }
            check_short_runs::<T>(isa, bytes);
        }
    }

    /// Runs of up to a 512-bit vector inside `bytes`, at its start, its end and in between:
    /// [`run_argmax_in`] (whose short-run kernels read the neighbouring elements and must
    /// ignore them) and [`short_runs_max`] over runs `pitch` apart.
    fn check_short_runs<T: Lanes>(isa: Isa, bytes: &[u8]) {
        let len = bytes.len() / T::SIZE;
        let key = |e: usize| T::read(&bytes[e * T::SIZE..]).key();
        for n in 1..=len.min(64 / T::SIZE) {
            for start in [0, 1, len / 2, len - n] {
                if start + n > len {
                    continue;
                }
                let run = &bytes[start * T::SIZE..(start + n) * T::SIZE];
                let max = (start..start + n).map(key).max().unwrap();
                for last in [false, true] {
                    let got = if last {
                        run_argmax_in::<T, true>(isa, bytes, start * T::SIZE, n * T::SIZE)
                    } else {
                        run_argmax_in::<T, false>(isa, bytes, start * T::SIZE, n * T::SIZE)
                    };
                    let expected = reference_locate::<T>(run, max, last);
                    assert_eq!(got, expected, "{isa:?} run of {n} at {start} last {last}");
                }
            }
            for pitch in [n, n + 3] {
                for first in [0, 1] {
                    if first + n > len {
                        continue;
                    }
                    let count = (len - first - n) / pitch + 1;
                    let expected = (0..count)
                        .flat_map(|r| first + r * pitch..first + r * pitch + n)
                        .map(key)
                        .max()
                        .unwrap();
                    let got = short_runs_max::<T>(isa, bytes, first, pitch, count, n);
                    assert!(
                        got == expected,
                        "{isa:?} {count} runs of {n}, pitch {pitch}"
                    );
                }
            }
        }
    }

    fn reference_has<T: OrderKey>(bytes: &[u8], key: T::Key) -> bool {
        bytes.chunks_exact(T::SIZE).any(|e| T::read(e).key() == key)
    }

    /// Bytes of `count` elements from `pick(i, random)`.
    fn elements<T: Lanes + Scalar>(
        count: usize,
        seed: u64,
        pick: impl Fn(usize, u64) -> T,
    ) -> Vec<u8> {
        seeded_bytes(count, seed, pick)
    }

    /// Every instruction set's `run_argmax` of the first `len` elements of `bytes`, for every
    /// `len` from 1, against the portable loop (first and last maximum).
    fn check_runs_of_every_length<T: Lanes>(bytes: &[u8]) {
        for len in 1..=bytes.len() / T::SIZE {
            let run = &bytes[..len * T::SIZE];
            let first = run_argmax::<T, false>(Isa::Portable, run);
            let last = run_argmax::<T, true>(Isa::Portable, run);
            for isa in Isa::available() {
                assert_eq!(run_argmax::<T, false>(isa, run), first, "{isa:?} len {len}");
                assert_eq!(
                    run_argmax::<T, true>(isa, run),
                    last,
                    "{isa:?} len {len} last"
                );
            }
        }
    }

    #[test]
    fn runs_of_every_length_up_to_600_bytes_agree_with_the_portable_loop() {
        // Every length through the tiny (one vector), small (up to 4) and medium (up to 6 or
        // 8) run kernels and into the block kernel: values drawn from the whole range (the
        // maximum anywhere, rarely tied), then few distinct values (ties), NaNs sometimes.
        for seed in 1..12u64 {
            check_runs_of_every_length::<u8>(&elements(600, seed, |_, r| r as u8));
            check_runs_of_every_length::<i16>(&elements(300, seed, |_, r| r as i16));
            check_runs_of_every_length::<i32>(&elements(150, seed, |_, r| r as i32));
            check_runs_of_every_length::<f32>(&elements(150, seed, |_, r| r as i32 as f32));
            check_runs_of_every_length::<f64>(&elements(75, seed, |_, r| r as i64 as f64));
            check_runs_of_every_length::<i64>(&elements(75, seed, |_, r| r as i64));
        }
        for seed in 1..4u64 {
            check_runs_of_every_length::<u8>(&elements(600, seed, |_, r| (r % 5) as u8 * 60));
            check_runs_of_every_length::<i8>(&elements(600, seed, |_, r| (r % 7) as i8 - 3));
            check_runs_of_every_length::<u16>(&elements(300, seed, |_, r| {
                [0u16, 1, 0x8000, 0xffff][(r % 4) as usize]
            }));
            check_runs_of_every_length::<i32>(&elements(150, seed, |_, r| {
                [i32::MIN, -1, 3, i32::MAX][(r % 4) as usize]
            }));
            check_runs_of_every_length::<u64>(&elements(75, seed, |_, r| {
                [0, u64::MAX, 1 << 63, 9][(r % 4) as usize]
            }));
            let f = |r: u64, nan: bool| match r % 9 {
                0 => -0.0,
                1 => 0.0,
                2 => f64::NEG_INFINITY,
                3 => f64::INFINITY,
                4 if nan && r.is_multiple_of(5) => f64::NAN,
                6 => -1.5,
                _ => 2.5,
            };
            for nan in [false, true] {
                check_runs_of_every_length::<f32>(&elements(150, seed, |_, r| f(r, nan) as f32));
                check_runs_of_every_length::<f64>(&elements(75, seed, |_, r| f(r, nan)));
                check_runs_of_every_length::<f16>(&elements(300, seed, |_, r| {
                    f16::from_f64(f(r, nan))
                }));
            }
        }
    }

    /// Every instruction set's `run_argmax` of runs of each of `lens` elements, starting at
    /// each of the first 16 elements of `bytes` (every skew from a cache line), against the
    /// portable loop (first and last maximum).
    fn check_runs_at_every_start<T: Lanes>(bytes: &[u8], lens: &[usize]) {
        for &len in lens {
            for start in 0..16 {
                let (at, n) = (start * T::SIZE, len * T::SIZE);
                assert!(at + n <= bytes.len(), "a run of {len} at {start} is inside");
                let first = run_argmax_in::<T, false>(Isa::Portable, bytes, at, n);
                let last = run_argmax_in::<T, true>(Isa::Portable, bytes, at, n);
                for isa in Isa::available() {
                    let got = run_argmax_in::<T, false>(isa, bytes, at, n);
                    assert_eq!(got, first, "{isa:?} {len} at {start}");
                    let got = run_argmax_in::<T, true>(isa, bytes, at, n);
                    assert_eq!(got, last, "{isa:?} {len} at {start} last");
                }
            }
        }
    }

    /// [`check_runs_at_every_start`] over the lengths of the AVX-512 one-pass kernel for
    /// elements of `T` (just above the medium-run kernel, around a block and up to just past
    /// [`crate::thresholds::ARGMAX_ONE_PASS_RUN_BYTES`] and its FLOAT16 limit), with values
    /// from `pick`.
    fn check_one_pass_lengths<T: Lanes + Scalar>(seed: u64, pick: impl Fn(usize, u64) -> T) {
        let most = crate::thresholds::ARGMAX_ONE_PASS_RUN_BYTES;
        let f16_most = crate::thresholds::ARGMAX_ONE_PASS_FLOAT16_RUN_BYTES;
        let lens = [
            388,
            516,
            1000,
            f16_most,
            f16_most + 60,
            most - 64,
            most,
            most + 64,
        ]
        .map(|bytes| bytes / T::SIZE);
        let bytes = elements(lens[7] + 16, seed, pick);
        check_runs_at_every_start::<T>(&bytes, &lens);
    }

    #[test]
    fn one_pass_runs_agree_with_the_portable_loop_at_every_start() {
        // Values from the whole range, then few distinct values (ties in every running
        // maximum), NaNs and signed zeros sometimes.
        for seed in 1..3u64 {
            check_one_pass_lengths::<i32>(seed, |_, r| r as i32);
            check_one_pass_lengths::<u32>(seed, |_, r| r as u32);
            check_one_pass_lengths::<f32>(seed, |_, r| r as i32 as f32);
            check_one_pass_lengths::<i64>(seed, |_, r| r as i64);
            check_one_pass_lengths::<f64>(seed, |_, r| r as i64 as f64);
            check_one_pass_lengths::<i32>(seed, |_, r| {
                [i32::MIN, -1, 3, i32::MAX][(r % 4) as usize]
            });
            check_one_pass_lengths::<u32>(seed, |_, r| [0, 1 << 31, 9, u32::MAX][(r % 4) as usize]);
            check_one_pass_lengths::<u64>(seed, |_, r| [0, u64::MAX, 1 << 63, 9][(r % 4) as usize]);
            check_one_pass_lengths::<i16>(seed, |_, r| r as i16);
            check_one_pass_lengths::<u16>(seed, |_, r| [0, 1 << 15, 9, u16::MAX][(r % 4) as usize]);
            let f = |r: u64| match r % 9 {
                0 => -0.0,
                1 => 0.0,
                2 => f64::NEG_INFINITY,
                4 if r.is_multiple_of(4001) => f64::NAN,
                5 if r.is_multiple_of(3) => f64::INFINITY,
                _ => -1.5,
            };
            check_one_pass_lengths::<f32>(seed, |_, r| f(r) as f32);
            check_one_pass_lengths::<f64>(seed, |_, r| f(r));
            check_one_pass_lengths::<f16>(seed, |_, r| f16::from_f64(f(r)));
            check_one_pass_lengths::<f16>(seed, |_, r| f16::from_bits(r as u16));
        }
    }

    #[test]
    fn block_max_and_locate_agree_with_keys_for_every_type() {
        // Lengths around a vector and ROW_GROUP boundaries; few distinct values (ties).
        for len in [
            1usize, 3, 7, 8, 15, 16, 17, 31, 32, 33, 60, 63, 64, 65, 96, 127, 129, 200, 1000, 1024,
            1025, 1031, 1056, 1057, 2047, 3100,
        ] {
            for seed in 1..4u64 {
                check_block::<u8>(&elements(len, seed, |_, r| (r % 5) as u8 * 60));
                check_block::<i8>(&elements(len, seed, |_, r| (r % 7) as i8 - 3));
                check_block::<u16>(&elements(len, seed, |_, r| {
                    [0u16, 1, 0x8000, 0xffff][(r % 4) as usize]
                }));
                check_block::<i16>(&elements(len, seed, |_, r| {
                    [i16::MIN, -1, 0, 7][(r % 4) as usize]
                }));
                check_block::<u32>(&elements(len, seed, |_, r| {
                    [0, 5, u32::MAX, 1 << 31][(r % 4) as usize]
                }));
                check_block::<i32>(&elements(len, seed, |_, r| {
                    [i32::MIN, -1, 3, i32::MAX][(r % 4) as usize]
                }));
                check_block::<u64>(&elements(len, seed, |_, r| {
                    [0, u64::MAX, 1 << 63, 9][(r % 4) as usize]
                }));
                check_block::<i64>(&elements(len, seed, |_, r| {
                    [i64::MIN, i64::MAX, -5, 0][(r % 4) as usize]
                }));
                // Floats: signed zeros, infinities, and (sometimes) NaNs of both signs.
                let f = |r: u64, nan: bool| match r % 9 {
                    0 => -0.0,
                    1 => 0.0,
                    2 => f64::NEG_INFINITY,
                    3 => f64::INFINITY,
                    4 if nan => f64::NAN,
                    5 if nan => -f64::NAN,
                    6 => -1.5,
                    _ => 2.5,
                };
                for nan in [false, true] {
                    check_block::<f32>(&elements(len, seed, |_, r| f(r, nan) as f32));
                    check_block::<f64>(&elements(len, seed, |_, r| f(r, nan)));
                    check_block::<f16>(&elements(len, seed, |_, r| f16::from_f64(f(r, nan))));
                }
                // All the lowest value.
                check_block::<f32>(&elements(len, seed, |_, _| f32::NEG_INFINITY));
                check_block::<i64>(&elements(len, seed, |_, _| i64::MIN));
            }
        }
    }

    /// FLOAT16 runs whose maximum the AVX-512 kernel reads from the stored bits
    /// (`avx512::f16_block_max_by_bits`): every value negative (the smallest magnitude wins,
    /// with or without -0.0 among them), zeros of both signs only (tied), and a NaN of either
    /// sign late in a run of negative values.
    #[test]
    fn float16_runs_of_every_sign_pattern() {
        let negative =
            |r: u64| [-0.0, -1.5, f64::NEG_INFINITY, -65504.0, -6e-8, -3.0][(r % 6) as usize];
        let below_zero = |r: u64| [-1.5, f64::NEG_INFINITY, -2.0, -6e-8][(r % 4) as usize];
        let zeros = |r: u64| if r.is_multiple_of(2) { -0.0 } else { 0.0 };
        for len in [32, 33, 100, 1024, 1100, 3100] {
            for seed in 1..4 {
                check_block::<f16>(&elements(len, seed, |_, r| f16::from_f64(negative(r))));
                check_block::<f16>(&elements(len, seed, |_, r| f16::from_f64(below_zero(r))));
                check_block::<f16>(&elements(len, seed, |_, r| f16::from_f64(zeros(r))));
                for nan in [f16::NAN, -f16::NAN] {
                    let mut bytes = elements(len, seed, |_, r| f16::from_f64(below_zero(r)));
                    crate::element::Element::write(nan, &mut bytes[len * 3 / 4 * 2..]);
                    check_block::<f16>(&bytes);
                }
            }
        }
    }

    /// [`run_argmax`] on runs starting at every byte offset within two cache lines (element
    /// aligned or not), with a unique maximum placed where only the first, unaligned vector
    /// reads it, just past the first line boundary, around the starts of the second and third
    /// blocks (which the first block's reach past that boundary moves), and at the end.
    fn check_run_alignment<T: Lanes>(low: T, high: T) {
        let longest = 2 * SCAN_BLOCK + 100;
        let mut buffer = vec![0u8; longest * T::SIZE + 128];
        for len in [64 / T::SIZE, 64 / T::SIZE + 1, 100, 333, 1500, longest] {
            for offset in 0..128 {
                // The first element at or past the first line boundary of the run, and the
                // first of the second block (the first block reaches past that boundary).
                let boundary = (buffer.as_ptr() as usize + offset).wrapping_neg() % 64 / T::SIZE;
                let second = boundary + SCAN_BLOCK;
                let wanted = [0, 1, boundary.saturating_sub(1), boundary, boundary + 1];
                let blocks = [second - 1, second, second + 1, second + SCAN_BLOCK];
                for at in wanted.into_iter().chain(blocks).chain([len / 2, len - 1]) {
                    let at = at.min(len - 1);
                    let run = &mut buffer[offset..offset + len * T::SIZE];
                    for (i, e) in run.chunks_exact_mut(T::SIZE).enumerate() {
                        if i == at { high } else { low }.write(e);
                    }
                    for isa in Isa::available() {
                        let (first, last) = (
                            run_argmax::<T, false>(isa, run),
                            run_argmax::<T, true>(isa, run),
                        );
                        assert_eq!((first, last), (at, at), "{isa:?} len {len} offset {offset}");
                    }
                }
            }
        }
    }

    #[test]
    fn run_argmax_finds_the_maximum_at_any_alignment() {
        check_run_alignment::<u8>(3, 200);
        check_run_alignment::<i16>(-4, 9);
        check_run_alignment::<f16>(f16::from_f32(-1.0), f16::from_f32(0.5));
        check_run_alignment::<f32>(-2.0, 1.0);
        check_run_alignment::<u32>(7, 1 << 31);
        check_run_alignment::<i64>(-1, 5);
        check_run_alignment::<f64>(0.0, 1e300);
    }

    /// The plain fold of `rows` (`lanes` elements each, stride 1) by exact keys: each output's
    /// greatest key and the index of its first (with `last`, last) row holding it, from keys
    /// `MIN_KEY` and indices `start`.
    fn reference_fold<T: Lanes>(
        lanes: usize,
        rows: &[Row],
        bytes: &[u8],
        last: bool,
        start: u32,
    ) -> (Vec<T::Key>, Vec<u32>) {
        let mut keys = vec![T::MIN_KEY; lanes];
        let mut index = vec![start; lanes];
        for &(offset, at) in rows {
            for e in 0..lanes {
                let k = T::read(&bytes[(offset + e) * T::SIZE..]).key();
                if k > keys[e] || (last && k == keys[e]) {
                    keys[e] = k;
                    index[e] = at;
                }
            }
        }
        (keys, index)
    }

    /// [`fold_rows`] on `rows` rows of `lanes` elements (stride 1), against the plain fold.
    fn check_fold<T: Lanes>(lanes: usize, rows: usize, bytes: &[u8]) {
        let row_list: Vec<Row> = (0..rows).map(|r| (r * lanes, 10 + 3 * r as u32)).collect();
        for last in [false, true] {
            let (expected_keys, expected_index) =
                reference_fold::<T>(lanes, &row_list, bytes, last, 7);
            for isa in Isa::available() {
                let mut keys = vec![T::MIN_KEY; lanes];
                let mut index = vec![7u32; lanes];
                let mut scratch = FoldScratch::default();
                for chunk in row_list.chunks(CHUNK_ROWS) {
                    if last {
                        fold_rows::<T, true>(
                            isa,
                            bytes,
                            chunk,
                            1,
                            &mut keys,
                            &mut index,
                            &mut scratch,
                        );
                    } else {
                        fold_rows::<T, false>(
                            isa,
                            bytes,
                            chunk,
                            1,
                            &mut keys,
                            &mut index,
                            &mut scratch,
                        );
                    }
                }
                assert!(keys == expected_keys, "{isa:?} last {last} keys");
                assert_eq!(index, expected_index, "{isa:?} last {last} index");
            }
            check_running_fold::<T>(lanes, &row_list, bytes, last);
        }
    }

    /// Whether element `i` of `bytes` (a float of `T::SIZE` bytes) is a NaN, by its bits: all
    /// exponent bits set and a nonzero mantissa.
    fn is_nan_bits<T: Lanes>(bytes: &[u8], i: usize) -> bool {
        let mut word = [0u8; 8];
        word[..T::SIZE].copy_from_slice(&bytes[i * T::SIZE..(i + 1) * T::SIZE]);
        let bits = u64::from_le_bytes(word);
        let (exponent, mantissa) = match T::SIZE {
            2 => (0x7c00, 0x03ff),
            4 => (0x7f80_0000, 0x007f_ffff),
            _ => (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
        };
        bits & exponent == exponent && bits & mantissa != 0
    }

    /// [`fold_rows_running`] over `rows` in chunks of several lengths, with and without the
    /// even step of their indices, against the plain fold starting from the first row's index
    /// (as `fold_walk` starts it).
    fn check_running_fold<T: Lanes>(lanes: usize, rows: &[Row], bytes: &[u8], last: bool) {
        let first = rows[0].1;
        let (expected_keys, expected_index) = reference_fold::<T>(lanes, rows, bytes, last, first);
        let has_nan = T::CAN_NAN && (0..rows.len() * lanes).any(|i| is_nan_bits::<T>(bytes, i));
        for isa in Isa::available() {
            for (chunk, step) in [(RUNNING_CHUNK_ROWS, Some(3)), (7, None), (1, Some(3))] {
                let mut index = vec![first; lanes];
                let mut scratch = FoldScratch::default();
                let clean = rows.chunks(chunk).enumerate().all(|(c, part)| {
                    let start = RunningChunk {
                        first: c == 0,
                        step,
                        in_memory_order: c % 2 == 1,
                    };
                    if last {
                        fold_rows_running::<T, true>(
                            isa,
                            bytes,
                            part,
                            start,
                            &mut index,
                            &mut scratch,
                        )
                    } else {
                        fold_rows_running::<T, false>(
                            isa,
                            bytes,
                            part,
                            start,
                            &mut index,
                            &mut scratch,
                        )
                    }
                });
                let label = format!("{isa:?} lanes {lanes} chunk {chunk} last {last}");
                if !can_fold_running::<T>(isa, lanes) {
                    assert!(!clean, "{label}: no vector kernel, yet it ran");
                    continue;
                }
                assert_eq!(clean, !has_nan, "{label}: clean");
                if clean {
                    let keys: Vec<T::Key> = (0..lanes).map(|e| scratch.key_of::<T>(e)).collect();
                    assert!(keys == expected_keys, "{label}: keys");
                    assert_eq!(index, expected_index, "{label}: index");
                }
            }
        }
    }

    #[test]
    fn fold_rows_agrees_with_the_plain_fold_for_every_type() {
        for (lanes, rows) in [
            (1usize, 3usize),
            (5, 9),
            (32, 5),
            (40, 300),
            (64, 257),
            (100, 2),
            // Around a group of rows folded together.
            (33, ROW_GROUP - 1),
            (33, ROW_GROUP + 1),
            (48, 2 * ROW_GROUP),
            (33, WIDE_ROW_GROUP - 1),
            (33, WIDE_ROW_GROUP + 1),
            (48, 2 * WIDE_ROW_GROUP + 1),
        ] {
            let n = lanes * rows;
            check_fold::<u8>(lanes, rows, &elements(n, 1, |_, r| (r % 4) as u8 * 80));
            check_fold::<i8>(lanes, rows, &elements(n, 2, |_, r| (r % 5) as i8 - 2));
            check_fold::<u16>(
                lanes,
                rows,
                &elements(n, 3, |_, r| [0u16, 0xffff, 0x8000][(r % 3) as usize]),
            );
            check_fold::<i16>(
                lanes,
                rows,
                &elements(n, 4, |_, r| [i16::MIN, 0, 1][(r % 3) as usize]),
            );
            check_fold::<u32>(
                lanes,
                rows,
                &elements(n, 5, |_, r| [0u32, u32::MAX, 1 << 31][(r % 3) as usize]),
            );
            check_fold::<i32>(lanes, rows, &elements(n, 6, |_, r| (r % 3) as i32 - 1));
            check_fold::<u64>(
                lanes,
                rows,
                &elements(n, 7, |_, r| [0u64, u64::MAX, 1 << 63][(r % 3) as usize]),
            );
            check_fold::<i64>(
                lanes,
                rows,
                &elements(n, 8, |_, r| [i64::MIN, i64::MAX, 0][(r % 3) as usize]),
            );
            let f = |r: u64, nan: bool| match r % 7 {
                0 => -0.0,
                1 => 0.0,
                2 => f64::NEG_INFINITY,
                3 if nan && r.is_multiple_of(13) => f64::NAN,
                4 if nan && r.is_multiple_of(11) => -f64::NAN,
                5 => 1.0,
                _ => -3.0,
            };
            for nan in [false, true] {
                check_fold::<f32>(lanes, rows, &elements(n, 9, |_, r| f(r, nan) as f32));
                check_fold::<f64>(lanes, rows, &elements(n, 10, |_, r| f(r, nan)));
                check_fold::<f16>(
                    lanes,
                    rows,
                    &elements(n, 11, |_, r| f16::from_f64(f(r, nan))),
                );
            }
            check_fold::<f32>(lanes, rows, &elements(n, 12, |_, _| f32::NEG_INFINITY));
            check_fold::<i32>(lanes, rows, &elements(n, 13, |_, _| i32::MIN));
        }
    }
}
