//! Loading case files: parse, check every field, build the operator descriptor and buffers,
//! and check the case against the validator. Every error names file, line, column and field;
//! one bad file or case never hides the others.
//!
//! A file is parsed into a located YAML tree ([`super::yaml`]); each case is then read from its
//! own node, so a case with an unknown field, a wrong type or a duplicate key is reported (with
//! its position) while the other cases of the file still load. Every size is checked against
//! [`super::caps`] before anything is allocated.

use super::caps::{MAX_ELEMENTS, MAX_FILE_BYTES, MAX_LOGICAL_BYTES};
use super::element::Element;
use super::format::{
    Attributes, CaseClass, CaseSpec, Compare, InputTensorSpec, OutputTensorSpec, Source,
    CASE_FORMAT_VERSION,
};
use super::yaml::{self, DeError, Node, NodeDeserializer, NodeValue, Pos};
use opconform_backend::validate::{lowest_valid_level, validate};
use opconform_backend::{
    spec, ArgMaxDesc, AxisDirection, DataType, Level, NonZeroCoordinatesDesc, OneHotDesc,
    OperatorDesc, OperatorKind, OvOneHotDesc, Tensor, TensorDesc,
};
use rayon::prelude::*;
use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use super::caps::MAX_BUFFER_BYTES;

/// A ready-to-run case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Full id: `<operator slug>::<group>::<id>`, e.g. `dml_one_hot::documented::example_1`.
    pub id: String,
    /// The file it was loaded from, as given on the command line (relative when possible).
    pub file: PathBuf,
    /// 1-based line of the case in its file.
    pub line: usize,
    /// The operator descriptor.
    pub operator: OperatorDesc,
    /// Level the case is tagged with (and executed at).
    pub level: Level,
    /// Required or informational.
    pub class: CaseClass,
    /// Free tags.
    pub tags: Vec<String>,
    /// Behaviour rule ids exercised.
    pub exercises: Vec<String>,
    /// Provenance.
    pub source: Source,
    /// Input tensors in descriptor order.
    pub inputs: Vec<Tensor>,
    /// What a backend must do.
    pub expectation: Expectation,
    /// How outputs are compared (`compare:` in the file; `value` when absent).
    pub compare: Compare,
}

/// What a backend must do with a case.
#[derive(Debug, Clone)]
pub enum Expectation {
    /// Produce these outputs (descriptor order).
    Outputs(Vec<ExpectedTensor>),
    /// Reject the descriptor; the validator reports exactly these rule ids.
    Invalid(Vec<String>),
}

/// An expected output: packed element bytes in logical row-major order, and which are defined.
#[derive(Debug, Clone)]
pub struct ExpectedTensor {
    /// Tensor name from the spec, e.g. `OutputTensor`.
    pub name: String,
    /// The output's description (what the backend writes into).
    pub desc: TensorDesc,
    /// Element bytes, packed, in row-major order of the logical coordinates.
    pub bytes: Vec<u8>,
    /// Per element, whether the spec defines it; `None` when every element is defined.
    pub defined: Option<Vec<bool>>,
}

impl ExpectedTensor {
    /// True when element `index` (row-major) is compared.
    pub fn is_defined(&self, index: usize) -> bool {
        self.defined.as_ref().is_none_or(|d| d[index])
    }
}

impl Case {
    /// The operator.
    pub fn kind(&self) -> OperatorKind {
        self.operator.kind()
    }

    /// True for a negative case.
    pub fn is_negative(&self) -> bool {
        matches!(self.expectation, Expectation::Invalid(_))
    }
}

/// A load error, pointing into the file: a case (or a whole file) that did not load.
///
/// A case with several errors gives several `LoadError`s with the same `case_id` (and the same
/// `cases[N]` prefix in `field`). Errors about a whole file (unreadable, too large, not YAML,
/// wrong `format`) have no `case_id`; their `field` is `(file)`, `(yaml)` or `format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0 only when the file could not be read at all).
    pub line: usize,
    /// 1-based column, in characters (0 only when the file could not be read at all).
    pub column: usize,
    /// The field, e.g. `cases[2].inputs.IndicesTensor.data`.
    pub field: String,
    /// What is wrong, naming the rule when one is broken.
    pub message: String,
    /// The full id the case would have had (`<operator slug>::<group>::<id>`), when its `id`
    /// and `operator` could be read; `None` for file errors.
    pub case_id: Option<String>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.field,
            self.message
        )
    }
}

/// The cases and errors from loading a set of paths.
#[derive(Debug, Default)]
pub struct LoadedCases {
    /// Cases that loaded, sorted by id.
    pub cases: Vec<Case>,
    /// Every error found, in file order.
    pub errors: Vec<LoadError>,
}

/// Loads every `.yaml`/`.yml` case file under `paths` (files or folders, recursively, in sorted
/// order). Group names come from each file's path relative to the folder it was found under.
/// Symbolic links to folders found inside a folder are not followed (a loop, or a link to `..`,
/// would load cases again under invented ids): each is reported as a load error. Links to files
/// are read.
pub fn load_paths(paths: &[PathBuf]) -> LoadedCases {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        collect_case_files(path, path, &mut files, &mut errors);
    }
    let results: Vec<(Vec<Case>, Vec<LoadError>)> = files
        .par_iter()
        .map(|(root, file)| load_file(root, file))
        .collect();
    let mut cases = Vec::new();
    for (file_cases, file_errors) in results {
        cases.extend(file_cases);
        errors.extend(file_errors);
    }
    let cases = sort_rejecting_duplicate_ids(cases, &mut errors);
    LoadedCases { cases, errors }
}

fn collect_case_files(
    root: &Path,
    path: &Path,
    files: &mut Vec<(PathBuf, PathBuf)>,
    errors: &mut Vec<LoadError>,
) {
    if path.is_file() {
        let root = if root == path {
            path.parent().unwrap_or(Path::new("")).to_path_buf()
        } else {
            root.to_path_buf()
        };
        files.push((root, path.to_path_buf()));
        return;
    }
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(file_error(path, format!("cannot read: {e}")));
            return;
        }
    };
    for entry in folder_entries(entries) {
        match entry {
            FolderEntry::LinkedFolder(child) => errors.push(file_error(
                &child,
                "symbolic link to a folder: not followed (it could loop or load cases twice); \
                 name the target folder on the command line instead"
                    .to_string(),
            )),
            FolderEntry::Walk(child) => collect_case_files(root, &child, files, errors),
        }
    }
}

