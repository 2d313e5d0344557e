//! Access token validation: JWTs (RFC 9068) against the authorization server's keys, opaque
//! tokens by RFC 7662 introspection.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, Validation, errors::ErrorKind};
use serde_json::{Map, Value};

use super::{
    challenge::Refused,
    fetch::HttpClient,
    keys::{KeyError, KeySource},
    principal::Principal,
};

/// Longest token accepted, in bytes: a JWT with a few kilobytes of claims fits; anything
/// larger is refused before it is parsed.
pub const MAX_TOKEN_BYTES: usize = 8192;

/// The signature algorithms an access token may use: asymmetric only (never `none`, never an
/// HMAC, whose key a resource server would have to share).
pub(crate) const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// RFC 7662 introspection of opaque tokens.
#[derive(Clone)]
pub(crate) struct Introspection {
    /// The endpoint; `None`: the one the authorization server's metadata names.
    pub(crate) endpoint: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

/// What a token is checked against.
pub(crate) struct Checks<'a> {
    pub(crate) issuers: &'a [String],
    pub(crate) audiences: &'a [String],
    pub(crate) leeway: Duration,
    pub(crate) keys: &'a KeySource,
    pub(crate) introspection: Option<&'a Introspection>,
    pub(crate) http: &'a HttpClient,
}

impl Checks<'_> {
    /// The principal `token` speaks for, or why it is refused.
    pub(crate) async fn validate(&self, token: &str) -> Result<Principal, Refused> {
        let invalid = |reason: String| Refused::InvalidToken(reason);
        if token.len() > MAX_TOKEN_BYTES {
            return Err(invalid(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        if token.bytes().filter(|&b| b == b'.').count() != 2 {
            return match self.introspection {
                Some(introspection) => self.introspect(introspection, token).await,
                None => Err(invalid(
                    "the token is not a JWT, and this server accepts JWT access tokens only"
                        .to_owned(),
                )),
            };
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| invalid(format!("the token is not a well-formed JWT: {e}")))?;
        check_header(&header).map_err(invalid)?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(invalid(format!(
                "tokens signed with {:?} are not accepted; the accepted algorithms are {}",
                header.alg,
                ALGORITHMS.map(|a| format!("{a:?}")).join(", ")
            )));
        }
        let key = match self.keys.key(header.kid.as_deref(), header.alg).await {
            Ok(key) => key,
            Err(KeyError::Unknown(reason)) => return Err(invalid(reason)),
            Err(KeyError::Unavailable(reason)) => return Err(Refused::Unavailable(reason)),
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(self.issuers);
        validation.set_audience(self.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway.as_secs();
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, key.key(), &validation)
            .map_err(|e| invalid(describe(e.kind(), self)))?;
        // jsonwebtoken also takes an array of issuers; RFC 9068 section 4 asks for the one
        // issuer identifier, as a string.
        self.check_issuer(data.claims.get("iss")).map_err(invalid)?;
        Ok(Principal::from_claims(data.claims))
    }

    /// `iss` exactly as the authorization server is configured: a string, compared byte for
    /// byte (RFC 9068 section 4; no trailing slash added or removed). Absent is for the caller
    /// to decide (JWTs must have it; introspection answers may leave it out).
    fn check_issuer(&self, iss: Option<&Value>) -> Result<(), String> {
        match iss {
            None => Ok(()),
            Some(Value::String(iss)) if self.issuers.iter().any(|issuer| issuer == iss) => Ok(()),
            Some(_) => Err(format!(
                "the token was issued by another authorization server: iss must be {}",
                self.issuers.first().map_or("", String::as_str)
            )),
        }
    }

    async fn introspect(
        &self,
        introspection: &Introspection,
        token: &str,
    ) -> Result<Principal, Refused> {
        let endpoint = match &introspection.endpoint {
            Some(endpoint) => endpoint.clone(),
            None => self
                .keys
                .metadata()
                .await
                .map_err(Refused::Unavailable)?
                .introspection_endpoint
                .ok_or_else(|| {
                    Refused::Unavailable(
                        "the authorization server's metadata lists no introspection_endpoint"
                            .to_owned(),
                    )
                })?,
        };
        let claims: Map<String, Value> = self
            .http
            .post_form_json(
                &endpoint,
                (&introspection.client_id, &introspection.client_secret),
                &[("token", token), ("token_type_hint", "access_token")],
            )
            .await
            .map_err(|e| Refused::Unavailable(format!("introspection: {e}")))?;
        let invalid = |reason: &str| Err(Refused::InvalidToken(reason.to_owned()));
        if claims.get("active") != Some(&Value::Bool(true)) {
            return invalid("the token is not active (introspection)");
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let leeway = self.leeway.as_secs();
        let time = |claim: &str| claims.get(claim).and_then(Value::as_u64);
        if time("exp").is_some_and(|exp| exp + leeway < now) {
            return invalid("the token expired");
        }
        if time("nbf").is_some_and(|nbf| nbf > now + leeway) {
            return invalid("the token is not valid yet (nbf)");
        }
        if let Err(reason) = self.check_issuer(claims.get("iss")) {
            return invalid(&reason);
        }
        let audiences: Vec<&str> = match claims.get("aud") {
            Some(Value::String(aud)) => vec![aud.as_str()],
            Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences
            .iter()
            .any(|aud| self.audiences.iter().any(|a| a == aud))
        {
            return invalid(&format!(
                "the token is not meant for this resource: its audience (aud) must name {}",
                self.audiences.join(" or ")
            ));
        }
        Ok(Principal::from_claims(claims))
    }
}

/// The `typ` values of an access token: RFC 9068's `at+jwt` (with or without the
/// `application/` prefix, any case), and plain `JWT` or none, which most authorization servers
/// still issue. Any other type (an ID token's or a logout token's own type, for example) says
/// the token is not an access token.
const ACCESS_TOKEN_TYPES: [&str; 3] = ["at+jwt", "application/at+jwt", "jwt"];

/// Refuses a header this server cannot honour: a `typ` other than an access token's, and any
/// `crit` (RFC 7515 section 4.1.11: a token naming extensions the recipient does not
/// understand must be refused, and this server understands none).
fn check_header(header: &jsonwebtoken::Header) -> Result<(), String> {
    if let Some(typ) = &header.typ
        && !ACCESS_TOKEN_TYPES
            .iter()
            .any(|accepted| typ.eq_ignore_ascii_case(accepted))
    {
        return Err(format!(
            "the token's type (typ) is {typ:?}, not an access token's (at+jwt or JWT)"
        ));
    }
    if let Some(critical) = &header.crit {
        return Err(format!(
            "the token marks header parameters as critical (crit: {}) that this server does \
             not understand",
            critical.join(", ")
        ));
    }
    Ok(())
}

/// Why `jsonwebtoken` refused a token, for the client.
fn describe(kind: &ErrorKind, checks: &Checks<'_>) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token expired (exp)".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
        ErrorKind::InvalidIssuer => format!(
            "the token was issued by another authorization server: iss must be {}",
            checks.issuers.first().map_or("", String::as_str)
        ),
        ErrorKind::InvalidAudience => format!(
            "the token is not meant for this resource: its audience (aud) must name {}",
            checks.audiences.join(" or ")
        ),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm does not match its key".to_owned()
        }
        other => format!("the token is not valid: {other:?}"),
    }
}
