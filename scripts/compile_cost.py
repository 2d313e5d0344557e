"""What scripts/bench-compile.sh and scripts/bench-compile-corpus.py share: the manifest of the
stand-alone crates they build to measure what generated code costs to compile."""


def cargo_toml(name, runtime=None):
    """The Cargo.toml of the crate `name`: prost and tonic as generated code needs them, and the
    runtime crate at the path `runtime` when the crate holds MCP modules. Each crate is a
    workspace of its own, so that it builds apart from this repository's."""
    mcp_dep = f'tonic-mcp = {{ path = "{runtime}" }}\n' if runtime else ""
    return f"""[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
prost = {{ version = "0.14", default-features = false, features = ["std", "derive"] }}
prost-types = {{ version = "0.14", default-features = false, features = ["std"] }}
tonic = {{ version = "0.14", default-features = false, features = ["codegen", "transport", "router"] }}
tonic-prost = {{ version = "0.14", default-features = false }}
{mcp_dep}"""
