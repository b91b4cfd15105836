//! The memory bandwidth the floor is computed from: read and write, on a given number of
//! threads, best of several runs, on buffers far larger than the caches.

use rayon::prelude::*;
use std::hint::black_box;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// Read and write bandwidth in GB/s (10^9 bytes per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bandwidth {
    /// Summing the buffer (every byte read once).
    pub read_gbs: f64,
    /// Filling the buffer: the better of plain stores (`fill`) and non-temporal stores.
    pub write_gbs: f64,
}

/// Reads every byte of `bytes` once on the current rayon pool (a sum of its words, the
/// remainder bytes added), returning the sum so that the read cannot be optimised away.
pub fn read_all(bytes: &[u8]) -> u64 {
    let threads = rayon::current_num_threads().max(1);
    let chunk = (bytes.len() / threads).next_multiple_of(4096).max(4096);
    bytes
        .par_chunks(chunk)
        .map(|c| {
            let (head, words, tail) = unsafe_align(c);
            head.iter()
                .chain(tail)
                .fold(sum_words(words), |a, &b| a.wrapping_add(u64::from(b)))
        })
        .reduce(|| 0, u64::wrapping_add)
}

/// `bytes` as unaligned head bytes, `u64` words and tail bytes.
fn unsafe_align(bytes: &[u8]) -> (&[u8], &[u64], &[u8]) {
    // SAFETY: every bit pattern is a valid `u64`; `align_to` keeps the middle aligned.
    unsafe { bytes.align_to::<u64>() }
}

/// Sums the `u64` words of `words` with four independent accumulators (so the loop is bound
/// by memory, not by the add latency).
pub fn sum_words(words: &[u64]) -> u64 {
    let mut acc = [0u64; 4];
    let mut chunks = words.chunks_exact(4);
    for c in &mut chunks {
        for k in 0..4 {
            acc[k] = acc[k].wrapping_add(c[k]);
        }
    }
    chunks
        .remainder()
        .iter()
        .fold(acc.iter().fold(0, |a, &b| a.wrapping_add(b)), |a, &b| {
            a.wrapping_add(b)
        })
}

/// Fills `dst` with `value` bytes using non-temporal stores where the CPU has them (x86-64),
/// plain stores elsewhere.
fn fill_streaming(dst: &mut [u8], value: u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_set1_epi8, _mm_sfence, _mm_stream_si128};
        let head = dst.as_ptr().align_offset(16).min(dst.len());
        let (head_bytes, rest) = dst.split_at_mut(head);
        head_bytes.fill(value);
        let body = rest.len() & !15;
        // SAFETY: SSE2 is part of the x86-64 baseline; `rest` starts 16-byte aligned and each
        // 16-byte store at `i < body <= rest.len()` is in bounds.
        unsafe {
            let v = _mm_set1_epi8(value as i8);
            for i in (0..body).step_by(16) {
                _mm_stream_si128(rest.as_mut_ptr().add(i).cast::<__m128i>(), v);
            }
            _mm_sfence();
        }
        rest[body..].fill(value);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.fill(value);
}

/// The buffer of the last [`measure`], kept so that a measurement taken in every round of a
/// row (`tools/bench_peers.py`) costs its passes only, not an allocation and its page faults.
static BUFFER: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// The kept buffer, locked, holding `words` words (backed by huge pages where the system
/// allows, like the benchmark's tensors), and whether it was allocated just now.
fn kept_buffer(words: usize) -> (MutexGuard<'static, Vec<u64>>, bool) {
    let mut kept = BUFFER.lock().unwrap_or_else(PoisonError::into_inner);
    let fresh = kept.len() != words;
    if fresh {
        // The old buffer is freed before the new one is touched.
        *kept = Vec::new();
        *kept = huge_words(words);
    }
    (kept, fresh)
}

/// Measures [`Bandwidth`] on the current rayon pool (its thread count) with a buffer of
/// `bytes` bytes, best of `reps` runs of each measurement. The buffer is kept for the next
/// call of the same size; a new one gets one untimed pass of each measurement first (page
/// faults, frequency).
pub fn measure(bytes: usize, reps: usize) -> Bandwidth {
    let threads = rayon::current_num_threads().max(1);
    let words = bytes / 8;
    let (mut kept, fresh) = kept_buffer(words);
    let buffer: &mut Vec<u64> = &mut kept;
    let chunk = words.div_ceil(threads).max(1);
    let best = |f: &mut dyn FnMut()| best_seconds(reps, fresh, f);
    let read_s = best(&mut || {
        let sum: u64 = buffer
            .par_chunks(chunk)
            .map(sum_words)
            .reduce(|| 0, u64::wrapping_add);
        black_box(sum);
    });
    let mut value = 0u8;
    let mut fill = |streaming: bool| {
        value = value.wrapping_add(1);
        let bytes: &mut [u8] = bytemuck_u8(buffer);
        bytes.par_chunks_mut(chunk * 8).for_each(|d| {
            if streaming {
                fill_streaming(d, black_box(value));
            } else {
                d.fill(black_box(value));
            }
        });
    };
    let plain_s = best(&mut || fill(false));
    let stream_s = best(&mut || fill(true));
    black_box(&*buffer);
    let gbs = |s: f64| (words * 8) as f64 / s / 1e9;
    Bandwidth {
        read_gbs: gbs(read_s),
        write_gbs: gbs(plain_s.min(stream_s)),
    }
}

