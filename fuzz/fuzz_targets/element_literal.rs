//! Fuzzes element literals: a plain YAML scalar read as a tensor element and encoded in every
//! data type must never panic, and a decimal encoded as FLOAT16 or FLOAT32 must be the nearest
//! value of that type (or refused as out of range).
#![no_main]

use libfuzzer_sys::fuzz_target;
use opconform::case::element::Element;
use opconform::case::yaml::{Node, NodeDeserializer, NodeValue, Pos};
use opconform_backend::DataType;
use serde::Deserialize;
use std::borrow::Cow;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let node = Node {
        pos: Pos { line: 1, column: 1 },
        value: NodeValue::Scalar {
            text: Cow::Borrowed(text),
            plain: true,
            tag: None,
        },
    };
    let Ok(element) = Element::deserialize(NodeDeserializer::new(&node, "data[0]")) else {
        return;
    };
    for data_type in DataType::ALL {
        let bytes = element.to_bytes(data_type);
        if let (Element::Float(v), Ok(Some(bytes))) = (element, &bytes) {
            if v.is_finite() {
                check_nearest(v, data_type, bytes);
            }
        }
    }
});

/// No neighbour of the encoded value is nearer to `v`.
fn check_nearest(v: f64, data_type: DataType, bytes: &[u8]) {
    let (got, below, above) = match data_type {
        DataType::Float16 => {
            let bits = u16::from_le_bytes([bytes[0], bytes[1]]);
            let at = |b: u16| half::f16::from_bits(b).to_f64();
            (at(bits), at(bits.wrapping_sub(1)), at(bits.wrapping_add(1)))
        }
        DataType::Float32 => {
            let bits = u32::from_le_bytes(bytes.try_into().unwrap());
            let at = |b: u32| f64::from(f32::from_bits(b));
            (at(bits), at(bits.wrapping_sub(1)), at(bits.wrapping_add(1)))
        }
        _ => return,
    };
    let error = (got - v).abs();
    for neighbour in [below, above] {
        if neighbour.is_finite() && neighbour.signum() == got.signum() {
            assert!((neighbour - v).abs() >= error, "{v:e} encoded as {got:e}");
        }
    }
}
