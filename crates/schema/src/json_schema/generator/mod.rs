//! The schema generator: one pass over the message graph of a tool that writes the root or
//! stream object, messages (inline, as `$defs` entries, as `#` or left unexpanded) and oneofs,
//! under one set of budget steps.

mod field;

use std::collections::BTreeMap;

use prost_reflect::{Cardinality, FieldDescriptor, MessageDescriptor, OneofDescriptor};
use serde_json::{Map, Value, json};

use super::property_key::check_unique_key;
use super::{
    CacheEntry, Cardinal, DRAFT_2020_12, Direction, NOT_EXPANDED, SchemaContext, Shrink,
    field_property_key, graph, is_visible, object_of, oneof_property_key, wkt,
};
use crate::error::{Error, Result};
use crate::extensions::FieldFacts;
use crate::names::MAX_PROPERTY_KEY;

pub(super) fn is_root_node(message: &MessageDescriptor, cardinal: Cardinal) -> bool {
    cardinal == Cardinal::One && !wkt::is_well_known(message)
}

pub(super) fn generate(
    cx: SchemaContext<'_>,
    graph: &graph::MessageGraph,
    message: &MessageDescriptor,
    direction: Direction,
    cardinal: Cardinal,
    shrink: Shrink,
) -> Result<Value> {
    let root = is_root_node(message, cardinal).then(|| message.clone());
    let mut generator = Generator {
        cx,
        direction,
        root,
        graph,
        shrink,
        budgeted: cx.options.max_schema_bytes != 0,
        level: 0,
        def_levels: BTreeMap::new(),
        enum_defs: BTreeMap::new(),
        opaque: false,
        enum_ref_ok: true,
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
    graph: &'a graph::MessageGraph,
    shrink: Shrink,
    /// A budget is set: long enum comment lists are left out even when the schema fits.
    budgeted: bool,
    /// Message level of the fields being written (the root message's fields: 0).
    level: usize,
    /// `$defs` messages referenced so far, with the smallest level they were referenced at.
    def_levels: BTreeMap<String, (usize, MessageDescriptor)>,
    /// Enum `$defs` entries (with `Shrink::enum_defs`).
    enum_defs: BTreeMap<String, Value>,
    /// The last `kind_schema` was a subtree left unexpanded.
    opaque: bool,
    /// Enums may be written as `$ref` (not for fields whose rules narrow the enum).
    enum_ref_ok: bool,
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
            object_of([
                ("type", json!("array")),
                (
                    "description",
                    json!(match self.direction {
                        Direction::Input => "The messages to send on the stream, in order.",
                        Direction::Output => "The messages received from the stream, in order.",
                    }),
                ),
                ("items", items),
            ]),
        );
        if self.direction == Direction::Output {
            properties.insert(
                "truncated".to_owned(),
                json!({
                    "type": "boolean",
                    "description": "Present and true when collection stopped at the message bound, \
                                    the deadline or the mcp.stream window before the stream \
                                    ended.",
                }),
            );
        }
        Ok(object(None, properties, vec!["messages".to_owned()]))
    }

    fn defs(&mut self) -> Result<Map<String, Value>> {
        let mut defs: BTreeMap<String, Value> = BTreeMap::new();
        if self.shrink.subtree_depth.is_none() && self.shrink.description_depth.is_none() {
            // Every def, each at level 1 (levels only matter when shrinking).
            for message in self.graph.defs().to_vec() {
                self.level = 1;
                let schema = self.message_object(&message)?;
                defs.insert(message.full_name().to_owned(), Value::Object(schema));
            }
        } else {
            // Each def at the smallest level it is referenced from, so that depth cuts apply
            // as they would inline; defs only referenced from cut subtrees are left out.
            loop {
                let next = self
                    .def_levels
                    .iter()
                    .filter(|(name, _)| !defs.contains_key(*name))
                    .min_by_key(|(_, (level, _))| *level)
                    .map(|(_, (level, message))| (*level, message.clone()));
                let Some((level, message)) = next else {
                    break;
                };
                self.level = level;
                let schema = self.message_object(&message)?;
                defs.insert(message.full_name().to_owned(), Value::Object(schema));
            }
        }
        defs.extend(std::mem::take(&mut self.enum_defs));
        Ok(defs.into_iter().collect())
    }

    /// A message used as a value: well-known form, `#`, a `$defs` reference, a subtree left
    /// unexpanded or the inline object.
    fn message_ref(&mut self, message: &MessageDescriptor) -> Result<Value> {
        if let Some(schema) = wkt::schema(message) {
            return Ok(schema);
        }
        if self.root.as_ref() == Some(message) {
            return Ok(json!({"$ref": "#"}));
        }
        let level = self.level + 1;
        if self
            .shrink
            .subtree_depth
            .is_some_and(|depth| level >= depth)
        {
            self.opaque = true;
            return Ok(self.opaque_object(message));
        }
        if self.graph.is_def(message) {
            let entry = self
                .def_levels
                .entry(message.full_name().to_owned())
                .or_insert_with(|| (level, message.clone()));
            entry.0 = entry.0.min(level);
            return Ok(json!({"$ref": format!("#/$defs/{}", message.full_name())}));
        }
        let outer = self.level;
        self.level = level;
        let object = self.inline_message(message);
        self.level = outer;
        Ok(Value::Object(object?))
    }

    /// [`Generator::message_object`] for a message written inline, through the context's
    /// [`SchemaCache`] when the schema cannot depend on the tool.
    ///
    /// [`SchemaCache`]: super::SchemaCache
    fn inline_message(&mut self, message: &MessageDescriptor) -> Result<Map<String, Value>> {
        let unshrunk = self.shrink.subtree_depth.is_none()
            && self.shrink.description_depth.is_none()
            && !self.shrink.enum_defs
            && !self.shrink.no_enum_value_comments;
        if !unshrunk {
            return self.message_object(message);
        }
        let key = (message.full_name().to_owned(), self.direction);
        let independent = |subtree: &[String], generator: &Generator<'_>| {
            subtree.iter().all(|name| {
                !generator.graph.is_def_name(name)
                    && generator
                        .root
                        .as_ref()
                        .is_none_or(|root| root.full_name() != name)
            })
        };
        let cache = self.cx.cache;
        {
            let entries = cache.entries.borrow();
            if let Some(CacheEntry::Ready { subtree, schema }) = entries.get(&key)
                && independent(subtree, self)
            {
                return Ok(schema.clone());
            }
        }
        let schema = self.message_object(message)?;
        let mut entries = cache.entries.borrow_mut();
        match entries.get(&key) {
            None => {
                entries.insert(key, CacheEntry::Seen);
            }
            Some(CacheEntry::Seen) => {
                let subtree = self.subtree(message);
                if independent(&subtree, self) {
                    entries.insert(
                        key,
                        CacheEntry::Ready {
                            subtree,
                            schema: schema.clone(),
                        },
                    );
                }
            }
            Some(CacheEntry::Ready { .. }) => {}
        }
        Ok(schema)
    }

    /// The full names of the messages reachable from `message` through fields visible on this
    /// side, as the message graph follows them (well-known types have fixed schemas and are
    /// left out), `message` included.
    fn subtree(&self, message: &MessageDescriptor) -> Vec<String> {
        let mut names = vec![message.full_name().to_owned()];
        let mut queue = vec![message.clone()];
        while let Some(next) = queue.pop() {
            for field in next.fields() {
                if !self.visible(&self.cx.extensions.field(&field)) {
                    continue;
                }
                if let Some(target) = graph::referenced_message(&field.kind(), field.is_map())
                    && !names.iter().any(|n| n == target.full_name())
                {
                    names.push(target.full_name().to_owned());
                    queue.push(target);
                }
            }
        }
        names
    }

    /// `{"type": "object", "description": "<full name>: <summary> Not expanded…"}`.
    fn opaque_object(&self, message: &MessageDescriptor) -> Value {
        let summary = if self.cx.options.descriptions && self.shrink.description_depth != Some(0) {
            self.cx
                .comments
                .get(message.parent_file().name(), message.path())
                .map(first_sentence)
        } else {
            None
        };
        let text = match summary {
            Some(summary) => format!(
                "{}: {summary} {NOT_EXPANDED}: give its fields as a JSON object; the server \
                 checks them.",
                message.full_name()
            ),
            None => format!(
                "{}: {NOT_EXPANDED}: give its fields as a JSON object; the server checks them.",
                message.full_name()
            ),
        };
        json!({"type": "object", "description": text})
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
                        check_unique_key(&properties, &key, message, oneof.name())?;
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
                    check_unique_key(&properties, &key, message, field.name())?;
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
        Ok(field_property_key(field, self.cx.options.json_names))
    }

    fn property_key_of_oneof(&self, oneof: &OneofDescriptor) -> Result<String> {
        Ok(oneof_property_key(oneof, self.cx.options.json_names))
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
            if cases.contains(&case) {
                return Err(Error::Unsupported {
                    element: oneof.full_name().to_owned(),
                    reason: format!(
                        "two members have the property name `{case}` once shortened to \
                         {MAX_PROPERTY_KEY} characters; rename one of them"
                    ),
                });
            }
            let value = self.field_schema(&member, &facts)?;
            branches.push(object_of([
                ("type", json!("object")),
                (
                    "properties",
                    object_of([
                        ("case", json!({"type": "string", "const": case})),
                        ("value", value),
                    ]),
                ),
                ("required", json!(["case", "value"])),
                ("additionalProperties", json!(false)),
            ]));
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

    fn comment(&self, file: &str, path: &[i32]) -> Option<String> {
        if !self.cx.options.descriptions
            || self
                .shrink
                .description_depth
                .is_some_and(|depth| self.level >= depth)
        {
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

/// The first sentence of a comment (up to the first `. ` or line break), for the summary of a
/// subtree left unexpanded.
fn first_sentence(comment: &str) -> String {
    let line = comment.lines().next().unwrap_or_default().trim();
    let sentence = match line.find(". ") {
        Some(end) => &line[..=end],
        None => line,
    };
    let mut text: String = sentence.chars().take(200).collect();
    if !text.ends_with('.') {
        text.push('.');
    }
    text
}
