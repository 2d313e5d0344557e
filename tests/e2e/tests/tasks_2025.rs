//! Tasks in the shape of MCP revision 2025-11-25 (SEP-1686), with a raw JSON-RPC client
//! against the spawned `e2e-server`, over stdio and over streamable HTTP with sessions:
//! `capabilities.tasks`, `execution.taskSupport` in `tools/list`, `tools/call` with `task`,
//! `tasks/get`, `tasks/result` (equal to the direct call), `tasks/list`, `tasks/cancel`, the
//! refusals, and (over HTTP) another session's tasks staying out of sight. rmcp's own client
//! covers the final extension's shape in `tasks.rs`.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const SLOW: &str = "InventoryService_ListItems";
const FORBIDDEN: &str = "catalog_admin_CatalogService_WatchProducts";

/// The spawned server's pipes.
struct Stdio {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

/// A raw JSON-RPC client of revision 2025-11-25.
enum Raw {
    Stdio(Box<Stdio>),
    Http {
        addr: std::net::SocketAddr,
        session: Option<String>,
    },
}

impl Raw {
    fn stdio() -> Raw {
        let (child, stdin, lines) = support::spawn_stdio(&[]);
        Raw::Stdio(Box::new(Stdio {
            _child: child,
            stdin,
            lines,
        }))
    }

    /// Sends a request and returns the whole answer (`result` or `error`).
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match self {
            Raw::Stdio(pipes) => {
                let Stdio { stdin, lines, .. } = &mut **pipes;
                let mut line = message.to_string();
                line.push('\n');
                stdin.write_all(line.as_bytes()).await.expect("write");
                loop {
                    let line = support::next_line_within(lines, Duration::from_secs(20)).await;
                    let answer: Value = serde_json::from_str(&line).expect("JSON");
                    if answer["id"] == json!(id) {
                        return answer;
                    }
                }
            }
            Raw::Http { addr, session } => {
                let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
                if let Some(session) = session.as_deref() {
                    headers.push(("Mcp-Session-Id", session));
                }
                let response = support::post(*addr, &headers, message.to_string().as_bytes()).await;
                if let Some(id) = response.header("mcp-session-id") {
                    *session = Some(id.to_owned());
                }
                response
                    .messages()
                    .into_iter()
                    .find(|answer| answer["id"] == json!(id))
                    .unwrap_or_else(|| panic!("no answer to {method}: {response:?}"))
            }
        }
    }

    async fn notify(&mut self, method: &str) {
        let message = json!({"jsonrpc": "2.0", "method": method});
        match self {
            Raw::Stdio(pipes) => {
                let stdin = &mut pipes.stdin;
                let mut line = message.to_string();
                line.push('\n');
                stdin.write_all(line.as_bytes()).await.expect("write");
            }
            Raw::Http { addr, session } => {
                let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
                if let Some(session) = session.as_deref() {
                    headers.push(("Mcp-Session-Id", session));
                }
                let response = support::post(*addr, &headers, message.to_string().as_bytes()).await;
                assert_eq!(response.status, 202, "{response:?}");
            }
        }
    }

    /// `initialize` of revision 2025-11-25 declaring that revision's task capability; returns
    /// the server's capabilities.
    async fn initialize(&mut self) -> Value {
        let answer = self
            .request(
                1,
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {"list": {}, "cancel": {}}},
                    "clientInfo": {"name": "raw-2025-11-25", "version": "0"},
                }),
            )
            .await;
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-11-25",
            "{answer}"
        );
        self.notify("notifications/initialized").await;
        answer["result"]["capabilities"].clone()
    }
}

impl Raw {
    /// Sends a request that must be refused: the code and message of its JSON-RPC error.
    async fn refused(&mut self, id: u64, method: &str, params: Value) -> (i64, String) {
        error(&self.request(id, method, params).await)
    }
}

fn result(answer: &Value) -> &Value {
    assert!(answer.get("error").is_none(), "unexpected error: {answer}");
    &answer["result"]
}

fn error(answer: &Value) -> (i64, String) {
    let error = &answer["error"];
    (
        error["code"].as_i64().expect("an error code"),
        error["message"].as_str().expect("a message").to_owned(),
    )
}

/// A task as revision 2025-11-25 writes it: `ttl` and `pollInterval`, no result inline.
fn assert_task_shape(task: &Value) {
    for key in ["taskId", "status", "createdAt", "lastUpdatedAt", "ttl"] {
        assert!(task.get(key).is_some(), "no {key} in {task}");
    }
    for key in ["ttlMs", "pollIntervalMs", "result", "error", "resultType"] {
        assert!(task.get(key).is_none(), "{key} in {task}");
    }
    assert_eq!(task["pollInterval"], 500, "{task}");
}

async fn start(client: &mut Raw, id: u64, ttl: u64) -> String {
    let answer = client
        .request(
            id,
            "tools/call",
            json!({"name": SLOW, "arguments": {"name_prefix": "slow"}, "task": {"ttl": ttl}}),
        )
        .await;
    let task = &result(&answer)["task"];
    assert_task_shape(task);
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(
        task["ttl"], ttl,
        "a shorter ttl than the server's is kept: {task}"
    );
    task["taskId"].as_str().expect("a task id").to_owned()
}

