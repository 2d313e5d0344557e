//! Schemas of the well-known types, in their protobuf JSON forms (docs/design.md §4.7).
//!
//! | type | schema |
//! |---|---|
//! | Timestamp | `{"type":"string","format":"date-time"}` |
//! | Duration | `{"type":"string","pattern":"^-?[0-9]+(\\.[0-9]{1,9})?s$"}` |
//! | FieldMask | `string` of comma-separated lowerCamel paths |
//! | Struct | `{"type":"object"}` |
//! | Value | `{}` with a description |
//! | ListValue | `{"type":"array","items":{}}` |
//! | Empty | an object without properties |
//! | wrappers | the wrapped scalar's schema (`null` means unset) |
//! | Any | `{"type_url": string, "value": <payload JSON>}`, no `@type` key |
//!
//! As a tool's root, Timestamp, Duration, FieldMask, Value, ListValue and the wrappers are not
//! JSON objects, so they are wrapped as `{"value": …}`.

use prost_reflect::MessageDescriptor;
use serde_json::{Map, Value, json};

/// Pattern of FieldMask strings: comma-separated paths of dot-separated field names, each
/// starting with a letter (a subset of what the runtime accepts, so that every string the
/// schema allows decodes).
pub const FIELD_MASK_PATTERN: &str = "^([A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*)*(,[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*)*)*)?$";

/// Pattern of signed 64-bit integers written as strings.
pub const SIGNED_PATTERN: &str = "^-?[0-9]+$";
/// Pattern of unsigned 64-bit integers written as strings.
pub const UNSIGNED_PATTERN: &str = "^[0-9]+$";
/// Pattern of signed integer map keys: canonical decimal, so that two keys never name one entry.
pub const SIGNED_KEY_PATTERN: &str = "^-?(0|[1-9][0-9]*)$";
/// Pattern of unsigned integer map keys.
pub const UNSIGNED_KEY_PATTERN: &str = "^(0|[1-9][0-9]*)$";
/// Pattern of `google.protobuf.Duration` in JSON.
pub const DURATION_PATTERN: &str = "^-?[0-9]+(\\.[0-9]{1,9})?s$";

/// Whether `message` is a `google.protobuf` type with a fixed schema.
pub fn is_well_known(message: &MessageDescriptor) -> bool {
    schema(message).is_some()
}

/// The fixed schema of a well-known type used as a value, or `None` for other messages.
pub fn schema(message: &MessageDescriptor) -> Option<Value> {
    let name = message.full_name().strip_prefix("google.protobuf.")?;
    Some(match name {
        "Timestamp" => json!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339 timestamp, for example \"2024-05-01T12:30:00Z\".",
        }),
        "Duration" => json!({
            "type": "string",
            "pattern": DURATION_PATTERN,
            "description": "Duration in seconds with an `s` suffix, for example \"1.5s\" or \"300s\".",
        }),
        "FieldMask" => json!({
            "type": "string",
            "description": "Comma-separated field paths in lowerCamelCase, for example \"displayName,address.city\".",
            "pattern": FIELD_MASK_PATTERN,
        }),
        "Struct" => json!({"type": "object", "description": "Any JSON object."}),
        "Value" => json!({"description": "Any JSON value."}),
        "ListValue" => json!({"type": "array", "description": "Any JSON array.", "items": {}}),
        "Empty" => json!({"type": "object", "properties": {}, "additionalProperties": false}),
        "DoubleValue" => json!({"type": "number"}),
        "FloatValue" => float_schema(),
        "Int64Value" => json!({"type": "string", "pattern": SIGNED_PATTERN}),
        "UInt64Value" => json!({"type": "string", "pattern": UNSIGNED_PATTERN}),
        "Int32Value" => int32_schema(),
        "UInt32Value" => uint32_schema(),
        "BoolValue" => json!({"type": "boolean"}),
        "StringValue" => json!({"type": "string"}),
        "BytesValue" => json!({"type": "string", "contentEncoding": "base64"}),
        "Any" => any_schema(),
        _ => return None,
    })
}

// `int32` and `float` name their range by `format` (formats Gemini's schema subset takes) rather
// than spelling it out as `minimum`/`maximum`: a model knows what they hold, and the bounds cost
// about three times the tokens on every such field. The runtime still refuses a value out of
// range, with the same words (its normaliser checks every 32-bit and float value), and a
// `buf.validate` bound is still written as `minimum`/`maximum`. `uint32` keeps its bounds:
// Gemini takes no integer format but `int32` and `int64`.

/// `int32`, `sint32`, `sfixed32`: an integer within the 32-bit range.
pub fn int32_schema() -> Value {
    json!({"type": "integer", "format": "int32"})
}

/// `uint32`, `fixed32`: a non-negative integer within the 32-bit range.
pub fn uint32_schema() -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
}

/// `float`: a number within the finite range of an IEEE 754 single (larger values do not fit).
pub fn float_schema() -> Value {
    json!({"type": "number", "format": "float"})
}

fn any_schema() -> Value {
    json!({
        "type": "object",
        "description": "A message of any type: `type_url` names it, `value` holds it as JSON.",
        "properties": {
            "type_url": {
                "type": "string",
                "description": "The packed message's type, for example \"type.googleapis.com/demo.v1.Note\".",
            },
            "value": {
                "description": "The packed message as JSON, in the same form as this tool uses for that message type.",
            },
        },
        "required": ["type_url"],
        "additionalProperties": false,
    })
}

/// How a well-known type stands at a tool's root.
#[derive(Debug)]
pub enum RootShape {
    /// Not a JSON object: `{"value": <schema>}`.
    Wrapped(Value),
    /// Already an object schema.
    Object(Map<String, Value>),
}

/// The root shape of a well-known type, or `None` for other messages.
pub fn root_shape(message: &MessageDescriptor) -> Option<RootShape> {
    let schema = schema(message)?;
    let name = message.full_name().strip_prefix("google.protobuf.")?;
    Some(match (name, schema) {
        ("Struct", _) => RootShape::Object(
            json!({
                "type": "object",
                "description": "Any JSON object.",
                "properties": {},
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ),
        ("Empty" | "Any", Value::Object(object)) => RootShape::Object(object),
        (_, schema) => RootShape::Wrapped(schema),
    })
}
