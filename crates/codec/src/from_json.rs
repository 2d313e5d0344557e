//! Canonical shape → `DynamicMessage`, through protojson.
//!
//! The canonical shape differs from protojson in three places only, which this walker maps:
//! oneofs (`{case, value}` → the member on the parent), `Any` (`{type_url, value}` → `@type`
//! plus the payload) and the tool root of value-wrapped types (`{"value": x}` → `x`).
//! Everything else (64-bit strings, enum names, base64, well-known-type strings) is already
//! protojson, which prost-reflect's deserializer reads. Fields are handed to it by their JSON
//! names, which it looks up first: a key means the field it named in the tool's naming
//! (`json_names`), even where one field's JSON name is another's proto name.

use prost_reflect::{DeserializeOptions, DynamicMessage, FieldDescriptor, MessageDescriptor};
use serde_json::{Map, Value};

use crate::descriptor::{
    find_field, find_member, find_oneof, map_message_values, type_url_message_name,
};
use crate::well_known::{Wkt, is_value_wrapped_root};

const OPTIONS: DeserializeOptions = DeserializeOptions::new().deny_unknown_fields(true);

/// Decode canonical tool arguments (already validated) into a message of type `desc`; their
/// properties are JSON names with `json_names`, else proto names.
pub(crate) fn root_from_json(
    desc: &MessageDescriptor,
    canonical: Value,
    json_names: bool,
) -> Result<DynamicMessage, String> {
    let json = match canonical {
        Value::Object(mut object) if is_value_wrapped_root(desc) => {
            object.remove("value").unwrap_or(Value::Null)
        }
        other => other,
    };
    message_from_json(desc, json, json_names)
}

/// Decode one canonical message value (not a tool root) of type `desc`, named as
/// [`root_from_json`]'s.
pub(crate) fn message_from_json(
    desc: &MessageDescriptor,
    canonical: Value,
    json_names: bool,
) -> Result<DynamicMessage, String> {
    let json = protojson_message(desc, canonical, json_names);
    DynamicMessage::deserialize_with_options(desc.clone(), json, &OPTIONS)
        .map_err(|e| e.to_string())
}

fn protojson_message(desc: &MessageDescriptor, value: Value, json_names: bool) -> Value {
    match Wkt::of(desc) {
        Some(Wkt::Any) => protojson_any(desc, value, json_names),
        Some(_) => value,
        None => {
            let Value::Object(object) = value else {
                return value;
            };
            let mut out = Map::with_capacity(object.len());
            for (key, value) in object {
                if let Some(field) = find_field(desc, &key, json_names) {
                    // protojson knows the JSON name, not a shortened alias.
                    let key = if key == field.json_name() {
                        key
                    } else {
                        field.json_name().to_owned()
                    };
                    out.insert(key, protojson_field(&field, value, json_names));
                } else if let Some(oneof) = find_oneof(desc, &key) {
                    let Value::Object(mut wrapped) = value else {
                        continue;
                    };
                    let member = wrapped
                        .get("case")
                        .and_then(Value::as_str)
                        .and_then(|case| find_member(&oneof, case, json_names));
                    if let Some(member) = member {
                        let value = wrapped.remove("value").unwrap_or(Value::Null);
                        out.insert(
                            member.json_name().to_owned(),
                            protojson_field(&member, value, json_names),
                        );
                    }
                } else {
                    out.insert(key, value);
                }
            }
            Value::Object(out)
        }
    }
}

fn protojson_field(field: &FieldDescriptor, value: Value, json_names: bool) -> Value {
    map_message_values(field, value, |desc, value| {
        protojson_message(desc, value, json_names)
    })
}

fn protojson_any(desc: &MessageDescriptor, value: Value, json_names: bool) -> Value {
    let Value::Object(mut object) = value else {
        return value;
    };
    let Some(Value::String(url)) = object.remove("type_url") else {
        return Value::Object(object);
    };
    let payload = object.remove("value").unwrap_or(Value::Null);
    let payload_desc = desc
        .parent_pool()
        .get_message_by_name(type_url_message_name(&url));
    let mut out = Map::new();
    out.insert("@type".to_owned(), Value::String(url));
    // Without its type, the deserializer reports the unknown type.
    let Some(payload_desc) = payload_desc else {
        return Value::Object(out);
    };
    let payload = protojson_message(&payload_desc, payload, json_names);
    if Wkt::of(&payload_desc).is_some() {
        out.insert("value".to_owned(), payload);
    } else if let Value::Object(fields) = payload {
        out.extend(fields);
    }
    Value::Object(out)
}
