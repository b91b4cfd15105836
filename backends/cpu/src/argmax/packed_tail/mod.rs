//! A short tail over one packed reduced dimension: an item is a small matrix of `rows`
//! reduced positions, `pitch` elements apart, of which the first `k` are the item's outputs
//! (a `[n, 34, 2]` INT32 reduced over its middle axis is 64k such items of 34 × 2; a permuted
//! `[2, n, 9, 8]` FLOAT32 over its last axis, `n` items of 8 × 18).
//!
//! [`PackedTail::argmax`] reduces one item in registers, with no state between items:
//!
//! - *narrow* (a position fits a vector): each vector holds `per_vector` whole positions
//!   (`pitch` lanes each), lanes keep their best value and the number of the vector it came
//!   from, and the `per_vector` lanes of each output are combined at the end (with AVX-512,
//!   in 64-byte vectors and in registers, short items several at a time: [`narrow_avx512`]);
//! - *wide* (up to [`WIDE_MAX_VECTORS`] vectors per position): each position's `k` elements
//!   are read as a few vectors, the last overlapping the one before, and each lane keeps its
//!   best value and the position it came from, so that every lane is an output.
//!
//! The general paths did the same through running-key buffers and a list of rows per item
//! (about 225 ns per item of 34 × 2), or, for a wide tail, spanned every item's lanes with
//! the reduced positions between them (reading the input once per position).

#[cfg(target_arch = "x86_64")]
mod narrow_avx512;

#[cfg(target_arch = "x86_64")]
use super::avx512::Avx512Fold;
#[cfg(target_arch = "x86_64")]
use super::kernels::load_inside;
#[cfg(target_arch = "x86_64")]
use super::kernels::FoldVectors;
use super::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use narrow_avx512::Narrow512;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes of the vectors the kernel reads.
const VECTOR_BYTES: usize = 32;

/// Vectors per position of a wide tail, at most (256 bytes).
pub(super) const WIDE_MAX_VECTORS: usize = 8;

/// Bytes of a wide tail's row numbers ([`PackedTail::row_numbers`]): a position's.
pub(super) const WIDE_NUMBER_BYTES: usize = WIDE_MAX_VECTORS * VECTOR_BYTES;

/// Vectors kept in registers at once by the wide kernel (a best value and a position each);
/// a wider position is taken in groups of columns, each reading the item again (from cache).
#[cfg(target_arch = "x86_64")]
const WIDE_GROUP: usize = 4;

/// The shape of every item of a packed short tail, and how the kernel reads it.
#[derive(Debug, Clone)]
pub(super) struct PackedTail {
    /// Outputs per item (the first `k` elements of each position).
    k: usize,
    /// Elements from one reduced position to the next (`k`, or more with padding).
    pitch: usize,
    /// Reduced positions per item.
    rows: usize,
    /// How a position lies in vectors.
    form: Form,
    /// A wide tail is read in 64-byte vectors ([`Self::wide_avx512`]): the CPU has AVX-512.
    wide_512: bool,
    /// A narrow tail's form in 64-byte vectors, when the CPU has what it needs.
    #[cfg(target_arch = "x86_64")]
    narrow_512: Option<Narrow512>,
}

/// How the kernel reads a position.
#[derive(Debug, Clone)]
enum Form {
    /// Several positions per vector.
    Narrow(Narrow),
    /// A position in several vectors.
    Wide(Wide),
}

/// A narrow tail's lanes.
#[derive(Debug, Clone)]
struct Narrow {
    /// Whole positions per vector.
    per_vector: usize,
    /// Vectors per item.
    vectors: usize,
    /// All ones in the bytes of lanes holding an output's element (not padding, not the
    /// part of a position cut off at the vector's end).
    lanes: [u8; VECTOR_BYTES],
    /// [`Self::lanes`] of the last vector, without the positions past the item.
    last_lanes: [u8; VECTOR_BYTES],
}

