//! Tasks in the shape of MCP revision 2025-11-25 (SEP-1686), served beside the final tasks
//! extension that rmcp implements.
//!
//! Clients of revision 2025-11-25 ask for a task with a `task` parameter on `tools/call`,
//! read tool support from `execution.taskSupport` in `tools/list`, and use five methods:
//! `tasks/get` (the task alone), `tasks/result` (waits, then answers what the call would
//! have), `tasks/list`, and `tasks/cancel` (the task, cancelled). The server declares
//! `capabilities.tasks`. None of this is in rmcp's typed model, which follows the final
//! extension (SEP-2663: task support in `_meta`, the result inside `tasks/get`, no
//! `tasks/result` or `tasks/list`). So both transports route these requests here:
//!
//! - [`route`] gives the requests rmcp would read in the final shape an internal method name
//!   (a `tools/call` with `task`; `tasks/get` and `tasks/cancel` of a task started so, or,
//!   before revision 2026-07-28, of a task this server does not hold, which is unknown; and,
//!   for a client of revision 2025-11-25 while some tool runs as a task, `tools/list`), and
//!   the transport marks them routed in the request's [`Facts`], so that a client cannot name the internal methods
//!   itself; `tasks/result` and `tasks/list` reach rmcp's custom-request handler as they are;
//! - [`answer`] answers each in the 2025-11-25 shape, through the same call path, task store
//!   and caller check as the final extension's requests;
//! - [`declare`] adds `capabilities.tasks` to an `initialize` result of revision 2025-11-25.
//!
//! A task belongs to the shape it was started in: `tasks/get` of a task started by a final
//! extension client keeps the final shape, whatever asks. A task that waits on a long-running
//! operation under a task key ([`operation`]) is held nowhere: it is answered in the shape of
//! the request that asks for it, from the backend.

use std::{sync::LazyLock, time::Duration};

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CustomResult, DetailedTask, ErrorCode, JsonObject,
        PaginatedRequestParams, ProtocolVersion, Task, TaskPayload,
    },
    service::RequestContext,
};
use serde_json::{Map, Value, json};

use super::operation;
use crate::{
    call::facts::Facts,
    server::{McpServer, Prepared},
};

/// The protocol revision whose task shape this module serves.
const REVISION: &str = "2025-11-25";
/// `tools/call` with a `task` parameter, routed.
const TOOLS_CALL: &str = "protoc-gen-rust-mcp/2025-11-25/tools/call";
/// `tasks/get` of a task started in this shape, routed.
const TASKS_GET: &str = "protoc-gen-rust-mcp/2025-11-25/tasks/get";
/// `tasks/cancel` of a task started in this shape, routed.
const TASKS_CANCEL: &str = "protoc-gen-rust-mcp/2025-11-25/tasks/cancel";
/// `tools/list` of a client of this revision, routed to add `execution.taskSupport`.
const TOOLS_LIST: &str = "protoc-gen-rust-mcp/2025-11-25/tools/list";
/// Methods rmcp does not know, which reach the custom-request handler unrouted.
const TASKS_RESULT: &str = "tasks/result";
const TASKS_LIST: &str = "tasks/list";
/// The `_meta` key that ties a `tasks/result` answer to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// What the task shapes need of a request's protocol revision: the transports learn it from
/// `initialize` (stdio) or from `MCP-Protocol-Version` (streamable HTTP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Revision {
    /// Revision 2025-11-25, whose task shape this module serves.
    of_2025: bool,
    /// Revision 2026-07-28 or later, whose rules for the final extension rmcp applies.
    final_extension: bool,
}

impl Revision {
    /// The revision named `version`.
    pub(crate) fn of(version: &[u8]) -> Self {
        Self {
            of_2025: version == REVISION.as_bytes(),
            final_extension: version >= ProtocolVersion::V_2026_07_28.as_str().as_bytes(),
        }
    }

    /// Whether it is revision 2025-11-25.
    pub(crate) fn is_2025(self) -> bool {
        self.of_2025
    }
}

