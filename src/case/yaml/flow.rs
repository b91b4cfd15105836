//! Flow sequences of simple plain scalars (`sizes: [1, 2]`, `data: [0.5, -1, .nan]`), read
//! before the YAML parser runs so that it does not tokenize them one character at a time.
//!
//! [`find`] lists every `[ … ]` whose contents are only short plain scalars made of
//! `[0-9A-Za-z._+-]`, commas and spaces (line breaks allowed, continuation lines indented past
//! the `[`), with each item's position. [`blank`] replaces those contents with spaces, keeping
//! every line break, so the parser sees empty lists at the same lines and columns and every
//! other node keeps its position. The tree builder puts the items back when the parser reports
//! a list starting and ending exactly where one was found, and parses the original text instead
//! when any was not (a `[` inside a quoted or block scalar, say): the tree is always the one the
//! parser would have built from the original text.
//!
//! Why the items read the same: inside a flow sequence a plain scalar of those characters,
//! followed by spaces and `,` or `]`, is one scalar with exactly that text; none can start with
//! `-` followed by a flow indicator, hold `:` or `#`, or span lines. The parser's indentation
//! checks pass for them whenever they pass for the `[` (every item, comma and bracket on a
//! continuation line is further right than the `[`).

use super::tree::{Node, NodeValue, Pos};
use std::borrow::Cow;

/// A flow sequence of simple scalars found in the text.
#[derive(Debug)]
pub(super) struct SimpleSeq<'a> {
    /// Where the `[` is.
    pub open: Pos,
    /// Where the `]` is.
    pub close: Pos,
    /// Byte range of the contents between the brackets.
    pub inner: std::ops::Range<usize>,
    /// The items, in order.
    pub items: Vec<Node<'a>>,
}

/// Every simple flow sequence of `text`, in text order. Empty when `text` holds a carriage
/// return (line numbering is then left to the parser alone).
pub(super) fn find(text: &str) -> Vec<SimpleSeq<'_>> {
    let mut found = Vec::new();
    if text.contains('\r') {
        return found;
    }
    // Line numbers are counted from `counted` (at `line`) up to each `[` met.
    let (mut line, mut counted) = (1, 0);
    let mut at = 0;
    while let Some(offset) = text[at..].find('[') {
        let i = at + offset;
        at = i + 1;
        line += count_line_breaks(&text.as_bytes()[counted..i]);
        counted = i;
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let prefix = &text[line_start..i];
        if prefix.contains(['#', '\'', '"']) {
            continue;
        }
        let open = Pos {
            line,
            column: prefix.chars().count() + 1,
        };
        if let Some(seq) = read_seq(text, i, open) {
            // Continue after the `]`.
            (line, counted) = (seq.close.line, seq.inner.end);
            at = seq.inner.end + 1;
            found.push(seq);
        }
    }
    found
}

/// How many `\n` bytes `bytes` holds (a loop the compiler vectorizes).
fn count_line_breaks(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

fn is_item_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-')
}

/// Reads `[ item, item, … ]` starting at the `[` at byte `start` (at `open`); `None` unless
/// every part is simple and at least one item is given.
fn read_seq(text: &str, start: usize, open: Pos) -> Option<SimpleSeq<'_>> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut line = open.line;
    // Column (1-based) of byte `line_start` on the current line, and that byte.
    let (mut base_column, mut line_start) = (open.column, start);
    let mut i = start + 1;
    let mut expect_item = true;
    loop {
        let b = *bytes.get(i)?;
        match b {
            b' ' => i += 1,
            b'\n' => {
                i += 1;
                line += 1;
                (base_column, line_start) = (1, i);
                let indent = bytes[i..].iter().take_while(|&&c| c == b' ').count();
                let next = *bytes.get(i + indent)?;
                if next != b'\n' && indent < open.column {
                    return None;
                }
            }
            b',' if !expect_item => {
                expect_item = true;
                i += 1;
            }
            b']' if !items.is_empty() => {
                let close = Pos {
                    line,
                    column: base_column + (i - line_start),
                };
                return Some(SimpleSeq {
                    open,
                    close,
                    inner: start + 1..i,
                    items,
                });
            }
            _ if expect_item && is_item_byte(b) => {
                let len = bytes[i..].iter().take_while(|&&c| is_item_byte(c)).count();
                let follower = *bytes.get(i + len)?;
                if b == b'-' && !(bytes[i + 1].is_ascii_alphanumeric() || bytes[i + 1] == b'.') {
                    return None;
                }
                if !matches!(follower, b' ' | b',' | b']' | b'\n') {
                    return None;
                }
                let pos = Pos {
                    line,
                    column: base_column + (i - line_start),
                };
                items.push(Node {
                    pos,
                    value: NodeValue::Scalar {
                        text: Cow::Borrowed(&text[i..i + len]),
                        plain: true,
                        tag: None,
                    },
                });
                expect_item = false;
                i += len;
            }
            _ => return None,
        }
    }
}

/// `text` with the contents of every sequence in `seqs` replaced by spaces (line breaks kept).
pub(super) fn blank(text: &str, seqs: &[SimpleSeq]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for seq in seqs {
        for b in &mut bytes[seq.inner.clone()] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    String::from_utf8(bytes).expect("only ASCII bytes were replaced by spaces")
}
