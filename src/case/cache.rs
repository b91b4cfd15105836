//! The suite cache: the loaded, validated cases of a set of case folders, stored in one file
//! under Cargo's target directory so that a test process that finds a current entry skips YAML
//! parsing and validation (`tests/conformance.rs`, where nextest starts one process per trial).
//!
//! An entry is `<target>/opconform-suite-cache/<digest>.bin`. The digest ([`suite_digest`])
//! covers every case file's path and bytes (the files [`super::load_paths`] would read), the
//! embedded spec files, the cache format, the crate and case format versions, and the running
//! executable's size and modification time, so a changed case file, spec or rebuilt harness
//! never reads an old entry. A missing, stale, truncated or corrupt entry is ignored and
//! rewritten; every record is checked against its SHA-256 before use, and a record that fails
//! the check is loaded again from its case file. Entries are written to a temporary file in
//! the cache folder and renamed into place, so processes racing to write the same entry are
//! safe (each rename installs a complete file; a reader keeps the file it opened).
//!
//! Layout of an entry: [`MAGIC`], the format version (u32 LE), the digest (32 bytes), the index
//! length (u64 LE), the index's SHA-256 (32 bytes), the index (JSON: one entry per case with
//! its record's offset, length and SHA-256, plus the load errors), then the records. A record
//! is its metadata length (u64 LE), the metadata (JSON) and the raw buffers it names.

use super::format::{CaseClass, Compare, Source, CASE_FORMAT_VERSION};
use super::load::{
    folder_entries, load_file, load_paths, Case, Expectation, ExpectedTensor, FolderEntry,
    LoadError,
};
use opconform_backend::{spec, Level, OperatorDesc, OperatorKind, Tensor, TensorDesc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The first bytes of every cache entry.
pub const MAGIC: &[u8; 16] = b"opconform-suite\n";

/// The version of the entry layout; bump it when the layout or the record types change.
pub const CACHE_FORMAT: u32 = 1;

/// The folder under the target directory that holds the entries.
pub const CACHE_FOLDER: &str = "opconform-suite-cache";

/// Entries kept in the cache folder; older ones are removed when a new one is written.
const KEEP_ENTRIES: usize = 2;

/// Largest index read (64 MiB): a bigger length field means a corrupt entry.
const MAX_INDEX_BYTES: u64 = 64 << 20;

/// Bytes before the index: magic, format, digest, index length, index SHA-256.
const HEADER_BYTES: u64 = 16 + 4 + 32 + 8 + 32;

/// How [`Suite::load`] got its cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheUse {
    /// A current entry was read; no case file was parsed.
    Hit(PathBuf),
    /// The case files were loaded and a new entry written here.
    Written(PathBuf),
    /// The case files were loaded; the entry could not be written (the reason).
    WriteFailed(String),
    /// No cache folder was given (or the digest could not be computed): loaded directly.
    Disabled(String),
}

/// One case of a suite, as listed by the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteEntry {
    /// The case id.
    pub id: String,
    /// The case file.
    pub file: PathBuf,
    /// The folder the case was found under (group names are relative to it).
    pub root: PathBuf,
    /// 1-based line of the case in its file.
    pub line: usize,
    /// The operator.
    pub operator: OperatorKind,
    /// The level the case is tagged with.
    pub level: Level,
    offset: u64,
    length: u64,
    sha256: String,
}

/// The cases of a set of paths, in memory or read one at a time from a cache entry.
pub struct Suite {
    entries: Vec<SuiteEntry>,
    errors: Vec<LoadError>,
    store: Store,
}

enum Store {
    /// Loaded from the case files.
    Memory(Vec<Arc<Case>>),
    /// Read from a cache entry: the open file (kept, so a rename does not change what is read)
    /// and where the records start.
    Entry { file: Mutex<File>, records: u64 },
}

