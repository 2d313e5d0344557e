//! `minimal --grpc ADDR`, as the gateway guide uses a server of one's own: grpc-mcp-gateway
//! reads the greeter through the example's gRPC reflection (the descriptor set
//! `Builder::compile_protos` wrote, imports and well-known types included) and calls it.

use std::process::Stdio;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn the_gateway_reads_the_example_by_reflection_and_calls_it() {
    // Port 0: the example logs the address it bound. Its stdin stays open (MCP over stdio
    // runs until it closes), and `kill_on_drop` ends it with the test.
    let mut example = Command::new(env!("CARGO_BIN_EXE_minimal"))
        .args(["--grpc", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the example");
    let mut lines = BufReader::new(example.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines
            .next_line()
            .await
            .expect("read stderr")
            .expect("the example exited without serving gRPC");
        if let Some((_, rest)) = line.split_once("addr=") {
            assert!(line.contains("INFO"), "{line}");
            break rest
                .split_whitespace()
                .next()
                .expect("an address")
                .to_owned();
        }
    };

    let config = grpc_mcp_gateway::Config::parse(["--target", &format!("http://{addr}")])
        .expect("gateway arguments");
    let gateway = grpc_mcp_gateway::Gateway::connect(&config)
        .await
        .expect("the gateway reads the greeter and its imports by reflection");
    assert_eq!(gateway.services, ["greeter.v1.Greeter"]);

    // The gateway's MCP server over an in-process pipe, as over stdio.
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(gateway.server.serve_io(read, write));
    let client = ().serve(client_io).await.expect("MCP handshake");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1, "{tools:?}");
    // The title comes from `(rust_mcp.tool)`: the options proto came through reflection too.
    assert_eq!(tools[0].name, "Greeter_SayHello");
    assert_eq!(tools[0].title.as_deref(), Some("Say hello"));
    assert_eq!(
        tools[0].description.as_deref(),
        Some("Says hello to someone. Read-only: it changes nothing.")
    );

    let mut call = CallToolRequestParams::new("Greeter_SayHello");
    call.arguments = json!({"name": "Ada"}).as_object().cloned();
    let result = client.call_tool(call).await.expect("tools/call");
    assert_eq!(
        result.structured_content,
        Some(json!({"message": "Hello, Ada!"})),
        "{result:?}"
    );
    client.cancel().await.expect("close");
}
