// Runs protoc (the bundled one), prost, tonic and protoc-gen-rust-mcp in one call;
// `rust_mcp/options.proto` is found without a copy.
fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
    protoc_gen_rust_mcp::Builder::new()
        .compile_protos(&["proto/greeter/v1/greeter.proto"], &["proto"])
}
