//! Cases: the YAML case file format ([`format`]), element literals ([`element`]), and loading
//! files into validated, ready-to-run [`Case`]s ([`load`]).

pub mod data_generator;
pub mod element;
pub mod format;
pub mod load;
mod locate;

pub use format::{CaseClass, CaseFile, CaseSpec, Source, CASE_FORMAT_VERSION};
pub use load::{load_paths, Case, Expectation, ExpectedTensor, LoadError, LoadedCases};
