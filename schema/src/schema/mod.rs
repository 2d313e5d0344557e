//! JSON Schema 2020-12 for tool inputs and outputs.
//!
//! The mapping (SPEC §4), applied the same way to inputs and outputs:
//!
//! - **Root.** Always `{"type":"object","properties":…,"additionalProperties":false}` with
//!   `required` and `$defs` only when non-empty. No combinator at the root. A message that is not a
//!   JSON object (Timestamp, Duration, FieldMask, Value, ListValue, wrappers) is wrapped as
//!   `{"value": …}`. Streaming sides are `{"messages": [...]}` (server streaming adds `truncated`).
//! - **Scalars.** 32-bit integers are `integer` bounded to their range; 64-bit integers are
//!   strings with a digit pattern; floats are `number` (`float` bounded to its finite range); bytes are base64 strings; enums are their
//!   value names. Never a type array.
//! - **Messages.** Inlined when used once; in `$defs` (keyed by full name) when used twice or more
//!   or when part of a reference cycle, found by strongly connected components over the message
//!   graph. A recursive root stays inline and is referenced as `#`. Beside a `$ref` only
//!   `description` appears. Objects carry `additionalProperties: false`.
//! - **Oneofs.** One property per real oneof holding `{"case": <member>, "value": <member value>}`
//!   branches under `oneOf` (or `anyOf`), required only when the oneof is. Synthetic oneofs
//!   (proto3 `optional`) are plain fields.
//! - **Maps.** Objects with `additionalProperties` for values and `propertyNames` for non-string
//!   keys.
//! - **Well-known types.** Their protobuf JSON forms (see [`wkt`]).
//! - **Required, hidden, described.** `required` comes from `field_behavior`, proto2 `required`,
//!   `buf.validate` and required oneofs, on inputs only: results omit default values, so an output
//!   schema never requires a field. `OUTPUT_ONLY` fields leave input schemas, `INPUT_ONLY` fields
//!   leave output schemas, `(rust_mcp.field).hidden` fields leave both. Comments become
//!   descriptions. `buf.validate` rules become keywords on inputs (see `rules.rs`).

mod graph;
pub mod portability;
mod rules;
pub mod wkt;

use heck::ToLowerCamelCase;
use prost_reflect::{
    Cardinality, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, OneofDescriptor,
};
use serde_json::{Map, Value, json};

use crate::comments::Comments;
use crate::error::{Error, Result};
use crate::extensions::{Extensions, FieldFacts};
use crate::names::{self, MAX_PROPERTY_KEY};
use crate::options::Options;

/// The dialect every schema is written in.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Which side of an RPC a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The tool's arguments.
    Input,
    /// The tool's result.
    Output,
}

/// Whether the side of the RPC carries one message or a stream of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cardinal {
    /// A single message.
    One,
    /// A stream: `{"messages": [...]}`.
    Stream,
}

/// Whether a field appears on this side: hidden fields never do, `OUTPUT_ONLY` fields only in
/// outputs and `INPUT_ONLY` fields only in inputs.
pub fn is_visible(facts: &FieldFacts, direction: Direction) -> bool {
    !facts.hidden
        && match direction {
            Direction::Input => !facts.output_only,
            Direction::Output => !facts.input_only,
        }
}

/// What schema generation reads besides the descriptors.
#[derive(Debug, Clone, Copy)]
pub struct SchemaContext<'a> {
    /// Plugin options (property names, unions, descriptions, `$schema`).
    pub options: &'a Options,
    /// Extension option readers.
    pub extensions: &'a Extensions,
    /// Comments of every element.
    pub comments: &'a Comments,
}

/// The schema of one side of an RPC.
pub fn tool_schema(
    cx: SchemaContext<'_>,
    message: &MessageDescriptor,
    direction: Direction,
    cardinal: Cardinal,
) -> Result<Value> {
    let root = match cardinal {
        Cardinal::One if !wkt::is_well_known(message) => Some(message.clone()),
        _ => None,
    };
    let graph = graph::MessageGraph::build(cx, message, direction, root.is_some());
    let mut generator = Generator {
        cx,
        direction,
        root,
        graph,
    };
    let mut schema = match cardinal {
        Cardinal::One => generator.root_object(message)?,
        Cardinal::Stream => generator.stream_object(message)?,
    };
    let defs = generator.defs()?;
    if !defs.is_empty() {
        schema.insert("$defs".to_owned(), Value::Object(defs));
    }
    if cx.options.schema_keyword {
        let mut with_dialect = Map::new();
        with_dialect.insert("$schema".to_owned(), json!(DRAFT_2020_12));
        with_dialect.extend(schema);
        schema = with_dialect;
    }
    Ok(Value::Object(schema))
}

