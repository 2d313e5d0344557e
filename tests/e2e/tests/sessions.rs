//! Session mode over streamable HTTP against the spawned `e2e-server`: sessions opened and never
//! deleted are bounded by a cap (refused with 503 and a JSON-RPC error naming the limit) and by
//! the idle timeout, so memory stays bounded; sessions opened before the cap keep working. A
//! session closed with DELETE answers 204 and is gone.
//!
//! `RELIABILITY_FULL=1` runs the full count (10,000 sessions); CI runs 2,000.

mod support;

use std::time::Duration;

use serde_json::Value;

fn full() -> bool {
    std::env::var_os("RELIABILITY_FULL").is_some()
}

/// Open one session with a raw `initialize` and never delete it; the status, and the session
/// id when one was given.
async fn open(addr: std::net::SocketAddr, id: u64) -> (u16, Option<String>, Vec<Value>, String) {
    let response = support::post(addr, &[], support::initialize(id).to_string().as_bytes()).await;
    let session = response.header("mcp-session-id").map(str::to_owned);
    (response.status, session, response.messages(), response.body)
}

/// Open `count` sessions, 32 at a time; how many were accepted and refused, and the first
/// refusal's messages.
async fn open_many(addr: std::net::SocketAddr, count: u64) -> (u64, u64, Option<Vec<Value>>) {
    let mut accepted = 0;
    let mut refused = 0;
    let mut first_refusal = None;
    let mut id = 0;
    while id < count {
        let batch: Vec<_> = (id..(id + 32).min(count))
            .map(|id| tokio::spawn(open(addr, id)))
            .collect();
        id += batch.len() as u64;
        for task in batch {
            let (status, session, messages, body) = task.await.expect("task");
            match status {
                200 => {
                    assert!(session.is_some(), "an accepted session has an id");
                    accepted += 1;
                }
                503 => {
                    refused += 1;
                    first_refusal.get_or_insert(messages);
                }
                other => panic!("unexpected status {other}: {body}"),
            }
        }
    }
    (accepted, refused, first_refusal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_never_deleted_are_capped_and_memory_stays_bounded() {
    let cap: u32 = 500;
    let attempts = if full() { 10_000 } else { 2_000 };
    let server = support::spawn_http(&["--max-sessions", &cap.to_string()]).await;
    let pid = server.child.id().expect("pid");
    let rss_start = support::rss_kib(pid);

    // A client that opened its session early keeps it.
    let (status, early, _, _) = open(server.addr, 0).await;
    assert_eq!(status, 200);
    let early = early.expect("session id");

    let (accepted, refused, refusal) = open_many(server.addr, u64::from(cap)).await;
    assert_eq!(
        accepted,
        u64::from(cap) - 1,
        "up to the cap, every session opens"
    );
    assert_eq!(refused, 1);
    let rss_at_cap = support::rss_kib(pid);

    let (accepted, refused, refusal_after) = open_many(server.addr, attempts).await;
    assert_eq!(accepted, 0, "no session opens over the cap");
    assert_eq!(refused, attempts);
    let rss_after = support::rss_kib(pid);
    let refusal = refusal.or(refusal_after).expect("a refusal");
    let message = refusal[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("too many open sessions (the limit is 500)"),
        "{refusal:?}"
    );

    // The early session still answers.
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"});
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("mcp-session-id", early.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let response = support::post(server.addr, &headers, initialized.to_string().as_bytes()).await;
    assert_eq!(response.status, 202, "{response:?}");
    let response = support::post(server.addr, &headers, list.to_string().as_bytes()).await;
    assert_eq!(response.status, 200, "{response:?}");
    let messages = response.messages();
    assert!(
        messages
            .iter()
            .any(|m| m["id"] == 99 && m["result"]["tools"].is_array()),
        "{response:?}"
    );

    eprintln!(
        "sessions: cap {cap}, {attempts} more attempts refused; RSS start {rss_start} KiB, at cap {rss_at_cap} KiB, after {rss_after} KiB"
    );
    // Refused attempts allocate nothing that stays: RSS after them is within 10% of RSS at
    // the cap (both measured in this run).
    assert!(
        rss_after * 10 <= rss_at_cap * 11,
        "RSS grew from {rss_at_cap} KiB at the cap to {rss_after} KiB after {attempts} refused sessions"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire() {
    let server = support::spawn_http(&["--max-sessions", "50", "--idle-timeout-ms", "300"]).await;
    let (accepted, refused, _) = open_many(server.addr, 60).await;
    assert_eq!((accepted, refused), (50, 10));
    // Once they have been idle past the timeout, the slots are free again.
    let mut reopened = 0;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (status, _, _, _) = open(server.addr, 1000).await;
        if status == 200 {
            reopened += 1;
            break;
        }
    }
    assert_eq!(reopened, 1, "an expired session frees its slot within 5 s");
    // The others expire in turn (they were opened over some milliseconds).
    let mut accepted = 0;
    for _ in 0..50 {
        accepted += open_many(server.addr, 49 - accepted).await.0;
        if accepted == 49 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(accepted, 49, "every idle session expired within 5 s");
}

#[tokio::test]
async fn a_deleted_session_is_gone() {
    let server = support::spawn_http(&[]).await;
    let (status, session, _, body) = open(server.addr, 1).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let deleted = support::delete(server.addr, &headers).await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let after = support::post(server.addr, &headers, list.to_string().as_bytes()).await;
    assert_eq!(after.status, 404, "{after:?}");
}
