//! One tool call, end to end (docs/design.md §6, and the crate documentation's steps of a tool
//! call). Every failure the model can act on becomes an `isError` result; nothing here panics.

pub(crate) mod arguments;
pub(crate) mod arguments_text;
pub(crate) mod budget;
pub(crate) mod collect;
pub(crate) mod facts;
pub(crate) mod longrunning;
pub(crate) mod outcome;
pub(crate) mod progress;
pub(crate) mod stream_control;
pub(crate) mod structured_text;

use std::{fmt::Write as _, sync::Arc, time::Instant};

use bytes::Bytes;
use rmcp::model::JsonObject;
use serde_json::{Map, Value};
use tonic::Code;
use tonic_mcp_codec::{JsonPath, Problem, Response, ToJsonOptions};
use tracing::Instrument as _;

use crate::{
    call::arguments::invalid_arguments,
    call::collect::{Collected, Stop, collect, stream_grace},
    call::longrunning::{Redeemer, Started, Wait},
    call::outcome::{
        Outcome, answered, error_result, local_failure, structured_result, text_result,
    },
    call::progress::Progress,
    call::stream_control::StreamControl,
    call::structured_text::Structured,
    grpc::Invocation,
    grpc::status::{describe_status, log_transport_failure},
    observe::{observer::CallObserver, telemetry},
    tool::context::{CallContext, CallHook},
    tool::toolset::{CompiledTool, SetConfig},
    tool::types::Types,
    tool::union_pool::UnionPool,
};

/// Bounds on tool arguments, checked before anything else, and on results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted arguments object, in bytes of compact JSON (default 1 MiB).
    pub max_argument_bytes: usize,
    /// Deepest accepted nesting of objects and arrays (default 64). The arguments object
    /// itself is level 1. Values above 98 act as 98: deeper messages are cut before parsing
    /// (the JSON parser's own bound is 128 levels) and such a call is always refused.
    pub max_depth: usize,
    /// Largest tool result, in bytes of compact JSON (default
    /// [`DEFAULT_MAX_RESULT_BYTES`](crate::DEFAULT_MAX_RESULT_BYTES), 320 KiB). A stream's
    /// batch keeps the messages that fit and says `"truncated": true`; any other result over
    /// it is an `isError` saying how to ask for less. A set's
    /// [`ToolSet::with_max_result_bytes`](crate::ToolSet::with_max_result_bytes) wins.
    pub max_result_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_argument_bytes: 1024 * 1024,
            max_depth: 64,
            max_result_bytes: budget::DEFAULT_MAX_RESULT_BYTES,
        }
    }
}

/// One call, with everything it needs.
pub(crate) struct Call<'a> {
    pub(crate) tool: &'a CompiledTool,
    pub(crate) set: &'a SetConfig,
    pub(crate) server_hooks: &'a [CallHook],
    pub(crate) limits: Limits,
    pub(crate) context: CallContext<'a>,
    pub(crate) progress: Option<Progress>,
    /// Where a call that waits for a long-running operation records it, for cancellation;
    /// `None` for tools that do not wait.
    pub(crate) started: Option<Started>,
    /// The server's GetOperation tool, if it serves one.
    pub(crate) redeemer: Option<&'a Redeemer>,
    /// Every message type of the server, for `Any` payloads the tool's own pool lacks.
    pub(crate) types: &'a UnionPool,
    /// Ends the collection of a response stream early, as the deadline does (truncated);
    /// `None`: only the deadline and the bound end it. An MCP task's cancellation, so that a
    /// task on an unending stream returns what it collected.
    pub(crate) stop: Option<Stop<'a>>,
    /// What is told of the call's gRPC requests.
    pub(crate) observers: &'a [Arc<dyn CallObserver>],
    /// How the structured result is handed to the transport.
    pub(crate) structured: Structured,
}

