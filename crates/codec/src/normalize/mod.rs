//! Loose model input → the canonical shape the tool schemas describe.
//!
//! Accepted alternates (docs/design.md §4.3, §4.5, §4.7), each rewritten to its canonical form:
//!
//! | field | accepted | canonical |
//! |---|---|---|
//! | 32-bit integers | `1`, `1.0`, `"1"` | `1` |
//! | 64-bit integers | `"1"`, JSON integers (exactly) | `"1"` |
//! | float, double | numbers, numeric strings, `"NaN"`, `"Infinity"`, `"-Infinity"` | numbers (the three strings stay) |
//! | bytes | standard or URL-safe base64, padded or not | standard, padded |
//! | enum | names, numbers | names |
//! | real oneof | `{case, value}`, `{"<member>": v}`, `{"which": m, "<m>": v}`, the member flat on the parent | `{case, value}` |
//! | FieldMask | `"a,b"`, `["a", "b"]`, snake_case paths | lowerCamel, comma-separated |
//! | Any | `{type_url, value}`, `{"@type": …, …fields}`, a bare message name as URL | `{type_url, value}` |
//! | wrappers | the scalar, `{"value": scalar}` | the scalar |
//! | messages, lists, maps, Struct, ListValue | also as a JSON string holding the object or array | the object or array |
//!
//! `null` means absent everywhere except in a `google.protobuf.Value`. Property names may be
//! proto names or JSON names; they come out as the tool's naming.
//!
//! Problems the schema cannot see (two oneof members, 64-bit overflow, bad base64, malformed
//! timestamps…) are reported here with their path; the path is then *suppressed*, so schema
//! errors underneath it are not reported twice. Values are never dropped on error, so list
//! indices in later schema errors still match what the model sent.

mod fields;
mod scalar;
mod wkt;

use base64::{
    Engine as _, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
};
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

use crate::descriptor::holds_value;
use crate::path::{JsonPath, MAX_PROBLEMS, Problem};
use crate::well_known::{Wkt, is_value_wrapped_root};

use self::scalar::enum_value;
use self::wkt::{bad_field_mask_path, field_mask};

/// The canonical arguments plus what went wrong on the way.
#[derive(Debug)]
pub(crate) struct Normalized {
    pub(crate) value: Value,
    pub(crate) problems: Vec<Problem>,
    /// Paths whose schema errors are not reported: already reported here, or accepted
    /// alternates the schema cannot express (`"NaN"` for a `number`).
    pub(crate) suppressed: Vec<JsonPath>,
}

/// How the arguments of one tool are read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NormalizeOptions {
    pub(crate) json_names: bool,
    pub(crate) max_depth: usize,
    /// Client-streaming and bidi tools take `{"messages": [<msg>…]}`.
    pub(crate) streaming_input: bool,
}

/// Normalise tool arguments whose request message is `desc`.
pub(crate) fn normalize_arguments(
    desc: &MessageDescriptor,
    args: Map<String, Value>,
    options: NormalizeOptions,
) -> Normalized {
    let mut walker = Normalizer {
        json_names: options.json_names,
        max_depth: options.max_depth,
        path: JsonPath::default(),
        problems: Vec::new(),
        suppressed: Vec::new(),
    };
    let value = if options.streaming_input {
        walker.stream_root(desc, args)
    } else {
        walker.root(desc, args)
    };
    Normalized {
        value,
        problems: walker.problems,
        suppressed: walker.suppressed,
    }
}

