//! `opconform-bench dev`: quick timings of the CPU backend for kernel work, without peers.
//!
//! Each row runs `--reps` times (best kept) on a pool of `--threads` threads and is compared
//! with the floor of the same run: input bytes ÷ read bandwidth + output bytes ÷ write
//! bandwidth, both measured first on the same pool. The rows are those of
//! `tools/bench_peers.py` (which times the peers too and is the benchmark that counts).

use opconform_bench::bandwidth;
use opconform_bench::case::BenchCase;
use opconform_bench::data::{generate, splitmix64};
use opconform_cpu::CpuBackend;
use serde_json::{json, Value};
use std::time::Instant;

/// CPU time of the whole process so far, in seconds (all threads).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// A row: its name, spec, inputs, and the bytes the floor counts.
struct Row {
    name: String,
    spec: Value,
    inputs: Vec<Vec<u8>>,
    read: u64,
    written: u64,
}

/// Random elements: FLOAT32 in [-1, 1), FLOAT16 in [-1, 1), UINT8 and INT32 over their range.
fn random(dtype: &str, count: usize, seed: u64) -> Vec<u8> {
    match dtype {
        "FLOAT32" => generate(count, seed, |x| {
            ((x >> 40) as f32 * (2.0 / 16_777_216.0) - 1.0).to_le_bytes()
        }),
        "FLOAT16" => generate(count, seed, |x| {
            half::f16::from_f32((x >> 40) as f32 * (2.0 / 16_777_216.0) - 1.0)
                .to_bits()
                .to_le_bytes()
        }),
        "UINT8" => generate(count, seed, |x| [(x >> 56) as u8]),
        _ => generate(count, seed, |x| ((x >> 32) as u32).to_le_bytes()),
    }
}

fn argmax(name: &str, dtype: &str, sizes: &[u32], strides: Option<&[u32]>, axes: &[u32]) -> Row {
    let spec = json!({"op": "argmax", "dtype": dtype, "sizes": sizes, "strides": strides,
                      "axes": axes, "out_dtype": "INT64"});
    let op = opconform_bench::case::operator(&spec).expect("a valid spec");
    let opconform_backend::OperatorDesc::ArgMax(desc) = &op else {
        unreachable!()
    };
    let size = desc.input.data_type.size_in_bytes();
    let buffer = desc.input.total_tensor_size_in_bytes as usize;
    Row {
        name: name.to_string(),
        spec,
        inputs: vec![random(dtype, buffer / size, 0xA1)],
        read: desc.input.element_count() * size as u64,
        written: desc.output.element_count() * 8,
    }
}

/// NonZeroCoordinates on a {3, 10, side, 1000} input: side 1000 is the benchmark's 3e7
/// elements, side 10 fits the L2 cache (the cost of building rows, with less memory noise).
fn nonzero(dtype: &str, percent: u64, side: u32) -> Row {
    let sizes = [3u32, 10, side, 1000];
    let count = 30_000 * side as usize;
    let threshold = (percent << 32) / 100;
    let data = match dtype {
        "UINT8" => generate(count, 0xB0 + percent, |x| {
            [if (x >> 32) < threshold {
                1 + (x % 255) as u8
            } else {
                0
            }]
        }),
        _ => generate(count, 0xB0 + percent, |x| {
            (if (x >> 32) < threshold { 1.5f32 } else { 0.0 }).to_le_bytes()
        }),
    };
    let size = data.len() / count;
    let nonzero = (0..count as u64)
        .filter(|&i| (splitmix64(0xB0 + percent, i) >> 32) < threshold)
        .count() as u64;
    Row {
        name: format!(
            "nonzero {dtype} {percent}%{}",
            if side < 1000 { " in-cache" } else { "" }
        ),
        spec: json!({"op": "nonzero", "dtype": dtype, "sizes": sizes}),
        inputs: vec![data],
        read: (count * size) as u64,
        written: 4 + nonzero * 16,
    }
}

