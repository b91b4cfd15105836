//! opconform: conformance harness and validator for ML tensor operators.
//!
//! A case flows from YAML to report through [`case`] (load and check), [`selection`] (which
//! cases run), [`runner`] (execute on a [`opconform_backend::Backend`] and compare) and
//! [`report`] (results, JUnit, compliance matrices). [`bundled`] opens the bundled backends,
//! [`protocol`] runs out-of-process ones, and [`cli`] is the command line.

pub mod bundled;
pub mod case;
pub mod certify;
pub mod cli;
pub mod coverage;
pub mod explore;
pub mod generate;
pub mod interrupt;
pub mod protocol;
pub mod readings;
pub mod report;
pub mod runner;
pub mod selection;
