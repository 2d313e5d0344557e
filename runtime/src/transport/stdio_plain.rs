//! The line transport's plain `tools/call`s ([`McpServer::plain_call`]), run by the transport
//! itself in a task and written as rmcp would write them.
//!
//! What rmcp's service would do for the call is kept:
//! - the session must be set up: the `initialize` answer sent, and `notifications/initialized`
//!   received; until then every message goes to rmcp;
//! - the result is stripped as for the negotiated revision (the plain path is taken only for a
//!   revision before 2026-07-28);
//! - a client that declared tasks may have a call made a task: such calls go to rmcp;
//! - `notifications/cancelled` cancels the call, whose answer is then not written; the
//!   notification still goes to rmcp, which ignores an id it does not know;
//! - when the input ends, calls still running are drained, then cancelled, as rmcp's are.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetExtensions as _, ProtocolVersion,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use tokio_util::sync::CancellationToken;

use crate::{call::facts::Facts, server::McpServer, sync::lock};

/// What the line transport knows of its session for answering plain calls, and the plain
/// calls running now.
#[derive(Default)]
pub(crate) struct PlainCalls {
    /// The `initialize` answer named a revision before 2026-07-28.
    legacy_revision: bool,
    /// The client sent `notifications/initialized`.
    initialized: bool,
    /// The client declared the tasks capability in `initialize`.
    tasks_declared: bool,
    /// The plain calls running now, by request id. A call whose entry is gone when it ends
    /// was cancelled: its answer is not written.
    running: Arc<Running>,
}

impl PlainCalls {
    /// Notes what a message the transport read says of the session, and cancels the plain
    /// call a `notifications/cancelled` names.
    pub(crate) fn read(&mut self, message: &ClientJsonRpcMessage) {
        match message {
            ClientJsonRpcMessage::Request(request) => {
                if let ClientRequest::InitializeRequest(initialize) = &request.request {
                    self.tasks_declared = initialize.params.capabilities.supports_tasks();
                }
            }
            ClientJsonRpcMessage::Notification(notification) => match &notification.notification {
                ClientNotification::InitializedNotification(_) => self.initialized = true,
                ClientNotification::CancelledNotification(cancelled) => {
                    if let Some(id) = &cancelled.params.request_id
                        && let Some(token) = lock(&self.running).remove(id)
                    {
                        token.cancel();
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Notes the revision of the `initialize` answer the transport writes.
    pub(crate) fn sent(&mut self, message: &ServerJsonRpcMessage) {
        if let ServerJsonRpcMessage::Response(response) = message
            && let ServerResult::InitializeResult(result) = &response.result
        {
            self.legacy_revision =
                result.protocol_version.as_str() < ProtocolVersion::V_2026_07_28.as_str();
        }
    }

    /// The answer to `message` when it is a plain call: the call, to run in a task of the
    /// transport's, giving the message to write (`None` once cancelled). Any other message
    /// comes back, for rmcp.
    #[allow(
        clippy::result_large_err,
        reason = "the message goes on to rmcp as it came, not boxed"
    )]
    pub(crate) fn answer(
        &self,
        mut message: ClientJsonRpcMessage,
        server: &McpServer,
    ) -> Result<
        impl Future<Output = Option<ServerJsonRpcMessage>> + Send + 'static,
        ClientJsonRpcMessage,
    > {
        if !(self.initialized && self.legacy_revision) {
            return Err(message);
        }
        let ClientJsonRpcMessage::Request(request) = &mut message else {
            return Err(message);
        };
        let id = request.id.clone();
        // Only a call read straight from its text (`tools_call_text`), which marks it so: not
        // one the message guard repaired, nor a task request routed by revision.
        let call = match &mut request.request {
            ClientRequest::CallToolRequest(call)
                if Facts::of(call.extensions()).is_some_and(|facts| facts.structured_from_text) =>
            {
                server.plain_call(call, self.tasks_declared, false)
            }
            _ => None,
        };
        let Some(call) = call else {
            return Err(message);
        };
        let cancelled = CancellationToken::new();
        lock(&self.running).insert(id.clone(), cancelled.clone());
        let running = Arc::clone(&self.running);
        let server = server.clone();
        Ok(async move {
            // Boxed: the call's state is large, and the task's future is moved as it is spawned.
            let result = Box::pin(server.run_plain(call, None, cancelled.cancelled_owned())).await;
            let answered = lock(&running).remove(&id).is_some();
            answered.then(|| ServerJsonRpcMessage::response(result, id))
        })
    }

    /// Cancels every plain call still running (the input ended, and the drain is over).
    pub(crate) fn cancel_all(&self) {
        for (_, token) in lock(&self.running).drain() {
            token.cancel();
        }
    }
}

type Running = Mutex<HashMap<RequestId, CancellationToken>>;
