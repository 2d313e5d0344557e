//! Browser origins on the streamable HTTP transport. rmcp checks `Origin` against an
//! allow-list, which stops DNS rebinding: by default [`LOOPBACK_ORIGINS`] (see
//! [`McpServer::session_http_config`](crate::server::McpServer::session_http_config)).
//!
//! A loopback origin is only as trustworthy as the server is local: once `Host` names a
//! public address (the operator allowed one with `with_allowed_hosts`), a page on the
//! caller's own machine is a foreign site to that server. [`refused`] enforces that, before
//! rmcp sees the request; origins the operator listed by name stay allowed.

/// The origins a server on loopback accepts by default: `localhost`, `127.0.0.1` and `[::1]`,
/// over `http` and `https`, on any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// Whether `host` (a `Host` header or an origin's host, with or without a port) names this
/// machine: `localhost`, an address in `127.0.0.0/8`, or `::1`.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim();
    if let Ok(address) = host.parse::<std::net::IpAddr>() {
        return address.is_loopback();
    }
    // `[::1]:8080`, `[::1]`, `localhost:8080`, `127.0.0.1:8080`.
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                name
            } else {
                host
            }
        }),
    };
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    name.parse::<std::net::IpAddr>()
        .is_ok_and(|address| address.is_loopback())
}

/// Whether a request carrying `origin` to `host` must be refused here: a loopback origin
/// sent to a server reached by a name that is not loopback, unless `listed` (the operator's
/// allow-list) names that origin exactly. Everything else is left to rmcp's checks.
pub(crate) fn refused(origin: Option<&str>, host: Option<&str>, listed: &[String]) -> bool {
    let Some(origin) = origin.map(str::trim) else {
        return false;
    };
    // `scheme://host[:port]`.
    let Some((_, origin_host)) = origin.split_once("://") else {
        return false;
    };
    if !is_loopback(origin_host) || host.is_some_and(is_loopback) {
        return false;
    }
    !listed
        .iter()
        .any(|entry| entry.trim().eq_ignore_ascii_case(origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses() {
        for host in [
            "localhost",
            "LOCALHOST:3000",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.9.9.9:1",
            "[::1]",
            "[::1]:8080",
            "::1",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "example.com",
            "example.com:443",
            "10.0.0.1",
            "[2001:db8::1]:443",
            "localhost.example.com",
            "",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn a_loopback_origin_is_refused_only_for_a_public_host() {
        let none: &[String] = &[];
        // Local page, local server.
        assert!(!refused(
            Some("http://127.0.0.1:5173"),
            Some("127.0.0.1:8080"),
            none
        ));
        assert!(!refused(
            Some("http://localhost:6274"),
            Some("localhost:8080"),
            none
        ));
        // Local page, public server.
        assert!(refused(
            Some("http://localhost:6274"),
            Some("mcp.example.com"),
            none
        ));
        // ... unless the operator named that origin.
        let listed = ["http://localhost:6274".to_owned()];
        assert!(!refused(
            Some("http://localhost:6274"),
            Some("mcp.example.com"),
            &listed
        ));
        // Foreign origins and requests without an Origin are rmcp's to judge.
        assert!(!refused(
            Some("https://evil.example"),
            Some("mcp.example.com"),
            none
        ));
        assert!(!refused(None, Some("mcp.example.com"), none));
    }
}
