//! A short tail over one packed reduced dimension: an item is a small matrix of `rows`
//! reduced positions, `pitch` elements apart, of which the first `k` are the item's outputs
//! (a `[n, 34, 2]` INT32 reduced over its middle axis is 64k such items of 34 × 2).
//!
//! [`PackedTail::argmax`] reduces one item in registers: each vector holds `per_vector` whole
//! positions (`pitch` lanes each), lanes keep their best value and the number of the vector it
//! came from, and the `per_vector` lanes of each output are combined at the end. The general
//! widened fold ([`super::rows`]) does the same through running-key buffers and a list of
//! rows per item, which cost about 225 ns per item of 68 elements.

#[cfg(target_arch = "x86_64")]
use super::kernels::load_inside;
use super::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Bytes of the vectors the kernel reads.
const VECTOR_BYTES: usize = 32;

/// The shape of every item of a packed short tail, and the lanes the kernel keeps.
#[derive(Debug, Clone)]
pub(super) struct PackedTail {
    /// Outputs per item (the first `k` elements of each position).
    k: usize,
    /// Elements from one reduced position to the next (`k`, or more with padding).
    pitch: usize,
    /// Reduced positions per item.
    rows: usize,
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

impl PackedTail {
    /// The packed tail of `k` outputs over `rows` positions `pitch` elements apart, when the
    /// kernel applies: AVX2, a position fits a vector, and the vector numbers fit a lane.
    #[cfg(target_arch = "x86_64")]
    pub(super) fn new<T: Lanes>(isa: Isa, k: usize, pitch: usize, rows: usize) -> Option<Self> {
        let width = VECTOR_BYTES / T::SIZE;
        if !isa.avx2() || k == 0 || pitch < k || pitch > width || rows == 0 {
            return None;
        }
        let per_vector = width / pitch;
        // Vector numbers are kept in lanes of the element's width (255 for bytes).
        if rows.div_ceil(per_vector) > 255 {
            return None;
        }
        let vectors = rows.div_ceil(per_vector);
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
        Some(PackedTail {
            k,
            pitch,
            rows,
            per_vector,
            vectors,
            lanes,
            last_lanes,
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
            // SAFETY: `new` returned this only with AVX2; the item lies inside `data`
            // (asserted), and `positions` holds `k` entries (asserted).
            unsafe { self.argmax_avx2::<T, LAST>(data, start, positions) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (data, start, positions);
            unreachable!("PackedTail exists only on x86-64")
        }
    }

    /// [`Self::argmax`] with AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2; the item lies inside `data`; `positions.len() >= k`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn argmax_avx2<T: Lanes, const LAST: bool>(
        &self,
        data: &[u8],
        start: usize,
        positions: &mut [usize],
    ) -> bool {
        let step = self.per_vector * self.pitch * T::SIZE;
        let vectors = self.vectors;
        let lanes = _mm256_loadu_si256(self.lanes.as_ptr().cast());
        let last_lanes = _mm256_loadu_si256(self.last_lanes.as_ptr().cast());
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
        self.combine_lanes::<T, LAST>(&values, &numbers, positions);
        true
    }

    /// Combines each output's lanes (its element of each position of a vector): the greatest
    /// value, ties to the lowest position (the highest with `LAST`). A lane's position is its
    /// vector's number times the positions per vector, plus its place in the vector. Lanes of
    /// positions past the item (when it is shorter than a vector) never held an element.
    fn combine_lanes<T: Lanes, const LAST: bool>(
        &self,
        values: &[u8; VECTOR_BYTES],
        numbers: &[u8; VECTOR_BYTES],
        positions: &mut [usize],
    ) {
        let held = self.per_vector.min(self.rows);
        for (output, position) in positions[..self.k].iter_mut().enumerate() {
            let mut best: Option<(T::Key, usize)> = None;
            for place in 0..held {
                let byte = (place * self.pitch + output) * T::SIZE;
                let key = T::lane_key(&values[byte..byte + T::SIZE]);
                let number = T::lane_index(&numbers[byte..byte + T::SIZE]);
                let at = number * self.per_vector + place;
                let take = match best {
                    None => true,
                    Some((k, p)) => key > k || (key == k && if LAST { at > p } else { at < p }),
                };
                if take {
                    best = Some((key, at));
                }
            }
            *position = best.map_or(0, |(_, at)| at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// Checks every item shape up to a vector's width over `bytes`, items at the start and
    /// the very end of the buffer, both directions; NaN items may only be refused.
    fn check<T: Lanes>(bytes: &[u8]) {
        let Some(isa) = Isa::available().into_iter().find(|isa| isa.avx2()) else {
            return;
        };
        let width = VECTOR_BYTES / T::SIZE;
        let elements = bytes.len() / T::SIZE;
        for pitch in 1..=width {
            for k in 1..=pitch {
                for rows in [1, 2, 3, 5, 8, 17, 34, 40, 100] {
                    let Some(tail) = PackedTail::new::<T>(isa, k, pitch, rows) else {
                        continue;
                    };
                    let span = (rows - 1) * pitch + k;
                    if span > elements {
                        continue;
                    }
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
                                "k {k} pitch {pitch} rows {rows} start {start} last {last}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Elements drawn from a small set (many ties) with a seeded generator.
    fn elements<T: Lanes>(count: usize, seed: u64, pick: impl Fn(u64) -> T) -> Vec<u8> {
        let mut state = seed;
        let mut bytes = vec![0u8; count * T::SIZE];
        for dst in bytes.chunks_exact_mut(T::SIZE) {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            pick(state >> 33).write(dst);
        }
        bytes
    }

    #[test]
    fn packed_items_agree_with_exact_keys_for_every_type() {
        for seed in 0..3 {
            let n = 2000;
            check::<u8>(&elements(n, seed, |r| (r % 5) as u8 * 63));
            check::<i8>(&elements(n, seed, |r| ((r % 5) as i16 * 60 - 128) as i8));
            check::<u16>(&elements(n, seed, |r| (r % 7) as u16 * 9000));
            check::<i16>(&elements(n, seed, |r| (r % 7) as i16 * 9000 - 30000));
            check::<u32>(&elements(n, seed, |r| (r % 9) as u32 * 500_000_000));
            check::<i32>(&elements(n, seed, |r| {
                (r % 9) as i32 - 4 + i32::MIN * (r % 2 == 0) as i32
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
        let Some(isa) = Isa::available().into_iter().find(|isa| isa.avx2()) else {
            return;
        };
        let bytes = elements::<i32>(64, 0, |_| i32::MIN);
        let tail = PackedTail::new::<i32>(isa, 2, 3, 5).expect("applies");
        let mut got = [0; 2];
        assert!(tail.argmax::<i32, true>(&bytes, 0, &mut got));
        assert_eq!(got, [4, 4]);
        assert!(tail.argmax::<i32, false>(&bytes, 0, &mut got));
        assert_eq!(got, [0, 0]);
    }
}
