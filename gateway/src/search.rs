//! Hybrid tool search's settings (`--search-embeddings…`, `[tool_search.embeddings]`) and its
//! metrics.

use std::path::PathBuf;

use serde::Deserialize;

use crate::error::Error;
use crate::metrics::{Metrics, register};

/// The embeddings endpoint of hybrid tool search, as the command line or the config file says
/// it; the API key is read from the environment when the gateway starts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchEmbeddings {
    /// `--search-embeddings`, `url`: the OpenAI-shaped API's base URL (`…/v1`) or its
    /// `/embeddings` URL.
    pub url: String,
    /// `--search-embeddings-model`, `model`.
    pub model: String,
    /// `--search-embeddings-key-env`, `api_key_env`: the environment variable holding the
    /// API key (none is sent without it).
    pub api_key_env: Option<String>,
    /// `--search-embeddings-cache`, `cache_dir`: where vectors are kept between runs (default
    /// `$XDG_CACHE_HOME/grpc-mcp-gateway/embeddings`, or under `$HOME/.cache`).
    pub cache_dir: Option<PathBuf>,
    /// `batch_size`: documents per request (64).
    pub batch_size: Option<usize>,
    /// `requests_per_second`: the background embedding's bound (4).
    pub requests_per_second: Option<f64>,
}

impl SearchEmbeddings {
    /// The endpoint's settings, its events counted by `metrics`.
    ///
    /// # Errors
    ///
    /// The API key's variable is named and not set, or a metric cannot be registered.
    pub(crate) fn embeddings(
        &self,
        metrics: Option<&Metrics>,
    ) -> Result<tonic_mcp_search::Embeddings, Error> {
        let api_key = match &self.api_key_env {
            Some(name) => Some(std::env::var(name).map_err(|_| {
                Error::new(format!(
                    "--search-embeddings-key-env names {name}, which is not set"
                ))
            })?),
            None => None,
        };
        let mut embeddings = tonic_mcp_search::Embeddings::new(&self.url, &self.model)
            .api_key(api_key)
            .batch_size(self.batch_size.unwrap_or(64))
            .requests_per_second(self.requests_per_second.unwrap_or(4.0));
        if let Some(dir) = self.cache_dir.clone().or_else(default_cache_dir) {
            embeddings = embeddings.cache_dir(dir);
        }
        if let Some(metrics) = metrics {
            let documents = register(
                metrics,
                prometheus::IntCounterVec::new(
                    prometheus::Opts::new(
                        "mcp_tool_search_documents_total",
                        "Tool search documents given a vector, by source: the embeddings \
                         endpoint, or the cache (on disk or from an earlier index).",
                    ),
                    &["source"],
                ),
            )?;
            let errors = register(
                metrics,
                prometheus::IntCounterVec::new(
                    prometheus::Opts::new(
                        "mcp_tool_search_embedding_errors_total",
                        "Failed requests to the embeddings endpoint, by stage (documents, \
                         query); a failed query is ranked by keywords alone.",
                    ),
                    &["stage"],
                ),
            )?;
            embeddings = embeddings.on_event(move |event| match event {
                tonic_mcp_search::EmbeddingEvent::Embedded(n) => {
                    documents.with_label_values(&["endpoint"]).inc_by(n as u64)
                }
                tonic_mcp_search::EmbeddingEvent::FromCache(n) => {
                    documents.with_label_values(&["cache"]).inc_by(n as u64);
                }
                tonic_mcp_search::EmbeddingEvent::Failed { stage, .. } => {
                    errors.with_label_values(&[stage]).inc();
                }
                _ => {}
            });
        }
        Ok(embeddings)
    }
}

fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("grpc-mcp-gateway").join("embeddings"))
}