fn check_limits(args: &JsonObject, limits: Limits) -> Result<(), String> {
    let Some(depth) = tonic_mcp_codec::depth_within(args, limits.max_argument_bytes) else {
        return Err(format!(
            "arguments are too large: more than {} bytes of JSON (the limit is {})",
            limits.max_argument_bytes, limits.max_argument_bytes
        ));
    };
    if depth > limits.max_depth {
        return Err(depth_message(depth, limits));
    }
    Ok(())
}

fn depth_message(depth: usize, limits: Limits) -> String {
    format!(
        "arguments nest {depth} levels deep; the limit is {} levels",
        limits.max_depth.min(MAX_SUPPORTED_DEPTH)
    )
}

/// Deepest message passed to the JSON parser unchanged. Below serde_json's own bound (128)
/// with room for the JSON-RPC envelope (`{"params": {"arguments": …}}` is 3 levels).
pub(crate) const MESSAGE_DEPTH_LIMIT: usize = 100;

/// The envelope levels above a `tools/call`'s `arguments` values: the message object and
/// `params`. The arguments object itself is level 1 of the arguments.
pub(crate) const ARGUMENTS_OFFSET: usize = 2;

/// Deepest arguments the JSON parser can carry at all (see [`Limits::max_depth`]).
pub(crate) const MAX_SUPPORTED_DEPTH: usize = MESSAGE_DEPTH_LIMIT - ARGUMENTS_OFFSET;

/// The refusal of a call whose `arguments` was not an object (`got`: "an array", …).
pub(crate) fn not_an_object(name: &str, got: &str) -> Outcome {
    limit_failure(name, &format!("expected an object, got {got}"))
}

/// The refusal of a call whose arguments were too deep to parse (`depth` levels): the same
/// `isError` as [`check_limits`] gives for arguments it can see.
pub(crate) fn too_deep(name: &str, depth: usize, limits: Limits) -> Outcome {
    limit_failure(name, &depth_message(depth, limits))
}

/// A limit applies to the arguments as a whole: its problem is at `$`.
fn limit_failure(name: &str, message: &str) -> Outcome {
    invalid_arguments(
        name,
        &[Problem {
            path: JsonPath::default(),
            message: message.to_owned(),
        }],
    )
}

/// A call's arguments: a map, or the text the transport kept
/// ([`ArgumentsText`](crate::call::facts::ArgumentsText)).
pub(crate) enum CallArguments<'a> {
    Map(Option<JsonObject>),
    Text(&'a str),
}

/// What the transport hands a call: its arguments, and how it takes the structured result
/// back.
pub(crate) struct FromTransport<'a> {
    pub(crate) arguments: CallArguments<'a>,
    pub(crate) structured: Structured,
}

