//! The seam through which metrics and the like watch tool calls, without the call knowing them.

use std::time::Duration;

use rmcp::model::CallToolResult;

/// What watches tool calls: told when a call's gRPC request ends and when the call ends.
/// Register one with [`McpServerBuilder::observe`](crate::McpServerBuilder::observe);
/// [`Metrics`](crate::Metrics) is one. Both methods run on the call's task, after the work
/// they report: keep them short, and never block.
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
