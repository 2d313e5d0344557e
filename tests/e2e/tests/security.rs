//! Security checks of the streamable HTTP endpoint:
//!
//! - a foreign `Host` or `Origin` is refused (403) unless allowed (`e2e-server`, real process);
//! - the request body cap is enforced before buffering: a 100 MB POST is refused at once from
//!   its `Content-Length`, and a chunked one after about the cap, without the server growing;
//! - with every tracing event and span captured at TRACE level (runtime, rmcp, tonic, h2,
//!   hyper), a forwarded `authorization` value never appears in the output, nor in results
//!   or errors;
//! - the documented `on_call` bearer-token hook refuses calls without the token, clearly.
//!
//! Only allow-listed headers are forwarded: `runtime/tests/http_transport.rs`
//! (`forwarded_and_static_metadata_reach_the_backend_over_http`) checks it on the backend.

mod support;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tonic_mcp::{McpServer, Refusal};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

const SECRET: &str = "Bearer tok-5f1c9e2a-never-logged";

/// The status of a raw `initialize` POST with `host` as its Host header and `origin`, if any
/// (`initialize` is answered in both HTTP modes).
async fn status_with(addr: std::net::SocketAddr, host: &str, origin: Option<&str>) -> u16 {
    let list = support::initialize(1).to_string();
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{list}",
        list.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    support::read_response(&mut stream).await.status
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused_unless_allowed() {
    let server = support::spawn_http(&[
        "--stateless",
        "--allow-origin",
        "https://app.example.com",
        "--allow-host",
        "mcp.example.com",
    ])
    .await;
    let port = server.addr.port();
    let local = format!("127.0.0.1:{port}");
    let cases = [
        // No Origin (not a browser), allowed and foreign hosts.
        (local.clone(), None, 200),
        (format!("localhost:{port}"), None, 200),
        ("mcp.example.com".to_owned(), None, 200),
        ("evil.example.com".to_owned(), None, 403),
        (format!("attacker.test:{port}"), None, 403),
        // A page on this machine calling a server on this machine (the conformance suite's
        // dns-rebinding-protection case, the Inspector's web UI): any loopback origin and port.
        (local.clone(), Some(format!("http://127.0.0.1:{port}")), 200),
        (local.clone(), Some("http://localhost:6274".to_owned()), 200),
        (
            format!("localhost:{port}"),
            Some("https://localhost".to_owned()),
            200,
        ),
        (
            format!("[::1]:{port}"),
            Some(format!("http://[::1]:{port}")),
            200,
        ),
        // DNS rebinding: a foreign page reaching the loopback server.
        (
            local.clone(),
            Some("https://evil.example.com".to_owned()),
            403,
        ),
        (local.clone(), Some("null".to_owned()), 403),
        // The origins the operator allowed, under its public name.
        (
            "mcp.example.com".to_owned(),
            Some("https://app.example.com".to_owned()),
            200,
        ),
        (
            local.clone(),
            Some("https://app.example.com".to_owned()),
            200,
        ),
        // A page on the caller's machine is foreign to a server reached by a public name.
        (
            "mcp.example.com".to_owned(),
            Some("http://localhost:6274".to_owned()),
            403,
        ),
        (
            "mcp.example.com".to_owned(),
            Some("http://127.0.0.1".to_owned()),
            403,
        ),
    ];
    for (host, origin, expected) in cases {
        let status = status_with(server.addr, &host, origin.as_deref()).await;
        assert_eq!(status, expected, "Host {host}, Origin {origin:?}");
    }

    // Without an allow-list, loopback origins pass and every other Origin is refused by
    // tonic-mcp's configurations, in both modes.
    for mode in [&["--stateless"][..], &[]] {
        let default = support::spawn_http(mode).await;
        let local = format!("127.0.0.1:{}", default.addr.port());
        let origin = format!("http://{local}");
        for (origin, expected) in [(origin.as_str(), 200), ("https://app.example.com", 403)] {
            let status = status_with(default.addr, &local, Some(origin)).await;
            assert_eq!(status, expected, "{mode:?}: Origin {origin}");
        }
    }
}

#[tokio::test]
async fn a_100_mb_post_is_refused_before_it_is_buffered() {
    let server = support::spawn_http(&["--stateless", "--max-body", "1048576"]).await;
    let pid = server.child.id().expect("pid");
    let rss_before = support::rss_kib(pid);

    // Declared 100 MB: refused from the header, with no byte of the body sent.
    let mut stream = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.addr.port(),
        100 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let response = support::read_response(&mut stream).await;
    assert_eq!(response.status, 413, "{response:?}");
    assert!(response.body.contains("1048576 bytes"), "{response:?}");

    // Chunked, no length: read frame by frame and refused once past the cap.
    let mut stream = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        server.addr.port()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let chunk = vec![b' '; 64 * 1024];
    let mut sent = 0usize;
    let (mut read, mut write) = stream.into_split();
    let reader = tokio::spawn(async move {
        let mut raw = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(30), read.read_to_end(&mut raw)).await;
        raw
    });
    while sent < 100 * 1024 * 1024 {
        let frame = format!("{:x}\r\n", chunk.len());
        let written = async {
            write.write_all(frame.as_bytes()).await?;
            write.write_all(&chunk).await?;
            write.write_all(b"\r\n").await
        };
        match tokio::time::timeout(Duration::from_secs(2), written).await {
            Ok(Ok(())) => sent += chunk.len(),
            // The server stopped reading (it answered and closed).
            _ => break,
        }
        if reader.is_finished() {
            break;
        }
    }
    let response = support::parse_response(&reader.await.expect("reader"));
    let rss_after = support::rss_kib(pid);
    eprintln!(
        "security: chunked 100 MB POST refused with {} after {} KiB sent; server RSS {rss_before} KiB -> {rss_after} KiB",
        response.status,
        sent / 1024
    );
    assert_eq!(response.status, 413, "{response:?}");
    assert!(sent < 32 * 1024 * 1024, "{sent} bytes were accepted");
    assert!(
        rss_after < rss_before + 16 * 1024,
        "the server grew from {rss_before} KiB to {rss_after} KiB"
    );
}

