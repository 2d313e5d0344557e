//! Property keys: the JSON key of a field or a oneof, in schemas and in arguments, and the
//! check that no two keys of one message collide once shortened.

use heck::ToLowerCamelCase;
use prost_reflect::{FieldDescriptor, MessageDescriptor, OneofDescriptor};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::names::{self, MAX_PROPERTY_KEY};

/// The property key of `field`: its proto name (JSON name with `json_names`), else its JSON
/// name, else a shortened alias ([`names::property_key`]). The runtime maps arguments and
/// results with this same function.
pub fn field_property_key(field: &FieldDescriptor, json_names: bool) -> String {
    let name = if json_names {
        field.json_name()
    } else {
        field.name()
    };
    names::property_key(name, field.json_name()).into_owned()
}

/// The property key of a real oneof, as [`field_property_key`] (the JSON name of a oneof is
/// its lowerCamel name).
pub fn oneof_property_key(oneof: &OneofDescriptor, json_names: bool) -> String {
    let camel = oneof.name().to_lower_camel_case();
    let name = if json_names {
        camel.as_str()
    } else {
        oneof.name()
    };
    names::property_key(name, &camel).into_owned()
}

/// Two fields (or a field and a oneof) of one message with the same property key, after
/// shortening, cannot be told apart: an error naming the message.
pub(super) fn check_unique_key(
    properties: &Map<String, Value>,
    key: &str,
    message: &MessageDescriptor,
    element: &str,
) -> Result<()> {
    if properties.contains_key(key) {
        return Err(Error::Unsupported {
            element: message.full_name().to_owned(),
            reason: format!(
                "`{element}` has the property name `{key}`, which another field of the message \
                 already has once names are shortened to {MAX_PROPERTY_KEY} characters; rename \
                 one of them, or hide it with (rust_mcp.field).hidden"
            ),
        });
    }
    Ok(())
}
