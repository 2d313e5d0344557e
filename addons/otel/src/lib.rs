//! W3C trace context for the tool calls of a [`tonic_mcp`] server, through OpenTelemetry.
//!
//! Every tool call has a `mcp.tool_call` span (kind server) and, under it, a `grpc.call` span
//! (kind client) for each gRPC request it makes. [`TraceContext`], a
//! [`CallObserver`], links them to the traces around them, through
//! the process's propagator (`opentelemetry::global`, which the application sets; with none,
//! nothing happens) and the `tracing-opentelemetry` layer the application installs:
//!
//! - in: a tool call's span continues the trace of `params._meta.traceparent` (where MCP
//!   clients put it) or else of the HTTP request's `traceparent` header;
//! - out: each gRPC request carries its `grpc.call` span's context as metadata.
//!
//! ```
//! use tonic_mcp::McpServer;
//! use tonic_mcp_otel::TraceContext;
//!
//! let server = McpServer::builder("items", "1.0.0")
//!     .observe(TraceContext)
//!     .build();
//! # let _ = server;
//! ```

use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::TraceContextExt as _;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};
use tonic_mcp::{CallContext, CallObserver, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// Continues the caller's trace in each tool call's span, and carries each gRPC request's
/// span context to the backend as metadata. Register it with
/// [`McpServerBuilder::observe`](tonic_mcp::McpServerBuilder::observe).
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceContext;

impl CallObserver for TraceContext {
    fn call_started(&self, call: &CallContext<'_>, span: &Span) {
        if span.is_disabled() {
            return;
        }
        let meta = call.meta();
        let inbound = if meta
            .get("traceparent")
            .is_some_and(serde_json::Value::is_string)
        {
            Inbound::Meta(meta)
        } else if let Some(parts) = call.http_parts() {
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

    fn grpc_starting(&self, span: &Span, metadata: &mut MetadataMap) {
        if span.is_disabled() {
            return;
        }
        let context = span.context();
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut Outbound(metadata));
        });
    }
}

/// Where the inbound trace context is read: `_meta` when it has a `traceparent`, else the HTTP
/// headers. One source, never a mix of the two.
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
