//! Task-augmented tool calls (MCP tasks extension) with rmcp's client: started, polled with
//! progress in the status message, fetched, cancelled with the backend observing the cancel,
//! expired after the time-to-live, and plain results for tools or clients without tasks.

mod common;

use std::time::Duration;

use common::{Backend, TestResult, pb, start_backend, status, text};
use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, CreateTaskResult,
        GetTaskParams, TaskPayload, TaskStatus,
    },
    service::{RoleClient, RunningService},
};
use serde_json::{Value, json};
use tonic_mcp::{
    McpServer,
    codegen::{BoxTransport, TaskSupport, ToolDef, ToolSetBuilder},
};

type TaskClient = RunningService<RoleClient, ClientConfig>;

/// `Slow` with tasks allowed, as `task_support: TASK_SUPPORT_OPTIONAL` makes it.
static SLOW_TASK: ToolDef = ToolDef {
    name: "SlowTask",
    task_support: TaskSupport::Optional,
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Slow","inputType":"demo.v1.SlowRequest","outputType":"demo.v1.SlowResponse","streaming":"unary","taskSupport":"optional"}}"#,
    ..pb::item_service_mcp::SLOW
};

/// `Slow` whose calls must be tasks, as `task_support: TASK_SUPPORT_REQUIRED` makes it.
static SLOW_REQUIRED: ToolDef = ToolDef {
    name: "SlowRequired",
    task_support: TaskSupport::Required,
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Slow","inputType":"demo.v1.SlowRequest","outputType":"demo.v1.SlowResponse","streaming":"unary","taskSupport":"required"}}"#,
    ..pb::item_service_mcp::SLOW
};

/// `ListItems` without the 5-message bound of its proto option: a stream of any length.
static LIST_ITEMS_LONG: ToolDef = ToolDef {
    name: "ListItemsLong",
    max_messages: None,
    max_result_bytes: None,
    ..pb::item_service_mcp::LIST_ITEMS
};

async fn server(task_ttl: Option<Duration>) -> TestResult<(McpServer, Backend)> {
    server_with(task_ttl, false).await
}

/// [`server`], with tool search when `search` is true.
async fn server_with(task_ttl: Option<Duration>, search: bool) -> TestResult<(McpServer, Backend)> {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let mut slow = ToolSetBuilder::new(
        pb::MCP_FILE_DESCRIPTOR_SET,
        BoxTransport::new(channel.clone()),
    )?;
    slow.add(&SLOW_TASK)?;
    slow.add(&SLOW_REQUIRED)?;
    slow.add(&LIST_ITEMS_LONG)?;
    let mut builder = McpServer::builder("tasks", "0.1.0")
        .tool_set(pb::item_service_mcp::from_channel(channel)?)?
        .tool_set(slow.build())?;
    if let Some(ttl) = task_ttl {
        builder = builder.task_ttl(ttl);
    }
    if search {
        builder = builder.tool_search(tonic_mcp::ToolSearch::new());
    }
    Ok((builder.build(), backend))
}

async fn connect(server: McpServer, tasks: bool) -> TestResult<TaskClient> {
    Ok(test_kit::connect_as(server, test_kit::client_config("tasks-test", tasks)).await?)
}

/// A client that declares the tasks extension, connected to [`server`] without a task TTL,
/// and the backend.
async fn task_client() -> TestResult<(TaskClient, Backend)> {
    let (server, backend) = server(None).await?;
    Ok((connect(server, true).await?, backend))
}

fn params(name: &str, arguments: Value) -> TestResult<CallToolRequestParams> {
    let Value::Object(arguments) = arguments else {
        return Err("arguments must be an object".into());
    };
    Ok(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
}

async fn start(client: &TaskClient, name: &str, arguments: Value) -> TestResult<CreateTaskResult> {
    match client.call_tool_once(params(name, arguments)?).await? {
        CallToolResponse::Task(task) => Ok(task),
        other => Err(format!("{name}: expected a task, got {other:?}").into()),
    }
}

/// Polls until the task is terminal; returns the payload and every status message seen.
async fn settle(client: &TaskClient, task_id: &str) -> TestResult<(TaskPayload, Vec<String>)> {
    Ok(test_kit::settle(client, task_id).await)
}

fn completed(payload: TaskPayload) -> TestResult<CallToolResult> {
    Ok(test_kit::completed(payload))
}

#[tokio::test]
async fn tasks_are_advertised_and_listed_per_tool() -> TestResult {
    let (client, _backend) = task_client().await?;
    let info = client.peer_info().ok_or("server info")?;
    assert!(
        info.capabilities.supports_tasks(),
        "{:?}",
        info.capabilities
    );
    let tools = client.list_all_tools().await?;
    let support = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.meta.as_ref())
            .and_then(|m| m.0.get(tonic_mcp::RPC_META_KEY))
            .and_then(|rpc| rpc.get("taskSupport"))
            .cloned()
    };
    assert_eq!(support("ItemService_ListItems"), Some(json!("optional")));
    assert_eq!(support("ItemService_GetItem"), Some(json!("forbidden")));
    assert_eq!(support("SlowTask"), Some(json!("optional")));
    Ok(())
}

