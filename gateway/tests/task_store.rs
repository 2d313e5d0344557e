//! `--task-store`: two gateway processes on one Redis (Debian's, which
//! `scripts/install-tools.sh redis` unpacks into `.tools/redis`; `TONIC_MCP_REDIS_SERVER` names
//! another redis-server), as replicas behind a load balancer. A task started on one is answered
//! on the other; with the store stopped, a call that becomes a task fails and
//! `mcp_task_store_errors_total` counts it.
//!
//! Without a redis-server these tests say so and pass, unless `TONIC_MCP_REDIS_REQUIRED` is
//! set, as scripts/test.sh sets it: there they fail.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{GATEWAY, metrics, spawn_http, temp_dir};
use test_kit::redis::{Redis, redis_server};

/// A JSON-RPC request of revision 2025-11-25 to the stateless gateway at `addr`: the JSON-RPC
/// response (the message with an id, of a JSON body or of an event stream, read up to it: the
/// stream may stay open after it).
fn send(addr: &str, method: &str, params: Value) -> Value {
    use std::io::{Read as _, Write as _};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut stream = std::net::TcpStream::connect(addr).expect("the gateway");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("read timeout");
    write!(
        stream,
        "POST /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("request");
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = stream.read(&mut chunk).unwrap_or_else(|e| {
            panic!(
                "{method}: {e}, after {}",
                String::from_utf8_lossy(&response)
            )
        });
        response.extend_from_slice(&chunk[..read]);
        let text = String::from_utf8_lossy(&response);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            assert!(head.contains(" 200 "), "{method}: {text}");
            let messages: Vec<Value> = body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .chain(serde_json::from_str(body).ok())
                .collect();
            if let Some(reply) = messages.into_iter().find(|m| m.get("id").is_some()) {
                return reply;
            }
        }
        assert!(read > 0, "{method}: no response in {text}");
    }
}

/// The series `name` of the metrics `text`.
fn series(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no series {name}:\n{text}"))
}

/// A gateway replica `name` on the store at `port`, its password in a file of `dir`.
async fn replica(
    target: &str,
    port: u16,
    name: &str,
    dir: &std::path::Path,
) -> (tokio::process::Child, String, u16) {
    let password = dir.join("redis-password");
    std::fs::write(&password, "s3cret-pw\n").expect("password file");
    let metrics_port = test_kit::free_port();
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", target, "--stateless", "--task-mode", "always"])
        .args(["--replica", name])
        .args(["--task-store", &format!("redis://127.0.0.1:{port}/0")])
        .arg("--task-store-password-file")
        .arg(&password)
        .args(["--task-store-prefix", "gateway-test:"])
        .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
    let (child, addr) = spawn_http(command).await;
    (child, addr, metrics_port)
}

// Multi-threaded: the requests below block their thread, and the backend runs in this runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_tasks_and_count_the_stores_errors() {
    let Some(server) = redis_server() else {
        return;
    };
    let dir = temp_dir("task-store");
    let port = test_kit::free_port();
    let mut redis = Redis::start(server, port, Some("s3cret-pw"));
    let backend = e2e::start_backend().await.expect("backend");
    let target = format!("http://{}", backend.addr);
    let (mut a, a_addr, a_metrics) = replica(&target, port, "a", &dir).await;
    let (mut b, b_addr, _) = replica(&target, port, "b", &dir).await;

    // Declared at zero before any error.
    let text = metrics(a_metrics);
    assert!(
        text.contains("# TYPE mcp_task_store_errors_total counter"),
        "{text}"
    );
    assert_eq!(
        series(&text, "mcp_task_store_errors_total{operation=\"create\"}"),
        0.0
    );

    // A task started on a, answered on b.
    // A server-streaming RPC: its tool may run as a task.
    let call = json!({
        "name": "InventoryService_ListItems",
        "arguments": {"name_prefix": "item"},
        "task": {},
    });
    let started = send(&a_addr, "tools/call", call.clone());
    let task_id = started["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task id: {started}"))
        .to_owned();
    let got = send(&b_addr, "tasks/get", json!({"taskId": task_id}));
    assert!(
        matches!(
            got["result"]["status"].as_str(),
            Some("working" | "completed")
        ),
        "{got}"
    );
    let result = send(&b_addr, "tasks/result", json!({"taskId": task_id}));
    let direct = send(
        &a_addr,
        "tools/call",
        json!({"name": "InventoryService_ListItems", "arguments": {"name_prefix": "item"}}),
    );
    assert_eq!(
        result["result"]["structuredContent"], direct["result"]["structuredContent"],
        "{result}"
    );
    assert!(
        result["result"]["structuredContent"].is_object(),
        "{result}"
    );

    // The store stopped: a call that becomes a task fails, and the failure is counted.
    redis.stop();
    let failed = send(&a_addr, "tools/call", call);
    assert!(failed.get("error").is_some(), "{failed}");
    let text = metrics(a_metrics);
    assert!(
        series(&text, "mcp_task_store_errors_total{operation=\"create\"}") >= 1.0,
        "{text}"
    );
    a.kill().await.ok();
    b.kill().await.ok();
    std::fs::remove_dir_all(&dir).ok();
}
