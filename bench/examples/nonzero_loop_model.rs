//! A model of the NonZeroCoordinates rows loop on one core, to time where its masks are
//! computed without the rest of the kernel: UINT8 input of 3e7 elements at 5 % nonzero, rows
//! of four 32-bit coordinates written in place, per word one `vptestmb`, one `vpcompressb`,
//! two `vpermt2d` and two stores (the AVX-512 VBMI2 path of
//! `backends/cpu/src/nonzero_coordinates/emit.rs`). The rows' coordinates are not the real
//! ones: only the work and the memory traffic are.
//!
//! ```text
//! cargo run --release -p opconform-bench --example nonzero_loop_model
//! ```
//!
//! Each way is timed 15 times, alternated, warm (repeated calls) and cold (after writing a
//! 96 MB buffer), and the medians printed. Round 36 of `docs/performance.md` gives what it
//! showed and what the kernel then did.

#[cfg(target_arch = "x86_64")]
mod model {
    use opconform_bench::case::buffer;
    use opconform_bench::data::splitmix64;
    use std::arch::x86_64::*;
    use std::time::Instant;

    /// Elements of input and bytes of output room.
    const INPUT: usize = 30_000_000;
    const OUTPUT: usize = 26_000_000;
    /// The input's stream of the bench's generator.
    const SEED: u64 = 36;

    /// Where the masks are computed.
    #[derive(Clone, Copy)]
    enum Way {
        /// As the kernel: a masks pass per chunk of this many bytes, then its rows, with the
        /// next chunk prefetched a line per word.
        Chunked(usize),
        /// Masks passes of this many bytes, each followed by its rows; no prefetch.
        Batched(usize),
        /// Each word's mask computed this many words before its rows (0: in the rows loop).
        Ahead(usize),
    }

    impl std::fmt::Display for Way {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                Way::Chunked(bytes) => write!(f, "masks pass per {} KiB, read-ahead", bytes >> 10),
                Way::Batched(bytes) => write!(f, "masks pass per {bytes} B, no read-ahead"),
                Way::Ahead(0) => write!(f, "mask in the rows loop"),
                Way::Ahead(words) => write!(f, "mask {words} words ahead of its rows"),
            }
        }
    }

    /// The rows of `mask`'s set bits at `at`; returns their bytes.
    #[inline(always)]
    unsafe fn rows(at: *mut u8, mask: u64, first: u32, tables: &[__m512i; 3]) -> usize {
        let [iota, low, high] = *tables;
        let positions = _mm512_maskz_compress_epi8(mask, iota);
        let block = _mm512_add_epi32(
            _mm512_cvtepu8_epi32(_mm512_castsi512_si128(positions)),
            _mm512_set1_epi32(first as i32),
        );
        let template = _mm512_setzero_si512();
        _mm512_storeu_si512(at.cast(), _mm512_permutex2var_epi32(block, low, template));
        _mm512_storeu_si512(
            at.add(64).cast(),
            _mm512_permutex2var_epi32(block, high, template),
        );
        mask.count_ones() as usize * 16
    }

    /// The nonzero mask of the 64 bytes at `at`.
    #[inline(always)]
    unsafe fn mask(at: *const u8) -> u64 {
        _mm512_test_epi8_mask(_mm512_loadu_si512(at.cast()), _mm512_set1_epi8(-1))
    }

    /// Writes the rows of `input` into `out` the given way; returns the bytes written.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
    unsafe fn run(input: &[u8], out: &mut [u8], way: Way) -> usize {
        let iota: [u8; 64] = std::array::from_fn(|j| j as u8);
        let tables = [
            _mm512_loadu_si512(iota.as_ptr().cast()),
            _mm512_setr_epi32(16, 17, 18, 0, 16, 17, 18, 1, 16, 17, 18, 2, 16, 17, 18, 3),
            _mm512_setr_epi32(16, 17, 18, 4, 16, 17, 18, 5, 16, 17, 18, 6, 16, 17, 18, 7),
        ];
        let words = input.len() / 64;
        let src = input.as_ptr();
        let dst = out.as_mut_ptr();
        let mut written = 0;
        let mut emit = |w: usize, m: u64| {
            if written + 256 <= out.len() {
                written += rows(dst.add(written), m, (64 * w) as u32, &tables);
            }
        };
        match way {
            Way::Chunked(bytes) | Way::Batched(bytes) => {
                let chunk = bytes / 64;
                let read_ahead = matches!(way, Way::Chunked(_));
                let mut masks = vec![0u64; chunk];
                for first in (0..words).step_by(chunk) {
                    let last = (first + chunk).min(words);
                    for w in first..last {
                        masks[w - first] = mask(src.add(64 * w));
                    }
                    for w in first..last {
                        if read_ahead && w + chunk < words {
                            _mm_prefetch::<_MM_HINT_T1>(src.add(64 * (w + chunk)).cast());
                        }
                        emit(w, masks[w - first]);
                    }
                }
            }
            Way::Ahead(0) => {
                for w in 0..words {
                    emit(w, mask(src.add(64 * w)));
                }
            }
            Way::Ahead(ahead) => {
                let mut ring = vec![0u64; ahead.next_power_of_two()];
                let slot = ring.len() - 1;
                for w in 0..ahead.min(words) {
                    ring[w & slot] = mask(src.add(64 * w));
                }
                for w in 0..words {
                    let m = ring[w & slot];
                    if w + ahead < words {
                        ring[(w + ahead) & slot] = mask(src.add(64 * (w + ahead)));
                    }
                    emit(w, m);
                }
            }
        }
        written
    }

    pub fn main() {
        if !(is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512vbmi2")) {
            println!("this model needs AVX-512 BW and VBMI2");
            return;
        }
        let mut input = buffer(INPUT, 0);
        for (i, byte) in input.iter_mut().enumerate() {
            *byte = u8::from(splitmix64(SEED, i as u64) % 100 < 5);
        }
        let mut out = buffer(OUTPUT, 0);
        let mut evict = buffer(96 << 20, 0);
        let ways = [
            Way::Chunked(256 << 10),
            Way::Chunked(64 << 10),
            Way::Batched(512),
            Way::Batched(4 << 10),
            Way::Ahead(0),
            Way::Ahead(64),
            Way::Ahead(4096),
        ];
        for cold in [false, true] {
            let mut times = vec![Vec::new(); ways.len()];
            for round in 0..15u8 {
                for (way, times) in ways.iter().zip(&mut times) {
                    if cold {
                        for byte in evict.iter_mut().step_by(64) {
                            *byte = byte.wrapping_add(round);
                        }
                    }
                    let start = Instant::now();
                    // SAFETY: the CPU has AVX-512 BW and VBMI2 (checked above; F comes with
                    // BW), and POPCNT with them.
                    let bytes = unsafe { run(&input, &mut out, *way) };
                    times.push(start.elapsed().as_secs_f64() * 1e3);
                    std::hint::black_box(bytes);
                }
            }
            println!("{}", if cold { "cold calls" } else { "warm calls" });
            for (way, times) in ways.iter().zip(&mut times) {
                times.sort_by(f64::total_cmp);
                println!("  {:>8.3} ms  {way}", times[times.len() / 2]);
            }
        }
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    model::main();
    #[cfg(not(target_arch = "x86_64"))]
    println!("this model needs x86-64 with AVX-512");
}
