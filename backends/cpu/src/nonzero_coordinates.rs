//! `DML_NONZERO_COORDINATES`: the number of nonzero input elements, and for each of them, in
//! increasing element order, a row holding its last `N` coordinates (`N` being the last size
//! of OutputCoordinatesTensor; coordinates before the input's first dimension read 0).
//! -0.0 and +0.0 are zero; NaN is not. Rows at or past the count are left untouched.
//!
//! In parallel, the input is cut into ranges: each range counts its nonzero elements, a prefix
//! sum gives where its rows start, and each range writes its rows there, so the order holds.

use crate::element::{Element, Zero};
use crate::parallel::{map_ranges, threads, PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};
use crate::strided::{internal, write_packed, Layout, Nest, MAX_DIMS};
use half::f16;
use opconform_backend::{BackendError, DataType, NonZeroCoordinatesDesc, Tensor};
use rayon::prelude::*;

/// Elements checked together for being all zero before rows are written.
const SKIP_BLOCK: usize = 64;

/// Runs `DML_NONZERO_COORDINATES` on validated, length-checked tensors.
pub(crate) fn run(
    desc: &NonZeroCoordinatesDesc,
    input: &Tensor,
    count: &mut Tensor,
    coordinates: &mut Tensor,
) -> Result<(), BackendError> {
    let input_layout = Layout::new(&desc.input, input.data.len(), "InputTensor")?;
    let count_layout = Layout::new(&desc.output_count, count.data.len(), "OutputCountTensor")?;
    let coordinates_layout = Layout::new(
        &desc.output_coordinates,
        coordinates.data.len(),
        "OutputCoordinatesTensor",
    )?;
    let rank = coordinates_layout.sizes.len();
    if rank < 2 {
        return Err(internal(
            "OutputCoordinatesTensor has fewer than 2 dimensions",
        ));
    }
    let rows = coordinates_layout.sizes[rank - 2];
    let n = coordinates_layout.sizes[rank - 1];
    if rows != input_layout.count || n > MAX_DIMS || coordinates_layout.element_size != 4 {
        return Err(internal("OutputCoordinatesTensor does not fit the input"));
    }
    if count_layout.count != 1 || count_layout.element_size != 4 {
        return Err(internal("OutputCountTensor is not a 32-bit scalar"));
    }
    let job = Job {
        data: &input.data,
        input: &input_layout,
        n,
        coordinates: &coordinates_layout,
    };
    let total = match desc.input.data_type {
        DataType::Float64 => job.run::<f64>(&mut coordinates.data)?,
        DataType::Float32 => job.run::<f32>(&mut coordinates.data)?,
        DataType::Float16 => job.run::<f16>(&mut coordinates.data)?,
        DataType::Int64 => job.run::<i64>(&mut coordinates.data)?,
        DataType::Int32 => job.run::<i32>(&mut coordinates.data)?,
        DataType::Int16 => job.run::<i16>(&mut coordinates.data)?,
        DataType::Int8 => job.run::<i8>(&mut coordinates.data)?,
        DataType::Uint64 => job.run::<u64>(&mut coordinates.data)?,
        DataType::Uint32 => job.run::<u32>(&mut coordinates.data)?,
        DataType::Uint16 => job.run::<u16>(&mut coordinates.data)?,
        DataType::Uint8 => job.run::<u8>(&mut coordinates.data)?,
    };
    let total = u32::try_from(total).map_err(|_| internal("nonzero count exceeds UINT32"))?;
    // The scalar's only element is at offset 0 whatever its strides.
    total.write(&mut count.data[..4]);
    Ok(())
}

/// One NonZeroCoordinates computation over checked layouts.
struct Job<'a> {
    data: &'a [u8],
    input: &'a Layout,
    /// Coordinates per row.
    n: usize,
    coordinates: &'a Layout,
}

