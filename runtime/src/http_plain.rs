//! Stateless streamable HTTP's plain `tools/call`, answered by the transport itself.
//!
//! For each stateless request rmcp's service parses the message again, builds a server
//! service with a peer, spawns its loop and the handler as tasks, and serialises the result
//! as a tree. For a plain call ([`McpServer::plain_call`]) none of that changes the answer,
//! so [`McpHttpService`](crate::McpHttpService) runs the tool itself: the message read
//! straight from its text ([`tools_call_text::read`]), the call spawned as one task that
//! the client's disconnect cancels (as rmcp's request token does), the result written with
//! its structured content spliced from its text ([`structured_text::to_vec`]).
//!
//! The answer is rmcp's, byte for byte: the same JSON-RPC message, `200` with
//! `Content-Type: application/json`. To keep it so, the transport takes this path only for
//! requests that rmcp would let through to that answer, checked here conservatively: a
//! request any of these checks is unsure of goes to rmcp, which answers or refuses it.
//! - the configuration is stateless, with JSON responses and without
//!   `stateless_protocol_metadata_required`;
//! - `Accept` lists `application/json` and `text/event-stream` plainly, `Content-Type` is
//!   `application/json`;
//! - `Host` is one of `allowed_hosts` (compared as rmcp compares them), and there is no
//!   `Origin`;
//! - `MCP-Protocol-Version` is absent or a known revision before 2026-07-28, and there is no
//!   `Mcp-Method` or `Mcp-Name` header (the SEP-2243 checks of revision 2026-07-28).

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use rmcp::{
    model::{ClientJsonRpcMessage, ClientRequest, ProtocolVersion, ServerJsonRpcMessage},
    transport::StreamableHttpServerConfig,
};

use crate::{
    http_response::{HttpResponse, plain_response},
    server::{McpServer, PlainCall},
    structured_text, tools_call_text,
};

/// The part of a streamable HTTP configuration that decides the plain path, made once.
#[derive(Debug)]
pub(crate) struct PlainHttp {
    /// `allowed_hosts`, normalised as rmcp normalises them; empty allows every host.
    allowed_hosts: Vec<Authority>,
}

/// A host and port, the host without brackets and in lower case (rmcp's normal form).
#[derive(Debug, PartialEq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn new(host: &str, port: Option<u16>) -> Self {
        Self {
            host: host
                .trim_matches('[')
                .trim_matches(']')
                .to_ascii_lowercase(),
            port,
        }
    }

    /// An entry of `allowed_hosts`: an authority, or else a bare host.
    fn allowed(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        if entry.is_empty() {
            return None;
        }
        Some(match http::uri::Authority::try_from(entry) {
            Ok(authority) => Self::new(authority.host(), authority.port_u16()),
            Err(_) => Self::new(entry, None),
        })
    }
}

impl PlainHttp {
    /// `Some` when `config` lets plain calls be answered here: stateless, JSON responses,
    /// per-request protocol metadata not required.
    pub(crate) fn new(config: &StreamableHttpServerConfig) -> Option<Self> {
        (!config.legacy_session_mode
            && config.json_response
            && !config.stateless_protocol_metadata_required)
            .then(|| Self {
                allowed_hosts: config
                    .allowed_hosts
                    .iter()
                    .filter_map(|entry| Authority::allowed(entry))
                    .collect(),
            })
    }

    /// Whether rmcp would surely let a `tools/call` with these headers through to its
    /// handler and answer it as JSON (see the module doc).
    pub(crate) fn admits(&self, parts: &http::request::Parts) -> bool {
        let headers = &parts.headers;
        accepts_json_and_events(headers)
            && content_type_is_json(headers)
            && !headers.contains_key(http::header::ORIGIN)
            && !headers.contains_key("mcp-method")
            && !headers.contains_key("mcp-name")
            && revision_before_2026(headers)
            && self.host_allowed(parts)
    }

    fn host_allowed(&self, parts: &http::request::Parts) -> bool {
        let authority = match parts.headers.get(http::header::HOST) {
            Some(host) => host
                .to_str()
                .ok()
                .and_then(|host| http::uri::Authority::try_from(host).ok()),
            None => parts.uri.authority().cloned(),
        };
        let Some(authority) = authority else {
            return false;
        };
        let host = Authority::new(authority.host(), authority.port_u16());
        self.allowed_hosts.is_empty()
            || self.allowed_hosts.iter().any(|allowed| {
                allowed.host == host.host && allowed.port.is_none_or(|port| host.port == Some(port))
            })
    }
}

