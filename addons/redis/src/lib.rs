//! A [`TaskStore`] on Redis-protocol servers (Redis 7, Valkey, managed Redis services), for
//! the replicas of one `tonic-mcp` server: any replica answers `tasks/get`, `tasks/result`,
//! `tasks/list` and `tasks/cancel` of a task another runs, and a task whose replica died is
//! reported failed within a lease.
//!
//! ```no_run
//! # fn build(builder: tonic_mcp::McpServerBuilder) -> Result<tonic_mcp::McpServer, tonic_mcp_tasks::TaskStoreError> {
//! let password = std::env::var("TASK_STORE_PASSWORD").ok();
//! let store = tonic_mcp_redis::RedisTaskStore::new(
//!     "redis://redis.tasks.svc:6379/0",
//!     password.as_deref(),
//! )?;
//! let server = builder
//!     .replica(std::env::var("POD_NAME").unwrap_or_default())
//!     .task_router(tonic_mcp_tasks::Tasks::new().store(store))
//!     .build();
//! # Ok(server)
//! # }
//! ```
//!
//! # What it keeps
//!
//! Under a key prefix ([`RedisTaskStore::key_prefix`], default `tonic-mcp:`):
//!
//! - `task:ID`, a hash: the task's `status` and its `record` (the [`SharedTask`] as JSON, the
//!   result of an ended task included). It expires with the task: one time-to-live after
//!   creation while it runs, one after it ended once it has. Results past the server's result
//!   budget never reach it.
//! - `owner:OWNER`, a sorted set of the owner's task ids by creation time, for `tasks/list`;
//!   an id whose task expired is dropped when a listing meets it.
//! - `runner:NAME`, the lease of a replica, renewed ten times a lease.
//! - `cancel:NAME`, the ids of the tasks other replicas asked that replica to cancel, taken
//!   with its next renewal.
//!
//! The writes (`create` never replaces a task, `finish` never an ended one) are one Lua
//! script, atomic on the server. The connection is made on first use and made again after a failure, so a
//! server starts while the store is down, and tasks work again as soon as it is back; calls
//! without a task never reach it.

use std::{sync::Arc, time::Duration};

use redis::{AsyncCommands as _, Script, aio::ConnectionManager};
use tonic_mcp_tasks::{SharedTask, StoreFuture, TaskPage, TaskStore, TaskStoreError};

/// The key prefix unless [`RedisTaskStore::key_prefix`] says otherwise.
pub const DEFAULT_KEY_PREFIX: &str = "tonic-mcp:";

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(1000);

/// How long one command may take.
const RESPONSE_TIMEOUT: Duration = Duration::from_millis(1500);

/// How long the cancellations asked of a replica are kept for it to take (a replica that
/// stopped never does).
const CANCELS_KEPT: Duration = Duration::from_secs(60);

/// Writes a task and indexes it under its owner; answers 1 when it wrote. `create` writes only
/// a task not there yet; `finish` replaces one that has not ended. KEYS: task, owner index (or
/// ""). ARGV: status, record, expire ms, created µs, id, `create` or `finish`.
const WRITE: &str = r"
local status = redis.call('HGET', KEYS[1], 'status')
local write
if ARGV[6] == 'create' then
  write = not status
else
  write = (not status) or status == 'working' or status == 'input_required'
