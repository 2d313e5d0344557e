//! `--otlp-endpoint`: the gateway binary exports its spans to an OTLP/gRPC receiver on loopback
//! (built from the official protocol definitions, `opentelemetry-proto`), continues the W3C
//! trace an MCP request carries (`_meta.traceparent` first, else the `traceparent` header), and
//! sends the gRPC call's span to the backend, which records the metadata it received.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use support::{GATEWAY, spawn_http};
use tonic::codegen::http::{HeaderName, HeaderValue};

/// The spans received, with the `service.name` of their resource.
#[derive(Clone, Default)]
struct Receiver(Arc<Mutex<Vec<(String, Span)>>>);

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut received = self.0.lock().expect("lock");
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .iter()
                .flat_map(|resource| &resource.attributes)
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                    AnyValue::StringValue(name) => Some(name.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                received.extend(scope.spans.into_iter().map(|span| (service.clone(), span)));
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    let value = span.attributes.iter().find(|kv| kv.key == key)?;
    match value.value.as_ref()?.value.as_ref()? {
        AnyValue::StringValue(text) => Some(text.clone()),
        AnyValue::IntValue(number) => Some(number.to_string()),
        other => Some(format!("{other:?}")),
    }
}

const HEADER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HEADER_PARENT: &str = "00f067aa0ba902b7";
const META_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const META_PARENT: &str = "b7ad6b7169203331";

#[tokio::test]
async fn spans_continue_the_callers_trace_and_reach_the_backend() {
    let backend = e2e::start_backend().await.expect("backend");
    let receiver = Receiver::default();
    let incoming = tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse().unwrap())
        .expect("bind the receiver");
    let receiver_addr = incoming.local_addr().expect("address");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(receiver.clone()))
            .serve_with_incoming(incoming),
    );

    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", &format!("http://{}", backend.addr)])
        .args(["--service", "testdata.streaming.InventoryService"])
        .args(["--otlp-endpoint", &format!("http://{receiver_addr}")])
        .env("OTEL_SERVICE_NAME", "gateway-under-test")
        .env_remove("RUST_LOG");
    let (mut child, addr) = spawn_http(command).await;

    // Every request of this client carries the header's trace.
    let headers = HashMap::from([(
        HeaderName::from_static("traceparent"),
        HeaderValue::from_str(&format!("00-{HEADER_TRACE}-{HEADER_PARENT}-01")).expect("header"),
    )]);
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
            .custom_headers(headers),
    );
    let client = ().serve(transport).await.expect("handshake");
    let get_item = |meta: Option<serde_json::Value>| {
        let mut params = CallToolRequestParams::new("InventoryService_GetItem");
        params.arguments = json!({"id": "2"}).as_object().cloned();
        params.meta = meta.map(|meta| serde_json::from_value(meta).expect("meta"));
        params
    };
    // `_meta` wins over the header; without it the header's trace goes on.
    let first = client
        .call_tool(get_item(Some(json!({
            "traceparent": format!("00-{META_TRACE}-{META_PARENT}-01")
        }))))
        .await
        .expect("call with _meta");
    assert_ne!(first.is_error, Some(true), "{first:?}");
    let second = client
        .call_tool(get_item(None))
        .await
        .expect("call without _meta");
    assert_ne!(second.is_error, Some(true), "{second:?}");
    client.cancel().await.expect("close");

    // SIGTERM: the gateway shuts down and sends the spans it has not exported yet.
    let pid = child.id().expect("pid").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let exited = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the gateway exits on SIGTERM")
        .expect("wait");
    assert!(exited.success(), "{exited:?}");

    let spans = receiver.0.lock().expect("lock").clone();
    let seen: Vec<String> = spans.iter().map(|(_, span)| span.name.clone()).collect();
    let metadata = backend.metadata.lock().expect("lock").clone();
    let sent: Vec<String> = metadata
        .iter()
        .filter_map(|map| map.get("traceparent")?.to_str().ok().map(str::to_owned))
        .collect();
    assert_eq!(sent.len(), 2, "traceparent sent to the backend: {sent:?}");
    for ((trace, parent), traceparent) in [(META_TRACE, META_PARENT), (HEADER_TRACE, HEADER_PARENT)]
        .into_iter()
        .zip(&sent)
    {
        let in_trace = |name: &str| {
            spans
                .iter()
                .find(|(_, span)| span.name == name && hex(&span.trace_id) == trace)
                .unwrap_or_else(|| panic!("no span {name} in trace {trace}; received {seen:?}"))
        };
        let (service, tool_call) = in_trace("tools/call InventoryService_GetItem");
        assert_eq!(service, "gateway-under-test");
        assert_eq!(tool_call.kind, SpanKind::Server as i32);
        assert_eq!(hex(&tool_call.parent_span_id), parent, "the caller's span");
        assert_eq!(
            attribute(tool_call, "tool").as_deref(),
            Some("InventoryService_GetItem")
        );
        assert_eq!(
            attribute(tool_call, "rpc").as_deref(),
            Some("/testdata.streaming.InventoryService/GetItem")
        );
        assert_eq!(attribute(tool_call, "grpc_code").as_deref(), Some("OK"));

        let (_, grpc) = in_trace("testdata.streaming.InventoryService/GetItem");
        assert_eq!(grpc.kind, SpanKind::Client as i32);
        assert_eq!(
            grpc.parent_span_id, tool_call.span_id,
            "a child of the tool call"
        );
        assert_eq!(attribute(grpc, "rpc.system").as_deref(), Some("grpc"));
        assert_eq!(
            attribute(grpc, "rpc.service").as_deref(),
            Some("testdata.streaming.InventoryService")
        );
        assert_eq!(attribute(grpc, "rpc.method").as_deref(), Some("GetItem"));
        assert_eq!(
            attribute(grpc, "rpc.grpc.status_code").as_deref(),
            Some("0")
        );

        // The backend's parent is the gRPC call's span.
        assert_eq!(
            traceparent,
            &format!("00-{trace}-{}-01", hex(&grpc.span_id)),
            "the traceparent the backend received"
        );
    }
}
