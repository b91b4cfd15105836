//! Drafts of generated cases and how they become case-file [`CaseSpec`]s.
//!
//! A generator module describes each case as a [`Draft`]: operator, tensors, input contents
//! and, for a negative case, the level and the rule ids it breaks. [`Draft::finish`] builds
//! the operator descriptor, computes a positive case's level with
//! [`lowest_valid_level`] (checking it against the level the generator expects, when it
//! states one), runs the [`oracle`](super::oracle) for the expected outputs, checks a
//! negative case's rule ids against the validator, and writes every element as the exact
//! case-file [`Element`].

use super::oracle;
use super::values::{bits_of, buffer_bits, element_of, try_bits_of, Value};
use crate::case::data_generator::DataGenerator;
use crate::case::element::Element;
use crate::case::format::{
    Attributes, CaseClass, CaseSpec, FillElement, InputTensorSpec, NamedTensors, OutputTensorSpec,
    Source,
};
use crate::readings::{self, Comparison};
use opconform_backend::validate::{lowest_valid_level, validate};
use opconform_backend::{
    ArgMaxDesc, AxisDirection, DataType, Level, NonZeroCoordinatesDesc, OneHotDesc, OperatorDesc,
    OperatorKind, OvOneHotDesc, TensorDesc,
};
use std::collections::BTreeSet;

/// The largest buffer a negative case may declare (the loader refuses larger ones).
const MAX_NEGATIVE_BUFFER_BYTES: u64 = 1 << 30;

/// Expected outputs with more undefined trailing elements than this are written with
/// `fill: null` instead of listing every `null`.
const MAX_LISTED_TRAILING_NULLS: usize = 12;

/// Expected outputs ending in more equal elements than this are written with `fill: VALUE`
/// (outputs of millions of elements whose tail is all OffValue).
const MAX_LISTED_TRAILING_VALUES: usize = 4096;

/// What an input tensor holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Buffer elements from offset 0 to the last element's offset.
    Data(Vec<Value>),
    /// A seeded generator filling the same elements.
    Generated(DataGenerator),
    /// Nothing (negative cases only: the buffer is zeros).
    Absent,
}

/// An input tensor of a draft.
#[derive(Debug, Clone, PartialEq)]
pub struct InputDraft {
    /// Element type.
    pub data_type: DataType,
    /// Sizes.
    pub sizes: Vec<u32>,
    /// Strides in elements, or packed.
    pub strides: Option<Vec<u32>>,
    /// `TotalTensorSizeInBytes` when not the minimum.
    pub total_size: Option<u64>,
    /// The buffer's contents.
    pub content: Content,
}

impl InputDraft {
    /// A packed input holding `values` in row-major order.
    pub fn packed(data_type: DataType, sizes: &[u32], values: Vec<Value>) -> InputDraft {
        InputDraft {
            data_type,
            sizes: sizes.to_vec(),
            strides: None,
            total_size: None,
            content: Content::Data(values),
        }
    }

    /// A packed input filled by a generator.
    pub fn generated(data_type: DataType, sizes: &[u32], generator: DataGenerator) -> InputDraft {
        InputDraft {
            data_type,
            sizes: sizes.to_vec(),
            strides: None,
            total_size: None,
            content: Content::Generated(generator),
        }
    }

    /// A packed input without contents (negative cases).
    pub fn shape(data_type: DataType, sizes: &[u32]) -> InputDraft {
        InputDraft {
            data_type,
            sizes: sizes.to_vec(),
            strides: None,
            total_size: None,
            content: Content::Absent,
        }
    }

