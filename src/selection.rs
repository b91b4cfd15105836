//! Choosing which loaded cases a run executes: by level, by id pattern, and by shard, plus
//! the digest that names the chosen set.

use crate::case::Case;
use opconform_backend::{Level, SpecFamily};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// One deterministic part of a sharded run: shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, 1 to `count`.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let fail = || format!("`{text}` is not a shard: write K/N with 1 <= K <= N");
        let (k, n) = text.split_once('/').ok_or_else(fail)?;
        let index: usize = k.trim().parse().map_err(|_| fail())?;
        let count: usize = n.trim().parse().map_err(|_| fail())?;
        if index == 0 || count == 0 || index > count {
            return Err(fail());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Selection {
    /// DirectML cases above this level are left out (OpenVINO cases are all kept).
    pub feature_level: Level,
    /// Keep only cases whose id contains this text.
    pub filter: Option<String>,
    /// Keep only this shard of the (sorted) cases.
    pub shard: Option<Shard>,
}

impl Selection {
    /// Applies the selection to `cases` (sorted by id), keeping their order.
    pub fn apply(&self, cases: Vec<Case>) -> Vec<Case> {
        self.take_shard(self.apply_unsharded(cases))
    }

    /// Applies the level and the filter but not the shard: the case set a sharded run is a
    /// part of (its digest names the whole run, so shards can be merged).
    pub fn apply_unsharded(&self, cases: Vec<Case>) -> Vec<Case> {
        cases
            .into_iter()
            .filter(|c| {
                c.level.family() != SpecFamily::Directml || self.feature_level.at_least(c.level)
            })
            .filter(|c| {
                self.filter
                    .as_ref()
                    .is_none_or(|f| c.id.contains(f.as_str()))
            })
            .collect()
    }

    /// Keeps this selection's shard of `cases` (all of them when unsharded): every
    /// `count`-th case starting at `index - 1`.
    pub fn take_shard(&self, cases: Vec<Case>) -> Vec<Case> {
        let Some(shard) = self.shard else {
            return cases;
        };
        cases
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % shard.count == shard.index - 1)
            .map(|(_, c)| c)
            .collect()
    }
}

/// SHA-256 over every case's id, level, class, descriptor, inputs and expectation: two runs
/// with equal digests ran the same cases.
pub fn case_set_digest(cases: &[Case]) -> String {
    let mut hasher = Sha256::new();
    for case in cases {
        hasher.update(case.id.as_bytes());
        hasher.update(case.level.to_string().as_bytes());
        hasher.update(format!("{:?}", case.class).as_bytes());
        hasher.update(serde_json::to_vec(&case.operator).expect("descriptor serialises"));
        for input in &case.inputs {
            hasher.update(&input.data);
        }
        match &case.expectation {
            crate::case::Expectation::Invalid(rules) => hasher.update(rules.join(",").as_bytes()),
            crate::case::Expectation::Outputs(outputs) => {
                for output in outputs {
                    hasher.update(&output.bytes);
                    if let Some(defined) = &output.defined {
                        hasher.update(defined.iter().map(|&d| u8::from(d)).collect::<Vec<u8>>());
                    }
                }
            }
        }
    }
    let digest = hasher.finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }
}
