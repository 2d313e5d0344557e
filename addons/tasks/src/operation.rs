//! Tasks that wait on a long-running operation.
//!
//! A tool that waits for the `google.longrunning.Operation` its RPC answers with (see
//! [`McpServer::run_until_detached`](tonic_mcp::McpServer::run_until_detached)) leaves the state of its work with the backend: the
//! operation, which `GetOperation` reads and `CancelOperation` cancels, by its name. So when
//! the server has a task key ([`Tasks::key`]), a task of such a tool is neither run nor held
//! nor stored anywhere. Its call makes the RPC in the request (the backend answers with the
//! operation at once), and the task's id carries what answering for it takes: the tool, the
//! operation's name, the caller who owns the task, its creation time and its time-to-live,
//! signed with HMAC-SHA256 under the key. Any replica with the same key and the same tools
//! answers for the task by asking the backend, through the transports the waiting call uses
//! (the tool's own, else the served GetOperation tool's when the own one answers
//! `UNIMPLEMENTED`):
//!
//! - `tasks/get`: one `GetOperation`. Still running, the task is `working`, its status message
//!   naming the operation and its latest metadata (as the waiting call's progress does); done,
//!   `completed` with the result the waiting call ends with (the same function makes it: the
//!   unpacked response, or the operation's error as an `isError` result), or `cancelled` when
//!   that error is `CANCELLED`. A `GetOperation` that fails is a JSON-RPC internal error naming
//!   the gRPC status: the task may well be running still.
//! - `tasks/result` (revision 2025-11-25): `GetOperation` with the waiting call's backoff
//!   ([`FIRST_POLL`] up to [`LONGEST_POLL`]) until the operation is done, for as long as the
//!   request and the task live.
//! - `tasks/cancel`: `CancelOperation`, then the task as the backend has it then (`cancelled`
//!   once the backend ended the operation so, within a short wait).
//!
//! Such a task therefore survives the death of any replica, that which started it included,
//! with or without a task store. Its id is `op1.`, the URL-safe base64 (unpadded) of a compact
//! JSON payload, `.`, and the URL-safe base64 of the HMAC of everything before that dot: an id
//! whose signature does not verify (changed, or made under another key), of another caller, or
//! whose time-to-live has passed is unknown, exactly as an id that never existed. The payload
//! is signed, not encrypted: the caller may read the operation's name in it, as the waiting
//! tool's own answers tell it anyway.
//!
//! What nothing holds cannot be listed: `tasks/list` does not list these tasks, and they do not
//! count against the [`TaskLimits`](crate::TaskLimits) (each is one operation on the backend,
//! as the same call without a task is). A call whose first answer is already done, or that
//! fails, is answered as the call without a task would be (in the 2025-11-25 shape, with a task
//! complete from the start, held as any other); under
//! [`TaskMode::Auto`](tonic_mcp::TaskMode::Auto) the call first waits inline, polling, for the
//! inline wait, as every call does there.
//!
//! [`Tasks::key`]: crate::Tasks::key

use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac as _};
use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolResponse, CallToolResult, CreateTaskResult, DetailedTask, JsonObject, Task,
        TaskPayload, TaskStatus,
    },
    service::RequestContext,
};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tonic_mcp::{Detached, FIRST_POLL, LONGEST_POLL, OperationLook, ReadyCall, WaitingTool};

use crate::tasks::{self, Host, Route};

/// What every id of such a task starts with (the format's version).
const PREFIX: &str = "op1.";

/// The ids' base64: URL-safe, unpadded.
const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What a task's id carries, signed.
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    /// The tool, by its served name.
    #[serde(rename = "t")]
    tool: String,
    /// The operation's name.
    #[serde(rename = "o")]
    operation: String,
    /// Who owns the task ([`tasks::caller`]); none over stdio and anonymous stateless HTTP.
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    /// When the task was created: milliseconds since the Unix epoch.
    #[serde(rename = "c")]
    created_ms: u64,
    /// Its time-to-live in milliseconds, from its creation.
    #[serde(rename = "l")]
    ttl_ms: u64,
}

