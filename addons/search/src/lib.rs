//! Tool search for a [`tonic_mcp`] server: progressive discovery for servers with more tools
//! than a model can be shown.
//!
//! With [`McpServerBuilder::tool_search`](tonic_mcp::McpServerBuilder::tool_search) given a
//! [`ToolSearch`], `tools/list` lists three tools, plus any [pinned](ToolSearch::pin) ones,
//! instead of every RPC:
//! - [`search_tools`](SEARCH_TOOLS): a plain-language query and optional filters in; the best
//!   matching tools out, ranked (name, title, one-line summary, RPC path, annotations);
//! - [`describe_tools`](DESCRIBE_TOOLS): names in; each tool's full definition out (input and
//!   output schemas, annotations, `_meta`), exactly as `tools/list` would show it;
//! - [`call_tool`](CALL_TOOL): a name and arguments in; exactly what calling that tool directly
//!   gives: validation, errors, streaming windows, tasks, long-running operations, confirmation,
//!   authorization scopes, `_meta` on results.
//!
//! Every tool stays callable by its own name too. The index is rebuilt with the tools, so tools
//! that [`McpServer::replace_tools`](tonic_mcp::McpServer::replace_tools) adds are found at
//! once.
//!
//! ```
//! use tonic_mcp::McpServer;
//! use tonic_mcp_search::ToolSearch;
//!
//! let server = McpServer::builder("catalog", "1.0.0")
//!     .tool_search(ToolSearch::new().pin("ItemService_GetItem"))
//!     .build();
//! # let _ = server;
//! ```

mod apis;
mod cache;
mod embeddings;
mod fusion;
mod index;
mod semantic;
mod text;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};
use tonic_mcp::{
    DiscoveryAnswer, DiscoveryIndex, ServedTool, Target, ToolDiscovery, invalid_arguments,
};

pub use embeddings::{EmbeddingEvent, Embeddings};

use apis::Apis;
use cache::Key;
use index::{Document, Index};
use semantic::{Semantic, Unavailable, dot};
use text::{proto_comment, semantic_document, summary};

/// The tool that searches the served tools.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The tool that gives the full definitions of named tools.
pub const DESCRIBE_TOOLS: &str = "describe_tools";
/// The tool that calls a tool by name.
pub const CALL_TOOL: &str = "call_tool";

/// How many results `search_tools` gives when the call does not say (at most 50).
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
const MAX_SEARCH_LIMIT: usize = 50;
/// How many tools one `describe_tools` call describes.
const MAX_DESCRIBED: usize = 20;
/// How many tools an unknown name's error suggests.
const NEAREST: usize = 3;
/// The longest query `search_tools` takes, in characters, and the longest unknown name given
/// nearest names: the ranking's cost grows faster than the query, and a few plain words say
/// what a tool should do.
const MAX_QUERY_CHARS: usize = 1000;

/// How many API families `search_tools` names.
const APIS: usize = 5;
/// How deep each ranking goes before the two are fused.
const FUSED_DEPTH: usize = 400;
/// Reciprocal rank fusion: a tool at rank `r` (from 0) of a ranking scores `share / (RRF_K + r)`.
const RRF_K: f32 = 60.0;
/// The semantic ranking's share of the fused score (the keywords' is the rest).
const SEMANTIC_SHARE: f32 = 0.5;

/// Tool search settings: which tools are listed directly besides the three discovery tools, and
/// the embeddings endpoint of hybrid ranking.
#[derive(Debug, Clone, Default)]
pub struct ToolSearch {
    pinned: BTreeSet<String>,
    semantic: Option<Arc<Semantic>>,
}

impl std::fmt::Debug for Semantic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Semantic").field(self.settings()).finish()
    }
}

impl ToolSearch {
    /// Discovery with no tool pinned.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lists the tool `name` directly as well (a name not served now is listed once a tool of
    /// that name is).
    #[must_use]
    pub fn pin(mut self, name: impl Into<String>) -> Self {
        self.pinned.insert(name.into());
        self
    }

    /// The pinned tool names.
    pub fn pinned(&self) -> impl Iterator<Item = &str> {
        self.pinned.iter().map(String::as_str)
    }

