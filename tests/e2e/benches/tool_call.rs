//! Per-call overhead of an MCP `tools/call` against a direct tonic call to the same loopback
//! tonic server, and throughput under concurrency.
//!
//! Every variant calls the same loopback tonic echo backend (the `e2e` services, see
//! `e2e::start_backend`), with the arguments of `test_kit::workload`:
//!
//! - `direct_tonic`: the generated tonic client, message in, message out.
//! - `mcp_duplex`: rmcp's client over an in-process `tokio::io::duplex` pipe to `McpServer`
//!   (JSON in, normalise, validate, decode, tonic, encode, JSON out).
//! - `mcp_http_session`: the same over streamable HTTP with rmcp's default server
//!   configuration (a session, SSE responses) via `McpServer::serve_http` on `127.0.0.1:0` and
//!   rmcp's reqwest client.
//! - `mcp_http_stateless`: the same with `McpServer::stateless_http_config()` (no session,
//!   plain JSON responses).
//! - `raw_duplex`: a raw JSON-RPC client on the duplex pipe: requests serialised once,
//!   responses read as bytes (the client's parsing is not counted).
//! - `raw_lines`: the same client, the server on the runtime's own line transport
//!   (`McpServer::serve_io`, what `serve_stdio` runs) instead of rmcp's.
//! - `raw_http_stateless`: a raw keep-alive HTTP/1.1 client (hyper) posting pre-serialised
//!   requests to the stateless endpoint, responses read as bytes.
//!
//! Variants run one after another in the same process, so compare ratios within one run. Run
//! with `cargo bench -p e2e --bench tool_call`; results are in `BENCHMARKS.md`.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use e2e::testdata::oneofs::search_service_client::SearchServiceClient;
use e2e::testdata::oneofs::{DateRange, FieldSort, SearchRequest, search_request};
use e2e::testdata::scalars::scalar_service_client::ScalarServiceClient;
use e2e::testdata::scalars::{AllScalars, Color};
use rmcp::ServiceExt;
use test_kit::workload::{scalars_arguments, search_arguments};

use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use test_kit::call_complete as call_tool;
use tokio::runtime::Runtime;
use tokio::task::JoinSet;
use tonic::transport::Channel;
use tonic_mcp::{McpServer, StreamableHttpServerConfig};
use tonic_mcp_serve::ServeHttp as _;

/// Concurrent calls per iteration in the throughput group.
const CONCURRENCY: [usize; 2] = [1, 16];

const SCALARS_TOOL: &str = "ScalarService_Echo";
const SEARCH_TOOL: &str = "SearchService_Echo";

/// An `AllScalars` with every field set and a few elements in each repeated field:
/// `profile_call`'s message and the rest.
fn scalars_message() -> AllScalars {
    AllScalars {
        f_sint32: -7,
        f_sint64: -9_007_199_254_740_993,
        f_fixed32: 123_456,
        f_fixed64: 1_234_567_890_123,
        f_sfixed32: -123_456,
        f_sfixed64: -1_234_567_890_123,
        f_bool: true,
        r_int64: vec![1, -2, 9_007_199_254_740_993, -4],
        r_uint64: vec![1, 2, 18_446_744_073_709_551_615],
        r_double: vec![0.5, -1.5, 3.25, 1e100],
        r_bytes: vec![b"one".to_vec(), b"two".to_vec()],
        r_bool: vec![true, false, true],
        colors: vec![Color::Red as i32, Color::Blue as i32],
        maybe_count: Some(3),
        ..common::light_scalars()
    }
}

/// A `SearchRequest` with all three oneofs set, two of them to messages.
fn search_message() -> SearchRequest {
    SearchRequest {
        query: "grpc to mcp gateways".to_owned(),
        limit: Some(20),
        filter: Some(search_request::Filter::Range(DateRange {
            start: "2024-01-01".to_owned(),
            end: "2024-12-31".to_owned(),
        })),
        sort: Some(search_request::Sort::ByField(FieldSort {
            field: "published".to_owned(),
            descending: true,
        })),
        destination: Some(search_request::Destination::BucketPath(
            "gs://results/search".to_owned(),
        )),
    }
}

type Client = RunningService<RoleClient, ()>;

