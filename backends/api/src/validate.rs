//! The descriptor validator: checks an [`OperatorDesc`] against every descriptor rule in
//! `specs/` at a level, and finds the lowest level at which a descriptor is valid.
//!
//! Each check names the rule id it enforces; `specs/*.yaml` holds the sentence behind each id.

use crate::spec::{self, SpecFile};
use crate::{
    ArgMaxDesc, FeatureLevel, Level, NonZeroCoordinatesDesc, OneHotDesc, OperatorDesc,
    OvOneHotDesc, SpecFamily, TensorDesc,
};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One broken rule: which rule, where, and what was expected against what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Rule id from `specs/`, e.g. `ONE_HOT.INDICES_AXIS_SIZE`.
    pub rule: String,
    /// The tensor concerned, when the rule is about one (e.g. `IndicesTensor`).
    pub tensor: Option<String>,
    /// The field concerned, e.g. `Sizes[3]`, `DataType`, `Axis`.
    pub field: String,
    /// What the rule requires.
    pub expected: String,
    /// What the descriptor holds.
    pub found: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.rule)?;
        if let Some(tensor) = &self.tensor {
            write!(f, "{tensor}.")?;
        }
        write!(
            f,
            "{}: expected {}, found {}",
            self.field, self.expected, self.found
        )
    }
}

/// Collects violations while checking one descriptor.
struct Checker {
    violations: Vec<Violation>,
    /// When set, a broken rule only sets `broken` (nothing is formatted or recorded).
    quiet: bool,
    /// Whether any rule was broken.
    broken: bool,
}

impl Checker {
    /// A checker recording every violation, or (`quiet`) only whether there was one.
    fn new(quiet: bool) -> Checker {
        Checker {
            violations: Vec::new(),
            quiet,
            broken: false,
        }
    }

    /// Records a violation of `rule` (called only when a rule does not hold).
    fn push(
        &mut self,
        rule: String,
        tensor: Option<&str>,
        field: String,
        expected: String,
        found: String,
    ) {
        self.violations.push(Violation {
            rule,
            tensor: tensor.map(str::to_string),
            field,
            expected,
            found,
        });
    }
}

/// Records a violation of `rule` unless `holds`. The rule, field, expected and found
/// expressions are evaluated only when the rule is broken: a valid descriptor is checked
/// without formatting a string or allocating (tests/validate_allocations.rs).
macro_rules! require {
    ($checker:expr, $holds:expr, $rule:expr, $tensor:expr, $field:expr, $expected:expr, $found:expr $(,)?) => {
        if !$holds {
            $checker.broken = true;
            if !$checker.quiet {
                $checker.push(
                    ($rule).to_string(),
                    $tensor,
                    ($field).to_string(),
                    ($expected).to_string(),
                    ($found).to_string(),
                );
            }
        }
    };
}

/// Every rule `operator` violates at `level`, in rule order; empty when it is valid there.
pub fn validate(operator: &OperatorDesc, level: Level) -> Vec<Violation> {
    let mut checker = Checker::new(false);
    check(&mut checker, operator, level);
    checker.violations
}

/// True when `operator` is valid at `level`: [`validate`] would report nothing. Broken rules
/// are not formatted, so trying the levels below a descriptor's first valid one is cheap.
pub fn is_valid(operator: &OperatorDesc, level: Level) -> bool {
    let mut checker = Checker::new(true);
    check(&mut checker, operator, level);
    !checker.broken
}

/// Runs every check of `operator` at `level` into `checker`.
fn check(checker: &mut Checker, operator: &OperatorDesc, level: Level) {
    let spec = spec::for_operator(operator.kind());
    let prefix = rule_prefix(spec);
    check_buffer_tensors(checker, operator);
    check_support_table(checker, operator, spec, prefix, level);
    match operator {
        OperatorDesc::OneHot(desc) => check_one_hot(checker, desc),
        OperatorDesc::NonZeroCoordinates(desc) => check_nonzero_coordinates(checker, desc),
        OperatorDesc::ArgMax(desc) => check_argmax(checker, desc),
        OperatorDesc::OvOneHot(desc) => check_ov_one_hot(checker, desc),
    }
}

