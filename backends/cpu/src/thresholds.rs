//! Every size at which a kernel of the CPU backend changes path: when work runs in parallel,
//! how it is cut into tasks, and the block sizes of the vector kernels. Each kernel's tests
//! take inputs on either side of the sizes it uses, so that every path is reached.
//!
//! All are element counts unless the name says bytes.

/// Work below this many elements (input elements for ArgMax and NonZeroCoordinates, output
/// elements for OneHot) runs on the calling thread; at or above it, on rayon's pool when it has
/// more than one thread.
pub const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;

/// Roughly how many elements one parallel task handles.
pub const TASK_ELEMENTS: usize = 1 << 15;

/// ArgMax: a contiguous run is reduced in blocks of this many elements (maximum first, then
/// the position within the block when it can change the result).
pub const ARGMAX_SCAN_BLOCK: usize = 1024;

/// ArgMax with the innermost dimension reduced: runs of fewer bytes than this (one AVX2
/// vector), or not contiguous, are scanned element by element; longer ones are reduced in
/// groups of pieces of about [`ARGMAX_SCAN_BLOCK`] elements (short runs gathered, long ones
/// cut).
pub const ARGMAX_MIN_RUN_BYTES: usize = 32;

/// ArgMax, AVX-512: runs one per output, at a constant pitch of at most this many bytes, are
/// reduced a group of `64 / SIZE` outputs at a time by permutes (`argmax::transposed_runs`)
/// rather than one output at a time. At most 32 (the kernel's tables). Not tuned yet.
pub const ARGMAX_TRANSPOSED_MAX_PITCH_BYTES: usize = 32;

/// ArgMax, AVX-512: runs one per output at a pitch too wide for `argmax::transposed_runs`, of at
/// most this many bytes, are reduced a group of `64 / SIZE` outputs at a time by a knockout
/// tournament of their lanes (`argmax::tournament`) rather than one output at a time. Four
/// vectors (the kernel's rounds). One AMD EPYC (Zen 4) core, `[n, L]` over axis 1, about
/// 100 MB, against the per-output kernel: INT64 runs of 17 13.8 → 9.8 ms, 24 4.65 → 3.59,
/// 32 4.12 → 3.59; INT32 runs of 36 5.03 → 4.67, 64 3.88 → 3.79; FLOAT16 runs of 64 7.47 →
/// 5.34; UINT8 runs of 128 6.99 → 5.07.
pub const ARGMAX_TOURNAMENT_MAX_RUN_BYTES: usize = 256;

/// ... and of FLOAT32 and FLOAT64, which watch each vector for NaNs, at most this many (two
/// vectors): FLOAT32 runs of 32 6.51 → 3.72 ms, but 36 5.38 → 5.69, 48 4.43 → 4.57.
pub const ARGMAX_TOURNAMENT_MAX_NAN_RUN_BYTES: usize = 128;

/// ArgMax, AVX-512 VBMI: the widest pitch, in bytes, of 1-byte runs that
/// `argmax::transposed_runs` reduces (64 outputs a group, with byte permutes); its permutes per
/// output grow with the pitch. One AMD EPYC (Zen 4) core, UINT8 `[1e6, L]` over axis 1 against
/// the fold of short runs: pitch 2 (`[3e6, 2]`) 4.95 → 1.32 ms, 8 (`[2e6, 8]`) 6.17 → 1.78,
/// 12 4.36 → 3.59, 16 4.24 → 3.01, 20 4.33 → 6.86 (lost), 32 4.40 → 11.4 (lost).
pub const ARGMAX_TRANSPOSED_MAX_BYTE_PITCH: usize = 16;

/// ArgMax: a contiguous run of at most this many bytes (and at least a vector) is reduced in
/// one pass that keeps each lane's best vector, with no branch per vector
/// (`kernels::short_run_argmax`, AVX2); a longer one a block at a time, its maximum first.
/// At most 255 vectors (the vector numbers fit the narrowest lanes).
pub const ARGMAX_SHORT_RUN_BYTES: usize = 512;

/// ArgMax: how far ahead of its loads the contiguous-run kernel prefetches (into L2), past
/// the end of the run too, into the next output's run. The hardware prefetcher stops at every
/// 4 KiB page and loses the stream at every run: one thread, FLOAT32 {4096,16384} axis 1 took
/// 22.1 ms without, 14.3–15.9 ms with 2 to 8 KiB ahead (FLOAT16 12.9 → 7.0–7.9 ms; Sapphire
/// Rapids, AVX-512). Prefetching the next block in one burst at the block's start did not
/// help (21.7 ms). On an AMD EPYC Zen 4 core 4 KiB was the worst of 1, 2, 4 and 8 KiB
/// (medians of 24 calls in alternating processes, 4 → 2 KiB): FLOAT32 `{64}^4` over axes 2,3
/// 2.95 → 2.28 ms (1 KiB 2.14), `{4096,16384}` axis 1 9.80 → 9.22 (8 KiB 14.8), both axes
/// 9.66 → 8.82, FLOAT16 axis 1 5.22 → 4.58, UINT8 2.27 → 2.14; two threads the same. 2 KiB
/// is within Sapphire Rapids' good range.
pub const ARGMAX_RUN_PREFETCH_BYTES: usize = 2048;

/// ArgMax, AVX-512: the longest contiguous run of 2-, 4- or 8-byte elements (FLOAT16: below)
/// reduced in one pass (`argmax::avx512::one_pass_run_argmax`); longer ones go to the
/// run-block kernel, whose second pass (and its misprediction) then weighs little. One AMD
/// EPYC Zen 4 core, block kernel → one pass, ms: FLOAT32 rows of 32 KiB (`[4000, 8000]`) 4.75 → 4.81, of 64 KiB
/// (`[2000, 16384]`) 4.64 → 4.80 and 10.0 → 10.4; INT64 rows of 32 KiB 4.76 → 4.47.
pub const ARGMAX_ONE_PASS_RUN_BYTES: usize = 32 << 10;

/// ... and for FLOAT16, whose order keys cost the one pass about seven instructions a
/// vector, where the run-block kernel takes the maximum of the stored bits with two. One AMD
/// EPYC Zen 4 core, libraries alternated, medians of 15, block kernel → one pass, ms, rows
/// of 500 bytes (`[120000, 250]`) 4.8 → 2.9, 1000 bytes 8.6 → 3.4, 2000 bytes 3.2 → 2.8,
/// 3000 bytes 3.3 → 2.6, 4000 bytes 2.73 → 2.78, 6000 bytes 2.7 → 4.5, 32 KiB 2.4 → 4.6.
pub const ARGMAX_ONE_PASS_FLOAT16_RUN_BYTES: usize = 4 << 10;

/// ArgMax: how far ahead the collapsed run-lane fold (`argmax::collapsed_runs`) prefetches
/// (into L2) as it reads its rows in memory order. On an AMD EPYC Zen 4 core, FLOAT32 `{64}^4`
/// over axes 1,3 (runs of 256 bytes), medians of 24–30 calls in alternating processes: 0
/// bytes 3.17 ms, 1 KiB 3.0, 4 KiB (the run kernels' distance then) 3.66–3.92,
/// 8 KiB 2.82–3.20, 16 KiB 2.98. The run kernels lost at 8 KiB (FLOAT32 `{4096,16384}` axis 1
/// 9.56 → 14.8 ms), so each keeps its own distance.
pub const ARGMAX_COLLAPSED_PREFETCH_BYTES: usize = 8192;

