//! The MCP server: an `rmcp::ServerHandler` over composed tool sets.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
        ContentBlock, GetTaskParams, GetTaskResult, Implementation, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
        UpdateTaskParams,
    },
    service::RequestContext,
};
use tonic::{Code, metadata::MetadataMap};
use tracing::Instrument as _;

use crate::{
    call::{self, Call, Limits, Outcome, Progress},
    confirm,
    context::{CallContext, CallHook, Refusal},
    error::Error,
    guard::{NotAnObject, TooDeep},
    longrunning::{Redeemer, Started},
    paging::{self, ListCache, Listing},
    sessions::SessionLimits,
    stdio::LineTransport,
    tasks::{self, Tasks},
    toolset::{Entry, SetConfig, ToolSet},
    types::Types,
};

/// What cancelling a call does.
pub(crate) enum Cancel<'a, F> {
    /// The call is dropped when `F` resolves, and its result is lost (`None`).
    Drop(F),
    /// The collection of the response stream stops when the signal fires, and the call
    /// returns what it received, truncated.
    Stop(call::Stop<'a>),
}

pub(crate) struct Registered {
    pub(crate) entry: Entry,
    pub(crate) set: Arc<SetConfig>,
}

struct Inner {
    info: ServerConfig,
    tools: BTreeMap<String, Registered>,
    /// Tool definitions in `tools/list` order (sorted by name), and their paging.
    listing: Listing,
    hooks: Vec<CallHook>,
    limits: Limits,
    sessions: SessionLimits,
    /// Tool calls running now, for a graceful shutdown.
    in_flight: tokio::sync::watch::Sender<usize>,
    tasks: Tasks,
    task_ttl: Duration,
    /// The served tool of `google.longrunning.Operations/GetOperation`, named in what tools
    /// that wait for an operation say about redeeming one, and polled through when their own
    /// transport does not serve Operations.
    redeemer: Option<Redeemer>,
    /// Every message type of the tools' descriptor pools.
    types: Types,
    /// OAuth resource server settings for streamable HTTP.
    #[cfg(feature = "auth")]
    authorization: Option<crate::Authorization>,
}

/// How long [`McpServer::serve_http`] waits, after its shutdown, for tool calls in flight.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(30);