/// A direct tonic client per service and an MCP client per transport, all calling one backend.
struct Fixture {
    scalars: ScalarServiceClient<Channel>,
    search: SearchServiceClient<Channel>,
    /// Named MCP clients, in report order. Kept alive for the whole run.
    mcp: Vec<(&'static str, Client)>,
    /// The raw JSON-RPC client on its own duplex pipe, served by rmcp's transport.
    raw_duplex: common::RawDuplex,
    /// The same, served by the runtime's line transport (what `serve_stdio` runs).
    raw_lines: common::RawDuplex,
    /// Keep-alive connections to a stateless HTTP endpoint, one per call in flight.
    raw_http: Vec<tokio::sync::Mutex<common::RawHttp>>,
}

impl Fixture {
    async fn start() -> Fixture {
        let backend = e2e::start_backend().await.expect("backend");
        let channel = e2e::channel(&backend).await.expect("channel");

        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let server = e2e::mcp_server(&backend).await.expect("MCP server");
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let duplex = ().serve(client_io).await.expect("duplex handshake");

        let session = http_client(&backend, StreamableHttpServerConfig::default()).await;
        let stateless = http_client(&backend, McpServer::stateless_http_config()).await;

        let raw_duplex =
            common::RawDuplex::connect(e2e::mcp_server(&backend).await.expect("MCP server")).await;
        let raw_lines =
            common::RawDuplex::connect_lines(e2e::mcp_server(&backend).await.expect("MCP server"))
                .await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let server = e2e::mcp_server(&backend).await.expect("MCP server");
        tokio::spawn(server.serve_http(listener, McpServer::stateless_http_config()));
        let mut raw_http = Vec::new();
        for _ in 0..CONCURRENCY[CONCURRENCY.len() - 1] {
            raw_http.push(tokio::sync::Mutex::new(
                common::RawHttp::connect(addr).await,
            ));
        }

        Fixture {
            scalars: ScalarServiceClient::new(channel.clone()),
            search: SearchServiceClient::new(channel),
            mcp: vec![
                ("mcp_duplex", duplex),
                ("mcp_http_session", session),
                ("mcp_http_stateless", stateless),
            ],
            raw_duplex,
            raw_lines,
            raw_http,
        }
    }

    /// Checks, once, that every path echoes the representative messages, so the benchmarks
    /// time successful calls of the intended shape.
    async fn check(&self) {
        let scalars = self
            .scalars
            .clone()
            .echo(scalars_message())
            .await
            .expect("direct scalars echo")
            .into_inner();
        assert_eq!(scalars, scalars_message());
        let search = self
            .search
            .clone()
            .echo(search_message())
            .await
            .expect("direct search echo")
            .into_inner();
        assert_eq!(search, search_message());
        for (transport, client) in &self.mcp {
            for (tool, arguments) in [
                (SCALARS_TOOL, scalars_arguments()),
                (SEARCH_TOOL, search_arguments()),
            ] {
                let result = call_tool(client.peer(), tool, &arguments).await;
                let out = result.structured_content.expect("structuredContent");
                for (key, value) in &arguments {
                    assert_eq!(out.get(key), Some(value), "{transport} {tool}: field {key}");
                }
            }
        }
        for (tool, arguments) in [
            (SCALARS_TOOL, scalars_arguments()),
            (SEARCH_TOOL, search_arguments()),
        ] {
            let call = common::RawCall::new(tool, &arguments);
            let duplex = self.raw_duplex.call(&call).await;
            let lines = self.raw_lines.call(&call).await;
            let http = self.raw_http[0].lock().await.call(&call).await;
            for (transport, bytes) in [
                ("raw_duplex", duplex),
                ("raw_lines", lines),
                ("raw_http_stateless", http),
            ] {
                let response: Value = serde_json::from_slice(&bytes).expect("JSON-RPC response");
                let out = &response["result"]["structuredContent"];
                for (key, value) in &arguments {
                    assert_eq!(out.get(key), Some(value), "{transport} {tool}: field {key}");
                }
            }
        }
    }
}

async fn http_client(backend: &e2e::Backend, config: StreamableHttpServerConfig) -> Client {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let server = e2e::mcp_server(backend).await.expect("MCP server");
    tokio::spawn(server.serve_http(listener, config));
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    ().serve(transport).await.expect("HTTP handshake")
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// One direct tonic call and one `tools/call` per transport, for one message.
fn per_call(c: &mut Criterion) {
    let rt = runtime();
    let fixture = rt.block_on(async {
        let fixture = Fixture::start().await;
        fixture.check().await;
        fixture
    });

    let mut group = c.benchmark_group("per_call/scalars_echo");
    group.bench_function("direct_tonic", |b| {
        b.to_async(&rt).iter(|| async {
            let mut client = fixture.scalars.clone();
            black_box(client.echo(scalars_message()).await.expect("echo"));
        });
    });
    mcp_variants(
        &mut group,
        &rt,
        &fixture,
        SCALARS_TOOL,
        &scalars_arguments(),
    );
    group.finish();

    let mut group = c.benchmark_group("per_call/search_echo");
    group.bench_function("direct_tonic", |b| {
        b.to_async(&rt).iter(|| async {
            let mut client = fixture.search.clone();
            black_box(client.echo(search_message()).await.expect("echo"));
        });
    });
    mcp_variants(&mut group, &rt, &fixture, SEARCH_TOOL, &search_arguments());
    group.finish();

    rt.block_on(close(fixture));
}

/// The MCP variants of one `per_call` group: a `tools/call` of `tool` with `arguments` through
/// each of rmcp's transports, then the raw duplex and raw stateless HTTP clients.
fn mcp_variants(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &Runtime,
    fixture: &Fixture,
    tool: &'static str,
    arguments: &serde_json::Map<String, Value>,
) {
    for (transport, client) in &fixture.mcp {
        group.bench_function(*transport, |b| {
            b.to_async(rt)
                .iter(|| async { black_box(call_tool(client.peer(), tool, arguments).await) });
        });
    }
    let call = common::RawCall::new(tool, arguments);
    group.bench_function("raw_duplex", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(fixture.raw_duplex.call(&call).await) });
    });
    group.bench_function("raw_lines", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(fixture.raw_lines.call(&call).await) });
    });
    group.bench_function("raw_http_stateless", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(fixture.raw_http[0].lock().await.call(&call).await) });
    });
}

