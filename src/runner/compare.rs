//! Compares a backend's outputs with a case's expected outputs and renders the difference as
//! aligned rows of the tensor, diffed line by line with `similar`.

use super::values::{elements_match, format_element, NanRule};
use crate::case::ExpectedTensor;
use opconform_backend::{Tensor, TensorDesc};
use similar::{ChangeTag, TextDiff};

/// The most rows of a tensor a diff shows around mismatches.
const MAX_DIFF_ROWS: usize = 40;

/// How one output differs from what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The output's name.
    pub tensor: String,
    /// Number of defined elements that differ.
    pub count: usize,
    /// Logical coordinates of the first differing element.
    pub first: Vec<u64>,
    /// Expected and actual text of the first differing element.
    pub first_values: (String, String),
    /// Expected against actual, as a unified diff of aligned rows.
    pub diff: String,
}

impl Mismatch {
    /// One line: where the first mismatch is and how many there are.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} element(s) differ; first at [{}]: expected {}, got {}",
            self.tensor,
            self.count,
            self.first
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            self.first_values.0,
            self.first_values.1
        )
    }
}

/// Coordinates of the row-major element `index` in a tensor of `sizes`.
pub fn coordinates(sizes: &[u32], mut index: u64) -> Vec<u64> {
    let mut coords = vec![0u64; sizes.len()];
    for (c, &s) in coords.iter_mut().zip(sizes).rev() {
        let s = u64::from(s.max(1));
        *c = index % s;
        index /= s;
    }
    coords
}

/// The bytes of the logical element `index` of `tensor`, read through its strides.
fn actual_element(tensor: &Tensor, index: u64) -> Option<&[u8]> {
    let offset = tensor
        .desc
        .element_offset(&coordinates(&tensor.desc.sizes, index));
    tensor.element_bytes(offset)
}

/// Compares `actual` with `expected` under `nans`; `None` when every defined element matches.
pub fn compare(expected: &ExpectedTensor, actual: &Tensor, nans: NanRule) -> Option<Mismatch> {
    let data_type = expected.desc.data_type;
    let size = data_type.size_in_bytes();
    let count = expected.desc.element_count() as usize;
    let mut differing = Vec::new();
    for index in 0..count {
        if !expected.is_defined(index) {
            continue;
        }
        let want = &expected.bytes[index * size..(index + 1) * size];
        let matches = actual_element(actual, index as u64)
            .is_some_and(|got| elements_match(data_type, want, got, nans));
        if !matches {
            differing.push(index);
        }
    }
    let first = *differing.first()?;
    let want = &expected.bytes[first * size..(first + 1) * size];
    let got = actual_element(actual, first as u64).map_or_else(
        || "(out of buffer)".to_string(),
        |b| format_element(data_type, b),
    );
    Some(Mismatch {
        tensor: expected.name.clone(),
        count: differing.len(),
        first: coordinates(&expected.desc.sizes, first as u64),
        first_values: (format_element(data_type, want), got),
        diff: render_diff(expected, actual, &differing),
    })
}

/// Renders expected and actual as rows along the last dimension (undefined elements as `?`
/// in both), restricted to rows near mismatches, and diffs them.
fn render_diff(expected: &ExpectedTensor, actual: &Tensor, differing: &[usize]) -> String {
    let desc = &expected.desc;
    let row_length = desc.sizes.last().copied().unwrap_or(1).max(1) as usize;
    let rows = (desc.element_count() as usize).div_ceil(row_length);
    let shown = rows_to_show(differing, row_length, rows);
    let size = desc.data_type.size_in_bytes();
    let cell = |index: usize, from_expected: bool| -> String {
        if !expected.is_defined(index) {
            return "?".to_string();
        }
        if from_expected {
            format_element(
                desc.data_type,
                &expected.bytes[index * size..(index + 1) * size],
            )
        } else {
            actual_element(actual, index as u64)
                .map_or_else(|| "!".to_string(), |b| format_element(desc.data_type, b))
        }
    };
    let width = shown
        .iter()
        .flat_map(|&row| {
            row * row_length..((row + 1) * row_length).min(desc.element_count() as usize)
        })
        .flat_map(|i| [cell(i, true).len(), cell(i, false).len()])
        .max()
        .unwrap_or(1);
    let render = |from_expected: bool| -> String {
        let mut text = String::new();
        for &row in &shown {
            let start = row * row_length;
            let end = (start + row_length).min(desc.element_count() as usize);
            let cells: Vec<String> = (start..end)
                .map(|i| format!("{:>width$}", cell(i, from_expected)))
                .collect();
            text.push_str(&format!(
                "{} [{}]\n",
                row_label(desc, start as u64),
                cells.join(", ")
            ));
        }
        text
    };
    let (want, got) = (render(true), render(false));
    let diff = TextDiff::from_lines(&want, &got);
    let mut out = String::from("--- expected\n+++ actual\n");
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
            ChangeTag::Equal => ' ',
        };
        out.push(sign);
        out.push_str(change.value());
    }
    if shown.len() < rows {
        out.push_str(&format!("  ({} of {rows} rows shown)\n", shown.len()));
    }
    out
}

