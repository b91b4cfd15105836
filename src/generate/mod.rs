//! Case generator (being written): `opconform generate` writes `cases/generated/`.