impl Suite {
    /// The cases under `roots` (as [`load_paths`] loads them): from a current entry in
    /// `cache_dir` when there is one, otherwise loaded from the files and, with a `cache_dir`,
    /// written there for the next process.
    pub fn load(roots: &[PathBuf], cache_dir: Option<&Path>) -> (Suite, CacheUse) {
        let Some(dir) = cache_dir else {
            return (
                Suite::from_loaded(roots),
                CacheUse::Disabled("no cache folder".into()),
            );
        };
        let digest = match suite_digest(roots) {
            Ok(digest) => digest,
            Err(e) => {
                let reason = format!("cannot digest the case files: {e}");
                return (Suite::from_loaded(roots), CacheUse::Disabled(reason));
            }
        };
        let path = dir.join(format!("{}.bin", hex(&digest)));
        if let Ok(suite) = Suite::open_entry(&path, &digest) {
            return (suite, CacheUse::Hit(path));
        }
        let suite = Suite::from_loaded(roots);
        let written = match suite.write_entry(dir, &path, &digest) {
            Ok(()) => CacheUse::Written(path),
            Err(e) => CacheUse::WriteFailed(format!("{}: {e}", path.display())),
        };
        (suite, written)
    }

    fn from_loaded(roots: &[PathBuf]) -> Suite {
        let loaded = load_paths(roots);
        let entries = loaded
            .cases
            .iter()
            .map(|case| SuiteEntry {
                id: case.id.clone(),
                file: case.file.clone(),
                root: root_of(roots, &case.file),
                line: case.line,
                operator: case.kind(),
                level: case.level,
                offset: 0,
                length: 0,
                sha256: String::new(),
            })
            .collect();
        Suite {
            entries,
            errors: loaded.errors,
            store: Store::Memory(loaded.cases.into_iter().map(Arc::new).collect()),
        }
    }

    /// The cases, sorted by id.
    pub fn entries(&self) -> &[SuiteEntry] {
        &self.entries
    }

    /// Every load error, in file order.
    pub fn errors(&self) -> &[LoadError] {
        &self.errors
    }

    /// The case at `index` of [`Suite::entries`]. From an entry, its record is read and
    /// checked; a record that fails the check is loaded again from its case file.
    pub fn case(&self, index: usize) -> Result<Arc<Case>, String> {
        let entry = self
            .entries
            .get(index)
            .ok_or_else(|| format!("no case {index} in the suite"))?;
        match &self.store {
            Store::Memory(cases) => Ok(Arc::clone(&cases[index])),
            Store::Entry { file, records } => {
                let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
                match read_record(&mut file, *records, entry) {
                    Ok(case) => Ok(Arc::new(case)),
                    Err(_) => reload_case(entry).map(Arc::new),
                }
            }
        }
    }

    /// Reads a cache entry, checking its header and index; `Err` for anything not current.
    fn open_entry(path: &Path, digest: &[u8; 32]) -> io::Result<Suite> {
        let mut file = File::open(path)?;
        let size = file.metadata()?.len();
        let mut header = [0u8; HEADER_BYTES as usize];
        file.read_exact(&mut header)?;
        let corrupt = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        if &header[..16] != MAGIC
            || header[16..20] != CACHE_FORMAT.to_le_bytes()
            || header[20..52] != digest[..]
        {
            return Err(corrupt("not an entry for this suite"));
        }
        let index_len = u64::from_le_bytes(header[52..60].try_into().expect("8 bytes"));
        if index_len > MAX_INDEX_BYTES || HEADER_BYTES + index_len > size {
            return Err(corrupt("index length out of bounds"));
        }
        let mut index = vec![0u8; index_len as usize];
        file.read_exact(&mut index)?;
        if Sha256::digest(&index)[..] != header[60..92] {
            return Err(corrupt("index checksum mismatch"));
        }
        let index: Index = serde_json::from_slice(&index).map_err(io::Error::other)?;
        let records = HEADER_BYTES + index_len;
        let records_len = size - records;
        if index.entries.iter().any(|e| {
            e.offset
                .checked_add(e.length)
                .is_none_or(|end| end > records_len)
        }) {
            return Err(corrupt("record out of bounds"));
        }
        Ok(Suite {
            entries: index.entries,
            errors: index.errors.into_iter().map(LoadError::from).collect(),
            store: Store::Entry {
                file: Mutex::new(file),
                records,
            },
        })
    }

