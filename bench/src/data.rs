//! Deterministic input data (a counter-based splitmix64, so any element can be computed on its
//! own and generation runs in parallel) and `.npy` files the Python peers read.

use rayon::prelude::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The splitmix64 output for counter `i` of stream `seed`.
#[inline]
pub fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Little-endian bytes of `count` elements of `N` bytes each, element `i` being
/// `element(splitmix64(seed, i))`; generated in parallel.
pub fn generate<const N: usize>(
    count: usize,
    seed: u64,
    element: impl Fn(u64) -> [u8; N] + Sync,
) -> Vec<u8> {
    let mut bytes = vec![0u8; count * N];
    bytes
        .par_chunks_mut(N << 16)
        .enumerate()
        .for_each(|(c, chunk)| {
            let first = (c << 16) as u64;
            for (j, dst) in chunk.chunks_exact_mut(N).enumerate() {
                dst.copy_from_slice(&element(splitmix64(seed, first + j as u64)));
            }
        });
    bytes
}

/// FLOAT32 values uniform in [-1, 1) (24 random bits each).
pub fn uniform_f32(count: usize, seed: u64) -> Vec<u8> {
    generate(count, seed, |x| {
        ((x >> 40) as f32 * (2.0 / 16_777_216.0) - 1.0).to_le_bytes()
    })
}

/// INT32 values over the whole range.
pub fn uniform_i32(count: usize, seed: u64) -> Vec<u8> {
    generate(count, seed, |x| ((x >> 32) as u32 as i32).to_le_bytes())
}

/// FLOAT32 values that are nonzero (in [1, 2)) with probability `percent`/100, else +0.0,
/// independently per element.
pub fn sparse_f32(count: usize, seed: u64, percent: u32) -> Vec<u8> {
    let threshold = (u64::from(percent) << 32) / 100;
    generate(count, seed, move |x| {
        if (x >> 32) < threshold {
            (1.0 + (x & 0xffff) as f32 / 65_536.0).to_le_bytes()
        } else {
            0.0f32.to_le_bytes()
        }
    })
}

/// INT32 values uniform in `0..depth` (`depth` a power of two at most 2^32).
pub fn indices_i32(count: usize, seed: u64, depth: u32) -> Vec<u8> {
    let shift = 64 - depth.trailing_zeros();
    generate(count, seed, move |x| ((x >> shift) as i32).to_le_bytes())
}

/// The header of a version 1.0 `.npy` file for a C-ordered array of `descr` (e.g. `<f4`) and
/// `shape`, padded so that the data starts at a multiple of 64 bytes.
pub fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [single] => format!("{single},"),
        _ => shape
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
    // Magic (6) + version (2) + length (2) + dict + newline, a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    header.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    header
}

/// Writes `data` (little-endian elements, C order) as a `.npy` file.
pub fn write_npy(path: &Path, descr: &str, shape: &[usize], data: &[u8]) -> std::io::Result<()> {
    let mut file = BufWriter::with_capacity(1 << 22, File::create(path)?);
    file.write_all(&npy_header(descr, shape))?;
    file.write_all(data)?;
    file.into_inner()?.sync_data().or(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // splitmix64 seeded with 0: the first outputs of the reference implementation.
        assert_eq!(splitmix64(0, 0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(0, 1), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn generators_are_deterministic_and_in_range() {
        let a = uniform_f32(100_000, 7);
        assert_eq!(a, uniform_f32(100_000, 7));
        let values: Vec<f32> = a
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)));
        let sparse = sparse_f32(100_000, 7, 50);
        let nonzero = sparse.chunks_exact(4).filter(|b| b != &[0; 4]).count();
        assert!((45_000..55_000).contains(&nonzero), "{nonzero}");
        let indices = indices_i32(10_000, 3, 64);
        assert!(indices
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .all(|i| (0..64).contains(&i)));
    }

    #[test]
    fn npy_header_is_aligned() {
        let header = npy_header("<f4", &[4096, 16384]);
        assert_eq!(header.len() % 64, 0);
        assert!(header.ends_with(b"\n"));
        let text = String::from_utf8_lossy(&header[10..]);
        assert!(text.contains("'shape': (4096, 16384)"), "{text}");
        let one = npy_header("<i8", &[5]);
        assert!(String::from_utf8_lossy(&one).contains("'shape': (5,)"));
    }
}
