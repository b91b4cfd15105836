//! The Vulkan benchmark: per operator one large case, on the Vulkan backend and on the CPU
//! backend, through `Backend::execute`.
//!
//! The Vulkan backend's public API exposes only `execute` as a whole: per call it allocates
//! host-visible buffers, copies the inputs and the (poisoned) outputs in, records and submits
//! the dispatches, waits, and copies the outputs back. So the split reported here is an
//! estimate: *transfer* is the bytes copied in and out divided by the memcpy bandwidth
//! measured in the same run, *rest* (allocation, descriptor sets, dispatch, wait) is the total
//! minus that. Cases are sized to fit lavapipe's 128 MiB `maxStorageBufferRange`.

use opconform_backend::{Backend, DataType, Level, OperatorDesc, Tensor, TensorDesc};
use opconform_bench::data::{indices_i32, sparse_f32, uniform_f32};
use opconform_bench::ops;
use opconform_bench::timing::{measure_bandwidth, median, time_execute};
use opconform_cpu::CpuBackend;
use opconform_vulkan::VulkanBackend;
use serde_json::{json, Value};

/// A case: label, descriptor, level, inputs.
struct Case {
    label: String,
    op: OperatorDesc,
    level: Level,
    inputs: Vec<Tensor>,
}

fn tensor(desc: TensorDesc, bytes: Vec<u8>) -> Result<Tensor, String> {
    Tensor::from_bytes(desc, bytes).map_err(|e| e.to_string())
}

/// The four cases, `scale` dividing every size by a power of two (1 for the real run).
fn cases(scale: u32) -> Result<Vec<Case>, String> {
    let dml = Level::dml(0x4100);
    let mut cases = Vec::new();

    let sizes = [2048 / scale, 16384];
    let count = (sizes[0] * sizes[1]) as usize;
    cases.push(Case {
        label: format!("ArgMax FLOAT32 {{{},{}}} axis 1", sizes[0], sizes[1]),
        op: ops::argmax(DataType::Float32, &sizes, &[1]),
        level: dml,
        inputs: vec![tensor(
            TensorDesc::packed(DataType::Float32, &sizes),
            uniform_f32(count, 0xD01),
        )?],
    });

    let sizes = [2, 4, 1024 / scale, 1024];
    let count = sizes.iter().product::<u32>() as usize;
    cases.push(Case {
        label: format!(
            "NonZeroCoordinates FLOAT32 {{{},{},{},{}}} 50%",
            sizes[0], sizes[1], sizes[2], sizes[3]
        ),
        op: ops::nonzero(&sizes),
        level: dml,
        inputs: vec![tensor(
            TensorDesc::packed(DataType::Float32, &sizes),
            sparse_f32(count, 0xD02, 50),
        )?],
    });

    let (n, depth) = ((1u32 << 19) / scale, 64);
    let indices = indices_i32(n as usize, 0xD03, depth);
    cases.push(Case {
        label: format!("OneHot INT32 {n} indices, depth {depth}, FLOAT32"),
        op: ops::one_hot(n, depth),
        level: dml,
        inputs: vec![
            tensor(
                TensorDesc::packed(DataType::Int32, &[1, 1, n, 1]),
                indices.clone(),
            )?,
            ops::one_hot_values(),
        ],
    });

    let [depth_tensor, on, off] = ops::ov_one_hot_scalars(depth);
    cases.push(Case {
        label: format!("OneHot-1 INT32 {n} indices, depth {depth}, FLOAT32"),
        op: ops::ov_one_hot(n, depth),
        level: Level::Opset(1),
        inputs: vec![
            tensor(TensorDesc::packed(DataType::Int32, &[n]), indices)?,
            depth_tensor,
            on,
            off,
        ],
    });
    Ok(cases)
}

/// Runs the four cases on both backends; returns the results document, or why Vulkan is
/// unavailable.
pub fn run(reps: usize, scale: u32) -> Result<Value, String> {
    let vulkan = VulkanBackend::new().map_err(|e| e.to_string())?;
    let device = vulkan.info().device;
    eprintln!("Vulkan device: {device}");
    let cpu = CpuBackend::new();
    let bw = measure_bandwidth((128 << 20) / scale as usize, reps);
    let memcpy_gbs = bw.floor_gbs();
    let mut rows = Vec::new();
    for case in cases(scale)? {
        let (cpu_times, cpu_out) = time_execute(&cpu, &case.op, &case.inputs, case.level, reps)?;
        let (vk_times, vk_out) = time_execute(&vulkan, &case.op, &case.inputs, case.level, reps)?;
        // NonZeroCoordinates leaves rows past the count as they were: compare the count and
        // the rows below it; the others compare whole outputs.
        let agree = match &case.op {
            OperatorDesc::NonZeroCoordinates(_) => {
                let rows_bytes =
                    u32::from_le_bytes(cpu_out[0].data[..4].try_into().map_err(|_| "short count")?)
                        as usize
                        * 4
                        * 4;
                cpu_out[0].data == vk_out[0].data
                    && cpu_out[1].data[..rows_bytes] == vk_out[1].data[..rows_bytes]
            }
            _ => cpu_out.iter().zip(&vk_out).all(|(a, b)| a.data == b.data),
        };
        // Bytes the Vulkan backend copies: every input and every output in, every output out.
        let input_bytes: u64 = case.inputs.iter().map(|t| t.data.len() as u64).sum();
        let output_bytes: u64 = vk_out.iter().map(|t| t.data.len() as u64).sum();
        let moved = input_bytes + 2 * output_bytes;
        // A copy of n bytes reads and writes n: 2n at the memcpy (read + write) bandwidth.
        let transfer_ms = 2.0 * moved as f64 / (memcpy_gbs * 1e6);
        let (cpu_ms, vk_ms) = (median(&cpu_times), median(&vk_times));
        eprintln!(
            "  {:<48} cpu {cpu_ms:>8.1} ms  vulkan {vk_ms:>8.1} ms  (transfer ≈ {transfer_ms:.1} ms){}",
            case.label,
            if agree { "" } else { "  OUTPUTS DIFFER" }
        );
        rows.push(json!({
            "label": case.label,
            "cpu_ms": cpu_ms,
            "cpu_times_ms": cpu_times,
            "vulkan_ms": vk_ms,
            "vulkan_times_ms": vk_times,
            "copied_bytes": moved,
            "transfer_estimate_ms": transfer_ms,
            "rest_estimate_ms": (vk_ms - transfer_ms).max(0.0),
            "outputs_agree": agree,
        }));
    }
    Ok(json!({
        "device": device,
        "memcpy_gbs": memcpy_gbs,
        "reps": reps,
        "rows": rows,
    }))
}

/// The Vulkan results as a Markdown table.
pub fn markdown(doc: &Value) -> String {
    let mut out = String::from(
        "| case | CPU ms | Vulkan ms | Vulkan/CPU | copied MiB | transfer ≈ ms | rest ≈ ms | agree |\n\
         |---|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let empty = Vec::new();
    for row in doc["rows"].as_array().unwrap_or(&empty) {
        let f = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
        out.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.0} | {:.1} | {:.1} | {} |\n",
            row["label"].as_str().unwrap_or(""),
            f("cpu_ms"),
            f("vulkan_ms"),
            f("vulkan_ms") / f("cpu_ms"),
            f("copied_bytes") / 1048576.0,
            f("transfer_estimate_ms"),
            f("rest_estimate_ms"),
            if row["outputs_agree"].as_bool() == Some(true) {
                "yes"
            } else {
                "NO"
            },
        ));
    }
    out
}
