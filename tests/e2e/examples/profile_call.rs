//! A fixed number of `ScalarService.Echo` calls, for instruction-level profiling with callgrind
//! (which counts instructions, so a loaded machine does not skew it):
//!
//! ```sh
//! cargo build --release -p e2e --example profile_call
//! valgrind --tool=callgrind --callgrind-out-file=target/callgrind.direct \
//!     target/release/examples/profile_call direct 2000
//! valgrind --tool=callgrind --callgrind-out-file=target/callgrind.mcp \
//!     target/release/examples/profile_call mcp 2000
//! callgrind_annotate --inclusive=yes target/callgrind.mcp | head -60
//! ```
//!
//! `stdio` is `mcp` through the runtime's own line transport (`McpServer::serve_io`, what
//! `serve_stdio` runs: the message guard, and the direct read of a `tools/call` line) instead
//! of rmcp's transport for a pipe.
//!
//! `http` is `mcp` over streamable HTTP, stateless (`McpServer::serve_http` on loopback TCP,
//! with `stateless_http_config`), from a raw keep-alive HTTP/1.1 client posting the same
//! pre-serialised requests. `http2026` is the same for a client of revision 2026-07-28: no
//! `initialize`, the request `_meta` that stands for it in every call, and the SEP-2243
//! headers (`Mcp-Method`, `Mcp-Name`) on every request.
//!
//! `http-store` is `http` on a server with a task store (`MemoryTaskStore`), as replicas that
//! share tasks run: a call without a task must not touch it, and cost what `http` costs.
//!
//! `direct` calls the tonic echo server through the generated tonic client; `mcp` sends the
//! same message as pre-serialised `tools/call` requests from a raw JSON-RPC client on an
//! in-process duplex pipe to `McpServer`, whose tool calls the same server over a channel. Both
//! run on a current-thread runtime (one thread for callgrind to follow); the backend is served
//! in the same runtime over loopback TCP.

#[path = "../benches/common/mod.rs"]
mod common;

use e2e::testdata::scalars::scalar_service_client::ScalarServiceClient;
use e2e::testdata::scalars::scalar_service_server::ScalarServiceServer;
use serde_json::json;
use tonic_mcp::McpServer;
use tonic_mcp_serve::ServeHttp as _;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("mcp").to_owned();
    let calls: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let incoming = tonic::transport::server::TcpIncoming::bind(([127, 0, 0, 1], 0).into())
            .expect("bind")
            .with_nodelay(Some(true));
        let addr = incoming.local_addr().expect("addr");
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(ScalarServiceServer::new(e2e::services::Scalars))
                .serve_with_incoming(incoming),
        );
        let channel = tonic::transport::Endpoint::try_from(format!("http://{addr}"))
            .expect("endpoint")
            .connect()
            .await
            .expect("connect");
        if mode == "direct" {
            let mut client = ScalarServiceClient::new(channel);
            for _ in 0..calls {
                let echoed = client
                    .echo(common::light_scalars())
                    .await
                    .expect("echo")
                    .into_inner();
                assert_eq!(echoed.f_int64, 9_007_199_254_740_993);
            }
        } else {
            let tools =
                e2e::testdata::scalars::scalar_service_mcp::from_channel(channel).expect("tools");
            let mut server = McpServer::builder("profile", "0")
                .tool_set(tools)
                .expect("tool set");
            if mode == "http-store" {
                server = server.replica("profile").task_router(
                    tonic_mcp_tasks::Tasks::new().store(tonic_mcp_tasks::MemoryTaskStore::new()),
                );
            }
            let server = server.build();
            let arguments = json!({
                "f_double": 1234.5678, "f_float": 0.25, "f_int32": -42,
                "f_int64": "9007199254740993", "f_uint32": 4_000_000_000u32,
                "f_uint64": "18446744073709551615",
                "f_string": "The quick brown fox jumps over the lazy dog",
                "f_bytes": "AAECYmluYXJ5IHBheWxvYWT+/w==",
                "r_int32": [1, -2, 3, -4, 5, -6, 7, -8],
                "r_string": ["alpha", "beta", "gamma"],
                "color": "COLOR_GREEN", "nickname": "foxy",
            });
            let arguments = arguments.as_object().expect("object");
            let call = if mode == "http2026" {
                common::RawCall::revision_2026("ScalarService_Echo", arguments)
            } else {
                common::RawCall::new("ScalarService_Echo", arguments)
            };
            let answered = |response: &[u8]| {
                assert!(
                    response.windows(17).any(|w| w == b"structuredContent"),
                    "{}",
                    String::from_utf8_lossy(response)
                );
            };
            if mode == "http" || mode == "http2026" || mode == "http-store" {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let addr = listener.local_addr().expect("address");
                tokio::spawn(server.serve_http(listener, McpServer::stateless_http_config()));
                let mut client = if mode != "http2026" {
                    common::RawHttp::connect(addr).await
                } else {
                    common::RawHttp::connect_2026(addr).await
                };
                for _ in 0..calls {
                    answered(&client.call(&call).await);
                }
            } else {
                let client = if mode == "stdio" {
                    common::RawDuplex::connect_lines(server).await
                } else {
                    common::RawDuplex::connect(server).await
                };
                for _ in 0..calls {
                    answered(&client.call(&call).await);
                }
            }
        }
    });
}
