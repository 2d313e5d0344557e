//! MCP tool definitions from service descriptors: names, titles, descriptions, annotations and
//! schemas, everything about a tool that does not depend on Rust code generation.
//!
//! The plugin adds Rust names to these definitions and writes them as code; the runtime builds
//! the same definitions from a descriptor pool at run time. Both go through
//! [`service_tools`], so a tool is the same whichever way it was made.

use std::collections::{BTreeMap, BTreeSet};

use prost_reflect::{
    FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor, ServiceDescriptor,
};
use serde_json::Value;

pub use crate::annotations::Annotations;
use crate::error::{Error, Result};
use crate::extensions::ToolOptions;
use crate::json_schema::{self as schema, Direction, SchemaContext, ShrinkReport};
use crate::meta::{TaskSupport, Unconfirmed};
use crate::names;
use crate::options::ToolNames;
pub use crate::rpc_kind::RpcKind;

mod long_running;
mod schemas;
mod tool_meta;

use long_running::long_running;
pub use schemas::{Schemas, ToolSchemas, method_schemas};

/// How the paragraph a server-streaming tool's description ends with begins.
pub const SERVER_STREAMING_NOTE: &str = "Server streaming:";
/// How the paragraph a client-streaming tool's description ends with begins.
pub const CLIENT_STREAMING_NOTE: &str = "Client streaming:";
/// How the paragraph a bidirectional-streaming tool's description ends with begins.
pub const BIDI_NOTE: &str = "Bidirectional streaming, as a batch:";
/// How the paragraph a long-running tool's description ends with begins.
pub const LONG_RUNNING_NOTE: &str = "Long-running:";
/// The beginnings of the paragraphs the generator adds to a tool's description about how the
/// call behaves, after the proto comment (tool search leaves them out of its index).
pub const BEHAVIOUR_NOTES: &[&str] = &[
    SERVER_STREAMING_NOTE,
    CLIENT_STREAMING_NOTE,
    BIDI_NOTE,
    LONG_RUNNING_NOTE,
];

/// The full name of `google.longrunning.Operation`.
pub const OPERATION: &str = "google.longrunning.Operation";

/// The `google.longrunning.Operations` RPC that redeems an operation by name.
pub const GET_OPERATION_PATH: &str = "/google.longrunning.Operations/GetOperation";

/// The `google.longrunning.Operations` RPC that cancels an operation by name.
pub const CANCEL_OPERATION_PATH: &str = "/google.longrunning.Operations/CancelOperation";

/// A tool whose RPC returns a `google.longrunning.Operation` and declares
/// `(google.longrunning.operation_info)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongRunningSpec {
    /// The full name of the message a finished operation's `response` holds.
    pub response_type: String,
    /// The full name of the message its `metadata` holds, when the descriptors define it.
    pub metadata_type: Option<String>,
    /// The call waits for the operation and returns its unpacked response (`LONG_RUNNING_WAIT`);
    /// otherwise it returns the operation.
    pub wait: bool,
}

/// An RPC that does not become a tool.
#[derive(Debug, Clone)]
pub struct Omitted {
    /// `/demo.v1.ItemService/DeleteItem`.
    pub rpc_path: String,
    /// Why, in a few words.
    pub reason: String,
}

