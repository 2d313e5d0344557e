//! The streamable HTTP transport: [`McpHttpService`] and the guards it puts in front of rmcp's
//! service (body size, nesting depth, sessions and their callers, origins, a check of the
//! messages). The crate `tonic-mcp-serve` serves it on a listener.

use std::{convert::Infallible, fmt::Display, pin::Pin, sync::Arc};

use bytes::Bytes;
use http_body::Body;
use http_body_util::{BodyExt as _, Full};
use rmcp::{
    ErrorData,
    transport::{
        StreamableHttpServerConfig, StreamableHttpService,
        streamable_http_server::session::local::LocalSessionManager,
    },
};

use crate::{
    call::arguments_text,
    call::facts::Facts,
    server::McpServer,
    server::http_response::{HttpResponse, plain_response},
    server::task_shape::{self, Revision},
    tool::context::Caller,
    transport::guard::{self, Screened},
    transport::http_plain::{self, PlainHttp},
    transport::origin,
    transport::sessions::SessionStore,
};

/// A check of every message body [`McpHttpService`] reads ([`McpHttpService::check_messages`]).
type MessageCheck = Arc<dyn Fn(&http::request::Parts, &[u8]) -> Option<HttpResponse> + Send + Sync>;

impl McpServer {
    /// A tower service for MCP's streamable HTTP transport (rmcp's
    /// [`StreamableHttpService`] behind this crate's guards), to mount at a path such as
    /// `/mcp` in any hyper, axum or tower stack.
    ///
    /// rmcp's protections stay on: `Host` validation (loopback hosts by default; set
    /// `allowed_hosts` for public names) and optional `Origin` validation. On top of them:
    /// a request body larger than `config.max_request_body_bytes` is refused with 413 before
    /// it is buffered (at once when its `Content-Length` says so); a message nested too deep
    /// for the JSON parser gets the documented `isError` (a `tools/call`) or a JSON-RPC parse
    /// error; sessions are bounded by [`SessionLimits`](crate::server::SessionLimits). For horizontal
    /// scaling use [`stateless_http_config`](Self::stateless_http_config): no session state,
    /// every request stands alone.
    ///
    /// Authentication is a layer in front of it (`tonic-mcp-auth`'s makes the endpoint an
    /// OAuth 2.1 resource server). Such a layer names the [`Caller`](crate::tool::context::Caller) of each
    /// request, to which the sessions it opens are bound, and may check every message body
    /// ([`check_messages`](McpHttpService::check_messages)). Paths under `/.well-known/` are
    /// never MCP: the service answers them 404, leaving them to such a layer.
    pub fn streamable_http_service(&self, config: StreamableHttpServerConfig) -> McpHttpService {
        let server = self.clone();
        let limits = self.session_limits();
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(limits.idle_timeout);
        let sessions = Arc::new(SessionStore::new(local, limits, self.replica()));
        self.track_sessions(&sessions);
        McpHttpService {
            check: None,
            max_body: config.max_request_body_bytes,
            plain: PlainHttp::new(&config).map(Arc::new),
            session_mode: config.legacy_session_mode,
            allowed_origins: config.allowed_origins.clone().into(),
            sessions: Arc::clone(&sessions),
            server: server.clone(),
            inner: StreamableHttpService::new(move || Ok(server.clone()), sessions, config),
        }
    }

    /// A streamable HTTP configuration for stateless serving: no sessions, plain JSON
    /// responses when a call sends no notifications (progress falls back to SSE).
    ///
    /// Like [`session_http_config`](Self::session_http_config), it refuses a foreign `Host`
    /// (loopback names are allowed; add public names with `with_allowed_hosts`) and any
    /// request carrying an `Origin` (browsers send one) that is neither a loopback origin
    /// (while `Host` is loopback) nor in `allowed_origins`.
    pub fn stateless_http_config() -> StreamableHttpServerConfig {
        Self::session_http_config()
            .with_legacy_session_mode(false)
            .with_json_response(true)
    }