/// Run one tool call.
pub(crate) async fn run(call: Call<'_>, arguments: CallArguments<'_>) -> Outcome {
    let tool = call.tool;
    let def = &tool.def;
    let name = call.context.tool_name();
    let types = match tool.types() {
        Ok(types) => types,
        Err(message) => return local_failure(Code::Internal, message),
    };
    // Arguments as text are encoded straight from it when the text encoder is sure of them;
    // otherwise (and always as a map) they take the whole way, limits first.
    let (arguments, text) = match arguments {
        CallArguments::Map(arguments) => (arguments, None),
        CallArguments::Text(text) => (None, Some(text)),
    };
    let encoded = text.and_then(|text| {
        arguments::requests_from_text(
            tool,
            types,
            text,
            call.limits.max_argument_bytes,
            call.limits.max_depth,
        )
    });
    let mut args = match (text, &encoded) {
        (Some(text), None) => match tonic_mcp_codec::parse(text) {
            Ok(args) => args,
            Err(problem) => return invalid_arguments(name, &[problem]),
        },
        _ => arguments.unwrap_or_default(),
    };
    if encoded.is_none()
        && let Err(message) = check_limits(&args, call.limits)
    {
        return limit_failure(name, &message);
    }
    // `"mcp.stream"`: this call's window and message bound, not part of the request message.
    let control = if def.kind.streams_responses() {
        match StreamControl::take(&mut args) {
            Ok(control) => control,
            Err(problems) => return invalid_arguments(name, &problems),
        }
    } else {
        StreamControl::default()
    };

    let metadata = match grpc_metadata(call.set, call.server_hooks, &call.context) {
        Ok(metadata) => metadata,
        Err(refusal) => return local_failure(Code::PermissionDenied, refusal),
    };

    let requests = match encoded {
        Some(requests) => requests,
        None => match arguments::requests(tool, types, args, call.limits.max_depth, name) {
            Ok(requests) => requests,
            Err(refusal) => return *refusal,
        },
    };
    // Checked here: over the limit, tonic's encoder fails inside HTTP/2 with a reset that no
    // longer says why.
    let limit = call.set.limits.encoding;
    if let Some(size) = requests.iter().map(Bytes::len).find(|size| *size > limit) {
        return local_failure(
            Code::OutOfRange,
            format!(
                "gRPC error OUT_OF_RANGE: the request message is {size} bytes, over this MCP \
                 server's limit of {limit} bytes. Send less; the operator can raise the limit \
                 (ToolSet::with_max_encoding_message_size, grpc-mcp-gateway \
                 --max-encoding-message-size)."
            ),
        );
    }

    let (timeout, max_messages) = control.apply(
        def.timeout.unwrap_or(call.set.timeout),
        def.max_messages.unwrap_or(call.set.max_messages).max(1),
    );
    let deadline = Instant::now() + timeout;
    // Polls of a long-running operation carry the same metadata as the RPC.
    let poll_metadata = types.long_running.as_ref().map(|_| metadata.clone());
    let mut invocation = Invocation {
        requests,
        metadata,
        // A stream of responses ends at our deadline, as truncation: the server is given a
        // little longer, so that its own deadline (etcd ends a watch with `context deadline
        // exceeded`) cannot win the race and turn the batch into an error.
        timeout: if def.kind.streams_responses() {
            timeout + stream_grace(timeout)
        } else {
            timeout
        },
        limits: call.set.limits,
    };
    let grpc_started = (!call.observers.is_empty()).then(Instant::now);
    let grpc_span = telemetry::grpc_span(&def.rpc_path);
    telemetry::grpc_starting(call.observers, &grpc_span, &mut invocation.metadata);
    let mut collected = collect(
        tool,
        invocation,
        timeout,
        max_messages,
        call.progress.as_ref(),
        call.stop,
    )
    .instrument(grpc_span.clone())
    .await;
    telemetry::record_grpc(
        &grpc_span,
        collected
            .error
            .as_ref()
            .map_or(Code::Ok, tonic::Status::code),
    );
    if let Some(status) = &collected.error {
        log_transport_failure(call.context.tool, &def.rpc_path, status);
    }
    if let Some(started) = grpc_started {
        for observer in call.observers {
            observer.grpc_ended(call.context.tool, started.elapsed());
        }
    }
    let budget = def
        .max_result_bytes
        .or(call.set.max_result_bytes)
        .unwrap_or(call.limits.max_result_bytes);
    if let (Some(lro), Some(metadata)) = (&types.long_running, poll_metadata)
        && collected.error.is_none()
        && let Some(operation) = collected.messages.pop()
    {
        let wait = Wait {
            lro,
            output_omitted: &def.output_omitted,
            options: json_options(tool),
            deadline,
            timeout,
            metadata,
            limits: call.set.limits,
            progress: call.progress,
            started: call.started.unwrap_or_default(),
            redeemer: call.redeemer,
            observers: call.observers,
            budget,
            input: &types.input,
        };
        return longrunning::wait(wait, operation).await;
    }
    // The response of a unary call that ended well, which a result holds alone, written as
    // text. The single-pass decoder is tried once: after the text writer declined the bytes,
    // its `Value` would too.
    let mut fast = true;
    if call.structured == Structured::FromText
        && !def.kind.streams_responses()
        && collected.error.is_none()
        && let [bytes] = collected.messages.as_slice()
    {
        match response_of(tool, types, &types.output, true).decode_text(bytes) {
            Some(text) => return text_result(text, budget, &types.input, &types.output),
            None => fast = false,
        }
    }
    respond(tool, types, collected, call.types, budget, fast)
}

