//! Tasks in the shape of MCP revision 2025-11-25 (SEP-1686), served beside the final tasks
//! extension that rmcp implements.
//!
//! Clients of revision 2025-11-25 ask for a task with a `task` parameter on `tools/call`,
//! and use `tasks/get` (the task alone), `tasks/result` (waits, then answers what the call
//! would have), `tasks/list`, and `tasks/cancel` (the task, cancelled). None of this is in
//! rmcp's typed model; the server recognises these requests
//! ([`Request2025`](tonic_mcp::Request2025)) and hands them to the router, and [`answer`]
//! answers each in the 2025-11-25 shape, through the same call path, task store and caller
//! check as the final extension's requests.
//!
//! A task belongs to the shape it was started in: `tasks/get` of a task started by a final
//! extension client keeps the final shape, whatever asks. A task that waits on a long-running
//! operation under a task key ([`operation`]) is held nowhere: it is answered in the shape of
//! the request that asks for it, from the backend.

use std::time::Duration;

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, DetailedTask, ErrorCode, JsonObject, Task,
        TaskPayload,
    },
    service::RequestContext,
};
use serde_json::{Map, Value, json};
use tonic_mcp::{Prepared, Request2025};

use crate::{
    operation,
    tasks::{self, Held, Host},
};

/// The `_meta` key that ties a `tasks/result` answer to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Answers `request`, with its `params`, in revision 2025-11-25's shape.
pub(crate) async fn answer(
    host: &Host,
    request: Request2025,
    params: Option<Value>,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let task_id = || {
        params
            .as_ref()
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ErrorData::invalid_params("`taskId` is missing", None))
    };
    match request {
        Request2025::TasksResult => result(host, &task_id()?, context).await,
        Request2025::TasksList => list(host, params.as_ref(), context).await,
        Request2025::ToolsCall => call(host, params, context).await,
        Request2025::TasksGet => get(host, &task_id()?, context).await,
        Request2025::TasksCancel => cancel(host, &task_id()?, context).await,
        // A request of the shape this crate does not know yet.
        other => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("{other:?}"),
            None,
        )),
    }
}

/// `tools/call` with `task`: the call checked as any other (refused arguments, tool search,
/// confirmation), then started as a task. A call answered without running becomes a task
/// that is already complete with that answer.
async fn call(
    host: &Host,
    params: Option<Value>,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let server = &host.server;
    let params = params.unwrap_or_else(|| Value::Object(Map::new()));
    let requested = params
        .get("task")
        .and_then(|task| task.get("ttl"))
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    let request: CallToolRequestParams = serde_json::from_value(params)
        .map_err(|error| ErrorData::invalid_params(format!("tools/call: {error}"), None))?;
    let ttl = requested.map_or(host.tasks.ttl, |ttl| ttl.min(host.tasks.ttl));
    // A tool named directly that cannot run as a task is refused before it is confirmed.
    if let Some(support) = server.task_support(request.name.as_ref())
        && !support.allows_tasks()
    {
        return Err(forbidden(request.name.as_ref()));
    }
    let task = match server.prepare(request, context).await? {
        Prepared::Answered(CallToolResponse::Complete(answer)) => {
            tasks::finished(host, answer, context, ttl).await?
        }
        Prepared::Answered(other) => {
            return Err(ErrorData::internal_error(
                format!("a task-augmented call cannot answer with {other:?}"),
                None,
            ));
        }
        Prepared::Ready(call) => {
            if !call.task_support().allows_tasks() {
                return Err(forbidden(call.name()));
            }
            if let Some(key) = operation::key_for(host, &call) {
                // A task the backend's operation answers for; a call that ended at once is a
                // task complete from the start.
                match operation::begin(host, key, call, context, ttl, Duration::ZERO).await {
                    operation::Begun::Task(task) => task,
                    operation::Begun::Answered(answer) => {
                        tasks::finished(host, answer, context, ttl).await?
                    }
                }
            } else {
                tasks::start(host, call, context, ttl, tasks::Shape::Sep1686)
                    .await?
                    .task
            }
        }
    };
    Ok(json!({"task": task_object(&task)}))
}

fn forbidden(tool: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "tool `{tool}` does not run as a task (its execution.taskSupport is forbidden): \
             call it without `task`"
        ),
        None,
    )
}

/// The task, found for this caller among those started in this shape (on this replica, or on
/// the task store); with its result when `fetch`; and where it is held.
async fn detailed(
    host: &Host,
    task_id: &str,
    context: &RequestContext<RoleServer>,
    fetch: bool,
) -> Result<(DetailedTask, Held), ErrorData> {
    let tasks = &host.tasks;
    let held = tasks.locate(task_id, context).await?;
    if !tasks.started_in_2025_shape(task_id, &held) {
        return Err(tasks::unknown(task_id));
    }
    let task = match held {
        Held::Here => tasks.detailed(task_id, context, fetch).await?,
        Held::Elsewhere(ref record) => record.task.clone(),
    };
    Ok((task, held))
}

/// `tasks/get`: the task alone, without its result.
async fn get(
    host: &Host,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    if operation::is_operation_task(task_id) {
        let task = operation::OperationTask::open(host, task_id, context)?
            .detailed(host, context)
            .await?;
        return Ok(task_object(&task.task));
    }
    let (task, _) = detailed(host, task_id, context, false).await?;
    Ok(task_object(&task.task))
}

