//! Tool calls end to end: rmcp client → McpServer → tonic client → tonic server on loopback.

use test_kit::demo as common;

use std::time::{Duration, Instant};

use common::{
    TestResult, call, call_err, call_err_containing, call_ok, connect, grpc_client, pb,
    start_backend,
};
use rmcp::{ServiceError, model::ErrorCode};
use serde_json::json;
use tonic_mcp::McpServer;

#[path = "tool_calls_over_grpc/streaming.rs"]
mod streaming;

/// An rmcp client of a server whose tools call a fresh backend over loopback, with the set
/// `configure` makes of them.
async fn client_with(
    configure: impl FnOnce(tonic_mcp::ToolSet) -> tonic_mcp::ToolSet,
) -> TestResult<(common::Client, common::Backend)> {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let tools = configure(pb::item_service_mcp::from_channel(channel)?);
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    Ok((client, backend))
}

#[tokio::test]
async fn tools_are_listed_sorted_with_schemas_titles_and_annotations() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "ItemService_After",
            "ItemService_Chat",
            "ItemService_Echo",
            "ItemService_GetItem",
            "ItemService_ListItems",
            "ItemService_Slow",
            "ItemService_UploadItems"
        ]
    );
    let get_item = tools
        .iter()
        .find(|t| t.name == "ItemService_GetItem")
        .ok_or("GetItem")?;
    assert_eq!(get_item.title.as_deref(), Some("Get Item"));
    assert_eq!(get_item.description.as_deref(), Some("Fetch one item."));
    assert_eq!(get_item.input_schema.get("type"), Some(&json!("object")));
    assert!(get_item.output_schema.is_some());
    let annotations = serde_json::to_value(&get_item.annotations)?;
    assert_eq!(annotations, json!({"readOnlyHint": true}));
    let slow = tools
        .iter()
        .find(|t| t.name == "ItemService_Slow")
        .ok_or("Slow")?;
    assert!(slow.annotations.is_none(), "no hints, no annotations");
    Ok(())
}

#[tokio::test]
async fn unary_round_trip_keeps_int64_exact_and_reads_url_safe_bytes() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let item = call_ok(
        &client,
        "ItemService_GetItem",
        json!({"id": 9_007_199_254_740_993_u64, "token": "-_8", "filter": {"author_id": 5}, "note": "hello"}),
    )
    .await?;
    assert_eq!(
        item,
        json!({
            "id": "9007199254740993",
            "name": "item 9007199254740993",
            "color": "COLOR_RED",
            "payload": "+/8=",
            "counts": {"seen": 1},
            "big": "18446744073709551615",
            "tags": ["hello"],
            "owner": {"case": "team_id", "value": "5"}
        })
    );
    Ok(())
}

#[tokio::test]
async fn every_oneof_form_is_accepted() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    for arguments in [
        json!({"id": "1", "filter": {"case": "author_id", "value": "7"}}),
        json!({"id": "1", "filter": {"author_id": "7"}}),
        json!({"id": "1", "filter": {"which": "author_id", "author_id": 7}}),
        json!({"id": "1", "author_id": "7"}),
        json!({"id": "1", "authorId": "7"}),
        json!({"id": "1", "filter": "{\"case\": \"authorId\", \"value\": \"7\"}"}),
    ] {
        let item = call_ok(&client, "ItemService_GetItem", arguments.clone()).await?;
        assert_eq!(
            item["owner"],
            json!({"case": "team_id", "value": "7"}),
            "{arguments}"
        );
    }
    let item = call_ok(
        &client,
        "ItemService_GetItem",
        json!({"id": "1", "range": {"start": "1970-01-01T00:01:40Z"}}),
    )
    .await?;
    assert_eq!(
        item["owner"],
        json!({"case": "user", "value": "range from 100"})
    );
    Ok(())
}

#[tokio::test]
async fn two_oneof_members_are_rejected_naming_both() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let text = call_err(
        &client,
        "ItemService_GetItem",
        json!({"id": "1", "author_id": "7", "range": {}}),
    )
    .await?;
    assert_eq!(
        text,
        "Invalid arguments for tool `ItemService_GetItem` (1 problem):\n- $: oneof `filter` takes exactly one member, but got both `author_id` and `range`"
    );
    Ok(())
}

