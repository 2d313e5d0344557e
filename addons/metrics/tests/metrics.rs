//! Prometheus metrics (`tonic-mcp-metrics`): a known sequence of calls, then the text format,
//! checked line by line, from `Metrics::text` and from `GET /metrics` of `serve_http` and
//! `Metrics::serve` on loopback. And an observer of the application's own, told of the same
//! calls through the same seam.

use test_kit::demo as common;
use test_kit::metric_sample;

use common::http_client::{Reply, open_session, send};
use common::{TestResult, call, channel, connect, pb, start_backend};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tonic_mcp::{CallContext, CallObserver, CallToolResult, McpServer, Span};
use tonic_mcp_metrics::Metrics;

async fn recording_server(on_http: bool) -> TestResult<(McpServer, Metrics, common::Backend)> {
    let (addr, backend) = start_backend().await?;
    let tools = pb::item_service_mcp::from_channel(channel(addr).await?)?;
    let metrics = Metrics::new()?;
    let server = metrics
        .install(
            McpServer::builder("demo", "0.1.0").tool_set(tools)?,
            on_http,
        )
        .build();
    Ok((server, metrics, backend))
}

async fn get(addr: std::net::SocketAddr, path: &str) -> TestResult<Reply> {
    send(addr, http::Method::GET, path, &[], None).await
}

#[tokio::test]
async fn calls_are_counted_by_outcome_and_timed() -> TestResult {
    let (server, metrics, _backend) = recording_server(false).await?;
    let (client, _) = connect(server.clone()).await?;
    for _ in 0..3 {
        call(&client, "ItemService_GetItem", json!({"id": 7})).await?;
    }
    call(&client, "ItemService_GetItem", json!({"id": 404})).await?;
    call(&client, "ItemService_GetItem", json!({"id": "seven"})).await?;
    let text = metrics.text(&server);

    let calls = |outcome: &str, code: &str| {
        metric_sample(
            &text,
            &format!(
                "mcp_tool_calls_total{{code=\"{code}\",outcome=\"{outcome}\",tool=\"ItemService_GetItem\"}}"
            ),
        )
    };
    assert_eq!(calls("ok", "OK"), Some(3.0), "{text}");
    assert_eq!(calls("error", "NOT_FOUND"), Some(1.0), "{text}");
    assert_eq!(calls("refused", "INVALID_ARGUMENT"), Some(1.0), "{text}");
    // Five calls timed; four reached the backend (bad arguments never leave the server).
    let count = |family: &str| {
        metric_sample(
            &text,
            &format!("{family}_count{{tool=\"ItemService_GetItem\"}}"),
        )
    };
    assert_eq!(count("mcp_tool_call_duration_seconds"), Some(5.0), "{text}");
    assert_eq!(count("mcp_grpc_call_duration_seconds"), Some(4.0), "{text}");
    assert_eq!(
        metric_sample(&text, "mcp_tool_calls_in_flight"),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        metric_sample(&text, "mcp_tasks_running"),
        Some(0.0),
        "{text}"
    );
    assert!(
        text.contains("# TYPE mcp_tool_call_duration_seconds histogram"),
        "{text}"
    );
    client.cancel().await?;
    Ok(())
}

