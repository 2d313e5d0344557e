//! Raw MCP clients for the benchmarks: requests serialised once, responses read as bytes, so
//! that the client's own JSON work is not counted against the server.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use rmcp::ServiceExt as _;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::oneshot;
use tonic_mcp::McpServer;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// What a request of revision 2026-07-28 carries in its `_meta` in place of the `initialize`
/// handshake, which that revision has no more.
const REVISION_2026_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw-bench","version":"0"}}"#;

/// A `tools/call` serialised once: `{"jsonrpc":"2.0","id":` + id + the rest.
#[derive(Clone)]
pub struct RawCall {
    rest: Arc<[u8]>,
    tool: Arc<str>,
}

impl RawCall {
    pub fn new(tool: &str, arguments: &serde_json::Map<String, serde_json::Value>) -> RawCall {
        Self::with_params(
            tool,
            serde_json::json!({"name": tool, "arguments": arguments}),
        )
    }

    /// The call as a client of revision 2026-07-28 writes it: with the request `_meta` that
    /// stands for `initialize`.
    pub fn revision_2026(
        tool: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> RawCall {
        let meta: serde_json::Value = serde_json::from_str(REVISION_2026_META).expect("meta");
        Self::with_params(
            tool,
            serde_json::json!({"name": tool, "arguments": arguments, "_meta": meta}),
        )
    }

    fn with_params(tool: &str, params: serde_json::Value) -> RawCall {
        let rest = format!(r#","method":"tools/call","params":{params}}}"#);
        RawCall {
            rest: rest.into_bytes().into(),
            tool: tool.into(),
        }
    }

    fn line(&self, id: u64) -> Vec<u8> {
        let mut line = Vec::with_capacity(self.rest.len() + 40);
        line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        line.extend_from_slice(id.to_string().as_bytes());
        line.extend_from_slice(&self.rest);
        line
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Vec<u8>>>>>;

/// A JSON-RPC client on an in-process duplex pipe to an `McpServer`, multiplexing by id.
pub struct RawDuplex {
    writer: tokio::sync::Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    pending: Pending,
    next: AtomicU64,
}

/// The id of a response line, when it starts `{"jsonrpc":"2.0","id":N` (rmcp's field order).
fn response_id(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

impl RawDuplex {
    /// Served by rmcp's own transport for an `AsyncRead + AsyncWrite` (`ServiceExt::serve`).
    pub async fn connect(server: McpServer) -> RawDuplex {
        Self::connect_with(server, false).await
    }

    /// Served by the runtime's line transport (`McpServer::serve_io`), the one
    /// `serve_stdio` runs, with its message guard.
    pub async fn connect_lines(server: McpServer) -> RawDuplex {
        Self::connect_with(server, true).await
    }

    async fn connect_with(server: McpServer, lines: bool) -> RawDuplex {
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if lines {
                let (read, write) = tokio::io::split(server_io);
                let _ = server.serve_io(read, write).await;
            } else if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut write) = tokio::io::split(client_io);
        let mut reader = BufReader::new(read);
        write
            .write_all(format!("{INITIALIZE}\n").as_bytes())
            .await
            .expect("write");
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line).await.expect("read");
        assert_eq!(response_id(&line), Some(0), "initialize answered");
        write
            .write_all(format!("{INITIALIZED}\n").as_bytes())
            .await
            .expect("write");
        let pending: Pending = Arc::default();
        let routes = pending.clone();
        tokio::spawn(async move {
            loop {
                let mut line = Vec::with_capacity(4096);
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if let Some(id) = response_id(&line) {
                    let sender = routes.lock().expect("lock").remove(&id);
                    if let Some(sender) = sender {
                        let _ = sender.send(line);
                    }
                }
            }
        });
        RawDuplex {
            writer: tokio::sync::Mutex::new(write),
            pending,
            next: AtomicU64::new(1),
        }
    }

    /// One call; the response line as bytes.
    pub async fn call(&self, call: &RawCall) -> Vec<u8> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.pending.lock().expect("lock").insert(id, sender);
        let mut line = call.line(id);
        line.push(b'\n');
        self.writer
            .lock()
            .await
            .write_all(&line)
            .await
            .expect("write");
        receiver.await.expect("response")
    }
}

/// A keep-alive HTTP/1.1 connection to a stateless streamable HTTP endpoint.
pub struct RawHttp {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    uri: http::Uri,
    next: u64,
    /// Revision 2026-07-28: no `initialize`, and the SEP-2243 headers on every request.
    revision_2026: bool,
}

impl RawHttp {
    /// A client of revision 2025-06-18, which initialises first.
    pub async fn connect(addr: std::net::SocketAddr) -> RawHttp {
        let mut client = Self::open(addr, false).await;
        // Stateless: no session, but a client initialises before calling.
        let init = client
            .post(Bytes::from_static(INITIALIZE.as_bytes()), None)
            .await;
        assert!(
            response_id(&init) == Some(0),
            "{}",
            String::from_utf8_lossy(&init)
        );
        client
    }

    /// A client of revision 2026-07-28, whose calls are [`RawCall::revision_2026`]s.
    pub async fn connect_2026(addr: std::net::SocketAddr) -> RawHttp {
        Self::open(addr, true).await
    }

    async fn open(addr: std::net::SocketAddr, revision_2026: bool) -> RawHttp {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .expect("handshake");
        tokio::spawn(connection);
        RawHttp {
            sender,
            uri: format!("http://{addr}/mcp").parse().expect("uri"),
            next: 1,
            revision_2026,
        }
    }

    /// Posts `body`, a `tools/call` of `tool` or (with `None`) an `initialize`.
    async fn post(&mut self, body: Bytes, tool: Option<&str>) -> Vec<u8> {
        let mut request = http::Request::post(self.uri.clone())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("host", self.uri.authority().expect("authority").as_str());
        request = match (self.revision_2026, tool) {
            (true, Some(tool)) => request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", tool),
            _ => request.header("mcp-protocol-version", "2025-06-18"),
        };
        let request = request.body(Full::new(body)).expect("request");
        self.sender.ready().await.expect("ready");
        let response = self.sender.send_request(request).await.expect("response");
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes()
            .to_vec();
        assert!(
            status.is_success(),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
        body
    }

    /// A request of revision 2025-11-25 (whose task shape `tools/call` with `task` is): its
    /// answer's JSON-RPC message.
    pub async fn request_2025(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        let id = self.next;
        self.next += 1;
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let request = http::Request::post(self.uri.clone())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("host", self.uri.authority().expect("authority").as_str())
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("request");
        self.sender.ready().await.expect("ready");
        let response = self.sender.send_request(request).await.expect("response");
        let body = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let text = String::from_utf8_lossy(&body);
        let json = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|data| !data.is_empty())
            .unwrap_or(text.trim());
        serde_json::from_str(json).unwrap_or_else(|_| panic!("{method}: {text}"))
    }

    /// One call; the response body as bytes.
    pub async fn call(&mut self, call: &RawCall) -> Vec<u8> {
        let id = self.next;
        self.next += 1;
        self.post(Bytes::from(call.line(id)), Some(&call.tool))
            .await
    }
}

/// The `AllScalars` that `profile_call` sends: a dozen fields set, a few elements in two
/// repeated fields. The `tool_call` benchmark's message is this with every other field set.
pub fn light_scalars() -> e2e::testdata::scalars::AllScalars {
    use e2e::testdata::scalars::{AllScalars, Color};
    AllScalars {
        f_double: 1234.5678,
        f_float: 0.25,
        f_int32: -42,
        f_int64: 9_007_199_254_740_993,
        f_uint32: 4_000_000_000,
        f_uint64: u64::MAX,
        f_string: "The quick brown fox jumps over the lazy dog".to_owned(),
        f_bytes: b"\x00\x01\x02binary payload\xfe\xff".to_vec(),
        r_int32: vec![1, -2, 3, -4, 5, -6, 7, -8],
        r_string: vec!["alpha".to_owned(), "beta".to_owned(), "gamma".to_owned()],
        color: Color::Green as i32,
        nickname: Some("foxy".to_owned()),
        ..Default::default()
    }
}