/// Everything every span and event records, as text.
#[derive(Default, Clone)]
struct Everything {
    next: Arc<AtomicU64>,
    text: Arc<Mutex<String>>,
}

struct Write<'a>(&'a mut String);

impl Visit for Write<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push_str(&format!(" {}={value}", field.name()));
    }
}

impl Everything {
    fn push(&self, line: String) {
        if let Ok(mut text) = self.text.lock() {
            text.push_str(&line);
            text.push('\n');
        }
    }
}

impl Subscriber for Everything {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut line = format!("span {}", attributes.metadata().name());
        attributes.record(&mut Write(&mut line));
        self.push(line);
        Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut line = String::from("record");
        values.record(&mut Write(&mut line));
        self.push(line);
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = format!(
            "event {} {}",
            event.metadata().level(),
            event.metadata().target()
        );
        event.record(&mut Write(&mut line));
        self.push(line);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// The bearer-token hook of `McpServerBuilder::on_call`'s documentation.
fn bearer(
    expected: &'static str,
) -> impl Fn(&tonic_mcp::CallContext<'_>, &mut tonic::metadata::MetadataMap) -> Result<(), Refusal>
+ Send
+ Sync
+ 'static {
    move |call, _metadata| match call.header("authorization").map(|value| value.as_bytes()) {
        None => Err(Refusal::new(
            "missing bearer token: send `Authorization: Bearer <token>`",
        )),
        Some(given) if given == expected.as_bytes() => Ok(()),
        Some(_) => Err(Refusal::new("invalid bearer token")),
    }
}

async fn serve(server: McpServer) -> std::net::SocketAddr {
    test_kit::HttpServing::start(server, McpServer::stateless_http_config())
        .await
        .expect("bind")
        .addr
}

fn answer(response: &support::RawResponse) -> Value {
    response.messages().pop().unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_secrets_never_reach_traces_results_or_errors_and_the_bearer_hook_refuses() {
    let capture = Everything::default();
    tracing::subscriber::set_global_default(capture.clone()).expect("the only subscriber");

    let backend = e2e::start_backend().await.expect("backend");
    // e2e's server forwards `authorization` to the backend; a second one checks it first.
    let forwarding = serve(e2e::mcp_server(&backend).await.expect("server")).await;
    let checked = serve(
        e2e::mcp_server_builder(&backend)
            .await
            .expect("builder")
            .on_call(bearer(SECRET))
            .build(),
    )
    .await;

    let with_secret = [("Authorization", SECRET)];
    let calls = [
        support::tool_call(1, "InventoryService_GetItem", json!({"id": "1"})),
        support::tool_call(2, "InventoryService_GetItem", json!({"id": "404"})),
        support::tool_call(3, "InventoryService_GetItem", json!({"id": ""})),
        support::tool_call(4, "InventoryService_GetItem", json!({"id": 5})),
        support::tool_call(
            5,
            "InventoryService_ListItems",
            json!({"name_prefix": "fail"}),
        ),
        support::tool_call(6, "InventoryService_Nope", json!({})),
    ];
    let mut answers = Vec::new();
    for call in &calls {
        for addr in [forwarding, checked] {
            let response = support::post(addr, &with_secret, call.to_string().as_bytes()).await;
            answers.push(answer(&response));
        }
    }
    // The token reached the backend (so it was there to leak).
    let seen = backend.metadata.lock().expect("metadata").clone();
    assert!(
        seen.iter()
            .any(|m| m.get("authorization").and_then(|v| v.to_str().ok()) == Some(SECRET)),
        "the backend saw the forwarded token"
    );
    assert_eq!(answers[0]["result"]["structuredContent"]["name"], "item-1");
    assert_eq!(answers[1]["result"]["structuredContent"]["name"], "item-1");
    for answer in &answers {
        assert!(!answer.to_string().contains("tok-5f1c9e2a"), "{answer}");
    }

    // The hook refuses without the token, or with another one, and says why.
    let call = support::tool_call(7, "InventoryService_GetItem", json!({"id": "1"}));
    for (headers, expected) in [
        (&[][..], "call refused: missing bearer token"),
        (
            &[("Authorization", "Bearer wrong")][..],
            "call refused: invalid bearer token",
        ),
    ] {
        let response = support::post(checked, headers, call.to_string().as_bytes()).await;
        let answer = answer(&response);
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with(expected), "{text}");
    }

    let text = capture.text.lock().expect("capture").clone();
    let lines = text.lines().count();
    eprintln!("security: {lines} TRACE-level span/event lines captured, token absent");
    assert!(lines > 100, "TRACE capture is live: {lines} lines");
    assert!(
        text.contains("mcp.tool_call"),
        "the runtime's spans are captured"
    );
    assert!(
        !text.contains("tok-5f1c9e2a"),
        "the forwarded token appears in the traces"
    );
}

/// `Host` or `Origin` given twice, and an absolute-form target whose authority is not the
/// `Host` header's, are refused with 400 (RFC 9112 section 3.2), whatever the first says:
/// the checks read one of them, and the other would decide where the request was meant to go.
#[tokio::test]
async fn an_ambiguous_host_or_origin_is_refused() {
    let server = support::spawn_http(&["--stateless"]).await;
    let port = server.addr.port();
    let body = support::initialize(1).to_string();
    let send = async |target: &str, headers: &str| {
        let request = format!(
            "POST {target} HTTP/1.1\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut stream = tokio::net::TcpStream::connect(server.addr)
            .await
            .expect("connect");
        stream.write_all(request.as_bytes()).await.expect("write");
        support::read_response(&mut stream).await
    };
    let local = format!("Host: 127.0.0.1:{port}\r\n");
    let cases = [
        ("/mcp", local.clone(), 200),
        ("/mcp", format!("{local}Host: evil.example\r\n"), 400),
        (
            "/mcp",
            format!("{local}Origin: http://127.0.0.1:{port}\r\nOrigin: https://evil.example\r\n"),
            400,
        ),
        ("http://evil.example/mcp", local.clone(), 400),
        (&format!("http://127.0.0.1:{port}/mcp"), local.clone(), 200),
    ];
    for (target, headers, status) in &cases {
        let response = send(target, headers).await;
        assert_eq!(
            response.status, *status,
            "{target} {headers:?}: {response:?}"
        );
    }
}

/// In a session, a request whose id is already in flight is refused at once (409 with a
/// JSON-RPC invalid-request error naming the id) and never runs; the first still gets its
/// answer, another id runs beside it, and the id can be used again once answered.
#[tokio::test]
async fn a_request_id_in_flight_is_not_run_twice() {
    let server = support::spawn_http(&[]).await;
    let addr = server.addr;
    let session = support::open_session(addr).await.expect("a session");
    let call = |id: u64, item: &str| {
        support::tool_call(id, "InventoryService_GetItem", json!({"id": item})).to_string()
    };
    let slow = {
        let (session, call) = (session.clone(), call(2, "slow"));
        tokio::spawn(async move {
            support::post(
                addr,
                &[("mcp-session-id", session.as_str())],
                call.as_bytes(),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let headers = [("mcp-session-id", session.as_str())];
    let started = std::time::Instant::now();
    let again = support::post(addr, &headers, call(2, "1").as_bytes()).await;
    assert_eq!(again.status, 409, "{again:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "refused at once"
    );
    let refusal = again.messages();
    assert_eq!(refusal[0]["id"], 2, "{again:?}");
    assert_eq!(refusal[0]["error"]["code"], -32600, "{again:?}");
    assert!(
        refusal[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("id 2 is already in flight")),
        "{again:?}"
    );
    let other = support::post(addr, &headers, call(3, "1").as_bytes()).await;
    assert_eq!(other.status, 200, "{other:?}");
    assert_eq!(other.messages().last().expect("answer")["id"], 3);
    let first = slow.await.expect("task");
    assert_eq!(first.status, 200, "{first:?}");
    let answer = first.messages();
    let answer = answer.last().expect("the slow call's answer");
    assert_eq!(answer["id"], 2, "{answer}");
    // "slow" is no item: after its ten seconds the backend answers NOT_FOUND.
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let reused = support::post(addr, &headers, call(2, "1").as_bytes()).await;
    assert_eq!(reused.status, 200, "{reused:?}");
    assert_eq!(
        reused.messages().last().expect("answer")["result"]["structuredContent"]["id"],
        "1"
    );
}
