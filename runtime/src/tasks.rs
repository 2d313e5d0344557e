//! Task-augmented tool calls: the MCP tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663), the revision rmcp implements.
//!
//! A client that declares the extension (at `initialize` or in a request's `_meta`) and calls a
//! tool whose `_meta` says `"taskSupport": "optional"` gets a task instead of the result: the RPC
//! runs in the background, `tasks/get` reports its status (for server-streaming RPCs, the count
//! of messages received so far in the status message) and, once it is done, the tool result;
//! `tasks/cancel` cancels the gRPC call. A task lives for the server's task time-to-live
//! ([`DEFAULT_TASK_TTL`], [`McpServerBuilder::task_ttl`]), counted from its creation: a call
//! still running then is cancelled and the task fails, and a finished task is forgotten one
//! time-to-live after it finished.
//!
//! [`McpServerBuilder::task_ttl`]: crate::McpServerBuilder::task_ttl

use std::time::Duration;

use rmcp::{
    RoleServer,
    model::{CallToolRequestParams, CreateTaskResult},
    service::RequestContext,
    task_manager::{TaskExit, TaskManager, TaskOptions},
};

use crate::{McpServer, call::Progress, server::Registered};

/// How long a task lives unless [`McpServerBuilder::task_ttl`] says otherwise: 5 minutes.
///
/// [`McpServerBuilder::task_ttl`]: crate::McpServerBuilder::task_ttl
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);

/// How often clients are asked to poll `tasks/get`.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The tasks of one server (shared by all its sessions; task ids are random UUIDs).
#[derive(Default)]
pub(crate) struct Tasks {
    pub(crate) manager: TaskManager,
}

/// Whether this call becomes a task: the tool allows it and the client declared tasks.
pub(crate) fn wanted(registered: &Registered, context: &RequestContext<RoleServer>) -> bool {
    registered.entry.tool.meta.tasks
        && context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// Starts the call of a registered tool in the background and returns its task.
pub(crate) fn start(
    server: &McpServer,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    ttl: Duration,
) -> CreateTaskResult {
    let server = server.clone();
    let http = context.extensions.get::<http::request::Parts>().cloned();
    let meta = context.meta.0.0.clone();
    let options = TaskOptions::new()
        .with_ttl_ms(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(1000))
        .with_status_message("the RPC is running");
    let task = server
        .clone()
        .inner_tasks()
        .manager
        .spawn(options, move |task| {
            Box::pin(async move {
                let registered = server.registered(request.name.as_ref())?;
                let progress = Some(Progress::Task(task.clone()));
                let outcome = server
                    .run_registered(
                        registered,
                        request.arguments,
                        http.as_ref(),
                        &meta,
                        progress,
                        task.cancelled(),
                    )
                    .await;
                match outcome {
                    Some(outcome) => Ok(outcome.result),
                    None => Err(TaskExit::Cancelled),
                }
            })
        });
    CreateTaskResult::new(task)
}
