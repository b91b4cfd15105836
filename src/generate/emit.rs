//! Writes generated cases as case-file YAML (format 1) by hand, so files stay compact and
//! readable: short tensors on one line, data as flow lists broken into rows of the last
//! dimension, a comment above each case saying what it checks.
//!
//! Every scalar is written so that both the harness (serde_norway) and PyYAML read it back
//! exactly: integers in decimal, floats with a `.` and a signed exponent (PyYAML's YAML 1.1
//! float syntax), DirectML levels quoted (`"2_0"` would otherwise read as 20 in YAML 1.1).
//! [`super::check_round_trip`] re-reads every file to make sure.

use crate::case::data_generator::{DataGenerator, Distribution};
use crate::case::element::Element;
use crate::case::format::{Attributes, CaseClass, CaseSpec, InputTensorSpec, OutputTensorSpec};
use crate::case::load::axis_direction_name;
use crate::case::Compare;
use opconform_backend::Level;

/// Longest line the emitter aims for (data rows wrap there).
const LINE_WIDTH: usize = 100;

/// A finished case and the comment written above it.
#[derive(Debug, Clone)]
pub struct EmittedCase {
    /// One sentence on what the case checks.
    pub note: String,
    /// The case.
    pub spec: CaseSpec,
}

/// The text of a case file: header comment lines, `format: 1` and the cases.
pub fn file_text(header: &[String], cases: &[EmittedCase]) -> String {
    let mut out = String::new();
    for line in header {
        push_comment(&mut out, "", line);
    }
    out.push_str("format: 1\ncases:\n");
    for case in cases {
        push_comment(&mut out, "  ", &case.note);
        push_case(&mut out, &case.spec);
    }
    out
}

