//! Golden files: `golden/` holds what the plugin generates for `testdata/` when real protoc runs
//! it, and a test fails on any drift. Re-bless with `UPDATE_GOLDEN=1 cargo test -p protoc-gen-rust-mcp --test golden`
//! (refused under `CI=true`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// The default run: every testdata package with `tools_json`.
const DEFAULT_PARAMETER: &str = "tools_json,flat_output_dir";

/// Variants: a folder under `golden/variants/`, the files and the options.
const VARIANTS: &[(&str, &[&str], &str)] = &[
    (
        "json_names_any_of",
        &["oneofs.proto", "scalars.proto"],
        "flat_output_dir,tools_json,json_names,unions=any_of,schema_keyword",
    ),
    (
        "package_names_prefix",
        &["crosspkg/service.proto", "nopackage.proto"],
        "flat_output_dir,tools_json,rust=false,tool_names=package,prefix=acme",
    ),
    (
        "no_descriptions_emit_defaults",
        &["comments.proto"],
        "flat_output_dir,tools_json,rust=false,descriptions=false,emit_defaults",
    ),
    (
        "selection",
        &["tool_options.proto", "streaming.proto"],
        "flat_output_dir,tools_json,rust=false,exclude=*.Upload*,include=testdata.streaming.*,include=testdata.tool_options.*",
    ),
    (
        "opt_in",
        &["tool_options.proto"],
        "flat_output_dir,tools_json,rust=false,opt_in",
    ),
    (
        "client_adapter_runtime_path",
        &["streaming.proto"],
        "flat_output_dir,adapters=client,runtime_crate=crate::mcp",
    ),
];

fn check(dir: &Path, generated: Vec<(String, String)>) {
    let bless = std::env::var_os("UPDATE_GOLDEN").is_some();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !(bless && ci),
        "refusing to re-bless golden files under CI=true"
    );
    let generated: BTreeMap<String, String> = generated.into_iter().collect();
    if bless {
        if dir.exists() {
            for entry in std::fs::read_dir(dir).expect("golden dir") {
                let path = entry.expect("entry").path();
                if path.is_file() {
                    std::fs::remove_file(path).expect("remove stale golden");
                }
            }
        }
        std::fs::create_dir_all(dir).expect("golden dir");
        for (name, content) in &generated {
            std::fs::write(dir.join(name), content).expect("write golden");
        }
        return;
    }
    let mut on_disk = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            on_disk.insert(
                name,
                std::fs::read_to_string(&path).expect("golden readable"),
            );
        }
    }
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&generated),
        names(&on_disk),
        "generated files differ from {}; re-bless with UPDATE_GOLDEN=1",
        dir.display()
    );
    for (name, content) in &generated {
        if content != &on_disk[name] {
            let first = content
                .lines()
                .zip(on_disk[name].lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{}/{name} drifted (first difference at line {}); review the change and re-bless \
                 with UPDATE_GOLDEN=1 cargo test -p protoc-gen-rust-mcp --test golden",
                dir.display(),
                first + 1
            );
        }
    }
}

#[test]
fn default_output_matches_golden() {
    let files = common::testdata_files();
    let generated = common::protoc_generate(&files, DEFAULT_PARAMETER);
    check(&common::repo().join("golden"), generated);
}

#[test]
fn variants_match_golden() {
    for (name, files, parameter) in VARIANTS {
        let files: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
        let generated = common::protoc_generate(&files, parameter);
        check(
            &common::repo().join("golden/variants").join(name),
            generated,
        );
    }
}

#[test]
fn output_is_deterministic() {
    let files = common::testdata_files();
    let request = common::request(&files, DEFAULT_PARAMETER);
    let first = protoc_gen_rust_mcp::execute(&request).expect("decodes");
    assert_eq!(first.error, None);
    for _ in 0..9 {
        let again = protoc_gen_rust_mcp::execute(&request).expect("decodes");
        assert_eq!(again, first, "output changed between identical runs");
    }
}
