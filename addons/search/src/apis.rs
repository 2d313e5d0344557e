//! API families: the services of the served tools, each across its versions
//! (`google.cloud.kms.KeyManagementService` for `google.cloud.kms.v1` and `v1beta1`), with a
//! one-line summary from the service's comment. A query ranks them three ways, fused: by the
//! ranks of their tools, by BM25 over each API as one document of its tools' words, and with
//! hybrid ranking by the mean of their tools' vectors. A model that sees the right API can
//! narrow its search with the `service` filter.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::index::{Document, Index};

/// How far down a ranking a tool still counts for its API.
const DEPTH: usize = 50;
/// Reciprocal rank's constant: an API's best tool at rank `r` (from 0) adds `1 / (K + r)`.
const K: f32 = 2.0;
/// Each further tool of an API adds this share of what the one before it could: an API is
/// found by its best tools, not by how many it has.
const DECAY: f32 = 0.5;

/// How many APIs each of the API rankings fused gives.
const API_DEPTH: usize = 50;
/// Reciprocal rank fusion of the API rankings: rank `r` (from 0) scores
/// `share / (API_RRF_K + r)`, the share 1 but for the ranking by tools.
const API_RRF_K: f32 = 10.0;
/// The ranking by tools' share: the tools' own ranking already speaks through the other two.
/// Chosen on the tuned half of the evaluation set (BENCHMARKS.md).
const BY_TOOLS_SHARE: f32 = 0.5;

/// Every tool's vector and the query's, for the ranking by meaning.
pub(crate) type Meaning<'v> = (&'v [Arc<[f32]>], &'v [f32]);

/// The APIs of an index's tools.
pub(crate) struct Apis {
    /// Per API: its name, its summary and how many tools it has.
    apis: Vec<Api>,
    /// Per tool: its API.
    of_tool: Vec<u32>,
    /// Each API as one document of its tools' words.
    index: Index,
    /// Per API, the unit mean of its tools' vectors, made on the first hybrid search.
    centroids: OnceLock<Vec<Vec<f32>>>,
}

pub(crate) struct Api {
    pub(crate) name: String,
    pub(crate) summary: String,
    pub(crate) tools: usize,
}

impl Apis {
    /// The APIs of tools, given in index order as (API name, the service's comment), with the
    /// tools' `documents`.
    pub(crate) fn new<'t>(
        tools: impl IntoIterator<Item = (String, Option<&'t str>)>,
        documents: &[Document],
    ) -> Apis {
        let mut apis: Vec<Api> = Vec::new();
        let mut by_name: HashMap<String, u32> = HashMap::new();
        let mut of_tool = Vec::new();
        for (name, comment) in tools {
            let next = u32::try_from(apis.len()).unwrap_or(u32::MAX);
            let at = *by_name.entry(name.clone()).or_insert_with(|| {
                apis.push(Api {
                    name,
                    summary: String::new(),
                    tools: 0,
                });
                next
            });
            let api = &mut apis[at as usize];
            api.tools += 1;
            if api.summary.is_empty()
                && let Some(comment) = comment
            {
                api.summary = crate::text::summary(comment);
            }
            of_tool.push(at);
        }
        let mut merged: Vec<Document> = apis
            .iter()
            .map(|_| Document {
                words: Vec::new(),
                stable: true,
                name: Vec::new(),
            })
            .collect();
        for (document, at) in documents.iter().zip(&of_tool) {
            let api = &mut merged[*at as usize];
            api.words.extend(document.words.iter().cloned());
            api.name.extend(document.name.iter().cloned());
        }
        for api in &mut merged {
            api.name.sort_unstable();
            api.name.dedup();
        }
        Apis {
            apis,
            of_tool,
            index: Index::new(&merged),
            centroids: OnceLock::new(),
        }
    }

    /// The API of tool `id`.
    pub(crate) fn of(&self, id: usize) -> &Api {
        &self.apis[self.of_tool[id] as usize]
    }

    /// The best `limit` APIs for `query` (best first): the APIs of the ranked `tools`, the APIs
    /// as documents of their tools' words, and, with `meaning` (every tool's vector and the
    /// query's), the APIs by their tools' mean vector, fused by reciprocal rank.
    /// `kept`, when the search has filters: the APIs with a tool they let through.
    pub(crate) fn ranked(
        &self,
        query: &str,
        tools: &[usize],
        meaning: Option<Meaning<'_>>,
        kept: Option<&[bool]>,
        limit: usize,
    ) -> Vec<&Api> {
        let keep = |at: usize| kept.is_none_or(|kept| kept[at]);
        let (by_words, _) = self.index.search(query, API_DEPTH, keep);
        let mut rankings = vec![
            (BY_TOOLS_SHARE, self.by_tools(tools)),
            (1.0, by_words.into_iter().map(|(at, _)| at).collect()),
        ];
        if let Some((vectors, query)) = meaning {
            let mut by_meaning = self.by_meaning(vectors, query, kept.is_some());
            by_meaning.retain(|at| keep(*at));
            rankings.push((1.0, by_meaning));
        }
        let depth = |ranking: &[usize]| ranking.len().min(API_DEPTH);
        crate::fusion::fuse(
            rankings
                .iter()
                .map(|(share, ranking)| (*share, &ranking[..depth(ranking)])),
            API_RRF_K,
        )
        .into_iter()
        .take(limit)
        .map(|(at, _)| &self.apis[at])
        .collect()
    }

