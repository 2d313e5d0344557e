//! [`ConnectionLimits`]: bounds on the HTTP connections of an [`HttpServer`](crate::HttpServer).

use std::time::Duration;

/// `max_connections` when the process's limit on open files cannot be read (not Linux, or
/// no limit): 768, three quarters of the usual soft limit of 1,024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 768;

/// The largest `max_connections` the default takes from the limit on open files, however
/// high that limit: what 10,000 idle connections hold stays in tens of megabytes.
pub const MAX_DEFAULT_CONNECTIONS: usize = 10_000;

/// Bounds on the HTTP connections of an [`HttpServer`](crate::HttpServer), so that clients that
/// open connections and send nothing, send their headers or body a byte at a time, or never close
/// an idle connection, cannot exhaust the server's file descriptors or memory.
///
/// - At most `max_connections` are open at once: at the cap the server stops accepting (new
///   connections wait in the kernel's backlog) until one closes.
/// - A connection must deliver the headers of its first request within `header_read_timeout`
///   of opening, and of every later request within `header_read_timeout` of that request's
///   first byte; otherwise it is closed.
/// - A request's body must be complete within `body_read_timeout` of its headers; otherwise the
///   request is answered `408 Request Timeout` (and an HTTP/1 connection closed).
/// - A connection that has served a request and has none in flight is closed once
///   `idle_timeout` passes without the next request starting (HTTP/1 keep-alive; HTTP/2 is
///   also pinged at that interval).
///
/// None of them bounds a response: a long tool call or an event stream (`GET /mcp`, a
/// streamed answer) keeps its connection for as long as it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections open at once (at least 1). Default: three quarters of the process's
    /// soft limit on open files when the limits are made, at most
    /// [`MAX_DEFAULT_CONNECTIONS`], leaving the rest for backend connections and files
    /// (768 under the common limit of 1,024); [`DEFAULT_MAX_CONNECTIONS`] where the limit
    /// cannot be read.
    pub max_connections: usize,
    /// How long a client has to send a request's headers: from the connection's opening for
    /// its first request, from a later request's first byte for that one (default 10 s).
    pub header_read_timeout: Duration,
    /// How long a client has to send a request's body, from the end of its headers (default
    /// 30 s).
    pub body_read_timeout: Duration,
    /// How long a connection may wait, with no request in flight, for its next request
    /// (default 75 s: above the 60 s after which common load balancers close an idle
    /// connection, so that the balancer closes it first).
    pub idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: default_max_connections(open_files_limit()),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(75),
        }
    }
}

/// Three quarters of `limit` (the soft limit on open files), within
/// `16..=MAX_DEFAULT_CONNECTIONS`; [`DEFAULT_MAX_CONNECTIONS`] without one.
fn default_max_connections(limit: Option<u64>) -> usize {
    limit.map_or(DEFAULT_MAX_CONNECTIONS, |limit| {
        let three_quarters = usize::try_from(limit / 4 * 3).unwrap_or(usize::MAX);
        three_quarters.clamp(16, MAX_DEFAULT_CONNECTIONS)
    })
}

/// The soft limit on open files (`RLIMIT_NOFILE`), read from `/proc/self/limits` (the crate
/// forbids the unsafe `getrlimit`); `None` elsewhere or when unlimited.
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    soft_limit(&limits, "Max open files")
}

/// The "Soft Limit" column of the `name` row of a `/proc/PID/limits` text.
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let row = limits.lines().find_map(|line| line.strip_prefix(name))?;
    row.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: &str = "Limit                     Soft Limit           Hard Limit           Units     \n\
                          Max processes             63448                63448                processes \n\
                          Max open files            1024                 524288               files     \n\
                          Max locked memory         8388608              8388608              bytes     \n";

    #[test]
    fn the_soft_limit_is_read_from_proc_limits() {
        assert_eq!(soft_limit(LIMITS, "Max open files"), Some(1024));
        assert_eq!(soft_limit(LIMITS, "Max processes"), Some(63448));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(soft_limit(unlimited, "Max open files"), None);
        assert_eq!(soft_limit("", "Max open files"), None);
    }

    #[test]
    fn the_default_cap_leaves_a_quarter_of_the_descriptors() {
        assert_eq!(default_max_connections(Some(1024)), 768);
        assert_eq!(default_max_connections(Some(64)), 48);
        assert_eq!(default_max_connections(Some(8)), 16);
        assert_eq!(
            default_max_connections(Some(1 << 20)),
            MAX_DEFAULT_CONNECTIONS
        );
        assert_eq!(default_max_connections(None), DEFAULT_MAX_CONNECTIONS);
        // This process's own limit is read on Linux.
        if cfg!(target_os = "linux") {
            assert!(open_files_limit().is_some());
        }
    }
}
