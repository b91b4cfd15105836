use crate::test_tensors::{elements, packed, strided, Scalar};
use crate::tests::execute;
use half::f16;
use opconform_backend::{
    BackendError, DataType, Level, NonZeroCoordinatesDesc, OperatorDesc, Tensor, TensorDesc,
};

/// Runs NonZeroCoordinates; returns the count and the coordinates tensor.
fn nonzero(
    input: &Tensor,
    count_sizes: &[u32],
    coordinates: TensorDesc,
    level: u16,
) -> Result<(u32, Tensor), BackendError> {
    let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
        input: input.desc.clone(),
        output_count: TensorDesc::packed(DataType::Uint32, count_sizes),
        output_coordinates: coordinates,
    });
    let mut outputs = execute(&op, std::slice::from_ref(input), Level::dml(level))?;
    let coordinates = outputs.remove(1);
    let count = elements::<u32>(&outputs[0])[0];
    Ok((count, coordinates))
}

/// The first `count` rows of a coordinates tensor with `n` columns.
fn rows(coordinates: &Tensor, count: u32, n: usize) -> Vec<Vec<u32>> {
    elements::<u32>(coordinates)
        .chunks(n)
        .take(count as usize)
        .map(<[u32]>::to_vec)
        .collect()
}

fn packed_coordinates(sizes: &[u32]) -> TensorDesc {
    TensorDesc::packed(DataType::Uint32, sizes)
}

// --- The documented example (001_3a78d9feca2f1488.txt) ---

#[test]
fn documented_example() {
    #[rustfmt::skip]
    let values = [
        1.0f32, 0.0, 0.0, 2.0,
        -0.0, 3.5, 0.0, -5.2,
    ];
    let input = packed::<f32>(&[1, 1, 2, 4], &values);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 8, 3]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 4);
    assert_eq!(
        rows(&coordinates, count, 3),
        [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]]
    );
    // Rows at and past the count are left as they were (poisoned).
    assert!(coordinates.data[4 * 3 * 4..].iter().all(|&b| b == 0xAB));
}

// --- Edge cases ---

#[test]
fn signed_zero_is_zero_and_nan_is_not() {
    let input = packed::<f16>(
        &[1, 1, 1, 4],
        &[
            f16::from_bits(0x8000),
            f16::NAN,
            f16::from_bits(0x0000),
            f16::from_bits(0x8001),
        ],
    );
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 4, 1]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 2);
    assert_eq!(rows(&coordinates, count, 1), [[1], [3]]);

    let input = packed::<f32>(&[1, 1, 1, 3], &[f32::NAN, -0.0, -1e-45]);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 3, 1]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 2);
    assert_eq!(rows(&coordinates, count, 1), [[0], [2]]);
}

#[test]
fn increasing_element_order_from_the_documented_sentence() {
    // Nonzero values at {1,0}, {1,2} and {0,5} come out as [[0,5],[1,0],[1,2]].
    let mut values = [0i32; 12];
    values[6] = 4; // {1,0}
    values[8] = -2; // {1,2}
    values[5] = 9; // {0,5}
    let input = packed::<i32>(&[1, 1, 2, 6], &values);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 12, 2]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 3);
    assert_eq!(rows(&coordinates, count, 2), [[0, 5], [1, 0], [1, 2]]);
}

#[test]
fn n_between_effective_rank_and_dimension_count() {
    // Input {1,3,1,2}: effective rank 3. N = 3 gives (d1, d2, d3), N = 4 adds d0 = 0.
    let input = packed::<u8>(&[1, 3, 1, 2], &[0, 1, 0, 0, 7, 7]);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 6, 3]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 3);
    assert_eq!(
        rows(&coordinates, count, 3),
        [[0, 0, 1], [2, 0, 0], [2, 0, 1]]
    );
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 6, 4]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 3);
    assert_eq!(
        rows(&coordinates, count, 4),
        [[0, 0, 0, 1], [0, 2, 0, 0], [0, 2, 0, 1]]
    );
}

#[test]
fn five_dimensions_and_trailing_unit_dimension() {
    // Input {1,2,1,2,1}: nonzero at (0,0,0,1,0) and (0,1,0,0,0).
    let input = packed::<i16>(&[1, 2, 1, 2, 1], &[0, -3, 5, 0]);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1, 1],
        packed_coordinates(&[1, 1, 1, 4, 5]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 2);
    assert_eq!(
        rows(&coordinates, count, 5),
        [[0, 0, 0, 1, 0], [0, 1, 0, 0, 0]]
    );
}

#[test]
fn strided_and_broadcast_inputs() {
    // Logical {2,3} stored transposed (strides {1,2}): buffer [a00,a10,a01,a11,a02,a12].
    let input = strided::<i8>(&[2, 3], Some(&[1, 2]), &[0, 1, 2, 0, 0, 3]);
    // Logical rows: [0, 2, 0] and [1, 0, 3].
    let (count, coordinates) =
        nonzero(&input, &[1, 1], packed_coordinates(&[6, 2]), 0x4000).unwrap();
    assert_eq!(count, 3);
    assert_eq!(rows(&coordinates, count, 2), [[0, 1], [1, 0], [1, 2]]);
    // Broadcast rows: {3,2} with strides {0,1} over [0, 5].
    let input = strided::<u16>(&[3, 2], Some(&[0, 1]), &[0, 5]);
    let (count, coordinates) =
        nonzero(&input, &[1, 1], packed_coordinates(&[6, 2]), 0x4000).unwrap();
    assert_eq!(count, 3);
    assert_eq!(rows(&coordinates, count, 2), [[0, 1], [1, 1], [2, 1]]);
}