impl Job<'_> {
    /// Writes the rows and returns the nonzero count.
    fn run<T: Zero>(&self, out: &mut [u8]) -> Result<usize, BackendError> {
        let len = self.input.count;
        let parallel = len >= PARALLEL_MIN_ELEMENTS;
        let chunk = TASK_ELEMENTS.max(len.div_ceil(8 * threads()));
        let merged = Nest::merged(&self.input.sizes, [&self.input.strides]);
        let counts = map_ranges(len, chunk, parallel, |start, end| {
            self.count::<T>(&merged, start, end)
        });
        let total: usize = counts.iter().sum();
        let rows = self
            .coordinates
            .shrunk(self.coordinates.sizes.len() - 2, total);
        let unmerged = Nest::unmerged(&self.input.sizes, [&self.input.strides]);
        let row_bytes = self.n * 4;
        write_packed(&rows, out, |packed| {
            // Each range writes its rows where the counts before it end.
            let mut slices = Vec::with_capacity(counts.len());
            let mut rest = packed;
            for &c in &counts {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(c * row_bytes);
                slices.push(head);
                rest = tail;
            }
            let write = |(i, slice): (usize, &mut [u8])| {
                let start = i * chunk;
                self.write_rows::<T>(&unmerged, start, (start + chunk).min(len), slice);
            };
            if parallel {
                slices.into_par_iter().enumerate().for_each(write);
            } else {
                slices.into_iter().enumerate().for_each(write);
            }
            Ok(())
        })?;
        Ok(total)
    }

    /// Nonzero elements among `start..end` (row-major).
    fn count<T: Zero>(&self, nest: &Nest<1>, start: usize, end: usize) -> usize {
        let [step] = nest.inner_strides();
        let mut count = 0;
        nest.rows(start, end, |_, [offset], len, _| {
            if step == 1 {
                count += self.data[offset * T::SIZE..(offset + len) * T::SIZE]
                    .chunks_exact(T::SIZE)
                    .map(|e| usize::from(T::read(e).is_nonzero()))
                    .sum::<usize>();
            } else {
                count += (0..len)
                    .filter(|j| T::read(&self.data[(offset + j * step) * T::SIZE..]).is_nonzero())
                    .count();
            }
        });
        count
    }

    /// Writes the rows of the nonzero elements among `start..end` into `out`, packed.
    fn write_rows<T: Zero>(&self, nest: &Nest<1>, start: usize, end: usize, out: &mut [u8]) {
        let n = self.n;
        let row_len = n * 4;
        let rank = self.input.sizes.len();
        let dims = nest.dims();
        let walked = dims.len();
        let [step] = nest.inner_strides();
        // Byte offset in a row of each input dimension's coordinate, if among the last `n`.
        let column = |d: usize| (d + n).checked_sub(rank).map(|c| c * 4);
        let varying = if walked == 0 {
            None
        } else {
            column(dims[walked - 1])
        };
        let mut cursor = 0;
        nest.rows(start, end, |_, [offset], len, coords| {
            // The row of the run's first element, little-endian; only the innermost walked
            // coordinate varies along the run.
            let mut row = [0u8; ROW_BYTES];
            for (i, &d) in dims.iter().enumerate() {
                if let Some(at) = column(d) {
                    row[at..at + 4].copy_from_slice(&(coords[i] as u32).to_le_bytes());
                }
            }
            let first = if walked == 0 { 0 } else { coords[walked - 1] };
            let mut at = cursor;
            if step == 1 {
                // Blocks with no nonzero element (found by a vectorisable count) are skipped.
                let bytes = &self.data[offset * T::SIZE..(offset + len) * T::SIZE];
                for (b, block) in bytes.chunks(SKIP_BLOCK * T::SIZE).enumerate() {
                    let nonzero = block
                        .chunks_exact(T::SIZE)
                        .map(|e| usize::from(T::read(e).is_nonzero()))
                        .sum::<usize>();
                    if nonzero == 0 {
                        continue;
                    }
                    let block_first = first + b * SKIP_BLOCK;
                    let room = out.len().saturating_sub(at + nonzero * row_len);
                    let dense = nonzero * 16 >= block.len() / T::SIZE;
                    if dense && row_len <= 16 && room >= 16 {
                        dense_block::<T, 16>(
                            block,
                            out,
                            &mut at,
                            &row,
                            row_len,
                            varying,
                            block_first,
                        );
                    } else if dense && row_len <= 32 && room >= 32 {
                        dense_block::<T, 32>(
                            block,
                            out,
                            &mut at,
                            &row,
                            row_len,
                            varying,
                            block_first,
                        );
                    } else if dense && room >= ROW_BYTES {
                        dense_block::<T, ROW_BYTES>(
                            block,
                            out,
                            &mut at,
                            &row,
                            row_len,
                            varying,
                            block_first,
                        );
                    } else {
                        for (j, e) in block.chunks_exact(T::SIZE).enumerate() {
                            if T::read(e).is_nonzero() {
                                emit_row(out, &mut at, &row, row_len, varying, block_first + j);
                            }
                        }
                    }
                }
            } else {
                for j in 0..len {
                    if T::read(&self.data[(offset + j * step) * T::SIZE..]).is_nonzero() {
                        emit_row(out, &mut at, &row, row_len, varying, first + j);
                    }
                }
            }
            cursor = at;
        });
    }
}

