//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, with the depth guard in
//! front of the parser.
//!
//! rmcp's own stdio transport ignores a line it cannot parse, and its client waits for its own
//! timeout. Here every line that carries a request gets an answer: a too-deep `tools/call` the
//! documented `isError` ([`guard`]), any other line that cannot be read a JSON-RPC parse error,
//! with `"id": null` when the line has no readable id (not JSON, cut short, or too long).
//!
//! A plain `tools/call` is read straight from its text (`tools_call_text`) and answered by the
//! transport itself (`stdio_plain`); every other message goes to rmcp's service.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    model::{
        ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, GetExtensions as _,
        ServerJsonRpcMessage, ServerResult,
    },
    transport::Transport,
};
use tokio::{
    io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader},
    sync::Mutex,
    task::JoinSet,
};

use crate::{
    call::MESSAGE_DEPTH_LIMIT,
    call::facts::Facts,
    call::structured_text,
    error::Error,
    server::McpServer,
    server::task_shape::{self, Revision},
    transport::guard::{self, Screened},
    transport::stdio_plain::PlainCalls,
    transport::tools_call_text,
};

/// Largest accepted line (the same bound as rmcp's stdio transport).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long the answers of calls still running are waited for when the input ends (rmcp's
/// drain of its own handlers then).
const DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

impl McpServer {
    /// Serve MCP over stdin/stdout until the client disconnects (stdin closes).
    ///
    /// Every request gets an answer: one nested too deep for the JSON parser is refused with
    /// the documented `isError` (a `tools/call`) or a JSON-RPC parse error (anything else), and
    /// a line that is not JSON gets a JSON-RPC parse error. Stdin closing before the handshake
    /// (an MCP host probing the command, `server </dev/null`) is a clean end: `Ok(())`.
    ///
    /// # Errors
    ///
    /// [`Error::Handshake`] when the client fails the MCP handshake, [`Error::ServerTask`]
    /// when the server task fails.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serve MCP as newline-delimited JSON-RPC over any reader and writer (what
    /// [`serve_stdio`](Self::serve_stdio) does with stdin and stdout), until `read` ends.
    ///
    /// # Errors
    ///
    /// As [`serve_stdio`](Self::serve_stdio).
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), Error>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let transport = LineTransport::new(read, write, self.clone());
        let running = match rmcp::ServiceExt::serve(self, transport).await {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::debug!("the input closed before the MCP handshake");
                return Ok(());
            }
            Err(error) => return Err(Error::Handshake(Box::new(error))),
        };
        running.waiting().await.map_err(Error::ServerTask)?;
        Ok(())
    }
}

