//! What the gateway's integration tests share.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt as _;

/// The gateway binary under test.
pub(crate) const GATEWAY: &str = env!("CARGO_BIN_EXE_grpc-mcp-gateway");

/// Starts the gateway with `--http 127.0.0.1:0` added, and reads the bound address it prints.
pub(crate) async fn spawn_http(
    mut command: tokio::process::Command,
) -> (tokio::process::Child, String) {
    let mut child = command
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the gateway");
    let stdout = child.stdout.take().expect("stdout");
    let line = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::io::BufReader::new(stdout).lines().next_line(),
    )
    .await
    .expect("the gateway announces its address in time")
    .expect("read stdout")
    .expect("a line");
    let addr = line.strip_prefix("listening on ").expect("address line");
    (child, addr.to_owned())
}
