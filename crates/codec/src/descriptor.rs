//! What the JSON mapping needs to know of descriptors: the property names of fields and
//! oneofs, and the lookups a loose key needs.

use std::borrow::Cow;

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, OneofDescriptor};
use serde_json::Value;

/// The oneof a field belongs to, unless it is a proto3 `optional` (synthetic oneof): those
/// are plain fields in the JSON shape.
pub(crate) fn real_oneof(field: &FieldDescriptor) -> Option<OneofDescriptor> {
    field
        .containing_oneof()
        .filter(|oneof| !oneof.is_synthetic())
}

/// The property name of a field in the canonical shape: the proto name (JSON name with
/// `json_names`), or the JSON name or a shortened alias when that is not a portable key. The
/// plugin writes schemas with the very same function ([`tonic_mcp_schema::names::property_key`]).
pub(crate) fn field_prop(field: &FieldDescriptor, json_names: bool) -> Cow<'_, str> {
    let name = if json_names {
        field.json_name()
    } else {
        field.name()
    };
    tonic_mcp_schema::names::property_key(name, field.json_name())
}

/// The property name of a real oneof in the canonical shape (see [`field_prop`]).
pub(crate) fn oneof_prop(oneof: &OneofDescriptor, json_names: bool) -> String {
    tonic_mcp_schema::json_schema::oneof_property_key(oneof, json_names)
}

/// A field by proto name, JSON name or property key (the alias of a long name). The names of
/// the tool's naming come first (JSON names with `json_names`, else proto names): where one
/// field's JSON name is another's proto name, the key means the field the listed schema gives
/// it to.
pub(crate) fn find_field(
    desc: &MessageDescriptor,
    key: &str,
    json_names: bool,
) -> Option<FieldDescriptor> {
    let by_json = || desc.get_field_by_json_name(key);
    let by_name = || desc.get_field_by_name(key);
    let named = if json_names {
        by_json().or_else(by_name)
    } else {
        by_name().or_else(by_json)
    };
    named.or_else(|| desc.fields().find(|field| is_alias_of(field, key)))
}

/// Whether `key` is the shortened property key of a field whose names are not portable keys.
fn is_alias_of(field: &FieldDescriptor, key: &str) -> bool {
    key.len() <= tonic_mcp_schema::names::MAX_PROPERTY_KEY
        && !tonic_mcp_schema::names::is_portable_property_key(field.name())
        && (field_prop(field, false) == key || field_prop(field, true) == key)
}

/// A real oneof by proto name, lowerCamel name or property key.
pub(crate) fn find_oneof(desc: &MessageDescriptor, key: &str) -> Option<OneofDescriptor> {
    desc.oneofs()
        .filter(|oneof| !oneof.is_synthetic())
        .find(|oneof| {
            oneof.name() == key
                || lower_camel(oneof.name()) == key
                || oneof_prop(oneof, false) == key
                || oneof_prop(oneof, true) == key
        })
}

/// A member of `oneof` by proto name, JSON name or property key, the names of the tool's
/// naming first (as [`find_field`]).
pub(crate) fn find_member(
    oneof: &OneofDescriptor,
    key: &str,
    json_names: bool,
) -> Option<FieldDescriptor> {
    let named = |json: bool| {
        oneof.fields().find(|field| {
            key == if json {
                field.json_name()
            } else {
                field.name()
            }
        })
    };
    named(json_names)
        .or_else(|| named(!json_names))
        .or_else(|| oneof.fields().find(|field| is_alias_of(field, key)))
}

/// protoc's JSON name algorithm: drop underscores, upper-case the letter after each one.
pub(crate) fn lower_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper_next = false;
    for ch in name.chars() {
        if ch == '_' {
            upper_next = true;
        } else if upper_next {
            out.push(ch.to_ascii_uppercase());
            upper_next = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// Whether a field holds `google.protobuf.Value`, where JSON `null` is a value, not "absent".
pub(crate) fn holds_value(kind: &Kind) -> bool {
    matches!(kind, Kind::Message(m) if m.full_name() == "google.protobuf.Value")
}

/// Whether JSON `null` is a value of `kind`, not "absent": a `google.protobuf.Value`, or a
/// `google.protobuf.NullValue`, whose only value it is.
pub(crate) fn null_is_a_value(kind: &Kind) -> bool {
    holds_value(kind)
        || matches!(kind, Kind::Enum(e) if e.full_name() == "google.protobuf.NullValue")
}

/// Prefix used when an `Any` type URL is given as a bare message name.
pub(crate) const TYPE_URL_PREFIX: &str = "type.googleapis.com/";

/// The message name in an `Any` type URL (everything after the last `/`).
pub(crate) fn type_url_message_name(type_url: &str) -> &str {
    type_url.rsplit('/').next().unwrap_or(type_url)
}

/// Applies `convert` to every message a field's JSON value holds: the value itself, each list
/// item, or each map value. Fields that hold no messages are returned unchanged.
pub(crate) fn map_message_values(
    field: &FieldDescriptor,
    value: Value,
    convert: impl Fn(&MessageDescriptor, Value) -> Value,
) -> Value {
    let kind = field.kind();
    let Kind::Message(desc) = &kind else {
        return value;
    };
    if field.is_map() {
        let value_kind = desc.map_entry_value_field().kind();
        let Kind::Message(value_desc) = &value_kind else {
            return value;
        };
        match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (k, convert(value_desc, v)))
                    .collect(),
            ),
            other => other,
        }
    } else if field.is_list() {
        match value {
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|item| convert(desc, item)).collect())
            }
            other => other,
        }
    } else {
        convert(desc, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_camel_matches_protoc() {
        for (input, expected) in [
            ("author_id", "authorId"),
            ("filter", "filter"),
            ("a_b_c", "aBC"),
            ("already_camelCase", "alreadyCamelCase"),
            ("trailing_", "trailing"),
            ("x2_y", "x2Y"),
        ] {
            assert_eq!(lower_camel(input), expected, "{input}");
        }
    }

    #[test]
    fn type_url_names() {
        assert_eq!(
            type_url_message_name("type.googleapis.com/demo.v1.Note"),
            "demo.v1.Note"
        );
        assert_eq!(type_url_message_name("demo.v1.Note"), "demo.v1.Note");
    }
}
