//! A benchmark case: an operator of the CPU backend built from a compact JSON spec, its input
//! tensors and its (reused) output tensors.
//!
//! Specs (data types by their DirectML names, e.g. `"FLOAT32"`):
//!
//! ```text
//! {"op": "argmax", "dtype": T, "sizes": [...], "strides": [...] | null, "axes": [...],
//!  "last": false, "out_dtype": "INT64"}                           inputs: [input buffer]
//! {"op": "nonzero", "dtype": T, "sizes": [...]}                   inputs: [input]
//! {"op": "one_hot", "index_dtype": I, "dtype": T, "count": n, "depth": d}
//!                                                                 inputs: [indices, values]
//! ```
//!
//! ArgMax outputs are packed; NonZeroCoordinates writes the count and `count × rank` UINT32
//! coordinates; OneHot takes `n` indices (`{1,1,n,1}`) and values `{1,1,1,2}` (OffValue,
//! OnValue) and writes `{1,1,n,d}` along axis 3. Every case runs at `DML_FEATURE_LEVEL_4_1`.

use opconform_backend::{
    ArgMaxDesc, AxisDirection, Backend, DataType, Level, NonZeroCoordinatesDesc, OneHotDesc,
    OperatorDesc, Tensor, TensorDesc,
};
use opconform_cpu::CpuBackend;
use serde_json::Value;

/// One operator with its inputs and outputs, ready to run repeatedly.
#[derive(Debug)]
pub struct BenchCase {
    /// The operator.
    pub op: OperatorDesc,
    /// Its inputs.
    pub inputs: Vec<Tensor>,
    /// Its outputs (poisoned once, then overwritten by every run).
    pub outputs: Vec<Tensor>,
}

/// The data type named `name` (`"FLOAT32"`, …).
pub fn data_type(name: &str) -> Result<DataType, String> {
    DataType::ALL
        .into_iter()
        .find(|d| d.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("unknown data type {name}"))
}

fn field<'a>(spec: &'a Value, name: &str) -> Result<&'a Value, String> {
    spec.get(name)
        .ok_or_else(|| format!("spec lacks \"{name}\""))
}

fn u32s(spec: &Value, name: &str) -> Result<Vec<u32>, String> {
    field(spec, name)?
        .as_array()
        .ok_or_else(|| format!("\"{name}\" is not a list"))?
        .iter()
        .map(|v| {
            v.as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("\"{name}\" holds {v}, not a UINT32"))
        })
        .collect()
}

fn dtype(spec: &Value, name: &str) -> Result<DataType, String> {
    data_type(
        field(spec, name)?
            .as_str()
            .ok_or("a data type is not a string")?,
    )
}

fn number(spec: &Value, name: &str) -> Result<u32, String> {
    field(spec, name)?
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("\"{name}\" is not a UINT32"))
}

/// The operator of `spec`.
pub fn operator(spec: &Value) -> Result<OperatorDesc, String> {
    let op = field(spec, "op")?
        .as_str()
        .ok_or("\"op\" is not a string")?;
    match op {
        "argmax" => {
            let sizes = u32s(spec, "sizes")?;
            let strides = match spec.get("strides") {
                None | Some(Value::Null) => None,
                Some(_) => Some(u32s(spec, "strides")?),
            };
            let axes = u32s(spec, "axes")?;
            let input = TensorDesc::with_strides(dtype(spec, "dtype")?, &sizes, strides.as_deref())
                .ok_or("the input's size overflows")?;
            let mut out_sizes = sizes.clone();
            for &a in &axes {
                *out_sizes.get_mut(a as usize).ok_or("axis out of range")? = 1;
            }
            let last = spec.get("last").and_then(Value::as_bool).unwrap_or(false);
            Ok(OperatorDesc::ArgMax(ArgMaxDesc {
                input,
                output: TensorDesc::packed(dtype(spec, "out_dtype")?, &out_sizes),
                axes,
                axis_direction: if last {
                    AxisDirection::Decreasing
                } else {
                    AxisDirection::Increasing
                },
            }))
        }
        "nonzero" => {
            let sizes = u32s(spec, "sizes")?;
            let count: u32 = sizes
                .iter()
                .try_fold(1u32, |a, &s| a.checked_mul(s))
                .ok_or("too many elements")?;
            let rank = sizes.len().max(1);
            let mut coordinate_sizes = vec![1u32; rank.max(2)];
            let n = coordinate_sizes.len();
            coordinate_sizes[n - 2] = count;
            coordinate_sizes[n - 1] = rank as u32;
            Ok(OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
                input: TensorDesc::packed(dtype(spec, "dtype")?, &sizes),
                output_count: TensorDesc::packed(DataType::Uint32, &vec![1; rank]),
                output_coordinates: TensorDesc::packed(DataType::Uint32, &coordinate_sizes),
            }))
        }
        "one_hot" => {
            let (count, depth) = (number(spec, "count")?, number(spec, "depth")?);
            let values = dtype(spec, "dtype")?;
            Ok(OperatorDesc::OneHot(OneHotDesc {
                indices: TensorDesc::packed(dtype(spec, "index_dtype")?, &[1, 1, count, 1]),
                values: TensorDesc::packed(values, &[1, 1, 1, 2]),
                output: TensorDesc::packed(values, &[1, 1, count, depth]),
                axis: 3,
            }))
        }
        other => Err(format!("unknown op {other}")),
    }
}