    /// Ranks by keywords (BM25) and by meaning, fused: each tool's search document is embedded
    /// by `embeddings` once, in the background after the tools are indexed, and each query
    /// when it comes. Until every tool is embedded, and while the endpoint fails, search ranks
    /// by keywords alone and its result says so (`ranking`, `ranking_note`).
    #[must_use]
    pub fn embeddings(mut self, embeddings: Embeddings) -> Self {
        self.semantic = Some(Arc::new(Semantic::new(embeddings)));
        self
    }
}

/// Indexes the served tools for `search_tools`.
impl ToolDiscovery for ToolSearch {
    fn index(&self, tools: Vec<ServedTool>) -> Box<dyn DiscoveryIndex> {
        Box::new(Discovery::new(self, tools))
    }
}

/// What a `search_tools` result and its filters need of one tool beyond its definition (the
/// tool of the same index in [`Discovery::tools`]).
struct Entry {
    /// The RPC path without its package's version segments: the versions of one RPC share it.
    family: String,
    summary: String,
    rpc: String,
    /// Lower-cased, as the filters compare.
    package: String,
    /// The service's full name, lower-cased.
    service: String,
    read_only: bool,
    /// The title, and the annotations in the result's shape.
    title: String,
    annotations: Option<Value>,
}

/// The index of the tools served at one time: every served tool, with its full definition.
struct Discovery {
    index: Index,
    entries: Vec<Entry>,
    apis: Apis,
    /// Hybrid ranking's side: the vectors' source, this index's job there, each tool's
    /// document key, and the vectors once all are made.
    semantic: Option<(Arc<Semantic>, u64, Vec<Key>)>,
    vectors: OnceLock<Vec<Arc<[f32]>>>,
    /// Every served tool, sorted by name.
    tools: Vec<ServedTool>,
    /// The pinned ones, which `tools/list` shows after the discovery tools.
    pinned: Vec<ServedTool>,
}

impl Discovery {
    /// Indexes every served tool (sorted by name).
    fn new(search: &ToolSearch, served: Vec<ServedTool>) -> Discovery {
        let mut documents = Vec::new();
        let mut entries = Vec::new();
        let mut apis = Vec::new();
        let mut texts = Vec::new();
        for tool in &served {
            let description = tool.description();
            let annotations = tool.annotations();
            let rpc_path = tool.rpc_path();
            let path = rpc_path.trim_start_matches('/');
            let (service_full, method) = path.split_once('/').unwrap_or((path, ""));
            let (package, service) = service_full.rsplit_once('.').unwrap_or(("", service_full));
            // Joined neighbours of the service and method names (`keyring`).
            let mut words: Vec<(String, f32)> = [service, method]
                .into_iter()
                .flat_map(index::joined_words)
                .map(|word| (word, 2.0))
                .collect();
            let mut add = |text: &str, weight: f32| {
                words.extend(index::words(text).into_iter().map(|word| (word, weight)));
            };
            add(tool.name(), 3.0);
            add(tool.title(), 2.0);
            add(service, 2.0);
            add(method, 2.0);
            add(&proto_comment(&description), 1.0);
            let mut outputs = Vec::new();
            tool.each_field(|name, input| {
                if input {
                    add(name, 1.0);
                } else {
                    outputs.push(name.to_owned());
                }
            });
            add(package, 1.5);
            for name in &outputs {
                add(name, 0.5);
            }
            let mut name = index::words(service);
            name.extend(index::words(method));
            name.sort_unstable();
            name.dedup();
            documents.push(Document {
                words,
                stable: !package.contains("alpha") && !package.contains("beta"),
                name,
            });
            let api = apis::api_of(rpc_path);
            if search.semantic.is_some() {
                texts.push(semantic_document(
                    package,
                    service,
                    method,
                    tool.title(),
                    &description,
                ));
            }
            apis.push((api, tool.service_description()));
            entries.push(Entry {
                family: family(rpc_path),
                summary: summary(&description),
                rpc: rpc_path.to_owned(),
                package: package.to_lowercase(),
                service: service_full.to_lowercase(),
                read_only: annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
                title: tool.title().to_owned(),
                annotations: annotations.and_then(|a| serde_json::to_value(a).ok()),
            });
        }
        let pinned = served
            .iter()
            .filter(|tool| search.pinned.contains(tool.name()))
            .cloned()
            .collect();
        let semantic = search.semantic.as_ref().map(|semantic| {
            let (keys, work) = semantic::keyed(&texts);
            (Arc::clone(semantic), semantic.prepare(work), keys)
        });
        let apis = Apis::new(apis, &documents);
        Discovery {
            index: Index::new(&documents),
            entries,
            apis,
            semantic,
            vectors: OnceLock::new(),
            tools: served,
            pinned,
        }
    }

