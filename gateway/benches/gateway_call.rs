//! Per-call cost of the gateway against the generated module, on the same loopback tonic
//! server (the `e2e` echo backend).
//!
//! - `generated`: the e2e crate's MCP server over the generated modules
//!   (`from_channel`), what a Rust project with `protoc-gen-rust-mcp` serves;
//! - `gateway`: `grpc-mcp-gateway` built in process with `--target http://…` (descriptors from
//!   gRPC reflection) and the same static header the e2e server adds.
//!
//! Both are called by rmcp's client over an in-process `tokio::io::duplex` pipe, so the only
//! difference is how the tools were made. Compare the ratio within one run:
//! `cargo bench -p grpc-mcp-gateway --bench gateway_call`. Results are in `BENCHMARKS.md`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grpc_mcp_gateway::{Config, Gateway};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject};
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use tonic_mcp::McpServer;

type Client = RunningService<RoleClient, ()>;

/// Every field of `AllScalars` set, in the canonical form the tool also returns.
fn scalars_arguments() -> JsonObject {
    object(json!({
        "f_double": 1234.5678, "f_float": 0.25, "f_int32": -42, "f_int64": "9007199254740993",
        "f_uint32": 4_000_000_000u32, "f_uint64": "18446744073709551615", "f_sint32": -7,
        "f_sint64": "-9007199254740993", "f_fixed32": 123_456, "f_fixed64": "1234567890123",
        "f_sfixed32": -123_456, "f_sfixed64": "-1234567890123", "f_bool": true,
        "f_string": "The quick brown fox jumps over the lazy dog",
        "f_bytes": "AAECYmluYXJ5IHBheWxvYWT+/w==", "r_int32": [1, -2, 3, -4, 5, -6, 7, -8],
        "r_int64": ["1", "-2", "9007199254740993", "-4"], "r_uint64": ["1", "2", "18446744073709551615"],
        "r_double": [0.5, -1.5, 3.25, 1e100], "r_string": ["alpha", "beta", "gamma"],
        "r_bytes": ["b25l", "dHdv"], "r_bool": [true, false, true], "color": "COLOR_GREEN",
        "colors": ["COLOR_RED", "COLOR_BLUE"], "nickname": "foxy", "maybe_count": 3,
    }))
}

/// A `SearchRequest` with its three oneofs set, two of them to messages.
fn search_arguments() -> JsonObject {
    object(json!({
        "query": "grpc to mcp gateways",
        "limit": 20,
        "filter": {"case": "range", "value": {"start": "2024-01-01", "end": "2024-12-31"}},
        "sort": {"case": "by_field", "value": {"field": "published", "descending": true}},
        "destination": {"case": "bucket_path", "value": "gs://results/search"},
    }))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("tool arguments must be an object, not {other}"),
    }
}

async fn call_tool(
    peer: &Peer<RoleClient>,
    name: &'static str,
    arguments: &JsonObject,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name).with_arguments(arguments.clone());
    match peer.call_tool_once(params).await {
        Ok(CallToolResponse::Complete(result)) if result.is_error != Some(true) => result,
        Ok(CallToolResponse::Complete(result)) => panic!("{name} failed: {:?}", result.content),
        Ok(_) => panic!("{name}: expected a complete result"),
        Err(e) => panic!("{name}: {e}"),
    }
}

async fn over_duplex(server: McpServer) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_io).await.expect("handshake")
}

/// The generated server and the gateway, both in front of one backend.
async fn clients() -> Vec<(&'static str, Client)> {
    let backend = e2e::start_backend().await.expect("backend");
    let generated = e2e::mcp_server(&backend).await.expect("generated server");
    let config = Config::parse([
        "--target",
        &format!("http://{}", backend.addr),
        "--header",
        "x-static: e2e",
    ])
    .expect("config");
    let gateway = Gateway::connect(&config).await.expect("gateway");
    vec![
        ("generated", over_duplex(generated).await),
        ("gateway", over_duplex(gateway.server).await),
    ]
}

fn per_call(c: &mut Criterion) {
    let rt = Runtime::new().expect("tokio runtime");
    let clients = rt.block_on(async {
        let clients = clients().await;
        // Both answer the same before anything is timed.
        for (tool, arguments) in [
            ("ScalarService_Echo", scalars_arguments()),
            ("SearchService_Echo", search_arguments()),
        ] {
            let mut answers = Vec::new();
            for (_, client) in &clients {
                answers.push(
                    call_tool(client.peer(), tool, &arguments)
                        .await
                        .structured_content,
                );
            }
            assert_eq!(answers[0], answers[1], "{tool}");
            assert!(answers[0].is_some(), "{tool}");
        }
        clients
    });
    for (group, tool, arguments) in [
        (
            "gateway/scalars_echo",
            "ScalarService_Echo",
            scalars_arguments(),
        ),
        (
            "gateway/search_echo",
            "SearchService_Echo",
            search_arguments(),
        ),
    ] {
        let mut group = c.benchmark_group(group);
        for (name, client) in &clients {
            group.bench_function(*name, |b| {
                b.to_async(&rt)
                    .iter(|| async { black_box(call_tool(client.peer(), tool, &arguments).await) });
            });
        }
        group.finish();
    }
    rt.block_on(async {
        for (_, client) in clients {
            let _ = client.cancel().await;
        }
    });
}

criterion_group!(benches, per_call);
criterion_main!(benches);
