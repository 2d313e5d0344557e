//! A server without a task router (`McpServerBuilder::task_router`) runs no MCP tasks: it
//! declares no tasks capability in either task shape, answers every call inline, also to a
//! client that declared tasks, and refuses what only a task could answer (a call of a tool
//! that runs only as a task, revision 2025-11-25's task-augmented `tools/call`, the `tasks/*`
//! methods) with JSON-RPC -32601 saying so.

use test_kit::demo as common;

use common::{SLOW_TASK, TestResult, pb, raw_2025::Raw2025, start_backend};
use rmcp::{model::CallToolRequestParams, service::ServiceError};
use serde_json::{Value, json};
use tonic_mcp::{
    McpServer,
    codegen::{BoxTransport, TaskSupport, ToolDef, ToolSetBuilder},
};

/// `Slow` whose calls must be tasks.
static SLOW_REQUIRED: ToolDef = ToolDef {
    name: "SlowRequired",
    task_support: TaskSupport::Required,
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Slow","inputType":"demo.v1.SlowRequest","outputType":"demo.v1.SlowResponse","streaming":"unary","taskSupport":"required"}}"#,
    ..pb::item_service_mcp::SLOW
};

/// A server with a tool that may run as a task and one that must, and no task router.
async fn server() -> TestResult<(McpServer, common::Backend)> {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let mut slow = ToolSetBuilder::new(pb::MCP_FILE_DESCRIPTOR_SET, BoxTransport::new(channel))?;
    slow.add(&SLOW_TASK)?;
    slow.add(&SLOW_REQUIRED)?;
    let server = McpServer::builder("no-tasks", "0.1.0")
        .tool_set(slow.build())?
        .build();
    Ok((server, backend))
}

/// Asserts that `error` is JSON-RPC -32601 saying the server runs no MCP tasks.
fn assert_no_tasks(code: i64, message: &str, what: &str) {
    assert_eq!(code, -32601, "{what}: {message}");
    assert!(
        message.contains("this server runs no MCP tasks"),
        "{what}: {message}"
    );
}

#[tokio::test]
async fn calls_run_inline_and_a_tool_that_requires_tasks_is_refused() -> TestResult {
    let (server, _backend) = server().await?;
    let client = test_kit::connect_as(server, test_kit::client_config("no-tasks", true)).await?;
    let info = client.peer_info().ok_or("no server info")?;
    let declared = serde_json::to_value(&info.capabilities)?;
    assert!(
        declared
            .pointer("/extensions/io.modelcontextprotocol~1tasks")
            .is_none()
            && declared.get("tasks").is_none(),
        "{declared}"
    );
    // Past the inline wait of a server with tasks: here the result, however long it takes.
    let result = test_kit::call(&client, "SlowTask", json!({"sleep_ms": 2100})).await?;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let refused = client
        .call_tool(CallToolRequestParams::new("SlowRequired"))
        .await;
    let Err(ServiceError::McpError(error)) = refused else {
        return Err(format!("not refused: {refused:?}").into());
    };
    assert_no_tasks(i64::from(error.code.0), &error.message, "SlowRequired");
    assert!(
        error.message.contains("`SlowRequired`"),
        "{}",
        error.message
    );
    Ok(())
}

#[tokio::test]
async fn revision_2025_11_25_task_requests_are_refused() -> TestResult {
    let (server, _backend) = server().await?;
    let mut raw = Raw2025::connect(server.clone()).await?;
    let answer = |reply: &Value, what: &str| {
        let error = &reply["error"];
        assert_no_tasks(
            error["code"].as_i64().unwrap_or_default(),
            error["message"].as_str().unwrap_or_default(),
            what,
        );
    };
    let reply = raw.call_task("SlowTask", json!({"sleep_ms": 0})).await?;
    answer(&reply, "tools/call with task");
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let reply = raw.request(method, json!({"taskId": "t1"})).await?;
        answer(&reply, method);
    }
    answer(&raw.request("tasks/list", json!({})).await?, "tasks/list");
    // The initialize answer declared no tasks, and `tools/list` names no task support.
    let mut fresh = tokio::io::split(test_kit::serve_io_in_process(server));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
        "clientInfo": {"name": "raw", "version": "0"}}});
    tokio::io::AsyncWriteExt::write_all(&mut fresh.1, format!("{initialize}\n").as_bytes()).await?;
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(&mut fresh.0));
    let line = lines.next_line().await?.ok_or("no answer")?;
    let initialized: Value = serde_json::from_str(&line)?;
    assert_eq!(
        initialized["result"]["protocolVersion"], "2025-11-25",
        "{initialized}"
    );
    assert!(
        initialized["result"]["capabilities"].get("tasks").is_none(),
        "{initialized}"
    );
    let listed = raw.request("tools/list", json!({})).await?;
    let tools = listed["result"]["tools"].as_array().ok_or("no tools")?;
    assert!(
        tools.iter().all(|tool| tool.get("execution").is_none()),
        "{listed}"
    );
    Ok(())
}
