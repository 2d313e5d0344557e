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
mod backend;
mod backend_state;
pub mod check;
mod config_file;
pub mod descriptors;
mod error;
mod headers;
mod imports;
mod metrics;
pub mod target;

use std::collections::HashMap;

use tonic::transport::Channel;
use tonic_mcp::{DescriptorTools, McpServer};

pub use crate::args::{CODEGEN_ONLY, Config, Parsed, TOOL_OPTIONS, help, parse as parse_args};
pub use crate::backend::{Backend, FLAGS_BACKEND};
pub use crate::descriptors::Descriptors;
pub use crate::error::Error;
pub use crate::headers::Headers;

/// A gateway ready to serve: the MCP server over every selected service of every backend.
#[derive(Debug)]
pub struct Gateway {
    /// The MCP server; serve it with [`McpServer::serve_stdio`] or [`McpServer::serve_http`].
    pub server: McpServer,
    /// The services that became tools, by full name.
    pub services: Vec<String>,
}

/// A backend whose descriptors are loaded, ready to become tools.
#[derive(Debug)]
pub struct Loaded<'a> {
    /// The backend.
    pub backend: &'a Backend,
    /// Its descriptors.
    pub descriptors: Descriptors,
    /// The channel its calls go through.
    pub channel: Channel,
}

impl Gateway {
    /// Connects to every backend, loads its descriptors (reflection, or its descriptor-set
    /// file) and builds the MCP server.
    ///
    /// With several backends, one whose reflection cannot be read at start is left out, with
    /// an error in the log naming it and the cause, and the others are served.
    ///
    /// # Errors
    ///
    /// The only backend (or every backend) cannot be reached or reflected, descriptors do not
    /// link, a named service does not exist, an option is invalid for a proto element, or two
    /// tools share a name.
    pub async fn connect(config: &Config) -> Result<Gateway, Error> {
        let mut loaded = Vec::with_capacity(config.backends.len());
        for backend in &config.backends {
            match load(backend).await {
                Ok(one) => loaded.push(one),
                Err(error) if config.backends.len() > 1 && backend.descriptor_set.is_none() => {
                    tracing::error!(
                        backend = %backend.name,
                        target_url = %backend.target.url,
                        "this backend is not served: {error}"
                    );
                }
                Err(error) => return Err(error),
            }
        }
        if loaded.is_empty() {
            return Err(Error::new(
                "no backend could be loaded; the log names each one and why",
            ));
        }
        Gateway::from_loaded(config, loaded)
    }

    /// Builds the MCP server over `descriptors` for the first backend of `config`, calling it
    /// through `channel`.
    ///
    /// # Errors
    ///
    /// As for [`connect`](Self::connect), without the network part.
    pub fn new(
        config: &Config,
        descriptors: Descriptors,
        channel: Channel,
    ) -> Result<Gateway, Error> {
        let backend = config
            .backends
            .first()
            .ok_or_else(|| Error::new("no backend is configured"))?;
        Gateway::from_loaded(
            config,
            vec![Loaded {
                backend,
                descriptors,
                channel,
            }],
        )
    }

    /// Builds the MCP server over backends whose descriptors are loaded.
    ///
    /// # Errors
    ///
    /// A named service does not exist, an option is invalid for a proto element, two tools
    /// share a name (the message names both backends), or no tool is left.
    pub fn from_loaded(config: &Config, loaded: Vec<Loaded<'_>>) -> Result<Gateway, Error> {
        let mut builder = McpServer::builder(config.name.clone(), env!("CARGO_PKG_VERSION"));
        let mut served = Vec::new();
        let metrics = (config.metrics || config.metrics_addr.is_some())
            .then(metrics::Metrics::new)
            .transpose()?;
        let backend_up = metrics.as_ref().map(metrics::backend_up).transpose()?;
        // Which backend each tool comes from, to name both in a collision.
        let mut owners: HashMap<String, &str> = HashMap::new();
        let several = loaded.len() > 1;
        for Loaded {
            backend,
            descriptors,
            channel,
        } in loaded
        {
            let services = descriptors
                .select(&backend.services)
                .map_err(|e| backend.locate(e))?;
            let tools = DescriptorTools::new(&descriptors.pool, &backend.options);
            // One watcher for every service: the target's state changes are logged once.
            let up = backend_up.as_ref().map(|family| backend_state::Up {
                family: family.clone(),
                labels: [backend.name.clone(), backend.target.url.clone()],
            });
            let transport = backend_state::Watched::new(channel, backend.target.url.clone(), up);
            if backend.descriptor_set.is_none() {
                // Its reflection answered.
                transport.answered();
            }
            for service in &services {
                let set = tools
                    .service(service, transport.clone())
                    .map_err(|e| backend.locate(e))?;
                if set.is_empty() {
                    tracing::warn!(backend = %backend.name, service = %service, "no RPC of this service is selected; it has no tools");
                    continue;
                }
                let mut set = backend.configure(set);
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
                if let Some((tool, first)) = set
                    .names()
                    .find_map(|name| owners.get(name).map(|owner| (name.to_owned(), *owner)))
                    .filter(|(_, first)| several && *first != backend.name)
                {
                    return Err(backend.locate(format!(
                        "tool `{tool}` (service {service}) has the name of a tool of backend \
                         `{first}`; give one of the two backends a `prefix`, or `exclude` the \
                         RPC"
                    )));
                }
                owners.extend(
                    set.names()
                        .map(|name| (name.to_owned(), backend.name.as_str())),
                );
                tracing::debug!(backend = %backend.name, service = %service, tools = set.len(), "service ready");
                builder = builder.tool_set(set).map_err(|e| match e {
                    tonic_mcp::Error::DuplicateTool { .. } => backend.locate(format!(
                        "{e}; give tools distinct names with --prefix, --tool-names package or \
                         --exclude"
                    )),
                    other => backend.locate(other),
                })?;
                served.push(service.clone());
            }
        }
        if let Some(authorization) = &config.authorization {
            builder = builder.authorization(authorization.clone());
        }
        if let Some(metrics) = metrics {
            builder = builder.metrics(metrics, config.metrics);
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

/// The descriptors of `backend` (its file, or reflection) and the channel to it.
pub(crate) async fn load(backend: &Backend) -> Result<Loaded<'_>, Error> {
    let channel = target::channel(&backend.target).map_err(|e| backend.locate(e))?;
    let descriptors = match &backend.descriptor_set {
        Some(path) => Descriptors::from_file(path),
        None => {
            descriptors::from_reflection(
                channel.clone(),
                &backend.headers,
                backend.target.timeout,
                &backend.services,
            )
            .await
        }
    }
    .map_err(|e| backend.locate(e))?;
    Ok(Loaded {
        backend,
        descriptors,
        channel,
    })
}