    /// Writes this (in-memory) suite as the entry `path`, atomically, and prunes old entries.
    fn write_entry(&self, dir: &Path, path: &Path, digest: &[u8; 32]) -> io::Result<()> {
        let Store::Memory(cases) = &self.store else {
            return Ok(());
        };
        std::fs::create_dir_all(dir)?;
        let mut records = Vec::new();
        let mut entries = self.entries.clone();
        for (entry, case) in entries.iter_mut().zip(cases) {
            let record = encode_record(case)?;
            entry.offset = records.len() as u64;
            entry.length = record.len() as u64;
            entry.sha256 = hex(&Sha256::digest(&record).into());
            records.extend_from_slice(&record);
        }
        let index = Index {
            entries,
            errors: self.errors.iter().map(IndexError::from).collect(),
        };
        let index = serde_json::to_vec(&index).map_err(io::Error::other)?;
        let mut temp = tempfile::Builder::new()
            .prefix(".entry-")
            .suffix(".tmp")
            .tempfile_in(dir)?;
        {
            let out = temp.as_file_mut();
            let mut writer = io::BufWriter::new(out);
            writer.write_all(MAGIC)?;
            writer.write_all(&CACHE_FORMAT.to_le_bytes())?;
            writer.write_all(digest)?;
            writer.write_all(&(index.len() as u64).to_le_bytes())?;
            writer.write_all(&Sha256::digest(&index))?;
            writer.write_all(&index)?;
            writer.write_all(&records)?;
            writer.flush()?;
        }
        temp.persist(path).map_err(|e| e.error)?;
        prune(dir, path);
        Ok(())
    }
}

/// The folder among `roots` that `file` was found under (the longest that is a prefix).
fn root_of(roots: &[PathBuf], file: &Path) -> PathBuf {
    roots
        .iter()
        .filter(|root| file.starts_with(root))
        .max_by_key(|root| root.components().count())
        .map(|root| {
            if root.as_path() == file {
                file.parent().unwrap_or(Path::new("")).to_path_buf()
            } else {
                root.clone()
            }
        })
        .unwrap_or_else(|| file.parent().unwrap_or(Path::new("")).to_path_buf())
}

/// Loads `entry`'s case from its file (when its cached record cannot be used).
fn reload_case(entry: &SuiteEntry) -> Result<Case, String> {
    let (cases, errors) = load_file(&entry.root, &entry.file);
    cases
        .into_iter()
        .find(|case| case.id == entry.id)
        .ok_or_else(|| match errors.first() {
            Some(error) => error.to_string(),
            None => format!("{}: case `{}` not found", entry.file.display(), entry.id),
        })
}

/// Removes entries other than `keep` beyond the [`KEEP_ENTRIES`] newest, and temporary files
/// older than an hour (left by a killed writer). Errors are ignored: pruning is best effort.
fn prune(dir: &Path, keep: &Path) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries = Vec::new();
    for item in read.flatten() {
        let path = item.path();
        let Ok(modified) = item.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        let name = item.file_name().to_string_lossy().into_owned();
        if name.starts_with(".entry-") {
            let old = modified.elapsed().is_ok_and(|age| age.as_secs() > 3600);
            if old {
                let _ = std::fs::remove_file(&path);
            }
        } else if name.ends_with(".bin") && path != keep {
            entries.push((modified, path));
        }
    }
    entries.sort();
    let excess = (entries.len() + 1).saturating_sub(KEEP_ENTRIES);
    for (_, path) in entries.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

/// The index of an entry.
#[derive(Serialize, Deserialize)]
struct Index {
    entries: Vec<SuiteEntry>,
    errors: Vec<IndexError>,
}

/// A [`LoadError`] as stored in the index.
#[derive(Serialize, Deserialize)]
struct IndexError {
    file: PathBuf,
    line: usize,
    column: usize,
    field: String,
    message: String,
    case_id: Option<String>,
}

