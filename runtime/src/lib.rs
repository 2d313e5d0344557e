//! Serve tonic gRPC services as MCP (Model Context Protocol) tools.
//!
//! This is the runtime crate of `protoc-gen-rust-mcp`. The plugin generates, per proto
//! package, a `*.pb.mcp.rs` module with one [`ToolDef`](codegen::ToolDef) per RPC (its name,
//! JSON schemas and settings) and two constructors per service: `from_channel` (forward each
//! tool call over a tonic transport: a `Channel`, an `InterceptedService`, …) and
//! `from_service` (call an implementation of the tonic server trait in-process). Both return a
//! [`ToolSet`]; an [`McpServer`] serves any number of them over stdio or streamable HTTP,
//! using the official Rust MCP SDK (`rmcp`).
//!
//! ```no_run
//! # mod demo { pub mod v1 { pub mod item_service_mcp {
//! #   pub fn from_channel<T>(_: T) -> Result<tonic_mcp::ToolSet, tonic_mcp::Error> { Ok(tonic_mcp::ToolSet::new()) }
//! # } } }
//! # async fn run(channel: ()) -> Result<(), tonic_mcp::Error> {
//! use tonic_mcp::McpServer;
//!
//! let tools = demo::v1::item_service_mcp::from_channel(channel)?;
//! McpServer::builder("items", env!("CARGO_PKG_VERSION"))
//!     .tool_set(tools)?
//!     .build()
//!     .serve_stdio()
//!     .await
//! # }
//! ```
//!
//! # Layers
//!
//! The modules form four layers, in the order a call flows through them; each imports only
//! from the layers below it, and no two modules import each other:
//!
//! 1. **Transports**: `stdio` (newline-delimited JSON-RPC) and `http` (streamable HTTP behind
//!    its guards: body size, `origin`, `sessions`, the `auth` gate). Both read a `tools/call`
//!    straight from its text (`tools_call_text`) and answer a plain one themselves, without
//!    rmcp's per-request service (`stdio_plain`, and `http_plain` when stateless). With them
//!    `http_server` (the ready-made hyper server, bounded by `connection_limits`),
//!    `http_response` and the Prometheus endpoint (`metrics_endpoint`).
//! 2. **Protocol**: `server`, which answers MCP's methods through rmcp, with its children
//!    `confirm` and `tasks` (both task shapes); listing and paging (`paging`) and tool search
//!    (`discovery`).
//! 3. **Engine**: tool sets (`toolset`, `def`, `descriptor_pools`, `dynamic`, the pools of a
//!    set built per package in `set_pools`, the types a tool resolves in `tool_types`, the
//!    schemas it keeps in `tool_schemas` and `schema_text`, and the `codegen` facade), the call (`call`,
//!    with `arguments`, `arguments_text`, `collect`, `longrunning`, `outcome`,
//!    `structured_text`, `progress`, `budget`, `context`, `status`, `tool_meta`, `union_pool`)
//!    and the gRPC forwarding (`grpc`, `grpc_transport`); `metrics`
//!    and `telemetry` record it.
//! 4. **Guard**: the byte-level message `guard` the transports run before any parser. JSON ↔
//!    protobuf and schema validation are the codec crate's, [`tonic_mcp_codec`].
//!
//! # A tool call
//!
//! 0. **Straight from the text**, over stdio and streamable HTTP: a plain call whose arguments
//!    are canonical and of schema keywords the text encoder checks exactly is encoded from the
//!    JSON text in one pass, checks included ([`tonic_mcp_codec::Arguments::encode_text`]), and
//!    goes to step 5.
//!    Every other call takes the steps below.
//! 1. **Limits**: arguments larger than [`Limits::max_argument_bytes`] or nested deeper than
//!    [`Limits::max_depth`] are refused.
//! 2. **Normalise** the model's JSON by the descriptors to the shape the schema describes, unless
//!    it is in that shape already (what a model that follows the schema sends). Accepted
//!    alternates: 64-bit integers as JSON numbers, numeric strings, `1.0` for integers, URL-safe
//!    or unpadded base64, enum numbers, every oneof form (`{case, value}`, the member under its
//!    own name, redpanda's `which`, protojson's flat member), `Any` in protojson's `@type` form,
//!    `null` as absent (but as the value of a `NullValue` or a `google.protobuf.Value`),
//!    objects and arrays sent as JSON strings.
//! 3. **Validate** against the tool's input schema, compiled once, on the tool's first call.
//!    Every problem is reported with its JSON path and what was expected.
//! 4. **Encode** to protobuf bytes in one pass, from a plan of the input type made on the tool's
//!    first call; what that encoder cannot write exactly as prost-reflect would (an `Any`)
//!    goes through a `DynamicMessage`.
//! 5. **Call** through `tonic::client::Grpc` with those bytes (no prost type is built), with a
//!    deadline (30 s by default) sent as `grpc-timeout` and enforced locally. A cancelled MCP
//!    request (or a closed HTTP stream) cancels the RPC.
//! 6. **Decode** the response bytes in the output schema's shape in one pass (else through a
//!    `DynamicMessage`, as for requests), returned as `structuredContent` and as text. A map's
//!    entries come in the order of the wire. Over stdio, and over stateless HTTP for a plain
//!    call, a unary result is written as JSON text straight from the bytes, and the transport
//!    writes `structuredContent` from that text (`structured_text`): no JSON tree is made of
//!    it.
//!
//! gRPC errors become `isError` results with the code name, the message and the decoded
//! `google.rpc` details. An unknown tool is JSON-RPC error -32602.
//!
//! # Streaming
//!
//! Server-streaming tools return `{"messages": […]}`, collected up to a bound (message count
//! and the deadline) with `"truncated": true` when the bound cut the stream; each message
//! sends a progress notification when the client passed a `progressToken`. Client-streaming
//! tools take `{"messages": […]}`. Bidirectional tools do both, with batch semantics: all
//! input messages are sent, then responses are collected.
//!
//! # Telemetry
//!
//! Each tool call runs in a `tracing` span `mcp.tool_call` with the fields `tool`, `rpc`,
//! `duration_ms` and `grpc_code`. Forwarded header values are never logged.

