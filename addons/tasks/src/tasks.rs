//! Task-augmented tool calls: the MCP tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663), the revision rmcp implements.
//!
//! A client that declares the extension (at `initialize` or in a request's `_meta`) does not
//! ask for a task per call: it says it can take one, and the server decides per call ("Task
//! creation is server-directed: the client signals support [...] and the server decides on a
//! per-request basis whether to materialize a task", the extension's specification,
//! <https://modelcontextprotocol.github.io/ext-tasks/specification/2026-07-28/tasks.html>). The
//! server's [`TaskMode`] decides for a tool whose `_meta` says `"taskSupport": "optional"`:
//! by default ([`TaskMode::Auto`], [`inline_or_task`]) the call runs as for any client and is
//! answered with its result when it ends within [`DEFAULT_INLINE_WAIT`]; one still running
//! then becomes a task that carries on the same call. [`TaskMode::Always`] makes every such
//! call a task at once, [`TaskMode::Never`] none. A tool that requires tasks always runs as one.
//!
//! A task runs its RPC in the background: `tasks/get` reports its status (for
//! server-streaming RPCs, the count of messages received so far in the status message) and,
//! once it is done, the tool result; `tasks/cancel` cancels the gRPC call. A task on a
//! response stream (server streaming, bidi)
//! whose call asked for `"mcp.stream": {"keepOnCancel": true}` is not lost to a cancel:
//! collection stops there and the task completes with the messages received, `truncated`,
//! which makes a task the way to watch an unending stream for as long as the client likes (up
//! to the tool's deadline). A task lives for the server's task time-to-live
//! ([`DEFAULT_TASK_TTL`], [`Tasks::ttl`]), counted from its creation: a call
//! still running then is cancelled and the task fails, and a finished task is forgotten one
//! time-to-live after it finished.
//!
//! A task belongs to its caller: under authorization (`tonic-mcp-auth`) to the token
//! owner (issuer, subject, client) that started it, otherwise to the HTTP session that started
//! it. Another caller asking for it (`tasks/get`, `tasks/update`, `tasks/cancel`) is told the
//! task is unknown, exactly as for an id that never existed. Over stdio (one client per
//! process) and stateless HTTP without authorization there is no caller to tell apart: the
//! task is reachable by whoever holds its id, a random UUID.
//!
//! Clients of revision 2025-11-25 ask for tasks in that revision's shape (SEP-1686), which
//! [`sep1686`] serves from the same store.
//!
//! With a task key ([`Tasks::key`]), a task of a tool that waits on a
//! `google.longrunning.Operation` is none of the above: nothing runs or holds it, its signed id
//! carries the operation, and any replica with the key answers for it by asking the backend
//! ([`operation`]). Such tasks survive any replica, and `tasks/list` cannot list them.
//!
//! Tasks are bounded ([`TaskLimits`], [`Tasks::limits`]): live tasks per
//! caller and running tasks per server, past which a task-augmented `tools/call` is refused
//! with a JSON-RPC error (as the other refusals to make a task are, in both shapes: the
//! protocol's answer to a request it will not take, where an `isError` result is the answer
//! of a call that ran), and bytes of results kept for fetching, past which the oldest are
//! dropped. Results are kept here as their JSON, not in rmcp's manager (whose tasks end
//! with an empty placeholder), so that they can be counted and dropped.
//!
//! [`Tasks::ttl`]: crate::Tasks::ttl
//! [`Tasks::key`]: crate::Tasks::key
//! [`Tasks::limits`]: crate::Tasks::limits
//! [`TaskMode`]: tonic_mcp::TaskMode
//! [`TaskMode::Auto`]: tonic_mcp::TaskMode::Auto
//! [`TaskMode::Always`]: tonic_mcp::TaskMode::Always
//! [`TaskMode::Never`]: tonic_mcp::TaskMode::Never
//! [`DEFAULT_INLINE_WAIT`]: tonic_mcp::DEFAULT_INLINE_WAIT
//! [`sep1686`]: crate::sep1686
//! [`operation`]: crate::operation

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use base64::Engine as _;
use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolResponse, CallToolResult, CreateTaskResult, DetailedTask, JsonObject, Task,
        TaskPayload,
    },
    service::RequestContext,
    task_manager::{TaskExit, TaskManager, TaskOptions},
};

use tonic_mcp::{
    CallOrigin, McpServer, ReadyCall, TaskMode, TaskProgress, cancelled_result, schema::TaskSupport,
};

use crate::{
    shared::{Ended, Shared},
    task_limits::TaskLimits,
    task_store::{SharedTask, TaskStore, error_object},
};

/// How long a task lives unless [`Tasks::ttl`](crate::Tasks::ttl) says otherwise: 5 minutes.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);