/// An MCP server whose tools call gRPC services.
///
/// Build it with [`McpServer::builder`], add the generated tool sets, then serve it over
/// stdio ([`serve_stdio`](Self::serve_stdio)) or streamable HTTP
/// ([`streamable_http_service`](Self::streamable_http_service)). It implements
/// [`rmcp::ServerHandler`], so any rmcp transport works too. Cloning is cheap.
///
/// ```no_run
/// # async fn demo(items: tonic_mcp::ToolSet, users: tonic_mcp::ToolSet) -> Result<(), tonic_mcp::Error> {
/// use tonic_mcp::McpServer;
///
/// let server = McpServer::builder("catalog", "1.0.0")
///     .instructions("Look up items and their owners.")
///     .tool_set(items)?
///     .tool_set(users.with_prefix("users")?)?
///     .build();
/// server.serve_stdio().await
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.info.server_info.name)
            .field("tools", &self.inner.tools.keys().collect::<Vec<_>>())
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpServer`].
pub struct McpServerBuilder {
    name: String,
    version: String,
    instructions: Option<String>,
    tools: BTreeMap<String, Registered>,
    hooks: Vec<CallHook>,
    limits: Limits,
    sessions: SessionLimits,
    page_size: usize,
    page_bytes: usize,
    list_cache: ListCache,
    task_ttl: Duration,
    #[cfg(feature = "auth")]
    authorization: Option<crate::Authorization>,
}

impl std::fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl McpServerBuilder {
    /// Instructions for the model, sent in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Add the tools of `set`, with its settings.
    ///
    /// # Errors
    ///
    /// [`Error::DuplicateTool`] when a tool name is already taken by an earlier set; the
    /// message names both RPCs. Give one set a prefix with [`ToolSet::with_prefix`].
    pub fn tool_set(mut self, set: ToolSet) -> Result<Self, Error> {
        let config = Arc::new(set.config);
        for entry in set.tools {
            if let Some(existing) = self.tools.get(&entry.name) {
                return Err(Error::DuplicateTool {
                    name: entry.name,
                    first: existing.entry.tool.def.rpc_path.to_string(),
                    second: entry.tool.def.rpc_path.to_string(),
                });
            }
            self.tools.insert(
                entry.name.clone(),
                Registered {
                    entry,
                    set: Arc::clone(&config),
                },
            );
        }
        Ok(self)
    }

    /// Tools per `tools/list` page (default [`DEFAULT_PAGE_SIZE`], 500; at least 1). Larger
    /// tool sets are listed in pages linked by `nextCursor`.
    ///
    /// [`DEFAULT_PAGE_SIZE`]: crate::DEFAULT_PAGE_SIZE
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Bytes of tool JSON per `tools/list` page (default [`DEFAULT_PAGE_BYTES`], 512 KiB): a
    /// page ends before its tools would pass this, so that clients that bound one message
    /// (the Python SDK 2.x refuses a server-sent event over 1 MiB) can read it. A page holds at
    /// least one tool, however large.
    ///
    /// [`DEFAULT_PAGE_BYTES`]: crate::DEFAULT_PAGE_BYTES
    pub fn page_bytes(mut self, page_bytes: usize) -> Self {
        self.page_bytes = page_bytes;
        self
    }

    /// The caching hints of `tools/list` (protocol revision 2026-07-28 and later): how long a
    /// client may treat a page as fresh (`ttlMs`; default [`DEFAULT_LIST_TTL`], 5 minutes) and
    /// who may cache it (`cacheScope`; default [`CacheScope::Public`], since every caller sees
    /// the same tools). A listing that differs by caller must be [`CacheScope::Private`].
    /// Clients on older revisions get no hints.
    ///
    /// [`DEFAULT_LIST_TTL`]: crate::DEFAULT_LIST_TTL
    pub fn list_cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.list_cache = ListCache { ttl, scope };
        self
    }

    /// How long a task lives, counted from its creation (default [`DEFAULT_TASK_TTL`], 5
    /// minutes). A task-augmented call still running then is cancelled and its task fails; a
    /// finished task is kept one more time-to-live for `tasks/get`. Keep it above the tools'
    /// deadlines.
    ///
    /// [`DEFAULT_TASK_TTL`]: crate::DEFAULT_TASK_TTL
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// Bounds on tool arguments (default: 1 MiB, 64 levels).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Bounds on streamable HTTP sessions (default: 1,000 sessions, closed after 5 minutes
    /// idle).
    pub fn session_limits(mut self, sessions: SessionLimits) -> Self {
        self.sessions = sessions;
        self
    }

    /// Run `hook` before every tool call of every set: it sees the [`CallContext`] (tool
    /// name, and HTTP headers under streamable HTTP) and may add gRPC metadata or refuse the
    /// call. Server hooks run before the tool set's own hooks.
    ///
    /// ```
    /// use tonic_mcp::{McpServer, Refusal};
    ///
    /// let server = McpServer::builder("items", "1.0.0")
    ///     .on_call(|call, metadata| {
    ///         if call.tool_name().starts_with("Admin_") {
    ///             return Err(Refusal::new("admin tools are disabled"));
    ///         }
    ///         metadata.insert("x-mcp-tool", call.tool_name().parse().map_err(|_| Refusal::new("bad tool name"))?);
    ///         Ok(())
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    ///
    /// Checking a bearer token under streamable HTTP: a call without the expected
    /// `Authorization` header is refused, and the model reads the refusal as an `isError`
    /// result (`call refused: …`). The message never repeats what was sent. Compare in
    /// constant time where timing matters.
    ///
    /// ```
    /// use tonic_mcp::{McpServer, Refusal};
    ///
    /// let expected = String::from("Bearer s3cret"); // from your secret store
    /// let server = McpServer::builder("items", "1.0.0")
    ///     .on_call(move |call, _metadata| {
    ///         match call.header("authorization").map(|value| value.as_bytes()) {
    ///             None => Err(Refusal::new("missing bearer token: send `Authorization: Bearer <token>`")),
    ///             Some(given) if given == expected.as_bytes() => Ok(()),
    ///             Some(_) => Err(Refusal::new("invalid bearer token")),
    ///         }
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn on_call<F>(mut self, hook: F) -> Self
    where
        F: Fn(&CallContext<'_>, &mut MetadataMap) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// Serve streamable HTTP as an OAuth 2.1 resource server: every request needs an access
    /// token of `authorization`'s issuer, tools may need scopes, and the protected resource
    /// metadata is served at its well-known path. Stdio is unaffected.
    #[cfg(feature = "auth")]
    pub fn authorization(mut self, authorization: crate::Authorization) -> Self {
        self.authorization = Some(authorization);
        self
    }

    /// The server.
    pub fn build(self) -> McpServer {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.name, self.version));
        if let Some(instructions) = self.instructions {
            info = info.with_instructions(instructions);
        }
        let redeemer = self.tools.values().find_map(|registered| {
            Some(Redeemer {
                tool: registered.entry.name.clone(),
                operations: Arc::clone(registered.entry.tool.operations.as_ref()?),
            })
        });
        let listing = self
            .tools
            .values()
            .map(|registered| {
                registered
                    .entry
                    .listing(redeemer.as_ref().map(|r| r.tool.as_str()))
            })
            .collect();
        let types = Types::new(
            self.tools
                .values()
                .map(|registered| registered.entry.tool.output.parent_pool().clone()),
        );
        McpServer {
            inner: Arc::new(Inner {
                info,
                tools: self.tools,
                listing: Listing::new(listing, self.page_size, self.page_bytes, self.list_cache),
                hooks: self.hooks,
                limits: self.limits,
                sessions: self.sessions,
                in_flight: tokio::sync::watch::Sender::new(0),
                tasks: Tasks::default(),
                task_ttl: self.task_ttl,
                redeemer,
                types,
                #[cfg(feature = "auth")]
                authorization: self.authorization,
            }),
        }
    }
}

