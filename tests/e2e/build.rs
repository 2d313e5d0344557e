//! Compiles every `testdata/` proto with prost and tonic, and writes a module tree that includes,
//! for each package, the prost/tonic output and the checked-in golden MCP module. The golden code
//! therefore compiles with every build of this crate and cannot go stale unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let repo = manifest
        .ancestors()
        .nth(2)
        .ok_or("e2e sits in the workspace's tests/")?
        .to_path_buf();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let testdata = repo.join("testdata");
    let protos = test_kit::testdata::protos(&testdata)?;
    for dir in ["testdata", "proto", "golden"] {
        println!("cargo:rerun-if-changed={}", repo.join(dir).display());
    }

    let set_path = out.join("testdata.bin");
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    config.file_descriptor_set_path(&set_path);
    let includes = [testdata.clone(), repo.join("proto")];
    tonic_prost_build::configure()
        .out_dir(&out)
        .compile_with_config(config, &protos, &includes)?;

    // One module per package, nested like the package name.
    let set = prost_types::FileDescriptorSet::decode(std::fs::read(&set_path)?.as_slice())?;
    let mut tree = Tree::default();
    for file in &set.file {
        let package = file.package();
        if package.starts_with("google.protobuf") {
            continue; // prost-types
        }
        let stem = if package.is_empty() { "_" } else { package };
        let mut body = format!("include!(concat!(env!(\"OUT_DIR\"), \"/{stem}.rs\"));\n");
        let golden = repo.join("golden").join(format!("{stem}.pb.mcp.rs"));
        if golden.exists() {
            body.push_str(&format!("include!(\"{}\");\n", include_path(&golden)));
        }
        let mut node = &mut tree;
        for part in package.split('.').filter(|p| !p.is_empty()) {
            node = node.children.entry(part.to_owned()).or_default();
        }
        node.body = Some(body);
    }
    std::fs::write(out.join("testdata_tree.rs"), tree.render())?;
    Ok(())
}

#[derive(Default)]
struct Tree {
    body: Option<String>,
    children: BTreeMap<String, Tree>,
}

impl Tree {
    fn render(&self) -> String {
        let mut text = self.body.clone().unwrap_or_default();
        for (name, child) in &self.children {
            let ident = if name == "type" {
                format!("r#{name}")
            } else {
                name.clone()
            };
            text.push_str(&format!("pub mod {ident} {{\n{}}}\n", child.render()));
        }
        text
    }
}

/// `include!` paths are relative to the including file, which is in OUT_DIR: use the file's
/// absolute path instead (`file` is made from the manifest directory).
fn include_path(file: &Path) -> String {
    file.display().to_string().replace('\\', "/")
}
