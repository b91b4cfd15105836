//! A direct reader for the plain subset of YAML that case files are written in, so that loading
//! a large suite does not go through the general parser's token queue one character at a time.
//!
//! [`read`] builds the same located tree as [`super::tree::parse`] would, or gives up
//! ([`Unsupported`]) the moment it meets anything outside the subset, and `parse` then runs the
//! general parser on the text as it is. So the tree is always the parser's own, and every error
//! message is the parser's: this reader never reports one.
//!
//! The subset, with no tabs or carriage returns, and characters past ASCII only inside scalars
//! and comments:
//! - block mappings whose keys are single-line plain scalars (`key: value`), block sequences
//!   (`- item`, compact mappings `- id: x` included), every line of a collection at its column;
//! - values on the key's line (a plain or quoted scalar, or a flow collection) or on the lines
//!   below, indented further;
//! - flow sequences and mappings of plain and quoted scalars, nested, over several lines when
//!   every continuation line is indented past the outermost bracket;
//! - plain scalars on one line; quoted scalars on one line without escapes (`\`, `''`);
//! - comments (`# …`, after a space or alone on a line, any bytes) and blank lines.
//!
//! Anything else gives up: anchors, aliases, tags, block scalars, `?` keys, quoted keys in
//! block mappings, empty values, multi-line plain scalars, document markers and directives, a
//! sequence at its parent key's column, and any syntax error. Nodes and scalar bytes are counted
//! against the caps like the tree builder counts them, and a document over a cap gives up too
//! (the general parser then reports the cap).

use super::tree::{Node, NodeValue, Pos};
use crate::case::caps::{MAX_DEPTH, MAX_EXPANDED_BYTES, MAX_NODES};
use std::borrow::Cow;

/// The text is outside the subset (or breaks a cap): parse it with the general parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unsupported;

type Read<T> = Result<T, Unsupported>;

/// The tree of `text` (one document, no byte-order mark), when `text` is within the subset.
pub(super) fn read(text: &str) -> Read<Node<'_>> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        line: 1,
        line_start: 0,
        wide: 0,
        nodes: 0,
        scalar_bytes: 0,
        depth: 0,
    };
    let Some(0) = reader.next_content_line()? else {
        return Err(Unsupported);
    };
    let (root, next) = reader.block_node()?;
    match next {
        None => Ok(root),
        Some(_) => Err(Unsupported),
    }
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// The byte being read.
    at: usize,
    /// Its 1-based line, and the byte that line starts at.
    line: usize,
    line_start: usize,
    /// How many bytes of the line before `at` continue a multi-byte character (columns count
    /// characters).
    wide: usize,
    /// Counted against the caps.
    nodes: u64,
    scalar_bytes: u64,
    /// Collections open around the byte being read.
    depth: usize,
}

/// The indentation of the next content line, `None` at the end of the text.
type NextLine = Option<usize>;