#[tokio::test]
async fn a_streaming_task_reports_progress_and_completes_with_the_result() -> TestResult {
    let (client, _backend) = task_client().await?;
    let task = start(
        &client,
        "ItemService_ListItems",
        json!({"count": 4, "delay_ms": 150}),
    )
    .await?;
    assert_eq!(task.task.status, TaskStatus::Working);
    assert!(task.task.ttl_ms.is_some_and(|ttl| ttl == 300_000));
    let (payload, messages) = settle(&client, &task.task.task_id).await?;
    let result = completed(payload)?;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let messages_out = &result.structured_content.as_ref().ok_or("structured")?["messages"];
    assert_eq!(messages_out.as_array().map(Vec::len), Some(4));
    assert_eq!(status(&result), json!({"code": 0, "name": "OK"}));
    // The status message followed the stream while the task was working.
    assert!(
        messages.iter().any(|m| m.starts_with("received message ")),
        "{messages:?}"
    );
    Ok(())
}

/// Under tool search, `call_tool` of a tool with tasks gives the task the direct call gives.
#[tokio::test]
async fn call_tool_of_a_task_tool_starts_a_task() -> TestResult {
    let (server, _backend) = server_with(None, true).await?;
    let client = connect(server, true).await?;
    let task = start(
        &client,
        "call_tool",
        json!({"name": "ItemService_ListItems", "arguments": {"count": 3}}),
    )
    .await?;
    let (payload, _) = settle(&client, &task.task.task_id).await?;
    let result = completed(payload)?;
    let messages = &result.structured_content.as_ref().ok_or("structured")?["messages"];
    assert_eq!(
        messages.as_array().map(Vec::len),
        Some(3),
        "{}",
        text(&result)
    );
    Ok(())
}

#[tokio::test]
async fn cancelling_a_task_cancels_the_grpc_call() -> TestResult {
    let (client, backend) = task_client().await?;
    let task = start(&client, "SlowTask", json!({"sleep_ms": 20_000})).await?;
    let id = task.task.task_id.clone();
    // Running: the RPC is in flight.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let got = client.get_task(GetTaskParams::new(id.clone())).await?;
    assert_eq!(got.task.status(), TaskStatus::Working);

    client
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(id.clone()))
        .await?;
    assert!(
        backend
            .observed
            .wait_cancelled(1, Duration::from_secs(3))
            .await,
        "the backend did not observe the cancellation"
    );
    let (payload, _) = settle(&client, &id).await?;
    assert_eq!(payload, TaskPayload::Cancelled);
    Ok(())
}

#[tokio::test]
async fn a_task_past_its_time_to_live_fails_and_cancels_the_call() -> TestResult {
    let (server, backend) = server(Some(Duration::from_millis(300))).await?;
    let client = connect(server, true).await?;
    let task = start(&client, "SlowTask", json!({"sleep_ms": 20_000})).await?;
    assert_eq!(task.task.ttl_ms, Some(300));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (payload, _) = settle(&client, &task.task.task_id).await?;
    let TaskPayload::Failed { error } = payload else {
        return Err(format!("expected a failed task, got {payload:?}").into());
    };
    assert!(
        error["message"].as_str().is_some_and(|m| m.contains("TTL")),
        "{error:?}"
    );
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(3))
        .await;
    Ok(())
}

