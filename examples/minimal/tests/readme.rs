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

/// The first line of a book block that shows lines of `src/main.rs`: the lines after it are
/// lines of the file, in order, with one indentation removed from all of them.
const EXCERPT: &str = "```rust,ignore\n// examples/minimal/src/main.rs (excerpt)\n";

#[test]
fn the_book_shows_excerpts_of_main_rs_as_they_are() {
    let main: Vec<String> = read("src/main.rs").lines().map(str::to_owned).collect();
    let mut found = Vec::new();
    for chapter in ["serving.md", "gateway.md"] {
        let book = read(&format!("../../docs/{chapter}"));
        for (at, _) in book.match_indices(EXCERPT) {
            let rest = &book[at + EXCERPT.len()..];
            let block: Vec<&str> = rest[..rest.find("\n```\n").expect("the block ends")]
                .lines()
                .collect();
            let shown = main.windows(block.len()).any(|lines| {
                let Some(indent) = lines[0].len().checked_sub(block[0].len()) else {
                    return false;
                };
                lines.iter().zip(&block).all(|(line, shown)| {
                    (line.is_empty() && shown.is_empty())
                        || (line.len() == indent + shown.len()
                            && line[..indent].bytes().all(|b| b == b' ')
                            && line.ends_with(shown))
                })
            });
            assert!(
                shown,
                "docs/{chapter} shows lines that are not in examples/minimal/src/main.rs \
                 as they are:\n{}",
                block.join("\n")
            );
            found.push(chapter);
        }
    }
    // The logs (serving) and reflection (gateway) excerpts.
    assert_eq!(found, ["serving.md", "gateway.md"]);
}
