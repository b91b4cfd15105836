//! Operator descriptors, mirroring the DirectML `DML_*_OPERATOR_DESC` structs and OpenVINO
//! OneHot-1.

use crate::{Level, SpecFamily, TensorDesc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which operator a descriptor is for; named as in the specs (`DML_ONE_HOT`, `OneHot-1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OperatorKind {
    /// `DML_OPERATOR_ONE_HOT`.
    #[serde(rename = "DML_ONE_HOT")]
    DmlOneHot,
    /// `DML_OPERATOR_NONZERO_COORDINATES`.
    #[serde(rename = "DML_NONZERO_COORDINATES")]
    DmlNonZeroCoordinates,
    /// `DML_OPERATOR_ARGMAX`.
    #[serde(rename = "DML_ARGMAX")]
    DmlArgMax,
    /// OpenVINO `OneHot-1`.
    #[serde(rename = "OneHot-1")]
    OvOneHot1,
}

impl OperatorKind {
    /// Every operator opconform certifies.
    pub const ALL: [OperatorKind; 4] = [
        OperatorKind::DmlOneHot,
        OperatorKind::DmlNonZeroCoordinates,
        OperatorKind::DmlArgMax,
        OperatorKind::OvOneHot1,
    ];

    /// The spec name, e.g. `DML_ARGMAX`.
    pub fn name(self) -> &'static str {
        match self {
            OperatorKind::DmlOneHot => "DML_ONE_HOT",
            OperatorKind::DmlNonZeroCoordinates => "DML_NONZERO_COORDINATES",
            OperatorKind::DmlArgMax => "DML_ARGMAX",
            OperatorKind::OvOneHot1 => "OneHot-1",
        }
    }

    /// A lower-case identifier for file and trial names, e.g. `dml_argmax`, `ov_one_hot_1`.
    pub fn slug(self) -> &'static str {
        match self {
            OperatorKind::DmlOneHot => "dml_one_hot",
            OperatorKind::DmlNonZeroCoordinates => "dml_nonzero_coordinates",
            OperatorKind::DmlArgMax => "dml_argmax",
            OperatorKind::OvOneHot1 => "ov_one_hot_1",
        }
    }

    /// Parses a spec name or a slug.
    pub fn from_name(name: &str) -> Option<OperatorKind> {
        OperatorKind::ALL
            .into_iter()
            .find(|k| k.name() == name || k.slug() == name)
    }

    /// The family whose levels version this operator.
    pub fn family(self) -> SpecFamily {
        match self {
            OperatorKind::OvOneHot1 => SpecFamily::Openvino,
            _ => SpecFamily::Directml,
        }
    }

    /// The level at which the operator was introduced.
    pub fn introduced(self) -> Level {
        match self {
            OperatorKind::DmlOneHot => Level::dml(0x2000),
            OperatorKind::DmlNonZeroCoordinates | OperatorKind::DmlArgMax => Level::dml(0x3000),
            OperatorKind::OvOneHot1 => Level::Opset(1),
        }
    }

    /// Tensor names in descriptor order: inputs first, then outputs.
    pub fn tensor_names(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            OperatorKind::DmlOneHot => (&["IndicesTensor", "ValuesTensor"], &["OutputTensor"]),
            OperatorKind::DmlNonZeroCoordinates => (
                &["InputTensor"],
                &["OutputCountTensor", "OutputCoordinatesTensor"],
            ),
            OperatorKind::DmlArgMax => (&["InputTensor"], &["OutputTensor"]),
            OperatorKind::OvOneHot1 => {
                (&["indices", "depth", "on_value", "off_value"], &["output"])
            }
        }
    }
}

impl fmt::Display for OperatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `DML_AXIS_DIRECTION`: which of several equal maxima ArgMax reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AxisDirection {
    /// `DML_AXIS_DIRECTION_INCREASING` (0): the first maximum.
    #[serde(rename = "DML_AXIS_DIRECTION_INCREASING")]
    Increasing,
    /// `DML_AXIS_DIRECTION_DECREASING` (1): the last maximum.
    #[serde(rename = "DML_AXIS_DIRECTION_DECREASING")]
    Decreasing,
}

/// `DML_ONE_HOT_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OneHotDesc {
    /// `IndicesTensor`: the OnValue position of each sequence.
    pub indices: TensorDesc,
    /// `ValuesTensor`: OffValue at element 0, OnValue at the 1st element along the
    /// fastest-changing dimension of size > 1.
    pub values: TensorDesc,
    /// `OutputTensor`.
    pub output: TensorDesc,
    /// `Axis`: the dimension along which sequences run.
    pub axis: u32,
}

/// `DML_NONZERO_COORDINATES_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NonZeroCoordinatesDesc {
    /// `InputTensor`.
    pub input: TensorDesc,
    /// `OutputCountTensor`: a UINT32 scalar (all sizes 1).
    pub output_count: TensorDesc,
    /// `OutputCoordinatesTensor`: sizes `{1,…,1,M,N}`.
    pub output_coordinates: TensorDesc,
}

/// `DML_ARGMAX_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArgMaxDesc {
    /// `InputTensor`.
    pub input: TensorDesc,
    /// `OutputTensor`: input sizes with each reduced axis set to 1.
    pub output: TensorDesc,
    /// `Axes` (its length is `AxisCount`).
    pub axes: Vec<u32>,
    /// `AxisDirection`.
    pub axis_direction: AxisDirection,
}