impl<'a> Reader<'a> {
    fn byte(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn byte_after(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.at + offset).copied()
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column() + 1,
        }
    }

    /// The 0-based column (in characters) of the byte being read.
    fn column(&self) -> usize {
        self.at - self.line_start - self.wide
    }

    /// Steps over the character past ASCII at `at`, inside a scalar. Gives up on the ones
    /// that are spaces or line breaks to some YAML readers (NEL, NBSP, LS, PS, BOM).
    fn step_wide(&mut self) -> Read<()> {
        let c = self.text[self.at..].chars().next().ok_or(Unsupported)?;
        if matches!(
            c,
            '\u{85}' | '\u{a0}' | '\u{2028}' | '\u{2029}' | '\u{feff}'
        ) {
            return Err(Unsupported);
        }
        self.at += c.len_utf8();
        self.wide += c.len_utf8() - 1;
        Ok(())
    }

    fn count(&mut self, nodes: u64, bytes: u64) -> Read<()> {
        self.nodes += nodes;
        self.scalar_bytes += bytes;
        if self.nodes > MAX_NODES || self.scalar_bytes > MAX_EXPANDED_BYTES {
            return Err(Unsupported);
        }
        Ok(())
    }

    fn scalar(&mut self, pos: Pos, range: std::ops::Range<usize>, plain: bool) -> Read<Node<'a>> {
        self.count(1, range.len() as u64)?;
        Ok(Node {
            pos,
            value: NodeValue::Scalar {
                text: Cow::Borrowed(&self.text[range]),
                plain,
                tag: None,
            },
        })
    }

    /// Opens a collection: counted, and refused past the nesting cap.
    fn open(&mut self) -> Read<()> {
        self.depth += 1;
        if self.depth >= MAX_DEPTH {
            return Err(Unsupported);
        }
        self.count(1, 0)
    }

    fn close(&mut self) {
        self.depth -= 1;
    }

    fn skip_spaces(&mut self) {
        while self.byte() == Some(b' ') {
            self.at += 1;
        }
    }

    /// Steps over a line break at `at`.
    fn new_line(&mut self) {
        self.at += 1;
        self.line += 1;
        self.line_start = self.at;
        self.wide = 0;
    }

    /// From a line start: steps over blank and comment lines and the next content line's
    /// indentation. Its indentation, or `None` at the end of the text.
    fn next_content_line(&mut self) -> Read<NextLine> {
        loop {
            self.skip_spaces();
            match self.byte() {
                None => return Ok(None),
                Some(b'\n') => self.new_line(),
                Some(b'#') => self.skip_comment(),
                Some(b'\t' | b'\r') => return Err(Unsupported),
                Some(_) => {
                    let indent = self.column();
                    if indent == 0 && self.at_document_marker() {
                        return Err(Unsupported);
                    }
                    return Ok(Some(indent));
                }
            }
        }
    }

    /// `---`, `...` or a `%` directive at the start of a line.
    fn at_document_marker(&self) -> bool {
        let rest = &self.bytes[self.at..];
        rest.first() == Some(&b'%')
            || ((rest.starts_with(b"---") || rest.starts_with(b"..."))
                && matches!(rest.get(3), None | Some(b' ' | b'\n' | b'\t' | b'\r')))
    }

    /// Steps to the line break ending a comment (any bytes).
    fn skip_comment(&mut self) {
        let rest = &self.bytes[self.at..];
        self.at += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    }

    /// After a node in block context: only spaces and a comment may end the line. Then the
    /// next content line.
    fn end_of_line(&mut self) -> Read<NextLine> {
        self.skip_spaces();
        match self.byte() {
            None => return Ok(None),
            Some(b'\n') => {}
            Some(b'#') if self.bytes[self.at - 1] == b' ' => self.skip_comment(),
            Some(_) => return Err(Unsupported),
        }
        if self.byte() == Some(b'\n') {
            self.new_line();
        }
        self.next_content_line()
    }

    /// A node in block context starting at `at` (its column is the node's indentation), and
    /// the next content line after it.
    fn block_node(&mut self) -> Read<(Node<'a>, NextLine)> {
        match self.byte() {
            Some(b'-') if self.at_sequence_dash() => self.block_seq(),
            Some(b'[' | b'{' | b'"' | b'\'') => self.inline_value(),
            Some(_) => {
                if self.plain_key_ahead()? {
                    self.block_map()
                } else {
                    self.inline_value()
                }
            }
            None => Err(Unsupported),
        }
    }

    /// A `-` followed by a space or the end of the line: a block sequence entry.
    fn at_sequence_dash(&self) -> bool {
        self.byte() == Some(b'-') && matches!(self.byte_after(1), None | Some(b' ' | b'\n'))
    }

    /// A value on the line of its key or `-`: a flow collection, or a quoted or plain scalar
    /// (never a key). Then the next content line.
    fn inline_value(&mut self) -> Read<(Node<'a>, NextLine)> {
        let node = match self.byte() {
            Some(b'[' | b'{') => {
                let bracket_column = self.column() + 1;
                self.flow_collection(bracket_column)?
            }
            Some(b'"' | b'\'') => self.quoted()?,
            _ => {
                let pos = self.pos();
                let range = self.plain_in_block()?;
                if self.byte() == Some(b':') {
                    return Err(Unsupported);
                }
                self.scalar(pos, range, true)?
            }
        };
        let next = self.end_of_line()?;
        Ok((node, next))
    }

    /// True when a plain scalar followed by `: ` starts at `at` (a mapping key); reads nothing.
    fn plain_key_ahead(&mut self) -> Read<bool> {
        let (start, wide) = (self.at, self.wide);
        let scanned = self.plain_in_block();
        let is_key = scanned.is_ok() && self.byte() == Some(b':');
        (self.at, self.wide) = (start, wide);
        scanned?;
        Ok(is_key)
    }

    /// A plain scalar in block context: to the end of the line, a `: ` or a ` #`; the range
    /// of its text (trailing spaces trimmed). `at` is left at what ended it.
    fn plain_in_block(&mut self) -> Read<std::ops::Range<usize>> {
        let start = self.at;
        self.check_plain_start(false)?;
        loop {
            match self.byte() {
                None | Some(b'\n') => break,
                Some(b':') if matches!(self.byte_after(1), None | Some(b' ' | b'\n')) => break,
                Some(b'#') if self.bytes[self.at - 1] == b' ' => break,
                Some(b'\t' | b'\r') => return Err(Unsupported),
                Some(_) => self.step_in_plain(start, false)?,
            }
        }
        Ok(start..self.trimmed_end(start))
    }

    /// Steps over a character inside a plain scalar that began at `start`. A word after a
    /// space must be one that could start a plain scalar (some readers start a new token there:
    /// `a -,` is an error to them).
    fn step_in_plain(&mut self, start: usize, flow: bool) -> Read<()> {
        if self.at > start && self.bytes[self.at - 1] == b' ' && self.byte() != Some(b' ') {
            self.check_plain_start(flow)?;
        }
        match self.byte() {
            Some(b) if b >= 0x80 => self.step_wide(),
            _ => {
                self.at += 1;
                Ok(())
            }
        }
    }

    /// The end of the text from `start` to `at` without trailing spaces.
    fn trimmed_end(&self, start: usize) -> usize {
        let mut end = self.at;
        while end > start && self.bytes[end - 1] == b' ' {
            end -= 1;
        }
        end
    }

    /// A plain scalar may not start with an indicator; `-`, `?` and `:` only when a "safe"
    /// character follows (in flow context, not a flow indicator either).
    fn check_plain_start(&self, flow: bool) -> Read<()> {
        let first = self.byte().ok_or(Unsupported)?;
        let safe = |b: Option<u8>| match b {
            None | Some(b' ' | b'\n' | b'\t' | b'\r') => false,
            Some(b',' | b'[' | b']' | b'{' | b'}') => !flow,
            Some(_) => true,
        };
        match first {
            b'-' | b'?' | b':' if safe(self.byte_after(1)) => Ok(()),
            b'-' | b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!'
            | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' | b'\t' | b'\r' => {
                Err(Unsupported)
            }
            _ => Ok(()),
        }
    }

    /// A block mapping whose first key starts at `at`.
    fn block_map(&mut self) -> Read<(Node<'a>, NextLine)> {
        let indent = self.column();
        let pos = self.pos();
        self.open()?;
        let mut entries = Vec::new();
        let next = loop {
            let key_pos = self.pos();
            let key = self.plain_in_block()?;
            if self.byte() != Some(b':') || key.len() > 1000 {
                return Err(Unsupported);
            }
            let key = self.scalar(key_pos, key, true)?;
            self.at += 1;
            let (value, next) = self.mapping_value(indent)?;
            entries.push((key, value));
            match next {
                Some(n) if n == indent => {
                    if self.at_sequence_dash() {
                        return Err(Unsupported);
                    }
                }
                Some(n) if n > indent => return Err(Unsupported),
                next => break next,
            }
        };
        self.close();
        let node = Node {
            pos,
            value: NodeValue::Map(entries),
        };
        Ok((node, next))
    }

    /// The value after a key's `:` (of a mapping at column `indent`), on this line or below.
    fn mapping_value(&mut self, indent: usize) -> Read<(Node<'a>, NextLine)> {
        self.skip_spaces();
        match self.byte() {
            None | Some(b'\n' | b'#') => self.value_below(indent),
            Some(_) => self.inline_value(),
        }
    }

    /// A value on the lines after its key or `-` (at column `indent`): indented further.
    fn value_below(&mut self, indent: usize) -> Read<(Node<'a>, NextLine)> {
        let next = self.end_of_line()?;
        match next {
            Some(n) if n > indent => self.block_node(),
            _ => Err(Unsupported),
        }
    }

    /// A block sequence whose first `-` is at `at`.
    fn block_seq(&mut self) -> Read<(Node<'a>, NextLine)> {
        let indent = self.column();
        let pos = self.pos();
        self.open()?;
        let mut items = Vec::new();
        let next = loop {
            self.at += 1; // the `-`
            self.skip_spaces();
            let (item, next) = match self.byte() {
                None | Some(b'\n' | b'#') => self.value_below(indent)?,
                Some(_) => self.block_node()?,
            };
            items.push(item);
            match next {
                Some(n) if n == indent && self.at_sequence_dash() => {}
                Some(n) if n >= indent => return Err(Unsupported),
                next => break next,
            }
        };
        self.close();
        let node = Node {
            pos,
            value: NodeValue::Seq(items),
        };
        Ok((node, next))
    }

    /// A single-line quoted scalar without escapes.
    fn quoted(&mut self) -> Read<Node<'a>> {
        let pos = self.pos();
        let quote = self.byte().ok_or(Unsupported)?;
        self.at += 1;
        let start = self.at;
        loop {
            match self.byte() {
                Some(b) if b == quote => break,
                None | Some(b'\n' | b'\\' | b'\t' | b'\r') => return Err(Unsupported),
                Some(b) if b >= 0x80 => self.step_wide()?,
                Some(_) => self.at += 1,
            }
        }
        let end = self.at;
        self.at += 1;
        if quote == b'\'' && self.byte() == Some(b'\'') {
            return Err(Unsupported);
        }
        self.scalar(pos, start..end, false)
    }

    /// A flow sequence or mapping at `at`; continuation lines must be indented to at least
    /// `min_column` (1-based: past the outermost bracket).
    fn flow_collection(&mut self, min_column: usize) -> Read<Node<'a>> {
        let pos = self.pos();
        let close = match self.byte() {
            Some(b'[') => b']',
            Some(b'{') => b'}',
            _ => return Err(Unsupported),
        };
        self.open()?;
        self.at += 1;
        let node = if close == b']' {
            NodeValue::Seq(self.flow_seq_items(min_column)?)
        } else {
            NodeValue::Map(self.flow_map_entries(min_column)?)
        };
        self.close();
        Ok(Node { pos, value: node })
    }

    fn flow_seq_items(&mut self, min_column: usize) -> Read<Vec<Node<'a>>> {
        let mut items = Vec::new();
        loop {
            self.skip_flow_space(min_column)?;
            if self.byte() == Some(b']') {
                self.at += 1;
                return Ok(items);
            }
            items.push(self.flow_node(min_column)?);
            self.skip_flow_space(min_column)?;
            match self.byte() {
                Some(b',') => self.at += 1,
                Some(b']') => {}
                _ => return Err(Unsupported),
            }
        }
    }

    fn flow_map_entries(&mut self, min_column: usize) -> Read<Vec<(Node<'a>, Node<'a>)>> {
        let mut entries = Vec::new();
        loop {
            self.skip_flow_space(min_column)?;
            if self.byte() == Some(b'}') {
                self.at += 1;
                return Ok(entries);
            }
            let key = match self.byte() {
                Some(b'"' | b'\'') => self.quoted()?,
                Some(b'[' | b'{') => return Err(Unsupported),
                _ => self.plain_in_flow()?,
            };
            if self.byte() != Some(b':') || !matches!(self.byte_after(1), Some(b' ' | b'\n')) {
                return Err(Unsupported);
            }
            self.at += 1;
            self.skip_flow_space(min_column)?;
            let value = self.flow_node(min_column)?;
            entries.push((key, value));
            self.skip_flow_space(min_column)?;
            match self.byte() {
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                _ => return Err(Unsupported),
            }
        }
    }

    /// An item or value inside a flow collection.
    fn flow_node(&mut self, min_column: usize) -> Read<Node<'a>> {
        match self.byte() {
            Some(b'[' | b'{') => self.flow_collection(min_column),
            Some(b'"' | b'\'') => self.quoted(),
            _ => self.plain_in_flow(),
        }
    }

    /// A plain scalar in flow context: to a flow indicator, a `: `, a ` #` or the end of the
    /// line.
    fn plain_in_flow(&mut self) -> Read<Node<'a>> {
        let pos = self.pos();
        let start = self.at;
        self.check_plain_start(true)?;
        loop {
            match self.byte() {
                None | Some(b'\n' | b',' | b'[' | b']' | b'{' | b'}') => break,
                Some(b':')
                    if matches!(
                        self.byte_after(1),
                        None | Some(b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}')
                    ) =>
                {
                    break
                }
                Some(b'#') if self.bytes[self.at - 1] == b' ' => break,
                Some(b'\t' | b'\r') => return Err(Unsupported),
                Some(_) => self.step_in_plain(start, true)?,
            }
        }
        let end = self.trimmed_end(start);
        self.scalar(pos, start..end, true)
    }

    /// Spaces, line breaks and comments inside a flow collection; a continuation line must be
    /// indented to at least `min_column`.
    fn skip_flow_space(&mut self, min_column: usize) -> Read<()> {
        loop {
            match self.byte() {
                Some(b' ') => self.at += 1,
                Some(b'\n') => {
                    self.new_line();
                    self.skip_spaces();
                    if !matches!(self.byte(), None | Some(b'\n')) && self.column() < min_column {
                        return Err(Unsupported);
                    }
                }
                Some(b'#') if matches!(self.bytes[self.at - 1], b' ' | b'\n') => {
                    self.skip_comment()
                }
                Some(b'\t' | b'\r') => return Err(Unsupported),
                _ => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::yaml::test_support::{repository_case_files, Draw};
    use crate::case::yaml::tree::{parse_with, ParseError};

    /// The general parser's tree of `text` (the original text, nothing read ahead).
    fn parser_tree(text: &str) -> Result<Node<'_>, ParseError> {
        parse_with(text, text, Vec::new())
    }

    /// `read` either gives up or builds exactly the parser's tree.
    fn assert_same_or_unsupported(text: &str) -> bool {
        match read(text) {
            Ok(tree) => {
                assert_eq!(Ok(tree), parser_tree(text), "{text:?}");
                true
            }
            Err(Unsupported) => false,
        }
    }

    #[test]
    fn case_file_shapes_are_read_as_the_parser_reads_them() {
        let texts = [
            "format: 1\ncases:\n  - id: a\n    level: \"3_0\"\n    tags: [x, y]\n",
            "a: 1\nb:\n  c: [1, 2,\n      3]\n  d: {e: 'f', g: [h]}\n",
            "# comment\n\na: 1 # trailing\n\n# between\nb: x y  \n",
            "- - a\n  - b\n- c\n- d: 1\n  e: 2\n",
            "a:\n  - 1\n  -   2\nb:    # comment\n  c\n",
            "a: [1, -2, +3, .nan, -.inf, 1e-5, null, true, bits:0x7e00]\n",
            "a: [1, [2, 3], {b: c}, []]\nb: {}\n",
            "a: [1, 2,]\nb: [ 3 ,4 ]\n",
            "a: x#y\nb: a:b\nc: \"# not a comment\"\n",
            "a: [1,\n\n    2]\n",
            "a: [1 # one\n    , 2]\n",
            "a:\n  # comment\n  b: 1\n",
            "[1, 2]\n",
            "x\n",
            "a: {k: [1, 2], 'q': \"r\"}\n",
            "a: 1",
            "-x: 1\n",
            "a: é\nb: {c: \"{…,M,N}\", é: [ü, 1]}\n",
        ];
        for text in texts {
            assert!(assert_same_or_unsupported(text), "{text:?} should be read");
        }
    }

    #[test]
    fn anything_outside_the_subset_is_left_to_the_parser() {
        let texts = [
            "",
            "  a: 1\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: |\n  text\n",
            "a: >\n  text\n",
            "? a\n: 1\n",
            "\"a\": 1\n",
            "a:\n",
            "a:\nb: 1\n",
            "a:\n- 1\n",
            "a: b\n  c\n",
            "- a\n  b\n",
            "a: [b\n    c]\n",
            "a: \"x\\ty\"\n",
            "a: 'it''s'\n",
            "a: \"x\n  y\"\n",
            "a:\t1\n",
            "a: 1\r\n",
            "---\na: 1\n",
            "a: 1\n...\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: b: c\n",
            "a: - b\n",
            "a: [1,, 2]\n",
            "a: [, 1]\n",
            "a: [1,\n2]\n",
            "a: [a: 1]\n",
            "a: {b}\n",
            "a: {b: }\n",
            "a: [1] x\n",
            "a: [1]#x\n",
            "[1, 2]: x\n",
            "a: 1\n b: 2\n",
            "- 1\n - 2\n",
            "a: [-]\n",
            "a: [- 1]\n",
            "a: 1\n- 2\n",
        ];
        for text in texts {
            assert!(
                !assert_same_or_unsupported(text),
                "{text:?} should be left to the parser"
            );
        }
    }

    #[test]
    fn random_texts_are_read_as_the_parser_reads_them_or_left_to_it() {
        const PARTS: [&str; 36] = [
            "a: ", "b:", "- ", "-", "\n", "\n  ", "\n    ", "  ", " ", "1", "x", "[", "]", "{",
            "}", ", ", ",", ": ", ":", "# c", "#", "'q'", "\"d\"", "-1", ".5", "'", "\"", "?",
            "&a ", "\t", "é", "…", "\u{a0}", "\u{85}", "\u{2028}", "# ü\n",
        ];
        let mut draw = Draw(0x9e37_79b9_7f4a_7c15);
        let mut read_directly = 0;
        for _ in 0..60_000 {
            let text = draw.text(&PARTS, 16);
            read_directly += usize::from(assert_same_or_unsupported(&text));
        }
        // The draw must exercise the reader, not only its giving up.
        assert!(read_directly > 2_000, "{read_directly} texts read directly");
    }

    const WORDS: [&str; 16] = [
        "x", "1", "-2", ".nan", "a b", "a:b", "x#y", "é", "'q'", "\"d e\"", "\"\"", "-", "a -b",
        "k: v", "1e5", "~",
    ];

    /// A flow collection of words, sometimes over several lines.
    fn flow(draw: &mut Draw, depth: usize, indent: usize) -> String {
        let count = draw.below(4);
        let map = draw.below(3) == 0;
        let mut text = String::from(if map { "{" } else { "[" });
        for i in 0..count {
            if i > 0 {
                text.push_str(draw.pick(&[", ", ",", " , ", ",\n"]));
                if text.ends_with('\n') {
                    text.push_str(&" ".repeat(indent + draw.below(4)));
                }
            }
            if map {
                text.push_str(draw.pick(&["k", "l", "'m'"]));
                text.push_str(draw.pick(&[": ", ":", " : "]));
            }
            if depth < 2 && draw.below(4) == 0 {
                text.push_str(&flow(draw, depth + 1, indent));
            } else {
                text.push_str(draw.pick(&WORDS));
            }
        }
        text.push_str(draw.pick(&["", ",", " ", " # c\n", "\n"]));
        if text.ends_with('\n') {
            text.push_str(&" ".repeat(indent + draw.below(3)));
        }
        text.push_str(if map { "}" } else { "]" });
        text
    }

    /// A block node at `indent` (its first line already indented by the caller).
    fn block(draw: &mut Draw, depth: usize, indent: usize, out: &mut String) {
        let value = |draw: &mut Draw, out: &mut String| {
            if draw.below(3) == 0 {
                out.push_str(&flow(draw, 0, indent + 2));
            } else {
                out.push_str(draw.pick(&WORDS));
            }
            out.push_str(draw.pick(&["\n", "\n", " # c\n", "  \n", "\n\n", "\n# c\n"]));
        };
        match draw.below(if depth < 3 { 3 } else { 1 }) {
            0 => value(draw, out),
            1 => {
                for i in 0..1 + draw.below(3) {
                    if i > 0 {
                        out.push_str(&" ".repeat(indent));
                    }
                    out.push_str(draw.pick(&["k", "l", "m", "k"]));
                    out.push(':');
                    if draw.below(2) == 0 {
                        out.push(' ');
                        value(draw, out);
                    } else {
                        out.push('\n');
                        let inner = indent + [1, 2, 4, 0][draw.below(4)];
                        out.push_str(&" ".repeat(inner));
                        block(draw, depth + 1, inner, out);
                    }
                }
            }
            _ => {
                for i in 0..1 + draw.below(3) {
                    if i > 0 {
                        out.push_str(&" ".repeat(indent));
                    }
                    out.push_str(draw.pick(&["- ", "-  ", "-\n"]));
                    if out.ends_with('\n') {
                        let inner = indent + 1 + draw.below(3);
                        out.push_str(&" ".repeat(inner));
                        block(draw, depth + 1, inner, out);
                    } else {
                        let inner = indent + if out.ends_with("-  ") { 3 } else { 2 };
                        block(draw, depth + 1, inner, out);
                    }
                }
            }
        }
    }

    #[test]
    fn random_documents_are_read_as_the_parser_reads_them() {
        let mut draw = Draw(0x2545_f491_4f6c_dd1d);
        let mut read_directly = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            block(&mut draw, 0, 0, &mut text);
            // Now and then one byte dropped, doubled or turned into a space.
            if draw.below(3) == 0 && !text.is_empty() {
                let at = draw.below(text.len());
                if text.is_char_boundary(at) && text.is_char_boundary(at + 1) {
                    let byte = text[at..at + 1].to_string();
                    let with = ["", " ", &byte.repeat(2)][draw.below(3)].to_string();
                    text.replace_range(at..at + 1, &with);
                }
            }
            read_directly += usize::from(assert_same_or_unsupported(&text));
        }
        assert!(
            read_directly > 5_000,
            "{read_directly} documents read directly"
        );
    }

    #[test]
    fn every_case_file_is_read_directly_as_the_parser_reads_it() {
        for (path, text) in repository_case_files() {
            let tree = read(&text);
            assert!(tree.is_ok(), "{} is not read directly", path.display());
            assert!(
                tree == Ok(parser_tree(&text).unwrap()),
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn caps_are_left_to_the_parser() {
        let deep = format!("a: {}1{}\n", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(read(&deep), Err(Unsupported));
        let shallow = format!("a: {}1{}\n", "[".repeat(8), "]".repeat(8));
        assert!(read(&shallow).is_ok());
    }
}