/// Writes `text` as `# ` comment lines wrapped at [`LINE_WIDTH`], indented by `indent`.
fn push_comment(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + 2 + line.len() + 1 + word.len() > LINE_WIDTH {
            out.push_str(&format!("{indent}# {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.is_empty() {
        out.push_str(&format!("{indent}#\n"));
    } else {
        out.push_str(&format!("{indent}# {line}\n"));
    }
}

fn push_case(out: &mut String, spec: &CaseSpec) {
    out.push_str(&format!("  - id: {}\n", spec.id));
    out.push_str(&format!("    operator: {}\n", spec.operator.name()));
    out.push_str(&format!("    level: {}\n", level_text(spec.level)));
    if spec.class == CaseClass::Informational {
        out.push_str("    class: informational\n");
    }
    if spec.compare == Compare::Bits {
        out.push_str("    compare: bits\n");
    }
    if !spec.tags.is_empty() {
        out.push_str(&format!("    tags: [{}]\n", spec.tags.join(", ")));
    }
    if !spec.exercises.is_empty() {
        out.push_str(&format!("    exercises: [{}]\n", spec.exercises.join(", ")));
    }
    let generator = spec
        .source
        .generator
        .as_deref()
        .expect("generated cases name their generator");
    out.push_str(&format!("    source: {{generator: \"{generator}\"}}\n"));
    if !spec.attributes.is_empty() {
        out.push_str(&format!(
            "    attributes: {{{}}}\n",
            attributes_text(&spec.attributes)
        ));
    }
    out.push_str("    inputs:\n");
    for (name, tensor) in &spec.inputs.0 {
        push_tensor(
            out,
            name,
            &input_fields(tensor),
            tensor.data.as_deref(),
            row_length(&tensor.sizes, tensor.strides.is_some()),
        );
    }
    out.push_str("    outputs:\n");
    for (name, tensor) in &spec.outputs.0 {
        let mut fields = output_fields(tensor);
        if let Some(fill) = &tensor.fill {
            fields.push(("fill".to_string(), element_text(&fill.0)));
        }
        let row = row_length(&tensor.sizes, false);
        push_tensor(out, name, &fields, tensor.data.as_deref(), row);
    }
    if !spec.expect_invalid.is_empty() {
        out.push_str(&format!(
            "    expect_invalid: [{}]\n",
            spec.expect_invalid.join(", ")
        ));
    }
}

/// A level as YAML: DirectML levels quoted, opsets plain.
pub fn level_text(level: Level) -> String {
    match level {
        Level::Dml(_) => format!("\"{level}\""),
        Level::Opset(_) => level.to_string(),
    }
}

fn attributes_text(attributes: &Attributes) -> String {
    let mut parts = Vec::new();
    if let Some(axis) = attributes.dml_axis {
        parts.push(format!("Axis: {axis}"));
    }
    if let Some(axes) = &attributes.axes {
        parts.push(format!("Axes: {}", list_text(axes)));
    }
    if let Some(direction) = attributes.axis_direction {
        parts.push(format!("AxisDirection: {}", axis_direction_name(direction)));
    }
    if let Some(axis) = attributes.ov_axis {
        parts.push(format!("axis: {axis}"));
    }
    parts.join(", ")
}

fn list_text<T: ToString>(items: &[T]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The fields of an input before its data, as (key, value text).
fn input_fields(tensor: &InputTensorSpec) -> Vec<(String, String)> {
    let mut fields = vec![
        ("type".to_string(), tensor.data_type.name().to_string()),
        ("sizes".to_string(), list_text(&tensor.sizes)),
    ];
    if let Some(strides) = &tensor.strides {
        fields.push(("strides".to_string(), list_text(strides)));
    }
    if let Some(total) = tensor.total_size_in_bytes {
        fields.push(("total_size_in_bytes".to_string(), total.to_string()));
    }
    if let Some(generator) = &tensor.generate {
        fields.push(("generate".to_string(), generator_text(generator)));
    }
    fields
}

fn output_fields(tensor: &OutputTensorSpec) -> Vec<(String, String)> {
    let mut fields = vec![
        ("type".to_string(), tensor.data_type.name().to_string()),
        ("sizes".to_string(), list_text(&tensor.sizes)),
    ];
    if let Some(strides) = &tensor.strides {
        fields.push(("strides".to_string(), list_text(strides)));
    }
    if let Some(total) = tensor.total_size_in_bytes {
        fields.push(("total_size_in_bytes".to_string(), total.to_string()));
    }
    fields
}

fn generator_text(generator: &DataGenerator) -> String {
    let distribution = match &generator.distribution {
        Distribution::UniformInt { min, max } => {
            format!("{{kind: uniform_int, min: {min}, max: {max}}}")
        }
        Distribution::UniformFloat { min, max } => format!(
            "{{kind: uniform_float, min: {}, max: {}}}",
            float_text(*min),
            float_text(*max)
        ),
        Distribution::Sparse { per_million, max } => {
            format!("{{kind: sparse, per_million: {per_million}, max: {max}}}")
        }
    };
    format!("{{seed: {}, distribution: {distribution}}}", generator.seed)
}

/// Elements per row of a data list: the last dimension of size above 1 (times the size-1
/// dimensions after it), or 16 for strided buffers.
fn row_length(sizes: &[u32], strided: bool) -> usize {
    if strided {
        return 16;
    }
    sizes
        .iter()
        .rev()
        .find(|&&s| s > 1)
        .map_or(1, |&s| s as usize)
}

/// Writes one tensor: on one line when short, else as a block with `data` last (or before
/// a trailing `fill` field, which `fields` then ends with).
fn push_tensor(
    out: &mut String,
    name: &str,
    fields: &[(String, String)],
    data: Option<&[Element]>,
    row: usize,
) {
    let before: Vec<&(String, String)> = fields.iter().filter(|(k, _)| k != "fill").collect();
    let after: Vec<&(String, String)> = fields.iter().filter(|(k, _)| k == "fill").collect();
    let elements: Option<Vec<String>> = data.map(|d| d.iter().map(element_text).collect());
    let mut flow: Vec<String> = before.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    if let Some(elements) = &elements {
        flow.push(format!("data: [{}]", elements.join(", ")));
    }
    flow.extend(after.iter().map(|(k, v)| format!("{k}: {v}")));
    let one_line = format!("      {name}: {{{}}}", flow.join(", "));
    if one_line.len() <= LINE_WIDTH && elements.as_ref().is_none_or(|e| e.len() <= 16) {
        out.push_str(&one_line);
        out.push('\n');
        return;
    }
    out.push_str(&format!("      {name}:\n"));
    for (key, value) in &before {
        out.push_str(&format!("        {key}: {value}\n"));
    }
    if let Some(elements) = &elements {
        push_data(out, elements, row);
    }
    for (key, value) in &after {
        out.push_str(&format!("        {key}: {value}\n"));
    }
}

/// `data: [...]` broken into rows of `row` elements, each row wrapped at [`LINE_WIDTH`].
fn push_data(out: &mut String, elements: &[String], row: usize) {
    let prefix = "        data: [";
    let continuation = " ".repeat(prefix.len());
    if elements.is_empty() {
        out.push_str("        data: []\n");
        return;
    }
    let mut lines: Vec<String> = Vec::new();
    for chunk in elements.chunks(row.max(1)) {
        let mut line = String::new();
        for element in chunk {
            if !line.is_empty() && prefix.len() + line.len() + element.len() + 2 > LINE_WIDTH {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(element);
            line.push(',');
        }
        lines.push(line);
    }
    let last = lines.len() - 1;
    lines[last].pop();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(if i == 0 { prefix } else { &continuation });
        out.push_str(line);
        out.push_str(if i == last { "]\n" } else { "\n" });
    }
}

/// One element as YAML text.
pub fn element_text(element: &Element) -> String {
    match *element {
        Element::Int(v) => v.to_string(),
        Element::Float(v) => float_text(v),
        Element::Bits(bits) => format!("bits:0x{bits:x}"),
        Element::Null => "null".to_string(),
    }
}

/// A binary64 value as YAML that PyYAML and serde_norway both read back exactly: the
/// shortest round-trip digits, always with a `.`, in exponent form (with a signed exponent)
/// for very large or small magnitudes; `.nan`, `.inf`, `-.inf`, `-0.0`.
pub fn float_text(v: f64) -> String {
    if v.is_nan() {
        return ".nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    let scientific = format!("{v:e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("integer exponent");
    if (-5..16).contains(&exponent) {
        let plain = v.to_string();
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{}", exponent.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_use_pyyaml_syntax() {
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(-0.0), "-0.0");
        assert_eq!(float_text(3.0), "3.0");
        assert_eq!(float_text(1e-45), "1.0e-45");
        assert_eq!(float_text(3.4028234663852886e38), "3.4028234663852886e+38");
        assert_eq!(float_text(f64::NEG_INFINITY), "-.inf");
        assert_eq!(float_text(0.0001), "0.0001");
    }

    #[test]
    fn float_text_reads_back_exactly() {
        for v in [
            0.1,
            1e-300,
            5e-324,
            f64::MAX,
            -2.5e-8,
            123456789.125,
            6.103515625e-5,
        ] {
            let text = float_text(v);
            let back: f64 = serde_yaml::from_str(&text).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
        }
    }

    #[test]
    fn data_rows_follow_the_last_dimension() {
        let elements: Vec<String> = (0..6).map(|i| i.to_string()).collect();
        let mut out = String::new();
        push_data(&mut out, &elements, 3);
        assert_eq!(out, "        data: [0, 1, 2,\n               3, 4, 5]\n");
        assert_eq!(row_length(&[1, 1, 3, 1], false), 3);
        assert_eq!(row_length(&[1, 1, 1, 1], false), 1);
    }
}