/// OpenVINO `OneHot-1`: inputs `indices`, `depth`, `on_value`, `off_value`; attribute `axis`.
///
/// `depth` must be a constant for OpenVINO's shape inference, so its value is part of the
/// descriptor (`depth_value`) as well as an input tensor.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OvOneHotDesc {
    /// Input 1, `indices` (T1, rank N, may be 0-D).
    pub indices: TensorDesc,
    /// Input 2, `depth` (T1 scalar).
    pub depth: TensorDesc,
    /// The constant value of `depth`.
    pub depth_value: i64,
    /// Input 3, `on_value` (T2 scalar).
    pub on_value: TensorDesc,
    /// Input 4, `off_value` (T2 scalar).
    pub off_value: TensorDesc,
    /// Output 1 (T2, rank N+1).
    pub output: TensorDesc,
    /// Attribute `axis`; negative counts from the end of the output shape.
    pub axis: i64,
}

/// A descriptor for one of the operators opconform certifies.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "operator")]
pub enum OperatorDesc {
    /// `DML_ONE_HOT`.
    #[serde(rename = "DML_ONE_HOT")]
    OneHot(OneHotDesc),
    /// `DML_NONZERO_COORDINATES`.
    #[serde(rename = "DML_NONZERO_COORDINATES")]
    NonZeroCoordinates(NonZeroCoordinatesDesc),
    /// `DML_ARGMAX`.
    #[serde(rename = "DML_ARGMAX")]
    ArgMax(ArgMaxDesc),
    /// OpenVINO `OneHot-1`.
    #[serde(rename = "OneHot-1")]
    OvOneHot(OvOneHotDesc),
}

impl OperatorDesc {
    /// Which operator this is.
    pub fn kind(&self) -> OperatorKind {
        match self {
            OperatorDesc::OneHot(_) => OperatorKind::DmlOneHot,
            OperatorDesc::NonZeroCoordinates(_) => OperatorKind::DmlNonZeroCoordinates,
            OperatorDesc::ArgMax(_) => OperatorKind::DmlArgMax,
            OperatorDesc::OvOneHot(_) => OperatorKind::OvOneHot1,
        }
    }

    /// The input tensor descriptions, in the order of [`OperatorKind::tensor_names`].
    pub fn inputs(&self) -> Vec<&TensorDesc> {
        match self {
            OperatorDesc::OneHot(d) => vec![&d.indices, &d.values],
            OperatorDesc::NonZeroCoordinates(d) => vec![&d.input],
            OperatorDesc::ArgMax(d) => vec![&d.input],
            OperatorDesc::OvOneHot(d) => vec![&d.indices, &d.depth, &d.on_value, &d.off_value],
        }
    }

    /// The output tensor descriptions, in the order of [`OperatorKind::tensor_names`].
    pub fn outputs(&self) -> Vec<&TensorDesc> {
        match self {
            OperatorDesc::OneHot(d) => vec![&d.output],
            OperatorDesc::NonZeroCoordinates(d) => vec![&d.output_count, &d.output_coordinates],
            OperatorDesc::ArgMax(d) => vec![&d.output],
            OperatorDesc::OvOneHot(d) => vec![&d.output],
        }
    }

    /// Every tensor with its spec name: inputs, then outputs.
    pub fn named_tensors(&self) -> Vec<(&'static str, &TensorDesc)> {
        let (inputs, outputs) = self.kind().tensor_names();
        inputs
            .iter()
            .chain(outputs)
            .copied()
            .zip(self.inputs().into_iter().chain(self.outputs()))
            .collect()
    }
}