#[test]
fn strided_outputs() {
    // Coordinates {4,2} stored column-major (strides {1,4}); count {1,1} with strides {5,9}.
    let input = packed::<u32>(&[2, 2], &[0, 8, 9, 0]);
    let coordinates = TensorDesc::with_strides(DataType::Uint32, &[4, 2], Some(&[1, 4])).unwrap();
    let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
        input: input.desc.clone(),
        output_count: TensorDesc::with_strides(DataType::Uint32, &[1, 1], Some(&[5, 9])).unwrap(),
        output_coordinates: coordinates,
    });
    let outputs = execute(&op, &[input], Level::dml(0x4000)).unwrap();
    assert_eq!(elements::<u32>(&outputs[0]), [2]);
    let words: Vec<u32> = outputs[1]
        .data
        .chunks(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let poison = 0xABAB_ABAB;
    // Column 0 at offsets 0..4, column 1 at offsets 4..8; rows 2 and 3 untouched.
    assert_eq!(words, [0, 1, poison, poison, 1, 0, poison, poison]);
}

#[test]
fn rank_one_and_every_input_type_at_4_0() {
    fn check<T: Scalar>(zero: T, one: T) {
        let input = packed::<T>(&[5], &[one, zero, zero, one, one]);
        let (count, coordinates) =
            nonzero(&input, &[1], packed_coordinates(&[5, 1]), 0x4000).unwrap();
        assert_eq!(count, 3, "{}", T::TYPE);
        assert_eq!(rows(&coordinates, count, 1), [[0], [3], [4]]);
    }
    check::<f32>(-0.0, 0.25);
    check::<f16>(f16::from_bits(0x8000), f16::from_f32(-2.0));
    check::<i32>(0, i32::MIN);
    check::<i16>(0, -1);
    check::<i8>(0, i8::MIN);
    check::<u32>(0, u32::MAX);
    check::<u16>(0, 1 << 15);
    check::<u8>(0, 128);
}

#[test]
fn large_inputs_of_every_element_size() {
    // 70001 elements of each size (1, 2 and 4 bytes), in two rows: whole 64-element groups in several blocks
    // and workers, a partial last group, and signed zeros of the float types.
    fn check<T: Scalar>(values: impl Fn(usize) -> (T, bool)) {
        let count = 2 * 70_001;
        let (data, flags): (Vec<T>, Vec<bool>) = (0..count).map(values).unzip();
        let input = packed::<T>(&[2, 70_001], &data);
        let (got, coordinates) = nonzero(
            &input,
            &[1, 1],
            packed_coordinates(&[count as u32, 2]),
            0x4100,
        )
        .unwrap();
        let expected: Vec<Vec<u32>> = (0..count)
            .filter(|&i| flags[i])
            .map(|i| vec![(i / 70_001) as u32, (i % 70_001) as u32])
            .collect();
        assert_eq!(got as usize, expected.len(), "{}", T::TYPE);
        assert_eq!(rows(&coordinates, got, 2), expected, "{}", T::TYPE);
    }
    let pattern = |i: usize| (i * 7919 + i / 300) % 11 < 3;
    check::<u8>(|i| {
        if pattern(i) {
            ((i % 255 + 1) as u8, true)
        } else {
            (0, false)
        }
    });
    check::<f16>(|i| {
        if pattern(i) {
            (f16::from_bits(0x8001 + (i % 7) as u16), true)
        } else {
            (f16::from_bits(0x8000 * (i % 2) as u16), false)
        }
    });
    check::<i16>(|i| {
        if pattern(i) {
            ((i as i16) | 1, true)
        } else {
            (0, false)
        }
    });
    check::<f32>(|i| {
        if pattern(i) {
            (f32::from_bits(0x8000_0001 + i as u32 % 5), true)
        } else {
            (if i % 2 == 0 { 0.0 } else { -0.0 }, false)
        }
    });
    check::<u32>(|i| {
        if pattern(i) {
            (1 << (i % 32), true)
        } else {
            (0, false)
        }
    });
}

#[test]
fn all_unit_sizes() {
    // Effective rank 0: N = 1, and the single row holds the last coordinate, 0.
    let input = packed::<i8>(&[1, 1, 1, 1], &[-4]);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 1, 1]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 1);
    assert_eq!(rows(&coordinates, count, 1), [[0]]);
}

#[test]
fn dense_eight_dimensional_input_with_wide_rows() {
    // {1,1,1,2,3,4,5,6}: effective rank 5; N = 6 and N = 8 (24- and 32-byte rows).
    let sizes = [1usize, 1, 1, 2, 3, 4, 5, 6];
    let count: usize = sizes.iter().product();
    let values: Vec<f32> = (0..count)
        .map(|i| if (i * 37) % 10 < 7 { i as f32 } else { -0.0 })
        .collect();
    let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
    let input = packed::<f32>(&sizes32, &values);
    for n in [6usize, 8] {
        let mut expected = Vec::new();
        for (i, &v) in values.iter().enumerate() {
            if v != 0.0 {
                let mut coords = [0u32; 8];
                let mut rest = i;
                for d in (0..8).rev() {
                    coords[d] = (rest % sizes[d]) as u32;
                    rest /= sizes[d];
                }
                expected.push(coords[8 - n..].to_vec());
            }
        }
        let (got, coordinates) = nonzero(
            &input,
            &[1; 8],
            packed_coordinates(&[1, 1, 1, 1, 1, 1, count as u32, n as u32]),
            0x4000,
        )
        .unwrap();
        assert_eq!(got as usize, expected.len());
        assert_eq!(rows(&coordinates, got, n), expected, "N = {n}");
    }
}

#[test]
fn all_zero_input() {
    let input = packed::<f32>(&[1, 1, 2, 2], &[0.0, -0.0, 0.0, -0.0]);
    let (count, coordinates) = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 4, 2]),
        0x3000,
    )
    .unwrap();
    assert_eq!(count, 0);
    assert!(coordinates.data.iter().all(|&b| b == 0xAB));
}

#[test]
fn large_input_matches_a_naive_scan() {
    // {3, 300, 250}: nonzero where a simple pattern says so; parallel ranges must keep
    // increasing order across range boundaries.
    let sizes = [3usize, 300, 250];
    let count = sizes.iter().product::<usize>();
    let values: Vec<u16> = (0..count)
        .map(|i| {
            if (i * 7919) % 13 < 4 {
                (i % 500) as u16 + 1
            } else {
                0
            }
        })
        .collect();
    let input = packed::<u16>(&[3, 300, 250], &values);
    let (got_count, coordinates) = nonzero(
        &input,
        &[1, 1, 1],
        packed_coordinates(&[1, count as u32, 3]),
        0x4000,
    )
    .unwrap();
    let mut expected = Vec::new();
    for a in 0..sizes[0] {
        for b in 0..sizes[1] {
            for c in 0..sizes[2] {
                if values[(a * sizes[1] + b) * sizes[2] + c] != 0 {
                    expected.push(vec![a as u32, b as u32, c as u32]);
                }
            }
        }
    }
    assert_eq!(got_count as usize, expected.len());
    assert_eq!(rows(&coordinates, got_count, 3), expected);
}

