//! The manual shows this example whole (`docs/getting-started.md` includes every file of it with
//! mdBook's `{{#include}}`), and README shows its `build.rs` as it is here.

/// (file, code block language in the book, comment leader of the block's first line naming
/// the file)
const FILES: [(&str, &str, &str); 4] = [
    ("Cargo.toml", "toml", "#"),
    ("proto/greeter/v1/greeter.proto", "proto", "//"),
    ("build.rs", "rust,ignore", "//"),
    ("src/main.rs", "rust,ignore", "//"),
];

fn read(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_book_includes_every_file_of_the_example() {
    let book = read("../../docs/getting-started.md");
    for (file, language, comment) in FILES {
        read(file);
        let block = format!(
            "```{language}\n{comment} examples/minimal/{file}\n\
             {{{{#include ../examples/minimal/{file}}}}}\n```\n"
        );
        assert!(
            book.contains(&block),
            "docs/getting-started.md does not include examples/minimal/{file}; expected:\n{block}"
        );
    }
}

#[test]
fn readme_shows_the_build_script_as_it_is() {
    let readme = read("../../README.md");
    let block = format!(
        "```rust\n// examples/minimal/build.rs\n{}```\n",
        read("build.rs")
    );
    assert!(
        readme.contains(&block),
        "README.md does not show examples/minimal/build.rs as it is; expected:\n{block}"
    );
}
