//! The MCP transports: stdio (newline-delimited JSON-RPC) and streamable HTTP, behind the
//! guards every message passes first (the nesting guard, body and origin checks, sessions),
//! with the ready-made hyper server and its connection limits.

pub(crate) mod guard;
pub(crate) mod http;
pub(crate) mod http_plain;
pub(crate) mod http_response;
#[cfg(feature = "http-server")]
pub(crate) mod http_server;
pub(crate) mod origin;
pub(crate) mod sessions;
pub(crate) mod stdio;
pub(crate) mod stdio_plain;
pub(crate) mod tools_call_text;
