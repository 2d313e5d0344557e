//! Stateless streamable HTTP's plain `tools/call` ([`McpServer::plain_call`]), answered by
//! [`McpHttpService`](crate::transport::http::McpHttpService) itself: read straight from its
//! text ([`tools_call_text::read`]), run as one task that the client's disconnect cancels,
//! written with its structured content spliced from its text ([`structured_text::to_vec`]).
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
//! - no `Mcp-Param-*` header;
//! - either `MCP-Protocol-Version` is absent or a known revision before 2026-07-28, with no
//!   `Mcp-Method` or `Mcp-Name` header and no revision or client capabilities in `_meta`;
//! - or it is 2026-07-28, named again in `_meta` with the client's capabilities (what rmcp
//!   requires of a call of that revision), `Mcp-Method` is `tools/call` and `Mcp-Name` names
//!   the tool plainly (SEP-2243, as rmcp checks them; the schemas this crate serves mark no
//!   argument `x-mcp-header`), and the server supports that revision.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use rmcp::{
    model::{
        ClientJsonRpcMessage, ClientRequest, ProtocolVersion, RequestMetaObject,
        ServerJsonRpcMessage,
    },
    transport::StreamableHttpServerConfig,
};

use crate::{
    call::structured_text,
    server::http_response::{HttpResponse, plain_response},
    server::{McpServer, PlainCall},
    transport::tools_call_text,
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
        let entry = Some(entry.trim()).filter(|entry| !entry.is_empty())?;
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

    /// How rmcp would surely let a `tools/call` with these headers through to its handler
    /// and answer it as JSON, if it would (see the module doc).
    pub(crate) fn admits(&self, parts: &http::request::Parts) -> Option<Lifecycle> {
        let headers = &parts.headers;
        let fits = accepts_json_and_events(headers)
            && content_type_is_json(headers)
            && !headers.contains_key(http::header::ORIGIN)
            && !headers
                .keys()
                .any(|name| name.as_str().starts_with("mcp-param-"))
            && self.host_allowed(parts);
        if !fits {
            return None;
        }
        let standard = headers.contains_key(MCP_METHOD) || headers.contains_key(MCP_NAME);
        match headers
            .get("mcp-protocol-version")
            .map(|value| value.to_str())
        {
            // rmcp takes 2025-03-26 when no revision is named.
            None => (!standard).then_some(Lifecycle::Legacy),
            Some(Ok(version)) if version == ProtocolVersion::V_2026_07_28.as_str() => {
                (single(headers, MCP_METHOD) == Some("tools/call")
                    && single(headers, MCP_NAME).is_some_and(|name| !name.starts_with("=?")))
                .then_some(Lifecycle::PerRequest)
            }
            Some(Ok(version)) => (!standard
                && version < ProtocolVersion::V_2026_07_28.as_str()
                && ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|known| known.as_str() == version))
            .then_some(Lifecycle::Legacy),
            Some(Err(_)) => None,
        }
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

/// The SEP-2243 headers of revision 2026-07-28.
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";

/// The one value of header `name`, as text: `None` when it is absent, repeated or not text.
fn single<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    values
        .next()
        .is_none()
        .then(|| value.to_str().ok())
        .flatten()
}

/// How a request that rmcp lets through takes its revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// A revision before 2026-07-28, from `MCP-Protocol-Version` (2025-03-26 without it):
    /// rmcp's handler strips the result as for a legacy peer.
    Legacy,
    /// Revision 2026-07-28, named by `MCP-Protocol-Version` and by the call's `_meta`, which
    /// also carries the client's capabilities; `Mcp-Method` is `tools/call`, and `Mcp-Name`
    /// (written plainly) names the tool, as rmcp checks.
    PerRequest,
}

/// A plain call read from `body`, with its JSON-RPC id; `None` when the body is not one.
pub(crate) fn read(
    server: &McpServer,
    body: &[u8],
    lifecycle: Lifecycle,
    parts: &http::request::Parts,
) -> Option<(rmcp::model::RequestId, PlainCall)> {
    let ClientJsonRpcMessage::Request(request) = tools_call_text::read(body)? else {
        return None;
    };
    let ClientRequest::CallToolRequest(mut call) = request.request else {
        return None;
    };
    let per_request = lifecycle == Lifecycle::PerRequest;
    if per_request {
        let current = ProtocolVersion::V_2026_07_28;
        let meta = call.extensions.get::<RequestMetaObject>()?;
        let named = single(&parts.headers, MCP_NAME) == Some(call.params.name.as_ref());
        if !named
            || meta.protocol_version().as_ref() != Some(&current)
            || !rmcp::ServerHandler::supported_protocol_versions(server).contains(&current)
        {
            return None;
        }
    }
    // A stateless request's client declared nothing but what its `_meta` says (rmcp gives
    // it default capabilities).
    let call = server.plain_call(&mut call, false, per_request)?;
    Some((request.id, call))
}