async fn scenario(client: &mut Raw) {
    let capabilities = client.initialize().await;
    assert_eq!(
        capabilities["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{capabilities}"
    );

    // Tool support where revision 2025-11-25 looks for it.
    let listed = client.request(2, "tools/list", json!({})).await;
    let tools = result(&listed)["tools"].as_array().expect("tools").clone();
    let execution = |name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed"))
            .get("execution")
            .cloned()
    };
    assert_eq!(execution(SLOW), Some(json!({"taskSupport": "optional"})));
    assert_eq!(execution(FORBIDDEN), None);

    // Started, polled in this shape, and its result equal to the direct call's.
    let id = start(client, 3, 60_000).await;
    let mut polls = 0;
    let task = loop {
        let answer = client
            .request(10 + polls, "tasks/get", json!({"taskId": id}))
            .await;
        let task = result(&answer).clone();
        assert_task_shape(&task);
        if task["status"] != "working" {
            break task;
        }
        polls += 1;
        assert!(polls < 200, "the task did not end: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(task["status"], "completed", "{task}");
    let fetched = client
        .request(300, "tasks/result", json!({"taskId": id}))
        .await;
    let mut fetched = result(&fetched).clone();
    assert_eq!(
        fetched["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id})
    );
    fetched["_meta"]
        .as_object_mut()
        .expect("_meta")
        .remove("io.modelcontextprotocol/related-task");
    let direct = client
        .request(
            301,
            "tools/call",
            json!({"name": SLOW, "arguments": {"name_prefix": "slow"}}),
        )
        .await;
    assert_eq!(&fetched, result(&direct));
    assert_eq!(
        fetched["structuredContent"]["messages"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );

    // Listed; a finished task cannot be cancelled.
    let listed = client.request(302, "tasks/list", json!({})).await;
    let ids: Vec<&Value> = result(&listed)["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|task| &task["taskId"])
        .collect();
    assert!(ids.contains(&&json!(id)), "{listed}");
    let (code, message) = client
        .refused(303, "tasks/cancel", json!({"taskId": id}))
        .await;
    assert_eq!(code, -32602);
    assert!(message.contains("already completed"), "{message}");

    // Cancelled while the stream runs: the answer is the task, cancelled; it has no result.
    let id = start(client, 304, 30_000).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let cancelled = client
        .request(305, "tasks/cancel", json!({"taskId": id}))
        .await;
    assert_task_shape(result(&cancelled));
    assert_eq!(result(&cancelled)["status"], "cancelled", "{cancelled}");
    let (code, message) = client
        .refused(306, "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(code, -32602);
    assert!(message.contains("cancelled"), "{message}");

    // A tool that does not run as a task, an unknown task, and the internal method names.
    let refused = client
        .request(
            307,
            "tools/call",
            json!({"name": FORBIDDEN, "arguments": {}, "task": {}}),
        )
        .await;
    let (code, message) = error(&refused);
    assert_eq!(code, -32601);
    assert!(message.contains("call it without `task`"), "{message}");
    let (code, message) = client
        .refused(308, "tasks/result", json!({"taskId": "nope"}))
        .await;
    assert_eq!((code, message.as_str()), (-32602, "unknown task: nope"));
    let internal = "protoc-gen-rust-mcp/2025-11-25/tools/call";
    let (code, _) = client
        .refused(309, internal, json!({"name": SLOW, "arguments": {}}))
        .await;
    assert_eq!(code, -32601, "a client cannot name the internal methods");

    // Arguments the call refuses: a task that is complete with the refusal.
    let id = client
        .request(
            310,
            "tools/call",
            json!({"name": SLOW, "arguments": {"page_size": "many"}, "task": {}}),
        )
        .await;
    let id = result(&id)["task"]["taskId"]
        .as_str()
        .expect("id")
        .to_owned();
    let refusal = client
        .request(311, "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(result(&refusal)["isError"], true, "{refusal}");
}

#[tokio::test]
async fn tasks_2025_11_25_over_stdio() {
    let mut client = Raw::stdio();
    scenario(&mut client).await;
}

#[tokio::test]
async fn tasks_2025_11_25_over_streamable_http() {
    let mut server = support::spawn_http(&[]).await;
    let mut client = Raw::Http {
        addr: server.addr,
        session: None,
    };
    scenario(&mut client).await;

    // Another session sees none of the first one's tasks.
    let id = start(&mut client, 400, 60_000).await;
    let mut other = Raw::Http {
        addr: server.addr,
        session: None,
    };
    other.initialize().await;
    let (code, message) = other.refused(2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!((code, message), (-32602, format!("unknown task: {id}")));
    let (code, _) = other
        .refused(3, "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(code, -32602);
    let listed = other.request(4, "tasks/list", json!({})).await;
    assert_eq!(result(&listed)["tasks"], json!([]), "{listed}");
    server.child.kill().await.ok();
}
