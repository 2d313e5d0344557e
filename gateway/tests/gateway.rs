//! The gateway binary in front of a real tonic server on loopback (the e2e echo services),
//! called by rmcp's MCP client: once with descriptors from gRPC reflection over stdio, once
//! with a descriptor set written by the vendored protoc over streamable HTTP. Every tool call
//! must answer exactly what the generated-code path answers for the same server. Over HTTP, a
//! foreign `Origin` is refused in both modes.

use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

mod support;

use e2e::SERVICES;
use support::{GATEWAY, spawn_http, tool_names};

use test_kit::Client;

/// One or more calls of every tool of [`SERVICES`], successes and failures.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "ScalarService_Echo",
            json!({"f_int64": "9007199254740993", "f_uint64": 18446744073709551615u64, "f_int32": 7.0,
                   "f_bytes": "-_8", "f_double": "NaN", "f_float": 1.5, "f_bool": true, "f_string": "hé",
                   "r_int64": ["1", 2], "color": "COLOR_RED", "colors": [2, "COLOR_BLUE"], "nickname": ""}),
        ),
        ("ScalarService_Echo", json!({})),
        // Property keys too long for hosts: the JSON name, a shortened alias, and the proto
        // name the runtime also accepts.
        (
            "LongFieldService_Echo",
            json!({"upgradeSmartShoppingCampaignToPerformanceMaxRecommendation": "a",
                   "npolicyrolloutoperationrolloutinputresourcewithsettings_dd6659be": "b",
                   "globalVmExtensionPolicyRolloutOperationRolloutInputResourceX":
                       {"stancesthatmayberolledoutatthesametimeineachzoneatmostx_c5e316a7": 3}}),
        ),
        (
            "LongFieldService_Echo",
            json!({"globalvmextensionpolicyrolloutoperationrolloutinputresourcewithsettings": "c"}),
        ),
        ("ScalarService_Echo", json!({"f_int33": 1})),
        (
            "WellKnownService_Echo",
            json!({"timestamp": "2024-05-01T12:30:00Z", "duration": "1.5s", "field_mask": "displayName,address.city",
                   "struct_value": {"k": "v"}, "value": [1, 2.5], "list_value": ["a", 1], "empty": {},
                   "double_value": 1.5, "int64_value": "-9007199254740993", "bool_value": true,
                   "string_value": "s", "bytes_value": "AAE="}),
        ),
        (
            "WellKnownService_EchoAny",
            json!({"type_url": "type.googleapis.com/testdata.wkt.Note", "value": {"text": "hello", "id": "12"}}),
        ),
        (
            "WellKnownService_EchoAny",
            json!({"@type": "type.googleapis.com/testdata.wkt.Note", "text": "hello", "id": "12"}),
        ),
        ("WellKnownService_EchoFieldMask", json!({"value": "a.b,c"})),
        (
            "WellKnownService_EchoList",
            json!({"value": [1, "two", null, {"x": []}]}),
        ),
        ("WellKnownService_EchoStruct", json!({"a": {"b": [true]}})),
        (
            "WellKnownService_EchoValue",
            json!({"value": {"a": [1, "x", null]}}),
        ),
        ("WellKnownService_Now", json!({})),
        ("WellKnownService_Shout", json!({"value": "hi"})),
        ("WellKnownService_Sleep", json!({"value": "0.01s"})),
        (
            "SearchService_Echo",
            json!({"destination": {"case": "inline", "value": true}, "filter": {"case": "author_id", "value": "5"}}),
        ),
        (
            "SearchService_Echo",
            json!({"inline": true, "author_id": "5"}),
        ),
        (
            "SearchService_Echo",
            json!({"destination": {"case": "inline", "value": true}, "author_id": "5", "tag": "x"}),
        ),
        (
            "MapService_Echo",
            json!({"int32_to_string": {"-1": "minus one", "2": "two"}, "bool_to_string": {"true": "yes"},
                   "uint64_to_double": {"18446744073709551615": 0.5}, "sint64_to_float": {"-9007199254740993": 2.5}}),
        ),
        (
            "MapService_Echo",
            json!({"int32_to_string": {"2147483648": "x"}}),
        ),
        ("InventoryService_GetItem", json!({"id": "3"})),
        ("InventoryService_GetItem", json!({"id": "42"})),
        ("InventoryService_GetItem", json!({"id": ""})),
        ("InventoryService_ListItems", json!({"name_prefix": "item"})),
        ("InventoryService_ListItems", json!({"name_prefix": "fail"})),
        (
            "InventoryService_UploadItems",
            json!({"messages": [{"id": "a"}, {"name": "no id"}, {"id": "b"}]}),
        ),
        (
            "InventoryService_Chat",
            json!({"messages": [{"text": "hi"}, {"text": "there"}]}),
        ),
        ("catalog_admin_get_product", json!({"id": "p1"})),
        ("catalog_admin_get_product", json!({"id": "p2"})),
        (
            "catalog_admin_CatalogService_UpdateProduct",
            json!({"product": {"id": "p1", "name": "Kettle", "price": {"amount_minor": "10", "currency": "EUR"}}}),
        ),
        (
            "catalog_admin_CatalogService_UpdateProduct",
            json!({"product": {"id": "p1"}, "etag": "x"}),
        ),
        (
            "catalog_admin_CatalogService_DeleteProduct",
            json!({"id": "p1"}),
        ),
        (
            "catalog_admin_CatalogService_SearchWeb",
            json!({"query": "tea"}),
        ),
        ("catalog_admin_CatalogService_WatchProducts", json!({})),
        (
            "catalog_admin_reindex_every_product_in_every_warehouse_right_now",
            json!({}),
        ),
    ]
}

