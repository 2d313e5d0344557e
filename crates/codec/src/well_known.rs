//! The well-known types and their JSON forms, for every direction: which message is which
//! ([`Wkt`]), Timestamp and Duration as their strings within prost-reflect's ranges, FieldMask
//! paths (lowerCamel in JSON, snake_case on the wire), and the field numbers of
//! `struct.proto`, `field_mask.proto` and `wrappers.proto`.

use prost::Message as _;
use prost_reflect::MessageDescriptor;
use prost_types::{Duration, Timestamp};
use serde_json::Value;

/// Field numbers of `google/protobuf/struct.proto`, `field_mask.proto` and `wrappers.proto`.
pub(crate) mod number {
    /// `Struct.fields`, a `map<string, Value>`.
    pub(crate) const STRUCT_FIELDS: u32 = 1;
    /// `ListValue.values`.
    pub(crate) const LIST_VALUES: u32 = 1;
    /// `FieldMask.paths`.
    pub(crate) const FIELD_MASK_PATHS: u32 = 1;
    /// `DoubleValue.value` and the other wrappers'.
    pub(crate) const WRAPPER_VALUE: u32 = 1;
    /// The members of `Value.kind`.
    pub(crate) const NULL_VALUE: u32 = 1;
    pub(crate) const NUMBER_VALUE: u32 = 2;
    pub(crate) const STRING_VALUE: u32 = 3;
    pub(crate) const BOOL_VALUE: u32 = 4;
    pub(crate) const STRUCT_VALUE: u32 = 5;
    pub(crate) const LIST_VALUE: u32 = 6;
}

/// Well-known types whose JSON mapping is special.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wkt {
    Any,
    Timestamp,
    Duration,
    FieldMask,
    Struct,
    Value,
    ListValue,
    Empty,
    /// One of the nine `google.protobuf.*Value` wrappers.
    Wrapper,
}

impl Wkt {
    pub(crate) fn of(desc: &MessageDescriptor) -> Option<Self> {
        Some(match desc.full_name() {
            "google.protobuf.Any" => Self::Any,
            "google.protobuf.Timestamp" => Self::Timestamp,
            "google.protobuf.Duration" => Self::Duration,
            "google.protobuf.FieldMask" => Self::FieldMask,
            "google.protobuf.Struct" => Self::Struct,
            "google.protobuf.Value" => Self::Value,
            "google.protobuf.ListValue" => Self::ListValue,
            "google.protobuf.Empty" => Self::Empty,
            "google.protobuf.DoubleValue"
            | "google.protobuf.FloatValue"
            | "google.protobuf.Int64Value"
            | "google.protobuf.UInt64Value"
            | "google.protobuf.Int32Value"
            | "google.protobuf.UInt32Value"
            | "google.protobuf.BoolValue"
            | "google.protobuf.StringValue"
            | "google.protobuf.BytesValue" => Self::Wrapper,
            _ => return None,
        })
    }

    /// Whether a tool whose RPC message is this type wraps it as `{"value": …}` (docs/design.md §4.1):
    /// its JSON is not an object.
    pub(crate) fn is_value_wrapped_root(self) -> bool {
        !matches!(self, Self::Any | Self::Struct | Self::Empty)
    }
}

/// `value` as a tool root: wrapped as `{"value": …}` when `wrapped` (a value-like well-known
/// type, see [`Wkt::is_value_wrapped_root`]), else itself.
pub(crate) fn as_root(value: Value, wrapped: bool) -> Value {
    if !wrapped {
        return value;
    }
    let mut root = serde_json::Map::with_capacity(1);
    root.insert("value".to_owned(), value);
    Value::Object(root)
}

/// Whether the tool root for `desc` is `{"value": <json>}` rather than the message itself.
pub(crate) fn is_value_wrapped_root(desc: &MessageDescriptor) -> bool {
    Wkt::of(desc).is_some_and(Wkt::is_value_wrapped_root)
}

/// prost-reflect's strict RFC 3339 check (upper-case `T` and `Z`, two-digit offsets with a
/// colon) before `prost_types::Timestamp::from_str`.
fn strict_rfc3339(v: &str) -> bool {
    // `d` in a template is any ASCII digit.
    let fits = |text: &[u8], template: &[u8]| {
        let each =
            |(&c, &t): (&u8, &u8)| (t == b'd' && c.is_ascii_digit()) || (t != b'd' && c == t);
        text.len() == template.len() && text.iter().zip(template).all(each)
    };
    let Some((head, mut rest)) = v.as_bytes().split_at_checked(19) else {
        return false;
    };
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        rest = &fraction[digits..];
    }
    fits(head, b"dddd-dd-ddTdd:dd:dd")
        && (rest == b"Z" || fits(rest, b"+dd:dd") || fits(rest, b"-dd:dd"))
}