/// How often clients are asked to poll `tasks/get`, in milliseconds.
pub(crate) const POLL_INTERVAL_MS: u64 = 500;

/// How long `tasks/cancel` waits for the call (or the operation) to stop before answering with
/// the task as it is then.
pub(crate) const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// Tasks per `tasks/list` page (revision 2025-11-25).
pub(crate) const LIST_PAGE: usize = 100;

/// `tasks/list` cursors: the URL-safe base64 of `tasks:` and the creation number of the last
/// task of the previous page. Opaque to clients, as MCP asks.
const CURSOR: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;
const CURSOR_PREFIX: &str = "tasks:";

/// How often, at most, dropped task results are logged at `warn`.
const DROP_WARNING_EVERY: Duration = Duration::from_secs(60);

/// The shape a task was started in, which its requests are answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The final tasks extension (SEP-2663), rmcp's.
    Extension,
    /// Revision 2025-11-25 ([`sep1686`]).
    Sep1686,
}

/// The tasks of one server (shared by all its sessions; task ids are random UUIDs): rmcp's
/// task manager runs them and tracks their state; [`Store`] knows who started each, in which
/// shape, and keeps their results, within the server's [`TaskLimits`]. With a task store
/// ([`shared`](crate::shared)), the tasks of the other replicas too.
pub(crate) struct ServerTasks {
    pub(crate) manager: TaskManager,
    limits: TaskLimits,
    store: Mutex<Store>,
    shared: Option<Arc<Shared>>,
    /// How long a task lives ([`Tasks::ttl`](crate::Tasks::ttl)).
    pub(crate) ttl: Duration,
    /// The key signing operation tasks' ids ([`Tasks::key`](crate::Tasks::key)).
    pub(crate) key: Option<Arc<[u8]>>,
}

/// A server, and its tasks: what answering a task request takes.
pub(crate) struct Host {
    pub(crate) server: McpServer,
    pub(crate) tasks: Arc<ServerTasks>,
}

/// Where a caller's task is held.
pub(crate) enum Held {
    /// On this replica.
    Here,
    /// On another replica, as the task store has it.
    Elsewhere(Box<SharedTask>),
}

/// How a task's call ended.
enum Outcome {
    /// With a tool result: its JSON.
    Result(Vec<u8>),
    Cancelled,
    /// Failed, for this reason.
    Failed(String),
}

/// What the server knows of its tasks besides rmcp's state. Lock order: this store, then
/// rmcp's manager (never the other way round: rmcp calls nothing of ours under its lock).
#[derive(Default)]
struct Store {
    records: HashMap<String, Record>,
    /// Task ids by creation number, for `tasks/list`.
    created: BTreeMap<u64, String>,
    next: u64,
    /// Tasks whose call runs now.
    running: usize,
    /// Live tasks (created, not yet forgotten) by owner.
    live: HashMap<Option<String>, usize>,
    /// Bytes of the results held.
    held: usize,
    /// Held results not fetched yet, and fetched, by the order they ended in: the first
    /// dropped are the oldest fetched, then the oldest unfetched.
    unread: BTreeMap<u64, String>,
    read: BTreeMap<u64, String>,
    ended: u64,
    /// Results dropped since the last warning, and when it was.
    dropped_unlogged: usize,
    warned_at: Option<Instant>,
}

/// One task.
struct Record {
    owner: Option<String>,
    shape: Shape,
    created: u64,
    ttl: Duration,
    /// When its call ended (rmcp forgets it one time-to-live later).
    ended_at: Option<Instant>,
    result: Kept,
    /// Its record on the task store, as created, when there is a store.
    shared: Option<Box<SharedTask>>,
}

/// The result of a task, kept here rather than in rmcp's manager: as its JSON, counted
/// against [`TaskLimits::max_result_bytes`].
enum Kept {
    /// Still running, or ended without a result (failed, cancelled).
    Nothing,
    Held {
        json: Box<[u8]>,
        /// The order it ended in.
        order: u64,
        read: bool,
    },
    /// Dropped for the result budget: evicted for newer results, or larger than all of it
    /// (its size).
    Dropped { too_large: Option<usize> },
}

