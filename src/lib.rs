//! opconform harness.
