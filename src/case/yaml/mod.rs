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

/// What the YAML tests share: the repository's case files, and random texts.
#[cfg(test)]
mod test_support {
    /// Every case file of the repository (`cases/**/*.yaml`) with its text, for tests over
    /// the real files.
    pub(super) fn repository_case_files() -> Vec<(std::path::PathBuf, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
        let mut pending = vec![root];
        let mut files = Vec::new();
        while let Some(path) = pending.pop() {
            if path.is_dir() {
                pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else if path.extension().is_some_and(|e| e == "yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                files.push((path, text));
            }
        }
        assert!(files.len() > 40, "{} case files", files.len());
        files
    }

    /// A small xorshift generator for random texts.
    pub(super) struct Draw(pub u64);

    impl Draw {
        /// A number below `n`.
        pub(super) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        /// One of `from`.
        pub(super) fn pick<'t>(&mut self, from: &[&'t str]) -> &'t str {
            from[self.below(from.len())]
        }

        /// 1 to `most` of `parts`, one after another.
        pub(super) fn text(&mut self, parts: &[&str], most: usize) -> String {
            let len = 1 + self.below(most);
            (0..len).map(|_| self.pick(parts)).collect()
        }
    }
}
