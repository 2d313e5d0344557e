//! Task-augmented tool calls (MCP tasks extension) with rmcp's client: started, polled with
//! progress in the status message, fetched, cancelled with the backend observing the cancel,
//! expired after the time-to-live, and plain results for tools or clients without tasks.
//! Also the bounds on tasks (`TaskLimits`: live tasks per caller, running tasks, bytes of
//! results kept) and `tasks/list` in pages, in both task shapes. And when a call becomes a
//! task (`TaskMode`): by default answered inline when quick, a task carrying on the same call
//! when slow; `Always` and `Never`, server-wide and per tool set.
//!
//! Most tests here are about what a task does, with quick calls: their server is in
//! `TaskMode::Always`, so that a quick call is a task (the default mode would answer it
//! inline). The `TaskMode` tests set their own mode.

use test_kit::demo as common;

use std::time::Duration;

use common::{Backend, SLOW_TASK, TestResult, pb, raw_2025::Raw2025, start_backend, status, text};
use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, CreateTaskResult,
        GetTaskParams, TaskPayload, TaskStatus,
    },
    service::{RoleClient, RunningService},
};
use serde_json::{Value, json};
use tonic_mcp::{
    McpServer, TaskMode,
    codegen::{BoxTransport, TaskSupport, ToolDef, ToolSetBuilder},
};
use tonic_mcp_tasks::{TaskLimits, Tasks};

type TaskClient = RunningService<RoleClient, ClientConfig>;

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
    server_configured(|mut builder| {
        if let Some(ttl) = task_ttl {
            builder = builder.ttl(ttl);
        }
        builder
    })
    .await
}

/// The test server's tools, in `TaskMode::Always` (a quick call is a task, as the tests of
/// what a task does need), with the task settings `configure` makes.
async fn server_configured(
    configure: impl FnOnce(Tasks) -> Tasks,
) -> TestResult<(McpServer, Backend)> {
    server_with_sets(
        |set| set,
        |builder| configure(builder.mode(TaskMode::Always)),
    )
    .await
}

/// The test server's tools, in the default task mode unless `configure` says, the slow tools'
/// set made by `slow_set`.
async fn server_with_sets(
    slow_set: impl FnOnce(tonic_mcp::ToolSet) -> tonic_mcp::ToolSet,
    configure: impl FnOnce(Tasks) -> Tasks,
) -> TestResult<(McpServer, Backend)> {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let mut slow = ToolSetBuilder::new(
        pb::MCP_FILE_DESCRIPTOR_SET,
        BoxTransport::new(channel.clone()),
    )?;
    slow.add(&SLOW_TASK)?;
    slow.add(&SLOW_REQUIRED)?;
    slow.add(&LIST_ITEMS_LONG)?;
    let builder = McpServer::builder("tasks", "0.1.0")
        .tool_set(pb::item_service_mcp::from_channel(channel)?)?
        .tool_set(slow_set(slow.build()))?;
    Ok((
        builder.task_router(configure(Tasks::new())).build(),
        backend,
    ))
}

/// [`server_configured`] with task `limits` (and a task time-to-live, when given).
async fn limited(limits: TaskLimits, ttl: Option<Duration>) -> TestResult<(McpServer, Backend)> {
    server_configured(|builder| {
        let builder = builder.limits(limits);
        match ttl {
            Some(ttl) => builder.ttl(ttl),
            None => builder,
        }
    })
    .await
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

/// A task this server does not hold (it lived on another replica, or expired) is unknown to
/// `tasks/get` and `tasks/cancel` in both task shapes, whatever the client declared: never
/// "Missing required client capability", which would send the client looking for the wrong
/// fault. Over stateless HTTP, as replicas behind a load balancer serve.
#[tokio::test]
async fn a_task_held_nowhere_here_is_unknown_whatever_the_client_declared() -> TestResult {
    use common::http_client::{assert_unknown_task, send};
    let (server, _backend) = server(None).await?;
    let serving = test_kit::HttpServing::start(server, McpServer::stateless_http_config()).await?;
    let capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    for (revision, meta) in [
        ("2025-11-25", None),
        ("2025-06-18", None),
        (
            "2026-07-28",
            Some(
                json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities}),
            ),
        ),
    ] {
        for method in ["tasks/get", "tasks/cancel"] {
            let mut params = json!({"taskId": "elsewhere-7"});
            if let Some(meta) = &meta {
                params["_meta"] = meta.clone();
            }
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            let mut headers = vec![("mcp-protocol-version", revision)];
            if meta.is_some() {
                headers.push(("mcp-method", method));
                headers.push(("mcp-name", "elsewhere-7"));
            }
            let reply = send(
                serving.addr,
                http::Method::POST,
                "/mcp",
                &headers,
                Some(&body),
            )
            .await?;
            assert_unknown_task(&reply, "elsewhere-7", &format!("{method} on {revision}"));
        }
    }
    serving.cancel();
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
    let (server, _backend) = server(None).await?;
    let mut raw = Raw2025::connect(server).await?;
    let listed = raw.request("tools/list", json!({})).await?;
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
    let arguments = json!({"sleep_ms": 1});
    let refused = raw
        .request(
            "tools/call",
            json!({"name": "SlowRequired", "arguments": arguments}),
        )
        .await?;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let task = raw.call_task("SlowRequired", arguments).await?;
    assert_eq!(task["result"]["task"]["status"], "working", "{task}");
    Ok(())
}

