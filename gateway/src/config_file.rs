//! `--config FILE`: the gateway's backends, as `[[backend]]` tables of a TOML file.
//!
//! ```toml
//! [[backend]]
//! name = "shop"                        # unique; logs and errors use it
//! target = "https://shop.internal:443"
//! descriptor_set = "shop.binpb"        # absent: gRPC reflection
//! prefix = "shop"
//! include = ["shop.v1.*"]
//! header_env = { authorization = "SHOP_TOKEN" }
//! timeout = "10s"
//! tls = { ca = "ca.pem", cert = "client.pem", key = "client.key" }
//! ```
//!
//! Relative paths are relative to the file. Every mistake is an error naming the file and the
//! line, and the key where the TOML parser knows it: unknown keys are refused, not ignored.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::backend::{Backend, ToolSettings};
use crate::error::Error;
use crate::headers::Headers;
use crate::target::Target;
use crate::values::{parse_bytes, parse_duration};

/// The file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// `--replica`: this replica's name, which starts its session ids. A top-level key, so
    /// written before the first table.
    replica: Option<ReplicaName>,
    #[serde(default, rename = "backend")]
    backends: Vec<Spanned<Table>>,
    metrics: Option<MetricsTable>,
    traces: Option<TracesTable>,
    tool_search: Option<ToolSearchTable>,
    tasks: Option<TasksTable>,
    connections: Option<ConnectionsTable>,
    task_store: Option<Spanned<TaskStoreTable>>,
}

/// `[task_store]`: the same as `--task-store`, `--task-store-password-env`,
/// `--task-store-password-file`, `--task-store-prefix` and `--task-key-file`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskStoreTable {
    /// Spanned, not checked while parsing: the parser's error would quote the line, and with
    /// it the password it is refused for.
    url: Option<Spanned<String>>,
    password_env: Option<String>,
    password_file: Option<PathBuf>,
    key_prefix: Option<String>,
    key_file: Option<PathBuf>,
}

/// The task store's settings and the task key's file, each set or not (by the flags, or by
/// `[task_store]`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct TaskStoreKeys {
    /// `--task-store`, `url`.
    pub(crate) url: Option<String>,
    /// `--task-store-password-env`, `password_env`.
    pub(crate) password_env: Option<String>,
    /// `--task-store-password-file`, `password_file`.
    pub(crate) password_file: Option<PathBuf>,
    /// `--task-store-prefix`, `key_prefix`.
    pub(crate) key_prefix: Option<String>,
    /// `--task-key-file`, `key_file`.
    pub(crate) key_file: Option<PathBuf>,
}

/// `[connections]`: the same as `--max-connections`, `--header-read-timeout`,
/// `--body-read-timeout` and `--connection-idle-timeout`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectionsTable {
    max: Option<std::num::NonZeroU32>,
    header_read_timeout: Option<DurationText>,
    body_read_timeout: Option<DurationText>,
    idle_timeout: Option<DurationText>,
}

/// Bounds on the HTTP connections, each set or not (by the flags, or by `[connections]`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Connections {
    /// `--max-connections`, `max`.
    pub(crate) max: Option<u32>,
    /// `--header-read-timeout`.
    pub(crate) header_read_timeout: Option<Duration>,
    /// `--body-read-timeout`.
    pub(crate) body_read_timeout: Option<Duration>,
    /// `--connection-idle-timeout`, `idle_timeout`.
    pub(crate) idle_timeout: Option<Duration>,
}

/// `[tasks]`: the same as `--max-tasks-per-owner`, `--max-running-tasks`,
/// `--max-task-result-bytes`, `--task-mode` and `--task-inline-wait`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TasksTable {
    max_per_owner: Option<std::num::NonZeroUsize>,
    max_running: Option<std::num::NonZeroUsize>,
    max_result_bytes: Option<Bytes>,
    mode: Option<TaskModeName>,
    inline_wait: Option<DurationText>,
}

/// A task mode by name (`--task-mode`, `[tasks] mode`): `tonic_mcp::TaskMode`'s modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TaskModeName {
    /// `auto`: the result when the call ends within the inline wait, else a task.
    Auto,
    /// `always`: a task for every call that may be one.
    Always,
    /// `never`: the result, unless the tool requires a task.
    Never,
}

