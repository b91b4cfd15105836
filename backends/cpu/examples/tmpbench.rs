use opconform_backend::*;
use opconform_cpu::CpuBackend;
use std::time::Instant;

fn t(data_type: DataType, sizes: &[u32], fill: impl Fn(usize) -> Vec<u8>) -> Tensor {
    let desc = TensorDesc::packed(data_type, sizes);
    let n = desc.element_count() as usize;
    let mut data = Vec::with_capacity(desc.total_tensor_size_in_bytes as usize);
    for i in 0..n { data.extend(fill(i)); }
    data.resize(desc.total_tensor_size_in_bytes as usize, 0);
    Tensor::from_bytes(desc, data).unwrap()
}

fn bench(name: &str, op: &OperatorDesc, inputs: &[Tensor], level: Level) {
    let b = CpuBackend::new();
    let mut outs: Vec<Tensor> = op.outputs().into_iter().map(|d| Tensor::filled(d.clone(), 0).unwrap()).collect();
    b.execute(op, inputs, &mut outs, level).unwrap();
    let reps = 10;
    let start = Instant::now();
    for _ in 0..reps { b.execute(op, inputs, &mut outs, level).unwrap(); }
    let per = start.elapsed().as_secs_f64() / reps as f64;
    let bytes: u64 = inputs.iter().map(|t| t.data.len() as u64).sum::<u64>() + outs.iter().map(|t| t.data.len() as u64).sum::<u64>();
    println!("{name:50} {:8.3} ms  {:6.2} GB/s", per * 1e3, bytes as f64 / per / 1e9);
}

fn main() {
    let l = Level::dml(0x4100);
    let rnd = |i: usize| ((i as u64).wrapping_mul(0x9E3779B97F4A7C15) >> 40) as f32;
    for (sizes, axes) in [(vec![4096u32, 4096], vec![1u32]), (vec![4096, 4096], vec![0]), (vec![16_777_216], vec![0]), (vec![64, 4096, 64], vec![1]), (vec![4_000_000, 4], vec![1]), (vec![4, 4_000_000], vec![0])] {
        let input = t(DataType::Float32, &sizes, |i| rnd(i).to_le_bytes().to_vec());
        let mut o = sizes.clone(); for &a in &axes { o[a as usize] = 1; }
        let op = OperatorDesc::ArgMax(ArgMaxDesc { input: input.desc.clone(), output: TensorDesc::packed(DataType::Int64, &o), axes: axes.clone(), axis_direction: AxisDirection::Increasing });
        bench(&format!("argmax f32 {sizes:?} axes {axes:?}"), &op, &[input], l);
    }
    for (sizes, density) in [(vec![4096u32, 4096], 2), (vec![4096, 4096], 50), (vec![64, 512, 512], 10)] {
        let input = t(DataType::Float32, &sizes, |i| { let v = if (i as u64).wrapping_mul(0x9E3779B97F4A7C15) % 100 < density { 1.0f32 } else { 0.0 }; v.to_le_bytes().to_vec() });
        let r = sizes.len() as u32; let n: u32 = sizes.iter().product();
        let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc { input: input.desc.clone(), output_count: TensorDesc::packed(DataType::Uint32, &vec![1; r as usize]), output_coordinates: TensorDesc::packed(DataType::Uint32, &[n, r]) });
        bench(&format!("nonzero f32 {sizes:?} {density}%"), &op, &[input], l);
    }
    for (n, depth, axis) in [(1_000_000u32, 16u32, 1u32), (100_000, 1000, 1), (100_000, 100, 0)] {
        let (isz, osz) = if axis == 1 { (vec![n, 1], vec![n, depth]) } else { (vec![1, n], vec![depth, n]) };
        let idx = t(DataType::Int64, &isz, |i| (((i * 7) % (depth as usize + 3)) as i64).to_le_bytes().to_vec());
        let vals = t(DataType::Float32, &[1, 2], |i| (i as f32).to_le_bytes().to_vec());
        let op = OperatorDesc::OneHot(OneHotDesc { indices: idx.desc.clone(), values: vals.desc.clone(), output: TensorDesc::packed(DataType::Float32, &osz), axis });
        bench(&format!("onehot i64->f32 n {n} depth {depth} axis {axis}"), &op, &[idx, vals], l);
    }
}
