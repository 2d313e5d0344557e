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
    connections: crate::server::connection_limits::ConnectionLimits,
    page_size: usize,
    page_bytes: usize,
    list_cache: ListCache,
    task_ttl: Duration,
    task_limits: TaskLimits,
    task_mode: TaskMode,
    routes: Vec<(String, super::HttpRoute)>,
    observers: Vec<Arc<dyn CallObserver>>,
    tools_change: bool,
    replica: Option<Arc<str>>,
    task_store: Option<Arc<dyn super::task_store::TaskStore>>,
    task_lease: Duration,
    task_key: Option<Arc<[u8]>>,
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

    /// Bounds on tasks (default [`TaskLimits::default`]: 256 live tasks per caller, 256
    /// running, 64 MiB of results kept for fetching): see [`TaskLimits`] for what each bounds
    /// and how a client past one is answered.
    pub fn task_limits(mut self, limits: TaskLimits) -> Self {
        self.task_limits = limits;
        self
    }

    /// Keep tasks on `store`, shared by the replicas of this server, so that any replica
    /// answers `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of a task another
    /// one runs, and a task whose replica stops is reported failed within the lease (10 s)
    /// rather than lost: see [`TaskStore`](crate::TaskStore), and the `tonic-mcp-redis` crate
    /// for Redis-protocol servers. Name each replica with [`replica`](Self::replica). Without
    /// a store (the default) tasks live in this process only, which is all stdio and a single
    /// replica need. Calls without a task never touch the store.
    pub fn task_store(mut self, store: impl super::task_store::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// How long this replica's lease on the task store lasts unless renewed (default
    /// [`DEFAULT_TASK_LEASE`], 10 s; renewed ten times a lease): another replica reports a
    /// task of this one's failed once its lease lapsed. Shorter finds stopped replicas sooner;
    /// a store outage longer than the lease also fails the tasks running then.
    ///
    /// [`DEFAULT_TASK_LEASE`]: crate::DEFAULT_TASK_LEASE
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.task_lease = lease.max(Duration::from_millis(100));
        self
    }

    /// The key, shared by every replica, that signs the ids of tasks that wait on a
    /// `google.longrunning.Operation`: such an id carries the tool and the operation's name,
    /// so that any replica answers for the task by asking the backend (`GetOperation`,
    /// `CancelOperation`), with or without a task store, and the task survives the death of
    /// any replica. At least 32 bytes of randomness (a Kubernetes Secret, the gateway's
    /// `--task-key-file`). Without a key, such tasks are kept as any other.
    pub fn task_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        let key: Vec<u8> = key.into();
        self.task_key = (!key.is_empty()).then(|| Arc::from(key));
        self
    }

    /// When a call from a client that declared the MCP tasks extension becomes a task
    /// (default [`TaskMode::auto`]: answered with its result when it ends within
    /// [`DEFAULT_INLINE_WAIT`], 2 s, else a task carrying on the same call). A tool set's
    /// own [`ToolSet::with_task_mode`] takes precedence for its tools. See [`TaskMode`] for
    /// each mode, and for the tools and clients it does not apply to.
    ///
    /// [`DEFAULT_INLINE_WAIT`]: crate::DEFAULT_INLINE_WAIT
    pub fn task_mode(mut self, mode: TaskMode) -> Self {
        self.task_mode = mode;
        self
    }

    /// This process's name among the replicas of one service, for running them behind a load
    /// balancer: it starts the id of every streamable HTTP session opened here
    /// (`NAME.` then a random UUID), so that a load balancer can send each session's requests
    /// to the replica that holds it (docs/scaling-out.md), and it names the runner of the tasks
    /// this replica puts on a shared task store. Letters, digits, `-` and `_`, at most 63;
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

    /// Bounds on the HTTP connections, which `tonic-mcp-serve` applies (default: three quarters
    /// of the limit on open files, 10 s for a request's headers, 30 s for its body, 75 s idle);
    /// see [`ConnectionLimits`](crate::ConnectionLimits).
    pub fn connection_limits(
        mut self,
        connections: crate::server::connection_limits::ConnectionLimits,
    ) -> Self {
        self.connections = connections;
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
        let capabilities = if self.tools_change {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build()
        };
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.name, self.version));
        if let Some(instructions) = self.instructions {
            info = info.with_instructions(instructions);
        }
        let paging = Paging {
            page_size: self.page_size,
            page_bytes: self.page_bytes,
            list_cache: self.list_cache,
        };
        McpServer {
            inner: Arc::new(Inner {
                info,
                catalog: RwLock::new(Arc::new(Catalog::new(
                    self.tools,
                    paging,
                    self.search.as_deref(),
                ))),
                paging,
                search: self.search,
                peers: Mutex::new(Vec::new()),
                hooks: self.hooks,
                limits: self.limits,
                sessions: self.sessions,
                connections: self.connections,
                in_flight: tokio::sync::watch::Sender::new(0),
                session_stores: Mutex::new(Vec::new()),
                tasks: Tasks::new(
                    self.task_limits,
                    self.task_store,
                    self.replica.clone().unwrap_or_else(random_runner),
                    self.task_lease,
                ),
                task_ttl: self.task_ttl,
                task_mode: self.task_mode,
                routes: self.routes,
                observers: self.observers,
                replica: self.replica,
                task_key: self.task_key,
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
            connections: crate::server::connection_limits::ConnectionLimits::default(),
            page_size: paging::DEFAULT_PAGE_SIZE,
            page_bytes: paging::DEFAULT_PAGE_BYTES,
            list_cache: ListCache::default(),
            task_ttl: tasks::DEFAULT_TASK_TTL,
            task_limits: TaskLimits::default(),
            task_mode: TaskMode::default(),
            tools_change: false,
            replica: None,
            task_store: None,
            task_lease: tasks::shared::DEFAULT_TASK_LEASE,
            task_key: None,
            search: None,
        }
    }
}

/// A runner name for a replica [`McpServerBuilder::replica`] did not name: the process id and
/// the time it started, unique among the replicas on one task store.
fn random_runner() -> Arc<str> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    Arc::from(format!("{:x}-{:x}", std::process::id(), nanos))
}
