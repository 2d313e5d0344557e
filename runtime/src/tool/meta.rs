//! Tool and result `_meta`: the object listed with every tool (the proto identity the plugin
//! writes) beside the typed serving choices the runtime follows, and the gRPC status every
//! result carries.
//!
//! Keys use the prefix `protoc-gen-rust-mcp/` (MCP reserves only prefixes whose second label is
//! `modelcontextprotocol` or `mcp`). The tool object is written by the plugin (and by
//! `tonic-mcp-schema` for tools built at run time) and listed as it is; the runtime does not
//! read its serving choices back from it.

use std::{borrow::Cow, sync::LazyLock};

use rmcp::model::{JsonObject, MetaObject};
use serde_json::{Value, json};
use tonic::Code;
use tonic_mcp_schema::{TaskSupport, ToolSpec};

use crate::{
    error::Error,
    grpc::status::code_name,
    tool::def::{ToolDef, is_json_object},
};

pub(crate) use tonic_mcp_schema::meta::Unconfirmed;
pub use tonic_mcp_schema::meta::{RPC_META_KEY, STATUS_META_KEY};

/// A tool's `_meta` and the serving choices it records.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolMeta {
    /// The listed object as JSON text (checked to be an object), made into a tree only when
    /// the tool is listed: the text of a generated tool is its `'static` definition. `None` for
    /// a definition without `_meta`.
    text: Option<Cow<'static, str>>,
    /// Whether calls may, or must, run as tasks.
    pub(crate) task_support: TaskSupport,
    /// Ask the user before calling.
    pub(crate) confirm: Option<Unconfirmed>,
    /// OAuth scopes a call needs beyond those every request needs.
    pub(crate) required_scopes: Vec<Cow<'static, str>>,
    /// Wait for the `google.longrunning.Operation` the RPC returns: its `responseType` and
    /// `metadataType`.
    pub(crate) wait_for: Option<(String, Option<String>)>,
}

impl ToolMeta {
    /// A definition's `_meta` JSON (empty: none), listed as it is, and its typed serving
    /// choices.
    pub(crate) fn new(def: &ToolDef) -> Result<Self, Error> {
        let text = if def.meta.trim().is_empty() {
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
            text,
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

    /// A tool built from descriptors at run time: its `_meta` object as the schema crate
    /// makes it, and the serving choices it was made from.
    pub(crate) fn of_spec(spec: &ToolSpec) -> Self {
        let meta = spec.meta();
        let text = meta
            .is_object()
            .then(|| serde_json::to_string(&meta).ok())
            .flatten()
            .map(Cow::Owned);
        Self {
            text,
            task_support: spec.task_support,
            confirm: spec.confirm,
            required_scopes: spec
                .required_scopes
                .iter()
                .cloned()
                .map(Cow::Owned)
                .collect(),
            wait_for: spec
                .long_running
                .as_ref()
                .filter(|lro| lro.wait)
                .map(|lro| (lro.response_type.clone(), lro.metadata_type.clone())),
        }
    }

    /// The listed object, made from its text.
    pub(crate) fn object(&self) -> Option<JsonObject> {
        // The text was checked to be a JSON object when the tool was made.
        serde_json::from_str(self.text.as_deref()?).ok()
    }
}

/// The `_meta` of a result with `code`; `local` when the backend was not reached.
pub(crate) fn status_meta(code: Code, local: bool) -> MetaObject {
    // Nearly every result is a backend's OK: made once, copied for each.
    static OK: LazyLock<MetaObject> = LazyLock::new(|| make_status_meta(Code::Ok, false));
    if code == Code::Ok && !local {
        return OK.clone();
    }
    make_status_meta(code, local)
}

fn make_status_meta(code: Code, local: bool) -> MetaObject {
    let mut status = json!({ "code": code as i32, "name": code_name(code) });
    if local {
        status["local"] = Value::Bool(true);
    }
    MetaObject(JsonObject::from_iter([(
        STATUS_META_KEY.to_owned(),
        status,
    )]))
}
