//! Generates the prost types, the tonic client and server, and the MCP tools of the demo proto
//! and of `google.longrunning.Operations` in one call of the `protoc-gen-rust-mcp` builder.
//! `tonic::include_proto!("demo.v1")` then brings in all three.

fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
    protoc_gen_rust_mcp::Builder::new().compile_protos(
        // The Operations service too: its GetOperation tool redeems an archive operation that
        // outlived its call.
        &[
            "proto/demo/v1/tasks.proto",
            "../../testdata/google/longrunning/operations.proto",
        ],
        // `google/api/field_behavior.proto` and `google/longrunning/operations.proto` come
        // from the repository's test protos (real projects use googleapis),
        // `rust_mcp/options.proto` from the repository's `proto/`; the well-known types come
        // with the vendored protoc.
        &["proto", "../../testdata", "../../proto"],
    )
}
