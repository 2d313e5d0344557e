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
use crate::http_response::HttpResponse;

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
        Self {
            authorization,
            tools,
            metadata,
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// The protected resource metadata, for a `GET` of its well-known path (bare, or with
    /// the resource's path appended, RFC 9728 section 3.1). No token is needed.
    pub(crate) fn metadata_response(&self, parts: &Parts) -> Option<HttpResponse> {
        let path = parts.uri.path();
        let rest = path.strip_prefix(PROTECTED_RESOURCE_METADATA_PATH)?;
        if !(rest.is_empty() || rest.starts_with('/')) || parts.method != http::Method::GET {
            return None;
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
    pub(crate) fn check_message(&self, parts: &Parts, message: &[u8]) -> Result<(), Refused> {
        #[derive(serde::Deserialize)]
        struct Call<'a> {
            #[serde(borrow)]
            method: Option<&'a str>,
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
        let Ok(call) = serde_json::from_slice::<Call<'_>>(message) else {
            return Ok(());
        };
        if call.method != Some("tools/call") {
            return Ok(());
        }
        let Some(params) = call.params else {
            return Ok(());
        };
        let Some(tool) = params.name else {
            return Ok(());
        };
        let target = params
            .arguments
            .and_then(|arguments| arguments.name)
            .and_then(|name| name.as_str().map(str::to_owned));
        let (Some(listed), Some(principal)) = (
            (self.tools)(&tool, target.as_deref()),
            parts.extensions.get::<Principal>(),
        ) else {
            return Ok(());
        };
        let needed = self.authorization.tool_scopes(&listed);
        if needed.is_empty() {
            return Ok(());
        }
        self.authorization
            .check_tool(principal, &listed.name, &needed)
            .inspect_err(|refused| {
                tracing::info!(tool, reason = ?refused, "tool call refused by authorization");
            })
    }

    /// The HTTP answer to a refused request.
    pub(crate) fn refuse(&self, refused: &Refused) -> HttpResponse {
        self.authorization.refuse(refused)
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
