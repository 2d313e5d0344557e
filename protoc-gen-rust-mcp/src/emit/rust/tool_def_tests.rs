//! `ToolDef` constants with every kind of field, through the whole module: the code parses,
//! and big texts stay verbatim raw strings.

use super::super::package;
use crate::model::{Annotations, Package, RpcKind, Service, TaskSupport, Tool, Unconfirmed};
use crate::options::PluginOptions;
use tonic_mcp_schema::{LongRunningSpec, ToolSpec};

fn tool(const_name: &str) -> Tool {
    let spec = ToolSpec {
        name: format!("Svc_{const_name}"),
        method: const_name.to_owned(),
        title: "A title".to_owned(),
        description: "Says \"hi\"\nover two lines, with ünïcode and a tab\t.".to_owned(),
        rpc_path: format!("/demo.v1.Svc/{const_name}"),
        kind: RpcKind::Unary,
        input_type: "demo.v1.Request".to_owned(),
        output_type: "demo.v1.Response".to_owned(),
        annotations: Annotations::default(),
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: Vec::new(),
        input_schema: serde_json::Value::Null,
        output_schema: serde_json::Value::Null,
        shrunk: Vec::new(),
        category: None,
        required_scopes: Vec::new(),
        task_support: TaskSupport::Forbidden,
        confirm: None,
        long_running: None,
        notes: Vec::new(),
    };
    Tool {
        spec,
        const_name: const_name.to_owned(),
        input_schema: r#"{"type":"object"}"#.to_owned(),
        output_schema: format!(r##"{{"type":"object","title":"{const_name} says \"#hi\"#"}}"##),
        meta: serde_json::json!({"protoc-gen-rust-mcp/rpc": {"path": const_name}}),
    }
}

/// Tools with every kind of field, around the widths where prettyplease breaks a line.
fn tools() -> Vec<Tool> {
    let mut tools = Vec::new();
    for (i, kind) in [
        RpcKind::Unary,
        RpcKind::ServerStreaming,
        RpcKind::ClientStreaming,
        RpcKind::Bidi,
    ]
    .into_iter()
    .enumerate()
    {
        let mut t = tool(&format!("KIND_{i}"));
        t.spec.kind = kind;
        t.spec.annotations = Annotations {
            read_only: Some(i % 2 == 0),
            destructive: (i > 1).then_some(true),
            idempotent: Some(false),
            open_world: None,
        };
        t.spec.max_messages = (i > 0).then_some(u32::MAX - i as u32);
        t.spec.max_result_bytes = (i < 3).then_some(512 * i as u32);
        t.spec.timeout = Some([(5, 0), (2, 500_000_000), (i64::MAX, 999_999_999), (-1, -1)][i]);
        tools.push(t);
    }
    for n in 1..4 {
        let mut t = tool(&format!("OMITTED_{n}"));
        t.spec.output_omitted = (0..n)
            .map(|i| format!("demo.v1.{}{i}", "f".repeat(20 * n)))
            .collect();
        tools.push(t);
    }
    for (i, unconfirmed) in [Unconfirmed::Refuse, Unconfirmed::Proceed]
        .into_iter()
        .enumerate()
    {
        let mut t = tool(&format!("CONFIRM_{i}"));
        t.spec.task_support = [TaskSupport::Optional, TaskSupport::Required][i];
        t.spec.confirm = Some(unconfirmed);
        t.spec.long_running = Some(LongRunningSpec {
            response_type: format!("demo.v1.{}Response", "R".repeat(40 * i)),
            metadata_type: (i == 0).then(|| "demo.v1.Metadata".to_owned()),
            wait: true,
        });
        tools.push(t);
    }
    tools.push(tool(&"LONG_NAME_".repeat(20)));
    // Two tools with the same texts: written once, as `MCP_SCHEMA_<n>`.
    for name in ["SHARED_A", "SHARED_B"] {
        let mut t = tool(name);
        t.output_schema = r#"{"type":"object","title":"shared"}"#.to_owned();
        tools.push(t);
    }
    tools
}

fn generate(runtime_crate: &str) -> String {
    let options = PluginOptions {
        runtime_crate: runtime_crate.to_owned(),
        ..PluginOptions::default()
    };
    let package_ = Package {
        name: "demo.v1".to_owned(),
        files: vec!["demo/v1/svc.proto".to_owned()],
        services: vec![Service {
            full_name: "demo.v1.Svc".to_owned(),
            rust_name: "Svc".to_owned(),
            server_mod: "svc_server".to_owned(),
            mcp_mod: "svc_mcp".to_owned(),
            tools: tools(),
            omitted: Vec::new(),
        }],
        descriptor_set: (0..=255u8).chain([0, b'7', 0]).collect(),
    };
    package(&package_, &options).unwrap()
}

#[test]
fn every_kind_of_field_makes_rust_that_parses() {
    for runtime in ["::tonic_mcp", "crate::mcp", "r#async::x"] {
        let code = generate(runtime);
        let file: syn::File = syn::parse_str(&code).unwrap_or_else(|e| panic!("{e}\n{code}"));
        let module = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Mod(module) => module.content.as_ref(),
                _ => None,
            })
            .unwrap();
        // Every tool's constant, then `TOOLS` and the two constructors.
        assert_eq!(module.1.len(), tools().len() + 3, "{runtime}");
    }
}

#[test]
fn texts_are_verbatim_raw_strings() {
    let code = generate("::tonic_mcp");
    // A text holding `"#` takes two hashes.
    assert!(
        code.contains(
            r###"        output_schema: r##"{"type":"object","title":"KIND_0 says \"#hi\"#"}"##,"###
        ),
        "{code}"
    );
    assert!(
        code.contains(r##"        input_schema: super::MCP_SCHEMA_0,"##),
        "{code}"
    );
    assert!(
        code.contains(r##"pub const MCP_SCHEMA_0: &str = r#"{"type":"object"}"#;"##),
        "{code}"
    );
    assert!(
        code.contains(r##"        meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"KIND_0"}}"#,"##),
        "{code}"
    );
    assert!(
        code.contains(
            r#"pub const MCP_FILE_DESCRIPTOR_SET: &[u8] = b"\0\x01\x02\x03\x04\x05\x06\x07\x08\t\n"#
        ),
        "{code}"
    );
    assert!(code.contains(r#"\xFE\xFF\x007\0";"#), "{code}");
    assert!(
        code.contains(
            "pub static MCP_DESCRIPTORS: ::tonic_mcp::codegen::Descriptors = ::tonic_mcp::codegen::Descriptors::new(\n    MCP_FILE_DESCRIPTOR_SET,\n);"
        ),
        "{code}"
    );
}

#[test]
fn the_output_is_the_same_every_time() {
    let first = generate("::tonic_mcp");
    for _ in 0..3 {
        assert_eq!(generate("::tonic_mcp"), first);
    }
}
