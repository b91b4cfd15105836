//! JSON Schemas of the certificate's fields whose Rust types are not plain serde types
//! (`BackendInfo`, `Level`, `Outcome` come from other modules), for
//! `docs/certificate.schema.json` (`opconform schema --certificate`).

use crate::case::format::schema_of;
use crate::runner::Outcome;
use opconform_backend::OperatorKind;
use schemars::{json_schema, Schema, SchemaGenerator};

/// An outcome name (`pass`, `fail`, …).
pub fn outcome(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
    json_schema!({"type": "string", "enum": names})
}

/// A map from outcome name to a count.
pub fn outcome_counts(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
    json_schema!({
        "type": "object",
        "propertyNames": {"enum": names},
        "additionalProperties": {"type": "integer", "minimum": 0}
    })
}

/// An optional outcome.
pub fn optional_outcome(generator: &mut SchemaGenerator) -> Schema {
    outcome(generator)
}

/// A level, as a case file writes it.
pub fn optional_level(generator: &mut SchemaGenerator) -> Schema {
    let level = schema_of::level(generator);
    json_schema!({"anyOf": [level, {"type": "null"}]})
}

/// A list of levels.
pub fn levels(generator: &mut SchemaGenerator) -> Schema {
    let level = schema_of::level(generator);
    json_schema!({"type": "array", "items": level})
}

/// A SHA-256 in lower-case hex.
pub fn sha256(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "pattern": "^[0-9a-f]{64}$"})
}

/// The pattern of a full case id (`<operator slug>::<group>::…::<id>`), as in
/// `docs/results.schema.json`.
pub const FULL_CASE_ID_PATTERN: &str = "^[a-z0-9_]+(::[A-Za-z0-9_.-]+)+$";

/// A list of full case ids.
pub fn case_ids(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "array", "items": {"type": "string", "pattern": FULL_CASE_ID_PATTERN}})
}

/// The backend's self-description (`BackendInfo`).
pub fn backend_info(generator: &mut SchemaGenerator) -> Schema {
    let levels = levels(generator);
    let operators: Vec<&str> = OperatorKind::ALL.iter().map(|o| o.name()).collect();
    json_schema!({
        "type": "object",
        "description": "The backend's self-description.",
        "required": ["name", "version", "device", "claims", "operators"],
        "properties": {
            "name": {"type": "string"},
            "version": {"type": "string"},
            "device": {"type": "string"},
            "claims": levels,
            "operators": {"type": "array", "items": {"type": "string", "enum": operators}}
        },
        "additionalProperties": false
    })
}
