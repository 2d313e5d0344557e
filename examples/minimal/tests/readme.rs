//! README shows this example whole: every file of it, as it is here.

#[test]
fn readme_shows_every_file_of_the_example_as_it_is() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../../README.md")).expect("README.md");
    // (file, code block language, comment leader of the block's first line naming the file)
    for (file, language, comment) in [
        ("Cargo.toml", "toml", "#"),
        ("proto/greeter/v1/greeter.proto", "proto", "//"),
        ("build.rs", "rust", "//"),
        ("src/main.rs", "rust", "//"),
    ] {
        let text = std::fs::read_to_string(root.join(file)).expect("example file");
        let block = format!("```{language}\n{comment} examples/minimal/{file}\n{text}```\n");
        assert!(
            readme.contains(&block),
            "README.md does not show examples/minimal/{file} as it is; expected:\n{block}"
        );
    }
}
