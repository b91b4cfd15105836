//! CPU backend (placeholder until implemented).
