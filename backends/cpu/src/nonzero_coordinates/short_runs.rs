//! Rows of short runs: inputs whose innermost dimension (after [`RowShape`]'s move of
//! size-1 dimensions) is shorter than a 64-element word, under AVX-512 and AVX2.
//!
//! Following the runs one at a time, a template row per run (the way longer runs are
//! written), cost about 6 ns a row when runs hold 2 elements: UINT8 `[649984, 2]` at 50 %
//! took 14.7 times the memory floor. Here every block of up to sixteen set bits gets all
//! its coordinates at once: the word's first element has known coordinates ([`Levels`]),
//! and each bit's are those plus its position, carried from level to level in vectors
//! (one lane per row, a vector per column); permutes then interleave the columns into rows.
//!
//! [`RowShape`]: super::emit::RowShape

use super::emit::MAX_N;

/// The dimensions behind a row's columns, innermost first, with what dividing by their sizes
/// takes: level `l` is the input's dimension `rank - 1 - l` and fills column `N - 1 - l`
/// (columns past the input's rank read 0).
#[derive(Debug, Clone, Copy)]
pub(super) struct Levels {
    /// Levels with a column: the fewer of `N` and the rank.
    count: usize,
    sizes: [u32; MAX_N],
    /// `ceil(2^16 / size)` for sizes under 64, else 0 (the vector blocks). A block adds at
    /// most 63 to a coordinate below its level's size and carries at most 64, so what a
    /// level divides stays under `size + 64`: under 128 for such sizes, where
    /// `x * magic >> 16` is the exact quotient (the error,
    /// `x * (magic * size - 2^16) / (2^16 * size)`, stays under `1 / size`); from 64 on,
    /// the quotient is 0 or 1, a comparison.
    magic: [u32; MAX_N],
    /// `ceil(2^64 / size)` (0 for size 1): the high half of `x * wide` is the exact quotient
    /// of any 32-bit `x` (the error stays under `2^32 / 2^64`, below `1 / size`), for the
    /// scalar moves of [`Levels::advance`] by many elements.
    wide: [u64; MAX_N],
}

impl Levels {
    /// The levels of an input of `sizes` (outermost first, none zero) with rows of `n`
    /// coordinates, or `None` when a size of a level is 2^31 or more (a coordinate plus a
    /// step would not fit 32 bits).
    pub(super) fn new(sizes: &[usize], n: usize) -> Option<Levels> {
        let count = n.min(sizes.len()).min(MAX_N);
        let mut levels = Levels {
            count,
            sizes: [1; MAX_N],
            magic: [0; MAX_N],
            wide: [0; MAX_N],
        };
        for (l, &size) in sizes.iter().rev().take(count).enumerate() {
            let size = u32::try_from(size).ok().filter(|&s| s > 0 && s < 1 << 31)?;
            levels.sizes[l] = size;
            levels.magic[l] = if size < 64 {
                (1u32 << 16).div_ceil(size)
            } else {
                0
            };
            levels.wide[l] = if size > 1 {
                (1u128 << 64).div_ceil(u128::from(size)) as u64
            } else {
                0
            };
        }
        Some(levels)
    }

    /// The coordinates of element `flat`, level by level.
    fn of(&self, flat: usize) -> [u32; MAX_N] {
        let mut coordinates = [0; MAX_N];
        let mut rest = flat;
        for (coordinate, &size) in coordinates.iter_mut().zip(&self.sizes).take(self.count) {
            let size = size as usize;
            *coordinate = (rest % size) as u32;
            rest /= size;
        }
        coordinates
    }

    /// `x / size` of level `l`, for `x` under that size plus 64 (the vector blocks' rule,
    /// in scalar for tests).
    #[cfg(test)]
    fn quotient(&self, l: usize, x: u32) -> u32 {
        if self.magic[l] != 0 {
            (x * self.magic[l]) >> 16
        } else {
            u32::from(x >= self.sizes[l])
        }
    }

