//! A raw JSON-RPC client of revision 2025-11-25 over the stdio transport, in process: what
//! the tests of that revision's task shape send, line by line.

use std::time::Duration;

use serde_json::{Value, json};
use tonic_mcp::McpServer;

use super::TestResult;

/// A raw JSON-RPC client of revision 2025-11-25 on the server's stdio transport (in process),
/// initialized with that revision's task capability.
#[derive(Debug)]
pub struct Raw2025 {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next_id: u64,
}

impl Raw2025 {
    /// Connects to `server`, and initializes with revision 2025-11-25 and its task capability.
    pub async fn connect(server: McpServer) -> TestResult<Raw2025> {
        use tokio::io::AsyncBufReadExt as _;
        let (read, write) = tokio::io::split(crate::serve_io_in_process(server));
        let mut raw = Raw2025 {
            write,
            lines: tokio::io::BufReader::new(read).lines(),
            next_id: 0,
        };
        raw.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
                "clientInfo": {"name": "raw", "version": "0"}}),
        )
        .await?;
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(raw)
    }

    /// Sends `message` as one line.
    pub async fn send(&mut self, message: Value) -> TestResult {
        use tokio::io::AsyncWriteExt as _;
        self.write
            .write_all(format!("{message}\n").as_bytes())
            .await?;
        Ok(())
    }

    /// Sends a request; the whole answer (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> TestResult<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let line = self.lines.next_line().await?.ok_or("the server closed")?;
            let answer: Value = serde_json::from_str(&line)?;
            if answer["id"] == json!(id) {
                return Ok(answer);
            }
        }
    }

    /// `tools/call` of `name` with `task`: the whole answer.
    pub async fn call_task(&mut self, name: &str, arguments: Value) -> TestResult<Value> {
        self.request(
            "tools/call",
            json!({"name": name, "arguments": arguments, "task": {}}),
        )
        .await
    }

    /// [`call_task`](Self::call_task) that must start a task: its id.
    pub async fn start(&mut self, name: &str, arguments: Value) -> TestResult<String> {
        let answer = self.call_task(name, arguments).await?;
        answer["result"]["task"]["taskId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("no task: {answer}").into())
    }

    /// Polls `tasks/get` (which does not fetch the result) until the task has ended; the task.
    pub async fn settle(&mut self, task_id: &str) -> TestResult<Value> {
        for _ in 0..400 {
            let answer = self
                .request("tasks/get", json!({"taskId": task_id}))
                .await?;
            let task = &answer["result"];
            if !matches!(task["status"].as_str(), Some("working" | "input_required")) {
                return Ok(task.clone());
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        Err(format!("task {task_id} did not end").into())
    }
}