/// The rows of the nonzero elements of a packed tensor of `sizes`, last `n` coordinates.
pub(super) fn naive_rows(values: &[f32], sizes: &[usize], n: usize) -> Vec<Vec<u32>> {
    let rank = sizes.len();
    let mut rows = Vec::new();
    for (i, v) in values.iter().enumerate() {
        if v.to_bits() & 0x7fff_ffff != 0 {
            let mut coords = vec![0u32; rank];
            let mut rest = i;
            for d in (0..rank).rev() {
                coords[d] = (rest % sizes[d]) as u32;
                rest /= sizes[d];
            }
            let mut row = vec![0u32; n.saturating_sub(rank)];
            row.extend_from_slice(&coords[rank.saturating_sub(n)..]);
            rows.push(row);
        }
    }
    rows
}

#[test]
fn single_pass_at_every_density_matches_a_naive_scan() {
    // {1, 6, 4, 9000}: 216000 elements, many blocks and workers. Each of the 24 rows of 9000
    // has its own density, from empty to full, so that mask groups are empty, sparse
    // (the bit loop), dense (the table path) and full, with -0.0 and NaN mixed in.
    let sizes = [1usize, 6, 4, 9000];
    let count: usize = sizes.iter().product();
    let percents = [0, 1, 3, 10, 12, 25, 50, 75, 90, 99, 100];
    let mut x: u64 = 7;
    let values: Vec<f32> = (0..count)
        .map(|i| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let percent = percents[(i / sizes[3]) % percents.len()];
            if (x >> 33) % 100 < percent {
                match (x >> 20) % 50 {
                    0 => f32::NAN,
                    _ => 1.0 + (x >> 40) as f32,
                }
            } else if (x >> 20) & 1 == 0 {
                -0.0
            } else {
                0.0
            }
        })
        .collect();
    let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
    let input = packed::<f32>(&sizes32, &values);
    for n in [3usize, 4] {
        let (got, coordinates) = nonzero(
            &input,
            &[1, 1, 1, 1],
            packed_coordinates(&[1, 1, count as u32, n as u32]),
            0x4000,
        )
        .unwrap();
        let expected = naive_rows(&values, &sizes, n);
        assert_eq!(got as usize, expected.len(), "N = {n}");
        assert_eq!(rows(&coordinates, got, n), expected, "N = {n}");
        // Rows past the count keep the poison.
        assert!(coordinates.data[got as usize * n * 4..]
            .iter()
            .all(|&b| b == 0xAB));
    }

    // The same through a strided coordinates tensor (the two-pass path): rows padded to 4.
    let strided_desc = TensorDesc::with_strides(
        DataType::Uint32,
        &[1, 1, count as u32, 3],
        Some(&[0, 0, 4, 1]),
    )
    .unwrap();
    let (got, coordinates) = nonzero(&input, &[1, 1, 1, 1], strided_desc, 0x4000).unwrap();
    let expected = naive_rows(&values, &sizes, 3);
    assert_eq!(got as usize, expected.len());
    let words = elements::<u32>(&coordinates);
    let strided_rows: Vec<Vec<u32>> = words
        .chunks(3)
        .take(got as usize)
        .map(<[u32]>::to_vec)
        .collect();
    assert_eq!(strided_rows, expected);
}

#[test]
fn invalid_descriptors_name_rules() {
    let input = packed::<f32>(&[1, 1, 12, 5], &[0.0; 60]);
    // N = 1 is below the effective rank 2.
    let err = nonzero(
        &input,
        &[1, 1, 1, 1],
        packed_coordinates(&[1, 1, 60, 1]),
        0x3000,
    )
    .unwrap_err();
    assert!(
        matches!(&err, BackendError::Invalid { rules, .. } if rules == &["NONZERO_COORDINATES.COORDINATES_N"]),
        "{err}"
    );
    // A 2-D input is not allowed before 4_0.
    let input = packed::<f32>(&[2, 2], &[0.0; 4]);
    let err = nonzero(&input, &[1, 1], packed_coordinates(&[4, 2]), 0x3000).unwrap_err();
    assert!(
        matches!(&err, BackendError::Invalid { rules, .. } if rules == &["NONZERO_COORDINATES.SUPPORT_DIMENSION_COUNT"]),
        "{err}"
    );
    // FLOAT64 input is in no table.
    let input = packed::<f64>(&[2, 2], &[0.0; 4]);
    let err = nonzero(&input, &[1, 1], packed_coordinates(&[4, 2]), 0x4100).unwrap_err();
    assert!(
        matches!(&err, BackendError::Invalid { rules, .. } if rules == &["NONZERO_COORDINATES.SUPPORT_DATA_TYPE"]),
        "{err}"
    );
}

// --- Every path against a plain reference ---

use super::emit::RowKernel;
use super::{run_with, ChunkLoad, Tuning};
use crate::simd::Isa;
use crate::test_tensors::poisoned;
use crate::thresholds::{
    NONZERO_ZEN2_IN_PLACE_DENSITY, NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY,
    NONZERO_ZEN4_NARROW_ELEMENT_BYTES, NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY,
};

/// An element type with a way to draw zero and nonzero values and to tell them apart
/// (independently of the kernel's own `Zero`).
trait Probe: Scalar {
    /// A nonzero value (`x` random) or a zero one (signed zeros for floats).
    fn draw(x: u64, nonzero: bool) -> Self;
    /// True unless the value is zero.
    fn nonzero(self) -> bool;
}