pub(crate) fn json_options(tool: &CompiledTool) -> ToJsonOptions {
    ToJsonOptions {
        json_names: tool.def.json_names,
        emit_defaults: tool.def.emit_defaults,
    }
}

/// The codec's view of `tool`'s responses of type `output`; with `fast`, the one-pass decoder
/// may answer (only for the tool's own output type, whose plans these are).
fn response_of<'a>(
    tool: &'a CompiledTool,
    types: &'a Types,
    output: &'a prost_reflect::MessageDescriptor,
    fast: bool,
) -> Response<'a> {
    Response {
        output,
        plans: (fast && output == &types.output).then_some(&types.plans),
        omitted: &tool.def.output_omitted,
        options: json_options(tool),
        streaming: tool.def.kind.streams_responses(),
    }
}

/// The result of the collected response messages, within `budget` bytes of JSON (see
/// [`budget`](crate::call::budget)); `fast`: the single-pass decoder may answer (it has not
/// declined them already).
fn respond(
    tool: &CompiledTool,
    types: &Types,
    mut collected: Collected,
    union: &UnionPool,
    budget: usize,
    fast: bool,
) -> Outcome {
    let mut encoded = Vec::with_capacity(collected.messages.len());
    for bytes in &collected.messages {
        let value = response_of(tool, types, &types.output, fast)
            .decode(bytes)
            .or_else(|failure| {
                // An `Any` payload of another package: decode again with every type the server
                // knows.
                match union.message(&tool.def.output_type) {
                    Some(output) => response_of(tool, types, &output, false).decode(bytes),
                    None => Err(failure),
                }
            });
        match value {
            Ok(value) => encoded.push(value),
            Err(failure) => return local_failure(Code::Internal, failure),
        }
    }
    let streaming = tool.def.kind.streams_responses();
    if let Some(status) = collected.error {
        let mut text = describe_status(&status);
        if !encoded.is_empty() {
            let _ = write!(
                text,
                "\n\nMessages received before the error ({}):\n{}",
                encoded.len(),
                Value::Array(encoded)
            );
        }
        return answered(error_result(text), status.code());
    }

    let value = if streaming {
        if budget::fit_messages(&mut encoded, budget) {
            collected.truncated = true;
        }
        let mut object = Map::with_capacity(2);
        object.insert("messages".to_owned(), Value::Array(encoded));
        if collected.truncated {
            object.insert("truncated".to_owned(), Value::Bool(true));
        }
        Value::Object(object)
    } else {
        match encoded.pop() {
            Some(value) => value,
            None => {
                return Outcome {
                    grpc_code: Some(Code::Ok),
                    ..local_failure(
                        Code::Internal,
                        "gRPC error INTERNAL: the backend returned no response message",
                    )
                };
            }
        }
    };
    structured_result(value, budget, &types.input, &types.output)
}

/// The gRPC metadata of a call of `set`'s tool in `context`: the set's, then what the
/// server's hooks and the set's add; or the refusal of a hook, as the text to tell. Also the
/// metadata of the GetOperation and CancelOperation calls a task of a waiting tool makes for
/// its caller (`server::waiting_tool`, for `tonic-mcp-tasks`' operation tasks).
pub(crate) fn grpc_metadata(
    set: &SetConfig,
    server_hooks: &[CallHook],
    context: &CallContext<'_>,
) -> Result<tonic::metadata::MetadataMap, String> {
    let mut metadata = set.metadata.clone();
    for hook in server_hooks.iter().chain(&set.hooks) {
        hook(context, &mut metadata).map_err(|refusal| format!("call refused: {refusal}"))?;
    }
    Ok(metadata)
}