impl ServerTasks {
    /// The tasks of a server under `limits`, on `store` (as replica `runner`) when it has one,
    /// living `ttl`, operation tasks' ids signed with `key`.
    pub(crate) fn new(
        limits: TaskLimits,
        store: Option<Arc<dyn TaskStore>>,
        runner: Arc<str>,
        lease: Duration,
        ttl: Duration,
        key: Option<Arc<[u8]>>,
    ) -> Self {
        let manager = TaskManager::default();
        Self {
            shared: store.map(|store| Shared::new(store, runner, lease, manager.clone())),
            manager,
            limits: TaskLimits {
                max_per_owner: limits.max_per_owner.max(1),
                max_running: limits.max_running.max(1),
                max_result_bytes: limits.max_result_bytes,
            },
            store: Mutex::new(Store::default()),
            ttl,
            key,
        }
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tasks whose call runs now (the `mcp_tasks_running` gauge): at most
    /// [`TaskLimits::max_running`], besides the tasks of revision 2025-11-25 answered without
    /// running, for the instant they take.
    pub(crate) fn running(&self) -> usize {
        self.store().running
    }

    /// Where the task `task_id` of `context`'s caller is held: here, or (with a task store) on
    /// another replica; the error for an unknown task when no such task of this caller's is
    /// held anywhere, or the store's when it cannot tell.
    pub(crate) async fn locate(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Held, ErrorData> {
        let caller = caller(context);
        if let Some(record) = self.store().records.get(task_id) {
            // Another caller's: unknown, as an id that never existed.
            return if record.owner == caller {
                Ok(Held::Here)
            } else {
                Err(unknown(task_id))
            };
        }
        // Forgotten here (rmcp forgets it at the same time, or an instant later), or another
        // replica's.
        let Some(shared) = &self.shared else {
            return Err(unknown(task_id));
        };
        match shared.find(task_id, caller.as_deref()).await? {
            Some(record) => Ok(Held::Elsewhere(Box::new(record))),
            None => Err(unknown(task_id)),
        }
    }

    /// Whether the task `task_id`, held as `held`, was started in the shape of revision
    /// 2025-11-25.
    pub(crate) fn started_in_2025_shape(&self, task_id: &str, held: &Held) -> bool {
        match held {
            Held::Here => self.answered_in_2025_shape(task_id, true),
            Held::Elsewhere(record) => record.revision_2025,
        }
    }

    /// Whether `tasks/get` and `tasks/cancel` of `task_id` are answered in the 2025-11-25
    /// shape: the task was started in it, or, unless `final_revision` (the request is of
    /// revision 2026-07-28, where rmcp checks the client's capabilities first), this server
    /// does not hold it, which is answered [`unknown`] in either shape, or from the task store.
    /// One look at the store.
    pub(crate) fn answered_in_2025_shape(&self, task_id: &str, final_revision: bool) -> bool {
        match self.store().records.get(task_id) {
            Some(record) => record.shape == Shape::Sep1686,
            None => !final_revision,
        }
    }

    /// The task `task_id` of `context`'s caller as rmcp (or, for another replica's, the task
    /// store) tracks it, with its result when `fetch` (which counts as fetched) or the failure
    /// saying it was dropped.
    pub(crate) async fn detailed(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
        fetch: bool,
    ) -> Result<DetailedTask, ErrorData> {
        match self.locate(task_id, context).await? {
            Held::Here => self.task(task_id, fetch),
            Held::Elsewhere(record) => Ok(record.task),
        }
    }

    /// Cancels the call of task `task_id`, held as `held`: here, or through the task store on
    /// the replica running it. A task that ended stays as it ended.
    pub(crate) async fn cancel(&self, task_id: &str, held: &Held) -> Result<(), ErrorData> {
        match (held, &self.shared) {
            (Held::Elsewhere(record), Some(shared)) if !record.is_terminal() => {
                shared.cancel(record).await
            }
            (Held::Elsewhere(_), _) => Ok(()),
            (Held::Here, _) => self.manager.cancel_task(task_id),
        }
    }

    /// As [`detailed`](Self::detailed), for any caller.
    fn task(&self, task_id: &str, fetch: bool) -> Result<DetailedTask, ErrorData> {
        let mut task = self.manager.get_task(task_id)?;
        if !matches!(task.payload, TaskPayload::Completed { .. }) {
            return Ok(task);
        }
        let mut store = self.store();
        let store = &mut *store;
        let Some(record) = store.records.get_mut(task_id) else {
            return Ok(task);
        };
        match &mut record.result {
            Kept::Held { json, order, read } if fetch => {
                let result: JsonObject = serde_json::from_slice(json).map_err(|error| {
                    ErrorData::internal_error(format!("task {task_id}: {error}"), None)
                })?;
                if !*read {
                    *read = true;
                    store.unread.remove(order);
                    store.read.insert(*order, task_id.to_owned());
                }
                task.payload = TaskPayload::Completed { result };
            }
            Kept::Dropped { too_large } => {
                let message = dropped_message(*too_large, self.limits.max_result_bytes);
                let mut shown = task.task;
                shown.status_message = Some(message.clone());
                task = DetailedTask::new(
                    shown,
                    TaskPayload::Failed {
                        error: error_object(&ErrorData::internal_error(message, None)),
                    },
                );
            }
            _ => {}
        }
        Ok(task)
    }

    /// One page of the tasks `context`'s caller started in the shape of revision 2025-11-25,
    /// in the order they were created, from after `cursor`; and the cursor of the next page.
    /// Over stdio (no HTTP request) every such task is the caller's; over HTTP with no caller
    /// to tell apart, none is. With a task store, the page lists the caller's tasks on every
    /// replica, as the store has them.
    pub(crate) async fn page_2025(
        &self,
        context: &RequestContext<RoleServer>,
        cursor: Option<&str>,
    ) -> Result<(Vec<DetailedTask>, Option<String>), ErrorData> {
        let after = cursor.map(decode_cursor).transpose()?;
        let over_http = context.extensions.get::<http::request::Parts>().is_some();
        let caller = caller(context);
        if over_http && caller.is_none() {
            return Ok((Vec::new(), None));
        }
        if let (Some(shared), Some(owner)) = (&self.shared, caller.as_deref()) {
            let (records, next) = shared.page(owner, after, LIST_PAGE).await?;
            let tasks = records
                .into_iter()
                .filter(|record| record.revision_2025)
                .map(|record| {
                    // This replica's own: as it is now.
                    let here = self.store().records.contains_key(record.id());
                    match here.then(|| self.task(record.id(), false)) {
                        Some(Ok(task)) => task,
                        _ => record.task,
                    }
                })
                .collect();
            return Ok((tasks, next.map(encode_cursor)));
        }
        let (ids, next) = {
            let mut store = self.store();
            store.forget_ended(Instant::now());
            let from = after.map_or(0, |after| after.saturating_add(1));
            let mut ids = Vec::new();
            let mut next = None;
            let mut last = 0;
            for (created, id) in store.created.range(from..) {
                let Some(record) = store.records.get(id) else {
                    continue;
                };
                if record.shape != Shape::Sep1686 || record.owner != caller {
                    continue;
                }
                if ids.len() == LIST_PAGE {
                    next = Some(last);
                    break;
                }
                ids.push(id.clone());
                last = *created;
            }
            (ids, next)
        };
        let tasks = ids
            .iter()
            .filter_map(|id| self.task(id, false).ok())
            .collect();
        Ok((tasks, next.map(encode_cursor)))
    }

    /// Admits a new task of `owner` under the limits (`runs`: its call is to run, which the
    /// running bound counts), or the refusal naming the bound.
    fn admit(
        &self,
        store: &mut Store,
        owner: Option<&String>,
        runs: bool,
    ) -> Result<(), ErrorData> {
        store.forget_ended(Instant::now());
        let live = store.live.get(&owner.cloned()).copied().unwrap_or(0);
        if live >= self.limits.max_per_owner || store.running >= self.limits.max_running {
            // rmcp fails the tasks past their time-to-live when it is called (its futures
            // then end, and with them their records): so that they stop counting soon.
            self.manager.running_task_count();
        }
        if live >= self.limits.max_per_owner {
            tracing::debug!(
                live,
                "task refused: the caller's live tasks are at the bound"
            );
            return Err(over_limit(
                "max_per_owner",
                self.limits.max_per_owner,
                format!(
                    "this caller already has {live} live tasks, the server's bound per caller \
                     (TaskLimits::max_per_owner = {}). A task counts from its creation until \
                     the server forgets it, one time-to-live after it ended: wait for earlier \
                     tasks to be forgotten, or raise the bound with \
                     Tasks::limits (grpc-mcp-gateway: --max-tasks-per-owner)",
                    self.limits.max_per_owner
                ),
            ));
        }
        if runs && store.running >= self.limits.max_running {
            tracing::debug!(
                running = store.running,
                "task refused: the running tasks are at the bound"
            );
            return Err(over_limit(
                "max_running",
                self.limits.max_running,
                format!(
                    "{} tasks are running on this server, its bound (TaskLimits::max_running = \
                     {}): retry once some have ended, or raise the bound with \
                     Tasks::limits (grpc-mcp-gateway: --max-running-tasks)",
                    store.running, self.limits.max_running
                ),
            ));
        }
        Ok(())
    }

    /// The task store's record of `task`, created now, when there is a store.
    fn seed(&self, task: &Task, owner: Option<&String>, shape: Shape) -> Option<SharedTask> {
        let shared = self.shared.as_ref()?;
        Some(shared.record(task, owner.cloned(), shape == Shape::Sep1686))
    }

    /// Puts task `task_id`, created here now, on the task store when there is one. When the
    /// store cannot take it, the task is cancelled here (no other replica could answer for it)
    /// and the store's error answers the call.
    pub(crate) async fn share(&self, task_id: &str) -> Result<(), ErrorData> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        let seed = self.store().records.get(task_id).and_then(|record| {
            let seed = record.shared.as_deref()?;
            Some((seed.clone(), record.ttl))
        });
        let Some((seed, ttl)) = seed else {
            return Ok(());
        };
        if let Err(error) = shared.create(&seed, ttl).await {
            let _ = self.manager.cancel_task(task_id);
            return Err(error);
        }
        Ok(())
    }

    /// The call of task `task_id` ended as `outcome`: kept here, and written to the task store
    /// when there is one.
    fn end(&self, task_id: &str, outcome: Outcome) {
        let mut store = self.store();
        let store = &mut *store;
        let Some(record) = store.records.get_mut(task_id) else {
            return;
        };
        if record.ended_at.is_some() {
            return;
        }
        record.ended_at = Some(Instant::now());
        store.running = store.running.saturating_sub(1);
        let bound = self.limits.max_result_bytes;
        if let (Some(shared), Some(seed)) = (&self.shared, &record.shared) {
            let ended = match &outcome {
                Outcome::Result(json) if json.len() > bound => {
                    Ended::Failed(dropped_message(Some(json.len()), bound))
                }
                Outcome::Result(json) => Ended::Completed(json),
                Outcome::Cancelled => Ended::Cancelled,
                Outcome::Failed(message) => Ended::Failed(message.clone()),
            };
            shared.finish_later((**seed).clone(), ended, record.ttl);
        }
        let Outcome::Result(json) = outcome else {
            return;
        };
        if json.len() > bound {
            record.result = Kept::Dropped {
                too_large: Some(json.len()),
            };
            store.note_dropped(1, bound);
            return;
        }
        // Room for it: the oldest fetched results first, then the oldest unfetched.
        let mut dropped = 0;
        while store.held + json.len() > bound {
            let Some((_, victim)) = store.read.pop_first().or_else(|| store.unread.pop_first())
            else {
                break;
            };
            if let Some(victim) = store.records.get_mut(&victim)
                && let Kept::Held { json, .. } =
                    std::mem::replace(&mut victim.result, Kept::Dropped { too_large: None })
            {
                store.held -= json.len();
                dropped += 1;
            }
        }
        if dropped > 0 {
            store.note_dropped(dropped, bound);
        }
        store.ended += 1;
        let order = store.ended;
        store.held += json.len();
        store.unread.insert(order, task_id.to_owned());
        if let Some(record) = store.records.get_mut(task_id) {
            record.result = Kept::Held {
                json: json.into_boxed_slice(),
                order,
                read: false,
            };
        }
    }
}

impl Store {
    /// Records `task`, created now, whose call runs; `shared`, its record on the task store.
    fn add(
        &mut self,
        task: &Task,
        owner: Option<String>,
        shape: Shape,
        ttl: Duration,
        shared: Option<SharedTask>,
    ) {
        let task_id = &task.task_id;
        self.next += 1;
        let created = self.next;
        self.created.insert(created, task_id.to_owned());
        *self.live.entry(owner.clone()).or_default() += 1;
        self.running += 1;
        self.records.insert(
            task_id.to_owned(),
            Record {
                owner,
                shape,
                created,
                ttl,
                ended_at: None,
                result: Kept::Nothing,
                shared: shared.map(Box::new),
            },
        );
    }

