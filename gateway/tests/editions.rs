//! Editions descriptor sets get a clear refusal naming the file and the part of the stack that
//! cannot read it, never a panic (prost-reflect 0.16 panics while it describes its own refusal).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const GATEWAY: &str = env!("CARGO_BIN_EXE_grpc-mcp-gateway");

/// `protoc --include_imports --descriptor_set_out` of `file` under `include`.
fn descriptor_set(include: &Path, file: &str, out: &Path) -> PathBuf {
    let set = out.join(format!("{}.binpb", file.replace('/', "_")));
    let status = Command::new(protoc_bin_vendored::protoc_bin_path().expect("protoc"))
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", set.display()))
        .arg(format!("-I{}", include.display()))
        .arg(format!(
            "-I{}",
            protoc_bin_vendored::include_path()
                .expect("include")
                .display()
        ))
        .arg(file)
        .status()
        .expect("run protoc");
    assert!(status.success(), "protoc failed on {file}");
    set
}

#[test]
fn editions_descriptor_sets_are_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("gateway-editions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let protoc_include = protoc_bin_vendored::include_path().expect("include");
    // (include path, file, the editions file the refusal names: the first in the set).
    let cases = [
        // A service of ours in edition 2023.
        (
            testdata.as_path(),
            "errors/editions.proto",
            "errors/editions.proto",
        ),
        // protoc's own editions files (edition 2024), each importing another.
        (
            protoc_include.as_path(),
            "google/protobuf/cpp_options.proto",
            "google/protobuf/cpp_file_options.proto",
        ),
        (
            protoc_include.as_path(),
            "google/protobuf/json_options.proto",
            "google/protobuf/json_enumvalue_options.proto",
        ),
    ];
    for (include, file, named) in cases {
        let set = descriptor_set(include, file, &dir);
        let output = Command::new(GATEWAY)
            .args(["--target", "http://127.0.0.1:1", "--descriptor-set"])
            .arg(&set)
            .stdin(Stdio::null())
            .output()
            .expect("run the gateway");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{file}: the gateway started");
        assert!(!stderr.contains("panicked"), "{file}: {stderr}");
        for needle in [
            &format!("{named}: editions files"),
            "prost-reflect",
            "proto3",
        ] {
            assert!(
                stderr.contains(needle),
                "{file}: {needle:?} not in {stderr}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