/// The lowest level of the operator's family at which `operator` is valid, or `None` when it is
/// valid at no level (its violations do not depend on the level).
pub fn lowest_valid_level(operator: &OperatorDesc) -> Option<Level> {
    candidate_levels(operator.kind().family())
        .into_iter()
        .find(|&level| is_valid(operator, level))
}

/// Every level of a family a case can be tagged with, lowest first. For OpenVINO that is
/// `opset1` alone: the page describes the version-1 operation and says nothing about which
/// later opsets keep it, so opconform assumes none.
pub fn candidate_levels(family: SpecFamily) -> Vec<Level> {
    match family {
        SpecFamily::Directml => FeatureLevel::ALL.into_iter().map(Level::Dml).collect(),
        SpecFamily::Openvino => vec![Level::Opset(NEWEST_OPSET)],
    }
}

/// The OpenVINO level opconform tags cases with and a backend claims: `opset1`, the version
/// OneHot-1's name carries. The seeds say nothing about later opsets (OpenVINO's opset16 has
/// OneHot-16), so no higher opset is assumed to contain OneHot-1.
pub const NEWEST_OPSET: u32 = 1;

/// `ONE_HOT` from `ONE_HOT.AVAILABILITY`: the prefix of an operator's rule ids.
fn rule_prefix(spec: &SpecFile) -> &str {
    spec.rules
        .first()
        .and_then(|r| r.id.split_once('.'))
        .map_or("", |(prefix, _)| prefix)
}

/// Every tensor of `operator` with its spec name, inputs then outputs, as
/// [`OperatorDesc::named_tensors`] gives them but without allocating.
fn named_tensors(operator: &OperatorDesc) -> impl Iterator<Item = (&'static str, &TensorDesc)> {
    let (inputs, outputs) = operator.kind().tensor_names();
    let tensors: [Option<&TensorDesc>; 5] = match operator {
        OperatorDesc::OneHot(d) => [
            Some(&d.indices),
            Some(&d.values),
            Some(&d.output),
            None,
            None,
        ],
        OperatorDesc::NonZeroCoordinates(d) => [
            Some(&d.input),
            Some(&d.output_count),
            Some(&d.output_coordinates),
            None,
            None,
        ],
        OperatorDesc::ArgMax(d) => [Some(&d.input), Some(&d.output), None, None, None],
        OperatorDesc::OvOneHot(d) => [
            Some(&d.indices),
            Some(&d.depth),
            Some(&d.on_value),
            Some(&d.off_value),
            Some(&d.output),
        ],
    };
    inputs
        .iter()
        .chain(outputs)
        .copied()
        .zip(tensors.into_iter().flatten())
}

/// The general `DML_BUFFER_TENSOR_DESC` rules, for every tensor of a DirectML descriptor
/// (OpenVINO tensors are not DirectML buffer tensors: none of these rules applies to them).
fn check_buffer_tensors(checker: &mut Checker, operator: &OperatorDesc) {
    if operator.kind().family() != SpecFamily::Directml {
        return;
    }
    for (name, desc) in named_tensors(operator) {
        {
            for (i, &size) in desc.sizes.iter().enumerate() {
                require!(
                    checker,
                    size != 0,
                    "TENSOR.SIZES_NONZERO",
                    Some(name),
                    format!("Sizes[{i}]"),
                    "a size above 0",
                    size,
                );
            }
            let count = desc.element_count();
            require!(
                checker,
                count <= u64::from(u32::MAX),
                "TENSOR.ELEMENT_COUNT_32BIT",
                Some(name),
                "Sizes",
                "an element count below 2^32",
                count,
            );
        }
        check_buffer_size(checker, name, desc);
    }
}

