//! The spans of a tool call and, with the `otel` feature, the W3C trace context that links them
//! to the caller and to the gRPC server.
//!
//! Every call has a `mcp.tool_call` span (kind server) and, under it, a `grpc.call` span (kind
//! client) for each gRPC call it makes: the RPC, and the polls and cancellation of a
//! long-running operation. Their fields follow OpenTelemetry's RPC conventions, with
//! `tracing-opentelemetry`'s `otel.*` fields for the span name, kind and status; without a
//! subscriber that wants them they cost a check of the callsite.
//!
//! With the `otel` feature, the process's propagator (`opentelemetry::global`, which the
//! application sets; none, nothing happens) carries the trace:
//! - in: a tool call's span continues the trace of `params._meta.traceparent` (where MCP
//!   clients put it) or else of the HTTP request's `traceparent` header;
//! - out: each gRPC request carries its `grpc.call` span's context as metadata.

use tonic::Code;
use tonic::metadata::MetadataMap;
use tracing::Span;
use tracing::field::Empty;

use crate::grpc::status::code_name;

/// The span of one tool call of `tool`, which calls `rpc_path`: a root, or the continuation
/// of the trace the request carries (with the `otel` feature).
pub(crate) fn tool_call_span(
    tool: &str,
    rpc_path: &str,
    http: Option<&http::request::Parts>,
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Span {
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
        #[cfg(feature = "otel")]
        otel::continue_trace(&span, http, meta);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (http, meta);
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
/// current span. Instrument the call's future with it: the request then carries its context.
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
        && let Some((service, method)) = rpc_path
            .strip_prefix('/')
            .and_then(|path| path.split_once('/'))
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

/// Adds the trace context of `span` (a [`grpc_span`]) to its gRPC request's metadata, as W3C
/// trace context (with the `otel` feature; otherwise nothing).
pub(crate) fn inject(span: &Span, metadata: &mut MetadataMap) {
    #[cfg(feature = "otel")]
    otel::inject(span, metadata);
    #[cfg(not(feature = "otel"))]
    let _ = (span, metadata);
}

#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::propagation::{Extractor, Injector};
    use opentelemetry::trace::TraceContextExt as _;
    use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// Where the inbound trace context is read: `_meta` when it has a `traceparent`, else the
    /// HTTP headers. One source, never a mix of the two.
    enum Inbound<'a> {
        Meta(&'a serde_json::Map<String, serde_json::Value>),
        Headers(&'a http::HeaderMap),
        None,
    }

    impl Extractor for Inbound<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match self {
                Inbound::Meta(meta) => meta.get(key)?.as_str(),
                Inbound::Headers(headers) => headers.get(key)?.to_str().ok(),
                Inbound::None => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            match self {
                Inbound::Meta(meta) => meta.keys().map(String::as_str).collect(),
                Inbound::Headers(headers) => headers.keys().map(http::HeaderName::as_str).collect(),
                Inbound::None => Vec::new(),
            }
        }
    }

    pub(super) fn continue_trace(
        span: &Span,
        http: Option<&http::request::Parts>,
        meta: &serde_json::Map<String, serde_json::Value>,
    ) {
        let inbound = if meta
            .get("traceparent")
            .is_some_and(serde_json::Value::is_string)
        {
            Inbound::Meta(meta)
        } else if let Some(parts) = http {
            Inbound::Headers(&parts.headers)
        } else {
            Inbound::None
        };
        let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&inbound)
        });
        if parent.span().span_context().is_valid() {
            // Fails only when no OpenTelemetry layer is installed: then there is no trace.
            let _ = span.set_parent(parent);
        }
    }

    /// Writes into gRPC metadata; keys or values that metadata cannot hold are left out.
    struct Outbound<'a>(&'a mut MetadataMap);

    impl Injector for Outbound<'_> {
        fn set(&mut self, key: &str, value: String) {
            if let (Ok(key), Ok(value)) = (
                AsciiMetadataKey::from_bytes(key.as_bytes()),
                AsciiMetadataValue::try_from(value),
            ) {
                self.0.insert(key, value);
            }
        }
    }

    pub(super) fn inject(span: &Span, metadata: &mut MetadataMap) {
        if span.is_disabled() {
            return;
        }
        let context = span.context();
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut Outbound(metadata));
        });
    }
}
