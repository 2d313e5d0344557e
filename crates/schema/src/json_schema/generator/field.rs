//! Field values in a schema: scalars, lists, maps and enums (inline or as `$defs` entries),
//! with `buf.validate` rules on inputs, deprecation and the field's description.

use prost_reflect::{EnumDescriptor, FieldDescriptor, Kind};
use serde_json::{Map, Value, json};

use super::Generator;
use crate::error::{Error, Result};
use crate::extensions::FieldFacts;
use crate::json_schema::{Direction, MAX_ENUM_COMMENTS_BYTES, object_of, rules, wkt};

impl Generator<'_> {
    pub(super) fn field_schema(
        &mut self,
        field: &FieldDescriptor,
        facts: &FieldFacts,
    ) -> Result<Value> {
        let mut notes = Vec::new();
        self.opaque = false;
        self.enum_ref_ok = !(self.direction == Direction::Input && facts.rules.is_some());
        let schema = if field.is_map() {
            let Kind::Message(entry) = field.kind() else {
                return Err(Error::Internal(format!(
                    "map field {} has no entry",
                    field.full_name()
                )));
            };
            let key = entry.map_entry_key_field();
            let value = entry.map_entry_value_field();
            let mut map = Map::new();
            map.insert("type".to_owned(), json!("object"));
            map.insert(
                "additionalProperties".to_owned(),
                self.kind_schema(&value.kind())?,
            );
            if let Some(names) = map_key_names(&key.kind()) {
                map.insert("propertyNames".to_owned(), names);
            }
            Value::Object(map)
        } else if field.is_list() {
            object_of([
                ("type", json!("array")),
                ("items", self.kind_schema(&field.kind())?),
            ])
        } else {
            self.kind_schema(&field.kind())?
        };
        let mut schema = match schema {
            Value::Object(map) => map,
            _ => {
                return Err(Error::Internal(format!(
                    "schema of {} is not an object",
                    field.full_name()
                )));
            }
        };
        if self.direction == Direction::Input
            && let Some(field_rules) = &facts.rules
        {
            rules::apply(
                field,
                field_rules,
                facts.ignore_if_zero,
                &mut schema,
                &mut notes,
            );
        }
        let is_ref = schema.contains_key("$ref");
        let opaque = std::mem::take(&mut self.opaque) && !field.is_list() && !field.is_map();
        if facts.deprecated {
            if is_ref || schema.contains_key("anyOf") {
                notes.push("Deprecated.".to_owned());
            } else {
                schema.insert("deprecated".to_owned(), json!(true));
            }
        }
        let own = self.comment(field.parent_file().name(), field.path());
        let inherited = schema
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // A field's comment replaces its message's; an enum's value list is kept after it.
        let mut parts: Vec<String> = match (own, inherited) {
            (Some(own), Some(enum_text))
                if (matches!(field.kind(), Kind::Enum(_)) && !field.is_list()) || opaque =>
            {
                vec![own, enum_text]
            }
            (own, inherited) => own.or(inherited).into_iter().collect(),
        };
        parts.extend(notes);
        if !parts.is_empty() {
            let text = parts.join("\n\n");
            if is_ref {
                // Beside a `$ref` only `description` may appear.
                schema.retain(|k, _| k == "$ref");
            }
            insert_description(&mut schema, text);
        }
        Ok(Value::Object(schema))
    }

    fn kind_schema(&mut self, kind: &Kind) -> Result<Value> {
        Ok(match kind {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => wkt::int32_schema(),
            Kind::Uint32 | Kind::Fixed32 => wkt::uint32_schema(),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                json!({"type": "string", "pattern": wkt::SIGNED_PATTERN})
            }
            Kind::Uint64 | Kind::Fixed64 => {
                json!({"type": "string", "pattern": wkt::UNSIGNED_PATTERN})
            }
            Kind::Float => wkt::float_schema(),
            Kind::Double => json!({"type": "number"}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::String => json!({"type": "string"}),
            Kind::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
            Kind::Enum(e) => self.enum_value(e),
            Kind::Message(m) => self.message_ref(m)?,
        })
    }

    /// An enum used as a value: inline, or a `$defs` reference when enums go to `$defs` and
    /// this one is used more than once.
    fn enum_value(&mut self, e: &EnumDescriptor) -> Value {
        if self.shrink.enum_defs
            && self.enum_ref_ok
            && e.full_name() != "google.protobuf.NullValue"
            && self.graph.enum_uses(e) >= 2
        {
            if !self.enum_defs.contains_key(e.full_name()) {
                // Defs sit at the top level: their description is not a deep one.
                let level = std::mem::replace(&mut self.level, 0);
                let schema = self.enum_schema(e);
                self.level = level;
                self.enum_defs.insert(e.full_name().to_owned(), schema);
            }
            return json!({"$ref": format!("#/$defs/{}", e.full_name())});
        }
        self.enum_schema(e)
    }

    fn enum_schema(&self, e: &EnumDescriptor) -> Value {
        if e.full_name() == "google.protobuf.NullValue" {
            return json!({"type": "null"});
        }
        let names: Vec<String> = e.values().map(|v| v.name().to_owned()).collect();
        let mut schema = Map::new();
        schema.insert("type".to_owned(), json!("string"));
        schema.insert("enum".to_owned(), json!(names));
        let file = e.parent_file();
        let mut parts: Vec<String> = self.comment(file.name(), e.path()).into_iter().collect();
        let values: Vec<String> = if self.shrink.no_enum_value_comments {
            Vec::new()
        } else {
            e.values()
                .filter_map(|v| {
                    self.comment(file.name(), v.path())
                        .map(|c| format!("- `{}`: {}", v.name(), c.replace('\n', " ")))
                })
                .collect()
        };
        let listed = values.join("\n");
        // With a budget, a long list helps no model: the names in `enum` remain.
        let too_long = self.budgeted && listed.len() > MAX_ENUM_COMMENTS_BYTES;
        if !listed.is_empty() && !too_long {
            parts.push(listed);
        }
        if !parts.is_empty() {
            schema.insert("description".to_owned(), json!(parts.join("\n\n")));
        }
        Value::Object(schema)
    }
}

/// Sets `description` right after `type` (or first), keeping key order readable.
fn insert_description(schema: &mut Map<String, Value>, text: String) {
    schema.shift_remove("description");
    let mut out = Map::new();
    let mut placed = false;
    for (key, value) in std::mem::take(schema) {
        let is_type = key == "type" || key == "$ref";
        out.insert(key, value);
        if is_type && !placed {
            out.insert("description".to_owned(), json!(text.clone()));
            placed = true;
        }
    }
    if !placed {
        let mut first = Map::new();
        first.insert("description".to_owned(), json!(text));
        first.extend(out);
        out = first;
    }
    *schema = out;
}

/// `propertyNames` for a map key kind; `None` for string keys.
fn map_key_names(kind: &Kind) -> Option<Value> {
    match kind {
        Kind::Int32
        | Kind::Sint32
        | Kind::Sfixed32
        | Kind::Int64
        | Kind::Sint64
        | Kind::Sfixed64 => Some(json!({"pattern": wkt::SIGNED_KEY_PATTERN})),
        Kind::Uint32 | Kind::Fixed32 | Kind::Uint64 | Kind::Fixed64 => {
            Some(json!({"pattern": wkt::UNSIGNED_KEY_PATTERN}))
        }
        Kind::Bool => Some(json!({"enum": ["true", "false"]})),
        _ => None,
    }
}
