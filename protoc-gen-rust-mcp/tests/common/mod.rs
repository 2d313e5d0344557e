//! Shared test helpers: run the vendored protoc over `testdata/` and build the exact
//! `CodeGeneratorRequest` protoc would send a plugin.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message;
use prost_types::compiler::CodeGeneratorResponse;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_path_buf()
}

/// Every testdata proto that must generate, relative to `testdata/`, sorted.
pub fn testdata_files() -> Vec<String> {
    let root = repo().join("testdata");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("testdata is readable") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(&root)
                .expect("under testdata")
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                // Dependencies (google/, buf/), failing inputs (errors/) and third-party
                // protos with their own include roots (third_party/) are not generated.
                if !matches!(rel.as_str(), "errors" | "google" | "buf" | "third_party") {
                    stack.push(path);
                }
            } else if rel.ends_with(".proto") {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[derive(Clone, PartialEq, Message)]
struct RawSet {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file: Vec<Vec<u8>>,
}

/// The include directories of the test protos: `testdata/` and the options proto.
pub const TESTDATA_INCLUDES: &[&str] = &["testdata", "proto"];

/// The include directory of the package-naming protos (keywords, capitals, digits, no package).
pub const NAMING_INCLUDES: &[&str] = &["protoc-gen-rust-mcp/tests/naming"];

/// Every package-naming proto, relative to [`NAMING_INCLUDES`].
pub const NAMING_FILES: &[&str] = &[
    "camel/camel.proto",
    "camel/snake.proto",
    "digits/digits.proto",
    "edge/type/foo_bar.proto",
    "match/v2/match.proto",
    "raw/raw.proto",
    "rootless.proto",
];

/// [`NAMING_FILES`] as owned strings.
pub fn naming_files() -> Vec<String> {
    NAMING_FILES.iter().map(|f| (*f).to_owned()).collect()
}

/// Runs protoc over `files` (relative to `testdata/`) and returns the encoded descriptor set
/// with imports and source info, in protoc's dependency order.
pub fn descriptor_set(files: &[String]) -> Vec<u8> {
    descriptor_set_in(TESTDATA_INCLUDES, files)
}

/// As [`descriptor_set`], with `includes` (relative to the repository root).
pub fn descriptor_set_in(includes: &[&str], files: &[String]) -> Vec<u8> {
    let root = repo();
    let includes: Vec<PathBuf> = includes.iter().map(|include| root.join(include)).collect();
    let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    test_kit::testdata::compile(&includes, &files)
}

/// The request protoc would send for `files` with `parameter`.
pub fn request(files: &[String], parameter: &str) -> Vec<u8> {
    request_in(TESTDATA_INCLUDES, files, parameter)
}

/// As [`request`], with `includes` (relative to the repository root).
pub fn request_in(includes: &[&str], files: &[String], parameter: &str) -> Vec<u8> {
    let set = RawSet::decode(descriptor_set_in(includes, files).as_slice())
        .expect("descriptor set decodes");
    // The plugin's own request type keeps files as raw bytes, so extension options survive.
    protoc_gen_rust_mcp::model::RawRequest {
        file_to_generate: files.to_vec(),
        parameter: (!parameter.is_empty()).then(|| parameter.to_owned()),
        proto_file: set.file,
    }
    .encode_to_vec()
}

/// Generates for `files` and returns the response.
pub fn generate(files: &[String], parameter: &str) -> CodeGeneratorResponse {
    protoc_gen_rust_mcp::execute(&request(files, parameter)).expect("request decodes")
}

/// Generates and expects success; returns (file name, content) pairs.
pub fn generate_ok(files: &[String], parameter: &str) -> Vec<(String, String)> {
    let response = generate(files, parameter);
    assert_eq!(response.error, None, "generation failed for {files:?}");
    response
        .file
        .into_iter()
        .map(|f| (f.name().to_owned(), f.content().to_owned()))
        .collect()
}

/// Generates and expects an error; returns its message.
pub fn generate_err(files: &[String], parameter: &str) -> String {
    let response = generate(files, parameter);
    response
        .error
        .unwrap_or_else(|| panic!("generation of {files:?} with `{parameter}` should fail"))
}

/// A unique temporary path.
pub fn tempfile_path(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("rust-mcp-test-{}-{n}-{name}", std::process::id()))
}

/// Every tool of a `tools_json` document.
pub fn tools_of(json_text: &str) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_str(json_text).expect("tools_json is JSON");
    doc["tools"].as_array().expect("tools array").clone()
}

/// Runs real protoc with the built plugin binary and returns every written file (path relative
/// to the output directory, content), sorted. Panics with protoc's stderr on failure.
pub fn protoc_generate(files: &[String], parameter: &str) -> Vec<(String, String)> {
    protoc_generate_in(TESTDATA_INCLUDES, files, parameter)
}

/// As [`protoc_generate`], with `includes` (relative to the repository root).
pub fn protoc_generate_in(
    includes: &[&str],
    files: &[String],
    parameter: &str,
) -> Vec<(String, String)> {
    let out = tempfile_path("protoc-out");
    let output = run_protoc_in(includes, &out, parameter, files);
    assert!(
        output.status.success(),
        "protoc failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut found = Vec::new();
    let mut stack = vec![out.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("out dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(&out)
                    .expect("under out")
                    .to_string_lossy()
                    .into_owned();
                found.push((rel, std::fs::read_to_string(&path).expect("utf-8 output")));
            }
        }
    }
    std::fs::remove_dir_all(&out).ok();
    found.sort();
    found
}

/// Runs real protoc with the built plugin binary and `includes` into a fresh directory, removed
/// afterwards: whether protoc succeeded, and its stderr.
pub fn protoc_stderr_in(includes: &[&str], parameter: &str, files: &[&str]) -> (bool, String) {
    let out = tempfile_path("protoc-stderr");
    let files: Vec<String> = files.iter().map(|&file| file.to_owned()).collect();
    let output = run_protoc_in(includes, &out, parameter, &files);
    std::fs::remove_dir_all(&out).ok();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// [`protoc_stderr_in`] over `testdata/`.
pub fn protoc_stderr(parameter: &str, files: &[&str]) -> (bool, String) {
    protoc_stderr_in(TESTDATA_INCLUDES, parameter, files)
}

/// Runs real protoc with the built plugin binary into `out`.
pub fn run_protoc(out: &Path, parameter: &str, files: &[String]) -> std::process::Output {
    run_protoc_in(TESTDATA_INCLUDES, out, parameter, files)
}

/// As [`run_protoc`], with `includes` (relative to the repository root).
pub fn run_protoc_in(
    includes: &[&str],
    out: &Path,
    parameter: &str,
    files: &[String],
) -> std::process::Output {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc");
    let include = protoc_bin_vendored::include_path().expect("vendored includes");
    std::fs::create_dir_all(out).expect("out dir");
    Command::new(protoc)
        .current_dir(repo())
        .arg(format!(
            "--plugin=protoc-gen-rust-mcp={}",
            env!("CARGO_BIN_EXE_protoc-gen-rust-mcp")
        ))
        .arg(format!("--rust-mcp_out={}", out.display()))
        .arg(format!("--rust-mcp_opt={parameter}"))
        .args(includes.iter().map(|i| format!("-I{i}")))
        .arg(format!("-I{}", include.display()))
        .args(files)
        .output()
        .expect("protoc runs")
}