/// A buffer of `len` bytes filled with `fill`, whose memory is asked to be backed by huge pages
/// (`madvise(MADV_HUGEPAGE)` before its first touch), as numpy asks for its large arrays:
/// without it, a streaming kernel on a large input pays a TLB miss every 4 KiB and the
/// prefetchers stop at every page boundary, and the comparison would measure allocators.
pub fn buffer(len: usize, fill: u8) -> Vec<u8> {
    let mut v: Vec<u8> = Vec::with_capacity(len);
    if len >= 4 << 20 {
        advise_huge_pages(v.as_mut_ptr(), len);
    }
    v.resize(len, fill);
    v
}

/// Asks Linux to back the whole pages of the `len` bytes at `start` (an allocation not yet
/// touched) with huge pages (`madvise(MADV_HUGEPAGE)`); a no-op elsewhere.
pub(crate) fn advise_huge_pages(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = start as usize;
        let aligned = start.next_multiple_of(4096);
        let end = (start + len) / 4096 * 4096;
        if end > aligned {
            // SAFETY: the range lies inside the caller's allocation (page-aligned within it);
            // MADV_HUGEPAGE only changes how its pages are backed, never their contents.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    end - aligned,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

impl BenchCase {
    /// The case of `spec` on the input buffers `buffers` (one per operator input, each as long
    /// as its description's `TotalTensorSizeInBytes`: a shorter one, by the rounding to 4
    /// bytes, is filled with zeros; a longer one, holding a view, is cut).
    pub fn new<B: AsRef<[u8]>>(spec: &Value, buffers: &[B]) -> Result<BenchCase, String> {
        let op = operator(spec)?;
        let descs = op.inputs();
        if descs.len() != buffers.len() {
            return Err(format!(
                "the operator takes {} inputs, {} were given",
                descs.len(),
                buffers.len()
            ));
        }
        let inputs = descs
            .into_iter()
            .zip(buffers)
            .map(|(desc, data)| {
                let data = data.as_ref();
                // TotalTensorSizeInBytes is rounded up to 4 bytes: a short buffer is padded
                // with zeros. A view's buffer may hold more than its last element needs: the
                // rest is dropped.
                let total = desc.total_tensor_size_in_bytes as usize;
                if data.len() < total && total - data.len() >= 4 {
                    return Err(format!(
                        "buffer holds {} bytes, the description needs {total}",
                        data.len()
                    ));
                }
                let mut bytes = buffer(total, 0);
                let n = data.len().min(total);
                bytes[..n].copy_from_slice(&data[..n]);
                Tensor::from_bytes(desc.clone(), bytes).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let outputs = op
            .outputs()
            .into_iter()
            .map(|d| {
                let len =
                    usize::try_from(d.total_tensor_size_in_bytes).map_err(|e| e.to_string())?;
                Tensor::from_bytes(d.clone(), buffer(len, 0xAB)).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BenchCase {
            op,
            inputs,
            outputs,
        })
    }

    /// Runs the operator once on the CPU backend.
    #[inline]
    pub fn run(&mut self, backend: &CpuBackend) -> Result<(), String> {
        backend
            .execute(
                &self.op,
                &self.inputs,
                &mut self.outputs,
                Level::dml(0x4100),
            )
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn specs_build_valid_runnable_operators() {
        let backend = CpuBackend::new();
        let argmax = json!({"op": "argmax", "dtype": "FLOAT32", "sizes": [2, 3],
                            "strides": [1, 2], "axes": [1], "out_dtype": "INT64"});
        let values: Vec<u8> = [1.0f32, 6.0, 3.0, 4.0, 2.0, 5.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut case = BenchCase::new(&argmax, &[values]).unwrap();
        case.run(&backend).unwrap();
        // Logical rows [1, 3, 2] and [6, 4, 5].
        assert_eq!(
            case.outputs[0].data,
            [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );

        let nonzero = json!({"op": "nonzero", "dtype": "UINT8", "sizes": [4]});
        let mut case = BenchCase::new(&nonzero, &[vec![0u8, 7, 0, 9]]).unwrap();
        case.run(&backend).unwrap();
        assert_eq!(case.outputs[0].data, 2u32.to_le_bytes());
        assert_eq!(&case.outputs[1].data[..8], &[1, 0, 0, 0, 3, 0, 0, 0]);

        let one_hot = json!({"op": "one_hot", "index_dtype": "INT32", "dtype": "UINT8",
                             "count": 2, "depth": 3});
        let indices: Vec<u8> = [2i32, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut case = BenchCase::new(&one_hot, &[indices, vec![0, 1]]).unwrap();
        case.run(&backend).unwrap();
        assert_eq!(case.outputs[0].data[..6], [0, 0, 1, 1, 0, 0]);

        assert!(operator(&json!({"op": "sort"})).is_err());
        assert!(BenchCase::new::<Vec<u8>>(&nonzero, &[]).is_err());
    }
}
