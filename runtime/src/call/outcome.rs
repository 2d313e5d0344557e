//! What a tool call answers: its [`Outcome`] (the result, and the gRPC code for telemetry),
//! and how results are built: with the gRPC status in `_meta`, as a local failure, as the
//! structured result within the result budget, without the fields the output schema omits.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;
use tonic::Code;

use crate::{
    call::budget, call::structured_text, grpc::status::code_name, tool::meta::status_meta,
};

/// The result, and the gRPC code when the backend was reached (for telemetry).
pub(crate) struct Outcome {
    pub(crate) result: CallToolResult,
    pub(crate) grpc_code: Option<Code>,
}

pub(crate) fn error_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// `result` with the gRPC status it stands for in its `_meta`.
pub(crate) fn with_status(mut result: CallToolResult, code: Code, local: bool) -> CallToolResult {
    result.meta = Some(status_meta(code, local));
    result
}

/// The `isError` result of a tool answered in the server itself (tool search's) whose
/// arguments are not right: `invalid arguments: {message}`, with the status `_meta` of a local
/// `INVALID_ARGUMENT`, as the runtime's own refusals carry.
pub fn invalid_arguments(message: impl std::fmt::Display) -> CallToolResult {
    with_status(
        error_result(format!("invalid arguments: {message}")),
        Code::InvalidArgument,
        true,
    )
}

/// A failure found before or after the RPC, without a backend status: `code` is the status it
/// stands for.
pub(crate) fn local_failure(code: Code, text: impl Into<String>) -> Outcome {
    Outcome {
        result: with_status(error_result(text), code, true),
        grpc_code: None,
    }
}

/// `result` of a call the backend answered with `code`.
pub(crate) fn answered(result: CallToolResult, code: Code) -> Outcome {
    Outcome {
        result: with_status(result, code, false),
        grpc_code: Some(code),
    }
}

/// The successful result holding the JSON `text` of an output message, for a transport that
/// writes `structuredContent` from it (see [`structured_text`]); over `budget` bytes, the
/// `isError` that says so, as [`structured_result`] gives.
pub(crate) fn text_result(
    text: String,
    budget: usize,
    input: &prost_reflect::MessageDescriptor,
    output: &prost_reflect::MessageDescriptor,
) -> Outcome {
    within_budget(text, structured_text::placeholder, budget, input, output)
}

/// The successful result holding `value`, or, when its JSON passes `budget` bytes, the
/// `isError` saying so and how to ask for less with the RPC's fields (`input`, and `output`,
/// the message `value` encodes).
pub(crate) fn structured_result(
    value: Value,
    budget: usize,
    input: &prost_reflect::MessageDescriptor,
    output: &prost_reflect::MessageDescriptor,
) -> Outcome {
    // The text block is the same JSON, made once and measured; serde_json's writer, not the
    // slower `Display`, and it cannot fail on a `Value`.
    let text = serde_json::to_string(&value).unwrap_or_else(|_| value.to_string());
    within_budget(text, || value, budget, input, output)
}

/// The result of the JSON `text` and the `structured` content it stands for, or the `isError`
/// of a result over `budget` bytes.
fn within_budget(
    text: String,
    structured: impl FnOnce() -> Value,
    budget: usize,
    input: &prost_reflect::MessageDescriptor,
    output: &prost_reflect::MessageDescriptor,
) -> Outcome {
    if text.len() > budget {
        let text = budget::over_budget(text.len(), budget, input, output);
        return Outcome {
            grpc_code: Some(Code::Ok),
            ..local_failure(Code::ResourceExhausted, text)
        };
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured());
    answered(result, Code::Ok)
}

/// The telemetry name of an outcome's code.
pub(crate) fn outcome_code(outcome: &Outcome) -> &'static str {
    outcome.grpc_code.map_or("NONE", code_name)
}