/// One entry of a case folder, as the loader treats it.
pub(crate) enum FolderEntry {
    /// A `.yaml`/`.yml` file or a subfolder: loaded (walked).
    Walk(PathBuf),
    /// A symbolic link to a folder: never followed, reported.
    LinkedFolder(PathBuf),
}

/// A folder's entries the loader looks at, sorted by path: `.yaml`/`.yml` files and
/// subfolders, and links to folders apart; anything else is skipped. The suite cache
/// (`case::cache`) digests folders through this too, so both walk the same files.
pub(crate) fn folder_entries(entries: std::fs::ReadDir) -> Vec<FolderEntry> {
    let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    children.sort();
    children
        .into_iter()
        .filter_map(|child| {
            let is_yaml = child.extension().is_some_and(|e| e == "yaml" || e == "yml");
            let is_link = child
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
            if child.is_dir() && is_link {
                Some(FolderEntry::LinkedFolder(child))
            } else if child.is_dir() || is_yaml {
                Some(FolderEntry::Walk(child))
            } else {
                None
            }
        })
        .collect()
}

fn file_error(file: &Path, message: String) -> LoadError {
    LoadError {
        file: file.to_path_buf(),
        line: 0,
        column: 0,
        field: "(file)".to_string(),
        message,
        case_id: None,
    }
}

/// The cases sorted by id, each repeated id after its first (in file order) turned into a
/// load error (in file order). Sorts indices, not the cases themselves, in parallel.
fn sort_rejecting_duplicate_ids(cases: Vec<Case>, errors: &mut Vec<LoadError>) -> Vec<Case> {
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.par_sort_unstable_by(|&a, &b| cases[a].id.cmp(&cases[b].id).then(a.cmp(&b)));
    // (repeat, first) pairs of indices.
    let mut repeats = Vec::new();
    let mut run_first = None;
    for pair in order.windows(2) {
        if cases[pair[0]].id == cases[pair[1]].id {
            let first = *run_first.get_or_insert(pair[0]);
            repeats.push((pair[1], first));
        } else {
            run_first = None;
        }
    }
    repeats.sort_unstable();
    let mut rejected = vec![false; cases.len()];
    for &(repeat, first) in &repeats {
        rejected[repeat] = true;
        let (case, first) = (&cases[repeat], &cases[first]);
        errors.push(LoadError {
            file: case.file.clone(),
            line: case.line,
            column: 1,
            field: "id".to_string(),
            message: format!(
                "duplicate case id `{}` (first defined at {}:{})",
                case.id,
                first.file.display(),
                first.line
            ),
            case_id: Some(case.id.clone()),
        });
    }
    let mut slots: Vec<Option<Case>> = cases.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter(|&i| !rejected[i])
        .filter_map(|i| slots[i].take())
        .collect()
}

/// Loads one case file. `root` is the folder group names are relative to. Files larger than
/// [`MAX_FILE_BYTES`], not regular files, and text that is not UTF-8 are refused with an error.
pub fn load_file(root: &Path, file: &Path) -> (Vec<Case>, Vec<LoadError>) {
    match read_case_text(file) {
        Ok(text) => load_text(root, file, &text),
        Err(error) => (Vec::new(), vec![error]),
    }
}

/// Reads a file's text within the cap, locating invalid UTF-8.
fn read_case_text(file: &Path) -> Result<String, LoadError> {
    let metadata =
        std::fs::metadata(file).map_err(|e| file_error(file, format!("cannot read: {e}")))?;
    if !metadata.is_file() {
        return Err(file_error(file, "not a regular file".to_string()));
    }
    let too_large = |size: u64| {
        file_error(
            file,
            format!("the file has {size} bytes or more; case files are capped at {MAX_FILE_BYTES} bytes"),
        )
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| file_error(file, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let valid = std::str::from_utf8(valid).expect("valid up to here");
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        LoadError {
            line,
            column,
            field: "(file)".to_string(),
            ..file_error(file, "the file is not valid UTF-8".to_string())
        }
    })
}

/// Loads case file text as if read from `file` (used by tests and by `load_file`).
pub fn load_text(root: &Path, file: &Path, text: &str) -> (Vec<Case>, Vec<LoadError>) {
    let file_level = |pos: Pos, field: &str, message: String| LoadError {
        file: file.to_path_buf(),
        line: pos.line,
        column: pos.column,
        field: field.to_string(),
        message,
        case_id: None,
    };
    let root_node = match yaml::parse(text) {
        Ok(node) => node,
        Err(e) => return (Vec::new(), vec![file_level(e.pos, "(yaml)", e.message)]),
    };
    let mut errors = Vec::new();
    let Some(case_nodes) = read_header(&root_node, &mut errors, &file_level) else {
        return (Vec::new(), errors);
    };
    let group_path = file.strip_prefix(root).unwrap_or(file);
    // The cases of a file are built in parallel (a file of large cases would otherwise load
    // on one core), then gathered in file order.
    let built: Vec<Result<Case, Vec<LoadError>>> = case_nodes
        .par_iter()
        .enumerate()
        .map(|(index, node)| load_case(file, group_path, index, node))
        .collect();
    let mut cases = Vec::new();
    for result in built {
        match result {
            Ok(case) => cases.push(case),
            Err(mut case_errors) => errors.append(&mut case_errors),
        }
    }
    (cases, errors)
}

/// Reads and builds the case at `index` of `file` from its `node`.
fn load_case(
    file: &Path,
    group_path: &Path,
    index: usize,
    node: &Node,
) -> Result<Case, Vec<LoadError>> {
    let context = CaseContext {
        file,
        index,
        node,
        group_path,
    };
    let label = format!("cases[{index}]");
    match CaseSpec::deserialize(NodeDeserializer::new(node, &label)) {
        Ok(spec) => build_case(&context, group_path, &spec),
        Err(e) => Err(vec![context.de_error(e)]),
    }
}

