//! Input validation against the tool's compiled JSON Schema, with errors the model can act on.
//!
//! The validator is the codec's own, of exactly the keywords the schema generator writes
//! ([`schema`]); jsonschema is the reference its tests hold it to.

mod check;
pub(crate) mod schema;

use std::sync::OnceLock;

use prost_reflect::MessageDescriptor;
use serde_json::Value;
use tonic_mcp_schema::json_schema::NOT_EXPANDED;

use crate::path::{JsonPath, Problem};

use self::check::Found;

/// The second check of a tool whose listed input schema the plugin's `max_schema_bytes` budget
/// shrank: subtrees listed as plain `{"type": "object"}` accept any object, so the arguments are
/// also validated against the full schema, made from the descriptors by the plugin's own
/// generator (`tonic-mcp-schema`) and compiled on the first call. A wrong field deep in such a
/// subtree is then reported with its path like any other.
#[derive(Debug, Default)]
pub struct DeepCheck {
    /// `None` when the listed schema is complete.
    full: Option<OnceLock<Result<Validator, String>>>,
}

impl DeepCheck {
    /// The check of a complete listed schema: none.
    pub const NONE: DeepCheck = DeepCheck { full: None };

    /// A check for a listed input schema, given as JSON text: only shrunk schemas (which carry
    /// the [`NOT_EXPANDED`] phrase, plain ASCII that JSON text holds unescaped) need one.
    pub fn new(listed_schema: &str) -> DeepCheck {
        DeepCheck {
            full: listed_schema.contains(NOT_EXPANDED).then(OnceLock::new),
        }
    }

    /// Whether the listed schema is complete, so that there is nothing more to check.
    pub fn is_none(&self) -> bool {
        self.full.is_none()
    }

    /// Problems the full schema finds that the listed one did not (`reported`), minus those
    /// under `suppressed` paths.
    pub(crate) fn problems(
        &self,
        input: &MessageDescriptor,
        streaming_input: bool,
        json_names: bool,
        instance: &Value,
        suppressed: &[JsonPath],
        reported: &[Problem],
    ) -> Vec<Problem> {
        let Some(full) = &self.full else {
            return Vec::new();
        };
        let compiled = full.get_or_init(|| full_schema(input, streaming_input, json_names));
        match compiled {
            Ok(validator) => {
                let mut found = problems(validator, instance, suppressed);
                // Where the listed schema already spoke, it was complete: keep its words.
                found.retain(|p| !reported.iter().any(|r| r.path == p.path));
                found
            }
            Err(message) => {
                tracing::warn!(message = %message, "cannot build the full input schema");
                Vec::new()
            }
        }
    }
}

/// The unshrunk input schema of a tool, without descriptions, compiled.
fn full_schema(
    input: &MessageDescriptor,
    streaming_input: bool,
    json_names: bool,
) -> Result<Validator, String> {
    let options = tonic_mcp_schema::Options {
        json_names,
        descriptions: false,
        max_schema_bytes: 0,
        ..tonic_mcp_schema::Options::default()
    };
    let context = tonic_mcp_schema::Context::new(input.parent_pool(), &options);
    let cardinal = if streaming_input {
        tonic_mcp_schema::json_schema::Cardinal::Stream
    } else {
        tonic_mcp_schema::json_schema::Cardinal::One
    };
    let schema = tonic_mcp_schema::json_schema::tool_schema(
        context.schema_context(),
        input,
        tonic_mcp_schema::json_schema::Direction::Input,
        cardinal,
    )
    .map_err(|e| e.to_string())?;
    compile(&schema)
}

/// The compiled JSON Schema (draft 2020-12) of a tool's input ([`compile`]): checks of exactly
/// the keywords the schema generator writes.
#[derive(Debug)]
pub struct Validator {
    nodes: schema::Nodes,
}

impl Validator {
    /// Whether `instance` is valid; stops at the first failure and builds nothing.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.nodes.valid(0, instance)
    }

    /// The compiled schema, for the encoder's checks (`encode::checks`).
    pub(crate) fn nodes(&self) -> &schema::Nodes {
        &self.nodes
    }

    /// The problems of `instance`, each with its path (none when it is valid): every one, up
    /// to [`MAX_PROBLEMS`](crate::MAX_PROBLEMS) and one more.
    pub fn problems(&self, instance: &Value) -> Vec<Problem> {
        problems(self, instance, &[])
    }
}

/// Check that a tool schema is well formed: a draft 2020-12 schema of only the keywords tool
/// schemas use, each of the form the meta-schema gives it, its references resolved. For
/// schemas given at run time, checked at registration.
///
/// # Errors
///
/// What is wrong, and where (a JSON pointer): an unsupported keyword is named.
pub fn check_schema(schema: &Value) -> Result<(), String> {
    compile(schema).map(drop)
}

/// Compile a tool schema (draft 2020-12, local references only), on the tool's first call.
///
/// # Errors
///
/// As [`check_schema`].
pub fn compile(schema: &Value) -> Result<Validator, String> {
    schema::compile(schema).map(|nodes| Validator { nodes })
}

/// The schema problems in `instance` outside `suppressed` paths, up to
/// [`MAX_PROBLEMS`](crate::MAX_PROBLEMS) and one more.
pub(crate) fn problems(
    validator: &Validator,
    instance: &Value,
    suppressed: &[JsonPath],
) -> Vec<Problem> {
    // The common case is valid arguments: `is_valid` stops early and builds no problems.
    if suppressed.is_empty() && validator.is_valid(instance) {
        return Vec::new();
    }
    let mut found = Found::new(suppressed);
    validator
        .nodes
        .collect(0, instance, &mut JsonPath::default(), &mut found);
    let mut out = found.problems;
    out.dedup();
    out
}

#[cfg(test)]
mod tests;
