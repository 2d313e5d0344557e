//! Tasks on a shared [`TaskStore`] ([`Tasks::store`]): what a replica writes
//! of the tasks it runs, and how it answers for the tasks other replicas run.
//!
//! A replica runs each task's call itself, as a server without a store does, and keeps the
//! task in its own memory too (its requests about its own tasks never wait on the store). The
//! store gets the task when it is created, before the `tools/call` is answered, and again
//! when its call ends, with the result: a request on another replica finds it there. A
//! request for a task another replica runs reads it from the store; `tasks/cancel` leaves the
//! cancellation on the store for that replica, whose [`heartbeat`] takes it within a tenth of
//! a lease and cancels the call (the backend sees the gRPC call cancelled).
//!
//! The heartbeat also renews this replica's lease ([`DEFAULT_TASK_LEASE`]). A replica reading a working
//! task whose runner's lease lapsed knows the runner stopped before the call ended (killed,
//! or cut from the store for longer than the lease), and finishes the task as failed with a
//! message saying so: a task is never left `working` for its whole time-to-live. A task younger
//! than a lease is given that long (its runner may not have renewed since the store came back
//! empty).
//!
//! Every store call is bounded by [`STORE_WAIT`]; one that fails or takes longer answers the
//! request with an error naming the store. Calls without a task never reach this module.
//!
//! [`Tasks::store`]: crate::Tasks::store

use std::{
    sync::{Arc, OnceLock, Weak},
    time::Duration,
};

use rmcp::{
    ErrorData,
    model::{DetailedTask, JsonObject, Task, TaskPayload},
    task_manager::TaskManager,
};

use crate::task_store::{SharedTask, StoreFuture, TaskStore};

/// How long a replica's lease lives unless renewed, unless [`Tasks::lease`]
/// says otherwise: a task whose runner stopped is reported failed at most this long after the
/// runner's last renewal.
///
/// [`Tasks::lease`]: crate::Tasks::lease
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(10);

/// How often a replica renews its lease and takes the cancellations asked of it: ten times a
/// lease, so that a slow store answer or two do not let it lapse.
fn renew_every(lease: Duration) -> Duration {
    lease / 10
}

/// The longest a request waits for one store call.
pub(crate) const STORE_WAIT: Duration = Duration::from_secs(2);

/// The store, and this replica's name on it.
pub(crate) struct Shared {
    store: Arc<dyn TaskStore>,
    runner: Arc<str>,
    lease: Duration,
    /// The tasks this replica runs, to cancel those asked of it.
    manager: TaskManager,
    /// Set once the heartbeat runs (from the first task this replica shares).
    heartbeat: OnceLock<()>,
}

/// How a task's call ended, for the record on the store.
pub(crate) enum Ended<'a> {
    /// With a tool result (an `isError` one too): its JSON.
    Completed(&'a [u8]),
    /// Cancelled before it ended.
    Cancelled,
    /// Failed, for the reason given.
    Failed(String),
}