/// Checks the top-level mapping (`format: 1`, `cases: [...]`), pushing located errors; returns
/// the case nodes when the cases can be read.
fn read_header<'n>(
    root: &'n Node<'n>,
    errors: &mut Vec<LoadError>,
    file_level: &dyn Fn(Pos, &str, String) -> LoadError,
) -> Option<&'n [Node<'n>]> {
    let NodeValue::Map(entries) = &root.value else {
        errors.push(file_level(
            root.pos,
            "(file)",
            "a case file is a mapping with `format` and `cases`".to_string(),
        ));
        return None;
    };
    let mut seen = HashMap::new();
    for (key, _) in entries {
        let name = key.as_scalar().unwrap_or("?");
        if let Some(first) = seen.insert(name, key.pos) {
            errors.push(file_level(
                key.pos,
                name,
                format!(
                    "duplicate key `{name}` (first at line {}, column {})",
                    first.line, first.column
                ),
            ));
        } else if name != "format" && name != "cases" {
            errors.push(file_level(
                key.pos,
                name,
                format!("unknown field `{name}`; a case file has `format` and `cases`"),
            ));
        }
    }
    let Some((format_key, format_node)) = root.entry("format") else {
        errors.push(file_level(
            root.pos,
            "format",
            "missing field `format`".to_string(),
        ));
        return None;
    };
    match u32::deserialize(NodeDeserializer::new(format_node, "format")) {
        Ok(CASE_FORMAT_VERSION) => {}
        Ok(other) => {
            errors.push(file_level(
                format_key.pos,
                "format",
                format!("case format {other} is not supported; this build reads format {CASE_FORMAT_VERSION}"),
            ));
            return None;
        }
        Err(e) => {
            errors.push(file_level(
                e.pos.unwrap_or(format_node.pos),
                "format",
                e.message,
            ));
            return None;
        }
    }
    let Some((cases_key, cases_node)) = root.entry("cases") else {
        errors.push(file_level(
            root.pos,
            "cases",
            "missing field `cases`".to_string(),
        ));
        return None;
    };
    match &cases_node.value {
        NodeValue::Seq(items) => Some(items),
        _ => {
            errors.push(file_level(
                cases_key.pos,
                "cases",
                "`cases` must be a list of cases".to_string(),
            ));
            None
        }
    }
}

/// The full id a case node would get, when its `id` and `operator` read.
fn full_id(node: &Node, group_path: &Path) -> Option<String> {
    let id = node.get("id")?.as_scalar()?;
    let operator =
        OperatorKind::deserialize(NodeDeserializer::new(node.get("operator")?, "operator")).ok()?;
    Some(format!(
        "{}::{}::{id}",
        operator.slug(),
        group_name(group_path, operator)
    ))
}

/// Where a case sits, for error messages.
struct CaseContext<'a> {
    file: &'a Path,
    index: usize,
    node: &'a Node<'a>,
    /// The file's path below its root (for the case's full id, built only for errors).
    group_path: &'a Path,
}

impl CaseContext<'_> {
    /// An error at the field reached by `path` (keys) in this case: at its key when found, else
    /// at the deepest key found on the way, else at the case.
    fn error(&self, path: &[&str], message: impl Into<String>) -> LoadError {
        let mut pos = self.node.pos;
        let mut node = self.node;
        for key in path {
            match node.entry(key) {
                Some((k, v)) => {
                    pos = k.pos;
                    node = v;
                }
                None => break,
            }
        }
        let mut field = format!("cases[{}]", self.index);
        for key in path {
            field.push('.');
            field.push_str(key);
        }
        LoadError {
            file: self.file.to_path_buf(),
            line: pos.line,
            column: pos.column,
            field,
            message: message.into(),
            case_id: full_id(self.node, self.group_path),
        }
    }

    /// A deserialization error of this case.
    fn de_error(&self, error: DeError) -> LoadError {
        let pos = error.pos.unwrap_or(self.node.pos);
        LoadError {
            file: self.file.to_path_buf(),
            line: pos.line,
            column: pos.column,
            field: error
                .path
                .unwrap_or_else(|| format!("cases[{}]", self.index)),
            message: error.message,
            case_id: full_id(self.node, self.group_path),
        }
    }
}

/// The group of a case file: its path below the root, without the extension and without a
/// component naming the operator (`documented/dml_one_hot.yaml` → `documented`).
pub fn group_name(relative: &Path, operator: OperatorKind) -> String {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|part| part != operator.slug())
        .collect();
    if parts.is_empty() {
        parts.push("cases".to_string());
    }
    parts.join("::")
}

fn build_case(
    context: &CaseContext,
    group_path: &Path,
    spec: &CaseSpec,
) -> Result<Case, Vec<LoadError>> {
    let mut errors = Vec::new();
    check_identity(context, spec, &mut errors);
    let negative = !spec.expect_invalid.is_empty();
    let inputs = build_inputs(context, spec, negative, &mut errors);
    let outputs = build_output_descs(context, spec, negative, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let operator = match build_operator(context, spec, &inputs, &outputs) {
        Ok(operator) => operator,
        Err(e) => return Err(vec![e]),
    };
    check_level(context, spec, &operator, &mut errors);
    if !negative {
        for (name, tensor) in &inputs {
            if let Err(message) = check_logical_size(&tensor.desc) {
                errors.push(context.error(&["inputs", name.as_str(), "sizes"], message));
            }
        }
    }
    let expectation = if negative {
        Expectation::Invalid(spec.expect_invalid.clone())
    } else {
        Expectation::Outputs(build_expected(context, spec, &outputs, &mut errors))
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let group = group_name(group_path, spec.operator);
    Ok(Case {
        id: format!("{}::{group}::{}", spec.operator.slug(), spec.id),
        file: context.file.to_path_buf(),
        line: context.node.pos.line,
        operator,
        level: spec.level,
        class: spec.class,
        tags: spec.tags.clone(),
        exercises: spec.exercises.clone(),
        source: spec.source.clone(),
        inputs: inputs.into_iter().map(|(_, t)| t).collect(),
        expectation,
        compare: spec.compare,
    })
}

fn check_identity(context: &CaseContext, spec: &CaseSpec, errors: &mut Vec<LoadError>) {
    let id_ok = !spec.id.is_empty()
        && spec
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !id_ok {
        errors.push(context.error(
            &["id"],
            format!(
                "`{}` is not an id: use lower-case letters, digits and `_`",
                spec.id
            ),
        ));
    }
    if spec.level.family() != spec.operator.family() && spec.expect_invalid.is_empty() {
        errors.push(context.error(
            &["level"],
            format!(
                "{} is versioned by {} levels, not `{}`",
                spec.operator,
                spec.operator.family(),
                spec.level
            ),
        ));
    }
    let sources = [
        spec.source.document.is_some(),
        spec.source.generator.is_some(),
        spec.source.hand_written.is_some(),
    ];
    if sources.iter().filter(|&&s| s).count() != 1 {
        errors.push(context.error(
            &["source"],
            "give exactly one of `document` (with `example`), `generator` or `hand_written`",
        ));
    }
    if spec.source.document.is_some() && spec.source.example.is_none() {
        errors.push(context.error(&["source"], "a `document` source needs its `example`"));
    }
    for (key, ids, kind) in [
        ("exercises", &spec.exercises, spec::RuleKind::Behaviour),
        (
            "expect_invalid",
            &spec.expect_invalid,
            spec::RuleKind::Descriptor,
        ),
    ] {
        for id in ids {
            match rule_kind(id) {
                Some(found) if found == kind => {}
                Some(_) => errors
                    .push(context.error(&[key], format!("rule `{id}` is not a {kind:?} rule"))),
                None => errors.push(context.error(&[key], format!("no rule `{id}` in specs/"))),
            }
        }
    }
}

/// The kind of the rule `id` of `specs/` (of its first definition, as a search in rule order
/// finds it), from a table built once.
fn rule_kind(id: &str) -> Option<spec::RuleKind> {
    static KINDS: OnceLock<HashMap<&'static str, spec::RuleKind>> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| {
        let mut kinds = HashMap::new();
        for rule in spec::all_rules() {
            kinds.entry(rule.id.as_str()).or_insert(rule.kind);
        }
        kinds
    });
    kinds.get(id).copied()
}

