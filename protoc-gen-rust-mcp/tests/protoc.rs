//! Real protoc (protoc-bin-vendored) runs the built plugin through `--plugin` and
//! `--rust-mcp_out`, exactly as users do. (The golden test runs this way too.)

mod common;

#[test]
fn default_layout_nests_by_package_like_protoc_gen_prost() {
    let files = ["scalars.proto".to_owned(), "nopackage.proto".to_owned()];
    let names: Vec<String> = common::protoc_generate(&files, "")
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        names,
        ["_.pb.mcp.rs", "testdata/scalars/testdata.scalars.pb.mcp.rs"]
    );
}

#[test]
fn include_in_prost_targets_the_module_insertion_point() {
    // Without protoc-gen-prost in the same run there is no file to insert into, so protoc must
    // refuse; the message names the prost file the insertion was meant for.
    let (success, stderr) =
        common::protoc_stderr("include_in_prost,flat_output_dir", &["scalars.proto"]);
    assert!(!success);
    assert!(stderr.contains("testdata.scalars.rs"), "{stderr}");
}

#[test]
fn protoc_reports_plugin_errors_against_the_input() {
    let (success, stderr) = common::protoc_stderr("no_such_option", &["scalars.proto"]);
    assert!(!success);
    assert!(
        stderr.contains("unknown option `no_such_option`"),
        "{stderr}"
    );
}