impl Shared {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        runner: Arc<str>,
        lease: Duration,
        manager: TaskManager,
    ) -> Arc<Self> {
        Arc::new(Self {
            store,
            runner,
            lease,
            manager,
            heartbeat: OnceLock::new(),
        })
    }

    /// The record of a task this replica created now.
    pub(crate) fn record(
        &self,
        task: &Task,
        owner: Option<String>,
        revision_2025: bool,
    ) -> SharedTask {
        SharedTask::new(
            DetailedTask::new(task.clone(), TaskPayload::Working),
            owner,
            revision_2025,
            self.runner.as_ref(),
            now_us(),
        )
    }

    /// Puts a task this replica just created on the store, and starts the heartbeat if it
    /// does not run yet.
    pub(crate) async fn create(
        self: &Arc<Self>,
        record: &SharedTask,
        ttl: Duration,
    ) -> Result<(), ErrorData> {
        self.start_heartbeat();
        self.bounded("keep the new task", self.store.create(record, ttl))
            .await
    }

    /// Writes, in the background, that a task of this replica's ended as `ended` (a result
    /// past the result budget comes as [`Ended::Failed`], saying so: it is never stored).
    pub(crate) fn finish_later(
        self: &Arc<Self>,
        mut record: SharedTask,
        ended: Ended<'_>,
        ttl: Duration,
    ) {
        let payload = match ended {
            Ended::Completed(json) => match serde_json::from_slice::<JsonObject>(json) {
                Ok(result) => TaskPayload::Completed { result },
                Err(error) => failed(format!("the task's result could not be read: {error}")),
            },
            Ended::Cancelled => TaskPayload::Cancelled,
            Ended::Failed(message) => failed(message),
        };
        set_payload(&mut record, payload);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = Arc::clone(self);
        handle.spawn(async move {
            if let Err(error) = shared.bounded("record the task's end", shared.store.finish(&record, ttl)).await {
                tracing::warn!(task = record.id(), error = %error.message, "a task's end was not recorded on the task store: other replicas will report it failed once this replica's lease lapses");
            }
        });
    }

    /// The task `task_id` as the store holds it, when it is `owner`'s; a working task whose
    /// runner's lease lapsed is finished as failed first.
    pub(crate) async fn find(
        &self,
        task_id: &str,
        owner: Option<&str>,
    ) -> Result<Option<SharedTask>, ErrorData> {
        let Some(mut record) = self
            .bounded("read the task", self.store.get(task_id))
            .await?
        else {
            return Ok(None);
        };
        if record.owner.as_deref() != owner {
            return Ok(None);
        }
        // A task younger than a lease may be its runner's first since it started, or since the
        // store came back empty: the lease is not there yet.
        let young = now_us().saturating_sub(record.created_us)
            < u64::try_from(self.lease.as_micros()).unwrap_or(u64::MAX);
        if record.is_terminal() || *record.runner == *self.runner || young {
            return Ok(Some(record));
        }
        if self
            .bounded(
                "check the task's replica",
                self.store.runner_alive(&record.runner),
            )
            .await?
        {
            return Ok(Some(record));
        }
        let message = format!(
            "the replica running this task ({}) stopped before its call ended (its lease on \
             the task store lapsed); the call's outcome is unknown: call the tool again",
            record.runner
        );
        set_payload(&mut record, failed(message));
        let ttl = Duration::from_millis(record.task.task.ttl_ms.unwrap_or(u64::MAX / 2));
        if self
            .bounded("record the task's end", self.store.finish(&record, ttl))
            .await?
        {
            return Ok(Some(record));
        }
        // Another replica, or the runner itself, ended it first: that ending stands.
        self.bounded("read the task", self.store.get(task_id)).await
    }

    /// Asks the replica running `record` to cancel it.
    pub(crate) async fn cancel(&self, record: &SharedTask) -> Result<(), ErrorData> {
        self.bounded(
            "pass on the cancellation",
            self.store.cancel(&record.runner, record.id()),
        )
        .await
    }

    /// One page of `owner`'s tasks, oldest first, after `after`.
    pub(crate) async fn page(
        &self,
        owner: &str,
        after: Option<u64>,
        limit: usize,
    ) -> Result<(Vec<SharedTask>, Option<u64>), ErrorData> {
        self.bounded("list the tasks", self.store.list(owner, after, limit))
            .await
    }

    /// `call`, bounded by [`STORE_WAIT`], its failure made the error a request answers with.
    async fn bounded<T>(&self, what: &str, call: StoreFuture<'_, T>) -> Result<T, ErrorData> {
        let error = match tokio::time::timeout(STORE_WAIT, call).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no answer within {} ms", STORE_WAIT.as_millis()),
        };
        let store = self.store.name();
        tracing::warn!(store, error, "the task store could not {what}");
        Err(ErrorData::internal_error(
            format!(
                "the task store ({store}) could not {what}: {error}. Tasks are kept there so \
                 that every replica of this server can answer for them; calls without a task \
                 do not need it. Retry once it is back."
            ),
            Some(serde_json::json!({"taskStore": store})),
        ))
    }

    /// Starts renewing this replica's lease, once.
    fn start_heartbeat(self: &Arc<Self>) {
        if self.heartbeat.set(()).is_err() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        handle.spawn(heartbeat(Arc::downgrade(self)));
    }
}

/// Renews the replica's lease ten times a lease and cancels the tasks other replicas asked
/// it to, for as long as its server lives.
async fn heartbeat(shared: Weak<Shared>) {
    let mut failing = false;
    loop {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let renewed =
            tokio::time::timeout(STORE_WAIT, shared.store.renew(&shared.runner, shared.lease))
                .await;
        match renewed {
            Ok(Ok(cancels)) => {
                if failing {
                    tracing::info!(store = shared.store.name(), "the task store answers again");
                    failing = false;
                }
                for task_id in cancels {
                    // A task this replica no longer holds has ended: nothing to cancel.
                    let _ = shared.manager.cancel_task(&task_id);
                }
            }
            Ok(Err(error)) if !failing => {
                tracing::warn!(store = shared.store.name(), %error, "this replica's lease on the task store could not be renewed");
                failing = true;
            }
            Err(_) if !failing => {
                tracing::warn!(
                    store = shared.store.name(),
                    "this replica's lease on the task store could not be renewed: no answer"
                );
                failing = true;
            }
            _ => {}
        }
        let pause = renew_every(shared.lease);
        drop(shared);
        tokio::time::sleep(pause).await;
    }
}

fn set_payload(record: &mut SharedTask, payload: TaskPayload) {
    let mut task = record.task.task.clone();
    task.last_updated_at = rmcp::task_manager::current_timestamp();
    if let TaskPayload::Failed { error } = &payload {
        task.status_message = error
            .get("message")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
    }
    record.task = DetailedTask::new(task, payload);
}

fn failed(message: String) -> TaskPayload {
    TaskPayload::Failed {
        error: crate::task_store::error_object(&ErrorData::internal_error(message, None)),
    }
}

/// Microseconds since the Unix epoch.
fn now_us() -> u64 {
    u64::try_from(crate::task_store::since_epoch().as_micros()).unwrap_or(u64::MAX)
}