fn build_inputs(
    context: &CaseContext,
    spec: &CaseSpec,
    negative: bool,
    errors: &mut Vec<LoadError>,
) -> Vec<(String, Tensor)> {
    let (names, _) = spec.operator.tensor_names();
    check_tensor_names(context, "inputs", names, spec.inputs.names(), errors);
    let mut tensors = Vec::new();
    for &name in names {
        let Some(tensor) = spec.inputs.get(name) else {
            continue;
        };
        match build_input(context, name, tensor, negative) {
            Ok(t) => tensors.push((name.to_string(), t)),
            Err(e) => errors.push(e),
        }
    }
    tensors
}

fn check_tensor_names<'a>(
    context: &CaseContext,
    key: &str,
    expected: &[&str],
    found: impl Iterator<Item = &'a str>,
    errors: &mut Vec<LoadError>,
) {
    let found: Vec<&str> = found.collect();
    for name in expected.iter().filter(|n| !found.contains(n)) {
        errors.push(context.error(&[key], format!("missing tensor `{name}`")));
    }
    for name in found.iter().filter(|n| !expected.contains(n)) {
        errors.push(context.error(
            &[key, name],
            format!("unknown tensor `{name}`; expected {}", expected.join(", ")),
        ));
    }
}

/// Builds a description, checking strides, buffer size and allocatability.
fn build_desc(
    context: &CaseContext,
    path: &[&str],
    data_type: DataType,
    sizes: &[u32],
    strides: Option<&[u32]>,
    total: Option<u64>,
) -> Result<TensorDesc, LoadError> {
    if let (Some(strides), Some(total)) = (strides, total) {
        if strides.len() != sizes.len() && total <= MAX_BUFFER_BYTES {
            // Only a negative case can get here usefully: the validator reports
            // TENSOR.STRIDES_COUNT, and the buffer has the size given.
            return Ok(TensorDesc {
                data_type,
                sizes: sizes.to_vec(),
                strides: Some(strides.to_vec()),
                total_tensor_size_in_bytes: total,
            });
        }
    }
    if let Some(strides) = strides {
        if strides.len() != sizes.len() {
            let mut at = path.to_vec();
            at.push("strides");
            return Err(context.error(
                &at,
                format!(
                    "{} strides for {} sizes (rule TENSOR.STRIDES_COUNT; a negative case \
                     testing it gives total_size_in_bytes)",
                    strides.len(),
                    sizes.len()
                ),
            ));
        }
    }
    let minimum = opconform_backend::min_buffer_size_bytes(data_type, sizes, strides);
    let mut at = path.to_vec();
    at.push("sizes");
    let Some(minimum) = minimum else {
        return Err(context.error(&at, "the buffer size overflows 64 bits: impossible shape"));
    };
    let total = total.unwrap_or(minimum);
    if total > MAX_BUFFER_BYTES {
        return Err(context.error(
            &at,
            format!(
                "a buffer of {total} bytes is too large to allocate (limit {MAX_BUFFER_BYTES}); \
                 give a smaller total_size_in_bytes in a negative case"
            ),
        ));
    }
    Ok(TensorDesc {
        data_type,
        sizes: sizes.to_vec(),
        strides: strides.map(<[u32]>::to_vec),
        total_tensor_size_in_bytes: total,
    })
}

fn build_input(
    context: &CaseContext,
    name: &str,
    spec: &InputTensorSpec,
    negative: bool,
) -> Result<Tensor, LoadError> {
    let path = ["inputs", name];
    let desc = build_desc(
        context,
        &path,
        spec.data_type,
        &spec.sizes,
        spec.strides.as_deref(),
        spec.total_size_in_bytes,
    )?;
    let data_path = ["inputs", name, "data"];
    let expected_len = buffer_span_elements(&desc);
    let mut bytes = Vec::new();
    match (&spec.data, &spec.generate) {
        (Some(_), Some(_)) => {
            return Err(context.error(&data_path, "give `data` or `generate`, not both"));
        }
        (None, None) if negative => {
            return Ok(Tensor::filled(desc, 0).expect("size checked against MAX_BUFFER_BYTES"));
        }
        (None, None) => {
            return Err(context.error(
                &data_path,
                "an input of a positive case needs `data` or `generate`",
            ));
        }
        (None, Some(generator)) => {
            let generate_path = ["inputs", name, "generate"];
            check_span_fits(&desc, expected_len)
                .map_err(|message| context.error(&generate_path, message))?;
            bytes.reserve_exact(desc.total_tensor_size_in_bytes as usize);
            generator
                .fill(desc.data_type, expected_len, &mut bytes)
                .map_err(|e| context.error(&generate_path, e.to_string()))?
        }
        (Some(data), None) => {
            if data.len() as u64 != expected_len {
                let what = if desc.strides.is_some() {
                    "elements from offset 0 to the last element's offset"
                } else {
                    "elements (the product of the sizes)"
                };
                return Err(context.error(
                    &data_path,
                    format!(
                        "{} elements given, {} needs {expected_len} {what}",
                        data.len(),
                        desc.summary()
                    ),
                ));
            }
            check_span_fits(&desc, expected_len)
                .map_err(|message| context.error(&data_path, message))?;
            bytes.reserve_exact(desc.total_tensor_size_in_bytes as usize);
            for (i, element) in data.iter().enumerate() {
                element
                    .encode(desc.data_type, &mut bytes)
                    .map_err(|e| context.error(&data_path, format!("element {i}: {e}")))?;
            }
        }
    }
    if bytes.len() as u64 > desc.total_tensor_size_in_bytes {
        return Err(context.error(
            &data_path,
            format!(
                "{} bytes of data exceed total_size_in_bytes {} (rule TENSOR.TOTAL_SIZE)",
                bytes.len(),
                desc.total_tensor_size_in_bytes
            ),
        ));
    }
    bytes.resize(desc.total_tensor_size_in_bytes as usize, 0);
    Ok(Tensor { desc, data: bytes })
}

