//! Tool sets made from descriptors at run time: descriptor pools decoded (editions refused by
//! name), and the demo service's streaming tools made from its pool and called in-process.

use test_kit::demo as common;

use std::time::{Duration, Instant};

use common::{Backend, TestResult, call_err, call_ok, connect, pb};
use pb::item_service_server::ItemServiceServer;
use serde_json::json;
use tonic_mcp::{McpServer, codegen::BoxTransport};

#[test]
fn descriptor_pools_decode_and_editions_are_refused_by_name() -> TestResult {
    use prost::Message as _;
    let pool = tonic_mcp_dynamic::DescriptorTools::decode_pool(pb::MCP_FILE_DESCRIPTOR_SET)?;
    assert!(pool.get_service_by_name("demo.v1.ItemService").is_some());

    // prost-reflect 0.16 panics on an editions file; the pool is refused before it gets one.
    let set = prost_types::FileDescriptorSet {
        file: vec![prost_types::FileDescriptorProto {
            name: Some("ed.proto".to_owned()),
            package: Some("ed".to_owned()),
            syntax: Some("editions".to_owned()),
            ..Default::default()
        }],
    };
    let Err(error) = tonic_mcp_dynamic::DescriptorTools::decode_pool(&set.encode_to_vec()) else {
        return Err("an editions file must be refused".into());
    };
    let message = error.to_string();
    assert!(
        message.contains("ed.proto")
            && message.contains("editions")
            && message.contains("prost-reflect"),
        "{message}"
    );
    Ok(())
}

/// `"mcp.stream"` (listed on every tool whose RPC streams responses) shortens this call's
/// window and lowers its message bound; what it ends is truncation, and a bad value is an
/// `isError` naming the path.
#[tokio::test]
async fn a_call_can_ask_for_a_shorter_window_and_fewer_messages() -> TestResult {
    let pool = tonic_mcp_dynamic::DescriptorTools::decode_pool(pb::MCP_FILE_DESCRIPTOR_SET)?;
    let options = tonic_mcp::schema::Options::default();
    let transport = BoxTransport::new(ItemServiceServer::new(Backend::default()));
    let tools = tonic_mcp_dynamic::DescriptorTools::new(&pool, &options)
        .service("demo.v1.ItemService", transport)?
        .with_timeout(Duration::from_secs(20));
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let listed = server
        .tools()
        .iter()
        .find(|tool| tool.name == "ItemService_ListItems")
        .map(|tool| tool.input_schema.get("properties").cloned());
    assert!(
        listed
            .flatten()
            .is_some_and(|p| p.get("mcp.stream").is_some()),
        "the stream control is not listed"
    );
    let unary_listed = server
        .tools()
        .iter()
        .find(|tool| tool.name == "ItemService_GetItem")
        .and_then(|tool| tool.input_schema.get("properties").cloned());
    assert!(unary_listed.is_some_and(|p| p.get("mcp.stream").is_none()));
    let (client, _) = connect(server).await?;

    let bounded = call_ok(
        &client,
        "ItemService_ListItems",
        json!({"count": 10, "mcp.stream": {"maxMessages": 3}}),
    )
    .await?;
    assert_eq!(bounded["messages"].as_array().map(Vec::len), Some(3));
    assert_eq!(bounded["truncated"], json!(true));

    // 100 messages 50 ms apart would take 5 s; a 400 ms window ends it, with a few messages.
    let started = Instant::now();
    let windowed = call_ok(
        &client,
        "ItemService_ListItems",
        json!({"count": 100, "delayMs": 50, "mcp.stream": {"windowMs": 400}}),
    )
    .await?;
    let received = windowed["messages"].as_array().map_or(0, Vec::len);
    assert!((2..=10).contains(&received), "{windowed}");
    assert_eq!(windowed["truncated"], json!(true));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // Asking for more than the tool allows gets what the tool allows.
    let all = call_ok(
        &client,
        "ItemService_ListItems",
        json!({"count": 4, "mcp.stream": {"maxMessages": 1000000}}),
    )
    .await?;
    assert_eq!(all["messages"].as_array().map(Vec::len), Some(4));
    assert!(all.get("truncated").is_none(), "{all}");

    let text = call_err(
        &client,
        "ItemService_ListItems",
        json!({"count": 4, "mcp.stream": {"windowMs": -1}}),
    )
    .await?;
    assert!(
        text.contains("$[\"mcp.stream\"].windowMs: expected an integer from 1 to 86400000"),
        "{text}"
    );
    // Not a property of unary tools.
    let text = call_err(
        &client,
        "ItemService_GetItem",
        json!({"id": "1", "mcp.stream": {"windowMs": 10}}),
    )
    .await?;
    assert!(text.contains("mcp.stream"), "{text}");
    Ok(())
}