/// The JSON-RPC error of a refused task-augmented call, checked to name the bound `limit`,
/// its value and how to raise it; its message.
fn assert_over_limit(error: &Value, limit: &str, value: usize, flag: &str) -> String {
    assert_eq!(error["code"], json!(-32603), "{error}");
    assert_eq!(
        error["data"],
        json!({"limit": limit, "value": value}),
        "{error}"
    );
    let message = error["message"].as_str().unwrap_or_default().to_owned();
    for part in [
        "task refused: ",
        &format!("TaskLimits::{limit} = {value}"),
        "Tasks::limits",
        flag,
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    message
}

/// rmcp's client's error for a refused call, as JSON.
fn refusal(response: Result<CallToolResponse, rmcp::service::ServiceError>) -> TestResult<Value> {
    match response {
        Err(rmcp::service::ServiceError::McpError(error)) => Ok(serde_json::to_value(error)?),
        other => Err(format!("expected a JSON-RPC error, got {other:?}").into()),
    }
}

/// A caller at its bound of live tasks is refused, with the bound, its value and how to raise
/// it, in both task shapes; tasks it started count until they are forgotten (one time-to-live
/// after they ended), then it may start more; another caller (HTTP session) is not held back.
#[tokio::test]
async fn a_caller_past_its_live_tasks_is_refused_with_the_bound_and_how_to_raise_it() -> TestResult
{
    let limits = TaskLimits {
        max_per_owner: 3,
        ..TaskLimits::default()
    };
    let ttl = Duration::from_millis(400);
    let flag = "--max-tasks-per-owner";
    // The tasks extension, with rmcp's client.
    let (server, _backend) = limited(limits, Some(ttl)).await?;
    let client = connect(server, true).await?;
    for _ in 0..3 {
        start(&client, "SlowTask", json!({"sleep_ms": 1})).await?;
    }
    let error = refusal(
        client
            .call_tool_once(params("SlowTask", json!({"sleep_ms": 1}))?)
            .await,
    )?;
    let message = assert_over_limit(&error, "max_per_owner", 3, flag);
    assert!(message.contains("already has 3 live tasks"), "{message}");
    // Forgotten one time-to-live after they ended: room again.
    let mut admitted = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if let Ok(CallToolResponse::Task(_)) = client
            .call_tool_once(params("SlowTask", json!({"sleep_ms": 1}))?)
            .await
        {
            admitted = true;
            break;
        }
    }
    assert!(admitted, "no room once the tasks were forgotten");

    // Revision 2025-11-25: a call answered without running (bad arguments) is a task too.
    let (server, _backend) = limited(limits, None).await?;
    let mut raw = Raw2025::connect(server).await?;
    raw.start("SlowTask", json!({"sleep_ms": 1})).await?;
    raw.start("SlowTask", json!({"sleep_ms": "long"})).await?;
    raw.start("SlowTask", json!({"sleep_ms": 1})).await?;
    for arguments in [json!({"sleep_ms": 1}), json!({"sleep_ms": "long"})] {
        let answer = raw.call_task("SlowTask", arguments).await?;
        assert_over_limit(&answer["error"], "max_per_owner", 3, flag);
    }

    // Over HTTP each session is a caller of its own.
    let (server, _backend) = limited(limits, None).await?;
    let serving = test_kit::HttpServing::start(server, McpServer::session_http_config()).await?;
    let addr = serving.addr;
    use common::http_client::{open_session, session_send, task_capabilities};
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "SlowTask", "arguments": {"sleep_ms": 1}}});
    let first = open_session(addr, &[], task_capabilities()).await?;
    for _ in 0..3 {
        let reply = session_send(addr, &[], &first, &call).await?;
        assert!(
            reply.last()["result"]["taskId"].is_string(),
            "{}",
            reply.body
        );
    }
    let reply = session_send(addr, &[], &first, &call).await?;
    assert_over_limit(&reply.last()["error"], "max_per_owner", 3, flag);
    let second = open_session(addr, &[], task_capabilities()).await?;
    let reply = session_send(addr, &[], &second, &call).await?;
    assert!(
        reply.last()["result"]["taskId"].is_string(),
        "{}",
        reply.body
    );
    serving.cancel();
    Ok(())
}