#![warn(missing_docs)]

mod arguments;
mod arguments_text;
#[cfg(feature = "auth")]
mod auth;
mod budget;
mod call;
pub mod codegen;
mod collect;
#[cfg(feature = "http-server")]
mod connection_limits;
mod context;
mod def;
mod descriptor_pools;
mod discovery;
mod dynamic;
mod error;
mod grpc;
mod grpc_transport;
mod guard;
mod http;
mod http_plain;
mod http_response;
#[cfg(feature = "http-server")]
mod http_server;
mod longrunning;
#[cfg(feature = "metrics")]
mod metrics;
#[cfg(all(feature = "metrics", feature = "http-server"))]
mod metrics_endpoint;
mod origin;
mod outcome;
mod paging;
mod progress;
mod schema_text;
mod server;
mod sessions;
mod set_pools;
mod status;
mod stdio;
mod stdio_plain;
mod stream_control;
mod structured_text;
mod telemetry;
mod tool_meta;
mod tool_schemas;
mod tool_types;
mod tools_call_text;
mod toolset;
mod union_pool;

#[cfg(feature = "auth")]
pub use auth::{
    Authorization, AuthorizationBuilder, DEFAULT_JWKS_MAX_AGE, DEFAULT_JWKS_MIN_REFRESH,
    DEFAULT_LEEWAY, MAX_TOKEN_BYTES, PROTECTED_RESOURCE_METADATA_PATH, Principal, forward_claims,
};
pub use budget::DEFAULT_MAX_RESULT_BYTES;
/// The hooks of the differential tests (`e2e/tests/transcode_*.rs`), which hold the one-pass
/// transcoders to the prost-reflect path: not part of the API.
#[doc(hidden)]
pub mod __differential {
    pub use crate::arguments::both as arguments;
    pub use crate::arguments::from_text as arguments_from_text;
}
pub use call::Limits;
#[cfg(feature = "http-server")]
pub use connection_limits::{ConnectionLimits, DEFAULT_MAX_CONNECTIONS, MAX_DEFAULT_CONNECTIONS};
pub use context::{CallContext, Refusal, forward_headers};
pub use discovery::{CALL_TOOL, DEFAULT_SEARCH_LIMIT, DESCRIBE_TOOLS, SEARCH_TOOLS, ToolSearch};
pub use dynamic::{DecodedDescriptors, DescriptorTools};
pub use error::Error;
pub use http::McpHttpService;
pub use http_response::HttpResponse;
pub use longrunning::{FIRST_POLL, LONGEST_POLL};
#[cfg(feature = "metrics")]
pub use metrics::Metrics;
pub use origin::LOOPBACK_ORIGINS;
pub use paging::{DEFAULT_LIST_TTL, DEFAULT_PAGE_BYTES, DEFAULT_PAGE_SIZE};
/// The descriptor pool [`DescriptorTools`] reads; the whole `prost_reflect` crate is
/// re-exported too, so that no direct dependency on it is needed.
pub use prost_reflect::{self, DescriptorPool};
/// Who may cache a `tools/list` page: [`McpServerBuilder::list_cache`].
pub use rmcp::model::CacheScope;
pub use server::DEFAULT_TASK_TTL;
pub use server::SessionLimits;
pub use server::TaskLimits;
pub use server::{DEFAULT_INLINE_WAIT, TaskMode};
pub use server::{McpServer, McpServerBuilder, SHUTDOWN_DRAIN};
pub use set_pools::SetPools;
pub use tool_meta::{RPC_META_KEY, STATUS_META_KEY};
pub use toolset::{
    DEFAULT_MAX_DECODING_MESSAGE_SIZE, DEFAULT_MAX_MESSAGES, DEFAULT_TIMEOUT, MAX_TOOL_NAME_LEN,
    ToolSet,
};

/// The descriptor-to-tool generator shared with the plugin; its tool
/// [`Options`](tonic_mcp_schema::Options) configure [`DescriptorTools`] (the plugin's code
/// options, which shape generated Rust, are not among them).
pub use tonic_mcp_schema as schema;

/// rmcp's streamable HTTP configuration, re-exported for [`McpServer::streamable_http_service`].
pub use rmcp::transport::StreamableHttpServerConfig;
