//! A plain HTTP/1.1 client for the streamable HTTP tests: one request per connection, with
//! the headers a test chooses, and the JSON-RPC messages of the answer (JSON or SSE).

use std::net::SocketAddr;

use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use super::TestResult;

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: http::StatusCode,
    pub headers: http::HeaderMap,
    /// The body as text.
    pub body: String,
    /// The JSON-RPC messages in the body: one for JSON, each `data:` line for SSE.
    pub messages: Vec<Value>,
}

impl Reply {
    /// The last message, or `null`.
    pub fn last(&self) -> Value {
        self.messages.last().cloned().unwrap_or(Value::Null)
    }

    /// One header as text, or "".
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

/// Sends `method path` to `addr` with `Host: 127.0.0.1:<port>`, the JSON `body` if any (with
/// the content types MCP asks for), and `headers`.
pub async fn send(
    addr: SocketAddr,
    method: http::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> TestResult<Reply> {
    let text = body.map(Value::to_string);
    send_text(addr, method, path, headers, text.as_deref()).await
}

/// [`send`] with the body as text, as written: for bodies no `Value` writes (escapes, a key
/// given twice).
pub async fn send_text(
    addr: SocketAddr,
    method: http::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> TestResult<Reply> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, format!("127.0.0.1:{}", addr.port()));
    if body.is_some() {
        request = request
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let text = body.unwrap_or_default().to_owned();
    let response = sender
        .send_request(request.body(Full::new(bytes::Bytes::from(text)))?)
        .await?;
    let status = response.status();
    let headers = response.headers().clone();
    let is_sse = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = String::from_utf8(response.into_body().collect().await?.to_bytes().to_vec())?;
    let messages = if body.is_empty() {
        Vec::new()
    } else if is_sse {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .map(serde_json::from_str)
            .collect::<Result<Vec<Value>, _>>()?
    } else {
        serde_json::from_str(&body).map_or_else(|_| Vec::new(), |value| vec![value])
    };
    Ok(Reply {
        status,
        headers,
        body,
        messages,
    })
}

/// An MCP session over raw HTTP: `initialize` (declaring `capabilities`) and
/// `notifications/initialized`, sent with `headers`; returns the session id.
pub async fn open_session(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    capabilities: Value,
) -> TestResult<String> {
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "1"}}});
    let reply = send(addr, http::Method::POST, "/mcp", headers, Some(&initialize)).await?;
    let session = reply.header("mcp-session-id").to_owned();
    if reply.status != http::StatusCode::OK || session.is_empty() {
        return Err(format!("initialize: {} {}", reply.status, reply.body).into());
    }
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = session_send(addr, headers, &session, &initialized).await?;
    if !reply.status.is_success() {
        return Err(format!("initialized: {} {}", reply.status, reply.body).into());
    }
    Ok(session)
}

/// POSTs `message` in `session` with `headers`.
pub async fn session_send(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    session: &str,
    message: &Value,
) -> TestResult<Reply> {
    let mut all: Vec<(&str, &str)> = headers.to_vec();
    all.push(("mcp-session-id", session));
    all.push(("mcp-protocol-version", "2025-11-25"));
    send(addr, http::Method::POST, "/mcp", &all, Some(message)).await
}

/// The capabilities of a client that declares the MCP tasks extension.
pub fn task_capabilities() -> Value {
    serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// Sends the `tools/call` message `call` in `session` with `headers` and returns the id of
/// the task it started, read at the JSON `pointer` of the answer's `result` (`/taskId` under
/// the tasks extension, `/task/taskId` under revision 2025-11-25); fails when there is none.
pub async fn start_task_in_session(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    session: &str,
    call: &Value,
    pointer: &str,
) -> TestResult<String> {
    let reply = session_send(addr, headers, session, call).await?;
    let task_id = reply.last()["result"]
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    assert!(!task_id.is_empty(), "no task: {}", reply.body);
    Ok(task_id)
}

/// Asserts that `reply` answers as if `task_id` did not exist: the JSON-RPC error -32602 with
/// the message `unknown task: <task_id>`. `context` names the request in a failure.
pub fn assert_unknown_task(reply: &Reply, task_id: &str, context: &str) {
    assert_eq!(
        reply.last()["error"]["code"],
        serde_json::json!(-32602),
        "{context}: {}",
        reply.body
    );
    assert_eq!(
        reply.last()["error"]["message"],
        serde_json::json!(format!("unknown task: {task_id}")),
        "{context}: {}",
        reply.body
    );
}