/// ArgMax: with 64-byte vectors and runs of whole strides of this many bytes, the collapsed
/// run-lane fold (`argmax::collapsed_runs`) prefetches one vector per stride rather than every
/// vector. On an AMD EPYC Zen 4 core, medians of 11–15 calls, each after a 100 MB write
/// (prefetching every vector → one per stride, ms), FLOAT32 over axes 1,3: `{64}^4` 3.1–3.4
/// → 2.8, `[32, 64, 64, 128]` 3.1–3.4 → 2.9, `[16, 64, 64, 256]` 3.1 → 2.6; INT32 `{64}^4`
/// 3.2 → 2.9, INT64 `[32, 64, 64, 64]` 3.5 → 3.0, UINT8 `[64, 64, 128, 256]` 8.1 → 7.2. Runs
/// that are not whole strides lost with one prefetch every few vectors: 128-byte runs
/// (FLOAT32 `[64, 64, 128, 32]`) 3.2 → 4.1 with one in two, 192-byte runs 3.4 → 6.2 with
/// one in two and 3.4 → 3.5 with one per run, so they keep a prefetch per vector.
pub const ARGMAX_COLLAPSED_PREFETCH_STRIDE_BYTES: usize = 256;

/// ArgMax row folds: how far ahead in each of a group's rows the fold prefetches (into L2) as
/// it reads them, past the end of the tail too. A group reads its rows side by side, more
/// streams than the hardware prefetcher follows well: one AMD EPYC core, dev bench medians,
/// FLOAT32 {4096,16384} axis 0 11.9 → 10.5 ms, FLOAT16 6.2 → 5.0 ms, padded rank 5 axes 1,3
/// 9.7 → 4.9 ms; 1 KiB ahead gained less. A group reads up to 8 rows side by side, so at
/// 4 KiB the prefetch of short rows read in memory order (rows of 1–2 KiB) landed in rows the
/// group was reading or had just read; at 16 KiB it lands past them. One AMD EPYC Zen 4
/// core, libraries alternated, medians of 15–21 (4 → 8 → 16 KiB, ms): FLOAT32
/// `[59535, 140, 2]` axes 0,2 5.44 → 4.47 → 3.08, INT64 `[68, 4, 1447, 15]` axis 2 2.88 →
/// 2.31 → 2.20, FLOAT16 `[531, 5, 21, 6, 9]` axis 1 0.93 → 0.89 → 0.77, FLOAT32
/// `[2000, 30, 500]` axis 1 11.2 → 9.7 → 7.2; 4 → 16 KiB FLOAT32 `[20000, 1000]` axis 0
/// 5.1 → 4.4, INT64 `[344, 4545, 8]` axis 1 7.0 → 6.2. Padded rank 5 axes 1,3 and `{64}^4`
/// axes 1,3 did not move; UINT8 `[21, 12837, 5]` axes 0,1 lost 0.127 → 0.141 ms.
pub const ARGMAX_FOLD_PREFETCH_BYTES: usize = 16384;

/// ... and in rows of at least twice this many bytes (the prefetch then stays inside the row),
/// this far ahead instead, into L1 (`kernels::long_fold_rows`). One AMD EPYC core (Zen 5,
/// AVX-512), one binary reading the distance from the environment, medians of 20 calls, two
/// sweeps: FLOAT32 {4096,16384} axis 0
/// 10.0–12.1 → 9.3–9.6 ms, INT32 9.5–9.6 → 8.9–9.0, UINT8 2.6–2.8 → 2.4, transposed view
/// axis 1 9.8–10.0 → 9.4, FLOAT32 {64}^4 axes 1,3 2.3 → 2.1–2.2; FLOAT16 axis 0 mixed (4.9 and
/// 4.1 → 4.7 and 4.6). Rows of 240 bytes (padded
/// rank 5 axes 1,3) were slower at 2 KiB (3.5–3.6 → 5.6–5.8 ms): their prefetch lands in the
/// rows that follow, hence the longer distance for short rows ([`ARGMAX_FOLD_PREFETCH_BYTES`]).
pub const ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES: usize = 2048;

/// ... and in rows read in memory order, one chunk just after the last (the running maxima of
/// `argmax::interleaved`), this far ahead of each row instead: at 4 KiB the prefetch landed a
/// few rows ahead, read a few hundred nanoseconds later. One AMD EPYC core (Zen 4), padded
/// rank 5 `{16,16,32,32,60}` in `{..,64}` over axes 1,3, one binary reading the distance from
/// the environment, medians of 45 calls: 0 bytes 3.43 ms, 4 KiB 3.92, 8 KiB 2.72, 16 KiB 2.60,
/// 32 KiB 2.63; 16 KiB plus the span of the fold's group of rows lost 9 %. Rows of 960 bytes
/// (`{16,16,32,16,240}` in `{..,256}`): 8 and 16 KiB alike, 64 KiB 18 % slower.
pub const ARGMAX_FOLD_PREFETCH_STREAM_BYTES: usize = 16384;

/// ArgMax row folds over rows evenly spaced in memory order: the widest span of a group of
/// rows (read side by side) that the fold prefetches past, to the next group's rows; wider
/// groups prefetch by row length ([`ARGMAX_FOLD_PREFETCH_LONG_ROW_BYTES`]). One AMD EPYC Zen 4
/// core, medians of 21 calls, axis 0, prefetch distance (bytes) against ms: FLOAT32 rows of
/// 4 KiB (`[16000, 1024]`) 4 KiB 3.35, 16 KiB 3.06, 32 KiB 2.33, 48 KiB 2.34; rows of 8 KiB
/// (`[8000, 2048]`) 2 KiB 3.04, 32 KiB 2.74, 64 KiB 2.34; UINT8 rows of 16 KiB
/// (`[4096, 16384]`) 2 KiB 2.94, 64 KiB 2.65, 128 KiB 2.61; FLOAT32 rows of 64 KiB
/// (`[4096, 16384]`) 2 KiB 10.4, 64 KiB 12.2, 128 KiB 11.8. With the span as the distance,
/// libraries alternated (medians of 15): `[16000, 1024]` 3.58 → 2.74, `[8000, 2048]` 3.17 →
/// 2.74, `[10000, 1500]` 3.10 → 2.58, `[2000, 30, 1500]` over axis 1 21.3 → 18.1, UINT8
/// `[4096, 16384]` 3.25 → 2.98; rows of 1–2 KiB, padded rank 5 and `{64}^4` did not move.
pub const ARGMAX_FOLD_PREFETCH_MAX_SPAN_BYTES: usize = 128 << 10;

/// ArgMax rows plans with kept dimensions between reduced ones, walked in memory order
/// (`argmax::interleaved`): the bytes of running maxima (keys) per item, one set per tail of
/// the mid kept dimensions; with their row numbers and indices they stay in L2. Not tuned:
/// on `{16,16,32,16,240}` in `{..,256}` over axes 1,3 (one core, Zen 4) 2 to 32 KiB were
/// alike (8.2–9.3 ms, the spread of the runs).
pub const ARGMAX_INTERLEAVED_MAXIMA_BYTES: usize = 16384;

