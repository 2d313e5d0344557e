//! [`Tasks`]: the settings of a server's MCP tasks, and the [`TaskRouter`] that runs them.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult, UpdateTaskParams},
    service::RequestContext,
};
use serde_json::Value;
use tonic_mcp::{McpServer, ReadyCall, Request2025, RouterFuture, TaskMode, TaskRouter};

use crate::{
    operation, sep1686,
    shared::DEFAULT_TASK_LEASE,
    task_limits::TaskLimits,
    task_store::TaskStore,
    tasks::{self, DEFAULT_TASK_TTL, Host, ServerTasks},
};

/// MCP tasks for an [`McpServer`]: install with
/// [`McpServerBuilder::task_router`](tonic_mcp::McpServerBuilder::task_router). The server then
/// declares the `tasks` capability and answers task-augmented calls in both task shapes (the
/// final tasks extension, and revision 2025-11-25's), within the settings below.
///
/// ```
/// use std::time::Duration;
/// use tonic_mcp::McpServer;
/// use tonic_mcp_tasks::{TaskLimits, Tasks};
///
/// let server = McpServer::builder("items", "1.0.0")
///     .task_router(
///         Tasks::new()
///             .ttl(Duration::from_secs(600))
///             .limits(TaskLimits { max_running: 64, ..TaskLimits::default() }),
///     )
///     .build();
/// # let _ = server;
/// ```
pub struct Tasks {
    ttl: Duration,
    limits: TaskLimits,
    mode: TaskMode,
    store: Option<Arc<dyn TaskStore>>,
    lease: Duration,
    key: Option<Arc<[u8]>>,
    /// The server's tasks, made on first use (they take the server's replica name).
    state: OnceLock<Arc<ServerTasks>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.ttl)
            .field("limits", &self.limits)
            .field("mode", &self.mode)
            .field("store", &self.store.as_ref().map(|store| store.name()))
            .field("lease", &self.lease)
            .field("key", &self.key.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new()
    }
}

impl Tasks {
    /// Tasks with the default settings: living [`DEFAULT_TASK_TTL`], within
    /// [`TaskLimits::default`], in [`TaskMode::auto`], in this process only.
    pub fn new() -> Self {
        Self {
            ttl: DEFAULT_TASK_TTL,
            limits: TaskLimits::default(),
            mode: TaskMode::default(),
            store: None,
            lease: DEFAULT_TASK_LEASE,
            key: None,
            state: OnceLock::new(),
        }
    }

    /// How long a task lives, counted from its creation (default [`DEFAULT_TASK_TTL`], 5
    /// minutes). A task-augmented call still running then is cancelled and its task fails; a
    /// finished task is kept one more time-to-live for `tasks/get`. Keep it above the tools'
    /// deadlines.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Bounds on tasks (default [`TaskLimits::default`]: 256 live tasks per caller, 256
    /// running, 64 MiB of results kept for fetching): see [`TaskLimits`] for what each bounds
    /// and how a client past one is answered.
    pub fn limits(mut self, limits: TaskLimits) -> Self {
        self.limits = limits;
        self
    }

    /// When a call from a client that declared the MCP tasks extension becomes a task
    /// (default [`TaskMode::auto`]: answered with its result when it ends within
    /// [`DEFAULT_INLINE_WAIT`](tonic_mcp::DEFAULT_INLINE_WAIT), 2 s, else a task carrying on
    /// the same call). A tool set's own
    /// [`ToolSet::with_task_mode`](tonic_mcp::ToolSet::with_task_mode) takes precedence for its
    /// tools. See [`TaskMode`] for each mode, and for the tools and clients it does not apply
    /// to.
    pub fn mode(mut self, mode: TaskMode) -> Self {
        self.mode = mode;
        self
    }

    /// Keep tasks on `store`, shared by the replicas of this server, so that any replica
    /// answers `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of a task another
    /// one runs, and a task whose replica stops is reported failed within the lease (10 s)
    /// rather than lost: see [`TaskStore`], and the `tonic-mcp-redis` crate for Redis-protocol
    /// servers. Name each replica with
    /// [`McpServerBuilder::replica`](tonic_mcp::McpServerBuilder::replica). Without a store
    /// (the default) tasks live in this process only, which is all stdio and a single replica
    /// need. Calls without a task never touch the store.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// How long this replica's lease on the task store lasts unless renewed (default
    /// [`DEFAULT_TASK_LEASE`], 10 s; renewed ten times a lease): another replica reports a
    /// task of this one's failed once its lease lapsed. Shorter finds stopped replicas sooner;
    /// a store outage longer than the lease also fails the tasks running then.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(100));
        self
    }

    /// The key, shared by every replica, that signs the ids of tasks that wait on a
    /// `google.longrunning.Operation`: such an id carries the tool and the operation's name,
    /// so that any replica answers for the task by asking the backend (`GetOperation`,
    /// `CancelOperation`), with or without a task store, and the task survives the death of
    /// any replica. At least 32 bytes of randomness (a Kubernetes Secret, the gateway's
    /// `--task-key-file`). Without a key, such tasks are kept as any other.
    pub fn key(mut self, key: impl Into<Vec<u8>>) -> Self {
        let key: Vec<u8> = key.into();
        self.key = (!key.is_empty()).then(|| Arc::from(key));
        self
    }

    /// The server's tasks, made at the first request that needs them.
    fn host(&self, server: &McpServer) -> Host {
        let tasks = self.state.get_or_init(|| {
            Arc::new(ServerTasks::new(
                self.limits,
                self.store.clone(),
                server.replica().map_or_else(random_runner, Arc::from),
                self.lease,
                self.ttl,
                self.key.clone(),
            ))
        });
        Host {
            server: server.clone(),
            tasks: Arc::clone(tasks),
        }
    }
}

