//! The seam through which metrics, trace propagation and the like watch tool calls, without
//! the call knowing them.

use std::time::Duration;

use rmcp::model::CallToolResult;
use tonic::metadata::MetadataMap;
use tracing::Span;

use crate::tool::context::CallContext;

/// What watches tool calls: told when a call starts, when each of its gRPC requests is about
/// to go out and when it ends, and when the call ends. Register one with
/// [`McpServerBuilder::observe`](crate::McpServerBuilder::observe). The crates
/// `tonic-mcp-metrics` (Prometheus) and `tonic-mcp-otel` (W3C trace context) are observers.
/// Every method runs on the call's task: keep them short, and never block. Each has a default
/// that does nothing.
///
/// ```
/// use std::time::Duration;
///
/// use tonic_mcp::{CallObserver, CallToolResult, McpServer};
///
/// /// Logs every call that takes more than a second.
/// struct Slow;
///
/// impl CallObserver for Slow {
///     fn call_ended(
///         &self,
///         tool: &str,
///         _result: Option<&CallToolResult>,
///         elapsed: Duration,
///     ) {
///         if elapsed > Duration::from_secs(1) {
///             tracing::warn!(tool, ?elapsed, "slow tool call");
///         }
///     }
/// }
///
/// let server = McpServer::builder("items", "1.0.0").observe(Slow).build();
/// # let _ = server;
/// ```
pub trait CallObserver: Send + Sync + 'static {
    /// A call starts, in `span`, its `mcp.tool_call` span (disabled when no subscriber records
    /// it). `call` holds what the request carries: its `_meta` and, over streamable HTTP, its
    /// headers, where a trace context to continue may be.
    fn call_started(&self, call: &CallContext<'_>, span: &Span) {
        let _ = (call, span);
    }

    /// A gRPC request of a call (the RPC, or a poll or cancellation of its long-running
    /// operation) is about to go out in `span`, its `grpc.call` span: an observer may add to
    /// its `metadata`, as trace propagation does.
    fn grpc_starting(&self, span: &Span, metadata: &mut MetadataMap) {
        let _ = (span, metadata);
    }

    /// The gRPC request of a call of `tool` ended after `elapsed`: its responses are in, and
    /// the call goes on to decode them (or to wait for a long-running operation).
    fn grpc_ended(&self, tool: &str, elapsed: Duration) {
        let _ = (tool, elapsed);
    }

    /// A call of `tool` ended after `elapsed` with `result`, what the client gets (`None`:
    /// the call was cancelled).
    fn call_ended(&self, tool: &str, result: Option<&CallToolResult>, elapsed: Duration) {
        let _ = (tool, result, elapsed);
    }
}