    /// A strided input whose element at each logical coordinate (row-major) is `logical[i]`;
    /// buffer elements no coordinate reaches hold `filler`. With a stride of 0, coordinates
    /// sharing an offset must be given equal values.
    ///
    /// # Panics
    /// If two coordinates sharing an offset are given different values.
    pub fn strided(
        data_type: DataType,
        sizes: &[u32],
        strides: &[u32],
        logical: &[Value],
        filler: Value,
    ) -> InputDraft {
        let desc =
            TensorDesc::with_strides(data_type, sizes, Some(strides)).expect("strides match sizes");
        let span = span_elements(&desc);
        let mut buffer: Vec<Option<Value>> = vec![None; span];
        let coordinates = oracle::all_coordinates(sizes);
        assert_eq!(coordinates.len(), logical.len(), "one value per element");
        for (coordinate, &value) in coordinates.iter().zip(logical) {
            let slot = &mut buffer[oracle::offset_of(&desc, coordinate)];
            if let Some(previous) = slot {
                assert_eq!(
                    bits_of(data_type, *previous),
                    bits_of(data_type, value),
                    "broadcast elements must be equal"
                );
            }
            *slot = Some(value);
        }
        InputDraft {
            data_type,
            sizes: sizes.to_vec(),
            strides: Some(strides.to_vec()),
            total_size: None,
            content: Content::Data(buffer.into_iter().map(|v| v.unwrap_or(filler)).collect()),
        }
    }

    /// The same input with strides (and contents left as given: buffer elements).
    pub fn with_strides(mut self, strides: &[u32]) -> InputDraft {
        self.strides = Some(strides.to_vec());
        self
    }

    /// The same input with an explicit `TotalTensorSizeInBytes`.
    pub fn with_total_size(mut self, bytes: u64) -> InputDraft {
        self.total_size = Some(bytes);
        self
    }

    fn desc(&self) -> TensorDesc {
        tensor_desc(
            self.data_type,
            &self.sizes,
            self.strides.as_deref(),
            self.total_size,
        )
    }
}

/// An output tensor of a draft: its description only (the oracle computes its contents).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputDraft {
    /// Element type.
    pub data_type: DataType,
    /// Sizes.
    pub sizes: Vec<u32>,
    /// Strides in elements, or packed.
    pub strides: Option<Vec<u32>>,
    /// `TotalTensorSizeInBytes` when not the minimum.
    pub total_size: Option<u64>,
}

impl OutputDraft {
    /// A packed output.
    pub fn packed(data_type: DataType, sizes: &[u32]) -> OutputDraft {
        OutputDraft {
            data_type,
            sizes: sizes.to_vec(),
            strides: None,
            total_size: None,
        }
    }

    /// The same output with strides.
    pub fn with_strides(mut self, strides: &[u32]) -> OutputDraft {
        self.strides = Some(strides.to_vec());
        self
    }

    /// The same output with an explicit `TotalTensorSizeInBytes`.
    pub fn with_total_size(mut self, bytes: u64) -> OutputDraft {
        self.total_size = Some(bytes);
        self
    }

    fn desc(&self) -> TensorDesc {
        tensor_desc(
            self.data_type,
            &self.sizes,
            self.strides.as_deref(),
            self.total_size,
        )
    }
}

/// A description with the minimum buffer size unless `total` is given; strides of the wrong
/// length are kept as they are (for negative cases of `TENSOR.STRIDES_COUNT`).
fn tensor_desc(
    data_type: DataType,
    sizes: &[u32],
    strides: Option<&[u32]>,
    total: Option<u64>,
) -> TensorDesc {
    let minimum = opconform_backend::min_buffer_size_bytes(data_type, sizes, strides);
    TensorDesc {
        data_type,
        sizes: sizes.to_vec(),
        strides: strides.map(<[u32]>::to_vec),
        total_tensor_size_in_bytes: total
            .or(minimum)
            .expect("a total size is given where the minimum is undefined"),
    }
}

/// Buffer elements from offset 0 to the last element's offset (the element count if packed).
fn span_elements(desc: &TensorDesc) -> usize {
    match &desc.strides {
        None => desc.element_count() as usize,
        Some(strides) => {
            let last: u64 = desc
                .sizes
                .iter()
                .zip(strides)
                .map(|(&s, &st)| u64::from(s - 1) * u64::from(st))
                .sum();
            last as usize + 1
        }
    }
}