/// `TENSOR.STRIDES_COUNT` and `TENSOR.TOTAL_SIZE` for one tensor.
fn check_buffer_size(checker: &mut Checker, name: &str, desc: &TensorDesc) {
    if let Some(strides) = &desc.strides {
        require!(
            checker,
            strides.len() == desc.sizes.len(),
            "TENSOR.STRIDES_COUNT",
            Some(name),
            "Strides",
            format!("{} strides (one per dimension)", desc.sizes.len()),
            format!("{} strides", strides.len()),
        );
        if strides.len() != desc.sizes.len() {
            return;
        }
    }
    match desc.min_size_in_bytes() {
        Some(min) => require!(
            checker,
            desc.total_tensor_size_in_bytes >= min,
            "TENSOR.TOTAL_SIZE",
            Some(name),
            "TotalTensorSizeInBytes",
            format!("at least {min}"),
            desc.total_tensor_size_in_bytes,
        ),
        None => require!(
            checker,
            false,
            "TENSOR.TOTAL_SIZE",
            Some(name),
            "TotalTensorSizeInBytes",
            "a size that fits in 64 bits",
            "an overflowing size",
        ),
    }
}

/// Availability and the support table in force at `level`.
fn check_support_table(
    checker: &mut Checker,
    operator: &OperatorDesc,
    spec: &SpecFile,
    prefix: &str,
    level: Level,
) {
    let Some(table) = spec.table_at(level) else {
        let introduced = spec
            .introduced
            .map_or_else(|| "?".to_string(), |l| l.to_string());
        require!(
            checker,
            false,
            format!("{prefix}.AVAILABILITY"),
            None,
            "level",
            format!("{} level {introduced} or above", spec.family),
            level,
        );
        return;
    };
    for (name, desc) in named_tensors(operator) {
        let Some(row) = table.tensors.get(name) else {
            continue;
        };
        require!(
            checker,
            row.allows_dimension_count(desc.dimension_count()),
            format!("{prefix}.SUPPORT_DIMENSION_COUNT"),
            Some(name),
            "DimensionCount",
            format!(
                "{} at {level} (table from {})",
                row.range_text(),
                table.from
            ),
            desc.dimension_count(),
        );
        require!(
            checker,
            row.data_types.contains(&desc.data_type),
            format!("{prefix}.SUPPORT_DATA_TYPE"),
            Some(name),
            "DataType",
            format!(
                "one of {} at {level} (table from {})",
                join_names(&row.data_types),
                table.from
            ),
            desc.data_type,
        );
    }
}

