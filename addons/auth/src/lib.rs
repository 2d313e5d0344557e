//! MCP authorization for the streamable HTTP transport of a [`tonic_mcp`] server: the endpoint
//! as an OAuth 2.1 resource server, as the MCP specification's authorization chapter describes,
//! through a tower layer in front of it ([`Authorization::layer`]).
//!
//! - Protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and
//!   its path-suffixed form (`/.well-known/oauth-protected-resource/mcp`), naming the
//!   authorization server, the scopes and the bearer method.
//! - Every request carries `Authorization: Bearer <access token>`; a missing or invalid token
//!   gets 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, a token without a scope a
//!   request needs gets 403 `insufficient_scope` with the scopes needed.
//! - JWT access tokens are checked against the authorization server's keys (JWKS, found in
//!   its RFC 8414 or OpenID metadata): asymmetric algorithms only, `iss`, `aud` naming this
//!   resource (RFC 8707), `exp` and `nbf` with a small leeway. Opaque tokens are checked by
//!   RFC 7662 introspection when it is configured.
//! - The access token is not passed on to the gRPC backend (the specification forbids token
//!   passthrough); [`forward_claims`] sends who the caller is instead.
//!
//! Stdio is unaffected: a local process has no tokens.

mod challenge;
mod fetch;
mod forward;
mod gate;
mod keys;
mod layer;
mod principal;
mod token;

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
    time::Duration,
};

use serde_json::{Value, json};

pub use forward::forward_claims;
pub use layer::{AuthorizationLayer, Authorized};
pub use principal::Principal;
pub use token::MAX_TOKEN_BYTES;

pub(crate) use challenge::Refused;
use token::{Checks, Introspection};

use tonic_mcp::{HttpResponse, ServedTool};

/// The well-known path of protected resource metadata (RFC 9728 section 3).
pub const PROTECTED_RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Default clock skew allowed on `exp` and `nbf`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// Default shortest time between two fetches of the authorization server's keys: a token
/// naming an unknown key triggers at most one fetch per interval.
pub const DEFAULT_JWKS_MIN_REFRESH: Duration = Duration::from_secs(30);

/// Default age after which cached keys are fetched again before use.
pub const DEFAULT_JWKS_MAX_AGE: Duration = Duration::from_secs(3600);

/// The streamable HTTP endpoint as an OAuth 2.1 resource server. Build one with
/// [`Authorization::builder`] and put its [`layer`](Authorization::layer) in front of a
/// server's endpoint; cloning is cheap.
///
/// ```no_run
/// use tonic_mcp::McpServer;
/// use tonic_mcp_auth::{Authorization, forward_claims};
/// use tonic_mcp_serve::ServeHttp as _;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let authorization = Authorization::builder(
///     "https://id.example.com/realms/platform", // the authorization server's issuer
///     "https://mcp.example.com/mcp",            // this endpoint, as clients reach it
/// )
/// .required_scope("mcp")
/// .write_scope("tasks.write")
/// .build()?;
/// let server = McpServer::builder("tasks", "1.0.0")
///     .on_call(forward_claims([("sub", "x-user-id")]))
///     .build();
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
/// let layer = authorization.layer(&server);
/// server
///     .serve_http_with(listener, McpServer::stateless_http_config(), layer)
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Authorization {
    inner: Arc<Inner>,
}

struct Inner {
    issuers: Vec<String>,
    resource: String,
    audiences: Vec<String>,
    metadata_url: String,
    required: Vec<String>,
    read_only: Vec<String>,
    write: Vec<String>,
    extra_scopes: Vec<String>,
    leeway: Duration,
    pass_token: bool,
    keys: keys::KeySource,
    introspection: Option<Introspection>,
    http: fetch::HttpClient,
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorization")
            .field("issuer", &self.inner.issuers[0])
            .field("resource", &self.inner.resource)
            .field("audiences", &self.inner.audiences)
            .field("required", &self.inner.required)
            .finish_non_exhaustive()
    }
}