    /// Which APIs have a tool that `keep` lets through.
    pub(crate) fn kept(&self, keep: impl Fn(usize) -> bool) -> Vec<bool> {
        let mut kept = vec![false; self.apis.len()];
        for (id, at) in self.of_tool.iter().enumerate() {
            if !kept[*at as usize] && keep(id) {
                kept[*at as usize] = true;
            }
        }
        kept
    }

    /// The APIs closest to `query` by the mean of their tools' `vectors`: the first
    /// [`API_DEPTH`], or all of them when `all` (for a filter to choose from).
    fn by_meaning(&self, vectors: &[Arc<[f32]>], query: &[f32], all: bool) -> Vec<usize> {
        let centroids = self.centroids.get_or_init(|| {
            let dimensions = vectors.first().map_or(0, |v| v.len());
            let mut sums = vec![vec![0.0_f32; dimensions]; self.apis.len()];
            for (vector, at) in vectors.iter().zip(&self.of_tool) {
                for (sum, x) in sums[*at as usize].iter_mut().zip(vector.iter()) {
                    *sum += x;
                }
            }
            for sum in &mut sums {
                let length = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                if length > 0.0 {
                    sum.iter_mut().for_each(|x| *x /= length);
                }
            }
            sums
        });
        let mut closeness: Vec<(usize, f32)> = centroids
            .iter()
            .enumerate()
            .map(|(at, centroid)| (at, crate::semantic::dot(centroid, query)))
            .collect();
        closeness.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if !all {
            closeness.truncate(API_DEPTH);
        }
        closeness.into_iter().map(|(at, _)| at).collect()
    }

    /// The APIs of the ranked `tools`, best first: each API scores the reciprocal ranks of its
    /// tools in the first [`DEPTH`], each further one [`DECAY`] times less.
    fn by_tools(&self, tools: &[usize]) -> Vec<usize> {
        // Per API: its score, and the weight of its next tool.
        let mut scores: HashMap<u32, (f32, f32)> = HashMap::new();
        for (rank, id) in tools.iter().take(DEPTH).enumerate() {
            let (score, weight) = scores.entry(self.of_tool[*id]).or_insert((0.0, 1.0));
            *score += *weight / (K + rank as f32);
            *weight *= DECAY;
        }
        let mut ranked: Vec<(u32, f32)> = scores
            .into_iter()
            .map(|(api, (score, _))| (api, score))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().map(|(at, _)| at as usize).collect()
    }
}

/// The API of `rpc_path`: its package without the segments that name a version, and its
/// service (`/google.cloud.kms.v1.KeyManagementService/Encrypt` →
/// `google.cloud.kms.KeyManagementService`).
pub(crate) fn api_of(rpc_path: &str) -> String {
    let path = rpc_path.trim_start_matches('/');
    let service = path.split_once('/').map_or(path, |(service, _)| service);
    service
        .split('.')
        .filter(|segment| !crate::text::is_version(segment))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_is_its_service_across_versions() {
        assert_eq!(
            api_of("/google.cloud.kms.v1.KeyManagementService/Encrypt"),
            "google.cloud.kms.KeyManagementService"
        );
        assert_eq!(
            api_of("/google.ads.googleads.v22.services.X/Y"),
            "google.ads.googleads.services.X"
        );
        assert_eq!(api_of("/google.vision.S/M"), "google.vision.S");
    }

    #[test]
    fn apis_rank_by_their_tools_ranks() {
        let document = |text: &str| Document {
            words: crate::index::words(text)
                .into_iter()
                .map(|word| (word, 1.0))
                .collect(),
            stable: true,
            name: Vec::new(),
        };
        let apis = Apis::new(
            [
                ("a.S".to_owned(), Some("The S service. It does things.")),
                ("a.S".to_owned(), None),
                ("b.T".to_owned(), None),
            ],
            &[
                document("get a shelf"),
                document("list the shelves"),
                document("translate text"),
            ],
        );
        assert_eq!(apis.of(1).summary, "The S service.");
        assert_eq!(apis.of(0).tools, 2);
        let ranked = |query: &str, tools: &[usize], meaning| -> Vec<&str> {
            apis.ranked(query, tools, meaning, None, 5)
                .iter()
                .map(|api| api.name.as_str())
                .collect()
        };
        // By the tools' ranks alone (no word of the query in any API): the best tool counts
        // most, then how many.
        assert_eq!(ranked("zzz", &[2, 0, 1], None), ["b.T", "a.S"]);
        assert_eq!(ranked("zzz", &[0, 1, 2], None), ["a.S", "b.T"]);
        // The API's words outweigh one tool's rank.
        assert_eq!(ranked("shelves", &[2, 0, 1], None), ["a.S", "b.T"]);
        // And so does meaning: T's one vector is closest to the query's.
        let vectors: Vec<Arc<[f32]>> = vec![
            Arc::from(&[1.0_f32, 0.0][..]),
            Arc::from(&[1.0_f32, 0.0][..]),
            Arc::from(&[0.0_f32, 1.0][..]),
        ];
        assert_eq!(
            ranked("zzz", &[0, 1, 2], Some((&vectors, &[0.0, 1.0]))),
            ["b.T", "a.S"]
        );
        assert_eq!(apis.ranked("zzz", &[2, 0, 1], None, None, 1).len(), 1);
        // A filter keeps the APIs with a tool it lets through, whatever the words say.
        let kept = apis.kept(|id| id == 2);
        assert_eq!(kept, [false, true]);
        let filtered: Vec<&str> = apis
            .ranked("shelves", &[2], None, Some(&kept), 5)
            .iter()
            .map(|api| api.name.as_str())
            .collect();
        assert_eq!(filtered, ["b.T"]);
    }
}