impl From<&LoadError> for IndexError {
    fn from(e: &LoadError) -> IndexError {
        IndexError {
            file: e.file.clone(),
            line: e.line,
            column: e.column,
            field: e.field.clone(),
            message: e.message.clone(),
            case_id: e.case_id.clone(),
        }
    }
}

impl From<IndexError> for LoadError {
    fn from(e: IndexError) -> LoadError {
        LoadError {
            file: e.file,
            line: e.line,
            column: e.column,
            field: e.field,
            message: e.message,
            case_id: e.case_id,
        }
    }
}

/// A case's metadata in its record; the buffers follow it in the order listed.
#[derive(Serialize, Deserialize)]
struct RecordMeta {
    id: String,
    file: PathBuf,
    line: usize,
    operator: OperatorDesc,
    level: Level,
    class: CaseClass,
    tags: Vec<String>,
    exercises: Vec<String>,
    source: Source,
    compare: Compare,
    /// Input descriptions; each input's buffer is `total_tensor_size_in_bytes` long.
    inputs: Vec<TensorDesc>,
    expectation: RecordExpectation,
}

#[derive(Serialize, Deserialize)]
enum RecordExpectation {
    /// Per output: name, description, the length of its expected bytes, and whether a
    /// defined-mask buffer (one byte per element) follows them.
    Outputs(Vec<(String, TensorDesc, u64, Option<u64>)>),
    Invalid(Vec<String>),
}

fn encode_record(case: &Case) -> io::Result<Vec<u8>> {
    let mut buffers: Vec<&[u8]> = case.inputs.iter().map(|t| t.data.as_slice()).collect();
    let mut masks = Vec::new();
    let expectation = match &case.expectation {
        Expectation::Invalid(rules) => RecordExpectation::Invalid(rules.clone()),
        Expectation::Outputs(outputs) => {
            for output in outputs {
                masks.push(
                    output
                        .defined
                        .as_ref()
                        .map(|d| d.iter().map(|&b| u8::from(b)).collect::<Vec<u8>>()),
                );
            }
            RecordExpectation::Outputs(
                outputs
                    .iter()
                    .zip(&masks)
                    .map(|(o, mask)| {
                        let mask_len = mask.as_ref().map(|m| m.len() as u64);
                        (
                            o.name.clone(),
                            o.desc.clone(),
                            o.bytes.len() as u64,
                            mask_len,
                        )
                    })
                    .collect(),
            )
        }
    };
    if let Expectation::Outputs(outputs) = &case.expectation {
        for (output, mask) in outputs.iter().zip(&masks) {
            buffers.push(&output.bytes);
            if let Some(mask) = mask {
                buffers.push(mask);
            }
        }
    }
    let meta = RecordMeta {
        id: case.id.clone(),
        file: case.file.clone(),
        line: case.line,
        operator: case.operator.clone(),
        level: case.level,
        class: case.class,
        tags: case.tags.clone(),
        exercises: case.exercises.clone(),
        source: case.source.clone(),
        compare: case.compare,
        inputs: case.inputs.iter().map(|t| t.desc.clone()).collect(),
        expectation,
    };
    let meta = serde_json::to_vec(&meta).map_err(io::Error::other)?;
    let mut record = Vec::with_capacity(8 + meta.len());
    record.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    record.extend_from_slice(&meta);
    for buffer in buffers {
        record.extend_from_slice(buffer);
    }
    Ok(record)
}

/// Reads and checks `entry`'s record (bounds were checked when the index was read).
fn read_record(file: &mut File, records: u64, entry: &SuiteEntry) -> io::Result<Case> {
    use std::io::Seek;
    file.seek(io::SeekFrom::Start(records + entry.offset))?;
    let mut record = Vec::new();
    record
        .try_reserve_exact(entry.length as usize)
        .map_err(io::Error::other)?;
    file.take(entry.length).read_to_end(&mut record)?;
    if hex(&Sha256::digest(&record).into()) != entry.sha256 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "record checksum mismatch",
        ));
    }
    decode_record(&record)
}

