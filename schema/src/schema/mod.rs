//! JSON Schema 2020-12 for tool inputs and outputs.
//!
//! The mapping (docs/design.md §4), applied the same way to inputs and outputs:
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
use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use crate::comments::Comments;
use crate::error::{Error, Result};
use crate::extensions::{Extensions, FieldFacts};
use crate::names::{self, MAX_PROPERTY_KEY};
use crate::options::Options;

/// The dialect every schema is written in.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Which side of an RPC a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// Inline message schemas already made, shared by the tools of one context.
    pub cache: &'a SchemaCache,
}

/// Inline message schemas shared by every tool of one [`crate::Context`]: a message that many
/// tools inline (a `Record` in every request and response of a package) is made once and
/// copied after that.
///
/// An inline message's schema depends on the tool only through which messages of its subtree
/// go to `$defs` or are the tool's root (then they are references), and through the schema
/// budget's steps. So a cached schema is used only for a schema made without budget steps
/// when no message of its subtree is a `$defs` entry or the root of the tool at hand; the
/// subtree's message names are kept with it for that check.
#[derive(Debug, Default)]
pub struct SchemaCache {
    entries: std::cell::RefCell<HashMap<(String, Direction), CacheEntry>>,
}

#[derive(Debug)]
enum CacheEntry {
    /// Inlined once: cached at the second time, so that messages used once cost no memory.
    Seen,
    /// The schema and every message name of its subtree.
    Ready {
        subtree: Vec<String>,
        schema: Map<String, Value>,
    },
}

/// The phrase every subtree that the schema budget left unexpanded carries in its description.
/// The runtime looks for it to know that the listed schema is not the whole message, and then
/// also validates arguments against the full schema it builds from descriptors.
pub const NOT_EXPANDED: &str = "Not expanded, to keep the tool schema small";

/// Enum value comments are listed in a description only while their text is at most this
/// many bytes (with a schema budget; `max_schema_bytes=0` lists them all). Longer lists keep the
/// value names only.
pub const MAX_ENUM_COMMENTS_BYTES: usize = 2048;

/// How a schema over the budget was shrunk (see [`tool_schema_report`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShrinkReport {
    /// Minified size in bytes before shrinking.
    pub before: usize,
    /// Minified size in bytes after shrinking.
    pub after: usize,
    /// The steps taken, in order, from the least to the most useful information dropped.
    pub steps: Vec<String>,
    /// Whether the schema now fits the budget (every step taken and still over: `false`).
    pub fits: bool,
}

/// What the budget steps take away; the default keeps everything.
#[derive(Debug, Clone, Copy, Default)]
struct Shrink {
    /// Enum value comments are left out (names stay in `enum`).
    no_enum_value_comments: bool,
    /// Enums used more than once are `$defs` entries.
    enum_defs: bool,
    /// Descriptions only on elements less than this many message levels deep.
    description_depth: Option<usize>,
    /// Messages at this level or deeper are `{"type": "object"}` with their name.
    subtree_depth: Option<usize>,
}

/// The schema of one side of an RPC.
pub fn tool_schema(
    cx: SchemaContext<'_>,
    message: &MessageDescriptor,
    direction: Direction,
    cardinal: Cardinal,
) -> Result<Value> {
    tool_schema_report(cx, message, direction, cardinal).map(|(schema, _)| schema)
}

/// The schema of one side of an RPC within the `max_schema_bytes` budget, and how it was shrunk
/// when it was over.
///
/// A schema over the budget (minified) is made again with less information, step by step from
/// the least to the most useful, stopping as soon as it fits:
///
/// 1. enum value comments are left out (the names stay);
/// 2. an enum used more than once becomes a `$defs` entry;
/// 3. descriptions deeper than two message levels, then deeper than one, are left out;
/// 4. message subtrees beyond a depth (6, then 5, … down to 1) become
///    `{"type": "object", "description": "<full name>: …"}`, which accepts any object: the
///    runtime still checks the whole message against its descriptors;
/// 5. last, every description is left out.
///
/// With a budget, enum value comments are also listed only while their text is at most
/// [`MAX_ENUM_COMMENTS_BYTES`].
pub fn tool_schema_report(
    cx: SchemaContext<'_>,
    message: &MessageDescriptor,
    direction: Direction,
    cardinal: Cardinal,
) -> Result<(Value, Option<ShrinkReport>)> {
    report(cx, message, direction, cardinal, &|_| {})
}

/// The key under which the output of a tool that waits for a `google.longrunning.Operation`
/// holds the operation when it was still running at the call's deadline. A property key with a
/// `.` can be no field's name or JSON name, so it never collides with the response's fields.
pub const PENDING_OPERATION_KEY: &str = "google.longrunning.Operation";

