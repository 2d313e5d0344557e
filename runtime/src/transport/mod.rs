//! The MCP transports: stdio (newline-delimited JSON-RPC) and streamable HTTP, behind the
//! guards every message passes first (the nesting guard, body and origin checks, sessions).
//! The hyper server that puts the HTTP endpoint on a listener is the crate `tonic-mcp-serve`.

pub(crate) mod guard;
pub(crate) mod http;
pub(crate) mod http_plain;
pub(crate) mod origin;
pub(crate) mod sessions;
pub(crate) mod stdio;
pub(crate) mod stdio_plain;
pub(crate) mod tools_call_text;
