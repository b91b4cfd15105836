//! The CPU benchmark: generates the inputs, writes them as `.npy` files for
//! `tools/bench_peers.py`, times the CPU backend through `Backend::execute` on them, measures
//! the memory bandwidth, and writes everything as JSON.

use crate::data::{indices_i32, sparse_f32, uniform_f32, uniform_i32, write_npy};
use crate::ops;
use crate::timing::{measure_bandwidth, median, time_ms, Bandwidth};
use opconform_backend::{Backend, DataType, Level, OperatorDesc, Tensor, TensorDesc};
use opconform_cpu::CpuBackend;
use serde_json::{json, Value};
use std::path::Path;

/// What a run measures.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Timed repetitions per row (after one untimed warm-up).
    pub reps: usize,
    /// Sizes of the ArgMax input.
    pub argmax_sizes: [u32; 2],
    /// Sizes of the NonZeroCoordinates input.
    pub nonzero_sizes: [u32; 4],
    /// Number of OneHot indices.
    pub one_hot_count: u32,
    /// OneHot depth.
    pub one_hot_depth: u32,
    /// Bytes of each buffer of the bandwidth measurement.
    pub bandwidth_bytes: usize,
    /// Runs only the rows whose id contains this text (all when `None`).
    pub only: Option<String>,
    /// Kernel development: no `.npy` files and a token bandwidth measurement.
    pub dev: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            reps: 7,
            argmax_sizes: [4096, 16384],
            nonzero_sizes: [4, 16, 1024, 1024],
            one_hot_count: 1 << 21,
            one_hot_depth: 64,
            bandwidth_bytes: 256 << 20,
            only: None,
            dev: false,
        }
    }
}

impl Settings {
    /// True when the row `id` is to run.
    fn wants(&self, id: &str) -> bool {
        match self.only.as_deref() {
            None => true,
            Some(only) => id.contains(only),
        }
    }

    /// True when a row whose id starts with `prefix` may run.
    fn wants_group(&self, prefix: &str) -> bool {
        match self.only.as_deref() {
            None => true,
            Some(only) => prefix.contains(only) || only.starts_with(prefix),
        }
    }

    /// A tiny configuration for smoke tests (same rows, small tensors).
    pub fn quick() -> Settings {
        Settings {
            reps: 3,
            argmax_sizes: [64, 256],
            nonzero_sizes: [2, 4, 32, 64],
            one_hot_count: 1 << 12,
            one_hot_depth: 64,
            bandwidth_bytes: 8 << 20,
            only: None,
            dev: false,
        }
    }
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

/// One row of the results.
fn row(id: &str, label: &str, times: &[f64], read: u64, written: u64, check: Value) -> Value {
    eprintln!(
        "  {label:<44} median {:>9.2} ms  (min {:.2}, max {:.2})",
        median(times),
        times.iter().copied().fold(f64::INFINITY, f64::min),
        times.iter().copied().fold(0.0, f64::max),
    );
    json!({
        "id": id,
        "label": label,
        "times_ms": times,
        "median_ms": median(times),
        "bytes_read": read,
        "bytes_written": written,
        "check": check,
    })
}

/// Little-endian `i64`s of `bytes`.
fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        .collect()
}

