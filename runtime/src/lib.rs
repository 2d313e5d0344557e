//! tonic-mcp: serve tonic gRPC services as MCP tools.
#![allow(dead_code)]

pub(crate) mod codec;
