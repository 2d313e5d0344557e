//! What the [`AuthorizationLayer`](crate::AuthorizationLayer) asks of every request: a token
//! (authentication, in front of the endpoint), the scopes of the tools a message calls (a
//! check of each message body the endpoint reads), and the protected resource metadata it
//! answers itself.

use std::collections::HashMap;

use http::{StatusCode, request::Parts};
use tonic_mcp::{Caller, HttpResponse, McpServer, plain_response};

use super::{Authorization, PROTECTED_RESOURCE_METADATA_PATH, Principal, Refused, challenge};

/// The authorization state of one HTTP endpoint.
pub(crate) struct Gate {
    authorization: Authorization,
    /// The server, whose tools (served now: they may change while it runs) a call needs the
    /// scopes of, beyond those of every request.
    server: McpServer,
    /// The protected resource metadata document.
    metadata: serde_json::Value,
    /// The resource URL's path, as appended to the well-known path (`/mcp`; empty for a
    /// resource at the root).
    resource_path: String,
}

impl Gate {
    /// The gate of `authorization` in front of `server`'s endpoint; the protected resource
    /// metadata lists the scopes of the tools served now.
    pub(crate) fn new(authorization: Authorization, server: McpServer) -> Self {
        let tool_scopes: HashMap<String, Vec<String>> = server
            .served()
            .iter()
            .map(|tool| (tool.name().to_owned(), authorization.tool_scopes(tool)))
            .filter(|(_, scopes)| !scopes.is_empty())
            .collect();
        let metadata = authorization.metadata_document(&tool_scopes);
        let resource_path = authorization
            .metadata_url()
            .split_once(PROTECTED_RESOURCE_METADATA_PATH)
            .map(|(_, path)| path.to_owned())
            .unwrap_or_default();
        Self {
            authorization,
            server,
            metadata,
            resource_path,
        }
    }

    /// The answer to any request under the well-known prefix: the protected resource metadata
    /// for a `GET` of exactly its two paths (bare, and with the resource's path appended, RFC
    /// 9728 section 3.1), 404 for every other path under it and 405 for other methods. No
    /// token is needed, and nothing under the prefix reaches the MCP endpoint: a proxy's
    /// controls on the endpoint's own path cannot be gone around through it. `None` for paths
    /// outside the prefix.
    pub(crate) fn metadata_response(&self, parts: &Parts) -> Option<HttpResponse> {
        let path = parts.uri.path();
        let rest = path.strip_prefix(PROTECTED_RESOURCE_METADATA_PATH)?;
        if !(rest.is_empty() || rest == self.resource_path) {
            return Some(plain_response(StatusCode::NOT_FOUND, ""));
        }
        if parts.method != http::Method::GET {
            let mut response = plain_response(
                StatusCode::METHOD_NOT_ALLOWED,
                "Method Not Allowed: the protected resource metadata answers GET only",
            );
            response
                .headers_mut()
                .insert(http::header::ALLOW, http::HeaderValue::from_static("GET"));
            return Some(response);
        }
        let mut response = challenge::json_response(StatusCode::OK, &self.metadata, None);
        let headers = response.headers_mut();
        headers.insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("max-age=3600"),
        );
        // Public by design: browser-based clients read it from other origins.
        headers.insert(
            http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
            http::HeaderValue::from_static("*"),
        );
        Some(response)
    }

    /// Authenticates a request: its principal, and the token owner as its [`Caller`] (to whom
    /// the endpoint binds the sessions and tasks it opens), go into the request's extensions,
    /// and its `Authorization` header is removed (unless token passthrough is on).
    pub(crate) async fn admit(&self, parts: &mut Parts) -> Result<(), HttpResponse> {
        let principal = self
            .authorization
            .authenticate(parts)
            .await
            .map_err(|refused| {
                tracing::info!(reason = ?refused, "request refused by authorization");
                self.authorization.refuse(&refused)
            })?;
        if !self.authorization.passes_token() {
            parts.headers.remove(http::header::AUTHORIZATION);
        }
        parts.extensions.insert(Caller::new(principal.owner()));
        parts.extensions.insert(principal);
        Ok(())
    }

    /// Refuses a `tools/call` of a tool whose scopes the token lacks (403
    /// `insufficient_scope`), before anything reaches the backend.
    ///
    /// It fails closed: a body it cannot read as JSON-RPC messages is refused (400), never let
    /// through. It reads the method, the tool's name and, under tool search, the name
    /// `call_tool` calls with `serde_json`, as rmcp and the call read them (escapes decoded:
    /// `"tools\/call"` is `tools/call`), and refuses a message naming any of them twice, so
    /// that what it checks is what runs.
    pub(crate) fn check_message(&self, parts: &Parts, message: &[u8]) -> Option<HttpResponse> {
        let refused = self.check_calls(parts, message).err()?;
        Some(self.authorization.refuse(&refused))
    }

    fn check_calls(&self, parts: &Parts, message: &[u8]) -> Result<(), Refused> {
        for call in read_messages(message)? {
            let Some(Params {
                name: Some(tool),
                arguments,
            }) = call
                .params
                .filter(|_| call.method.as_deref() == Some("tools/call"))
            else {
                continue;
            };
            let target =
                arguments
                    .and_then(|arguments| arguments.name)
                    .and_then(|name| match name {
                        serde_json::Value::String(name) => Some(name),
                        _ => None,
                    });
            // An unknown tool is refused by the call itself, unrun.
            let Some(listed) = self.server.tool_called(&tool, target.as_deref()) else {
                continue;
            };
            let needed = self.authorization.tool_scopes(&listed);
            if needed.is_empty() {
                continue;
            }
            // Every request is admitted with its principal first; none is a refusal.
            let principal = parts
                .extensions
                .get::<Principal>()
                .ok_or(Refused::NoToken)?;
            self.authorization
                .check_tool(principal, listed.name(), &needed)
                .inspect_err(|refused| {
                    tracing::info!(tool, reason = ?refused, "tool call refused by authorization");
                })?;
        }
        Ok(())
    }
}

/// What the gate reads of a JSON-RPC message. serde's derive refuses a member given twice, and
/// every member is owned, so escaped text reads as it does for rmcp.
#[derive(serde::Deserialize)]
struct Message {
    method: Option<String>,
    params: Option<Params>,
}

#[derive(serde::Deserialize)]
struct Params {
    name: Option<String>,
    arguments: Option<Arguments>,
}

#[derive(serde::Deserialize)]
struct Arguments {
    name: Option<serde_json::Value>,
}

/// The messages of a request body: one message, or a batch of them.
///
/// # Errors
///
/// [`Refused::Malformed`] for anything else, a member the gate reads given twice included.
fn read_messages(body: &[u8]) -> Result<Vec<Message>, Refused> {
    let batch = body.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[');
    let read = if batch {
        serde_json::from_slice::<Vec<Message>>(body)
    } else {
        serde_json::from_slice::<Message>(body).map(|message| vec![message])
    };
    read.map_err(|error| {
        tracing::info!(%error, "request refused: the authorization gate cannot read it");
        Refused::Malformed(format!(
            "the request body is not a JSON-RPC message this server can check: {error}"
        ))
    })
}