/// What a draft expects.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// A positive case; `level`, when given, is the level the generator expects the
    /// descriptor to be first valid at (checked against the validator).
    Outputs {
        /// The expected lowest valid level.
        level: Option<Level>,
    },
    /// A negative case at `level` breaking exactly `rules`.
    Invalid {
        /// The level the descriptor is checked at.
        level: Level,
        /// Every rule id the validator must report.
        rules: Vec<String>,
    },
}

/// A generated case before its level and expected outputs are computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// Case id (unique within its file).
    pub id: String,
    /// The operator.
    pub operator: OperatorKind,
    /// Required or informational.
    pub class: CaseClass,
    /// One sentence on what the case checks, written as a comment above it.
    pub note: String,
    /// Free tags.
    pub tags: Vec<String>,
    /// Behaviour rule ids exercised.
    pub exercises: Vec<String>,
    /// Operator attributes.
    pub attributes: Attributes,
    /// Inputs in descriptor order.
    pub inputs: Vec<(String, InputDraft)>,
    /// Outputs in descriptor order.
    pub outputs: Vec<(String, OutputDraft)>,
    /// Positive or negative.
    pub expect: Expect,
    /// How outputs are compared.
    pub compare: Comparison,
}

impl Draft {
    /// A positive, required case with no tensors yet.
    pub fn positive(
        id: impl Into<String>,
        operator: OperatorKind,
        note: impl Into<String>,
    ) -> Draft {
        Draft {
            id: id.into(),
            operator,
            class: CaseClass::Required,
            note: note.into(),
            tags: Vec::new(),
            exercises: Vec::new(),
            attributes: Attributes::default(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            expect: Expect::Outputs { level: None },
            compare: Comparison::Value,
        }
    }

    /// A negative, required case at `level` that must break exactly `rules`.
    pub fn negative(
        id: impl Into<String>,
        operator: OperatorKind,
        level: Level,
        rules: &[&str],
        note: impl Into<String>,
    ) -> Draft {
        let mut draft = Draft::positive(id, operator, note);
        draft.expect = Expect::Invalid {
            level,
            rules: rules.iter().map(|r| r.to_string()).collect(),
        };
        draft
    }

    /// Marks the case informational (the spec is silent or undefined on what it checks).
    pub fn informational(mut self) -> Draft {
        self.class = CaseClass::Informational;
        self
    }

    /// Compares the outputs bit for bit (`compare: bits`): NaN payloads and signs count.
    pub fn compare_bits(mut self) -> Draft {
        self.compare = Comparison::Bits;
        self
    }

    /// [`Draft::compare_bits`] when `bits`.
    pub fn compare_bits_if(self, bits: bool) -> Draft {
        if bits {
            self.compare_bits()
        } else {
            self
        }
    }

    /// Adds tags.
    pub fn tags(mut self, tags: &[&str]) -> Draft {
        for tag in tags {
            if !self.tags.iter().any(|t| t == tag) {
                self.tags.push(tag.to_string());
            }
        }
        self
    }

    /// Adds exercised behaviour rule ids.
    pub fn exercises(mut self, rules: &[&str]) -> Draft {
        for rule in rules {
            if !self.exercises.iter().any(|r| r == rule) {
                self.exercises.push(rule.to_string());
            }
        }
        self
    }

    /// States the level the descriptor must first be valid at (positive cases).
    pub fn at(mut self, level: Level) -> Draft {
        assert!(matches!(self.expect, Expect::Outputs { .. }));
        self.expect = Expect::Outputs { level: Some(level) };
        self
    }

    /// Adds an input.
    pub fn input(mut self, name: &str, input: InputDraft) -> Draft {
        self.inputs.push((name.to_string(), input));
        self
    }

    /// Adds an output.
    pub fn output(mut self, name: &str, output: OutputDraft) -> Draft {
        self.outputs.push((name.to_string(), output));
        self
    }

    /// Sets `DML_ONE_HOT`'s `Axis`.
    pub fn dml_axis(mut self, axis: u32) -> Draft {
        self.attributes.dml_axis = Some(axis);
        self
    }

    /// Sets `DML_ARGMAX`'s `Axes` and `AxisDirection`.
    pub fn axes(mut self, axes: &[u32], direction: AxisDirection) -> Draft {
        self.attributes.axes = Some(axes.to_vec());
        self.attributes.axis_direction = Some(direction);
        self
    }

    /// Sets OneHot-1's `axis`.
    pub fn ov_axis(mut self, axis: i64) -> Draft {
        self.attributes.ov_axis = Some(axis);
        self
    }

    fn input_draft(&self, name: &str) -> &InputDraft {
        &self
            .inputs
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{}: no input {name}", self.id))
            .1
    }

    fn output_draft(&self, name: &str) -> &OutputDraft {
        &self
            .outputs
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{}: no output {name}", self.id))
            .1
    }

    /// The operator descriptor the draft describes.
    pub fn operator_desc(&self) -> OperatorDesc {
        let input = |name: &str| self.input_draft(name).desc();
        let output = |name: &str| self.output_draft(name).desc();
        match self.operator {
            OperatorKind::DmlOneHot => OperatorDesc::OneHot(OneHotDesc {
                indices: input("IndicesTensor"),
                values: input("ValuesTensor"),
                output: output("OutputTensor"),
                axis: self.attributes.dml_axis.expect("Axis"),
            }),
            OperatorKind::DmlNonZeroCoordinates => {
                OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
                    input: input("InputTensor"),
                    output_count: output("OutputCountTensor"),
                    output_coordinates: output("OutputCoordinatesTensor"),
                })
            }
            OperatorKind::DmlArgMax => OperatorDesc::ArgMax(ArgMaxDesc {
                input: input("InputTensor"),
                output: output("OutputTensor"),
                axes: self.attributes.axes.clone().expect("Axes"),
                axis_direction: self.attributes.axis_direction.expect("AxisDirection"),
            }),
            OperatorKind::OvOneHot1 => {
                let depth = self.input_draft("depth");
                let Content::Data(values) = &depth.content else {
                    panic!("{}: depth needs data", self.id)
                };
                let depth_value = match values[0] {
                    Value::Int(v) => i64::try_from(v).expect("depth fits i64"),
                    other => panic!("{}: depth {other:?} is not an integer", self.id),
                };
                OperatorDesc::OvOneHot(OvOneHotDesc {
                    indices: input("indices"),
                    depth: input("depth"),
                    depth_value,
                    on_value: input("on_value"),
                    off_value: input("off_value"),
                    output: output("output"),
                    axis: self.attributes.ov_axis.expect("axis"),
                })
            }
        }
    }

    /// Builds the case: level, expected outputs and elements (see the module documentation).
    ///
    /// # Panics
    /// When the draft is inconsistent: a positive descriptor valid at no level or at another
    /// level than stated, a negative one whose rule ids differ from the validator's, data of
    /// the wrong length or values that do not fit their type. These are generator bugs (or
    /// validator bugs), and `opconform generate` must not write such a case.
    pub fn finish(&self, generator: &str) -> CaseSpec {
        let operator = self.operator_desc();
        assert_eq!(operator.kind(), self.operator);
        let (level, expect_invalid) = match &self.expect {
            Expect::Outputs { level } => {
                let lowest = lowest_valid_level(&operator).unwrap_or_else(|| {
                    panic!(
                        "{}: the descriptor is valid at no level: {:?}",
                        self.id,
                        validate(&operator, Level::dml(0x4100))
                    )
                });
                if let Some(stated) = level {
                    assert_eq!(
                        *stated, lowest,
                        "{}: expected to be first valid at {stated}, the validator says {lowest}",
                        self.id
                    );
                }
                (lowest, Vec::new())
            }
            Expect::Invalid { level, rules } => {
                let found: BTreeSet<String> = validate(&operator, *level)
                    .into_iter()
                    .map(|v| v.rule)
                    .collect();
                let expected: BTreeSet<String> = rules.iter().cloned().collect();
                assert_eq!(
                    found, expected,
                    "{}: the validator's rule ids at {level} differ from the generator's",
                    self.id
                );
                for (_, desc) in operator.named_tensors() {
                    assert!(desc.total_tensor_size_in_bytes <= MAX_NEGATIVE_BUFFER_BYTES);
                }
                (*level, rules.clone())
            }
        };
        let negative = !expect_invalid.is_empty();
        let buffers: Vec<Vec<u64>> = self
            .inputs
            .iter()
            .map(|(name, input)| self.input_buffer(name, input))
            .collect();
        let expected = if negative {
            vec![None; self.outputs.len()]
        } else {
            self.expected_outputs(&operator, &buffers)
                .into_iter()
                .map(Some)
                .collect()
        };
        let (class, exercises) = self.classify(&operator, level, &buffers, &expect_invalid);
        let inputs = self
            .inputs
            .iter()
            .zip(&buffers)
            .map(|((name, input), buffer)| (name.clone(), input_spec(input, buffer)))
            .collect();
        let outputs = self
            .outputs
            .iter()
            .zip(expected)
            .map(|((name, output), data)| (name.clone(), output_spec(output, data)))
            .collect();
        CaseSpec {
            id: self.id.clone(),
            operator: self.operator,
            level,
            class,
            tags: self.tags.clone(),
            exercises,
            source: Source {
                document: None,
                example: None,
                generator: Some(generator.to_string()),
                hand_written: None,
            },
            attributes: self.attributes.clone(),
            inputs: NamedTensors(inputs),
            outputs: NamedTensors(outputs),
            expect_invalid,
            compare: self.compare,
        }
    }

    /// The case's class and exercised rules: `informational` exactly when its expectation
    /// rests on a silent point of the spec ([`readings::silent_points`], with those rule ids
    /// added to the exercised ones) or, for a negative case, when every rule it breaks is
    /// silent.
    ///
    /// # Panics
    /// When the draft was marked informational but rests on no silent point: either the
    /// generator is wrong about the case or the spec lacks the silent rule it depends on.
    fn classify(
        &self,
        operator: &OperatorDesc,
        level: Level,
        buffers: &[Vec<u64>],
        expect_invalid: &[String],
    ) -> (CaseClass, Vec<String>) {
        let mut exercises = self.exercises.clone();
        let silent = if expect_invalid.is_empty() {
            let points = readings::silent_points(operator, level, buffers, self.compare);
            for point in &points {
                if !exercises.iter().any(|e| e == point) {
                    exercises.push(point.to_string());
                }
            }
            !points.is_empty()
        } else {
            readings::rejection_is_silent(expect_invalid)
        };
        assert!(
            silent || self.class == CaseClass::Required,
            "{}: marked informational, but its expectation rests on no silent rule",
            self.id
        );
        let class = if silent {
            CaseClass::Informational
        } else {
            CaseClass::Required
        };
        (class, exercises)
    }

    /// The input's buffer as element bit patterns (zeros when absent).
    fn input_buffer(&self, name: &str, input: &InputDraft) -> Vec<u64> {
        let desc = input.desc();
        if desc
            .strides
            .as_ref()
            .is_some_and(|s| s.len() != desc.sizes.len())
        {
            assert_eq!(input.content, Content::Absent, "{}: {name}", self.id);
            return Vec::new();
        }
        let span = span_elements(&desc);
        match &input.content {
            Content::Data(values) => {
                assert_eq!(
                    values.len(),
                    span,
                    "{}: {name} needs {span} buffer elements",
                    self.id
                );
                values
                    .iter()
                    .map(|&v| {
                        try_bits_of(input.data_type, v)
                            .unwrap_or_else(|e| panic!("{}: {name}: {e}", self.id))
                    })
                    .collect()
            }
            Content::Generated(generator) => {
                let mut bytes = Vec::new();
                generator
                    .fill(input.data_type, span as u64, &mut bytes)
                    .unwrap_or_else(|e| panic!("{}: {name}: {e}", self.id));
                buffer_bits(input.data_type, &bytes)
            }
            Content::Absent => {
                assert!(
                    !matches!(self.expect, Expect::Outputs { .. }),
                    "{}: {name} of a positive case needs contents",
                    self.id
                );
                Vec::new()
            }
        }
    }

    /// The oracle's outputs, in descriptor order, as bit patterns of each output's type in
    /// row-major order (`None` where the spec leaves an element undefined).
    fn expected_outputs(
        &self,
        operator: &OperatorDesc,
        buffers: &[Vec<u64>],
    ) -> Vec<Vec<Option<u64>>> {
        let all_defined = |bits: Vec<u64>| bits.into_iter().map(Some).collect::<Vec<_>>();
        match operator {
            OperatorDesc::OneHot(desc) => {
                vec![all_defined(oracle::one_hot(desc, &buffers[0], &buffers[1]))]
            }
            OperatorDesc::NonZeroCoordinates(desc) => {
                let result = oracle::nonzero_coordinates(desc, &buffers[0]);
                vec![vec![Some(u64::from(result.count))], result.coordinates]
            }
            OperatorDesc::ArgMax(desc) => {
                let indices = oracle::argmax(desc, &buffers[0]);
                let output_type = desc.output.data_type;
                vec![all_defined(
                    indices
                        .into_iter()
                        .map(|i| bits_of(output_type, Value::Int(i128::from(i))))
                        .collect(),
                )]
            }
            OperatorDesc::OvOneHot(desc) => {
                let (on, off) = (buffers[2][0], buffers[3][0]);
                vec![all_defined(oracle::ov_one_hot(desc, &buffers[0], on, off))]
            }
        }
    }
}

