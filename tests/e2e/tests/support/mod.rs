//! Helpers for the reliability tests: the `e2e-server` binary as a real process, and a raw
//! HTTP/1.1 client that shows exactly what the server answered.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, Command};

/// A spawned `e2e-server --http`, killed on drop.
pub struct HttpServer {
    pub child: Child,
    pub addr: SocketAddr,
}

/// Spawn `e2e-server --http 127.0.0.1:0 EXTRA…` and wait for its address.
pub async fn spawn_http(extra: &[&str]) -> HttpServer {
    let mut command = Command::new(env!("CARGO_BIN_EXE_e2e-server"));
    command.args(["--http", "127.0.0.1:0"]).args(extra);
    spawned_http(command).await
}

/// As [`spawn_http`], with the process's limit on open files (`RLIMIT_NOFILE`, soft and hard)
/// set to `open_files` (by `sh`'s `ulimit`, which then execs the server: same process).
pub async fn spawn_http_with_open_files(open_files: u32, extra: &[&str]) -> HttpServer {
    let mut command = Command::new("sh");
    command
        .args(["-c", r#"ulimit -n "$0" && exec "$@""#])
        .arg(open_files.to_string())
        .arg(env!("CARGO_BIN_EXE_e2e-server"))
        .args(["--http", "127.0.0.1:0"])
        .args(extra);
    spawned_http(command).await
}

/// Runs `command`, an `e2e-server --http`, and waits for its address.
async fn spawned_http(mut command: Command) -> HttpServer {
    let mut child = command
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn e2e-server --http");
    let stdout = child.stdout.take().expect("stdout");
    let (addr, mut lines) = test_kit::announced_addr(stdout).await;
    let addr = addr.parse().expect("an address");
    // Keep draining stdout so that the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    HttpServer { child, addr }
}

/// rmcp's client with `handler`, after the handshake with a spawned `e2e-server` over stdio.
pub async fn stdio_client<H: rmcp::Service<rmcp::RoleClient>>(
    handler: H,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    stdio_client_with(handler, &[]).await
}

/// [`stdio_client`] with the server started as `e2e-server ARGS…`.
pub async fn stdio_client_with<H: rmcp::Service<rmcp::RoleClient>>(
    handler: H,
    args: &[&str],
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    use rmcp::ServiceExt as _;
    let mut command = Command::new(env!("CARGO_BIN_EXE_e2e-server"));
    command.args(args);
    let transport = rmcp::transport::TokioChildProcess::new(command).expect("spawn e2e-server");
    handler
        .serve(transport)
        .await
        .expect("handshake over stdio")
}

/// rmcp's client with `handler`, after the handshake over streamable HTTP with the server at
/// `addr`.
pub async fn http_client<H: rmcp::Service<rmcp::RoleClient>>(
    handler: H,
    addr: SocketAddr,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    use rmcp::ServiceExt as _;
    let transport =
        rmcp::transport::StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    handler.serve(transport).await.expect("handshake over HTTP")
}

/// Spawn `e2e-server ARGS…` over stdio, killed on drop: the child, its stdin, and the lines of
/// its stdout.
pub fn spawn_stdio(
    args: &[&str],
) -> (
    Child,
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_e2e-server"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn e2e-server");
    let stdin = child.stdin.take().expect("stdin");
    let lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, stdin, lines)
}

/// The next line of `lines`, which must come within `within`.
pub async fn next_line_within<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    within: Duration,
) -> String {
    tokio::time::timeout(within, lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("a line within {within:?}"))
        .expect("read")
        .expect("a line")
}

/// A raw HTTP/1.1 response.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The JSON-RPC messages of the body: one JSON document, or the `data:` lines of SSE.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    }
}

/// POST `body` to `http://addr/mcp` with `headers`, on a fresh connection.
pub async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> RawResponse {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        addr.port(),
        body.len()
    );
    send_raw(addr, head, headers, body).await
}

/// Opens a session with a raw `initialize` and `notifications/initialized`: its id, or `None`
/// from a stateless server (which opens none).
pub async fn open_session(addr: SocketAddr) -> Option<String> {
    let response = post(addr, &[], initialize(0).to_string().as_bytes()).await;
    assert_eq!(response.status, 200, "initialize: {response:?}");
    let session = response.header("mcp-session-id")?.to_owned();
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [("mcp-session-id", session.as_str())];
    let response = post(addr, &headers, initialized.to_string().as_bytes()).await;
    assert_eq!(response.status, 202, "initialized: {response:?}");
    Some(session)
}

/// DELETE `/mcp` with `headers` on a fresh connection.
pub async fn delete(addr: SocketAddr, headers: &[(&str, &str)]) -> RawResponse {
    let head = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n",
        addr.port()
    );
    send_raw(addr, head, headers, b"").await
}

/// GET `path` on a fresh connection.
pub async fn get(addr: SocketAddr, path: &str) -> RawResponse {
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n",
        addr.port()
    );
    send_raw(addr, head, &[], b"").await
}

/// Sends `head` (the request line and fixed headers, each line ending in CRLF), then
/// `headers`, the blank line and `body`, on a fresh connection; returns the response.
async fn send_raw(
    addr: SocketAddr,
    mut head: String,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write head");
    stream.write_all(body).await.expect("write body");
    read_response(&mut stream).await
}

/// Read one `Connection: close` response to its end (chunked bodies decoded).
pub async fn read_response(stream: &mut tokio::net::TcpStream) -> RawResponse {
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
        .await
        .expect("the server answers within 30 s")
        .expect("read response");
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> RawResponse {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    RawResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// `{"children": [ … ]}` nested `levels` times around a leaf node.
pub fn nested_tree(levels: usize) -> Value {
    let mut tree = serde_json::json!({"name": "leaf"});
    for _ in 0..levels {
        tree = serde_json::json!({"children": [tree]});
    }
    tree
}

/// Resident set size of a process in KiB (Linux `/proc`).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

/// Sockets a process holds open (Linux `/proc`): its listeners and connections.
pub fn open_sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.filter_map(Result::ok)
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter(|target| target.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0)
}

/// An `initialize` request.
pub fn initialize(id: u64) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    })
}

/// A `tools/call` request.
pub fn tool_call(id: u64, name: &str, arguments: Value) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    })
}
