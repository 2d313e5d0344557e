//! Faults with real processes: the tonic backend and the MCP server run as separate
//! `e2e-server` processes, driven by rmcp's client or a raw HTTP client.
//!
//! - the backend is not started, then started, killed mid-call and restarted: every call
//!   ends in a clear `isError` or succeeds, and calls recover without restarting the MCP
//!   server;
//! - the MCP client disconnects mid-call (HTTP connection closed, stdin closed): the backend
//!   process observes the cancellation; stdin closing ends the stdio server with exit 0;
//! - SIGTERM with HTTP calls in flight: they complete, the server exits 0, no hang.
//!
//! Covered in process elsewhere and not repeated here: the backend slower than the deadline
//! (`runtime/tests/tool_calls_over_grpc.rs::the_deadline_is_enforced_and_cancels_the_backend`),
//! failing mid-stream (`an_error_mid_stream_reports_the_status_and_the_messages_so_far`).

mod scenario;
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use test_kit::free_port;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// A backend-only `e2e-server` on `port`, and its stdout lines.
async fn backend(port: u16) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_e2e-server"))
        .args(["--backend-only", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the backend");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = next_line(&mut lines).await;
    assert!(line.starts_with("listening on"), "{line}");
    (child, lines)
}

async fn next_line(lines: &mut Lines<BufReader<ChildStdout>>) -> String {
    support::next_line_within(lines, Duration::from_secs(30)).await
}

/// Wait for the backend to report `started` and `cancelled` counts of at least these.
async fn observe(lines: &mut Lines<BufReader<ChildStdout>>, started: usize, cancelled: usize) {
    loop {
        let line = next_line(lines).await;
        let count = |key: &str| -> usize {
            line.split_whitespace()
                .find_map(|part| part.strip_prefix(key))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        if count("started=") >= started && count("cancelled=") >= cancelled {
            return;
        }
    }
}

/// Call until the tool succeeds (the channel reconnects with a backoff); the attempts taken.
async fn until_ok(client: &scenario::Client) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    for attempt in 1.. {
        let result = scenario::call(client, "InventoryService_GetItem", json!({"id": "1"}))
            .await
            .expect("tools/call is answered");
        if result.is_error != Some(true) {
            assert_eq!(result.structured_content.expect("item")["name"], "item-1");
            return attempt;
        }
        let text = scenario::text(&result);
        assert!(text.contains("UNAVAILABLE"), "{text}");
        assert!(Instant::now() < deadline, "no recovery within 30 s: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    unreachable!()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backend_down_killed_mid_call_and_restarted() {
    let port = free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_e2e-server"));
    command.args(["--backend", &format!("http://127.0.0.1:{port}")]);
    command.env("RUST_LOG", "tonic_mcp=warn");
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut log = BufReader::new(stderr.expect("stderr")).lines();
    let client = std::sync::Arc::new(
        ().serve(transport)
            .await
            .expect("the MCP server starts without its backend"),
    );

    // Not started: a clear error for the model, and for the operator a warning that names the
    // address and the cause, which the model is not told.
    let text = scenario::err(&client, "InventoryService_GetItem", json!({"id": "1"})).await;
    assert!(text.starts_with("gRPC error UNAVAILABLE"), "{text}");
    assert!(!text.contains(&port.to_string()), "{text}");
    let line = tokio::time::timeout(Duration::from_secs(10), log.next_line())
        .await
        .expect("a log line within 10 s")
        .expect("stderr")
        .expect("a log line");
    assert!(
        line.contains("WARN")
            && line.contains("the gRPC transport failed")
            && line.contains("tool=\"InventoryService_GetItem\"")
            && line.contains("code=\"UNAVAILABLE\"")
            && line.to_lowercase().contains("connection refused"),
        "{line}"
    );
    // The rest of stderr is not read again: drain it so that the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = log.next_line().await {} });

    // Started: calls recover, the MCP server was not restarted.
    let (mut first, mut lines) = backend(port).await;
    let attempts = until_ok(&client).await;
    eprintln!("faults: recovered after the backend started in {attempts} attempt(s)");

    // Killed mid-call: the call ends at once with a clear error, not at the 10 s the call
    // would take nor at the 30 s deadline.
    let slow = {
        let client = client.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = scenario::call(&client, "InventoryService_GetItem", json!({"id": "slow"}))
                .await
                .expect("answered");
            (result, started.elapsed())
        })
    };
    observe(&mut lines, 1, 0).await;
    first.kill().await.expect("kill the backend");
    let (result, took) = slow.await.expect("task");
    assert_eq!(result.is_error, Some(true));
    let text = scenario::text(&result);
    assert!(
        text.starts_with("gRPC error UNAVAILABLE")
            || text.starts_with("gRPC error UNKNOWN")
            || text.starts_with("gRPC error CANCELLED"),
        "{text}"
    );
    assert!(took < Duration::from_secs(9), "the call waited {took:?}");
    eprintln!("faults: a call in flight when the backend was killed ended in {took:?}: {text}");

    // Down again: a clear error; restarted on the same port: calls recover.
    let text = scenario::err(&client, "InventoryService_GetItem", json!({"id": "1"})).await;
    assert!(text.starts_with("gRPC error UNAVAILABLE"), "{text}");
    let (_second, _lines) = backend(port).await;
    let attempts = until_ok(&client).await;
    eprintln!("faults: recovered after the backend restarted in {attempts} attempt(s)");
    if let Ok(client) = std::sync::Arc::try_unwrap(client) {
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_mid_call_cancels_the_backend_call() {
    let port = free_port();
    let (_backend, mut lines) = backend(port).await;
    let url = format!("http://127.0.0.1:{port}");

    // Over HTTP: the connection closes while the call runs.
    let server = support::spawn_http(&["--stateless", "--backend", &url]).await;
    let call = support::tool_call(1, "InventoryService_GetItem", json!({"id": "slow"}));
    let body = call.to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        server.addr.port(),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write");
    observe(&mut lines, 1, 0).await;
    drop(stream);
    observe(&mut lines, 1, 1).await;
    // The server goes on.
    let call = support::tool_call(2, "InventoryService_GetItem", json!({"id": "2"}));
    let response = support::post(server.addr, &[], call.to_string().as_bytes()).await;
    assert!(response.body.contains("item-2"), "{response:?}");

    // Over stdio: stdin closes while the call runs; the server exits 0.
    let (mut child, mut stdin, mut out) = support::spawn_stdio(&["--backend", &url]);
    for message in [
        support::initialize(0),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        support::tool_call(1, "InventoryService_GetItem", json!({"id": "slow"})),
    ] {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
    }
    let answer = next_line(&mut out).await;
    assert!(answer.contains("\"id\":0"), "{answer}");
    observe(&mut lines, 2, 1).await;
    drop(stdin);
    observe(&mut lines, 2, 2).await;
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("exits when stdin closes")
        .expect("wait");
    assert!(status.success(), "{status}");
}

fn sigterm(child: &Child) {
    let pid = child.id().expect("pid");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_http_calls_in_flight_complete() {
    for mode in [&["--stateless"][..], &[][..]] {
        let mut server = support::spawn_http(mode).await;
        let addr = server.addr;
        let session = if mode.is_empty() {
            let response =
                support::post(addr, &[], support::initialize(0).to_string().as_bytes()).await;
            Some(
                response
                    .header("mcp-session-id")
                    .expect("session")
                    .to_owned(),
            )
        } else {
            None
        };
        let calls: Vec<_> = (1..=4)
            .map(|id| {
                let session = session.clone();
                tokio::spawn(async move {
                    let call =
                        support::tool_call(id, "WellKnownService_Sleep", json!({"value": "1s"}));
                    let headers: Vec<(&str, &str)> = session
                        .as_deref()
                        .map(|s| {
                            vec![
                                ("mcp-session-id", s),
                                ("mcp-protocol-version", "2025-06-18"),
                            ]
                        })
                        .unwrap_or_default();
                    support::post(addr, &headers, call.to_string().as_bytes()).await
                })
            })
            .collect();
        let health = support::get(addr, "/healthz").await;
        assert_eq!(
            (health.status, health.body.as_str()),
            (200, "ok\n"),
            "{health:?}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let signalled = Instant::now();
        sigterm(&server.child);
        for call in calls {
            let response = call.await.expect("task");
            assert_eq!(response.status, 200, "{mode:?}: {response:?}");
            let messages = response.messages();
            let answer = messages.last().expect("an answer");
            assert_ne!(answer["result"]["isError"], true, "{mode:?}: {answer}");
            assert_eq!(
                answer["result"]["structuredContent"],
                json!({}),
                "{mode:?}: {answer}"
            );
        }
        let status = tokio::time::timeout(Duration::from_secs(40), server.child.wait())
            .await
            .expect("the server exits after SIGTERM")
            .expect("wait");
        assert!(status.success(), "{mode:?}: {status}");
        eprintln!(
            "faults: SIGTERM {mode:?}: 4 calls in flight completed, exit 0 after {:?}",
            signalled.elapsed()
        );
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_err(),
            "no new connections after shutdown"
        );
    }
}
