//! A plain `tools/call`: one that a transport may answer without rmcp's per-request service
//! (its request registered, its handler spawned, over stateless HTTP a service and peer built),
//! because all rmcp would do for it is look the tool up and run it. For a call that needs no
//! peer (no progress to send, no confirmation to ask, no task to start, no client
//! capabilities to read), the transports (`stdio_plain`, `http_plain`) run the tool
//! themselves through [`McpServer::plain_call`] and [`McpServer::run_plain`], and write the
//! result as rmcp writes it. Every other call takes rmcp's path.

use rmcp::model::{CallToolRequest, CallToolResponse, JsonObject, RequestMetaObject, ServerResult};
use tonic_mcp_schema::TaskSupport;

use super::{
    McpServer,
    catalog::Found,
    run::{Cancel, arguments, cancelled_result},
};
use crate::{
    call::FromTransport, call::arguments_text, call::facts::ArgumentsText,
    call::structured_text::Structured,
};

/// A `tools/call` found plain ([`McpServer::plain_call`]), ready to run.
pub(crate) struct PlainCall {
    found: Found,
    /// The arguments as a map, when the transport parsed them.
    map: Option<JsonObject>,
    /// The arguments as text, when the transport kept them so.
    text: Option<ArgumentsText>,
    structured: Structured,
    meta: RequestMetaObject,
    /// A call of revision 2026-07-28, whose `_meta` carries the client's metadata.
    per_request: bool,
}

impl McpServer {
    /// `request` as a plain call, or `None` when rmcp's path must answer it:
    /// - `_meta` has a progress token, or the request answers an earlier one
    ///   (`inputResponses`, `requestState`);
    /// - `_meta` names a protocol version or client capabilities while `per_request` is false
    ///   (the call would read them from rmcp's request context), or not while it is true: a
    ///   call of revision 2026-07-28 carries both, which the transport checked against its
    ///   headers;
    /// - the server offers tool search (its tools answer, or name the call to make);
    /// - the tool is unknown (rmcp words the error), needs confirmation, or must run as a
    ///   task, or may run as one and the client declared tasks (`tasks_declared`, from its
    ///   `initialize`, or in `_meta`).
    ///
    /// The request must not have passed the message guard's repairs (its arguments cut or
    /// removed): the caller takes the plain path only for a message the guard let through.
    /// A plain call takes the request's arguments and extensions; any other is left as it was.
    pub(crate) fn plain_call(
        &self,
        request: &mut CallToolRequest,
        tasks_declared: bool,
        per_request: bool,
    ) -> Option<PlainCall> {
        let meta = request.extensions.get::<RequestMetaObject>();
        let capabilities = meta.and_then(|meta| meta.client_capabilities());
        let declares =
            meta.is_some_and(|meta| meta.protocol_version().is_some()) || capabilities.is_some();
        if declares != per_request
            || meta.is_some_and(|meta| meta.get_progress_token().is_some())
            || request.params.input_responses.is_some()
            || request.params.request_state.is_some()
        {
            return None;
        }
        let tasks_declared = tasks_declared
            || capabilities.is_some_and(|capabilities| capabilities.supports_tasks());
        let catalog = self.catalog();
        if catalog.discovery.is_some() {
            return None;
        }
        let registered = catalog.tools.get(request.params.name.as_ref()).cloned()?;
        let meta = &registered.entry.tool.def;
        if meta.confirm.is_some()
            || meta.task_support == TaskSupport::Required
            || (tasks_declared
                && meta.task_support.allows_tasks()
                && self.task_router().is_some_and(|router| {
                    registered.set.task_mode.unwrap_or(router.task_mode())
                        != crate::tool::task_mode::TaskMode::Never
                }))
        {
            return None;
        }
        let mut extensions = std::mem::take(&mut request.extensions);
        Some(PlainCall {
            found: Found {
                catalog,
                registered,
            },
            map: request.params.arguments.take(),
            text: arguments_text::kept(&extensions).cloned(),
            structured: Structured::asked_in(&extensions),
            meta: extensions.remove::<RequestMetaObject>().unwrap_or_default(),
            per_request,
        })
    }

    /// Runs a plain call (with the HTTP request it came in, if any) until `cancelled`
    /// resolves, and gives the result as rmcp's handler gives it for the call's revision.
    pub(crate) async fn run_plain(
        &self,
        call: PlainCall,
        http: Option<&http::request::Parts>,
        cancelled: impl Future<Output = ()>,
    ) -> ServerResult {
        let outcome = self
            .run_registered(
                &call.found,
                FromTransport {
                    arguments: arguments(call.map, call.text.as_ref()),
                    structured: call.structured,
                },
                http,
                &call.meta.0.0,
                None,
                Cancel::Drop(cancelled),
                None,
            )
            .await;
        let result = outcome.map_or_else(cancelled_result, |outcome| outcome.result);
        let mut result = ServerResult::from(CallToolResponse::Complete(result));
        // As rmcp's handler shapes a result for the revision of the call.
        if call.per_request {
            result.fill_missing_cache_hints();
        } else {
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
        }
        result
    }
}
