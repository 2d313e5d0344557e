//! A backend that goes down and comes back is logged at `info`, once per change of state,
//! with the target and the cause.

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::json;

mod support;

use support::GATEWAY;

#[tokio::test]
async fn the_targets_state_is_logged_once_per_change() {
    // A port with nothing listening yet, and the testdata descriptors in a file, so that the
    // gateway starts without its backend.
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], test_kit::free_port()));
    let dir = std::env::temp_dir().join(format!("gateway-backend-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let set = dir.join("testdata.binpb");
    std::fs::write(&set, e2e::TESTDATA_DESCRIPTOR_SET).expect("descriptor set");

    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", &format!("http://{addr}")])
        .arg("--descriptor-set")
        .arg(&set)
        .args(["--service", "testdata.streaming.InventoryService"])
        .args(["--connect-timeout", "2s"])
        .env("RUST_LOG", "info");
    let (gateway, logs) = support::stdio_with_logs(command).await;
    let get = || {
        let arguments = json!({"id": "3"}).as_object().cloned();
        let mut params = CallToolRequestParams::new("InventoryService_GetItem");
        params.arguments = arguments;
        params
    };

    // Down: two failed calls, one log line; the model is told the cause, not the address.
    for _ in 0..2 {
        let result = gateway.call_tool(get()).await.expect("an answer");
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let text = serde_json::to_string(&result.content).expect("content");
        assert!(
            text.contains("UNAVAILABLE") && text.contains("the connection was refused"),
            "{text}"
        );
        assert!(
            !text.contains(&addr.port().to_string()),
            "no address: {text}"
        );
    }
    // Up: the backend starts on that port; the next calls go through.
    let backend = e2e::start_backend_at(addr).await.expect("backend");
    let mut answered = false;
    for _ in 0..50 {
        let result = gateway.call_tool(get()).await.expect("an answer");
        if result.is_error != Some(true) {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        answered,
        "the gateway never reached the backend at {}",
        backend.addr
    );
    let result = gateway.call_tool(get()).await.expect("an answer");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    gateway.cancel().await.expect("close");
    let logs = tokio::time::timeout(Duration::from_secs(30), logs)
        .await
        .expect("the gateway exits")
        .expect("stderr task");

    let down: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains("cannot be reached"))
        .collect();
    assert_eq!(down.len(), 1, "one line per change of state:\n{logs}");
    let line = down[0];
    assert!(line.contains(" INFO "), "{line}");
    assert!(
        line.contains(&format!("http://{addr}")),
        "names the target: {line}"
    );
    assert!(
        line.to_lowercase().contains("refused"),
        "names the cause: {line}"
    );
    let up = logs
        .lines()
        .filter(|line| line.contains("answers again"))
        .count();
    assert_eq!(up, 1, "{logs}");
    std::fs::remove_dir_all(&dir).ok();
}