/// Write bandwidth in GB/s for data like `sample`: the kept buffer of `bytes` bytes (see
/// [`measure`]) filled with copies of `sample` end to end, with non-temporal stores where the
/// CPU has them, best of `reps`. The sample (at most a few MiB) stays in cache, so this times
/// the writes. Some machines write some data faster than other data: on round 29's AMD EPYC
/// (Zen 5, KVM guest) one core wrote 64-byte lines holding one nonzero 32-bit word at
/// 90–92 GB/s with 32-byte non-temporal stores (70–75 with 64-byte ones) and lines of nonzero
/// bytes at 42–44, so a floor written with nonzero bytes is no floor for a mostly-zero output
/// (OneHot). An empty sample measures nothing (returns 0).
pub fn measure_write_of(sample: &[u8], bytes: usize, reps: usize) -> f64 {
    if sample.is_empty() {
        return 0.0;
    }
    let threads = rayon::current_num_threads().max(1);
    let (mut kept, _) = kept_buffer(bytes / 8);
    let target = bytemuck_u8(&mut kept);
    // Whole copies of the sample per thread, so every thread writes the same pattern.
    let per_thread = (target.len() / threads / sample.len()).max(1) * sample.len();
    let copy = |target: &mut [u8]| {
        target
            .par_chunks_mut(per_thread)
            .for_each(|part| copy_repeated(part, sample));
    };
    let best = best_seconds(reps, true, &mut || copy(target));
    target.len() as f64 / best / 1e9
}

/// The shortest of `reps` (at least one) timed calls of `f`, in seconds, after one untimed
/// call when `warm_up`.
fn best_seconds(reps: usize, warm_up: bool, f: &mut dyn FnMut()) -> f64 {
    if warm_up {
        f();
    }
    (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Fills `dst` with copies of `sample` end to end (the last one cut short), through the CPU
/// backend's own streamed copy (non-temporal stores where the CPU has them).
fn copy_repeated(dst: &mut [u8], sample: &[u8]) {
    for piece in dst.chunks_mut(sample.len()) {
        opconform_cpu::copy_streaming(piece, &sample[..piece.len()], true);
    }
    opconform_cpu::stream_fence();
}

/// `words` `u64`s (every byte 1), backed by huge pages where the system allows (see
/// [`crate::case::buffer`]).
fn huge_words(words: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::with_capacity(words);
    crate::case::advise_huge_pages(v.as_mut_ptr().cast(), words * 8);
    v.resize(words, 0x0101_0101_0101_0101);
    v
}

/// The bytes of `words`.
fn bytemuck_u8(words: &mut [u64]) -> &mut [u8] {
    let len = std::mem::size_of_val(words);
    // SAFETY: `u8` has no alignment or validity requirements; the slice covers exactly the
    // memory of `words`, which it borrows mutably for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_fills_are_exact() {
        let words: Vec<u64> = (1..=11).collect();
        assert_eq!(sum_words(&words), 66);
        for offset in 0..17 {
            let mut bytes = [0u8; 100];
            fill_streaming(&mut bytes[offset..offset + 70], 9);
            assert!(bytes[offset..offset + 70].iter().all(|&b| b == 9));
            assert!(bytes[..offset]
                .iter()
                .chain(&bytes[offset + 70..])
                .all(|&b| b == 0));
        }
    }

    #[test]
    fn bandwidth_is_positive() {
        let b = measure(1 << 20, 2);
        assert!(b.read_gbs > 0.0 && b.write_gbs > 0.0, "{b:?}");
    }

    #[test]
    fn repeated_copies_are_exact_at_any_alignment_and_length() {
        let sample: Vec<u8> = (0..100u8).collect();
        for offset in 0..33 {
            for len in [0, 1, 31, 32, 99, 100, 101, 333] {
                let mut bytes = vec![0xEEu8; offset + len + 40];
                copy_repeated(&mut bytes[offset..offset + len], &sample);
                let expected: Vec<u8> = (0..len).map(|i| (i % 100) as u8).collect();
                assert_eq!(
                    &bytes[offset..offset + len],
                    &expected[..],
                    "{offset} {len}"
                );
                assert!(bytes[..offset]
                    .iter()
                    .chain(&bytes[offset + len..])
                    .all(|&b| b == 0xEE));
            }
        }
    }

    #[test]
    fn pattern_bandwidth_is_positive_and_an_empty_sample_measures_nothing() {
        assert!(measure_write_of(&[0, 0, 0, 1], 1 << 20, 1) > 0.0);
        assert_eq!(measure_write_of(&[], 1 << 20, 1), 0.0);
    }

    #[test]
    fn a_kept_buffer_is_reused_or_replaced_as_the_size_changes() {
        // Other tests may measure in between: any size may be kept when a call starts.
        for bytes in [1 << 20, 1 << 20, 3 << 19, 1 << 20, 5 << 18] {
            let b = measure(bytes, 1);
            assert!(b.read_gbs > 0.0 && b.write_gbs > 0.0, "{bytes}: {b:?}");
        }
    }
}
