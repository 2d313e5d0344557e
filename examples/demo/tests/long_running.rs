//! The demo's long-running `ArchiveTasks` with rmcp's client, over stdio and streamable HTTP:
//! an operation waited to completion, one that fails, one past the tool's 5 s deadline and later
//! redeemed by name with `Operations_GetOperation`; as MCP tasks, one fetched with progress in
//! its status message and one cancelled, which cancels the operation in the backend. The same
//! scenarios run through `grpc-mcp-gateway` in front of the demo's gRPC server, and on protocol
//! 2026-07-28 (`server/discover`) as well as 2025-11-25 (`initialize`). Each client gets its own
//! demo process, so that every scenario starts from the sample tasks.

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelTaskParams, ClientConfig, ProtocolVersion,
    TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use test_kit::text;
use tokio::io::AsyncBufReadExt as _;

type Client = RunningService<RoleClient, ClientConfig>;

const ARCHIVE: &str = "TaskService_ArchiveTasks";
const GET_OPERATION: &str = "Operations_GetOperation";
const PENDING: &str = "google.longrunning.Operation";
const STATUS: &str = tonic_mcp::STATUS_META_KEY;

fn client_config(tasks: bool) -> ClientConfig {
    test_kit::client_config("demo-long-running", tasks)
}

fn request(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(request(name, arguments))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn status_code(result: &CallToolResult) -> Value {
    result.meta.as_ref().expect("result _meta").0[STATUS]["code"].clone()
}

fn archived_ids(value: &Value) -> Vec<String> {
    value["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks in {value}"))
        .iter()
        .map(|task| task["id"].as_str().expect("id").to_owned())
        .collect()
}