    /// The served tool `name`.
    fn tool(&self, name: &str) -> Option<&ServedTool> {
        self.tools
            .binary_search_by(|tool| tool.name().cmp(name))
            .ok()
            .map(|index| &self.tools[index])
    }

    async fn search(&self, arguments: &JsonObject) -> Result<CallToolResult, String> {
        known_keys(
            arguments,
            &["query", "limit", "package", "service", "read_only"],
        )?;
        let query = match arguments.get("query") {
            Some(Value::String(query)) if !query.trim().is_empty() => query,
            _ => return Err("`query` is required: what the tool should do, in plain words".into()),
        };
        let length = query.chars().count();
        if length > MAX_QUERY_CHARS {
            return Err(format!(
                "`query` is {length} characters, and at most {MAX_QUERY_CHARS}: say in a few \
                 plain words what the tool should do"
            ));
        }
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
            Some(value) => value
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (1..=MAX_SEARCH_LIMIT).contains(n))
                .ok_or_else(|| {
                    format!("`limit` must be an integer from 1 to {MAX_SEARCH_LIMIT}")
                })?,
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match arguments.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.to_lowercase())),
                Some(_) => Err(format!("`{key}` must be a string")),
            }
        };
        let package = text("package")?;
        let service = text("service")?;
        let read_only = match arguments.get("read_only") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(flag)) => Some(*flag),
            Some(_) => return Err("`read_only` must be true or false".into()),
        };
        let keep = |id: usize| {
            let entry = &self.entries[id];
            package
                .as_deref()
                .is_none_or(|p| entry.package.starts_with(p))
                && service.as_deref().is_none_or(|s| {
                    entry.service == s
                        || entry.service.rsplit('.').next() == Some(s)
                        || self.apis.of(id).name.eq_ignore_ascii_case(s)
                })
                && read_only.is_none_or(|wanted| entry.read_only == wanted)
        };
        let started = Instant::now();
        let (keywords, total) = self.index.search(query, FUSED_DEPTH, keep);
        let mut waited = Duration::ZERO;
        let (hits, ranking, note, query_vector) =
            match self.semantic_ranking(query, &keep, &mut waited).await {
                None => (keywords, "keywords", None, None),
                Some(Err(unavailable)) => (keywords, "keywords", Some(unavailable.note()), None),
                Some(Ok((semantic, vector))) => {
                    (fuse(&keywords, &semantic), "hybrid", None, Some(vector))
                }
            };
        // The versions of one RPC become one result.
        let mut families: Vec<(usize, f32, Vec<&str>)> = Vec::new();
        for (id, score) in &hits {
            let entry = &self.entries[*id];
            let known = families
                .iter()
                .position(|(first, _, _)| self.entries[*first].family == entry.family);
            match known {
                Some(at) => families[at].2.push(self.tools[*id].name()),
                None if families.len() < limit => families.push((*id, *score, Vec::new())),
                None => {}
            }
        }
        let ranked: Vec<usize> = hits.iter().map(|(id, _)| *id).collect();
        let filtered = package.is_some() || service.is_some() || read_only.is_some();
        let kept = filtered.then(|| self.apis.kept(keep));
        let meaning = self
            .vectors
            .get()
            .map(Vec::as_slice)
            .zip(query_vector.as_deref());
        let apis: Vec<Value> = self
            .apis
            .ranked(query, &ranked, meaning, kept.as_deref(), APIS)
            .into_iter()
            .map(|api| {
                let mut found = json!({"api": api.name, "tools": api.tools});
                if !api.summary.is_empty() {
                    found["summary"] = json!(api.summary);
                }
                found
            })
            .collect();
        // A query that asks for an action that no result does to what it names has no match
        // ("delete a book" where books cannot be deleted), however well its other words match.
        let action = Index::action(query);
        let no_match = !families.is_empty()
            && action.as_ref().is_some_and(|action| {
                !families
                    .iter()
                    .any(|(id, _, _)| self.index.does(*id, action))
            });
        let tools: Vec<Value> = if no_match {
            Vec::new()
        } else {
            families
                .iter()
                .map(|(id, score, others)| self.found(*id, *score, others))
                .collect()
        };
        let hint = if no_match {
            "No tool does that: the tools that match the other words do something else. The \
             nearest APIs are listed; search again in other words, or within one of them \
             (`service`)."
                .to_owned()
        } else if tools.is_empty() {
            "No tool matches; try other words, or fewer filters.".to_owned()
        } else {
            "Call describe_tools with the names you need, then call_tool. If none fits, search \
             again in the words of one of the APIs listed, or within it (`service`)."
                .to_owned()
        };
        let mut answer = json!({
            "tools": tools,
            "apis": apis,
            "total": if no_match { 0 } else { total.max(hits.len()) },
            "ranking": ranking,
            "hint": hint,
        });
        if no_match {
            answer["no_match"] = json!(true);
        }
        if let Some(note) = note {
            answer["ranking_note"] = json!(note);
        }
        let mut result = structured(answer);
        // The search's own time, and the query's embedding call, for operators and benchmarks.
        let milliseconds = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        let mut meta = JsonObject::new();
        meta.insert(
            "tonic-mcp-search/took_ms".into(),
            json!(milliseconds(started.elapsed().saturating_sub(waited))),
        );
        if !waited.is_zero() {
            meta.insert(
                "tonic-mcp-search/embedding_ms".into(),
                json!(milliseconds(waited)),
            );
        }
        result.meta = Some(rmcp::model::MetaObject(meta));
        Ok(result)
    }

    /// Tool `id` as `search_tools` gives it.
    fn found(&self, id: usize, score: f32, others: &[&str]) -> Value {
        let (entry, tool) = (&self.entries[id], &self.tools[id]);
        let mut found = json!({
            "name": tool.name(),
            "rpc": entry.rpc,
            "api": self.apis.of(id).name,
            "score": (f64::from(score) * 1000.0).round() / 1000.0,
        });
        if !entry.title.is_empty() {
            found["title"] = json!(entry.title);
        }
        if !entry.summary.is_empty() {
            found["summary"] = json!(entry.summary);
        }
        if let Some(annotations) = &entry.annotations {
            found["annotations"] = annotations.clone();
        }
        if !others.is_empty() {
            found["other_versions"] = json!(others.iter().take(4).collect::<Vec<_>>());
        }
        found
    }

    /// The tools that `keep` lets through, ranked by their vectors' closeness to the query's
    /// (at most [`FUSED_DEPTH`]), and the query's vector; `None` without hybrid ranking, why not
    /// when it cannot rank. `waited` is how long the query's embedding call took.
    async fn semantic_ranking(
        &self,
        query: &str,
        keep: &impl Fn(usize) -> bool,
        waited: &mut Duration,
    ) -> Option<Result<(Vec<(usize, f32)>, Vec<f32>), Unavailable>> {
        let (semantic, job, keys) = self.semantic.as_ref()?;
        let vectors = match self.vectors.get() {
            Some(vectors) => vectors,
            None => match semantic.gather(*job, keys) {
                Ok(vectors) => self.vectors.get_or_init(|| vectors),
                Err(unavailable) => return Some(Err(unavailable)),
            },
        };
        let asked = Instant::now();
        let query = semantic.query(query).await;
        *waited = asked.elapsed();
        let query = match query {
            Ok(query) => query,
            Err(unavailable) => return Some(Err(unavailable)),
        };
        if vectors.first().is_some_and(|v| v.len() != query.len()) {
            return Some(Err(Unavailable::Failed(format!(
                "the query's vector has {} dimensions and the tools' {}",
                query.len(),
                vectors[0].len()
            ))));
        }
        let mut closeness: Vec<(usize, f32)> = vectors
            .iter()
            .enumerate()
            .filter(|(id, _)| keep(*id))
            .map(|(id, vector)| (id, dot(vector, &query)))
            .collect();
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if closeness.len() > FUSED_DEPTH {
            closeness.select_nth_unstable_by(FUSED_DEPTH, order);
            closeness.truncate(FUSED_DEPTH);
        }
        closeness.sort_by(order);
        Some(Ok((closeness, query)))
    }

    fn describe(&self, arguments: &JsonObject) -> Result<CallToolResult, String> {
        known_keys(arguments, &["names"])?;
        let names: Vec<&str> = match arguments.get("names") {
            Some(Value::Array(names)) if !names.is_empty() => names
                .iter()
                .map(|name| name.as_str().ok_or("`names` must be tool names (strings)"))
                .collect::<Result<_, _>>()?,
            _ => return Err("`names` is required: the tool names search_tools gave".into()),
        };
        if names.len() > MAX_DESCRIBED {
            return Err(format!(
                "at most {MAX_DESCRIBED} names per call; ask for the ones you will call"
            ));
        }
        let unknown: Vec<&str> = names
            .iter()
            .copied()
            .filter(|name| self.tool(name).is_none())
            .collect();
        if !unknown.is_empty() {
            return Err(self.unknown(&unknown));
        }
        let mut tools = Vec::with_capacity(names.len());
        for name in names {
            if let Some(listed) = self.tool(name) {
                tools.push(serde_json::to_value(listed.definition()?).map_err(|e| e.to_string())?);
            }
        }
        Ok(structured(json!({"tools": tools})))
    }

    /// Why `names` name no tool, each with the tools its words find first: the keyword ranking
    /// of `search_tools` (at most [`NEAREST`]; none for a name longer than a query may be), for
    /// a model that misremembers a name (`GetTask` for `TaskService_GetTask`).
    fn unknown(&self, names: &[&str]) -> String {
        let each: Vec<String> = names
            .iter()
            .map(|name| {
                let (nearest, _) = if name.chars().count() <= MAX_QUERY_CHARS {
                    self.index.search(name, NEAREST, |_| true)
                } else {
                    (Vec::new(), 0)
                };
                let nearest: Vec<String> = nearest
                    .iter()
                    .map(|(id, _)| format!("`{}`", self.tools[*id].name()))
                    .collect();
                if nearest.is_empty() {
                    format!("`{name}`")
                } else {
                    format!("`{name}` (nearest: {})", nearest.join(", "))
                }
            })
            .collect();
        format!(
            "no tool is named {}; search_tools gives the names",
            each.join(", ")
        )
    }

    /// `call_tool`'s arguments: the tool to call and its arguments, or why they are not.
    fn call_target(
        &self,
        arguments: Option<&JsonObject>,
    ) -> Result<(String, Option<JsonObject>), String> {
        let empty = JsonObject::new();
        let arguments = arguments.unwrap_or(&empty);
        known_keys(arguments, &["name", "arguments"])?;
        let Some(Value::String(name)) = arguments.get("name") else {
            return Err("`name` is required: the tool to call, as search_tools names it".into());
        };
        if self.tool(name).is_none() {
            return Err(self.unknown(&[name]));
        }
        let inner = match arguments.get("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::Object(inner)) => Some(inner.clone()),
            Some(_) => {
                return Err(
                    "`arguments` must be an object: the tool's own arguments, as \
                            describe_tools gives its input schema"
                        .into(),
                );
            }
        };
        Ok((name.clone(), inner))
    }
}