/// Depth of a JSON value (a scalar is 0, `{}` is 1), without recursion.
pub(crate) fn json_depth(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Object(map) => {
                max = max.max(depth);
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            Value::Array(items) => {
                max = max.max(depth);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    max
}

struct Normalizer {
    json_names: bool,
    max_depth: usize,
    path: JsonPath,
    problems: Vec<Problem>,
    suppressed: Vec<JsonPath>,
}

const BASE64_ANY_PADDING: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const BASE64_STANDARD_LOOSE: GeneralPurpose =
    GeneralPurpose::new(&alphabet::STANDARD, BASE64_ANY_PADDING);
const BASE64_URL_SAFE_LOOSE: GeneralPurpose =
    GeneralPurpose::new(&alphabet::URL_SAFE, BASE64_ANY_PADDING);

/// Decode standard or URL-safe base64, padded or not.
pub(crate) fn decode_base64_loose(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if text.contains(['-', '_']) {
        BASE64_URL_SAFE_LOOSE.decode(text).ok()
    } else {
        BASE64_STANDARD_LOOSE.decode(text).ok()
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

impl Normalizer {
    /// Report a problem at the current path and suppress schema errors under it.
    fn problem(&mut self, message: impl Into<String>) {
        self.problem_at(self.path.clone(), message);
    }

    /// Report a problem at `path` (up to [`MAX_PROBLEMS`] and one more) and suppress schema
    /// errors under it.
    fn problem_at(&mut self, path: JsonPath, message: impl Into<String>) {
        self.suppressed.push(path.clone());
        if self.problems.len() <= MAX_PROBLEMS {
            self.problems.push(Problem {
                path,
                message: message.into(),
            });
        }
    }

    fn too_deep(&mut self, depth: usize) -> bool {
        let too_deep = depth > self.max_depth;
        if too_deep {
            self.problem(format!(
                "arguments nest deeper than the limit of {} levels",
                self.max_depth
            ));
        }
        too_deep
    }

    fn root(&mut self, desc: &MessageDescriptor, mut args: Map<String, Value>) -> Value {
        if !is_value_wrapped_root(desc) {
            return self.message(desc, Value::Object(args), 1);
        }
        // Timestamp, wrappers, Value…: the tool takes `{"value": <json>}`.
        if let Some(value) = args.remove("value")
            && (!value.is_null() || Wkt::of(desc) == Some(Wkt::Value))
        {
            self.path.push_key("value");
            let value = self.message(desc, value, 2);
            self.path.pop();
            args.insert("value".to_owned(), value);
        }
        Value::Object(args)
    }

    fn stream_root(&mut self, desc: &MessageDescriptor, mut args: Map<String, Value>) -> Value {
        if let Some(messages) = args.remove("messages") {
            self.path.push_key("messages");
            let messages = match self.embedded(messages, '[', 2) {
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (index, item) in items.into_iter().enumerate() {
                        self.path.push_index(index);
                        out.push(self.message(desc, item, 3));
                        self.path.pop();
                    }
                    Value::Array(out)
                }
                other => other,
            };
            self.path.pop();
            args.insert("messages".to_owned(), messages);
        }
        Value::Object(args)
    }

    /// A JSON object or array that arrived as a string is parsed (if it parses and is not
    /// too deep); anything else is returned unchanged for the schema to judge.
    fn embedded(&mut self, value: Value, open: char, depth: usize) -> Value {
        let Value::String(text) = &value else {
            return value;
        };
        if !text.trim_start().starts_with(open) {
            return value;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(parsed) if depth + json_depth(&parsed) <= self.max_depth + 1 => parsed,
            Ok(_) => {
                self.too_deep(usize::MAX);
                value
            }
            Err(_) => value,
        }
    }

    /// A message value (any type, well-known or not) at `depth`.
    fn message(&mut self, desc: &MessageDescriptor, value: Value, depth: usize) -> Value {
        if self.too_deep(depth) {
            return value;
        }
        match Wkt::of(desc) {
            Some(Wkt::Timestamp) => {
                // RFC 3339 allows lower-case `t` and `z`; protobuf's parser wants upper case.
                // A problem quotes what was sent, not the upper-cased copy.
                let expected = "expected an RFC 3339 timestamp such as \"2024-05-01T12:00:00Z\"";
                match value {
                    Value::String(text) => {
                        let upper = Value::String(text.to_ascii_uppercase());
                        if !self.wkt_parses(desc, &upper) {
                            self.problem(format!(
                                "{expected}, got {}",
                                describe(&Value::String(text))
                            ));
                        }
                        upper
                    }
                    other => other,
                }
            }
            Some(Wkt::Duration) => {
                // Friendly: a bare number of seconds.
                let value = match value {
                    Value::Number(seconds) => Value::String(format!("{seconds}s")),
                    other => other,
                };
                self.checked_wkt(
                    desc,
                    value,
                    "expected a duration in seconds with an `s` suffix, such as \"1.5s\"",
                )
            }
            Some(Wkt::FieldMask) => {
                let value = field_mask(value);
                let expected = "expected comma-separated lowerCamel field paths, such as \"displayName,updateTime\"";
                // The decoder takes any dotted text; a path needs a name in every segment.
                if let Some(bad) = value.as_str().and_then(bad_field_mask_path) {
                    self.problem(format!("{expected}; `{bad}` is not a field path"));
                    return value;
                }
                self.checked_wkt(desc, value, expected)
            }
            Some(Wkt::Struct | Wkt::Empty) => self.embedded(value, '{', depth),
            Some(Wkt::ListValue) => self.embedded(value, '[', depth),
            Some(Wkt::Value) => value,
            Some(Wkt::Wrapper) => {
                let inner = match value {
                    Value::Object(mut object)
                        if object.len() == 1 && object.contains_key("value") =>
                    {
                        object.remove("value").unwrap_or(Value::Null)
                    }
                    other => other,
                };
                match desc.fields().next() {
                    Some(field) => self.single(&field.kind(), inner, depth),
                    None => inner,
                }
            }
            Some(Wkt::Any) => self.any(desc, value, depth),
            None => match self.embedded(value, '{', depth) {
                Value::Object(object) => self.fields(desc, object, depth),
                other => other,
            },
        }
    }

    /// A field value: list, map or single.
    fn field(&mut self, field: &FieldDescriptor, value: Value, depth: usize) -> Value {
        let kind = field.kind();
        if field.is_map() {
            let Kind::Message(entry) = &kind else {
                return value;
            };
            let key_kind = entry.map_entry_key_field().kind();
            let value_kind = entry.map_entry_value_field().kind();
            let map = match self.embedded(value, '{', depth) {
                Value::Object(map) if !self.too_deep(depth) => map,
                other => return other,
            };
            let mut out = Map::with_capacity(map.len());
            let mut given: Vec<(String, String)> = Vec::new();
            for (key, value) in map {
                if value.is_null() && !holds_value(&value_kind) {
                    continue;
                }
                self.path.push_key(&key);
                let canonical = self.map_key(&key_kind, &key);
                let value = self.single(&value_kind, value, depth + 1);
                self.path.pop();
                let Some(canonical) = canonical else {
                    continue;
                };
                if let Some((_, first)) = given.iter().find(|(c, _)| *c == canonical) {
                    let message =
                        format!("`{first}` and `{key}` are the same map key; give it once");
                    self.problem_at(self.path.with_key(&key), message);
                    continue;
                }
                given.push((canonical.clone(), key));
                out.insert(canonical, value);
            }
            Value::Object(out)
        } else if field.is_list() {
            let items = match self.embedded(value, '[', depth) {
                Value::Array(items) if !self.too_deep(depth) => items,
                other => return other,
            };
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.into_iter().enumerate() {
                if item.is_null() && !holds_value(&kind) {
                    // Left for the schema to report: a list has no "absent" element.
                    out.push(item);
                    continue;
                }
                self.path.push_index(index);
                out.push(self.single(&kind, item, depth + 1));
                self.path.pop();
            }
            Value::Array(out)
        } else {
            self.single(&kind, value, depth)
        }
    }

    fn single(&mut self, kind: &Kind, value: Value, depth: usize) -> Value {
        match kind {
            Kind::Message(desc) => self.message(desc, value, depth),
            Kind::Enum(desc) => enum_value(desc, value),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                self.int32(value, i128::from(i32::MIN), i128::from(i32::MAX), "int32")
            }
            Kind::Uint32 | Kind::Fixed32 => self.int32(value, 0, i128::from(u32::MAX), "uint32"),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                self.int64(value, i128::from(i64::MIN), i128::from(i64::MAX), "int64")
            }
            Kind::Uint64 | Kind::Fixed64 => self.int64(value, 0, i128::from(u64::MAX), "uint64"),
            Kind::Float => self.float(value, true),
            Kind::Double => self.float(value, false),
            Kind::Bytes => self.bytes(value),
            Kind::Bool | Kind::String => value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_mask_paths_need_a_name_in_every_segment() {
        assert_eq!(bad_field_mask_path("displayName,address.city"), None);
        assert_eq!(bad_field_mask_path(""), None);
        assert_eq!(bad_field_mask_path("a..b"), Some("a..b"));
        assert_eq!(bad_field_mask_path("a,.b"), Some(".b"));
        assert_eq!(bad_field_mask_path("a.1b"), Some("a.1b"));
    }

    #[test]
    fn base64_alphabets_and_padding() {
        for text in ["+/8=", "+/8", "-_8=", "-_8"] {
            assert_eq!(decode_base64_loose(text), Some(vec![0xfb, 0xff]), "{text}");
        }
        assert_eq!(decode_base64_loose("not base64!"), None);
    }

    #[test]
    fn json_depth_counts_containers() {
        assert_eq!(json_depth(&serde_json::json!(1)), 0);
        assert_eq!(json_depth(&serde_json::json!({})), 1);
        assert_eq!(json_depth(&serde_json::json!({"a": [{"b": 1}]})), 3);
    }

    #[test]
    fn field_mask_alternates() {
        assert_eq!(
            field_mask(serde_json::json!(["display_name", "update_time.seconds"])),
            serde_json::json!("displayName,updateTime.seconds")
        );
        assert_eq!(
            field_mask(serde_json::json!("displayName, b")),
            serde_json::json!("displayName,b")
        );
    }
}
