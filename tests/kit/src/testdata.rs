//! Descriptor sets compiled by the vendored `protoc`: the protos of `testdata/` (which the e2e
//! crate's build script also compiles with prost and tonic), protos written by a test, and the
//! set a run names in `TRANSCODE_DESCRIPTORS` (e.g. every googleapis service file).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The workspace's root.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("test-kit sits in the workspace's tests/")
}

/// The `.proto` files below `root` (`testdata/`), sorted, but for the folders of protos that
/// are not test services of their own: `errors/` (protos the plugin must refuse), and the
/// imported `google/`, `buf/` and `third_party/` trees.
///
/// # Errors
///
/// A folder that cannot be read.
pub fn protos(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !matches!(name, "errors" | "google" | "buf" | "third_party") || dir != root {
                    stack.push(path);
                }
            } else if name.ends_with(".proto") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The binary `FileDescriptorSet` of every `testdata/` proto and its imports, compiled once
/// per process with `testdata/` and `proto/` as include paths.
pub fn descriptor_set() -> &'static [u8] {
    static SET: OnceLock<Vec<u8>> = OnceLock::new();
    SET.get_or_init(|| {
        let root = workspace();
        let files = protos(&root.join("testdata")).expect("read testdata/");
        compile(&[root.join("testdata"), root.join("proto")], &files)
    })
}

/// A path of its own in the temporary folder, for one run of protoc.
fn scratch(what: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("test-kit-{what}-{}-{run}", std::process::id()))
}

/// The binary `FileDescriptorSet` of `sources` (each a path under one include folder and the
/// proto's text) and their imports: the sources are written to a folder of their own, which
/// is removed afterwards.
pub fn compile_sources(sources: &[(&str, &str)]) -> Vec<u8> {
    let dir = scratch("protos");
    let files: Vec<PathBuf> = sources
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("temp dir");
            std::fs::write(&path, text).expect("write a proto");
            path
        })
        .collect();
    let set = compile(std::slice::from_ref(&dir), &files);
    let _ = std::fs::remove_dir_all(&dir);
    set
}

/// The binary `FileDescriptorSet` of `files` (paths, or names under one of `includes`) and
/// their imports, with source info, as protoc writes it for a plugin: compiled by the vendored
/// `protoc` with `includes` and its own well-known types; panics with protoc's words when it
/// fails.
pub fn compile(includes: &[PathBuf], files: &[PathBuf]) -> Vec<u8> {
    let out = scratch("set.binpb");
    let well_known = protoc_bin_vendored::include_path().expect("protoc's includes");
    let output =
        std::process::Command::new(protoc_bin_vendored::protoc_bin_path().expect("protoc"))
            .args(
                includes
                    .iter()
                    .chain([&well_known])
                    .map(|dir| format!("-I{}", dir.display())),
            )
            .arg("--include_imports")
            .arg("--include_source_info")
            .arg(format!("--descriptor_set_out={}", out.display()))
            .args(files)
            .output()
            .expect("run protoc");
    assert!(
        output.status.success(),
        "protoc failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let set = std::fs::read(&out).expect("read the set");
    let _ = std::fs::remove_file(&out);
    set
}

/// The pool of the binary `FileDescriptorSet` at `TRANSCODE_DESCRIPTORS`, for the ignored
/// differential runs over a large corpus; panics, naming what is missing, when it cannot be
/// read or decoded.
#[cfg(feature = "transcode")]
pub fn pool_from_env() -> prost_reflect::DescriptorPool {
    let path = std::env::var("TRANSCODE_DESCRIPTORS").expect("TRANSCODE_DESCRIPTORS");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    prost_reflect::DescriptorPool::decode(bytes.as_slice())
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}
