//! ArgMax over padded ranges: an output whose reduced elements are `rows` runs of `run`
//! contiguous elements at a pitch of `pitch` elements (a padded tensor reduced over every
//! axis, its runs visited in index order), where the padding is thin enough that reading it
//! costs little: the whole span is read 64 bytes at a time, each vector's elements of the runs
//! packed into an L1 buffer with one AVX-512 compress (its mask depends only on where the
//! vector starts within a pitch), and each buffer reduced as one contiguous range
//! ([`block_max`], then [`locate`] only where its maximum reaches the best so far). Walked run
//! by run instead, a run of two elements cost a call of its own: UINT8 [575, 1751, 2] at a
//! pitch of 8 took 1.5 ms, five times ONNX Runtime on the packed tensor.

use super::kernels::{block_max, locate, Piece};
use super::lanes::Lanes;
use super::plan::Dim;
use super::rows::combine;
use crate::simd::{has_avx512_vbmi2, Isa};

/// The widest pitch, in elements, that [`Padded::new`] takes (its mask table has one entry per
/// element of a pitch).
const MAX_PITCH: usize = 1024;

/// How far ahead of the vector being packed the input is prefetched.
const PREFETCH_BYTES: usize = 1024;

/// Bytes of packed elements reduced at a time (they stay in the L1 cache).
const PACKED_BYTES: usize = 8 << 10;

/// A padded range's shape and the compress mask of each phase.
#[derive(Debug, Clone)]
pub(super) struct Padded {
    /// Runs in the range.
    pub rows: usize,
    /// Elements per run (contiguous).
    run: usize,
    /// Elements from one run's start to the next one's.
    pitch: usize,
    /// For each phase (offset within a pitch of a vector's first element): bit `i` set when
    /// the vector's element `i` belongs to a run.
    masks: Vec<u64>,
    /// Elements per 64-byte vector.
    lanes: usize,
}

impl Padded {
    /// The padded form of an output's reduced `region` (outermost first) for elements of
    /// `element_size` bytes, or None unless it is `[rows × pitch, run × 1]` with every index
    /// in memory order, runs shorter than a vector of 1- or 2-byte elements, the padding at
    /// most three quarters of the span or the pitch at most 256 bytes (every cache line is
    /// read either way), and the CPU has AVX-512 VBMI2. Elsewhere the existing kernels were as
    /// fast or faster: FLOAT32 runs of 2 at a pitch of 9 took as long, INT64 runs of 8 at a
    /// pitch of 15 a third longer, FLOAT16 runs of 116 a third longer.
    pub fn new(region: &[Dim], element_size: usize, isa: Isa) -> Option<Padded> {
        let [outer, run] = region else {
            return None;
        };
        let fits = element_size <= 2 && isa == Isa::Avx512 && has_avx512_vbmi2();
        let shaped = outer.is_reduced()
            && run.is_reduced()
            && run.stride == 1
            && run.index_stride == 1
            && outer.index_stride == run.size
            && outer.stride > run.size
            && outer.stride <= MAX_PITCH
            && run.size * element_size < 64;
        let thin = run.size * 4 >= outer.stride || outer.stride * element_size <= 256;
        if !(fits && shaped && thin) {
            return None;
        }
        let lanes = 64 / element_size;
        let (pitch, width) = (outer.stride, run.size);
        let masks = (0..pitch)
            .map(|phase| {
                (0..lanes)
                    .filter(|i| (phase + i) % pitch < width)
                    .fold(0u64, |mask, i| mask | 1 << i)
            })
            .collect();
        Some(Padded {
            rows: outer.size,
            run: width,
            pitch,
            masks,
            lanes,
        })
    }