/// `Accept` names both JSON and server-sent events as plain entries (no parameters, no
/// quotes: rmcp reads those too, but this check need not).
fn accepts_json_and_events(headers: &http::HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(http::header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        if value.contains('"') {
            return false;
        }
        for entry in value.split(',').map(str::trim) {
            json |= entry.eq_ignore_ascii_case("application/json");
            events |= entry.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

fn content_type_is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// No `MCP-Protocol-Version` (rmcp then takes 2025-03-26), or a known revision before
/// 2026-07-28: rmcp's handler then strips a result as for a legacy peer.
fn revision_before_2026(headers: &http::HeaderMap) -> bool {
    let Some(value) = headers.get("mcp-protocol-version") else {
        return true;
    };
    value.to_str().is_ok_and(|version| {
        version < ProtocolVersion::V_2026_07_28.as_str()
            && ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|known| known.as_str() == version)
    })
}

/// A plain call read from `body`, with its JSON-RPC id; `None` when the body is not one.
pub(crate) fn read(server: &McpServer, body: &[u8]) -> Option<(rmcp::model::RequestId, PlainCall)> {
    let ClientJsonRpcMessage::Request(request) = tools_call_text::read(body)? else {
        return None;
    };
    let ClientRequest::CallToolRequest(mut call) = request.request else {
        return None;
    };
    // A stateless request's client declared nothing (rmcp gives it default capabilities).
    let call = server.plain_call(&mut call, false)?;
    Some((request.id, call))
}

/// Runs `call` and answers it as rmcp answers a stateless call in JSON.
pub(crate) async fn answer(
    server: McpServer,
    id: rmcp::model::RequestId,
    call: PlainCall,
    parts: http::request::Parts,
) -> HttpResponse {
    // The call runs in a task of its own, as rmcp runs a handler: when the client goes away
    // and this future is dropped, the call is cancelled rather than dropped, so a
    // long-running operation is cancelled and the call is counted.
    let disconnected = tokio_util::sync::CancellationToken::new();
    let cancelled = disconnected.clone();
    let on_drop = disconnected.drop_guard();
    // Boxed: the call's state is large, and the task's future is moved as it is spawned.
    let running = tokio::spawn(async move {
        Box::pin(server.run_plain(call, Some(&parts), cancelled.cancelled_owned())).await
    });
    let result = running.await;
    on_drop.disarm();
    let Ok(result) = result else {
        return plain_response(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error: the tool call ended without an answer",
        );
    };
    let mut message = ServerJsonRpcMessage::response(result, id);
    match structured_text::to_vec(&mut message) {
        Ok(body) => {
            let mut response = http::Response::new(Full::new(Bytes::from(body)).boxed());
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(error) => plain_response(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            format!("Internal Server Error: the answer could not be written: {error}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> http::request::Parts {
        let mut request = http::Request::post("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).expect("request").into_parts().0
    }

    const PLAIN: [(&str, &str); 4] = [
        ("host", "localhost:8080"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2025-06-18"),
    ];

    fn with(change: (&str, Option<&str>)) -> http::request::Parts {
        let mut headers: Vec<(&str, &str)> = PLAIN
            .iter()
            .copied()
            .filter(|(name, _)| *name != change.0)
            .collect();
        if let Some(value) = change.1 {
            headers.push((change.0, value));
        }
        parts(&headers)
    }

    /// Only requests rmcp would surely answer as JSON take the plain path; anything unsure
    /// goes to rmcp.
    #[test]
    fn the_plain_path_takes_only_what_rmcp_would_answer() {
        let plain = PlainHttp::new(&McpServer::stateless_http_config()).expect("stateless");
        assert!(plain.admits(&parts(&PLAIN)));
        let admitted = [
            ("mcp-protocol-version", None),
            ("mcp-protocol-version", Some("2025-03-26")),
            ("mcp-protocol-version", Some("2025-11-25")),
            ("content-type", Some("Application/JSON; charset=utf-8")),
            ("accept", Some("text/event-stream,application/json")),
            ("host", Some("127.0.0.1")),
            ("host", Some("[::1]:9")),
        ];
        for (name, value) in admitted {
            assert!(plain.admits(&with((name, value))), "{name}: {value:?}");
        }
        let refused = [
            ("mcp-protocol-version", Some("2026-07-28")),
            ("mcp-protocol-version", Some("2024-01-01")),
            ("content-type", Some("text/plain")),
            ("content-type", None),
            ("accept", Some("application/json")),
            ("accept", Some("application/json, text/event-stream;q=0")),
            ("accept", None),
            ("host", Some("example.com")),
            ("origin", Some("http://localhost:8080")),
            ("mcp-method", Some("tools/call")),
            ("mcp-name", Some("T")),
        ];
        for (name, value) in refused {
            assert!(!plain.admits(&with((name, value))), "{name}: {value:?}");
        }
        // A quoted parameter anywhere in `Accept` (rmcp reads it; this check leaves it to
        // rmcp): the e2e test takes rmcp's path so, to compare both.
        let mut quoted = PLAIN.to_vec();
        quoted.push(("accept", "text/plain;q=\"0.5\""));
        assert!(!plain.admits(&parts(&quoted)));
        let mut config = McpServer::stateless_http_config();
        config.allowed_hosts = vec!["Example.COM".into(), "api.test:8443".into()];
        let plain = PlainHttp::new(&config).expect("stateless");
        assert!(plain.admits(&with(("host", Some("example.com:1")))));
        assert!(plain.admits(&with(("host", Some("api.test:8443")))));
        assert!(!plain.admits(&with(("host", Some("api.test:8444")))));
        assert!(!plain.admits(&with(("host", Some("localhost")))));
        assert!(PlainHttp::new(&McpServer::session_http_config()).is_none());
        assert!(
            PlainHttp::new(&McpServer::stateless_http_config().with_json_response(false)).is_none()
        );
    }
}
