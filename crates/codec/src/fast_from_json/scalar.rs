//! JSON → scalar values, reading exactly what prost-reflect 0.16's deserializer reads from a
//! `serde_json::Value` (its `dynamic/serde/de/kind.rs` visitors: `visit_u64`, `visit_i64`,
//! `visit_f64`, `visit_str` as a `Value` calls them) and nothing it refuses.

use std::str::FromStr;

use base64::{
    DecodeError, Engine as _, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
};
use serde_json::{Number, Value};

/// A JSON number as serde_json hands it to a visitor.
enum Num {
    U(u64),
    I(i64),
    F(f64),
}

fn num(n: &Number) -> Option<Num> {
    if let Some(u) = n.as_u64() {
        Some(Num::U(u))
    } else if let Some(i) = n.as_i64() {
        Some(Num::I(i))
    } else {
        n.as_f64().map(Num::F)
    }
}

pub(crate) fn double(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => match num(n)? {
            Num::U(u) => Some(u as f64),
            Num::I(i) => Some(i as f64),
            Num::F(f) => Some(f),
        },
        Value::String(s) => match f64::from_str(s) {
            Ok(v) => Some(v),
            Err(_) => match s.as_str() {
                "Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                "NaN" => Some(f64::NAN),
                _ => None,
            },
        },
        _ => None,
    }
}

pub(crate) fn float(value: &Value) -> Option<f32> {
    match value {
        Value::Number(n) => match num(n)? {
            Num::U(u) => Some(u as f32),
            Num::I(i) => Some(i as f32),
            Num::F(f) => {
                if f < f64::from(f32::MIN) || f > f64::from(f32::MAX) {
                    None
                } else {
                    Some(f as f32)
                }
            }
        },
        Value::String(s) => match f32::from_str(s) {
            Ok(v) => Some(v),
            Err(_) => match s.as_str() {
                "Infinity" => Some(f32::INFINITY),
                "-Infinity" => Some(f32::NEG_INFINITY),
                "NaN" => Some(f32::NAN),
                _ => None,
            },
        },
        _ => None,
    }
}

/// An integral `f64` in `[min, max]` (the bounds as the visitors compare them).
fn integral(f: f64, min: f64, max: f64) -> Option<f64> {
    if f.fract() != 0.0 || f < min || f > max {
        None
    } else {
        Some(f)
    }
}

