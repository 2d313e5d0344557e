//! The MCP server: an `rmcp::ServerHandler` over composed tool sets.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
        CompleteRequestParams, CompleteResult, CustomRequest, CustomResult, GetTaskParams,
        GetTaskResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
        ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
    },
    service::RequestContext,
};
use tonic::metadata::MetadataMap;
use tonic_mcp_codec::Problem;

mod builder;
mod catalog;
mod confirm;
pub(crate) mod discovery;
pub(crate) mod http_response;
pub(crate) mod paging;
mod plain;
pub(crate) mod ready_call;
pub(crate) mod run;
mod served;
mod session_limits;
pub(crate) mod task_router;
pub(crate) mod task_shape;
pub(crate) mod waiting_tool;

pub use crate::tool::task_mode::{DEFAULT_INLINE_WAIT, TaskMode};
pub use builder::McpServerBuilder;
use catalog::{Catalog, Paging};
use http_response::HttpResponse;
pub(crate) use plain::PlainCall;
pub use session_limits::SessionLimits;

/// A transport's store of sessions, counted in [`Load::sessions_open`].
pub(crate) trait OpenSessions: Send + Sync {
    /// Sessions open now.
    fn open(&self) -> usize;
}

use ready_call::{Prepared, ReadyCall};
use task_router::{TaskRouter, no_tasks};
use tonic_mcp_schema::TaskSupport;

use crate::{
    call::arguments_text,
    call::facts::Facts,
    call::{self, Limits},
    error::Error,
    observe::observer::CallObserver,
    server::paging::{ListCache, same_tools},
    sync::lock,
    tool::context::{CallContext, CallHook, Refusal},
    tool::toolset::{Entry, SetConfig, ToolSet},
};

pub(crate) struct Registered {
    pub(crate) entry: Entry,
    pub(crate) set: Arc<SetConfig>,
    /// The tool's definition once asked for by name (rmcp asks on each call): made once, for
    /// the tools that are called, not for every listed one.
    pub(crate) definition: std::sync::OnceLock<Option<Tool>>,
}

struct Inner {
    info: ServerConfig,
    /// The tools served now; a call holds the catalog it started with.
    catalog: RwLock<Arc<Catalog>>,
    /// How `tools/list` is paged, for every catalog.
    paging: Paging,
    /// Tool discovery (tool search): `tools/list` shows what its index lists, for every
    /// catalog.
    search: Option<Arc<dyn discovery::ToolDiscovery>>,
    /// Connected clients, told when the tools change ([`McpServer::replace_tools`]).
    peers: Mutex<Vec<rmcp::service::Peer<RoleServer>>>,
    hooks: Vec<CallHook>,
    limits: Limits,
    sessions: SessionLimits,
    /// Tool calls running now, for a graceful shutdown.
    in_flight: tokio::sync::watch::Sender<usize>,
    /// The session stores of the streamable HTTP services made from this server, counted
    /// in its [`Load`].
    session_stores: Mutex<Vec<std::sync::Weak<dyn OpenSessions>>>,
    /// What runs MCP tasks ([`McpServerBuilder::task_router`]); none, no tasks.
    task_router: Option<Arc<dyn TaskRouter>>,
    /// Endpoints `serve_http` answers beside `/mcp` ([`McpServerBuilder::http_get`]).
    routes: Vec<(String, HttpRoute)>,
    /// What is told of every tool call.
    observers: Vec<Arc<dyn CallObserver>>,
    /// This replica's name ([`McpServerBuilder::replica`]).
    replica: Option<Arc<str>>,
}

/// An endpoint of `serve_http` besides `/mcp` ([`McpServerBuilder::http_get`]).
pub(crate) type HttpRoute = Arc<dyn Fn(&McpServer) -> HttpResponse + Send + Sync + 'static>;

/// What a server is doing at one instant ([`McpServer::load`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Load {
    /// Tool calls running now, tasks' included.
    pub calls_in_flight: usize,
    /// MCP tasks whose call runs now, as the server's [`TaskRouter`] counts them (`0` without
    /// one).
    pub tasks_running: usize,
    /// MCP sessions open on the server's streamable HTTP services.
    pub sessions_open: usize,
}