fn join_names<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(T::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn sizes_text<T: fmt::Display>(sizes: &[T]) -> String {
    format!("{{{}}}", join_names(sizes))
}

fn check_one_hot(checker: &mut Checker, desc: &OneHotDesc) {
    let rank = desc.indices.dimension_count();
    for (name, tensor) in [
        ("ValuesTensor", &desc.values),
        ("OutputTensor", &desc.output),
    ] {
        require!(
            checker,
            tensor.dimension_count() == rank,
            "ONE_HOT.DIMENSION_COUNT_EQUAL",
            Some(name),
            "DimensionCount",
            format!("{rank} (the IndicesTensor's)"),
            tensor.dimension_count(),
        );
    }
    require!(
        checker,
        desc.output.data_type == desc.values.data_type,
        "ONE_HOT.OUTPUT_VALUES_SAME_TYPE",
        Some("OutputTensor"),
        "DataType",
        format!("{} (the ValuesTensor's)", desc.values.data_type),
        desc.output.data_type,
    );
    require!(
        checker,
        desc.values.element_count() >= 2,
        "ONE_HOT.VALUES_ELEMENT_COUNT",
        Some("ValuesTensor"),
        "Sizes",
        "at least two elements",
        format!("{} element(s)", desc.values.element_count()),
    );
    let axis = desc.axis as usize;
    require!(
        checker,
        axis < rank,
        "ONE_HOT.AXIS_RANGE",
        None,
        "Axis",
        format!("less than {rank} (the IndicesTensor's DimensionCount)"),
        desc.axis,
    );
    if axis >= rank || desc.output.dimension_count() != rank {
        return;
    }
    for i in (0..rank).filter(|&i| i != axis) {
        require!(
            checker,
            desc.indices.sizes[i] == desc.output.sizes[i],
            "ONE_HOT.INDICES_SIZES",
            Some("IndicesTensor"),
            format!("Sizes[{i}]"),
            format!("{} (the OutputTensor's)", desc.output.sizes[i]),
            desc.indices.sizes[i],
        );
    }
    require!(
        checker,
        desc.indices.sizes[axis] == 1,
        "ONE_HOT.INDICES_AXIS_SIZE",
        Some("IndicesTensor"),
        format!("Sizes[{axis}]"),
        "1 (the Axis dimension)",
        desc.indices.sizes[axis],
    );
    require!(
        checker,
        desc.output.sizes[axis] > 0,
        "ONE_HOT.OUTPUT_AXIS_SIZE",
        Some("OutputTensor"),
        format!("Sizes[{axis}]"),
        "greater than 0",
        desc.output.sizes[axis],
    );
}

/// The DimensionCount of a tensor without its leading size-1 dimensions.
pub fn effective_rank(sizes: &[u32]) -> usize {
    sizes.len() - sizes.iter().take_while(|&&s| s == 1).count()
}

fn check_nonzero_coordinates(checker: &mut Checker, desc: &NonZeroCoordinatesDesc) {
    let count = &desc.output_count;
    require!(
        checker,
        count.sizes.iter().all(|&s| s == 1),
        "NONZERO_COORDINATES.COUNT_SCALAR",
        Some("OutputCountTensor"),
        "Sizes",
        "all sizes 1",
        sizes_text(&count.sizes),
    );
    require!(
        checker,
        count.data_type == crate::DataType::Uint32,
        "NONZERO_COORDINATES.COUNT_TYPE",
        Some("OutputCountTensor"),
        "DataType",
        "UINT32",
        count.data_type,
    );
    let coords = &desc.output_coordinates;
    let rank = coords.dimension_count();
    let leading_ones = rank >= 2 && coords.sizes[..rank - 2].iter().all(|&s| s == 1);
    require!(
        checker,
        leading_ones,
        "NONZERO_COORDINATES.COORDINATES_SHAPE",
        Some("OutputCoordinatesTensor"),
        "Sizes",
        "{1,…,1,M,N}",
        sizes_text(&coords.sizes),
    );
    if rank < 2 {
        return;
    }
    let m = u64::from(coords.sizes[rank - 2]);
    let n = coords.sizes[rank - 1] as usize;
    require!(
        checker,
        m == desc.input.element_count(),
        "NONZERO_COORDINATES.COORDINATES_M",
        Some("OutputCoordinatesTensor"),
        format!("Sizes[{}]", rank - 2),
        format!(
            "{} (the InputTensor's element count)",
            desc.input.element_count()
        ),
        m,
    );
    let low = effective_rank(&desc.input.sizes);
    let high = desc.input.dimension_count();
    require!(
        checker,
        (low..=high).contains(&n),
        "NONZERO_COORDINATES.COORDINATES_N",
        Some("OutputCoordinatesTensor"),
        format!("Sizes[{}]", rank - 1),
        format!("{low} (effective rank) to {high} (DimensionCount) of the InputTensor"),
        n,
    );
}

fn check_argmax(checker: &mut Checker, desc: &ArgMaxDesc) {
    let rank = desc.input.dimension_count();
    require!(
        checker,
        desc.output.dimension_count() == rank,
        "ARGMAX.DIMENSION_COUNT_EQUAL",
        Some("OutputTensor"),
        "DimensionCount",
        format!("{rank} (the InputTensor's)"),
        desc.output.dimension_count(),
    );
    require!(
        checker,
        !desc.axes.is_empty(),
        "ARGMAX.AXIS_COUNT",
        None,
        "AxisCount",
        "at least 1",
        0,
    );
    for (i, &axis) in desc.axes.iter().enumerate() {
        require!(
            checker,
            (axis as usize) < rank,
            "ARGMAX.AXES_RANGE",
            None,
            format!("Axes[{i}]"),
            format!("in [0, {}]", rank as i64 - 1),
            axis,
        );
        require!(
            checker,
            !desc.axes[..i].contains(&axis),
            "ARGMAX.AXES_DISTINCT",
            None,
            format!("Axes[{i}]"),
            "an axis not listed before",
            axis,
        );
    }
    if desc.output.dimension_count() != rank {
        return;
    }
    for i in 0..rank {
        let reduced = desc.axes.contains(&(i as u32));
        let expected = if reduced { 1 } else { desc.input.sizes[i] };
        require!(
            checker,
            desc.output.sizes[i] == expected,
            "ARGMAX.OUTPUT_SIZES",
            Some("OutputTensor"),
            format!("Sizes[{i}]"),
            if reduced {
                "1 (a reduced axis)".to_string()
            } else {
                format!("{expected} (the InputTensor's)")
            },
            desc.output.sizes[i],
        );
    }
}

fn check_ov_one_hot(checker: &mut Checker, desc: &OvOneHotDesc) {
    require!(
        checker,
        desc.depth.data_type == desc.indices.data_type,
        "ONEHOT1.T1_SAME_TYPE",
        Some("depth"),
        "type",
        format!("{} (T1, the indices' type)", desc.indices.data_type),
        desc.depth.data_type,
    );
    require!(
        checker,
        desc.depth_value > 0,
        "ONEHOT1.DEPTH_POSITIVE",
        Some("depth"),
        "value",
        "a positive number",
        desc.depth_value,
    );
    require!(
        checker,
        desc.off_value.data_type == desc.on_value.data_type,
        "ONEHOT1.VALUES_SAME_TYPE",
        Some("off_value"),
        "type",
        format!("{} (on_value's)", desc.on_value.data_type),
        desc.off_value.data_type,
    );
    require!(
        checker,
        desc.output.data_type == desc.on_value.data_type,
        "ONEHOT1.VALUES_SAME_TYPE",
        Some("output"),
        "type",
        format!("{} (on_value's)", desc.on_value.data_type),
        desc.output.data_type,
    );
    let n = desc.indices.dimension_count() as i64;
    require!(
        checker,
        (-(n + 1)..=n).contains(&desc.axis),
        "ONEHOT1.AXIS_RANGE",
        None,
        "axis",
        format!("in [{}, {n}]", -(n + 1)),
        desc.axis,
    );
    let Some(matches) = ov_one_hot_output_matches(desc) else {
        return;
    };
    require!(
        checker,
        matches,
        "ONEHOT1.OUTPUT_SHAPE",
        Some("output"),
        "shape",
        sizes_text(&ov_one_hot_output_shape(desc).unwrap_or_default()),
        sizes_text(&desc.output.sizes),
    );
}

/// Where OneHot-1 inserts the depth dimension (`axis`, a negative one counted from the end of
/// the output), or `None` when the axis is out of range or depth is not positive.
fn ov_one_hot_depth_axis(desc: &OvOneHotDesc) -> Option<usize> {
    let n = desc.indices.dimension_count() as i64;
    let axis = if desc.axis < 0 {
        desc.axis + n + 1
    } else {
        desc.axis
    };
    if !(0..=n).contains(&axis) || desc.depth_value <= 0 {
        return None;
    }
    Some(axis as usize)
}

/// Whether the output's shape is the one OneHot-1 produces ([`ov_one_hot_output_shape`],
/// compared without allocating), or `None` when there is no such shape.
fn ov_one_hot_output_matches(desc: &OvOneHotDesc) -> Option<bool> {
    let axis = ov_one_hot_depth_axis(desc)?;
    let found = &desc.output.sizes;
    let indices = &desc.indices.sizes;
    Some(
        found.len() == indices.len() + 1
            && found[..axis] == indices[..axis]
            && u64::from(found[axis]) == desc.depth_value as u64
            && found[axis + 1..] == indices[axis..],
    )
}

/// The output shape OneHot-1 produces, in 64 bits: the indices' shape with `depth` inserted
/// at `axis`, or `None` when the axis is out of range or depth is not positive (rules of
/// their own). A depth above `u32::MAX` gives a shape no output can hold, so the shape rule
/// still reports it.
pub fn ov_one_hot_output_shape(desc: &OvOneHotDesc) -> Option<Vec<u64>> {
    let axis = ov_one_hot_depth_axis(desc)?;
    let mut sizes: Vec<u64> = desc.indices.sizes.iter().map(|&s| u64::from(s)).collect();
    sizes.insert(axis, desc.depth_value as u64);
    Some(sizes)
}

/// [`ov_one_hot_output_shape`] when every size fits the `u32` sizes of a [`TensorDesc`].
pub fn ov_one_hot_output_sizes(desc: &OvOneHotDesc) -> Option<Vec<u32>> {
    ov_one_hot_output_shape(desc)?
        .into_iter()
        .map(|s| u32::try_from(s).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AxisDirection, DataType};

    fn ov_one_hot(depth_value: i64, output: &[u32], indices: TensorDesc) -> OperatorDesc {
        OperatorDesc::OvOneHot(OvOneHotDesc {
            indices,
            depth: TensorDesc::packed(DataType::Int64, &[]),
            depth_value,
            on_value: TensorDesc::packed(DataType::Float32, &[]),
            off_value: TensorDesc::packed(DataType::Float32, &[]),
            output: TensorDesc::packed(DataType::Float32, output),
            axis: -1,
        })
    }

    #[test]
    fn a_depth_beyond_32_bits_still_breaks_the_output_shape() {
        let indices = TensorDesc::packed(DataType::Int64, &[4]);
        let desc = ov_one_hot((1 << 32) + 3, &[4, 3], indices.clone());
        assert_eq!(
            rules(&validate(&desc, Level::Opset(1))),
            ["ONEHOT1.OUTPUT_SHAPE"]
        );
        assert!(validate(&ov_one_hot(3, &[4, 3], indices), Level::Opset(1)).is_empty());
    }

    #[test]
    fn openvino_tensors_have_no_rank_cap_and_no_buffer_rules() {
        let indices = TensorDesc {
            total_tensor_size_in_bytes: 1,
            ..TensorDesc::packed(DataType::Int64, &[1; 12])
        };
        let mut output = vec![1u32; 12];
        output.push(3);
        assert!(validate(&ov_one_hot(3, &output, indices), Level::Opset(1)).is_empty());
        assert_eq!(candidate_levels(SpecFamily::Openvino), [Level::Opset(1)]);
    }

    fn one_hot(indices: &[u32], output: &[u32], axis: u32, index_type: DataType) -> OperatorDesc {
        OperatorDesc::OneHot(OneHotDesc {
            indices: TensorDesc::packed(index_type, indices),
            values: TensorDesc::packed(DataType::Float32, &[1, 1, 1, 2]),
            output: TensorDesc::packed(DataType::Float32, output),
            axis,
        })
    }

    fn rules(violations: &[Violation]) -> Vec<&str> {
        violations.iter().map(|v| v.rule.as_str()).collect()
    }

    #[test]
    fn documented_one_hot_is_valid_from_2_0() {
        let desc = one_hot(&[1, 1, 3, 1], &[1, 1, 3, 4], 3, DataType::Uint32);
        assert!(validate(&desc, Level::dml(0x2000)).is_empty());
        assert_eq!(lowest_valid_level(&desc), Some(Level::dml(0x2000)));
        assert_eq!(
            rules(&validate(&desc, Level::dml(0x1000))),
            ["ONE_HOT.AVAILABILITY"]
        );
    }

    #[test]
    fn signed_indices_need_3_0() {
        let desc = one_hot(&[1, 1, 3, 1], &[1, 1, 3, 4], 3, DataType::Int32);
        assert_eq!(lowest_valid_level(&desc), Some(Level::dml(0x3000)));
        assert_eq!(
            rules(&validate(&desc, Level::dml(0x2100))),
            ["ONE_HOT.SUPPORT_DATA_TYPE"]
        );
    }

    #[test]
    fn one_hot_shape_rules_name_the_field() {
        let desc = one_hot(&[1, 2, 3, 1], &[1, 1, 3, 4], 3, DataType::Uint32);
        let found = validate(&desc, Level::dml(0x4100));
        assert_eq!(rules(&found), ["ONE_HOT.INDICES_SIZES"]);
        assert_eq!(found[0].field, "Sizes[1]");
        let desc = one_hot(&[1, 1, 3, 2], &[1, 1, 3, 4], 3, DataType::Uint32);
        assert_eq!(
            rules(&validate(&desc, Level::dml(0x4100))),
            ["ONE_HOT.INDICES_AXIS_SIZE"]
        );
        let desc = one_hot(&[1, 1, 3, 1], &[1, 1, 3, 4], 4, DataType::Uint32);
        assert_eq!(
            rules(&validate(&desc, Level::dml(0x4100))),
            ["ONE_HOT.AXIS_RANGE"]
        );
    }

    #[test]
    fn general_tensor_rules() {
        let mut desc = TensorDesc::packed(DataType::Float32, &[2, 0]);
        desc.total_tensor_size_in_bytes = 0;
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: desc,
            output: TensorDesc::packed(DataType::Uint32, &[1, 0]),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        });
        let found = validate(&op, Level::dml(0x3000));
        assert_eq!(
            rules(&found),
            ["TENSOR.SIZES_NONZERO", "TENSOR.SIZES_NONZERO"]
        );
        let mut small = TensorDesc::packed(DataType::Float32, &[4]);
        small.total_tensor_size_in_bytes = 12;
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: small,
            output: TensorDesc::packed(DataType::Uint32, &[1]),
            axes: vec![0],
            axis_direction: AxisDirection::Increasing,
        });
        assert_eq!(
            rules(&validate(&op, Level::dml(0x3000))),
            ["TENSOR.TOTAL_SIZE"]
        );
    }

    #[test]
    fn argmax_axes_rules() {
        let op = OperatorDesc::ArgMax(ArgMaxDesc {
            input: TensorDesc::packed(DataType::Float32, &[3, 3]),
            output: TensorDesc::packed(DataType::Uint32, &[1, 1]),
            axes: vec![0, 0, 2],
            axis_direction: AxisDirection::Increasing,
        });
        assert_eq!(
            rules(&validate(&op, Level::dml(0x3000))),
            [
                "ARGMAX.AXES_DISTINCT",
                "ARGMAX.AXES_RANGE",
                "ARGMAX.OUTPUT_SIZES"
            ]
        );
    }

    #[test]
    fn nonzero_coordinates_n_bounds() {
        let op = |n: u32| {
            OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
                input: TensorDesc::packed(DataType::Float32, &[1, 1, 12, 5]),
                output_count: TensorDesc::packed(DataType::Uint32, &[1, 1, 1, 1]),
                output_coordinates: TensorDesc::packed(DataType::Uint32, &[1, 1, 60, n]),
            })
        };
        for n in 2..=4 {
            assert!(validate(&op(n), Level::dml(0x3000)).is_empty(), "N = {n}");
        }
        for n in [1, 5] {
            assert_eq!(
                rules(&validate(&op(n), Level::dml(0x3000))),
                ["NONZERO_COORDINATES.COORDINATES_N"]
            );
        }
        assert_eq!(effective_rank(&[1, 1, 1, 1]), 0);
        assert_eq!(effective_rank(&[1, 2, 1, 4]), 3);
    }
}
