//! Bounds on MCP tasks (task-augmented tool calls), set on the server's builder.

/// Bounds on the MCP tasks of a server ([`Tasks::limits`]), in both task
/// shapes (the tasks extension and revision 2025-11-25's).
///
/// A task outlives its request: it is kept, with its result, until one time-to-live after it
/// ended ([`Tasks::ttl`]). A client that starts tasks and never fetches them
/// would otherwise make the server hold every call and every result. Three bounds stop it:
///
/// - `max_per_owner`: tasks one caller (token owner, else HTTP session; over stdio and
///   stateless HTTP without authorization, everyone together) may have live, from creation
///   until the server forgets them. A task-augmented `tools/call` past it is refused with a
///   JSON-RPC error naming the bound.
/// - `max_running`: tasks whose call runs now, on the whole server; past it, refused the same
///   way. This is what the `mcp_tasks_running` gauge counts.
/// - `max_result_bytes`: bytes of task results the server keeps for clients to fetch (each
///   result counted as its JSON). When a finished task's result would pass it, the oldest
///   results are dropped to make room, those already fetched first; their tasks then report
///   `failed`, with a message saying why. A result larger than the whole bound is dropped
///   at once. Dropping the oldest rather than refusing new tasks keeps the server serving
///   the clients that fetch their results while one client abandons its own: a result nobody
///   fetched for longest is the likeliest abandoned, and a bound that refused new work
///   would stay full for a whole time-to-live.
///
/// [`Tasks::limits`]: crate::Tasks::limits
/// [`Tasks::ttl`]: crate::Tasks::ttl
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// Most tasks one caller may have live, created and not yet forgotten (default 256;
    /// at least 1).
    pub max_per_owner: usize,
    /// Most tasks running at once on the server (default 256; at least 1).
    pub max_running: usize,
    /// Most bytes of task results kept for fetching, as JSON (default 64 MiB).
    pub max_result_bytes: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            max_per_owner: 256,
            max_running: 256,
            max_result_bytes: 64 << 20,
        }
    }
}
