//! The smallest complete server: a tonic service, served as MCP tools over stdio.
//! `minimal --grpc ADDR` also serves it over gRPC on ADDR, with gRPC reflection.

use std::net::SocketAddr;

use tonic::transport::{Server, server::TcpIncoming};
use tonic::{Request, Response, Status};
use tracing_subscriber::EnvFilter;

pub mod greeter {
    pub mod v1 {
        // prost's types, tonic's client and server, and the generated `greeter_mcp` module.
        tonic::include_proto!("greeter.v1");
    }
}

use greeter::v1::greeter_server::{Greeter, GreeterServer};
use greeter::v1::{SayHelloRequest, SayHelloResponse, greeter_mcp};

#[derive(Debug, Default)]
struct Hello;

#[tonic::async_trait]
impl Greeter for Hello {
    async fn say_hello(
        &self,
        request: Request<SayHelloRequest>,
    ) -> Result<Response<SayHelloResponse>, Status> {
        let request = request.into_inner();
        if request.name.is_empty() {
            return Err(Status::invalid_argument("name is empty: say who to greet"));
        }
        let greeting = format!("Hello, {}!", request.name);
        let message = vec![greeting; request.times.max(1) as usize].join(" ");
        Ok(Response::new(SayHelloResponse { message }))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: stdout carries MCP. RUST_LOG sets what is logged; when it is unset,
    // `info`, but only warnings from rmcp (which logs every session at info).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn")),
        )
        .init();

    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {}
        [flag, addr] if flag == "--grpc" => serve_grpc(addr.parse()?)?,
        _ => return Err("usage: minimal [--grpc ADDR]".into()),
    }

    // Every RPC of the service is a tool; calls go to `Hello` in process, through tonic.
    let tools = greeter_mcp::from_service(Hello)?;
    let server = tonic_mcp::McpServer::builder("greeter", env!("CARGO_PKG_VERSION"))
        .tool_set(tools)?
        .build();
    // MCP over stdin/stdout until the client disconnects.
    server.serve_stdio().await?;
    Ok(())
}

/// Serves `Hello` over gRPC on `addr` (port 0: a free one), in the background, with gRPC
/// reflection for grpcurl and `grpc-mcp-gateway --target`.
fn serve_grpc(addr: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    // The descriptor set `Builder::compile_protos` wrote: greeter.proto and every file it
    // imports (`rust_mcp/options.proto`, the well-known types), with its comments.
    const DESCRIPTORS: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/mcp_file_descriptor_set.bin"));
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(DESCRIPTORS)
        .build_v1()?;
    let incoming = TcpIncoming::bind(addr)?;
    tracing::info!(addr = %incoming.local_addr()?, "serving gRPC, with reflection");
    let grpc = Server::builder()
        .add_service(GreeterServer::new(Hello))
        .add_service(reflection)
        .serve_with_incoming(incoming);
    tokio::spawn(async {
        if let Err(error) = grpc.await {
            tracing::error!(%error, "the gRPC server stopped");
        }
    });
    Ok(())
}
