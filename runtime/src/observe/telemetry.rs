//! The spans of a tool call.
//!
//! Every call has a `mcp.tool_call` span (kind server) and, under it, a `grpc.call` span (kind
//! client) for each gRPC call it makes: the RPC, and the polls and cancellation of a
//! long-running operation. Their fields follow OpenTelemetry's RPC conventions, with
//! `tracing-opentelemetry`'s `otel.*` fields for the span name, kind and status; without a
//! subscriber that wants them they cost a check of the callsite.
//!
//! Linking them to the caller's trace and to the gRPC server's is a
//! [`CallObserver`](crate::CallObserver)'s work (`tonic-mcp-otel`): it is told of each span as
//! it opens.

use tonic::Code;
use tracing::Span;
use tracing::field::Empty;

use crate::grpc::status::code_name;

/// The span of one tool call of `tool`, which calls `rpc_path`.
pub(crate) fn tool_call_span(tool: &str, rpc_path: &str) -> Span {
    let span = tracing::info_span!(
        "mcp.tool_call",
        tool = %tool,
        rpc = rpc_path,
        duration_ms = Empty,
        grpc_code = Empty,
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = "tools/call",
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("tools/call {tool}"));
    }
    span
}

/// Records how a tool call ended on its span: the gRPC code (`NONE` when no RPC answered, as
/// for arguments refused before the call) and whether the result is an error.
pub(crate) fn record_tool_call(span: &Span, code: &str, is_error: bool, duration_ms: u64) {
    span.record("duration_ms", duration_ms);
    span.record("grpc_code", code);
    if is_error {
        span.record("otel.status_code", "error");
    }
}

/// The span of one gRPC call to `rpc_path` (`/package.Service/Method`), a child of the
/// current span. Instrument the call's future with it, after the observers have been told
/// ([`grpc_starting`]).
pub(crate) fn grpc_span(rpc_path: &str) -> Span {
    let span = tracing::info_span!(
        "grpc.call",
        otel.name = rpc_path.trim_start_matches('/'),
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        rpc.system = "grpc",
        rpc.service = Empty,
        rpc.method = Empty,
        rpc.grpc.status_code = Empty,
    );
    // Only for a span that is recorded: this runs on every call.
    if !span.is_disabled()
        && let Some((service, method)) = tonic_mcp_schema::names::split_rpc_path(rpc_path)
    {
        span.record("rpc.service", service);
        span.record("rpc.method", method);
    }
    span
}

/// Records the status a gRPC call ended with on its span.
pub(crate) fn record_grpc(span: &Span, code: Code) {
    span.record("rpc.grpc.status_code", code as i32);
    if code != Code::Ok {
        span.record("otel.status_code", "error");
        span.record("otel.status_description", code_name(code));
    }
}

/// Tells `observers` that a gRPC request is about to go out in `span` with `metadata`.
pub(crate) fn grpc_starting(
    observers: &[std::sync::Arc<dyn super::observer::CallObserver>],
    span: &Span,
    metadata: &mut tonic::metadata::MetadataMap,
) {
    for observer in observers {
        observer.grpc_starting(span, metadata);
    }
}
