//! Resolving a plain (unquoted) scalar to null, a boolean, an integer, a float or a string,
//! following the rules of `serde_norway` (which writes the generated case files), so a file reads
//! the same whichever of the two parses it.

/// What a plain scalar means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolved<'a> {
    /// Empty, `null`, `Null`, `NULL` or `~`.
    Null,
    /// `true`/`True`/`TRUE`, `false`/….
    Bool(bool),
    /// A non-negative integer that fits 64 bits (decimal, `0x`, `0o`, `0b`, leading `+`).
    U64(u64),
    /// A negative integer that fits 64 bits.
    I64(i64),
    /// A non-negative integer that needs more than 64 bits.
    U128(u128),
    /// A negative integer that needs more than 64 bits.
    I128(i128),
    /// A float: a finite decimal, `.inf`, `-.inf`, `.nan` (and capitalised forms).
    F64(f64),
    /// Anything else: a string.
    Str(&'a str),
}

/// Resolves a plain scalar.
pub fn resolve_plain(text: &str) -> Resolved<'_> {
    if text.is_empty() || matches!(text, "null" | "Null" | "NULL" | "~") {
        return Resolved::Null;
    }
    match text {
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        _ => {}
    }
    if let Some(v) = parse_unsigned(text) {
        return u64::try_from(v).map_or(Resolved::U128(v), Resolved::U64);
    }
    if let Some(v) = parse_negative(text) {
        return i64::try_from(v).map_or(Resolved::I128(v), Resolved::I64);
    }
    if !digits_but_not_number(text) {
        if let Some(v) = parse_f64(text) {
            return Resolved::F64(v);
        }
    }
    Resolved::Str(text)
}

/// Leading zero(s) followed by digits is a string in YAML 1.2 (`007`).
fn digits_but_not_number(text: &str) -> bool {
    let text = text.strip_prefix(['-', '+']).unwrap_or(text);
    text.len() > 1 && text.starts_with('0') && text[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The digits after a radix prefix, refusing a second sign (`0x-1`).
fn radix_digits<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)
        .filter(|rest| !rest.starts_with(['+', '-']))
}

fn parse_radix(digits: &str) -> Option<u128> {
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = radix_digits(digits, prefix) {
            if let Ok(v) = u128::from_str_radix(rest, radix) {
                return Some(v);
            }
        }
    }
    None
}

fn parse_unsigned(text: &str) -> Option<u128> {
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    if let Some(v) = parse_radix(unsigned) {
        return Some(v);
    }
    if unsigned.starts_with(['+', '-']) || digits_but_not_number(text) {
        return None;
    }
    unsigned.parse().ok()
}

fn parse_negative(text: &str) -> Option<i128> {
    let magnitude = text.strip_prefix('-')?;
    let negate = |v: u128| 0i128.checked_sub_unsigned(v);
    if let Some(v) = parse_radix(magnitude) {
        return negate(v);
    }
    if magnitude.starts_with(['+', '-']) || digits_but_not_number(text) {
        return None;
    }
    text.parse().ok()
}

fn parse_f64(text: &str) -> Option<f64> {
    let unsigned = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" if unsigned.len() == text.len() => return Some(f64::NAN),
        _ => {}
    }
    unsigned.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Resolved::*;

    #[test]
    fn resolves_like_serde_norway() {
        let texts = [
            "",
            "~",
            "null",
            "true",
            "FALSE",
            "0",
            "-0",
            "+7",
            "007",
            "-007",
            "0x1F",
            "-0x10",
            "0o17",
            "0b101",
            "0x-1",
            "18446744073709551615",
            "-9223372036854775808",
            "1.5",
            "-0.0",
            "1e300",
            "1e400",
            ".inf",
            "-.Inf",
            "+.inf",
            ".nan",
            "-.nan",
            "inf",
            "nan",
            "1_000",
            "+-1",
            "3_0",
            "bits:0x7e00",
            "0x",
            "1.",
            ".5",
        ];
        for text in texts {
            let ours = resolve_plain(text);
            let theirs: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
            let same = match (ours, &theirs) {
                (Null, serde_yaml::Value::Null) => true,
                (Bool(a), serde_yaml::Value::Bool(b)) => a == *b,
                (U64(a), serde_yaml::Value::Number(n)) => n.as_u64() == Some(a),
                (I64(a), serde_yaml::Value::Number(n)) => n.as_i64() == Some(a),
                (F64(a), serde_yaml::Value::Number(n)) => {
                    n.as_f64()
                        .is_some_and(|b| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan())
                        && !n.is_i64()
                        && !n.is_u64()
                }
                (Str(a), serde_yaml::Value::String(b)) => a == b,
                // serde_norway's Value has no 128-bit integers: it keeps them as floats.
                (U128(_) | I128(_), _) => true,
                _ => false,
            };
            assert!(same, "`{text}`: ours {ours:?}, serde_norway {theirs:?}");
        }
    }

    #[test]
    fn wide_integers_stay_exact() {
        assert_eq!(resolve_plain("18446744073709551616"), U128(1 << 64));
        assert_eq!(
            resolve_plain("-9223372036854775809"),
            I128(-9_223_372_036_854_775_809)
        );
    }
}
