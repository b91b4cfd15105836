//! Repeated timing with medians, and the memory bandwidth the Vulkan table's transfer estimate
//! is computed from.

use opconform_backend::{Backend, Level, OperatorDesc, Tensor};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

/// Runs `f` `warmup` times untimed, then `reps` times timed; returns the times in milliseconds.
pub fn time_ms(warmup: usize, reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    for _ in 0..warmup {
        f();
    }
    (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// Times `op` on `inputs` with outputs allocated (poisoned) once and reused: the time of
/// `Backend::execute` alone, as the harness calls it. Returns the times and the outputs of
/// the last run.
pub fn time_execute(
    backend: &dyn Backend,
    op: &OperatorDesc,
    inputs: &[Tensor],
    level: Level,
    reps: usize,
) -> Result<(Vec<f64>, Vec<Tensor>), String> {
    let mut outputs: Vec<Tensor> = op
        .outputs()
        .into_iter()
        .map(|d| Tensor::filled(d.clone(), 0xAB).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let mut failure = None;
    let times = time_ms(1, reps, || {
        if let Err(e) = backend.execute(op, inputs, &mut outputs, level) {
            failure.get_or_insert(e.to_string());
        }
    });
    match failure {
        Some(e) => Err(format!("{}: {e}", op.kind())),
        None => Ok((times, outputs)),
    }
}

/// The median of `values` (the mean of the middle two for an even count; NaN when empty).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Memory bandwidths measured on buffers far larger than the caches, in GB/s (10^9 bytes).
#[derive(Debug, Clone, Copy)]
pub struct Bandwidth {
    /// `copy_from_slice` (memcpy) on one thread: bytes read + bytes written per second.
    pub memcpy_1t: f64,
    /// memcpy split over every thread of rayon's pool, read + written per second.
    pub memcpy_all: f64,
    /// Summing `u64`s on every thread: bytes read per second.
    pub read_all: f64,
    /// Filling with a constant on every thread: bytes written per second.
    pub fill_all: f64,
}

impl Bandwidth {
    /// The bandwidth the floor uses: the better of the two memcpy figures.
    pub fn floor_gbs(&self) -> f64 {
        self.memcpy_1t.max(self.memcpy_all)
    }
}

/// Measures [`Bandwidth`] on two `bytes`-byte buffers (touched before timing), taking the
/// median of `reps` runs of each.
pub fn measure_bandwidth(bytes: usize, reps: usize) -> Bandwidth {
    let threads = rayon::current_num_threads().max(1);
    let src: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    let mut dst = vec![1u8; bytes];
    let chunk = bytes.div_ceil(threads).next_multiple_of(4096);
    let gbs = |moved: usize, ms: &[f64]| moved as f64 / (median(ms) * 1e6);

    let one = time_ms(1, reps, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&dst);
    });
    let all = time_ms(1, reps, || {
        dst.par_chunks_mut(chunk)
            .zip(src.par_chunks(chunk))
            .for_each(|(d, s)| d.copy_from_slice(black_box(s)));
        black_box(&dst);
    });
    let words: Vec<u64> = src
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        .collect();
    let read = time_ms(1, reps, || {
        let sum: u64 = words
            .par_chunks(chunk / 8)
            .map(|c| c.iter().fold(0u64, |a, &w| a.wrapping_add(w)))
            .reduce(|| 0, u64::wrapping_add);
        black_box(sum);
    });
    let mut value = 0u8;
    let fill = time_ms(1, reps, || {
        value = value.wrapping_add(1);
        dst.par_chunks_mut(chunk).for_each(|d| d.fill(value));
        black_box(&dst);
    });
    Bandwidth {
        memcpy_1t: gbs(2 * bytes, &one),
        memcpy_all: gbs(2 * bytes, &all),
        read_all: gbs(bytes, &read),
        fill_all: gbs(bytes, &fill),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn bandwidth_is_positive() {
        let b = measure_bandwidth(1 << 20, 2);
        assert!(b.memcpy_1t > 0.0 && b.memcpy_all > 0.0 && b.read_all > 0.0 && b.fill_all > 0.0);
        assert!(b.floor_gbs() >= b.memcpy_1t);
    }
}
