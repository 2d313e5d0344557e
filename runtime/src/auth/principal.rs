//! Who a validated access token speaks for, and the call hook that tells the gRPC backend.

use std::{fmt, sync::Arc};

use serde_json::{Map, Value};
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};

use crate::context::{CallContext, Refusal};

/// The claims of a validated access token: what a request under
/// [`Authorization`](crate::Authorization) is allowed to do and on whose behalf.
///
/// Over streamable HTTP it sits in the request's extensions, where
/// [`CallContext::principal`](crate::CallContext::principal) finds it for call hooks. Its
/// `Debug` output names the subject, the client and the scopes, never other claims.
#[derive(Clone)]
pub struct Principal {
    claims: Arc<Map<String, Value>>,
    scopes: Arc<[String]>,
}

impl Principal {
    /// The claims of a token the caller has already validated (a JWT's payload, or an RFC
    /// 7662 introspection answer). Scopes are read from `scope` (a space-separated string)
    /// or, failing that, `scp` (a string or an array, as Microsoft Entra ID and Okta send).
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let words = |value: &Value| -> Vec<String> {
            match value {
                Value::String(text) => text.split_ascii_whitespace().map(str::to_owned).collect(),
                Value::Array(items) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let scopes = claims
            .get("scope")
            .or_else(|| claims.get("scp"))
            .map(words)
            .unwrap_or_default();
        Self {
            claims: Arc::new(claims),
            scopes: scopes.into(),
        }
    }

    /// The `sub` claim: the user, or the client for a client-credentials grant.
    pub fn subject(&self) -> Option<&str> {
        self.text("sub")
    }

    /// The OAuth client the token was issued to: `client_id` (RFC 9068), or `azp`, `cid`
    /// (Okta) or `appid` (Microsoft Entra ID v1) when the token has no `client_id`.
    pub fn client_id(&self) -> Option<&str> {
        ["client_id", "azp", "cid", "appid"]
            .into_iter()
            .find_map(|claim| self.text(claim))
    }

    /// The `iss` claim.
    pub fn issuer(&self) -> Option<&str> {
        self.text("iss")
    }

    /// The scopes the token grants.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }

    /// One claim, as the token carried it.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// A claim as metadata text: a string as it is, a number or boolean in JSON, an array of
    /// strings joined by spaces; `scope` (and `scp`) give [`scopes`](Self::scopes) so joined.
    pub fn claim_text(&self, name: &str) -> Option<String> {
        if name == "scope" || name == "scp" {
            return (!self.scopes.is_empty()).then(|| self.scopes.join(" "));
        }
        match self.claims.get(name)? {
            Value::String(text) => Some(text.clone()),
            value @ (Value::Number(_) | Value::Bool(_)) => Some(value.to_string()),
            Value::Array(items) => {
                let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                (words.len() == items.len() && !words.is_empty()).then(|| words.join(" "))
            }
            Value::Null | Value::Object(_) => None,
        }
    }

    /// Who the token speaks for, to tell callers apart (sessions, tasks): the issuer with
    /// the subject, or with the client when there is no subject.
    pub(crate) fn owner(&self) -> String {
        format!(
            "{}\u{0}{}\u{0}{}",
            self.issuer().unwrap_or_default(),
            self.subject().unwrap_or_default(),
            self.client_id().unwrap_or_default()
        )
    }

    fn text(&self, claim: &str) -> Option<&str> {
        self.claims.get(claim).and_then(Value::as_str)
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.subject())
            .field("client_id", &self.client_id())
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// A call hook that sends claims of the caller's validated access token to the gRPC backend
/// as metadata: each `(claim, metadata key)` pair adds the claim's text
/// ([`Principal::claim_text`]) under the key.
///
/// The access token itself is not forwarded (see
/// [`AuthorizationBuilder::pass_token_through`](crate::AuthorizationBuilder::pass_token_through)).
/// Pairs whose key is not a valid ASCII metadata key are ignored, as are claims the token
/// lacks and values that are not visible ASCII. Without authorization (stdio, or HTTP
/// without [`Authorization`](crate::Authorization)) the hook adds nothing.
///
/// ```
/// use tonic_mcp::{McpServer, forward_claims};
///
/// let server = McpServer::builder("items", "1.0.0")
///     .on_call(forward_claims([("sub", "x-user-id"), ("client_id", "x-client-id"), ("scope", "x-scopes")]))
///     .build();
/// # let _ = server;
/// ```
pub fn forward_claims<I, C, K>(
    pairs: I,
) -> impl Fn(&CallContext<'_>, &mut MetadataMap) -> Result<(), Refusal> + Clone + Send + Sync + 'static
where
    I: IntoIterator<Item = (C, K)>,
    C: Into<String>,
    K: AsRef<str>,
{
    let pairs: Vec<(String, AsciiMetadataKey)> = pairs
        .into_iter()
        .filter_map(|(claim, key)| {
            let key = AsciiMetadataKey::from_bytes(key.as_ref().to_ascii_lowercase().as_bytes());
            Some((claim.into(), key.ok()?))
        })
        .collect();
    let pairs = Arc::new(pairs);
    move |context: &CallContext<'_>, metadata: &mut MetadataMap| {
        let Some(principal) = context.principal() else {
            return Ok(());
        };
        for (claim, key) in pairs.iter() {
            // Visible ASCII and spaces only: metadata values carry bytes above 0x7f as they
            // are, which a backend would read as Latin-1.
            let value = principal
                .claim_text(claim)
                .filter(|text| text.bytes().all(|b| (0x20..0x7f).contains(&b)))
                .and_then(|text| AsciiMetadataValue::try_from(text).ok());
            if let Some(value) = value {
                metadata.insert(key.clone(), value);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(claims: Value) -> Principal {
        let Value::Object(claims) = claims else {
            unreachable!("claims are an object")
        };
        Principal::from_claims(claims)
    }

    #[test]
    fn reads_scope_strings_and_scp_arrays() {
        let p = principal(serde_json::json!({"sub": "u1", "scope": "a  b", "client_id": "c"}));
        assert_eq!(p.scopes(), ["a", "b"]);
        assert!(p.has_scope("b") && !p.has_scope("c"));
        assert_eq!((p.subject(), p.client_id()), (Some("u1"), Some("c")));
        let p = principal(serde_json::json!({"scp": ["x", "y"], "azp": "app"}));
        assert_eq!(p.scopes(), ["x", "y"]);
        assert_eq!(p.client_id(), Some("app"));
        assert_eq!(p.claim_text("scp").as_deref(), Some("x y"));
        assert_eq!(p.claim_text("missing"), None);
        let p = principal(serde_json::json!({"sub": "u1", "email": "someone@example.com"}));
        let debug = format!("{p:?}");
        assert!(
            debug.contains("u1") && !debug.contains("someone"),
            "{debug}"
        );
    }

    #[test]
    fn forwards_claims_as_metadata() {
        let parts = {
            let (mut parts, ()) = http::Request::builder()
                .uri("/mcp")
                .body(())
                .unwrap_or_else(|e| unreachable!("{e}"))
                .into_parts();
            parts.extensions.insert(principal(serde_json::json!({
                "sub": "user-7", "scope": "tasks.read tasks.write", "exp": 17, "name": "Zoë"
            })));
            parts
        };
        let meta = Map::new();
        let context = CallContext {
            tool: "T",
            rpc_path: "/a.B/C",
            http: Some(&parts),
            meta: &meta,
        };
        let hook = forward_claims([
            ("sub", "X-User-Id"),
            ("scope", "x-scopes"),
            ("exp", "x-exp"),
            ("name", "x-name"),
            ("absent", "x-absent"),
            ("sub", "bad key"),
        ]);
        let mut metadata = MetadataMap::new();
        assert_eq!(hook(&context, &mut metadata), Ok(()));
        let get = |key: &str| metadata.get(key).and_then(|v| v.to_str().ok());
        assert_eq!(get("x-user-id"), Some("user-7"));
        assert_eq!(get("x-scopes"), Some("tasks.read tasks.write"));
        assert_eq!(get("x-exp"), Some("17"));
        // Not visible ASCII: left out rather than mangled.
        assert_eq!(get("x-name"), None);
        assert_eq!(metadata.len(), 3);
    }
}