/// One RPC as an MCP tool.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool name, final (prefix applied, shortened if needed).
    pub name: String,
    /// The proto method name (`GetItem`).
    pub method: String,
    /// Human-readable title.
    pub title: String,
    /// The description shown to the model.
    pub description: String,
    /// `/demo.v1.ItemService/GetItem`.
    pub rpc_path: String,
    /// How the RPC streams.
    pub kind: RpcKind,
    /// Full proto name of the request message.
    pub input_type: String,
    /// Full proto name of the response message.
    pub output_type: String,
    /// Hints.
    pub annotations: Annotations,
    /// Per-tool deadline as (seconds, nanos).
    pub timeout: Option<(i64, i32)>,
    /// Server-streaming collection bound.
    pub max_messages: Option<u32>,
    /// `(rust_mcp.tool).max_result_bytes`: the tool's result budget in bytes of JSON.
    pub max_result_bytes: Option<u32>,
    /// Full names of fields reachable from the response that its schema leaves out (hidden or
    /// `INPUT_ONLY`); the runtime clears them before encoding a result, sorted.
    pub output_omitted: Vec<String>,
    /// The input schema (`null` when made with [`Schemas::Later`]).
    pub input_schema: Value,
    /// The output schema (`null` when made with [`Schemas::Later`]).
    pub output_schema: Value,
    /// How the `max_schema_bytes` budget shrank the input and output schemas, for the ones it
    /// did; empty when both fit as they were. The plugin prints one line per shrunk tool.
    pub shrunk: Vec<(Direction, ShrinkReport)>,
    /// `(rust_mcp.tool).category`.
    pub category: Option<String>,
    /// `(rust_mcp.tool).required_scopes`: OAuth scopes a call needs, in the order given.
    pub required_scopes: Vec<String>,
    /// Whether calls may run as MCP tasks.
    pub task_support: TaskSupport,
    /// Ask the user before calling, and what to do when the client cannot be asked; `None`
    /// when the tool does not ask.
    pub confirm: Option<Unconfirmed>,
    /// The long-running operation the RPC returns, when it declares one.
    pub long_running: Option<LongRunningSpec>,
    /// Generation notes for stderr beyond shrinking (a long-running RPC that cannot be waited
    /// for, and why).
    pub notes: Vec<String>,
}

/// The tools of one service, and the RPCs that are not tools.
#[derive(Debug, Clone, Default)]
pub struct ServiceTools {
    /// The tools, sorted by name.
    pub tools: Vec<ToolSpec>,
    /// RPCs that are not tools, with the reason, in declaration order.
    pub omitted: Vec<Omitted>,
    /// The service's proto comment, when the source info has one and descriptions are on
    /// (for what tool search says of the API).
    pub description: Option<String>,
}

/// The tools of `service` under the options, extensions and comments of `cx`.
///
/// A service with `(rust_mcp.service).skip` has no tools. RPCs are left out by
/// `(rust_mcp.tool).skip`, the `include`/`exclude` globs and `opt_in`.
///
/// # Errors
///
/// Invalid element options, a name that cannot be made valid, and two RPCs of the service with
/// the same tool name; every error names the proto element.
pub fn service_tools(cx: SchemaContext<'_>, service: &ServiceDescriptor) -> Result<ServiceTools> {
    service_tools_with(cx, service, Schemas::Now)
}

/// [`service_tools`], with the schemas made `when` says: with [`Schemas::Later`] the
/// definitions come without them, and without their errors.
///
/// # Errors
///
/// As for [`service_tools`]; with [`Schemas::Later`], not those of the schemas.
pub fn service_tools_with(
    cx: SchemaContext<'_>,
    service: &ServiceDescriptor,
    when: Schemas,
) -> Result<ServiceTools> {
    let options = cx.options;
    let service_options = cx.extensions.service(service);
    let description = options
        .descriptions
        .then(|| {
            cx.comments
                .get(service.parent_file().name(), service.path())
        })
        .flatten()
        .map(str::to_owned);
    if service_options.skip {
        return Ok(ServiceTools {
            description,
            tools: Vec::new(),
            omitted: service
                .methods()
                .map(|method| Omitted {
                    rpc_path: rpc_path(&method),
                    reason: "its service is skipped by (rust_mcp.service).skip".to_owned(),
                })
                .collect(),
        });
    }
    let prefix = match &service_options.prefix {
        Some(prefix) => {
            names::check_prefix(prefix).map_err(|reason| Error::InvalidElementOption {
                element: service.full_name().to_owned(),
                option: "(rust_mcp.service).prefix".to_owned(),
                reason,
            })?;
            Some(prefix.as_str())
        }
        None => options.prefix.as_deref(),
    };
    let mut tools = Vec::new();
    let mut omitted = Vec::new();
    for method in service.methods() {
        let tool_options = cx.extensions.tool(&method);
        let reason = if tool_options.skip {
            Some("skipped by (rust_mcp.tool).skip")
        } else if !options.selects(method.full_name()) {
            Some("left out by the include/exclude options")
        } else if options.opt_in && !tool_options.present {
            Some("opt_in is set and the method has no (rust_mcp.tool) option")
        } else {
            None
        };
        if let Some(reason) = reason {
            omitted.push(Omitted {
                rpc_path: rpc_path(&method),
                reason: reason.to_owned(),
            });
            continue;
        }
        tools.push(tool(cx, &method, &tool_options, prefix, when)?);
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    check_collisions(&tools)?;
    Ok(ServiceTools {
        tools,
        omitted,
        description,
    })
}

impl ToolSpec {
    /// Every stderr line for this tool: `shrank ` and the shrink line, then `note: ` and each
    /// note.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.shrink_line()
            .map(|line| format!("shrank {line}"))
            .into_iter()
            .chain(self.notes.iter().map(|note| format!("note: {note}")))
            .collect()
    }

    /// The stderr line for a tool the budget shrank, `None` when it did not:
    /// `ItemService_GetItem: input 1006.2 KB -> 15.8 KB (enum value comments, …)`.
    pub fn shrink_line(&self) -> Option<String> {
        if self.shrunk.is_empty() {
            return None;
        }
        let kb = |bytes: usize| format!("{:.1} KB", bytes as f64 / 1024.0);
        let sides: Vec<String> = self
            .shrunk
            .iter()
            .map(|(side, report)| {
                let side = match side {
                    Direction::Input => "input",
                    Direction::Output => "output",
                };
                format!(
                    "{side} {} -> {} ({}){}",
                    kb(report.before),
                    kb(report.after),
                    report.steps.join(", "),
                    if report.fits {
                        ""
                    } else {
                        "; still over the budget"
                    }
                )
            })
            .collect();
        Some(format!("{}: {}", self.name, sides.join("; ")))
    }
}

