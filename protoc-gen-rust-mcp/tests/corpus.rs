//! A fixed subset of the real-world corpus (`scripts/corpus.sh`, googleapis from the npm package
//! `google-proto-files`): the files that once failed on property names longer than 64
//! characters, Ad Manager's report service (a 1 MB input schema before the budget) and all of
//! Compute Engine. Each must generate, every schema must fit the default budget, pass the
//! portability rules and the 2020-12 meta-schema.
//!
//! The corpus is installed by `scripts/corpus.sh install` (scripts/test.sh does it, and sets
//! `RUST_MCP_CORPUS_REQUIRED=1` so that a missing corpus fails instead of skipping).

use std::path::{Path, PathBuf};
use std::process::Command;

use protoc_gen_rust_mcp::{PluginOptions, json_schema, model};

const FILES: &[&str] = &[
    // Fields longer than 64 characters (they failed before aliases).
    "google/ads/googleads/v22/services/google_ads_service.proto",
    "google/ads/googleads/v22/services/recommendation_service.proto",
    "google/ads/googleads/v23/services/google_ads_service.proto",
    "google/ads/googleads/v23/services/recommendation_service.proto",
    "google/ads/googleads/v24/services/google_ads_service.proto",
    "google/ads/googleads/v24/services/recommendation_service.proto",
    "google/ads/googleads/v25/services/google_ads_service.proto",
    "google/ads/googleads/v25/services/recommendation_service.proto",
    "google/cloud/compute/v1beta/compute.proto",
    "google/devicesandservices/health/v4/data_points.proto",
    // The largest input schema of the corpus before the budget.
    "google/ads/admanager/v1/report_service.proto",
    // All of Compute Engine in one file.
    "google/cloud/compute/v1/compute.proto",
];

fn corpus() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools/corpus/node_modules/google-proto-files");
    if root.join("google").is_dir() {
        return Some(root);
    }
    assert!(
        std::env::var_os("RUST_MCP_CORPUS_REQUIRED").is_none(),
        "the corpus is not installed: run scripts/corpus.sh install"
    );
    eprintln!("corpus not installed (scripts/corpus.sh install); skipping");
    None
}

fn descriptor_set(corpus: &Path, file: &str) -> Vec<u8> {
    let out = std::env::temp_dir().join(format!(
        "corpus-{}-{}.bin",
        std::process::id(),
        file.replace('/', "_")
    ));
    let status = Command::new(protoc_bin_vendored::protoc_bin_path().expect("protoc"))
        .arg(format!("-I{}", corpus.display()))
        .arg(format!(
            "-I{}",
            protoc_bin_vendored::include_path()
                .expect("includes")
                .display()
        ))
        .args(["--include_imports", "--include_source_info"])
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg(file)
        .status()
        .expect("run protoc");
    assert!(status.success(), "protoc failed on {file}");
    let bytes = std::fs::read(&out).expect("descriptor set");
    let _ = std::fs::remove_file(&out);
    bytes
}

#[test]
fn corpus_subset_generates_within_the_budget_and_portably() {
    let Some(corpus) = corpus() else {
        return;
    };
    let options = PluginOptions::parse("tools_json").expect("options");
    let budget = options.tools.max_schema_bytes;
    assert!(budget > 0);
    for file in FILES {
        let bytes = descriptor_set(&corpus, file);
        let inputs = model::Inputs::from_descriptor_set(&bytes, vec![(*file).to_owned()])
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let model = model::build(&inputs, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        let files = protoc_gen_rust_mcp::generate(&inputs, &options)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!files.is_empty(), "{file}: nothing generated");
        let mut tools = 0;
        for tool in model
            .packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.tools)
        {
            tools += 1;
            for (side, schema) in [
                ("input", &tool.input_schema),
                ("output", &tool.output_schema),
            ] {
                let size = schema.len();
                let schema: serde_json::Value = serde_json::from_str(schema).expect("JSON");
                let schema = &schema;
                assert!(
                    size <= budget,
                    "{file}: {} {side} schema is {size} bytes, over {budget}",
                    tool.spec.name
                );
                let problems = json_schema::portability::violations(schema);
                assert!(
                    problems.is_empty(),
                    "{file}: {}: {problems:?}",
                    tool.spec.name
                );
                jsonschema::draft202012::meta::validate(schema)
                    .unwrap_or_else(|e| panic!("{file}: {} {side}: {e}", tool.spec.name));
            }
        }
        assert!(tools > 0, "{file}: no tools");
    }
}