/// ... and the fewest rows (of the reduced dimensions inside the mid ones) a walk step folds.
/// Each step loads and stores its tail's running maxima and takes the lanes it improved: with
/// two rows per step that cost more than the walk saved (one core, Zen 4, medians of 9–11,
/// FLUSH of the caches between calls, interleaved → rows walk): UINT8 `[256, 32, 2, 1000]`
/// over axes 0,2 2.05 → 1.10 ms, FLOAT32 `[16, 16, 32, 2, 60]` over axes 1,3 0.61 → 0.22. At
/// four rows the rows walk still won on long tails (UINT8 `[64, 32, 4, 1000]` 0.69 → 0.49);
/// at eight the walk won on short ones (FLOAT32 `[64, 32, 8, 120]` 0.57 against 0.38,
/// `[16, 16, 32, 8, 60]` over axes 1,3 1.36 against 1.0) and tied on long ones (UINT8
/// `[64, 64, 8, 1000]` 2.11 both).
pub const ARGMAX_INTERLEAVED_MIN_ROWS: usize = 8;

/// ... and the most rows (of the reduced dimensions inside the mid ones) a walk step folds,
/// listed once per call: a bound on that list (64 KiB) rather than a tuned value. More rows
/// per step are a long stretch of input, which the plain rows walk reads in order anyway.
pub const ARGMAX_INTERLEAVED_MAX_ROWS: usize = 4096;

/// ArgMax with the innermost dimension kept: outputs are reduced side by side in blocks of
/// `ARGMAX_TAIL_BYTES / element size` (their running maxima and rows stay in L2). Each reduced
/// index then reads one contiguous 64 KiB stretch of its input row, which the hardware
/// prefetcher follows; at 8 KiB (maxima in L1) it read 8 KiB pieces 64 KiB apart. One thread,
/// {4096,16384} axis 0, two binaries alternated: FLOAT32 22.4–22.7 → 17.7–17.9 ms, INT32
/// 22.0–22.2 → 17.1, FLOAT16 11.6 → 9.9–10.4, UINT8 3.6–4.1 → 3.7–4.0 (Sapphire Rapids).
pub const ARGMAX_TAIL_BYTES: usize = 65536;

/// ArgMax with the innermost dimension kept: a tail of fewer bytes than this is *short* and
/// may grow over gaps up to [`ARGMAX_TAIL_GAP_SHORT`]; a longer one up to [`ARGMAX_TAIL_GAP`].
pub const ARGMAX_SHORT_TAIL_BYTES: usize = 32;

/// ArgMax with the innermost dimension kept: a short tail grows over the kept dimensions
/// outside it while its input range holds at most this many elements per output (the others,
/// padding or reduced elements in between, are folded in vectors and ignored).
pub const ARGMAX_TAIL_GAP_SHORT: usize = 8;

/// ArgMax with the innermost dimension kept: a tail whose neighbouring outputs lie at most this
/// many bytes apart (a padded innermost dimension of size 1 below it) is folded as the
/// contiguous range it spans, whatever [`ARGMAX_TAIL_GAP`] says: every line of the range is
/// read anyway. Folded element by element before, one Zen 4 core, caches flushed (ms): FLOAT16
/// `[4, 3000, 700, 1]` padded by 4 over axis 0 29.6 → 6.8, INT32 `[1000, 50, 300, 1]` padded by
/// 3 over axis 1 17.5 → 10.4, UINT8 `[33, 2, 28202, 1, 1]` padded by 7 over axis 1 5.1 → 2.4;
/// INT64 took the same (seed 25's `[33, 2, 28202, 1, 1]` padded by 5: 7.1 against 7.3).
pub const ARGMAX_SPANNED_TAIL_MAX_PITCH_BYTES: usize = 64;

/// ArgMax, AVX-512: the fewest outputs in a segment of a spanned tail's contiguous inner
/// dimension for its results to be stored as vectors (`Outputs::store_scaled`); shorter
/// segments are written one result at a time, as a call per segment outweighed the stores:
/// one AMD EPYC (Zen 4) core, INT32 `[1, 3, 517, n, k]` padded by 2 over axes 0,1 (seed 26),
/// vectors / one at a time (ms): `k` 2 17.2 / 11.5, 4 9.9 / 9.4, 8 6.5 / 8.4, 16 4.7 / 8.0;
/// UINT8 `k` 2 12.8 / 7.7.
pub const ARGMAX_SPANNED_SEGMENT_MIN_OUTPUTS: usize = 8;

/// ArgMax with the innermost dimension kept: as [`ARGMAX_TAIL_GAP_SHORT`] for a tail that is not
/// short (padding between long rows).
pub const ARGMAX_TAIL_GAP: usize = 2;

/// ArgMax with the innermost dimension reduced: outputs whose elements lie at most this many
/// input elements apart (short runs, padded or not) and ...
pub const ARGMAX_SHORT_RUNS_GAP: usize = 16;

/// ... who each fold at most this many bytes that way (reduced elements × gap × element
/// size) are reduced side by side as a spanned tail (`argmax::rows`) instead of run by run.
pub const ARGMAX_SHORT_RUNS_BYTES: usize = 256;

/// ArgMax with one contiguous run per output of 1- or 2-byte elements: runs of at most this
/// many bytes are folded as a spanned tail too (when the two thresholds above allow), not
/// reduced a call per output (`argmax::Job::argmax`).
pub const ARGMAX_FOLD_LONE_RUN_BYTES: usize = 10;

/// ArgMax with the innermost dimension reduced: runs of at most this many bytes that lie
/// back to back inside kept dimensions, with other reduced dimensions outside them, are folded
/// lane by lane over those (`argmax::run_lanes`) instead of reduced run by run.
pub const ARGMAX_RUN_LANES_MAX_RUN_BYTES: usize = 1024;

/// ... with at most this many bytes of padding after each run (one AVX2 vector), folded as
/// lanes and ignored.
pub const ARGMAX_RUN_LANES_MAX_GAP_BYTES: usize = 32;

/// ArgMax with the innermost dimension kept, on a permuted input whose tail outputs are
/// scattered in the output: once the tail holds this many bytes of lanes, it spans no kept
/// dimension that lies further in (a smaller slot stride) in the output; the items are then
/// walked so that those dimensions change fastest, and neighbouring items fill the same
/// output lines.
pub const ARGMAX_OUTPUT_ORDER_MIN_TAIL_BYTES: usize = 1024;

/// ... and its blocks share [`ARGMAX_TAIL_BYTES`] of lanes among the units, but hold at least
/// this many bytes each: items of fewer cost more than the scattered writes they save (a
/// permuted UINT8 `[2, 9, 593, 467]` over axis 1, 467 units, took 11 ms with items of 140
/// lanes, 5.5 with the tail spanning them all, 3.6 with this floor).
pub const ARGMAX_OUTPUT_ORDER_MIN_BLOCK_BYTES: usize = 4096;