/// `/package.Service/Method`.
pub fn rpc_path(method: &MethodDescriptor) -> String {
    format!("/{}/{}", method.parent_service().full_name(), method.name())
}

/// Two tools with the same name are an error naming both RPCs.
///
/// # Errors
///
/// [`Error::ToolNameCollision`] for the first name given twice.
pub fn check_collisions<'a>(tools: impl IntoIterator<Item = &'a ToolSpec>) -> Result<()> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for tool in tools {
        if let Some(first) = seen.insert(&tool.name, &tool.rpc_path) {
            return Err(Error::ToolNameCollision {
                name: tool.name.clone(),
                first: first.to_owned(),
                second: tool.rpc_path.clone(),
            });
        }
    }
    Ok(())
}

/// The name `method`'s tool gets by `tool_names`, before any prefix and shortening, when no
/// `(rust_mcp.tool).name` sets it.
pub fn base_tool_name(tool_names: ToolNames, method: &MethodDescriptor) -> String {
    let service = method.parent_service();
    match tool_names {
        ToolNames::ServiceMethod => format!("{}_{}", service.name(), method.name()),
        ToolNames::Method => method.name().to_owned(),
        ToolNames::Package => {
            let package = service.package_name().replace('.', "_");
            if package.is_empty() {
                format!("{}_{}", service.name(), method.name())
            } else {
                format!("{package}_{}_{}", service.name(), method.name())
            }
        }
    }
}

