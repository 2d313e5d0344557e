//! One scenario of tool calls through generated code, run over every transport.

#![allow(dead_code, unreachable_pub)]

use rmcp::service::ServiceError;
use serde_json::{Value, json};

#[allow(unused_imports)]
pub use test_kit::{Client, call, status, text};

/// The testdata backend behind generated tools, and rmcp's client connected to it over an
/// in-process duplex pipe.
pub async fn connect_in_process() -> Client {
    let backend = e2e::start_backend().await.expect("backend");
    test_kit::connect(e2e::mcp_server(&backend).await.expect("server")).await
}

/// Calls a tool that must succeed and returns its structured content, checking that the text
/// content carries the same JSON.
pub async fn ok(client: &Client, name: &str, arguments: Value) -> Value {
    let result = call(client, name, arguments)
        .await
        .expect("tools/call answers");
    test_kit::expect_ok(name, &result)
}

/// Calls a tool that must fail with `isError` and returns the text.
pub async fn err(client: &Client, name: &str, arguments: Value) -> String {
    let result = call(client, name, arguments)
        .await
        .expect("tools/call answers");
    test_kit::expect_err(name, &result)
}

/// [`err`], asserting that the text contains each of `expected`.
pub async fn err_containing(client: &Client, name: &str, arguments: Value, expected: &[&str]) {
    let text = err(client, name, arguments).await;
    for expected in expected {
        assert!(
            text.contains(expected),
            "{name}: {expected:?} not in {text}"
        );
    }
}

/// Every tool of the checked-in `golden/*.mcp.json` files.
fn golden_tools() -> Vec<Value> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../golden");
    let mut tools = Vec::new();
    for entry in std::fs::read_dir(dir).expect("golden/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read"))
                .expect("golden JSON");
            tools.extend(doc["tools"].as_array().cloned().unwrap_or_default());
        }
    }
    tools
}