/// ... or this many outputs, whichever is fewer: each output of a unit's item lies on its own
/// output line, which the next units fill, so a block of more lines than the L1 cache holds
/// sends every one of those writes to L2 or beyond. A permuted `[67, 2, 37, 458, 3]` over
/// axis 1 (1374 units, the tail's outputs 1374 slots apart) on one AMD EPYC (Zen 2) core,
/// one process, blocks of 4096 bytes / 2048 / 1024 / 512 outputs: UINT8 19.5 / 14.9 / 9.9 /
/// 9.4 ms, FLOAT16 15.3 / 10.3 (1024) / 10.5 (512); INT32 kept 1024 outputs (12.3; 12.9 at 512)
/// and INT64 512 (15.1; 16.4 at 1024). UINT8 `[2, 9, 593, 467]` above: 1.51 → 1.61 ms.
pub const ARGMAX_OUTPUT_ORDER_BLOCK_FLOOR_MAX_OUTPUTS: usize = 1024;

/// ArgMax with the innermost dimension kept: input rows folded at a time (row numbers within a
/// chunk fit the narrowest lanes).
pub const ARGMAX_CHUNK_ROWS: usize = 256;

/// ArgMax: tasks per thread while there are items for them; in the whole-row scans, with
/// fewer units than `ARGMAX_SPLIT_FACTOR × threads`, each unit's range is split across
/// threads instead (outer-axis reductions split an item's rows only with fewer items than
/// threads: see [`ARGMAX_SPLIT_MIN_ROWS`] and [`ARGMAX_SPLIT_MAX_WIDTH_PER_ROW`]).
pub const ARGMAX_SPLIT_FACTOR: usize = 4;

/// ArgMax: the fewest reduced rows of an item (a block of outputs reduced side by side) whose
/// rows are split across threads when there are fewer items than threads. Each piece of rows
/// is folded by the general walk into a state of its own, then the pieces are combined lane
/// by lane on the calling thread, one item after another, each item a parallel call: with few
/// rows that cost more than the items left unsplit. Two threads of one AMD EPYC Zen 4, one process, libraries alternated, caches
/// flushed, medians of 11–15 (ms), split / not: FLOAT32 `[100, 1000]` over axis 0 0.064 /
/// 0.052, `[64, 2048]` 0.071 / 0.052, `[32, 4096]` 0.087 / 0.054, UINT8 `[40, 4096]` 0.093 /
/// 0.038; and with split items of many lanes (before this bound), UINT8 `[5, 60000]` 1.68 /
/// 0.083, INT32 `[6, 97946]` 1.34 / 0.20, FLOAT32 `[2, 3, 20000]` over axes 0,1 0.33 / 0.08:
/// up to twenty times one thread's time.
pub const ARGMAX_SPLIT_MIN_ROWS: usize = 128;

/// ArgMax: an item whose rows are split across threads (see [`ARGMAX_SPLIT_MIN_ROWS`]) is at
/// most this many times as wide (elements of one of its rows: its outputs side by side and any
/// gaps between them) as it has rows: each piece's state and the combine grow with the width,
/// the work with the rows. Same machine and method, split / not: FLOAT32 `[4000, 1000]` over
/// axis 0 0.45 / 0.71, `[1000, 2048]` 0.30 / 0.37, `[500, 4096]` 0.31 / 0.38, `[4096, 16384]`
/// 5.4 / 9.5 (round 54's table against a first bound of 4096 elements of width), but
/// `[250, 8192]` 0.44 / 0.39 and `[128, 32768]` 1.50 / 0.49; UINT8 `[1000, 4096]` 0.21 /
/// 0.24, but `[500, 8192]` 0.28 / 0.21, `[250, 16384]` 0.48 / 0.20 and `[16, 262144]` 5.9 /
/// 0.27.
pub const ARGMAX_SPLIT_MAX_WIDTH_PER_ROW: usize = 10;

/// NonZeroCoordinates on several threads: the least bytes of input per chunk (inputs too
/// small for [`NONZERO_CHUNKS_PER_WORKER`] chunks of [`NONZERO_READ_AHEAD_BYTES`] per thread
/// get smaller chunks, none smaller than this).
pub const NONZERO_BLOCK_BYTES: usize = 64 << 10;

/// NonZeroCoordinates on several threads: chunks per worker that a mid-sized input is cut
/// into at least (while chunks stay at least [`NONZERO_BLOCK_BYTES`]), so that a worker woken
/// late or slowed finds chunks left: on two threads of a 2-core Intel Xeon virtual machine
/// (medians of 21, alternated), UINT8 `[13, 103489]` at 25 % took 0.171 ms with 4, 0.141
/// with 8 (the former two-loop windows: 0.129–0.144), `[5701, 19, 12]` at 95 % 0.599 and
/// 0.533; 16 was no better.
pub const NONZERO_CHUNKS_PER_WORKER: usize = 8;

/// NonZeroCoordinates: input bytes per chunk. While a worker writes a chunk's rows, it
/// prefetches the input of the chunk it will likely take next into L2 (a slice per mask
/// word), so that the memory reads overlap the row writing; a chunk this size stays in L2.
/// On two threads of a 2-core Intel Xeon virtual machine, 3e7 elements (medians of 21,
/// alternated), UINT8 5 % took 2.55, 2.52, 2.51, 2.76 and 3.28 ms with chunks of 64, 128,
/// 256, 512 and 1024 KiB, UINT8 50 % 7.69, 7.21, 7.26, 7.74 and 8.35 ms.
pub const NONZERO_READ_AHEAD_BYTES: usize = 256 << 10;

/// NonZeroCoordinates on several threads: how far ahead (bytes) the nonzero masks pass
/// prefetches its input. The hardware prefetcher alone left both threads reading below the
/// bus's speed: on a 2-core Intel Xeon virtual machine, 3e7 elements at 5 % on two threads
/// (medians of 60, a numpy call between calls as in the benchmark), FLOAT32 7.45 → 6.0–6.1 ms
/// (1 KiB: 6.3; 2, 4 and 8 KiB within noise of each other), UINT8 3.2 → 2.9–3.0 ms (measured
/// with the former windows of 2^23 elements). Now only chunks that no rows prefetched are
/// prefetched this way (a worker's first, or one it did not guess): the others are prefetched
/// while the previous chunk's rows are written ([`NONZERO_READ_AHEAD_BYTES`]), and
/// prefetching again in the masks pass cost one thread 2–5 %.
pub const NONZERO_MASK_PREFETCH_BYTES: usize = 4096;

/// NonZeroCoordinates on AMD Zen 4 (family 19h with AVX-512), elements of at least
/// [`NONZERO_ZEN4_MASK_PREFETCH_AGAIN_MIN_ELEMENT_BYTES`]: how far ahead (bytes) the masks pass
/// prefetches a chunk that the rows before it already read ahead. There the read-ahead falls
/// behind when a mask word spans several lines (the rows of a sparse word take a few tens of
/// cycles, each of its four lines hundreds of cycles to arrive), and the masks pass then
/// waited on memory: one core, FLOAT32 `[3, 10, 1000, 1000]` 5 % (medians of 30 calls in
/// alternating processes) 6.78 → 5.89 ms at 16 KiB (4 KiB 7.1, 8 KiB 6.5–6.7, 32 KiB 5.85),
/// two threads 4.45 → 3.96; UINT8 5 % lost (3.15 → 3.29) and 50 % did not move, so one-byte
/// elements keep the read-ahead alone, as do other CPUs (see [`NONZERO_MASK_PREFETCH_BYTES`]).
pub const NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES: usize = 16 << 10;

