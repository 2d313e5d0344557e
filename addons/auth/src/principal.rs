//! Who a validated access token speaks for.

use std::{fmt, sync::Arc};

use serde_json::{Map, Value};

/// The claims of a validated access token: what a request under
/// [`Authorization`](crate::Authorization) is allowed to do and on whose behalf.
///
/// Over streamable HTTP it sits in the request's extensions, where [`Principal::of`] finds it
/// for call hooks. Its `Debug` output names the subject, the client and the scopes, never
/// other claims.
#[derive(Clone)]
pub struct Principal {
    claims: Arc<Map<String, Value>>,
    scopes: Arc<[String]>,
}

impl Principal {
    /// The principal of a call's request, when it came over streamable HTTP through the
    /// [`AuthorizationLayer`](crate::AuthorizationLayer).
    pub fn of<'a>(call: &tonic_mcp::CallContext<'a>) -> Option<&'a Principal> {
        call.http_parts()?.extensions.get()
    }

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
}