    /// Elements from one run's start to the next one's.
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// The greatest key among runs `lo..hi` of the range starting at element `base` of `data`,
    /// and the lowest (or, with `LAST`, the highest) index holding it (index `run * row + j`
    /// for element `j` of run `row`).
    pub fn best<T: Lanes, const LAST: bool>(
        &self,
        isa: Isa,
        data: &[u8],
        base: usize,
        lo: usize,
        hi: usize,
    ) -> (T::Key, usize) {
        let mut packed = vec![0u8; PACKED_BYTES + 64];
        let start = base + lo * self.pitch;
        let end = start + (hi - lo - 1) * self.pitch + self.run;
        assert!(
            end * T::SIZE <= data.len(),
            "padded range outside the input"
        );
        let mut best: Option<(T::Key, usize)> = None;
        let (mut at, mut phase, mut index) = (start, 0, lo * self.run);
        while at < end {
            let (next, next_phase, len) = self.pack::<T>(data, at, phase, end, &mut packed);
            let bytes = &packed[..len * T::SIZE];
            let piece = Piece {
                start: 0,
                len,
                index: 0,
            };
            let max = block_max::<T>(isa, bytes, &[piece]);
            if best.is_none_or(|(key, _)| max >= key) {
                let p = locate::<T, LAST>(isa, bytes, max).expect("a maximum is held");
                combine::<_, LAST>(&mut best, (max, index + p));
            }
            index += len;
            (at, phase) = (next, next_phase);
        }
        best.expect("a padded range holds elements")
    }

    /// Packs the run elements from element `at` (at `phase` within its pitch) up to `end` into
    /// `packed`, until it holds [`PACKED_BYTES`]; returns where it stopped, the phase there and
    /// the elements packed (at least one).
    fn pack<T: Lanes>(
        &self,
        data: &[u8],
        at: usize,
        phase: usize,
        end: usize,
        packed: &mut [u8],
    ) -> (usize, usize, usize) {
        // SAFETY: `Padded::new` only succeeds on a CPU with AVX-512 F, BW and VBMI2; `end` lies
        // inside `data` (checked by the caller) and `packed` holds 64 bytes past
        // PACKED_BYTES.
        let (mut at, mut phase, mut len) =
            unsafe { pack_avx512::<T>(self, data, at, phase, end, packed) };
        if len == 0 {
            // The end of the range, less than a vector: element by element.
            while at < end {
                if phase < self.run {
                    let from = at * T::SIZE;
                    packed[len * T::SIZE..(len + 1) * T::SIZE]
                        .copy_from_slice(&data[from..from + T::SIZE]);
                    len += 1;
                }
                at += 1;
                phase = if phase + 1 == self.pitch {
                    0
                } else {
                    phase + 1
                };
            }
        }
        (at, phase, len)
    }
}

/// The vector loop of [`Padded::pack`]: packs whole vectors from element `at` (at `phase`)
/// while one fits before `end` and in [`PACKED_BYTES`]; returns where it stopped, the phase
/// there and the elements packed.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI2; elements up to `end` must lie inside `data`,
/// and `packed` must hold 64 bytes past [`PACKED_BYTES`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
unsafe fn pack_avx512<T: Lanes>(
    padded: &Padded,
    data: &[u8],
    at: usize,
    phase: usize,
    end: usize,
    packed: &mut [u8],
) -> (usize, usize, usize) {
    use std::arch::x86_64::*;
    assert!(end * T::SIZE <= data.len() && packed.len() >= PACKED_BYTES + 64 && T::SIZE <= 2);
    let (mut at, mut phase, mut len) = (at, phase, 0);
    let (lanes, pitch) = (padded.lanes, padded.pitch);
    let step = lanes % pitch;
    let (src, dst) = (data.as_ptr(), packed.as_mut_ptr());
    while at + lanes <= end && (len + lanes) * T::SIZE <= PACKED_BYTES {
        let mask = padded.masks[phase];
        // In bounds: the vector ends at or before `end`, and the store before
        // PACKED_BYTES + 64.
        let v = _mm512_loadu_si512(src.add(at * T::SIZE).cast());
        // Ahead of the hardware prefetcher (a hint: any address is allowed).
        _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(at * T::SIZE + PREFETCH_BYTES).cast());
        // `Padded::new` takes 1- and 2-byte elements only.
        let kept = if T::SIZE == 1 {
            _mm512_maskz_compress_epi8(mask, v)
        } else {
            _mm512_maskz_compress_epi16(mask as u32, v)
        };
        _mm512_storeu_si512(dst.add(len * T::SIZE).cast(), kept);
        len += mask.count_ones() as usize;
        at += lanes;
        phase += step;
        if phase >= pitch {
            phase -= pitch;
        }
    }
    (at, phase, len)
}

/// Without x86-64 [`Padded::new`] never succeeds, so this is never called.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn pack_avx512<T: Lanes>(
    _: &Padded,
    _: &[u8],
    at: usize,
    phase: usize,
    _: usize,
    _: &mut [u8],
) -> (usize, usize, usize) {
    unreachable!("no AVX-512 off x86-64: {at} {phase}")
}