/// A wide tail's vectors.
#[derive(Debug, Clone)]
struct Wide {
    /// Byte offset of each vector in a position (the last ends at the `k`-th element, or, for
    /// a position shorter than a vector, every vector starts at 0).
    offsets: [usize; WIDE_MAX_VECTORS],
    /// Vectors per position.
    count: usize,
    /// All ones in the bytes of a single vector's lanes holding an output's element (all of
    /// them when `k` fills a vector).
    lanes: [u8; VECTOR_BYTES],
}

#[cfg(target_arch = "x86_64")]
impl Narrow {
    fn new<T: Lanes>(k: usize, pitch: usize, rows: usize) -> Option<Narrow> {
        let per_vector = VECTOR_BYTES / T::SIZE / pitch;
        let vectors = rows.div_ceil(per_vector);
        if vectors > most_numbers::<T>() {
            return None;
        }
        let last_positions = rows - (vectors - 1) * per_vector;
        let (mut lanes, mut last_lanes) = ([0u8; VECTOR_BYTES], [0u8; VECTOR_BYTES]);
        for lane in 0..per_vector * pitch {
            if lane % pitch < k {
                let bytes = lane * T::SIZE..(lane + 1) * T::SIZE;
                lanes[bytes.clone()].fill(0xff);
                if lane < last_positions * pitch {
                    last_lanes[bytes].fill(0xff);
                }
            }
        }
        Some(Narrow {
            per_vector,
            vectors,
            lanes,
            last_lanes,
        })
    }
}

#[cfg(target_arch = "x86_64")]
impl Wide {
    fn new<T: Lanes>(k: usize, rows: usize) -> Option<Wide> {
        let bytes = k * T::SIZE;
        let count = bytes.div_ceil(VECTOR_BYTES);
        // Position numbers are kept in lanes of the element's width.
        if count > WIDE_MAX_VECTORS || rows > 256 {
            return None;
        }
        let mut offsets = [0; WIDE_MAX_VECTORS];
        for (i, offset) in offsets[..count].iter_mut().enumerate() {
            *offset = (i * VECTOR_BYTES).min(bytes.saturating_sub(VECTOR_BYTES));
        }
        let mut lanes = [0u8; VECTOR_BYTES];
        lanes[..bytes.min(VECTOR_BYTES)].fill(0xff);
        Some(Wide {
            offsets,
            count,
            lanes,
        })
    }
}

impl PackedTail {
    /// The packed tail of `k` outputs over `rows` positions `pitch` elements apart, when a
    /// kernel applies: AVX2, at most [`WIDE_MAX_VECTORS`] vectors per position, and the vector
    /// or position numbers fit a lane ([`most_numbers`]; the wide form keeps 256 rows).
    #[cfg(target_arch = "x86_64")]
    pub(super) fn new<T: Lanes>(isa: Isa, k: usize, pitch: usize, rows: usize) -> Option<Self> {
        let width = VECTOR_BYTES / T::SIZE;
        if !isa.avx2() || k == 0 || pitch < k || rows == 0 {
            return None;
        }
        let form = if pitch <= width {
            Form::Narrow(Narrow::new::<T>(k, pitch, rows)?)
        } else {
            Form::Wide(Wide::new::<T>(k, rows)?)
        };
        let narrow_512 = (isa == Isa::Avx512 && matches!(form, Form::Narrow(_)))
            .then(|| Narrow512::new::<T>(k, pitch, rows))
            .flatten();
        Some(PackedTail {
            k,
            pitch,
            rows,
            wide_512: isa == Isa::Avx512 && matches!(form, Form::Wide(_)),
            narrow_512,
            form,
        })
    }

    /// No kernel off x86-64.
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn new<T: Lanes>(
        _isa: crate::simd::Isa,
        _k: usize,
        _pitch: usize,
        _rows: usize,
    ) -> Option<Self> {
        None
    }