/// NonZeroCoordinates: the narrowest elements [`NONZERO_ZEN4_MASK_PREFETCH_AGAIN_BYTES`]
/// applies to.
pub const NONZERO_ZEN4_MASK_PREFETCH_AGAIN_MIN_ELEMENT_BYTES: usize = 4;

/// NonZeroCoordinates on AMD CPUs with the AVX-512 row kernels: the most nonzero share of a
/// chunk of elements wider than one byte (several cache lines a mask word) whose read-ahead
/// of the next chunk goes into L1 rather than L2 (one-byte elements: a quarter). One AMD EPYC
/// Zen 4 core, medians of 31 calls, L2 → L1, ms: FLOAT16 `[7403382]` 0.1 % 0.95–0.98 →
/// 0.73–0.76, 1 % 0.83 → 0.75, 2 % 0.83 → 0.77, `[650, 9700]` 2 % 0.69 → 0.67; FLOAT32
/// `[7403382]` 0.1 % 1.71 → 1.50, 1 % 1.65 → 1.41, 2 % 1.57 → 1.34, `[3, 10, 1000, 1000]`
/// 1 % 5.78 → 5.68; two threads FLOAT16 0.1 % 0.46 → 0.39, FLOAT32 `[3, 10, 1000, 1000]`
/// 1 % 3.80 → 3.49. At 5 % it went both ways (FLOAT16 `[650, 9700]` 0.71 → 0.74, FLOAT32
/// `[7403382]` 1.66 → 1.50), hence 2 %. Libraries alternated in one process, one core,
/// medians of 21–31: FLOAT16 `[7403382]` 0.1 % 1.08 → 0.85, FLOAT32 `[7403382]` 1 % 1.72 →
/// 1.51, FLOAT16 `[650, 9700]` 2 % 0.91 → 0.81; FLOAT32 `[3, 10, 1000, 1000]` 1 % lost, 5.70 →
/// 5.89 and 5.84 → 6.18 (rows of 4 coordinates: a longer row pass).
pub const NONZERO_WIDE_L1_READ_AHEAD_DENSITY: f64 = 0.02;

/// NonZeroCoordinates on one worker: a chunk after one with at least this many input bytes
/// per row (and elements of at least [`NONZERO_SCATTER_MIN_ELEMENT_BYTES`]) is scanned block
/// by block ([`NONZERO_SCATTER_BLOCK_WORDS`] mask words), each block's rows written as soon as
/// its masks are made, each row's coordinates found by division (see
/// `nonzero_coordinates::scattered`). A block with more than a row per two mask words ends
/// the scan, and the rest of the chunk goes the usual way. One AMD EPYC Zen 4 core, libraries
/// alternated in one process (each order), medians of 15, ms, at 0.1 %: FLOAT32 `[7403382]`
/// 1.58–1.72 → 1.20–1.40, `[1126, 4431]` 1.03–1.11 → 0.82–0.99; INT32 `[144020, 68]`
/// 1.96–2.12 → 1.66–1.80, `[63, 2, 23735, 2]` 1.25–1.37 → 1.05–1.13. Scanning chunks of
/// 1600 bytes a row and denser lost (their words' bit loops mispredicting, and blocks over
/// the chunks' threshold leaving the scan): FLOAT32 `[1126, 4431]` at 0.25 % 1.08 →
/// 1.47–1.63, at 1 % 1.21 → 1.77; at this threshold they do not scan and stay within noise.
pub const NONZERO_SCATTER_MIN_BYTES_PER_ROW: usize = 3072;

/// NonZeroCoordinates: the narrowest elements whose chunks are scanned block by block
/// ([`NONZERO_SCATTER_MIN_BYTES_PER_ROW`]). Narrower ones went both ways at 0.1 %, within the
/// noise or worse: FLOAT16 `[7403382]` 0.73–0.95 → 0.80–1.03, UINT8 `[276, 58048]` 1.14 →
/// 1.64, `[12, 681198]` 0.62 → 0.49–0.70.
pub const NONZERO_SCATTER_MIN_ELEMENT_BYTES: usize = 4;

/// NonZeroCoordinates: mask words per block of a scattered chunk
/// ([`NONZERO_SCATTER_MIN_BYTES_PER_ROW`]): 4096 elements, a few KiB that the hardware
/// prefetcher streams without a pause between blocks.
pub const NONZERO_SCATTER_BLOCK_WORDS: usize = 64;

/// NonZeroCoordinates: inputs of at most this many elements write their rows in one pass
/// from their masks, a run's template and the bit's place in it, instead of through the
/// chunked passes and row kernels, whose setup (chain, cursor, stage, the gather and
/// short-run tables) cost about 200 ns a call. One AMD EPYC Zen 4 core, per call (one
/// process, libraries alternated, medians of 9 loops), before → after (ns): FLOAT32 `[16]`
/// 50 % 500 → 286, FLOAT16 `[5]` 75 % 489 → 271, FLOAT32 `[64]` 50 % 420 → 301, `[256]`
/// 5 % 475 → 290 and 50 % 468 → 397, UINT8 `[2; 8]` 90 % 1654 → 980, `[134, 1]` 95 % 697 →
/// 526; at 256 elements dense rows break even (UINT8 `[256]` 90 % 451 → 487, `[8, 32]` 555
/// → 492, `[256, 1]` 684 → 738), hence no more.
pub const NONZERO_TINY_MAX_ELEMENTS: usize = 256;

/// NonZeroCoordinates: elements per nonzero bit mask.
pub const NONZERO_MASK_GROUP: usize = 64;

/// NonZeroCoordinates: mask groups with at least this many nonzero elements compute their
/// coordinates from a table instead of bit by bit.
pub const NONZERO_DENSE_GROUP: usize = 8;

/// NonZeroCoordinates under AVX-512 VBMI2: a chunk whose innermost dimension is at most
/// `.0` elements and whose density (set bits per element) is at most `.1`, for one of these
/// pairs, has its rows gathered sixteen at a time across words and computed by division
/// (`sparse_blocks`), rather than built word by word from a run's template or a short word's
/// coordinates. A long run's template costs less than the divisions once its words hold a few
/// set bits, and a run as long as the input (rank 1) never moves its template. Runs of 512
/// elements or more took longer gathered than from their template, with zero words skipped
/// ([`NONZERO_SKIP_ZERO_WORDS_MAX_ROWS_PER_WORD`]): one AMD EPYC Zen 4 core, UINT8 3e7,
/// libraries alternated, medians of 21, gathered / not (ms): `[57344, 512]` 0.2 % 2.02 / 1.84,
/// 1 % 2.17 / 2.12; `[30000, 1000]` 0.2 % 2.05 / 1.87, 1 % 2.24 / 2.16, 2 % 3.01 / 2.77; but
/// `[114688, 256]` 0.2 % 2.03 / 2.16, 1 % 3.02 / 3.56, hence 384.
pub const NONZERO_GATHER: [(usize, f64); 2] = [(128, 0.15), (384, 0.02)];

