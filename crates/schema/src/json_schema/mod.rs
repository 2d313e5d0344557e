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

mod budget;
mod generator;
mod graph;
pub mod portability;
mod property_key;
mod rules;
pub mod wkt;

use foldhash::HashMap;
use prost_reflect::MessageDescriptor;

use serde_json::{Map, Value, json};

use crate::comments::Comments;
use crate::error::Result;
use crate::extensions::{Extensions, FieldFacts};
use crate::options::Options;

use self::budget::report;

pub use self::budget::{ShrinkReport, minified_len};
pub use self::property_key::{field_property_key, oneof_property_key};

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

/// An object of `entries`, in order. Unlike `json!`, which serializes every value it is given
/// into a new one, the values are moved in: a subtree is not copied.
pub(super) fn object_of<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in entries {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}