impl McpServer {
    /// Start building a server that introduces itself as `name` `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder {
            name: name.into(),
            version: version.into(),
            instructions: None,
            tools: BTreeMap::new(),
            hooks: Vec::new(),
            #[cfg(feature = "auth")]
            authorization: None,
            limits: Limits::default(),
            sessions: SessionLimits::default(),
            page_size: paging::DEFAULT_PAGE_SIZE,
            page_bytes: paging::DEFAULT_PAGE_BYTES,
            list_cache: ListCache::default(),
            task_ttl: tasks::DEFAULT_TASK_TTL,
        }
    }

    /// Tool definitions in `tools/list` order (sorted by name).
    pub fn tools(&self) -> &[Tool] {
        self.inner.listing.tools()
    }

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
        let running = match rmcp::ServiceExt::serve(self, LineTransport::new(read, write)).await {
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

    /// The OAuth resource server settings, when the server has them.
    #[cfg(feature = "auth")]
    pub(crate) fn authorization(&self) -> Option<&crate::Authorization> {
        self.inner.authorization.as_ref()
    }

    pub(crate) fn session_limits(&self) -> SessionLimits {
        self.inner.sessions
    }

    /// Tool calls running now; [`McpServer::serve_http`] waits for none before it returns.
    #[cfg(feature = "http-server")]
    pub(crate) fn in_flight(&self) -> &tokio::sync::watch::Sender<usize> {
        &self.inner.in_flight
    }

    pub(crate) fn inner_tasks(&self) -> &Tasks {
        &self.inner.tasks
    }

    /// The registered tool `name`, or JSON-RPC invalid params.
    pub(crate) fn registered(&self, name: &str) -> Result<&Registered, ErrorData> {
        self.inner
            .tools
            .get(name)
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown tool `{name}`"), None))
    }

    /// The `isError` result for a call whose `arguments` the message guard marked: nested too
    /// deep to parse ([`TooDeep`]) or not an object ([`NotAnObject`]). Over stdio the marker is
    /// on the request; over streamable HTTP on the HTTP request parts.
    fn guarded_refusal(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResult> {
        fn marker<T: Copy + Send + Sync + 'static>(
            context: &RequestContext<RoleServer>,
        ) -> Option<T> {
            context.extensions.get::<T>().copied().or_else(|| {
                context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<T>().copied())
            })
        }
        let outcome = if let Some(depth) =
            marker::<TooDeep>(context).and_then(|too_deep| too_deep.arguments_depth)
        {
            call::too_deep(name, depth, self.inner.limits)
        } else {
            call::not_an_object(name, marker::<NotAnObject>(context)?.got)
        };
        tracing::debug!(tool = %name, "tool call refused: arguments not readable");
        Some(outcome.result)
    }

    async fn call(
        &self,
        registered: &Registered,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| Progress::Notify {
                peer: context.peer.clone(),
                token,
            });
        let outcome = self
            .run_registered(
                registered,
                request.arguments,
                context.extensions.get::<http::request::Parts>(),
                &context.meta.0.0,
                progress,
                Cancel::Drop(context.ct.cancelled()),
            )
            .await;
        Ok(outcome.map_or_else(cancelled_result, |outcome| outcome.result))
    }

    /// One call of a registered tool in its telemetry span, directly or in a task. `None` when
    /// `cancelled` resolved first: dropping the call future drops the in-flight tonic call,
    /// which cancels the RPC (RST_STREAM over HTTP/2, or the handler future in-process).
    pub(crate) async fn run_registered(
        &self,
        registered: &Registered,
        arguments: Option<rmcp::model::JsonObject>,
        http: Option<&http::request::Parts>,
        meta: &rmcp::model::JsonObject,
        progress: Option<Progress>,
        cancel: Cancel<'_, impl std::future::Future<Output = ()>>,
    ) -> Option<Outcome> {
        let (stop, dropped) = match cancel {
            Cancel::Drop(cancelled) => (None, Some(cancelled)),
            Cancel::Stop(stop) => (Some(stop), None),
        };
        let cancelled = async move {
            match dropped {
                Some(cancelled) => cancelled.await,
                None => std::future::pending().await,
            }
        };
        let def = &registered.entry.tool.def;
        let _in_flight = InFlight::enter(&self.inner.in_flight);
        let span = tracing::info_span!(
            "mcp.tool_call",
            tool = %registered.entry.name,
            rpc = &*def.rpc_path,
            duration_ms = tracing::field::Empty,
            grpc_code = tracing::field::Empty,
        );
        let started_at = Instant::now();
        // Only a tool that waits for an operation has one to cancel.
        let started = registered
            .entry
            .tool
            .long_running
            .as_ref()
            .map(|_| Started::default());
        let call = Call {
            tool: &registered.entry.tool,
            set: &registered.set,
            server_hooks: &self.inner.hooks,
            limits: self.inner.limits,
            context: CallContext {
                tool: &registered.entry.name,
                rpc_path: &def.rpc_path,
                http,
                meta,
            },
            progress,
            started: started.clone(),
            redeemer: self.inner.redeemer.as_ref(),
            types: &self.inner.types,
            stop,
        };
        let outcome = tokio::select! {
            biased;
            () = cancelled => None,
            outcome = call::run(call, arguments).instrument(span.clone()) => Some(outcome),
        };
        // A call cancelled while it waited for a long-running operation cancels the operation.
        if outcome.is_none()
            && let Some(lro) = &registered.entry.tool.long_running
            && let Some((name, metadata)) = started.as_ref().and_then(Started::take)
        {
            lro.cancel(self.inner.redeemer.as_ref(), name, metadata)
                .instrument(span.clone())
                .await;
        }
        let elapsed = u64::try_from(started_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        span.record("duration_ms", elapsed);
        span.record(
            "grpc_code",
            outcome.as_ref().map_or("CANCELLED", call::outcome_code),
        );
        span.in_scope(|| tracing::debug!("tool call finished"));
        outcome
    }
}

