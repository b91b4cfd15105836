//! The located YAML tree and its builder.

use super::flow::{self, SimpleSeq};
use super::subset;
use crate::case::caps::{MAX_DEPTH, MAX_EXPANDED_BYTES, MAX_NODES};
use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// A 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<'a> {
    /// Where the node starts (for a mapping key, the key itself).
    pub pos: Pos,
    /// The node.
    pub value: NodeValue<'a>,
}

/// A scalar, a list or a mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeValue<'a> {
    /// A scalar's text; `plain` when written unquoted (only plain scalars are resolved to
    /// null, booleans and numbers); `tag` when one was written (`!!str`, …).
    Scalar {
        /// The text, escapes resolved.
        text: Cow<'a, str>,
        /// True when unquoted and not a block scalar.
        plain: bool,
        /// The tag as written (`!!str`), if any.
        tag: Option<Box<str>>,
    },
    /// A list.
    Seq(Vec<Node<'a>>),
    /// A mapping, in file order, duplicate keys kept (the deserializer refuses them).
    Map(Vec<(Node<'a>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// The scalar text, if this is a scalar.
    pub fn as_scalar(&self) -> Option<&str> {
        match &self.value {
            NodeValue::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The value of the first key `key` of a mapping, with the key node.
    pub fn entry(&self, key: &str) -> Option<(&Node<'a>, &Node<'a>)> {
        match &self.value {
            NodeValue::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_scalar() == Some(key))
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// The value of key `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.entry(key).map(|(_, v)| v)
    }

    /// How many nodes this subtree holds, and its scalar bytes.
    fn size(&self) -> (u64, u64) {
        match &self.value {
            NodeValue::Scalar { text, .. } => (1, text.len() as u64),
            NodeValue::Seq(items) => items.iter().fold((1, 0), |(n, b), item| {
                let (n2, b2) = item.size();
                (n + n2, b + b2)
            }),
            NodeValue::Map(entries) => entries.iter().fold((1, 0), |(n, b), (k, v)| {
                let (nk, bk) = k.size();
                let (nv, bv) = v.size();
                (n + nk + nv, b + bk + bv)
            }),
        }
    }
}

/// Why a text is not a single YAML document within the caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Where, when known.
    pub pos: Pos,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.message)
    }
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

/// A list or mapping being built.
enum Open<'a> {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node<'a>>,
        /// Where the `]` must be, for a list whose items were read by [`flow::find`].
        simple_close: Option<Pos>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<(Node<'a>, Node<'a>)>,
        key: Option<Node<'a>>,
    },
}

/// Builds the tree from parser events, counting expanded nodes and bytes.
struct Builder<'a> {
    /// The text the tree borrows from (the parser may read a copy, see [`flow`]).
    text: &'a str,
    /// Simple flow sequences read ahead, in text order, and how many the parser has met.
    simple: Vec<SimpleSeq<'a>>,
    simple_met: usize,
    /// Set when the parser's lists disagree with [`Builder::simple`].
    simple_mismatch: bool,
    open: Vec<Open<'a>>,
    anchors: HashMap<usize, Node<'a>>,
    root: Option<Node<'a>>,
    documents: usize,
    nodes: u64,
    bytes: u64,
}

impl<'a> Builder<'a> {
    fn count(&mut self, pos: Pos, nodes: u64, bytes: u64) -> Result<(), ParseError> {
        self.nodes += nodes;
        self.bytes += bytes;
        if self.nodes > MAX_NODES {
            return Err(ParseError {
                pos,
                message: format!(
                    "the document expands to more than {MAX_NODES} YAML nodes (the cap; \
                     aliases count once per use)"
                ),
            });
        }
        if self.bytes > MAX_EXPANDED_BYTES {
            return Err(ParseError {
                pos,
                message: format!(
                    "the document expands to more than {MAX_EXPANDED_BYTES} bytes of scalars \
                     (the cap; aliases count once per use)"
                ),
            });
        }
        Ok(())
    }

