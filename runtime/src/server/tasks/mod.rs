//! Task-augmented tool calls: the MCP tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663), the revision rmcp implements.
//!
//! A client that declares the extension (at `initialize` or in a request's `_meta`) and calls a
//! tool whose `_meta` says `"taskSupport": "optional"` gets a task instead of the result: the RPC
//! runs in the background, `tasks/get` reports its status (for server-streaming RPCs, the count
//! of messages received so far in the status message) and, once it is done, the tool result;
//! `tasks/cancel` cancels the gRPC call. A task on a response stream (server streaming, bidi)
//! whose call asked for `"mcp.stream": {"keepOnCancel": true}` is not lost to a cancel:
//! collection stops there and the task completes with the messages received, `truncated`,
//! which makes a task the way to watch an unending stream for as long as the client likes (up
//! to the tool's deadline). A task lives for the server's task time-to-live
//! ([`DEFAULT_TASK_TTL`], [`McpServerBuilder::task_ttl`]), counted from its creation: a call
//! still running then is cancelled and the task fails, and a finished task is forgotten one
//! time-to-live after it finished.
//!
//! A task belongs to its caller: under [`Authorization`](crate::Authorization) to the token
//! owner (issuer, subject, client) that started it, otherwise to the HTTP session that started
//! it. Another caller asking for it (`tasks/get`, `tasks/update`, `tasks/cancel`) is told the
//! task is unknown, exactly as for an id that never existed. Over stdio (one client per
//! process) and stateless HTTP without authorization there is no caller to tell apart: the
//! task is reachable by whoever holds its id, a random UUID.
//!
//! Clients of revision 2025-11-25 ask for tasks in that revision's shape (SEP-1686), which
//! [`sep1686`] serves from the same store.
//!
//! [`McpServerBuilder::task_ttl`]: crate::McpServerBuilder::task_ttl

pub(crate) mod sep1686;

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolRequestParams, CallToolResult, CreateTaskResult, Task},
    service::RequestContext,
    task_manager::{TaskExit, TaskManager, TaskOptions},
};

use crate::{
    McpServer,
    progress::Progress,
    server::{Cancel, Registered},
    stream_control::StreamControl,
};

/// How long a task lives unless [`McpServerBuilder::task_ttl`] says otherwise: 5 minutes.
///
/// [`McpServerBuilder::task_ttl`]: crate::McpServerBuilder::task_ttl
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);

/// How often clients are asked to poll `tasks/get`.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Owners remembered before those of forgotten tasks are dropped.
const OWNERS_PRUNE_AT: usize = 1024;

/// The shape a task was started in, which its requests are answered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The final tasks extension (SEP-2663), rmcp's.
    Extension,
    /// Revision 2025-11-25 ([`sep1686`]).
    Sep1686,
}

/// The tasks of one server (shared by all its sessions; task ids are random UUIDs), who
/// started each, and which were started in the shape of revision 2025-11-25.
#[derive(Default)]
pub(crate) struct Tasks {
    pub(crate) manager: TaskManager,
    owners: Mutex<HashMap<String, String>>,
    sep1686: Mutex<HashSet<String>>,
}

impl Tasks {
    /// The task `task_id`, or the error for an unknown task when `context`'s caller is not the
    /// one that started it.
    pub(crate) fn check_caller(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        match owners.get(task_id) {
            Some(owner) if Some(owner) != caller(context).as_ref() => Err(unknown(task_id)),
            _ => Ok(()),
        }
    }

    /// Whether `task_id` was started in the shape of revision 2025-11-25.
    pub(crate) fn started_in_2025_shape(&self, task_id: &str) -> bool {
        self.sep1686
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(task_id)
    }

    /// The tasks started in the shape of revision 2025-11-25 by `context`'s caller: over
    /// stdio (no HTTP request) all of them; over HTTP with no caller to tell apart, none.
    pub(crate) fn started_in_2025_shape_by(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Vec<String> {
        let over_http = context.extensions.get::<http::request::Parts>().is_some();
        let caller = caller(context);
        if over_http && caller.is_none() {
            return Vec::new();
        }
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        let mut ids: Vec<String> = self
            .sep1686
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|id| owners.get(*id) == caller.as_ref())
            .cloned()
            .collect();
        ids.sort_unstable();
        ids
    }