fn decode_record(record: &[u8]) -> io::Result<Case> {
    let corrupt = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let mut rest = record;
    let meta_len = take(&mut rest, 8).ok_or_else(|| corrupt("short record"))?;
    let meta_len = u64::from_le_bytes(meta_len.try_into().expect("8 bytes"));
    let meta = take_u64(&mut rest, meta_len).ok_or_else(|| corrupt("short metadata"))?;
    let meta: RecordMeta = serde_json::from_slice(meta).map_err(io::Error::other)?;
    let mut inputs = Vec::with_capacity(meta.inputs.len());
    for desc in meta.inputs {
        let data = take_u64(&mut rest, desc.total_tensor_size_in_bytes)
            .ok_or_else(|| corrupt("short input buffer"))?;
        inputs.push(Tensor::from_bytes(desc, data.to_vec()).map_err(io::Error::other)?);
    }
    let expectation = match meta.expectation {
        RecordExpectation::Invalid(rules) => Expectation::Invalid(rules),
        RecordExpectation::Outputs(outputs) => {
            let mut expected = Vec::with_capacity(outputs.len());
            for (name, desc, bytes_len, mask_len) in outputs {
                let bytes = take_u64(&mut rest, bytes_len)
                    .ok_or_else(|| corrupt("short output"))?
                    .to_vec();
                let defined = match mask_len {
                    None => None,
                    Some(len) => Some(
                        take_u64(&mut rest, len)
                            .ok_or_else(|| corrupt("short mask"))?
                            .iter()
                            .map(|&b| b != 0)
                            .collect(),
                    ),
                };
                expected.push(ExpectedTensor {
                    name,
                    desc,
                    bytes,
                    defined,
                });
            }
            Expectation::Outputs(expected)
        }
    };
    if !rest.is_empty() {
        return Err(corrupt("trailing bytes in a record"));
    }
    Ok(Case {
        id: meta.id,
        file: meta.file,
        line: meta.line,
        operator: meta.operator,
        level: meta.level,
        class: meta.class,
        tags: meta.tags,
        exercises: meta.exercises,
        source: meta.source,
        inputs,
        expectation,
        compare: meta.compare,
    })
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if rest.len() < n {
        return None;
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Some(head)
}

fn take_u64<'a>(rest: &mut &'a [u8], n: u64) -> Option<&'a [u8]> {
    take(rest, usize::try_from(n).ok()?)
}

/// The digest naming the suite under `roots` for this harness: every case file's path and
/// bytes (the `.yaml`/`.yml` files [`load_paths`] reads, links to folders by name), the spec
/// files, [`CACHE_FORMAT`], the crate and case format versions, and the running executable's
/// path, size and modification time.
pub fn suite_digest(roots: &[PathBuf]) -> io::Result<[u8; 32]> {
    let mut hasher = Sha256::new();
    let field = |hasher: &mut Sha256, bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(&mut hasher, b"opconform suite cache");
    field(&mut hasher, &CACHE_FORMAT.to_le_bytes());
    field(&mut hasher, env!("CARGO_PKG_VERSION").as_bytes());
    field(&mut hasher, &CASE_FORMAT_VERSION.to_le_bytes());
    field(&mut hasher, build_identity().as_bytes());
    for (name, text) in spec::SPEC_SOURCES {
        field(&mut hasher, name.as_bytes());
        field(&mut hasher, text.as_bytes());
    }
    for root in roots {
        field(&mut hasher, b"root");
        field(&mut hasher, root.as_os_str().as_encoded_bytes());
        digest_path(&mut hasher, root)?;
    }
    Ok(hasher.finalize().into())
}

/// The running executable's path, size and modification time: a rebuilt harness (whose
/// loader may differ) gets a new digest.
fn build_identity() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let meta = std::fs::metadata(&exe).ok();
    let size = meta.as_ref().map_or(0, |m| m.len());
    let modified = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{} {size} {modified}", exe.display())
}