macro_rules! int_probe {
    ($($t:ty),*) => {$(
        impl Probe for $t {
            fn draw(x: u64, nonzero: bool) -> Self {
                if !nonzero {
                    0
                } else if x % 5 == 0 {
                    // Only the top bit set.
                    (1 as $t).rotate_right(1)
                } else {
                    ((x >> 8) as $t) | 1
                }
            }
            fn nonzero(self) -> bool {
                self != 0
            }
        }
    )*};
}

int_probe!(u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! float_probe {
    ($($t:ty => $bits:ty),*) => {$(
        impl Probe for $t {
            fn draw(x: u64, nonzero: bool) -> Self {
                let sign: $bits = 1 << (<$bits>::BITS - 1);
                let bits: $bits = match (nonzero, x % 7) {
                    (false, 0..=3) => 0,
                    (false, _) => sign,
                    (true, 0) => <$t>::NAN.to_bits(),
                    (true, 1) => sign | 1, // the smallest negative subnormal
                    (true, _) => (x >> 10) as $bits & !sign | 1,
                };
                <$t>::from_bits(bits)
            }
            fn nonzero(self) -> bool {
                self.to_bits() << 1 != 0
            }
        }
    )*};
}

float_probe!(f32 => u32, f64 => u64);

impl Probe for f16 {
    fn draw(x: u64, nonzero: bool) -> Self {
        let bits = match (nonzero, x % 7) {
            (false, 0..=3) => 0,
            (false, _) => 0x8000,
            (true, 0) => 0x7e00,
            (true, 1) => 0x8001,
            (true, _) => (x >> 10) as u16 & 0x7fff | 1,
        };
        f16::from_bits(bits)
    }
    fn nonzero(self) -> bool {
        self.to_bits() & 0x7fff != 0
    }
}

/// A small deterministic generator.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The tunings every case runs under: the thresholds, and tiny chunks with parallel workers
/// and streamed rows from the first element.
fn tunings() -> Vec<Tuning> {
    let mut all = Vec::new();
    for isa in Isa::available() {
        let widest = RowKernel::for_isa(isa);
        // The AVX-512 rows without VBMI2 too, where the CPU has it.
        let narrower = (widest == RowKernel::Avx512Vbmi2).then_some(RowKernel::Avx512);
        for rows in std::iter::once(widest).chain(narrower) {
            all.push(Tuning {
                rows,
                ..Tuning::new(isa)
            });
            // The thresholds, but the kernels for inputs the tiny path takes by default; and
            // the tiny path for every input it can take.
            for tiny_max in [0, usize::MAX] {
                all.push(Tuning {
                    rows,
                    tiny_max,
                    ..Tuning::new(isa)
                });
            }
            // Tiny chunks, parallel workers and streamed rows from the first element.
            let forced = Tuning {
                isa,
                rows,
                chunk: 192,
                parallel_min: 1,
                stream_min: 0,
                stream_share: f64::INFINITY,
                narrow_in_place_density: [-1.0; 2],
                narrow_element_bytes: 0,
                dense_in_place_density: [[f64::INFINITY; 2]; 2],
                // Chunks read ahead are prefetched again by the masks pass (wide elements).
                mask_prefetch_again: 256,
                // Where one worker takes the chunks: blocks of four words, scanned after
                // chunks of up to one row per four bytes.
                scatter_block_words: 4,
                scatter_min_bytes_per_row: 4,
                scatter_min_element_bytes: 1,
                tiny_max: 0,
            };
            for chunk in [64, 192, 4096] {
                all.push(Tuning { chunk, ..forced });
            }
            // Dense chunks in place, sparse ones streamed, in one output.
            all.push(Tuning {
                stream_share: 0.5,
                ..forced
            });
            // Sparse chunks of narrow elements in place, the others streamed, in one output.
            all.push(Tuning {
                narrow_in_place_density: [0.3, 0.3],
                narrow_element_bytes: 2,
                ..forced
            });
            // Dense chunks of wider elements in place, the others streamed, in one output.
            all.push(Tuning {
                narrow_element_bytes: 1,
                dense_in_place_density: [[0.25, 0.25], [0.1, 0.1]],
                ..forced
            });
            // One worker.
            all.push(Tuning {
                chunk: 128,
                parallel_min: usize::MAX,
                ..forced
            });
            // One worker scanning chunks block by block after sparse ones, in blocks of one
            // and two words, the first block too dense for it and the rest of its chunk
            // going the usual way.
            for (scatter_block_words, scatter_min_bytes_per_row) in [(1, 2), (2, 16)] {
                all.push(Tuning {
                    chunk: 1024,
                    parallel_min: usize::MAX,
                    scatter_block_words,
                    scatter_min_bytes_per_row,
                    ..forced
                });
            }
        }
    }
    all
}

#[test]
fn every_row_kernel_this_cpu_has_is_tested() {
    let kernels: Vec<RowKernel> = tunings().iter().map(|t| t.rows).collect();
    for isa in Isa::available() {
        assert!(kernels.contains(&RowKernel::for_isa(isa)), "{isa:?}");
    }
    if kernels.contains(&RowKernel::Avx512Vbmi2) {
        assert!(kernels.contains(&RowKernel::Avx512));
    }
}

/// The expected rows of `input` (read through its strides) with `n` coordinates.
fn reference<T: Probe>(input: &Tensor, n: usize) -> Vec<Vec<u32>> {
    let sizes: Vec<usize> = input.desc.sizes.iter().map(|&s| s as usize).collect();
    let rank = sizes.len();
    let mut rows = Vec::new();
    for (i, v) in elements::<T>(input).into_iter().enumerate() {
        if v.nonzero() {
            let mut coords = vec![0u32; rank];
            let mut rest = i;
            for d in (0..rank).rev() {
                coords[d] = (rest % sizes[d]) as u32;
                rest /= sizes[d];
            }
            let mut row = vec![0u32; n.saturating_sub(rank)];
            row.extend_from_slice(&coords[rank.saturating_sub(n)..]);
            rows.push(row);
        }
    }
    rows
}

/// Runs `input` with rows of `n` coordinates in `coordinates` (sizes {1,…,M,N}) under every
/// tuning, and compares the count, the rows and the untouched rest with the reference.
fn check_all<T: Probe>(input: &Tensor, coordinates: &TensorDesc, what: &str) {
    let n = *coordinates.sizes.last().unwrap() as usize;
    let expected = reference::<T>(input, n);
    for tuning in tunings() {
        let desc = NonZeroCoordinatesDesc {
            input: input.desc.clone(),
            output_count: TensorDesc::packed(DataType::Uint32, &[1]),
            output_coordinates: coordinates.clone(),
        };
        let mut count = poisoned(&desc.output_count);
        let mut rows_out = poisoned(coordinates);
        run_with(&desc, input, &mut count, &mut rows_out, tuning).unwrap();
        let got = elements::<u32>(&count)[0];
        let context = format!("{what} {} {tuning:?}", T::TYPE);
        assert_eq!(got as usize, expected.len(), "count, {context}");
        let words: Vec<u32> = if coordinates.strides.is_none() {
            // Packed: read directly (much faster than through the strides in debug builds).
            rows_out
                .data
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                .collect()
        } else {
            elements::<u32>(&rows_out)
        };
        let (head, tail) = words.split_at(expected.len() * n);
        let rows: Vec<Vec<u32>> = head.chunks(n.max(1)).map(<[u32]>::to_vec).collect();
        if n > 0 {
            assert_eq!(rows, expected, "rows, {context}");
        }
        assert!(tail.iter().all(|&w| w == 0xABAB_ABAB), "rest, {context}");
    }
}

/// A random packed case of `T`: `sizes`, nonzero with probability `percent`%.
fn random_values<T: Probe>(rng: &mut Rng, count: usize, percent: u64) -> Vec<T> {
    (0..count)
        .map(|_| {
            let x = rng.next();
            T::draw(x, (x >> 20) % 100 < percent)
        })
        .collect()
}

/// Packed inputs of ranks 1 to 8 with innermost sizes below, at and above a 64-element
/// group, at every density, with every admissible `N`.
fn random_packed_cases<T: Probe>(seed: u64) {
    let mut rng = Rng(seed);
    for case in 0..16 {
        let rank = 1 + case % 8;
        let inner = [1usize, 3, 7, 63, 64, 65, 200, 1000][rng.below(8) as usize];
        let mut sizes = vec![inner];
        let mut count = inner;
        while sizes.len() < rank {
            let size = if count > 1500 {
                1
            } else {
                1 + rng.below(5) as usize
            };
            sizes.insert(0, size);
            count *= size;
        }
        let percent = [0, 3, 30, 50, 90, 100][rng.below(6) as usize];
        let values = random_values::<T>(&mut rng, count, percent);
        let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
        let input = packed::<T>(&sizes32, &values);
        let low = opconform_backend::validate::effective_rank(&sizes32).max(1);
        for n in low..=rank {
            let coordinates = packed_coordinates(&[count as u32, n as u32]);
            check_all::<T>(&input, &coordinates, &format!("{sizes:?} {percent}% N={n}"));
        }
    }
}

#[test]
fn random_packed_inputs_of_every_type_match_the_reference() {
    random_packed_cases::<u8>(1);
    random_packed_cases::<i8>(2);
    random_packed_cases::<u16>(3);
    random_packed_cases::<i16>(4);
    random_packed_cases::<f16>(5);
    random_packed_cases::<u32>(6);
    random_packed_cases::<i32>(7);
    random_packed_cases::<f32>(8);
    random_packed_cases::<u64>(9);
    random_packed_cases::<i64>(10);
    random_packed_cases::<f64>(11);
}

#[test]
fn strided_inputs_and_outputs_match_the_reference() {
    let mut rng = Rng(99);
    // Padded rows, a transposed view and a broadcast dimension, each into packed and padded
    // rows.
    let layouts: [(&[u32], &[u32]); 3] = [
        (&[3, 5, 70], &[5 * 80, 80, 1]),
        (&[40, 3, 9], &[1, 40 * 9, 40]),
        (&[4, 6, 130], &[130, 0, 1]),
    ];
    for (sizes, strides) in layouts {
        let last: u32 = sizes.iter().zip(strides).map(|(&s, &t)| (s - 1) * t).sum();
        let buffer_len = last as usize + 1;
        for percent in [3, 50, 95] {
            let buffer = random_values::<f32>(&mut rng, buffer_len, percent);
            let input = strided::<f32>(sizes, Some(strides), &buffer);
            let count: u32 = sizes.iter().product();
            let packed_rows = packed_coordinates(&[1, count, 3]);
            let padded_rows =
                TensorDesc::with_strides(DataType::Uint32, &[count, 2], Some(&[3, 1])).unwrap();
            let what = format!("{sizes:?} strides {strides:?} {percent}%");
            check_all::<f32>(&input, &packed_rows, &what);
            check_all::<f32>(&input, &padded_rows, &what);
        }
    }
    // A strided u8 input long enough for parallel passes under the thresholds.
    let buffer = random_values::<u8>(&mut rng, 300 * 230, 40);
    let input = strided::<u8>(&[230, 300], Some(&[1, 230]), &buffer);
    check_all::<u8>(
        &input,
        &packed_coordinates(&[300 * 230, 2]),
        "transposed u8",
    );
}

#[test]
fn large_inputs_cross_chunks_and_runs() {
    // Above the parallel threshold, with rows that straddle chunk boundaries, at densities
    // from sparse to full.
    let mut rng = Rng(5);
    for (sizes, percent) in [
        ([3usize, 7, 4099], 2),
        ([2, 33, 2003], 50),
        ([1, 70_001, 1], 80),
        ([5, 5, 3001], 100),
    ] {
        let count: usize = sizes.iter().product();
        let values = random_values::<u8>(&mut rng, count, percent);
        let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
        let input = packed::<u8>(&sizes32, &values);
        for n in [2usize, 3] {
            let coordinates = packed_coordinates(&[count as u32, n as u32]);
            check_all::<u8>(&input, &coordinates, &format!("{sizes:?} {percent}%"));
        }
    }
}

#[test]
fn sparse_inputs_gathered_across_words_match_the_reference() {
    // The densities and run lengths whose rows are gathered sixteen at a time across words
    // (`NONZERO_GATHER`) and just outside them, with rows of fewer, as many and more
    // coordinates than the rank, some long enough to be streamed through the stage; and
    // dimensions of size 1 inside the shape (levels that divide by 1).
    let mut rng = Rng(23);
    let shapes: [&[usize]; 9] = [
        &[40, 7, 13],
        &[3, 300, 2],
        &[2, 5, 9, 100],
        &[900, 128],
        &[6, 2, 1000],
        &[1, 4, 3, 2, 700],
        &[130, 4, 129],
        &[3, 1, 70, 1, 9],
        &[25, 1, 1, 40],
    ];
    for sizes in shapes {
        for percent in [1, 2, 5, 14, 16] {
            let count: usize = sizes.iter().product();
            let values = random_values::<u8>(&mut rng, count, percent);
            let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
            let input = packed::<u8>(&sizes32, &values);
            for n in [1, sizes.len(), sizes.len() + 1] {
                let coordinates = packed_coordinates(&[count as u32, n as u32]);
                check_all::<u8>(&input, &coordinates, &format!("{sizes:?} {percent}% N={n}"));
            }
        }
    }
}

#[test]
fn very_sparse_long_runs_skip_their_zero_words() {
    // Under about one row per 64-element word, runs longer than the gathered ones
    // (`NONZERO_GATHER`) take the run kernel with zero words skipped eight at a time
    // (`NONZERO_SKIP_ZERO_WORDS_MAX_ROWS_PER_WORD`): runs ending inside a group of eight words
    // and inside a word, chunks whose room ends a few rows after a nonzero word, rank 1, and
    // densities from a row every 16 words to one every 16 runs.
    let mut rng = Rng(31);
    let shapes: [&[usize]; 5] = [
        &[40_000],
        &[3, 7, 1000],
        &[5, 451],
        &[2, 3, 2, 700],
        &[1, 9, 3, 517],
    ];
    for sizes in shapes {
        for per_mille in [1, 5, 10, 40] {
            let count: usize = sizes.iter().product();
            let values: Vec<u8> = (0..count)
                .map(|_| {
                    let x = rng.next();
                    u8::draw(x, (x >> 20) % 1000 < per_mille)
                })
                .collect();
            let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
            let input = packed::<u8>(&sizes32, &values);
            for n in [1, sizes.len(), sizes.len() + 1] {
                let coordinates = packed_coordinates(&[count as u32, n as u32]);
                let what = format!("{sizes:?} {per_mille}‰ N={n}");
                check_all::<u8>(&input, &coordinates, &what);
            }
        }
    }
}

#[test]
fn density_changing_between_chunks() {
    // Stretches of 0 %, 100 %, 4 % and 100 % density, each several chunks long under the
    // tiny tunings: chunks with no rows, with a row per element, and sparse.
    let mut rng = Rng(11);
    let stretch = 9_000;
    let values: Vec<u8> = [0, 100, 4, 100, 0]
        .iter()
        .flat_map(|&percent| random_values::<u8>(&mut rng, stretch, percent))
        .collect();
    let count = values.len();
    let input = packed::<u8>(&[5, 3, stretch as u32 / 3], &values);
    let coordinates = packed_coordinates(&[count as u32, 4]);
    check_all::<u8>(&input, &coordinates, "stretches of 0/100/4/100/0 %");
}

#[test]
fn more_workers_than_cores_match_the_reference() {
    // Seven workers on a pool of seven threads (more than this machine's cores, so workers
    // are descheduled while others wait for them), each taking many tiny chunks.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(7)
        .build()
        .unwrap();
    let mut rng = Rng(17);
    for percent in [3, 60] {
        let values = random_values::<u8>(&mut rng, 30_000, percent);
        let input = packed::<u8>(&[3, 100, 100], &values);
        let coordinates = packed_coordinates(&[30_000, 3]);
        pool.install(|| check_all::<u8>(&input, &coordinates, &format!("7 workers {percent}%")));
    }
}

// --- The chained prefix sum ---

use super::{Chain, PoisonOnPanic, FEW_CHUNKS};

#[test]
fn chain_gives_each_chunk_the_rows_before_it_whatever_the_order_of_counting() {
    // Four threads claim the chunks and publish each chunk's count (its index mod 5); every
    // chunk must get the sum of the counts before it, and the total the sum of all. Chains
    // of up to `FEW_CHUNKS` keep their ends inline, longer ones on the heap.
    for chunks in [1, 7, FEW_CHUNKS, FEW_CHUNKS + 1, 2_000] {
        check_chain(chunks);
    }
}

/// Runs [`chain_gives_each_chunk_the_rows_before_it_whatever_the_order_of_counting`] on a
/// chain of `chunks` chunks.
fn check_chain(chunks: usize) {
    let chain = Chain::new(chunks, true);
    let got: Vec<Vec<(usize, usize)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some(c) = chain.claim() {
                        mine.push((c, chain.publish(c, c % 5)));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut before: Vec<(usize, usize)> = got.into_iter().flatten().collect();
    before.sort_unstable();
    assert_eq!(before.len(), chunks);
    let mut sum = 0;
    for (c, rows) in before {
        assert_eq!(rows, sum, "chunk {c}");
        sum += c % 5;
    }
    assert_eq!(chain.total(), sum);
    assert_eq!(chain.claim(), None);
}

#[test]
fn a_worker_that_panics_releases_the_one_waiting_for_it() {
    // Chunk 0's owner panics before publishing: the owner of chunk 1 must fail, not wait.
    let chain = Chain::new(2, true);
    assert_eq!(chain.claim(), Some(0));
    assert_eq!(chain.claim(), Some(1));
    let owner = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _poison = PoisonOnPanic(&chain.failed);
                panic!("chunk 0 failed");
            })
            .join()
    });
    assert!(owner.is_err());
    let waiter = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| chain.publish(1, 3)));
    assert!(waiter.is_err());
}

