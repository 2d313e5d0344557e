//! Arguments nested deeper than the JSON parser's own bound (serde_json stops at 128 levels)
//! against the `e2e-server` binary, over stdio and streamable HTTP: every request gets an
//! answer, the documented `isError` for a `tools/call` and a JSON-RPC parse error naming the
//! depth otherwise, and the server keeps serving. Before the fix, stdio never answered and
//! HTTP answered with an opaque error.

mod scenario;
mod support;

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

/// 70 levels of `{"children": [...]}` around a leaf: 141 levels of arguments.
const LEVELS: usize = 70;
const EXPECTED: &str = "arguments nest 141 levels deep; the limit is 64 levels";

async fn deep_call_is_refused_and_the_server_keeps_serving(client: &scenario::Client) {
    let text = scenario::err(
        client,
        "RecursionService_EchoTree",
        support::nested_tree(LEVELS),
    )
    .await;
    assert!(
        text.contains("Invalid arguments for tool `RecursionService_EchoTree`")
            && text.contains(EXPECTED),
        "{text}"
    );
    // Just over the limit, within the parser's bound: the same refusal.
    let text = scenario::err(
        client,
        "RecursionService_EchoTree",
        support::nested_tree(32),
    )
    .await;
    assert!(
        text.contains("arguments nest 65 levels deep; the limit is 64 levels"),
        "{text}"
    );
    // And the server still answers.
    let out = scenario::ok(client, "RecursionService_EchoTree", support::nested_tree(3)).await;
    assert_eq!(out, support::nested_tree(3));
}

/// [`deep_call_is_refused_and_the_server_keeps_serving`] through `client`, every call answered
/// within a minute; then closes the client.
async fn deep_call_within_a_minute_then_close(client: scenario::Client) {
    tokio::time::timeout(
        Duration::from_secs(60),
        deep_call_is_refused_and_the_server_keeps_serving(&client),
    )
    .await
    .expect("every call is answered");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn stdio_answers_a_call_nested_past_the_parser_bound() {
    let client = support::stdio_client(()).await;
    deep_call_within_a_minute_then_close(client).await;
}

#[tokio::test]
async fn streamable_http_answers_a_call_nested_past_the_parser_bound() {
    for mode in [&[][..], &["--stateless"][..]] {
        let server = support::spawn_http(mode).await;
        let client = support::http_client((), server.addr).await;
        deep_call_within_a_minute_then_close(client).await;
    }
}

/// A message that is not a `tools/call` and nests too deep gets a JSON-RPC parse error with
/// its id; a line that is not JSON gets a parse error with a null id (there is no id to
/// answer); the server goes on, and exits 0 when stdin closes.
#[tokio::test]
async fn stdio_raw_lines() {
    let (mut child, mut stdin, mut lines) = support::spawn_stdio(&[]);
    let mut next = async || -> Value {
        let line = support::next_line_within(&mut lines, Duration::from_secs(30)).await;
        serde_json::from_str(&line).expect("JSON-RPC")
    };
    let mut send = async |message: String| {
        stdin.write_all(message.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    };
    send(support::initialize(1).to_string()).await;
    assert_eq!(next().await["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).await;

    let deep_ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": support::nested_tree(LEVELS)}});
    send(deep_ping.to_string()).await;
    let answer = next().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the message nests 143 levels deep; the limit is 100 levels"),
        "{answer}"
    );

    send("{this is not json".to_owned()).await;
    let answer = next().await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer.get("id"), Some(&Value::Null), "{answer}");
    send(
        support::tool_call(3, "RecursionService_EchoTree", support::nested_tree(LEVELS))
            .to_string(),
    )
    .await;
    let answer = next().await;
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer.to_string().contains(EXPECTED), "{answer}");

    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).to_string()).await;
    let answer = next().await;
    assert_eq!(answer["id"], 4, "{answer}");
    assert!(answer["result"]["tools"].is_array(), "{answer}");

    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("exits when stdin closes")
        .expect("wait");
    assert!(status.success(), "{status}");
}

/// Over HTTP a deep message that is not a `tools/call` is answered 400 with a JSON-RPC parse
/// error; a deep `tools/call` without a session in session mode gets rmcp's own answer.
#[tokio::test]
async fn streamable_http_raw_deep_message() {
    let server = support::spawn_http(&["--stateless"]).await;
    let deep_ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"x": support::nested_tree(LEVELS)}});
    let response = support::post(server.addr, &[], deep_ping.to_string().as_bytes()).await;
    assert_eq!(response.status, 400, "{response:?}");
    let messages = response.messages();
    assert_eq!(messages.len(), 1, "{response:?}");
    assert_eq!(messages[0]["id"], 9);
    assert_eq!(messages[0]["error"]["code"], -32700);

    let call = support::tool_call(
        10,
        "RecursionService_EchoTree",
        support::nested_tree(LEVELS),
    );
    let response = support::post(server.addr, &[], call.to_string().as_bytes()).await;
    assert_eq!(response.status, 200, "{response:?}");
    let messages = response.messages();
    let answer = messages.last().expect("a JSON-RPC answer");
    assert_eq!(answer["id"], 10, "{response:?}");
    assert_eq!(answer["result"]["isError"], true, "{response:?}");
    assert!(answer.to_string().contains(EXPECTED), "{response:?}");
}