/// Hashes `path` as the loader walks it: a file's bytes, a folder's `.yaml`/`.yml` files and
/// subfolders in sorted order, a link to a folder by its name only.
fn digest_path(hasher: &mut Sha256, path: &Path) -> io::Result<()> {
    let name = path.as_os_str().as_encoded_bytes();
    hasher.update((name.len() as u64).to_le_bytes());
    hasher.update(name);
    if path.is_file() {
        hasher.update(b"F");
        let mut file = File::open(path)?;
        let mut writer = HashWriter(hasher, 0);
        io::copy(&mut file, &mut writer)?;
        let length = writer.1;
        hasher.update(length.to_le_bytes());
        return Ok(());
    }
    let read = match std::fs::read_dir(path) {
        Ok(read) => read,
        Err(e) => {
            // The loader reports it as a load error; the digest records that it failed.
            hasher.update(b"E");
            hasher.update(e.kind().to_string().as_bytes());
            return Ok(());
        }
    };
    hasher.update(b"D");
    for entry in folder_entries(read) {
        match entry {
            FolderEntry::LinkedFolder(child) => {
                hasher.update(b"L");
                let name = child.as_os_str().as_encoded_bytes();
                hasher.update((name.len() as u64).to_le_bytes());
                hasher.update(name);
            }
            FolderEntry::Walk(child) => digest_path(hasher, &child)?,
        }
    }
    Ok(())
}

/// Feeds written bytes to a hasher, counting them.
struct HashWriter<'h>(&'h mut Sha256, u64);

impl Write for HashWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        self.1 += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Cargo's target directory for the running test binary: `CARGO_TARGET_DIR` when set,
/// otherwise the nearest folder above the executable holding Cargo's `CACHEDIR.TAG`
/// (`target/debug/deps/<binary>` → `target`). `None` when neither is found.
pub fn target_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return Some(match std::env::current_dir() {
            Ok(cwd) if dir.is_relative() => cwd.join(dir),
            _ => dir,
        });
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

