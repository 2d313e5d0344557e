//! The authorization server's metadata and signing keys: discovered from its issuer URL
//! (RFC 8414, then OpenID Connect Discovery), cached, and re-fetched when a token names a key
//! the cache lacks, at most once per interval.

use std::{
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use jsonwebtoken::{
    Algorithm, DecodingKey,
    jwk::{AlgorithmParameters, JwkSet, KeyAlgorithm, PublicKeyUse},
};
use serde::Deserialize;

use super::fetch::HttpClient;

/// What the authorization server's metadata says that a resource server uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
}

/// One usable verification key.
struct Key {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one: the key then verifies that algorithm only.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

#[derive(Default)]
struct Cached {
    keys: Vec<Arc<Key>>,
    fetched: Option<Instant>,
}

/// Why no key could be found for a token.
#[derive(Debug)]
pub(crate) enum KeyError {
    /// No key of the server's set matches the token's `kid` and `alg`.
    Unknown(String),
    /// The server's metadata or keys could not be fetched, and none are cached.
    Unavailable(String),
}

/// The key source of one issuer.
pub(crate) struct KeySource {
    issuer: String,
    /// Set by the operator; otherwise read from the metadata.
    jwks_uri: Option<String>,
    http: HttpClient,
    /// Shortest time between two fetches of the key set.
    min_refresh: Duration,
    /// Keys older than this are fetched again before use (rotation removes keys too).
    max_age: Duration,
    cached: RwLock<Cached>,
    /// Serialises fetches and remembers the metadata and when the last fetch started.
    fetching: tokio::sync::Mutex<(Option<ServerMetadata>, Option<Instant>)>,
    fetches: AtomicU64,
}

impl KeySource {
    pub(crate) fn new(
        issuer: String,
        jwks_uri: Option<String>,
        http: HttpClient,
        min_refresh: Duration,
        max_age: Duration,
    ) -> Self {
        Self {
            issuer,
            jwks_uri,
            http,
            min_refresh,
            max_age,
            cached: RwLock::new(Cached::default()),
            fetching: tokio::sync::Mutex::new((None, None)),
            fetches: AtomicU64::new(0),
        }
    }

    /// How many times the key set was fetched.
    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The key that verifies a token with header `kid` and `alg`.
    pub(crate) async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKeyRef, KeyError> {
        if let Some(found) = self.cached_key(kid, alg, true) {
            return Ok(found);
        }
        let mut fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(found) = self.cached_key(kid, alg, true) {
            return Ok(found);
        }
        let recent = fetching
            .1
            .is_some_and(|last| last.elapsed() < self.min_refresh);
        if recent {
            return self
                .cached_key(kid, alg, false)
                .ok_or_else(|| unknown(kid, alg));
        }
        fetching.1 = Some(Instant::now());
        match self.fetch(&mut fetching.0).await {
            Ok(keys) => {
                let mut cached = self.cached.write().unwrap_or_else(|e| e.into_inner());
                *cached = Cached {
                    keys,
                    fetched: Some(Instant::now()),
                };
            }
            Err(error) => {
                tracing::warn!(issuer = %self.issuer, %error, "fetching the authorization server's keys failed");
                // Stale keys still verify while the server is unreachable.
                return self
                    .cached_key(kid, alg, false)
                    .ok_or(KeyError::Unavailable(error));
            }
        }
        self.cached_key(kid, alg, false)
            .ok_or_else(|| unknown(kid, alg))
    }

    /// The authorization server's metadata, fetched once.
    pub(crate) async fn metadata(&self) -> Result<ServerMetadata, String> {
        let mut fetching = self.fetching.lock().await;
        if let Some(metadata) = &fetching.0 {
            return Ok(metadata.clone());
        }
        let metadata = self.discover().await?;
        fetching.0 = Some(metadata.clone());
        Ok(metadata)
    }

