// Hand-written in exactly the shape protoc-gen-rust-mcp generates, so the runtime is tested
// against the contract before the plugin's output exists. The only deviation: the descriptor
// set is `include_bytes!` of the checked-in file rather than an inline byte string.

/// Encoded `FileDescriptorSet` (transitive closure, no source info) used by the MCP tools of this package.
pub const MCP_FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("../../gen/descriptor.bin");
/// [`MCP_FILE_DESCRIPTOR_SET`], read once per process by the first tool set of this
/// package.
pub static MCP_DESCRIPTORS: ::tonic_mcp::codegen::Descriptors =
    ::tonic_mcp::codegen::Descriptors::new(MCP_FILE_DESCRIPTOR_SET);
/// MCP tools for `demo.v1.ItemService`.
pub mod item_service_mcp {
    /// `ItemService_GetItem`
    pub const GET_ITEM: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_GetItem",
        title: "Get Item",
        description: "Fetch one item.",
        rpc_path: "/demo.v1.ItemService/GetItem",
        kind: ::tonic_mcp::codegen::RpcKind::Unary,
        input_type: "demo.v1.GetItemRequest",
        output_type: "demo.v1.Item",
        input_schema: r##"{
  "type": "object",
  "properties": {
    "id": {"type": "string", "pattern": "^-?[0-9]+$"},
    "filter": {
      "description": "Exactly one of: author_id, range.",
      "oneOf": [
        {"type": "object", "additionalProperties": false, "required": ["case", "value"],
         "properties": {"case": {"const": "author_id"}, "value": {"type": "string", "pattern": "^-?[0-9]+$"}}},
        {"type": "object", "additionalProperties": false, "required": ["case", "value"],
         "properties": {"case": {"const": "range"}, "value": {
           "type": "object", "additionalProperties": false,
           "properties": {"start": {"type": "string", "format": "date-time"}, "end": {"type": "string", "format": "date-time"}}}}}
      ]
    },
    "token": {"type": "string", "contentEncoding": "base64"},
    "note": {"type": "string"}
  },
  "additionalProperties": false
}"##,
        output_schema: r##"{
  "type": "object",
  "properties": {
    "id": {"type": "string", "pattern": "^-?[0-9]+$"},
    "name": {"type": "string"},
    "color": {"type": "string", "enum": ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"]},
    "payload": {"type": "string", "contentEncoding": "base64"},
    "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
    "big": {"type": "string", "pattern": "^[0-9]+$"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "owner": {
      "oneOf": [
        {"type": "object", "additionalProperties": false, "required": ["case", "value"],
         "properties": {"case": {"const": "user"}, "value": {"type": "string"}}},
        {"type": "object", "additionalProperties": false, "required": ["case", "value"],
         "properties": {"case": {"const": "team_id"}, "value": {"type": "string", "pattern": "^-?[0-9]+$"}}}
      ]
    }
  },
  "additionalProperties": false
}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: Some(true),
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        json_names: false,
        emit_defaults: false,
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Forbidden,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/GetItem","inputType":"demo.v1.GetItemRequest","outputType":"demo.v1.Item","streaming":"unary","taskSupport":"forbidden"}}"#,
    };
    /// `ItemService_ListItems`
    pub const LIST_ITEMS: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_ListItems",
        title: "List Items",
        description: "Stream items.",
        rpc_path: "/demo.v1.ItemService/ListItems",
        kind: ::tonic_mcp::codegen::RpcKind::ServerStreaming,
        input_type: "demo.v1.ListItemsRequest",
        output_type: "demo.v1.Item",
        input_schema: r##"{
  "type": "object",
  "properties": {
    "count": {"type": "integer"},
    "fail_after": {"type": "integer", "description": "Fail with ABORTED after this many messages (0: never)."},
    "delay_ms": {"type": "integer"}
  },
  "additionalProperties": false
}"##,
        output_schema: r##"{
  "type": "object",
  "properties": {
    "messages": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "pattern": "^-?[0-9]+$"},
        "name": {"type": "string"},
        "color": {"type": "string", "enum": ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"]},
        "payload": {"type": "string", "contentEncoding": "base64"},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "big": {"type": "string", "pattern": "^[0-9]+$"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "owner": {"oneOf": [
          {"type": "object", "additionalProperties": false, "required": ["case", "value"],
           "properties": {"case": {"const": "user"}, "value": {"type": "string"}}},
          {"type": "object", "additionalProperties": false, "required": ["case", "value"],
           "properties": {"case": {"const": "team_id"}, "value": {"type": "string", "pattern": "^-?[0-9]+$"}}}
        ]}
      },
      "additionalProperties": false
    }},
    "truncated": {"type": "boolean"}
  },
  "required": ["messages"],
  "additionalProperties": false
}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: Some(true),
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        json_names: false,
        emit_defaults: false,
        timeout: None,
        max_messages: Some(5),
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Optional,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/ListItems","inputType":"demo.v1.ListItemsRequest","outputType":"demo.v1.Item","streaming":"server_streaming","taskSupport":"optional"}}"#,
    };
    /// `ItemService_UploadItems`
    pub const UPLOAD_ITEMS: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_UploadItems",
        title: "Upload Items",
        description: "Upload a batch of items.",
        rpc_path: "/demo.v1.ItemService/UploadItems",
        kind: ::tonic_mcp::codegen::RpcKind::ClientStreaming,
        input_type: "demo.v1.Item",
        output_type: "demo.v1.UploadSummary",
        input_schema: r##"{
  "type": "object",
  "properties": {
    "messages": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string", "pattern": "^-?[0-9]+$"},
        "name": {"type": "string"},
        "color": {"type": "string", "enum": ["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"]},
        "payload": {"type": "string", "contentEncoding": "base64"},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "big": {"type": "string", "pattern": "^[0-9]+$"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "owner": {"oneOf": [
          {"type": "object", "additionalProperties": false, "required": ["case", "value"],
           "properties": {"case": {"const": "user"}, "value": {"type": "string"}}},
          {"type": "object", "additionalProperties": false, "required": ["case", "value"],
           "properties": {"case": {"const": "team_id"}, "value": {"type": "string", "pattern": "^-?[0-9]+$"}}}
        ]}
      },
      "additionalProperties": false
    }}
  },
  "required": ["messages"],
  "additionalProperties": false
}"##,
        output_schema: r##"{
  "type": "object",
  "properties": {
    "count": {"type": "integer"},
    "ids": {"type": "array", "items": {"type": "string", "pattern": "^-?[0-9]+$"}}
  },
  "additionalProperties": false
}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        json_names: false,
        emit_defaults: false,
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Forbidden,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/UploadItems","inputType":"demo.v1.Item","outputType":"demo.v1.UploadSummary","streaming":"client_streaming","taskSupport":"forbidden"}}"#,
    };
    /// `ItemService_Chat`
    pub const CHAT: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_Chat",
        title: "Chat",
        description: "Echo chat messages back.",
        rpc_path: "/demo.v1.ItemService/Chat",
        kind: ::tonic_mcp::codegen::RpcKind::Bidi,
        input_type: "demo.v1.ChatMessage",
        output_type: "demo.v1.ChatMessage",
        input_schema: r##"{
  "type": "object",
  "properties": {
    "messages": {"type": "array", "items": {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false}}
  },
  "required": ["messages"],
  "additionalProperties": false
}"##,
        output_schema: r##"{
  "type": "object",
  "properties": {
    "messages": {"type": "array", "items": {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false}},
    "truncated": {"type": "boolean"}
  },
  "required": ["messages"],
  "additionalProperties": false
}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        json_names: false,
        emit_defaults: false,
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Optional,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Chat","inputType":"demo.v1.ChatMessage","outputType":"demo.v1.ChatMessage","streaming":"bidi_streaming","taskSupport":"optional"}}"#,
    };
    /// `ItemService_Echo` (schema covers a subset of `Everything`, with JSON names).
    pub const ECHO: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_Echo",
        title: "Echo",
        description: "Echo a message that uses every mapping.",
        rpc_path: "/demo.v1.ItemService/Echo",
        kind: ::tonic_mcp::codegen::RpcKind::Unary,
        input_type: "demo.v1.Everything",
        output_type: "demo.v1.Everything",
        input_schema: r##"{
  "type": "object",
  "properties": {
    "i64": {"type": "string", "pattern": "^-?[0-9]+$"},
    "data": {"type": "string", "contentEncoding": "base64"},
    "byId": {"type": "object", "propertyNames": {"pattern": "^-?[0-9]+$"}, "additionalProperties": {"type": "string"}},
    "tree": {"$ref": "#/$defs/demo.v1.TreeNode"},
    "any": {"type": "object", "properties": {"type_url": {"type": "string"}, "value": {}}, "required": ["type_url"], "additionalProperties": false},
    "when": {"type": "string", "format": "date-time"},
    "dyn": {"description": "Any JSON value."},
    "choice": {"oneOf": [
      {"type": "object", "additionalProperties": false, "required": ["case", "value"],
       "properties": {"case": {"const": "name"}, "value": {"type": "string"}}},
      {"type": "object", "additionalProperties": false, "required": ["case", "value"],
       "properties": {"case": {"const": "node"}, "value": {"$ref": "#/$defs/demo.v1.TreeNode"}}},
      {"type": "object", "additionalProperties": false, "required": ["case", "value"],
       "properties": {"case": {"const": "at"}, "value": {"type": "string", "format": "date-time"}}}
    ]},
    "snakeCaseField": {"type": "string"}
  },
  "additionalProperties": false,
  "$defs": {
    "demo.v1.TreeNode": {
      "type": "object",
      "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/demo.v1.TreeNode"}}
      },
      "additionalProperties": false
    }
  }
}"##,
        output_schema: r##"{
  "type": "object",
  "properties": {
    "i64": {"type": "string", "pattern": "^-?[0-9]+$"},
    "data": {"type": "string", "contentEncoding": "base64"},
    "byId": {"type": "object", "propertyNames": {"pattern": "^-?[0-9]+$"}, "additionalProperties": {"type": "string"}},
    "tree": {"$ref": "#/$defs/demo.v1.TreeNode"},
    "any": {"type": "object", "properties": {"type_url": {"type": "string"}, "value": {}}, "required": ["type_url"], "additionalProperties": false},
    "when": {"type": "string", "format": "date-time"},
    "dyn": {"description": "Any JSON value."},
    "choice": {"oneOf": [
      {"type": "object", "additionalProperties": false, "required": ["case", "value"],
       "properties": {"case": {"const": "name"}, "value": {"type": "string"}}},
      {"type": "object", "additionalProperties": false, "required": ["case", "value"],
       "properties": {"case": {"const": "node"}, "value": {"$ref": "#/$defs/demo.v1.TreeNode"}}},
      {"type": "object", "additionalProperties": false, "required": ["case", "value"],
       "properties": {"case": {"const": "at"}, "value": {"type": "string", "format": "date-time"}}}
    ]},
    "snakeCaseField": {"type": "string"}
  },
  "additionalProperties": false,
  "$defs": {
    "demo.v1.TreeNode": {
      "type": "object",
      "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/demo.v1.TreeNode"}}
      },
      "additionalProperties": false
    }
  }
}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        },
        json_names: true,
        emit_defaults: false,
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Forbidden,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Echo","inputType":"demo.v1.Everything","outputType":"demo.v1.Everything","streaming":"unary","taskSupport":"forbidden"}}"#,
    };
    /// `ItemService_After`
    pub const AFTER: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_After",
        title: "After",
        description: "The time a duration after the Unix epoch: well-known types at the tool root.",
        rpc_path: "/demo.v1.ItemService/After",
        kind: ::tonic_mcp::codegen::RpcKind::Unary,
        input_type: "google.protobuf.Duration",
        output_type: "google.protobuf.Timestamp",
        input_schema: r##"{"type": "object", "properties": {"value": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,9})?s$"}}, "required": ["value"], "additionalProperties": false}"##,
        output_schema: r##"{"type": "object", "properties": {"value": {"type": "string", "format": "date-time"}}, "required": ["value"], "additionalProperties": false}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: Some(true),
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        json_names: false,
        emit_defaults: false,
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Forbidden,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/After","inputType":"google.protobuf.Duration","outputType":"google.protobuf.Timestamp","streaming":"unary","taskSupport":"forbidden"}}"#,
    };
    /// `ItemService_Slow`
    pub const SLOW: ::tonic_mcp::codegen::ToolDef = ::tonic_mcp::codegen::ToolDef {
        name: "ItemService_Slow",
        title: "Slow",
        description: "Take a while.",
        rpc_path: "/demo.v1.ItemService/Slow",
        kind: ::tonic_mcp::codegen::RpcKind::Unary,
        input_type: "demo.v1.SlowRequest",
        output_type: "demo.v1.SlowResponse",
        input_schema: r##"{"type": "object", "properties": {"sleep_ms": {"type": "integer"}}, "additionalProperties": false}"##,
        output_schema: r##"{"type": "object", "properties": {"slept_ms": {"type": "integer"}}, "additionalProperties": false}"##,
        annotations: ::tonic_mcp::codegen::ToolAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        },
        json_names: false,
        emit_defaults: false,
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: &[],
        task_support: ::tonic_mcp::codegen::TaskSupport::Forbidden,
        confirm: None,
        required_scopes: &[],
        wait_for_operation: None,
        operation_metadata_type: None,
        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Slow","inputType":"demo.v1.SlowRequest","outputType":"demo.v1.SlowResponse","streaming":"unary","taskSupport":"forbidden"}}"#,
    };
    /// Every tool of the service, in `tools/list` order.
    pub const TOOLS: &[::tonic_mcp::codegen::ToolDef] =
        &[AFTER, CHAT, ECHO, GET_ITEM, LIST_ITEMS, SLOW, UPLOAD_ITEMS];

    /// Tools that forward each call over a tonic transport.
    pub fn from_channel<T: ::tonic_mcp::codegen::Transport>(
        transport: T,
    ) -> ::core::result::Result<::tonic_mcp::ToolSet, ::tonic_mcp::Error> {
        ::tonic_mcp::codegen::tool_set(
            &super::MCP_DESCRIPTORS,
            TOOLS,
            ::tonic_mcp::codegen::BoxTransport::new(transport),
        )
    }
    /// Tools served by an in-process implementation of the tonic server trait (no network).
    pub fn from_service<S: super::item_service_server::ItemService>(
        service: S,
    ) -> ::core::result::Result<::tonic_mcp::ToolSet, ::tonic_mcp::Error> {
        from_channel(super::item_service_server::ItemServiceServer::new(service))
    }
}