/// Runs `call` and answers it as rmcp answers a stateless call in JSON.
pub(crate) async fn answer(
    server: McpServer,
    id: rmcp::model::RequestId,
    call: PlainCall,
    parts: http::request::Parts,
) -> HttpResponse {
    // A task of its own, as rmcp's handler: when the client goes away and this future is
    // dropped, the call is cancelled rather than dropped (its operation cancelled, and counted).
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
        let legacy = Some(Lifecycle::Legacy);
        assert_eq!(plain.admits(&parts(&PLAIN)), legacy);
        // One header changed from a plain request, and what the plain path makes of it.
        let cases = [
            ("mcp-protocol-version", None, legacy),
            ("mcp-protocol-version", Some("2025-03-26"), legacy),
            ("mcp-protocol-version", Some("2025-11-25"), legacy),
            (
                "content-type",
                Some("Application/JSON; charset=utf-8"),
                legacy,
            ),
            ("accept", Some("text/event-stream,application/json"), legacy),
            ("host", Some("127.0.0.1"), legacy),
            ("host", Some("[::1]:9"), legacy),
            ("mcp-protocol-version", Some("2026-07-28"), None),
            ("mcp-protocol-version", Some("2024-01-01"), None),
            ("content-type", Some("text/plain"), None),
            ("content-type", None, None),
            ("accept", Some("application/json"), None),
            (
                "accept",
                Some("application/json, text/event-stream;q=0"),
                None,
            ),
            ("accept", None, None),
            ("host", Some("example.com"), None),
            ("origin", Some("http://localhost:8080"), None),
            ("mcp-method", Some("tools/call"), None),
            ("mcp-name", Some("T"), None),
            ("mcp-param-region", Some("eu"), None),
        ];
        for (name, value, taken) in cases {
            assert_eq!(
                plain.admits(&with((name, value))),
                taken,
                "{name}: {value:?}"
            );
        }
        // A quoted parameter anywhere in `Accept` (rmcp reads it; this check leaves it to
        // rmcp): the e2e test takes rmcp's path so, to compare both.
        let mut quoted = PLAIN.to_vec();
        quoted.push(("accept", "text/plain;q=\"0.5\""));
        assert_eq!(plain.admits(&parts(&quoted)), None);
        // Revision 2026-07-28: `Mcp-Method` is `tools/call` and `Mcp-Name` is written plainly,
        // once each.
        let current = |extra: &[(&'static str, &'static str)]| {
            let mut headers = with(("mcp-protocol-version", Some("2026-07-28")));
            for (name, value) in extra {
                headers
                    .headers
                    .append(*name, http::HeaderValue::from_static(value));
            }
            plain.admits(&headers)
        };
        let method = ("mcp-method", "tools/call");
        assert_eq!(
            current(&[method, ("mcp-name", "T")]),
            Some(Lifecycle::PerRequest)
        );
        assert_eq!(current(&[("mcp-name", "T")]), None);
        assert_eq!(current(&[method]), None);
        assert_eq!(
            current(&[("mcp-method", "tools/list"), ("mcp-name", "T")]),
            None
        );
        assert_eq!(current(&[method, method, ("mcp-name", "T")]), None);
        assert_eq!(current(&[method, ("mcp-name", "=?base64?VA==?=")]), None);
        let mut config = McpServer::stateless_http_config();
        config.allowed_hosts = vec!["Example.COM".into(), "api.test:8443".into()];
        let plain = PlainHttp::new(&config).expect("stateless");
        assert_eq!(plain.admits(&with(("host", Some("example.com:1")))), legacy);
        assert_eq!(plain.admits(&with(("host", Some("api.test:8443")))), legacy);
        assert_eq!(plain.admits(&with(("host", Some("api.test:8444")))), None);
        assert_eq!(plain.admits(&with(("host", Some("localhost")))), None);
        assert!(PlainHttp::new(&McpServer::session_http_config()).is_none());
        assert!(
            PlainHttp::new(&McpServer::stateless_http_config().with_json_response(false)).is_none()
        );
    }
}
