//! Bounds on the sessions of the streamable HTTP transport, set on the server's builder.

use std::time::Duration;

/// Bounds on streamable HTTP sessions (session mode; stateless serving keeps none).
///
/// Every open session holds a task and its channels (about 60 KB). A client that opens
/// sessions and never closes them (`DELETE`) is bounded by both limits: a session idle for
/// `idle_timeout` is closed, and once `max_sessions` are open a new `initialize` is refused
/// with HTTP 503 and a JSON-RPC error until one closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Most sessions open at once (default 1,000).
    pub max_sessions: usize,
    /// A session without requests for this long is closed (default 5 minutes).
    pub idle_timeout: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: 1000,
            idle_timeout: Duration::from_secs(300),
        }
    }
}