/// The cache folder: `<target>/opconform-suite-cache`, or `None` without a target directory.
pub fn default_cache_dir() -> Option<PathBuf> {
    target_dir().map(|dir| dir.join(CACHE_FOLDER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const CASE: &str = r#"format: 1
cases:
  - id: example_1
    operator: DML_ARGMAX
    level: "3_0"
    source: {hand_written: "suite cache test"}
    attributes: {Axes: [0], AxisDirection: DML_AXIS_DIRECTION_INCREASING}
    inputs:
      InputTensor: {type: FLOAT32, sizes: [2, 2], data: [1, 2, 3, 0]}
    outputs:
      OutputTensor: {type: UINT32, sizes: [1, 2], data: [1, 0]}
"#;

    fn debug_cases(suite: &Suite) -> Vec<String> {
        (0..suite.entries().len())
            .map(|i| format!("{:?}", suite.case(i).unwrap()))
            .collect()
    }

    /// The documented cases of the repository: a real suite with every operator.
    fn documented_root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases/documented")
    }

    #[test]
    fn an_entry_gives_back_exactly_the_loaded_cases() {
        let cache = tempfile::tempdir().unwrap();
        let roots = vec![documented_root()];
        let (first, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Written(_)), "{used:?}");
        let (second, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Hit(_)), "{used:?}");
        assert!(matches!(second.store, Store::Entry { .. }));
        assert!(!first.entries().is_empty());
        assert_eq!(first.entries().len(), second.entries().len());
        assert_eq!(debug_cases(&first), debug_cases(&second));
        let (direct, _) = Suite::load(&roots, None);
        assert_eq!(debug_cases(&direct), debug_cases(&second));
    }

    #[test]
    fn a_changed_case_file_is_loaded_again() {
        let cases = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let file = cases.path().join("argmax.yaml");
        write(&file, CASE);
        let roots = vec![cases.path().to_path_buf()];
        let (_, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Written(_)), "{used:?}");
        write(&file, &CASE.replace("data: [1, 0]", "data: [1, 2]"));
        let (suite, used) = Suite::load(&roots, Some(cache.path()));
        assert!(
            matches!(used, CacheUse::Written(_)),
            "stale entry used: {used:?}"
        );
        // The new expectation is what the suite holds (the oracle would flag 2 as wrong, but
        // the loader only checks shapes), and the load error list is empty.
        let case = suite.case(0).unwrap();
        let Expectation::Outputs(outputs) = &case.expectation else {
            panic!("positive case")
        };
        assert_eq!(outputs[0].bytes, [1, 0, 0, 0, 2, 0, 0, 0]);
        // A new file is a new suite too.
        write(&cases.path().join("sub/more.yaml"), CASE);
        let (suite, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Written(_)), "{used:?}");
        assert_eq!(suite.entries().len(), 2);
    }

    #[test]
    fn load_errors_are_kept_in_the_entry() {
        let cases = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        write(
            &cases.path().join("bad.yaml"),
            "format: 1\ncases: [ {id: x} ]\n",
        );
        let roots = vec![cases.path().to_path_buf()];
        let (first, _) = Suite::load(&roots, Some(cache.path()));
        let (second, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Hit(_)), "{used:?}");
        assert!(!first.errors().is_empty());
        assert_eq!(first.errors(), second.errors());
    }

    #[test]
    fn a_corrupt_entry_is_ignored_and_rewritten() {
        let cache = tempfile::tempdir().unwrap();
        let roots = vec![documented_root()];
        let (reference, used) = Suite::load(&roots, Some(cache.path()));
        let CacheUse::Written(path) = used else {
            panic!("{used:?}")
        };
        let good = std::fs::read(&path).unwrap();
        // A flipped byte in the index, a truncated file, an empty file.
        let mut flipped = good.clone();
        flipped[HEADER_BYTES as usize + 10] ^= 0x55;
        let damaged = [flipped, good[..good.len() / 2].to_vec(), Vec::new()];
        for bytes in damaged {
            std::fs::write(&path, &bytes).unwrap();
            let (suite, used) = Suite::load(&roots, Some(cache.path()));
            assert!(matches!(used, CacheUse::Written(_)), "{used:?}");
            assert_eq!(debug_cases(&suite), debug_cases(&reference));
            assert_eq!(
                std::fs::read(&path).unwrap(),
                good,
                "the entry is rewritten"
            );
        }
    }

    #[test]
    fn a_corrupt_record_is_loaded_from_its_case_file() {
        let cache = tempfile::tempdir().unwrap();
        let roots = vec![documented_root()];
        let (reference, used) = Suite::load(&roots, Some(cache.path()));
        let CacheUse::Written(path) = used else {
            panic!("{used:?}")
        };
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff; // the last buffer of the last record
        std::fs::write(&path, &bytes).unwrap();
        let (suite, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Hit(_)), "{used:?}");
        assert_eq!(debug_cases(&suite), debug_cases(&reference));
    }

    #[test]
    fn racing_writers_leave_one_complete_entry() {
        let cache = tempfile::tempdir().unwrap();
        let roots = vec![documented_root()];
        let reference = debug_cases(&Suite::load(&roots, None).0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    let (suite, _) = Suite::load(&roots, Some(cache.path()));
                    assert_eq!(debug_cases(&suite), reference);
                });
            }
        });
        let (suite, used) = Suite::load(&roots, Some(cache.path()));
        assert!(matches!(used, CacheUse::Hit(_)), "{used:?}");
        assert_eq!(debug_cases(&suite), reference);
        let names: Vec<_> = std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
    }

    #[test]
    fn the_target_dir_is_found_above_the_test_binary() {
        // `cargo test` runs this from target/<profile>/deps; the folder holds CACHEDIR.TAG.
        let dir = target_dir().expect("a target directory");
        assert!(
            dir.join("CACHEDIR.TAG").is_file() || std::env::var_os("CARGO_TARGET_DIR").is_some()
        );
        let exe = std::env::current_exe().unwrap();
        assert!(exe.starts_with(&dir) || std::env::var_os("CARGO_TARGET_DIR").is_some());
    }
}
