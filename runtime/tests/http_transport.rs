//! Streamable HTTP: `McpServer::serve_http` on loopback, called with a plain HTTP client, with
//! header forwarding and static metadata observed by the backend's interceptor.

use test_kit::demo as common;

use std::net::SocketAddr;

use common::{TestResult, pb, start_backend};
use serde_json::{Value, json};
use tonic_mcp::{McpServer, forward_headers};

const TOKEN: &str = "Bearer secret-token-123";

/// POST one JSON-RPC message to `path` and return the status and the JSON-RPC reply.
async fn post(
    addr: SocketAddr,
    path: &str,
    message: Value,
) -> TestResult<(http::StatusCode, Value)> {
    let (status, mut messages) = post_all(addr, path, message).await?;
    Ok((status, messages.pop().unwrap_or(Value::Null)))
}

/// POST one JSON-RPC message and return the status and every message sent back (several
/// when the server streams notifications over SSE).
async fn post_all(
    addr: SocketAddr,
    path: &str,
    message: Value,
) -> TestResult<(http::StatusCode, Vec<Value>)> {
    let reply = common::http_client::send(
        addr,
        http::Method::POST,
        path,
        &[
            ("authorization", TOKEN),
            ("cookie", "session=not-forwarded"),
            ("x-unlisted", "not-forwarded"),
        ],
        Some(&message),
    )
    .await?;
    Ok((reply.status, reply.messages))
}

/// [`common::grpc_server`] over stateless streamable HTTP on loopback, and its backend.
async fn serve_stateless() -> TestResult<(test_kit::HttpServing, common::Backend)> {
    let (server, backend) = common::grpc_server().await?;
    let serving = test_kit::HttpServing::start(server, McpServer::stateless_http_config()).await?;
    Ok((serving, backend))
}

fn tools_call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn forwarded_and_static_metadata_reach_the_backend_over_http() -> TestResult {
    let (backend_addr, backend) = start_backend().await?;
    let channel = common::channel(backend_addr).await?;
    let mut metadata = tonic::metadata::MetadataMap::new();
    metadata.insert("x-static", "from-the-tool-set".parse()?);
    let tools = pb::item_service_mcp::from_channel(channel)?.with_metadata(metadata);
    let server = McpServer::builder("demo", "0.1.0")
        .on_call(forward_headers(["authorization"]))
        .tool_set(tools)?
        .build();
    let serving = test_kit::HttpServing::start(server, McpServer::stateless_http_config()).await?;
    let addr = serving.addr;

    let (status, reply) = post(
        addr,
        "/mcp",
        tools_call(1, "ItemService_GetItem", json!({"id": "7"})),
    )
    .await?;
    assert_eq!(status, http::StatusCode::OK, "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["id"],
        json!("7"),
        "{reply}"
    );

    let seen = backend.observed.last_metadata();
    assert_eq!(
        seen.get("authorization").and_then(|v| v.to_str().ok()),
        Some(TOKEN)
    );
    assert_eq!(
        seen.get("x-static").and_then(|v| v.to_str().ok()),
        Some("from-the-tool-set")
    );
    assert!(seen.get("cookie").is_none(), "unlisted header forwarded");
    assert!(
        seen.get("x-unlisted").is_none(),
        "unlisted header forwarded"
    );

    // Errors never echo forwarded values.
    let (_, reply) = post(
        addr,
        "/mcp",
        tools_call(2, "ItemService_GetItem", json!({"id": "404"})),
    )
    .await?;
    assert_eq!(reply["result"]["isError"], json!(true), "{reply}");
    assert!(!reply.to_string().contains("secret-token"), "{reply}");

    // Unknown tool: JSON-RPC invalid params.
    let (_, reply) = post(addr, "/mcp", tools_call(3, "Nope", json!({}))).await?;
    assert_eq!(reply["error"]["code"], json!(-32602), "{reply}");

    // Only /mcp is served.
    let (status, _) = post(
        addr,
        "/other",
        tools_call(4, "ItemService_GetItem", json!({})),
    )
    .await?;
    assert_eq!(status, http::StatusCode::NOT_FOUND);

    serving.stop().await??;
    Ok(())
}