/// The generated-code MCP server of the e2e crate, over an in-process pipe.
async fn generated(backend: &e2e::Backend) -> Client {
    test_kit::connect(e2e::mcp_server(backend).await.expect("generated server")).await
}

async fn call(client: &Client, name: &str, arguments: &Value) -> Value {
    let result = test_kit::call(client, name, arguments.clone())
        .await
        .unwrap_or_else(|e| panic!("{name}: tools/call failed: {e}"));
    let mut result = serde_json::to_value(result).expect("result serializes");
    // Protobuf maps have no order (the echo server's are Rust HashMaps, in a new order each
    // call): compare a text item that holds JSON as JSON, where object order does not count.
    if let Some(content) = result["content"].as_array_mut() {
        for item in content {
            if let Some(parsed) = item["text"]
                .as_str()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
            {
                item["text"] = parsed;
            }
        }
    }
    result
}

/// Calls every tool through both servers and compares the whole results (structured content,
/// text content, isError). Returns how many results carried structured content.
async fn same_results(gateway: &Client, generated: &Client) -> usize {
    let names = tool_names(gateway).await;
    let calls = calls();
    for name in &names {
        assert!(
            calls.iter().any(|(called, _)| called == name),
            "{name} is listed by the gateway but not called by this test"
        );
    }
    let mut structured = 0;
    for (name, arguments) in &calls {
        assert!(
            names.iter().any(|n| n == name),
            "the gateway lacks {name}: {names:?}"
        );
        let expected = call(generated, name, arguments).await;
        let actual = call(gateway, name, arguments).await;
        assert_eq!(actual, expected, "{name} {arguments}");
        if actual.get("structuredContent").is_some() {
            structured += 1;
        }
    }
    structured
}

/// The generated server's tools of [`SERVICES`], as `tools/list` JSON.
async fn generated_tools(generated: &Client) -> Vec<Value> {
    generated
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| serde_json::to_value(t).expect("tool serializes"))
        .filter(|t| {
            !t["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("RecursionService_")
        })
        .collect()
}

#[tokio::test]
async fn reflection_over_stdio_answers_as_generated_code() {
    let backend = e2e::start_backend().await.expect("backend");
    let generated = generated(&backend).await;
    let mut command = tokio::process::Command::new(GATEWAY);
    command.args(["--target", &format!("http://{}", backend.addr)]);
    // Reflection serves the files with their comments and custom options, so the tools are
    // the generated ones, field for field.
    stdio_answers_as_generated(command, generated).await;
}

/// Starts the gateway of `command` over stdio and checks it against `generated`: the same
/// tools, field for field, and the same answers (see [`same_answers`]).
async fn stdio_answers_as_generated(command: tokio::process::Command, generated: Client) {
    let gateway =
        ().serve(TokioChildProcess::new(command).expect("spawn the gateway"))
            .await
            .expect("handshake over stdio");
    let listed: Vec<Value> = gateway
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| serde_json::to_value(t).expect("tool serializes"))
        .collect();
    assert_eq!(listed, generated_tools(&generated).await);
    same_answers(gateway, generated).await;
}

