//! etcd's gRPC API served as MCP tools over stdio through code generated from etcd's own protos
//! (see `build.rs`): the generated-code half of the interop suite, whose other half is the
//! gateway reading the same protos as a descriptor set. Both must answer the same calls alike.
//!
//! ```text
//! etcd-mcp --target http://127.0.0.1:2379
//! ```

use std::time::Duration;

use tonic::transport::Endpoint;
use tonic_mcp::{McpServer, ToolSet};

use etcd::{etcdserverpb, v3electionpb, v3lockpb};

/// etcd's packages as prost and tonic compile them, each with the MCP module generated beside it
/// (`build.rs`). etcd leaves many of its messages and fields without a comment.
#[allow(missing_docs)]
pub mod etcd {
    pub mod mvccpb {
        tonic::include_proto!("mvccpb");
    }
    pub mod authpb {
        tonic::include_proto!("authpb");
    }
    pub mod etcdserverpb {
        // prost copies etcd's comments as written, lists and all.
        #![allow(clippy::doc_lazy_continuation)]
        tonic::include_proto!("etcdserverpb");
    }
    pub mod v3lockpb {
        tonic::include_proto!("v3lockpb");
    }
    pub mod v3electionpb {
        tonic::include_proto!("v3electionpb");
    }
}

const USAGE: &str = "usage: etcd-mcp --target http://HOST:PORT";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = match (args.next().as_deref(), args.next(), args.next()) {
        (Some("--target"), Some(target), None) => target,
        _ => return Err(USAGE.into()),
    };
    // Connected on first use, as the gateway does: a server that is down at start is an
    // `isError` result of the calls, not a failed start.
    let channel = Endpoint::from_shared(target)?
        .connect_timeout(Duration::from_secs(10))
        .connect_lazy();

    use etcdserverpb::{auth_mcp, cluster_mcp, kv_mcp, lease_mcp, maintenance_mcp, watch_mcp};
    let sets: [ToolSet; 8] = [
        kv_mcp::from_channel(channel.clone())?,
        watch_mcp::from_channel(channel.clone())?,
        lease_mcp::from_channel(channel.clone())?,
        cluster_mcp::from_channel(channel.clone())?,
        maintenance_mcp::from_channel(channel.clone())?,
        auth_mcp::from_channel(channel.clone())?,
        v3lockpb::lock_mcp::from_channel(channel.clone())?,
        v3electionpb::election_mcp::from_channel(channel)?,
    ];
    let mut server = McpServer::builder("etcd-mcp", env!("CARGO_PKG_VERSION"));
    for set in sets {
        server = server.tool_set(set)?;
    }
    // With tasks, as the gateway runs them: both list and answer the same.
    server
        .task_router(tonic_mcp_tasks::Tasks::new())
        .build()
        .serve_stdio()
        .await?;
    Ok(())
}
