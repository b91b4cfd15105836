//! `opconform-bench`: benchmarks of opconform's bundled backends (`tools/bench.sh`,
//! `docs/performance.md`).
//!
//! The library is built as a C shared library too: [`ffi`] is what `tools/bench_peers.py`
//! loads to time the CPU backend ([`case`]) in the same process as numpy and ONNX Runtime,
//! with the bandwidth floor measured alongside ([`bandwidth`]). The `opconform-bench` binary
//! times the Vulkan backend against the CPU backend, and has a quick `dev` mode for kernel
//! work.

pub mod bandwidth;
pub mod case;
pub mod data;
pub mod ffi;
pub mod ops;
pub mod timing;
