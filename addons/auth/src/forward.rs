//! The call hook that tells the gRPC backend who the caller is: claims of the validated access
//! token as metadata.

use std::sync::Arc;

use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};

use tonic_mcp::{CallContext, Refusal};

use crate::Principal;

/// A call hook that sends claims of the caller's validated access token to the gRPC backend
/// as metadata: each `(claim, metadata key)` pair adds the claim's text
/// ([`Principal::claim_text`](Principal::claim_text)) under the key.
///
/// The access token itself is not forwarded (see
/// [`AuthorizationBuilder::pass_token_through`](crate::AuthorizationBuilder::pass_token_through)).
/// Pairs whose key is not a valid ASCII metadata key are ignored, as are claims the token
/// lacks and values that are not visible ASCII. Without authorization (stdio, or HTTP
/// without [`Authorization`](crate::Authorization)) the hook adds nothing.
///
/// ```
/// use tonic_mcp::McpServer;
/// use tonic_mcp_auth::forward_claims;
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
        let Some(principal) = Principal::of(context) else {
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
    use serde_json::{Map, Value};

    use super::*;

    #[test]
    fn forwards_claims_as_metadata() {
        let parts = {
            let (mut parts, ()) = http::Request::builder()
                .uri("/mcp")
                .body(())
                .unwrap_or_else(|e| unreachable!("{e}"))
                .into_parts();
            let claims = serde_json::json!({
                "sub": "user-7", "scope": "tasks.read tasks.write", "exp": 17, "name": "Zoë"
            });
            let Value::Object(claims) = claims else {
                unreachable!("claims are an object")
            };
            parts.extensions.insert(Principal::from_claims(claims));
            parts
        };
        let meta = Map::new();
        let context = CallContext::new("T", "/a.B/C", Some(&parts), &meta);
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