#[tokio::test]
async fn unknown_properties_are_rejected_with_the_allowed_names() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    call_err_containing(
        &client,
        "ItemService_GetItem",
        json!({"idd": "1"}),
        &["- $.idd: unknown property `idd`; allowed: id, filter, token, note"],
    )
    .await?;
    // Nested, behind a `$ref`, with JSON names.
    call_err_containing(
        &client,
        "ItemService_Echo",
        json!({"tree": {"label": "a", "children": [{"lable": "b"}]}}),
        &["- $.tree.children[0].lable: unknown property `lable`; allowed: label, children"],
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn every_problem_is_reported_with_its_path() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let text = call_err(
        &client,
        "ItemService_GetItem",
        json!({"id": true, "note": 5, "filter": {"case": "range", "value": {"start": 5}}, "token": "!!"}),
    )
    .await?;
    for expected in [
        "(4 problems)",
        "- $.token: expected base64",
        "- $.id: true is not an integer; int64 takes a decimal string such as \"-12\" or an integer JSON number",
        "- $.note: expected string, got a number (5)",
        "- $.filter.value.start: expected string, got a number (5)",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    Ok(())
}

#[tokio::test]
async fn grpc_errors_become_readable_tool_errors_and_later_calls_work() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let text = call_err(&client, "ItemService_GetItem", json!({"id": "404"})).await?;
    assert_eq!(text, "gRPC error NOT_FOUND: item 404 does not exist");
    let text = call_err(&client, "ItemService_GetItem", json!({"id": "400"})).await?;
    assert_eq!(
        text,
        "gRPC error INVALID_ARGUMENT: invalid item request\nError info: reason ID_RESERVED, domain demo.example\nInvalid fields:\n- `id`: must not be 400"
    );
    let item = call_ok(&client, "ItemService_GetItem", json!({"id": "1"})).await?;
    assert_eq!(item["id"], json!("1"));
    Ok(())
}

#[tokio::test]
async fn every_result_carries_its_grpc_status_in_meta() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let cases = [
        (json!({"id": "1"}), json!({"code": 0, "name": "OK"})),
        (
            json!({"id": "404"}),
            json!({"code": 5, "name": "NOT_FOUND"}),
        ),
        (
            json!({"id": "400"}),
            json!({"code": 3, "name": "INVALID_ARGUMENT"}),
        ),
        (
            json!({"idd": "1"}),
            json!({"code": 3, "name": "INVALID_ARGUMENT", "local": true}),
        ),
    ];
    for (arguments, expected) in cases {
        let result = call(&client, "ItemService_GetItem", arguments.clone()).await?;
        assert_eq!(common::status(&result), expected, "{arguments}");
    }
    Ok(())
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let error = call(&client, "NoSuchTool", json!({})).await;
    let Err(error) = error else {
        return Err("an unknown tool must be a protocol error".into());
    };
    let Some(ServiceError::McpError(data)) = error.downcast_ref::<ServiceError>() else {
        return Err(format!("unexpected error: {error}").into());
    };
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert!(data.message.contains("NoSuchTool"));
    Ok(())
}

#[tokio::test]
async fn well_known_types_at_the_root_are_value_wrapped() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let result = call_ok(&client, "ItemService_After", json!({"value": "90.5s"})).await?;
    assert_eq!(result, json!({"value": "1970-01-01T00:01:30.500Z"}));
    call_err_containing(
        &client,
        "ItemService_After",
        json!({}),
        &["- $: missing required property `value`"],
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn json_names_any_recursion_and_value_round_trip() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let result = call_ok(
        &client,
        "ItemService_Echo",
        json!({
            "i64": 12,
            "by_id": {"7": "seven"},
            "tree": {"label": "root", "children": [{"label": "leaf"}]},
            "any": {"@type": "type.googleapis.com/demo.v1.Note", "body": "hi", "likes": "2"},
            "dyn": [1, "two", null],
            "node": {"label": "picked"},
            "snake_case_field": "s"
        }),
    )
    .await?;
    assert_eq!(
        result,
        json!({
            "i64": "12",
            "byId": {"7": "seven"},
            "tree": {"label": "root", "children": [{"label": "leaf"}]},
            "any": {"type_url": "type.googleapis.com/demo.v1.Note", "value": {"body": "hi", "likes": "2"}},
            "dyn": [1, "two", null],
            "choice": {"case": "node", "value": {"label": "picked"}},
            "snakeCaseField": "s"
        })
    );
    Ok(())
}

#[tokio::test]
async fn the_deadline_is_enforced_and_cancels_the_backend() -> TestResult {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let tools =
        pb::item_service_mcp::from_channel(channel)?.with_timeout(Duration::from_millis(300));
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    let started = Instant::now();
    let text = call_err(&client, "ItemService_Slow", json!({"sleep_ms": 5000})).await?;
    let elapsed = started.elapsed();
    assert!(text.starts_with("gRPC error DEADLINE_EXCEEDED"), "{text}");
    assert!(elapsed >= Duration::from_millis(250), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1300), "{elapsed:?}");
    backend
        .observed
        .assert_cancelled(1, Duration::from_secs(2))
        .await;
    // The grpc-timeout header reached the backend.
    let metadata = backend.observed.last_metadata();
    assert!(metadata.get("grpc-timeout").is_some(), "{metadata:?}");
    // And the server still serves.
    let result = call_ok(&client, "ItemService_Slow", json!({"sleep_ms": 1})).await?;
    assert_eq!(result, json!({"slept_ms": 1}));
    Ok(())
}