/// Times the kernel on the benchmark's shape ({3,10,1000,1000}, FLOAT32 and UINT8, 5/50/90%)
/// on one thread and on all, beside a floor (summing the input, then filling as many bytes
/// as the rows take), interleaved:
/// `cargo test --release --lib nonzero_speed -- --ignored --nocapture` (`NZ_ONLY=u8:5` for one).
#[test]
#[ignore]
fn nonzero_speed() {
    use rayon::prelude::*;
    fn median(mut times: Vec<f64>) -> f64 {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    }
    fn time<T: Probe>(percent: u64, threads: usize) -> (f64, f64) {
        let sizes = [3u32, 10, 1000, 1000];
        let count = 30_000_000usize;
        let mut rng = Rng(percent);
        let values = random_values::<T>(&mut rng, count, percent);
        let mut data = Vec::with_capacity(count * std::mem::size_of::<T>());
        for v in &values {
            data.extend_from_slice(&v.le());
        }
        drop(values);
        let input = Tensor::from_bytes(TensorDesc::packed(T::TYPE, &sizes), data).unwrap();
        let desc = NonZeroCoordinatesDesc {
            input: input.desc.clone(),
            output_count: TensorDesc::packed(DataType::Uint32, &[1, 1, 1, 1]),
            output_coordinates: packed_coordinates(&[1, 1, count as u32, 4]),
        };
        let mut out_count = poisoned(&desc.output_count);
        let mut rows_out = poisoned(&desc.output_coordinates);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (mut ours, mut floor) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            let t = std::time::Instant::now();
            pool.install(|| {
                run_with(
                    &desc,
                    &input,
                    &mut out_count,
                    &mut rows_out,
                    Tuning::new(Isa::detect()),
                )
                .unwrap()
            });
            ours.push(t.elapsed().as_secs_f64() * 1e3);
            let rows = elements::<u32>(&out_count)[0] as usize;
            let t = std::time::Instant::now();
            let sum = pool.install(|| {
                input
                    .data
                    .par_chunks(1 << 20)
                    .map(|c| {
                        c.chunks_exact(8)
                            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
                            .fold(0u64, u64::wrapping_add)
                    })
                    .reduce(|| 0, u64::wrapping_add)
            });
            std::hint::black_box(sum);
            pool.install(|| {
                rows_out.data[..rows * 16]
                    .par_chunks_mut(1 << 20)
                    .for_each(|c| c.fill(0))
            });
            floor.push(t.elapsed().as_secs_f64() * 1e3);
        }
        (median(ours), median(floor))
    }
    let only = std::env::var("NZ_ONLY").unwrap_or_default();
    for threads in [1, 2] {
        for percent in [5, 50, 90] {
            for name in ["f32", "u8"] {
                if !only.is_empty() && only != format!("{name}:{percent}") {
                    continue;
                }
                let (ours, floor) = if name == "f32" {
                    time::<f32>(percent, threads)
                } else {
                    time::<u8>(percent, threads)
                };
                println!(
                    "{threads}t {name} {percent}%: ours {ours:.2} ms, floor {floor:.2} ms, ratio {:.2}",
                    ours / floor
                );
            }
        }
    }
}