/// Past the bound of running tasks a task is refused, in both shapes, and `mcp_tasks_running`
/// stays at the bound; once one ends, a task starts again.
#[tokio::test]
async fn past_the_running_tasks_a_task_is_refused_until_one_ends() -> TestResult {
    let limits = TaskLimits {
        max_running: 2,
        ..TaskLimits::default()
    };
    let (server, backend) = server_configured(|builder| builder.limits(limits)).await?;
    let client = connect(server.clone(), true).await?;
    let first = start(&client, "SlowTask", json!({"sleep_ms": 20_000})).await?;
    start(&client, "SlowTask", json!({"sleep_ms": 20_000})).await?;
    let flag = "--max-running-tasks";
    let error = refusal(
        client
            .call_tool_once(params("SlowTask", json!({"sleep_ms": 1}))?)
            .await,
    )?;
    let message = assert_over_limit(&error, "max_running", 2, flag);
    assert!(message.contains("2 tasks are running"), "{message}");
    let mut raw = Raw2025::connect(server.clone()).await?;
    let answer = raw.call_task("SlowTask", json!({"sleep_ms": 1})).await?;
    assert_over_limit(&answer["error"], "max_running", 2, flag);
    // Refused calls never reach the backend, and the server's load shows the bound.
    assert_eq!(server.load().tasks_running, 2);
    // One ends (cancelled): room for one more.
    client
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(
            first.task.task_id.clone(),
        ))
        .await?;
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(3))
        .await;
    let (payload, _) = settle(&client, &first.task.task_id).await?;
    assert_eq!(payload, TaskPayload::Cancelled);
    assert_eq!(server.load().tasks_running, 1);
    raw.start("SlowTask", json!({"sleep_ms": 20_000})).await?;
    let answer = raw.call_task("SlowTask", json!({"sleep_ms": 1})).await?;
    assert_over_limit(&answer["error"], "max_running", 2, flag);
    Ok(())
}

/// The bytes of one `SlowTask {"sleep_ms": 1}` result as the server keeps it (its JSON).
async fn slow_result_bytes() -> TestResult<usize> {
    let (client, _backend) = task_client().await?;
    let task = start(&client, "SlowTask", json!({"sleep_ms": 1})).await?;
    let (payload, _) = settle(&client, &task.task.task_id).await?;
    let TaskPayload::Completed { result } = payload else {
        return Err(format!("expected a completed task: {payload:?}").into());
    };
    Ok(serde_json::to_vec(&result)?.len())
}

