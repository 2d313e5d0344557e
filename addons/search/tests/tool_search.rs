//! Tool search (`McpServerBuilder::tool_search`), driven by rmcp's client against the demo
//! service on loopback: `tools/list` shows the three discovery tools and the pinned one;
//! `search_tools` ranks by plain words; `describe_tools` gives what a plain listing would; and
//! `call_tool` answers exactly as the direct call does, errors and streams included.

use test_kit::demo as common;

use common::{Client, TestResult, call, channel, connect, pb, start_backend, text};
use serde_json::{Value, json};
use tonic_mcp::McpServer;
use tonic_mcp_search::ToolSearch;

/// The demo's tools served plainly and with tool search (`ItemService_Echo` pinned).
async fn server_pair() -> TestResult<(McpServer, McpServer, common::Backend)> {
    let (addr, backend) = start_backend().await?;
    let plain = McpServer::builder("demo", "0.1.0")
        .tool_set(pb::item_service_mcp::from_channel(channel(addr).await?)?)?
        .build();
    let searching = McpServer::builder("demo", "0.1.0")
        .tool_set(pb::item_service_mcp::from_channel(channel(addr).await?)?)?
        .tool_search(ToolSearch::new().pin("ItemService_Echo"))
        .build();
    Ok((plain, searching, backend))
}

async fn servers() -> TestResult<(Client, Client, common::Backend)> {
    let (plain, searching, backend) = server_pair().await?;
    let (plain, _) = connect(plain).await?;
    let (searching, _) = connect(searching).await?;
    Ok((plain, searching, backend))
}

/// Calls `tool` through `client` with `arguments` and asserts an `isError` result that says
/// `says`.
async fn refused(client: &Client, tool: &str, arguments: Value, says: &str) -> TestResult {
    let refused = call(client, tool, arguments).await?;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains(says), "{}", text(&refused));
    Ok(())
}