/// NonZeroCoordinates under AVX-512: a chunk with at most this many rows per 64-element mask
/// word skips its zero words in the run kernel (`run_words_avx512`): it tests eight mask
/// words at once and builds rows only for the nonzero ones, checking each one's rows against
/// the room left, where the dense loop builds every word's rows (a compress, permutes and
/// stores, whatever its bits) with no check, taking as many words as would fit were each one
/// full. A sparse chunk's rows take little room, so that bound let few words through at a
/// time, and none in its last 80 rows or so, which went word by word through the general path.
/// UINT8 `[29242304]` on one AMD EPYC Zen 4 core, libraries alternated, medians of 15–21
/// (ms): 0.1 % 2.19 → 1.66–1.74, 0.5 % 1.75–2.01 → 1.61–1.74, 1 % 1.67–1.99 → 1.72–1.81;
/// in cache (`[2000000]`, no flush), 0.1 % 0.105 → 0.063, 1 % 0.100 → 0.088, but 2 % (1.28
/// rows a word) 0.102 → 0.115, hence 0.75 (1 % is 0.64).
pub const NONZERO_SKIP_ZERO_WORDS_MAX_ROWS_PER_WORD: f64 = 0.75;

/// NonZeroCoordinates: bytes of rows gathered before they are copied out. Small, so that
/// each streamed burst is a few lines that the write-combining buffers take while the next
/// rows are built (8 KiB bursts stalled the core): on Sapphire Rapids, medians of 8 runs on
/// one thread, 3e7 elements, UINT8 5 % 4.30 → 3.89 ms, 50 % 16.0 → 13.8 ms, FLOAT32 90 %
/// 29.6 → 26.3 ms (256 and 1024 within noise of 512).
pub const NONZERO_STAGE_BYTES: usize = 512;

/// NonZeroCoordinates on AMD CPUs without AVX-512: a chunk streams its rows out (non-temporal
/// stores from the stage) only when they take at most this many bytes per input byte; denser
/// chunks write their rows in place with plain stores. On AMD EPYC (Zen 3, 2 cores, AVX2), each
/// process the median of 5 calls, medians of 3 processes, an input of `[3, 10, 1000, 1000]`
/// (rows of 4 coordinates), one thread (streamed → in place, ms): UINT8 5 % 7.7 → 7.0, 50 %
/// 34.7 → 23.3, 90 % 37.8 → 33.6; FLOAT32 5 % 11.8 → 13.3, 50 % 40.6 → 29.8, 90 % 46.0 →
/// 40.3; two threads UINT8 50 % 19.0 → 13.9, 90 % 24.3 → 21.5, the rest within noise. The
/// only chunks that lost in place write 0.2 bytes of rows per input byte (FLOAT32 5 %); UINT8
/// 5 % writes 0.8. Intel (Sapphire Rapids) and AMD with AVX-512 (Zen 4, rounds 11–18) stream
/// every chunk, as tuned before.
pub const NONZERO_AMD_STREAM_MAX_SHARE: f64 = 0.25;

/// NonZeroCoordinates on AMD family 17h (Zen 2, AVX2): chunks with at most this share of
/// nonzero elements write their rows in place, denser ones stream them (non-temporal stores
/// from the stage), at every element width; `[one worker, several workers]`. There a core's
/// plain stores of 240 MB took 18 ms against 11.5 for non-temporal ones (a C loop, 32- or
/// 16-byte stores), where Zen 3, which [`NONZERO_AMD_STREAM_MAX_SHARE`] was tuned on, gained
/// little; but below about a quarter nonzero the rows' work hides the writes and the stage's
/// copy only adds to it. One process, the two ways alternated call by call, medians of 7–9,
/// in place / streamed (ms), `[3, 10, 1000, 1000]` (rows of 4 coordinates), one thread: UINT8
/// 5 % 4.93 / 5.63, 10 % 7.32 / 7.99, 20 % 11.7 / 12.6, 25 % 13.3 / 13.3, 30 % 15.4 / 14.6,
/// 35 % 16.3 / 14.9, 50 % 20.1 / 16.5, 90 % 34.3 / 22.5; FLOAT16 5 % 6.02 / 6.67, 20 % 12.8 /
/// 13.7, 25 % 14.2 / 14.3, 35 % 17.7 / 15.8, 50 % 21.4 / 17.6; FLOAT32 5 % 12.5 / 12.5, 20 %
/// 15.1 / 15.5, 25 % 16.4 / 16.3, 35 % 20.5 / 17.8, 50 % 24.0 / 19.8, 90 % 36.9 / 25.3; UINT8
/// `[3e7]` (rows of 1) 20 % 4.76 / 5.31, 35 % 5.56 / 5.51, 50 % 7.61 / 6.18. Two threads: UINT8
/// 5 % 2.61 / 2.93, 20 % 6.64 / 6.50, 25 % 8.00 / 7.08, 50 % 13.0 / 11.9, 90 % 22.0 / 20.0;
/// FLOAT32 20 % 9.59 / 8.87, 50 % 16.1 / 13.0, 90 % 24.9 / 21.4; FLOAT16 20 % 7.11 / 6.91;
/// UINT8 `[3e7]` 20 % 2.51 / 2.80, 25 % 2.58 / 2.76, 35 % 3.15 / 2.94.
pub const NONZERO_ZEN2_IN_PLACE_DENSITY: [f64; 2] = [0.3, 0.2];

/// NonZeroCoordinates on AMD family 1Ah (Zen 5, with AVX-512): chunks of elements of at most
/// [`NONZERO_ZEN5_NARROW_ELEMENT_BYTES`] with at most this share of nonzero elements write their
/// rows in place rather than streaming them; `[one worker, several workers]`. There one core
/// streamed these rows at about 19 GB/s, a core's rows written in place cost about half that
/// per byte, and wider elements, whose reading takes longer, hid the streaming. An input of
/// `[3, 10, 1000, 1000]` (rows of 4 coordinates), the two ways alternated call by call in one
/// process, medians of 7 (in place / streamed): one thread UINT8 2 % 0.91, 5 % 0.76, 10 %
/// 0.70, 20 % 0.72, 30 % 0.84, 40 % 1.11, 50 % 0.96, 70 % 1.25; FLOAT16 2 % 0.92, 5 % 0.83,
/// 10 % 0.73, 20 % 0.77, 30 % 0.94, 40 % 1.07, 70 % 1.24; FLOAT32 1.14–1.37 at every density
/// from 2 % to 70 %; two threads UINT8 5 % 0.80, 10 % 0.81, 20 % 1.10, 30 % 1.23; FLOAT16 5 %
/// 1.03, 10 % 0.99, 20 % 1.12. Other shapes agreed (one thread, UINT8 `[3e7]` 5 % 0.84 and
/// 20 % 0.76, `[58, 68, 42, 64, 2]` 5 % 0.82, `[1000, 30, 1000]` 20 % 0.69; FLOAT16
/// `[100, 300000]` 10 % 0.89; two threads UINT8 `[3e7]` 5 % 0.86). Rows written in place
/// leave dirty lines in the cache; counting their write-back (a 96 MB read after each call,
/// less that read's own time), UINT8 5 % took 2.05 ms in place against 2.70 streamed.
pub const NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY: [f64; 2] = [0.3, 0.1];

