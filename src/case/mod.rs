//! Cases: the YAML case file format ([`format`]), element literals ([`element`]), and loading
//! files into validated, ready-to-run [`Case`]s ([`load`]) through a located YAML tree
//! ([`yaml`]), within the [`caps`].

pub mod caps;
pub mod data_generator;
pub mod element;
pub mod float16;
pub mod format;
pub mod load;
pub mod yaml;

pub use format::{CaseClass, CaseFile, CaseSpec, Compare, Source, CASE_FORMAT_VERSION};
pub use load::{load_paths, Case, Expectation, ExpectedTensor, LoadError, LoadedCases};
