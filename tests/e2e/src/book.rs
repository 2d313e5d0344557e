//! The Rust blocks of the manual (`docs/`, an mdBook), compiled and run by `cargo test -p e2e
//! --doc` with this crate's dependencies: the `testdata/` services behind their golden MCP
//! modules (`e2e::testdata::…`), `tonic-mcp`, `tonic-mcp-tasks` and tokio. Each chapter is the
//! documentation of one item that exists only for doctests. A block that cannot compile on its own (a build
//! script, a file shown with mdBook's `{{#include}}`) is marked `ignore`, and
//! `scripts/readme.sh` names the test that compiles it instead.

macro_rules! chapters {
    ($($name:ident = $file:literal;)*) => {
        $(
            #[doc = include_str!(concat!("../../../docs/", $file))]
            pub struct $name;
        )*
    };
}

chapters! {
    Introduction = "introduction.md";
    GettingStarted = "getting-started.md";
    GeneratingCode = "generating-code.md";
    Serving = "serving.md";
    Gateway = "gateway.md";
    Operating = "operating.md";
    Authorization = "authorization.md";
    Tasks = "tasks.md";
    ToolSearch = "tool-search.md";
    ScalingOut = "scaling-out.md";
    Reference = "reference.md";
    Design = "design.md";
    Conformance = "conformance.md";
}