/// Whether `task_id` is (in form) the id of a task that waits on an operation: answered here,
/// never by the task store or rmcp's manager, whose ids are UUIDs.
pub(crate) fn is_operation_task(task_id: &str) -> bool {
    task_id.starts_with(PREFIX)
}

/// The key a task-augmented `call` signs its task's id with: the server's, when it has one
/// and the tool waits on an operation; `None` when the call makes a task of the usual kind.
pub(crate) fn key_for<'s>(host: &'s Host, call: &ReadyCall) -> Option<&'s [u8]> {
    host.tasks
        .key
        .as_deref()
        .filter(|_| call.waits_on_operation())
}

/// How long a call routed `route` (the extension's shape) runs before it becomes a task:
/// `Duration::ZERO` for a task at once, the inline wait under [`TaskMode::Auto`]; `None` for
/// a call that does not become a task.
///
/// [`TaskMode::Auto`]: tonic_mcp::TaskMode::Auto
pub(crate) fn waits_before_task(route: Route) -> Option<Duration> {
    match route {
        Route::Task => Some(Duration::ZERO),
        Route::Wait(wait) => Some(wait),
        Route::Inline | Route::Refused => None,
    }
}

/// How a task-augmented call of a waiting tool was answered ([`begin`]).
pub(crate) enum Begun {
    /// As the call without a task: it ended (done at once, failed, or cancelled).
    Answered(CallToolResult),
    /// With a task whose signed id answers for the running operation.
    Task(Task),
}

impl Begun {
    /// The answer in the extension's shape: the result, or the task.
    pub(crate) fn into_response(self) -> CallToolResponse {
        match self {
            Self::Answered(answer) => CallToolResponse::Complete(answer),
            Self::Task(task) => CallToolResponse::Task(CreateTaskResult::new(task)),
        }
    }
}

/// A task-augmented `call` of a tool that waits on an operation, signed with `key`: the call
/// runs in the request up to the RPC's first answer and the waiting that `after` allows
/// (`Duration::ZERO`: none), and is answered with its result when it ended by then, else with
/// a task for the operation, which goes on. A cancel of the request cancels the call, and the
/// operation, as for any call.
pub(crate) async fn begin(
    host: &Host,
    key: &[u8],
    call: ReadyCall,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
    after: Duration,
) -> Begun {
    let tool = call.name().to_owned();
    let (operation, message) = match host.server.run_until_detached(call, context, after).await {
        Detached::Answered(answer) => return Begun::Answered(answer),
        Detached::Running {
            operation,
            status_message,
        } => (operation, status_message),
    };
    let claims = Claims {
        tool,
        operation,
        owner: tasks::caller(context),
        created_ms: now_ms(),
        ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
    };
    let task_id = sign(key, &claims);
    tracing::debug!(
        tool = %claims.tool,
        operation = %claims.operation,
        "a task answers for the running operation"
    );
    let mut task = task(&claims, task_id);
    task.status_message = Some(message);
    Begun::Task(task)
}

/// A task that waits on an operation, its id verified for the caller that asks.
pub(crate) struct OperationTask {
    task_id: String,
    claims: Claims,
    tool: WaitingTool,
}