/// Settings of an [`Authorization`]; made by [`Authorization::builder`].
#[derive(Debug, Clone)]
pub struct AuthorizationBuilder {
    issuer: String,
    resource: String,
    audiences: Vec<String>,
    required: Vec<String>,
    read_only: Vec<String>,
    write: Vec<String>,
    extra_scopes: Vec<String>,
    leeway: Duration,
    jwks_uri: Option<String>,
    min_refresh: Duration,
    max_age: Duration,
    pass_token: bool,
    introspection: Option<(Option<String>, String, String)>,
}

impl Authorization {
    /// Settings for tokens of the authorization server `issuer` (its issuer identifier,
    /// `https://…`), for this endpoint at `resource`: the URL clients use, such as
    /// `https://mcp.example.com/mcp`, which is also the audience tokens must name.
    pub fn builder(issuer: impl Into<String>, resource: impl Into<String>) -> AuthorizationBuilder {
        AuthorizationBuilder {
            issuer: issuer.into(),
            resource: resource.into(),
            audiences: Vec::new(),
            required: Vec::new(),
            read_only: Vec::new(),
            write: Vec::new(),
            extra_scopes: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            jwks_uri: None,
            min_refresh: DEFAULT_JWKS_MIN_REFRESH,
            max_age: DEFAULT_JWKS_MAX_AGE,
            pass_token: false,
            introspection: None,
        }
    }

    /// The resource URL (RFC 9728 `resource`).
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The URL of this resource's protected resource metadata, as `WWW-Authenticate` names
    /// it: the well-known path inserted between the resource URL's host and path.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// How many times the authorization server's keys were fetched so far.
    pub fn key_fetches(&self) -> u64 {
        self.inner.keys.fetches()
    }

    /// Whether the `Authorization` header stays on requests for call hooks to forward.
    pub(crate) fn passes_token(&self) -> bool {
        self.inner.pass_token
    }

    /// The scopes a call of `tool` needs beyond those every request needs: those of read-only
    /// or of other tools, then the tool's own.
    pub(crate) fn tool_scopes(&self, tool: &ServedTool) -> Vec<String> {
        let mut scopes: Vec<String> = Vec::new();
        let read_only = tool
            .annotations()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        let policy = if read_only {
            &self.inner.read_only
        } else {
            &self.inner.write
        };
        let declared = tool.required_scopes().map(str::to_owned);
        for scope in policy.iter().cloned().chain(declared) {
            if !scopes.contains(&scope) && !self.inner.required.contains(&scope) {
                scopes.push(scope);
            }
        }
        scopes
    }

    /// The protected resource metadata document for a server listing `tools`.
    pub(crate) fn metadata_document(&self, tool_scopes: &HashMap<String, Vec<String>>) -> Value {
        let inner = &self.inner;
        let scopes: BTreeSet<&String> = inner
            .required
            .iter()
            .chain(&inner.read_only)
            .chain(&inner.write)
            .chain(&inner.extra_scopes)
            .chain(tool_scopes.values().flatten())
            .collect();
        json!({
            "resource": inner.resource,
            "authorization_servers": [inner.issuers[0]],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        })
    }

