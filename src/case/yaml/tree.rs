//! The located YAML tree and its builder.

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

    fn event(&mut self, event: Event<'a>, span: Span) -> Result<(), ParseError> {
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
                        text,
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
            Event::SequenceStart(anchor, _) => self.open(
                Open::Seq {
                    pos,
                    anchor,
                    items: Vec::new(),
                },
                pos,
            )?,
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
                    Some(Open::Seq { pos, anchor, items }) => (
                        Node {
                            pos,
                            value: NodeValue::Seq(items),
                        },
                        anchor,
                    ),
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
pub fn parse(text: &str) -> Result<Node<'_>, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser::new_from_str(text);
    let mut builder = Builder {
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
        builder.event(event, span)?;
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_second_document_is_refused() {
        let error = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(error.message.contains("one YAML document"), "{error}");
    }
}
