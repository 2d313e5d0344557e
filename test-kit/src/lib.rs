//! What the workspace's tests share, written once: rmcp's client connected to an
//! [`McpServer`] over an in-process pipe, tool calls and what their results hold, a process
//! that announces its address on a line, and a free loopback port.
//!
//! Used as a dev-dependency by the runtime, the gateway, the e2e crate and the demo. It
//! depends on the runtime's default features only, so that the runtime's own tests build it
//! against the same runtime they test.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError};
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader, DuplexStream, Lines};
use tonic_mcp::McpServer;

/// rmcp's client without a handler of its own.
pub type Client = RunningService<RoleClient, ()>;

/// How many bytes the in-process pipe holds each way before a writer waits.
pub const PIPE_CAPACITY: usize = 1 << 20;

/// Serves `server` on one end of an in-process duplex pipe, in a task of its own, and returns
/// the other end, for a client.
pub fn serve_in_process(server: McpServer) -> DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(PIPE_CAPACITY);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_io
}

/// rmcp's client connected to `server` over an in-process pipe, after the handshake.
///
/// # Panics
///
/// When the handshake fails.
pub async fn connect(server: McpServer) -> Client {
    connect_as(server, ()).await.expect("handshake")
}

/// rmcp's client with `handler` connected to `server` over an in-process pipe.
///
/// # Errors
///
/// When the handshake fails.
pub async fn connect_as<H: ClientHandler>(
    server: McpServer,
    handler: H,
) -> Result<RunningService<RoleClient, H>, ClientInitializeError> {
    handler.serve(serve_in_process(server)).await
}

/// Calls `name` with `arguments` (an object; anything else sends no arguments).
///
/// # Errors
///
/// When the call gets a JSON-RPC error rather than a result.
pub async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> Result<CallToolResult, ServiceError> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(arguments) = arguments {
        params.arguments = Some(arguments);
    }
    client.call_tool(params).await
}

/// The text content of a result, its text blocks joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The gRPC status a result carries in its `_meta`.
///
/// # Panics
///
/// When the result has none.
pub fn status(result: &CallToolResult) -> Value {
    result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(tonic_mcp::STATUS_META_KEY))
        .cloned()
        .expect("the result carries its gRPC status in _meta")
}

/// The structured content of a successful result of `name`: not `isError`, status OK, and the
/// text content is the same JSON.
///
/// # Panics
///
/// When any of that is not so.
pub fn expect_ok(name: &str, result: &CallToolResult) -> Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "{name} failed: {}",
        text(result)
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let from_text: Value = serde_json::from_str(&text(result)).expect("text is the JSON");
    assert_eq!(
        from_text, structured,
        "{name}: text and structuredContent differ"
    );
    assert_eq!(
        status(result),
        json!({"code": 0, "name": "OK"}),
        "{name}: result status"
    );
    structured
}

/// The text of a failed result of `name`: `isError`, with a gRPC status that is not OK and
/// is named.
///
/// # Panics
///
/// When any of that is not so.
pub fn expect_err(name: &str, result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "{name} should fail: {:?}",
        result.structured_content
    );
    let status = status(result);
    let code = status["code"].as_i64().expect("a status code");
    assert_ne!(code, 0, "{name}: a failed result's status");
    assert!(status["name"].is_string(), "{name}: status {status}");
    text(result)
}

/// Reads lines from `output` until one is `listening on ADDR` (within 30 s) and returns ADDR
/// with the rest of the lines: drain them so that the process never blocks on a full pipe, or
/// drop them.
///
/// # Panics
///
/// When no such line comes in time, or the first line is another.
pub async fn announced_addr<R: AsyncRead + Unpin>(output: R) -> (String, Lines<BufReader<R>>) {
    let mut lines = BufReader::new(output).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the process announces its address in time")
        .expect("read its output")
        .expect("a line");
    let addr = line
        .strip_prefix("listening on ")
        .expect("address line")
        .to_owned();
    (addr, lines)
}

/// A loopback port nothing listens on: bound, then released.
///
/// # Panics
///
/// When no port can be bound.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}
