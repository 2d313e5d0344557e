//! Where the tasks of several replicas meet ([`Tasks::store`]): the
//! [`TaskStore`] trait, the record it keeps ([`SharedTask`]), and [`MemoryTaskStore`], the
//! store for replicas in one process.
//!
//! [`Tasks::store`]: crate::Tasks::store

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    pin::Pin,
    sync::Mutex,
    time::{Duration, Instant},
};

use rmcp::{
    ErrorData,
    model::{DetailedTask, JsonObject},
};
use serde::{Deserialize, Serialize};

/// What a [`TaskStore`] call gives back.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// A task as the replicas of one service share it: written by the replica that runs its call
/// (the runner) when the task is created and when the call ends, read by any replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SharedTask {
    /// The task as `tasks/get` answers it: its status and, once ended, its result or error.
    pub task: DetailedTask,
    /// Who may see it: `caller:` and the token owner, or `session:` and the HTTP session;
    /// `None` when the server tells no callers apart (stateless HTTP without authorization),
    /// and anyone holding its id may.
    pub owner: Option<String>,
    /// It was started in the shape of protocol revision 2025-11-25 (`tools/call` with `task`),
    /// and is answered in it; else in the tasks extension's.
    pub revision_2025: bool,
    /// The replica running its call ([`McpServerBuilder::replica`]), which renews a lease on
    /// the store while it lives.
    ///
    /// [`McpServerBuilder::replica`]: tonic_mcp::McpServerBuilder::replica
    pub runner: String,
    /// When it was created, in microseconds since the Unix epoch: the order of `tasks/list`.
    pub created_us: u64,
}

impl SharedTask {
    /// A task record (for a store's own tests and tools: the server makes its records).
    pub fn new(
        task: DetailedTask,
        owner: Option<String>,
        revision_2025: bool,
        runner: impl Into<String>,
        created_us: u64,
    ) -> Self {
        Self {
            task,
            owner,
            revision_2025,
            runner: runner.into(),
            created_us,
        }
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.task.task.task_id
    }

    /// Whether it ended: completed, failed or cancelled.
    pub fn is_terminal(&self) -> bool {
        self.task.status().is_terminal()
    }
}

/// A page of [`TaskStore::list`]: tasks oldest first, and the `created_us` to list after for
/// the next page, when there is one.
pub type TaskPage = (Vec<SharedTask>, Option<u64>);

/// The store several replicas of one server keep their tasks on, so that any replica answers
/// `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of a task another runs, and a
/// task whose replica died is reported failed ([`Tasks::store`]).
///
/// The replica running a task's call writes it twice: [`create`](Self::create) before the
/// `tools/call` is answered, [`finish`](Self::finish) when the call ends. Its
/// [`renew`](Self::renew) keeps its lease alive and collects the cancellations other replicas
/// asked of it ([`cancel`](Self::cancel)). A replica reading a task that is still working
/// checks its runner's lease ([`runner_alive`](Self::runner_alive)); a lapsed lease means the
/// runner stopped, and the reader finishes the task as failed. Writes race freely: `create`
/// never replaces a record and `finish` never replaces an ended one, so the first ending
/// wins whatever order the writes land in.
///
/// Records expire on their own: `expire` is the time-to-live the server gives each write.
/// Every call may fail ([`TaskStoreError`]); the server bounds each in time, and a task call
/// that needs the store is then answered with an error naming it, while calls without tasks
/// never touch it. Implementations: [`MemoryTaskStore`] (replicas in one process), and the
/// `tonic-mcp-redis` crate (Redis-protocol servers).
///
/// [`Tasks::store`]: crate::Tasks::store
pub trait TaskStore: Send + Sync + 'static {
    /// The store as errors and logs name it, with no credentials (`redis://host:6379/0`).
    fn name(&self) -> &str;

    /// Writes a new task, unless a record with its id is there already (its call ended and
    /// [`finish`](Self::finish) landed first): kept `expire`.
    fn create<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, ()>;

    /// Writes an ended task over its record unless that one has ended already; answers
    /// whether it wrote. The record is kept `expire` from now.
    fn finish<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, bool>;

    /// The task `task_id`, if the store holds it.
    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Option<SharedTask>>;

    /// Up to `limit` tasks of `owner` created after `after` (a [`TaskPage`]'s cursor), oldest
    /// first.
    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage>;

    /// Renews `runner`'s lease for `lease`, and takes the ids of the tasks whose cancellation
    /// other replicas asked of it since the last renewal.
    fn renew<'a>(&'a self, runner: &'a str, lease: Duration) -> StoreFuture<'a, Vec<String>>;

    /// Whether `runner`'s lease is alive.
    fn runner_alive<'a>(&'a self, runner: &'a str) -> StoreFuture<'a, bool>;

    /// Asks `runner` to cancel task `task_id` (taken by its next [`renew`](Self::renew)).
    fn cancel<'a>(&'a self, runner: &'a str, task_id: &'a str) -> StoreFuture<'a, ()>;
}