struct Generator<'a> {
    cx: SchemaContext<'a>,
    direction: Direction,
    /// The root message when it is a plain message (referenced as `#` when recursive).
    root: Option<MessageDescriptor>,
    graph: graph::MessageGraph,
}

impl Generator<'_> {
    fn root_object(&mut self, message: &MessageDescriptor) -> Result<Map<String, Value>> {
        if let Some(shape) = wkt::root_shape(message) {
            return Ok(match shape {
                wkt::RootShape::Wrapped(value) => object(
                    None,
                    [("value".to_owned(), value)].into_iter().collect(),
                    vec!["value".to_owned()],
                ),
                wkt::RootShape::Object(schema) => schema,
            });
        }
        self.message_object(message)
    }

    fn stream_object(&mut self, message: &MessageDescriptor) -> Result<Map<String, Value>> {
        let items = self.message_ref(message)?;
        let mut properties = Map::new();
        properties.insert(
            "messages".to_owned(),
            json!({
                "type": "array",
                "description": match self.direction {
                    Direction::Input => "The messages to send on the stream, in order.",
                    Direction::Output => "The messages received from the stream, in order.",
                },
                "items": items,
            }),
        );
        if self.direction == Direction::Output {
            properties.insert(
                "truncated".to_owned(),
                json!({
                    "type": "boolean",
                    "description": "Present and true when collection stopped at the message bound \
                                    or the deadline before the stream ended.",
                }),
            );
        }
        Ok(object(None, properties, vec!["messages".to_owned()]))
    }

    fn defs(&mut self) -> Result<Map<String, Value>> {
        let mut defs = Map::new();
        let names: Vec<MessageDescriptor> = self.graph.defs().to_vec();
        for message in names {
            let schema = self.message_object(&message)?;
            defs.insert(message.full_name().to_owned(), Value::Object(schema));
        }
        Ok(defs)
    }

    /// A message used as a value: well-known form, `#`, a `$defs` reference or the inline object.
    fn message_ref(&mut self, message: &MessageDescriptor) -> Result<Value> {
        if let Some(schema) = wkt::schema(message) {
            return Ok(schema);
        }
        if self.root.as_ref() == Some(message) {
            return Ok(json!({"$ref": "#"}));
        }
        if self.graph.is_def(message) {
            return Ok(json!({"$ref": format!("#/$defs/{}", message.full_name())}));
        }
        Ok(Value::Object(self.message_object(message)?))
    }

    fn message_object(&mut self, message: &MessageDescriptor) -> Result<Map<String, Value>> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut oneofs_done = Vec::<OneofDescriptor>::new();
        for field_proto in &message.descriptor_proto().field {
            let Some(field) = message.get_field(field_proto.number() as u32) else {
                continue;
            };
            match field.containing_oneof().filter(|o| !o.is_synthetic()) {
                Some(oneof) => {
                    if oneofs_done.contains(&oneof) {
                        continue;
                    }
                    oneofs_done.push(oneof.clone());
                    if let Some(schema) = self.oneof_schema(&oneof)? {
                        let key = self.property_key_of_oneof(&oneof)?;
                        if self.direction == Direction::Input
                            && self.cx.extensions.oneof_required(&oneof)
                        {
                            required.push(key.clone());
                        }
                        properties.insert(key, schema);
                    }
                }
                None => {
                    let facts = self.cx.extensions.field(&field);
                    if !self.visible(&facts) {
                        continue;
                    }
                    let key = self.property_key(&field)?;
                    if self.direction == Direction::Input
                        && (facts.behavior_required
                            || facts.validate_required
                            || field.cardinality() == Cardinality::Required)
                    {
                        required.push(key.clone());
                    }
                    let schema = self.field_schema(&field, &facts)?;
                    properties.insert(key, schema);
                }
            }
        }
        let description = self.comment(message.parent_file().name(), message.path());
        Ok(object(description, properties, required))
    }

    fn visible(&self, facts: &FieldFacts) -> bool {
        is_visible(facts, self.direction)
    }

    fn property_key(&self, field: &FieldDescriptor) -> Result<String> {
        let key = if self.cx.options.json_names {
            field.json_name().to_owned()
        } else {
            field.name().to_owned()
        };
        check_property_key(&key, field.full_name())?;
        Ok(key)
    }

    fn property_key_of_oneof(&self, oneof: &OneofDescriptor) -> Result<String> {
        let key = if self.cx.options.json_names {
            oneof.name().to_lower_camel_case()
        } else {
            oneof.name().to_owned()
        };
        check_property_key(&key, oneof.full_name())?;
        Ok(key)
    }

    /// A real oneof as one property of `{case, value}` branches; `None` when every member is
    /// hidden on this side.
    fn oneof_schema(&mut self, oneof: &OneofDescriptor) -> Result<Option<Value>> {
        let mut branches = Vec::new();
        let mut cases = Vec::new();
        for member in oneof.fields() {
            let facts = self.cx.extensions.field(&member);
            if !self.visible(&facts) {
                continue;
            }
            let case = self.property_key(&member)?;
            let value = self.field_schema(&member, &facts)?;
            branches.push(json!({
                "type": "object",
                "properties": {
                    "case": {"type": "string", "const": case},
                    "value": value,
                },
                "required": ["case", "value"],
                "additionalProperties": false,
            }));
            cases.push(case);
        }
        if branches.is_empty() {
            return Ok(None);
        }
        let exactly = format!("Exactly one of: {}.", cases.join(", "));
        let description = match self.comment(oneof.parent_file().name(), oneof.path()) {
            Some(comment) => format!("{comment} {exactly}"),
            None => exactly,
        };
        let mut schema = Map::new();
        schema.insert("description".to_owned(), json!(description));
        schema.insert(
            self.cx.options.unions.keyword().to_owned(),
            Value::Array(branches),
        );
        Ok(Some(Value::Object(schema)))
    }

    fn field_schema(&mut self, field: &FieldDescriptor, facts: &FieldFacts) -> Result<Value> {
        let mut notes = Vec::new();
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
            json!({"type": "array", "items": self.kind_schema(&field.kind())?})
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
        if facts.deprecated {
            if is_ref {
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
                if matches!(field.kind(), Kind::Enum(_)) && !field.is_list() =>
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
            Kind::Enum(e) => self.enum_schema(e),
            Kind::Message(m) => self.message_ref(m)?,
        })
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
        let values: Vec<String> = e
            .values()
            .filter_map(|v| {
                self.comment(file.name(), v.path())
                    .map(|c| format!("- `{}`: {}", v.name(), c.replace('\n', " ")))
            })
            .collect();
        if !values.is_empty() {
            parts.push(values.join("\n"));
        }
        if !parts.is_empty() {
            schema.insert("description".to_owned(), json!(parts.join("\n\n")));
        }
        Value::Object(schema)
    }

    fn comment(&self, file: &str, path: &[i32]) -> Option<String> {
        if !self.cx.options.descriptions {
            return None;
        }
        self.cx.comments.get(file, path).map(str::to_owned)
    }
}

/// `{"type":"object", description?, "properties", "required"?, "additionalProperties": false}`.
fn object(
    description: Option<String>,
    properties: Map<String, Value>,
    required: Vec<String>,
) -> Map<String, Value> {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    if let Some(description) = description {
        schema.insert("description".to_owned(), json!(description));
    }
    schema.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_owned(), json!(required));
    }
    schema.insert("additionalProperties".to_owned(), json!(false));
    schema
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

fn check_property_key(key: &str, element: &str) -> Result<()> {
    if names::is_portable_property_key(key) {
        Ok(())
    } else {
        Err(Error::Unsupported {
            element: element.to_owned(),
            reason: format!(
                "the property name `{key}` is longer than {MAX_PROPERTY_KEY} characters or uses \
                 characters outside [a-zA-Z0-9_.-]; Anthropic and Bedrock reject such tools. \
                 Rename the field, or hide it with (rust_mcp.field).hidden"
            ),
        })
    }
}