    /// Writes into `positions[..k]` the reduced position of each output's first (or, with
    /// `LAST`, last) maximum in the item whose first element is at byte `start` of `data`.
    /// Returns false, with `positions` meaningless, when a NaN appears (the compare domain
    /// does not order it); the caller then reduces the item exactly.
    ///
    /// # Panics
    /// If the item does not lie inside `data`, or `positions` is shorter than `k`.
    pub(super) fn argmax<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        start: usize,
        positions: &mut [usize],
    ) -> bool {
        let end = start + ((self.rows - 1) * self.pitch + self.k) * T::SIZE;
        assert!(end <= data.len(), "PackedTail: item outside the input");
        assert!(positions.len() >= self.k, "PackedTail: too few positions");
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `new` returned this only with AVX2, and set `wide_512` and `narrow_512`
            // only with `Isa::Avx512` (AVX-512 F and BW; `Narrow512::new` checks VBMI for
            // bytes); the item lies inside `data` (asserted), and `positions` holds `k`
            // entries (asserted).
            unsafe {
                match &self.form {
                    Form::Narrow(_) if self.narrow_512.is_some() => {
                        let narrow = self.narrow_512.as_ref().expect("matched");
                        let item = [data.as_ptr().add(start)];
                        narrow.argmax::<T, LAST, 1>(self.k, item, positions) == 0
                    }
                    Form::Narrow(narrow) => {
                        self.narrow_avx2::<T, LAST>(narrow, data, start, positions)
                    }
                    Form::Wide(_) if self.wide_512 => {
                        let mut numbers = [0u8; WIDE_NUMBER_BYTES];
                        let clean = self.wide_avx512::<T, LAST>(data, start, &mut numbers);
                        for (column, position) in positions[..self.k].iter_mut().enumerate() {
                            let lane = &numbers[column * T::SIZE..(column + 1) * T::SIZE];
                            *position = T::lane_index(lane);
                        }
                        clean
                    }
                    Form::Wide(wide) => self.wide_avx2::<T, LAST>(wide, data, start, positions),
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (data, start, positions);
            unreachable!("PackedTail exists only on x86-64")
        }
    }

    /// Whether [`Self::argmax_items`] reduces its items together (short items of a narrow
    /// tail with AVX-512), rather than one after the other.
    pub(super) fn interleaves(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            self.narrow_512.as_ref().is_some_and(Narrow512::interleaves)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// [`Self::argmax`] of the `N` items at byte `starts[i]` of `data`, item `i`'s positions
    /// into `positions[i * k..][..k]`. Bit `i` of the result is set when item `i` held a NaN
    /// (its positions then meaningless).
    ///
    /// # Panics
    /// If an item does not lie inside `data`, or `positions` is shorter than `N * k`.
    pub(super) fn argmax_items<T: Lanes, const LAST: bool, const N: usize>(
        &self,
        data: &[u8],
        starts: [usize; N],
        positions: &mut [usize],
    ) -> u32 {
        let span = ((self.rows - 1) * self.pitch + self.k) * T::SIZE;
        for &start in &starts {
            assert!(
                start + span <= data.len(),
                "PackedTail: item outside the input"
            );
        }
        assert!(
            positions.len() >= N * self.k,
            "PackedTail: too few positions"
        );
        #[cfg(target_arch = "x86_64")]
        if let Some(narrow) = &self.narrow_512 {
            let items = starts.map(|start| data[start..].as_ptr());
            // SAFETY: `narrow_512` is set only with `Isa::Avx512` (AVX-512 F and BW;
            // `Narrow512::new` checks VBMI for bytes); each item lies inside `data`
            // (asserted), and `positions` holds `N * k` entries (asserted).
            return unsafe { narrow.argmax::<T, LAST, N>(self.k, items, positions) };
        }
        let mut refused = 0;
        for (i, &start) in starts.iter().enumerate() {
            let out = &mut positions[i * self.k..(i + 1) * self.k];
            if !self.argmax::<T, LAST>(data, start, out) {
                refused |= 1 << i;
            }
        }
        refused
    }

    /// [`Self::argmax`] of a narrow tail, with AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2; the item lies inside `data`; `positions.len() >= k`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn narrow_avx2<T: Lanes, const LAST: bool>(
        &self,
        narrow: &Narrow,
        data: &[u8],
        start: usize,
        positions: &mut [usize],
    ) -> bool {
        let step = narrow.per_vector * self.pitch * T::SIZE;
        let vectors = narrow.vectors;
        let lanes = _mm256_loadu_si256(narrow.lanes.as_ptr().cast());
        let last_lanes = _mm256_loadu_si256(narrow.last_lanes.as_ptr().cast());
        let mut best = T::lowest();
        let mut number = _mm256_setzero_si256();
        let mut nan = _mm256_setzero_si256();
        for j in 0..vectors {
            let mut v = load_inside::<T>(data, start + j * step);
            let valid = if j + 1 == vectors {
                // The positions past the item must not reach the lanes' maxima.
                v = _mm256_blendv_epi8(T::lowest(), v, last_lanes);
                last_lanes
            } else {
                lanes
            };
            let take = if LAST {
                _mm256_andnot_si256(T::gt(best, v), valid)
            } else {
                _mm256_and_si256(T::gt(v, best), valid)
            };
            number = _mm256_blendv_epi8(number, T::splat_index(j as u32), take);
            // Padding lanes take any value: they are never read.
            best = T::max(best, v);
            if T::CAN_NAN {
                nan = _mm256_or_si256(nan, _mm256_and_si256(T::nan(v), valid));
            }
        }
        if T::CAN_NAN && _mm256_testz_si256(nan, nan) == 0 {
            return false;
        }
        let (mut values, mut numbers) = ([0u8; VECTOR_BYTES], [0u8; VECTOR_BYTES]);
        _mm256_storeu_si256(values.as_mut_ptr().cast(), best);
        _mm256_storeu_si256(numbers.as_mut_ptr().cast(), number);
        self.combine_lanes::<T, LAST>(narrow.per_vector, &values, &numbers, positions);
        true
    }

    /// [`Self::argmax`] of a wide tail, with AVX2: the position's vectors a group at a time.
    ///
    /// # Safety
    /// The CPU must support AVX2; the item lies inside `data`; `positions.len() >= k`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn wide_avx2<T: Lanes, const LAST: bool>(
        &self,
        wide: &Wide,
        data: &[u8],
        start: usize,
        positions: &mut [usize],
    ) -> bool {
        for group in wide.offsets[..wide.count].chunks(WIDE_GROUP) {
            let clean = match *group {
                [a] => self.wide_group_avx2::<T, LAST, 1>(wide, data, start, [a], positions),
                [a, b] => self.wide_group_avx2::<T, LAST, 2>(wide, data, start, [a, b], positions),
                [a, b, c] => {
                    self.wide_group_avx2::<T, LAST, 3>(wide, data, start, [a, b, c], positions)
                }
                [a, b, c, d] => {
                    self.wide_group_avx2::<T, LAST, 4>(wide, data, start, [a, b, c, d], positions)
                }
                _ => unreachable!("groups of 1 to {WIDE_GROUP} vectors"),
            };
            if !clean {
                return false;
            }
        }
        true
    }

    /// The columns of a wide tail under the `V` vectors at byte `offsets` of each position:
    /// each lane keeps its best value and the position it came from (the first greater one,
    /// or, with `LAST`, the last one not smaller), and that position is its column's.
    ///
    /// # Safety
    /// As [`Self::wide_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn wide_group_avx2<T: Lanes, const LAST: bool, const V: usize>(
        &self,
        wide: &Wide,
        data: &[u8],
        start: usize,
        offsets: [usize; V],
        positions: &mut [usize],
    ) -> bool {
        let mut best = [T::lowest(); V];
        let mut number = [_mm256_setzero_si256(); V];
        let mut nan = _mm256_setzero_si256();
        let pitch = self.pitch * T::SIZE;
        for r in 0..self.rows {
            let row = start + r * pitch;
            let here = T::splat_index(r as u32);
            for i in 0..V {
                let v = load_inside::<T>(data, row + offsets[i]);
                let take = if LAST {
                    _mm256_xor_si256(T::gt(best[i], v), _mm256_set1_epi8(-1))
                } else {
                    T::gt(v, best[i])
                };
                number[i] = _mm256_blendv_epi8(number[i], here, take);
                best[i] = T::max(best[i], v);
                if T::CAN_NAN {
                    nan = _mm256_or_si256(nan, T::nan(v));
                }
            }
        }
        if T::CAN_NAN {
            // A position shorter than a vector reads lanes past it: their NaNs do not count.
            let lanes = _mm256_loadu_si256(wide.lanes.as_ptr().cast());
            let nan = _mm256_and_si256(nan, lanes);
            if _mm256_testz_si256(nan, nan) == 0 {
                return false;
            }
        }
        for i in 0..V {
            let mut numbers = [0u8; VECTOR_BYTES];
            _mm256_storeu_si256(numbers.as_mut_ptr().cast(), number[i]);
            let first = offsets[i] / T::SIZE;
            let columns = (self.k - first).min(VECTOR_BYTES / T::SIZE);
            for (lane, position) in positions[first..first + columns].iter_mut().enumerate() {
                *position = T::lane_index(&numbers[lane * T::SIZE..(lane + 1) * T::SIZE]);
            }
        }
        true
    }

    /// Whether [`Self::row_numbers`] serves this tail (a wide one, with AVX-512).
    pub(super) fn has_row_numbers(&self) -> bool {
        self.wide_512
    }

    /// [`Self::argmax`] as row numbers: `numbers` holds each output's position as a lane of
    /// `T`'s width (column `c` at byte `c * T::SIZE`), for [`crate::argmax::Outputs`]'
    /// vector stores. Returns false, with `numbers` meaningless, when a NaN appears.
    ///
    /// # Panics
    /// If the item does not lie inside `data`, or the tail has no row numbers
    /// ([`Self::has_row_numbers`]).
    #[cfg(target_arch = "x86_64")]
    pub(super) fn row_numbers<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        start: usize,
        numbers: &mut [u8; WIDE_NUMBER_BYTES],
    ) -> bool {
        let end = start + ((self.rows - 1) * self.pitch + self.k) * T::SIZE;
        assert!(end <= data.len(), "PackedTail: item outside the input");
        assert!(
            self.wide_512,
            "PackedTail: row numbers need a wide tail and AVX-512"
        );
        // SAFETY: `wide_512` is set only with `Isa::Avx512` (AVX-512 F and BW); the item lies
        // inside `data` (asserted).
        unsafe { self.wide_avx512::<T, LAST>(data, start, numbers) }
    }

    /// [`Self::argmax`] of a wide tail with AVX-512: a position's `k` elements in up to four
    /// 64-byte vectors (the last overlapping the one before; a position under 64 bytes read
    /// under a byte mask), all kept in registers with a mask register choosing the lanes that
    /// take each row's number.
    ///
    /// The AVX2 kernel reads up to twice as many vectors and blends numbers with
    /// `vpblendvb`: on one AMD Zen 4 core, ArgMax INT32 `[9016, 10, 30]` over axis 1 took
    /// 0.84 ms, 41 % of it in that kernel (`perf`).
    ///
    /// # Safety
    /// The CPU must support AVX-512 F and BW; the item lies inside `data`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn wide_avx512<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        start: usize,
        numbers: &mut [u8; WIDE_NUMBER_BYTES],
    ) -> bool {
        let bytes = self.k * T::SIZE;
        match bytes.div_ceil(64) {
            1 => self.wide_group_avx512::<T, LAST, 1>(data, start, numbers),
            2 => self.wide_group_avx512::<T, LAST, 2>(data, start, numbers),
            3 => self.wide_group_avx512::<T, LAST, 3>(data, start, numbers),
            4 => self.wide_group_avx512::<T, LAST, 4>(data, start, numbers),
            _ => unreachable!("a wide position is at most {WIDE_MAX_VECTORS} 32-byte vectors"),
        }
    }

    /// [`Self::wide_avx512`] with `V` vectors per position: each lane keeps its best value
    /// and the row it came from (the first greater one, or, with `LAST`, the last one not
    /// smaller), and that row is its column's position, stored at the vector's offset in
    /// `numbers` (an overlapping vector writes the same numbers again).
    ///
    /// # Safety
    /// As [`Self::wide_avx512`].
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn wide_group_avx512<T: Lanes, const LAST: bool, const V: usize>(
        &self,
        data: &[u8],
        start: usize,
        numbers: &mut [u8; WIDE_NUMBER_BYTES],
    ) -> bool {
        let bytes = self.k * T::SIZE;
        // Byte offsets of the vectors in a position, and the bytes a lone short one reads.
        let offsets: [usize; V] = std::array::from_fn(|i| (64 * i).min(bytes.saturating_sub(64)));
        let short = if bytes < 64 {
            (1u64 << bytes) - 1
        } else {
            u64::MAX
        };
        let lowest = _mm512_broadcast_i64x4(T::lowest());
        let mut best = [lowest; V];
        let mut number = [_mm512_setzero_si512(); V];
        let mut nan = 0u64;
        let pitch = self.pitch * T::SIZE;
        let base = data.as_ptr().add(start);
        for r in 0..self.rows {
            let row = base.add(r * pitch);
            let here = _mm512_broadcast_i64x4(T::splat_index(r as u32));
            for i in 0..V {
                // In bounds: a position of 64 bytes or more holds every vector; a shorter one
                // is read under `short`, which does not touch the bytes past it.
                let raw = _mm512_maskz_loadu_epi8(short, row.add(offsets[i]).cast());
                let v = T::domain512(raw);
                Avx512Fold::fold::<T, LAST>(&mut best[i], &mut number[i], v, here);
                if T::CAN_NAN {
                    nan |= T::nan_mask512(v);
                }
            }
        }
        // A lane past a short position read a zero, never a NaN.
        if T::CAN_NAN && nan != 0 {
            return false;
        }
        for i in 0..V {
            // In bounds: the last vector ends at `bytes`, at most WIDE_NUMBER_BYTES, or, for
            // a lone short one, at 64.
            _mm512_storeu_si512(numbers[offsets[i]..][..64].as_mut_ptr().cast(), number[i]);
        }
        true
    }

    /// Combines each output's lanes of a narrow tail (its element of each of the `per_vector`
    /// positions of a vector): the greatest value, ties to the lowest position (the highest
    /// with `LAST`). A lane's position is its vector's number times the positions per vector,
    /// plus its place in the vector. Lanes of positions past the item (when it is shorter than
    /// a vector) never held an element.
    fn combine_lanes<T: Lanes, const LAST: bool>(
        &self,
        per_vector: usize,
        values: &[u8; VECTOR_BYTES],
        numbers: &[u8; VECTOR_BYTES],
        positions: &mut [usize],
    ) {
        let held = per_vector.min(self.rows);
        let lane = |output: usize, place: usize| {
            let byte = (place * self.pitch + output) * T::SIZE;
            let key = T::lane_key(&values[byte..byte + T::SIZE]);
            let number = T::lane_index(&numbers[byte..byte + T::SIZE]);
            (key, number * per_vector + place)
        };
        for (output, position) in positions[..self.k].iter_mut().enumerate() {
            // Selects rather than branches: on random data the winner is a coin toss, and
            // mispredicted branches cost UINT8 `[n, 10, 3]` over axis 1 about 3 ns a lane.
            let (mut key, mut at) = lane(output, 0);
            for place in 1..held {
                let (k, p) = lane(output, place);
                let take = k > key || (k == key && if LAST { p > at } else { p < at });
                key = if take { k } else { key };
                at = if take { p } else { at };
            }
            *position = at;
        }
    }
}