/// NonZeroCoordinates: the widest elements [`NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY`] applies to.
pub const NONZERO_ZEN5_NARROW_ELEMENT_BYTES: usize = 2;

/// NonZeroCoordinates on AMD Zen 4 (family 19h with AVX-512): as
/// [`NONZERO_ZEN5_NARROW_IN_PLACE_DENSITY`], for elements of at most
/// [`NONZERO_ZEN4_NARROW_ELEMENT_BYTES`]: one-byte elements write their rows in place at every
/// density, on one worker or several. An input of `[3, 10, 1000, 1000]`, medians of 15–30
/// calls in alternating processes, streamed → in place (ms): one thread UINT8 2 % 2.73 → 2.36,
/// 5 % 3.37 → 2.38, 20 % 7.9 → 5.9, 50 % 14.7 → 10.9, 90 % 23.0 → 18.2; two threads 5 % 1.69 →
/// 1.34, 50 % 9.9 → 9.2, 90 % 17.0 → 16.4. Counting the write-back of the rows left dirty in
/// the cache (a 96 MB read after each call), one thread 5 % 6.78 → 6.29, 50 % 17.7 → 14.1.
/// FLOAT16 lost at 5 % (3.59 → 4.97) and FLOAT32 at 5 % and 50 % (8.3 → 9.4, 16.5 → 17.8):
/// they stream, as tuned in rounds 11–18.
pub const NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY: [f64; 2] = [1.0, 1.0];

/// NonZeroCoordinates: the widest elements [`NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY`] applies to.
pub const NONZERO_ZEN4_NARROW_ELEMENT_BYTES: usize = 1;

/// NonZeroCoordinates on AMD Zen 4 (family 19h with AVX-512): chunks of elements wider than
/// [`NONZERO_ZEN4_NARROW_ELEMENT_BYTES`] with at least this share of nonzero elements write
/// their rows in place, `[[one worker, several]; 2]` for 2-byte elements, then 4 bytes or more
/// (2-byte chunks on several workers always stream). Each the median of 15 calls back to back
/// in one process, streamed → in place (ms), `[3, 10, 1000, 1000]` one thread: FLOAT32 5 %
/// 6.48 → 6.90, 10 % 7.60 → 6.86, 20 % 10.8 → 8.4, 50 % 17.0 → 14.3, 90 % 28.3 → 21.3;
/// FLOAT16 5 % 4.25 → 4.89, 10 % 5.20 → 5.70, 20 % 8.4 → 8.0, 30 % 10.3 → 10.3, 50 % 14.5 →
/// 13.4, 90 % 22.1 → 19.3; two threads FLOAT32 5 % 4.48 → 5.16, 10 % 5.34 → 5.08, 30 % 8.66 →
/// 8.45, 90 % 20.3 → 18.4; FLOAT16 10 % 3.94 → 3.50, 30 % 7.31 → 5.36, 90 % 14.1 → 16.9.
/// Shapes of a sweep agreed (one thread): INT32 `[5666916]` 25 % 1.99 → 1.25, `[2011, 547, 2]`
/// 100 % 2.87 → 1.92, `[2083542]` 10 % 0.57 → 0.50; FLOAT16 `[9915677]` 95 % 3.74 → 2.80;
/// FLOAT32 `[8, 100013, 24]` 95 % 27.4 → 16.1. Round 18's trial, which put every chunk of
/// these widths in place, lost at 5 % (see [`NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY`]).
pub const NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY: [[f64; 2]; 2] = [[0.25, f64::INFINITY], [0.1, 0.1]];

/// OneHot: bytes of output filled at a time in a buffer before they are streamed out (outputs
/// of at least [`STREAM_MIN_BYTES`]).
pub const ONE_HOT_STAGE_BYTES: usize = 8192;

/// OneHot, scatter kernel, outputs written in place (below [`STREAM_MIN_BYTES`]): bytes of
/// output filled with OffValue before the OnValues that fall in them are stored (which then
/// hit the L1 cache). At [`ONE_HOT_STAGE_BYTES`] the work per piece showed on deep rows: one
/// core, AMD Zen 4, OneHot INT64 -> INT64 of 8 indices at depth 4096 took 3.3–3.6 µs a call
/// against 3.1–3.2 at 32 KiB, 60 indices at depth 1000 5.9 against 5.4–5.5; depths 16 and 64
/// were the same either way.
pub const ONE_HOT_IN_PLACE_PIECE_BYTES: usize = 32 << 10;

/// OneHot written in place (outputs below [`STREAM_MIN_BYTES`]) with an OffValue of one
/// repeated byte: rows of at least this many bytes are filled by `memset` and their OnValues
/// stored over it, rather than built line by line (or, deeper than
/// [`ONE_HOT_LINES_MAX_DEPTH`], filled with vector stores of the pattern). On Intel Xeon
/// (Emerald Rapids, AVX-512), glibc's `memset` wrote an output in the L2 cache at 45 GB/s
/// against 19–26 GB/s for the line kernel's stores (likely `rep stosb`, which may write whole
/// lines without reading them first; not verified). One core, calls interleaved, medians of
/// 41, line kernel or pattern → memset (ms): INT64 -> INT64 of 2000 indices at depth 100
/// (1.6 MB) 0.080 → 0.063, 4765 (3.8 MB) 0.187 → 0.145; INT32 -> FLOAT32 4765 at depth 100
/// 0.110 → 0.087, at depth 48 (rows of 192 bytes) 0.089 → 0.065; INT64 -> INT64 at depth 24 (192 bytes) 0.026 → 0.018; INT64 -> UINT8 at depth 200
/// 0.228 → 0.169; 300 INT64 at depth 1000 0.106 → 0.096. Below 192 bytes, with an OnValue in
/// most lines, the stores over the fill lost: at 64 and 128 bytes (FLOAT32 depth 16 and 32,
/// FLOAT16 depth 64, UINT8 depth 100) 12–34 % slower. Not measured on AMD: `memset` is glibc's
/// choice for the CPU.
pub const ONE_HOT_MEMSET_MIN_ROW_BYTES: usize = 192;

/// OneHot, streamed, Axis last: rows of at least this many bytes are streamed line by line
/// with their OnValues patched in (no stage filled and read again); shorter rows, with an
/// OnValue in most lines, are built in the stage.
pub const ONE_HOT_DIRECT_MIN_ROW_BYTES: usize = 256;

/// Outputs at least this many bytes long are written with non-temporal stores
/// (NonZeroCoordinates rows, OneHot outputs). 16 MiB kept a 15 MB OneHot output on normal
/// stores, each line read for ownership first: 1.9 ms against 1.1 ms streamed (per core, calls
/// interleaved with numpy and ONNX Runtime). At 4 MiB the 4-8 MB rows measured mostly faster
/// streamed, 1 MiB slowed a 2 MB one (0.13 -> 0.19 ms).
pub const STREAM_MIN_BYTES: usize = 4 << 20;