/// One thing an observer was told: `(event, tool, isError)`.
type Event = (&'static str, String, Option<bool>);

/// What an observer was told, in order.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<Event>>>);

impl CallObserver for Told {
    fn call_started(&self, call: &CallContext<'_>, _span: &Span) {
        let mut told = self.0.lock().unwrap_or_else(|e| e.into_inner());
        told.push(("start", call.tool_name().to_owned(), None));
    }

    fn grpc_starting(&self, _span: &Span, metadata: &mut tonic::metadata::MetadataMap) {
        metadata.insert(
            "x-observed",
            tonic::metadata::MetadataValue::from_static("yes"),
        );
        let mut told = self.0.lock().unwrap_or_else(|e| e.into_inner());
        told.push(("grpc starts", String::new(), None));
    }

    fn grpc_ended(&self, tool: &str, _elapsed: Duration) {
        let mut told = self.0.lock().unwrap_or_else(|e| e.into_inner());
        told.push(("grpc", tool.to_owned(), None));
    }

    fn call_ended(&self, tool: &str, result: Option<&CallToolResult>, _elapsed: Duration) {
        let mut told = self.0.lock().unwrap_or_else(|e| e.into_inner());
        told.push(("call", tool.to_owned(), result.and_then(|r| r.is_error)));
    }
}

#[tokio::test]
async fn an_observer_is_told_of_each_call_and_its_grpc_request() -> TestResult {
    let (addr, backend) = start_backend().await?;
    let tools = pb::item_service_mcp::from_channel(channel(addr).await?)?;
    let told = Told::default();
    let server = McpServer::builder("demo", "0.1.0")
        .tool_set(tools)?
        .observe(told.clone())
        .build();
    let (client, _) = connect(server).await?;
    call(&client, "ItemService_GetItem", json!({"id": 7})).await?;
    call(&client, "ItemService_GetItem", json!({"id": 404})).await?;
    // What an observer adds to a request's metadata reaches the backend.
    assert_eq!(
        backend
            .observed
            .last_metadata()
            .get("x-observed")
            .map(|v| v.to_str().ok()),
        Some(Some("yes"))
    );
    // Refused before any gRPC request: only its start and end are told.
    call(&client, "ItemService_GetItem", json!({"id": "seven"})).await?;
    client.cancel().await?;
    let told = told.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let tool = "ItemService_GetItem".to_owned();
    let starts = ("grpc starts", String::new(), None);
    assert_eq!(
        told,
        [
            ("start", tool.clone(), None),
            starts.clone(),
            ("grpc", tool.clone(), None),
            ("call", tool.clone(), Some(false)),
            ("start", tool.clone(), None),
            starts,
            ("grpc", tool.clone(), None),
            ("call", tool.clone(), Some(true)),
            ("start", tool.clone(), None),
            ("call", tool, Some(true)),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn metrics_are_served_over_http_when_asked() -> TestResult {
    // On the MCP listener.
    let (server, _metrics, _backend) = recording_server(true).await?;
    let (client, _) = connect(server.clone()).await?;
    call(&client, "ItemService_GetItem", json!({"id": 7})).await?;
    let serving =
        test_kit::HttpServing::start(server.clone(), McpServer::stateless_http_config()).await?;
    let addr = serving.addr;
    let reply = get(addr, "/metrics").await?;
    assert_eq!(reply.status, 200);
    assert!(
        reply.header("content-type").starts_with("text/plain"),
        "{reply:?}"
    );
    assert!(
        reply.body.contains(
            "mcp_tool_calls_total{code=\"OK\",outcome=\"ok\",tool=\"ItemService_GetItem\"} 1"
        ),
        "{}",
        reply.body
    );
    serving.stop().await??;

    // Not on the MCP listener unless asked; on a port of its own.
    let (quiet, metrics, _backend) = recording_server(false).await?;
    let serving =
        test_kit::HttpServing::start(quiet.clone(), McpServer::stateless_http_config()).await?;
    let addr = serving.addr;
    assert_eq!(get(addr, "/metrics").await?.status, 404);
    serving.stop().await??;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let own = tokio::spawn(metrics.serve(quiet, listener));
    let reply = get(addr, "/metrics").await?;
    assert_eq!(reply.status, 200);
    // No call yet: the gauges, and no call series.
    assert!(
        reply.body.contains("\nmcp_tool_calls_in_flight 0\n"),
        "{}",
        reply.body
    );
    assert!(
        !reply.body.contains("mcp_tool_calls_total"),
        "{}",
        reply.body
    );
    assert_eq!(get(addr, "/mcp").await?.status, 404);
    own.abort();
    client.cancel().await?;
    Ok(())
}

/// `mcp_sessions_open` counts the sessions of the streamable HTTP endpoint: two opened, then
/// one closed with DELETE.
#[tokio::test]
async fn open_sessions_are_counted() -> TestResult {
    let (server, _metrics, _backend) = recording_server(true).await?;
    let serving =
        test_kit::HttpServing::start(server.clone(), McpServer::session_http_config()).await?;
    let addr = serving.addr;
    let scrape = || async { get(addr, "/metrics").await.map(|reply| reply.body) };
    let text = scrape().await?;
    assert_eq!(
        metric_sample(&text, "mcp_sessions_open"),
        Some(0.0),
        "{text}"
    );
    let first = open_session(addr, &[], json!({})).await?;
    open_session(addr, &[], json!({})).await?;
    let text = scrape().await?;
    assert_eq!(
        metric_sample(&text, "mcp_sessions_open"),
        Some(2.0),
        "{text}"
    );
    let closed = send(
        addr,
        http::Method::DELETE,
        "/mcp",
        &[("mcp-session-id", &first)],
        None,
    )
    .await?;
    assert!(closed.status.is_success(), "{closed:?}");
    let text = scrape().await?;
    assert_eq!(
        metric_sample(&text, "mcp_sessions_open"),
        Some(1.0),
        "{text}"
    );
    serving.stop().await??;
    Ok(())
}