/// Writes the rows of a block of elements without branching on each element (for blocks
/// dense enough that branches would mispredict): every element's row is written at `*at`,
/// and `*at` advances only past those of nonzero elements, so a zero element's row is
/// overwritten by the next one. The caller guarantees `COPY` bytes of room past the block's
/// last row, and `row_len <= COPY`.
#[inline(always)]
fn dense_block<T: Zero, const COPY: usize>(
    block: &[u8],
    out: &mut [u8],
    at: &mut usize,
    row: &[u8; ROW_BYTES],
    row_len: usize,
    varying: Option<usize>,
    first: usize,
) {
    let template: [u8; COPY] = std::array::from_fn(|i| row[i]);
    let mut position = *at;
    for (j, e) in block.chunks_exact(T::SIZE).enumerate() {
        let dst = &mut out[position..position + COPY];
        dst.copy_from_slice(&template);
        // The varying coordinate is stored into the output, not into the template, so that
        // no load waits on a narrower store.
        if let Some(v) = varying {
            dst[v..v + 4].copy_from_slice(&((first + j) as u32).to_le_bytes());
        }
        position += row_len * usize::from(T::read(e).is_nonzero());
    }
    *at = position;
}

/// Room for a row of [`MAX_DIMS`] coordinates.
const ROW_BYTES: usize = MAX_DIMS * 4;

/// Writes `row` (its first `row_len` bytes, with `coordinate` at byte `varying`) at `*at` in
/// `out` and advances `*at`. Where `out` has room, the whole fixed-size buffer is copied (a
/// constant-size copy); the bytes past the row are overwritten by the rows that follow.
#[inline(always)]
fn emit_row(
    out: &mut [u8],
    at: &mut usize,
    row: &[u8; ROW_BYTES],
    row_len: usize,
    varying: Option<usize>,
    coordinate: usize,
) {
    let start = *at;
    let dst = if out.len().saturating_sub(start) >= ROW_BYTES {
        let dst = &mut out[start..start + ROW_BYTES];
        dst.copy_from_slice(row);
        dst
    } else {
        let dst = &mut out[start..start + row_len];
        dst.copy_from_slice(&row[..row_len]);
        dst
    };
    if let Some(v) = varying {
        dst[v..v + 4].copy_from_slice(&(coordinate as u32).to_le_bytes());
    }
    *at = start + row_len;
}

#[cfg(test)]
mod tests {
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
        let coordinates =
            TensorDesc::with_strides(DataType::Uint32, &[4, 2], Some(&[1, 4])).unwrap();
        let op = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
            input: input.desc.clone(),
            output_count: TensorDesc::with_strides(DataType::Uint32, &[1, 1], Some(&[5, 9]))
                .unwrap(),
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
}
