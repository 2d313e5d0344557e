//! Generates the prost types, the tonic client and server, and the MCP tools of the demo proto
//! in one call of the `protoc-gen-rust-mcp` builder. `tonic::include_proto!("demo.v1")` then
//! brings in all three.

fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
    protoc_gen_rust_mcp::Builder::new().compile_protos(
        &["proto/demo/v1/tasks.proto"],
        // `google/api/field_behavior.proto` comes from the repository's test protos,
        // `rust_mcp/options.proto` from the repository's `proto/`; the well-known types come
        // with the vendored protoc.
        &["proto", "../../testdata", "../../proto"],
    )
}
