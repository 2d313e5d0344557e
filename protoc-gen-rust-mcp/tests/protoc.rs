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
    let out = common::tempfile_path("protoc-insert");
    let output = common::run_protoc(
        &out,
        "include_in_prost,flat_output_dir",
        &["scalars.proto".to_owned()],
    );
    std::fs::remove_dir_all(&out).ok();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("testdata.scalars.rs"), "{stderr}");
}

#[test]
fn protoc_reports_plugin_errors_against_the_input() {
    let out = common::tempfile_path("protoc-err");
    let output = common::run_protoc(&out, "no_such_option", &["scalars.proto".to_owned()]);
    std::fs::remove_dir_all(&out).ok();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
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

#[test]
fn the_binary_reports_every_shrunk_tool_on_stderr() {
    let out = common::tempfile_path("protoc-shrink");
    let output = common::run_protoc(
        &out,
        "max_schema_bytes=300,rust=false,tools_json",
        &["recursion.proto".to_owned()],
    );
    std::fs::remove_dir_all(&out).ok();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
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
