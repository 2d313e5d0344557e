// A user's own tonic-prost-build configuration, kept as it is, plus the MCP modules from the
// descriptor set it writes. scripts/workflows.sh copies this crate to target/workflows/compose/,
// with the repository's path in place of each REPO placeholder.
use std::path::PathBuf;

fn config() -> prost_build::Config {
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path().expect("vendored protoc"));
    config
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Changing this variable re-runs the script: the second run must add nothing.
    println!("cargo:rerun-if-env-changed=COMPOSE_RUN");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let naming = PathBuf::from("@REPO@/protoc-gen-rust-mcp/tests/naming");
    let demo = PathBuf::from("@REPO@/examples/demo/proto");
    let testdata = PathBuf::from("@REPO@/testdata");
    // rust_mcp/options.proto, which the demo proto imports.
    let options = PathBuf::from("@REPO@/proto");

    // Types another crate of the user's would own, compiled on their own.
    let common = out.join("common");
    std::fs::create_dir_all(&common)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(false)
        .out_dir(&common)
        .compile_with_config(config(), &[naming.join("match/v2/match.proto")], &[naming.clone()])?;

    // The user's build, customised, into a custom out dir, with a descriptor set.
    let custom = out.join("custom");
    std::fs::create_dir_all(&custom)?;
    let descriptors = out.join("descriptors.bin");
    let protos: Vec<PathBuf> = [
        "camel/camel.proto",
        "camel/snake.proto",
        "digits/digits.proto",
        "edge/type/foo_bar.proto",
        "raw/raw.proto",
        "rootless.proto",
    ]
    .iter()
    .map(|p| naming.join(p))
    .chain([demo.join("demo/v1/tasks.proto")])
    .collect();
    tonic_prost_build::configure()
        .out_dir(&custom)
        .file_descriptor_set_path(&descriptors)
        .type_attribute(".CamelCase", "#[derive(PartialOrd)]")
        .message_attribute(".camel_case", "#[derive(PartialOrd)]")
        .bytes(".")
        .btree_map(".")
        .extern_path(".match.v2", "crate::common::match_v2")
        .compile_with_config(config(), &protos, &[naming, demo, testdata, options])?;

    // Only the MCP modules, from that descriptor set, with the same extern_path.
    protoc_gen_rust_mcp::DescriptorSetBuilder::new()
        .descriptor_set_path(&descriptors)?
        .plugin_options("json_names")?
        .extern_path(".match.v2", "crate::common::match_v2")
        .out_dir(&custom)
        .build()?;
    Ok(())
}
