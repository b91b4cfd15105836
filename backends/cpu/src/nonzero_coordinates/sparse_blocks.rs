//! Rows of sparse inputs, under AVX-512 VBMI2: the set bits of consecutive words are gathered
//! into blocks of sixteen, whatever run each lies in, and every block's coordinates are
//! computed at once by division in `f64` lanes.
//!
//! The run and short-run kernels build one word's rows as one block. A sparse word holds few
//! set bits (about three at 5 %), so most of their lanes were empty and each word paid a
//! block's permutes and stores (and, for short runs, its divisions): UINT8 `[58, 68, 42, 64]`
//! at 5 % took 4.6 ns a row on one thread, 2.5 times the floor. Here a word costs a compress,
//! a widening and a two-source permute into the block being gathered; a full block divides
//! each level once for sixteen rows.

use super::emit::{set_bit_positions, MAX_N};
use super::short_runs::{store_interleaved, INTERLEAVES};

/// What dividing an element's index into its coordinates takes, level by level: level `l` is
/// the input's dimension `rank - 1 - l` and fills column `N - 1 - l` (columns past the input's
/// rank read 0), as in [`super::short_runs::Levels`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Divisors {
    /// Levels with a column: the fewer of `N` and the rank.
    count: usize,
    /// Whether the last level is the input's outermost dimension: its coordinate is then what
    /// reaches it, with no division.
    outermost: bool,
    sizes: [usize; MAX_N],
    /// `1 / size` rounded, then raised by 8 units in the last place
    /// ([`raised_inverse`]): `trunc(x * inverse)` is then `x / size` exactly.
    inverses: [f64; MAX_N],
}

/// `1 / size` raised just enough that `trunc(x * it)` is the quotient `x / size` for every
/// integer `0 <= x < 2^47` (the rows divide offsets under 2^34).
///
/// The rounded `1 / size` is within `2^-53` of it (relative) and 8 units in the last place
/// add between `8 * 2^-53` and `8 * 2^-52`, so the product, after its own rounding, lies
/// between `x / size` (never below: the raise outweighs both roundings) and
/// `x / size * (1 + 2^-48)`, less than `x * 2^-48 / size < 1 / size` above it. A quotient
/// that is not an integer lies at least `1 / size` below the next one, so truncating cannot
/// reach it, and an integer quotient is not undercut.
fn raised_inverse(size: usize) -> f64 {
    f64::from_bits((1.0 / size as f64).to_bits() + 8)
}

impl Divisors {
    /// The levels of an input of `sizes` (outermost first, none zero) with rows of `n`
    /// coordinates, or `None` when a level's size is 2^32 or more (its coordinates would not
    /// fit a row's 32 bits).
    pub(super) fn new(sizes: &[usize], n: usize) -> Option<Divisors> {
        let count = n.min(sizes.len()).min(MAX_N);
        let mut divisors = Divisors {
            count,
            outermost: count == sizes.len(),
            sizes: [1; MAX_N],
            inverses: [1.0; MAX_N],
        };
        for (l, &size) in sizes.iter().rev().take(count).enumerate() {
            if size == 0 || size > u32::MAX as usize {
                return None;
            }
            divisors.sizes[l] = size;
            divisors.inverses[l] = raised_inverse(size);
        }
        Some(divisors)
    }

    /// The coordinates of element `flat`, level by level (integer division, once per call).
    fn of(&self, flat: usize) -> [u32; MAX_N] {
        let mut coordinates = [0; MAX_N];
        let mut rest = flat;
        for (coordinate, &size) in coordinates.iter_mut().zip(&self.sizes).take(self.count) {
            *coordinate = (rest % size) as u32;
            rest /= size;
        }
        coordinates
    }

    /// The row of element `flat` (under 2^47) for rows of `n` coordinates (as
    /// [`Divisors::new`] was given): the coordinate of level `l` in column `n - 1 - l`, 0 in
    /// columns before the input's first dimension. Each quotient is the product by the raised
    /// inverse, truncated ([`raised_inverse`]): a 64-bit division took about 14 cycles, and
    /// a row of two coordinates about 9 ns with them.
    pub(super) fn row_of(&self, flat: usize, n: usize) -> [u32; MAX_N] {
        debug_assert!(flat < 1 << 47, "row_of: element {flat} past 2^47");
        let mut row = [0; MAX_N];
        let mut rest = flat as u64;
        for l in 0..self.count {
            let coordinate = if l + 1 == self.count && self.outermost {
                rest
            } else {
                // Exact: `rest` is under 2^47, so `rest as f64` is too.
                let quotient = (rest as f64 * self.inverses[l]) as u64;
                let remainder = rest - quotient * self.sizes[l] as u64;
                rest = quotient;
                remainder
            };
            row[n - 1 - l] = coordinate as u32;
        }
        row
    }