#[test]
fn a_service_left_without_tools_gets_no_module() {
    // Every RPC excluded: no module, and so no file for the package.
    let files = ["streaming.proto".to_owned()];
    let written = common::protoc_generate(&files, "flat_output_dir,exclude=testdata.streaming.*");
    assert!(
        written.is_empty(),
        "{:?}",
        written.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    // One RPC left: the module is there with that one tool.
    let written = common::protoc_generate(
        &files,
        "flat_output_dir,include=testdata.streaming.InventoryService.GetItem",
    );
    assert_eq!(written.len(), 1);
    assert!(
        written[0]
            .1
            .contains("pub const TOOLS: &[::tonic_mcp::codegen::ToolDef] = &[GET_ITEM];")
    );
}

/// Every package-naming case: (proto package, MCP module path protoc writes, the prost file
/// protoc-gen-prost 0.5 writes for that package, which `include_in_prost` inserts into).
/// protoc-gen-prost puts a package in one directory per Rust module (`edge/r#type/foo_bar/`) and
/// names the file after the package as written; packages sharing a module share the file of the
/// first one, and so share one MCP module (`CamelCase.V2Api` and `camel_case.v2_api`).
/// `scripts/workflows.sh` runs the real protoc-gen-prost over the same protos and compiles them.
const NAMING: &[(&str, &str, &str)] = &[
    ("", "_.pb.mcp.rs", "_"),
    (
        "CamelCase.V2Api + camel_case.v2_api",
        "camel_case/v2_api/CamelCase.V2Api.pb.mcp.rs",
        "camel_case/v2_api/CamelCase.V2Api.rs",
    ),
    (
        "crate.gen",
        "crate_/r#gen/crate.gen.pb.mcp.rs",
        "crate_/r#gen/crate.gen.rs",
    ),
    (
        "digits._2fa.v10",
        "digits/_2fa/v10/digits._2fa.v10.pb.mcp.rs",
        "digits/_2fa/v10/digits._2fa.v10.rs",
    ),
    (
        "edge.type.Foo_Bar",
        "edge/r#type/foo_bar/edge.type.Foo_Bar.pb.mcp.rs",
        "edge/r#type/foo_bar/edge.type.Foo_Bar.rs",
    ),
    (
        "match.v2",
        "r#match/v2/match.v2.pb.mcp.rs",
        "r#match/v2/match.v2.rs",
    ),
];

#[test]
fn every_package_is_laid_out_in_prosts_module_directories() {
    let written = common::protoc_generate_in(common::NAMING_INCLUDES, &common::naming_files(), "");
    let names: Vec<&str> = written.iter().map(|(name, _)| name.as_str()).collect();
    let mut expected: Vec<&str> = NAMING.iter().map(|(_, module, _)| *module).collect();
    expected.sort();
    assert_eq!(names, expected);
    // Flat output: the same file names, no directories.
    let flat = common::protoc_generate_in(
        common::NAMING_INCLUDES,
        &common::naming_files(),
        "flat_output_dir",
    );
    let names: Vec<&str> = flat.iter().map(|(name, _)| name.as_str()).collect();
    let mut expected: Vec<&str> = NAMING
        .iter()
        .map(|(_, module, _)| module.rsplit('/').next().expect("a file name"))
        .collect();
    expected.sort();
    assert_eq!(names, expected);
}

#[test]
fn include_in_prost_inserts_into_protoc_gen_prosts_file_for_every_package() {
    let request = common::request_in(
        common::NAMING_INCLUDES,
        &common::naming_files(),
        "include_in_prost",
    );
    let response = protoc_gen_rust_mcp::execute(&request).expect("request decodes");
    assert_eq!(response.error, None);
    let mut inserts: Vec<(&str, &str)> = response
        .file
        .iter()
        .filter(|f| f.insertion_point() == "module")
        .map(|f| (f.name(), f.content()))
        .collect();
    inserts.sort();
    let mut expected: Vec<(&str, String)> = NAMING
        .iter()
        .map(|(_, module, prost)| {
            let file = module.rsplit('/').next().expect("a file name");
            (*prost, format!("include!(\"{file}\");\n"))
        })
        .collect();
    expected.sort();
    let expected: Vec<(&str, &str)> = expected.iter().map(|(p, c)| (*p, c.as_str())).collect();
    assert_eq!(inserts, expected);
}

#[test]
fn packages_sharing_a_rust_module_share_one_mcp_module() {
    let written = common::protoc_generate_in(
        common::NAMING_INCLUDES,
        &[
            "camel/camel.proto".to_owned(),
            "camel/snake.proto".to_owned(),
        ],
        "",
    );
    assert_eq!(
        written.len(),
        1,
        "{:?}",
        written.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    let (name, content) = &written[0];
    assert_eq!(name, "camel_case/v2_api/CamelCase.V2Api.pb.mcp.rs");
    // One descriptor set for the module, and a tool module for each package's service.
    assert_eq!(
        content.matches("pub const MCP_FILE_DESCRIPTOR_SET").count(),
        1
    );
    assert!(content.contains("pub mod camel_service_mcp"), "{content}");
    assert!(content.contains("pub mod snake_service_mcp"), "{content}");
}

#[test]
fn include_in_prost_names_the_prost_file_of_a_keyword_package() {
    // Real protoc refuses the insertion when protoc-gen-prost is not in the run, naming the file
    // the insertion was meant for: prost's module directory, the package as written.
    let (success, stderr) = common::protoc_stderr_in(
        common::NAMING_INCLUDES,
        "include_in_prost",
        &["edge/type/foo_bar.proto"],
    );
    assert!(!success);
    assert!(
        stderr.contains("edge/r#type/foo_bar/edge.type.Foo_Bar.rs"),
        "{stderr}"
    );
}

#[test]
fn the_binary_reports_every_shrunk_tool_on_stderr() {
    let (success, stderr) = common::protoc_stderr(
        "max_schema_bytes=300,rust=false,tools_json",
        &["recursion.proto"],
    );
    assert!(success);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("protoc-gen-rust-mcp: shrank "))
        .collect();
    // One line per shrunk tool: the tool, sizes before and after, the steps.
    let forest = lines
        .iter()
        .find(|l| l.contains("RecursionService_EchoForest: input "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(forest.contains(" KB -> "), "{forest}");
    assert!(forest.contains("subtrees below depth"), "{forest}");
    let mut tools: Vec<&str> = lines
        .iter()
        .filter_map(|l| {
            l.strip_prefix("protoc-gen-rust-mcp: shrank ")?
                .split(':')
                .next()
        })
        .collect();
    let count = tools.len();
    tools.dedup();
    assert_eq!(tools.len(), count, "one line per tool: {stderr}");
}

#[test]
fn a_long_running_rpc_that_cannot_wait_returns_the_operation_with_a_note() {
    let out = common::tempfile_path("protoc-lro-note");
    let output = common::run_protoc(
        &out,
        "rust=false,tools_json,exclude=*.BuildNow",
        &["errors/wait_unknown_response.proto".to_owned()],
    );
    let json = std::fs::read_to_string(out.join(
        "testdata/errors/wait_unknown_response/testdata.errors.wait_unknown_response.mcp.json",
    ));
    std::fs::remove_dir_all(&out).ok();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.lines().any(|l| l
            == "protoc-gen-rust-mcp: note: testdata.errors.wait_unknown_response.ReportService.Build: \
                returns the google.longrunning.Operation instead of waiting for it: its \
                operation_info response_type `NoSuchReport` is not a message the descriptors \
                define"),
        "{stderr}"
    );
    let tools = common::tools_of(&json.expect("tools JSON written"));
    let rpc = &tools[0]["_meta"]["protoc-gen-rust-mcp/rpc"];
    assert_eq!(rpc["longRunning"]["wait"], false, "{rpc}");
    assert_eq!(rpc["longRunning"]["responseType"], "NoSuchReport", "{rpc}");
    assert_eq!(
        rpc["longRunning"]["metadataType"], "testdata.errors.wait_unknown_response.Req",
        "{rpc}"
    );
    assert_eq!(
        tools[0]["outputSchema"]["properties"]["done"]["type"], "boolean",
        "the tool returns the Operation"
    );
}
