//! How an RPC streams, which decides its tool's JSON shape.

use prost_reflect::MethodDescriptor;

/// How an RPC streams, which decides the tool's JSON shape (docs/design.md §5).
///
/// | kind | tool input | tool output |
/// |---|---|---|
/// | `Unary` | the request message | the response message |
/// | `ServerStreaming` | the request message | `{"messages": […], "truncated": true?}` |
/// | `ClientStreaming` | `{"messages": […]}` | the response message |
/// | `Bidi` | `{"messages": […]}` | `{"messages": […], "truncated": true?}` |
///
/// Bidirectional RPCs have batch semantics: every input message is sent, then the responses
/// are collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RpcKind {
    /// One request, one response.
    Unary,
    /// One request, a stream of responses.
    ServerStreaming,
    /// A stream of requests, one response.
    ClientStreaming,
    /// Streams both ways.
    Bidi,
}

impl RpcKind {
    /// The kind of `method`.
    pub fn of(method: &MethodDescriptor) -> RpcKind {
        match (method.is_client_streaming(), method.is_server_streaming()) {
            (false, false) => RpcKind::Unary,
            (false, true) => RpcKind::ServerStreaming,
            (true, false) => RpcKind::ClientStreaming,
            (true, true) => RpcKind::Bidi,
        }
    }

    /// Whether the tool input is `{"messages": […]}`.
    pub const fn streams_requests(self) -> bool {
        matches!(self, Self::ClientStreaming | Self::Bidi)
    }

    /// Whether the tool output is `{"messages": […], "truncated": true?}`.
    pub const fn streams_responses(self) -> bool {
        matches!(self, Self::ServerStreaming | Self::Bidi)
    }
}
