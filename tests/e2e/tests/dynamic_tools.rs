//! Tools built from descriptors at run time (`tonic_mcp_dynamic::DescriptorTools`) are exactly the tools
//! the plugin generates: over the whole golden corpus (every package of the default run and of
//! every variant), `tools/list` serialises to the same bytes as the plugin's tools JSON, and for
//! the services the generated modules serve, to the same bytes as the generated tool sets. Every
//! echo tool also answers the same `structuredContent` (or the same error) through both.

use std::path::{Path, PathBuf};

use prost_reflect::DescriptorPool;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic_mcp::{
    McpServer, ToolSet,
    schema::{
        Options,
        options::{OptionItem, Scope, option_doc},
    },
};
use tonic_mcp_dynamic::DescriptorTools;

/// The plugin runs behind `golden/`: its folder and its parameter, as in the plugin's golden test
/// (protoc-gen-rust-mcp/tests/golden.rs).
const RUNS: &[(&str, &str)] = &[
    ("", "tools_json,flat_output_dir"),
    (
        "variants/json_names_any_of",
        "flat_output_dir,tools_json,json_names,unions=any_of,schema_keyword",
    ),
    (
        "variants/package_names_prefix",
        "flat_output_dir,tools_json,rust=false,tool_names=package,prefix=acme",
    ),
    (
        "variants/no_descriptions_emit_defaults",
        "flat_output_dir,tools_json,rust=false,descriptions=false,emit_defaults",
    ),
    (
        "variants/selection",
        "flat_output_dir,tools_json,rust=false,exclude=*.Upload*,include=testdata.streaming.*,include=testdata.tool_options.*",
    ),
    (
        "variants/opt_in",
        "flat_output_dir,tools_json,rust=false,opt_in",
    ),
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../golden")
}

/// `(package, tools)` of every `*.mcp.json` in `dir`, sorted by file name.
fn golden_packages(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("golden dir")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.to_string_lossy().ends_with(".mcp.json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().expect("name").to_string_lossy();
            let stem = name.trim_end_matches(".mcp.json");
            let package = if stem == "_" { "" } else { stem }.to_owned();
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("JSON");
            let tools = doc["tools"].as_array().cloned().expect("tools array");
            (package, tools)
        })
        .collect()
}

fn pool() -> DescriptorPool {
    DescriptorPool::decode(e2e::TESTDATA_DESCRIPTOR_SET).expect("testdata descriptors")
}

/// A channel that is never used: building tools makes no call.
fn unused_channel() -> Channel {
    Channel::from_static("http://127.0.0.1:9").connect_lazy()
}

/// `tools/list` of a server holding `sets`, as the bytes a client receives in `tools`.
fn listing(sets: Vec<ToolSet>) -> String {
    let mut builder = McpServer::builder("dynamic", "0");
    for set in sets {
        builder = builder.tool_set(set).expect("no duplicate names");
    }
    serde_json::to_string(&builder.build().tools()).expect("tools serialise")
}

/// The tool options of a plugin parameter: its code options (output files, Rust) shape nothing
/// at run time, and `Options::parse` refuses them.
fn tool_options(parameter: &str) -> Options {
    let tools: Vec<&str> = OptionItem::split(parameter)
        .filter(|item| option_doc(item.key).is_some_and(|doc| doc.scope == Scope::Tool))
        .map(|item| item.raw)
        .collect();
    Options::parse(&tools.join(",")).expect("options")
}