/// Checks that `elements` buffer elements (a `data` list's or a generator's) fit the buffer
/// and the element cap, before any is drawn or encoded.
fn check_span_fits(desc: &TensorDesc, elements: u64) -> Result<(), String> {
    if elements > MAX_ELEMENTS {
        return Err(format!(
            "{elements} elements to draw or encode; the cap is {MAX_ELEMENTS} per tensor"
        ));
    }
    let bytes = elements * desc.data_type.size_in_bytes() as u64;
    if bytes > desc.total_tensor_size_in_bytes {
        return Err(format!(
            "{elements} elements ({bytes} bytes) exceed total_size_in_bytes {} \
             (rule TENSOR.TOTAL_SIZE)",
            desc.total_tensor_size_in_bytes
        ));
    }
    Ok(())
}

/// Checks a positive case's tensor against the logical caps: broadcast strides can describe
/// far more elements than the buffer holds, and every one is computed and compared.
fn check_logical_size(desc: &TensorDesc) -> Result<(), String> {
    let count = desc
        .sizes
        .iter()
        .try_fold(1u64, |count, &size| count.checked_mul(u64::from(size)));
    let bytes = count.and_then(|c| c.checked_mul(desc.data_type.size_in_bytes() as u64));
    if count.is_none_or(|c| c > MAX_ELEMENTS) || bytes.is_none_or(|b| b > MAX_LOGICAL_BYTES) {
        let count = count.map_or("more than 2^64".to_string(), |c| c.to_string());
        return Err(format!(
            "{} has {count} logical elements; a positive case's tensors are capped at \
             {MAX_ELEMENTS} elements and {MAX_LOGICAL_BYTES} bytes packed",
            desc.summary()
        ));
    }
    Ok(())
}

/// Elements a `data` list gives: the element count when packed, else the span from offset 0 to
/// the last element's offset.
fn buffer_span_elements(desc: &TensorDesc) -> u64 {
    match &desc.strides {
        None => desc.element_count(),
        Some(strides) => {
            if desc.sizes.contains(&0) {
                return 0;
            }
            desc.sizes
                .iter()
                .zip(strides)
                .map(|(&s, &st)| u64::from(s - 1) * u64::from(st))
                .sum::<u64>()
                + 1
        }
    }
}

fn build_output_descs(
    context: &CaseContext,
    spec: &CaseSpec,
    negative: bool,
    errors: &mut Vec<LoadError>,
) -> Vec<(String, TensorDesc)> {
    let (_, names) = spec.operator.tensor_names();
    check_tensor_names(context, "outputs", names, spec.outputs.names(), errors);
    let mut descs = Vec::new();
    for &name in names {
        let Some(tensor) = spec.outputs.get(name) else {
            continue;
        };
        let path = ["outputs", name];
        match (negative, &tensor.data) {
            (true, Some(_)) => errors.push(context.error(
                &["outputs", name, "data"],
                "a negative case (expect_invalid) has no expected data",
            )),
            (false, None) => errors.push(context.error(
                &["outputs", name],
                "a positive case needs expected `data` for every output",
            )),
            _ => {}
        }
        match build_desc(
            context,
            &path,
            tensor.data_type,
            &tensor.sizes,
            tensor.strides.as_deref(),
            tensor.total_size_in_bytes,
        ) {
            Ok(desc) => descs.push((name.to_string(), desc)),
            Err(e) => errors.push(e),
        }
    }
    descs
}

fn input_desc<'a>(inputs: &'a [(String, Tensor)], name: &str) -> &'a TensorDesc {
    &inputs
        .iter()
        .find(|(n, _)| n == name)
        .expect("input names checked")
        .1
        .desc
}

fn output_desc<'a>(outputs: &'a [(String, TensorDesc)], name: &str) -> &'a TensorDesc {
    &outputs
        .iter()
        .find(|(n, _)| n == name)
        .expect("output names checked")
        .1
}

fn build_operator(
    context: &CaseContext,
    spec: &CaseSpec,
    inputs: &[(String, Tensor)],
    outputs: &[(String, TensorDesc)],
) -> Result<OperatorDesc, LoadError> {
    let attributes = &spec.attributes;
    let allowed: &[&str] = match spec.operator {
        OperatorKind::DmlOneHot => &["Axis"],
        OperatorKind::DmlNonZeroCoordinates => &[],
        OperatorKind::DmlArgMax => &["Axes", "AxisDirection"],
        OperatorKind::OvOneHot1 => &["axis"],
    };
    for name in attribute_names(attributes) {
        if !allowed.contains(&name) {
            return Err(context.error(
                &["attributes", name],
                format!("{} has no attribute `{name}`", spec.operator),
            ));
        }
    }
    let missing = |name: &str| {
        context.error(
            &["attributes"],
            format!("{} needs attribute `{name}`", spec.operator),
        )
    };
    Ok(match spec.operator {
        OperatorKind::DmlOneHot => OperatorDesc::OneHot(OneHotDesc {
            indices: input_desc(inputs, "IndicesTensor").clone(),
            values: input_desc(inputs, "ValuesTensor").clone(),
            output: output_desc(outputs, "OutputTensor").clone(),
            axis: attributes.dml_axis.ok_or_else(|| missing("Axis"))?,
        }),
        OperatorKind::DmlNonZeroCoordinates => {
            OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
                input: input_desc(inputs, "InputTensor").clone(),
                output_count: output_desc(outputs, "OutputCountTensor").clone(),
                output_coordinates: output_desc(outputs, "OutputCoordinatesTensor").clone(),
            })
        }
        OperatorKind::DmlArgMax => OperatorDesc::ArgMax(ArgMaxDesc {
            input: input_desc(inputs, "InputTensor").clone(),
            output: output_desc(outputs, "OutputTensor").clone(),
            axes: attributes.axes.clone().ok_or_else(|| missing("Axes"))?,
            axis_direction: attributes
                .axis_direction
                .ok_or_else(|| missing("AxisDirection"))?,
        }),
        OperatorKind::OvOneHot1 => OperatorDesc::OvOneHot(OvOneHotDesc {
            indices: input_desc(inputs, "indices").clone(),
            depth: input_desc(inputs, "depth").clone(),
            depth_value: read_depth(context, inputs)?,
            on_value: input_desc(inputs, "on_value").clone(),
            off_value: input_desc(inputs, "off_value").clone(),
            output: output_desc(outputs, "output").clone(),
            axis: attributes.ov_axis.ok_or_else(|| missing("axis"))?,
        }),
    })
}