/// A FieldMask's body from its JSON string (comma-separated lowerCamel paths), appended to
/// `buf`.
pub(crate) fn field_mask_from_json(text: &str, buf: &mut Vec<u8>) -> Option<()> {
    let mut path = String::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        path.clear();
        field_mask_path_from_json(part, &mut path)?;
        prost::encoding::string::encode(number::FIELD_MASK_PATHS, &path, buf);
    }
    Some(())
}

/// One FieldMask path from its JSON form: lowerCamel → snake_case; an `_` is refused.
fn field_mask_path_from_json(path: &str, out: &mut String) -> Option<()> {
    for (index, part) in path.split('.').enumerate() {
        if index > 0 {
            out.push('.');
        }
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

/// prost-reflect's Timestamp and Duration ranges (`check_timestamp`, `check_duration`).
const MIN_TIMESTAMP_SECONDS: i64 = -62_135_596_800;
const MAX_TIMESTAMP_SECONDS: i64 = 253_402_300_799;
const MAX_DURATION_SECONDS: u64 = 315_576_000_000;
const MAX_DURATION_NANOS: u32 = 999_999_999;

/// Whether `seconds` and `nanos` are within prost-reflect's range for `wkt` (a Timestamp,
/// else a Duration).
fn in_range(wkt: Wkt, seconds: i64, nanos: i32) -> bool {
    if wkt == Wkt::Timestamp {
        (MIN_TIMESTAMP_SECONDS..=MAX_TIMESTAMP_SECONDS).contains(&seconds)
    } else {
        seconds.unsigned_abs() <= MAX_DURATION_SECONDS && nanos.unsigned_abs() <= MAX_DURATION_NANOS
    }
}

/// The body of a Timestamp or Duration (`wkt`) from its JSON string, appended to `buf`, as
/// prost-reflect reads it (a Timestamp in strict RFC 3339); `None` out of range.
pub(crate) fn time_from_json(wkt: Wkt, text: &str, buf: &mut Vec<u8>) -> Option<()> {
    let (seconds, nanos) = match wkt {
        Wkt::Timestamp if strict_rfc3339(text) => {
            let timestamp: Timestamp = text.parse().ok()?;
            (timestamp.seconds, timestamp.nanos)
        }
        Wkt::Duration => {
            let duration: Duration = text.parse().ok()?;
            (duration.seconds, duration.nanos)
        }
        _ => return None,
    };
    // The two messages are laid out alike: `seconds` = 1, `nanos` = 2.
    in_range(wkt, seconds, nanos).then(|| Timestamp { seconds, nanos }.encode_raw(buf))
}

/// A Timestamp's or Duration's (`wkt`) JSON string, or `None` out of range (prost-reflect
/// refuses to write it).
pub(crate) fn time_to_json(wkt: Wkt, seconds: i64, nanos: i32) -> Option<String> {
    in_range(wkt, seconds, nanos).then(|| match wkt {
        Wkt::Timestamp => Timestamp { seconds, nanos }.to_string(),
        _ => Duration { seconds, nanos }.to_string(),
    })
}

/// One FieldMask path in its JSON form, appended to `out`: snake_case → lowerCamel, each
/// dotted part as prost-reflect's `snake_case_to_camel_case` (`None` where it fails).
pub(crate) fn field_mask_path_to_json(path: &str, out: &mut String) -> Option<()> {
    for (index, part) in path.split('.').enumerate() {
        if index > 0 {
            out.push('.');
        }
        snake_to_camel(out, part)?;
    }
    Some(())
}

/// prost-reflect's `snake_case_to_camel_case`: `None` where it fails.
fn snake_to_camel(out: &mut String, part: &str) -> Option<()> {
    let mut upper_next = false;
    for ch in part.chars() {
        if ch.is_ascii_uppercase() {
            return None;
        }
        if upper_next {
            let upper = ch.to_ascii_uppercase();
            if upper == ch {
                return None;
            }
            out.push(upper);
            upper_next = false;
        } else if ch == '_' {
            upper_next = true;
        } else {
            out.push(ch);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn field_mask_paths() {
        let mut out = String::new();
        assert_eq!(
            field_mask_path_from_json("fooBar.bazQux", &mut out),
            Some(())
        );
        assert_eq!(out, "foo_bar.baz_qux");
        assert_eq!(
            field_mask_path_from_json("foo_bar", &mut String::new()),
            None
        );
    }
}
