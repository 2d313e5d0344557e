//! The minimal example as an MCP host runs it: the binary over stdio, with rmcp's client.

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

fn call(name: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    params
}

#[tokio::test]
async fn the_minimal_example_serves_its_rpc_as_a_tool() {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_minimal"));
    let client =
        ().serve(TokioChildProcess::new(command).expect("spawn the example"))
            .await
            .expect("MCP handshake over stdio");

    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1, "{tools:?}");
    let tool = &tools[0];
    assert_eq!(tool.name, "Greeter_SayHello");
    assert_eq!(tool.title.as_deref(), Some("Say hello"));
    assert_eq!(
        tool.description.as_deref(),
        Some("Says hello to someone. Read-only: it changes nothing.")
    );
    let hints = tool.annotations.as_ref().expect("annotations");
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.destructive_hint, Some(false));

    let result = client
        .call_tool(call("Greeter_SayHello", json!({"name": "Ada", "times": 2})))
        .await
        .expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"message": "Hello, Ada! Hello, Ada!"}))
    );

    // A gRPC error is a result the model can read.
    let result = client
        .call_tool(call("Greeter_SayHello", json!({"name": ""})))
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = serde_json::to_string(&result.content).expect("content");
    assert!(
        text.contains("INVALID_ARGUMENT") && text.contains("say who to greet"),
        "{text}"
    );
    client.cancel().await.expect("close");
}
