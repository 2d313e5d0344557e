//! Authorization in front of the streamable HTTP endpoint: what
//! [`McpHttpService`](crate::McpHttpService) asks of every request when the server has an
//! [`Authorization`].

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use http::{StatusCode, request::Parts};
use rmcp::model::Tool;

use super::{Authorization, PROTECTED_RESOURCE_METADATA_PATH, Principal, Refused, challenge};
use crate::transport::http_response::{HttpResponse, not_found, plain_response};

/// Session owners remembered before those of closed sessions are forgotten.
const OWNERS_PRUNE_AT: usize = 4096;

/// The tool whose scopes a `tools/call` of a name needs now (the server's tools may change
/// while it runs); the second argument is the call's `name` argument, which under tool search
/// names the tool `call_tool` calls.
pub(crate) type ToolLookup = Arc<dyn Fn(&str, Option<&str>) -> Option<Tool> + Send + Sync>;

/// The authorization state of one HTTP service.
pub(crate) struct Gate {
    authorization: Authorization,
    /// The tools served now, whose scopes a call needs beyond those of every request.
    tools: ToolLookup,
    /// The protected resource metadata document.
    metadata: serde_json::Value,
    /// The resource URL's path, as appended to the well-known path (`/mcp`; empty for a
    /// resource at the root).
    resource_path: String,
    /// Who opened each session: a session answers only to the token owner that opened it.
    owners: Mutex<HashMap<String, String>>,
}

impl Gate {
    /// The gate of `authorization`; `listed` are the tools when the service is made, whose
    /// scopes the protected resource metadata lists.
    pub(crate) fn new(authorization: Authorization, tools: ToolLookup, listed: &[Tool]) -> Self {
        let tool_scopes: HashMap<String, Vec<String>> = listed
            .iter()
            .map(|tool| (tool.name.to_string(), authorization.tool_scopes(tool)))
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
            tools,
            metadata,
            resource_path,
            owners: Mutex::new(HashMap::new()),
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
            return Some(not_found());
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

    /// Authenticates a request: its principal goes into the request's extensions, its
    /// `Authorization` header is removed (unless token passthrough is on), and a request
    /// naming a session must come from the session's owner (404 otherwise, as for a session
    /// that does not exist).
    pub(crate) async fn admit(&self, parts: &mut Parts) -> Result<(), HttpResponse> {
        let principal = self
            .authorization
            .authenticate(parts)
            .await
            .map_err(|refused| {
                tracing::info!(reason = ?refused, "request refused by authorization");
                self.authorization.refuse(&refused)
            })?;
        if let Some(session) = session_id(parts) {
            let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
            // Every session is opened through here, so one without an owner is unknown.
            if owners.get(session) != Some(&principal.owner()) {
                tracing::warn!(
                    subject = principal.subject().unwrap_or_default(),
                    "a token used a session another caller opened"
                );
                return Err(challenge::json_response(
                    StatusCode::NOT_FOUND,
                    &serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": null,
                        "error": {"code": -32001, "message": "Session not found"},
                    }),
                    None,
                ));
            }
        }
        if !self.authorization.passes_token() {
            parts.headers.remove(http::header::AUTHORIZATION);
        }
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
    pub(crate) fn check_message(&self, parts: &Parts, message: &[u8]) -> Result<(), Refused> {
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
            let Some(listed) = (self.tools)(&tool, target.as_deref()) else {
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
                .check_tool(principal, &listed.name, &needed)
                .inspect_err(|refused| {
                    tracing::info!(tool, reason = ?refused, "tool call refused by authorization");
                })?;
        }
        Ok(())
    }

    /// The HTTP answer to a refused request.
    pub(crate) fn refuse(&self, refused: &Refused) -> HttpResponse {
        self.authorization.refuse(refused)
    }

    /// How many of the sessions `live` tells are open were opened by `owner`.
    pub(crate) fn sessions_of(&self, owner: &str, live: impl Fn(&str) -> bool) -> usize {
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        owners
            .iter()
            .filter(|(session, opener)| opener.as_str() == owner && live(session))
            .count()
    }

    /// Remembers who opened the session a response names (the answer to `initialize`);
    /// `live` tells which sessions are still open, to forget the others.
    pub(crate) fn record_session(
        &self,
        parts_owner: Option<String>,
        response: &HttpResponse,
        live: impl Fn(&str) -> bool,
    ) {
        let (Some(owner), Some(session)) = (
            parts_owner,
            response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok()),
        ) else {
            return;
        };
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if owners.len() >= OWNERS_PRUNE_AT {
            // Sessions end without telling this map (idle timeout, DELETE).
            owners.retain(|session, _| live(session));
        }
        owners.insert(session.to_owned(), owner);
    }
}

/// The owner of an admitted request, for [`Gate::record_session`].
pub(crate) fn owner(parts: &Parts) -> Option<String> {
    parts.extensions.get::<Principal>().map(Principal::owner)
}

fn session_id(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
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
