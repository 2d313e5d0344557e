//! `grpc-mcp-gateway`: serve any gRPC server as MCP tools, with no code generation.
//!
//! The gateway reads the server's descriptors, from gRPC server reflection or from a
//! descriptor-set file, turns every RPC into an MCP tool with the same schema generator as
//! `protoc-gen-rust-mcp` (`tonic-mcp-schema`), and forwards each tool call to the server
//! through `tonic-mcp`'s descriptor-driven engine. It serves MCP over stdio or streamable HTTP.
//!
//! The binary is the product; this library holds its parts so that tests and benchmarks can
//! run a gateway in process:
//!
//! ```no_run
//! # async fn demo() -> Result<(), grpc_mcp_gateway::Error> {
//! use grpc_mcp_gateway::Config;
//!
//! let config = Config::parse(["--target", "http://127.0.0.1:50051"])?;
//! let gateway = grpc_mcp_gateway::Gateway::connect(&config).await?;
//! gateway.server.serve_stdio().await?;
//! # Ok(()) }
//! ```

// The gateway reports errors instead of panicking; tests may unwrap.
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

mod args;
pub mod auth;
mod backend_state;
pub mod descriptors;
mod error;
mod headers;
mod imports;
pub mod target;

use tonic::transport::Channel;
use tonic_mcp::{DescriptorTools, McpServer};

pub use crate::args::{CODEGEN_ONLY, Config, Parsed, TOOL_OPTIONS, help, parse as parse_args};
pub use crate::descriptors::Descriptors;
pub use crate::error::Error;
pub use crate::headers::Headers;

/// A gateway ready to serve: the MCP server over every selected service of the target.
#[derive(Debug)]
pub struct Gateway {
    /// The MCP server; serve it with [`McpServer::serve_stdio`] or [`McpServer::serve_http`].
    pub server: McpServer,
    /// The services that became tools, by full name.
    pub services: Vec<String>,
}

impl Gateway {
    /// Connects to the target, loads its descriptors (reflection, or the descriptor-set file
    /// of `config`) and builds the MCP server.
    ///
    /// # Errors
    ///
    /// The target cannot be reached or reflected, the descriptors do not link, a named service
    /// does not exist, an option is invalid for a proto element, or two tools share a name.
    pub async fn connect(config: &Config) -> Result<Gateway, Error> {
        let channel = target::channel(&config.target)?;
        let descriptors = match &config.descriptor_set {
            Some(path) => Descriptors::from_file(path)?,
            None => {
                descriptors::from_reflection(
                    channel.clone(),
                    &config.headers,
                    config.target.timeout,
                    &config.services,
                )
                .await?
            }
        };
        Gateway::new(config, descriptors, channel)
    }

    /// Builds the MCP server over `descriptors`, calling the target through `channel`.
    ///
    /// # Errors
    ///
    /// As for [`connect`](Self::connect), without the network part.
    pub fn new(
        config: &Config,
        descriptors: Descriptors,
        channel: Channel,
    ) -> Result<Gateway, Error> {
        let services = descriptors.select(&config.services)?;
        let tools = DescriptorTools::new(&descriptors.pool, &config.options);
        let mut builder = McpServer::builder(config.name.clone(), env!("CARGO_PKG_VERSION"));
        let mut served = Vec::new();
        // One watcher for every service: the target's state changes are logged once.
        let transport = backend_state::Watched::new(channel, config.target.url.clone());
        for service in &services {
            let set = tools.service(service, transport.clone())?;
            if set.is_empty() {
                tracing::warn!(service = %service, "no RPC of this service is selected; it has no tools");
                continue;
            }
            let mut set = set.with_metadata(config.headers.metadata());
            if let Some(timeout) = config.call_timeout {
                set = set.with_timeout(timeout);
            }
            if let Some(max_messages) = config.max_messages {
                set = set.with_max_messages(max_messages);
            }
            if let Some(bytes) = config.max_result_bytes {
                set = set.with_max_result_bytes(bytes);
            }
            if let Some(bytes) = config.max_decoding_message_size {
                set = set.with_max_decoding_message_size(bytes);
            }
            if let Some(bytes) = config.max_encoding_message_size {
                set = set.with_max_encoding_message_size(bytes);
            }
            if !config.forward_headers.is_empty() {
                set = set.on_call(tonic_mcp::forward_headers(config.forward_headers.clone()));
            }
            if let Some(auth) = config
                .auth
                .as_ref()
                .filter(|a| !a.forward_claims.is_empty())
            {
                set = set.on_call(tonic_mcp::forward_claims(auth.forward_claims.clone()));
            }
            tracing::debug!(service = %service, tools = set.len(), "service ready");
            builder = builder.tool_set(set).map_err(|e| match e {
                tonic_mcp::Error::DuplicateTool { .. } => Error::new(format!(
                    "{e}; give tools distinct names with --prefix, --tool-names package or \
                     --exclude"
                )),
                other => Error::from(other),
            })?;
            served.push(service.clone());
        }
        if let Some(authorization) = &config.authorization {
            builder = builder.authorization(authorization.clone());
        }
        let server = builder.build();
        if server.tools().is_empty() {
            return Err(Error::new(
                "no tools: every RPC of the selected services is excluded or skipped",
            ));
        }
        Ok(Gateway {
            server,
            services: served,
        })
    }
}
