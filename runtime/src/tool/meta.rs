//! The `_meta` keys, and the gRPC status every result carries under one of them.
//!
//! Keys use the prefix `protoc-gen-rust-mcp/` (MCP reserves only prefixes whose second label is
//! `modelcontextprotocol` or `mcp`). A tool's object is written by the plugin (and by
//! `tonic-mcp-schema` for tools built at run time) and listed as it is
//! (`ToolInfo::meta`).

use std::sync::LazyLock;

use rmcp::model::{JsonObject, MetaObject};
use serde_json::{Value, json};
use tonic::Code;

use crate::grpc::status::code_name;

pub use tonic_mcp_schema::meta::{RPC_META_KEY, STATUS_META_KEY};

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
