//! The MCP server: an `rmcp::ServerHandler` over composed tool sets.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
        GetTaskParams, GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams,
        ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
    },
    service::RequestContext,
    transport::{
        StreamableHttpServerConfig, StreamableHttpService,
        streamable_http_server::session::local::LocalSessionManager,
    },
};
use tonic::{Code, metadata::MetadataMap};
use tracing::Instrument as _;

use crate::{
    call::{self, Call, Limits, Outcome, Progress},
    confirm,
    context::{CallContext, CallHook, Refusal},
    error::Error,
    paging,
    tasks::{self, Tasks},
    toolset::{Entry, SetConfig, ToolSet},
};

pub(crate) struct Registered {
    pub(crate) entry: Entry,
    pub(crate) set: Arc<SetConfig>,
}

struct Inner {
    info: ServerConfig,
    tools: BTreeMap<String, Registered>,
    listing: Vec<Tool>,
    hooks: Vec<CallHook>,
    limits: Limits,
    page_size: usize,
    tasks: Tasks,
    task_ttl: Duration,
}

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
    page_size: usize,
    task_ttl: Duration,
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
    pub fn on_call<F>(mut self, hook: F) -> Self
    where
        F: Fn(&CallContext<'_>, &mut MetadataMap) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.hooks.push(Arc::new(hook));
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
        let listing = self
            .tools
            .values()
            .map(|registered| registered.entry.listing())
            .collect();
        McpServer {
            inner: Arc::new(Inner {
                info,
                tools: self.tools,
                listing,
                hooks: self.hooks,
                limits: self.limits,
                page_size: self.page_size,
                tasks: Tasks::default(),
                task_ttl: self.task_ttl,
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
            limits: Limits::default(),
            page_size: paging::DEFAULT_PAGE_SIZE,
            task_ttl: tasks::DEFAULT_TASK_TTL,
        }
    }

    /// Tool definitions in `tools/list` order (sorted by name).
    pub fn tools(&self) -> &[Tool] {
        &self.inner.listing
    }

    /// Serve MCP over stdin/stdout until the client disconnects.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the MCP handshake fails or the server task fails.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        let running = rmcp::ServiceExt::serve(self, rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Serve(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::Serve(e.to_string()))?;
        Ok(())
    }

    /// A tower service for MCP's streamable HTTP transport (rmcp's
    /// [`StreamableHttpService`]), to mount at a path such as `/mcp` in any hyper, axum or
    /// tower stack.
    ///
    /// rmcp's protections stay on: `Host` validation (loopback hosts by default; set
    /// `allowed_hosts` for public names) and optional `Origin` validation. For horizontal
    /// scaling use [`stateless_http_config`](Self::stateless_http_config): no session state,
    /// every request stands alone.
    pub fn streamable_http_service(
        &self,
        config: StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// A streamable HTTP configuration for stateless serving: no sessions, plain JSON
    /// responses when a call sends no notifications (progress falls back to SSE).
    pub fn stateless_http_config() -> StreamableHttpServerConfig {
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
    }

    /// Serve the streamable HTTP endpoint at `/mcp` on `listener` (HTTP/1.1 and h2c), until
    /// `config.cancellation_token` is cancelled. Other paths answer 404.
    ///
    /// ```no_run
    /// # async fn demo(server: tonic_mcp::McpServer) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server.serve_http(listener, tonic_mcp::McpServer::stateless_http_config()).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when accepting connections fails.
    #[cfg(feature = "http-server")]
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        config: StreamableHttpServerConfig,
    ) -> Result<(), Error> {
        let shutdown = config.cancellation_token.clone();
        let service = self.streamable_http_service(config);
        loop {
            let (stream, _) = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                accepted = listener.accept() => accepted.map_err(|e| Error::Serve(e.to_string()))?,
            };
            // Small JSON-RPC messages must not wait for Nagle's algorithm.
            let _ = stream.set_nodelay(true);
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let mut service = service.clone();
                        async move {
                            if request.uri().path() != "/mcp" {
                                return Ok(not_found());
                            }
                            tower_service::Service::call(&mut service, request).await
                        }
                    },
                );
                let builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                // A connection error concerns that client only.
                if let Err(error) = builder
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                    .await
                {
                    tracing::debug!(%error, "MCP HTTP connection ended with an error");
                }
            });
        }
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

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let registered = self.registered(request.name.as_ref())?;
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
                context.ct.cancelled(),
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
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Option<Outcome> {
        let def = &registered.entry.tool.def;
        let span = tracing::info_span!(
            "mcp.tool_call",
            tool = %registered.entry.name,
            rpc = &*def.rpc_path,
            duration_ms = tracing::field::Empty,
            grpc_code = tracing::field::Empty,
        );
        let started = Instant::now();
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
        };
        let outcome = tokio::select! {
            biased;
            () = cancelled => None,
            outcome = call::run(call, arguments).instrument(span.clone()) => Some(outcome),
        };
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        span.record("duration_ms", elapsed);
        span.record(
            "grpc_code",
            outcome.as_ref().map_or("CANCELLED", call::outcome_code),
        );
        span.in_scope(|| tracing::debug!("tool call finished"));
        outcome
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

#[cfg(feature = "http-server")]
fn not_found()
-> http::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>> {
    use http_body_util::BodyExt as _;
    let mut response = http::Response::new(http_body_util::Full::new(bytes::Bytes::new()).boxed());
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        paging::page(&self.inner.listing, cursor, self.inner.page_size)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner
            .tools
            .get(name)
            .map(|registered| registered.entry.listing())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Confirmation comes first: a declined call never reaches the backend, as a task or not.
        if let Some(refusal) = confirm::check(self, &request, &context).await {
            return Ok(CallToolResponse::Complete(refusal));
        }
        if tasks::wanted(self, &request, &context) {
            return tasks::start(self, request, &context, self.inner.task_ttl)
                .map(CallToolResponse::Task);
        }
        self.call(request, context)
            .await
            .map(CallToolResponse::Complete)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.inner
            .tasks
            .manager
            .get_task(&request.task_id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner
            .tasks
            .manager
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.tasks.manager.cancel_task(&request.task_id)
    }
}