#[tokio::test]
async fn server_streaming_over_http_reports_progress_then_the_result() -> TestResult {
    let (serving, _backend) = serve_stateless().await?;
    let addr = serving.addr;

    let mut message = tools_call(1, "ItemService_ListItems", json!({"count": 3}));
    message["params"]["_meta"] = json!({"progressToken": "p1"});
    let (status, messages) = post_all(addr, "/mcp", message).await?;
    assert_eq!(status, http::StatusCode::OK);
    let progress: Vec<Value> = messages
        .iter()
        .filter(|m| m["method"] == json!("notifications/progress"))
        .map(|m| m["params"]["progress"].clone())
        .collect();
    assert_eq!(
        progress,
        [json!(1.0), json!(2.0), json!(3.0)],
        "{messages:?}"
    );
    let reply = messages.last().ok_or("no reply")?;
    assert_eq!(
        reply["result"]["structuredContent"]["messages"]
            .as_array()
            .map(Vec::len),
        Some(3),
        "{reply}"
    );
    serving.stop().await??;
    Ok(())
}

#[tokio::test]
async fn closing_the_http_request_cancels_the_grpc_call() -> TestResult {
    let (serving, backend) = serve_stateless().await?;
    let addr = serving.addr;

    // The client gives up (drops the connection) long before the call would finish.
    let call = post(
        addr,
        "/mcp",
        tools_call(1, "ItemService_Slow", json!({"sleep_ms": 10_000})),
    );
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(200), call)
            .await
            .is_err()
    );
    assert!(
        backend
            .observed
            .wait_cancelled(1, std::time::Duration::from_secs(3))
            .await,
        "the backend call outlived the HTTP request"
    );
    serving.stop().await??;
    Ok(())
}

/// A named replica starts every session id with its name and a dot, so that a load balancer
/// can route each session to it (docs/scaling-out.md); the sessions work as any other, and an
/// id it did not hand out (another replica's) is a session it does not know: 404.
#[tokio::test]
async fn a_named_replica_starts_its_session_ids_with_its_name() -> TestResult {
    let (addr, _backend) = start_backend().await?;
    let tools = pb::item_service_mcp::from_channel(common::channel(addr).await?)?;
    let server = McpServer::builder("demo", "0.1.0")
        .replica("r1")
        .tool_set(tools)?
        .build();
    let serving = test_kit::HttpServing::start(server, McpServer::session_http_config()).await?;
    let addr = serving.addr;

    let mut sessions = Vec::new();
    for _ in 0..3 {
        let session = common::http_client::open_session(addr, &[], json!({})).await?;
        let uuid = session
            .strip_prefix("r1.")
            .ok_or(format!("id {session:?}"))?;
        assert_eq!(uuid.len(), 36, "not a UUID after the name: {session:?}");
        assert!(!sessions.contains(&session), "{session:?} handed out twice");
        sessions.push(session);
    }
    for (n, session) in sessions.iter().enumerate() {
        let id = n as u64 + 1;
        let reply = common::http_client::session_send(
            addr,
            &[],
            session,
            &tools_call(id, "ItemService_GetItem", json!({"id": id.to_string()})),
        )
        .await?;
        assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
        assert_eq!(
            reply.last()["result"]["structuredContent"]["id"],
            json!(id.to_string()),
            "{}",
            reply.body
        );
    }

    // Another replica's session: not found here.
    let foreign = sessions[0].replacen("r1.", "r2.", 1);
    let reply = common::http_client::session_send(
        addr,
        &[],
        &foreign,
        &tools_call(9, "ItemService_GetItem", json!({"id": "9"})),
    )
    .await?;
    assert_eq!(reply.status, http::StatusCode::NOT_FOUND, "{}", reply.body);

    // DELETE ends a named session as any other.
    let reply = common::http_client::send(
        addr,
        http::Method::DELETE,
        "/mcp",
        &[("mcp-session-id", &sessions[0])],
        None,
    )
    .await?;
    assert!(reply.status.is_success(), "{} {}", reply.status, reply.body);
    let reply = common::http_client::session_send(
        addr,
        &[],
        &sessions[0],
        &tools_call(10, "ItemService_GetItem", json!({"id": "10"})),
    )
    .await?;
    assert_eq!(reply.status, http::StatusCode::NOT_FOUND, "{}", reply.body);

    serving.stop().await??;
    Ok(())
}
