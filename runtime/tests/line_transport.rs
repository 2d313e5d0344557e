//! The runtime's line transport (`serve_io`, what `serve_stdio` runs), which answers a plain
//! `tools/call` itself: `notifications/cancelled` cancels such a call and its gRPC call, and
//! its answer is not written (as rmcp drops the answer of a request it cancelled); a call
//! still running when the input ends is answered, as rmcp drains its handlers.

use test_kit::demo as common;

use std::time::Duration;

use common::TestResult;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

/// Raw JSON-RPC lines to and from a server on an in-process pipe.
struct Lines {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Lines {
    fn new(server: tonic_mcp::McpServer) -> Self {
        let (read, write) = tokio::io::split(test_kit::serve_io_in_process(server));
        Self {
            write,
            read: tokio::io::BufReader::new(read).lines(),
        }
    }

    async fn send(&mut self, message: Value) -> TestResult {
        self.write
            .write_all(format!("{message}\n").as_bytes())
            .await?;
        Ok(())
    }

    /// A session set up with [`common::grpc_server`], and its backend.
    async fn session() -> TestResult<(Self, common::Backend)> {
        let (server, backend) = common::grpc_server().await?;
        let mut lines = Self::new(server);
        lines.handshake().await?;
        Ok((lines, backend))
    }

    /// The next line the server writes.
    async fn next_line(&mut self) -> TestResult<String> {
        Ok(
            tokio::time::timeout(Duration::from_secs(10), self.read.next_line())
                .await??
                .ok_or("the server closed")?,
        )
    }

    /// The next message the server writes.
    async fn next(&mut self) -> TestResult<Value> {
        Ok(serde_json::from_str(&self.next_line().await?)?)
    }

    /// The next message, which must answer `id` with `slept_ms` from `ItemService_Slow`.
    async fn slept(&mut self, id: u64, slept_ms: u64) -> TestResult {
        let answer = self.next().await?;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"slept_ms": slept_ms}),
            "{answer}"
        );
        Ok(())
    }

    /// Ends the server's input, as a host closing stdin.
    async fn end_input(&mut self) -> TestResult {
        self.write.shutdown().await?;
        Ok(())
    }

    async fn handshake(&mut self) -> TestResult {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await?;
        assert_eq!(self.next().await?["id"], 0);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }
}

fn slow(id: u64, sleep_ms: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "ItemService_Slow", "arguments": {"sleep_ms": sleep_ms}}})
}

#[tokio::test]
async fn a_cancelled_call_is_cancelled_at_the_backend_and_never_answered() -> TestResult {
    let (mut lines, backend) = Lines::session().await?;
    lines.send(slow(1, 10_000)).await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    lines
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "the user gave up"}}),
        )
        .await?;
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(3))
        .await;
    // The next answer is the next call's: the cancelled one wrote nothing.
    lines.send(slow(2, 1)).await?;
    lines.slept(2, 1).await
}

/// A unary call with a progress token is rmcp's to answer (its context carries the token);
/// without one the transport answers it. Both answers are the same line, byte for byte:
/// results, bad arguments and gRPC errors alike.
#[tokio::test]
async fn plain_calls_are_answered_as_rmcp_answers_them() -> TestResult {
    let (mut lines, _backend) = Lines::session().await?;
    let calls = [
        ("ItemService_Slow", json!({"sleep_ms": 1})),
        ("ItemService_GetItem", json!({"id": "1"})),
        ("ItemService_GetItem", json!({"id": 5})),
        ("ItemService_GetItem", json!({})),
        (
            "ItemService_Echo",
            json!({"int64": "-7", "double": 0.1, "tags": ["a"]}),
        ),
        ("ItemService_After", json!({"seconds": 1})),
    ];
    for (name, arguments) in calls {
        let mut answers = Vec::new();
        for meta in [None, Some(json!({"progressToken": 9}))] {
            let mut params = json!({"name": name, "arguments": arguments});
            if let Some(meta) = meta {
                params["_meta"] = meta;
            }
            lines
                .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
                .await?;
            answers.push(lines.next_line().await?);
        }
        assert_eq!(answers[0], answers[1], "{name} {arguments}");
        assert!(answers[0].contains("\"result\""), "{}", answers[0]);
    }
    Ok(())
}

/// A host may write its calls and close stdin at once (README's quick start does): the answers
/// of calls still running are written before the server ends.
#[tokio::test]
async fn calls_running_when_the_input_ends_are_answered() -> TestResult {
    let (mut lines, _backend) = Lines::session().await?;
    lines.send(slow(1, 300)).await?;
    lines.end_input().await?;
    lines.slept(1, 300).await
}
