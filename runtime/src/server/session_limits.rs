//! Bounds on the sessions of the streamable HTTP transport, set on the server's builder.

use std::time::Duration;

/// Bounds on streamable HTTP sessions (session mode; stateless serving keeps none).
///
/// Every open session holds a task and its channels (docs/benchmark-history.md measures how much). A
/// client that opens sessions and never closes them (`DELETE`) is bounded by these limits: a
/// session idle for `idle_timeout` is closed, and once `max_sessions` are open, or the
/// caller's token owner has `max_sessions_per_principal` open, a new `initialize` is refused
/// with HTTP 503 and a JSON-RPC error until one closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Most sessions open at once (default 1,000).
    pub max_sessions: usize,
    /// Most sessions one token owner (issuer, subject, client) has open at once, under
    /// authorization (default 100): one caller cannot take every session. Without
    /// authorization there is no owner to tell apart, and `max_sessions` alone applies.
    pub max_sessions_per_principal: usize,
    /// A session without requests for this long is closed (default 5 minutes).
    pub idle_timeout: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: 1000,
            max_sessions_per_principal: 100,
            idle_timeout: Duration::from_secs(300),
        }
    }
}