    /// Forgets the tasks that ended one time-to-live ago, as rmcp's manager does.
    fn forget_ended(&mut self, now: Instant) {
        let ended: Vec<String> = self
            .records
            .iter()
            .filter(|(_, record)| {
                record
                    .ended_at
                    .is_some_and(|at| now.saturating_duration_since(at) >= record.ttl)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in ended {
            let Some(record) = self.records.remove(&id) else {
                continue;
            };
            self.created.remove(&record.created);
            if let Some(live) = self.live.get_mut(&record.owner) {
                *live -= 1;
                if *live == 0 {
                    self.live.remove(&record.owner);
                }
            }
            if let Kept::Held { json, order, .. } = record.result {
                self.held -= json.len();
                self.unread.remove(&order);
                self.read.remove(&order);
            }
        }
    }

    /// Logs dropped results at `warn`, at most once every [`DROP_WARNING_EVERY`].
    fn note_dropped(&mut self, count: usize, bound: usize) {
        self.dropped_unlogged += count;
        let now = Instant::now();
        if self
            .warned_at
            .is_some_and(|at| now.duration_since(at) < DROP_WARNING_EVERY)
        {
            return;
        }
        tracing::warn!(
            dropped = self.dropped_unlogged,
            max_result_bytes = bound,
            "task results dropped: the task result budget is full (clients do not fetch their \
             results); raise TaskLimits::max_result_bytes (grpc-mcp-gateway: \
             --max-task-result-bytes) if they are wanted"
        );
        self.dropped_unlogged = 0;
        self.warned_at = Some(now);
    }
}

/// Ends a task's record when its call ends, or when its future is dropped without ending
/// (rmcp aborts a task at its time-to-live).
struct Ending {
    tasks: Arc<ServerTasks>,
    task_id: String,
    ended: bool,
}

impl Ending {
    fn end(mut self, outcome: Outcome) {
        self.ended = true;
        self.tasks.end(&self.task_id, outcome);
    }

    /// The call was cancelled: what rmcp is told.
    fn cancelled(self) -> Result<CallToolResult, TaskExit> {
        self.end(Outcome::Cancelled);
        Err(TaskExit::Cancelled)
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        if !self.ended {
            self.tasks.end(
                &self.task_id,
                Outcome::Failed(
                    "the task's time-to-live passed before its call ended: the call was \
                     cancelled"
                        .to_owned(),
                ),
            );
        }
    }
}

/// What a task's future gives rmcp's manager when its result is kept in the [`Store`]: an
/// empty result, which the store's is shown instead of.
fn placeholder() -> CallToolResult {
    CallToolResult::success(Vec::new())
}

/// Ends `ending` with `result`, kept in the store, and gives rmcp the placeholder.
fn ended(ending: Ending, result: &CallToolResult) -> Result<CallToolResult, TaskExit> {
    match serde_json::to_vec(result) {
        Ok(json) => {
            ending.end(Outcome::Result(json));
            Ok(placeholder())
        }
        Err(error) => {
            let message = format!("the task's result could not be kept: {error}");
            ending.end(Outcome::Failed(message.clone()));
            Err(TaskExit::Error(ErrorData::internal_error(message, None)))
        }
    }
}

/// The JSON-RPC error refusing a task over one of the [`TaskLimits`].
fn over_limit(limit: &str, value: usize, message: String) -> ErrorData {
    ErrorData::internal_error(
        format!("task refused: {message}"),
        Some(serde_json::json!({"limit": limit, "value": value})),
    )
}

/// Why a task's result is not there.
fn dropped_message(too_large: Option<usize>, bound: usize) -> String {
    let raise = "raise the budget with Tasks::limits (grpc-mcp-gateway: \
                 --max-task-result-bytes)";
    match too_large {
        Some(size) => format!(
            "the task's result was dropped: at {size} bytes it is larger than the server's \
             whole task result budget (TaskLimits::max_result_bytes = {bound} bytes); ask for \
             less, or {raise}"
        ),
        None => format!(
            "the task's result was dropped because the server's task result budget was full \
             (TaskLimits::max_result_bytes = {bound} bytes, held for results not yet fetched) \
             and it was among the oldest: fetch results as soon as tasks complete, or {raise}"
        ),
    }
}

fn encode_cursor(created: u64) -> String {
    CURSOR.encode(format!("{CURSOR_PREFIX}{created}"))
}

/// The creation number a `tasks/list` cursor names, or invalid params.
fn decode_cursor(cursor: &str) -> Result<u64, ErrorData> {
    CURSOR
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix(CURSOR_PREFIX)?.parse().ok())
        .ok_or_else(|| {
            ErrorData::invalid_params(
                "invalid tasks/list cursor: pass the nextCursor of an earlier tasks/list \
                 answer, or no cursor for the first page",
                None,
            )
        })
}

/// The refusal of a call, not asked as a task, of a tool whose calls must be tasks
/// (`TASK_SUPPORT_REQUIRED`).
pub(crate) fn required(tool: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!(
            "tool `{tool}` runs only as a task: declare the MCP tasks extension \
             (io.modelcontextprotocol/tasks), or on protocol revision 2025-11-25 call it with \
             `task`"
        ),
        None,
    )
}

/// rmcp's own answer for a task id it does not know, word for word.
pub(crate) fn unknown(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {task_id}"), None)
}

/// Who is calling, to tell task owners apart: the [`Caller`](crate::Caller) an
/// authenticating layer named, else the HTTP session; `None` over stdio and stateless HTTP
/// without one.
pub(crate) fn caller(context: &RequestContext<RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    if let Some(caller) = parts.extensions.get::<tonic_mcp::Caller>() {
        return Some(format!("caller:{}", caller.id()));
    }
    parts
        .headers
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
        .map(|id| format!("session:{id}"))
}

/// How a `tools/call` that did not ask for a task explicitly (the extension's shape) is
/// answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// With the result, as for a client without tasks.
    Inline,
    /// With a task, at once.
    Task,
    /// Refused: the tool runs only as a task and the client declared no tasks.
    Refused,
    /// With the result when the call ends within this wait, else with a task carrying on the
    /// call ([`inline_or_task`]).
    Wait(Duration),
}