/// `tasks/result`: waits until the task ends, then answers what the call would have: the
/// tool result (with `_meta` naming the task), or the error the call failed with.
async fn result(
    host: &Host,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    if operation::is_operation_task(task_id) {
        let task = operation::OperationTask::open(host, task_id, context)?
            .ended(host, context)
            .await?;
        return ended_answer(task_id, task.payload).unwrap_or_else(|| {
            Err(ErrorData::internal_error(
                format!("task {task_id} has not ended"),
                None,
            ))
        });
    }
    let mut pause = Duration::from_millis(5);
    loop {
        let (task, _) = detailed(host, task_id, context, true).await?;
        if let Some(answer) = ended_answer(task_id, task.payload) {
            return answer;
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        }
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

/// What `tasks/result` answers for the task `task_id` that ended with `payload`: the tool
/// result (with `_meta` naming the task), or the error the call failed with; `None` while it
/// has not ended.
fn ended_answer(task_id: &str, payload: TaskPayload) -> Option<Result<Value, ErrorData>> {
    match payload {
        TaskPayload::Completed { mut result } => {
            // The discriminator of revision 2026-07-28, which the store keeps.
            result.remove("resultType");
            let meta = result
                .entry("_meta")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if let Value::Object(meta) = meta {
                meta.insert(RELATED_TASK.to_owned(), json!({"taskId": task_id}));
            }
            Some(Ok(Value::Object(result)))
        }
        TaskPayload::Failed { error } => Some(Err(serde_json::from_value(Value::Object(error))
            .unwrap_or_else(|_| {
                ErrorData::internal_error(format!("task {task_id} failed"), None)
            }))),
        TaskPayload::Cancelled => Some(Err(ErrorData::invalid_params(
            format!("task {task_id} was cancelled: it has no result"),
            None,
        ))),
        _ => None,
    }
}

/// `tasks/list`: this caller's tasks started in this shape (over stdio, all of them; over
/// HTTP without a session or a token, none, since nothing tells callers apart there), oldest
/// first, in pages of [`LIST_PAGE`](tasks::LIST_PAGE) linked by `nextCursor`. A cursor that
/// is not one of ours is invalid params.
async fn list(
    host: &Host,
    params: Option<&Value>,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let cursor = match params.and_then(|params| params.get("cursor")) {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor.as_str()),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "tasks/list: `cursor` must be a string, the nextCursor of an earlier answer",
                None,
            ));
        }
    };
    let (tasks, next) = host.tasks.page_2025(context, cursor).await?;
    let listed: Vec<Value> = tasks.iter().map(|task| task_object(&task.task)).collect();
    let mut page = json!({"tasks": listed});
    if let Some(next) = next {
        page["nextCursor"] = Value::from(next);
    }
    Ok(page)
}

/// `tasks/cancel`: cancels the call and answers the task once it stopped (or after
/// [`CANCEL_WAIT`], as it is then). A task that already ended cannot be cancelled.
async fn cancel(
    host: &Host,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    if operation::is_operation_task(task_id) {
        let task = operation::OperationTask::open(host, task_id, context)?;
        ended_already(task_id, &task.detailed(host, context).await?)?;
        return Ok(task_object(&task.cancel(host, context).await?.task));
    }
    let (task, held) = detailed(host, task_id, context, false).await?;
    ended_already(task_id, &task)?;
    let tasks = &host.tasks;
    tasks.cancel(task_id, &held).await?;
    let deadline = tokio::time::Instant::now() + tasks::CANCEL_WAIT;
    // On another replica the cancellation waits for its next heartbeat: the store is read
    // less often than this replica's own record.
    let pause = match held {
        Held::Here => Duration::from_millis(10),
        Held::Elsewhere(_) => Duration::from_millis(100),
    };
    loop {
        let task = tasks.detailed(task_id, context, false).await?;
        if task.status().is_terminal() || tokio::time::Instant::now() >= deadline {
            return Ok(task_object(&task.task));
        }
        tokio::time::sleep(pause).await;
    }
}

/// The refusal to cancel `task`, which ended already.
fn ended_already(task_id: &str, task: &DetailedTask) -> Result<(), ErrorData> {
    if task.status().is_terminal() {
        return Err(ErrorData::invalid_params(
            format!(
                "Cannot cancel task {task_id}: it is already {}",
                status_name(&task.task)
            ),
            None,
        ));
    }
    Ok(())
}

/// A task as revision 2025-11-25 writes it: `ttl` and `pollInterval` in milliseconds.
fn task_object(task: &Task) -> Value {
    let mut object = json!({
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(message) = &task.status_message {
        object["statusMessage"] = Value::from(message.as_str());
    }
    if let Some(interval) = task.poll_interval_ms {
        object["pollInterval"] = Value::from(interval);
    }
    object
}

fn status_name(task: &Task) -> String {
    serde_json::to_value(task.status)
        .ok()
        .and_then(|status| status.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_reads_as_revision_2025_11_25_writes_it() {
        let mut task = Task::new(
            "t1",
            rmcp::model::TaskStatus::InputRequired,
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:01Z",
        );
        task.ttl_ms = Some(60_000);
        task.poll_interval_ms = Some(500);
        task.status_message = Some("the RPC is running".to_owned());
        assert_eq!(
            task_object(&task),
            json!({
                "taskId": "t1",
                "status": "input_required",
                "statusMessage": "the RPC is running",
                "createdAt": "2026-01-01T00:00:00Z",
                "lastUpdatedAt": "2026-01-01T00:00:01Z",
                "ttl": 60_000,
                "pollInterval": 500,
            })
        );
        task.ttl_ms = None;
        task.poll_interval_ms = None;
        task.status_message = None;
        assert_eq!(task_object(&task)["ttl"], Value::Null);
        assert!(task_object(&task).get("pollInterval").is_none());
        assert_eq!(status_name(&task), "input_required");
    }
}