#[tokio::test]
async fn tools_without_tasks_and_clients_without_tasks_get_plain_results() -> TestResult {
    let (server, _backend) = server(None).await?;
    let with_tasks = connect(server.clone(), true).await?;
    let response = with_tasks
        .call_tool_once(params("ItemService_GetItem", json!({"id": "1"}))?)
        .await?;
    assert!(
        matches!(response, CallToolResponse::Complete(_)),
        "{response:?}"
    );

    let without = connect(server, false).await?;
    let result = without
        .call_tool(params("ItemService_ListItems", json!({"count": 2}))?)
        .await?;
    assert_eq!(
        result.structured_content.as_ref().ok_or("structured")?["messages"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    Ok(())
}

#[tokio::test]
async fn an_unknown_task_is_invalid_params() -> TestResult {
    let (client, _backend) = task_client().await?;
    let error = client
        .get_task(GetTaskParams::new("no-such-task".to_owned()))
        .await;
    let Err(rmcp::service::ServiceError::McpError(data)) = error else {
        return Err(format!("expected a protocol error, got {error:?}").into());
    };
    assert_eq!(data.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    Ok(())
}

/// A task on a response stream that would run 50 s, started with `keepOnCancel`: cancelling
/// it ends the collection, and the task completes with what it received, truncated.
#[tokio::test]
async fn cancelling_a_streaming_task_completes_it_with_what_it_collected() -> TestResult {
    let (client, _backend) = task_client().await?;
    let task = start(
        &client,
        "ListItemsLong",
        json!({"count": 1000, "delay_ms": 50, "mcp.stream": {"keepOnCancel": true}}),
    )
    .await?;
    let id = task.task.task_id.clone();
    tokio::time::sleep(Duration::from_millis(500)).await;
    client
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(id.clone()))
        .await?;
    let (payload, _) = settle(&client, &id).await?;
    let result = completed(payload)?;
    let value = result
        .structured_content
        .ok_or("the task's result has no structured content")?;
    let received = value["messages"].as_array().map_or(0, Vec::len);
    assert!((3..=20).contains(&received), "{value}");
    assert_eq!(value["truncated"], json!(true), "{value}");
    Ok(())
}

/// Without authorization a task belongs to the HTTP session that started it: another
/// session is told it does not exist.
#[tokio::test]
async fn a_task_belongs_to_the_session_that_started_it() -> TestResult {
    use common::http_client::{
        assert_unknown_task, open_session, session_send, start_task_in_session, task_capabilities,
    };
    let (server, _backend) = server(None).await?;
    let serving = test_kit::HttpServing::start(server, McpServer::session_http_config()).await?;
    let addr = serving.addr;
    let first = open_session(addr, &[], task_capabilities()).await?;
    let second = open_session(addr, &[], task_capabilities()).await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "SlowTask", "arguments": {"sleepMs": 50}}});
    let task_id = start_task_in_session(addr, &[], &first, &call, "/taskId").await?;
    let get =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task_id}});
    let reply = session_send(addr, &[], &first, &get).await?;
    assert_eq!(
        reply.last()["result"]["taskId"],
        json!(task_id),
        "{}",
        reply.body
    );
    let reply = session_send(addr, &[], &second, &get).await?;
    assert_unknown_task(&reply, &task_id, "tasks/get in another session");
    serving.cancel();
    Ok(())
}

#[tokio::test]
async fn a_tool_that_requires_tasks_refuses_calls_that_are_not_tasks() -> TestResult {
    let (server, _backend) = server(None).await?;
    // A client that declares the tasks extension gets a task.
    let with_tasks = connect(server.clone(), true).await?;
    let task = start(&with_tasks, "SlowRequired", json!({"sleep_ms": 1})).await?;
    let (payload, _) = settle(&with_tasks, &task.task.task_id).await?;
    assert!(!completed(payload)?.is_error.unwrap_or(false));
    // One that does not is refused, and told how to ask.
    let without = connect(server, false).await?;
    let error = without
        .call_tool(params("SlowRequired", json!({"sleep_ms": 1}))?)
        .await
        .err()
        .ok_or("a call that is not a task must be refused")?;
    let rmcp::service::ServiceError::McpError(error) = error else {
        return Err(format!("expected a JSON-RPC error: {error:?}").into());
    };
    assert_eq!(error.code, rmcp::model::ErrorCode::METHOD_NOT_FOUND);
    assert!(
        error.message.contains("runs only as a task"),
        "{}",
        error.message
    );
    Ok(())
}

/// The same tool for a client of revision 2025-11-25, over the stdio transport: listed as
/// `"execution": {"taskSupport": "required"}`, refused without `task`, a task with it.
#[tokio::test]
async fn a_tool_that_requires_tasks_on_revision_2025_11_25() -> TestResult {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let (server, _backend) = server(None).await?;
    let (read, mut write) = tokio::io::split(test_kit::serve_io_in_process(server));
    let mut lines = tokio::io::BufReader::new(read).lines();
    let mut exchange = async |message: Value| -> TestResult<Value> {
        write.write_all(format!("{message}\n").as_bytes()).await?;
        let Some(id) = message.get("id").cloned() else {
            return Ok(Value::Null);
        };
        loop {
            let line = lines.next_line().await?.ok_or("the server closed")?;
            let answer: Value = serde_json::from_str(&line)?;
            if answer["id"] == id {
                return Ok(answer);
            }
        }
    };
    exchange(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await?;
    exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    let listed = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await?;
    let execution = |name: &str| {
        listed["result"]["tools"]
            .as_array()
            .and_then(|tools| tools.iter().find(|tool| tool["name"] == name))
            .map(|tool| tool["execution"].clone())
    };
    assert_eq!(
        execution("SlowRequired"),
        Some(json!({"taskSupport": "required"}))
    );
    assert_eq!(
        execution("SlowTask"),
        Some(json!({"taskSupport": "optional"}))
    );
    let call = |id: u64, task: bool| {
        let mut params = json!({"name": "SlowRequired", "arguments": {"sleep_ms": 1}});
        if task {
            params["task"] = json!({});
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let refused = exchange(call(3, false)).await?;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let task = exchange(call(4, true)).await?;
    assert_eq!(task["result"]["task"]["status"], "working", "{task}");
    Ok(())
}