#[test]
fn innermost_unit_dimensions_are_moved_inside_and_their_columns_traded_back() {
    // Innermost dimensions of size 1 (every element would be a run of its own): the rows are
    // built as if they lay inside the last larger dimension, and the two columns traded back
    // as they are written (straight into the output, or through the stage), above and below
    // the parallel threshold, with leading zero columns (N above the rank) too.
    let mut rng = Rng(1919);
    for (sizes, percent) in [
        (vec![7usize, 93, 19, 1], 75),
        (vec![4, 50, 1, 1, 1], 5),
        (vec![3, 1, 9, 1], 100),
        (vec![1, 20_011, 1], 60),
    ] {
        let count: usize = sizes.iter().product();
        let values = random_values::<f32>(&mut rng, count, percent);
        let sizes32: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
        let input = packed::<f32>(&sizes32, &values);
        for n in [sizes.len(), (sizes.len() + 2).min(8)] {
            let coordinates = packed_coordinates(&[count as u32, n as u32]);
            check_all::<f32>(&input, &coordinates, &format!("{sizes:?} {percent}% N={n}"));
        }
    }
}

/// A chunk of `rows` rows of 4 coordinates over `elements` elements of `element_bytes`.
fn load(rows: usize, elements: usize, element_bytes: usize, shared: bool) -> ChunkLoad {
    ChunkLoad {
        rows,
        row_bytes: 16 * rows,
        elements,
        element_bytes,
        shared,
    }
}

