//! `DynamicMessage` → canonical shape (docs/design.md §4.9), through protojson.
//!
//! prost-reflect writes protojson with 64-bit integers as strings, enum names, non-finite
//! floats as `"NaN"`/`"Infinity"` and default-valued fields skipped (unless asked). This
//! walker then reshapes what differs from the schema: oneof members become
//! `{"<oneof>": {"case": …, "value": …}}`, `Any` becomes `{type_url, value}`, and a
//! value-wrapped root becomes `{"value": …}`. Extension fields, which no schema lists, are
//! dropped.

use std::borrow::Cow;

use prost_reflect::{
    DynamicMessage, FieldDescriptor, MessageDescriptor, ReflectMessage as _, SerializeOptions,
};
use serde_json::{Map, Value};

use crate::descriptor::{
    field_prop, find_field, map_message_values, oneof_prop, real_oneof, type_url_message_name,
};
use crate::number::whole;
use crate::well_known::{Wkt, as_root, is_value_wrapped_root};

/// How results are written.
#[derive(Debug, Clone, Copy)]
pub struct ToJsonOptions {
    /// Properties are the fields' JSON names rather than their proto names.
    pub json_names: bool,
    /// Fields at their default value are written too.
    pub emit_defaults: bool,
}

/// Encode a response message as a tool result root.
pub(crate) fn root_to_json(
    message: &DynamicMessage,
    options: ToJsonOptions,
) -> Result<Value, String> {
    let desc = message.descriptor();
    let value = message_to_json(message, options)?;
    Ok(as_root(value, is_value_wrapped_root(&desc)))
}

/// Encode one message (not a tool root), e.g. an element of a server stream.
pub(crate) fn message_to_json(
    message: &DynamicMessage,
    options: ToJsonOptions,
) -> Result<Value, String> {
    let serialize = SerializeOptions::new()
        .stringify_64_bit_integers(true)
        .use_proto_field_name(!options.json_names)
        .skip_default_fields(!options.emit_defaults);
    let json = message
        .serialize_with_options(serde_json::value::Serializer, &serialize)
        .map_err(|e| e.to_string())?;
    Ok(canonical_message(
        &message.descriptor(),
        json,
        options.json_names,
    ))
}

fn canonical_message(desc: &MessageDescriptor, value: Value, json_names: bool) -> Value {
    match Wkt::of(desc) {
        Some(Wkt::Any) => canonical_any(desc, value, json_names),
        Some(Wkt::Struct | Wkt::Value | Wkt::ListValue) => integral_numbers(value),
        Some(_) => value,
        None => {
            let Value::Object(object) = value else {
                return value;
            };
            let mut out = Map::with_capacity(object.len());
            for (key, value) in object {
                let Some(field) = find_field(desc, &key, json_names) else {
                    continue;
                };
                let value = canonical_field(&field, value, json_names);
                // The schema's key: the alias when the name is too long for one.
                let key = match field_prop(&field, json_names) {
                    Cow::Borrowed(prop) if prop == key => key,
                    prop => prop.into_owned(),
                };
                if let Some(oneof) = real_oneof(&field) {
                    let mut wrapped = Map::with_capacity(2);
                    wrapped.insert("case".to_owned(), Value::String(key));
                    wrapped.insert("value".to_owned(), value);
                    out.insert(oneof_prop(&oneof, json_names), Value::Object(wrapped));
                } else {
                    out.insert(key, value);
                }
            }
            Value::Object(out)
        }
    }
}

fn canonical_field(field: &FieldDescriptor, value: Value, json_names: bool) -> Value {
    map_message_values(field, value, |desc, v| {
        canonical_message(desc, v, json_names)
    })
}

fn canonical_any(desc: &MessageDescriptor, value: Value, json_names: bool) -> Value {
    let Value::Object(mut object) = value else {
        return value;
    };
    let Some(Value::String(url)) = object.remove("@type") else {
        // An empty Any serializes without a type.
        return Value::Object(object);
    };
    let Some(payload_desc) = desc
        .parent_pool()
        .get_message_by_name(type_url_message_name(&url))
    else {
        return Value::Object(object);
    };
    let payload = if Wkt::of(&payload_desc).is_some() {
        object.remove("value").unwrap_or(Value::Null)
    } else {
        Value::Object(object)
    };
    let mut out = Map::with_capacity(2);
    out.insert("type_url".to_owned(), Value::String(url));
    out.insert(
        "value".to_owned(),
        canonical_message(&payload_desc, payload, json_names),
    );
    Value::Object(out)
}

/// `Struct`/`Value` numbers are doubles; prost-reflect writes `1` as `1.0`. Integral values
/// that a double holds exactly are written as integers, the way protojson does.
fn integral_numbers(value: Value) -> Value {
    // Iterative: a Struct from a backend may nest deeply.
    let mut value = value;
    let mut stack: Vec<&mut Value> = vec![&mut value];
    while let Some(current) = stack.pop() {
        match current {
            Value::Number(number) => {
                if let Some(n) = number.as_f64().filter(|_| number.is_f64()).and_then(whole) {
                    // `whole` stops at 2^53, so the `i64` holds it.
                    *current = Value::from(n as i64);
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    value
}

/// Clears the fields the output schema leaves out, at any depth, so that results never carry
/// hidden or `INPUT_ONLY` data.
pub(crate) fn clear_omitted(message: &mut DynamicMessage, omitted: &[Cow<'static, str>]) {
    let fields: Vec<_> = message.fields().map(|(field, _)| field).collect();
    for field in fields {
        if omitted.iter().any(|name| name == field.full_name()) {
            message.clear_field(&field);
            continue;
        }
        match message.get_field_mut(&field) {
            prost_reflect::Value::Message(inner) => clear_omitted(inner, omitted),
            prost_reflect::Value::List(items) => {
                for item in items {
                    if let prost_reflect::Value::Message(inner) = item {
                        clear_omitted(inner, omitted);
                    }
                }
            }
            prost_reflect::Value::Map(entries) => {
                for value in entries.values_mut() {
                    if let prost_reflect::Value::Message(inner) = value {
                        clear_omitted(inner, omitted);
                    }
                }
            }
            _ => {}
        }
    }
}
