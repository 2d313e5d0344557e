//! Calls of tools that wait on a `google.longrunning.Operation`, for a task that answers for
//! the operation from the backend rather than holding the call: [`McpServer::run_until_detached`]
//! runs the call until the wait would go on, and an [`OperationReader`] reads (or cancels) the
//! operation later, on any replica, as the waiting call would.

use std::time::Duration;

use rmcp::{ErrorData, RoleServer, model::CallToolResult, service::RequestContext};
use tonic::Code;
use tonic_mcp_schema::json_schema::PENDING_OPERATION_KEY;

use crate::{
    call::{
        self,
        longrunning::{self, Look, Started, Wait},
        structured_text::Structured,
    },
    server::{McpServer, catalog::Found, ready_call::ReadyCall, run::cancelled_result},
    tool::context::CallContext,
};

/// How a call run with [`McpServer::run_until_detached`] ended.
#[derive(Debug)]
pub enum Detached {
    /// As the call without a task would: it ended (done at once, failed, or cancelled).
    Answered(CallToolResult),
    /// Stopped waiting while the operation runs on.
    Running {
        /// The operation's name.
        operation: String,
        /// What the waiting call's progress says of it: its name and latest metadata.
        status_message: String,
    },
}

/// What one `GetOperation` told of an operation ([`OperationReader::look`]).
#[derive(Debug)]
pub enum OperationLook {
    /// Not done yet: the status message the waiting call's progress would give.
    Running(String),
    /// Ended as cancelled by the backend (`CancelOperation` does so).
    Cancelled,
    /// Done: the result the waiting call ends with (the unpacked response, or the operation's
    /// error as an `isError` result).
    Done(CallToolResult),
    /// `GetOperation` failed: a JSON-RPC internal error naming the gRPC status (the operation
    /// may well be running still).
    Unanswered(ErrorData),
}

impl McpServer {
    /// Runs `call`, of a tool that [waits on an operation](ReadyCall::waits_on_operation), in
    /// its request up to the RPC's first answer and the waiting that `after` allows
    /// (`Duration::ZERO`: none): the result when it ended by then, else the operation it
    /// stopped waiting for. A cancel of the request cancels the call, and the operation, as for
    /// any call.
    pub async fn run_until_detached(
        &self,
        call: ReadyCall,
        context: &RequestContext<RoleServer>,
        after: Duration,
    ) -> Detached {
        let started = Started::detaching(after);
        let outcome = self
            .run_in_request(
                &call.found,
                call.request.arguments,
                context,
                Structured::Tree,
                Some(started.clone()),
            )
            .await;
        let Some(outcome) = outcome else {
            return Detached::Answered(cancelled_result());
        };
        let Some((operation, _)) = started.detached() else {
            return Detached::Answered(outcome.result);
        };
        // The waiting call's answer at the point it stopped holds the latest metadata.
        let metadata = outcome
            .result
            .structured_content
            .as_ref()
            .and_then(|content| content.get(PENDING_OPERATION_KEY))
            .and_then(|pending| pending.get("metadata"));
        let status_message = longrunning::running_text(&operation, metadata);
        Detached::Running {
            operation,
            status_message,
        }
    }

    /// The served tool `name` when it waits on an operation: what reads its operations.
    pub fn waiting_tool(&self, name: &str) -> Option<WaitingTool> {
        self.catalog()
            .found(name)
            .ok()
            .filter(|found| found.entry.tool.waits())
            .map(|found| WaitingTool { found })
    }
}

/// A served tool that waits on an operation ([`McpServer::waiting_tool`]).
pub struct WaitingTool {
    found: Found,
}

impl std::fmt::Debug for WaitingTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitingTool")
            .field("tool", &self.found.entry.name)
            .finish_non_exhaustive()
    }
}

impl WaitingTool {
    /// What the waiting call's own reading of the operation needs, for `context`'s caller: the
    /// gRPC metadata the tool's set and the call hooks give this request (a hook's refusal is
    /// the answer, JSON-RPC invalid request), and the tool's deadline for each `GetOperation`.
    pub fn reader<'a>(
        &'a self,
        server: &'a McpServer,
        context: &RequestContext<RoleServer>,
    ) -> Result<OperationReader<'a>, ErrorData> {
        let found = &self.found;
        let tool = &*found.entry.tool;
        let types = tool
            .types()
            .map_err(|message| ErrorData::internal_error(message, None))?;
        let lro = types.long_running.as_deref().ok_or_else(|| {
            ErrorData::internal_error(
                format!("tool `{}` does not wait on an operation", found.entry.name),
                None,
            )
        })?;
        let def = &tool.def;
        let call_context = CallContext {
            tool: &found.entry.name,
            rpc_path: &def.rpc_path,
            http: context.extensions.get::<http::request::Parts>(),
            meta: &context.meta.0.0,
        };
        let metadata = call::grpc_metadata(&found.set, &server.inner.hooks, &call_context)
            .map_err(|refusal| ErrorData::invalid_request(refusal, None))?;
        let timeout = def.timeout.unwrap_or(found.set.timeout);
        Ok(OperationReader {
            wait: Wait {
                lro,
                output_omitted: &def.output_omitted,
                options: call::json_options(tool),
                deadline: std::time::Instant::now() + timeout,
                timeout,
                metadata,
                limits: found.set.limits,
                progress: None,
                started: Started::default(),
                redeemer: found.catalog.redeemer.as_ref(),
                observers: &server.inner.observers,
                budget: def
                    .max_result_bytes
                    .or(found.set.max_result_bytes)
                    .unwrap_or(server.inner.limits.max_result_bytes),
                input: &types.input,
            },
        })
    }
}

/// Reads and cancels a waiting tool's operations ([`WaitingTool::reader`]).
pub struct OperationReader<'a> {
    wait: Wait<'a>,
}

impl std::fmt::Debug for OperationReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperationReader").finish_non_exhaustive()
    }
}

impl OperationReader<'_> {
    /// One `GetOperation` of `operation`, within the tool's deadline from now, read as the
    /// waiting call reads it.
    pub async fn look(&mut self, operation: &str) -> OperationLook {
        self.wait.deadline = std::time::Instant::now() + self.wait.timeout;
        match longrunning::look(&self.wait, operation).await {
            Look::Running(metadata) => {
                OperationLook::Running(longrunning::running_text(operation, metadata.as_ref()))
            }
            Look::Done(outcome)
                if outcome.grpc_code == Some(Code::Cancelled)
                    && outcome.result.is_error == Some(true) =>
            {
                OperationLook::Cancelled
            }
            Look::Done(outcome) => OperationLook::Done(outcome.result),
            Look::Unanswered(status, text) => OperationLook::Unanswered(ErrorData::internal_error(
                text,
                Some(serde_json::json!({"grpcCode": format!("{:?}", status.code())})),
            )),
        }
    }

    /// `CancelOperation` of `operation` (its failure is logged, as a waiting call's is).
    pub async fn cancel(&self, operation: &str) {
        longrunning::cancel(
            self.wait.lro,
            self.wait.redeemer,
            operation.to_owned(),
            self.wait.metadata.clone(),
            self.wait.observers,
        )
        .await;
    }
}