fn assert_dropped(message: &str, why: &str) {
    for part in [
        "the task's result was dropped",
        why,
        "TaskLimits::max_result_bytes",
        "Tasks::limits",
        "--max-task-result-bytes",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

/// Results are kept within `max_result_bytes`: a new result drops the oldest fetched result
/// first, then the oldest unfetched; a dropped result's task reports `failed`, saying why and
/// how to raise the budget; a result larger than the budget is dropped at once. Revision
/// 2025-11-25 (`tasks/get` does not fetch, `tasks/result` does), then the final extension
/// (`tasks/get` of a completed task fetches).
#[tokio::test]
async fn results_past_the_budget_drop_the_oldest_fetched_first() -> TestResult {
    let size = slow_result_bytes().await?;
    let limits = TaskLimits {
        max_result_bytes: size * 2 + size / 2,
        ..TaskLimits::default()
    };
    let (server, _backend) = limited(limits, None).await?;
    let mut raw = Raw2025::connect(server).await?;
    let arguments = json!({"sleep_ms": 1});
    let mut ids = Vec::new();
    for _ in 0..2 {
        let id = raw.start("SlowTask", arguments.clone()).await?;
        assert_eq!(raw.settle(&id).await?["status"], "completed");
        ids.push(id);
    }
    // The second fetched, then a third ends: the second (fetched) goes, not the first.
    let fetched = raw
        .request("tasks/result", json!({"taskId": ids[1]}))
        .await?;
    assert!(
        fetched["result"]["structuredContent"].is_object(),
        "{fetched}"
    );
    let id = raw.start("SlowTask", arguments.clone()).await?;
    raw.settle(&id).await?;
    ids.push(id);
    let status = async |raw: &mut Raw2025, id: &str| -> TestResult<Value> {
        let task = raw.request("tasks/get", json!({"taskId": id})).await?;
        Ok(task["result"]["status"].clone())
    };
    assert_eq!(status(&mut raw, &ids[0]).await?, "completed");
    assert_eq!(status(&mut raw, &ids[1]).await?, "failed");
    let id = raw.start("SlowTask", arguments.clone()).await?;
    raw.settle(&id).await?;
    ids.push(id);
    // The fourth made the first (oldest unfetched) go too.
    for (index, kept) in [(0, false), (1, false), (2, true), (3, true)] {
        let id = &ids[index];
        let task = raw.request("tasks/get", json!({"taskId": id})).await?;
        let result = raw.request("tasks/result", json!({"taskId": id})).await?;
        if kept {
            assert_eq!(task["result"]["status"], "completed", "{index}: {task}");
            assert!(
                result["result"]["structuredContent"].is_object(),
                "{result}"
            );
        } else {
            assert_eq!(task["result"]["status"], "failed", "{index}: {task}");
            let status = task["result"]["statusMessage"].as_str().unwrap_or_default();
            assert_dropped(status, "budget was full");
            assert_eq!(result["error"]["code"], json!(-32603), "{result}");
            assert_dropped(
                result["error"]["message"].as_str().unwrap_or_default(),
                "budget was full",
            );
        }
    }

    // The final extension; and a budget smaller than one result.
    let limits = TaskLimits {
        max_result_bytes: size + size / 2,
        ..TaskLimits::default()
    };
    let (server, _backend) = limited(limits, None).await?;
    let client = connect(server, true).await?;
    let first = start(&client, "SlowTask", arguments.clone()).await?;
    let (payload, _) = settle(&client, &first.task.task_id).await?;
    completed(payload)?;
    let second = start(&client, "SlowTask", arguments.clone()).await?;
    let (payload, _) = settle(&client, &second.task.task_id).await?;
    completed(payload)?;
    let got = client
        .get_task(GetTaskParams::new(first.task.task_id.clone()))
        .await?;
    assert_eq!(got.task.status(), TaskStatus::Failed);
    let TaskPayload::Failed { error } = got.task.payload else {
        return Err("expected a failed task".into());
    };
    assert_dropped(
        error["message"].as_str().unwrap_or_default(),
        "budget was full",
    );
    let limits = TaskLimits {
        max_result_bytes: size / 2,
        ..TaskLimits::default()
    };
    let (server, _backend) = limited(limits, None).await?;
    let client = connect(server, true).await?;
    let task = start(&client, "SlowTask", arguments).await?;
    let (payload, _) = settle(&client, &task.task.task_id).await?;
    let TaskPayload::Failed { error } = payload else {
        return Err(format!("expected a failed task: {payload:?}").into());
    };
    let message = error["message"].as_str().unwrap_or_default();
    assert_dropped(message, &format!("at {size} bytes it is larger"));
    Ok(())
}

/// Pages through `tasks/list` of revision 2025-11-25 with `pages`: every page within
/// `LIST_PAGE` tasks, each linked to the next by `nextCursor` until the last, which has none;
/// the task ids in creation order.
async fn list_all<F>(mut page: F) -> TestResult<(Vec<String>, Vec<usize>)>
where
    F: AsyncFnMut(Option<&str>) -> TestResult<Value>,
{
    let mut ids = Vec::new();
    let mut sizes = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let answer = page(cursor.as_deref()).await?;
        let result = &answer["result"];
        let tasks = result["tasks"]
            .as_array()
            .ok_or_else(|| format!("{answer}"))?;
        assert!(tasks.len() <= 100, "{} tasks in a page", tasks.len());
        sizes.push(tasks.len());
        ids.extend(
            tasks
                .iter()
                .filter_map(|task| task["taskId"].as_str().map(str::to_owned)),
        );
        match result.get("nextCursor") {
            None => return Ok((ids, sizes)),
            Some(next) => {
                cursor = Some(next.as_str().ok_or("a string cursor")?.to_owned());
                assert!(!tasks.is_empty(), "an empty page before the end");
            }
        }
        assert!(sizes.len() < 20, "too many pages");
    }
}

/// `tasks/list` in pages of 100 linked by `nextCursor`, oldest first, over stdio and over HTTP
/// sessions (each seeing only its own tasks); a cursor not given by the server is invalid
/// params.
#[tokio::test]
async fn tasks_list_pages_with_cursors() -> TestResult {
    let (server, _backend) = server(None).await?;
    let mut raw = Raw2025::connect(server).await?;
    let mut started = Vec::new();
    for index in 0..250 {
        // Most answered without running (bad arguments), which is quicker; all are tasks.
        let arguments = if index % 10 == 0 {
            json!({"sleep_ms": 1})
        } else {
            json!({"sleep_ms": "soon"})
        };
        started.push(raw.start("SlowTask", arguments).await?);
    }
    let (listed, sizes) = list_all(async |cursor| {
        let params = cursor.map_or_else(|| json!({}), |cursor| json!({"cursor": cursor}));
        raw.request("tasks/list", params).await
    })
    .await?;
    assert_eq!(sizes, [100, 100, 50]);
    assert_eq!(listed, started);
    for cursor in [
        json!("not-a-cursor"),
        json!(""),
        json!("dGFza3M6eA"),
        json!(7),
    ] {
        let answer = raw.request("tasks/list", json!({"cursor": cursor})).await?;
        assert_eq!(answer["error"]["code"], json!(-32602), "{cursor}: {answer}");
    }

    // Over HTTP: each session pages through its own tasks only.
    let (http_server, _backend) = self::server(None).await?;
    let serving =
        test_kit::HttpServing::start(http_server, McpServer::session_http_config()).await?;
    let addr = serving.addr;
    use common::http_client::{open_session, session_send, start_task_in_session};
    let capabilities = json!({"tasks": {"list": {}, "cancel": {}}});
    let first = open_session(addr, &[], capabilities.clone()).await?;
    let second = open_session(addr, &[], capabilities).await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "SlowTask", "arguments": {"sleep_ms": "soon"}, "task": {}}});
    let mut started = Vec::new();
    for _ in 0..120 {
        started.push(start_task_in_session(addr, &[], &first, &call, "/task/taskId").await?);
    }
    start_task_in_session(addr, &[], &second, &call, "/task/taskId").await?;
    let list = |session: String| {
        async move |cursor: Option<&str>| -> TestResult<Value> {
            let mut message = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list",
                "params": {}});
            if let Some(cursor) = cursor {
                message["params"]["cursor"] = json!(cursor);
            }
            Ok(session_send(addr, &[], &session, &message).await?.last())
        }
    };
    let (listed, sizes) = list_all(list(first.clone())).await?;
    assert_eq!(sizes, [100, 20]);
    assert_eq!(listed, started);
    let (listed, _) = list_all(list(second)).await?;
    assert_eq!(listed.len(), 1);
    let reply = session_send(
        addr,
        &[],
        &first,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/list",
            "params": {"cursor": "bm90LW91cnM"}}),
    )
    .await?;
    assert_eq!(
        reply.last()["error"]["code"],
        json!(-32602),
        "{}",
        reply.body
    );
    serving.cancel();
    Ok(())
}