/// How this call is answered: a tool that requires tasks runs as one (or is refused to a
/// client without tasks); a tool that allows them, called by a client that declared the
/// extension, as `mode` (the tool set's, else the server's) says; any other call inline.
pub(crate) fn route(
    mode: TaskMode,
    call: &ReadyCall,
    context: &RequestContext<RoleServer>,
) -> Route {
    let support = call.task_support();
    let declared = context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks());
    if support == TaskSupport::Required {
        return if declared {
            Route::Task
        } else {
            Route::Refused
        };
    }
    if !declared || !support.allows_tasks() {
        return Route::Inline;
    }
    match mode {
        TaskMode::Always => Route::Task,
        TaskMode::Never => Route::Inline,
        TaskMode::Auto { inline_wait } => Route::Wait(inline_wait),
        // A mode this crate does not know yet: the call as for a client without tasks.
        _ => Route::Inline,
    }
}

/// A call ([`TaskMode::Auto`]): run now, and answered with its result when it ends within
/// `wait`. Still running then, the same call (its future: the gRPC call is not made again, and
/// what a stream collected so far stays) is handed to a new task, whose cancellation cancels
/// it and whose status message gets its progress from then on; the answer is the task. A call
/// counts against the [`TaskLimits`] only from then: when they refuse the task, the call goes
/// on inline and is answered with its result (it has run for `wait` already; refusing it would
/// waste that work, and the client could only call again). A cancel of the request
/// (`notifications/cancelled`) while the call is inline cancels the call, as for any call.
pub(crate) async fn inline_or_task(
    host: &Host,
    mut call: ReadyCall,
    context: &RequestContext<RoleServer>,
    wait: Duration,
) -> CallToolResponse {
    // The call may outlive the request as a task: it owns its arguments, as a map (its stream
    // control is read from them), and gives its structured result as a tree.
    if let Err(refusal) = call.materialize(context) {
        return CallToolResponse::Complete(*refusal);
    }
    let tool = call.request().name.clone();
    let progress = TaskProgress::handoff(context);
    // Cancels the call: the request's cancel while it is inline, the task's after.
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut running = Box::pin({
        let server = host.server.clone();
        let origin = CallOrigin::of(context);
        let progress = progress.clone();
        // As for a task started at once: with `keepOnCancel` on a response stream, the task's
        // cancel ends the collection and the task completes with what came.
        let cancelled = cancel.clone().cancelled_owned();
        async move {
            server
                .run_in_background(call, origin, progress, cancelled)
                .await
        }
    });
    let complete = |result: Option<CallToolResult>| {
        CallToolResponse::Complete(result.unwrap_or_else(cancelled_result))
    };
    tokio::select! {
        biased;
        result = &mut running => return complete(result),
        () = context.ct.cancelled() => {
            cancel.cancel();
            return complete(running.await);
        }
        () = tokio::time::sleep(wait) => {}
    }
    // Still running: a task, if the limits let one more in.
    let owner = caller(context);
    match hand_to_task(host, running, cancel.clone(), &progress, owner, wait) {
        Ok(task) => match host.tasks.share(&task.task.task_id).await {
            Ok(()) => CallToolResponse::Task(task),
            // The task is cancelled: the call is answered with why.
            Err(error) => CallToolResponse::Complete(CallToolResult::error(vec![
                rmcp::model::ContentBlock::text(error.message.to_string()),
            ])),
        },
        Err((refusal, mut running)) => {
            tracing::debug!(
                tool = %tool,
                reason = %refusal.message,
                "the call goes on inline: the task limits refuse it a task"
            );
            tokio::select! {
                biased;
                result = &mut running => complete(result),
                () = context.ct.cancelled() => {
                    cancel.cancel();
                    complete(running.await)
                }
            }
        }
    }
}

