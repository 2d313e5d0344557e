//! Tool sets: in-process services, composition, prefixes, per-tool settings, and
//! registration errors.

use test_kit::demo as common;

use std::time::{Duration, Instant};

use common::{Backend, TestResult, call_err, call_ok, connect, pb};
use pb::{item_service_mcp, item_service_server::ItemServiceServer};
use serde_json::json;
use tonic_mcp::{
    Error, McpServer, ToolSet,
    codegen::{BoxTransport, RpcKind, ToolDef, ToolSetBuilder},
};

#[tokio::test]
async fn from_service_calls_the_implementation_in_process() -> TestResult {
    let backend = Backend::default();
    let tools = item_service_mcp::from_service(backend.clone())?;
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    let item = call_ok(
        &client,
        "ItemService_GetItem",
        json!({"id": "3", "token": "AAE"}),
    )
    .await?;
    assert_eq!(item["payload"], json!("AAE="));
    let summary = call_ok(
        &client,
        "ItemService_UploadItems",
        json!({"messages": [{"id": "4"}]}),
    )
    .await?;
    assert_eq!(summary, json!({"count": 1, "ids": ["4"]}));
    let listed = call_ok(&client, "ItemService_ListItems", json!({"count": 7})).await?;
    assert_eq!(listed["truncated"], json!(true));
    let text = call_err(&client, "ItemService_GetItem", json!({"id": "404"})).await?;
    assert_eq!(text, "gRPC error NOT_FOUND: item 404 does not exist");

    // Cancellation drops the handler future in-process too.
    common::drop_slow_call(&client, Duration::from_millis(100)).await;
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(3))
        .await;
    Ok(())
}

/// `ItemService_Slow` with its own, shorter deadline.
static SLOW_FAST: ToolDef = ToolDef {
    name: "Slow_Fast",
    timeout: Some(Duration::from_millis(150)),
    ..item_service_mcp::SLOW
};

#[tokio::test]
async fn a_tool_deadline_overrides_the_set_deadline() -> TestResult {
    let backend = Backend::default();
    let transport = BoxTransport::new(ItemServiceServer::new(backend.clone()));
    let mut builder = ToolSetBuilder::new(pb::MCP_FILE_DESCRIPTOR_SET, transport)?;
    builder.add(&SLOW_FAST)?;
    let tools = builder.build().with_timeout(Duration::from_secs(20));
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    let started = Instant::now();
    let text = call_err(&client, "Slow_Fast", json!({"sleep_ms": 5_000})).await?;
    assert_eq!(
        text,
        "gRPC error DEADLINE_EXCEEDED: the call did not complete within its deadline of 150 ms"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(2))
        .await;
    Ok(())
}

#[tokio::test]
async fn prefixes_compose_and_let_two_sets_share_a_server() -> TestResult {
    let first = item_service_mcp::from_service(Backend::default())?;
    let second = item_service_mcp::from_service(Backend::default())?;
    let duplicate = McpServer::builder("demo", "0.1.0")
        .tool_set(first.clone())?
        .tool_set(second.clone());
    let Err(error) = duplicate else {
        return Err("duplicate names must be rejected".into());
    };
    assert!(matches!(error, Error::DuplicateTool { .. }));
    assert_eq!(
        error.to_string(),
        "duplicate tool name `ItemService_After`: used by both /demo.v1.ItemService/After and /demo.v1.ItemService/After; give one a prefix with `ToolSet::with_prefix`"
    );

    // A generated set registers `TOOLS`, which is sorted by name.
    let second = second.with_prefix("b")?.with_prefix("staging")?;
    assert_eq!(second.names().next(), Some("staging_b_ItemService_After"));
    let server = McpServer::builder("demo", "0.1.0")
        .tool_set(first)?
        .tool_set(second)?
        .build();
    assert_eq!(server.tools().len(), 14);
    let (client, _) = connect(server).await?;
    let item = call_ok(&client, "staging_b_ItemService_GetItem", json!({"id": "1"})).await?;
    assert_eq!(item["id"], json!("1"));
    Ok(())
}

#[test]
fn a_prefix_that_makes_a_name_too_long_is_an_error() -> TestResult {
    let tools = item_service_mcp::from_service(Backend::default())?;
    let prefix = "p".repeat(45);
    let Err(error) = tools.with_prefix(&prefix) else {
        return Err("a 64+ character name must be rejected".into());
    };
    assert!(
        error
            .to_string()
            .contains("characters; tool names are at most 64"),
        "{error}"
    );
    let Err(error) = ToolSet::new()
        .with_prefix("ok")
        .and_then(|_| item_service_mcp::from_service(Backend::default())?.with_prefix("1bad"))
    else {
        return Err("a name starting with a digit must be rejected".into());
    };
    assert!(
        error.to_string().contains("must start with a letter"),
        "{error}"
    );
    Ok(())
}

static WRONG_TYPE: ToolDef = ToolDef {
    name: "Wrong",
    input_type: "demo.v1.Missing",
    ..item_service_mcp::GET_ITEM
};

static BAD_SCHEMA: ToolDef = ToolDef {
    name: "Bad",
    input_schema: r#"{"type": 5}"#,
    ..item_service_mcp::GET_ITEM
};

static BAD_META: ToolDef = ToolDef {
    name: "BadMeta",
    meta: r#"["protoc-gen-rust-mcp/rpc"]"#,
    ..item_service_mcp::GET_ITEM
};