/// Rows containing mismatches plus one row of context each side, at most [`MAX_DIFF_ROWS`].
fn rows_to_show(differing: &[usize], row_length: usize, rows: usize) -> Vec<usize> {
    let mut shown: Vec<usize> = differing
        .iter()
        .map(|i| i / row_length)
        .flat_map(|r| r.saturating_sub(1)..=(r + 1).min(rows - 1))
        .collect();
    shown.dedup();
    shown.sort_unstable();
    shown.dedup();
    shown.truncate(MAX_DIFF_ROWS);
    shown
}

/// `[i, j, :]`-style label for the row starting at logical element `start`.
fn row_label(desc: &TensorDesc, start: u64) -> String {
    let coords = coordinates(&desc.sizes, start);
    let leading: Vec<String> = coords[..coords.len().saturating_sub(1)]
        .iter()
        .map(u64::to_string)
        .collect();
    if leading.is_empty() {
        "[:]".to_string()
    } else {
        format!("[{}, :]", leading.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::DataType;

    fn expected(values: &[u32], defined: Option<Vec<bool>>) -> ExpectedTensor {
        let desc = TensorDesc::packed(DataType::Uint32, &[2, 2]);
        ExpectedTensor {
            name: "OutputTensor".to_string(),
            desc,
            bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            defined,
        }
    }

    fn actual(values: &[u32]) -> Tensor {
        let desc = TensorDesc::packed(DataType::Uint32, &[2, 2]);
        Tensor::from_bytes(desc, values.iter().flat_map(|v| v.to_le_bytes()).collect()).unwrap()
    }

    #[test]
    fn equal_outputs_match() {
        assert_eq!(
            compare(
                &expected(&[1, 2, 3, 4], None),
                &actual(&[1, 2, 3, 4]),
                NanRule::AnyNan
            ),
            None
        );
    }

    #[test]
    fn undefined_elements_are_not_compared() {
        let mask = Some(vec![true, true, false, false]);
        assert_eq!(
            compare(
                &expected(&[1, 2, 0, 0], mask),
                &actual(&[1, 2, 9, 9]),
                NanRule::AnyNan
            ),
            None
        );
    }

    #[test]
    fn mismatch_names_first_coordinates_and_diffs_rows() {
        let mismatch = compare(
            &expected(&[1, 2, 3, 4], None),
            &actual(&[1, 2, 3, 5]),
            NanRule::AnyNan,
        )
        .unwrap();
        assert_eq!(mismatch.count, 1);
        assert_eq!(mismatch.first, vec![1, 1]);
        assert!(
            mismatch.diff.contains("-[1, :] [3, 4]"),
            "{}",
            mismatch.diff
        );
        assert!(
            mismatch.diff.contains("+[1, :] [3, 5]"),
            "{}",
            mismatch.diff
        );
        assert!(mismatch
            .summary()
            .contains("first at [1, 1]: expected 4, got 5"));
    }

    #[test]
    fn coordinates_are_row_major() {
        assert_eq!(coordinates(&[2, 3, 4], 23), vec![1, 2, 3]);
        assert_eq!(coordinates(&[], 0), Vec::<u64>::new());
    }
}
