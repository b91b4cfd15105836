//! Choosing which loaded cases a run executes: the user's pick (`--filter`, `--skip`,
//! `--case-list`, by id or tag, with globs), then the level and the shard; plus the digest
//! that names the picked suite.

use crate::case::Case;
use opconform_backend::{Level, SpecFamily};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The largest `--case-list` file read (16 MiB).
pub const MAX_CASE_LIST_BYTES: u64 = 16 << 20;

/// One `--filter` or `--skip` pattern. `tag:PATTERN` matches a case's tags; any other
/// pattern matches its id. A pattern with `*`, `?` or `[` is a glob over the whole id (or
/// tag); one without is a substring of the id (or an exact tag).
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    tag: bool,
    glob: Option<glob::Pattern>,
    plain: String,
}

impl FromStr for Pattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Pattern, String> {
        let (tag, body) = match text.strip_prefix("tag:") {
            Some(body) => (true, body),
            None => (false, text),
        };
        if body.is_empty() {
            return Err(format!("`{text}`: an empty pattern"));
        }
        let glob = if body.contains(['*', '?', '[']) {
            Some(glob::Pattern::new(body).map_err(|e| format!("`{text}`: {e}"))?)
        } else {
            None
        };
        Ok(Pattern {
            text: text.to_string(),
            tag,
            glob,
            plain: body.to_string(),
        })
    }
}

impl Pattern {
    /// True when `case` matches.
    pub fn matches(&self, case: &Case) -> bool {
        self.matches_parts(&case.id, &case.tags)
    }

    /// True when a case with `id` and `tags` matches.
    pub fn matches_parts(&self, id: &str, tags: &[String]) -> bool {
        let one = |text: &str, substring: bool| match &self.glob {
            Some(glob) => glob.matches(text),
            None if substring => text.contains(self.plain.as_str()),
            None => text == self.plain,
        };
        if self.tag {
            tags.iter().any(|t| one(t, false))
        } else {
            one(id, true)
        }
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// The user's pick of cases, independent of any backend: what the suite digest names.
#[derive(Debug, Clone, Default)]
pub struct CasePick {
    /// Keep cases matching any of these (all when empty).
    pub filters: Vec<Pattern>,
    /// Then leave out cases matching any of these.
    pub skips: Vec<Pattern>,
    /// Then keep only cases whose id is listed (or matches a listed glob), when given.
    pub case_list: Option<Vec<Pattern>>,
}

/// What a report records of the pick, for `opconform verify`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectionRecord {
    /// `--filter` patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// `--skip` patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    /// The entries of `--case-list`, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_list: Option<Vec<String>>,
}

impl SelectionRecord {
    /// True when nothing was picked (every case).
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty() && self.skips.is_empty() && self.case_list.is_none()
    }

    /// The pick this record describes.
    pub fn to_pick(&self) -> Result<CasePick, String> {
        let parse = |texts: &[String]| -> Result<Vec<Pattern>, String> {
            texts.iter().map(|t| t.parse()).collect()
        };
        Ok(CasePick {
            filters: parse(&self.filters)?,
            skips: parse(&self.skips)?,
            case_list: self.case_list.as_deref().map(parse).transpose()?,
        })
    }
}

impl CasePick {
    /// A pick of the given `--filter` and `--skip` patterns and `--case-list` file.
    pub fn new(
        filters: &[String],
        skips: &[String],
        case_list: Option<&Path>,
    ) -> Result<CasePick, String> {
        let parse = |texts: &[String], flag: &str| -> Result<Vec<Pattern>, String> {
            texts
                .iter()
                .map(|t| t.parse().map_err(|e| format!("{flag} {e}")))
                .collect()
        };
        Ok(CasePick {
            filters: parse(filters, "--filter")?,
            skips: parse(skips, "--skip")?,
            case_list: case_list.map(read_case_list).transpose()?,
        })
    }

    /// True when `case` is picked.
    pub fn picks(&self, case: &Case) -> bool {
        (self.filters.is_empty() || self.filters.iter().any(|p| p.matches(case)))
            && !self.skips.iter().any(|p| p.matches(case))
            && self
                .case_list
                .as_ref()
                .is_none_or(|list| list.iter().any(|p| p.matches_exact(case)))
    }

    /// The record written in `run.json`.
    pub fn record(&self) -> SelectionRecord {
        let texts = |ps: &[Pattern]| ps.iter().map(|p| p.as_str().to_string()).collect();
        SelectionRecord {
            filters: texts(&self.filters),
            skips: texts(&self.skips),
            case_list: self.case_list.as_deref().map(texts),
        }
    }

