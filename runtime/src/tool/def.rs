//! Tool definitions: static ones written by the plugin as `const` items, and the owned form
//! every tool is compiled from, whichever way it was made.

use std::{borrow::Cow, sync::Arc, time::Duration};

use prost_reflect::{DescriptorPool, MessageDescriptor};
use rmcp::model::JsonObject;

pub use tonic_mcp_schema::{Annotations as ToolAnnotations, RpcKind, TaskSupport, Unconfirmed};

use crate::error::Error;

/// The rmcp form of `annotations`; `None` when no hint is set.
pub(crate) fn annotations_to_rmcp(
    annotations: ToolAnnotations,
) -> Option<rmcp::model::ToolAnnotations> {
    (annotations != ToolAnnotations::NONE).then(|| {
        rmcp::model::ToolAnnotations::from_raw(
            None,
            annotations.read_only,
            annotations.destructive,
            annotations.idempotent,
            annotations.open_world,
        )
    })
}

/// Whether `text`, the JSON text of a definition's `_meta` or schema, is a JSON object: its
/// syntax is read without building a tree, and valid JSON that opens with `{` is an object.
///
/// # Errors
///
/// `text` is not JSON.
pub(crate) fn is_json_object(text: &str) -> Result<bool, serde_json::Error> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)?;
    Ok(text.trim_start().starts_with('{'))
}

/// Everything the runtime needs to know about one tool, fixed at generation time.
///
/// Generated code declares one `const` per RPC, lists them in `TOOLS` and hands them to
/// [`tool_set`](crate::codegen::tool_set). Writing one by hand works the same way (register it
/// with [`ToolSetBuilder`](crate::codegen::ToolSetBuilder)):
///
/// ```
/// use tonic_mcp::codegen::{RpcKind, TaskSupport, ToolAnnotations, ToolDef};
///
/// pub const DOUBLE: ToolDef = ToolDef {
///     name: "Calc_Double",
///     title: "Double",
///     description: "Double a number.",
///     rpc_path: "/calc.v1.Calc/Double",
///     kind: RpcKind::Unary,
///     input_type: "google.protobuf.Int64Value",
///     output_type: "google.protobuf.Int64Value",
///     input_schema: r#"{"type":"object","properties":{"value":{"type":"string","pattern":"^-?[0-9]+$"}},"required":["value"],"additionalProperties":false}"#,
///     output_schema: r#"{"type":"object","properties":{"value":{"type":"string","pattern":"^-?[0-9]+$"}},"required":["value"],"additionalProperties":false}"#,
///     annotations: ToolAnnotations { read_only: Some(true), ..ToolAnnotations::NONE },
///     json_names: false,
///     emit_defaults: false,
///     timeout: None,
///     max_messages: None,
///     max_result_bytes: None,
///     output_omitted: &[],
///     task_support: TaskSupport::Forbidden,
///     confirm: None,
///     required_scopes: &[],
///     wait_for_operation: None,
///     operation_metadata_type: None,
///     meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/calc.v1.Calc/Double","inputType":"google.protobuf.Int64Value","outputType":"google.protobuf.Int64Value","streaming":"unary","taskSupport":"forbidden"}}"#,
/// };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolDef {
    /// Tool name: `[A-Za-z0-9_]`, starting with a letter, at most 64 characters.
    pub name: &'static str,
    /// Human-readable title.
    pub title: &'static str,
    /// What the tool does, for the model.
    pub description: &'static str,
    /// gRPC path, `/package.Service/Method`.
    pub rpc_path: &'static str,
    /// How the RPC streams.
    pub kind: RpcKind,
    /// Full proto name of the request message (`demo.v1.GetItemRequest`).
    pub input_type: &'static str,
    /// Full proto name of the response message.
    pub output_type: &'static str,
    /// JSON Schema 2020-12 of the tool input.
    pub input_schema: &'static str,
    /// JSON Schema 2020-12 of the tool output.
    pub output_schema: &'static str,
    /// Hints listed with the tool.
    pub annotations: ToolAnnotations,
    /// Property names are lowerCamel JSON names (`true`) or proto names (`false`). Input
    /// accepts both either way.
    pub json_names: bool,
    /// Results include default-valued fields.
    pub emit_defaults: bool,
    /// Deadline for this tool, overriding the tool set's.
    pub timeout: Option<Duration>,
    /// Bound on collected server-streaming messages, overriding the tool set's.
    pub max_messages: Option<u32>,
    /// The largest result in bytes of compact JSON, overriding the tool set's and the
    /// server's budget ([`Limits::max_result_bytes`](crate::Limits::max_result_bytes)).
    pub max_result_bytes: Option<usize>,
    /// Full names of fields the output schema leaves out (`(rust_mcp.field).hidden` and
    /// `INPUT_ONLY` fields): they are cleared from responses before encoding.
    pub output_omitted: &'static [&'static str],
    /// Whether calls may run as MCP tasks (for clients that ask for them).
    pub task_support: TaskSupport,
    /// Ask the user before every call, and what to do when the client cannot be asked.
    pub confirm: Option<Unconfirmed>,
    /// OAuth scopes a call needs beyond those every request needs
    /// (`(rust_mcp.tool).required_scopes`), which an authorization layer checks
    /// (`tonic-mcp-auth`); `_meta` lists them too, for clients.
    pub required_scopes: &'static [&'static str],
    /// Wait for the `google.longrunning.Operation` the RPC returns and answer with its
    /// response, a message of this full proto name (the descriptor set must define it and
    /// `google.longrunning.GetOperationRequest`).
    pub wait_for_operation: Option<&'static str>,
    /// The full proto name of a waited operation's `metadata`, when the descriptors define it.
    pub operation_metadata_type: Option<&'static str>,
    /// The tool's MCP `_meta` object as JSON (empty for none), listed with the tool as it is.
    /// The plugin writes there the RPC's identity (`protoc-gen-rust-mcp/rpc`: `path`,
    /// `inputType`, `outputType`, `streaming`) and, for clients, the serving choices above;
    /// the runtime acts on the typed fields, not on this text.
    pub meta: &'static str,
}