/// The output schema of a tool that waits for a long-running operation: the schema of
/// `response` (the operation's `response_type`), with one more optional property,
/// [`PENDING_OPERATION_KEY`], for an operation still running at the deadline: its `name` (which
/// redeems it with `google.longrunning.Operations/GetOperation`) and latest `metadata` (a
/// `metadata_type`, named in its description). A root `required` list is dropped, so that a
/// pending result conforms too. Within the `max_schema_bytes` budget like any tool schema.
pub fn operation_schema_report(
    cx: SchemaContext<'_>,
    response: &MessageDescriptor,
    metadata_type: Option<&str>,
) -> Result<(Value, Option<ShrinkReport>)> {
    let metadata = match metadata_type {
        Some(name) => format!("The operation's latest metadata, a `{name}`."),
        None => "The operation's latest metadata.".to_owned(),
    };
    let pending = json!({
        "type": "object",
        "description": "Present instead of the response when the operation was still running at \
                        the call's deadline. The work goes on: do not call this tool again, \
                        get the result later with google.longrunning.Operations/GetOperation \
                        and the operation's `name`.",
        "properties": {
            "name": {
                "type": "string",
                "description": "The operation's name, which redeems it with GetOperation.",
            },
            "metadata": {"type": "object", "description": metadata},
        },
        "required": ["name"],
        "additionalProperties": false,
    });
    let finish = |schema: &mut Value| {
        let Value::Object(root) = schema else {
            return;
        };
        root.remove("required");
        let properties = root
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert(PENDING_OPERATION_KEY.to_owned(), pending.clone());
        }
    };
    report(cx, response, Direction::Output, Cardinal::One, &finish)
}

/// [`tool_schema_report`], with `finish` applied to every candidate schema before it is
/// measured.
fn report(
    cx: SchemaContext<'_>,
    message: &MessageDescriptor,
    direction: Direction,
    cardinal: Cardinal,
    finish: &dyn Fn(&mut Value),
) -> Result<(Value, Option<ShrinkReport>)> {
    let budget = cx.options.max_schema_bytes;
    let graph = graph::MessageGraph::build(cx, message, direction, is_root_node(message, cardinal));
    let generate = |shrink: Shrink| -> Result<Value> {
        let mut schema = generate(cx, &graph, message, direction, cardinal, shrink)?;
        finish(&mut schema);
        Ok(schema)
    };
    let first = generate(Shrink::default())?;
    if budget == 0 {
        return Ok((first, None));
    }
    let before = minified_len(&first);
    if before <= budget {
        return Ok((first, None));
    }
    let mut shrink = Shrink::default();
    let mut steps = Vec::new();
    let mut plan: Vec<(String, Shrink)> = Vec::new();
    shrink.no_enum_value_comments = true;
    plan.push(("enum value comments".to_owned(), shrink));
    shrink.enum_defs = true;
    plan.push(("repeated enums to $defs".to_owned(), shrink));
    for depth in [2, 1] {
        shrink.description_depth = Some(depth);
        plan.push((format!("descriptions below depth {depth}"), shrink));
    }
    for depth in (1..=6).rev() {
        shrink.subtree_depth = Some(depth);
        plan.push((format!("subtrees below depth {depth}"), shrink));
    }
    // Last resort, for a root with very many fields: no descriptions at all.
    shrink.description_depth = Some(0);
    plan.push(("all descriptions".to_owned(), shrink));
    let mut schema = first;
    let mut after = before;
    for (step, shrink) in plan {
        let smaller = generate(shrink)?;
        let size = minified_len(&smaller);
        if size >= after && step.starts_with("subtrees") {
            // A cut deeper than the schema reaches changes nothing: not a step taken.
            continue;
        }
        steps.push(step);
        schema = smaller;
        after = size;
        if after <= budget {
            break;
        }
    }
    let fits = after <= budget;
    Ok((
        schema,
        Some(ShrinkReport {
            before,
            after,
            steps,
            fits,
        }),
    ))
}

/// The minified size of a schema in bytes.
pub fn minified_len(schema: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing into a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, schema);
    counter.0
}

fn is_root_node(message: &MessageDescriptor, cardinal: Cardinal) -> bool {
    cardinal == Cardinal::One && !wkt::is_well_known(message)
}

fn generate(
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

    fn field_schema(&mut self, field: &FieldDescriptor, facts: &FieldFacts) -> Result<Value> {
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

/// An object of `entries`, in order. Unlike `json!`, which serializes every value it is given
/// into a new one, the values are moved in: a subtree is not copied.
pub(super) fn object_of<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in entries {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
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
fn check_unique_key(
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