fn tool(
    cx: SchemaContext<'_>,
    method: &MethodDescriptor,
    tool_options: &ToolOptions,
    prefix: Option<&str>,
    when: Schemas,
) -> Result<ToolSpec> {
    let options = cx.options;
    let rpc_path = rpc_path(method);
    let element = method.full_name().to_owned();
    let invalid = |option: &str, reason: String| Error::InvalidElementOption {
        element: element.clone(),
        option: option.to_owned(),
        reason,
    };
    let service = method.parent_service();
    // Names become identifiers (tool names, Rust consts and modules); protoc only lets
    // identifiers through, but a request or a reflection answer can carry anything.
    for (kind, given) in [("service", service.name()), ("method", method.name())] {
        if !names::is_proto_identifier(given) {
            return Err(Error::Unsupported {
                element: element.clone(),
                reason: format!(
                    "the {kind} name `{}` is not a proto identifier (letters, digits and `_`, \
                     not starting with a digit)",
                    given.chars().take(80).collect::<String>()
                ),
            });
        }
    }
    let name = match &tool_options.name {
        Some(name) => {
            let full = names::with_prefix(prefix, name);
            names::check_tool_name(&full)
                .map_err(|reason| invalid("(rust_mcp.tool).name", reason))?;
            full
        }
        None => {
            let base = base_tool_name(options.tool_names, method);
            let full = names::shorten_tool_name(&names::with_prefix(prefix, &base));
            names::check_tool_name(&full).map_err(|reason| Error::Unsupported {
                element: element.clone(),
                reason: format!("cannot make a tool name: {reason}; set (rust_mcp.tool).name"),
            })?;
            full
        }
    };
    if tool_options.read_only == Some(true) && tool_options.destructive == Some(true) {
        return Err(invalid(
            "(rust_mcp.tool).read_only",
            "read_only and destructive are both true; a read-only tool cannot be destructive. \
             Unset one of them"
                .to_owned(),
        ));
    }
    let kind = RpcKind::of(method);
    let file = method.parent_file();
    let comment = if options.descriptions {
        cx.comments
            .get(file.name(), method.path())
            .map(str::to_owned)
    } else {
        None
    };
    let description = tool_options
        .description
        .clone()
        .or(comment)
        .unwrap_or_else(|| format!("Calls the gRPC method `{rpc_path}`."));
    let description = match kind {
        RpcKind::Unary => description,
        RpcKind::ServerStreaming => format!(
            "{description}\n\n{SERVER_STREAMING_NOTE} the result collects the streamed messages \
             in `messages`, up to a bound; `truncated` is true when the bound cut the stream."
        ),
        RpcKind::ClientStreaming => format!(
            "{description}\n\n{CLIENT_STREAMING_NOTE} pass the messages to stream in `messages`."
        ),
        RpcKind::Bidi => format!(
            "{description}\n\n{BIDI_NOTE} the messages in `messages` are sent, then the \
             received messages are returned in `messages`."
        ),
    };
    let title = tool_options
        .title
        .clone()
        .unwrap_or_else(|| names::title_words(method.name()));
    let mut notes = Vec::new();
    let long_running = long_running(cx, method, tool_options, kind, &mut notes)?;
    let description = match &long_running {
        None => description,
        Some(lro) if lro.wait => format!(
            "{description}\n\n{LONG_RUNNING_NOTE} the call waits for the operation to finish and \
             returns its response, a `{}`. If it is still running when the call's deadline \
             passes, the result holds it under `{}` instead: the work goes on, so do not call \
             this tool again; get the result later with \
             google.longrunning.Operations/GetOperation and the operation's `name`.",
            lro.response_type,
            schema::PENDING_OPERATION_KEY
        ),
        Some(lro) => format!(
            "{description}\n\n{LONG_RUNNING_NOTE} returns a google.longrunning.Operation. Once it is \
             `done`, its `response` is a `{}`; until then, poll it with \
             google.longrunning.Operations/GetOperation and its `name`.",
            lro.response_type
        ),
    };

    let level = method
        .method_descriptor_proto()
        .options
        .as_ref()
        .map(|o| o.idempotency_level());
    let annotations = Annotations::resolve(level, tool_options);

    check_hidden_required(cx, method)?;
    let input = method.input();
    let output = method.output();
    // A tool that waits answers with the operation's response: its schema and omitted fields
    // are the response type's.
    let waited = long_running
        .as_ref()
        .filter(|lro| lro.wait)
        .and_then(|lro| output.parent_pool().get_message_by_name(&lro.response_type));
    let output_omitted = omitted_output_fields(cx, waited.as_ref().unwrap_or(&output));

    let ToolSchemas {
        input: input_schema,
        output: output_schema,
        shrunk,
    } = match when {
        Schemas::Now => schemas::make(cx, method, kind, long_running.as_ref())?,
        Schemas::Later => ToolSchemas::later(),
    };

    let task_support = match tool_options.task_support {
        // Waiting for an operation takes as long as the operation: a task frees the client.
        None | Some(0) if waited.is_some() => TaskSupport::Optional,
        None | Some(0) => TaskSupport::default_for(kind),
        Some(1) => TaskSupport::Forbidden,
        Some(2) => TaskSupport::Optional,
        Some(3) => TaskSupport::Required,
        Some(other) => {
            return Err(invalid(
                "(rust_mcp.tool).task_support",
                format!("{other} is not a TaskSupport value"),
            ));
        }
    };
    let unconfirmed = match tool_options.unconfirmed {
        None | Some(0 | 1) => Unconfirmed::Refuse,
        Some(2) => Unconfirmed::Proceed,
        Some(other) => {
            return Err(invalid(
                "(rust_mcp.tool).unconfirmed",
                format!("{other} is not an Unconfirmed value"),
            ));
        }
    };
    if let Some(scope) = tool_options
        .required_scopes
        .iter()
        .find(|scope| !is_scope_token(scope))
    {
        return Err(invalid(
            "(rust_mcp.tool).required_scopes",
            format!(
                "{scope:?} is not an OAuth scope token (RFC 6749 section 3.3: one or more \
                 visible ASCII characters other than a double quote or a backslash)"
            ),
        ));
    }
    if tool_options.max_result_bytes == Some(0) {
        return Err(invalid(
            "(rust_mcp.tool).max_result_bytes",
            "0 would refuse every result; give the largest result in bytes of JSON, or leave \
             it out for the runtime's budget"
                .to_owned(),
        ));
    }
    if tool_options.unconfirmed.is_some() && !tool_options.confirm {
        return Err(invalid(
            "(rust_mcp.tool).unconfirmed",
            "it only applies to tools with `confirm: true`; set `confirm` or remove it".to_owned(),
        ));
    }

    Ok(ToolSpec {
        name,
        method: method.name().to_owned(),
        title,
        description,
        rpc_path,
        kind,
        input_type: input.full_name().to_owned(),
        output_type: output.full_name().to_owned(),
        annotations,
        timeout: tool_options.timeout,
        max_messages: tool_options.max_messages,
        max_result_bytes: tool_options.max_result_bytes,
        output_omitted,
        input_schema,
        output_schema,
        shrunk,
        category: tool_options.category.clone(),
        required_scopes: tool_options.required_scopes.clone(),
        task_support,
        confirm: tool_options.confirm.then_some(unconfirmed),
        long_running,
        notes,
    })
}