/// How long `tonic_mcp_serve`'s `serve_http` waits, after its shutdown, for tool calls in flight.
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
            .field("tools", &self.catalog().tools.keys().collect::<Vec<_>>())
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// The tools served now.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.inner.catalog.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Serve `sets` instead of the current tools, with the server's hooks, limits and paging.
    /// Calls in flight finish on the tools they started with. When the listing changes,
    /// every connected client that has a session gets `notifications/tools/list_changed`
    /// (declare it with [`McpServerBuilder::tools_change`]); stateless HTTP clients see the
    /// new tools at their next `tools/list`. Returns whether the served tools changed: under
    /// tool search clients are told only when the listing (the discovery tools and the pinned
    /// ones) changed, though the tools `search_tools` finds change at once.
    ///
    /// # Errors
    ///
    /// [`Error::DuplicateTool`] when two tools of `sets` share a name; the current tools stay.
    pub async fn replace_tools(
        &self,
        sets: impl IntoIterator<Item = ToolSet>,
    ) -> Result<bool, Error> {
        let mut tools = BTreeMap::new();
        for set in sets {
            catalog::register(&mut tools, set)?;
        }
        let catalog = Arc::new(Catalog::new(
            tools,
            self.inner.paging,
            self.inner.search.as_deref(),
        ));
        // Compared outside the lock: calls keep looking tools up meanwhile.
        let before = self.catalog();
        let served = !same_tools(&before.served, &catalog.served);
        // Without tool search the listing is every tool, compared already.
        let listed = match catalog.discovery {
            None => served,
            Some(_) => !same_tools(before.listing.tools(), catalog.listing.tools()),
        };
        *self
            .inner
            .catalog
            .write()
            .unwrap_or_else(|e| e.into_inner()) = catalog;
        if listed {
            let peers: Vec<_> = {
                let mut peers = lock(&self.inner.peers);
                peers.retain(|peer| !peer.is_transport_closed());
                peers.clone()
            };
            for peer in peers {
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!(%error, "a client could not be told that the tools changed");
                }
            }
        }
        Ok(served)
    }

    pub(crate) fn session_limits(&self) -> SessionLimits {
        self.inner.sessions
    }

    /// Waits until no tool call is running, for up to `within`; whether none is. What a
    /// graceful shutdown waits for once it takes no more requests (`tonic-mcp-serve` waits up
    /// to [`SHUTDOWN_DRAIN`]).
    pub async fn drained(&self, within: Duration) -> bool {
        let mut in_flight = self.inner.in_flight.subscribe();
        tokio::time::timeout(within, in_flight.wait_for(|&n| n == 0))
            .await
            .is_ok_and(|waited| waited.is_ok())
    }

    /// What the server is doing now: tool calls and tasks running, sessions open. What a
    /// gauge of the server's load reads (`tonic-mcp-metrics` does).
    pub fn load(&self) -> Load {
        Load {
            calls_in_flight: *self.inner.in_flight.borrow(),
            tasks_running: self.task_router().map_or(0, |router| router.running()),
            sessions_open: self.sessions_open(),
        }
    }

    /// Sessions open now on the streamable HTTP services made from this server.
    fn sessions_open(&self) -> usize {
        let mut stores = lock(&self.inner.session_stores);
        stores.retain(|store| store.strong_count() > 0);
        stores
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .map(|store| store.open())
            .sum()
    }

    /// Keeps `store` for the count of open sessions.
    pub(crate) fn track_sessions<S: OpenSessions + 'static>(&self, store: &Arc<S>) {
        let store: std::sync::Weak<dyn OpenSessions> = Arc::downgrade(store) as std::sync::Weak<S>;
        lock(&self.inner.session_stores).push(store);
    }

    /// The answer of the route added at `path` with [`McpServerBuilder::http_get`] (an
    /// add-on's endpoint, such as `/metrics`), which `serve_http` gives to a `GET` of it;
    /// `None` when no route has that path. A server of your own routes such paths here.
    pub fn http_get(&self, path: &str) -> Option<HttpResponse> {
        let (_, answer) = self.inner.routes.iter().find(|(route, _)| route == path)?;
        Some(answer(self))
    }

    /// The server's task router ([`McpServerBuilder::task_router`]), when it runs tasks.
    pub(crate) fn task_router(&self) -> Option<&dyn TaskRouter> {
        self.inner.task_router.as_deref()
    }

    /// The task router that answers `what`, or without one the refusal ([`no_tasks`]).
    pub(crate) fn task_router_for(&self, what: &str) -> Result<&dyn TaskRouter, ErrorData> {
        self.task_router().ok_or_else(|| no_tasks(what))
    }

    /// This replica's name, when [`McpServerBuilder::replica`] gave one: a task router names
    /// the runner of the tasks it shares with it.
    pub fn replica(&self) -> Option<&str> {
        self.inner.replica.as_deref()
    }

    /// Whether some served tool may run as a task.
    pub(crate) fn has_task_tools(&self) -> bool {
        self.catalog().task_tools
    }

    /// A `tools/call` up to where it runs: answered already (arguments the guard refused, a
    /// tool-search answer, a declined confirmation), or the tool found and the request it runs
    /// with (tool search's `call_tool` becomes the call it names). What the server does before
    /// it hands a call to its [`TaskRouter`]; a router that takes a `tools/call` of its own (in
    /// revision 2025-11-25's shape) prepares it here too.
    ///
    /// # Errors
    ///
    /// JSON-RPC invalid params for an unknown tool, and what confirming the call fails with.
    pub async fn prepare(
        &self,
        mut request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Prepared, ErrorData> {
        // Arguments the message guard cut (too deep to parse) or removed (not an object) are
        // refused first: such a call is answered, never confirmed, run or made a task.
        if let Some(refusal) = self.guarded_refusal(request.name.as_ref(), context) {
            return Ok(Prepared::Answered(CallToolResponse::Complete(refusal)));
        }
        // One catalog for the whole call. Tool search's own tools answer here; `call_tool`
        // becomes the call it names.
        let catalog = self.catalog();
        if let Some(discovery) = &catalog.discovery {
            if let Err(problem) = arguments_text::materialize(&mut request, &context.extensions) {
                return Ok(unreadable(&request, problem));
            }
            if let Some(answer) = discovery.answer(&request.name, request.arguments.as_ref()) {
                return Ok(Prepared::Answered(CallToolResponse::Complete(answer.await)));
            }
            match discovery.target(&request.name, request.arguments.as_ref()) {
                Some(discovery::Target::Call { name, arguments }) => {
                    request.name = name.into();
                    // Some, even when empty: the text kept of `call_tool`'s own arguments is
                    // not the named tool's.
                    request.arguments = Some(arguments.unwrap_or_default());
                }
                Some(discovery::Target::Refused(refused)) => {
                    return Ok(Prepared::Answered(CallToolResponse::Complete(*refused)));
                }
                None => {}
            }
        }
        // Confirmation comes next: a declined call never reaches the backend, as a task or not.
        let registered = catalog.found(request.name.as_ref())?;
        if registered.entry.tool.def.confirm.is_some()
            && let Err(problem) = arguments_text::materialize(&mut request, &context.extensions)
        {
            return Ok(unreadable(&request, problem));
        }
        if let Some(answer) = confirm::check(&registered, &request, context).await {
            return Ok(Prepared::Answered(answer));
        }
        Ok(Prepared::Ready(ReadyCall {
            found: registered,
            request,
        }))
    }

    /// The `isError` result for a call whose `arguments` the message guard marked: nested too
    /// deep to parse ([`Facts::too_deep`]) or not an object ([`Facts::not_an_object`]).
    fn guarded_refusal(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResult> {
        let facts = Facts::of(&context.extensions)?;
        let outcome =
            if let Some(depth) = facts.too_deep.and_then(|too_deep| too_deep.arguments_depth) {
                call::too_deep(name, depth, self.inner.limits)
            } else {
                call::not_an_object(name, facts.not_an_object?.got)
            };
        tracing::debug!(tool = %name, "tool call refused: arguments not readable");
        Some(outcome.result)
    }

    /// `tools/call`, the body of [`ServerHandler::call_tool`].
    async fn call_tool_unboxed(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = match self.prepare(request, &context).await? {
            Prepared::Answered(answer) => return Ok(answer),
            Prepared::Ready(call) => call,
        };
        match self.task_router() {
            Some(router) => router.call(self, call, context).await,
            None if call.task_support() == TaskSupport::Required => Err(no_tasks(&format!(
                "tool `{}` runs only as a task",
                call.name()
            ))),
            None => self
                .run_inline(call, context)
                .await
                .map(CallToolResponse::Complete),
        }
    }
}

/// The answer to a call whose arguments kept as text cannot be read (a key given twice).
fn unreadable(request: &CallToolRequestParams, problem: Problem) -> Prepared {
    let outcome = crate::call::arguments::invalid_arguments(request.name.as_ref(), &[problem]);
    Prepared::Answered(CallToolResponse::Complete(outcome.result))
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
        self.catalog().listing.page(cursor, hints)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        if self
            .inner
            .info
            .capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed)
            == Some(true)
        {
            let mut peers = lock(&self.inner.peers);
            peers.retain(|peer| !peer.is_transport_closed());
            peers.push(context.peer);
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalog().tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed, like `on_custom_request`: a call's state would make the future of every
        // request rmcp moves into its task large.
        Box::pin(self.call_tool_unboxed(request, context)).await
    }

    // Prompts, resources and completions are not offered (nor declared). Hosts that ask for
    // them anyway at start get empty answers rather than -32601, as before rmcp 3.11 (the MCP
    // conformance suite's `prompts-list`, `resources-list` and `completion-complete`).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::default())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::default())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::default())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Ok(CompleteResult::default())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Box::pin(task_shape::custom(
            self,
            &request.method,
            request.params,
            &context,
        ))
        .await
        .map(CustomResult::new)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let router = self.task_router_for("tasks/get")?;
        router.get_task(self, request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let router = self.task_router_for("tasks/update")?;
        router.update_task(self, request, &context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let router = self.task_router_for("tasks/cancel")?;
        router.cancel_task(self, request, &context).await
    }
}
