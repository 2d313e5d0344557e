//! rmcp's client and an [`McpServer`] in one process, tool calls and MCP tasks.

use std::net::SocketAddr;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, JsonObject, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientInitializeError, Peer, RoleClient, RunningService, ServiceError};
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tonic_mcp::{McpServer, StreamableHttpServerConfig};
use tonic_mcp_serve::ServeHttp as _;

/// `builder` with MCP tasks installed (`tonic-mcp-tasks`'s [`Tasks`](tonic_mcp_tasks::Tasks),
/// its default settings): a server without them runs no tasks, so every test server whose
/// clients use tasks is built through here, or installs `Tasks` with the settings it tests.
pub fn with_tasks(builder: tonic_mcp::McpServerBuilder) -> tonic_mcp::McpServerBuilder {
    builder.task_router(tonic_mcp_tasks::Tasks::new())
}

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

/// Serves `server` with `McpServer::serve_io` (the transport of stdio) on one end of an
/// in-process duplex pipe, and returns the other end, for a client.
pub fn serve_io_in_process(server: McpServer) -> DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(PIPE_CAPACITY);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(server.serve_io(read, write));
    client_io
}

/// rmcp's client connected to `server` through `McpServer::serve_io`, over an in-process pipe.
///
/// # Panics
///
/// When the handshake fails.
pub async fn connect_io(server: McpServer) -> Client {
    ().serve(serve_io_in_process(server))
        .await
        .expect("handshake")
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

/// The names of the tools `client` is offered, every page, in the order listed.
///
/// # Errors
///
/// When `tools/list` gets a JSON-RPC error.
pub async fn tool_names<S: rmcp::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
) -> Result<Vec<String>, ServiceError> {
    let tools = client.list_all_tools().await?;
    Ok(tools.iter().map(|tool| tool.name.to_string()).collect())
}

/// One `tools/call` of `name` through `peer`, as the benchmarks make it (no copy of the name);
/// the result, which must be complete and not `isError`.
///
/// # Panics
///
/// When the call fails, is an error, or starts a task.
pub async fn call_complete(
    peer: &Peer<RoleClient>,
    name: &'static str,
    arguments: &JsonObject,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name).with_arguments(arguments.clone());
    match peer.call_tool_once(params).await {
        Ok(CallToolResponse::Complete(result)) if result.is_error != Some(true) => result,
        Ok(CallToolResponse::Complete(result)) => panic!("{name} failed: {:?}", result.content),
        Ok(_) => panic!("{name}: expected a complete result"),
        Err(e) => panic!("{name}: {e}"),
    }
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

/// rmcp's client information as `name`, declaring the MCP tasks extension when `tasks`.
pub fn client_config(name: &str, tasks: bool) -> ClientConfig {
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    ClientConfig::new(capabilities, Implementation::new(name, "0"))
}

/// Calls `name` with `arguments` (an object) as a task; the task's id, once it is working.
///
/// # Panics
///
/// When the call fails or answers anything but a working task.
pub async fn start_task<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> String {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    match client.call_tool_once(params).await.expect("tools/call") {
        CallToolResponse::Task(task) => {
            assert_eq!(task.task.status, TaskStatus::Working);
            task.task.task_id
        }
        other => panic!("{name}: expected a task, got {other:?}"),
    }
}

/// `tasks/get` every 25 ms until `stop` says so (at most `within`): the task's payload, and
/// its status messages, each time one differed from the one before.
///
/// # Panics
///
/// When `tasks/get` fails, or `stop` has not said so in time.
pub async fn poll_task<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    id: &str,
    within: Duration,
    stop: impl Fn(&TaskStatus, &[String]) -> bool,
) -> (TaskPayload, Vec<String>) {
    const EVERY: Duration = Duration::from_millis(25);
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..within.as_millis().div_ceil(EVERY.as_millis()) {
        let got = client
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .expect("tasks/get");
        if let Some(message) = got.task.task.status_message.clone()
            && seen.last() != Some(&message)
        {
            seen.push(message);
        }
        if stop(&got.task.status(), &seen) {
            return (got.task.payload, seen);
        }
        tokio::time::sleep(EVERY).await;
    }
    panic!("task {id}: condition not met in {within:?}; status messages {seen:?}");
}

/// [`poll_task`] until the task is terminal, for at most 10 s.
pub async fn settle<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    id: &str,
) -> (TaskPayload, Vec<String>) {
    poll_task(client, id, Duration::from_secs(10), |status, _| {
        status.is_terminal()
    })
    .await
}

/// The result of a completed task.
///
/// # Panics
///
/// When the task did not complete, or its result is not a tool result.
pub fn completed(payload: TaskPayload) -> CallToolResult {
    let TaskPayload::Completed { result } = payload else {
        panic!("expected a completed task, got {payload:?}");
    };
    serde_json::from_value(Value::Object(result)).expect("a tool result")
}

/// An [`McpServer`] serving streamable HTTP on a loopback port of its own, in a task.
#[derive(Debug)]
pub struct HttpServing {
    /// Where it listens.
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: JoinHandle<Result<(), tonic_mcp::Error>>,
}

impl HttpServing {
    /// Serves `server` with `config` (`McpServer::stateless_http_config()`,
    /// `session_http_config()`, …) on `127.0.0.1:0`.
    ///
    /// # Errors
    ///
    /// When no port can be bound.
    pub async fn start(
        server: McpServer,
        config: StreamableHttpServerConfig,
    ) -> std::io::Result<HttpServing> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shutdown = config.cancellation_token.clone();
        let task = tokio::spawn(server.serve_http(listener, config));
        Ok(HttpServing {
            addr,
            shutdown,
            task,
        })
    }

    /// Asks the server to shut down, without waiting for it.
    pub fn cancel(&self) {
        self.shutdown.cancel();
    }

    /// Shuts the server down and waits for it: how its task ended, and what `serve_http`
    /// returned.
    ///
    /// # Errors
    ///
    /// When the task panicked or was aborted.
    pub async fn stop(self) -> Result<Result<(), tonic_mcp::Error>, tokio::task::JoinError> {
        self.shutdown.cancel();
        self.task.await
    }
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

/// A task store's record of a task created at `created_us` (microseconds since the epoch) with
/// `payload`, owned by `owner`, run by `runner`, a minute to live; `revision_2025` for a task
/// started in the shape of revision 2025-11-25: the records the task store tests write by hand.
pub fn task_record(
    id: &str,
    owner: &str,
    runner: &str,
    created_us: u64,
    payload: TaskPayload,
    revision_2025: bool,
) -> tonic_mcp_tasks::SharedTask {
    let mut task = rmcp::model::Task::new(
        id,
        TaskStatus::Working,
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z",
    );
    task.ttl_ms = Some(60_000);
    tonic_mcp_tasks::SharedTask::new(
        rmcp::model::DetailedTask::new(task, payload),
        Some(owner.to_owned()),
        revision_2025,
        runner,
        created_us,
    )
}
