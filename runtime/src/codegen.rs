//! The facade generated code uses, the way tonic's generated code uses `tonic::codegen`.
//!
//! Generated `*.pb.mcp.rs` files name only items of this module (by absolute path,
//! `::tonic_mcp::codegen::…`), so the rest of the crate can change without breaking them. A
//! generated constructor is one call:
//!
//! ```ignore
//! pub fn from_channel<T: Transport>(transport: T) -> Result<ToolSet, Error> {
//!     tool_set(&super::MCP_DESCRIPTORS, TOOLS, BoxTransport::new(transport))
//! }
//! ```

pub use crate::{
    grpc::BoxTransport,
    grpc::transport::Transport,
    tool::def::{RpcKind, TaskSupport, ToolAnnotations, ToolDef, Unconfirmed},
    tool::descriptor_pools::Descriptors,
    tool::toolset::{ToolSetBuilder, tool_set},
};