/// [`same_results`], with structured content in at least 25 of them; closes both clients.
async fn same_answers(gateway: Client, generated: Client) {
    let structured = same_results(&gateway, &generated).await;
    assert!(
        structured >= 25,
        "only {structured} calls had structured content"
    );
    gateway.cancel().await.expect("close");
    generated.cancel().await.expect("close");
}

/// protoc's `--descriptor_set_out --include_imports` over the backend's protos.
fn protoc_descriptor_set(dir: &std::path::Path) -> std::path::PathBuf {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = dir.join("testdata.binpb");
    let status =
        std::process::Command::new(protoc_bin_vendored::protoc_bin_path().expect("protoc"))
            .arg("--include_imports")
            .arg(format!("--descriptor_set_out={}", out.display()))
            .arg(format!("-I{}", repo.join("testdata").display()))
            .arg(format!("-I{}", repo.join("proto").display()))
            .arg(format!(
                "-I{}",
                protoc_bin_vendored::include_path()
                    .expect("include")
                    .display()
            ))
            .args([
                "scalars.proto",
                "wkt.proto",
                "oneofs.proto",
                "maps.proto",
                "long_fields.proto",
                "streaming.proto",
                "tool_options.proto",
            ])
            .status()
            .expect("run protoc");
    assert!(status.success(), "protoc failed");
    out
}

#[tokio::test]
async fn descriptor_set_over_http_answers_as_generated_code() {
    let backend = e2e::start_backend().await.expect("backend");
    let generated = generated(&backend).await;
    let dir = std::env::temp_dir().join(format!("grpc-mcp-gateway-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let set = protoc_descriptor_set(&dir);

    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", &format!("http://{}", backend.addr)])
        .arg("--descriptor-set")
        .arg(&set)
        .args(SERVICES.iter().flat_map(|service| ["--service", service]))
        .arg("--stateless");
    let (mut child, addr) = spawn_http(command).await;
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let gateway = ().serve(transport).await.expect("handshake over HTTP");

    // Without --include_source_info there are no comments, hence no descriptions; names,
    // schemas' structure and annotations are the generated ones.
    let names = tool_names(&gateway).await;
    let mut expected: Vec<String> = generated_tools(&generated)
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    expected.sort();
    assert_eq!(names, expected);

    same_answers(gateway, generated).await;
    child.kill().await.ok();
    std::fs::remove_dir_all(&dir).ok();
}

/// A browser page of another site must not drive the gateway through the user's browser: in
/// session mode as in stateless mode, a request carrying an `Origin` is refused (403) unless
/// it is a loopback origin (the gateway is reached on loopback here) or allowed with
/// `--allowed-origin`, which adds to the loopback origins; clients that send none are served.
#[tokio::test]
async fn a_foreign_origin_is_refused_in_both_http_modes() {
    let backend = e2e::start_backend().await.expect("backend");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "origin-test", "version": "1"}
        }
    })
    .to_string();
    for mode in [&[][..], &["--stateless"][..]] {
        let mut command = tokio::process::Command::new(GATEWAY);
        command
            .args(["--target", &format!("http://{}", backend.addr)])
            .args(["--service", "testdata.scalars.ScalarService"])
            .args(mode)
            .args(["--allowed-origin", "https://app.example.com:443"]);
        let (mut allowing, allowing_addr) = spawn_http(command).await;
        let mut command = tokio::process::Command::new(GATEWAY);
        command
            .args(["--target", &format!("http://{}", backend.addr)])
            .args(["--service", "testdata.scalars.ScalarService"])
            .args(mode);
        let (mut default, default_addr) = spawn_http(command).await;
        for (addr, origin, expected) in [
            (&allowing_addr, None, 200),
            (&allowing_addr, Some("https://app.example.com"), 200),
            (&allowing_addr, Some("https://evil.example.com"), 403),
            (&allowing_addr, Some("https://app.example.com:8443"), 403),
            (&allowing_addr, Some("null"), 403),
            (&allowing_addr, Some("http://localhost:6274"), 200),
            (&default_addr, None, 200),
            (&default_addr, Some("https://app.example.com"), 403),
            (&default_addr, Some("http://localhost"), 200),
            (&default_addr, Some("http://127.0.0.1:6274"), 200),
            (&default_addr, Some("http://[::1]:6274"), 200),
            (&default_addr, Some("http://localhost.evil.example"), 403),
        ] {
            let status = post_status(addr, origin, &initialize).await;
            assert_eq!(status, expected, "{mode:?}, Origin {origin:?}");
        }
        allowing.kill().await.ok();
        default.kill().await.ok();
    }
}

