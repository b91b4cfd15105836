//! The rows of a tiny input, written straight from its masks, each row its run's template
//! and the bit's place in the run: no chunks, chain, cursor, row kernels or their setup, which
//! for a 16-element input cost more than the rows themselves ([`Tuning::tiny_max`]).
//!
//! [`Tuning::tiny_max`]: super::Tuning

use super::{GROUP, MAX_N};

/// Mask words a tiny input may have: inputs of up to `64 * TINY_WORDS` elements can take this
/// path (the words live on the stack).
pub(super) const TINY_WORDS: usize = 16;

/// Writes one row of `n` 32-bit coordinates into `out` for each set bit of `words` (bit `j`
/// of word `w` is element `64 w + j` of an input of `sizes`, row-major), in increasing
/// element order: each row holds the element's last `n` coordinates, 0 in the columns before
/// the input's first dimension. Returns the rows written.
///
/// # Panics
/// If `out` is shorter than the rows or `n` is over [`MAX_N`].
pub(super) fn write_rows_from_masks(
    words: &[u64],
    sizes: &[usize],
    n: usize,
    out: &mut [u8],
) -> usize {
    match n {
        0 => words.iter().map(|w| w.count_ones() as usize).sum(),
        1 => rows_of::<1>(words, sizes, out),
        2 => rows_of::<2>(words, sizes, out),
        3 => rows_of::<3>(words, sizes, out),
        4 => rows_of::<4>(words, sizes, out),
        5 => rows_of::<5>(words, sizes, out),
        6 => rows_of::<6>(words, sizes, out),
        7 => rows_of::<7>(words, sizes, out),
        8 => rows_of::<8>(words, sizes, out),
        _ => panic!("rows of more than {MAX_N} coordinates"),
    }
}

/// [`write_rows_from_masks`] for rows of `N` coordinates. A row is its run's template (the
/// coordinates outside the innermost dimension, moved on only when a set bit lies past the
/// run) and the bit's place in the run, written from registers: rebuilding the coordinates
/// and copying them out at every row stalled on forwarding the coordinates' 4-byte stores to
/// the copy's wider loads (about 9 ns a row).
fn rows_of<const N: usize>(words: &[u64], sizes: &[usize], out: &mut [u8]) -> usize {
    // A 0-D input is one element of coordinates `[]`: a run of one.
    let inner = sizes.last().copied().unwrap_or(1);
    let mut template = [0u32; N];
    let mut run_start = 0;
    let mut rows = 0;
    for (w, &word) in words.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let element = w * GROUP + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let past = element - run_start;
            if past >= inner {
                // The next run (the usual case) needs no division.
                let runs = if past < 2 * inner { 1 } else { past / inner };
                run_start += runs * inner;
                next_runs(&mut template, sizes, runs);
            }
            let row = &mut out[rows * 4 * N..(rows + 1) * 4 * N];
            let (outer, last) = row.split_at_mut(4 * (N - 1));
            for (bytes, value) in outer.chunks_exact_mut(4).zip(&template) {
                bytes.copy_from_slice(&value.to_le_bytes());
            }
            // A tiny input's coordinates fit 32 bits (at most `64 * TINY_WORDS` elements).
            last.copy_from_slice(&((element - run_start) as u32).to_le_bytes());
            rows += 1;
        }
    }
    rows
}

/// Moves the template of an input of `sizes` (its columns but the last: the dimensions
/// before the innermost one that the rows hold) `runs` runs of the innermost dimension on,
/// carrying into the outer columns only as far as needed. Dimensions before the first column
/// are not kept: the rows do not hold them.
fn next_runs<const N: usize>(template: &mut [u32; N], sizes: &[usize], runs: usize) {
    let rank = sizes.len();
    let mut carry = runs;
    for column in (0..N.saturating_sub(1)).rev() {
        // Column `column` holds dimension `column + rank - N`, or 0 before the first one.
        let Some(d) = (column + rank).checked_sub(N) else {
            return;
        };
        let size = sizes[d];
        let value = template[column] as usize + carry;
        if carry == 1 {
            // One run on (the usual case): no division.
            if value < size {
                template[column] = value as u32;
                return;
            }
            template[column] = 0;
        } else {
            template[column] = (value % size) as u32;
            carry = value / size;
            if carry == 0 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{naive_rows, Rng};
    use super::*;

    /// The rows by division of each set bit's element number (an independent oracle: the
    /// module tests' naive scan, over 1.0 for a set bit and 0.0 for a clear one).
    fn divided_rows(words: &[u64], sizes: &[usize], n: usize) -> Vec<u32> {
        let count: usize = sizes.iter().product();
        let values: Vec<f32> = (0..count)
            .map(|e| (words[e / GROUP] >> (e % GROUP) & 1) as f32)
            .collect();
        naive_rows(&values, sizes, n).concat()
    }

    #[test]
    fn rows_from_masks_match_the_divided_coordinates() {
        let mut rng = Rng(31);
        let shapes: [&[usize]; 8] = [
            &[1],
            &[16],
            &[3, 5],
            &[2, 1, 7, 1],
            &[1, 1, 1, 1, 1, 1, 1, 70],
            &[5, 4, 3, 2, 1, 2],
            &[1000],
            &[2, 2, 2, 2, 2, 2, 2, 2],
        ];
        for sizes in shapes {
            let count: usize = sizes.iter().product();
            for density in [0u64, 1, 5, 9, 10] {
                let mut words = vec![0u64; count.div_ceil(GROUP)];
                for element in 0..count {
                    if rng.below(10) < density {
                        words[element / GROUP] |= 1 << (element % GROUP);
                    }
                }
                for n in 0..=MAX_N {
                    let expected = divided_rows(&words, sizes, n);
                    let mut out = vec![0xAB; expected.len() * 4 + 8];
                    let rows = write_rows_from_masks(&words, sizes, n, &mut out);
                    let got: Vec<u32> = out[..rows * 4 * n]
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                        .collect();
                    assert_eq!(got, expected, "{sizes:?} {density}0 % N={n}");
                    assert!(out[rows * 4 * n..].iter().all(|&b| b == 0xAB));
                }
            }
        }
    }

    #[test]
    fn a_zero_dimensional_input_has_one_row_of_zeros() {
        let mut out = [0xAB; 12];
        assert_eq!(write_rows_from_masks(&[1], &[], 3, &mut out), 1);
        assert_eq!(out, [0; 12]);
    }
}
