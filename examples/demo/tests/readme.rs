//! README shows the demo's build script as it is.

#[test]
fn readme_shows_the_demos_build_script_as_it_is() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    let build = std::fs::read_to_string(root.join("build.rs")).expect("build.rs");
    let block = format!("```rust\n// examples/demo/build.rs\n{build}```\n");
    assert!(
        readme.contains(&block),
        "README.md does not show examples/demo/build.rs as it is; expected:\n{block}"
    );
}