#[test]
fn a_chunk_streams_its_rows_only_within_the_share() {
    let shared = Tuning {
        stream_share: 0.25,
        narrow_in_place_density: [-1.0; 2],
        ..Tuning::new(Isa::Portable)
    };
    // 25 and 26 bytes of rows over 100 input bytes (rows of 1 byte, to hit the edge exactly).
    let edge = |row_bytes| ChunkLoad {
        row_bytes,
        ..load(1, 25, 4, false)
    };
    assert!(shared.chunk_streams(true, edge(25)));
    assert!(!shared.chunk_streams(true, edge(26)));
    assert!(!shared.chunk_streams(false, edge(1)));
    let unlimited = Tuning {
        stream_share: f64::INFINITY,
        narrow_in_place_density: [-1.0; 2],
        ..Tuning::new(Isa::Portable)
    };
    assert!(unlimited.chunk_streams(true, load(1 << 36, 1, 4, false)));
}

#[test]
fn the_masks_pass_prefetches_again_only_wide_elements() {
    let tuning = Tuning {
        mask_prefetch_again: 4096,
        ..Tuning::new(Isa::Portable)
    };
    assert_eq!(tuning.mask_prefetch_again::<u8>(), 0);
    assert_eq!(tuning.mask_prefetch_again::<f16>(), 0);
    assert_eq!(tuning.mask_prefetch_again::<f32>(), 4096);
    assert_eq!(tuning.mask_prefetch_again::<u64>(), 4096);
    // Only AMD Zen 4 (family 19h, with AVX-512) prefetches again.
    assert_eq!(Tuning::new(Isa::Portable).mask_prefetch_again, 0);
    assert_eq!(Tuning::new(Isa::Avx2).mask_prefetch_again, 0);
    assert_eq!(
        Tuning::new(Isa::Avx512).mask_prefetch_again > 0,
        crate::simd::amd_family_19h()
    );
}