/// The calls every transport must get right.
pub async fn run(client: &Client) {
    // tools/list: sorted, with schemas, and skipped/hidden things absent.
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "tools/list is sorted by name");
    assert!(names.contains(&"catalog_admin_get_product"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("InternalRebuild")),
        "{names:?}"
    );
    // Each listed tool is exactly what the plugin's tools JSON says it will be.
    let golden = golden_tools();
    for tool in &tools {
        let listed = serde_json::to_value(tool).expect("tool serializes");
        let expected = golden
            .iter()
            .find(|t| t["name"] == listed["name"])
            .unwrap_or_else(|| panic!("{} is not in golden/*.mcp.json", listed["name"]));
        for key in [
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
            "_meta",
        ] {
            assert_eq!(
                listed.get(key),
                expected.get(key),
                "{}: {key}",
                listed["name"]
            );
        }
    }

    // Scalars, with int64 beyond 2^53 exact and URL-safe base64 in.
    let big = "9007199254740993";
    let out = ok(
        client,
        "ScalarService_Echo",
        json!({"f_int64": big, "f_uint64": 18446744073709551615u64, "f_int32": 7.0, "f_bytes": "-_8", "f_double": "NaN", "f_bool": true, "f_string": "hé"}),
    )
    .await;
    assert_eq!(out["f_int64"], big);
    assert_eq!(out["f_uint64"], "18446744073709551615");
    assert_eq!(out["f_int32"], 7);
    assert_eq!(out["f_bytes"], "+/8=");
    assert_eq!(out["f_double"], "NaN");
    assert_eq!(out["f_string"], "hé");

    // A double keeps every bit both ways. `985.6906946328695` is the shortest text of its
    // double; serde_json without `float_roundtrip` reads it as the next double up (about one
    // double in ten that serde_json writes reads back one off that way).
    let double = 985.690_694_632_869_5_f64;
    let out = ok(client, "ScalarService_Echo", json!({"f_double": double})).await;
    assert_eq!(
        out["f_double"].as_f64().map(f64::to_bits),
        Some(double.to_bits()),
        "{out}"
    );

    // Non-object roots are wrapped; Empty is an object.
    assert_eq!(
        ok(client, "WellKnownService_Shout", json!({"value": "hi"})).await,
        json!({"value": "hi"})
    );
    let now = ok(client, "WellKnownService_Now", json!({})).await;
    assert_eq!(now, json!({"value": "2023-11-14T22:13:20.500Z"}));
    let value = json!({"a": [1, "x", null, {"b": true}]});
    assert_eq!(
        ok(
            client,
            "WellKnownService_EchoValue",
            json!({"value": value})
        )
        .await["value"],
        value
    );

    // Any with a user message, in our form and in protojson's `@type` form.
    let note = json!({"type_url": "type.googleapis.com/testdata.wkt.Note", "value": {"text": "hello", "id": "12"}});
    assert_eq!(
        ok(client, "WellKnownService_EchoAny", note.clone()).await,
        note
    );
    let protojson =
        json!({"@type": "type.googleapis.com/testdata.wkt.Note", "text": "hello", "id": "12"});
    assert_eq!(
        ok(client, "WellKnownService_EchoAny", protojson).await,
        note
    );

    // Every well-known type as a field.
    let wkt = json!({
        "timestamp": "2024-05-01T12:30:00Z",
        "duration": "1.5s",
        "field_mask": "displayName,address.city",
        "struct_value": {"k": "v"},
        "value": [1, 2.5],
        "list_value": ["a", 1],
        "empty": {},
        "double_value": 1.5,
        "int64_value": "-9007199254740993",
        "bool_value": true,
        "string_value": "s",
        "bytes_value": "AAE=",
    });
    let out = ok(client, "WellKnownService_Echo", wkt.clone()).await;
    // Durations come back in protobuf's canonical 0, 3, 6 or 9 fraction digits.
    let mut wkt = wkt;
    wkt["duration"] = json!("1.500s");
    for (key, expected) in wkt.as_object().expect("object") {
        assert_eq!(&out[key], expected, "{key}");
    }

    // A deep recursive message, in process through `from_service`.
    let mut tree = json!({"name": "leaf"});
    for depth in 0..30 {
        tree = json!({"name": format!("n{depth}"), "children": [tree]});
    }
    assert_eq!(
        ok(client, "RecursionService_EchoTree", tree.clone()).await,
        tree
    );

    // Maps with integer and bool keys.
    let maps = json!({"int32_to_string": {"-1": "minus one", "2": "two"}, "bool_to_string": {"true": "yes"}, "uint64_to_double": {"18446744073709551615": 0.5}, "sint64_to_float": {"-9007199254740993": 2.5}});
    let out = ok(client, "MapService_Echo", maps.clone()).await;
    for (key, expected) in maps.as_object().expect("object") {
        assert_eq!(&out[key], expected, "{key}");
    }

    // Map keys are checked against their type and must not name one entry twice.
    err_containing(
        client,
        "MapService_Echo",
        json!({"int32_to_string": {"2147483648": "x"}}),
        &["$.int32_to_string", "out of range for int32"],
    )
    .await;
    err_containing(
        client,
        "MapService_Echo",
        json!({"int32_to_string": {"7": "a", "07": "b"}}),
        &["same map key"],
    )
    .await;
    // Lower-case RFC 3339 separators are accepted.
    let lower = ok(
        client,
        "WellKnownService_Echo",
        json!({"timestamp": "2024-05-01t12:30:00z"}),
    )
    .await;
    assert_eq!(lower["timestamp"], "2024-05-01T12:30:00Z");

    // A oneof in canonical form and in each alternate form.
    let canonical = json!({"destination": {"case": "inline", "value": true}, "filter": {"case": "author_id", "value": "5"}});
    let expected = ok(client, "SearchService_Echo", canonical).await;
    assert_eq!(
        expected["filter"],
        json!({"case": "author_id", "value": "5"})
    );
    for alternate in [
        json!({"destination": {"case": "inline", "value": true}, "filter": {"author_id": "5"}}),
        json!({"destination": {"case": "inline", "value": true}, "filter": {"which": "author_id", "author_id": 5}}),
        json!({"inline": true, "author_id": "5"}),
    ] {
        assert_eq!(
            ok(client, "SearchService_Echo", alternate.clone()).await,
            expected,
            "{alternate}"
        );
    }
    err_containing(
        client,
        "SearchService_Echo",
        json!({"destination": {"case": "inline", "value": true}, "author_id": "5", "tag": "x"}),
        &["author_id", "tag"],
    )
    .await;

    // Unknown fields list the allowed ones; wrong types name the path.
    err_containing(
        client,
        "ScalarService_Echo",
        json!({"f_int33": 1}),
        &["f_int33", "f_int32"],
    )
    .await;
    err_containing(
        client,
        "SearchService_Echo",
        json!({"destination": {"case": "inline", "value": "yes"}}),
        &["$.destination.value", "boolean"],
    )
    .await;

    // A hidden field is unknown to the model; an overridden name is callable.
    err_containing(
        client,
        "catalog_admin_CatalogService_UpdateProduct",
        json!({"product": {"id": "p1"}, "etag": "x"}),
        &["etag"],
    )
    .await;
    // UpdateProduct's own result budget (`max_result_bytes: 512`) wins over the server's.
    let stored = ok(
        client,
        "catalog_admin_CatalogService_UpdateProduct",
        json!({"product": {"id": "p2", "name": "Kettle"}}),
    )
    .await;
    assert_eq!(stored, json!({"id": "p2", "name": "Kettle"}));
    err_containing(
        client,
        "catalog_admin_CatalogService_UpdateProduct",
        json!({"product": {"id": "p2", "name": "k".repeat(600)}}),
        &["over this MCP server's budget of 512 bytes"],
    )
    .await;
    let product = ok(client, "catalog_admin_get_product", json!({"id": "p1"})).await;
    assert_eq!(
        product["price"],
        json!({"amount_minor": "2500", "currency": "EUR"}),
        "hidden fields stay out of results"
    );

    // gRPC errors reach the model with code, message and details.
    err_containing(
        client,
        "InventoryService_GetItem",
        json!({"id": "42"}),
        &["NOT_FOUND", "item 42 not found"],
    )
    .await;
    err_containing(
        client,
        "InventoryService_GetItem",
        json!({"id": ""}),
        &["INVALID_ARGUMENT", "must not be empty"],
    )
    .await;
    // After a failed backend call the next one still works.
    assert_eq!(
        ok(client, "InventoryService_GetItem", json!({"id": "3"})).await["name"],
        "item-3"
    );

    // Streaming kinds.
    let listed = ok(
        client,
        "InventoryService_ListItems",
        json!({"name_prefix": "item"}),
    )
    .await;
    assert_eq!(listed["messages"].as_array().map(Vec::len), Some(5));
    assert!(listed.get("truncated").is_none());
    let watched = ok(
        client,
        "catalog_admin_CatalogService_WatchProducts",
        json!({}),
    )
    .await;
    assert_eq!(watched["messages"].as_array().map(Vec::len), Some(20));
    assert_eq!(watched["truncated"], true);
    let uploaded = ok(
        client,
        "InventoryService_UploadItems",
        json!({"messages": [{"id": "a"}, {"name": "no id"}, {"id": "b"}]}),
    )
    .await;
    assert_eq!(uploaded, json!({"stored": 2, "rejected_ids": ["no id"]}));
    let chat = ok(
        client,
        "InventoryService_Chat",
        json!({"messages": [{"text": "hi"}, {"text": "there"}]}),
    )
    .await;
    assert_eq!(
        chat["messages"][1],
        json!({"sender": "server", "text": "echo: there"})
    );

    // An unknown tool is a protocol error, -32602.
    match call(client, "NoSuchTool", json!({})).await {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602),
        other => panic!("expected -32602, got {other:?}"),
    }
}