#[tokio::test]
async fn cancelling_the_mcp_request_cancels_the_grpc_call() -> TestResult {
    let (client, backend) = grpc_client().await?;
    // Dropping rmcp's call future sends notifications/cancelled.
    common::drop_slow_call(&client, Duration::from_millis(200)).await;
    assert!(
        backend
            .observed
            .wait_cancelled(1, Duration::from_secs(3))
            .await,
        "the backend call was not cancelled"
    );
    Ok(())
}

#[tokio::test]
async fn oversized_and_overdeep_arguments_are_refused() -> TestResult {
    let (addr, _backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let server = McpServer::builder("demo", "0.1.0")
        .limits(tonic_mcp::Limits {
            max_argument_bytes: 1024,
            max_depth: 8,
            ..tonic_mcp::Limits::default()
        })
        .tool_set(pb::item_service_mcp::from_channel(channel)?)?
        .build();
    let (client, _) = connect(server).await?;
    call_err_containing(
        &client,
        "ItemService_GetItem",
        json!({"note": "x".repeat(2000)}),
        &["arguments are too large"],
    )
    .await?;
    let mut deep = json!({"label": "leaf"});
    for _ in 0..20 {
        deep = json!({"children": [deep]});
    }
    call_err_containing(
        &client,
        "ItemService_Echo",
        json!({ "tree": deep }),
        &["nest 42 levels deep; the limit is 8 levels"],
    )
    .await?;
    // Hidden in a string, the depth is still caught before recursion.
    call_err_containing(
        &client,
        "ItemService_Echo",
        json!({ "tree": deep.to_string() }),
        &["deeper than the limit of 8 levels"],
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn static_metadata_and_hooks_reach_the_backend() -> TestResult {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let mut metadata = tonic::metadata::MetadataMap::new();
    metadata.insert("x-static", "set-wide".parse()?);
    let tools = pb::item_service_mcp::from_channel(channel)?
        .with_metadata(metadata)
        .on_call(|call, metadata| {
            if call.tool_name() == "ItemService_Chat" {
                return Err(tonic_mcp::Refusal::new("chat is closed"));
            }
            metadata.insert(
                "x-tool",
                call.tool_name()
                    .parse()
                    .map_err(|_| tonic_mcp::Refusal::new("bad"))?,
            );
            Ok(())
        });
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    call_ok(&client, "ItemService_GetItem", json!({"id": "1"})).await?;
    let seen = backend.observed.last_metadata();
    assert_eq!(
        seen.get("x-static").and_then(|v| v.to_str().ok()),
        Some("set-wide")
    );
    assert_eq!(
        seen.get("x-tool").and_then(|v| v.to_str().ok()),
        Some("ItemService_GetItem")
    );
    let text = call_err(&client, "ItemService_Chat", json!({"messages": []})).await?;
    assert_eq!(text, "call refused: chat is closed");
    Ok(())
}

#[tokio::test]
async fn a_dead_backend_is_an_error_without_transport_details() -> TestResult {
    // Bind and drop a listener to get a port nobody serves.
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], test_kit::free_port()));
    let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))?.connect_lazy();
    let tools = pb::item_service_mcp::from_channel(channel)?;
    let server = McpServer::builder("demo", "0.1.0").tool_set(tools)?.build();
    let (client, _) = connect(server).await?;
    let text = call_err(&client, "ItemService_GetItem", json!({"id": "1"})).await?;
    assert!(text.starts_with("gRPC error UNAVAILABLE"), "{text}");
    assert!(!text.contains("127.0.0.1"), "{text}");
    assert!(!text.contains(&addr.port().to_string()), "{text}");
    Ok(())
}

#[tokio::test]
async fn an_intercepted_channel_is_a_transport() -> TestResult {
    let (addr, backend) = start_backend().await?;
    // Interceptors wrap the channel: `InterceptedService` is a transport like any other.
    let channel = tonic::service::interceptor::InterceptedService::new(
        common::channel(addr).await?,
        |mut request: tonic::Request<()>| {
            request.metadata_mut().insert(
                "x-intercepted",
                tonic::metadata::MetadataValue::from_static("yes"),
            );
            Ok(request)
        },
    );
    let server = McpServer::builder("demo", "0.1.0")
        .tool_set(pb::item_service_mcp::from_channel(channel)?)?
        .build();
    let (client, _) = connect(server).await?;
    call_ok(&client, "ItemService_GetItem", json!({"id": "1"})).await?;
    let seen = backend.observed.last_metadata();
    assert_eq!(
        seen.get("x-intercepted").and_then(|v| v.to_str().ok()),
        Some("yes")
    );
    Ok(())
}

