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
    let text = body.map(Value::to_string).unwrap_or_default();
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