    fn record(&self, task_id: &str, owner: Option<String>, shape: Shape) {
        if shape == Shape::Sep1686 {
            let mut sep1686 = self.sep1686.lock().unwrap_or_else(|e| e.into_inner());
            if sep1686.len() >= OWNERS_PRUNE_AT {
                sep1686.retain(|id| self.manager.get_task(id).is_ok());
            }
            sep1686.insert(task_id.to_owned());
        }
        let Some(owner) = owner else {
            return;
        };
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if owners.len() >= OWNERS_PRUNE_AT {
            owners.retain(|id, _| self.manager.get_task(id).is_ok());
        }
        owners.insert(task_id.to_owned(), owner);
    }
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

/// Who is calling, to tell task owners apart: the token owner under authorization, else the
/// HTTP session; `None` over stdio and stateless HTTP without authorization.
fn caller(context: &RequestContext<RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    #[cfg(feature = "auth")]
    if let Some(principal) = parts.extensions.get::<crate::Principal>() {
        return Some(format!("token:{}", principal.owner()));
    }
    parts
        .headers
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
        .map(|id| format!("session:{id}"))
}

/// Whether this call becomes a task: the tool allows it and the client declared tasks.
pub(crate) fn wanted(registered: &Registered, context: &RequestContext<RoleServer>) -> bool {
    registered.entry.tool.meta.task_support.allows_tasks()
        && context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// Starts the call of a registered tool in the background and returns its task.
pub(crate) fn start(
    server: &McpServer,
    mut request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
    shape: Shape,
) -> CreateTaskResult {
    // A task keeps its arguments as a map (its stream control is read from them).
    crate::arguments_text::materialize(&mut request, &context.extensions);
    let owners_of = server;
    let server = server.clone();
    let owner = caller(context);
    let http = context.extensions.get::<http::request::Parts>().cloned();
    let meta = context.meta.0.0.clone();
    let options = options(ttl).with_status_message("the RPC is running");
    let task = server
        .clone()
        .inner_tasks()
        .manager
        .spawn(options, move |task| {
            Box::pin(async move {
                let registered = server.registered(request.name.as_ref())?;
                let progress = Some(Progress::Task(task.clone()));
                // A task on a response stream whose call asked for `keepOnCancel`: the cancel
                // ends the collection and the task completes with the messages so far,
                // truncated (a watch that never ends is collected until the client has seen
                // enough). Otherwise the call is dropped and the task ends cancelled.
                let keep = registered.entry.tool.def.kind.streams_responses()
                    && StreamControl::keeps_on_cancel(request.arguments.as_ref());
                let cancel = if keep {
                    Cancel::Stop(Box::pin(task.cancelled()))
                } else {
                    Cancel::Drop(task.cancelled())
                };
                let outcome = server
                    .run_registered(
                        &registered,
                        crate::call::FromTransport {
                            arguments: crate::call::CallArguments::Map(request.arguments),
                            // Kept, and answered later to other requests: a tree.
                            structured: crate::structured_text::Structured::Tree,
                        },
                        http.as_ref(),
                        &meta,
                        progress,
                        cancel,
                    )
                    .await;
                match outcome {
                    Some(outcome) => Ok(outcome.result),
                    None => Err(TaskExit::Cancelled),
                }
            })
        });
    owners_of.inner_tasks().record(&task.task_id, owner, shape);
    CreateTaskResult::new(task)
}

/// The options of a task living `ttl`, polled every [`POLL_INTERVAL`].
fn options(ttl: Duration) -> TaskOptions {
    TaskOptions::new()
        .with_ttl_ms(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(1000))
}

/// A task of revision 2025-11-25 that is complete from the start with `answer` (a call
/// answered without running: refused arguments, a declined confirmation).
pub(crate) fn finished(
    server: &McpServer,
    answer: CallToolResult,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
) -> Task {
    let options = options(ttl);
    let tasks = server.inner_tasks();
    let task = tasks
        .manager
        .spawn(options, move |_| Box::pin(async move { Ok(answer) }));
    tasks.record(&task.task_id, caller(context), Shape::Sep1686);
    task
}