/// The status code of one raw HTTP/1.1 POST to `/mcp`.
async fn post_status(addr: &str, origin: Option<&str>, body: &str) -> u16 {
    let origin = origin.map_or_else(String::new, |origin| format!("Origin: {origin}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{origin}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut status_line = String::new();
    tokio::time::timeout(
        Duration::from_secs(30),
        tokio::io::BufReader::new(stream).read_line(&mut status_line),
    )
    .await
    .expect("an answer in time")
    .expect("read the status line");
    status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"))
}

/// `buf build -o` over the repository's buf module (source info and imports by default). Run by
/// `scripts/workflows.sh buf`, which installs buf (npm @bufbuild/buf) and passes its path in
/// `GATEWAY_BUF`: `GATEWAY_BUF=… cargo test -p grpc-mcp-gateway --test gateway -- --ignored`.
#[tokio::test]
#[ignore = "needs buf: run by scripts/workflows.sh buf"]
async fn buf_descriptor_set_gives_the_generated_tools_and_answers() {
    let buf = std::env::var("GATEWAY_BUF").expect("GATEWAY_BUF: the path of the buf binary");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("grpc-mcp-gateway-buf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let set = dir.join("testdata.binpb");
    let status = std::process::Command::new(buf)
        .current_dir(&repo)
        .arg("build")
        .arg("-o")
        .arg(&set)
        .status()
        .expect("run buf");
    assert!(status.success(), "buf build failed");

    let backend = e2e::start_backend().await.expect("backend");
    let generated = generated(&backend).await;
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", &format!("http://{}", backend.addr)])
        .arg("--descriptor-set")
        .arg(&set)
        .args(SERVICES.iter().flat_map(|service| ["--service", service]));
    // buf keeps comments (source info) and custom options: the generated tools, field for field.
    stdio_answers_as_generated(command, generated).await;
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn header_values_reach_the_server_and_never_the_logs() {
    const SECRET: &str = "Bearer gateway-test-secret-0b7d";
    let backend = e2e::start_backend().await.expect("backend");
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", &format!("http://{}", backend.addr)])
        .args(["--header", &format!("x-api-key: {SECRET}")])
        .args(["--header-env", "authorization: GATEWAY_TEST_TOKEN"])
        .env("GATEWAY_TEST_TOKEN", SECRET)
        // Every event of every crate, the gateway's, tonic-mcp's, tonic's, h2's and rmcp's.
        .env("RUST_LOG", "trace");
    let (gateway, logs) = support::stdio_with_logs(command).await;
    let item = call(&gateway, "InventoryService_GetItem", &json!({"id": "3"})).await;
    assert_eq!(item["structuredContent"]["name"], "item-3", "{item}");
    let failed = call(&gateway, "InventoryService_GetItem", &json!({"id": "42"})).await;
    assert_eq!(failed["isError"], true, "{failed}");
    gateway.cancel().await.expect("close");
    let logs = tokio::time::timeout(Duration::from_secs(30), logs)
        .await
        .expect("the gateway exits")
        .expect("stderr task");

    // The server saw both headers on both calls...
    let seen = backend.metadata.lock().expect("metadata").clone();
    assert_eq!(seen.len(), 2);
    for metadata in &seen {
        assert_eq!(metadata.get("x-api-key").expect("x-api-key"), SECRET);
        assert_eq!(
            metadata.get("authorization").expect("authorization"),
            SECRET
        );
    }
    // ...the logs name them and show the calls, and never carry the value.
    assert!(
        logs.contains("x-api-key") && logs.contains("authorization"),
        "{logs}"
    );
    assert!(
        logs.contains("mcp.tool_call"),
        "trace logs of the calls: {logs}"
    );
    assert!(
        !logs.contains("gateway-test-secret"),
        "a header value was logged"
    );
}
