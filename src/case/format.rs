//! The case file format, version 1 (`docs/case-format.md`): the serde types a case file is
//! read into, from which the JSON Schema (`cases/case.schema.json`) is generated.

use super::data_generator::DataGenerator;
use super::element::Element;
use opconform_backend::{AxisDirection, DataType, Level, OperatorKind};
use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// The version of the case file format this build reads.
pub const CASE_FORMAT_VERSION: u32 = 1;

/// A case file: a format version and a list of cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "opconform case file")]
pub struct CaseFile {
    /// Case file format version; this build reads version 1.
    pub format: u32,
    /// The cases.
    pub cases: Vec<CaseSpec>,
}

/// One case: an operator descriptor with inputs, and either expected outputs or the rule ids
/// the validator must report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// Identifier, unique within its group (lower case, digits and `_`), e.g. `example_1`.
    pub id: String,
    /// The operator: `DML_ONE_HOT`, `DML_NONZERO_COORDINATES`, `DML_ARGMAX` or `OneHot-1`.
    #[schemars(with = "String")]
    pub operator: OperatorKind,
    /// For a positive case, the lowest level at which a backend must pass it (the validator
    /// checks it is exactly the lowest level at which the descriptor is valid). For a negative
    /// case, the level at which the descriptor is invalid. `2_0` … `6_4`, or `opset1` ….
    #[schemars(with = "String")]
    pub level: Level,
    /// `required`, or `informational` where the spec is silent or undefined.
    #[serde(default)]
    pub class: CaseClass,
    /// Free tags, e.g. `negative-index`, `strided`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Behaviour rule ids (from `specs/`) this case exercises.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exercises: Vec<String>,
    /// Where the case comes from.
    pub source: Source,
    /// Operator attributes (`Axis`; `Axes`, `AxisDirection`; `axis`).
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub attributes: Attributes,
    /// Input tensors by name, in any order.
    pub inputs: NamedTensors<InputTensorSpec>,
    /// Output tensors by name; expected data for positive cases, descriptions only for
    /// negative ones.
    pub outputs: NamedTensors<OutputTensorSpec>,
    /// For a negative case: every rule id the validator must report (and no others).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect_invalid: Vec<String>,
    /// How outputs are compared: `value` (default) or `bits`.
    #[serde(default, skip_serializing_if = "Compare::is_value")]
    pub compare: Compare,
}

/// How a backend's outputs are compared with the expected elements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Compare {
    /// Integers by value; floats by bits, except that any NaN matches any NaN.
    #[default]
    Value,
    /// Every element bit for bit, NaN payloads and signs included.
    Bits,
}

impl Compare {
    /// True for the default, `value`.
    pub fn is_value(&self) -> bool {
        *self == Compare::Value
    }
}

/// Whether a case counts towards certification.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaseClass {
    /// A backend must pass it at its level.
    #[default]
    Required,
    /// The spec is silent: results are counted apart and do not affect certification.
    Informational,
}

/// Where a case comes from: a document's example, or a generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Document file name under `shared/seeds/`, e.g. `004_2f0448eeeaeae8b3.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    /// The example in that document, e.g. `1` or `AxisDirection INCREASING`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// The generator that wrote the case, e.g. `opconform generate (one_hot::indices)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Who wrote a hand-written case and why, when neither of the above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand_written: Option<String>,
}

/// Operator attributes; which ones are allowed depends on the operator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attributes {
    /// `DML_ONE_HOT`: `Axis`.
    #[serde(rename = "Axis", default, skip_serializing_if = "Option::is_none")]
    pub dml_axis: Option<u32>,
    /// `DML_ARGMAX`: `Axes` (its length is `AxisCount`).
    #[serde(rename = "Axes", default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<Vec<u32>>,
    /// `DML_ARGMAX`: `AxisDirection`.
    #[serde(
        rename = "AxisDirection",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub axis_direction: Option<AxisDirection>,
    /// `OneHot-1`: `axis` (negative counts from the end of the output shape).
    #[serde(rename = "axis", default, skip_serializing_if = "Option::is_none")]
    pub ov_axis: Option<i64>,
}

impl Attributes {
    /// True when no attribute is set.
    pub fn is_empty(&self) -> bool {
        *self == Attributes::default()
    }
}

/// An input tensor: description and buffer contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputTensorSpec {
    /// Data type, e.g. `FLOAT32`.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub data_type: DataType,
    /// Sizes, outermost first (`[]` for an OpenVINO scalar).
    pub sizes: Vec<u32>,
    /// Strides in elements; absent means packed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strides: Option<Vec<u32>>,
    /// `TotalTensorSizeInBytes`; absent means the minimum for the sizes and strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_size_in_bytes: Option<u64>,
    /// Elements in row-major order; with strides, the buffer's elements from offset 0 to the
    /// last element's offset. May be omitted in negative cases (the buffer is then zeros).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<Element>>,
    /// Instead of `data`: a seeded generator filling the same elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<DataGenerator>,
}

/// An output tensor: description and, for positive cases, the expected elements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputTensorSpec {
    /// Data type.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub data_type: DataType,
    /// Sizes, outermost first.
    pub sizes: Vec<u32>,
    /// Strides in elements; absent means packed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strides: Option<Vec<u32>>,
    /// `TotalTensorSizeInBytes`; absent means the minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_size_in_bytes: Option<u64>,
    /// Expected elements in row-major (logical) order, `null` where the spec leaves an
    /// element undefined. Absent for negative cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<Element>>,
    /// When given, `data` may be shorter than the element count: the remaining elements all
    /// expect this value (typically `null` for NonZeroCoordinates rows past the count).
    #[serde(
        default,
        deserialize_with = "deserialize_fill",
        skip_serializing_if = "Option::is_none"
    )]
    pub fill: Option<FillElement>,
}

/// The value of `fill`: an element, where `null` must be told apart from an absent `fill`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct FillElement(pub Element);

/// Tensors keyed by name, keeping file order and refusing duplicate names.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTensors<T>(pub Vec<(String, T)>);

impl<T> NamedTensors<T> {
    /// The tensor called `name`.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    /// The names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NamedTensors<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NamedVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for NamedVisitor<T> {
            type Value = NamedTensors<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from tensor name to tensor")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, T)> = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    if entries.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate tensor `{name}`"
                        )));
                    }
                    entries.push((name, map.next_value()?));
                }
                Ok(NamedTensors(entries))
            }
        }
        deserializer.deserialize_map(NamedVisitor(PhantomData))
    }
}

impl<T: Serialize> Serialize for NamedTensors<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, tensor) in &self.0 {
            map.serialize_entry(name, tensor)?;
        }
        map.end()
    }
}

impl<T: JsonSchema> JsonSchema for NamedTensors<T> {
    fn schema_name() -> String {
        format!("NamedTensors_{}", T::schema_name())
    }

    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        <std::collections::BTreeMap<String, T>>::json_schema(gen)
    }
}

/// Reads a present `fill` key as `Some`, even when its value is `null`.
fn deserialize_fill<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<FillElement>, D::Error> {
    Element::deserialize(deserializer).map(|e| Some(FillElement(e)))
}