/// Runs every row, writing inputs (and ArgMax results) into `data_dir`; returns the results
/// document (rows, bandwidth, manifest for the peers).
pub fn run(settings: &Settings, data_dir: &Path) -> Result<Value, String> {
    std::fs::create_dir_all(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    let io = |e: std::io::Error| e.to_string();
    let write_npy = |path: &Path, descr: &str, shape: &[usize], data: &[u8]| {
        if settings.dev {
            Ok(())
        } else {
            write_npy(path, descr, shape, data)
        }
    };
    let backend = CpuBackend::new();
    let level = Level::dml(0x4100);
    let reps = settings.reps;
    let mut rows = Vec::new();
    let mut manifest = Vec::new();

    eprintln!(
        "memory bandwidth ({} MiB buffers)",
        settings.bandwidth_bytes >> 20
    );
    let bw = if settings.dev {
        measure_bandwidth(1 << 20, 1)
    } else {
        measure_bandwidth(settings.bandwidth_bytes, reps)
    };
    eprintln!(
        "  memcpy 1 thread {:.1} GB/s, all threads {:.1} GB/s; read {:.1} GB/s, fill {:.1} GB/s",
        bw.memcpy_1t, bw.memcpy_all, bw.read_all, bw.fill_all
    );

    // ArgMax, FLOAT32 and INT32, over axis 1, axis 0 and both.
    let sizes = settings.argmax_sizes;
    let count = sizes.iter().map(|&s| s as usize).product::<usize>();
    let shape = sizes.map(|s| s as usize);
    for (data_type, name, descr) in [
        (DataType::Float32, "f32", "<f4"),
        (DataType::Int32, "i32", "<i4"),
    ] {
        if !settings.wants_group(&format!("argmax_{name}")) {
            continue;
        }
        let bytes = match data_type {
            DataType::Float32 => uniform_f32(count, 0xA11),
            _ => uniform_i32(count, 0xA12),
        };
        let file = format!("argmax_{name}.npy");
        write_npy(&data_dir.join(&file), descr, &shape, &bytes).map_err(io)?;
        let input = Tensor::from_bytes(TensorDesc::packed(data_type, &sizes), bytes)
            .map_err(|e| e.to_string())?;
        let type_label = if name == "f32" { "FLOAT32" } else { "INT32" };
        for (axes, axes_name) in [
            (vec![1u32], "axis 1"),
            (vec![0], "axis 0"),
            (vec![0, 1], "both axes"),
        ] {
            let id = format!("argmax_{name}_{}", axes_name.replace(' ', "_"));
            if !settings.wants(&id) {
                continue;
            }
            let label = format!(
                "ArgMax {type_label} {{{},{}}} {axes_name}",
                sizes[0], sizes[1]
            );
            let op = ops::argmax(data_type, &sizes, &axes);
            let (times, outputs) =
                time_execute(&backend, &op, std::slice::from_ref(&input), level, reps)?;
            let result = format!("{id}.ours.npy");
            let indices = &outputs[0].data;
            write_npy(
                &data_dir.join(&result),
                "<i8",
                &[indices.len() / 8],
                indices,
            )
            .map_err(io)?;
            let check = json!({ "argmax": result, "first": i64s(indices).first() });
            let out_bytes = indices.len() as u64;
            rows.push(row(&id, &label, &times, count as u64 * 4, out_bytes, check));
            manifest.push(json!({
                "id": id, "label": label, "op": "argmax", "input": file,
                "axes": if axes.len() == 2 { Value::Null } else { json!(axes[0]) },
                "ours": result,
            }));
        }
    }

    // NonZeroCoordinates, FLOAT32, at 1% and 50% nonzero.
    let sizes = settings.nonzero_sizes;
    let count = sizes.iter().map(|&s| s as usize).product::<usize>();
    let shape = sizes.map(|s| s as usize);
    let op = ops::nonzero(&sizes);
    for percent in [1u32, 50] {
        if !settings.wants_group(&format!("nonzero_{percent}")) {
            continue;
        }
        let bytes = sparse_f32(count, 0xB00 + u64::from(percent), percent);
        let file = format!("nonzero_{percent}.npy");
        write_npy(&data_dir.join(&file), "<f4", &shape, &bytes).map_err(io)?;
        let input = Tensor::from_bytes(TensorDesc::packed(DataType::Float32, &sizes), bytes)
            .map_err(|e| e.to_string())?;
        let id = format!("nonzero_{percent}");
        let label = format!(
            "NonZeroCoordinates FLOAT32 {{{},{},{},{}}} {percent}%",
            sizes[0], sizes[1], sizes[2], sizes[3]
        );
        let (times, outputs) = time_execute(&backend, &op, &[input], level, reps)?;
        let (nonzero, digest) = ops::nonzero_digest(&outputs[0], &outputs[1], &sizes);
        let written = 4 + nonzero * 4 * sizes.len() as u64;
        let check = json!({ "count": nonzero, "digest": digest.to_string() });
        rows.push(row(&id, &label, &times, count as u64 * 4, written, check));
        manifest.push(json!({ "id": id, "label": label, "op": "nonzero", "input": file }));
    }

    // OneHot: INT32 indices, FLOAT32 output.
    if !settings.wants_group("one_hot") {
        return Ok(document(settings, &bw, rows, manifest));
    }
    let (n, depth) = (settings.one_hot_count, settings.one_hot_depth);
    let indices = indices_i32(n as usize, 0xC01, depth);
    let file = "one_hot_indices.npy".to_string();
    write_npy(&data_dir.join(&file), "<i4", &[n as usize], &indices).map_err(io)?;
    let indices = Tensor::from_bytes(TensorDesc::packed(DataType::Int32, &[1, 1, n, 1]), indices)
        .map_err(|e| e.to_string())?;
    let op = ops::one_hot(n, depth);
    let id = "one_hot";
    let label = format!("OneHot INT32 {n} indices, depth {depth}, FLOAT32");
    let (times, outputs) = time_execute(
        &backend,
        &op,
        &[indices, ops::one_hot_values()],
        level,
        reps,
    )?;
    let (on, on_sum, other) = ops::one_hot_digest(&outputs[0]);
    let check = json!({ "on": on, "on_flat_sum": on_sum.to_string(), "other": other });
    let (read, written) = (u64::from(n) * 4 + 8, u64::from(n) * u64::from(depth) * 4);
    rows.push(row(id, &label, &times, read, written, check));
    manifest.push(json!({
        "id": id, "label": label, "op": "one_hot", "input": file, "depth": depth,
    }));

    Ok(document(settings, &bw, rows, manifest))
}

/// The results document.
fn document(settings: &Settings, bw: &Bandwidth, rows: Vec<Value>, manifest: Vec<Value>) -> Value {
    json!({
        "threads": rayon::current_num_threads(),
        "reps": settings.reps,
        "bandwidth_gbs": {
            "memcpy_1t": bw.memcpy_1t,
            "memcpy_all": bw.memcpy_all,
            "read_all": bw.read_all,
            "fill_all": bw.fill_all,
            "floor": bw.floor_gbs(),
        },
        "rows": rows,
        "manifest": manifest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_produces_every_row() {
        let dir = std::env::temp_dir().join(format!("opconform-bench-test-{}", std::process::id()));
        let doc = run(&Settings::quick(), &dir).unwrap();
        let rows = doc["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 9);
        assert!(rows.iter().all(|r| r["median_ms"].as_f64().unwrap() >= 0.0));
        assert_eq!(doc["manifest"].as_array().unwrap().len(), 9);
        // Every one-hot sequence has its OnValue: indices are in range.
        let one_hot = &rows[8]["check"];
        assert_eq!(one_hot["on"], 1 << 12);
        assert_eq!(one_hot["other"], 0);
        assert!(dir.join("argmax_f32.npy").exists());
        std::fs::remove_dir_all(&dir).ok();
    }
}