#[tokio::test]
async fn integers_that_are_not_integers_say_what_is_accepted_once() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    // int64 takes strings and integer numbers: a fraction, a boolean or a word says so, not
    // "expected string" (the schema's type), and once per path.
    let text = call_err(
        &client,
        "ItemService_GetItem",
        json!({"id": 1.5, "filter": {"case": "author_id", "value": "x"}}),
    )
    .await?;
    for expected in [
        "(2 problems)",
        "- $.id: 1.5 is not an integer; int64 takes a decimal string such as \"-12\" or an integer JSON number",
        "- $.filter.value: \"x\" is not an integer; int64 takes",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    // A map key made of digits is one path, whether the normaliser or the schema finds the
    // problem (a JSON pointer reads `7` as an index).
    call_err_containing(
        &client,
        "ItemService_UploadItems",
        json!({"messages": [{"id": "1", "counts": {"7": "x"}}]}),
        &["(1 problem)", r#"- $.messages[0].counts["7"]: "#],
    )
    .await?;
    Ok(())
}

/// The gRPC message limits are the set's, and a call over one says which limit and what to do.
#[tokio::test]
async fn message_size_limits_are_set_per_set_and_named_when_hit() -> TestResult {
    let (addr, _backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    // GetItem answers with the request's token as the item's payload.
    let token = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        vec![7u8; 100 * 1024],
    );
    let arguments = json!({"id": "1", "token": token});

    let small = pb::item_service_mcp::from_channel(channel.clone())?
        .with_max_decoding_message_size(64 * 1024);
    let server = McpServer::builder("demo", "0.1.0").tool_set(small)?.build();
    let (client, _) = connect(server).await?;
    let text = call_err(&client, "ItemService_GetItem", arguments.clone()).await?;
    assert!(
        text.contains("OUT_OF_RANGE")
            && text.contains("65536")
            && text.contains("--max-decoding-message-size"),
        "{text}"
    );

    let small = pb::item_service_mcp::from_channel(channel.clone())?
        .with_max_encoding_message_size(64 * 1024);
    let server = McpServer::builder("demo", "0.1.0").tool_set(small)?.build();
    let (client, _) = connect(server).await?;
    let text = call_err(&client, "ItemService_GetItem", arguments.clone()).await?;
    assert!(
        text.contains("OUT_OF_RANGE") && text.contains("--max-encoding-message-size"),
        "{text}"
    );

    // Raised: the same call goes through.
    let large = pb::item_service_mcp::from_channel(channel)?
        .with_max_decoding_message_size(1024 * 1024)
        .with_max_encoding_message_size(1024 * 1024);
    let server = McpServer::builder("demo", "0.1.0").tool_set(large)?.build();
    let (client, _) = connect(server).await?;
    let item = call_ok(&client, "ItemService_GetItem", arguments).await?;
    assert_eq!(item["payload"].as_str().map(str::len), Some(token.len()));
    Ok(())
}

/// A result over the budget is never sent whole nor cut silently: a batch keeps what fits and
/// says truncated, another result is an isError saying how to ask for less.
#[tokio::test]
async fn results_over_the_budget_are_cut_or_refused_with_what_to_ask() -> TestResult {
    let (client, _backend) = client_with(|t| t.with_max_result_bytes(2048)).await?;

    // 50 items of about 100 bytes each: a batch of the first ones that fit in 2 KiB.
    let batch = call_ok(&client, "ItemService_ListItems", json!({"count": 50})).await?;
    let kept = batch["messages"].as_array().map_or(0, Vec::len);
    assert!((5..50).contains(&kept), "{batch}");
    assert_eq!(batch["truncated"], json!(true));
    assert!(
        batch.to_string().len() <= 2048,
        "{}",
        batch.to_string().len()
    );

    // One item with a 3 KB payload: refused, naming its size and the budget.
    let token = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [1u8; 3000]);
    let text = call_err(
        &client,
        "ItemService_GetItem",
        json!({"id": "1", "token": token}),
    )
    .await?;
    assert!(
        text.contains("over this MCP server's budget of 2048 bytes")
            && text.contains("Ask for less"),
        "{text}"
    );
    // Within the budget, results are unchanged: the text block is the structured JSON.
    let small = call(&client, "ItemService_GetItem", json!({"id": "1"})).await?;
    let structured = small.structured_content.clone().ok_or("structured")?;
    assert_eq!(common::text(&small), structured.to_string());
    Ok(())
}