/// Settings of MCP tasks, each set or not (by the flags, or by `[tasks]`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskBounds {
    /// `--max-tasks-per-owner`, `max_per_owner`.
    pub(crate) max_per_owner: Option<usize>,
    /// `--max-running-tasks`, `max_running`.
    pub(crate) max_running: Option<usize>,
    /// `--max-task-result-bytes`, `max_result_bytes`.
    pub(crate) max_result_bytes: Option<usize>,
    /// `--task-mode`, `mode`.
    pub(crate) mode: Option<TaskModeName>,
    /// `--task-inline-wait`, `inline_wait`.
    pub(crate) inline_wait: Option<Duration>,
}

/// `[tool_search]`: the same as `--tool-search` and `--pin`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSearchTable {
    /// `--pin`: tools listed directly as well.
    #[serde(default)]
    pin: Vec<String>,
    /// `--search-embeddings` and its options.
    embeddings: Option<crate::search::SearchEmbeddings>,
}

/// `[traces]`: the same as `--otlp-endpoint`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TracesTable {
    /// `--otlp-endpoint`: the OTLP/gRPC collector spans are exported to.
    otlp_endpoint: String,
}

/// `[metrics]`: the same as `--metrics` and `--metrics-addr`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricsTable {
    /// `--metrics`: at `/metrics` of the MCP HTTP listener.
    #[serde(default)]
    on_http: bool,
    /// `--metrics-addr`: on a listener of their own.
    addr: Option<std::net::SocketAddr>,
}

/// What a config file holds.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// `replica`.
    pub(crate) replica: Option<String>,
    pub(crate) backends: Vec<Backend>,
    /// `[metrics] on_http`.
    pub(crate) metrics_on_http: bool,
    /// `[metrics] addr`.
    pub(crate) metrics_addr: Option<std::net::SocketAddr>,
    /// `[traces] otlp_endpoint`.
    pub(crate) otlp_endpoint: Option<String>,
    /// `[tool_search]`.
    pub(crate) tool_search: Option<tonic_mcp_search::ToolSearch>,
    /// `[tool_search.embeddings]`.
    pub(crate) search_embeddings: Option<crate::search::SearchEmbeddings>,
    /// `[tasks]`.
    pub(crate) tasks: TaskBounds,
    /// `[connections]`.
    pub(crate) connections: Connections,
    /// `[task_store]`, its paths relative to the file's directory.
    pub(crate) task_store: TaskStoreKeys,
    /// Where `[task_store]` is, `path:line`, for the errors about it.
    pub(crate) task_store_origin: Option<String>,
}

