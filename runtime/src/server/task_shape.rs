//! The task requests of MCP revision 2025-11-25 (SEP-1686: a `task` parameter on
//! `tools/call`, `execution.taskSupport` in `tools/list`, `tasks/result` and `tasks/list`),
//! which rmcp's typed model, following the final extension (SEP-2663), does not read. Both
//! transports give the requests rmcp would read in the final shape an internal method name
//! ([`route`]) and mark them routed in the request's [`Facts`], so that a client cannot name
//! the internal methods itself, and add `capabilities.tasks` to an `initialize` result of
//! that revision ([`declare`]). The server answers `tools/list` here ([`tools_list`]) and
//! hands the rest to the [`TaskRouter`](crate::TaskRouter) ([`custom`]).

use rmcp::{
    ErrorData, RoleServer,
    model::{ErrorCode, PaginatedRequestParams, ProtocolVersion},
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::{call::facts::Facts, server::McpServer, server::task_router::Request2025};

/// The protocol revision whose task shape this module recognises.
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

/// What the task shapes need of a request's protocol revision: the transports learn it from
/// `initialize` (stdio) or from `MCP-Protocol-Version` (streamable HTTP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Revision {
    /// Revision 2025-11-25, whose task shape this module recognises.
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
}

/// The message `bytes` under its internal method name, when it is one of the requests of
/// revision 2025-11-25's task shape that rmcp would read in the final shape; `None` otherwise
/// (most messages: a byte scan decides before anything is parsed). Revision 2026-07-28 and
/// later declare the final extension with each request, and rmcp checks that before the task
/// is looked up.
pub(crate) fn route(bytes: &[u8], server: &McpServer, revision: Revision) -> Option<Vec<u8>> {
    // `"task` starts both a `task` key and a `tasks/…` method: one scan for the two.
    type Needle = std::sync::LazyLock<memchr::memmem::Finder<'static>>;
    static LIST_METHOD: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\"tools/list\""));
    static TASK_WORD: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\"task"));
    let list = revision.of_2025 && LIST_METHOD.find(bytes).is_some();
    if !list && TASK_WORD.find(bytes).is_none() {
        return None;
    }
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let params = message.get("params");
    let router = server.task_router();
    // Before revision 2026-07-28 a task this server does not hold is answered in this shape
    // too, as unknown: rmcp would first ask whether the client declared the final extension,
    // which no client of those revisions does, and a client whose task lived on another
    // replica, or expired, would be told its capabilities are missing.
    let in_2025_shape = || {
        let task_id = params?.get("taskId")?.as_str()?;
        Some(match router {
            Some(router) => router.answers_in_2025_shape(server, task_id, revision.final_extension),
            None => !revision.final_extension,
        })
    };
    let method = match message.get("method")?.as_str()? {
        "tools/call" if params?.get("task").is_some_and(Value::is_object) => TOOLS_CALL,
        "tasks/get" if in_2025_shape()? => TASKS_GET,
        "tasks/cancel" if in_2025_shape()? => TASKS_CANCEL,
        "tools/list" if list && router.is_some() && server.has_task_tools() => TOOLS_LIST,
        _ => return None,
    };
    message["method"] = Value::from(method);
    serde_json::to_vec(&message).ok()
}

/// Whether a transport routed this request ([`Facts::routed`]).
fn routed(context: &RequestContext<RoleServer>) -> bool {
    Facts::of(&context.extensions).is_some_and(|facts| facts.routed)
}

/// Answers a custom request: `tools/list` in revision 2025-11-25's shape here, a task request
/// of that shape through the server's router (or [`no_tasks`](super::task_router::no_tasks)
/// without one), anything else with rmcp's own "method not found".
pub(crate) async fn custom(
    server: &McpServer,
    method: &str,
    params: Option<Value>,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let request = match method {
        TASKS_RESULT => Request2025::TasksResult,
        TASKS_LIST => Request2025::TasksList,
        TOOLS_CALL if routed(context) => Request2025::ToolsCall,
        TASKS_GET if routed(context) => Request2025::TasksGet,
        TASKS_CANCEL if routed(context) => Request2025::TasksCancel,
        TOOLS_LIST if routed(context) => return tools_list(server, params),
        _ => {
            // rmcp's own answer to a method it does not know, word for word.
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                method.to_owned(),
                None,
            ));
        }
    };
    let router = server.task_router_for(match request {
        Request2025::ToolsCall => "a task-augmented tools/call",
        Request2025::TasksGet => "tasks/get",
        Request2025::TasksCancel => "tasks/cancel",
        Request2025::TasksResult => "tasks/result",
        Request2025::TasksList => "tasks/list",
    })?;
    router.answer_2025(server, request, params, context).await
}

/// Adds `capabilities.tasks` of revision 2025-11-25 to `message` when it answers an
/// `initialize` of that revision and the server runs tasks: listing and cancelling, and
/// task-augmented `tools/call` while some tool runs as a task. Returns whether it did.
pub(crate) fn declare(message: &mut Value, server: &McpServer) -> bool {
    if server.task_router().is_none() {
        return false;
    }
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
                .map(|registered| registered.entry.tool.def.task_support)
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