impl DiscoveryIndex for Discovery {
    fn listing(&self) -> (Vec<Tool>, Vec<ServedTool>) {
        (meta_tools(), self.pinned.clone())
    }

    /// A call of `search_tools` or `describe_tools`; `None` for any other name.
    fn answer<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<&'a JsonObject>,
    ) -> Option<DiscoveryAnswer<'a>> {
        static EMPTY: OnceLock<JsonObject> = OnceLock::new();
        let arguments = arguments.unwrap_or_else(|| EMPTY.get_or_init(JsonObject::new));
        match name {
            SEARCH_TOOLS => Some(Box::pin(async move {
                self.search(arguments)
                    .await
                    .unwrap_or_else(invalid_arguments)
            })),
            DESCRIBE_TOOLS => {
                let answer = self.describe(arguments).unwrap_or_else(invalid_arguments);
                Some(Box::pin(std::future::ready(answer)))
            }
            _ => None,
        }
    }

    /// A call of `call_tool`: the call it names; `None` for any other name.
    fn target(&self, name: &str, arguments: Option<&JsonObject>) -> Option<Target> {
        (name == CALL_TOOL).then(|| match self.call_target(arguments) {
            Ok((name, arguments)) => Target::Call { name, arguments },
            Err(message) => Target::Refused(Box::new(invalid_arguments(message))),
        })
    }
}