    /// Adds a finished node to the open collection (or as the document root).
    fn push(&mut self, node: Node<'a>, anchor: usize) -> Result<(), ParseError> {
        if anchor != 0 {
            // The anchor keeps a copy: count it like an expansion.
            let (nodes, bytes) = node.size();
            self.count(node.pos, nodes, bytes)?;
            self.anchors.insert(anchor, node.clone());
        }
        match self.open.last_mut() {
            None => {
                self.root = Some(node);
            }
            Some(Open::Seq { items, .. }) => items.push(node),
            Some(Open::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
        }
        Ok(())
    }

    /// Opens a list; one that [`flow::find`] read ahead gets its items (counted here, in
    /// order, as if they had come one by one).
    fn open_seq(&mut self, pos: Pos, anchor: usize) -> Result<(), ParseError> {
        let simple = self
            .simple
            .get_mut(self.simple_met)
            .filter(|seq| seq.open == pos);
        let Some(seq) = simple else {
            let seq = Open::Seq {
                pos,
                anchor,
                items: Vec::new(),
                simple_close: None,
            };
            return self.open(seq, pos);
        };
        let items = std::mem::take(&mut seq.items);
        let close = seq.close;
        self.simple_met += 1;
        self.open(
            Open::Seq {
                pos,
                anchor,
                items: Vec::new(),
                simple_close: Some(close),
            },
            pos,
        )?;
        for item in &items {
            self.count(item.pos, 1, item.as_scalar().map_or(0, |t| t.len() as u64))?;
        }
        if let Some(Open::Seq { items: open, .. }) = self.open.last_mut() {
            *open = items;
        }
        Ok(())
    }

    fn open(&mut self, collection: Open<'a>, pos: Pos) -> Result<(), ParseError> {
        if self.open.len() >= MAX_DEPTH {
            return Err(ParseError {
                pos,
                message: format!("lists and mappings nest deeper than {MAX_DEPTH} levels"),
            });
        }
        self.count(pos, 1, 0)?;
        self.open.push(collection);
        Ok(())
    }

    fn event(&mut self, event: Event<'_>, span: Span, parsed: &str) -> Result<(), ParseError> {
        let pos = pos_of(&span);
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(ParseError {
                        pos,
                        message: "a case file holds one YAML document; found a second".to_string(),
                    });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.count(pos, 1, text.len() as u64)?;
                let node = Node {
                    pos,
                    value: NodeValue::Scalar {
                        text: rebase(text, parsed, self.text),
                        plain: style == ScalarStyle::Plain,
                        tag: tag.map(|t| {
                            if t.is_yaml_core_schema() {
                                format!("!!{}", t.suffix).into_boxed_str()
                            } else {
                                t.to_string().into_boxed_str()
                            }
                        }),
                    },
                };
                self.push(node, anchor)?;
            }
            Event::SequenceStart(anchor, _) => self.open_seq(pos, anchor)?,
            Event::MappingStart(anchor, _) => self.open(
                Open::Map {
                    pos,
                    anchor,
                    entries: Vec::new(),
                    key: None,
                },
                pos,
            )?,
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.open.pop() {
                    Some(Open::Seq {
                        pos: seq_pos,
                        anchor,
                        items,
                        simple_close,
                    }) => {
                        if simple_close.is_some_and(|close| close != pos) {
                            self.simple_mismatch = true;
                        }
                        (
                            Node {
                                pos: seq_pos,
                                value: NodeValue::Seq(items),
                            },
                            anchor,
                        )
                    }
                    Some(Open::Map {
                        pos,
                        anchor,
                        entries,
                        ..
                    }) => (
                        Node {
                            pos,
                            value: NodeValue::Map(entries),
                        },
                        anchor,
                    ),
                    None => unreachable!("the parser balances start and end events"),
                };
                self.push(node, anchor)?;
            }
            Event::Alias(anchor) => {
                let Some(target) = self.anchors.get(&anchor) else {
                    return Err(ParseError {
                        pos,
                        message: "alias to an unknown anchor".to_string(),
                    });
                };
                let (nodes, bytes) = target.size();
                let mut node = target.clone();
                self.count(pos, nodes, bytes)?;
                node.pos = pos;
                self.push(node, 0)?;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }
}

/// Parses `text` (one YAML document) into a located tree. A leading byte-order mark is
/// skipped. An empty document is a null scalar.
///
/// Text within the subset of YAML that case files are written in is read directly
/// ([`subset::read`]: the same tree, much faster); any other text goes to the parser.
/// Simple flow sequences are read ahead ([`flow`]) and the parser reads a copy of the text
/// with their contents blanked; when the parser's lists do not match them, or the copy does
/// not parse, the original text is parsed as it is (so errors are always the parser's own).
pub fn parse(text: &str) -> Result<Node<'_>, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match subset::read(text) {
        Ok(root) => Ok(root),
        Err(subset::Unsupported) => parse_reading_lists_ahead(text),
    }
}