    /// Who the request's bearer token speaks for, with the scopes every request needs.
    pub(crate) async fn authenticate(
        &self,
        parts: &http::request::Parts,
    ) -> Result<Principal, Refused> {
        let mut values = parts.headers.get_all(http::header::AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            if query_has_token(parts.uri.query()) {
                tracing::debug!("an access token in the query string was ignored");
            }
            return Err(Refused::NoToken);
        };
        if values.next().is_some() {
            return Err(Refused::InvalidToken(
                "more than one Authorization header".to_owned(),
            ));
        }
        if value.len() > MAX_TOKEN_BYTES + 16 {
            return Err(Refused::InvalidToken(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        let value = value.to_str().map_err(|_| {
            Refused::InvalidToken("the Authorization header is not visible ASCII".to_owned())
        })?;
        let token = match value.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return Err(Refused::NoToken),
        };
        if token.is_empty() {
            return Err(Refused::NoToken);
        }
        let inner = &self.inner;
        let checks = Checks {
            issuers: &inner.issuers,
            audiences: &inner.audiences,
            leeway: inner.leeway,
            keys: &inner.keys,
            introspection: inner.introspection.as_ref(),
            http: &inner.http,
        };
        let principal = checks.validate(token).await?;
        let missing: Vec<&String> = inner
            .required
            .iter()
            .filter(|scope| !principal.has_scope(scope))
            .collect();
        if !missing.is_empty() {
            return Err(Refused::InsufficientScope {
                needed: inner.required.clone(),
                description: format!(
                    "this server needs scope {}",
                    missing
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        Ok(principal)
    }

    /// The refusal of a call of `tool` when the token lacks one of `needed`.
    pub(crate) fn check_tool(
        &self,
        principal: &Principal,
        tool: &str,
        needed: &[String],
    ) -> Result<(), Refused> {
        let missing: Vec<String> = needed
            .iter()
            .filter(|scope| !principal.has_scope(scope))
            .map(|scope| format!("`{scope}`"))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Refused::InsufficientScope {
            needed: self.inner.required.iter().chain(needed).cloned().collect(),
            description: format!("tool `{tool}` needs scope {}", missing.join(", ")),
        })
    }

    /// The HTTP answer to a refused request.
    pub(crate) fn refuse(&self, refused: &Refused) -> HttpResponse {
        refused.response(&self.inner.metadata_url, &self.inner.required)
    }
}

impl AuthorizationBuilder {
    /// The audience tokens must name, in place of the resource URL (repeat for several).
    /// Some providers put an API identifier there (`api://…` in Microsoft Entra ID).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// A scope every request needs (repeat for several). Offered in 401 challenges.
    pub fn required_scope(mut self, scope: impl Into<String>) -> Self {
        self.required.push(scope.into());
        self
    }

    /// A scope calls of read-only tools (`readOnlyHint: true`) need.
    pub fn read_only_scope(mut self, scope: impl Into<String>) -> Self {
        self.read_only.push(scope.into());
        self
    }

    /// A scope calls of every other tool need.
    pub fn write_scope(mut self, scope: impl Into<String>) -> Self {
        self.write.push(scope.into());
        self
    }

    /// More scopes to list in `scopes_supported`, beyond those required somewhere.
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.extra_scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default [`DEFAULT_LEEWAY`]).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The authorization server's JWKS URL, instead of the one its metadata names.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// How often the keys may be fetched at most (on a token naming an unknown key), and
    /// how old cached keys may get before they are fetched again.
    pub fn jwks_refresh(mut self, min_interval: Duration, max_age: Duration) -> Self {
        self.min_refresh = min_interval;
        self.max_age = max_age;
        self
    }

    /// Check tokens that are not JWTs by RFC 7662 introspection at `endpoint` (`None`: the
    /// one the authorization server's metadata names), authenticated as this client. Each
    /// request with an opaque token costs one introspection call.
    pub fn introspection(
        mut self,
        endpoint: Option<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some((endpoint, client_id.into(), client_secret.into()));
        self
    }

    /// Leave the `Authorization` header on requests, so that a call hook such as
    /// [`forward_headers`](tonic_mcp::forward_headers) can pass the access token to the gRPC
    /// backend. Off by default, and best left off: the MCP specification forbids token
    /// passthrough, because a token meant for this server lets the backend act as the
    /// caller anywhere that accepts it. Forward claims with
    /// [`forward_claims`] instead.
    pub fn pass_token_through(mut self, pass: bool) -> Self {
        self.pass_token = pass;
        self
    }

    /// Checks the settings and makes the HTTP client for the authorization server.
    ///
    /// # Errors
    ///
    /// [`InvalidSettings`] when the issuer or the resource is not an absolute `https` URL
    /// (`http` is allowed for loopback hosts only), when a scope is not an OAuth scope token,
    /// or when the HTTP client cannot be made.
    pub fn build(self) -> Result<Authorization, InvalidSettings> {
        let invalid = InvalidSettings;
        check_url("issuer", &self.issuer).map_err(invalid)?;
        check_url("resource", &self.resource).map_err(invalid)?;
        if let Some(uri) = &self.jwks_uri {
            check_url("JWKS URI", uri).map_err(invalid)?;
        }
        if let Some((Some(endpoint), _, _)) = &self.introspection {
            check_url("introspection endpoint", endpoint).map_err(invalid)?;
        }
        for scope in self
            .required
            .iter()
            .chain(&self.read_only)
            .chain(&self.write)
            .chain(&self.extra_scopes)
        {
            if !tonic_mcp_schema::tools::is_scope_token(scope) {
                return Err(invalid(format!("{scope:?} is not an OAuth scope token")));
            }
        }
        // The RustCrypto provider, also when another crate turned on jsonwebtoken's
        // aws-lc-rs backend (which would leave no default and panic at the first token).
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let http = fetch::HttpClient::new().map_err(invalid)?;
        let (origin, path) = keys::split_origin(&self.resource);
        let metadata_url = format!(
            "{origin}{PROTECTED_RESOURCE_METADATA_PATH}{}",
            path.trim_end_matches('/')
        );
        let audiences = if self.audiences.is_empty() {
            vec![self.resource.clone()]
        } else {
            self.audiences
        };
        // A token's `iss` must be the issuer identifier exactly (RFC 9068 section 4).
        let issuers = vec![self.issuer.clone()];
        Ok(Authorization {
            inner: Arc::new(Inner {
                keys: keys::KeySource::new(
                    self.issuer.clone(),
                    self.jwks_uri,
                    http.clone(),
                    self.min_refresh,
                    self.max_age,
                ),
                issuers,
                resource: self.resource,
                audiences,
                metadata_url,
                required: self.required,
                read_only: self.read_only,
                write: self.write,
                extra_scopes: self.extra_scopes,
                leeway: self.leeway,
                pass_token: self.pass_token,
                introspection: self
                    .introspection
                    .map(|(endpoint, client_id, client_secret)| Introspection {
                        endpoint,
                        client_id,
                        client_secret,
                    }),
                http,
            }),
        })
    }
}

/// An absolute `https` URL, or `http` to a loopback host; no fragment.
fn check_url(what: &str, url: &str) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("the {what} {url:?} is not a URL: {e}"))?;
    let host = uri.host().unwrap_or_default();
    match uri.scheme_str() {
        Some("https") if !host.is_empty() => {}
        Some("http") if is_loopback(host) => {}
        Some("http") => {
            return Err(format!(
                "the {what} {url:?} must use https (http is allowed for loopback hosts only)"
            ));
        }
        _ => return Err(format!("the {what} {url:?} is not an absolute https URL")),
    }
    if url.contains('#') {
        return Err(format!("the {what} {url:?} must not have a fragment"));
    }
    Ok(())
}

/// Whether a URL's host (a name, or an address: an IPv6 one in brackets) names this machine.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

/// Why [`AuthorizationBuilder::build`] refused the settings: an issuer or resource that is not
/// an `https` URL, a scope that is not an OAuth scope token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSettings(pub String);

impl std::fmt::Display for InvalidSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid authorization settings: {}", self.0)
    }
}

impl std::error::Error for InvalidSettings {}

/// Whether a query string carries `access_token` (RFC 6750 section 2.3, which MCP forbids).
fn query_has_token(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|pair| pair.starts_with("access_token=")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_checked() {
        let build = |issuer: &str, resource: &str| Authorization::builder(issuer, resource).build();
        assert!(build("https://id.example.com", "https://mcp.example.com/mcp").is_ok());
        assert!(build("http://127.0.0.1:9000", "http://localhost:8080/mcp").is_ok());
        let error = build("http://id.example.com", "https://mcp.example.com/mcp")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("must use https"), "{error}");
        assert!(build("https://id.example.com", "mcp.example.com/mcp").is_err());
        let bad_scope = Authorization::builder("https://a.example", "https://b.example/mcp")
            .write_scope("two words")
            .build();
        assert!(bad_scope.is_err());
    }

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        let auth = Authorization::builder("https://id.example.com/", "https://mcp.example.com/mcp")
            .build()
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(
            auth.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(auth.inner.issuers, ["https://id.example.com/"]);
        assert!(query_has_token(Some("a=1&access_token=x")));
        assert!(!query_has_token(Some("token=x")));
    }
}
