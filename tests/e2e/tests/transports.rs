//! Generated tools for the testdata services, served by a real tonic backend on loopback and
//! called by rmcp's client over an in-process duplex pipe, over stdio against the spawned
//! `e2e-server` binary, and over streamable HTTP against the same binary.

mod scenario;
mod support;

#[tokio::test]
async fn in_process_duplex() {
    let client = scenario::connect_in_process().await;
    scenario::run(&client).await;
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn stdio_against_the_spawned_binary() {
    let client = support::stdio_client(()).await;
    scenario::run(&client).await;
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn streamable_http_against_the_spawned_binary() {
    let mut server = support::spawn_http(&[]).await;
    let client = support::http_client((), server.addr).await;
    scenario::run(&client).await;
    client.cancel().await.expect("close");
    server.child.kill().await.ok();
}