/// The parser's tree of `text`, with simple flow sequences read ahead ([`flow`]).
fn parse_reading_lists_ahead(text: &str) -> Result<Node<'_>, ParseError> {
    let simple = flow::find(text);
    if simple.is_empty() {
        return parse_with(text, text, Vec::new());
    }
    let blanked = flow::blank(text, &simple);
    match parse_with(text, &blanked, simple) {
        Ok(root) => Ok(root),
        Err(_) => parse_with(text, text, Vec::new()),
    }
}

/// Builds the tree of `text` from the events of `parsed` (`text`, or `text` with the contents
/// of the `simple` sequences blanked). A mismatch with `simple` is an error (with no position:
/// [`parse`] then parses `text` itself).
pub(super) fn parse_with<'a>(
    text: &'a str,
    parsed: &str,
    simple: Vec<SimpleSeq<'a>>,
) -> Result<Node<'a>, ParseError> {
    let mut parser = Parser::new_from_str(parsed);
    let mut builder = Builder {
        text,
        simple,
        simple_met: 0,
        simple_mismatch: false,
        open: Vec::new(),
        anchors: HashMap::new(),
        root: None,
        documents: 0,
        nodes: 0,
        bytes: 0,
    };
    while let Some(result) = parser.next_event() {
        let (event, span) = result.map_err(|e| ParseError {
            pos: Pos {
                line: e.marker().line(),
                column: e.marker().col() + 1,
            },
            message: e.info().to_string(),
        })?;
        builder.event(event, span, parsed)?;
    }
    if builder.simple_mismatch || builder.simple_met != builder.simple.len() {
        return Err(ParseError {
            pos: Pos::default(),
            message: "simple flow sequences read ahead do not match the parser's".to_string(),
        });
    }
    Ok(builder.root.unwrap_or(Node {
        pos: Pos { line: 1, column: 1 },
        value: NodeValue::Scalar {
            text: Cow::Borrowed(""),
            plain: true,
            tag: None,
        },
    }))
}

