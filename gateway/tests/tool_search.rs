//! `--tool-search` and `--pin`: the gateway binary over stdio in front of the e2e echo services
//! by reflection lists the discovery tools and the pinned one, finds tools by plain words, and
//! calls them through `call_tool` as directly.

mod support;

use rmcp::ServiceExt as _;
use serde_json::json;
use support::{GATEWAY, stdio_logging_to, temp_dir, tool_names};

#[tokio::test]
async fn the_gateway_serves_tool_search() {
    let backend = e2e::start_backend().await.expect("backend");
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", &format!("http://{}", backend.addr)])
        .args(
            e2e::SERVICES
                .iter()
                .flat_map(|service| ["--service", service]),
        )
        .args([
            "--tool-search",
            "--pin",
            "ScalarService_Echo",
            "--pin",
            "Nope_Tool",
        ]);
    let dir = temp_dir("tool-search");
    let log = dir.join("gateway.log");
    let client = ().serve(stdio_logging_to(command, &log)).await.expect("handshake");
    assert_eq!(
        tool_names(&client).await,
        [
            "ScalarService_Echo",
            "call_tool",
            "describe_tools",
            "search_tools"
        ]
    );
    let found = test_kit::call(
        &client,
        "search_tools",
        json!({"query": "show me every item in the inventory"}),
    )
    .await
    .expect("search");
    let found = found.structured_content.expect("structured");
    assert_eq!(
        found["tools"][0]["name"], "InventoryService_ListItems",
        "{found}"
    );
    let direct = test_kit::call(&client, "InventoryService_GetItem", json!({"id": "2"}))
        .await
        .expect("direct");
    let through = test_kit::call(
        &client,
        "call_tool",
        json!({"name": "InventoryService_GetItem", "arguments": {"id": "2"}}),
    )
    .await
    .expect("through call_tool");
    assert_ne!(direct.is_error, Some(true), "{direct:?}");
    assert_eq!(through, direct);
    client.cancel().await.expect("close");
    // A pin that names no tool is said, not silently dropped.
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(
        logged.contains("--pin names no tool served now tool=\"Nope_Tool\""),
        "{logged}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