/// Hands `running`, a call under way, to a new task of `owner`'s, admitted under the
/// [`TaskLimits`] (checked, spawned and recorded under the store's lock, as in [`start`]); or
/// gives it back with the refusal. The task's cancellation fires `cancel`, and `progress` goes
/// to the task.
fn hand_to_task<F>(
    host: &Host,
    mut running: std::pin::Pin<Box<F>>,
    cancel: tokio_util::sync::CancellationToken,
    progress: &TaskProgress,
    owner: Option<String>,
    waited: Duration,
) -> Result<CreateTaskResult, (ErrorData, std::pin::Pin<Box<F>>)>
where
    F: Future<Output = Option<CallToolResult>> + Send + 'static,
{
    let tasks = &host.tasks;
    let mut store = tasks.store();
    if let Err(refusal) = tasks.admit(&mut store, owner.as_ref(), true) {
        return Err((refusal, running));
    }
    let ttl = tasks.ttl;
    let options = options(ttl).with_status_message(format!(
        "the RPC is running (a task after {} ms)",
        waited.as_millis()
    ));
    let progress = progress.clone();
    let ending_tasks = Arc::clone(tasks);
    let task = tasks.manager.spawn(options, move |task| {
        // From here on progress is the task's: the request is answered with the task.
        progress.to_task(task.clone());
        let ending = Ending {
            tasks: ending_tasks,
            task_id: task.task_id().to_owned(),
            ended: false,
        };
        Box::pin(async move {
            let result = tokio::select! {
                biased;
                result = &mut running => result,
                () = task.cancelled() => {
                    cancel.cancel();
                    running.await
                }
            };
            match result {
                Some(result) => ended(ending, &result),
                None => ending.cancelled(),
            }
        })
    });
    let seed = tasks.seed(&task, owner.as_ref(), Shape::Extension);
    store.add(&task, owner, Shape::Extension, ttl, seed);
    Ok(CreateTaskResult::new(task))
}

