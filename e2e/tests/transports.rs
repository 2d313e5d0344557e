//! Generated tools for the testdata services, served by a real tonic backend on loopback and
//! called by rmcp's client over an in-process duplex pipe, over stdio against the spawned
//! `e2e-server` binary, and over streamable HTTP against the same binary.

mod scenario;
mod support;

use rmcp::ServiceExt;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

#[tokio::test]
async fn in_process_duplex() {
    let client = scenario::connect_in_process().await;
    scenario::run(&client).await;
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn stdio_against_the_spawned_binary() {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_e2e-server"));
    let transport = TokioChildProcess::new(command).expect("spawn e2e-server");
    let client = ().serve(transport).await.expect("handshake over stdio");
    scenario::run(&client).await;
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn streamable_http_against_the_spawned_binary() {
    let mut server = support::spawn_http(&[]).await;
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{}/mcp", server.addr));
    let client = ().serve(transport).await.expect("handshake over HTTP");
    scenario::run(&client).await;
    client.cancel().await.expect("close");
    server.child.kill().await.ok();
}