/// A server transport over a reader and a writer of newline-delimited JSON-RPC.
pub(crate) struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of a line that went over [`MAX_LINE_BYTES`].
    discarding: bool,
    write: Arc<Mutex<Option<W>>>,
    /// Answers the transport itself writes (errors for lines that never reach rmcp, plain
    /// calls). They run as tasks because rmcp may drop a `receive` future at any await point;
    /// `close` waits for them, so none is lost when the input ends.
    answers: JoinSet<()>,
    /// The server, for the task requests of revision 2025-11-25 ([`task_shape`]).
    server: McpServer,
    /// The revision the client asked for in `initialize`, for [`task_shape::route`].
    revision: Revision,
    /// Plain `tools/call`s, answered by the transport itself ([`PlainCalls`]).
    plain: PlainCalls,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(read: R, write: W, server: McpServer) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
            answers: JoinSet::new(),
            server,
            revision: Revision::default(),
            plain: PlainCalls::default(),
        }
    }

    /// Read one line into `self.line` (without its newline). `None` at end of input. Cancel
    /// safe: a partial line stays in `self.line`.
    async fn read_line(&mut self) -> Option<Result<(), usize>> {
        loop {
            let (consumed, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => {
                        tracing::debug!(%error, "stdin read failed");
                        return None;
                    }
                };
                if available.is_empty() {
                    return None;
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |index| index + 1);
                if !self.discarding {
                    if self.line.len() + take > MAX_LINE_BYTES {
                        self.line.clear();
                        self.discarding = true;
                    } else {
                        self.line.extend_from_slice(&available[..take]);
                    }
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if done {
                if std::mem::take(&mut self.discarding) {
                    return Some(Err(MAX_LINE_BYTES));
                }
                return Some(Ok(()));
            }
        }
    }

    /// Answers `error` to `id`, in the background (see [`Self::answers`]).
    fn send_error(&mut self, error: ErrorData, id: Option<rmcp::model::RequestId>) {
        let write = Arc::clone(&self.write);
        self.answers.spawn(async move {
            let _ = write_message(&write, ServerJsonRpcMessage::error(error, id)).await;
        });
    }

    /// A JSON-RPC parse error (`-32700`) for a line whose id cannot be read, in the
    /// background: JSON-RPC 2.0 answers it with `"id": null` (rmcp's error type has no null
    /// id, so it is written here).
    fn send_parse_error(&mut self, message: String) {
        let write = Arc::clone(&self.write);
        self.answers.spawn(async move {
            let answer = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": ErrorCode::PARSE_ERROR.0, "message": message},
            });
            if let Ok(bytes) = serde_json::to_vec(&answer) {
                let _ = write_bytes(&write, bytes).await;
            }
        });
    }

    /// The next message for rmcp or for a plain call: each line read until one is a message
    /// (lines that are not are answered here). Cancel safe, as [`Self::read_line`].
    async fn next_message(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let read = self.read_line().await?;
            let line = std::mem::take(&mut self.line);
            if let Err(limit) = read {
                self.send_parse_error(format!(
                    "Parse error: the message is longer than {limit} bytes"
                ));
                continue;
            }
            let mut text = line.as_slice();
            text = text.strip_suffix(b"\n").unwrap_or(text);
            text = text.strip_suffix(b"\r").unwrap_or(text);
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let tools_call = match guard::screen(text) {
                Screened::Pass { tools_call } => {
                    if let Some(routed) = task_shape::route(text, &self.server, self.revision)
                        && let Ok(message) = marked(&routed, |facts| facts.routed = true)
                    {
                        return Some(message);
                    }
                    tools_call
                }
                // rmcp would read a `tools/call` with non-object arguments as an unknown
                // method; take them out and refuse the call with an `isError` instead.
                Screened::Repaired(repaired, not) => {
                    if let Ok(message) = marked(&repaired, |facts| facts.not_an_object = Some(not))
                    {
                        return Some(message);
                    }
                    true
                }
                Screened::Cut(cut, too_deep) => {
                    match marked(&cut, |facts| facts.too_deep = Some(too_deep)) {
                        Ok(message) => return Some(message),
                        Err(error) => {
                            tracing::debug!(%error, "a cut tools/call did not parse");
                            let value = serde_json::from_slice::<serde_json::Value>(&cut).ok();
                            let message =
                                guard::parse_error_message(&too_deep, MESSAGE_DEPTH_LIMIT);
                            let id = value.as_ref().and_then(request_id);
                            self.send_error(ErrorData::parse_error(message, None), id);
                            continue;
                        }
                    }
                }
                Screened::Refuse { id, message } => {
                    let id = id.and_then(|id| serde_json::from_value(id).ok());
                    self.send_error(ErrorData::parse_error(message, None), id);
                    continue;
                }
            };
            // Other lines (they never mention the method) go straight to the general parse.
            if tools_call && let Some(message) = tools_call_text::read(text) {
                return Some(message);
            }
            match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
                Ok(message) => {
                    if let ClientJsonRpcMessage::Request(request) = &message
                        && let ClientRequest::InitializeRequest(initialize) = &request.request
                    {
                        self.revision =
                            Revision::of(initialize.params.protocol_version.as_str().as_bytes());
                    }
                    return Some(message);
                }
                Err(error) => {
                    // A line that is not JSON (or is cut short) gets a parse error with a
                    // null id, as JSON-RPC 2.0 asks; a readable message of the wrong shape is
                    // answered to its id, like rmcp does.
                    let value = serde_json::from_slice::<serde_json::Value>(text).ok();
                    let Some(value) = value else {
                        tracing::debug!(%error, "a line that is not JSON");
                        self.send_parse_error(format!(
                            "Parse error: the line is not a JSON-RPC message ({error}); send \
                             one JSON object per line"
                        ));
                        continue;
                    };
                    let Some(id) = request_id(&value) else {
                        tracing::debug!(%error, "ignoring an unreadable notification");
                        continue;
                    };
                    self.send_error(
                        ErrorData::invalid_request(format!("Invalid request: {error}"), None),
                        Some(id),
                    );
                }
            }
        }
    }
}

async fn write_message<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    mut message: ServerJsonRpcMessage,
) -> std::io::Result<()> {
    let bytes = structured_text::to_vec(&mut message).map_err(std::io::Error::other)?;
    write_bytes(write, bytes).await
}

/// Writes one message and its newline.
async fn write_bytes<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut guard = write.lock().await;
    let Some(writer) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// `bytes` read as a message, a request marked with the [`Facts`] that `mark` sets.
fn marked(bytes: &[u8], mark: impl FnOnce(&mut Facts)) -> serde_json::Result<ClientJsonRpcMessage> {
    let mut message = serde_json::from_slice::<ClientJsonRpcMessage>(bytes)?;
    if let ClientJsonRpcMessage::Request(request) = &mut message {
        let mut facts = Facts::default();
        mark(&mut facts);
        request.request.extensions_mut().insert(facts);
    }
    Ok(message)
}

/// The id of a JSON-RPC message, read leniently from a value.
fn request_id(value: &serde_json::Value) -> Option<rmcp::model::RequestId> {
    serde_json::from_value(value.get("id")?.clone()).ok()
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.plain.sent(&item);
        let write = Arc::clone(&self.write);
        let server = self.server.clone();
        async move {
            // `capabilities.tasks` for a client of revision 2025-11-25 (not in rmcp's model).
            if let ServerJsonRpcMessage::Response(response) = &item
                && let ServerResult::InitializeResult(_) = &response.result
                && let Ok(mut value) = serde_json::to_value(&item)
                && task_shape::declare(&mut value, &server)
            {
                let bytes = serde_json::to_vec(&value).map_err(std::io::Error::other)?;
                return write_bytes(&write, bytes).await;
            }
            write_message(&write, item).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            // Answers written are collected, so that a long session does not keep them.
            while self.answers.try_join_next().is_some() {}
            let message = self.next_message().await?;
            self.plain.read(&message);
            match self.plain.answer(message, &self.server) {
                Ok(call) => {
                    let write = Arc::clone(&self.write);
                    self.answers.spawn(async move {
                        if let Some(answer) = call.await {
                            let _ = write_message(&write, answer).await;
                        }
                    });
                }
                Err(message) => return Some(message),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let drained = tokio::time::timeout(DRAIN, async {
            while self.answers.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            self.plain.cancel_all();
            while self.answers.join_next().await.is_some() {}
        }
        let writer = self.write.lock().await.take();
        if let Some(mut writer) = writer {
            writer.flush().await?;
        }
        Ok(())
    }
}
