//! Well-known types with a string or object form of their own: Timestamp, Duration and
//! FieldMask checked by their decoder, FieldMask alternates, and `Any` in both its forms.

use prost_reflect::{DynamicMessage, MessageDescriptor};
use serde_json::{Map, Value};

use super::{Normalizer, describe};
use crate::descriptor::{TYPE_URL_PREFIX, lower_camel, type_url_message_name};
use crate::path::is_plain_key;
use crate::well_known::Wkt;

impl Normalizer {
    /// Timestamp, Duration and FieldMask strings are checked by the decoder that will read
    /// them, so the check and the decoding can never disagree.
    pub(super) fn checked_wkt(
        &mut self,
        desc: &MessageDescriptor,
        value: Value,
        expected: &str,
    ) -> Value {
        if !self.wkt_parses(desc, &value) {
            self.problem(format!("{expected}, got {}", describe(&value)));
        }
        value
    }

    /// Whether a string value decodes as `desc`; non-strings are left to the schema.
    pub(super) fn wkt_parses(&self, desc: &MessageDescriptor, value: &Value) -> bool {
        !value.is_string() || DynamicMessage::deserialize(desc.clone(), value).is_ok()
    }

    /// `Any` as `{type_url, value}` or protojson's `{"@type": …, …}`.
    pub(super) fn any(&mut self, desc: &MessageDescriptor, value: Value, depth: usize) -> Value {
        let mut object = match self.embedded(value, '{', depth) {
            Value::Object(object) => object,
            other => return other,
        };
        let (type_url, at_type) = if let Some(url) = object.remove("@type") {
            (url, true)
        } else if let Some(url) = object
            .remove("type_url")
            .or_else(|| object.remove("typeUrl"))
        {
            (url, false)
        } else {
            // The schema reports the missing `type_url`.
            return Value::Object(object);
        };
        let type_key = if at_type { "@type" } else { "type_url" };
        let Value::String(mut url) = type_url else {
            self.problem_at(
                self.path.with_key(type_key),
                format!(
                    "expected a type URL such as \"type.googleapis.com/pkg.Message\", got {}",
                    describe(&type_url)
                ),
            );
            object.insert("type_url".to_owned(), type_url);
            return Value::Object(object);
        };
        if !url.contains('/') {
            url = format!("{TYPE_URL_PREFIX}{url}");
        }
        let name = type_url_message_name(&url).to_owned();
        let Some(payload_desc) = desc.parent_pool().get_message_by_name(&name) else {
            self.problem_at(
                self.path.with_key(type_key),
                format!("unknown message type `{name}`: it is not among this service's types"),
            );
            object.insert("type_url".to_owned(), Value::String(url));
            return Value::Object(object);
        };

        let payload = if Wkt::of(&payload_desc).is_some() || !at_type {
            object.remove("value")
        } else {
            // protojson: the payload's fields sit next to `@type`.
            Some(Value::Object(std::mem::take(&mut object)))
        };
        let payload = match payload {
            Some(Value::Null) | None if Wkt::of(&payload_desc).is_none() => {
                Value::Object(Map::new())
            }
            Some(payload) => payload,
            None => {
                self.problem(format!("missing `value` for the `{name}` payload"));
                Value::Null
            }
        };
        self.path.push_key("value");
        let problems_before = self.problems.len();
        let payload = self.message(&payload_desc, payload, depth + 1);
        // The schema cannot describe the payload (its type is only known here), so a payload
        // the decoder would refuse is reported here, at its own path, not at the root.
        if self.problems.len() == problems_before
            && let Err(error) =
                crate::from_json::message_from_json(&payload_desc, payload.clone(), self.json_names)
        {
            self.problem(format!("not a valid `{name}` payload: {error}"));
        }
        self.path.pop();

        let mut out = Map::with_capacity(2 + object.len());
        out.insert("type_url".to_owned(), Value::String(url));
        out.insert("value".to_owned(), payload);
        // Anything else is left for the schema to report.
        out.extend(object);
        Value::Object(out)
    }
}

/// The first path of a (normalised) FieldMask string that is not a dotted list of
/// identifiers.
pub(super) fn bad_field_mask_path(mask: &str) -> Option<&str> {
    if mask.is_empty() {
        return None;
    }
    mask.split(',')
        .find(|path| !path.split('.').all(is_plain_key))
}

/// FieldMask alternates: a list of paths, snake_case paths.
pub(super) fn field_mask(value: Value) -> Value {
    let joined = match value {
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        Value::String(text) => text,
        other => return other,
    };
    let camel = joined
        .split(',')
        .map(str::trim)
        .filter(|path| !path.is_empty())
        .map(|path| {
            path.split('.')
                .map(lower_camel)
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect::<Vec<_>>()
        .join(",");
    Value::String(camel)
}