    /// A streamable HTTP configuration with sessions (rmcp's default) that also validates
    /// `Origin`: rmcp's `StreamableHttpServerConfig::default()` checks `Host` but lets any
    /// `Origin` through while its allow-list is empty; this one allows the loopback origins
    /// ([`LOOPBACK_ORIGINS`]: a page served from this machine, such as the MCP Inspector's web
    /// UI) while `Host` is a loopback name, and refuses every other `Origin` with 403.
    ///
    /// Allow more browser origins by adding to the list (`with_allowed_origins` replaces it,
    /// loopback origins included):
    ///
    /// ```
    /// let mut config = tonic_mcp::McpServer::session_http_config();
    /// config.allowed_origins.push("https://app.example.com:443".to_owned());
    /// ```
    ///
    /// [`LOOPBACK_ORIGINS`]: crate::transport::origin::LOOPBACK_ORIGINS
    pub fn session_http_config() -> StreamableHttpServerConfig {
        StreamableHttpServerConfig::default()
            .enforce_origin_validation()
            .with_allowed_origins(origin::LOOPBACK_ORIGINS)
    }
}

/// A JSON-RPC error as an HTTP response.
fn jsonrpc_error_response(
    status: http::StatusCode,
    error: ErrorData,
    id: Option<serde_json::Value>,
) -> HttpResponse {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(serde_json::Value::Null),
        "error": error,
    });
    let mut response = plain_response(status, body.to_string());
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// The streamable HTTP endpoint of an [`McpServer`], made (and its guards described) by
/// [`McpServer::streamable_http_service`]; cloning is cheap.
#[derive(Clone)]
pub struct McpHttpService {
    inner: StreamableHttpService<McpServer, SessionStore>,
    /// The server, for the task requests of revision 2025-11-25 ([`task_shape`]).
    server: McpServer,
    sessions: Arc<SessionStore>,
    /// Answers plain stateless calls without rmcp's per-request service, when the
    /// configuration allows it ([`http_plain`]).
    plain: Option<Arc<PlainHttp>>,
    max_body: usize,
    session_mode: bool,
    /// The configuration's `allowed_origins`, for [`origin::refused`].
    allowed_origins: Arc<[String]>,
    /// What every message body must pass ([`McpHttpService::check_messages`]).
    check: Option<MessageCheck>,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService")
            .field("max_body", &self.max_body)
            .field("session_mode", &self.session_mode)
            .field("max_sessions", &self.sessions.max_sessions)
            .finish_non_exhaustive()
    }
}

impl McpHttpService {
    /// Sessions open now (0 in stateless mode).
    pub async fn open_sessions(&self) -> usize {
        self.sessions.local.sessions.read().await.len()
    }

    /// Checks every message body with `check` before it goes further: once it is read within
    /// the size bound and screened by the nesting guard (a message too deep for the JSON parser
    /// is cut, or answered, first), and before any of it runs. `check` gets the request's head
    /// and the body, and returns the HTTP answer that refuses it, or `None` to let it through.
    /// `tonic-mcp-auth` refuses here a `tools/call` whose tool needs scopes the access token
    /// lacks.
    pub fn check_messages(
        mut self,
        check: impl Fn(&http::request::Parts, &[u8]) -> Option<HttpResponse> + Send + Sync + 'static,
    ) -> Self {
        self.check = Some(Arc::new(check));
        self
    }

    /// A loopback `Origin` sent to this server under a public `Host` ([`origin::refused`]).
    fn foreign_to_loopback<B>(&self, request: &http::Request<B>) -> bool {
        let header = |name| {
            request
                .headers()
                .get(name)
                .and_then(|value: &http::HeaderValue| value.to_str().ok())
        };
        let host =
            header(http::header::HOST).or_else(|| request.uri().authority().map(|a| a.as_str()));
        origin::refused(header(http::header::ORIGIN), host, &self.allowed_origins)
    }

