//! Confirmation before calling a tool whose `_meta` asks for it (`(rust_mcp.tool).confirm`):
//! the user is asked through MCP elicitation (`elicitation/create`, a form with no fields:
//! accept to go ahead). A declined or cancelled confirmation is an `isError` result and the RPC
//! is never called. A client that cannot be asked (no elicitation capability, or a transport or
//! protocol revision without server-to-client requests) gets what the tool's `unconfirmed`
//! says: a refusal (the default) or the call.

use std::collections::BTreeMap;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequestParams, CallToolResult, ContentBlock, ElicitRequestParams,
        ElicitationAction, ElicitationSchema,
    },
    service::RequestContext,
};
use tonic::Code;

use crate::{McpServer, call::with_status, meta::Unconfirmed};

/// `None` when the call may go ahead; otherwise the result to answer with instead.
pub(crate) async fn check(
    server: &McpServer,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<CallToolResult> {
    let registered = server.registered(request.name.as_ref()).ok()?;
    let unconfirmed = registered.entry.tool.meta.confirm?;
    let name = &registered.entry.name;
    let rpc = &registered.entry.tool.def.rpc_path;
    let can_ask = context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    let answer = if can_ask {
        let arguments = request.arguments.as_ref().map_or_else(
            || "{}".to_owned(),
            |a| serde_json::Value::Object(a.clone()).to_string(),
        );
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "The assistant wants to call `{name}` (gRPC `{rpc}`), which is marked as needing \
                 your confirmation, with these arguments:\n{arguments}\nAccept to run it; \
                 decline to stop it."
            ),
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        };
        tokio::select! {
            () = context.ct.cancelled() => return Some(with_status(
                CallToolResult::error(vec![ContentBlock::text("the call was cancelled")]),
                Code::Cancelled,
                true,
            )),
            answer = context.peer.create_elicitation(params) => answer.ok(),
        }
    } else {
        None
    };
    match answer.map(|result| result.action) {
        Some(ElicitationAction::Accept) => None,
        // Decline, cancel, and any action a later revision adds: not a yes.
        Some(_) => Some(refusal(
            Code::PermissionDenied,
            format!(
                "The user declined the call of `{name}`; the RPC `{rpc}` was not called. Do not \
                 retry it unless the user asks for it."
            ),
        )),
        None => match unconfirmed {
            Unconfirmed::Proceed => None,
            Unconfirmed::Refuse => Some(refusal(
                Code::FailedPrecondition,
                format!(
                    "`{name}` needs the user's confirmation, and this client cannot ask for it \
                     (it does not support MCP elicitation); the RPC `{rpc}` was not called."
                ),
            )),
        },
    }
}

fn refusal(code: Code, text: String) -> CallToolResult {
    with_status(
        CallToolResult::error(vec![ContentBlock::text(text)]),
        code,
        true,
    )
}
