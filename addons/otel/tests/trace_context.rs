//! `TraceContext` with the W3C propagator and `tracing-opentelemetry` installed: a call's span
//! continues the trace its request carries (`_meta` first, else the HTTP header), and a gRPC
//! request carries its span's context on.

use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::{propagation::TraceContextPropagator, trace::SdkTracerProvider};
use serde_json::{Map, Value, json};
use tonic::metadata::MetadataMap;
use tonic_mcp::{CallContext, CallObserver as _};
use tonic_mcp_otel::TraceContext;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";

fn traceparent(trace: &str) -> String {
    format!("00-{trace}-00f067aa0ba902b7-01")
}

/// The trace id of `span`'s OpenTelemetry context.
fn trace_of(span: &tracing::Span) -> String {
    span.context().span().span_context().trace_id().to_string()
}

#[test]
fn a_call_continues_the_callers_trace_and_passes_it_on() {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let provider = SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::with_default(subscriber, || {
        let (parts, ()) = http::Request::builder()
            .header("traceparent", traceparent(HEADER_TRACE))
            .body(())
            .unwrap_or_else(|e| unreachable!("{e}"))
            .into_parts();
        let Value::Object(meta) = json!({"traceparent": traceparent(TRACE)}) else {
            unreachable!("an object")
        };
        let empty = Map::new();

        // `_meta` wins over the header.
        let span = tracing::info_span!("mcp.tool_call");
        let call = CallContext::new("T", "/a.B/C", Some(&parts), &meta);
        TraceContext.call_started(&call, &span);
        assert_eq!(trace_of(&span), TRACE);

        // Out: the gRPC request's span is a child, and its context goes as metadata.
        let grpc = span.in_scope(|| tracing::info_span!("grpc.call"));
        let mut metadata = MetadataMap::new();
        TraceContext.grpc_starting(&grpc, &mut metadata);
        let sent = metadata
            .get("traceparent")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        assert!(sent.starts_with(&format!("00-{TRACE}-")), "{sent}");

        // Without `_meta`, the header's trace.
        let span = tracing::info_span!("mcp.tool_call");
        let call = CallContext::new("T", "/a.B/C", Some(&parts), &empty);
        TraceContext.call_started(&call, &span);
        assert_eq!(trace_of(&span), HEADER_TRACE);

        // Neither (stdio): a trace of its own.
        let span = tracing::info_span!("mcp.tool_call");
        let call = CallContext::new("T", "/a.B/C", None, &empty);
        TraceContext.call_started(&call, &span);
        let own = trace_of(&span);
        assert!(own != TRACE && own != HEADER_TRACE, "{own}");
    });
}

#[test]
fn without_a_subscriber_nothing_is_sent() {
    let span = tracing::Span::none();
    let mut metadata = MetadataMap::new();
    TraceContext.grpc_starting(&span, &mut metadata);
    assert!(metadata.is_empty());
}
