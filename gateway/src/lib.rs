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

mod args;
mod assemble;
pub mod auth;
mod backend;
mod backend_state;
pub mod check;
mod config_file;
pub mod descriptors;
mod error;
mod gateway;
mod headers;
mod imports;
mod metrics;
mod search;
pub mod target;
mod task_store;
pub mod traces;
mod values;

pub use crate::args::{Config, Parsed, help, parse as parse_args};
pub use crate::assemble::Loaded;
pub use crate::backend::{Backend, FLAGS_BACKEND};
pub use crate::descriptors::Descriptors;
pub use crate::error::Error;
pub use crate::gateway::Gateway;
pub use crate::headers::Headers;
pub use crate::search::SearchEmbeddings;
pub use crate::task_store::TaskStoreSettings;
