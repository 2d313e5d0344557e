//! Task-augmented calls with rmcp's client against the spawned `e2e-server`, over stdio and
//! streamable HTTP: a server-streaming RPC as a task, polled with progress in the status
//! message and fetched; another one cancelled. Also on protocol 2026-07-28 over stateless HTTP.
//! The server runs with `--task-mode always`: the streams here last about a second, which the
//! default mode (`TaskMode::auto`, 2 s) would answer inline, as the last test checks.

mod support;

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientConfig, ProtocolVersion,
    TaskPayload,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use test_kit::{settle, start_task};

type Client = RunningService<RoleClient, ClientConfig>;

fn tasks_client() -> ClientConfig {
    test_kit::client_config("e2e-tasks", true)
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

async fn scenario(client: &Client) {
    // Started, polled (progress in the status message), fetched.
    let id = start_task(
        client,
        "InventoryService_ListItems",
        json!({"name_prefix": "slow"}),
    )
    .await;
    let (payload, seen) = settle(client, &id).await;
    let result = test_kit::completed(payload);
    let messages = &result.structured_content.expect("structured")["messages"];
    assert_eq!(messages.as_array().map(Vec::len), Some(5), "{messages}");
    assert_eq!(
        result.meta.expect("meta").0[tonic_mcp::STATUS_META_KEY],
        json!({"code": 0, "name": "OK"})
    );
    assert!(
        seen.iter().any(|m| m.starts_with("received message ")),
        "{seen:?}"
    );

    // Cancelled while the stream runs.
    let id = start_task(
        client,
        "InventoryService_ListItems",
        json!({"name_prefix": "slow"}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel");
    let (payload, _) = settle(client, &id).await;
    assert_eq!(payload, TaskPayload::Cancelled);

    // A tool whose task support is forbidden answers directly.
    let response = client
        .call_tool_once(call(
            "catalog_admin_CatalogService_WatchProducts",
            json!({}),
        ))
        .await
        .expect("tools/call");
    assert!(
        matches!(response, CallToolResponse::Complete(_)),
        "{response:?}"
    );
}

/// Every call a tool allows as a task is one.
const ALWAYS: [&str; 2] = ["--task-mode", "always"];

#[tokio::test]
async fn tasks_over_stdio() {
    let client = support::stdio_client_with(tasks_client(), &ALWAYS).await;
    scenario(&client).await;
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn tasks_over_streamable_http() {
    let mut server = support::spawn_http(&ALWAYS).await;
    let client = support::http_client(tasks_client(), server.addr).await;
    scenario(&client).await;
    client.cancel().await.expect("close");
    server.child.kill().await.ok();
}

/// On protocol 2026-07-28 (`server/discover`, no sessions needed), over stateless HTTP: the
/// task lives in the server, not in a session.
#[tokio::test]
async fn tasks_on_2026_07_28_over_stateless_http() {
    let mut server = support::spawn_http(&["--stateless", ALWAYS[0], ALWAYS[1]]).await;
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{}/mcp", server.addr));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = tasks_client()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("discover");
    scenario(&client).await;
    client.cancel().await.expect("close");
    server.child.kill().await.ok();
}

/// In the default task mode a call that ends within the inline wait (2 s) is answered with its
/// result, though the client declared tasks and the tool allows them; `--task-mode never`
/// answers a call of any length so.
#[tokio::test]
async fn quick_calls_are_answered_inline_by_default_and_with_never() {
    for args in [&[][..], &["--task-mode", "never"][..]] {
        let client = support::stdio_client_with(tasks_client(), args).await;
        let response = client
            .call_tool_once(call(
                "InventoryService_ListItems",
                json!({"name_prefix": "slow"}),
            ))
            .await
            .expect("tools/call");
        let CallToolResponse::Complete(result) = response else {
            panic!("{args:?}: expected the result, got {response:?}");
        };
        let messages = &result.structured_content.expect("structured")["messages"];
        assert_eq!(messages.as_array().map(Vec::len), Some(5), "{messages}");
        client.cancel().await.expect("close");
    }
}