    fn cached_key(&self, kid: Option<&str>, alg: Algorithm, fresh: bool) -> Option<DecodingKeyRef> {
        let cached = self.cached.read().unwrap_or_else(|e| e.into_inner());
        let fetched = cached.fetched?;
        if fresh && fetched.elapsed() > self.max_age {
            return None;
        }
        cached
            .keys
            .iter()
            .find(|key| {
                kid.is_none_or(|kid| key.kid.as_deref() == Some(kid))
                    && key.alg.is_none_or(|key_alg| key_alg == alg)
                    && key.key.family() == alg.family()
            })
            .map(|key| DecodingKeyRef(Arc::clone(key)))
    }

    async fn fetch(&self, metadata: &mut Option<ServerMetadata>) -> Result<Vec<Arc<Key>>, String> {
        let uri = match &self.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                if metadata.is_none() {
                    *metadata = Some(self.discover().await?);
                }
                metadata
                    .as_ref()
                    .and_then(|m| m.jwks_uri.clone())
                    .ok_or_else(|| {
                        format!(
                            "the metadata of {} lists no `jwks_uri`; set it explicitly",
                            self.issuer
                        )
                    })?
            }
        };
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let set: JwkSet = self.http.get_json(&uri).await?;
        let keys: Vec<Arc<Key>> = set
            .keys
            .iter()
            .filter(|jwk| {
                // Encryption keys and symmetric keys never verify a signature here.
                jwk.common.public_key_use != Some(PublicKeyUse::Encryption)
                    && !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
            })
            .filter_map(|jwk| {
                let alg = match jwk.common.key_algorithm {
                    None => None,
                    Some(alg) => Some(signing_algorithm(alg)?),
                };
                Some(Arc::new(Key {
                    kid: jwk.common.key_id.clone(),
                    alg,
                    key: DecodingKey::from_jwk(jwk).ok()?,
                }))
            })
            .collect();
        tracing::info!(issuer = %self.issuer, jwks_uri = %uri, keys = keys.len(), "fetched the authorization server's signing keys");
        Ok(keys)
    }

    /// RFC 8414 metadata, then OpenID Connect Discovery (for an issuer with a path: both
    /// with the well-known segment inserted before the path, then OIDC's appended form).
    async fn discover(&self) -> Result<ServerMetadata, String> {
        let issuer = self.issuer.trim_end_matches('/');
        let (origin, path) = split_origin(issuer);
        let mut candidates = vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
        ];
        if !path.is_empty() {
            candidates.push(format!("{issuer}/.well-known/openid-configuration"));
        }
        let mut errors = Vec::new();
        for url in candidates {
            match self.http.get_json::<ServerMetadata>(&url).await {
                Ok(metadata) => {
                    // Identical, as tokens' `iss` must be (RFC 8414 section 3.3).
                    if metadata.issuer != self.issuer {
                        return Err(format!(
                            "{url} names issuer {:?}, not {:?} (RFC 8414 section 3.3); \
                             configure the issuer exactly as the authorization server names it",
                            metadata.issuer, self.issuer
                        ));
                    }
                    return Ok(metadata);
                }
                Err(error) => errors.push(error),
            }
        }
        Err(format!(
            "no authorization server metadata for {}: {}",
            self.issuer,
            errors.join("; ")
        ))
    }
}

/// A shared verification key.
#[derive(Clone)]
pub(crate) struct DecodingKeyRef(Arc<Key>);

impl DecodingKeyRef {
    pub(crate) fn key(&self) -> &DecodingKey {
        &self.0.key
    }
}

fn unknown(kid: Option<&str>, alg: Algorithm) -> KeyError {
    KeyError::Unknown(match kid {
        Some(kid) => format!("the authorization server has no {alg:?} key with kid {kid:?}"),
        None => format!("the authorization server has no {alg:?} key"),
    })
}

/// The signature algorithm a JWK's `alg` names; `None` for encryption algorithms.
fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

/// `https://host:port` and the path (empty or starting with `/`) of a URL.
pub(crate) fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(slash) => url.split_at(after_scheme + slash),
        None => (url, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_origin_and_path() {
        assert_eq!(
            split_origin("https://id.example.com"),
            ("https://id.example.com", "")
        );
        assert_eq!(
            split_origin("https://id.example.com:8443/realms/a"),
            ("https://id.example.com:8443", "/realms/a")
        );
    }
}
