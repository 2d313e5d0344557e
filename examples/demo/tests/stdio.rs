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

/// The JSON-RPC lines README's quick start sends (`cargo run -q -p demo <<'EOF'`), as written.
fn readme_lines() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md is readable");
    let mut lines = readme
        .lines()
        .skip_while(|line| *line != "cargo run -q -p demo <<'EOF'")
        .skip(1)
        .take_while(|line| *line != "EOF")
        .peekable();
    assert!(
        lines.peek().is_some(),
        "README.md has no `cargo run -q -p demo <<'EOF'` block"
    );
    lines.map(|line| format!("{line}\n")).collect()
}

#[test]
fn readmes_stdio_lines_get_their_answers_then_a_clean_exit() {
    let input = readme_lines();
    assert!(input.contains(r#""method":"initialize""#), "{input}");
    let (status, stdout, stderr) = run_demo(&input);
    assert!(status.success(), "{status}: {stderr}");
    let responses: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON-RPC message per line"))
        .collect();
    let by_id = |id: u64| {
        responses
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no response to request {id}: {stdout}"))
    };
    assert_eq!(by_id(1)["result"]["serverInfo"]["name"], "demo");
    let tools = by_id(2)["result"]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 13, "{tools:?}");
    let call = &by_id(3)["result"];
    assert_eq!(call["isError"], false, "{call}");
    let text = call["content"][0]["text"].as_str().expect("text content");
    let task: serde_json::Value = serde_json::from_str(text).expect("the result is JSON");
    assert_eq!(task["id"], "task-1", "{task}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
}

/// The handshake lines every bad-input case starts with.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bad-input","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
);

/// Stdout's JSON-RPC messages, each line parsed.
fn messages(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The answer whose `id` is `id`.
fn answer(messages: &[serde_json::Value], id: serde_json::Value) -> &serde_json::Value {
    messages
        .iter()
        .find(|m| {
            m.get("id") == Some(&id) && (m.get("result").is_some() || m.get("error").is_some())
        })
        .unwrap_or_else(|| panic!("no answer to id {id} in {messages:#?}"))
}

#[test]
fn bad_input_on_stdio_gets_the_documented_answers() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"TaskService_GetTask","arguments":{{"id":{}"task-1"{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let input = format!(
        "{HANDSHAKE}{}\n{deep}\n{}\n{}\n{}\n",
        // Arguments that are not an object: a tool result with isError, not -32601.
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"TaskService_GetTask","arguments":[1]}}"#,
        // Not JSON, and a line cut short: parse errors with a null id.
        "this is not json",
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"#,
        // The server still answers afterwards.
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    );
    let (status, stdout, stderr) = run_demo(&input);
    assert!(status.success(), "{status}: {stderr}");
    let messages = messages(&stdout);

    // Requests 2 and 3: isError results saying what is wrong.
    for (id, says) in [(2, "object"), (3, "levels deep")] {
        let refused = answer(&messages, serde_json::json!(id));
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let text = refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains(says), "{text}");
    }

    let parse_errors: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["error"]["code"] == -32700)
        .collect();
    assert_eq!(parse_errors.len(), 2, "{stdout}");
    for error in parse_errors {
        assert!(
            error
                .as_object()
                .is_some_and(|o| o.get("id") == Some(&serde_json::Value::Null)),
            "a parse error answers with \"id\": null: {error}"
        );
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("not a JSON-RPC message")),
            "{error}"
        );
    }

    let listed = answer(&messages, serde_json::json!(5));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
}