    /// `x / size` of level `l` as the vectors compute it (scalar, for tests).
    #[cfg(test)]
    fn quotient(&self, l: usize, x: f64) -> f64 {
        (x * self.inverses[l]).trunc()
    }
}

/// Set bits gathered by [`sparse_blocks_avx512`] across its calls: the offsets (from
/// `origin`) of up to fifteen elements whose rows are not written yet.
pub(super) struct Gathered {
    divisors: Divisors,
    /// The element the offsets count from, and its coordinates per level.
    origin: usize,
    at_origin: [f64; MAX_N],
    offsets: [u32; 16],
    filled: usize,
}

impl Gathered {
    /// Nothing gathered yet; offsets count from element `origin`, and must stay under 2^32.
    pub(super) fn new(divisors: Divisors, origin: usize) -> Gathered {
        let at_origin = divisors.of(origin).map(f64::from);
        Gathered {
            divisors,
            origin,
            at_origin,
            offsets: [0; 16],
            filled: 0,
        }
    }

    /// Rows gathered and not written yet.
    pub(super) fn pending(&self) -> usize {
        self.filled
    }
}

/// For a block holding `f` offsets, `MERGE[f]` keeps its first `f` lanes and appends a
/// new vector's lanes after them (a two-source permute); `REST[f]` moves the new lanes that
/// did not fit (from lane `16 - f` on) to the front.
const MERGE: [[u32; 16]; 16] = {
    let mut table = [[0; 16]; 16];
    let mut f = 0;
    while f < 16 {
        let mut i = 0;
        while i < 16 {
            table[f][i] = if i < f { i } else { 16 + i - f } as u32;
            i += 1;
        }
        f += 1;
    }
    table
};
const REST: [[u32; 16]; 16] = {
    let mut table = [[0; 16]; 16];
    let mut f = 0;
    while f < 16 {
        let mut i = 0;
        while i < 16 {
            table[f][i] = ((i + 16 - f) % 16) as u32;
            i += 1;
        }
        f += 1;
    }
    table
};

