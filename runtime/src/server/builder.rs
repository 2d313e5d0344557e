//! [`McpServerBuilder`]: tool sets, hooks, limits and paging gathered into an [`McpServer`].

use super::*;

/// Builds an [`McpServer`].
pub struct McpServerBuilder {
    name: String,
    version: String,
    instructions: Option<String>,
    tools: BTreeMap<String, Arc<Registered>>,
    hooks: Vec<CallHook>,
    limits: Limits,
    sessions: SessionLimits,
    paging: Paging,
    task_router: Option<Arc<dyn TaskRouter>>,
    routes: Vec<(String, super::HttpRoute)>,
    observers: Vec<Arc<dyn CallObserver>>,
    tools_change: bool,
    replica: Option<Arc<str>>,
    pub(super) search: Option<Arc<dyn super::discovery::ToolDiscovery>>,
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
        catalog::register(&mut self.tools, set)?;
        Ok(self)
    }

    /// Tools per `tools/list` page (default [`DEFAULT_PAGE_SIZE`], 500; at least 1). Larger
    /// tool sets are listed in pages linked by `nextCursor`.
    ///
    /// [`DEFAULT_PAGE_SIZE`]: crate::DEFAULT_PAGE_SIZE
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.paging.page_size = page_size.max(1);
        self
    }

    /// Bytes of tool JSON per `tools/list` page (default [`DEFAULT_PAGE_BYTES`], 512 KiB): a
    /// page ends before its tools would pass this, so that clients that bound one message
    /// (the Python SDK 2.x refuses a server-sent event over 1 MiB) can read it. A page holds at
    /// least one tool, however large.
    ///
    /// [`DEFAULT_PAGE_BYTES`]: crate::DEFAULT_PAGE_BYTES
    pub fn page_bytes(mut self, page_bytes: usize) -> Self {
        self.paging.page_bytes = page_bytes;
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
        self.paging.list_cache = ListCache { ttl, scope };
        self
    }

    /// Whether the tools may change while the server runs ([`McpServer::replace_tools`]): the
    /// server then declares `tools.listChanged`, and sends connected clients
    /// `notifications/tools/list_changed` when they do. Off by default.
    pub fn tools_change(mut self, enable: bool) -> Self {
        self.tools_change = enable;
        self
    }

    /// Tool discovery, for servers with more tools than a model can be shown: `tools/list`
    /// lists what `discovery` lists (`tonic-mcp-search`'s `ToolSearch`: `search_tools`,
    /// `describe_tools` and `call_tool`, plus the tools it pins), and every tool stays
    /// callable by name. See [`ToolDiscovery`](crate::ToolDiscovery).
    pub fn tool_search(mut self, discovery: impl super::discovery::ToolDiscovery) -> Self {
        self.search = Some(Arc::new(discovery));
        self
    }

    /// Run MCP tasks with `router` (the `tonic-mcp-tasks` crate's `Tasks`): the server then
    /// declares the `tasks` capability, and hands every `tools/call` it prepared, and every
    /// task request, to the router, which answers inline, with a task, or with a refusal.
    /// Without a router (the default) the server runs no tasks: it declares no `tasks`
    /// capability, answers every call inline, and refuses a task-augmented `tools/call`, a call
    /// of a tool whose `taskSupport` is `required`, and the `tasks/*` methods with JSON-RPC
    /// -32601 saying that it runs no MCP tasks. A later router replaces an earlier one.
    pub fn task_router(mut self, router: impl TaskRouter) -> Self {
        self.task_router = Some(Arc::new(router));
        self
    }

    /// This process's name among the replicas of one service, for running them behind a load
    /// balancer: it starts the id of every streamable HTTP session opened here
    /// (`NAME.` then a random UUID), so that a load balancer can send each session's requests
    /// to the replica that holds it (docs/scaling-out.md), and a task router names the runner of the
    /// tasks this replica puts on a shared task store with it ([`McpServer::replica`]). Letters, digits, `-` and `_`, at most 63;
    /// anything else is replaced by `-` and cut there. Unset (the default), session ids are bare
    /// UUIDs and tasks name a random runner id made at start.
    pub fn replica(mut self, name: impl AsRef<str>) -> Self {
        let name: String = name
            .as_ref()
            .chars()
            .take(63)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        self.replica = (!name.is_empty()).then(|| Arc::from(name));
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

    /// Tell `observer` of every tool call: when it starts, when its gRPC requests start and
    /// end, and when it ends (see [`CallObserver`](crate::CallObserver)). Observers are told
    /// in the order they were added.
    pub fn observe(mut self, observer: impl CallObserver) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// Answer `GET path` on the listener of `tonic_mcp_serve` with `answer`, beside `/mcp`
    /// and `/healthz`: an add-on's endpoint, such as Prometheus's `/metrics`
    /// (`tonic-mcp-metrics`). Such a route is answered without authorization: give it only
    /// what anyone who reaches the listener may read. A later route of the same path replaces
    /// an earlier one; `/mcp` and `/healthz` cannot be replaced.
    ///
    /// ```
    /// use tonic_mcp::{McpServer, plain_response};
    ///
    /// let server = McpServer::builder("items", "1.0.0")
    ///     .http_get("/load", |server| {
    ///         let load = server.load();
    ///         let text = format!("{} calls in flight\n", load.calls_in_flight);
    ///         plain_response(http::StatusCode::OK, text)
    ///     })
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn http_get(
        mut self,
        path: impl Into<String>,
        answer: impl Fn(&McpServer) -> HttpResponse + Send + Sync + 'static,
    ) -> Self {
        let path = path.into();
        self.routes.retain(|(route, _)| *route != path);
        self.routes.push((path, Arc::new(answer)));
        self
    }

    /// The server.
    pub fn build(self) -> McpServer {
        let mut capabilities = ServerCapabilities::builder().enable_tools();
        if self.tools_change {
            capabilities = capabilities.enable_tool_list_changed();
        }
        if self.task_router.is_some() {
            capabilities = capabilities.enable_tasks();
        }
        let mut info = ServerConfig::new(capabilities.build())
            .with_server_info(Implementation::new(self.name, self.version));
        if let Some(instructions) = self.instructions {
            info = info.with_instructions(instructions);
        }
        McpServer {
            inner: Arc::new(Inner {
                info,
                catalog: RwLock::new(Arc::new(Catalog::new(
                    self.tools,
                    self.paging,
                    self.search.as_deref(),
                ))),
                paging: self.paging,
                search: self.search,
                peers: Mutex::new(Vec::new()),
                hooks: self.hooks,
                limits: self.limits,
                sessions: self.sessions,
                in_flight: tokio::sync::watch::Sender::new(0),
                session_stores: Mutex::new(Vec::new()),
                task_router: self.task_router,
                routes: self.routes,
                observers: self.observers,
                replica: self.replica,
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
            routes: Vec::new(),
            observers: Vec::new(),
            limits: Limits::default(),
            sessions: SessionLimits::default(),
            paging: Paging {
                page_size: paging::DEFAULT_PAGE_SIZE,
                page_bytes: paging::DEFAULT_PAGE_BYTES,
                list_cache: ListCache::default(),
            },
            task_router: None,
            tools_change: false,
            replica: None,
            search: None,
        }
    }
}