/// A store shared by several servers in one process.
impl<T: TaskStore + ?Sized> TaskStore for std::sync::Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn create<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, ()> {
        (**self).create(task, expire)
    }

    fn finish<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, bool> {
        (**self).finish(task, expire)
    }

    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Option<SharedTask>> {
        (**self).get(task_id)
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        (**self).list(owner, after, limit)
    }

    fn renew<'a>(&'a self, runner: &'a str, lease: Duration) -> StoreFuture<'a, Vec<String>> {
        (**self).renew(runner, lease)
    }

    fn runner_alive<'a>(&'a self, runner: &'a str) -> StoreFuture<'a, bool> {
        (**self).runner_alive(runner)
    }

    fn cancel<'a>(&'a self, runner: &'a str, task_id: &'a str) -> StoreFuture<'a, ()> {
        (**self).cancel(runner, task_id)
    }
}

/// Why a [`TaskStore`] call failed: the store is unreachable, answered an error, or holds a
/// record that cannot be read.
#[derive(Debug, Clone)]
pub struct TaskStoreError {
    message: String,
}

impl TaskStoreError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TaskStoreError {}

/// A [`TaskStore`] in this process's memory, for several servers in one process (replicas
/// behind one listener, tests): what they share is exactly what replicas share on Redis.
/// One server alone needs no store.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    state: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    tasks: HashMap<String, (SharedTask, Instant)>,
    leases: HashMap<String, Instant>,
    cancels: HashMap<String, Vec<String>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Memory {
    /// Forgets the expired tasks.
    fn expire(&mut self, now: Instant) {
        self.tasks.retain(|_, (_, until)| *until > now);
    }
}

impl TaskStore for MemoryTaskStore {
    fn name(&self) -> &str {
        "memory"
    }

    fn create<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, ()> {
        let mut state = self.state();
        let now = Instant::now();
        state.expire(now);
        state
            .tasks
            .entry(task.id().to_owned())
            .or_insert_with(|| (task.clone(), now + expire));
        Box::pin(std::future::ready(Ok(())))
    }

    fn finish<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, bool> {
        let mut state = self.state();
        let now = Instant::now();
        state.expire(now);
        let wrote = match state.tasks.get_mut(task.id()) {
            Some((held, _)) if held.is_terminal() => false,
            Some(held) => {
                *held = (task.clone(), now + expire);
                true
            }
            None => {
                state
                    .tasks
                    .insert(task.id().to_owned(), (task.clone(), now + expire));
                true
            }
        };
        Box::pin(std::future::ready(Ok(wrote)))
    }

    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Option<SharedTask>> {
        let mut state = self.state();
        state.expire(Instant::now());
        let task = state.tasks.get(task_id).map(|(task, _)| task.clone());
        Box::pin(std::future::ready(Ok(task)))
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        let mut state = self.state();
        state.expire(Instant::now());
        let mine: BTreeMap<(u64, &str), &SharedTask> = state
            .tasks
            .values()
            .map(|(task, _)| task)
            .filter(|task| task.owner.as_deref() == Some(owner))
            .filter(|task| after.is_none_or(|after| task.created_us > after))
            .map(|task| ((task.created_us, task.id()), task))
            .collect();
        let page: Vec<SharedTask> = mine
            .values()
            .take(limit)
            .map(|&task| task.clone())
            .collect();
        let next = (mine.len() > limit)
            .then(|| page.last().map(|task| task.created_us))
            .flatten();
        Box::pin(std::future::ready(Ok((page, next))))
    }

    fn renew<'a>(&'a self, runner: &'a str, lease: Duration) -> StoreFuture<'a, Vec<String>> {
        let mut state = self.state();
        state
            .leases
            .insert(runner.to_owned(), Instant::now() + lease);
        let cancels = state.cancels.remove(runner).unwrap_or_default();
        Box::pin(std::future::ready(Ok(cancels)))
    }

    fn runner_alive<'a>(&'a self, runner: &'a str) -> StoreFuture<'a, bool> {
        let alive = self
            .state()
            .leases
            .get(runner)
            .is_some_and(|until| *until > Instant::now());
        Box::pin(std::future::ready(Ok(alive)))
    }

    fn cancel<'a>(&'a self, runner: &'a str, task_id: &'a str) -> StoreFuture<'a, ()> {
        self.state()
            .cancels
            .entry(runner.to_owned())
            .or_default()
            .push(task_id.to_owned());
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The time since the Unix epoch, as task records and signed task ids write it.
pub(crate) fn since_epoch() -> Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// `error` as a task record writes it: its JSON-RPC error object.
pub(crate) fn error_object(error: &ErrorData) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}