#[test]
fn sparse_chunks_of_narrow_elements_write_in_place_within_their_density() {
    let tuning = Tuning {
        stream_share: f64::INFINITY,
        narrow_in_place_density: [0.3, 0.1],
        narrow_element_bytes: 2,
        ..Tuning::new(Isa::Portable)
    };
    // One worker: 30 % and less in place, for 1- and 2-byte elements only.
    assert!(!tuning.chunk_streams(true, load(30, 100, 1, false)));
    assert!(!tuning.chunk_streams(true, load(30, 100, 2, false)));
    assert!(tuning.chunk_streams(true, load(31, 100, 1, false)));
    assert!(tuning.chunk_streams(true, load(5, 100, 4, false)));
    // Several workers: 10 % and less.
    assert!(!tuning.chunk_streams(true, load(10, 100, 1, true)));
    assert!(tuning.chunk_streams(true, load(11, 100, 1, true)));
    // A pass that does not stream never does.
    assert!(!tuning.chunk_streams(false, load(50, 100, 4, false)));
}

#[test]
fn zen_4_writes_one_byte_rows_in_place_at_any_density() {
    let tuning = Tuning {
        stream_share: f64::INFINITY,
        narrow_in_place_density: NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY,
        narrow_element_bytes: NONZERO_ZEN4_NARROW_ELEMENT_BYTES,
        ..Tuning::new(Isa::Portable)
    };
    for shared in [false, true] {
        assert!(!tuning.chunk_streams(true, load(1, 100, 1, shared)));
        assert!(!tuning.chunk_streams(true, load(100, 100, 1, shared)));
        assert!(tuning.chunk_streams(true, load(5, 100, 2, shared)));
    }
}

#[test]
fn zen_4_writes_dense_rows_of_wider_elements_in_place() {
    let tuning = Tuning {
        stream_share: f64::INFINITY,
        narrow_in_place_density: NONZERO_ZEN4_NARROW_IN_PLACE_DENSITY,
        narrow_element_bytes: NONZERO_ZEN4_NARROW_ELEMENT_BYTES,
        dense_in_place_density: NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY,
        ..Tuning::new(Isa::Portable)
    };
    let [[two_alone, two_shared], [four_alone, four_shared]] = NONZERO_ZEN4_DENSE_IN_PLACE_DENSITY;
    let at = |density: f64| (density * 1000.0).ceil() as usize;
    // At the threshold in place, just under it streamed; 2-byte elements on several workers
    // always stream.
    for bytes in [4, 8] {
        assert!(!tuning.chunk_streams(true, load(at(four_alone), 1000, bytes, false)));
        assert!(tuning.chunk_streams(true, load(at(four_alone) - 1, 1000, bytes, false)));
        assert!(!tuning.chunk_streams(true, load(at(four_shared), 1000, bytes, true)));
        assert!(tuning.chunk_streams(true, load(at(four_shared) - 1, 1000, bytes, true)));
    }
    assert!(!tuning.chunk_streams(true, load(at(two_alone), 1000, 2, false)));
    assert!(tuning.chunk_streams(true, load(at(two_alone) - 1, 1000, 2, false)));
    assert!(two_shared.is_infinite());
    assert!(tuning.chunk_streams(true, load(1000, 1000, 2, true)));
    // Elsewhere (no Zen 4 tuning) every density of wider elements streams.
    let elsewhere = Tuning {
        stream_share: f64::INFINITY,
        ..Tuning::new(Isa::Portable)
    };
    assert!(elsewhere.chunk_streams(true, load(1000, 1000, 4, false)));
}

#[test]
fn zen_2_streams_only_dense_chunks_of_every_width() {
    let tuning = Tuning {
        stream_share: f64::INFINITY,
        narrow_in_place_density: NONZERO_ZEN2_IN_PLACE_DENSITY,
        narrow_element_bytes: usize::MAX,
        ..Tuning::new(Isa::Portable)
    };
    let [alone, shared] = NONZERO_ZEN2_IN_PLACE_DENSITY;
    let at = |density: f64| (density * 1000.0).floor() as usize;
    for bytes in [1, 2, 4, 8] {
        assert!(!tuning.chunk_streams(true, load(at(alone), 1000, bytes, false)));
        assert!(tuning.chunk_streams(true, load(at(alone) + 1, 1000, bytes, false)));
        assert!(!tuning.chunk_streams(true, load(at(shared), 1000, bytes, true)));
        assert!(tuning.chunk_streams(true, load(at(shared) + 1, 1000, bytes, true)));
    }
    // The thresholds give that tuning to AVX2 kernels on family 17h only, with no share cap.
    let avx2 = Tuning::new(Isa::Avx2);
    let zen_2 = crate::simd::amd_family_17h();
    assert_eq!(avx2.narrow_element_bytes == usize::MAX, zen_2);
    assert_eq!(
        avx2.narrow_in_place_density == NONZERO_ZEN2_IN_PLACE_DENSITY,
        zen_2
    );
    if zen_2 {
        assert!(avx2.stream_share.is_infinite());
    }
    assert_ne!(Tuning::new(Isa::Portable).narrow_element_bytes, usize::MAX);
}

#[test]
fn the_thresholds_write_sparse_rows_in_place_only_on_zen_2_and_on_zen_4_and_5_with_avx512() {
    for isa in Isa::available() {
        let tuning = Tuning::new(isa);
        // Rows of one coordinate: 0.2 bytes per input byte, within every share.
        let sparse = ChunkLoad {
            row_bytes: 20,
            ..load(5, 100, 1, false)
        };
        let in_place = !tuning.chunk_streams(true, sparse);
        assert_eq!(
            in_place,
            (isa == Isa::Avx512 && (crate::simd::amd_zen5() || crate::simd::amd_family_19h()))
                || (isa == Isa::Avx2 && crate::simd::amd_family_17h()),
            "{isa:?}"
        );
    }
}
