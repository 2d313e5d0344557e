//! A call's arguments → its request messages, or the `isError` that says what is wrong with
//! them.
//!
//! Two ways, one answer:
//!
//! - **Canonical arguments** (the shape the listed schema describes, which a model that follows
//!   the schema sends) are validated as they came and encoded in one pass
//!   ([`fast_from_json`]). Normalisation would give them back unchanged, in bytes.
//! - **Anything else** — loose forms (enum numbers, `null` for absent, URL-safe base64, a flat
//!   oneof, JSON sent as a string…), arguments with problems, or what the one-pass encoder
//!   leaves — takes the whole way: normalise to the canonical shape (reporting what cannot
//!   be), validate, and encode, in one pass when it can, else through prost-reflect, which also
//!   words the errors.
//!
//! The first way is taken only when it gives the very bytes of the second; a differential test
//! (`e2e/tests/transcode_arguments.rs`, through [`both`]) holds it to that.

use std::fmt::Write as _;

use bytes::Bytes;
use prost::Message as _;
use rmcp::model::JsonObject;
use serde_json::Value;
use tonic::Code;

use crate::{
    codec::{
        fast_from_json, fast_from_text,
        from_json::{message_from_json, root_from_json},
        normalize::{NormalizeOptions, normalize_arguments},
        path::{JsonPath, Problem},
    },
    outcome::{Outcome, local_failure},
    tool_types::Types,
    toolset::{CompiledTool, ToolSet},
    validate,
};

/// The `isError` of arguments with `problems`, each with its JSON path.
pub(crate) fn invalid_arguments(tool: &str, problems: &[Problem]) -> Outcome {
    let count = problems.len();
    let mut text = format!(
        "Invalid arguments for tool `{tool}` ({count} problem{}):",
        if count == 1 { "" } else { "s" }
    );
    for problem in problems {
        let _ = write!(text, "\n- {problem}");
    }
    local_failure(Code::InvalidArgument, text)
}

/// The request messages of `args` for `tool` (called `name`), or the refusal to send. With
/// `canonical_first`, canonical arguments are validated and encoded as they came (see the
/// module); without, every call takes the whole way.
pub(crate) fn requests(
    tool: &CompiledTool,
    types: &Types,
    args: JsonObject,
    max_depth: usize,
    name: &str,
    canonical_first: bool,
) -> Result<Vec<Bytes>, Box<Outcome>> {
    let validation = tool.validation();
    let validator = validation.validator.as_ref().map_err(|message| {
        Box::new(local_failure(
            Code::Internal,
            format!("tool `{name}` cannot be called: {message}"),
        ))
    })?;
    let streaming = tool.def.kind.streams_requests();
    let args = if canonical_first {
        let value = Value::Object(args);
        let valid = validate::problems(validator, &validation.schema, &value, &[]).is_empty()
            && tool
                .deep()
                .problems(
                    &types.input,
                    streaming,
                    tool.def.json_names,
                    &value,
                    &[],
                    &[],
                )
                .is_empty();
        if valid && let Some(requests) = encode_in_one_pass(tool, types, &value) {
            return Ok(requests);
        }
        match value {
            Value::Object(args) => args,
            _ => JsonObject::new(),
        }
    } else {
        args
    };

    let normalized = normalize_arguments(
        &types.input,
        args,
        NormalizeOptions {
            json_names: tool.def.json_names,
            max_depth,
            streaming_input: streaming,
        },
    );
    let mut problems = normalized.problems;
    problems.extend(validate::problems(
        validator,
        &validation.schema,
        &normalized.value,
        &normalized.suppressed,
    ));
    let deep = tool.deep().problems(
        &types.input,
        streaming,
        tool.def.json_names,
        &normalized.value,
        &normalized.suppressed,
        &problems,
    );
    problems.extend(deep);
    if !problems.is_empty() {
        return Err(Box::new(invalid_arguments(name, &problems)));
    }
    encode_requests(tool, types, normalized.value)
        .map_err(|problem| Box::new(invalid_arguments(name, &[problem])))
}

