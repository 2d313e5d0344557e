//! `protoc-gen-rust-mcp`: a protoc plugin that exposes gRPC services as MCP tools.
//!
//! For every RPC it writes a JSON Schema 2020-12 for the input and the output, and a Rust module
//! (`<package>.pb.mcp.rs`) that registers each RPC as an MCP tool forwarding to a tonic client or
//! an in-process tonic service through the `tonic-mcp` runtime.
//!
//! The binary reads a `CodeGeneratorRequest` on stdin and writes a `CodeGeneratorResponse`; the
//! library offers the same through [`execute`], and a `build.rs` [`Builder`] that either runs
//! protoc, prost and tonic too (`compile_protos`, feature `build`) or adds the MCP modules to a
//! prost or tonic build you already have (`compile_descriptor_set_path`).
//!
//! The public API is what a user needs: [`Builder`] (also under its former name
//! [`DescriptorSetBuilder`]), the option types its setters take ([`ToolNames`], [`Unions`],
//! [`LongRunning`], [`Adapters`]) and [`BuildError`] for build scripts, [`PROTO_INCLUDE`] for
//! include paths, [`execute`] to embed the plugin, [`VERSION`]. Items marked hidden serve the
//! binary and the tests, not users.
//!
//! Generation runs in two phases: `model::build` resolves everything (Rust names from
//! prost-build, options, comments, schemas) and the emitters in `emit` only write files.

// Library code reports errors instead of panicking; tests may unwrap.
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod build_error;
mod builder;
#[cfg(feature = "build")]
mod compile_protos;
mod emit;
#[doc(hidden)]
pub mod model;
mod plugin;
mod rust_names;
mod write_modules;

// Descriptor-to-tool logic shared with the runtime. `options` and `schema` are public for the
// binary's `--help` and the tests only.
#[doc(hidden)]
pub mod options;
#[doc(hidden)]
pub use tonic_mcp_schema::json_schema;

pub use crate::build_error::BuildError;
pub use crate::builder::{Builder, DescriptorSetBuilder, PROTO_INCLUDE};
pub use crate::options::{Adapters, LongRunning, ToolNames, Unions};
#[doc(hidden)]
pub use crate::options::{Options, PluginOptions};
pub use crate::plugin::execute;
#[doc(hidden)]
pub use crate::plugin::{RunError, execute_to, generate};
/// A generation error, as [`execute`] reports it in `CodeGeneratorResponse.error`.
pub use tonic_mcp_schema::error::Error;

/// The plugin's version, as `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