/// `Operations_GetOperation` until the operation is done (at most 10 s).
async fn redeem(client: &Client, name: &str) -> Value {
    for _ in 0..100 {
        let result = call(client, GET_OPERATION, json!({ "name": name })).await;
        assert_eq!(result.is_error, Some(false), "{}", text(&result));
        let operation = result.structured_content.expect("structured operation");
        if operation["done"] == json!(true) {
            return operation;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("operation {name} not done in 10 s");
}

/// Plain calls: `_meta`, waited to completion, a failure, past the deadline then redeemed.
async fn plain_scenario(client: &Client) {
    let tools = client.list_all_tools().await.expect("tools/list");
    let archive = tools
        .iter()
        .find(|tool| tool.name == ARCHIVE)
        .expect("ArchiveTasks listed");
    let meta = &archive.meta.as_ref().expect("tool _meta").0[tonic_mcp::RPC_META_KEY];
    assert_eq!(meta["outputType"], "google.longrunning.Operation");
    assert_eq!(
        meta["longRunning"],
        json!({
            "responseType": "demo.v1.ArchiveTasksResponse",
            "metadataType": "demo.v1.ArchiveTasksMetadata",
            "wait": true
        })
    );
    assert_eq!(meta["taskSupport"], "optional");
    let description = archive.description.as_deref().expect("description");
    assert!(
        description.ends_with("Here GetOperation is the tool `Operations_GetOperation`."),
        "{description}"
    );
    let output = archive.output_schema.as_ref().expect("output schema");
    assert!(output["properties"]["tasks"].is_object(), "{output:?}");
    assert!(output["properties"][PENDING].is_object(), "{output:?}");
    assert!(tools.iter().any(|tool| tool.name == GET_OPERATION));

    // Waited to completion: the unpacked ArchiveTasksResponse.
    let result = call(
        client,
        ARCHIVE,
        json!({"state": "STATE_DONE", "per_task": "0.2s"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let structured = result.structured_content.clone().expect("structured");
    assert_eq!(archived_ids(&structured), ["task-3"]);
    assert_eq!(status_code(&result), json!(0));

    // Nothing left in that state: the operation fails, with its decoded details.
    let result = call(client, ARCHIVE, json!({"state": "STATE_DONE"})).await;
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(
        message.contains("failed: gRPC error FAILED_PRECONDITION: no task is in state STATE_DONE"),
        "{message}"
    );
    assert!(
        message.contains("STATE_EMPTY demo.v1.State/STATE_DONE"),
        "{message}"
    );
    assert_eq!(status_code(&result), json!(9));

    // Slower than the tool's 5 s deadline: a pending operation, not an error.
    let result = call(
        client,
        ARCHIVE,
        json!({"state": "STATE_TODO", "per_task": "6s"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let structured = result.structured_content.clone().expect("structured");
    let name = structured[PENDING]["name"]
        .as_str()
        .unwrap_or_else(|| panic!("no pending operation in {structured}"))
        .to_owned();
    assert_eq!(structured[PENDING]["metadata"], json!({"total": 1}));
    assert!(
        text(&result).contains(&format!(
            "call the tool `Operations_GetOperation` with {{\"name\":\"{name}\"}}"
        )),
        "{}",
        text(&result)
    );
    // Redeemed by name: the operation finished in the backend after the call returned.
    let operation = redeem(client, &name).await;
    // The oneof `result` in the tools' `{case, value}` form, the `Any` as `{type_url, value}`.
    let result = &operation["result"];
    assert_eq!(result["case"], "response", "{operation}");
    assert_eq!(
        result["value"]["type_url"],
        "type.googleapis.com/demo.v1.ArchiveTasksResponse"
    );
    assert_eq!(archived_ids(&result["value"]["value"]), ["task-2"]);
}

async fn start_task(client: &Client, arguments: Value) -> String {
    test_kit::start_task(client, ARCHIVE, arguments).await
}

/// `tasks/get` every 25 ms until `stop` says so (at most 20 s); the distinct status messages.
async fn poll_task(
    client: &Client,
    id: &str,
    stop: impl Fn(&TaskStatus, &[String]) -> bool,
) -> (TaskPayload, Vec<String>) {
    test_kit::poll_task(client, id, Duration::from_secs(20), stop).await
}

/// Task-augmented calls: one cancelled (the backend cancels the operation), one fetched.
async fn task_scenario(client: &Client) {
    // Cancelled while it waits: the runtime calls CancelOperation.
    let id = start_task(
        client,
        json!({"state": "STATE_IN_PROGRESS", "per_task": "3s"}),
    )
    .await;
    let (_, seen) = poll_task(client, &id, |_, seen| {
        seen.iter().any(|m| m.starts_with("operation operations/"))
    })
    .await;
    let name = seen
        .iter()
        .find_map(|m| m.strip_prefix("operation ")?.split(' ').next())
        .expect("the operation's name in the status message")
        .to_owned();
    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel");
    let (payload, _) = poll_task(client, &id, |status, _| status.is_terminal()).await;
    assert_eq!(payload, TaskPayload::Cancelled);
    // The backend saw CancelOperation: the operation ends CANCELLED, and the task is back.
    let operation = redeem(client, &name).await;
    assert_eq!(operation["result"]["case"], "error", "{operation}");
    assert_eq!(
        operation["result"]["value"]["code"],
        json!(1),
        "{operation}"
    );
    let task = call(client, "TaskService_GetTask", json!({"id": "task-1"})).await;
    assert_eq!(task.is_error, Some(false), "{}", text(&task));

    // Started, polled (each poll's metadata in the status message), fetched. Slower than the
    // server's inline wait (`TaskMode::auto`, 2 s), so that it becomes a task: a quicker call
    // is answered with its result.
    let id = start_task(client, json!({"state": "STATE_DONE", "per_task": "2.5s"})).await;
    let (payload, seen) = poll_task(client, &id, |status, _| status.is_terminal()).await;
    let result = test_kit::completed(payload);
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(
        archived_ids(&result.structured_content.expect("structured")),
        ["task-3"]
    );
    assert!(
        seen.iter()
            .any(|m| m.starts_with("operation operations/") && m.contains(r#""total":1"#)),
        "{seen:?}"
    );
}

/// The client's handshake: `initialize` (protocol 2025-11-25), or with `modern`,
/// `server/discover` and per-request metadata (protocol 2026-07-28).
async fn handshake<T, E, A>(tasks: bool, modern: bool, transport: T) -> Client
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let config = client_config(tasks);
    let client = if modern {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        config.serve_with_lifecycle(transport, lifecycle).await
    } else {
        config.serve(transport).await
    };
    client.expect("handshake")
}

async fn over_stdio(tasks: bool) -> Client {
    over_stdio_with(tasks, &[]).await
}

/// The demo over stdio with `args`.
async fn over_stdio_with(tasks: bool, args: &[&str]) -> Client {
    over_stdio_on(tasks, false, args).await
}

/// The demo over stdio with `args`, on protocol 2026-07-28 when `modern`.
async fn over_stdio_on(tasks: bool, modern: bool, args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_demo"));
    command.args(args).env("RUST_LOG", "warn");
    let transport = TokioChildProcess::new(command).expect("spawn the demo");
    handshake(tasks, modern, transport).await
}

/// A demo serving streamable HTTP on a free port, and its URL.
async fn spawn_http() -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_demo"))
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the demo --http");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            // `… serving MCP over streamable HTTP at http://127.0.0.1:PORT/mcp tools=13 …`
            if let Some((_, rest)) = line.split_once("serving MCP over streamable HTTP at ") {
                return rest.split_whitespace().next().expect("a URL").to_owned();
            }
        }
        panic!("the demo exited without serving HTTP");
    })
    .await
    .expect("the demo announces its URL in time");
    // Keep draining stderr so that the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

async fn over_http(tasks: bool) -> (Client, tokio::process::Child) {
    over_http_on(tasks, false).await
}

async fn over_http_on(tasks: bool, modern: bool) -> (Client, tokio::process::Child) {
    let (child, url) = spawn_http().await;
    let transport = StreamableHttpClientTransport::from_uri(url);
    (handshake(tasks, modern, transport).await, child)
}

/// The demo serving only gRPC (with reflection) on a free port, `grpc-mcp-gateway` in process
/// in front of it (descriptors from reflection), and a client of the gateway over an in-memory
/// pipe. The demo lives while its stdin stays open: it is returned with the client.
async fn through_the_gateway(tasks: bool) -> (Client, tokio::process::Child) {
    let mut demo = tokio::process::Command::new(env!("CARGO_BIN_EXE_demo"))
        .args(["--grpc", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the demo --grpc");
    let stderr = demo.stderr.take().expect("stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            // `… gRPC TaskService listening grpc_addr=127.0.0.1:PORT`
            if let Some((_, rest)) = line.split_once("grpc_addr=") {
                return rest
                    .split_whitespace()
                    .next()
                    .expect("an address")
                    .to_owned();
            }
        }
        panic!("the demo exited without serving gRPC");
    })
    .await
    .expect("the demo announces its gRPC address in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let config = grpc_mcp_gateway::Config::parse(["--target", &format!("http://{addr}")])
        .expect("gateway arguments");
    let gateway = grpc_mcp_gateway::Gateway::connect(&config)
        .await
        .expect("the gateway reads the demo's services by reflection");
    let mut services = gateway.services.clone();
    services.sort();
    assert_eq!(
        services,
        ["demo.v1.TaskService", "google.longrunning.Operations"]
    );
    let client = test_kit::connect_as(gateway.server, client_config(tasks))
        .await
        .expect("handshake");
    (client, demo)
}

/// The task scenario when `tasks` (the client was connected declaring tasks), else the plain
/// one, through `client`; then closes it.
async fn scenario_then_close(client: Client, tasks: bool) {
    if tasks {
        task_scenario(&client).await;
    } else {
        plain_scenario(&client).await;
    }
    client.cancel().await.expect("close");
}

/// With no generated code, the gateway waits for ArchiveTasks' operation the same way: the
/// same `_meta`, description, results, failure, pending result and redemption.
#[tokio::test]
async fn operations_through_the_gateway() {
    let (client, _demo) = through_the_gateway(false).await;
    scenario_then_close(client, false).await;
}

/// As tasks through the gateway: progress in the status message, and a cancelled task
/// cancels the operation in the backend.
#[tokio::test]
async fn operation_tasks_through_the_gateway() {
    let (client, _demo) = through_the_gateway(true).await;
    scenario_then_close(client, true).await;
}

/// On protocol 2026-07-28 (no `initialize`; capabilities and version in every request's
/// `_meta`): the plain scenarios over streamable HTTP, the tasks over stdio.
#[tokio::test]
async fn operations_on_2026_07_28_over_streamable_http() {
    let (client, _child) = over_http_on(false, true).await;
    scenario_then_close(client, false).await;
}

#[tokio::test]
async fn operation_tasks_on_2026_07_28_over_stdio() {
    let client = over_stdio_on(true, true, &[]).await;
    scenario_then_close(client, true).await;
}

#[tokio::test]
async fn operations_over_stdio() {
    let client = over_stdio(false).await;
    scenario_then_close(client, false).await;
}

/// In process (`--in-process`), each tool set calls its own service through `from_service`:
/// TaskService's transport answers GetOperation with `UNIMPLEMENTED`, and ArchiveTasks polls
/// through the served Operations tools' service instead.
#[tokio::test]
async fn operations_in_process() {
    let client = over_stdio_with(false, &["--in-process"]).await;
    scenario_then_close(client, false).await;
}

/// In process, a cancelled task cancels the operation through the Operations tools' service.
#[tokio::test]
async fn operation_tasks_in_process() {
    let client = over_stdio_with(true, &["--in-process"]).await;
    scenario_then_close(client, true).await;
}

#[tokio::test]
async fn operation_tasks_over_stdio() {
    let client = over_stdio(true).await;
    scenario_then_close(client, true).await;
}

#[tokio::test]
async fn operations_over_streamable_http() {
    let (client, _child) = over_http(false).await;
    scenario_then_close(client, false).await;
}

#[tokio::test]
async fn operation_tasks_over_streamable_http() {
    let (client, _child) = over_http(true).await;
    scenario_then_close(client, true).await;
}