/// The request message of `text` (the arguments as the client sent them, a JSON object) for
/// `tool`, encoded straight from the text, or `None` when the text encoder leaves them to the
/// whole way ([`fast_from_text`]): then the caller parses them and calls [`requests`].
///
/// Only unary and server-streaming-free tools with a complete listed schema take it, and only
/// arguments at most a quarter of `max_bytes` long and nested at most `max_depth` deep (the
/// call's argument limits): the size limit weighs the compact JSON
/// text the parsed arguments would make, which a number can make longer than it came (`1e15`
/// is written `1000000000000000.0`), never by four times.
pub(crate) fn requests_from_text(
    tool: &CompiledTool,
    types: &Types,
    text: &str,
    max_bytes: usize,
    max_depth: usize,
) -> Option<Vec<Bytes>> {
    if tool.def.kind.streams_requests()
        || tool.def.kind.streams_responses()
        || text.len().saturating_mul(4) > max_bytes
        || !tool.deep().is_none()
    {
        return None;
    }
    let validation = tool.validation();
    validation.validator.as_ref().ok()?;
    let plan = types.plans.encode(&types.input);
    let checks = types.plans.text(&types.input, &validation.schema);
    fast_from_text::encode(plan, checks, text, max_depth).map(|bytes| vec![Bytes::from(bytes)])
}

/// Canonical arguments encoded by the one-pass encoder, or `None` where it leaves them.
fn encode_in_one_pass(tool: &CompiledTool, types: &Types, canonical: &Value) -> Option<Vec<Bytes>> {
    let plan = types.plans.encode(&types.input);
    if !tool.def.kind.streams_requests() {
        return fast_from_json::encode_root(plan, canonical).map(|bytes| vec![Bytes::from(bytes)]);
    }
    match canonical.get("messages") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| fast_from_json::encode_message(plan, item).map(Bytes::from))
            .collect(),
        _ => Some(Vec::new()),
    }
}

/// Canonical arguments → encoded request messages.
fn encode_requests(
    tool: &CompiledTool,
    types: &Types,
    canonical: Value,
) -> Result<Vec<Bytes>, Problem> {
    let undecodable = |path: JsonPath, message: String| Problem { path, message };
    // The single-pass encoder when it can answer exactly; else the prost-reflect path, which
    // also words the errors.
    let plan = types.plans.encode(&types.input);
    if !tool.def.kind.streams_requests() {
        if let Some(bytes) = fast_from_json::encode_root(plan, &canonical) {
            return Ok(vec![Bytes::from(bytes)]);
        }
        let message = root_from_json(&types.input, canonical)
            .map_err(|e| undecodable(JsonPath::default(), e))?;
        return Ok(vec![Bytes::from(message.encode_to_vec())]);
    }
    let messages = match canonical {
        Value::Object(mut object) => object.remove("messages"),
        _ => None,
    };
    let Some(Value::Array(items)) = messages else {
        return Ok(Vec::new());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let mut path = JsonPath::default();
            path.push_key("messages");
            path.push_index(index);
            if let Some(bytes) = fast_from_json::encode_message(plan, &item) {
                return Ok(Bytes::from(bytes));
            }
            message_from_json(&types.input, item)
                .map(|message| Bytes::from(message.encode_to_vec()))
                .map_err(|e| undecodable(path, e))
        })
        .collect()
}

/// For the differential test: the request messages of `args` for the tool `tool` of `set`,
/// canonical arguments taken as they came (as calls are served) and every call taking the whole
/// way; each as its messages' bytes, or the `isError` text. `None`: no such tool.
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub fn both(
    set: &ToolSet,
    tool: &str,
    args: &JsonObject,
) -> Option<(Result<Vec<Vec<u8>>, String>, Result<Vec<Vec<u8>>, String>)> {
    let compiled = set.compiled(tool)?;
    let types = compiled.types().ok()?;
    let run = |canonical_first: bool| {
        requests(compiled, types, args.clone(), 64, tool, canonical_first)
            .map(|requests| requests.iter().map(|bytes| bytes.to_vec()).collect())
            .map_err(|refusal| {
                let blocks = refusal.result.content.iter();
                blocks
                    .filter_map(|block| block.as_text().map(|text| text.text.clone()))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
    };
    Some((run(true), run(false)))
}

/// For the differential test: the request messages the text encoder gives for the arguments
/// `text` of the tool `tool` of `set` (as a call over stdio is served, under the argument
/// limits `max_bytes` and `max_depth`), or `None` where it leaves them to the whole way. The
/// outer `None`: no such tool.
#[doc(hidden)]
pub fn from_text(
    set: &ToolSet,
    tool: &str,
    text: &str,
    max_bytes: usize,
    max_depth: usize,
) -> Option<Option<Vec<Vec<u8>>>> {
    let compiled = set.compiled(tool)?;
    let types = compiled.types().ok()?;
    Some(
        requests_from_text(compiled, types, text, max_bytes, max_depth)
            .map(|requests| requests.iter().map(|bytes| bytes.to_vec()).collect()),
    )
}