/// The message `bytes` under its internal method name, when it is one of the requests this
/// module answers and rmcp would read in the final shape; `None` otherwise (most messages:
/// a byte scan decides before anything is parsed). Revision 2026-07-28 and later declare the
/// final extension with each request, and rmcp checks that before the task is looked up.
pub(crate) fn route(bytes: &[u8], server: &McpServer, revision: Revision) -> Option<Vec<u8>> {
    // `"task` starts both a `task` key and a `tasks/…` method: one scan for the two.
    // Searches built once, not on every message.
    type Needle = LazyLock<memchr::memmem::Finder<'static>>;
    static LIST_METHOD: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\"tools/list\""));
    static TASK_WORD: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\"task"));
    let list = revision.of_2025 && LIST_METHOD.find(bytes).is_some();
    if !list && TASK_WORD.find(bytes).is_none() {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let params = message.get("params");
    let method = match message.get("method")?.as_str()? {
        "tools/call" if params?.get("task").is_some_and(Value::is_object) => TOOLS_CALL,
        // Before revision 2026-07-28 a task this server does not hold is answered here too,
        // as unknown: rmcp would first ask whether the client declared the final extension,
        // which no client of those revisions does, and a client whose task lived on another
        // replica, or expired, would be told its capabilities are missing.
        name @ ("tasks/get" | "tasks/cancel")
            if server.inner_tasks().answered_in_2025_shape(
                params?.get("taskId")?.as_str()?,
                revision.final_extension,
            ) =>
        {
            if name == "tasks/get" {
                TASKS_GET
            } else {
                TASKS_CANCEL
            }
        }
        "tools/list" if list && server.has_task_tools() => TOOLS_LIST,
        _ => return None,
    };
    message["method"] = Value::from(method);
    serde_json::to_vec(&message).ok()
}

/// Whether a transport routed this request ([`Facts::routed`]).
fn routed(context: &RequestContext<RoleServer>) -> bool {
    Facts::of(&context.extensions).is_some_and(|facts| facts.routed)
}

/// Answers a custom request: one of this module's, or rmcp's own "method not found".
pub(crate) async fn answer(
    server: &McpServer,
    method: &str,
    params: Option<Value>,
    context: &RequestContext<RoleServer>,
) -> Result<CustomResult, ErrorData> {
    let task_id = || {
        params
            .as_ref()
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ErrorData::invalid_params("`taskId` is missing", None))
    };
    let value = match method {
        TASKS_RESULT => result(server, &task_id()?, context).await?,
        TASKS_LIST => list(server, params.as_ref(), context).await?,
        TOOLS_CALL if routed(context) => call(server, params, context).await?,
        TASKS_GET if routed(context) => get(server, &task_id()?, context).await?,
        TASKS_CANCEL if routed(context) => cancel(server, &task_id()?, context).await?,
        TOOLS_LIST if routed(context) => tools_list(server, params)?,
        _ => {
            // rmcp's own answer to a method it does not know, word for word.
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                method.to_owned(),
                None,
            ));
        }
    };
    Ok(CustomResult::new(value))
}

/// Adds `capabilities.tasks` of revision 2025-11-25 to `message` when it answers an
/// `initialize` of that revision: listing and cancelling, and task-augmented `tools/call`
/// while some tool runs as a task. Returns whether it did.
pub(crate) fn declare(message: &mut Value, server: &McpServer) -> bool {
    let Some(Value::Object(result)) = message.get_mut("result") else {
        return false;
    };
    if result.get("protocolVersion").and_then(Value::as_str) != Some(REVISION) {
        return false;
    }
    let Some(Value::Object(capabilities)) = result.get_mut("capabilities") else {
        return false;
    };
    let mut tasks = json!({"list": {}, "cancel": {}});
    if server.has_task_tools() {
        tasks["requests"] = json!({"tools": {"call": {}}});
    }
    capabilities.insert("tasks".to_owned(), tasks);
    true
}