fn attribute_names(attributes: &Attributes) -> Vec<&'static str> {
    let mut names = Vec::new();
    if attributes.dml_axis.is_some() {
        names.push("Axis");
    }
    if attributes.axes.is_some() {
        names.push("Axes");
    }
    if attributes.axis_direction.is_some() {
        names.push("AxisDirection");
    }
    if attributes.ov_axis.is_some() {
        names.push("axis");
    }
    names
}

/// OneHot-1's `depth` is a constant scalar: its first element, read as T1.
fn read_depth(context: &CaseContext, inputs: &[(String, Tensor)]) -> Result<i64, LoadError> {
    let tensor = &inputs
        .iter()
        .find(|(n, _)| n == "depth")
        .expect("input names checked")
        .1;
    let bytes = tensor.element_bytes(0);
    match (tensor.desc.data_type, bytes) {
        (DataType::Int64, Some(b)) => Ok(i64::from_le_bytes(b.try_into().expect("8 bytes"))),
        (DataType::Int32, Some(b)) => Ok(i64::from(i32::from_le_bytes(
            b.try_into().expect("4 bytes"),
        ))),
        (other, _) => Err(context.error(
            &["inputs", "depth"],
            format!("depth must be an INT32 or INT64 scalar holding one value, found {other}"),
        )),
    }
}