#[tokio::test]
async fn run_time_tools_equal_the_plugins_tools_json_over_the_golden_corpus() {
    let pool = pool();
    let mut packages = 0;
    let mut tools = 0;
    for (dir, parameter) in RUNS {
        let options = tool_options(parameter);
        let generator = DescriptorTools::new(&pool, &options);
        // Schemas made when first needed are the same schemas.
        let lazy = DescriptorTools::new(&pool, &options).lazy_schemas();
        for (package, expected) in golden_packages(&golden_dir().join(dir)) {
            let services: Vec<String> = pool
                .services()
                .filter(|service| service.package_name() == package)
                .map(|service| service.full_name().to_owned())
                .collect();
            assert!(!services.is_empty(), "{dir}: no services in `{package}`");
            let sets = services
                .iter()
                .map(|service| generator.service(service, unused_channel()))
                .collect::<Result<Vec<_>, _>>()
                .unwrap_or_else(|e| panic!("{dir} {package}: {e}"));
            let listed = listing(sets);
            let expected = serde_json::to_string(&expected).expect("serialise");
            assert_eq!(
                listed, expected,
                "{dir} {package}: tools/list differs from the plugin's tools JSON"
            );
            let lazy_sets = services
                .iter()
                .map(|service| lazy.service(service, unused_channel()))
                .collect::<Result<Vec<_>, _>>()
                .unwrap_or_else(|e| panic!("{dir} {package}, lazy schemas: {e}"));
            assert_eq!(
                listing(lazy_sets),
                expected,
                "{dir} {package}: with lazy schemas, tools/list differs from the plugin's"
            );
            packages += 1;
            tools += serde_json::from_str::<Vec<Value>>(&listed)
                .expect("array")
                .len();
        }
    }
    // The corpus: 17 packages of the default run and 8 of the variants.
    assert_eq!(packages, 25);
    assert!(tools > 40, "{tools} tools");

    let options = Options::default();
    let Err(error) = DescriptorTools::new(&pool, &options).service("no.Such", unused_channel())
    else {
        panic!("an unknown service must be an error");
    };
    assert_eq!(
        error.to_string(),
        "service `no.Such` is not in the descriptor pool"
    );
}

#[tokio::test]
async fn run_time_tools_equal_the_generated_tool_sets_and_answer_the_same() {
    let backend = e2e::start_backend().await.expect("backend");
    let channel = e2e::channel(&backend).await.expect("channel");
    let generated = e2e::tool_sets(channel.clone()).expect("generated sets");
    let pool = pool();
    let options = Options::default();
    let generator = DescriptorTools::new(&pool, &options);
    let services = e2e::SERVICES;
    let mut dynamic: Vec<ToolSet> = services
        .iter()
        .map(|service| generator.service(service, channel.clone()))
        .collect::<Result<_, _>>()
        .expect("dynamic sets");
    // RecursionService is served in process by the generated side: the same server, boxed.
    dynamic.push(
        generator
            .service(
                "testdata.recursion.RecursionService",
                e2e::testdata::recursion::recursion_service_server::RecursionServiceServer::new(
                    e2e::services::Recursion,
                ),
            )
            .expect("recursion"),
    );
    assert_eq!(listing(generated.clone()), listing(dynamic.clone()));

    let connect = |sets: Vec<ToolSet>| async move {
        let mut builder = McpServer::builder("e2e", "0");
        for set in sets {
            builder = builder.tool_set(set).expect("tool set");
        }
        test_kit::connect(builder.build()).await
    };
    let generated = connect(generated).await;
    let dynamic = connect(dynamic).await;
    // Every echo tool with empty arguments, and the scalars echo with every kind of value.
    let tools = generated.list_all_tools().await.expect("tools/list");
    let mut calls: Vec<(String, Value)> = tools
        .iter()
        .filter(|tool| tool.name.contains("_Echo"))
        .map(|tool| (tool.name.to_string(), json!({})))
        .collect();
    assert!(calls.len() >= 10, "{calls:?}");
    calls.push((
        "ScalarService_Echo".to_owned(),
        json!({"f_int64": "9007199254740993", "f_bytes": "AAE=", "color": "COLOR_RED",
               "r_string": ["a", "b"], "f_double": 1.5, "nickname": "n"}),
    ));
    // A tool's own result budget (`max_result_bytes: 512`) holds on both sides.
    let over_budget = "catalog_admin_CatalogService_UpdateProduct".to_owned();
    calls.push((
        over_budget.clone(),
        json!({"product": {"id": "p2", "name": "k".repeat(600)}}),
    ));
    let mut succeeded = 0;
    for (name, arguments) in calls {
        let mut params = CallToolRequestParams::new(name.clone());
        params.arguments = arguments.as_object().cloned();
        let one = generated
            .call_tool(params.clone())
            .await
            .expect("generated call");
        let two = dynamic.call_tool(params).await.expect("dynamic call");
        // Errors (a required field left out) must be the same errors.
        assert_eq!(one.is_error, two.is_error, "{name}");
        assert_eq!(one.structured_content, two.structured_content, "{name}");
        assert_eq!(one.content, two.content, "{name}");
        if name == over_budget {
            assert_eq!(one.is_error, Some(true), "{:?}", one.content);
        }
        if one.is_error != Some(true) {
            assert!(one.structured_content.is_some(), "{name}");
            succeeded += 1;
        }
    }
    assert!(succeeded >= 10, "{succeeded} echo calls succeeded");
}