/// Writes at `dst` the rows of the set bits of consecutive words (word `k`'s bit `j` is
/// element `start + 64 k + j`, `start` a multiple of 64 and at least `gathered`'s origin),
/// calling `before(k)` before word `k`, while `room` bytes hold a gathered block's and a whole
/// word's rows and a block's overrun. Every sixteen set bits make a block of rows; the last
/// (up to fifteen) stay in `gathered` for the next call, unless `finish`, when they are
/// written exactly (no byte past their rows). Returns how many words it took and the bytes of
/// rows written.
///
/// Each word's set positions are compressed into bytes (`vpcompressb`), widened to offsets
/// and appended to the block by a two-source permute, without a branch on how many there are
/// (one only when a word has more than sixteen). Gathering through memory instead (stores
/// after the last offsets, the full blocks written per batch of words) was slower at every
/// density tried. A full block's offsets become `f64` lanes: at each level, the quotient by
/// the raised inverse and the remainder (the coordinate) by a fused multiply-add; permutes
/// then interleave the columns into rows, as in short runs. The block loads its constants
/// itself: held in registers across the word loop, they pushed the gathered offsets onto the
/// stack for rows of three coordinates, where each word's reload waited on the last word's
/// store (UINT8 `[37, 30974, 2]` at 5 % on one AMD EPYC Zen 4 core: 0.83 -> 0.22 ms; rows
/// of two and four coordinates unchanged). It is never inlined, for the same reason: inlined
/// into the row kernel, whose other paths hold many registers, the gathered offsets went
/// back onto the stack for rows of two coordinates (one core, libraries alternated in one
/// process, medians of 21, ms: FLOAT16 `[65070, 19]` at 1 % 0.238 -> 0.181,
/// `[1653, 70, 1, 60]` at 0.1 % 0.99 -> 0.78; INT32 `[63, 2, 23735, 2]` at 0.1 % 1.46 ->
/// 1.25; UINT8 `[30000, 1000]` at 2 % 3.45 -> 2.32; three to five coordinates unchanged).
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI2; `dst` must be valid for `room` bytes of
/// writes; the words' elements must lie less than 2^32 past the origin.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,avx2,popcnt")]
#[inline(never)]
pub(super) unsafe fn sparse_blocks_avx512<const N: usize>(
    dst: *mut u8,
    room: usize,
    words: &[u64],
    start: usize,
    gathered: &mut Gathered,
    finish: bool,
    mut before: impl FnMut(usize),
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let table = &INTERLEAVES[N];
    let divisors = gathered.divisors;
    let count = divisors.count.min(N);
    // Levels below `divided` divide; the outermost dimension's coordinate is what reaches it.
    let divided = if divisors.outermost { count - 1 } else { count };
    let sizes: [f64; MAX_N] = divisors.sizes.map(|s| s as f64);
    let at_origin = gathered.at_origin;
    // The rows of the first `filled` (1 to 16) lanes of `offsets`, stored at `at` (valid for
    // `64 * N` bytes of writes). The constants are loaded in here, once per block, so that
    // the word loop keeps its own state in registers.
    let block = |at: *mut u8, offsets: __m512i, filled: usize| {
        let pairs: [__m512i; N] =
            std::array::from_fn(|k| _mm512_loadu_si512(table.pairs[k].as_ptr().cast()));
        let inverses: [__m512d; N] = std::array::from_fn(|l| _mm512_set1_pd(divisors.inverses[l]));
        let sizes: [__m512d; N] = std::array::from_fn(|l| _mm512_set1_pd(sizes[l]));
        let origin: [__m512d; N] = std::array::from_fn(|l| _mm512_set1_pd(at_origin[l]));
        let mut halves = [[_mm256_setzero_si256(); 2]; N];
        for (half, part) in [
            _mm512_castsi512_si256(offsets),
            _mm512_extracti64x4_epi64::<1>(offsets),
        ]
        .into_iter()
        .enumerate()
        {
            let mut x = _mm512_add_pd(_mm512_cvtepu32_pd(part), origin[0]);
            for l in 0..N {
                if l == count {
                    break;
                }
                let coordinate = if l < divided {
                    let quotient = _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(
                        _mm512_mul_pd(x, inverses[l]),
                    );
                    let remainder = _mm512_fnmadd_pd(quotient, sizes[l], x);
                    if l + 1 < count {
                        x = _mm512_add_pd(quotient, origin[l + 1]);
                    }
                    remainder
                } else {
                    x
                };
                halves[N - 1 - l][half] = _mm512_cvttpd_epu32(coordinate);
            }
        }
        let columns: [__m512i; N] = std::array::from_fn(|c| {
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(halves[c][0]), halves[c][1])
        });
        store_interleaved::<N>(at, &columns, &pairs, filled);
    };
    // The rows of a gathered block and of a whole word (five blocks at most), and the last
    // block's overrun.
    let worst = (16 + 64) * 4 * N + 64 * N;
    let mut offsets = _mm512_loadu_si512(gathered.offsets.as_ptr().cast());
    let mut filled = gathered.filled;
    // (Unused when there are no words, as when the gathered rows are flushed.)
    let first_offset = start.wrapping_sub(gathered.origin) as u32;
    let mut written = 0;
    let mut done = words.len();
    for (k, &mask) in words.iter().enumerate() {
        if room - written < worst {
            done = k;
            break;
        }
        before(k);
        let word_offset = _mm512_set1_epi32(first_offset.wrapping_add(64 * k as u32) as i32);
        let mut positions = set_bit_positions(mask);
        let mut left = mask.count_ones() as usize;
        loop {
            let take = left.min(16);
            let fresh = _mm512_add_epi32(
                _mm512_cvtepu8_epi32(_mm512_castsi512_si128(positions)),
                word_offset,
            );
            let merged = _mm512_permutex2var_epi32(
                offsets,
                _mm512_loadu_si512(MERGE[filled].as_ptr().cast()),
                fresh,
            );
            if filled + take >= 16 {
                // In bounds: `worst` bytes remained from `written` before this word.
                block(dst.add(written), merged, 16);
                written += 64 * N;
                offsets = _mm512_permutexvar_epi32(
                    _mm512_loadu_si512(REST[filled].as_ptr().cast()),
                    fresh,
                );
                filled = filled + take - 16;
            } else {
                offsets = merged;
                filled += take;
            }
            left -= take;
            if left == 0 {
                break;
            }
            positions = _mm512_alignr_epi32::<4>(_mm512_setzero_si512(), positions);
        }
    }
    if finish && done == words.len() && filled > 0 {
        // Through a buffer: the block's vectors may reach past the rows, and the room may end
        // right after them.
        let mut rows = [0u8; 64 * MAX_N];
        block(rows.as_mut_ptr(), offsets, filled);
        let bytes = filled * 4 * N;
        assert!(
            room - written >= bytes,
            "NonZeroCoordinates rows miscounted"
        );
        std::ptr::copy_nonoverlapping(rows.as_ptr(), dst.add(written), bytes);
        written += bytes;
        filled = 0;
    }
    _mm512_storeu_si512(gathered.offsets.as_mut_ptr().cast(), offsets);
    gathered.filled = filled;
    (done, written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_inverses_divide_exactly() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut random = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let drawn: Vec<usize> = (0..200)
            .map(|_| 1 + (random() as usize & 0xffff_ffff) % (u32::MAX as usize))
            .collect();
        let sizes = (1usize..3000)
            .chain([
                1 << 16,
                1_000_003,
                (1 << 31) - 1,
                1 << 31,
                u32::MAX as usize,
            ])
            .chain(drawn);
        for size in sizes {
            let divisors = Divisors::new(&[size], 1).unwrap();
            // From 0, around the first and the last multiples below 2^34, and at random below
            // 2^34.
            let size64 = size as u64;
            let top = ((1u64 << 34) - 1) / size64;
            let near = 0..4 * size64.min(1000) + 3;
            let multiples = (1..50u64)
                .chain(top.saturating_sub(50).max(1)..=top)
                .flat_map(|q| {
                    let m = q * size64;
                    [m - 1, m, m + 1]
                });
            let spread: Vec<u64> = (0..500).map(|_| random() % (1 << 34)).collect();
            for x in near.chain(multiples).chain(spread) {
                let expected = x / size as u64;
                assert_eq!(
                    divisors.quotient(0, x as f64) as u64,
                    expected,
                    "{x} / {size}"
                );
            }
        }
        assert!(Divisors::new(&[1 << 32], 1).is_none());
    }

    #[test]
    fn rows_of_single_elements_hold_their_coordinates() {
        let shapes: [&[usize]; 4] = [
            &[7, 1, 13, 1_000_003],
            &[3, 5],
            &[4_000_037, 2, 9],
            &[65_535, 65_537, 3],
        ];
        for sizes in shapes {
            let count: usize = sizes.iter().product();
            let flats = (0..2000)
                .chain((1..200).map(|k| count * k / 200))
                .chain(count.saturating_sub(2000)..count);
            for flat in flats.filter(|&f| f < count) {
                // The coordinates, outermost first, by integer division.
                let mut coordinates = vec![0u32; sizes.len()];
                let mut rest = flat;
                for (c, &size) in coordinates.iter_mut().zip(sizes).rev() {
                    *c = (rest % size) as u32;
                    rest /= size;
                }
                for n in 1..=sizes.len() + 1 {
                    let divisors = Divisors::new(sizes, n).unwrap();
                    let row = divisors.row_of(flat, n);
                    let mut expected = vec![0u32; n];
                    for (k, &c) in coordinates.iter().rev().enumerate().take(n) {
                        expected[n - 1 - k] = c;
                    }
                    assert_eq!(&row[..n], &expected[..], "{sizes:?} element {flat}, N={n}");
                    assert!(row[n..].iter().all(|&c| c == 0));
                }
            }
        }
    }

    #[test]
    fn merge_and_rest_tables_append_then_carry_the_overflow() {
        for f in 0..16 {
            for take in 0..=16 {
                let old: Vec<u32> = (0..16).map(|i| 100 + i).collect();
                let fresh: Vec<u32> = (0..16).map(|i| 200 + i).collect();
                let pick = |i: usize| {
                    let index = MERGE[f][i] as usize;
                    if index < 16 {
                        old[index]
                    } else {
                        fresh[index - 16]
                    }
                };
                let expected: Vec<u32> = old[..f].iter().chain(&fresh[..take]).copied().collect();
                let got: Vec<u32> = (0..(f + take).min(16)).map(pick).collect();
                assert_eq!(got, expected[..got.len()], "f {f} take {take}");
                if f + take >= 16 {
                    let rest: Vec<u32> = (0..f + take - 16)
                        .map(|i| fresh[REST[f][i] as usize])
                        .collect();
                    assert_eq!(rest, expected[16..], "f {f} take {take}");
                }
            }
        }
    }
}