/// An OAuth `scope-token` (RFC 6749 section 3.3): `%x21 / %x23-5B / %x5D-7E`, at least one.
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// Fields reachable from `output` that output schemas leave out.
fn omitted_output_fields(cx: SchemaContext<'_>, output: &MessageDescriptor) -> Vec<String> {
    let visible = |field: &FieldDescriptor| {
        schema::is_visible(&cx.extensions.field(field), Direction::Output)
    };
    let mut omitted = BTreeSet::new();
    for message in reachable_messages([output.clone()], visible) {
        for field in message.fields().filter(|field| !visible(field)) {
            omitted.insert(field.full_name().to_owned());
        }
    }
    omitted.into_iter().collect()
}

/// A hidden field can never be set by a model, so it must not be required.
fn check_hidden_required(cx: SchemaContext<'_>, method: &MethodDescriptor) -> Result<()> {
    for message in reachable_messages([method.input(), method.output()], |_| true) {
        for field in message.fields() {
            let facts = cx.extensions.field(&field);
            let required = facts.behavior_required
                || facts.validate_required
                || field.cardinality() == prost_reflect::Cardinality::Required;
            if facts.hidden && required {
                return Err(Error::InvalidElementOption {
                    element: field.full_name().to_owned(),
                    option: "(rust_mcp.field).hidden".to_owned(),
                    reason: "the field is required, so a model could never make a valid call \
                             without it. Remove `hidden`, or make the field optional"
                        .to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Every message reachable from `starts` through message-typed fields that `follow` accepts
/// (map fields lead to their entry messages), each once, the starts included.
pub fn reachable_messages(
    starts: impl IntoIterator<Item = MessageDescriptor>,
    follow: impl Fn(&FieldDescriptor) -> bool,
) -> Vec<MessageDescriptor> {
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    let mut queue: Vec<_> = starts.into_iter().collect();
    while let Some(message) = queue.pop() {
        if !seen.insert(message.full_name().to_owned()) {
            continue;
        }
        for field in message.fields() {
            if let Kind::Message(target) = field.kind()
                && follow(&field)
            {
                queue.push(target);
            }
        }
        found.push(message);
    }
    found
}
