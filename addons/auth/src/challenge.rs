//! The answers of a resource server that refuses a request: 401 and 403 with a
//! `WWW-Authenticate: Bearer` challenge (RFC 6750 section 3, RFC 9728 section 5.1).

use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt as _, Full};

use tonic_mcp::HttpResponse;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No bearer token in the `Authorization` header (a token in the query string or the
    /// body does not count: the MCP specification forbids both). 401 without an error code,
    /// as RFC 6750 section 3.1 asks.
    NoToken,
    /// The token is malformed, expired, not meant for this resource, or not signed by the
    /// authorization server. 401 `invalid_token`.
    InvalidToken(String),
    /// The token is valid but lacks scopes. 403 `insufficient_scope` with the scopes needed.
    InsufficientScope {
        /// Every scope the request needs, those the token has included (RFC 6750 asks for
        /// the scope "necessary to access the requested resource").
        needed: Vec<String>,
        /// What was asked for, for the message.
        description: String,
    },
    /// The authorization server could not be reached to check the token: 503, no challenge
    /// (the token is not known to be bad). The reason goes to the log only: it names the
    /// authorization server's addresses and how connecting failed, which are not the
    /// caller's to know before it is authenticated.
    Unavailable(String),
    /// The body cannot be read as the JSON-RPC messages whose tool calls are checked: 400 with
    /// a JSON-RPC parse error. The gate fails closed: what it cannot read is not let through.
    Malformed(String),
}

impl Refused {
    /// The HTTP answer; `metadata_url` is this resource's protected resource metadata,
    /// `scope` the scopes every request needs (offered in a 401 challenge).
    pub(crate) fn response(&self, metadata_url: &str, scope: &[String]) -> HttpResponse {
        let (status, error, description, scope) = match self {
            Self::NoToken => (
                StatusCode::UNAUTHORIZED,
                None,
                "an OAuth access token is required: send it as `Authorization: Bearer <token>`"
                    .to_owned(),
                scope,
            ),
            Self::InvalidToken(reason) => (
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                reason.clone(),
                scope,
            ),
            Self::InsufficientScope {
                needed,
                description,
            } => (
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                description.clone(),
                needed.as_slice(),
            ),
            Self::Unavailable(reason) => {
                tracing::warn!(%reason, "the token cannot be checked: the authorization server is unavailable");
                let body = serde_json::json!({
                    "error": "temporarily_unavailable",
                    "error_description": "the token cannot be checked now; try again later",
                });
                return json_response(StatusCode::SERVICE_UNAVAILABLE, &body, None);
            }
            Self::Malformed(reason) => {
                let body = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": {"code": -32700, "message": reason},
                });
                return json_response(StatusCode::BAD_REQUEST, &body, None);
            }
        };
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", quoted(metadata_url));
        if !scope.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", quoted(&scope.join(" "))));
        }
        if let Some(error) = error {
            challenge.push_str(&format!(
                ", error=\"{error}\", error_description=\"{}\"",
                quoted(&description)
            ));
        }
        let body = serde_json::json!({
            "error": error.unwrap_or("invalid_request"),
            "error_description": description,
        });
        json_response(status, &body, HeaderValue::from_str(&challenge).ok())
    }
}

/// `text` as the content of an RFC 9110 quoted-string: visible ASCII and spaces, with `"` and
/// `\` (never produced by a scope token, possible in a description) replaced by `'`.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' ' | '!'..='~' => c,
            _ => '?',
        })
        .collect()
}

pub(crate) fn json_response(
    status: StatusCode,
    body: &serde_json::Value,
    challenge: Option<HeaderValue>,
) -> HttpResponse {
    let mut response = http::Response::new(Full::new(body.to_string().into()).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(challenge) = challenge {
        headers.insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(response: &HttpResponse) -> &str {
        response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    #[test]
    fn challenges_follow_rfc_6750_and_9728() {
        let url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
        let none = Refused::NoToken.response(url, &[]);
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&none),
            format!("Bearer resource_metadata=\"{url}\"")
        );

        let invalid = Refused::InvalidToken("the token expired at \"x\"".to_owned())
            .response(url, &["mcp".to_owned()]);
        assert_eq!(invalid.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&invalid),
            format!(
                "Bearer resource_metadata=\"{url}\", scope=\"mcp\", error=\"invalid_token\", \
                 error_description=\"the token expired at 'x'\""
            )
        );

        let scope = Refused::InsufficientScope {
            needed: vec!["mcp".to_owned(), "tasks.write".to_owned()],
            description: "tool `T` needs scope `tasks.write`".to_owned(),
        }
        .response(url, &["mcp".to_owned()]);
        assert_eq!(scope.status(), StatusCode::FORBIDDEN);
        assert!(
            challenge(&scope).contains("scope=\"mcp tasks.write\", error=\"insufficient_scope\""),
            "{}",
            challenge(&scope)
        );

        let down = Refused::Unavailable("no answer".to_owned()).response(url, &[]);
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(down.headers().get(header::WWW_AUTHENTICATE).is_none());
    }

    /// An unauthenticated caller learns that the token cannot be checked now, not the
    /// authorization server's address or how connecting to it failed (those are logged).
    #[tokio::test]
    async fn an_unavailable_authorization_server_is_not_described_to_the_caller() {
        let reason = "fetching https://auth.internal.example/.well-known/oauth-authorization-server: \
                      connection refused";
        let down = Refused::Unavailable(reason.to_owned()).response(
            "https://mcp.example.com/.well-known/oauth-protected-resource",
            &[],
        );
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = down
            .into_body()
            .collect()
            .await
            .map(|body| body.to_bytes())
            .unwrap_or_default();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(
            body,
            serde_json::json!({
                "error": "temporarily_unavailable",
                "error_description": "the token cannot be checked now; try again later",
            })
        );
    }
}