end
if write then
  redis.call('HSET', KEYS[1], 'status', ARGV[1], 'record', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if KEYS[2] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
  end
end
if write then return 1 end
return 0
";

/// A [`TaskStore`] on a Redis-protocol server; see the [crate] documentation.
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: ConnectionManager,
    name: Arc<str>,
    prefix: Arc<str>,
    write: Arc<Script>,
    on_error: Option<Arc<dyn Fn(&'static str) + Send + Sync>>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("name", &self.name)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// The store at `url` (`redis://host:port/db`, `redis+unix:///path`), authenticating
    /// with `password` when given (read it from a file or the environment: a URL with the
    /// password in it would put it in flags and logs). Connected on first use, and again after
    /// a failure.
    ///
    /// # Errors
    ///
    /// When `url` is not a Redis URL.
    pub fn new(url: &str, password: Option<&str>) -> Result<Self, TaskStoreError> {
        let invalid = |error: redis::RedisError| {
            TaskStoreError::new(format!("task store URL {url}: {error}"))
        };
        let mut client = redis::Client::open(url).map_err(invalid)?;
        if let Some(password) = password {
            let info = client.get_connection_info().clone();
            let settings = info.redis_settings().clone().set_password(password);
            client = redis::Client::open(info.set_redis_settings(settings)).map_err(invalid)?;
        }
        let info = client.get_connection_info();
        let name = format!("redis://{}/{}", info.addr(), info.redis_settings().db());
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(1);
        let connection = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|error| TaskStoreError::new(format!("task store {name}: {error}")))?;
        Ok(Self {
            connection,
            name: Arc::from(name),
            prefix: Arc::from(DEFAULT_KEY_PREFIX),
            write: Arc::new(Script::new(WRITE)),
            on_error: None,
        })
    }

    /// Keeps the store's keys under `prefix` (default [`DEFAULT_KEY_PREFIX`]): servers that
    /// are not replicas of one another and share a Redis database need prefixes of their own.
    #[must_use]
    pub fn key_prefix(mut self, prefix: impl AsRef<str>) -> Self {
        self.prefix = Arc::from(prefix.as_ref());
        self
    }

    /// Calls `on_error` with the operation (`create`, `finish`, `get`, `list`, `renew`,
    /// `runner_alive`, `cancel`) each time one fails, for a metric of store errors.
    #[must_use]
    pub fn on_error(mut self, on_error: impl Fn(&'static str) + Send + Sync + 'static) -> Self {
        self.on_error = Some(Arc::new(on_error));
        self
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}{kind}:{id}", self.prefix)
    }

    /// `result`, its error counted and made a [`TaskStoreError`] naming `operation`.
    fn checked<T>(
        &self,
        operation: &'static str,
        result: redis::RedisResult<T>,
    ) -> Result<T, TaskStoreError> {
        result.map_err(|error| {
            if let Some(on_error) = &self.on_error {
                on_error(operation);
            }
            TaskStoreError::new(format!("{operation}: {error}"))
        })
    }

    /// Runs [`WRITE`] as `operation` (`create` or `finish`) for `task`, kept `expire`.
    async fn write(
        &self,
        operation: &'static str,
        task: &SharedTask,
        expire: Duration,
    ) -> Result<bool, TaskStoreError> {
        let record = serde_json::to_string(task)
            .map_err(|error| TaskStoreError::new(format!("{operation}: {error}")))?;
        let status = serde_json::to_value(task.task.status())
            .ok()
            .and_then(|status| status.as_str().map(str::to_owned))
            .unwrap_or_default();
        let owner = task
            .owner
            .as_deref()
            .map_or_else(String::new, |owner| self.key("owner", owner));
        let expire_ms = u64::try_from(expire.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut connection = self.connection.clone();
        let wrote: redis::RedisResult<i64> = self
            .write
            .key(self.key("task", task.id()))
            .key(owner)
            .arg(status)
            .arg(record)
            .arg(expire_ms)
            .arg(task.created_us)
            .arg(task.id())
            .arg(operation)
            .invoke_async(&mut connection)
            .await;
        Ok(self.checked(operation, wrote)? == 1)
    }
}

/// A stored record, read.
fn parse(operation: &'static str, json: &str) -> Result<SharedTask, TaskStoreError> {
    serde_json::from_str(json).map_err(|error| {
        TaskStoreError::new(format!(
            "{operation}: a task record that cannot be read: {error}"
        ))
    })
}

impl TaskStore for RedisTaskStore {
    fn name(&self) -> &str {
        &self.name
    }

    fn create<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move { self.write("create", task, expire).await.map(|_| ()) })
    }

    fn finish<'a>(&'a self, task: &'a SharedTask, expire: Duration) -> StoreFuture<'a, bool> {
        Box::pin(self.write("finish", task, expire))
    }

    fn get<'a>(&'a self, task_id: &'a str) -> StoreFuture<'a, Option<SharedTask>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let record: redis::RedisResult<Option<String>> =
                connection.hget(self.key("task", task_id), "record").await;
            self.checked("get", record)?
                .map(|json| parse("get", &json))
                .transpose()
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        Box::pin(async move {
            let index = self.key("owner", owner);
            let from = after.map_or_else(|| "-inf".to_owned(), |after| format!("({after}"));
            let mut connection = self.connection.clone();
            let count = isize::try_from(limit.saturating_add(1)).unwrap_or(isize::MAX);
            let ids: redis::RedisResult<Vec<String>> = connection
                .zrangebyscore_limit(&index, from, "+inf", 0, count)
                .await;
            let ids = self.checked("list", ids)?;
            let more = ids.len() > limit;
            let ids = &ids[..ids.len().min(limit)];
            if ids.is_empty() {
                return Ok((Vec::new(), None));
            }
            let mut pipe = redis::pipe();
            for id in ids {
                pipe.hget(self.key("task", id), "record");
            }
            let records: redis::RedisResult<Vec<Option<String>>> =
                pipe.query_async(&mut connection).await;
            let records = self.checked("list", records)?;
            let mut page = Vec::with_capacity(records.len());
            let mut expired = Vec::new();
            for (id, record) in ids.iter().zip(records) {
                match record {
                    Some(json) => page.push(parse("list", &json)?),
                    None => expired.push(id.clone()),
                }
            }
            if !expired.is_empty() {
                let removed: redis::RedisResult<i64> = connection.zrem(&index, expired).await;
                self.checked("list", removed)?;
            }
            let next = if more {
                page.last().map(|task| task.created_us)
            } else {
                None
            };
            Ok((page, next))
        })
    }

    fn renew<'a>(&'a self, runner: &'a str, lease: Duration) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let cancels = self.key("cancel", runner);
            let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut connection = self.connection.clone();
            let answer: redis::RedisResult<((), Vec<String>, ())> = redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(self.key("runner", runner))
                .arg(1)
                .arg("PX")
                .arg(lease_ms)
                .lrange(&cancels, 0, -1)
                .del(&cancels)
                .query_async(&mut connection)
                .await;
            Ok(self.checked("renew", answer)?.1)
        })
    }

    fn runner_alive<'a>(&'a self, runner: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let alive: redis::RedisResult<bool> =
                connection.exists(self.key("runner", runner)).await;
            self.checked("runner_alive", alive)
        })
    }

    fn cancel<'a>(&'a self, runner: &'a str, task_id: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let cancels = self.key("cancel", runner);
            let kept_ms = u64::try_from(CANCELS_KEPT.as_millis()).unwrap_or(u64::MAX);
            let mut connection = self.connection.clone();
            let answer: redis::RedisResult<()> = redis::pipe()
                .rpush(&cancels, task_id)
                .ignore()
                .pexpire(&cancels, i64::try_from(kept_ms).unwrap_or(i64::MAX))
                .ignore()
                .query_async(&mut connection)
                .await;
            self.checked("cancel", answer)
        })
    }
}