    /// `x / size` of level `l`, for any 32-bit `x`.
    #[inline(always)]
    fn wide_quotient(&self, l: usize, x: u32) -> u32 {
        if self.sizes[l] == 1 {
            x
        } else {
            ((u128::from(x) * u128::from(self.wide[l])) >> 64) as u32
        }
    }

    /// The coordinates of element `flat` ([`Levels::of`]) by multiplications when `flat`
    /// fits 32 bits. Each word with set bits computes its own from its index: moving them on
    /// from the previous such word (a step of any length, stopping at the first level with
    /// no carry) chained each word's moves to the last one's and mispredicted its stopping
    /// branch, about 25 ns a word with set bits at 1 % density (UINT8 `[69, 9744, 13]`).
    #[inline(always)]
    fn at(&self, flat: usize) -> [u32; MAX_N] {
        let Ok(mut rest) = u32::try_from(flat) else {
            return self.of(flat);
        };
        let mut coordinates = [0; MAX_N];
        for (l, coordinate) in coordinates.iter_mut().enumerate() {
            if l == self.count {
                break;
            }
            let quotient = self.wide_quotient(l, rest);
            *coordinate = rest - quotient * self.sizes[l];
            rest = quotient;
        }
        coordinates
    }
}

/// For rows of `N` columns, output vector `k` (slots `16 k ..`, row-major) takes lane `i`
/// from row `(16 k + i) / N` of column `(16 k + i) % N`. Columns go in pairs (`2 p` and
/// `2 p + 1`) through two-source permutes: `pairs[k]` picks, in each lane, the row and which
/// of the pair (index bit 4); `lanes[k][p]` are the lanes that take pair `p`.
#[derive(Clone, Copy)]
pub(super) struct Interleave {
    pub(super) pairs: [[u32; 16]; MAX_N],
    lanes: [[u16; MAX_N / 2]; MAX_N],
}

/// [`Interleave`] for rows of `n` columns.
const fn interleave(n: usize) -> Interleave {
    let mut table = Interleave {
        pairs: [[0; 16]; MAX_N],
        lanes: [[0; MAX_N / 2]; MAX_N],
    };
    let mut k = 0;
    while k < n {
        let mut i = 0;
        while i < 16 {
            let slot = 16 * k + i;
            let (row, column) = (slot / n, slot % n);
            table.pairs[k][i] = (row + 16 * (column % 2)) as u32;
            table.lanes[k][column / 2] |= 1 << i;
            i += 1;
        }
        k += 1;
    }
    table
}

/// [`interleave`] for every `N` from 0 to [`MAX_N`].
pub(super) const INTERLEAVES: [Interleave; MAX_N + 1] = {
    let mut all = [interleave(0); MAX_N + 1];
    let mut n = 1;
    while n <= MAX_N {
        all[n] = interleave(n);
        n += 1;
    }
    all
};

/// Stores at `at` the first `filled` rows (1 to 16) whose columns are `columns` (vector `c`
/// holds column `c` of every row), interleaved by [`INTERLEAVES`]`[N]`, whose permute
/// indices the caller loaded as `pairs`: `ceil(filled * N / 16)` vectors, the last one
/// possibly reaching past the rows.
///
/// # Safety
/// The CPU must support AVX-512 F; `at` must be valid for `64 * N` bytes of writes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn store_interleaved<const N: usize>(
    at: *mut u8,
    columns: &[std::arch::x86_64::__m512i; N],
    pairs: &[std::arch::x86_64::__m512i; N],
    filled: usize,
) {
    use std::arch::x86_64::*;
    let table = &INTERLEAVES[N];
    for (k, pair) in pairs.iter().enumerate() {
        if 16 * k >= filled * N {
            break;
        }
        let mut vector = _mm512_permutex2var_epi32(columns[0], *pair, columns[1 % N]);
        for p in 1..N.div_ceil(2) {
            let two = _mm512_permutex2var_epi32(columns[2 * p], *pair, columns[(2 * p + 1) % N]);
            vector = _mm512_mask_blend_epi32(table.lanes[k][p], vector, two);
        }
        _mm512_storeu_si512(at.add(64 * k).cast(), vector);
    }
}

