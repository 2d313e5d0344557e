//! The manual shows the demo's build script as it is: `docs/generating-code.md` includes the
//! file with mdBook's `{{#include}}`.

#[test]
fn the_book_includes_the_demos_build_script() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let book = std::fs::read_to_string(root.join("../../docs/generating-code.md"))
        .expect("docs/generating-code.md");
    assert!(root.join("build.rs").is_file());
    let block =
        "```rust,ignore\n// examples/demo/build.rs\n{{#include ../examples/demo/build.rs}}\n```\n";
    assert!(
        book.contains(block),
        "docs/generating-code.md does not include examples/demo/build.rs; expected:\n{block}"
    );
}
