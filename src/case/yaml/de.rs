//! A serde `Deserializer` over a located node: every error carries the line, column and field
//! path of the innermost node it was found in, and duplicate mapping keys are refused.

use super::scalar::{resolve_plain, Resolved};
use super::tree::{Node, NodeValue, Pos};
use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use std::collections::HashMap;
use std::fmt;

/// A deserialization error, located once a node claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeError {
    /// What is wrong.
    pub message: String,
    /// Where: the innermost node the error came out of.
    pub pos: Option<Pos>,
    /// The field path of that node, e.g. `cases[2].inputs.InputTensor.sizes[0]`.
    pub path: Option<String>,
}

impl DeError {
    fn locate(mut self, pos: Pos, path: &Path) -> DeError {
        if self.pos.is_none() {
            self.pos = Some(pos);
            self.path = Some(path.to_string());
        }
        self
    }
}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(message: T) -> DeError {
        DeError {
            message: message.to_string(),
            pos: None,
            path: None,
        }
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.pos, &self.path) {
            (Some(pos), Some(path)) => write!(f, "{pos}: {path}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DeError {}

/// Where a node sits below the root being deserialized, kept as borrowed links so building it
/// costs nothing unless an error is reported.
#[derive(Clone, Copy)]
pub enum Path<'p> {
    /// The root, named (e.g. `cases[3]`).
    Root(&'p str),
    /// A mapping value under a key.
    Key(&'p Path<'p>, &'p str),
    /// A list item.
    Index(&'p Path<'p>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// Deserializes a node; `'de` is the tree's lifetime, `'p` the path's.
pub struct NodeDeserializer<'de, 'p> {
    node: &'de Node<'de>,
    path: Path<'p>,
}

impl<'de, 'p> NodeDeserializer<'de, 'p> {
    /// A deserializer for `node`, whose errors name fields below `root` (e.g. `cases[3]`).
    pub fn new(node: &'de Node<'de>, root: &'p str) -> NodeDeserializer<'de, 'p> {
        NodeDeserializer {
            node,
            path: Path::Root(root),
        }
    }

    fn deserialize_scalar<V: Visitor<'de>>(
        &self,
        text: &'de str,
        plain: bool,
        tag: Option<&str>,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        check_tag(tag)?;
        match tag {
            None if plain => {}
            None | Some("!!str") => return visitor.visit_borrowed_str(text),
            _ => {}
        }
        match resolve_plain(text) {
            Resolved::Null => visitor.visit_unit(),
            Resolved::Bool(v) => visitor.visit_bool(v),
            Resolved::U64(v) => visitor.visit_u64(v),
            Resolved::I64(v) => visitor.visit_i64(v),
            Resolved::U128(v) => visitor.visit_u128(v),
            Resolved::I128(v) => visitor.visit_i128(v),
            Resolved::F64(v) => visitor.visit_f64(v),
            Resolved::Str(v) => visitor.visit_borrowed_str(v),
        }
    }

    fn is_null(&self) -> bool {
        matches!(&self.node.value, NodeValue::Scalar { text, plain: true, tag: None }
            if resolve_plain(text) == Resolved::Null)
    }
}

/// Refuses tags other than the core schema's scalar tags.
fn check_tag(tag: Option<&str>) -> Result<(), DeError> {
    match tag {
        None | Some("!!str" | "!!int" | "!!float" | "!!bool" | "!!null") => Ok(()),
        Some(other) => Err(de::Error::custom(format!(
            "tag `{other}` is not supported in case files"
        ))),
    }
}

impl<'de> de::Deserializer<'de> for NodeDeserializer<'de, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let node = self.node;
        let result = match &node.value {
            NodeValue::Scalar { text, plain, tag } => {
                self.deserialize_scalar(text, *plain, tag.as_deref(), visitor)
            }
            NodeValue::Seq(items) => visitor.visit_seq(Items {
                items,
                next: 0,
                path: &self.path,
            }),
            NodeValue::Map(entries) => visitor.visit_map(Entries {
                entries,
                next: 0,
                seen: None,
                path: &self.path,
            }),
        };
        result.map_err(|e| e.locate(node.pos, &self.path))
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            // Any scalar reads as its text (`id: 123`, `level: 3_0`), as in serde_norway.
            NodeValue::Scalar { text, tag, .. } => check_tag(tag.as_deref())
                .and_then(|()| visitor.visit_borrowed_str::<DeError>(text))
                .map_err(|e| e.locate(self.node.pos, &self.path)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let pos = self.node.pos;
        let path = self.path;
        if self.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
        .map_err(|e| e.locate(pos, &path))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let pos = self.node.pos;
        let path = self.path;
        visitor
            .visit_newtype_struct(self)
            .map_err(|e| e.locate(pos, &path))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let result = match &self.node.value {
            NodeValue::Scalar { text, .. } => visitor.visit_enum(Variant {
                name: text,
                value: None,
                path: &self.path,
            }),
            NodeValue::Map(entries) if entries.len() == 1 => {
                let (key, value) = &entries[0];
                match key.as_scalar() {
                    Some(name) => visitor.visit_enum(Variant {
                        name,
                        value: Some(value),
                        path: &self.path,
                    }),
                    None => Err(de::Error::custom("an enum variant name must be a scalar")),
                }
            }
            _ => Err(de::Error::custom(
                "expected a variant name, or a mapping with one key",
            )),
        };
        result.map_err(|e| e.locate(self.node.pos, &self.path))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 bytes byte_buf unit unit_struct
        seq tuple tuple_struct map struct
    }
}

struct Items<'de, 'a> {
    items: &'de [Node<'de>],
    next: usize,
    path: &'a Path<'a>,
}

impl<'de> SeqAccess<'de> for Items<'de, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(item) = self.items.get(self.next) else {
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        seed.deserialize(NodeDeserializer {
            node: item,
            path: Path::Index(self.path, index),
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

struct Entries<'de, 'a> {
    entries: &'de [(Node<'de>, Node<'de>)],
    next: usize,
    /// Scalar keys read so far, with where they were; only built for mappings of more than
    /// [`SCAN_KEYS`] entries (smaller ones are searched in place).
    seen: Option<HashMap<&'de str, Pos>>,
    path: &'a Path<'a>,
}

/// Up to this many entries, a mapping's earlier keys are searched one by one for a duplicate
/// (cheaper than hashing for the small mappings of case files).
const SCAN_KEYS: usize = 16;

impl<'de> Entries<'de, '_> {
    /// Where the key `text` was first seen among the entries before `self.next`, if it was;
    /// records it otherwise.
    fn first_seen(&mut self, text: &'de str, pos: Pos) -> Option<Pos> {
        if self.entries.len() <= SCAN_KEYS {
            return self.entries[..self.next]
                .iter()
                .find(|(key, _)| key.as_scalar() == Some(text))
                .map(|(key, _)| key.pos);
        }
        let seen = self.seen.get_or_insert_with(HashMap::new);
        match seen.get(text) {
            Some(&first) => Some(first),
            None => {
                seen.insert(text, pos);
                None
            }
        }
    }
}

impl<'de> MapAccess<'de> for Entries<'de, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((key, _)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        if let Some(text) = key.as_scalar() {
            if let Some(first) = self.first_seen(text, key.pos) {
                let path = Path::Key(self.path, text);
                return Err(<DeError as de::Error>::custom(format!(
                    "duplicate key `{text}` (first at line {}, column {})",
                    first.line, first.column
                ))
                .locate(key.pos, &path));
            }
        }
        let path = Path::Key(self.path, key.as_scalar().unwrap_or("?"));
        seed.deserialize(NodeDeserializer { node: key, path })
            .map(Some)
            // An unknown field is reported where the key is.
            .map_err(|e| e.locate(key.pos, &path))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (key, value) = &self.entries[self.next];
        self.next += 1;
        seed.deserialize(NodeDeserializer {
            node: value,
            path: Path::Key(self.path, key.as_scalar().unwrap_or("?")),
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

struct Variant<'de, 'a> {
    name: &'de str,
    value: Option<&'de Node<'de>>,
    path: &'a Path<'a>,
}

impl<'de, 'a> EnumAccess<'de> for Variant<'de, 'a> {
    type Error = DeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), DeError> {
        let name = de::value::BorrowedStrDeserializer::<DeError>::new(self.name);
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'de, '_> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        match self.value {
            None => Ok(()),
            Some(_) => Err(de::Error::custom(format!("`{}` takes no value", self.name))),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        let node = self.value.ok_or_else(|| {
            <DeError as de::Error>::custom(format!("`{}` needs a value", self.name))
        })?;
        seed.deserialize(NodeDeserializer {
            node,
            path: Path::Key(self.path, self.name),
        })
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        self.struct_variant(&[], visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let node = self.value.ok_or_else(|| {
            <DeError as de::Error>::custom(format!("`{}` needs a value", self.name))
        })?;
        de::Deserializer::deserialize_any(
            NodeDeserializer {
                node,
                path: Path::Key(self.path, self.name),
            },
            visitor,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::parse;
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Tensor {
        #[serde(rename = "type")]
        data_type: String,
        sizes: Vec<u32>,
        strides: Option<Vec<u32>>,
    }

    fn read<T: for<'a> Deserialize<'a>>(text: &str) -> Result<T, DeError> {
        let root = parse(text).unwrap();
        T::deserialize(NodeDeserializer::new(&root, "t"))
    }

    #[test]
    fn reads_structs_lists_and_options() {
        let t: Tensor = read("type: FLOAT32\nsizes: [1, 2]\n").unwrap();
        assert_eq!(t.sizes, vec![1, 2]);
        assert_eq!(t.strides, None);
        let t: Tensor = read("{type: X, sizes: [], strides: ~}").unwrap();
        assert_eq!(t.strides, None);
    }

    #[test]
    fn errors_point_at_the_innermost_node() {
        let e = read::<Tensor>("type: FLOAT32\nsizes: [1, two]\n").unwrap_err();
        assert_eq!(
            e.pos,
            Some(Pos {
                line: 2,
                column: 12
            })
        );
        assert_eq!(e.path.as_deref(), Some("t.sizes[1]"));
        assert!(e.message.contains("invalid type"), "{e}");
        let e = read::<Tensor>("type: FLOAT32\nsizes: [1]\ncolour: blue\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 3, column: 1 }));
        assert!(e.message.contains("unknown field `colour`"), "{e}");
        let e = read::<Tensor>("type: FLOAT32\n").unwrap_err();
        assert!(e.message.contains("missing field `sizes`"), "{e}");
        assert_eq!(e.pos, Some(Pos { line: 1, column: 1 }));
        let e = read::<Tensor>("type: FLOAT32\nsizes: [4294967296]\n").unwrap_err();
        assert!(e.message.contains("u32"), "{e}");
    }

    #[test]
    fn duplicate_keys_are_refused_where_they_repeat() {
        let e = read::<Tensor>("type: A\nsizes: []\ntype: B\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 3, column: 1 }));
        assert!(e.message.contains("duplicate key `type`"), "{e}");
        assert!(e.message.contains("line 1"), "{e}");
        // Also in mappings read as maps, not structs.
        let e = read::<std::collections::BTreeMap<String, u8>>("{a: 1, b: 2, a: 3}").unwrap_err();
        assert!(e.message.contains("duplicate key `a`"), "{e}");
    }

    #[test]
    fn unknown_tags_are_refused() {
        let e = read::<Tensor>("type: !custom A\nsizes: []\n").unwrap_err();
        assert!(e.message.contains("tag `!custom`"), "{e}");
        let t: Tensor = read("type: !!str 12\nsizes: [!!int 3]\n").unwrap();
        assert_eq!((t.data_type.as_str(), t.sizes[0]), ("12", 3));
    }
}
