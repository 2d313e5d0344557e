//! A call's arguments → its request messages, or the `isError` that says what is wrong with
//! them: the codec's [`Arguments`] for the tool, its problems worded as the result.

use std::fmt::Write as _;

use bytes::Bytes;
use rmcp::model::JsonObject;
use tonic::Code;
use tonic_mcp_codec::{Arguments, MAX_PROBLEMS, Problem};

use crate::{
    call::outcome::{Outcome, local_failure},
    tool::toolset::CompiledTool,
    tool::types::Types,
};

/// The `isError` of arguments with `problems`, each with its JSON path: the first
/// [`MAX_PROBLEMS`] of more, saying so.
pub(crate) fn invalid_arguments(tool: &str, problems: &[Problem]) -> Outcome {
    let counted = match problems.len() {
        1 => "1 problem".to_owned(),
        n if n > MAX_PROBLEMS => {
            format!("more than {MAX_PROBLEMS} problems; the first {MAX_PROBLEMS}")
        }
        n => format!("{n} problems"),
    };
    let mut text = format!("Invalid arguments for tool `{tool}` ({counted}):");
    for problem in problems.iter().take(MAX_PROBLEMS) {
        let _ = write!(text, "\n- {problem}");
    }
    local_failure(Code::InvalidArgument, text)
}

/// The codec's view of `tool`'s arguments, or the `isError` of a tool whose input schema does
/// not compile.
fn arguments_of<'a>(
    tool: &'a CompiledTool,
    types: &'a Types,
    name: &str,
) -> Result<Arguments<'a>, Box<Outcome>> {
    let validation = tool.validation();
    let validator = validation.validator.as_ref().map_err(|message| {
        Box::new(local_failure(
            Code::Internal,
            format!("tool `{name}` cannot be called: {message}"),
        ))
    })?;
    Ok(Arguments {
        input: &types.input,
        schema: &validation.schema,
        validator,
        deep: tool.deep(),
        plans: &types.plans,
        json_names: tool.def.json_names,
        streaming: tool.def.kind.streams_requests(),
    })
}

/// The request messages of `args` for `tool` (called `name`), or the refusal to send:
/// canonical arguments are validated and encoded as they came ([`Arguments::encode`]).
pub(crate) fn requests(
    tool: &CompiledTool,
    types: &Types,
    args: JsonObject,
    max_depth: usize,
    name: &str,
) -> Result<Vec<Bytes>, Box<Outcome>> {
    arguments_of(tool, types, name)?
        .encode(args, max_depth, true)
        .map_err(|problems| Box::new(invalid_arguments(name, &problems)))
}

/// The request message of `text` (the arguments as the client sent them, a JSON object) for
/// `tool`, encoded straight from the text, or `None` when the text encoder leaves them to the
/// whole way ([`Arguments::encode_text`]): then the caller parses them and calls [`requests`].
///
/// A server-streaming tool's arguments may carry the call's stream control, which the call
/// takes out of the map first, so they take the whole way. So do arguments over a quarter of
/// `max_bytes` long (the call's argument limit weighs the compact JSON text the parsed
/// arguments would make, which a number can make longer than it came, `1e15` being written
/// `1000000000000000.0`, but never by four times).
pub(crate) fn requests_from_text(
    tool: &CompiledTool,
    types: &Types,
    text: &str,
    max_bytes: usize,
    max_depth: usize,
) -> Option<Vec<Bytes>> {
    if tool.def.kind.streams_responses() || text.len().saturating_mul(4) > max_bytes {
        return None;
    }
    let arguments = arguments_of(tool, types, "").ok()?;
    arguments
        .encode_text(text, max_depth)
        .map(|bytes| vec![bytes])
}