    async fn handle<B>(mut self, request: http::Request<B>) -> HttpResponse
    where
        B: Body + Send + 'static,
        B::Data: Send + 'static,
        B::Error: Display,
    {
        if let Some(refused) = ambiguous_target(&request) {
            return plain_response(http::StatusCode::BAD_REQUEST, refused);
        }
        if request.uri().path().starts_with("/.well-known/") {
            return plain_response(http::StatusCode::NOT_FOUND, "");
        }
        // A session answers only to the caller that opened it; the caller of a request that
        // names no session may open one.
        let caller = request.extensions().get::<Caller>().cloned();
        let opener = match (caller, request.headers().get("mcp-session-id")) {
            (Some(caller), Some(session))
                if !self
                    .sessions
                    .owned_by(&String::from_utf8_lossy(session.as_bytes()), &caller) =>
            {
                tracing::warn!("a caller named a session another caller opened");
                return jsonrpc_error_response(
                    http::StatusCode::NOT_FOUND,
                    ErrorData::new(rmcp::model::ErrorCode(-32001), "Session not found", None),
                    None,
                );
            }
            (Some(caller), None) => Some(caller),
            _ => None,
        };
        if self.foreign_to_loopback(&request) {
            return plain_response(
                http::StatusCode::FORBIDDEN,
                "Forbidden: a loopback Origin is not allowed for a server reached by a public name",
            );
        }
        if request.method() != http::Method::POST {
            let delete = request.method() == http::Method::DELETE;
            let Ok(mut response) = tower_service::Service::call(&mut self.inner, request).await;
            // rmcp closes the session, then answers 202 Accepted; the DELETE is done, which
            // HTTP says with 204 (the Python SDK 2.x logs any other status as a failed
            // termination).
            if delete && response.status() == http::StatusCode::ACCEPTED {
                *response.status_mut() = http::StatusCode::NO_CONTENT;
            }
            return response;
        }
        let declared = request
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if declared.is_some_and(|length| length > self.max_body as u64) {
            return too_large(self.max_body);
        }
        let (mut parts, body) = request.into_parts();
        let bytes = match read_body(body, self.max_body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let (bytes, tools_call) = match guard::screen(&bytes) {
            Screened::Pass { tools_call } => (bytes, tools_call),
            Screened::Repaired(repaired, not) => {
                parts
                    .extensions
                    .get_or_insert_default::<Facts>()
                    .not_an_object = Some(not);
                (Bytes::from(repaired), false)
            }
            Screened::Cut(cut, too_deep) => {
                parts.extensions.get_or_insert_default::<Facts>().too_deep = Some(too_deep);
                (Bytes::from(cut), false)
            }
            Screened::Refuse { id, message } => {
                return jsonrpc_error_response(
                    http::StatusCode::BAD_REQUEST,
                    ErrorData::parse_error(message, None),
                    id,
                );
            }
        };
        // Session mode: sessions are opened one at a time within their bounds, and a request
        // id is in flight once per session.
        let mut _admitting = None;
        let mut in_flight = None;
        if self.session_mode
            && let Ok(head) = serde_json::from_slice::<Head>(&bytes)
        {
            match (parts.headers.get("mcp-session-id"), &head.method, head.id) {
                (None, Some(method), id) if method == "initialize" => {
                    let admitting = self.sessions.admitting.lock().await;
                    if let Some(full) = self.sessions.refusal(opener.as_ref()).await {
                        return jsonrpc_error_response(
                            http::StatusCode::SERVICE_UNAVAILABLE,
                            ErrorData::internal_error(full, None),
                            id,
                        );
                    }
                    _admitting = Some(admitting);
                }
                (Some(session), Some(_), Some(id)) => {
                    let session = String::from_utf8_lossy(session.as_bytes());
                    match self.sessions.start_request(&session, id.to_string()) {
                        Some(started) => in_flight = Some(started),
                        None => {
                            return jsonrpc_error_response(
                                http::StatusCode::CONFLICT,
                                ErrorData::invalid_request(
                                    format!(
                                        "a request with id {id} is already in flight in this \
                                         session; give each request of a session its own id"
                                    ),
                                    None,
                                ),
                                Some(id),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(refused) = self.check.as_ref().and_then(|check| check(&parts, &bytes)) {
            return refused;
        }
        // After the check, which sees a task-augmented `tools/call` as any other.
        let revision = parts
            .headers
            .get("mcp-protocol-version")
            .map_or_else(Revision::default, |version| {
                Revision::of(version.as_bytes())
            });
        let initialize = INITIALIZE.find(&bytes).is_some();
        let routed = task_shape::route(&bytes, &self.server, revision);
        // A plain stateless call: answered here ([`http_plain`]).
        if routed.is_none()
            && tools_call
            && let Some(plain) = &self.plain
            && let Some(lifecycle) = plain.admits(&parts)
            && let Some((id, call)) = http_plain::read(&self.server, &bytes, lifecycle, &parts)
        {
            return http_plain::answer(self.server.clone(), id, call, parts).await;
        }
        let bytes = match routed {
            Some(routed) => {
                parts.extensions.get_or_insert_default::<Facts>().routed = true;
                Bytes::from(routed)
            }
            // A plain `tools/call`: its arguments go to the call as text, past rmcp's parse
            // (after the check, which reads them). rmcp would read of them only properties
            // marked `x-mcp-header` (SEP-2243), which no schema of this crate carries.
            None => match tools_call.then(|| arguments_text::take(&bytes)).flatten() {
                Some((rest, arguments)) => {
                    parts.extensions.get_or_insert_default::<Facts>().arguments = Some(arguments);
                    Bytes::from(rest)
                }
                None => bytes,
            },
        };
        let request = http::Request::from_parts(parts, Full::new(bytes));
        let Ok(mut response) = tower_service::Service::call(&mut self.inner, request).await;
        if initialize {
            response = declare_tasks(response, self.server.clone());
        }
        if let Some(opener) = opener
            && let Some(session) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|id| id.to_str().ok())
        {
            self.sessions.record_owner(session, opener).await;
        }
        match in_flight {
            // Until the answer has gone out, or the client has gone.
            Some(in_flight) => response.map(|body| {
                body.map_frame(move |frame| {
                    let _ = &in_flight;
                    frame
                })
                .boxed()
            }),
            None => response,
        }
    }
}

/// What the session checks read of a message: its method and id, escapes decoded.
#[derive(serde::Deserialize)]
struct Head {
    method: Option<String>,
    id: Option<serde_json::Value>,
}

/// Why a request's target is ambiguous, for a 400: `Host` or `Origin` given more than once
/// (RFC 9112 section 3.2 asks for 400 on several `Host` lines; rmcp reads only the first of
/// either), or an absolute-form target whose authority is not the `Host` header's (RFC 9112
/// section 3.2.2 makes the target's authority the one that counts, and rmcp checks `Host`).
fn ambiguous_target<B>(request: &http::Request<B>) -> Option<&'static str> {
    let headers = request.headers();
    if headers.get_all(http::header::HOST).iter().count() > 1 {
        return Some("Bad Request: more than one Host header");
    }
    if headers.get_all(http::header::ORIGIN).iter().count() > 1 {
        return Some("Bad Request: more than one Origin header");
    }
    if let (Some(authority), Some(host)) =
        (request.uri().authority(), headers.get(http::header::HOST))
        && !authority
            .as_str()
            .as_bytes()
            .eq_ignore_ascii_case(host.as_bytes())
    {
        return Some("Bad Request: the request target's authority is not the Host header's");
    }
    None
}

/// The method name that marks a body as a possible `initialize`.
static INITIALIZE: guard::Needle =
    guard::Needle::new(|| memchr::memmem::Finder::new(b"\"initialize\""));

/// An `initialize` answer of revision 2025-11-25 with `capabilities.tasks` added
/// ([`task_shape::declare`]), as a JSON body or in the `data:` lines of a server-sent event.
fn declare_tasks(response: HttpResponse, server: McpServer) -> HttpResponse {
    response.map(|body| {
        body.map_frame(move |frame| {
            let Some(data) = frame.data_ref() else {
                return frame;
            };
            let mut changed = false;
            let text = String::from_utf8_lossy(data);
            let lines: Vec<String> = text
                .split('\n')
                .map(|line| {
                    let (prefix, json) = match line.strip_prefix("data:") {
                        Some(json) => ("data: ", json.trim_start()),
                        None => ("", line),
                    };
                    if let Ok(mut message) = serde_json::from_str::<serde_json::Value>(json)
                        && task_shape::declare(&mut message, &server)
                    {
                        changed = true;
                        return format!("{prefix}{message}");
                    }
                    line.to_owned()
                })
                .collect();
            if changed {
                http_body::Frame::data(Bytes::from(lines.join("\n")))
            } else {
                frame
            }
        })
        .boxed()
    })
}

fn too_large(max: usize) -> HttpResponse {
    plain_response(
        http::StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: the request body exceeds {max} bytes"),
    )
}

/// The body, read frame by frame and refused as soon as it goes over `max` bytes.
async fn read_body<B>(body: B, max: usize) -> Result<Bytes, HttpResponse>
where
    B: Body,
    B::Error: Display,
{
    let mut body = std::pin::pin!(body);
    let mut collected = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| {
            let text = format!("Failed to read the request body: {error}");
            plain_response(http::StatusCode::BAD_REQUEST, text)
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if bytes::Buf::remaining(&data) > max.saturating_sub(collected.len()) {
            return Err(too_large(max));
        }
        bytes::BufMut::put(&mut collected, data);
    }
    Ok(collected.freeze())
}

impl<B> tower_service::Service<http::Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send + 'static,
    B::Error: Display,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}