/// Starts `call` in the background and returns its task, or the refusal when the caller or
/// the server is at one of the [`TaskLimits`].
pub(crate) async fn start(
    host: &Host,
    call: ReadyCall,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
    shape: Shape,
) -> Result<CreateTaskResult, ErrorData> {
    let task = start_here(host, call, context, ttl, shape)?;
    host.tasks.share(&task.task_id).await?;
    Ok(CreateTaskResult::new(task))
}

/// [`start`] on this replica.
fn start_here(
    host: &Host,
    mut call: ReadyCall,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
    shape: Shape,
) -> Result<Task, ErrorData> {
    // A task keeps its arguments as a map (its stream control is read from them); arguments
    // kept as text that cannot be read make a task that completes with the refusal.
    let unreadable = call.materialize(context).err();
    let request = call.into_request();
    let owner = caller(context);
    let origin = CallOrigin::of(context);
    let options = options(ttl).with_status_message("the RPC is running");
    let tasks = &host.tasks;
    // Admitted, spawned and recorded under the store's lock: the bounds hold however many
    // calls arrive at once, and the task's end (which takes the lock) finds its record.
    let mut store = tasks.store();
    tasks.admit(&mut store, owner.as_ref(), true)?;
    let server = host.server.clone();
    let ending_tasks = Arc::clone(tasks);
    let task = tasks.manager.spawn(options, move |task| {
        let ending = Ending {
            tasks: ending_tasks,
            task_id: task.task_id().to_owned(),
            ended: false,
        };
        Box::pin(async move {
            if let Some(refusal) = unreadable {
                return ended(ending, &refusal);
            }
            // The tool as served when the task runs.
            let call = server.look_up(request)?;
            let progress = TaskProgress::task(task.clone());
            // A task on a response stream whose call asked for `keepOnCancel`: the cancel
            // ends the collection and the task completes with the messages so far,
            // truncated (a watch that never ends is collected until the client has seen
            // enough). Otherwise the call is dropped and the task ends cancelled.
            let cancelled = {
                let task = task.clone();
                async move { task.cancelled().await }
            };
            let result = server
                .run_in_background(call, origin, progress, cancelled)
                .await;
            match result {
                Some(result) => ended(ending, &result),
                None => ending.cancelled(),
            }
        })
    });
    let seed = tasks.seed(&task, owner.as_ref(), shape);
    store.add(&task, owner, shape, ttl, seed);
    Ok(task)
}