/// `n` concurrent `ScalarService.Echo` calls per iteration, each in its own task; criterion
/// reports calls per second.
fn throughput(c: &mut Criterion) {
    let rt = runtime();
    let fixture = rt.block_on(async {
        let fixture = Fixture::start().await;
        fixture.check().await;
        fixture
    });
    let arguments = Arc::new(scalars_arguments());

    let mut group = c.benchmark_group("throughput/scalars_echo");
    for n in CONCURRENCY {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("direct_tonic", n), &n, |b, &n| {
            b.to_async(&rt).iter(|| async {
                let mut calls = JoinSet::new();
                for _ in 0..n {
                    let mut client = fixture.scalars.clone();
                    calls.spawn(async move { client.echo(scalars_message()).await.map(drop) });
                }
                while let Some(done) = calls.join_next().await {
                    done.expect("task").expect("echo");
                }
            });
        });
        for (transport, client) in &fixture.mcp {
            group.bench_with_input(BenchmarkId::new(*transport, n), &n, |b, &n| {
                b.to_async(&rt).iter(|| async {
                    let mut calls = JoinSet::new();
                    for _ in 0..n {
                        let peer = client.peer().clone();
                        let arguments = arguments.clone();
                        calls.spawn(async move {
                            drop(call_tool(&peer, SCALARS_TOOL, &arguments).await);
                        });
                    }
                    while let Some(done) = calls.join_next().await {
                        done.expect("task");
                    }
                });
            });
        }
        let call = common::RawCall::new(SCALARS_TOOL, &arguments);
        group.bench_with_input(BenchmarkId::new("raw_duplex", n), &n, |b, &n| {
            b.to_async(&rt).iter(|| async {
                futures_util::future::join_all((0..n).map(|_| fixture.raw_duplex.call(&call))).await
            });
        });
        group.bench_with_input(BenchmarkId::new("raw_lines", n), &n, |b, &n| {
            b.to_async(&rt).iter(|| async {
                futures_util::future::join_all((0..n).map(|_| fixture.raw_lines.call(&call))).await
            });
        });
        group.bench_with_input(BenchmarkId::new("raw_http_stateless", n), &n, |b, &n| {
            b.to_async(&rt).iter(|| async {
                futures_util::future::join_all(
                    fixture.raw_http[..n]
                        .iter()
                        .map(|connection| async { connection.lock().await.call(&call).await }),
                )
                .await
            });
        });
    }
    group.finish();

    rt.block_on(close(fixture));
}

async fn close(fixture: Fixture) {
    for (_, client) in fixture.mcp {
        let _ = client.cancel().await;
    }
}

criterion_group! {
    name = benches;
    // Short runs: the whole file takes about two minutes on two cores.
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = per_call, throughput
}
criterion_main!(benches);