#[test]
fn listed_tools_carry_their_rpc_identity_in_meta() -> TestResult {
    let tools = item_service_mcp::from_service(Backend::default())?.with_prefix("p")?;
    let listed = tools.tools();
    let list_items = listed
        .iter()
        .find(|tool| tool.name == "p_ItemService_ListItems")
        .ok_or("ListItems is listed")?;
    let meta = serde_json::to_value(&list_items.meta)?;
    assert_eq!(
        meta,
        json!({tonic_mcp::RPC_META_KEY: {
            "path": "/demo.v1.ItemService/ListItems",
            "inputType": "demo.v1.ListItemsRequest",
            "outputType": "demo.v1.Item",
            "streaming": "server_streaming",
            "taskSupport": "optional",
        }})
    );
    for tool in &listed {
        let meta = tool.meta.as_ref().ok_or("every tool has _meta")?;
        assert!(
            meta.0.contains_key(tonic_mcp::RPC_META_KEY),
            "{}",
            tool.name
        );
    }
    Ok(())
}

static NOT_AN_OBJECT: ToolDef = ToolDef {
    name: "NotAnObject",
    output_schema: "[]",
    ..item_service_mcp::GET_ITEM
};

static BAD_PATH: ToolDef = ToolDef {
    name: "BadPath",
    rpc_path: "demo.v1.ItemService/GetItem",
    ..item_service_mcp::GET_ITEM
};

/// `ItemService_GetItem` declared as server-streaming: the call follows the definition.
static GET_ITEM_AS_STREAM: ToolDef = ToolDef {
    name: "GetItem_AsStream",
    kind: RpcKind::ServerStreaming,
    output_schema: r#"{"type": "object"}"#,
    ..item_service_mcp::GET_ITEM
};

#[test]
fn registration_errors_name_the_tool_and_what_is_wrong() -> TestResult {
    let transport = BoxTransport::new(ItemServiceServer::new(Backend::default()));
    let mut builder = ToolSetBuilder::new(pb::MCP_FILE_DESCRIPTOR_SET, transport)?;

    // Each malformed definition is refused naming the tool and what is wrong: the whole
    // message, or how it starts where the rest is the JSON Schema compiler's own words.
    let refused: [(&ToolDef, &str, bool); 5] = [
        (
            &WRONG_TYPE,
            "tool `Wrong`: message type `demo.v1.Missing` is not in the file descriptor set",
            true,
        ),
        (&BAD_SCHEMA, "tool `Bad`: invalid input schema", false),
        (
            &NOT_AN_OBJECT,
            "tool `NotAnObject`: invalid output schema: a tool schema must be a JSON object",
            true,
        ),
        (
            &BAD_PATH,
            "tool `BadPath`: `demo.v1.ItemService/GetItem` is not a gRPC path of the form /package.Service/Method",
            true,
        ),
        (
            &BAD_META,
            "tool `BadMeta`: invalid `_meta`: `_meta` must be a JSON object",
            true,
        ),
    ];
    for (def, expected, whole) in refused {
        let Err(error) = builder.add(def) else {
            return Err(format!("`{}` must be rejected", def.name).into());
        };
        if whole {
            assert_eq!(error.to_string(), expected);
        } else {
            assert!(error.to_string().starts_with(expected), "{error}");
        }
    }

    builder.add(&item_service_mcp::GET_ITEM)?;
    let Err(error) = builder.add(&item_service_mcp::GET_ITEM) else {
        return Err("a name registered twice must be rejected".into());
    };
    assert!(matches!(error, Error::DuplicateTool { .. }));
    assert_eq!(builder.build().len(), 1);

    let transport = BoxTransport::new(ItemServiceServer::new(Backend::default()));
    let Err(error) = ToolSetBuilder::new(b"not a descriptor set", transport) else {
        return Err("garbage descriptors must be rejected".into());
    };
    assert!(matches!(error, Error::DescriptorSet(_)));
    Ok(())
}

#[tokio::test]
async fn the_rpc_kind_of_the_definition_decides_how_the_call_is_made() -> TestResult {
    // A unary method called as server-streaming still answers: gRPC framing is the same, and
    // the one response comes back as the only message of the stream.
    let transport = BoxTransport::new(ItemServiceServer::new(Backend::default()));
    let mut builder = ToolSetBuilder::new(pb::MCP_FILE_DESCRIPTOR_SET, transport)?;
    builder.add(&GET_ITEM_AS_STREAM)?;
    let server = McpServer::builder("demo", "0.1.0")
        .tool_set(builder.build())?
        .build();
    let (client, _) = connect(server).await?;
    let streamed = call_ok(&client, "GetItem_AsStream", json!({"id": "5"})).await?;
    assert_eq!(streamed["messages"][0]["id"], json!("5"));
    assert_eq!(streamed["messages"].as_array().map(Vec::len), Some(1));
    Ok(())
}

#[tokio::test]
async fn a_generated_set_reports_a_broken_schema_on_the_tools_first_call() -> TestResult {
    // `codegen::tool_set` trusts the plugin's schemas and compiles each on first use.
    static DEFS: [ToolDef; 2] = [BAD_SCHEMA, item_service_mcp::GET_ITEM];
    let transport = BoxTransport::new(ItemServiceServer::new(Backend::default()));
    let tools = tonic_mcp::codegen::tool_set(&pb::MCP_DESCRIPTORS, &DEFS, transport)?;
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    let text = call_err(&client, "Bad", json!({"id": "1"})).await?;
    assert!(
        text.starts_with("tool `Bad` cannot be called: its input schema does not compile: "),
        "{text}"
    );
    let item = call_ok(&client, "ItemService_GetItem", json!({"id": "1"})).await?;
    assert_eq!(item["id"], json!("1"));
    Ok(())
}