// --- TaskMode: when a call that did not ask for a task becomes one ---------------------------

/// Calls the backend received (its interceptor records each one's metadata).
fn rpcs(backend: &Backend) -> usize {
    backend
        .observed
        .metadata
        .lock()
        .map_or(0, |seen| seen.len())
}

/// A server in the default mode (`TaskMode::auto`, or `mode` when given) with `limits`.
async fn auto_server(
    mode: Option<TaskMode>,
    limits: TaskLimits,
) -> TestResult<(McpServer, Backend)> {
    server_with_sets(
        |set| set,
        |builder| {
            let builder = builder.limits(limits);
            match mode {
                Some(mode) => builder.mode(mode),
                None => builder,
            }
        },
    )
    .await
}

/// The default mode: a quick call from a client that declared the tasks extension is answered
/// with its result, as for a client without tasks, and does not count as a task (one live
/// task per caller allowed, and three quick calls leave room for a slow call's task).
#[tokio::test]
async fn by_default_a_quick_call_is_answered_inline_and_counts_as_no_task() -> TestResult {
    assert_eq!(TaskMode::default(), TaskMode::auto());
    assert_eq!(
        TaskMode::auto(),
        TaskMode::Auto {
            inline_wait: Duration::from_secs(2)
        }
    );
    let limits = TaskLimits {
        max_per_owner: 1,
        ..TaskLimits::default()
    };
    let (server, _backend) = auto_server(None, limits).await?;
    let client = connect(server, true).await?;
    for (name, arguments) in [
        ("ItemService_ListItems", json!({"count": 2})),
        ("SlowTask", json!({"sleep_ms": 1})),
        ("ListItemsLong", json!({"count": 3, "delay_ms": 20})),
    ] {
        let response = client.call_tool_once(params(name, arguments)?).await?;
        let CallToolResponse::Complete(result) = response else {
            return Err(format!("{name}: expected the result inline, got {response:?}").into());
        };
        assert_ne!(result.is_error, Some(true), "{name}: {}", text(&result));
        assert!(result.structured_content.is_some(), "{name}: {result:?}");
    }
    // A call past the wait (2 s) still becomes a task: the quick ones took no room.
    let task = start(&client, "SlowTask", json!({"sleep_ms": 2_600})).await?;
    let (payload, _) = settle(&client, &task.task.task_id).await?;
    assert_eq!(
        completed(payload)?.structured_content,
        Some(json!({"slept_ms": 2600}))
    );
    Ok(())
}