    /// The picked cases of `cases`, in order.
    pub fn apply(&self, cases: Vec<Case>) -> Vec<Case> {
        cases.into_iter().filter(|c| self.picks(c)).collect()
    }

    /// Entries of the case list that pick no case of `cases` (likely typos).
    pub fn unmatched_list_entries(&self, cases: &[Case]) -> Vec<String> {
        self.case_list.as_ref().map_or_else(Vec::new, |list| {
            list.iter()
                .filter(|p| !cases.iter().any(|c| p.matches_exact(c)))
                .map(|p| p.as_str().to_string())
                .collect()
        })
    }
}

impl Pattern {
    /// For case lists: a plain entry is a whole id (or tag), not a substring.
    fn matches_exact(&self, case: &Case) -> bool {
        match &self.glob {
            Some(_) => self.matches(case),
            None if self.tag => case.tags.contains(&self.plain),
            None => case.id == self.plain,
        }
    }
}

/// Reads a `--case-list` file (deqp-runner style): one case id or glob per line; blank lines
/// and lines starting with `#` are ignored; at most [`MAX_CASE_LIST_BYTES`].
pub fn read_case_list(path: &Path) -> Result<Vec<Pattern>, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("--case-list {shown}: {e}"))?;
    let mut text = String::new();
    file.take(MAX_CASE_LIST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("--case-list {shown}: {e}"))?;
    if text.len() as u64 > MAX_CASE_LIST_BYTES {
        return Err(format!(
            "--case-list {shown}: larger than {MAX_CASE_LIST_BYTES} bytes"
        ));
    }
    let mut seen = BTreeSet::new();
    let mut patterns = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if seen.insert(line.to_string()) {
            patterns.push(
                line.parse()
                    .map_err(|e| format!("--case-list {shown}:{}: {e}", i + 1))?,
            );
        }
    }
    Ok(patterns)
}

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
    /// The user's pick (filters, skips, case list).
    pub pick: CasePick,
    /// Keep only this shard of the (sorted) cases.
    pub shard: Option<Shard>,
}

impl Selection {
    /// Applies the selection to `cases` (sorted by id), keeping their order.
    pub fn apply(&self, cases: Vec<Case>) -> Vec<Case> {
        self.take_shard(self.apply_unsharded(cases))
    }

    /// Applies the pick and the level but not the shard: the case set a sharded run is a
    /// part of.
    pub fn apply_unsharded(&self, cases: Vec<Case>) -> Vec<Case> {
        self.pick
            .apply(cases)
            .into_iter()
            .filter(|c| {
                c.level.family() != SpecFamily::Directml || self.feature_level.at_least(c.level)
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

/// SHA-256 over every case's id, level, class, descriptor, inputs and expectation. Given the
/// picked suite (before levels, claims and shards), it names the suite: the same suite gives
/// the same digest on every backend.
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
    fn patterns_match_ids_by_substring_or_glob_and_tags_exactly() {
        let tags = vec!["strided".to_string(), "negative-index".to_string()];
        let id = "dml_argmax::generated::axes::uint32_axis_2";
        let p = |t: &str| t.parse::<Pattern>().unwrap();
        assert!(p("axes").matches_parts(id, &tags));
        assert!(p("dml_argmax::*::uint32_*").matches_parts(id, &tags));
        assert!(!p("dml_one_hot::*").matches_parts(id, &tags));
        assert!(p("tag:strided").matches_parts(id, &tags));
        assert!(!p("tag:stride").matches_parts(id, &tags));
        assert!(p("tag:negative-*").matches_parts(id, &tags));
        assert!("tag:".parse::<Pattern>().is_err());
        assert!("[".parse::<Pattern>().is_err());
    }

    #[test]
    fn case_lists_skip_comments_and_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("list.txt");
        std::fs::write(&path, "# mine\n\na::b\n  c::*  \na::b\n").unwrap();
        let list = read_case_list(&path).unwrap();
        let texts: Vec<&str> = list.iter().map(Pattern::as_str).collect();
        assert_eq!(texts, ["a::b", "c::*"]);
        let missing = read_case_list(&dir.path().join("none")).unwrap_err();
        assert!(missing.contains("--case-list"), "{missing}");
    }

    #[test]
    fn shards_parse() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }
}