/// Writes at `dst` the rows of consecutive words (word `k`'s bit `j` is element
/// `start + 64 k + j`, `start` a multiple of 64), calling `before(k)` before word `k`, while
/// `room` bytes hold a whole word's rows and the `64 * N` bytes a block may store past its
/// last row. Returns how many words it took and the bytes of rows written.
///
/// Each block of up to sixteen set bits: every level's coordinate and carry for all its
/// lanes at once, then the columns interleaved into `ceil(count * N / 16)` vectors of rows.
/// The blocks are a closure, not a function, so that they stay inlined in the word loop
/// with the levels' vectors in registers (a function of its own was not inlined).
///
/// # Safety
/// The CPU must support AVX-512 F and BW, and VBMI2 when `vbmi2`; `dst` must be valid for
/// `room` bytes of writes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2,popcnt,bmi1")]
#[inline]
pub(super) unsafe fn short_runs_avx512<const N: usize>(
    dst: *mut u8,
    room: usize,
    words: &[u64],
    start: usize,
    levels: &Levels,
    vbmi2: bool,
    mut before: impl FnMut(usize),
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let worst = 64 * 4 * N + 64 * N;
    let table = &INTERLEAVES[N];
    let pairs: [__m512i; N] =
        std::array::from_fn(|k| _mm512_loadu_si512(table.pairs[k].as_ptr().cast()));
    let sizes: [__m512i; N] = std::array::from_fn(|l| _mm512_set1_epi32(levels.sizes[l] as i32));
    let magic: [__m512i; N] = std::array::from_fn(|l| _mm512_set1_epi32(levels.magic[l] as i32));
    let small: [bool; N] = std::array::from_fn(|l| levels.magic[l] != 0);
    let count = levels.count.min(N);
    let one = _mm512_set1_epi32(1);
    // The rows of `filled` (1 to 16) elements at `positions` (lanes, under 64) past the
    // element of `coordinates`, stored at `at` (valid for `64 * N` bytes of writes).
    let block = |at: *mut u8, positions: __m512i, filled: u32, coordinates: &[u32; MAX_N]| {
        // Column `N - 1 - l` from level `l`; columns before the input's rank stay 0.
        let mut columns = [_mm512_setzero_si512(); N];
        let mut x = _mm512_add_epi32(positions, _mm512_set1_epi32(coordinates[0] as i32));
        for l in 0..N {
            if l == count {
                break;
            }
            let (carry, coordinate) = if small[l] {
                let carry = _mm512_srli_epi32::<16>(_mm512_mullo_epi32(x, magic[l]));
                (
                    carry,
                    _mm512_sub_epi32(x, _mm512_mullo_epi32(carry, sizes[l])),
                )
            } else {
                let over = _mm512_cmpge_epu32_mask(x, sizes[l]);
                (
                    _mm512_maskz_mov_epi32(over, one),
                    _mm512_mask_sub_epi32(x, over, x, sizes[l]),
                )
            };
            columns[N - 1 - l] = coordinate;
            if l + 1 < count {
                x = _mm512_add_epi32(carry, _mm512_set1_epi32(coordinates[l + 1] as i32));
            }
        }
        store_interleaved::<N>(at, &columns, &pairs, filled as usize);
    };
    let mut written = 0;
    for (k, &mask) in words.iter().enumerate() {
        if room - written < worst {
            return (k, written);
        }
        before(k);
        if mask == 0 {
            continue;
        }
        let coordinates = levels.at(start + 64 * k);
        // In bounds below: a block writes at most `64 * N` bytes from a row of this word,
        // and `worst` bytes remain from `written`.
        if vbmi2 {
            let mut positions = super::emit::set_bit_positions(mask);
            let mut left = mask.count_ones();
            let mut at = written;
            while left > 0 {
                let filled = left.min(16);
                let lanes = _mm512_cvtepu8_epi32(_mm512_castsi512_si128(positions));
                block(dst.add(at), lanes, filled, &coordinates);
                at += filled as usize * 4 * N;
                left -= filled;
                positions = _mm512_alignr_epi32::<4>(_mm512_setzero_si512(), positions);
            }
        } else {
            let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            let mut at = written;
            for quarter in 0..4 {
                let bits = (mask >> (16 * quarter)) as u16;
                if bits != 0 {
                    let offset = _mm512_set1_epi32(16 * quarter);
                    let lanes = _mm512_maskz_compress_epi32(bits, _mm512_add_epi32(iota, offset));
                    block(dst.add(at), lanes, bits.count_ones(), &coordinates);
                    at += bits.count_ones() as usize * 4 * N;
                }
            }
        }
        written += mask.count_ones() as usize * 4 * N;
    }
    (words.len(), written)
}