/// A call still running at the end of the wait becomes a task carrying on the same RPC: the
/// backend sees one call, and the task's result equals a direct call's. A stream keeps what it
/// collected before the task was made, and its progress goes to the task from then on.
#[tokio::test]
async fn a_slow_call_becomes_a_task_that_runs_the_rpc_once() -> TestResult {
    let mode = TaskMode::auto_after(Duration::from_millis(300));
    let (server, backend) = auto_server(Some(mode), TaskLimits::default()).await?;
    let with_tasks = connect(server.clone(), true).await?;
    let without = connect(server, false).await?;
    for (name, arguments) in [
        ("SlowTask", json!({"sleep_ms": 900})),
        // 8 messages, 100 ms apart: about 3 collected when the task is made.
        ("ListItemsLong", json!({"count": 8, "delay_ms": 100})),
    ] {
        let direct = without.call_tool(params(name, arguments.clone())?).await?;
        assert_ne!(direct.is_error, Some(true), "{name}: {}", text(&direct));
        let before = rpcs(&backend);
        let started = std::time::Instant::now();
        let task = start(&with_tasks, name, arguments).await?;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_millis(850),
            "{name}: answered with a task after {waited:?}"
        );
        let (payload, messages) = settle(&with_tasks, &task.task.task_id).await?;
        let result = completed(payload)?;
        assert_eq!(
            rpcs(&backend) - before,
            1,
            "{name}: the RPC ran more than once"
        );
        assert_eq!(
            result.structured_content, direct.structured_content,
            "{name}"
        );
        assert_eq!(result.is_error, direct.is_error, "{name}");
        assert_eq!(status(&result), status(&direct), "{name}");
        if name == "ListItemsLong" {
            let received = result.structured_content.as_ref().ok_or("structured")?["messages"]
                .as_array()
                .map(Vec::len);
            assert_eq!(received, Some(8), "{result:?}");
            assert!(
                messages.iter().any(|m| m.starts_with("received message ")),
                "{messages:?}"
            );
        }
    }
    Ok(())
}

