//! The backend API of opconform.
//!
//! A third-party Rust backend depends on this crate alone. It holds:
//! - [`DataType`], [`TensorDesc`] and [`Tensor`]: the eleven DirectML data types and buffer
//!   tensors mirroring `DML_BUFFER_TENSOR_DESC`, with little-endian bytes;
//! - [`Level`] and [`FeatureLevel`]: DirectML feature levels and OpenVINO opsets;
//! - [`OperatorDesc`]: the operator descriptors (DirectML structs and OpenVINO OneHot-1);
//! - [`Backend`] and [`BackendError`]: the object-safe trait a backend implements;
//! - [`spec`] and [`validate`]: the machine-readable specs from `specs/` and the validator that
//!   enforces their descriptor rules, so a backend can reject an invalid descriptor by rule id.
//!
//! The contract is versioned by [`API_VERSION`]; see `docs/backend-api.md`.

mod backend;
mod data_type;
mod level;
mod operator;
pub mod spec;
mod tensor;
pub mod validate;

pub use backend::{Backend, BackendError, BackendInfo};
pub use data_type::DataType;
pub use level::{FeatureLevel, Level, LevelParseError, SpecFamily};
pub use operator::{
    ArgMaxDesc, AxisDirection, NonZeroCoordinatesDesc, OneHotDesc, OperatorDesc, OperatorKind,
    OvOneHotDesc,
};
pub use tensor::{min_buffer_size_bytes, Tensor, TensorDesc, TensorError};
pub use validate::{lowest_valid_level, validate, Violation};

/// Version of the backend API contract (`docs/backend-api.md`). Bumped on any breaking change.
pub const API_VERSION: &str = "1.0";