fn one_hot(index: &str, dtype: &str) -> Row {
    let (count, depth) = (1usize << 21, 64u64);
    let (indices, index_size) = match index {
        "INT64" => (
            generate(count, 0xC1, |x| ((x >> 58) as i64).to_le_bytes()),
            8,
        ),
        _ => (
            generate(count, 0xC1, |x| ((x >> 58) as i32).to_le_bytes()),
            4,
        ),
    };
    let (values, size): (Vec<u8>, usize) = match dtype {
        "FLOAT16" => (vec![0, 0, 0x00, 0x3c], 2),
        "INT64" => ([0i64, 1].iter().flat_map(|v| v.to_le_bytes()).collect(), 8),
        _ => (
            [0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect(),
            4,
        ),
    };
    Row {
        name: format!("one_hot {index} -> {dtype}"),
        spec: json!({"op": "one_hot", "index_dtype": index, "dtype": dtype,
                     "count": count, "depth": depth}),
        inputs: vec![indices, values],
        read: (count * index_size) as u64,
        written: count as u64 * depth * size as u64,
    }
}

/// The rows, each built (its input generated) only when asked for.
fn rows() -> Vec<(String, Box<dyn Fn() -> Row>)> {
    let m = [4096u32, 16384];
    let mut rows: Vec<(String, Box<dyn Fn() -> Row>)> = Vec::new();
    let mut add = |name: &str, make: Box<dyn Fn() -> Row>| rows.push((name.to_string(), make));
    for make in [
        (
            "argmax f32 axis 1",
            Box::new(move || argmax("argmax f32 axis 1", "FLOAT32", &m, None, &[1]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f32 axis 0",
            Box::new(move || argmax("argmax f32 axis 0", "FLOAT32", &m, None, &[0]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f32 both",
            Box::new(move || argmax("argmax f32 both", "FLOAT32", &m, None, &[0, 1]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax i32 axis 1",
            Box::new(move || argmax("argmax i32 axis 1", "INT32", &m, None, &[1]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax i32 axis 0",
            Box::new(move || argmax("argmax i32 axis 0", "INT32", &m, None, &[0]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f16 axis 1",
            Box::new(move || argmax("argmax f16 axis 1", "FLOAT16", &m, None, &[1]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f16 axis 0",
            Box::new(move || argmax("argmax f16 axis 0", "FLOAT16", &m, None, &[0]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax u8 axis 1",
            Box::new(move || argmax("argmax u8 axis 1", "UINT8", &m, None, &[1]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax u8 axis 0",
            Box::new(move || argmax("argmax u8 axis 0", "UINT8", &m, None, &[0]))
                as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f32 transposed axis 0",
            Box::new(move || {
                argmax(
                    "argmax f32 transposed axis 0",
                    "FLOAT32",
                    &[16384, 4096],
                    Some(&[1, 16384]),
                    &[0],
                )
            }) as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f32 transposed axis 1",
            Box::new(move || {
                argmax(
                    "argmax f32 transposed axis 1",
                    "FLOAT32",
                    &[16384, 4096],
                    Some(&[1, 16384]),
                    &[1],
                )
            }) as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f32 64^4 axes 1,3",
            Box::new(move || {
                argmax(
                    "argmax f32 64^4 axes 1,3",
                    "FLOAT32",
                    &[64; 4],
                    None,
                    &[1, 3],
                )
            }) as Box<dyn Fn() -> Row>,
        ),
        (
            "argmax f32 64^4 axes 2,3",
            Box::new(move || {
                argmax(
                    "argmax f32 64^4 axes 2,3",
                    "FLOAT32",
                    &[64; 4],
                    None,
                    &[2, 3],
                )
            }) as Box<dyn Fn() -> Row>,
        ),
    ] {
        add(make.0, make.1);
    }
    let padded = [16u32, 16, 32, 32, 60];
    let strides = [16 * 32 * 32 * 64, 32 * 32 * 64, 32 * 64, 64, 1];
    add(
        "argmax f32 padded rank 5 axis 4",
        Box::new(move || {
            argmax(
                "argmax f32 padded rank 5 axis 4",
                "FLOAT32",
                &padded,
                Some(&strides),
                &[4],
            )
        }),
    );
    add(
        "argmax f32 padded rank 5 axes 1,3",
        Box::new(move || {
            argmax(
                "argmax f32 padded rank 5 axes 1,3",
                "FLOAT32",
                &padded,
                Some(&strides),
                &[1, 3],
            )
        }),
    );
    // The same in cache (1024 outputs), for the compute cost alone.
    let small = [1u32, 1, 1, 1024, 60];
    let small_strides = [1024 * 64, 1024 * 64, 1024 * 64, 64, 1];
    add(
        "argmax f32 in-cache padded axis 4",
        Box::new(move || {
            argmax(
                "argmax f32 in-cache padded axis 4",
                "FLOAT32",
                &small,
                Some(&small_strides),
                &[4],
            )
        }),
    );
    add(
        "argmax f32 in-cache 1024x64 axis 1",
        Box::new(move || {
            argmax(
                "argmax f32 in-cache 1024x64 axis 1",
                "FLOAT32",
                &[1024, 64],
                None,
                &[1],
            )
        }),
    );
    add(
        "argmax f32 in-cache 64x1024 axis 1",
        Box::new(move || {
            argmax(
                "argmax f32 in-cache 64x1024 axis 1",
                "FLOAT32",
                &[64, 1024],
                None,
                &[1],
            )
        }),
    );
    for dtype in ["FLOAT32", "UINT8"] {
        for percent in [5, 50, 90] {
            add(
                &format!("nonzero {dtype} {percent}%"),
                Box::new(move || nonzero(dtype, percent, 1000)),
            );
        }
    }
    for dtype in ["FLOAT32", "UINT8"] {
        for percent in [5, 50] {
            add(
                &format!("nonzero {dtype} {percent}% in-cache"),
                Box::new(move || nonzero(dtype, percent, 10)),
            );
        }
    }
    for (index, dtype) in [
        ("INT32", "FLOAT32"),
        ("INT32", "FLOAT16"),
        ("INT64", "INT64"),
    ] {
        add(
            &format!("one_hot {index} -> {dtype}"),
            Box::new(move || one_hot(index, dtype)),
        );
    }
    rows
}

/// Bytes written before each timed call with `--cold`: four times a 32 MiB last-level cache.
const EVICT_BYTES: usize = 128 << 20;

/// Runs the rows whose name contains `only` (all when `None`). With `cold`, a buffer of
/// [`EVICT_BYTES`] is written before each timed call (and before each timed read of the
/// input), so that the call finds none of its input in the caches, as in `bench_peers.py`,
/// where another contender's call comes between two of ours.
pub fn run(threads: usize, reps: usize, only: Option<&str>, cold: bool) -> Result<(), String> {
    // The benchmark's pool: with several threads, each pinned to its own CPU.
    let pool = opconform_bench::ffi::pool(threads)?;
    let bw = pool.install(|| bandwidth::measure(256 << 20, 3));
    println!(
        "{threads} thread(s): read {:.1} GB/s, write {:.1} GB/s; {}",
        bw.read_gbs,
        bw.write_gbs,
        opconform_cpu::isa_name()
    );
    let backend = CpuBackend::new();
    let mut evict = if cold {
        vec![0u8; EVICT_BYTES]
    } else {
        Vec::new()
    };
    let mut evict_caches = |round: usize| {
        evict.fill(round as u8);
        std::hint::black_box(&evict);
    };
    for (name, make) in rows() {
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let row = make();
        let mut case = BenchCase::new(&row.spec, &row.inputs)?;
        let read = row.read as f64;
        let floor = read / (bw.read_gbs * 1e9) + row.written as f64 / (bw.write_gbs * 1e9);
        // Each repetition also reads the input once (the same bytes): the kernel's time over
        // that read's, scaled to the row's traffic, is a ratio to the floor that load on the
        // machine affects less than the absolute times.
        let (best, ratio, cpu) = pool.install(|| {
            case.run(&backend)?;
            let (mut best, mut ratio, mut cpu) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
            for round in 0..reps.max(1) {
                evict_caches(round);
                let start = Instant::now();
                std::hint::black_box(bandwidth::read_all(&case.inputs[0].data));
                let read_s = start.elapsed().as_secs_f64();
                evict_caches(round);
                let (start, cpu_start) = (Instant::now(), cpu_seconds());
                case.run(&backend)?;
                let run_s = start.elapsed().as_secs_f64();
                cpu = cpu.min(cpu_seconds() - cpu_start);
                let input_bytes = case.inputs[0].data.len() as f64;
                let row_floor =
                    read_s / input_bytes * read * (floor / (read / (bw.read_gbs * 1e9)));
                best = best.min(run_s);
                ratio = ratio.min(run_s / row_floor);
            }
            Ok::<(f64, f64, f64), String>((best, ratio, cpu))
        })?;
        println!(
            "  {:<40} {:>9.3} ms (cpu {:>8.3})  floor {:>7.2} ms  ratio {:.2}  (interleaved read: {:.2})",
            row.name,
            best * 1e3,
            cpu * 1e3,
            floor * 1e3,
            best / floor,
            ratio
        );
    }
    Ok(())
}
