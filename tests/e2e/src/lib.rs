//! The `testdata/` protos compiled by prost and tonic, with the checked-in golden MCP modules
//! included beside them, plus echo implementations of the services the end-to-end tests serve.

#![allow(
    missing_docs,
    clippy::all,
    unreachable_pub,
    missing_debug_implementations
)]

include!(concat!(env!("OUT_DIR"), "/testdata_tree.rs"));

#[cfg(doctest)]
pub mod book;
pub mod services;

/// The `FileDescriptorSet` of every `testdata/` proto and its imports, with source info, as
/// protoc wrote it for prost: what the plugin saw when it generated `golden/`. The backend
/// also serves it through gRPC reflection.
pub const TESTDATA_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/testdata.bin"));

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Server};
use tonic_mcp::{McpServer, ToolSet};

/// The loopback tonic server the end-to-end tests and the `e2e-server` binary call.
#[derive(Debug, Clone)]
pub struct Backend {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Calls started and cancelled.
    pub observed: Arc<services::Observed>,
    /// Metadata of the last [`METADATA_KEPT`] inventory calls, in order.
    pub metadata: Arc<Mutex<Vec<MetadataMap>>>,
    stop: Arc<tokio::sync::Notify>,
}

impl Backend {
    /// Stops the server: it accepts no more connections and closes the ones it has once their
    /// calls end, as a killed server would for its clients.
    pub fn stop(&self) {
        self.stop.notify_one();
    }
}

/// Every service [`start_backend`] runs, as its reflection lists them.
pub const SERVICES: &[&str] = &[
    "testdata.scalars.ScalarService",
    "testdata.wkt.WellKnownService",
    "testdata.oneofs.SearchService",
    "testdata.maps.MapService",
    "testdata.long_fields.LongFieldService",
    "testdata.streaming.InventoryService",
    "testdata.tool_options.CatalogService",
];

/// How many inventory calls' metadata [`Backend::metadata`] keeps.
pub const METADATA_KEPT: usize = 256;

/// Starts the testdata services on `127.0.0.1:0`.
pub async fn start_backend() -> std::io::Result<Backend> {
    start_backend_at(SocketAddr::from(([127, 0, 0, 1], 0))).await
}

/// Starts the testdata services on `addr`.
pub async fn start_backend_at(addr: SocketAddr) -> std::io::Result<Backend> {
    start_backend_reflecting(addr, SERVICES).await
}

/// Starts the testdata services on `addr`, with a reflection service that lists only
/// `reflected` (all of them run): a server whose descriptors differ from one start to another.
pub async fn start_backend_reflecting(
    addr: SocketAddr,
    reflected: &[&str],
) -> std::io::Result<Backend> {
    use testdata::*;
    // tonic sets TCP_NODELAY only on connections it accepts itself; without it small
    // responses wait for the peer's delayed ACK.
    let incoming = tonic::transport::server::TcpIncoming::bind(addr)?.with_nodelay(Some(true));
    let addr = incoming.local_addr()?;
    let observed = Arc::new(services::Observed::default());
    let metadata = Arc::new(Mutex::new(Vec::new()));
    let recorded = metadata.clone();
    let inventory = streaming::inventory_service_server::InventoryServiceServer::with_interceptor(
        services::Inventory {
            observed: observed.clone(),
        },
        move |request: tonic::Request<()>| {
            if let Ok(mut seen) = recorded.lock() {
                // The last calls only: a long load test must not grow the backend.
                if seen.len() >= METADATA_KEPT {
                    seen.remove(0);
                }
                seen.push(request.metadata().clone());
            }
            Ok(request)
        },
    );
    // Reflection lists the services this server runs, not every service of the file set.
    let reflection = reflected.iter().fold(
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(TESTDATA_DESCRIPTOR_SET),
        |builder, service| builder.with_service_name(*service),
    );
    let router = Server::builder()
        .add_routes(echo_routes(&observed))
        .add_service(
            long_fields::long_field_service_server::LongFieldServiceServer::new(
                services::LongFields,
            ),
        )
        .add_service(inventory)
        .add_service(
            tool_options::catalog_service_server::CatalogServiceServer::new(services::Catalog),
        )
        .add_service(reflection.build_v1().map_err(std::io::Error::other)?);
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopped = stop.clone();
    tokio::spawn(
        router.serve_with_incoming_shutdown(incoming, async move { stopped.notified().await }),
    );
    Ok(Backend {
        addr,
        observed,
        metadata,
        stop,
    })
}

/// The echo services every test backend runs: scalars, well-known types (reporting cancelled
/// sleeps to `observed`), oneofs and maps.
pub fn echo_routes(observed: &Arc<services::Observed>) -> tonic::service::Routes {
    use testdata::*;
    tonic::service::Routes::new(scalars::scalar_service_server::ScalarServiceServer::new(
        services::Scalars,
    ))
    .add_service(wkt::well_known_service_server::WellKnownServiceServer::new(
        services::WellKnown {
            observed: observed.clone(),
        },
    ))
    .add_service(oneofs::search_service_server::SearchServiceServer::new(
        services::Search,
    ))
    .add_service(maps::map_service_server::MapServiceServer::new(
        services::Maps,
    ))
}

/// A channel to the backend.
pub async fn channel(backend: &Backend) -> Result<Channel, tonic::transport::Error> {
    tonic::transport::Endpoint::try_from(format!("http://{}", backend.addr))?
        .connect()
        .await
}

/// Every generated tool set over a channel to the backend, plus `RecursionService` served in
/// process through `from_service` (no network).
pub fn tool_sets(channel: Channel) -> Result<Vec<ToolSet>, tonic_mcp::Error> {
    use testdata::*;
    Ok(vec![
        scalars::scalar_service_mcp::from_channel(channel.clone())?,
        wkt::well_known_service_mcp::from_channel(channel.clone())?,
        oneofs::search_service_mcp::from_channel(channel.clone())?,
        maps::map_service_mcp::from_channel(channel.clone())?,
        long_fields::long_field_service_mcp::from_channel(channel.clone())?,
        streaming::inventory_service_mcp::from_channel(channel.clone())?,
        tool_options::catalog_service_mcp::from_channel(channel)?,
        recursion::recursion_service_mcp::from_service(services::Recursion)?,
    ])
}

/// The MCP server over every tool set, forwarding `authorization` from HTTP requests.
pub async fn mcp_server(backend: &Backend) -> Result<McpServer, Box<dyn std::error::Error>> {
    Ok(mcp_server_builder(backend).await?.build())
}

/// [`mcp_server`], before `build()`, for servers with other settings.
pub async fn mcp_server_builder(
    backend: &Backend,
) -> Result<tonic_mcp::McpServerBuilder, Box<dyn std::error::Error>> {
    mcp_server_builder_on(channel(backend).await?)
}

/// [`mcp_server_builder`] over any channel (a lazy one for a backend that may be down).
pub fn mcp_server_builder_on(
    channel: Channel,
) -> Result<tonic_mcp::McpServerBuilder, Box<dyn std::error::Error>> {
    let mut builder = McpServer::builder("e2e", env!("CARGO_PKG_VERSION"))
        .instructions("Echo services of the protoc-gen-rust-mcp test data.");
    for set in tool_sets(channel)? {
        let mut static_metadata = MetadataMap::new();
        static_metadata.insert(
            "x-static",
            tonic::metadata::MetadataValue::from_static("e2e"),
        );
        let set = set
            .with_metadata(static_metadata)
            .on_call(tonic_mcp::forward_headers(["authorization"]));
        builder = builder.tool_set(set)?;
    }
    Ok(builder)
}
