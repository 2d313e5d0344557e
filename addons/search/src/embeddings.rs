//! The embeddings endpoint: its settings ([`Embeddings`]) and the client that asks it for
//! vectors, in the OpenAI `/v1/embeddings` shape that OpenAI, Azure OpenAI, Ollama, vLLM,
//! Hugging Face TEI and LiteLLM all speak. Hyper over rustls (ring, the provider tonic's TLS
//! uses, configured here rather than installed process-wide) with the system's trust store.

use std::{fmt, path::PathBuf, sync::Arc, time::Duration};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::{Client, connect::HttpConnector};
use serde_json::{Value, json};

/// The largest answer read: a batch of 64 vectors of 3,072 numbers as JSON text is about 4 MB.
const MAX_ANSWER_BYTES: usize = 32 << 20;

/// Hybrid ranking's embeddings endpoint: where each tool's search document and each query are
/// embedded. Give it to [`ToolSearch::embeddings`](crate::ToolSearch::embeddings).
///
/// ```
/// use std::time::Duration;
/// use tonic_mcp_search::{Embeddings, ToolSearch};
///
/// let search = ToolSearch::new().embeddings(
///     Embeddings::new("http://127.0.0.1:8090/v1", "all-MiniLM-L6-v2")
///         .api_key(std::env::var("EMBEDDINGS_API_KEY").ok())
///         .cache_dir("/var/cache/catalog-mcp/embeddings")
///         .query_timeout(Duration::from_secs(2)),
/// );
/// # let _ = search;
/// ```
#[derive(Clone)]
pub struct Embeddings {
    pub(crate) url: String,
    pub(crate) model: String,
    pub(crate) api_key: Option<String>,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) batch_size: usize,
    pub(crate) requests_per_second: f64,
    pub(crate) query_timeout: Duration,
    pub(crate) events: Option<Arc<dyn Fn(EmbeddingEvent) + Send + Sync>>,
}

impl fmt::Debug for Embeddings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embeddings")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("cache_dir", &self.cache_dir)
            .field("batch_size", &self.batch_size)
            .field("requests_per_second", &self.requests_per_second)
            .field("query_timeout", &self.query_timeout)
            .finish_non_exhaustive()
    }
}

/// What happened to the embeddings, for metrics and logs ([`Embeddings::on_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbeddingEvent {
    /// The endpoint embedded this many tool documents.
    Embedded(usize),
    /// This many tool documents were read from the disk cache instead.
    FromCache(usize),
    /// A request to the endpoint failed; search ranks by keywords until it answers again.
    Failed {
        /// `"documents"` (the background embedding of the tools) or `"query"`.
        stage: &'static str,
        /// Why.
        error: String,
    },
}

impl Embeddings {
    /// The endpoint at `url`, the API's base (`https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`; `/embeddings` is added) or the full URL of its
    /// `/embeddings` path, with the model `model`. Defaults: no API key, no disk cache, batches
    /// of 64 documents, at most 4 requests a second, queries given up after 3 seconds.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        let url = url.into();
        let url = if url.trim_end_matches('/').ends_with("/embeddings") {
            url
        } else {
            format!("{}/embeddings", url.trim_end_matches('/'))
        };
        Self {
            url,
            model: model.into(),
            api_key: None,
            cache_dir: None,
            batch_size: 64,
            requests_per_second: 4.0,
            query_timeout: Duration::from_secs(3),
            events: None,
        }
    }

    /// The bearer token sent with each request (`None`: none is sent).
    #[must_use]
    pub fn api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.filter(|key| !key.is_empty());
        self
    }

    /// Keep the vectors in `dir` too, by model and by each document's hash, so that a restart
    /// or a reload embeds only the documents that changed.
    #[must_use]
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// How many documents one request embeds (at least 1).
    #[must_use]
    pub fn batch_size(mut self, documents: usize) -> Self {
        self.batch_size = documents.max(1);
        self
    }

    /// At most this many background requests a second (queries are not counted).
    #[must_use]
    pub fn requests_per_second(mut self, rate: f64) -> Self {
        self.requests_per_second = if rate.is_finite() && rate > 0.0 {
            rate
        } else {
            4.0
        };
        self
    }

    /// How long a query waits for its vector before it is ranked by keywords alone.
    #[must_use]
    pub fn query_timeout(mut self, timeout: Duration) -> Self {
        self.query_timeout = timeout;
        self
    }

    /// Calls `each` with what happens to the embeddings (counted by metrics).
    #[must_use]
    pub fn on_event(mut self, each: impl Fn(EmbeddingEvent) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(each));
        self
    }

    /// The endpoint's URL, its `/embeddings` path.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    pub(crate) fn event(&self, event: EmbeddingEvent) {
        if let Some(events) = &self.events {
            events(event);
        }
    }
}

