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
//! The folders are the layers, in the order a call flows through them:
//!
//! 1. **`transport`**: stdio (newline-delimited JSON-RPC) and streamable HTTP behind their
//!    guards (the byte-level nesting `guard`, body size, `origin`, `sessions`), and the
//!    plain-call path both take without rmcp's per-request service (`tools_call_text`,
//!    `stdio_plain`, `http_plain`).
//! 2. **`server`**: the rmcp `ServerHandler` over composed tool sets: listing and paging,
//!    confirmation, the seam through which MCP tasks run ([`TaskRouter`], with the prepared
//!    call it is handed, [`ReadyCall`], and the recognition of revision 2025-11-25's task
//!    requests, `task_shape`), and what the builder configures (session limits, the routes of
//!    add-ons such as the Prometheus endpoint).
//! 3. **`call`**: one tool call end to end: limits, hooks, arguments to requests (through the
//!    codec crate, [`tonic_mcp_codec`]), collecting responses, long-running operations, result
//!    budgets and progress.
//! 4. **`tool`**: tool definitions (`def`, the `codegen` facade's types), tool sets and their
//!    hooks' `context`, the types and schemas each tool resolves, and the descriptor pools
//!    behind them.
//! 5. **`grpc`**: forwarding through `tonic::client::Grpc` and gRPC statuses in words.
//!
//! Beside them: `observe` (spans, and the [`CallObserver`] seam through which the add-on crates
//! `tonic-mcp-metrics` and `tonic-mcp-otel` watch calls). Tools made from descriptors at run
//! time, for the gateway, are the add-on crate `tonic-mcp-dynamic`, which registers them as
//! [`SpecTool`]s. MCP tasks are the add-on crate `tonic-mcp-tasks`, a [`TaskRouter`]; without
//! one a server runs no tasks. OAuth authorization is the add-on crate
//! `tonic-mcp-auth`, a tower layer in front of [`McpHttpService`]; tool search is
//! `tonic-mcp-search`, a [`ToolDiscovery`]; the ready-made hyper server for
//! [`McpHttpService`] (connection limits, `/healthz`, graceful shutdown) is `tonic-mcp-serve`.
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
//!    Every problem is reported with its JSON path and what was expected (the first
//!    [`MAX_PROBLEMS`](tonic_mcp_codec::MAX_PROBLEMS) when there are more).
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

mod call;
pub mod codegen;
mod error;
mod grpc;
mod observe;
mod server;
mod sync;
mod tool;
mod transport;

pub use call::Limits;
pub use call::budget::DEFAULT_MAX_RESULT_BYTES;
pub use call::longrunning::{FIRST_POLL, LONGEST_POLL};
pub use call::outcome::invalid_arguments;
pub use error::Error;
pub use observe::observer::CallObserver;
/// The descriptor pool tool sets resolve their message types in; the whole `prost_reflect`
/// crate is re-exported too, so that no direct dependency on it is needed.
pub use prost_reflect::{self, DescriptorPool};
/// Who may cache a `tools/list` page: [`McpServerBuilder::list_cache`].
pub use rmcp::model::CacheScope;
/// A tool call's result, as a [`CallObserver`] is told it.
pub use rmcp::model::CallToolResult;
pub use server::discovery::{DiscoveryAnswer, DiscoveryIndex, ServedTool, Target, ToolDiscovery};
pub use server::http_response::{HttpResponse, plain_response};
pub use server::paging::{DEFAULT_LIST_TTL, DEFAULT_PAGE_BYTES, DEFAULT_PAGE_SIZE};
pub use server::ready_call::{CallOrigin, Prepared, ReadyCall, TaskProgress};
pub use server::run::cancelled_result;
pub use server::task_router::{Request2025, RouterFuture, TaskRouter, no_tasks};
pub use server::waiting_tool::{Detached, OperationLook, OperationReader, WaitingTool};
pub use server::{DEFAULT_INLINE_WAIT, TaskMode};
pub use server::{Load, SessionLimits};
pub use server::{McpServer, McpServerBuilder, SHUTDOWN_DRAIN};
pub use tool::context::{CallContext, Caller, Refusal, forward_headers};
pub use tool::meta::{RPC_META_KEY, STATUS_META_KEY};
pub use tool::schemas::{KeptText, MadeSchemas, MakeSchemas};
pub use tool::set_pools::SetPools;
pub use tool::spec_tool::SpecTool;
pub use tool::toolset::{
    DEFAULT_MAX_DECODING_MESSAGE_SIZE, DEFAULT_MAX_MESSAGES, DEFAULT_TIMEOUT, MAX_TOOL_NAME_LEN,
    ToolSet,
};
/// The `tracing` span a [`CallObserver`] is told a call or gRPC request runs in.
pub use tracing::Span;
pub use transport::http::McpHttpService;
pub use transport::origin::LOOPBACK_ORIGINS;

/// The descriptor-to-tool generator shared with the plugin: the [`ToolSpec`](tonic_mcp_schema::ToolSpec)s
/// a [`SpecTool`] is made of, and the tool [`Options`](tonic_mcp_schema::Options) they are
/// made under (the plugin's code options, which shape generated Rust, are not among them).
pub use tonic_mcp_schema as schema;

/// rmcp's streamable HTTP configuration, re-exported for [`McpServer::streamable_http_service`].
pub use rmcp::transport::StreamableHttpServerConfig;