/// For rows of `N` columns built eight at a time under AVX2, the row of each lane of output
/// vector `k` (slots `8 k ..`, row-major): `(8 k + i) / N`, a `vpermd` index into every column.
/// Its column, `(8 k + i) % N`, is [`LANE_COLUMNS`](super::emit::LANE_COLUMNS)`[N][k][i]`.
/// A constant for each `N` once inlined.
#[inline(always)]
fn lane_rows<const N: usize>() -> [[u32; 8]; N] {
    std::array::from_fn(|k| std::array::from_fn(|i| ((8 * k + i) / N) as u32))
}

/// [`short_runs_avx512`] under AVX2: blocks of up to eight set bits, one lane per row. The
/// word's set-bit positions are listed first (eight bytes from a table per mask byte, the end
/// moved by the byte's bit count); each block of eight of them gets every level's coordinate
/// and carry at once, then its columns are interleaved into `N` vectors of rows (per vector,
/// one `vpermd` per column and a blend under the lanes that take it).
///
/// Followed run by run, a template row per run, rows of runs of 2 and 4 elements took about
/// 6 ns each on AMD Zen 3. There, one thread, calls alternated, medians of 9–11 (ms, run by
/// run → blocks): FLOAT32 `[276284, 2, 2]` 25 % 5.88 → 0.95, INT32 `[7, 5, 134804, 4]` 50 %
/// 110 → 30.0, UINT8 `[649984, 2]` 50 % 11.1 → 1.11; the longest runs gain least (UINT8
/// `[200000, 60]` 50 % 11.1 → 8.9, `[200000, 63]` 90 % 14.5 → 14.2).
///
/// # Safety
/// The CPU must support AVX2, POPCNT and BMI1; `dst` must be valid for `room` bytes of writes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,bmi1")]
#[inline]
pub(super) unsafe fn short_runs_avx2<const N: usize>(
    dst: *mut u8,
    room: usize,
    words: &[u64],
    start: usize,
    levels: &Levels,
    mut before: impl FnMut(usize),
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let worst = 64 * 4 * N + 32 * N;
    let load = |v: &[u32; 8]| _mm256_loadu_si256(v.as_ptr().cast::<__m256i>());
    let rows: [__m256i; N] = lane_rows::<N>().map(|rows| load(&rows));
    // Per output vector and column, all ones in the lanes that take that column.
    let takes: [[__m256i; N]; N] = std::array::from_fn(|k| {
        let columns = load(&super::emit::LANE_COLUMNS[N][k]);
        std::array::from_fn(|c| _mm256_cmpeq_epi32(columns, _mm256_set1_epi32(c as i32)))
    });
    let sizes: [__m256i; N] = std::array::from_fn(|l| _mm256_set1_epi32(levels.sizes[l] as i32));
    let magic: [__m256i; N] = std::array::from_fn(|l| _mm256_set1_epi32(levels.magic[l] as i32));
    let small: [bool; N] = std::array::from_fn(|l| levels.magic[l] != 0);
    let count = levels.count.min(N);
    let one = _mm256_set1_epi32(1);
    // The rows of eight elements at `positions` (lanes, under 64) past the element of
    // `coordinates`, stored at `at` (valid for `32 * N` bytes of writes).
    let block = |at: *mut u8, positions: __m256i, coordinates: &[u32; MAX_N]| {
        // Column `N - 1 - l` from level `l`; columns before the input's rank stay 0.
        let mut columns = [_mm256_setzero_si256(); N];
        let mut x = _mm256_add_epi32(positions, _mm256_set1_epi32(coordinates[0] as i32));
        for l in 0..N {
            if l == count {
                break;
            }
            let (carry, coordinate) = if small[l] {
                let carry = _mm256_srli_epi32::<16>(_mm256_mullo_epi32(x, magic[l]));
                (
                    carry,
                    _mm256_sub_epi32(x, _mm256_mullo_epi32(carry, sizes[l])),
                )
            } else {
                // `x` is under the size plus 64: at least the size exactly where the unsigned
                // maximum of the two is `x`.
                let over = _mm256_cmpeq_epi32(_mm256_max_epu32(x, sizes[l]), x);
                (
                    _mm256_and_si256(over, one),
                    _mm256_sub_epi32(x, _mm256_and_si256(over, sizes[l])),
                )
            };
            columns[N - 1 - l] = coordinate;
            if l + 1 < count {
                x = _mm256_add_epi32(carry, _mm256_set1_epi32(coordinates[l + 1] as i32));
            }
        }
        for (k, rows) in rows.iter().enumerate() {
            let mut vector = _mm256_permutevar8x32_epi32(columns[0], *rows);
            for (c, column) in columns.iter().enumerate().skip(1) {
                let picked = _mm256_permutevar8x32_epi32(*column, *rows);
                vector = _mm256_blendv_epi8(vector, picked, takes[k][c]);
            }
            _mm256_storeu_si256(at.add(32 * k).cast::<__m256i>(), vector);
        }
    };
    // The word's set-bit positions, eight bytes written per mask byte.
    let mut positions = [0u8; 64 + 8];
    let mut written = 0;
    for (k, &mask) in words.iter().enumerate() {
        if room - written < worst {
            return (k, written);
        }
        before(k);
        if mask == 0 {
            continue;
        }
        let coordinates = levels.at(start + 64 * k);
        let mut found = 0;
        for (i, byte) in mask.to_le_bytes().into_iter().enumerate() {
            let bits = u64::from_le_bytes(super::emit::SET_BITS[usize::from(byte)]);
            let offset = 0x0808_0808_0808_0808 * i as u64;
            // In bounds: `found` is at most 56 before the word's last byte.
            positions
                .as_mut_ptr()
                .add(found)
                .cast::<u64>()
                .write_unaligned(bits + offset);
            found += byte.count_ones() as usize;
        }
        // In bounds below: a block writes `32 * N` bytes from a row of this word, and `worst`
        // bytes remain from `written`.
        let mut at = written;
        for taken in (0..found).step_by(8) {
            let eight = _mm_loadl_epi64(positions.as_ptr().add(taken).cast::<__m128i>());
            block(dst.add(at), _mm256_cvtepu8_epi32(eight), &coordinates);
            at += (found - taken).min(8) * 4 * N;
        }
        written += found * 4 * N;
    }
    (words.len(), written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotients_are_exact_for_every_size_and_reachable_value() {
        for size in (1u32..200).chain([1000, (1 << 31) - 1]) {
            let levels = Levels::new(&[size as usize], 1).unwrap();
            for x in (0..size + 64).take(300).chain([size + 63]) {
                assert_eq!(levels.quotient(0, x), x / size, "{x} / {size}");
            }
        }
        assert!(Levels::new(&[1 << 31], 1).is_none());
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for size in (1u32..300).chain([1 << 16, 1_000_003, (1 << 31) - 1]) {
            let levels = Levels::new(&[size as usize], 1).unwrap();
            for _ in 0..200 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let x = state as u32;
                assert_eq!(levels.wide_quotient(0, x), x / size, "{x} / {size}");
            }
            let top = u32::MAX;
            assert_eq!(levels.wide_quotient(0, top), top / size, "{top} / {size}");
        }
    }

    #[test]
    fn coordinates_by_multiplication_match_dividing_the_element_index() {
        let shapes: [&[usize]; 6] = [
            &[7, 3, 2],
            &[5, 1, 1, 2],
            &[3, 200, 63],
            &[2, 64, 1],
            &[9, 100],
            &[3, 1_000_003, 1 << 10],
        ];
        for sizes in shapes {
            let total: usize = sizes.iter().product();
            for n in 1..=sizes.len() + 1 {
                let levels = Levels::new(sizes, n).unwrap();
                let near_ends = (0..total.min(5000)).chain(total.saturating_sub(5000)..total);
                // Past the last element (and past 2^32), the outermost level wraps.
                let beyond = [total, total + 63, (1 << 32) - 1, 1 << 32, (1 << 33) + 5];
                for flat in near_ends.chain((0..total).step_by(997)).chain(beyond) {
                    let expected = levels.of(flat);
                    assert_eq!(levels.at(flat), expected, "{sizes:?} n {n} flat {flat}");
                }
            }
        }
    }

    #[test]
    fn interleaving_puts_each_column_of_each_row_in_its_slot() {
        for (n, table) in INTERLEAVES.iter().enumerate().skip(1) {
            for slot in 0..16 * n {
                let (k, i) = (slot / 16, slot % 16);
                let (row, column) = (slot / n, slot % n);
                assert_eq!(table.pairs[k][i] as usize, row + 16 * (column % 2));
                let pairs: Vec<usize> = (0..MAX_N / 2)
                    .filter(|&p| table.lanes[k][p] >> i & 1 == 1)
                    .collect();
                assert_eq!(pairs, [column / 2]);
            }
        }
    }

    #[test]
    fn eight_row_interleaving_writes_the_rows_of_eight_columns_in_order() {
        // The kernel's steps in scalar: per output vector, `vpermd` of column 0 by the rows,
        // then per later column its `vpermd` blended in where `LANE_COLUMNS` names it.
        fn interleaved<const N: usize>() -> Vec<u32> {
            let columns: Vec<[u32; 8]> = (0..N)
                .map(|c| std::array::from_fn(|row| (100 * row + c) as u32))
                .collect();
            let mut rows_out = Vec::new();
            for (k, rows) in lane_rows::<N>().iter().enumerate() {
                let lane_columns = &crate::nonzero_coordinates::emit::LANE_COLUMNS[N][k];
                let mut vector = rows.map(|row| columns[0][row as usize]);
                for (c, column) in columns.iter().enumerate().skip(1) {
                    for (lane, &row) in rows.iter().enumerate() {
                        if lane_columns[lane] as usize == c {
                            vector[lane] = column[row as usize];
                        }
                    }
                }
                rows_out.extend(vector);
            }
            rows_out
        }
        let all = [
            interleaved::<1>(),
            interleaved::<2>(),
            interleaved::<3>(),
            interleaved::<4>(),
            interleaved::<5>(),
            interleaved::<6>(),
            interleaved::<7>(),
            interleaved::<8>(),
        ];
        for (rows_out, n) in all.iter().zip(1..) {
            let expected: Vec<u32> = (0..8 * n)
                .map(|slot| (100 * (slot / n) + slot % n) as u32)
                .collect();
            assert_eq!(*rows_out, expected, "rows of {n}");
        }
    }
}