/// A client of one endpoint. It spawns its connections on the runtime it is first used on.
pub(crate) struct Endpoint {
    settings: Embeddings,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl Endpoint {
    pub(crate) fn new(settings: Embeddings) -> Result<Self, String> {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(certificate);
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
        Ok(Self { settings, client })
    }

    /// The vectors of `texts`, in their order, within `timeout`.
    pub(crate) async fn embed(
        &self,
        texts: &[&str],
        timeout: Duration,
    ) -> Result<Vec<Vec<f32>>, String> {
        let url = &self.settings.url;
        let body = json!({"model": self.settings.model, "input": texts}).to_string();
        let mut request = http::Request::post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json");
        if let Some(key) = &self.settings.api_key {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("POST {url}: {e}"))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| format!("{url}: {}", error_chain(&e)))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map(|body| body.to_bytes())
                .map_err(|e| format!("{url}: {e}"))?;
            if !status.is_success() {
                let said = serde_json::from_slice::<Value>(&body)
                    .ok()
                    .and_then(|answer| {
                        answer
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                return Err(format!("{url} answered {status} {said}")
                    .trim_end()
                    .to_owned());
            }
            Ok(body)
        };
        let body = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| format!("{url} did not answer within {timeout:?}"))??;
        vectors(&body, texts.len()).map_err(|e| format!("{url} sent no embeddings: {e}"))
    }
}

/// The vectors of an `/embeddings` answer, by each one's `index`.
fn vectors(body: &[u8], expected: usize) -> Result<Vec<Vec<f32>>, String> {
    #[derive(serde::Deserialize)]
    struct Answer {
        data: Vec<Item>,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        index: usize,
        embedding: Vec<f32>,
    }
    let answer: Answer = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let mut vectors = vec![Vec::new(); expected];
    for item in answer.data {
        match vectors.get_mut(item.index) {
            Some(slot) if slot.is_empty() && !item.embedding.is_empty() => {
                *slot = item.embedding;
            }
            _ => return Err(format!("an unexpected or repeated index {}", item.index)),
        }
    }
    let dimensions = vectors.first().map_or(0, Vec::len);
    if vectors
        .iter()
        .any(|v| v.len() != dimensions || dimensions == 0)
    {
        return Err(format!(
            "{expected} vectors of one length were asked for, and not given"
        ));
    }
    Ok(vectors)
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
    fn a_base_url_gains_the_embeddings_path() {
        assert_eq!(
            Embeddings::new("http://h:1/v1/", "m").url(),
            "http://h:1/v1/embeddings"
        );
        assert_eq!(
            Embeddings::new("http://h:1/v1/embeddings", "m").url(),
            "http://h:1/v1/embeddings"
        );
    }

    #[test]
    fn answers_are_read_by_index_and_checked() {
        let body = br#"{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]}"#;
        assert_eq!(vectors(body, 2).unwrap(), [vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert!(vectors(body, 3).is_err(), "one missing");
        let uneven = br#"{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}"#;
        assert!(vectors(uneven, 2).is_err());
        assert!(vectors(br#"{"data":[{"index":5,"embedding":[1]}]}"#, 1).is_err());
    }
}
