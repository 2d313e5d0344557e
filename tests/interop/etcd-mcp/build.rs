//! etcd's own protos, gogoproto options and all, through the one-call builder: prost types,
//! tonic clients and the MCP tools of every etcd service. The protos are the ones the interop
//! suite's gateway reads as a descriptor set (`testdata/third_party/etcd/`, see its ORIGIN.md).

const ROOT: &str = "../../../testdata/third_party/etcd";

fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
    let protos = [
        "etcd/etcdserver/etcdserverpb/rpc.proto",
        "etcd/etcdserver/api/v3lock/v3lockpb/v3lock.proto",
        "etcd/etcdserver/api/v3election/v3electionpb/v3election.proto",
    ]
    .map(|proto| format!("{ROOT}/{proto}"));
    // Only clients: the tools forward to a running etcd.
    protoc_gen_rust_mcp::Builder::new()
        .build_server(false)
        .compile_protos(&protos, &[ROOT])
}
