//! Confirmation before calling a tool whose `_meta` asks for it (`(rust_mcp.tool).confirm`):
//! the user is asked through MCP elicitation (a form with no fields: accept to go ahead). A
//! declined or cancelled confirmation is an `isError` result and the RPC is never called. A
//! client that cannot be asked (no elicitation capability, or 2025-11-25 over stateless HTTP,
//! where `elicitation/create` cannot be sent) gets what the tool's `unconfirmed` says: a refusal
//! (the default) or the call.
//!
//! How the user is asked depends on the protocol revision of the request:
//!
//! - up to 2025-11-25, the server sends `elicitation/create` while the call waits;
//! - from 2026-07-28 on, servers may not send requests of their own: the call answers with an
//!   `InputRequiredResult` carrying the elicitation under [`CONFIRM_INPUT`], and the client asks
//!   the user and sends the call again with the answer in `inputResponses`.

use std::collections::BTreeMap;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitResult,
        ElicitationAction, ElicitationSchema, InputRequest, InputRequiredResult,
    },
    service::RequestContext,
};
use tonic::Code;

use super::Registered;
use crate::{call::outcome::local_failure, tool::def::Unconfirmed};

/// The key of the confirmation in an `InputRequiredResult`'s `inputRequests` and in the
/// `inputResponses` of the call sent again.
pub(crate) const CONFIRM_INPUT: &str = "confirm";

/// `None` when the call may go ahead; otherwise what to answer with instead: a refusal, or
/// (from protocol 2026-07-28 on) the request to confirm.
pub(crate) async fn check(
    registered: &Registered,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<CallToolResponse> {
    let unconfirmed = registered.entry.tool.def.confirm?;
    let name = &registered.entry.name;
    let rpc = &registered.entry.tool.def.rpc_path;
    let can_ask = context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    let params = || {
        let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "The assistant wants to call `{name}` (gRPC `{rpc}`), which is marked as needing \
                 your confirmation, with these arguments:\n{arguments}\nAccept to run it; \
                 decline to stop it."
            ),
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        }
    };
    let modern = context
        .protocol_version()
        .is_some_and(|version| !version.has_initialize());
    let answer = if !can_ask {
        None
    } else if modern {
        match request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(CONFIRM_INPUT))
        {
            Some(response) => Some(
                serde_json::from_value::<ElicitResult>(response.clone())
                    .map_or(ElicitationAction::Decline, |result| result.action),
            ),
            None => {
                let request = InputRequest::Elicitation(ElicitRequest::new(params()));
                let requests = BTreeMap::from([(CONFIRM_INPUT.to_owned(), request)]);
                return Some(CallToolResponse::InputRequired(
                    InputRequiredResult::from_input_requests(requests),
                ));
            }
        }
    } else {
        tokio::select! {
            () = context.ct.cancelled() => {
                return Some(CallToolResponse::Complete(super::run::cancelled_result()));
            }
            answer = context.peer.create_elicitation(params()) => {
                answer.ok().map(|result| result.action)
            }
        }
    };
    let refused = match answer {
        Some(ElicitationAction::Accept) => return None,
        // Decline, cancel, an answer that does not read as one, and any action a later
        // revision adds: not a yes.
        Some(_) => local_failure(
            Code::PermissionDenied,
            format!(
                "The user declined the call of `{name}`; the RPC `{rpc}` was not called. Do not \
                 retry it unless the user asks for it."
            ),
        ),
        None => match unconfirmed {
            Unconfirmed::Proceed => return None,
            Unconfirmed::Refuse => local_failure(
                Code::FailedPrecondition,
                format!(
                    "`{name}` needs the user's confirmation, and this client cannot ask for it \
                     (it does not support MCP elicitation); the RPC `{rpc}` was not called."
                ),
            ),
        },
    };
    Some(CallToolResponse::Complete(refused.result))
}