/// The options of a task living `ttl`, polled every [`POLL_INTERVAL_MS`].
fn options(ttl: Duration) -> TaskOptions {
    TaskOptions::new()
        .with_ttl_ms(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(POLL_INTERVAL_MS)
}

/// A task of revision 2025-11-25 that is complete from the start with `answer` (a call
/// answered without running: refused arguments, a declined confirmation). It counts against
/// the caller's live tasks, not the running ones.
pub(crate) async fn finished(
    host: &Host,
    answer: CallToolResult,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
) -> Result<Task, ErrorData> {
    let task = finished_here(host, answer, context, ttl)?;
    host.tasks.share(&task.task_id).await?;
    Ok(task)
}

/// [`finished`] on this replica.
fn finished_here(
    host: &Host,
    answer: CallToolResult,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
) -> Result<Task, ErrorData> {
    let owner = caller(context);
    let tasks = &host.tasks;
    let mut store = tasks.store();
    tasks.admit(&mut store, owner.as_ref(), false)?;
    let ending_tasks = Arc::clone(tasks);
    let task = tasks.manager.spawn(options(ttl), move |task| {
        let ending = Ending {
            tasks: ending_tasks,
            task_id: task.task_id().to_owned(),
            ended: false,
        };
        Box::pin(async move { ended(ending, &answer) })
    });
    let seed = tasks.seed(&task, owner.as_ref(), Shape::Sep1686);
    store.add(&task, owner, Shape::Sep1686, ttl, seed);
    Ok(task)
}
