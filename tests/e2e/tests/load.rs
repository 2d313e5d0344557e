//! Load and soak over streamable HTTP against the spawned `e2e-server`, stateless and session
//! mode: 16 concurrent rmcp clients each make N tool calls, twice; every call must succeed,
//! and the server's RSS after the second round must be within 10% of its RSS after the first.
//!
//! CI runs N = 50; `RELIABILITY_FULL=1` runs the N = 1,000 (16,000 calls a round).
//! `LOAD_CALLS=N` sets N; `LOAD_EXTRA_ROUNDS=K` runs K more rounds, printing RSS after each.

mod scenario;
mod support;

use std::time::Instant;

use rmcp::ServiceExt as _;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

const CLIENTS: usize = 16;

fn calls_per_client() -> usize {
    if let Some(calls) = std::env::var("LOAD_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return calls;
    }
    if std::env::var_os("RELIABILITY_FULL").is_some() {
        1_000
    } else {
        50
    }
}

/// One round: `CLIENTS` clients connect, make `calls` calls each (a mix of tools), disconnect.
/// The number of calls that failed.
async fn round(addr: std::net::SocketAddr, calls: usize) -> usize {
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|client_index| {
            tokio::spawn(async move {
                let transport =
                    StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
                let client = ().serve(transport).await.expect("handshake");
                let mut failed = 0;
                for call in 0..calls {
                    let n = (client_index + call) % 5 + 1;
                    let (tool, arguments, check) = match call % 3 {
                        0 => (
                            "InventoryService_GetItem",
                            json!({"id": n.to_string()}),
                            json!(format!("item-{n}")),
                        ),
                        1 => (
                            "ScalarService_Echo",
                            json!({"f_int64": call.to_string(), "f_string": "load"}),
                            json!(call.to_string()),
                        ),
                        _ => ("InventoryService_ListItems", json!({"limit": 2}), json!(2)),
                    };
                    let ok = match scenario::call(&client, tool, arguments).await {
                        Ok(result) if result.is_error != Some(true) => {
                            let out = result.structured_content.unwrap_or_default();
                            match call % 3 {
                                0 => out["name"] == check,
                                1 => {
                                    out["f_int64"] == check
                                        || (call == 0 && out.get("f_int64").is_none())
                                }
                                _ => out["messages"].as_array().map(Vec::len) == Some(2),
                            }
                        }
                        _ => false,
                    };
                    if !ok {
                        failed += 1;
                    }
                }
                let _ = client.cancel().await;
                failed
            })
        })
        .collect();
    let mut failed = 0;
    for task in tasks {
        failed += task.await.expect("client task");
    }
    failed
}

async fn load(mode: &[&str], label: &str) {
    let calls = calls_per_client();
    let server = support::spawn_http(mode).await;
    let pid = server.child.id().expect("pid");
    let rss_start = support::rss_kib(pid);
    let started = Instant::now();
    let failed_first = round(server.addr, calls).await;
    let first = started.elapsed();
    let rss_first = support::rss_kib(pid);
    let started = Instant::now();
    let failed_second = round(server.addr, calls).await;
    let second = started.elapsed();
    let rss_second = support::rss_kib(pid);
    // More rounds on request (LOAD_EXTRA_ROUNDS), to tell growth that continues from warm-up.
    let extra: usize = test_kit::env_or("LOAD_EXTRA_ROUNDS", 0);
    for index in 0..extra {
        let failed = round(server.addr, calls).await;
        eprintln!(
            "load {label}: extra round {}: errors {failed}, RSS {} KiB",
            index + 3,
            support::rss_kib(pid)
        );
        assert_eq!(failed, 0, "{label}: calls failed");
    }
    let total = CLIENTS * calls;
    eprintln!(
        "load {label}: {CLIENTS} clients x {calls} calls, twice: errors {failed_first} + {failed_second} of {total} + {total}; \
         {first:.1?} and {second:.1?}; RSS start {rss_start} KiB, after round 1 {rss_first} KiB, after round 2 {rss_second} KiB"
    );
    assert_eq!(
        (failed_first, failed_second),
        (0, 0),
        "{label}: calls failed"
    );
    assert!(
        rss_second * 10 <= rss_first * 11,
        "{label}: RSS grew from {rss_first} KiB to {rss_second} KiB in the second round"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_load_has_no_errors_and_flat_memory() {
    load(&["--stateless"], "stateless").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_load_has_no_errors_and_flat_memory() {
    load(&[], "session").await;
}