impl TaskRouter for Tasks {
    fn call<'a>(
        &'a self,
        server: &'a McpServer,
        call: ReadyCall,
        context: RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<CallToolResponse, ErrorData>> {
        let host = self.host(server);
        let mode = call.set_task_mode().unwrap_or(self.mode);
        Box::pin(async move { answer(&host, mode, call, context).await })
    }

    fn get_task<'a>(
        &'a self,
        server: &'a McpServer,
        request: GetTaskParams,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<GetTaskResult, ErrorData>> {
        let host = self.host(server);
        Box::pin(async move {
            if operation::is_operation_task(&request.task_id) {
                return operation::OperationTask::open(&host, &request.task_id, context)?
                    .detailed(&host, context)
                    .await
                    .map(GetTaskResult::new);
            }
            host.tasks
                .detailed(&request.task_id, context, true)
                .await
                .map(GetTaskResult::new)
        })
    }

    fn update_task<'a>(
        &'a self,
        server: &'a McpServer,
        request: UpdateTaskParams,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<(), ErrorData>> {
        let host = self.host(server);
        Box::pin(async move {
            if operation::is_operation_task(&request.task_id) {
                operation::OperationTask::open(&host, &request.task_id, context)?;
                return Err(ErrorData::invalid_params(
                    format!(
                        "task {} waits on a long-running operation: it takes no input",
                        request.task_id
                    ),
                    None,
                ));
            }
            match host.tasks.locate(&request.task_id, context).await? {
                tasks::Held::Here => host
                    .tasks
                    .manager
                    .update_task(&request.task_id, request.input_responses),
                tasks::Held::Elsewhere(record) => Err(ErrorData::invalid_params(
                    format!(
                        "task {} runs on replica {}: its input can only be given there (send \
                         tasks/update through a session that reaches it)",
                        request.task_id, record.runner
                    ),
                    None,
                )),
            }
        })
    }

    fn cancel_task<'a>(
        &'a self,
        server: &'a McpServer,
        request: CancelTaskParams,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<(), ErrorData>> {
        let host = self.host(server);
        Box::pin(async move {
            if operation::is_operation_task(&request.task_id) {
                return operation::OperationTask::open(&host, &request.task_id, context)?
                    .cancel(&host, context)
                    .await
                    .map(|_| ());
            }
            let held = host.tasks.locate(&request.task_id, context).await?;
            host.tasks.cancel(&request.task_id, &held).await
        })
    }

    fn answer_2025<'a>(
        &'a self,
        server: &'a McpServer,
        request: Request2025,
        params: Option<Value>,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<Value, ErrorData>> {
        let host = self.host(server);
        Box::pin(async move { sep1686::answer(&host, request, params, context).await })
    }

    fn answers_in_2025_shape(
        &self,
        server: &McpServer,
        task_id: &str,
        final_revision: bool,
    ) -> bool {
        self.host(server)
            .tasks
            .answered_in_2025_shape(task_id, final_revision)
    }

    fn running(&self) -> usize {
        self.state.get().map_or(0, |tasks| tasks.running())
    }

    fn task_mode(&self) -> TaskMode {
        self.mode
    }
}

/// A runner name for a replica [`McpServerBuilder::replica`](tonic_mcp::McpServerBuilder::replica)
/// did not name: the process id and the time it started, unique among the replicas on one
/// task store.
fn random_runner() -> Arc<str> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    Arc::from(format!("{:x}-{:x}", std::process::id(), nanos))
}

/// A `tools/call` the server prepared, as the final extension answers it: routed as `mode`
/// (the tool set's, else the router's) says ([`tasks::route`]). A task of a tool that waits on an
/// operation, with a task key, is one the backend's operation answers for
/// ([`operation`](crate::operation)).
async fn answer(
    host: &Host,
    mode: TaskMode,
    call: ReadyCall,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let route = tasks::route(mode, &call, &context);
    if let Some(after) = operation::waits_before_task(route)
        && let Some(key) = operation::key_for(host, &call)
    {
        return Ok(
            operation::begin(host, key, call, &context, host.tasks.ttl, after)
                .await
                .into_response(),
        );
    }
    match route {
        tasks::Route::Inline => host
            .server
            .run_inline(call, context)
            .await
            .map(CallToolResponse::Complete),
        tasks::Route::Task => Ok(CallToolResponse::Task(
            tasks::start(
                host,
                call,
                &context,
                host.tasks.ttl,
                tasks::Shape::Extension,
            )
            .await?,
        )),
        tasks::Route::Refused => Err(tasks::required(call.name())),
        tasks::Route::Wait(wait) => Ok(tasks::inline_or_task(host, call, &context, wait).await),
    }
}
