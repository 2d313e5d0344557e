//! The MCP `_meta` object a tool is listed with.

use serde_json::{Map, Value, json};

use super::ToolSpec;
use crate::meta::RPC_META_KEY;

impl ToolSpec {
    /// The tool's MCP `_meta` object:
    ///
    /// ```json
    /// {"protoc-gen-rust-mcp/rpc": {
    ///   "path": "/demo.v1.TaskService/GetTask",
    ///   "inputType": "demo.v1.GetTaskRequest",
    ///   "outputType": "demo.v1.Task",
    ///   "streaming": "unary",
    ///   "taskSupport": "forbidden",
    ///   "category": "tasks",
    ///   "requiredScopes": ["tasks.write"],
    ///   "confirm": {"unconfirmed": "refuse"},
    ///   "longRunning": {
    ///     "responseType": "demo.v1.ArchiveTasksResponse",
    ///     "metadataType": "demo.v1.ArchiveTasksMetadata",
    ///     "wait": true
    ///   }
    /// }}
    /// ```
    ///
    /// `category`, `requiredScopes` and `confirm` are present only when set, `longRunning` only for an RPC that
    /// returns a `google.longrunning.Operation` with `operation_info` (`metadataType` when the
    /// descriptors define it; `wait` tells whether the call waits for the operation).
    pub fn meta(&self) -> Value {
        let tool = self;
        let mut rpc = Map::new();
        rpc.insert("path".to_owned(), json!(tool.rpc_path));
        rpc.insert("inputType".to_owned(), json!(tool.input_type));
        rpc.insert("outputType".to_owned(), json!(tool.output_type));
        rpc.insert("streaming".to_owned(), json!(tool.kind.as_str()));
        rpc.insert("taskSupport".to_owned(), json!(tool.task_support.as_str()));
        if let Some(category) = &tool.category {
            rpc.insert("category".to_owned(), json!(category));
        }
        if !tool.required_scopes.is_empty() {
            rpc.insert("requiredScopes".to_owned(), json!(tool.required_scopes));
        }
        if let Some(unconfirmed) = tool.confirm {
            rpc.insert(
                "confirm".to_owned(),
                json!({ "unconfirmed": unconfirmed.as_str() }),
            );
        }
        if let Some(lro) = &tool.long_running {
            let mut long_running = Map::new();
            long_running.insert("responseType".to_owned(), json!(lro.response_type));
            if let Some(metadata) = &lro.metadata_type {
                long_running.insert("metadataType".to_owned(), json!(metadata));
            }
            long_running.insert("wait".to_owned(), json!(lro.wait));
            rpc.insert("longRunning".to_owned(), Value::Object(long_running));
        }
        let mut meta = Map::new();
        meta.insert(RPC_META_KEY.to_owned(), Value::Object(rpc));
        Value::Object(meta)
    }
}
