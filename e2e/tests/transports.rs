//! Generated tools for the testdata services, served by a real tonic backend on loopback and
//! called by rmcp's client over an in-process duplex pipe, over stdio against the spawned
//! `e2e-server` binary, and over streamable HTTP against the same binary.

mod scenario;

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncBufReadExt;

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
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_e2e-server"))
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn e2e-server --http");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("server announces its address in time")
        .expect("read stdout")
        .expect("a line");
    let addr = line
        .strip_prefix("listening on ")
        .expect("address line")
        .to_owned();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = ().serve(transport).await.expect("handshake over HTTP");
    scenario::run(&client).await;
    client.cancel().await.expect("close");
    child.kill().await.ok();
}