/// The most vectors a narrow item may span: their numbers are kept in lanes of the element's
/// width (255 for bytes, 65535 for two-byte elements). A cap of 255 for every type left
/// FLOAT32 `[3448, 554, 8]` over axis 1 (277 vectors an item) to the widened fold, at 2.9 of
/// the floor.
#[cfg(target_arch = "x86_64")]
fn most_numbers<T: Lanes>() -> usize {
    match T::SIZE {
        1 => 255,
        2 => 65535,
        _ => u32::MAX as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tensors::seeded_values as elements;
    use half::f16;

    /// The reference: each output's position by exact keys.
    fn reference<T: Lanes>(
        data: &[u8],
        start: usize,
        k: usize,
        pitch: usize,
        rows: usize,
        last: bool,
    ) -> Vec<usize> {
        (0..k)
            .map(|output| {
                let key = |r: usize| {
                    let at = start + (r * pitch + output) * T::SIZE;
                    T::read(&data[at..at + T::SIZE]).key()
                };
                let mut best = 0;
                for r in 1..rows {
                    if key(r) > key(best) || (last && key(r) == key(best)) {
                        best = r;
                    }
                }
                best
            })
            .collect()
    }

    /// The instruction sets the kernels run with here (AVX2, and AVX-512 where the CPU has it).
    fn kernel_isas() -> Vec<Isa> {
        Isa::available()
            .into_iter()
            .filter(|isa| isa.avx2())
            .collect()
    }

    /// Checks every item shape up to a vector's width over `bytes` with every kernel, items
    /// at the start and the very end of the buffer, both directions; NaN items may only be
    /// refused.
    fn check<T: Lanes>(bytes: &[u8]) {
        for isa in kernel_isas() {
            check_with::<T>(isa, bytes);
        }
    }

    /// [`check`] with the kernels of `isa`.
    fn check_with<T: Lanes>(isa: Isa, bytes: &[u8]) {
        let width = VECTOR_BYTES / T::SIZE;
        let elements = bytes.len() / T::SIZE;
        // Positions of one to four 64-byte vectors too (up to 8 * width elements).
        let pitches = (1..=width).chain([
            width + 1,
            2 * width - 1,
            3 * width + 2,
            6 * width,
            8 * width,
        ]);
        for pitch in pitches {
            let ks = (1..=pitch.min(width + 2))
                .chain([pitch - 1, pitch].into_iter().filter(|&k| k > width + 2));
            for k in ks {
                for rows in [1, 2, 3, 5, 8, 17, 34, 40, 100, 256, 300, 520] {
                    let Some(tail) = PackedTail::new::<T>(isa, k, pitch, rows) else {
                        continue;
                    };
                    let span = (rows - 1) * pitch + k;
                    if span > elements {
                        continue;
                    }
                    check_items_together::<T>(&tail, bytes, span, (k, pitch, rows));
                    for start in [0, elements - span, (elements - span) / 2] {
                        for last in [false, true] {
                            let mut got = vec![usize::MAX; k];
                            let clean = if last {
                                tail.argmax::<T, true>(bytes, start * T::SIZE, &mut got)
                            } else {
                                tail.argmax::<T, false>(bytes, start * T::SIZE, &mut got)
                            };
                            if !clean {
                                assert!(T::CAN_NAN, "refused without a NaN");
                                continue;
                            }
                            let want = reference::<T>(bytes, start * T::SIZE, k, pitch, rows, last);
                            assert_eq!(
                                got, want,
                                "{isa:?}: k {k} pitch {pitch} rows {rows} start {start} \
                                 last {last}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// [`PackedTail::argmax_items`] on four items of `span` elements (the first, the last,
    /// and two between, which may overlap) against the reference, both directions: only an
    /// item holding a NaN may be refused, and only its bit.
    fn check_items_together<T: Lanes>(
        tail: &PackedTail,
        bytes: &[u8],
        span: usize,
        (k, pitch, rows): (usize, usize, usize),
    ) {
        let end = bytes.len() / T::SIZE - span;
        let starts = [0, end, end / 2, end / 3].map(|start| start * T::SIZE);
        for last in [false, true] {
            let mut got = vec![usize::MAX; 4 * k];
            let refused = if last {
                tail.argmax_items::<T, true, 4>(bytes, starts, &mut got)
            } else {
                tail.argmax_items::<T, false, 4>(bytes, starts, &mut got)
            };
            for (i, &start) in starts.iter().enumerate() {
                let elements = &bytes[start..start + span * T::SIZE];
                let has_nan = elements
                    .chunks(T::SIZE)
                    .any(|e| T::read(e).key() == T::nan_key());
                if refused & 1 << i != 0 {
                    assert!(has_nan, "item {i} refused without a NaN");
                    continue;
                }
                let want = reference::<T>(bytes, start, k, pitch, rows, last);
                assert_eq!(
                    got[i * k..(i + 1) * k],
                    want[..],
                    "items together: item {i} k {k} pitch {pitch} rows {rows} last {last}"
                );
            }
        }
    }

    #[test]
    fn packed_items_agree_with_exact_keys_for_every_type() {
        for seed in 0..3 {
            let n = 2000;
            check::<u8>(&elements(n, seed, |r| (r % 5) as u8 * 63));
            check::<i8>(&elements(n, seed, |r| ((r % 5) as i16 * 60 - 128) as i8));
            check::<u16>(&elements(n, seed, |r| (r % 7) as u16 * 9000));
            check::<i16>(&elements(n, seed, |r| {
                ((r % 7) as i32 * 9000 - 27000) as i16
            }));
            check::<u32>(&elements(n, seed, |r| (r % 9) as u32 * 500_000_000));
            check::<i32>(&elements(n, seed, |r| {
                if r % 2 == 0 {
                    i32::MIN + (r % 9) as i32
                } else {
                    (r % 9) as i32 - 4
                }
            }));
            check::<u64>(&elements(n, seed, |r| (r % 5) << 62));
            check::<i64>(&elements(n, seed, |r| (r % 5) as i64 - 2));
            check::<f32>(&elements(n, seed, |r| {
                [-1.0, 0.0, -0.0, 2.5, f32::NEG_INFINITY][r as usize % 5]
            }));
            check::<f64>(&elements(n, seed, |r| {
                [-1.0, 0.0, -0.0, 2.5, f64::MIN][r as usize % 5]
            }));
            check::<f16>(&elements(n, seed, |r| {
                f16::from_f32([-1.0, 0.0, -0.0, 2.5, -65504.0][r as usize % 5])
            }));
            check::<f32>(&elements(n, seed, |r| {
                if r % 50 == 0 {
                    f32::NAN
                } else {
                    (r % 3) as f32
                }
            }));
        }
    }

    #[test]
    fn items_of_the_lowest_value_take_the_first_or_last_position() {
        let bytes = elements::<i32>(256, 0, |_| i32::MIN);
        // Narrow (2 of 3 lanes) and wide (20 elements: one 64-byte vector, two 32-byte ones).
        for isa in kernel_isas() {
            for (k, pitch) in [(2, 3), (20, 21)] {
                let tail = PackedTail::new::<i32>(isa, k, pitch, 5).expect("applies");
                let mut got = vec![0; k];
                assert!(tail.argmax::<i32, true>(&bytes, 0, &mut got));
                assert_eq!(got, vec![4; k], "{isa:?}, k {k}");
                assert!(tail.argmax::<i32, false>(&bytes, 0, &mut got));
                assert_eq!(got, vec![0; k], "{isa:?}, k {k}");
            }
        }
    }
}