pub(crate) fn int32(value: &Value) -> Option<i32> {
    match value {
        Value::Number(n) => match num(n)? {
            Num::U(u) => i32::try_from(u).ok(),
            Num::I(i) => i32::try_from(i).ok(),
            Num::F(f) => integral(f, f64::from(i32::MIN), f64::from(i32::MAX)).map(|f| f as i32),
        },
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

pub(crate) fn uint32(value: &Value) -> Option<u32> {
    match value {
        Value::Number(n) => match num(n)? {
            Num::U(u) => u32::try_from(u).ok(),
            Num::I(i) => u32::try_from(i).ok(),
            Num::F(f) => integral(f, f64::from(u32::MIN), f64::from(u32::MAX)).map(|f| f as u32),
        },
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

pub(crate) fn int64(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => match num(n)? {
            Num::U(u) => i64::try_from(u).ok(),
            Num::I(i) => Some(i),
            Num::F(f) => integral(f, i64::MIN as f64, i64::MAX as f64).map(|f| f as i64),
        },
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

pub(crate) fn uint64(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => match num(n)? {
            Num::U(u) => Some(u),
            Num::I(i) => u64::try_from(i).ok(),
            Num::F(f) => integral(f, u64::MIN as f64, u64::MAX as f64).map(|f| f as u64),
        },
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// An enum number: a value name, or any `i32` as a JSON integer (not a float, not a numeric
/// string). `NullValue` reads `null` and `"NULL_VALUE"` only.
pub(crate) fn enum_number(
    desc: &prost_reflect::EnumDescriptor,
    null_value: bool,
    value: &Value,
) -> Option<i32> {
    if null_value {
        return match value {
            Value::Null => Some(0),
            Value::String(s) if s == "NULL_VALUE" => Some(0),
            _ => None,
        };
    }
    match value {
        Value::String(s) => desc.get_value_by_name(s).map(|v| v.number()),
        Value::Number(n) => match num(n)? {
            Num::U(u) => i32::try_from(u).ok(),
            Num::I(i) => i32::try_from(i).ok(),
            Num::F(_) => None,
        },
        _ => None,
    }
}

/// Standard base64, or URL-safe when the standard alphabet fails on `-` or `_`; padding
/// optional (prost-reflect's `BytesVisitor`). Text whose last character carries bits past the
/// bytes (`"1e3"`) is left to the old path: prost-reflect drops them, but the normaliser
/// refuses it, and arguments encoded as they came must not get through what the whole way
/// refuses (`arguments.rs`).
pub(crate) fn bytes(s: &str, out: &mut Vec<u8>) -> Option<()> {
    const CONFIG: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, CONFIG);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, CONFIG);
    let start = out.len();
    match STANDARD.decode_vec(s, out) {
        Ok(()) => Some(()),
        Err(DecodeError::InvalidByte(_, b'-' | b'_')) => {
            out.truncate(start);
            URL_SAFE.decode_vec(s, out).ok()
        }
        Err(_) => None,
    }
}

/// prost-reflect's strict RFC 3339 check (upper-case `T` and `Z`, two-digit offsets with a
/// colon) before `prost_types::Timestamp::from_str`.
pub(crate) fn strict_rfc3339(v: &str) -> bool {
    let mut bytes = v.bytes().peekable();
    let digits = |bytes: &mut std::iter::Peekable<std::str::Bytes<'_>>, n: usize| {
        (0..n).all(|_| bytes.next_if(u8::is_ascii_digit).is_some())
    };
    let mut ok = digits(&mut bytes, 4)
        && bytes.next_if_eq(&b'-').is_some()
        && digits(&mut bytes, 2)
        && bytes.next_if_eq(&b'-').is_some()
        && digits(&mut bytes, 2)
        && bytes.next_if_eq(&b'T').is_some()
        && digits(&mut bytes, 2)
        && bytes.next_if_eq(&b':').is_some()
        && digits(&mut bytes, 2)
        && bytes.next_if_eq(&b':').is_some()
        && digits(&mut bytes, 2);
    if ok && bytes.next_if_eq(&b'.').is_some() {
        ok = digits(&mut bytes, 1);
        while bytes.next_if(u8::is_ascii_digit).is_some() {}
    }
    if !ok {
        return false;
    }
    if bytes.next_if(|&c| c == b'+' || c == b'-').is_some() {
        if !(digits(&mut bytes, 2) && bytes.next_if_eq(&b':').is_some() && digits(&mut bytes, 2)) {
            return false;
        }
    } else if bytes.next_if_eq(&b'Z').is_none() {
        return false;
    }
    bytes.peek().is_none()
}

/// One FieldMask path from its JSON form: lowerCamel → snake_case; an `_` is refused.
pub(crate) fn field_mask_path(path: &str, out: &mut String) -> Option<()> {
    let mut parts = path.split('.');
    if let Some(part) = parts.next() {
        camel_to_snake(part, out)?;
    }
    for part in parts {
        out.push('.');
        camel_to_snake(part, out)?;
    }
    Some(())
}

fn camel_to_snake(part: &str, out: &mut String) -> Option<()> {
    for ch in part.chars() {
        if ch.is_ascii_uppercase() {
            out.push('_');
            out.push(ch.to_ascii_lowercase());
        } else if ch == '_' {
            return None;
        } else {
            out.push(ch);
        }
    }
    Some(())
}

/// prost-reflect's Timestamp and Duration ranges.
pub(crate) const MIN_TIMESTAMP_SECONDS: i64 = -62_135_596_800;
pub(crate) const MAX_TIMESTAMP_SECONDS: i64 = 253_402_300_799;
pub(crate) const MAX_DURATION_SECONDS: u64 = 315_576_000_000;
pub(crate) const MAX_DURATION_NANOS: u32 = 999_999_999;

/// A map key in its canonical decimal form (no sign, no leading zero, no `-0`), so that two
/// keys never name one entry (the old path keeps the last of them, unordered).
pub(crate) fn canonical_integer_key(key: &str) -> bool {
    let digits = key.strip_prefix('-').unwrap_or(key);
    let mut chars = digits.bytes();
    match chars.next() {
        Some(b'0') => digits.len() == 1 && digits.len() == key.len(),
        Some(b'1'..=b'9') => chars.all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integers_read_as_prost_reflect_reads_them() {
        let cases: &[(Value, Option<i32>)] = &[
            (json!(1), Some(1)),
            (json!(1.0), Some(1)),
            (json!(1e3), Some(1000)),
            (json!(-0.0), Some(0)),
            (json!(1.5), None),
            (json!(2_147_483_648_u64), None),
            (json!(-2_147_483_648_i64), Some(i32::MIN)),
            (json!("7"), Some(7)),
            (json!("+7"), Some(7)),
            (json!("007"), Some(7)),
            (json!("1e3"), None),
            (json!(" 7"), None),
            (json!(true), None),
            (Value::Null, None),
        ];
        for (value, expected) in cases {
            assert_eq!(int32(value), *expected, "{value}");
        }
        // The range check compares with `u64::MAX as f64` (2^64), which the cast saturates.
        assert_eq!(uint64(&json!(18_446_744_073_709_551_616.0)), Some(u64::MAX));
        assert_eq!(
            int64(&json!(9_007_199_254_740_993_u64)),
            Some(9_007_199_254_740_993)
        );
        assert_eq!(uint32(&json!(-1)), None);
    }

    #[test]
    fn floats_read_as_prost_reflect_reads_them() {
        assert_eq!(float(&json!(1e39)), None);
        assert_eq!(float(&json!("1e39")), Some(f32::INFINITY));
        assert_eq!(double(&json!("-Infinity")), Some(f64::NEG_INFINITY));
        assert_eq!(double(&json!("inf")), Some(f64::INFINITY));
        assert!(double(&json!("NaN")).is_some_and(f64::is_nan));
        // A u64 goes to f32 directly, not through f64.
        assert_eq!(float(&json!(16_777_217_u64)), Some(16_777_217_u64 as f32));
    }

    #[test]
    fn base64_standard_then_url_safe_padding_optional() {
        let cases: &[(&str, Option<&[u8]>)] = &[
            ("YQ==", Some(b"a")),
            ("YQ", Some(b"a")),
            ("YWJj", Some(b"abc")),
            ("-_8", Some(&[0xfb, 0xff])),
            ("+/8", Some(&[0xfb, 0xff])),
            ("+_8", None),
            ("!!", None),
            // Bits past the last byte: left to the old path.
            ("1e3", None),
            ("YR", None),
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            let got = bytes(text, &mut out).map(|()| out);
            assert_eq!(got.as_deref(), *expected, "{text}");
        }
    }

    #[test]
    fn rfc3339_is_strict() {
        for ok in [
            "1972-06-30T23:59:60Z",
            "2019-03-26T14:00:00.9Z",
            "2019-03-26T14:00:00.4999+10:00",
        ] {
            assert!(strict_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2019-03-26t14:00:00Z",
            "2019-03-26T14:00:00z",
            "2019-03-26T14:00:00,999Z",
            "2019-03-26T10:00:00-0400",
            "2019-03-26T14:00:00.Z",
            "2019-03-26 14:00:00Z",
            "+2019-03-26T14:00:00Z",
            "2019-03-26",
        ] {
            assert!(!strict_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn field_mask_paths_and_map_keys() {
        let mut out = String::new();
        assert_eq!(field_mask_path("fooBar.bazQux", &mut out), Some(()));
        assert_eq!(out, "foo_bar.baz_qux");
        assert_eq!(field_mask_path("foo_bar", &mut String::new()), None);
        for (key, canonical) in [
            ("0", true),
            ("10", true),
            ("-1", true),
            ("-0", false),
            ("01", false),
            ("+1", false),
            ("", false),
            ("-", false),
            ("1.0", false),
        ] {
            assert_eq!(canonical_integer_key(key), canonical, "{key}");
        }
    }
}
