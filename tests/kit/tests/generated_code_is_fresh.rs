//! The demo's prost/tonic code and descriptor set under `gen/` are generated from `proto/` and
//! checked in, so no crate whose tests serve the demo needs a build script. This test regenerates
//! them and fails on drift. To re-bless after editing the proto:
//!
//! ```sh
//! TONIC_MCP_BLESS=1 cargo test -p test-kit --test generated_code_is_fresh
//! ```

use std::{fs, path::Path, process::Command};

use prost::Message as _;

#[test]
fn generated_code_is_fresh() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("tonic-mcp-gen-{}", std::process::id()));
    fs::create_dir_all(&out)?;

    // Descriptor set as the plugin embeds it: transitive closure, no source info.
    let descriptor_path = out.join("descriptor.bin");
    let status = Command::new(protoc_bin_vendored::protoc_bin_path()?)
        .arg("--include_imports")
        .arg(format!(
            "--descriptor_set_out={}",
            descriptor_path.display()
        ))
        .arg(format!("-I{}", root.join("proto").display()))
        .arg(format!(
            "-I{}",
            protoc_bin_vendored::include_path()?.display()
        ))
        .arg("demo/v1/demo.proto")
        .status()?;
    assert!(status.success(), "protoc failed");
    let descriptor = fs::read(&descriptor_path)?;
    let fds = prost_types::FileDescriptorSet::decode(descriptor.as_slice())?;
    tonic_prost_build::configure()
        .out_dir(&out)
        .emit_rerun_if_changed(false)
        .compile_fds(fds)?;
    let code = fs::read_to_string(out.join("demo.v1.rs"))?;
    fs::remove_dir_all(&out)?;

    let gen_dir = root.join("gen");
    let expected = [
        ("descriptor.bin", descriptor),
        ("demo.v1.rs", code.into_bytes()),
    ];
    let bless = std::env::var_os("TONIC_MCP_BLESS").is_some() && std::env::var_os("CI").is_none();
    for (name, bytes) in expected {
        let path = gen_dir.join(name);
        if bless {
            fs::write(&path, &bytes)?;
            continue;
        }
        let current = fs::read(&path).unwrap_or_default();
        assert!(
            current == bytes,
            "gen/{name} is stale; re-bless with TONIC_MCP_BLESS=1 cargo test -p test-kit --test generated_code_is_fresh"
        );
    }
    Ok(())
}