/// Cancelling the task a slow call became cancels its gRPC call at the backend.
#[tokio::test]
async fn cancelling_a_call_made_a_task_cancels_the_grpc_call() -> TestResult {
    let mode = TaskMode::auto_after(Duration::from_millis(200));
    let (server, backend) = auto_server(Some(mode), TaskLimits::default()).await?;
    let client = connect(server, true).await?;
    let task = start(&client, "SlowTask", json!({"sleep_ms": 20_000})).await?;
    let id = task.task.task_id.clone();
    let got = client.get_task(GetTaskParams::new(id.clone())).await?;
    assert_eq!(got.task.status(), TaskStatus::Working);
    client
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(id.clone()))
        .await?;
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(3))
        .await;
    let (payload, _) = settle(&client, &id).await?;
    assert_eq!(payload, TaskPayload::Cancelled);
    assert_eq!(rpcs(&backend), 1);
    Ok(())
}

/// When the task limits refuse the task a slow call would become, the call goes on inline and
/// is answered with its result (not refused: it has run for the wait already).
#[tokio::test]
async fn a_slow_call_the_limits_refuse_a_task_is_answered_inline() -> TestResult {
    let mode = TaskMode::auto_after(Duration::from_millis(150));
    let limits = TaskLimits {
        max_running: 1,
        ..TaskLimits::default()
    };
    let (server, backend) = auto_server(Some(mode), limits).await?;
    let client = connect(server, true).await?;
    let running = start(&client, "SlowTask", json!({"sleep_ms": 20_000})).await?;
    let response = client
        .call_tool_once(params("SlowTask", json!({"sleep_ms": 600}))?)
        .await?;
    let CallToolResponse::Complete(result) = response else {
        return Err(format!("expected the result inline, got {response:?}").into());
    };
    assert_eq!(result.structured_content, Some(json!({"slept_ms": 600})));
    assert_eq!(rpcs(&backend), 2);
    client
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(running.task.task_id))
        .await?;
    Ok(())
}

/// `Always` makes even a quick call a task, `Never` answers even a slow one inline; a tool
/// set's own mode wins over the server's. A tool that requires tasks is a task in every mode.
#[tokio::test]
async fn task_modes_always_and_never_server_wide_and_per_tool_set() -> TestResult {
    let quick = json!({"sleep_ms": 1});
    // Server-wide Never (the slow set has no mode of its own).
    let (server, _backend) = auto_server(Some(TaskMode::Never), TaskLimits::default()).await?;
    let client = connect(server, true).await?;
    let response = client
        .call_tool_once(params("SlowTask", json!({"sleep_ms": 2_300}))?)
        .await?;
    let CallToolResponse::Complete(result) = response else {
        return Err(format!("Never: expected the result inline, got {response:?}").into());
    };
    assert_eq!(result.structured_content, Some(json!({"slept_ms": 2300})));
    let response = client
        .call_tool_once(params("ItemService_ListItems", json!({"count": 1}))?)
        .await?;
    assert!(
        matches!(response, CallToolResponse::Complete(_)),
        "{response:?}"
    );
    start(&client, "SlowRequired", quick.clone()).await?;

    // Server-wide Always.
    let (server, _backend) = auto_server(Some(TaskMode::Always), TaskLimits::default()).await?;
    let client = connect(server, true).await?;
    start(&client, "SlowTask", quick.clone()).await?;
    start(&client, "ItemService_ListItems", json!({"count": 1})).await?;

    // The slow tools' set in Always on a server in Never; then in Never on one in Always.
    for (set_mode, server_mode) in [
        (TaskMode::Always, TaskMode::Never),
        (TaskMode::Never, TaskMode::Always),
    ] {
        let (server, _backend) = server_with_sets(
            |set| set.with_task_mode(set_mode),
            |builder| builder.mode(server_mode),
        )
        .await?;
        let client = connect(server, true).await?;
        let of_set = client
            .call_tool_once(params("SlowTask", quick.clone())?)
            .await?;
        let of_server = client
            .call_tool_once(params("ItemService_ListItems", json!({"count": 1}))?)
            .await?;
        let is_task = |response: &CallToolResponse| matches!(response, CallToolResponse::Task(_));
        assert_eq!(
            (is_task(&of_set), is_task(&of_server)),
            (
                set_mode == TaskMode::Always,
                server_mode == TaskMode::Always
            ),
            "set {set_mode:?}, server {server_mode:?}: {of_set:?} / {of_server:?}"
        );
        start(&client, "SlowRequired", quick.clone()).await?;
    }
    Ok(())
}