/// One `[[backend]]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    name: String,
    target: String,
    descriptor_set: Option<PathBuf>,
    #[serde(default)]
    services: Vec<String>,
    prefix: Option<String>,
    tool_names: Option<String>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    /// Plugin options, as for `--opt`.
    #[serde(default)]
    options: Vec<String>,
    /// Header values written in the file.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Header values read from environment variables: `name = "VARIABLE"`.
    #[serde(default)]
    header_env: BTreeMap<String, String>,
    tls: Option<Tls>,
    connect_timeout: Option<DurationText>,
    timeout: Option<DurationText>,
    max_messages: Option<NonZeroU32>,
    max_result_bytes: Option<Bytes>,
    max_decoding_message_size: Option<Bytes>,
    max_encoding_message_size: Option<Bytes>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tls {
    ca: Option<PathBuf>,
    server_name: Option<String>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

/// `"500ms"`, `"10s"`, `"1m"`: checked while parsing, so that the error has its line.
struct DurationText(Duration);

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_duration(&text).map(DurationText).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{text}` is not a duration: write one such as \"500ms\", \"10s\" or \"1m\""
            ))
        })
    }
}

/// A replica name (`replica`, `--replica`): checked while parsing, so that the error has its
/// line.
struct ReplicaName(String);

impl<'de> Deserialize<'de> for ReplicaName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        replica_name(&text)
            .map(ReplicaName)
            .map_err(serde::de::Error::custom)
    }
}

/// `text` as a replica name, or why it cannot be one: the name starts every session id, and
/// a load balancer routes on it, so it is taken as written or refused (never changed as
/// `McpServerBuilder::replica` would change it).
pub(crate) fn replica_name(text: &str) -> Result<String, String> {
    let valid = !text.is_empty()
        && text.len() <= 63
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not a replica name: use 1 to 63 letters, digits, `-` and `_` (it starts \
             every session id, before a `.`)"
        ))
    }
}

/// A size: a number of bytes, or a string such as `"16MiB"`.
struct Bytes(usize);

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Size {
            Number(u64),
            Text(String),
        }
        let text = match Size::deserialize(deserializer)? {
            Size::Number(number) => number.to_string(),
            Size::Text(text) => text,
        };
        parse_bytes(&text)
            .map(Bytes)
            .map_err(serde::de::Error::custom)
    }
}

/// The backends of the file at `path`.
///
/// # Errors
///
/// The file cannot be read, is not TOML, has an unknown key or a value of the wrong kind, has
/// no backend, names two backends alike, or a backend's settings are invalid: the message
/// names the file and the line.
pub(crate) fn load(path: &Path) -> Result<Loaded, Error> {
    load_with(path, &|variable| std::env::var(variable).ok())
}

/// As [`load`], with `env` for the environment.
fn load_with(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, Error> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(format!("--config {shown}: cannot read it ({e})")))?;
    let file: File = toml::from_str(&text)
        .map_err(|e| Error::new(format!("{shown}: {}", e.to_string().trim_end())))?;
    if file.backends.is_empty() {
        return Err(Error::new(format!(
            "{shown}: no [[backend]] table; each backend needs at least `name` and `target`"
        )));
    }
    let base = path.parent().unwrap_or(Path::new(""));
    let mut backends: Vec<Backend> = Vec::with_capacity(file.backends.len());
    for spanned in file.backends {
        let origin = format!("{shown}:{}", line_of(&text, spanned.span().start));
        let table = spanned.into_inner();
        let backend = backend(table, origin, base, env)?;
        if let Some(first) = backends.iter().find(|b| b.name == backend.name) {
            return Err(Error::new(format!(
                "{}: backend `{}`: the name is taken by the backend at {}; names must be unique",
                backend.origin.as_deref().unwrap_or_default(),
                backend.name,
                first.origin.as_deref().unwrap_or_default(),
            )));
        }
        backends.push(backend);
    }
    let (task_store, task_store_origin) = match file.task_store {
        Some(spanned) => {
            let origin = format!("{shown}:{}", line_of(&text, spanned.span().start));
            let keys = task_store_keys(spanned.into_inner(), &origin, &text, &shown, base)?;
            (keys, Some(origin))
        }
        None => (TaskStoreKeys::default(), None),
    };
    let (metrics_on_http, metrics_addr) = file
        .metrics
        .map_or((false, None), |metrics| (metrics.on_http, metrics.addr));
    Ok(Loaded {
        replica: file.replica.map(|name| name.0),
        backends,
        metrics_on_http,
        metrics_addr,
        otlp_endpoint: file.traces.map(|traces| traces.otlp_endpoint),
        search_embeddings: file
            .tool_search
            .as_ref()
            .and_then(|table| table.embeddings.clone()),
        tool_search: file.tool_search.map(|table| {
            table.pin.into_iter().fold(
                tonic_mcp_search::ToolSearch::new(),
                tonic_mcp_search::ToolSearch::pin,
            )
        }),
        tasks: file
            .tasks
            .map_or_else(TaskBounds::default, |table| TaskBounds {
                max_per_owner: table.max_per_owner.map(std::num::NonZeroUsize::get),
                max_running: table.max_running.map(std::num::NonZeroUsize::get),
                max_result_bytes: table.max_result_bytes.map(|bytes| bytes.0),
                mode: table.mode,
                inline_wait: table.inline_wait.map(|wait| wait.0),
            }),
        connections: file
            .connections
            .map_or_else(Connections::default, |table| Connections {
                max: table.max.map(std::num::NonZeroU32::get),
                header_read_timeout: table.header_read_timeout.map(|d| d.0),
                body_read_timeout: table.body_read_timeout.map(|d| d.0),
                idle_timeout: table.idle_timeout.map(|d| d.0),
            }),
        task_store,
        task_store_origin,
    })
}

/// The keys of `[task_store]` at `origin`, its paths relative to `base`.
fn task_store_keys(
    table: TaskStoreTable,
    origin: &str,
    text: &str,
    shown: &std::path::Display<'_>,
    base: &Path,
) -> Result<TaskStoreKeys, Error> {
    let url = match table.url {
        Some(url) => {
            let line = line_of(text, url.span().start);
            let url = url.into_inner();
            crate::task_store::check_url(&url)
                .map_err(|why| Error::new(format!("{shown}:{line}: [task_store] url: {why}")))?;
            Some(url)
        }
        None => None,
    };
    if table.password_env.is_some() && table.password_file.is_some() {
        return Err(Error::new(format!(
            "{origin}: [task_store]: `password_env` and `password_file` both name the \
             password; keep one"
        )));
    }
    Ok(TaskStoreKeys {
        url,
        password_env: table.password_env,
        password_file: table.password_file.map(|path| base.join(path)),
        key_prefix: table.key_prefix,
        key_file: table.key_file.map(|path| base.join(path)),
    })
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn backend(
    table: Table,
    origin: String,
    base: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Backend, Error> {
    let fail = |key: &str, why: String| {
        Error::new(format!("{origin}: backend `{}`: {key}: {why}", table.name))
    };
    let valid_name = !table.name.is_empty()
        && table
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if !valid_name {
        return Err(fail(
            "name",
            "use letters, digits, `_`, `.` and `-`".to_owned(),
        ));
    }
    let mut headers = Headers::default();
    for (name, value) in &table.headers {
        headers
            .add(&format!("{name}: {value}"))
            .map_err(|e| fail(&format!("headers.{name}"), e.to_string()))?;
    }
    for (name, variable) in &table.header_env {
        let value = env(variable).ok_or_else(|| {
            fail(
                &format!("header_env.{name}"),
                format!("the environment variable {variable} is not set (or not UTF-8)"),
            )
        })?;
        headers
            .add(&format!("{name}: {value}"))
            .map_err(|e| fail(&format!("header_env.{name}"), e.to_string()))?;
    }
    let settings = ToolSettings {
        opts: table.options.iter().map(String::as_str).collect(),
        include: table.include.iter().map(String::as_str).collect(),
        exclude: table.exclude.iter().map(String::as_str).collect(),
        prefix: table.prefix.as_deref(),
        tool_names: table.tool_names.as_deref(),
    };
    let options = settings.options().map_err(|e| fail("options", e))?;
    let tls = table.tls.unwrap_or(Tls {
        ca: None,
        server_name: None,
        cert: None,
        key: None,
    });
    let tls_identity = match (tls.cert, tls.key) {
        (Some(cert), Some(key)) => Some((base.join(cert), base.join(key))),
        (None, None) => None,
        _ => {
            return Err(fail(
                "tls",
                "`cert` and `key` go together (a client certificate and its private key)"
                    .to_owned(),
            ));
        }
    };
    Ok(Backend {
        target: Target {
            url: table.target,
            tls_ca: tls.ca.map(|ca| base.join(ca)),
            tls_server_name: tls.server_name,
            tls_identity,
            timeout: table
                .connect_timeout
                .map_or(Duration::from_secs(10), |d| d.0),
        },
        descriptor_set: table.descriptor_set.map(|path| base.join(path)),
        services: table.services,
        options,
        headers,
        call_timeout: table.timeout.map(|d| d.0),
        max_messages: table.max_messages.map(NonZeroU32::get),
        max_result_bytes: table.max_result_bytes.map(|b| b.0),
        max_decoding_message_size: table.max_decoding_message_size.map(|b| b.0),
        max_encoding_message_size: table.max_encoding_message_size.map(|b| b.0),
        name: table.name,
        origin: Some(origin),
    })
}

#[cfg(test)]
mod tests;
