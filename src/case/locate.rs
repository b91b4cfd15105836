//! Finds the line and column of a case, and of a field inside it, in a case file's text, so
//! errors found after parsing still point into the file.

/// Line spans of the cases of a block-style case file.
pub struct CaseLocator<'a> {
    lines: Vec<&'a str>,
    /// First line (0-based) of each case, in file order.
    starts: Vec<usize>,
}

impl<'a> CaseLocator<'a> {
    /// Indexes `text`: each case starts at a `- ` item at the indentation of the first item
    /// after the `cases:` key.
    pub fn new(text: &'a str) -> CaseLocator<'a> {
        let lines: Vec<&str> = text.lines().collect();
        let mut starts = Vec::new();
        if let Some(key) = lines.iter().position(|l| l.trim_end() == "cases:") {
            let first_item = lines[key + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with("- "))
                .map(|i| i + key + 1);
            if let Some(first) = first_item {
                let indent = indentation(lines[first]);
                starts = (first..lines.len())
                    .filter(|&i| {
                        indentation(lines[i]) == indent && lines[i].trim_start().starts_with("- ")
                    })
                    .collect();
            }
        }
        CaseLocator { lines, starts }
    }

    /// 1-based line of case `index`, if known.
    pub fn case_line(&self, index: usize) -> Option<usize> {
        self.starts.get(index).map(|l| l + 1)
    }

    /// 1-based line and column of the field reached by the keys in `path` within case
    /// `index` (each key searched after the previous one); the case's own line when a key is
    /// not found.
    pub fn field(&self, index: usize, path: &[&str]) -> Option<(usize, usize)> {
        let start = *self.starts.get(index)?;
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.lines.len());
        let mut position = (start, indentation(self.lines[start]) + 1);
        let mut from = start;
        for key in path {
            let pattern = format!("{key}:");
            let found = (from..end)
                .find_map(|i| key_column(self.lines[i], &pattern).map(|column| (i, column)));
            match found {
                Some((line, column)) => {
                    position = (line, column);
                    from = line;
                }
                None => break,
            }
        }
        Some((position.0 + 1, position.1))
    }
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Column (1-based) of `pattern` in `line` when it stands as a key: at the start of the line's
/// content, after `- `, `{` or `, `.
fn key_column(line: &str, pattern: &str) -> Option<usize> {
    let mut search_from = 0;
    while let Some(offset) = line[search_from..].find(pattern) {
        let at = search_from + offset;
        let before = line[..at].trim_end();
        if before.is_empty()
            || before.ends_with('-')
            || before.ends_with('{')
            || before.ends_with(',')
        {
            return Some(at + 1);
        }
        search_from = at + pattern.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "format: 1\ncases:\n  - id: a\n    inputs:\n      X: {type: FLOAT32, data: [1]}\n  - id: b\n    inputs:\n      X:\n        data: [2]\n";

    #[test]
    fn finds_cases_and_fields() {
        let locator = CaseLocator::new(TEXT);
        assert_eq!(locator.case_line(0), Some(3));
        assert_eq!(locator.case_line(1), Some(6));
        assert_eq!(locator.field(0, &["inputs", "X", "data"]), Some((5, 26)));
        assert_eq!(locator.field(1, &["inputs", "X", "data"]), Some((9, 9)));
        assert_eq!(locator.field(1, &["outputs"]), Some((6, 3)));
    }
}
