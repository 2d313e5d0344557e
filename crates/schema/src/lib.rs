//! Protobuf descriptors to MCP tool definitions.
//!
//! For every RPC of a service this crate makes what an MCP host sees of it: the tool name,
//! title, description and annotations, and a JSON Schema 2020-12 for the input and the output
//! (docs/design.md §4 and §5). It reads descriptors through a prost-reflect [`DescriptorPool`], which keeps
//! extension options (`google.api.field_behavior`, `buf.validate`, `rust_mcp`).
//!
//! `protoc-gen-rust-mcp` writes these definitions into generated Rust code; `tonic-mcp` builds
//! them at run time from a descriptor pool. Both go through [`Context::service_tools`], so a
//! tool is the same whichever way it was made.
//!
//! ```
//! use prost_reflect::DescriptorPool;
//! use tonic_mcp_schema::{Context, Options};
//!
//! # fn demo(pool: &DescriptorPool) -> Result<(), tonic_mcp_schema::Error> {
//! let options = Options::default();
//! let context = Context::new(pool, &options);
//! for service in pool.services() {
//!     for tool in context.service_tools(&service)?.tools {
//!         println!("{}: {}", tool.name, tool.input_schema);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! [`DescriptorPool`]: prost_reflect::DescriptorPool

// Library code reports errors instead of panicking; tests may unwrap.
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod annotations;
pub mod error;
pub mod options;
mod rpc_kind;

// The building blocks the plugin, the runtime and the gateway share. They are public for those
// crates, not an API of their own: what a user needs of them is re-exported below.
#[doc(hidden)]
pub mod comments;
#[doc(hidden)]
pub mod extensions;
mod file_pool;
#[doc(hidden)]
pub mod json_schema;
#[doc(hidden)]
pub mod meta;
#[doc(hidden)]
pub mod names;
#[doc(hidden)]
pub mod set_files;
#[doc(hidden)]
pub mod source_info;
#[doc(hidden)]
pub mod stream_control;
#[doc(hidden)]
pub mod syntax;
#[doc(hidden)]
pub mod tools;

use prost_reflect::{DescriptorPool, MethodDescriptor, ServiceDescriptor};

pub use crate::error::{Error, Result};
pub use crate::meta::{TaskSupport, Unconfirmed};
pub use crate::options::Options;
pub use crate::tools::{Annotations, LongRunningSpec, Omitted, RpcKind, ServiceTools, ToolSpec};

/// What tool generation reads besides a service: options, extension readers and comments of
/// one descriptor pool.
#[derive(Debug)]
pub struct Context<'a> {
    options: &'a Options,
    extensions: extensions::Extensions,
    comments: std::borrow::Cow<'a, comments::Comments>,
    cache: json_schema::SchemaCache,
}

impl<'a> Context<'a> {
    /// Indexes the extensions and comments of `pool`.
    pub fn new(pool: &DescriptorPool, options: &'a Options) -> Context<'a> {
        Context {
            options,
            extensions: extensions::Extensions::new(pool),
            comments: std::borrow::Cow::Owned(comments::Comments::index(pool)),
            cache: json_schema::SchemaCache::default(),
        }
    }

    /// As [`Context::new`], with comments indexed beforehand (for a pool built without source
    /// info).
    #[doc(hidden)]
    pub fn with_comments(
        pool: &DescriptorPool,
        options: &'a Options,
        comments: &'a comments::Comments,
    ) -> Context<'a> {
        Context {
            options,
            extensions: extensions::Extensions::new(pool),
            comments: std::borrow::Cow::Borrowed(comments),
            cache: json_schema::SchemaCache::default(),
        }
    }

    /// A context for another thread: the same options and comments (borrowed from this one),
    /// its own extension readers and schema cache, which are not shared across threads. The
    /// tools it makes are the same as this context's.
    #[doc(hidden)]
    pub fn fork(&self, pool: &DescriptorPool) -> Context<'_> {
        Context {
            options: self.options,
            extensions: extensions::Extensions::new(pool),
            comments: std::borrow::Cow::Borrowed(&*self.comments),
            cache: json_schema::SchemaCache::default(),
        }
    }

    /// The borrowed form the schema generator takes.
    #[doc(hidden)]
    pub fn schema_context(&self) -> json_schema::SchemaContext<'_> {
        json_schema::SchemaContext {
            options: self.options,
            extensions: &self.extensions,
            comments: &self.comments,
            cache: &self.cache,
        }
    }

    /// The tools of `service`: for each RPC its name, title, description, annotations, and
    /// JSON Schemas for input and output.
    ///
    /// # Errors
    ///
    /// Invalid element options and names that cannot be made valid, naming the element.
    pub fn service_tools(&self, service: &ServiceDescriptor) -> Result<ServiceTools> {
        tools::service_tools(self.schema_context(), service)
    }

    /// [`service_tools`](Self::service_tools) with the schemas made `when` says: a server
    /// that makes each tool's schemas when first needed ([`tools::Schemas::Later`]) starts
    /// without making any, and makes them with [`method_schemas`](Self::method_schemas).
    ///
    /// # Errors
    ///
    /// As for [`service_tools`](Self::service_tools); with [`tools::Schemas::Later`], not
    /// those of the schemas.
    pub fn service_tools_with(
        &self,
        service: &ServiceDescriptor,
        when: tools::Schemas,
    ) -> Result<ServiceTools> {
        tools::service_tools_with(self.schema_context(), service, when)
    }

    /// The schemas of `method`'s tool: those [`service_tools`](Self::service_tools) gives it.
    ///
    /// # Errors
    ///
    /// The errors of the schemas, naming the proto element.
    pub fn method_schemas(&self, method: &MethodDescriptor) -> Result<tools::ToolSchemas> {
        tools::method_schemas(self.schema_context(), method)
    }
}
