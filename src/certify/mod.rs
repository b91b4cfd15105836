//! Certification of a backend (being written).
