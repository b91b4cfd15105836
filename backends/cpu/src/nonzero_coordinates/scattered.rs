//! Rows of very sparse chunks on one worker, written as their elements are found.
//!
//! A chunk's usual passes read its input ahead while the rows of the chunk before are
//! written, with one prefetch per cache line, and run the row kernel over every word of the
//! chunk. In a chunk with almost no rows there is nothing to overlap those reads with, and
//! FLOAT32 at 0.1 % read at about 17 GB/s on one AMD EPYC (Zen 4) core. Here a chunk is cut
//! into blocks of [`NONZERO_SCATTER_BLOCK_WORDS`] mask words; each block's masks are made and
//! its few rows written at once, their coordinates found by division
//! ([`Divisors::row_of`]), so the input is read in one stream that the hardware prefetcher
//! carries. Only a chunk after one sparser than
//! [`NONZERO_SCATTER_MIN_BYTES_PER_ROW`](crate::thresholds::NONZERO_SCATTER_MIN_BYTES_PER_ROW)
//! is scanned (each word with a row costs a mispredicted branch or two), and a block much
//! denser than that ([`BLOCK_WORDS_PER_ROW`]) ends the scan: the rest of the chunk goes
//! through the usual passes.

use super::sparse_blocks::Divisors;
use super::{Job, GROUP};
use crate::element::Zero;
use crate::thresholds::NONZERO_SCATTER_BLOCK_WORDS;

/// Where [`Job::scatter_rows`] stopped.
pub(super) struct Scattered {
    /// Rows written.
    pub(super) rows: usize,
    /// The first element not scanned: the chunk's end, or the start of the first block too
    /// dense to scan (a multiple of [`GROUP`]).
    pub(super) end: usize,
}

/// Whether `rows` rows in `elements` elements of `T` leave at least `min_bytes_per_row`
/// bytes of input per row.
pub(super) fn sparse_enough<T: Zero>(
    rows: usize,
    elements: usize,
    min_bytes_per_row: usize,
) -> bool {
    rows.saturating_mul(min_bytes_per_row) <= elements.saturating_mul(T::SIZE)
}

impl Job<'_> {
    /// Scans elements `start..end` (`start` a multiple of [`GROUP`]) in blocks of
    /// `block_words` mask words, writing each block's rows into `out` (room for a row per
    /// element, the first row at its start), until the end or a block with more than a row
    /// per [`BLOCK_WORDS_PER_ROW`] words.
    pub(super) fn scatter_rows<T: Zero>(
        &self,
        start: usize,
        end: usize,
        out: &mut [u8],
        divisors: &Divisors,
        block_words: usize,
    ) -> Scattered {
        let row_bytes = 4 * self.n;
        let mut words = [0u64; MAX_BLOCK_WORDS];
        let block_words = block_words.clamp(1, MAX_BLOCK_WORDS);
        let mut rows = 0;
        let mut at = start;
        while at < end {
            let to = (at + block_words * GROUP).min(end);
            let words = &mut words[..(to - at).div_ceil(GROUP)];
            let count = self.masks::<T>(at, to, words, 0);
            if count * BLOCK_WORDS_PER_ROW > words.len() {
                return Scattered { rows, end: at };
            }
            for (w, &word) in words.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let flat = at + w * GROUP + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let row = divisors.row_of(flat, self.n);
                    let dst = &mut out[rows * row_bytes..(rows + 1) * row_bytes];
                    for (bytes, coordinate) in dst.chunks_exact_mut(4).zip(row) {
                        bytes.copy_from_slice(&coordinate.to_le_bytes());
                    }
                    rows += 1;
                }
            }
            at = to;
        }
        Scattered { rows, end }
    }
}

/// A block with more than a row per this many mask words ends the scan. Far looser than the
/// chunks' threshold, since a block's count varies much more than a chunk's: with the
/// chunks' threshold, FLOAT32 at 0.1 % (4.1 rows a block on average) left the scan at a
/// quarter of its blocks and gained nothing.
const BLOCK_WORDS_PER_ROW: usize = 2;

/// The most mask words a block may have (its masks live on the stack).
const MAX_BLOCK_WORDS: usize = NONZERO_SCATTER_BLOCK_WORDS;