fn names(found: &Value) -> Vec<&str> {
    found["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_listing_is_the_discovery_tools_and_the_pinned_ones() -> TestResult {
    let (plain, searching, _backend) = servers().await?;
    let listed = test_kit::tool_names(&searching).await?;
    assert_eq!(
        listed,
        [
            "search_tools",
            "describe_tools",
            "call_tool",
            "ItemService_Echo"
        ]
    );
    // The pinned tool is listed as the plain server lists it.
    let pinned = searching
        .list_all_tools()
        .await?
        .into_iter()
        .find(|tool| tool.name == "ItemService_Echo");
    let direct = plain
        .list_all_tools()
        .await?
        .into_iter()
        .find(|tool| tool.name == "ItemService_Echo");
    assert_eq!(pinned, direct);
    Ok(())
}

#[tokio::test]
async fn search_ranks_by_plain_words_and_filters() -> TestResult {
    let (_plain, searching, _backend) = servers().await?;
    for (query, best) in [
        ("fetch one item", "ItemService_GetItem"),
        ("send a batch of items", "ItemService_UploadItems"),
        ("chat messages echoed back", "ItemService_Chat"),
        ("stream the items", "ItemService_ListItems"),
    ] {
        let found = call(
            &searching,
            "search_tools",
            json!({"query": query, "limit": 3}),
        )
        .await?;
        assert_ne!(found.is_error, Some(true), "{}", text(&found));
        let found = found.structured_content.ok_or("structured")?;
        assert_eq!(names(&found).first(), Some(&best), "{query}: {found}");
        let first = &found["tools"][0];
        assert!(
            first["rpc"]
                .as_str()
                .is_some_and(|rpc| rpc.starts_with("/demo.v1.ItemService/")),
            "{first}"
        );
        assert!(
            first["summary"].as_str().is_some_and(|s| !s.is_empty()),
            "{first}"
        );
    }
    // Filters: a service that does not exist leaves nothing; read-only keeps only tools whose
    // annotations say so.
    let none = call(
        &searching,
        "search_tools",
        json!({"query": "item", "service": "OtherService"}),
    )
    .await?;
    let none = none.structured_content.ok_or("structured")?;
    assert_eq!(none["total"], 0, "{none}");
    assert_eq!(
        none["apis"],
        json!([]),
        "no API has a tool the filter lets through: {none}"
    );
    let read_only = call(
        &searching,
        "search_tools",
        json!({"query": "item", "read_only": true, "limit": 50}),
    )
    .await?;
    let read_only = read_only.structured_content.ok_or("structured")?;
    let kept = read_only["tools"].as_array().ok_or("tools")?;
    assert!(!kept.is_empty(), "{read_only}");
    for tool in kept {
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
    }
    // Bad arguments are errors the model can act on.
    for (arguments, says) in [
        (json!({}), "`query` is required"),
        (
            json!({"query": "x", "limit": 0}),
            "`limit` must be an integer",
        ),
        (
            json!({"query": "x", "colour": "red"}),
            "unknown argument `colour`",
        ),
        // The ranking's cost grows faster than the query: a long one is refused, not ranked.
        (
            json!({"query": "item ".repeat(201)}),
            "`query` is 1005 characters, and at most 1000",
        ),
    ] {
        refused(&searching, "search_tools", arguments, says).await?;
    }
    Ok(())
}

#[tokio::test]
async fn describe_gives_what_the_plain_listing_gives() -> TestResult {
    let (plain, searching, _backend) = servers().await?;
    let direct = plain.list_all_tools().await?;
    let names: Vec<&str> = direct.iter().map(|tool| tool.name.as_ref()).collect();
    let described = call(&searching, "describe_tools", json!({"names": names})).await?;
    let described = described.structured_content.ok_or("structured")?;
    let expected: Vec<Value> = direct
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    assert_eq!(described["tools"], Value::Array(expected));
    for (names, says) in [
        (
            json!(["ItemService_GetItem", "Nope"]),
            "no tool is named `Nope`; search_tools gives the names",
        ),
        // A misremembered name comes back with the names its words find first.
        (
            json!(["GetItem", "item_service.list_items"]),
            "no tool is named `GetItem` (nearest: `ItemService_GetItem`, ",
        ),
        (
            json!(["GetItem", "item_service.list_items"]),
            "`item_service.list_items` (nearest: `ItemService_ListItems`, ",
        ),
    ] {
        refused(
            &searching,
            "describe_tools",
            json!({ "names": names }),
            says,
        )
        .await?;
    }
    Ok(())
}

/// Over the runtime's own line transport (`serve_io`, what `serve_stdio` runs), which keeps a
/// call's arguments as text: `call_tool`'s arguments are the named tool's own only where it
/// gives them, and a `call_tool` without them calls the tool with none.
#[tokio::test]
async fn call_tool_over_the_line_transport_answers_as_the_direct_call() -> TestResult {
    let (plain, searching, _backend) = server_pair().await?;
    let plain = test_kit::connect_io(plain).await;
    let searching = test_kit::connect_io(searching).await;
    for (name, arguments) in [
        ("ItemService_GetItem", Some(json!({"id": 7}))),
        ("ItemService_GetItem", Some(json!({"id": "seven"}))),
        ("ItemService_GetItem", None),
        ("ItemService_ListItems", Some(json!({"count": 2}))),
    ] {
        let direct = call(&plain, name, arguments.clone().unwrap_or(json!({}))).await?;
        let wrapped = match &arguments {
            Some(arguments) => json!({"name": name, "arguments": arguments}),
            None => json!({"name": name}),
        };
        let through = call(&searching, "call_tool", wrapped).await?;
        assert_eq!(through, direct, "{name} {arguments:?}");
    }
    Ok(())
}

#[tokio::test]
async fn call_tool_answers_as_the_direct_call() -> TestResult {
    let (plain, searching, _backend) = servers().await?;
    for (name, arguments) in [
        ("ItemService_GetItem", json!({"id": 7})),
        // A backend error, and arguments the schema refuses.
        ("ItemService_GetItem", json!({"id": 404})),
        ("ItemService_GetItem", json!({"id": "seven"})),
        // A stream of responses, and a stream of requests.
        ("ItemService_ListItems", json!({"count": 3})),
        (
            "ItemService_UploadItems",
            json!({"messages": [{"id": 1}, {"id": 2}]}),
        ),
    ] {
        let direct = call(&plain, name, arguments.clone()).await?;
        let through = call(
            &searching,
            "call_tool",
            json!({"name": name, "arguments": arguments}),
        )
        .await?;
        assert_eq!(through, direct, "{name} {arguments}");
        // Every tool stays callable by its own name.
        assert_eq!(call(&searching, name, arguments.clone()).await?, direct);
    }
    for (arguments, says) in [
        (json!({"arguments": {}}), "`name` is required"),
        (
            json!({"name": "Nope"}),
            "no tool is named `Nope`; search_tools gives the names",
        ),
        (
            json!({"name": "ItemService_GetItm"}),
            "no tool is named `ItemService_GetItm` (nearest: `ItemService_GetItem`, ",
        ),
        // A name longer than a query may be is not ranked: no nearest names.
        (
            json!({"name": "GetItem ".repeat(126)}),
            "GetItem `; search_tools gives the names",
        ),
        (
            json!({"name": "ItemService_GetItem", "arguments": [1]}),
            "`arguments` must be an object",
        ),
    ] {
        refused(&searching, "call_tool", arguments, says).await?;
    }
    Ok(())
}

#[tokio::test]
async fn tools_added_at_run_time_are_found_at_once() -> TestResult {
    let (addr, _backend) = start_backend().await?;
    let server = McpServer::builder("demo", "0.1.0")
        .tool_search(ToolSearch::new())
        .build();
    let (client, _) = connect(server.clone()).await?;
    let before = call(&client, "search_tools", json!({"query": "fetch one item"})).await?;
    assert_eq!(before.structured_content.ok_or("structured")?["total"], 0);
    // The listing stays the three discovery tools; the served tools changed.
    let changed = server
        .replace_tools([pb::item_service_mcp::from_channel(channel(addr).await?)?])
        .await?;
    assert!(changed, "replace_tools says the served tools changed");
    assert_eq!(server.tools().len(), 3);
    // Every served tool, listed or not, by name: the same as the full definitions give.
    let served: Vec<String> = server
        .served_tools()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(served.len() > 3, "{served:?}");
    assert_eq!(server.served_tool_names(), served);
    // The same tools again: nothing changed.
    let again = server
        .replace_tools([pb::item_service_mcp::from_channel(channel(addr).await?)?])
        .await?;
    assert!(
        !again,
        "replace_tools with the same tools says nothing changed"
    );
    let after = call(&client, "search_tools", json!({"query": "fetch one item"})).await?;
    let after = after.structured_content.ok_or("structured")?;
    assert_eq!(
        names(&after).first(),
        Some(&"ItemService_GetItem"),
        "{after}"
    );
    Ok(())
}

/// `call_tool` of a tool that may run as a task, called as a task by a client that declared
/// tasks, starts a task whose result is the tool's.
#[tokio::test]
async fn call_tool_of_a_task_tool_starts_a_task() -> TestResult {
    let (addr, _backend) = start_backend().await?;
    let server = McpServer::builder("demo", "0.1.0")
        .tool_set(pb::item_service_mcp::from_channel(channel(addr).await?)?)?
        .tool_search(ToolSearch::new())
        .task_router(test_kit::tonic_mcp_tasks::Tasks::new().mode(tonic_mcp::TaskMode::Always))
        .build();
    let client =
        test_kit::connect_as(server, test_kit::client_config("search-tasks", true)).await?;
    let task_id = test_kit::start_task(
        &client,
        "call_tool",
        json!({"name": "ItemService_ListItems", "arguments": {"count": 3}}),
    )
    .await;
    let (payload, _) = test_kit::settle(&client, &task_id).await;
    let result = test_kit::completed(payload);
    let messages = &result.structured_content.as_ref().ok_or("structured")?["messages"];
    assert_eq!(
        messages.as_array().map(Vec::len),
        Some(3),
        "{}",
        text(&result)
    );
    Ok(())
}