fn check_level(
    context: &CaseContext,
    spec: &CaseSpec,
    operator: &OperatorDesc,
    errors: &mut Vec<LoadError>,
) {
    if !spec.expect_invalid.is_empty() {
        let found: BTreeSet<String> = validate(operator, spec.level)
            .into_iter()
            .map(|v| v.rule)
            .collect();
        let expected: BTreeSet<String> = spec.expect_invalid.iter().cloned().collect();
        if found != expected {
            errors.push(context.error(
                &["expect_invalid"],
                format!(
                    "the validator reports [{}] at {}, the case expects [{}]",
                    found.into_iter().collect::<Vec<_>>().join(", "),
                    spec.level,
                    expected.into_iter().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        return;
    }
    match lowest_valid_level(operator) {
        Some(lowest) if lowest == spec.level => {}
        Some(lowest) => errors.push(context.error(
            &["level"],
            format!(
                "tagged {} but the descriptor is first valid at {lowest}; tag it {lowest}",
                spec.level
            ),
        )),
        None => {
            let violations: Vec<String> = validate(operator, spec.level)
                .iter()
                .map(ToString::to_string)
                .collect();
            errors.push(context.error(
                &["level"],
                format!(
                    "the descriptor is valid at no level; at {}: {}",
                    spec.level,
                    violations.join("; ")
                ),
            ));
        }
    }
}

fn build_expected(
    context: &CaseContext,
    spec: &CaseSpec,
    outputs: &[(String, TensorDesc)],
    errors: &mut Vec<LoadError>,
) -> Vec<ExpectedTensor> {
    let mut expected = Vec::new();
    for (name, desc) in outputs {
        let tensor: &OutputTensorSpec = spec.outputs.get(name).expect("names checked");
        let listed = tensor.data.as_deref().unwrap_or_default();
        let path = ["outputs", name.as_str(), "data"];
        if let Err(message) = check_logical_size(desc) {
            errors.push(context.error(&["outputs", name.as_str(), "sizes"], message));
            continue;
        }
        let count = desc.element_count();
        let fill = tensor.fill.filter(|_| listed.len() as u64 <= count);
        if fill.is_none() && listed.len() as u64 != count {
            errors.push(context.error(
                &path,
                format!(
                    "{} elements given, {} has {}",
                    listed.len(),
                    desc.summary(),
                    count
                ),
            ));
            continue;
        }
        let fill = fill.map(|f| (f.0, count as usize - listed.len()));
        match encode_expected(desc.data_type, listed, fill) {
            Ok((bytes, defined)) => expected.push(ExpectedTensor {
                name: name.clone(),
                desc: desc.clone(),
                bytes,
                defined,
            }),
            Err(message) => errors.push(context.error(&path, message)),
        }
    }
    expected
}

/// Encodes an expected output: the `listed` elements, then `fill` = (element, count) repeated
/// (the rest of the tensor, when the file gives `fill`). Null elements are not defined and
/// encode as zero bytes. The fill is encoded once and its bytes repeated; a null fill leaves
/// its part of the buffers as the allocator's zeroed pages (a NonZeroCoordinates output of
/// millions of undefined rows costs no page until compared), so a large tensor of few listed
/// elements loads in the time of the listed ones.
fn encode_expected(
    data_type: DataType,
    listed: &[Element],
    fill: Option<(Element, usize)>,
) -> Result<(Vec<u8>, Option<Vec<bool>>), String> {
    let size = data_type.size_in_bytes();
    let (fill, fill_count) = fill.unwrap_or((Element::Null, 0));
    let count = listed.len() + fill_count;
    let mut bytes = vec![0u8; count * size];
    let mut defined = vec![false; count];
    let mut element_bytes = Vec::with_capacity(size);
    for (i, element) in listed.iter().enumerate() {
        if *element != Element::Null {
            element_bytes.clear();
            element
                .encode(data_type, &mut element_bytes)
                .map_err(|e| format!("element {i}: {e}"))?;
            bytes[i * size..(i + 1) * size].copy_from_slice(&element_bytes);
            defined[i] = true;
        }
    }
    let fill_defined = fill_count == 0 || fill != Element::Null;
    if fill != Element::Null && fill_count > 0 {
        element_bytes.clear();
        fill.encode(data_type, &mut element_bytes)
            .map_err(|e| format!("element {}: {e}", listed.len()))?;
        for chunk in bytes[listed.len() * size..].chunks_exact_mut(size) {
            chunk.copy_from_slice(&element_bytes);
        }
    }
    if fill_defined && listed.iter().all(|e| *e != Element::Null) {
        return Ok((bytes, None));
    }
    if fill_defined {
        defined[listed.len()..].fill(true);
    }
    Ok((bytes, Some(defined)))
}

/// Parses a direction name as written in case files (for callers building attributes).
pub fn axis_direction_name(direction: AxisDirection) -> &'static str {
    match direction {
        AxisDirection::Increasing => "DML_AXIS_DIRECTION_INCREASING",
        AxisDirection::Decreasing => "DML_AXIS_DIRECTION_DECREASING",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARGMAX_HEAD: &str = "format: 1\ncases:\n  - id: one\n    operator: DML_ARGMAX\n    level: \"3_0\"\n    source: {hand_written: test}\n    attributes: {Axes: [0], AxisDirection: DML_AXIS_DIRECTION_INCREASING}\n";

    fn load(text: &str) -> (Vec<Case>, Vec<LoadError>) {
        load_text(
            Path::new("cases"),
            Path::new("cases/test/dml_argmax.yaml"),
            text,
        )
    }

    fn single_error(text: &str) -> LoadError {
        let (cases, errors) = load(text);
        assert!(cases.is_empty(), "expected no case to load");
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors.into_iter().next().unwrap()
    }

    fn argmax_case(input: &str, output: &str) -> String {
        format!("{ARGMAX_HEAD}    inputs:\n      InputTensor: {input}\n    outputs:\n      OutputTensor: {output}\n")
    }

    #[test]
    fn the_quiet_validity_check_agrees_with_the_validator_on_every_case() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
        let loaded = load_paths(&[root]);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors.first());
        assert!(loaded.cases.len() > 1000);
        for case in &loaded.cases {
            let family = case.operator.kind().family();
            for level in opconform_backend::validate::candidate_levels(family) {
                assert_eq!(
                    opconform_backend::validate::is_valid(&case.operator, level),
                    validate(&case.operator, level).is_empty(),
                    "{} at {level}",
                    case.id
                );
            }
        }
    }

    #[test]
    fn a_good_case_loads_with_its_full_id_and_line() {
        let (cases, errors) = load(&argmax_case(
            "{type: FLOAT32, sizes: [3], data: [1, 3, 2]}",
            "{type: UINT32, sizes: [1], data: [1]}",
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases[0].id, "dml_argmax::test::one");
        assert_eq!(cases[0].line, 3);
    }

    #[test]
    fn repeated_ids_are_errors_in_file_order_naming_the_first() {
        let case = argmax_case(
            "{type: FLOAT32, sizes: [3], data: [1, 3, 2]}",
            "{type: UINT32, sizes: [1], data: [1]}",
        );
        let second = case.replace("id: one", "id: two");
        let roots: Vec<PathBuf> = (0..3)
            .map(|_| tempfile::tempdir().unwrap().keep())
            .collect();
        for (root, text) in roots.iter().zip([&case, &second, &case]) {
            std::fs::create_dir(root.join("test")).unwrap();
            // `one` twice in a file, then again in a later root; `two` once.
            let twice = format!("{text}{}", text.split_once("cases:\n").unwrap().1);
            std::fs::write(root.join("test/dml_argmax.yaml"), twice).unwrap();
        }
        let loaded = load_paths(&roots);
        let ids: Vec<&str> = loaded.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["dml_argmax::test::one", "dml_argmax::test::two"]);
        let first = format!("{}:3", roots[0].join("test/dml_argmax.yaml").display());
        let places: Vec<(PathBuf, usize)> = loaded
            .errors
            .iter()
            .map(|e| (e.file.clone(), e.line))
            .collect();
        let file = |k: usize| roots[k].join("test/dml_argmax.yaml");
        assert_eq!(
            places,
            [(file(0), 12), (file(1), 12), (file(2), 3), (file(2), 12)]
        );
        assert!(
            loaded.errors[0].message.contains(&first),
            "{:?}",
            loaded.errors[0]
        );
        assert!(
            loaded.errors[2].message.contains(&first),
            "{:?}",
            loaded.errors[2]
        );
        assert!(
            loaded.errors[1].message.contains(":3)"),
            "{:?}",
            loaded.errors[1]
        );
        for root in roots {
            std::fs::remove_dir_all(root).unwrap();
        }
    }

    #[test]
    fn malformed_yaml_names_line_and_column() {
        let error = single_error("format: 1\ncases:\n  - id: [unclosed\n");
        assert_eq!(error.field, "(yaml)");
        assert!(error.line >= 3, "{error}");
        assert!(error.column > 0, "{error}");
    }

    #[test]
    fn wrong_types_are_load_errors() {
        let error = single_error(&argmax_case(
            "{type: FLOAT32, sizes: [three], data: [1]}",
            "{type: UINT32, sizes: [1], data: [0]}",
        ));
        assert!(error.message.contains("invalid type"), "{error}");
        assert_eq!(error.line, 9, "{error}");
        let error = single_error(&argmax_case(
            "{type: FLOAT99, sizes: [1], data: [1]}",
            "{type: UINT32, sizes: [1], data: [0]}",
        ));
        assert!(error.message.contains("FLOAT99"), "{error}");
    }

    #[test]
    fn unknown_fields_and_duplicate_keys_are_errors() {
        let error = single_error(&format!("{ARGMAX_HEAD}    colour: blue\n"));
        assert!(error.message.contains("unknown field `colour`"), "{error}");
        let error = single_error(&argmax_case(
            "{type: FLOAT32, type: FLOAT16, sizes: [1], data: [1]}",
            "{type: UINT32, sizes: [1], data: [0]}",
        ));
        assert!(error.message.contains("duplicate key `type`"), "{error}");
        assert_eq!((error.line, error.column), (9, 36), "{error}");
        let text = format!("{ARGMAX_HEAD}    inputs:\n      InputTensor: {{type: FLOAT32, sizes: [1], data: [1]}}\n      InputTensor: {{type: FLOAT32, sizes: [1], data: [1]}}\n    outputs: {{}}\n");
        let error = single_error(&text);
        assert!(
            error.message.contains("duplicate key `InputTensor`"),
            "{error}"
        );
    }

    #[test]
    fn data_length_must_match_sizes() {
        let error = single_error(&argmax_case(
            "{type: FLOAT32, sizes: [3], data: [1, 2]}",
            "{type: UINT32, sizes: [1], data: [0]}",
        ));
        assert_eq!(error.field, "cases[0].inputs.InputTensor.data");
        assert_eq!((error.line, error.column), (9, 48), "{error}");
        assert!(error.message.contains("2 elements given"), "{error}");
        let error = single_error(&argmax_case(
            "{type: FLOAT32, sizes: [3], data: [1, 3, 2]}",
            "{type: UINT32, sizes: [1], data: [0, 0]}",
        ));
        assert_eq!(error.field, "cases[0].outputs.OutputTensor.data");
    }

    #[test]
    fn strided_data_lists_the_buffer_span() {
        let (cases, errors) = load(&argmax_case(
            "{type: UINT8, sizes: [2, 3], strides: [4, 1], data: [1, 2, 3, 0, 4, 5, 6]}",
            "{type: UINT32, sizes: [1, 3], data: [1, 1, 1]}",
        ));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases[0].inputs[0].data, vec![1, 2, 3, 0, 4, 5, 6, 0]);
    }

    #[test]
    fn overflowing_and_huge_shapes_are_refused() {
        let error = single_error(&argmax_case(
            "{type: FLOAT64, sizes: [4294967295, 4294967295, 4294967295], data: []}",
            "{type: UINT32, sizes: [1, 1, 1], data: [0]}",
        ));
        assert!(error.message.contains("overflows"), "{error}");
        let error = single_error(&argmax_case(
            "{type: FLOAT32, sizes: [65536, 65536], data: []}",
            "{type: UINT32, sizes: [1, 65536], data: []}",
        ));
        assert!(error.message.contains("too large to allocate"), "{error}");
    }

    #[test]
    fn level_must_be_the_lowest_valid_one() {
        let text = argmax_case(
            "{type: FLOAT32, sizes: [3], data: [1, 3, 2]}",
            "{type: UINT32, sizes: [1], data: [1]}",
        )
        .replace("\"3_0\"", "\"4_1\"");
        let error = single_error(&text);
        assert!(error.message.contains("first valid at 3_0"), "{error}");
    }

    #[test]
    fn negative_cases_must_name_exactly_the_reported_rules() {
        let text = format!("{ARGMAX_HEAD}    inputs:\n      InputTensor: {{type: FLOAT32, sizes: [3]}}\n    outputs:\n      OutputTensor: {{type: UINT32, sizes: [3]}}\n    expect_invalid: [ARGMAX.AXES_RANGE]\n");
        let error = single_error(&text);
        assert!(
            error.message.contains("reports [ARGMAX.OUTPUT_SIZES]"),
            "{error}"
        );
        let fixed = text.replace("[ARGMAX.AXES_RANGE]", "[ARGMAX.OUTPUT_SIZES]");
        let (cases, errors) = load(&fixed);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(cases[0].is_negative());
    }

    #[test]
    fn unknown_rule_ids_are_errors() {
        let text = format!("{ARGMAX_HEAD}    exercises: [ARGMAX.NO_SUCH_RULE]\n    inputs:\n      InputTensor: {{type: FLOAT32, sizes: [3], data: [1, 3, 2]}}\n    outputs:\n      OutputTensor: {{type: UINT32, sizes: [1], data: [1]}}\n");
        let error = single_error(&text);
        assert!(
            error.message.contains("no rule `ARGMAX.NO_SUCH_RULE`"),
            "{error}"
        );
    }

    #[test]
    fn one_bad_case_does_not_hide_the_others() {
        let good = argmax_case(
            "{type: FLOAT32, sizes: [3], data: [1, 3, 2]}",
            "{type: UINT32, sizes: [1], data: [1]}",
        );
        let bad_case = good
            .lines()
            .skip(2)
            .collect::<Vec<_>>()
            .join("\n")
            .replace("id: one", "id: two")
            .replace("data: [1, 3, 2]", "data: [1]");
        let (cases, errors) = load(&format!("{good}{bad_case}\n"));
        assert_eq!(cases.len(), 1);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "cases[1].inputs.InputTensor.data");
    }

    #[test]
    fn expected_fill_repeats_the_encoded_value_and_null_leaves_elements_undefined() {
        let int = |v: i128| Element::Int(v);
        // A value fill: every element defined, the fill's bytes after the listed ones.
        let (bytes, defined) =
            encode_expected(DataType::Int16, &[int(-2), int(3)], Some((int(7), 3))).unwrap();
        let values: Vec<i16> = bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(values, [-2, 3, 7, 7, 7]);
        assert_eq!(defined, None);
        // A null fill: the listed elements defined, the rest zero bytes and undefined.
        let (bytes, defined) = encode_expected(
            DataType::Uint32,
            &[int(5), Element::Null],
            Some((Element::Null, 2)),
        )
        .unwrap();
        assert_eq!(bytes, [5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(defined, Some(vec![true, false, false, false]));
        // A null in the listed part with a value fill.
        let (_, defined) =
            encode_expected(DataType::Uint8, &[Element::Null], Some((int(1), 2))).unwrap();
        assert_eq!(defined, Some(vec![false, true, true]));
        // A fill that does not fit the type names the first element it would have filled.
        let error = encode_expected(DataType::Uint8, &[int(1)], Some((int(300), 4))).unwrap_err();
        assert!(error.starts_with("element 1: "), "{error}");
        // No fill: exactly the listed elements.
        let (bytes, defined) = encode_expected(DataType::Uint8, &[int(9)], None).unwrap();
        assert_eq!((bytes, defined), (vec![9], None));
    }

    #[test]
    fn generated_inputs_and_filled_outputs_load() {
        let text = "format: 1\ncases:\n  - id: big\n    operator: DML_NONZERO_COORDINATES\n    level: \"3_0\"\n    source: {generator: test}\n    inputs:\n      InputTensor: {type: UINT8, sizes: [1, 1, 4, 4], generate: {seed: 3, distribution: {kind: uniform_int, min: 0, max: 0}}}\n    outputs:\n      OutputCountTensor: {type: UINT32, sizes: [1, 1, 1, 1], data: [0]}\n      OutputCoordinatesTensor: {type: UINT32, sizes: [1, 1, 16, 2], data: [], fill: null}\n";
        let (cases, errors) = load_text(Path::new("cases"), Path::new("cases/g/x.yaml"), text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases[0].inputs[0].data, vec![0; 16]);
        let Expectation::Outputs(outputs) = &cases[0].expectation else {
            panic!("positive case")
        };
        assert_eq!(outputs[1].defined.as_deref(), Some(&[false; 32][..]));
    }
}