/// `tools/call` with `task`: the call checked as any other (refused arguments, tool search,
/// confirmation), then started as a task. A call answered without running becomes a task
/// that is already complete with that answer.
async fn call(
    server: &McpServer,
    params: Option<Value>,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let params = params.unwrap_or_else(|| Value::Object(Map::new()));
    let requested = params
        .get("task")
        .and_then(|task| task.get("ttl"))
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    let request: CallToolRequestParams = serde_json::from_value(params)
        .map_err(|error| ErrorData::invalid_params(format!("tools/call: {error}"), None))?;
    let ttl = requested.map_or(server.task_ttl(), |ttl| ttl.min(server.task_ttl()));
    // A tool named directly that cannot run as a task is refused before it is confirmed.
    if let Ok(registered) = server.registered(request.name.as_ref())
        && !registered.entry.tool.meta.task_support.allows_tasks()
    {
        return Err(forbidden(request.name.as_ref()));
    }
    let task = match server.prepare(request, context).await? {
        Prepared::Answered(CallToolResponse::Complete(answer)) => {
            super::finished(server, answer, context, ttl).await?
        }
        Prepared::Answered(other) => {
            return Err(ErrorData::internal_error(
                format!("a task-augmented call cannot answer with {other:?}"),
                None,
            ));
        }
        Prepared::Ready(registered, request) => {
            if !registered.entry.tool.meta.task_support.allows_tasks() {
                return Err(forbidden(&registered.entry.name));
            }
            if let Some(key) = operation::key_for(server, &registered) {
                // A task the backend's operation answers for; a call that ended at once is a
                // task complete from the start.
                match operation::begin(
                    server,
                    key,
                    &registered,
                    request,
                    context,
                    ttl,
                    Duration::ZERO,
                )
                .await
                {
                    operation::Begun::Task(task) => task,
                    operation::Begun::Answered(answer) => {
                        super::finished(server, answer, context, ttl).await?
                    }
                }
            } else {
                super::start(server, request, context, ttl, super::Shape::Sep1686)
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
    server: &McpServer,
    task_id: &str,
    context: &RequestContext<RoleServer>,
    fetch: bool,
) -> Result<(DetailedTask, super::Held), ErrorData> {
    let tasks = server.inner_tasks();
    let held = tasks.locate(task_id, context).await?;
    if !tasks.started_in_2025_shape(task_id, &held) {
        return Err(super::unknown(task_id));
    }
    let task = match held {
        super::Held::Here => tasks.detailed(task_id, context, fetch).await?,
        super::Held::Elsewhere(ref record) => record.task.clone(),
    };
    Ok((task, held))
}

/// `tasks/get`: the task alone, without its result.
async fn get(
    server: &McpServer,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    if operation::is_operation_task(task_id) {
        let task = operation::OperationTask::open(server, task_id, context)?
            .detailed(server, context)
            .await?;
        return Ok(task_object(&task.task));
    }
    let (task, _) = detailed(server, task_id, context, false).await?;
    Ok(task_object(&task.task))
}

/// `tasks/result`: waits until the task ends, then answers what the call would have: the
/// tool result (with `_meta` naming the task), or the error the call failed with.
async fn result(
    server: &McpServer,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    if operation::is_operation_task(task_id) {
        let task = operation::OperationTask::open(server, task_id, context)?
            .ended(server, context)
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
        let (task, _) = detailed(server, task_id, context, true).await?;
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
/// first, in pages of [`LIST_PAGE`](super::LIST_PAGE) linked by `nextCursor`. A cursor that
/// is not one of ours is invalid params.
async fn list(
    server: &McpServer,
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
    let (tasks, next) = server.inner_tasks().page_2025(context, cursor).await?;
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
    server: &McpServer,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    if operation::is_operation_task(task_id) {
        let task = operation::OperationTask::open(server, task_id, context)?;
        ended_already(task_id, &task.detailed(server, context).await?)?;
        return Ok(task_object(&task.cancel(server, context).await?.task));
    }
    let (task, held) = detailed(server, task_id, context, false).await?;
    ended_already(task_id, &task)?;
    let tasks = server.inner_tasks();
    tasks.cancel(task_id, &held).await?;
    let deadline = tokio::time::Instant::now() + super::CANCEL_WAIT;
    // On another replica the cancellation waits for its next heartbeat: the store is read
    // less often than this replica's own record.
    let pause = match held {
        super::Held::Here => Duration::from_millis(10),
        super::Held::Elsewhere(_) => Duration::from_millis(100),
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

/// A `tools/list` page with `execution.taskSupport` on the tools that run as tasks.
fn tools_list(server: &McpServer, params: Option<Value>) -> Result<Value, ErrorData> {
    let params: Option<PaginatedRequestParams> =
        params.and_then(|params| serde_json::from_value(params).ok());
    // One catalog for the page and its tools' task support.
    let catalog = server.catalog();
    let page = catalog
        .listing
        .page(params.as_ref().and_then(|p| p.cursor.as_deref()), false)?;
    let mut page = serde_json::to_value(page)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    if let Some(Value::Array(tools)) = page.get_mut("tools") {
        for tool in tools {
            let support = tool
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| catalog.tools.get(name))
                .map(|registered| registered.entry.tool.meta.task_support)
                .filter(|support| support.allows_tasks());
            if let Some(support) = support
                && let Value::Object(tool) = tool
            {
                tool.insert(
                    "execution".to_owned(),
                    json!({"taskSupport": support.as_str()}),
                );
            }
        }
    }
    Ok(page)
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