fn input_spec(input: &InputDraft, buffer: &[u64]) -> InputTensorSpec {
    let (data, generate) = match &input.content {
        Content::Data(_) => (
            Some(
                buffer
                    .iter()
                    .map(|&b| element_of(input.data_type, b))
                    .collect(),
            ),
            None,
        ),
        Content::Generated(generator) => (None, Some(generator.clone())),
        Content::Absent => (None, None),
    };
    InputTensorSpec {
        data_type: input.data_type,
        sizes: input.sizes.clone(),
        strides: input.strides.clone(),
        total_size_in_bytes: input.total_size,
        data,
        generate,
    }
}

fn output_spec(output: &OutputDraft, expected: Option<Vec<Option<u64>>>) -> OutputTensorSpec {
    let (data, fill) = match expected {
        None => (None, None),
        Some(elements) => {
            let to_element = |e: &Option<u64>| {
                e.map_or(Element::Null, |bits| element_of(output.data_type, bits))
            };
            let last = elements.last().copied().flatten();
            let trailing = elements
                .iter()
                .rev()
                .take_while(|e| **e == elements[elements.len() - 1])
                .count();
            let limit = if last.is_none() {
                MAX_LISTED_TRAILING_NULLS
            } else {
                MAX_LISTED_TRAILING_VALUES
            };
            let listed = if trailing > limit {
                &elements[..elements.len() - trailing]
            } else {
                &elements[..]
            };
            let data = listed.iter().map(to_element).collect();
            let fill = (listed.len() < elements.len())
                .then(|| FillElement(to_element(&elements[elements.len() - 1])));
            (Some(data), fill)
        }
    };
    OutputTensorSpec {
        data_type: output.data_type,
        sizes: output.sizes.clone(),
        strides: output.strides.clone(),
        total_size_in_bytes: output.total_size,
        data,
        fill,
    }
}
