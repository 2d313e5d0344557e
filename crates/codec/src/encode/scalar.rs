//! JSON → scalar values, reading exactly what prost-reflect 0.16's deserializer reads from a
//! `serde_json::Value` (its `dynamic/serde/de/kind.rs` visitors: `visit_u64`, `visit_i64`,
//! `visit_f64`, `visit_str` as a `Value` calls them) and nothing it refuses; and the writers of
//! the scalars, without key or with it.

use std::str::FromStr;

use base64::{
    DecodeError, Engine as _, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
};
use prost::encoding::{WireType, encode_key, encode_varint};

use crate::scalar_kind::ScalarKind;

/// A JSON scalar as serde hands it to a visitor, from text or from a `Value` alike.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(&'a str),
}

pub(crate) fn double(value: Json<'_>) -> Option<f64> {
    match value {
        Json::U64(u) => Some(u as f64),
        Json::I64(i) => Some(i as f64),
        Json::F64(f) => Some(f),
        Json::Str(s) => match f64::from_str(s) {
            Ok(v) => Some(v),
            Err(_) => match s {
                "Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                "NaN" => Some(f64::NAN),
                _ => None,
            },
        },
        Json::Null | Json::Bool(_) => None,
    }
}

pub(crate) fn float(value: Json<'_>) -> Option<f32> {
    match value {
        Json::U64(u) => Some(u as f32),
        Json::I64(i) => Some(i as f32),
        Json::F64(f) => {
            if f < f64::from(f32::MIN) || f > f64::from(f32::MAX) {
                None
            } else {
                Some(f as f32)
            }
        }
        Json::Str(s) => match f32::from_str(s) {
            Ok(v) => Some(v),
            Err(_) => match s {
                "Infinity" => Some(f32::INFINITY),
                "-Infinity" => Some(f32::NEG_INFINITY),
                "NaN" => Some(f32::NAN),
                _ => None,
            },
        },
        Json::Null | Json::Bool(_) => None,
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

pub(crate) fn int32(value: Json<'_>) -> Option<i32> {
    match value {
        Json::U64(u) => i32::try_from(u).ok(),
        Json::I64(i) => i32::try_from(i).ok(),
        Json::F64(f) => integral(f, f64::from(i32::MIN), f64::from(i32::MAX)).map(|f| f as i32),
        Json::Str(s) => s.parse().ok(),
        Json::Null | Json::Bool(_) => None,
    }
}

pub(crate) fn uint32(value: Json<'_>) -> Option<u32> {
    match value {
        Json::U64(u) => u32::try_from(u).ok(),
        Json::I64(i) => u32::try_from(i).ok(),
        Json::F64(f) => integral(f, f64::from(u32::MIN), f64::from(u32::MAX)).map(|f| f as u32),
        Json::Str(s) => s.parse().ok(),
        Json::Null | Json::Bool(_) => None,
    }
}

pub(crate) fn int64(value: Json<'_>) -> Option<i64> {
    match value {
        Json::U64(u) => i64::try_from(u).ok(),
        Json::I64(i) => Some(i),
        Json::F64(f) => integral(f, i64::MIN as f64, i64::MAX as f64).map(|f| f as i64),
        Json::Str(s) => s.parse().ok(),
        Json::Null | Json::Bool(_) => None,
    }
}

pub(crate) fn uint64(value: Json<'_>) -> Option<u64> {
    match value {
        Json::U64(u) => Some(u),
        Json::I64(i) => u64::try_from(i).ok(),
        Json::F64(f) => integral(f, u64::MIN as f64, u64::MAX as f64).map(|f| f as u64),
        Json::Str(s) => s.parse().ok(),
        Json::Null | Json::Bool(_) => None,
    }
}

/// An enum number: a value name, or any `i32` as a JSON integer (not a float, not a numeric
/// string). `NullValue` reads `null` and `"NULL_VALUE"` only.
pub(crate) fn enum_number(
    desc: &prost_reflect::EnumDescriptor,
    null_value: bool,
    value: Json<'_>,
) -> Option<i32> {
    if null_value {
        return match value {
            Json::Null | Json::Str("NULL_VALUE") => Some(0),
            _ => None,
        };
    }
    match value {
        Json::Str(s) => desc.get_value_by_name(s).map(|v| v.number()),
        Json::U64(u) => i32::try_from(u).ok(),
        Json::I64(i) => i32::try_from(i).ok(),
        Json::F64(_) | Json::Null | Json::Bool(_) => None,
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

/// The bytes of a varint and how many there are.
fn varint(mut value: u64) -> ([u8; 10], usize) {
    let mut out = [0u8; 10];
    let mut n = 0;
    for slot in &mut out {
        n += 1;
        if value < 0x80 {
            *slot = value as u8;
            break;
        }
        *slot = (value as u8 & 0x7f) | 0x80;
        value >>= 7;
    }
    (out, n)
}

/// Opens a length-delimited body in `buf`: a one-byte length slot. Returns where the body
/// starts.
pub(crate) fn open(buf: &mut Vec<u8>) -> usize {
    buf.push(0);
    buf.len()
}

/// Closes the body opened at `start`, widening the slot when the length needs it.
pub(crate) fn close(buf: &mut Vec<u8>, start: usize) -> Option<()> {
    let len = buf.len().checked_sub(start)?;
    if len < 0x80 {
        *buf.get_mut(start.checked_sub(1)?)? = len as u8;
        return Some(());
    }
    let (bytes, n) = varint(len as u64);
    let head = bytes.get(..n)?;
    buf.splice(start.checked_sub(1)?..start, head.iter().copied());
    Some(())
}

/// A length-delimited string with its key.
pub(crate) fn string_field(buf: &mut Vec<u8>, number: u32, text: &str) {
    encode_key(number, WireType::LengthDelimited, buf);
    encode_varint(text.len() as u64, buf);
    buf.extend_from_slice(text.as_bytes());
}

/// A scalar with its key; an implicit-presence default is left out.
pub(crate) fn scalar_field(
    buf: &mut Vec<u8>,
    number: u32,
    kind: ScalarKind,
    presence: bool,
    value: Json<'_>,
) -> Option<()> {
    let key_at = buf.len();
    encode_key(number, wire_type(kind), buf);
    let is_default = scalar_raw(buf, kind, value)?;
    if is_default && !presence {
        buf.truncate(key_at);
    }
    Some(())
}

/// A map entry's key (`key`, as a JSON property name) with its key number; an
/// implicit-presence default is left out. Integer keys must be in canonical decimal form, so
/// that two keys never name one entry (the old path keeps the last of them, unordered).
pub(crate) fn map_key(
    buf: &mut Vec<u8>,
    kind: ScalarKind,
    presence: bool,
    key: &str,
) -> Option<()> {
    let value = match kind {
        ScalarKind::String => Json::Str(key),
        ScalarKind::Bool => Json::Bool(key.parse().ok()?),
        ScalarKind::Double | ScalarKind::Float | ScalarKind::Bytes => return None,
        _ if canonical_integer_key(key) => Json::Str(key),
        _ => return None,
    };
    scalar_field(buf, super::MAP_KEY, kind, presence, value)
}

/// Writes a scalar without key; returns whether it is the type's default (zero).
pub(crate) fn scalar_raw(buf: &mut Vec<u8>, kind: ScalarKind, value: Json<'_>) -> Option<bool> {
    Some(match kind {
        ScalarKind::Double => {
            let v = double(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0.0
        }
        ScalarKind::Float => {
            let v = float(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0.0
        }
        ScalarKind::Int32 => {
            let v = int32(value)?;
            encode_varint(i64::from(v) as u64, buf);
            v == 0
        }
        ScalarKind::Sint32 => {
            let v = int32(value)?;
            encode_varint(u64::from(((v << 1) ^ (v >> 31)) as u32), buf);
            v == 0
        }
        ScalarKind::Sfixed32 => {
            let v = int32(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        ScalarKind::Int64 => {
            let v = int64(value)?;
            encode_varint(v as u64, buf);
            v == 0
        }
        ScalarKind::Sint64 => {
            let v = int64(value)?;
            encode_varint(((v << 1) ^ (v >> 63)) as u64, buf);
            v == 0
        }
        ScalarKind::Sfixed64 => {
            let v = int64(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        ScalarKind::Uint32 => {
            let v = uint32(value)?;
            encode_varint(u64::from(v), buf);
            v == 0
        }
        ScalarKind::Fixed32 => {
            let v = uint32(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        ScalarKind::Uint64 => {
            let v = uint64(value)?;
            encode_varint(v, buf);
            v == 0
        }
        ScalarKind::Fixed64 => {
            let v = uint64(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        ScalarKind::Bool => {
            let Json::Bool(v) = value else {
                return None;
            };
            buf.push(u8::from(v));
            !v
        }
        ScalarKind::String => {
            let Json::Str(text) = value else {
                return None;
            };
            encode_varint(text.len() as u64, buf);
            buf.extend_from_slice(text.as_bytes());
            text.is_empty()
        }
        ScalarKind::Bytes => {
            let Json::Str(text) = value else {
                return None;
            };
            // Decoded into place behind a one-byte length slot.
            let start = open(buf);
            bytes(text, buf)?;
            let empty = buf.len() == start;
            close(buf, start)?;
            empty
        }
    })
}

/// The wire type of a scalar kind.
pub(crate) fn wire_type(kind: ScalarKind) -> WireType {
    match kind {
        ScalarKind::Double | ScalarKind::Fixed64 | ScalarKind::Sfixed64 => WireType::SixtyFourBit,
        ScalarKind::Float | ScalarKind::Fixed32 | ScalarKind::Sfixed32 => WireType::ThirtyTwoBit,
        ScalarKind::String | ScalarKind::Bytes => WireType::LengthDelimited,
        _ => WireType::Varint,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// `value` as serde hands it to a visitor.
    fn tok(value: &Value) -> Json<'_> {
        match value {
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => n
                .as_u64()
                .map(Json::U64)
                .or_else(|| n.as_i64().map(Json::I64))
                .or_else(|| n.as_f64().map(Json::F64))
                .unwrap_or(Json::Null),
            Value::String(s) => Json::Str(s),
            _ => Json::Null,
        }
    }

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
            assert_eq!(int32(tok(value)), *expected, "{value}");
        }
        // The range check compares with `u64::MAX as f64` (2^64), which the cast saturates.
        assert_eq!(
            uint64(tok(&json!(18_446_744_073_709_551_616.0))),
            Some(u64::MAX)
        );
        assert_eq!(
            int64(tok(&json!(9_007_199_254_740_993_u64))),
            Some(9_007_199_254_740_993)
        );
        assert_eq!(uint32(tok(&json!(-1))), None);
    }

    #[test]
    fn floats_read_as_prost_reflect_reads_them() {
        assert_eq!(float(tok(&json!(1e39))), None);
        assert_eq!(float(tok(&json!("1e39"))), Some(f32::INFINITY));
        assert_eq!(double(tok(&json!("-Infinity"))), Some(f64::NEG_INFINITY));
        assert_eq!(double(tok(&json!("inf"))), Some(f64::INFINITY));
        assert!(double(tok(&json!("NaN"))).is_some_and(f64::is_nan));
        // A u64 goes to f32 directly, not through f64.
        assert_eq!(
            float(tok(&json!(16_777_217_u64))),
            Some(16_777_217_u64 as f32)
        );
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
    fn map_keys() {
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
