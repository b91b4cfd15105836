//! A located YAML tree for case files: every node keeps the line and column it starts at, so
//! each case can be deserialized on its own and every error, including one found after parsing,
//! points into the file.
//!
//! [`tree::parse`] builds the tree from `saphyr-parser`'s events (one document; aliases expanded
//! within the caps of [`crate::case::caps`]); [`de::NodeDeserializer`] is a serde `Deserializer`
//! over a node that refuses duplicate keys and locates every error; [`scalar`] resolves plain
//! scalars the way `serde_norway` (the crate that writes case files) does.

pub mod de;
mod flow;
pub mod scalar;
mod subset;
pub mod tree;

pub use de::{DeError, NodeDeserializer};
pub use tree::{parse, Node, NodeValue, ParseError, Pos};