/// Counts a tool call in flight while alive.
struct InFlight<'a>(&'a tokio::sync::watch::Sender<usize>);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a tokio::sync::watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Self(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The result of a call cancelled by the client.
fn cancelled_result() -> CallToolResult {
    call::with_status(
        CallToolResult::error(vec![ContentBlock::text("the call was cancelled")]),
        Code::Cancelled,
        true,
    )
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        // Caching hints exist from revision 2026-07-28 (ISO dates compare as strings).
        let hints = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        self.inner.listing.page(cursor, hints)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // The listing made at build time, sorted by name (as the tools map is).
        let listing = self.inner.listing.tools();
        listing
            .binary_search_by(|tool| tool.name.as_ref().cmp(name))
            .ok()
            .map(|index| listing[index].clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Arguments the message guard cut (too deep to parse) or removed (not an object) are
        // refused first: such a call is answered, never confirmed, run or made a task.
        if let Some(refusal) = self.guarded_refusal(request.name.as_ref(), &context) {
            return Ok(CallToolResponse::Complete(refusal));
        }
        // Confirmation comes next: a declined call never reaches the backend, as a task or not.
        let registered = self.registered(request.name.as_ref())?;
        if let Some(answer) = confirm::check(registered, &request, &context).await {
            return Ok(answer);
        }
        if tasks::wanted(registered, &context) {
            return Ok(CallToolResponse::Task(tasks::start(
                self,
                request,
                &context,
                self.inner.task_ttl,
            )));
        }
        self.call(registered, request, context)
            .await
            .map(CallToolResponse::Complete)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.inner.tasks.check_caller(&request.task_id, &context)?;
        self.inner
            .tasks
            .manager
            .get_task(&request.task_id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.tasks.check_caller(&request.task_id, &context)?;
        self.inner
            .tasks
            .manager
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.tasks.check_caller(&request.task_id, &context)?;
        self.inner.tasks.manager.cancel_task(&request.task_id)
    }
}
