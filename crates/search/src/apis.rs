//! API families: the services of the served tools, each across its versions
//! (`google.cloud.kms.KeyManagementService` for `google.cloud.kms.v1` and `v1beta1`), ranked for
//! a query by the ranks of their tools, with a one-line summary from the service's comment. A
//! model that sees the right API can narrow its search with the `service` filter.

use std::collections::HashMap;

/// How far down a ranking a tool still counts for its API.
const DEPTH: usize = 50;
/// Reciprocal rank's constant: an API's best tool at rank `r` (from 0) adds `1 / (K + r)`.
const K: f32 = 2.0;
/// Each further tool of an API adds this share of what the one before it could: an API is
/// found by its best tools, not by how many it has.
const DECAY: f32 = 0.5;

/// The APIs of an index's tools.
pub(crate) struct Apis {
    /// Per API: its name, its summary and how many tools it has.
    apis: Vec<Api>,
    /// Per tool: its API.
    of_tool: Vec<u32>,
}

pub(crate) struct Api {
    pub(crate) name: String,
    pub(crate) summary: String,
    pub(crate) tools: usize,
}

impl Apis {
    /// The APIs of tools, given in index order as (API name, the service's comment).
    pub(crate) fn new<'t>(tools: impl IntoIterator<Item = (String, Option<&'t str>)>) -> Apis {
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
                api.summary = crate::summary(comment);
            }
            of_tool.push(at);
        }
        Apis { apis, of_tool }
    }

    /// The API of tool `id`.
    pub(crate) fn of(&self, id: usize) -> &Api {
        &self.apis[self.of_tool[id] as usize]
    }

    /// The best `limit` APIs for a ranking of tools (best first): each API scores the
    /// reciprocal ranks of its tools in the first [`DEPTH`], each further one [`DECAY`] times
    /// less.
    pub(crate) fn ranked(&self, tools: &[usize], limit: usize) -> Vec<&Api> {
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
        ranked
            .into_iter()
            .take(limit)
            .map(|(at, _)| &self.apis[at as usize])
            .collect()
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
        .filter(|segment| !is_version(segment))
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether a package segment names a version (`v1`, `v1beta2`, `v22`, `v1p1beta1`).
pub(crate) fn is_version(segment: &str) -> bool {
    let mut chars = segment.chars();
    chars.next() == Some('v') && chars.next().is_some_and(|c| c.is_ascii_digit())
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
        let apis = Apis::new([
            ("a.S".to_owned(), Some("The S service. It does things.")),
            ("a.S".to_owned(), None),
            ("b.T".to_owned(), None),
        ]);
        assert_eq!(apis.of(1).summary, "The S service.");
        assert_eq!(apis.of(0).tools, 2);
        let ranked = |tools: &[usize]| -> Vec<&str> {
            apis.ranked(tools, 5)
                .iter()
                .map(|api| api.name.as_str())
                .collect()
        };
        // T's one tool first, S's two after: the best tool counts most.
        assert_eq!(ranked(&[2, 0, 1]), ["b.T", "a.S"]);
        // S's two tools at the top.
        assert_eq!(ranked(&[0, 1, 2]), ["a.S", "b.T"]);
        assert_eq!(apis.ranked(&[2, 0, 1], 1).len(), 1);
    }
}
