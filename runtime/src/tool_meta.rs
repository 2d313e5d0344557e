//! Tool and result `_meta`: the proto identity the plugin lists with every tool, the serving
//! choices read back from it, and the gRPC status every result carries.
//!
//! Keys use the prefix `protoc-gen-rust-mcp/` (MCP reserves only prefixes whose second label is
//! `modelcontextprotocol` or `mcp`). The tool object is written by the plugin (and by
//! `tonic-mcp-schema` for tools built at run time); this module only reads what the runtime
//! acts on.

use rmcp::model::{JsonObject, MetaObject};
use serde_json::{Value, json};
use tonic::Code;

use crate::{error::Error, status::code_name};

pub(crate) use tonic_mcp_schema::meta::Unconfirmed;
pub use tonic_mcp_schema::meta::{RPC_META_KEY, STATUS_META_KEY};

/// A tool's `_meta` and the serving choices it records.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolMeta {
    /// The listed object; `None` for a definition without `_meta`.
    pub(crate) object: Option<JsonObject>,
    /// Calls may run as tasks.
    pub(crate) tasks: bool,
    /// Ask the user before calling.
    pub(crate) confirm: Option<Unconfirmed>,
    /// Wait for the `google.longrunning.Operation` the RPC returns: its `responseType` and
    /// `metadataType`.
    pub(crate) wait_for: Option<(String, Option<String>)>,
}

impl ToolMeta {
    /// Parses a definition's `_meta` JSON (empty: none).
    pub(crate) fn parse(tool: &str, text: &str) -> Result<Self, Error> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let invalid = |message: String| Error::InvalidMeta {
            tool: tool.to_owned(),
            message,
        };
        let value = serde_json::from_str::<Value>(text).map_err(|e| invalid(e.to_string()))?;
        Self::from_value(tool, value)
    }

    /// Reads a tool's `_meta` object, as `tonic-mcp-schema` makes it.
    pub(crate) fn from_value(tool: &str, value: Value) -> Result<Self, Error> {
        let invalid = |message: String| Error::InvalidMeta {
            tool: tool.to_owned(),
            message,
        };
        let Value::Object(object) = value else {
            return Err(invalid("`_meta` must be a JSON object".to_owned()));
        };
        let rpc = object.get(RPC_META_KEY).and_then(Value::as_object);
        let text_of = |key: &str| rpc.and_then(|rpc| rpc.get(key)).and_then(Value::as_str);
        let tasks = match text_of("taskSupport") {
            None | Some("forbidden") => false,
            Some("optional") => true,
            Some(other) => return Err(invalid(format!("unknown taskSupport `{other}`"))),
        };
        let confirm = match rpc.and_then(|rpc| rpc.get("confirm")) {
            None => None,
            Some(confirm) => match confirm.get("unconfirmed").and_then(Value::as_str) {
                None | Some("refuse") => Some(Unconfirmed::Refuse),
                Some("proceed") => Some(Unconfirmed::Proceed),
                Some(other) => return Err(invalid(format!("unknown unconfirmed `{other}`"))),
            },
        };
        let wait_for = match rpc.and_then(|rpc| rpc.get("longRunning")) {
            None => None,
            Some(lro) => {
                let text = |key: &str| lro.get(key).and_then(Value::as_str).map(str::to_owned);
                match lro.get("wait").and_then(Value::as_bool) {
                    Some(true) => Some((
                        text("responseType").ok_or_else(|| {
                            invalid("`longRunning` has no `responseType`".to_owned())
                        })?,
                        text("metadataType"),
                    )),
                    _ => None,
                }
            }
        };
        Ok(Self {
            object: Some(object),
            tasks,
            confirm,
            wait_for,
        })
    }
}

/// The `_meta` of a result with `code`; `local` when the backend was not reached.
pub(crate) fn status_meta(code: Code, local: bool) -> MetaObject {
    let mut status = json!({ "code": code as i32, "name": code_name(code) });
    if local && let Value::Object(status) = &mut status {
        status.insert("local".to_owned(), Value::Bool(true));
    }
    let mut meta = MetaObject::new();
    meta.0.insert(STATUS_META_KEY.to_owned(), status);
    meta
}
