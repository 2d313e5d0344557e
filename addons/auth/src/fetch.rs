//! The HTTP client that talks to the authorization server: hyper over rustls (ring, the
//! provider tonic's TLS already uses, configured here rather than installed process-wide), the
//! system's trust store, bounded time and bounded bodies.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::{Client, connect::HttpConnector};

/// Largest metadata, JWKS or introspection answer read (1 MiB).
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// How long one exchange (connecting, sending, reading the answer) may take.
const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub(crate) struct HttpClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl HttpClient {
    pub(crate) fn new() -> Result<Self, String> {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(certificate);
        }
        if roots.is_empty() {
            tracing::warn!(
                "no trusted CA certificates found; https requests to the authorization server will fail (set SSL_CERT_FILE)"
            );
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS settings: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .build();
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build(connector);
        Ok(Self { client })
    }

    /// GETs `url` and reads its JSON answer.
    pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
    ) -> Result<T, String> {
        let request = http::Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Full::default())
            .map_err(|e| format!("GET {url}: {e}"))?;
        self.exchange(url, request).await
    }

    /// POSTs `form` to `url` with HTTP Basic client authentication (RFC 6749 section 2.3.1)
    /// and reads its JSON answer.
    pub(crate) async fn post_form_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        (client_id, secret): (&str, &str),
        form: &[(&str, &str)],
    ) -> Result<T, String> {
        use base64::Engine as _;
        let credentials = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form_encode(client_id),
            form_encode(secret)
        ));
        let body: Vec<String> = form
            .iter()
            .map(|(key, value)| format!("{}={}", form_encode(key), form_encode(value)))
            .collect();
        let request = http::Request::post(url)
            .header(http::header::ACCEPT, "application/json")
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::AUTHORIZATION, format!("Basic {credentials}"))
            .body(Full::new(Bytes::from(body.join("&"))))
            .map_err(|e| format!("POST {url}: {e}"))?;
        self.exchange(url, request).await
    }

    async fn exchange<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        request: http::Request<Full<Bytes>>,
    ) -> Result<T, String> {
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| format!("{url}: {}", error_chain(&e)))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("{url} answered {status}"));
            }
            Limited::new(response.into_body(), MAX_DOCUMENT_BYTES)
                .collect()
                .await
                .map(|body| body.to_bytes())
                .map_err(|e| format!("{url}: {e} (at most {MAX_DOCUMENT_BYTES} bytes are read)"))
        };
        let body = tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| format!("{url} did not answer within {TIMEOUT:?}"))??;
        serde_json::from_slice(&body).map_err(|e| format!("{url} sent no valid document: {e}"))
    }
}

/// `application/x-www-form-urlencoded` encoding of one name or value.
fn form_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                encoded.push(char::from(byte));
            }
            b' ' => encoded.push('+'),
            _ => encoded.push_str(&format!("%{byte:02X}")),
        }
    }
    encoded
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("a b+c/é"), "a+b%2Bc%2F%C3%A9");
        assert_eq!(form_encode("token_type_hint"), "token_type_hint");
    }
}