/// Both rankings fused by weighted reciprocal rank: `1 - SEMANTIC_SHARE` of the keywords'
/// `SEMANTIC_SHARE` of the vectors'; best first.
fn fuse(keywords: &[(usize, f32)], semantic: &[(usize, f32)]) -> Vec<(usize, f32)> {
    let ids = |ranking: &[(usize, f32)]| ranking.iter().map(|(id, _)| *id).collect::<Vec<_>>();
    let (keywords, semantic) = (ids(keywords), ids(semantic));
    let mut fused = fusion::fuse(
        [
            (1.0 - SEMANTIC_SHARE, &keywords[..]),
            (SEMANTIC_SHARE, &semantic[..]),
        ],
        RRF_K,
    );
    // Scores on the keywords' scale of 0 to about 30 read oddly beside them; ×1000 keeps the
    // three decimals shown meaningful.
    fused.iter_mut().for_each(|(_, score)| *score *= 1000.0);
    fused
}

fn known_keys(arguments: &JsonObject, known: &[&str]) -> Result<(), String> {
    match arguments.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(format!(
            "unknown argument `{key}`; this tool takes {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Ok(()),
    }
}

fn structured(value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}

/// `rpc_path` without the segments of its package that name a version (`v1`, `v1beta2`,
/// `v22`, `v1p1beta1`).
fn family(rpc_path: &str) -> String {
    let method = rpc_path.rsplit_once('/').map_or("", |(_, method)| method);
    format!("/{}/{method}", apis::api_of(rpc_path))
}

/// The three discovery tools, as `tools/list` shows them.
fn meta_tools() -> Vec<Tool> {
    let tool = |name: &'static str, description: &'static str, input: Value, read_only: bool| {
        let Value::Object(schema) = input else {
            unreachable!("the schemas below are objects")
        };
        let annotations = rmcp::model::ToolAnnotations::new()
            .read_only(read_only)
            .open_world(!read_only);
        Tool::new_with_raw(name, Some(description.into()), Arc::new(schema))
            .with_annotations(annotations)
    };
    vec![
        tool(
            SEARCH_TOOLS,
            "Search this server's tools (one per gRPC method) by what you want to do, in plain \
             words. Returns the best matches, ranked, with name, summary and RPC, and the APIs \
             that match best (search again within one with `service`); no_match when no tool \
             does what was asked. Then call describe_tools for the input schema of the ones you \
             need, and call_tool to call one.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "maxLength": MAX_QUERY_CHARS, "description": "What the tool should do, e.g. \"rotate an encryption key\"."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT, "description": "How many tools to return (10)."},
                    "package": {"type": "string", "description": "Only tools of proto packages starting with this, e.g. \"google.cloud.kms\"."},
                    "service": {"type": "string", "description": "Only tools of this service, by full or short name, or of an API as `apis` names it."},
                    "read_only": {"type": "boolean", "description": "Only tools that change nothing (true), or only tools that do (false)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            DESCRIBE_TOOLS,
            "The full definitions of tools named by search_tools: input and output schemas, \
             annotations and _meta, as a tools/list would show them.",
            json!({
                "type": "object",
                "properties": {
                    "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_DESCRIBED, "description": "Tool names, as search_tools gives them."}
                },
                "required": ["names"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            CALL_TOOL,
            "Call a tool found with search_tools, with arguments that follow the input schema \
             describe_tools gave. The result is the tool's own, as if it were called directly.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool to call."},
                    "arguments": {"type": "object", "description": "The tool's arguments."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
            false,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_of_one_rpc_share_a_family() {
        assert_eq!(family("/a.v1.S/M"), "/a.S/M");
        assert_eq!(family("/a.v1p1beta1.S/M"), family("/a.v2.S/M"));
        assert_eq!(
            family("/google.ads.googleads.v22.services.X/Y"),
            "/google.ads.googleads.services.X/Y"
        );
        // Only version segments go: `vision` is a package name, `V1` a service's.
        assert_eq!(family("/google.vision.S/M"), "/google.vision.S/M");
        assert_ne!(family("/a.v1.S/M"), family("/a.v1.T/M"));
    }

    #[test]
    fn joined_name_words_meet_compounds() {
        // Stemmed as a query's `keyring` is (`keyr`), so the two meet.
        assert_eq!(index::joined_words("CreateKeyRing"), ["createkey", "keyr"]);
        assert_eq!(index::words("my keyring"), ["keyr"]);
    }
}