/// ArgMax, AVX-512: in an output of [`STREAM_MIN_BYTES`] or more, a vector store of at least
/// this many bytes of results (`argmax::Outputs::store_scaled`) streams its whole lines. The
/// transposed groups' stores of 64 to 512 bytes shared a line with the next one's head, and
/// streamed took FLOAT32 `[3e6, 10]` over axis 1 from 7.4 to 9.5 ms on one Zen 4 core.
pub const ARGMAX_STREAM_MIN_CALL_BYTES: usize = 2048;

/// OneHot, scatter kernel: bytes of output per task, whatever the element size (tasks of
/// [`TASK_ELEMENTS`] elements were 32 KiB of UINT8: each resolved its few positions and
/// zeroed a position cache: 16 % of one thread's time on deep rows in `perf`).
pub const ONE_HOT_TASK_BYTES: usize = TASK_ELEMENTS * 8;

/// OneHot: positions resolved from the indices at a time (into a buffer on the stack); also
/// the longest row segment of the select kernel.
pub const ONE_HOT_POSITION_BLOCK: usize = 1024;

/// OneHot, Axis last: depths up to this build each 64-byte line from the positions of its
/// rows ([`crate::one_hot`]'s line kernel, AVX-512 VBMI); at most 255 (positions are bytes,
/// 255 the one of an index out of range). Round 48, one core, AMD Zen 4, against the scatter
/// kernel (which served depths 65–255 before): OneHot INT32 -> FLOAT32 at depth 100, 50000
/// indices, 0.424 → 0.375 ms, INT32 -> FLOAT16 at depth 100 0.586 → 0.500, INT32 -> UINT8
/// at depth 128 0.459 → 0.424; UINT8 at depth 100 and INT64 at depth 250 took the same.
pub const ONE_HOT_LINES_MAX_DEPTH: usize = 255;

/// OneHot, Axis last, on CPUs with AVX2 and not AVX-512: rows of at most this many bytes
/// (depth × element size) are built 16 bytes at a time from their rows' positions (the line
/// kernel in halves, a byte shuffle each), longer ones by the scatter kernel. AMD EPYC (Zen 3,
/// AVX2), one core, INT32 indices, one process, calls alternated, medians of 7, scatter →
/// halves (ms; rows whose length divides 32 bytes take the fixed-table loop): 8-byte rows
/// (INT32, depth 2) 9.17 → 2.28, 12 (INT32, depth 3) 7.20 → 3.9–4.7, 12 (UINT8, depth 12)
/// 10.8 → 6.07, 24 (FLOAT16, depth 12) 8.14 → 7.08, 24 (UINT8) 7.53 → 6.85, 32 (INT32,
/// depth 8) 4.44 → 2.12, 32 (UINT8) 4.35 → 2.07; but 33 (UINT8) 4.16 → 4.67, 64 (FLOAT32,
/// depth 16) 4.50 → 5.40 and 64 (UINT8) 5.96 → 9.24, with the tables looked up per half
/// (before `body_cyclic`, which took the rows that do not divide 32 bytes 13–27 % faster).
pub const ONE_HOT_HALVES_MAX_ROW_BYTES: usize = 32;

/// OneHot line kernel: rows of more than 64 bytes and less than this (other than 128) build
/// eight lines at a time from their rows' positions in vector lanes; longer rows write a row
/// at a time. One core, AMD Zen 4, the row's length in bytes and ms for 10–45 MB of output,
/// a row at a time → eight lines: UINT8 80 0.53 → 0.42, 110 0.49 → 0.41, 140 0.55 → 0.53,
/// 160 0.465 → 0.474, 192 0.43 → 0.47, 220 0.47 → 0.54; FLOAT16 140 0.58 → 0.55, 180 0.43 →
/// 0.46. At most 192: an index out of range must land past every line of its row.
pub const ONE_HOT_LINE_GROUPS_MAX_ROW_BYTES: usize = 160;

/// OneHot: outputs shorter than this do not use the line kernel (its tables, 128 bytes per
/// unit of depth, are built on a depth and element size's first call).
pub const ONE_HOT_LINES_MIN_BYTES: usize = 4 << 10;

/// OneHot line kernel: positions of this many rows are resolved at a time, a byte each, into a
/// buffer on the stack, and packed indices are read ahead (prefetched) by as many rows. On the
/// Intel Xeon of round 20, one thread, INT64 -> FLOAT32 depth 2 with 11.5 M indices: 11.6 ms
/// with 4096 rows, 10.9 with 2048, 10.3 with 1024, 10.5 with 512 (13.4 with 4096 and no
/// read-ahead).
pub const ONE_HOT_LINES_BLOCK_ROWS: usize = 1024;

/// OneHot line kernel, 8-byte packed indices: they are resolved this many bytes at a time,
/// each 64-byte line prefetched [`ONE_HOT_WIDE_INDEX_PREFETCH_BYTES`] ahead, in place of the
/// read-ahead of a block of rows at once. On the AMD EPYC (Zen 5) of round 30, one thread,
/// INT64 -> INT32 depth 1 with 31 M indices: 17.6 ms with the block read-ahead, 8.8–9.3 ms
/// with 256 bytes and 4 KiB, 10.2–10.4 with 1024 bytes. 4-byte indices were slower resolved
/// this way (INT32 -> UINT8 depth 3, 31 M indices: 4.9–5.0 → 5.5–5.7 ms), so they keep the
/// block read-ahead.
pub const ONE_HOT_WIDE_INDEX_STEP_BYTES: usize = 256;

/// How far ahead 8-byte packed indices are prefetched ([`ONE_HOT_WIDE_INDEX_STEP_BYTES`]).
pub const ONE_HOT_WIDE_INDEX_PREFETCH_BYTES: usize = 4096;

/// OneHot: outputs whose inner run (the product of the sizes after the Axis) is at most this
/// long are written by scattering each sequence's OnValue over OffValue; longer runs compare
/// each element's position with its Axis coordinate, a row segment at a time.
pub const ONE_HOT_SCATTER_MAX_INNER: usize = 64;

/// ArgMax: reduced dimensions lying in memory out of index order are walked as groups
/// (`argmax::out_of_order`) only when each group reduces at least this many rows: each output
/// pays a merge (an index decoded, a key read back) per group.
pub const ARGMAX_GROUP_MIN_ROWS: usize = 16;

/// ArgMax: at most this many groups (`argmax::out_of_order`): each runs a plan of its own.
pub const ARGMAX_GROUP_MAX_GROUPS: usize = 64;

/// ArgMax: groups (`argmax::out_of_order`) lie at least this many bytes apart.
pub const ARGMAX_GROUP_MIN_BLOCK_BYTES: usize = 1024;

/// ArgMax: each group (`argmax::out_of_order`) reduces at least this many elements.
pub const ARGMAX_GROUP_MIN_ELEMENTS: usize = 1 << 15;

/// ArgMax: with the innermost dimension kept, groups (`argmax::out_of_order`) only for a tail
/// of fewer bytes.
pub const ARGMAX_GROUP_MAX_TAIL_BYTES: usize = 64;
