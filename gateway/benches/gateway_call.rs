//! Per-call cost of the gateway against the generated module, on the same loopback tonic
//! server (the `e2e` echo backend).
//!
//! - `generated`: the e2e crate's MCP server over the generated modules
//!   (`from_channel`), what a Rust project with `protoc-gen-rust-mcp` serves;
//! - `gateway`: `grpc-mcp-gateway` built in process with `--target http://…` (descriptors from
//!   gRPC reflection) and the same static header the e2e server adds.
//!
//! Both are called by rmcp's client over an in-process `tokio::io::duplex` pipe, so the only
//! difference is how the tools were made. Criterion times each variant in turn; then both run
//! in alternating blocks and the per-round ratios are printed (`interleaved …`), the figure to
//! quote on a shared machine. `GATEWAY_BENCH_ROUNDS` sets the rounds (40).
//! `cargo bench -p grpc-mcp-gateway --bench gateway_call`. Results are in `BENCHMARKS.md`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grpc_mcp_gateway::{Config, Gateway};
use rmcp::ServiceExt as _;
use rmcp::model::JsonObject;
use rmcp::service::{RoleClient, RunningService};
use test_kit::call_complete as call_tool;
use test_kit::workload::{scalars_arguments, search_arguments};
use tokio::runtime::Runtime;
use tonic_mcp::McpServer;

type Client = RunningService<RoleClient, ()>;

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
        for (tool, arguments) in [
            ("ScalarService_Echo", scalars_arguments()),
            ("SearchService_Echo", search_arguments()),
        ] {
            interleaved(&clients, tool, &arguments).await;
        }
        for (_, client) in clients {
            let _ = client.cancel().await;
        }
    });
}

/// The two variants in alternating blocks of calls (generated, gateway, gateway, generated,
/// …), so that a change in the machine's load hits both alike; prints the median and quartiles
/// of the per-round ratio gateway ÷ generated. Criterion's figures above come from one variant
/// after the other, which on a shared machine can differ by more than the effect measured.
async fn interleaved(
    clients: &[(&'static str, Client)],
    tool: &'static str,
    arguments: &JsonObject,
) {
    let rounds: usize = std::env::var("GATEWAY_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    const CALLS: u32 = 50;
    let block = |client: &Client| {
        let peer = client.peer().clone();
        async move {
            let started = std::time::Instant::now();
            for _ in 0..CALLS {
                black_box(call_tool(&peer, tool, arguments).await);
            }
            started.elapsed() / CALLS
        }
    };
    let (generated, gateway) = (&clients[0].1, &clients[1].1);
    let mut ratios = Vec::with_capacity(rounds);
    let (mut generated_total, mut gateway_total) =
        (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = block(generated).await;
            (a, block(gateway).await)
        } else {
            let b = block(gateway).await;
            (block(generated).await, b)
        };
        generated_total += a;
        gateway_total += b;
        ratios.push(b.as_secs_f64() / a.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    println!(
        "interleaved {tool}: {rounds} rounds of {CALLS} calls each; generated {:.0} µs, gateway {:.0} µs per call; \
         gateway/generated median {:.3} (quartiles {:.3}–{:.3})",
        generated_total.as_secs_f64() * 1e6 / rounds as f64,
        gateway_total.as_secs_f64() * 1e6 / rounds as f64,
        at(0.5),
        at(0.25),
        at(0.75),
    );
}

criterion_group!(benches, per_call);
criterion_main!(benches);