/// A tool definition as the runtime keeps it: borrowed from a generated [`ToolDef`] (no
/// allocation) or owned, for tools built from descriptors at run time. Beside what it lists,
/// it holds the serving choices the runtime follows, typed: the listed `_meta` text is never
/// read back for them.
#[derive(Debug, Clone)]
pub(crate) struct ToolInfo {
    pub(crate) name: Cow<'static, str>,
    pub(crate) title: Cow<'static, str>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) rpc_path: Cow<'static, str>,
    pub(crate) kind: RpcKind,
    pub(crate) input_type: Cow<'static, str>,
    pub(crate) output_type: Cow<'static, str>,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) json_names: bool,
    pub(crate) emit_defaults: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_messages: Option<u32>,
    pub(crate) max_result_bytes: Option<usize>,
    pub(crate) output_omitted: Vec<Cow<'static, str>>,
    /// The proto comment of the tool's service, shared by its tools; known for tools made
    /// from descriptors with source info.
    pub(crate) service_description: Option<Arc<str>>,
    /// The listed `_meta` object as JSON text (checked to be an object), made into a tree
    /// only when the tool is listed; `None` for a definition without `_meta`.
    pub(crate) meta: Option<Cow<'static, str>>,
    pub(crate) task_support: TaskSupport,
    pub(crate) confirm: Option<Unconfirmed>,
    /// OAuth scopes a call needs beyond those every request needs.
    pub(crate) required_scopes: Vec<Cow<'static, str>>,
    /// Wait for the `google.longrunning.Operation` the RPC returns: its `responseType` and
    /// `metadataType`.
    pub(crate) wait_for: Option<(String, Option<String>)>,
}

impl ToolInfo {
    /// A generated (or hand-written) definition, its `_meta` checked to be a JSON object.
    pub(crate) fn new(def: &ToolDef) -> Result<Self, Error> {
        let meta = if def.meta.trim().is_empty() {
            None
        } else {
            let invalid = |message: String| Error::InvalidMeta {
                tool: def.name.to_owned(),
                message,
            };
            if !is_json_object(def.meta).map_err(|e| invalid(e.to_string()))? {
                return Err(invalid("`_meta` must be a JSON object".to_owned()));
            }
            Some(Cow::Borrowed(def.meta))
        };
        Ok(Self {
            name: Cow::Borrowed(def.name),
            title: Cow::Borrowed(def.title),
            description: Cow::Borrowed(def.description),
            rpc_path: Cow::Borrowed(def.rpc_path),
            kind: def.kind,
            input_type: Cow::Borrowed(def.input_type),
            output_type: Cow::Borrowed(def.output_type),
            annotations: def.annotations,
            json_names: def.json_names,
            emit_defaults: def.emit_defaults,
            timeout: def.timeout,
            max_messages: def.max_messages,
            max_result_bytes: def.max_result_bytes,
            output_omitted: def
                .output_omitted
                .iter()
                .copied()
                .map(Cow::Borrowed)
                .collect(),
            service_description: None,
            meta,
            task_support: def.task_support,
            confirm: def.confirm,
            required_scopes: def
                .required_scopes
                .iter()
                .copied()
                .map(Cow::Borrowed)
                .collect(),
            wait_for: def.wait_for_operation.map(|response| {
                (
                    response.to_owned(),
                    def.operation_metadata_type.map(str::to_owned),
                )
            }),
        })
    }

    /// The listed `_meta` object, made from its text.
    pub(crate) fn meta_object(&self) -> Option<JsonObject> {
        // The text was checked to be a JSON object when the tool was made.
        serde_json::from_str(self.meta.as_deref()?).ok()
    }
}

/// The message type `type_name` of the tool `tool` in `pool`.
pub(crate) fn message(
    pool: &DescriptorPool,
    tool: &str,
    type_name: &str,
) -> Result<MessageDescriptor, Error> {
    pool.get_message_by_name(type_name)
        .ok_or_else(|| Error::UnknownMessage {
            tool: tool.to_owned(),
            type_name: type_name.to_owned(),
        })
}
