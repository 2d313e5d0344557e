//! The facade generated code uses, the way tonic's generated code uses `tonic::codegen`.
//!
//! Generated `*.pb.mcp.rs` files name only items of this module (by absolute path,
//! `::tonic_mcp::codegen::…`), so the rest of the crate can change without breaking them.

pub use crate::{
    def::{RpcKind, ToolAnnotations, ToolDef},
    stream::MessageStream,
    toolset::ToolSetBuilder,
    transport::Transport,
};

/// The request type of the tonic client methods the generated closures call.
pub use tonic::Request;
