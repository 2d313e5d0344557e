//! The demo binary under stdio, as an MCP host starts it.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the demo with `input` on stdin (then closed) and returns (status, stdout, stderr).
fn run_demo(input: &str) -> (std::process::ExitStatus, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the demo starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("stdin written");
    drop(stdin);
    let output = child.wait_with_output().expect("the demo exits");
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn stdin_closed_before_initialize_is_a_quiet_success() {
    let (status, stdout, stderr) = run_demo("");
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(stdout, "");
    assert!(
        !stderr.contains("ERROR") && !stderr.contains("WARN"),
        "{stderr}"
    );
}

#[test]
fn a_session_then_stdin_closed_is_a_success_too() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n",
    );
    let (status, stdout, stderr) = run_demo(input);
    assert!(status.success(), "{status}: {stderr}");
    assert!(stdout.contains(r#""id":1"#), "{stdout}");
    assert!(stdout.contains("TaskService_GetTask"), "{stdout}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
}
