//! The example's logs, as `docs/serving.md` ("Logs") describes them: on stderr, never on stdout
//! (the MCP channel), filtered by RUST_LOG (`info,rmcp=warn` when unset); the runtime's line
//! per tool call is at `debug`.

use std::process::Stdio;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::io::AsyncReadExt as _;

/// Runs the example with RUST_LOG set to `rust_log` (unset: `None`), makes one failing tool
/// call over MCP, closes it, and returns what it wrote on stderr.
async fn stderr_of_a_failing_call(rust_log: Option<&str>) -> String {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_minimal"));
    match rust_log {
        Some(filter) => command.env("RUST_LOG", filter),
        None => command.env_remove("RUST_LOG"),
    };
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the example");
    let mut stderr = stderr.expect("stderr");
    let reading = tokio::spawn(async move {
        let mut text = String::new();
        stderr.read_to_string(&mut text).await.expect("read stderr");
        text
    });
    let client = ().serve(transport).await.expect("MCP handshake over stdio");
    let mut call = CallToolRequestParams::new("Greeter_SayHello");
    call.arguments = json!({"name": ""}).as_object().cloned();
    let result = client.call_tool(call).await.expect("tools/call");
    assert_eq!(result.is_error, Some(true), "{result:?}");
    client.cancel().await.expect("close");
    // The example exits when its stdin closes; its stderr then ends.
    reading.await.expect("stderr reader")
}

#[tokio::test]
async fn rust_log_debug_shows_the_runtimes_line_per_tool_call_on_stderr() {
    let stderr = stderr_of_a_failing_call(Some("tonic_mcp=debug")).await;
    let line = stderr
        .lines()
        .find(|line| line.contains("tool call finished"))
        .unwrap_or_else(|| panic!("no `tool call finished` line on stderr:\n{stderr}"));
    for part in [
        "DEBUG",
        "mcp.tool_call{",
        "tool=Greeter_SayHello",
        "INVALID_ARGUMENT",
        "tonic_mcp::",
    ] {
        assert!(line.contains(part), "`{part}` is not in: {line}");
    }
}

#[tokio::test]
async fn without_rust_log_a_session_logs_nothing_below_warn() {
    // `info,rmcp=warn`: no debug line, and none of rmcp's info lines about the session.
    let stderr = stderr_of_a_failing_call(None).await;
    assert!(
        !stderr.contains("DEBUG") && !stderr.contains("INFO"),
        "lines below warn without RUST_LOG:\n{stderr}"
    );
}
