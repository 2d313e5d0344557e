//! A `tools/call` prepared to run ([`ReadyCall`]), and the ways a [`TaskRouter`] runs one
//! through the server's pipeline: hooks, observers, limits and the count of calls in flight,
//! as any other call.
//!
//! [`TaskRouter`]: crate::TaskRouter

use std::future::Future;

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject},
    service::{Peer, RequestContext},
    task_manager::TaskContext,
};
use tonic_mcp_schema::TaskSupport;

use crate::{
    call::{
        CallArguments, FromTransport, arguments_text,
        progress::{Handoff, Progress},
        stream_control::StreamControl,
        structured_text::Structured,
    },
    server::{
        McpServer,
        catalog::Found,
        run::{Cancel, cancelled_result},
    },
    tool::task_mode::TaskMode,
};

/// A `tools/call` checked up to where it runs ([`McpServer::prepare`]).
#[derive(Debug)]
pub enum Prepared {
    /// Answered without running: refused, a tool-search answer, or a declined confirmation.
    Answered(CallToolResponse),
    /// The tool to run, and the request it runs with.
    Ready(ReadyCall),
}

/// A served tool found for a `tools/call`, and the request it runs with.
pub struct ReadyCall {
    pub(crate) found: Found,
    pub(crate) request: CallToolRequestParams,
}

impl std::fmt::Debug for ReadyCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadyCall")
            .field("tool", &self.found.entry.name)
            .finish_non_exhaustive()
    }
}

impl ReadyCall {
    /// The tool's served name.
    pub fn name(&self) -> &str {
        &self.found.entry.name
    }

    /// The request.
    pub fn request(&self) -> &CallToolRequestParams {
        &self.request
    }

    /// The request, taken.
    pub fn into_request(self) -> CallToolRequestParams {
        self.request
    }

    /// Whether the tool may, must or must not run as a task (its `_meta`'s `taskSupport`).
    pub fn task_support(&self) -> TaskSupport {
        self.found.entry.tool.def.task_support
    }

    /// The task mode of the tool's set ([`ToolSet::with_task_mode`](crate::ToolSet::with_task_mode)),
    /// when it names one.
    pub fn set_task_mode(&self) -> Option<TaskMode> {
        self.found.set.task_mode
    }

    /// Whether the tool waits on the `google.longrunning.Operation` its RPC answers with.
    pub fn waits_on_operation(&self) -> bool {
        self.found.entry.tool.waits()
    }

    /// Whether a cancel ends the call with what it collected rather than dropping it: a tool
    /// on a response stream whose call asked for `"mcp.stream": {"keepOnCancel": true}`.
    /// Read from the arguments as a map ([`materialize`](Self::materialize) them first).
    pub fn keeps_on_cancel(&self) -> bool {
        self.found.entry.tool.def.kind.streams_responses()
            && StreamControl::keeps_on_cancel(self.request.arguments.as_ref())
    }

    /// Parses the arguments a transport kept as text into the request's map, for a call that
    /// outlives its request.
    ///
    /// # Errors
    ///
    /// The `isError` result refusing arguments that cannot be read (a key given twice); the
    /// map stays empty then, and the call must be answered with the result rather than run.
    pub fn materialize(
        &mut self,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), Box<CallToolResult>> {
        arguments_text::materialize(&mut self.request, &context.extensions).map_err(|problem| {
            let name = self.request.name.as_ref();
            Box::new(crate::call::arguments::invalid_arguments(name, &[problem]).result)
        })
    }
}

/// What a call that outlives its request keeps of it: the HTTP request's parts and the
/// request's `_meta`, which the call hooks read.
#[derive(Debug, Clone)]
pub struct CallOrigin {
    http: Option<http::request::Parts>,
    meta: JsonObject,
}

impl CallOrigin {
    /// What `context`'s request gives a call.
    pub fn of(context: &RequestContext<RoleServer>) -> Self {
        Self {
            http: context.extensions.get::<http::request::Parts>().cloned(),
            meta: context.meta.0.0.clone(),
        }
    }
}

/// Where the progress of a call run with [`McpServer::run_in_background`] goes.
#[derive(Clone)]
pub struct TaskProgress(Progress);

impl std::fmt::Debug for TaskProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskProgress").finish_non_exhaustive()
    }
}

impl TaskProgress {
    /// The status message of `task` (read by `tasks/get`).
    pub fn task(task: TaskContext) -> Self {
        Self(Progress::Task(task))
    }

    /// The request's own progress token (when it gave one) until [`to_task`](Self::to_task),
    /// the task's status message after: for a call answered inline that may become a task.
    pub fn handoff(context: &RequestContext<RoleServer>) -> Self {
        let before: Option<(Peer<RoleServer>, _)> = context
            .meta
            .get_progress_token()
            .map(|token| (context.peer.clone(), token));
        Self(Progress::Handoff(Handoff::new(before)))
    }

    /// The call became `task`: progress goes to its status message from now on, starting
    /// with the last message reported before. Nothing for progress that is not a handoff.
    pub fn to_task(&self, task: TaskContext) {
        if let Progress::Handoff(handoff) = &self.0 {
            handoff.to_task(task);
        }
    }
}

impl McpServer {
    /// `request` for the served tool it names, unchecked (the checks of
    /// [`prepare`](Self::prepare) passed already); an unknown tool is JSON-RPC invalid params.
    pub fn look_up(&self, request: CallToolRequestParams) -> Result<ReadyCall, ErrorData> {
        let found = self.catalog().found(request.name.as_ref())?;
        Ok(ReadyCall { found, request })
    }

    /// Whether the served tool `name` may, must or must not run as a task; `None` for a tool
    /// not served.
    pub fn task_support(&self, name: &str) -> Option<TaskSupport> {
        Some(self.catalog().tools.get(name)?.entry.tool.def.task_support)
    }

    /// Runs `call` in its request, as a server without tasks does: progress to the request's
    /// token, a cancel of the request cancels the call.
    pub async fn run_inline(
        &self,
        call: ReadyCall,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let structured = Structured::asked_in(&context.extensions);
        let outcome = self
            .run_in_request(
                &call.found,
                call.request.arguments,
                &context,
                structured,
                None,
            )
            .await;
        Ok(outcome.map_or_else(cancelled_result, |outcome| outcome.result))
    }

    /// Runs `call` apart from its request (in a task): with its arguments as a map (see
    /// [`ReadyCall::materialize`]), its structured result as a tree, progress to `progress`.
    /// When `cancelled` resolves first the call is dropped (`None`), unless it
    /// [keeps on cancel](ReadyCall::keeps_on_cancel): its collection then stops and it ends
    /// with what it received, truncated.
    pub async fn run_in_background(
        &self,
        call: ReadyCall,
        origin: CallOrigin,
        progress: TaskProgress,
        cancelled: impl Future<Output = ()> + Send + 'static,
    ) -> Option<CallToolResult> {
        let keep = call.keeps_on_cancel();
        let cancel = if keep {
            Cancel::Stop(Box::pin(cancelled))
        } else {
            Cancel::Drop(cancelled)
        };
        self.run_registered(
            &call.found,
            FromTransport {
                arguments: CallArguments::Map(call.request.arguments),
                // Kept, and answered later to other requests: a tree.
                structured: Structured::Tree,
            },
            origin.http.as_ref(),
            &origin.meta,
            Some(progress.0),
            cancel,
            None,
        )
        .await
        .map(|outcome| outcome.result)
    }
}