/// A scalar's text from the parser of `parsed`, borrowing from `text` (same bytes outside
/// blanked sequences) when the parser borrowed from `parsed`.
fn rebase<'a>(scalar: Cow<'_, str>, parsed: &str, text: &'a str) -> Cow<'a, str> {
    match scalar {
        Cow::Owned(owned) => Cow::Owned(owned),
        Cow::Borrowed(borrowed) => {
            let offset = (borrowed.as_ptr() as usize).wrapping_sub(parsed.as_ptr() as usize);
            let same = offset
                .checked_add(borrowed.len())
                .and_then(|end| text.get(offset..end))
                .filter(|same| *same == borrowed);
            match same {
                Some(same) => Cow::Borrowed(same),
                None => Cow::Owned(borrowed.to_owned()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::yaml::test_support::{repository_case_files, Draw};

    #[test]
    fn nodes_keep_their_positions() {
        let root = parse("a: 1\nb:\n  - x\n  - {c: [2, 3]}\n").unwrap();
        let (key, value) = root.entry("b").unwrap();
        assert_eq!(key.pos, Pos { line: 2, column: 1 });
        let NodeValue::Seq(items) = &value.value else {
            panic!("a list")
        };
        assert_eq!(items[1].pos, Pos { line: 4, column: 5 });
        assert_eq!(items[1].get("c").unwrap().pos, Pos { line: 4, column: 9 });
    }

    #[test]
    fn flow_style_json_has_positions() {
        let root =
            parse("{\n  \"format\": 1,\n  \"cases\": [\n    {\"id\": \"x\"}\n  ]\n}").unwrap();
        let (key, _) = root.entry("cases").unwrap();
        assert_eq!((key.pos.line, key.pos.column), (3, 3));
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let root = parse("\u{feff}format: 1\n").unwrap();
        assert_eq!(root.get("format").unwrap().as_scalar(), Some("1"));
    }

    #[test]
    fn syntax_errors_are_located() {
        let error = parse("a: 1\nb: [unclosed\n").unwrap_err();
        assert!(error.pos.line >= 2, "{error}");
    }

    #[test]
    fn aliases_expand_within_the_caps() {
        let root = parse("a: &x [1, 2]\nb: *x\n").unwrap();
        assert_eq!(root.get("b").unwrap().value, root.get("a").unwrap().value);
        let big = "x".repeat(1 << 20);
        let mut text = format!("a: &s {big}\nb: [");
        for _ in 0..100 {
            text.push_str("*s, ");
        }
        text.push_str("]\n");
        let error = parse(&text).unwrap_err();
        assert!(error.message.contains("bytes of scalars"), "{error}");
        assert_eq!(error.pos.line, 2);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let error = parse(&text).unwrap_err();
        assert!(error.message.contains("nest deeper"), "{error}");
    }

    /// The parser's tree with and without reading simple flow sequences ahead.
    fn both_ways(text: &str) -> (Result<Node<'_>, ParseError>, Result<Node<'_>, ParseError>) {
        (
            parse_reading_lists_ahead(text),
            parse_with(text, text, Vec::new()),
        )
    }

    #[test]
    fn simple_sequences_read_ahead_build_the_parsers_tree() {
        let texts = [
            "a: [1, 2, 3]\n",
            "a: [1, -2, +3, .nan, -.inf, 1e-5, null, true, x_y, A.B, 0x1F, 007]\n",
            "a: [1, 2,]\nb: [ 3 ,4 ]\n",
            "a: {x: [1, 2], y: [3]}\n",
            "- [1, 2]\n- k: [3,\n       4]\n",
            "a: [1, 2,\n     3, 4]\nb: [5]\n",
            "a: [1,\n\n    2]\n",
            "a: &x [1, 2]\nb: *x\n",
            "a: !!seq [1, 2]\n",
            "a: ['1', 2]\nb: [\"x\", 3]\n",
            "a: [1 2, 3]\n",
            "a: [1, [2, 3], 4]\n",
            "a: [bits:0x7e00, 1]\n",
            "a: [-, 1]\n",
            "a: [- 1]\n",
            "a: [1, 2\n]\n",
            "a: [1,\n 2]\n",
            "a: [1,\n2]\n",
            "a: [1, 2] # [3, 4]\n# b: [5]\n",
            "a: \"[1, 2]\"\nb: '[3]'\n",
            "a: |\n  k: [1, 2]\nb: [3]\n",
            "a: \"x\n  [1, 2]\"\n",
            "a: [1, 2]: 3\n",
            "[1, 2]: x\n",
            "a: [1, 2\n",
            "a: [1,, 2]\n",
            "a: [, 1]\n",
            "a: [1]\r\nb: [2]\r\n",
            "é: {ü: x, k: [1, 2]}\n",
            "a: [1,\t2]\n",
            "a:\n  - [1, 2]\n  -   [3,\n       4]\n",
        ];
        for text in texts {
            let (fast, plain) = both_ways(text);
            assert_eq!(fast, plain, "{text:?}");
        }
    }

    #[test]
    fn random_texts_parse_the_same_read_ahead_or_not() {
        const PARTS: [&str; 24] = [
            "k: [1, -2,",
            " 3]\n",
            "a: ",
            "[",
            "]",
            ", ",
            ",",
            " ",
            "\n",
            "  ",
            "1",
            "-",
            ".",
            "x",
            "# c",
            "'",
            "\"",
            ":",
            "{",
            "}",
            "- ",
            "\t",
            "&a ",
            "*a",
        ];
        let mut draw = Draw(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let text = draw.text(&PARTS, 24);
            let (fast, plain) = both_ways(&text);
            assert_eq!(fast, plain, "{text:?}");
        }
    }

    #[test]
    fn every_case_file_parses_the_same_read_ahead_or_not() {
        for (path, text) in repository_case_files() {
            let (fast, plain) = both_ways(&text);
            assert!(fast == plain, "{}", path.display());
            // And the lists were read ahead, not parsed again after a mismatch.
            let simple = flow::find(&text);
            assert!(!simple.is_empty(), "{}", path.display());
            let blanked = flow::blank(&text, &simple);
            assert!(
                parse_with(&text, &blanked, simple).is_ok(),
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn a_second_document_is_refused() {
        let error = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(error.message.contains("one YAML document"), "{error}");
    }
}
