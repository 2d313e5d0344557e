//! The one seam through which a server runs MCP tasks: [`TaskRouter`], installed with
//! [`McpServerBuilder::task_router`](crate::McpServerBuilder::task_router) (the
//! `tonic-mcp-tasks` crate implements it); without one, [`no_tasks`].

use std::{future::Future, pin::Pin};

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolResponse, CancelTaskParams, ErrorCode, GetTaskParams, GetTaskResult,
        UpdateTaskParams,
    },
    service::RequestContext,
};
use serde_json::Value;

use crate::{
    server::{McpServer, ready_call::ReadyCall},
    tool::task_mode::TaskMode,
};

/// What a [`TaskRouter`]'s answers are: boxed futures, so that the trait is object safe.
pub type RouterFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A request of protocol revision 2025-11-25's task shape (SEP-1686), which rmcp's typed model
/// does not read: the transports recognise it and the server hands it to the router
/// ([`TaskRouter::answer_2025`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Request2025 {
    /// `tools/call` with a `task` parameter.
    ToolsCall,
    /// `tasks/get` of a task started in that shape (or one this server does not hold, before
    /// revision 2026-07-28).
    TasksGet,
    /// `tasks/cancel`, as `tasks/get`.
    TasksCancel,
    /// `tasks/result`: waits for the task's end, then answers what the call would have.
    TasksResult,
    /// `tasks/list`: the caller's tasks of that shape.
    TasksList,
}

/// How an [`McpServer`] runs MCP tasks: every task-related request goes through one router.
///
/// The server prepares a `tools/call` (the message guard's refusals, tool search,
/// confirmation) and hands the call to [`call`](Self::call), which answers inline, with a
/// task, or with a refusal; `tasks/get`, `tasks/update` and `tasks/cancel` of the final tasks
/// extension, and every request of revision 2025-11-25's task shape, go to the router as they
/// come. A server with a router declares the `tasks` capability. The router runs calls
/// through the server's pipeline (hooks, observers, limits, in-flight accounting) with
/// [`McpServer::run_inline`], [`McpServer::run_in_background`] and
/// [`McpServer::run_until_detached`].
pub trait TaskRouter: Send + Sync + 'static {
    /// A `tools/call` once prepared ([`McpServer::prepare`]): answered inline
    /// ([`McpServer::run_inline`]), with a task, or refused.
    fn call<'a>(
        &'a self,
        server: &'a McpServer,
        call: ReadyCall,
        context: RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<CallToolResponse, ErrorData>>;

    /// `tasks/get` (the final extension).
    fn get_task<'a>(
        &'a self,
        server: &'a McpServer,
        request: GetTaskParams,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<GetTaskResult, ErrorData>>;

    /// `tasks/update` (the final extension).
    fn update_task<'a>(
        &'a self,
        server: &'a McpServer,
        request: UpdateTaskParams,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<(), ErrorData>>;

    /// `tasks/cancel` (the final extension).
    fn cancel_task<'a>(
        &'a self,
        server: &'a McpServer,
        request: CancelTaskParams,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<(), ErrorData>>;

    /// A request of revision 2025-11-25's task shape, with its `params`: the `result` to
    /// answer with.
    fn answer_2025<'a>(
        &'a self,
        server: &'a McpServer,
        request: Request2025,
        params: Option<Value>,
        context: &'a RequestContext<RoleServer>,
    ) -> RouterFuture<'a, Result<Value, ErrorData>>;

    /// Whether `tasks/get` and `tasks/cancel` of `task_id` are answered in revision
    /// 2025-11-25's shape: the task was started in it, or, unless `final_revision` (the request
    /// is of revision 2026-07-28 or later, where rmcp checks the client's capabilities first),
    /// this server does not hold it. Asked by the transports, for every such request.
    fn answers_in_2025_shape(
        &self,
        server: &McpServer,
        task_id: &str,
        final_revision: bool,
    ) -> bool;

    /// Tasks whose call runs now ([`Load::tasks_running`](crate::Load::tasks_running)).
    fn running(&self) -> usize;

    /// The server-wide [`TaskMode`], for tools whose set names none: the transports answer a
    /// call themselves only when it cannot become a task.
    fn task_mode(&self) -> TaskMode;
}

/// The answer of a server without a [`TaskRouter`] to what only a task could answer: a
/// task-augmented `tools/call` (revision 2025-11-25's `task` parameter), a call of a tool
/// whose `taskSupport` is `required`, and the `tasks/*` methods. JSON-RPC -32601 (method not
/// found), as for a capability the server did not declare: the request names something this
/// server does not offer.
pub fn no_tasks(what: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "{what}: this server runs no MCP tasks (it declares no tasks capability); call the \
             tool without a task"
        ),
        None,
    )
}