impl OperationTask {
    /// The task `task_id` of `context`'s caller: its id verified under the server's key, its
    /// owner the caller, its time-to-live not passed; else the error for an unknown task, as
    /// for an id that never existed. A tool this server does not serve (replicas must serve the
    /// same tools) is an internal error naming it.
    pub(crate) fn open(
        host: &Host,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Self, ErrorData> {
        let claims = host
            .tasks
            .key
            .as_deref()
            .and_then(|key| verify(key, task_id))
            .filter(|claims| claims.owner == tasks::caller(context))
            .filter(|claims| now_ms() < claims.created_ms.saturating_add(claims.ttl_ms))
            .ok_or_else(|| tasks::unknown(task_id))?;
        let tool = host.server.waiting_tool(&claims.tool).ok_or_else(|| {
            ErrorData::internal_error(
                format!(
                    "task {task_id} waits on an operation of the tool `{}`, which this \
                         server does not serve as a waiting tool: every replica sharing the \
                         task key must serve the same tools",
                    claims.tool
                ),
                None,
            )
        })?;
        Ok(Self {
            task_id: task_id.to_owned(),
            claims,
            tool,
        })
    }

    /// The task as the backend has it now: one `GetOperation`.
    pub(crate) async fn detailed(
        &self,
        host: &Host,
        context: &RequestContext<RoleServer>,
    ) -> Result<DetailedTask, ErrorData> {
        let mut reader = self.tool.reader(&host.server, context)?;
        self.read(reader.look(&self.claims.operation).await)
    }

    /// The task once it ended: `GetOperation` with the waiting call's backoff until the
    /// operation is done. Bounded by the request (a cancelled request is an internal error, as
    /// for the other tasks) and by the task's time-to-live (then it is unknown).
    pub(crate) async fn ended(
        &self,
        host: &Host,
        context: &RequestContext<RoleServer>,
    ) -> Result<DetailedTask, ErrorData> {
        let mut reader = self.tool.reader(&host.server, context)?;
        let mut delay = FIRST_POLL;
        loop {
            let task = self.read(reader.look(&self.claims.operation).await)?;
            if task.status().is_terminal() {
                return Ok(task);
            }
            let left = self
                .expires_in()
                .ok_or_else(|| tasks::unknown(&self.task_id))?;
            tokio::select! {
                () = tokio::time::sleep(delay.min(left)) => {}
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("the request was cancelled", None));
                }
            }
            delay = (delay * 3 / 2).min(LONGEST_POLL);
        }
    }

    /// Cancels the operation (`CancelOperation`; its failure is logged, as a waiting call's
    /// is) and answers the task as the backend has it then: cancelled once the backend ended
    /// the operation so within [`CANCEL_WAIT`](tasks::CANCEL_WAIT), else as it is at that point.
    pub(crate) async fn cancel(
        &self,
        host: &Host,
        context: &RequestContext<RoleServer>,
    ) -> Result<DetailedTask, ErrorData> {
        let mut reader = self.tool.reader(&host.server, context)?;
        reader.cancel(&self.claims.operation).await;
        let deadline = std::time::Instant::now() + tasks::CANCEL_WAIT;
        loop {
            let task = self.read(reader.look(&self.claims.operation).await)?;
            if task.status().is_terminal() || std::time::Instant::now() >= deadline {
                return Ok(task);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The task as `look` shows it.
    fn read(&self, look: OperationLook) -> Result<DetailedTask, ErrorData> {
        let mut task = task(&self.claims, self.task_id.clone());
        let payload = match look {
            OperationLook::Running(message) => {
                task.status_message = Some(message);
                TaskPayload::Working
            }
            // The backend ended the operation as cancelled (`CancelOperation` does so).
            OperationLook::Cancelled => {
                task.status_message =
                    Some(format!("operation {} cancelled", self.claims.operation));
                TaskPayload::Cancelled
            }
            OperationLook::Done(result) => TaskPayload::Completed {
                result: result_object(&result)?,
            },
            OperationLook::Unanswered(error) => return Err(error),
        };
        Ok(DetailedTask::new(task, payload))
    }

    /// How long the task has left to live; `None` once its time-to-live passed.
    fn expires_in(&self) -> Option<Duration> {
        let left = self
            .claims
            .created_ms
            .saturating_add(self.claims.ttl_ms)
            .checked_sub(now_ms())
            .filter(|left| *left > 0)?;
        Some(Duration::from_millis(left))
    }
}

/// The task the claims describe, `working` as made (a payload sets its status).
fn task(claims: &Claims, task_id: String) -> Task {
    let mut task = Task::new(
        task_id,
        TaskStatus::Working,
        timestamp(claims.created_ms),
        rmcp::task_manager::current_timestamp(),
    );
    task.ttl_ms = Some(claims.ttl_ms);
    task.poll_interval_ms = Some(tasks::POLL_INTERVAL_MS);
    task
}

/// A tool result as a task's `result` object.
fn result_object(result: &CallToolResult) -> Result<JsonObject, ErrorData> {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err(ErrorData::internal_error(
            "a tool result is not a JSON object",
            None,
        )),
        Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
    }
}

/// The signed id carrying `claims`.
fn sign(key: &[u8], claims: &Claims) -> String {
    // Strings and integers: serializing cannot fail.
    let payload = serde_json::to_vec(claims).unwrap_or_default();
    let mut id = format!("{PREFIX}{}", BASE64.encode(payload));
    let tag = mac(key, id.as_bytes()).finalize().into_bytes();
    id.push('.');
    id.push_str(&BASE64.encode(tag));
    id
}

/// The claims of `task_id` when it is such an id and its signature verifies under `key`
/// (compared in constant time).
fn verify(key: &[u8], task_id: &str) -> Option<Claims> {
    let rest = task_id.strip_prefix(PREFIX)?;
    let (payload, tag) = rest.split_once('.')?;
    let tag = BASE64.decode(tag).ok()?;
    let signed = &task_id[..PREFIX.len() + payload.len()];
    mac(key, signed.as_bytes()).verify_slice(&tag).ok()?;
    serde_json::from_slice(&BASE64.decode(payload).ok()?).ok()
}

/// HMAC-SHA256 under `key` over `signed`.
fn mac(key: &[u8], signed: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length (a long one is hashed first): this cannot fail.
    let mut mac = <Hmac<Sha256> as hmac::digest::KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(signed);
    mac
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    u64::try_from(crate::task_store::since_epoch().as_millis()).unwrap_or(u64::MAX)
}

/// `ms` since the Unix epoch as an RFC 3339 timestamp (UTC).
fn timestamp(ms: u64) -> String {
    prost_types::Timestamp {
        seconds: i64::try_from(ms / 1000).unwrap_or(i64::MAX),
        // Below 1,000,000,000: it fits.
        nanos: i32::try_from((ms % 1000) * 1_000_000).unwrap_or(0),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            tool: "Jobs_Run".to_owned(),
            operation: "operations/1".to_owned(),
            owner: Some("caller:alice".to_owned()),
            created_ms: 1_700_000_000_123,
            ttl_ms: 60_000,
        }
    }

    #[test]
    fn an_id_verifies_under_its_key_alone() {
        let id = sign(b"key one", &claims());
        assert!(id.starts_with(PREFIX), "{id}");
        assert_eq!(id.matches('.').count(), 2, "{id}");
        let read = verify(b"key one", &id).expect("verifies");
        assert_eq!(read.tool, "Jobs_Run");
        assert_eq!(read.operation, "operations/1");
        assert_eq!(read.owner.as_deref(), Some("caller:alice"));
        assert_eq!((read.created_ms, read.ttl_ms), (1_700_000_000_123, 60_000));
        assert!(verify(b"key two", &id).is_none());
        assert!(verify(b"key one", &id.replace(PREFIX, "op2.")).is_none());
        assert!(verify(b"key one", &id[..id.len() - 1]).is_none());
        assert!(verify(b"key one", "op1.").is_none());
        assert!(verify(b"key one", "not an id").is_none());
    }

    #[test]
    fn a_changed_payload_does_not_verify() {
        let id = sign(b"key", &claims());
        let payload_at = PREFIX.len() + 3;
        for replacement in ['A', 'B', '_'] {
            let mut changed = id.clone();
            if changed.as_bytes()[payload_at] == replacement as u8 {
                continue;
            }
            changed.replace_range(payload_at..=payload_at, &replacement.to_string());
            assert!(verify(b"key", &changed).is_none(), "{changed}");
        }
    }

    #[test]
    fn timestamps_are_rfc_3339() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }
}
