//! The command line.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::ArgMatches;

use crate::auth::{self, AuthSettings};
use crate::backend::{Backend, FLAGS_BACKEND, ToolSettings};
use crate::config_file::Connections;
use crate::error::Error;
use crate::headers::Headers;
use crate::target::Target;

mod command;
mod store;
mod tasks;

use crate::values::{check_origin, parse_duration};
use command::command;

/// Everything the command line (and the `--config` file it names) sets.
#[derive(Debug, Clone)]
pub struct Config {
    /// The gRPC servers behind the gateway: one from the flags, or the `[[backend]]` tables
    /// of `--config FILE`.
    pub backends: Vec<Backend>,
    /// Inbound HTTP headers forwarded as metadata under `--http`.
    pub forward_headers: Vec<String>,
    /// `--check`: load every backend, print the tools and warnings, and exit.
    pub check: bool,
    /// `--reload-interval`: how often every backend is loaded again (`None`: only at start).
    /// SIGHUP reloads at once.
    pub reload_interval: Option<Duration>,
    /// `--metrics`: serve Prometheus metrics at `/metrics` of the MCP HTTP listener.
    pub metrics: bool,
    /// `--metrics-addr`: serve Prometheus metrics at `/metrics` on this address of their own.
    pub metrics_addr: Option<SocketAddr>,
    /// `--otlp-endpoint`: export traces over OTLP/gRPC to this collector.
    pub otlp_endpoint: Option<String>,
    /// `--tool-search` (with the `--pin` tools): list the discovery tools instead of every tool.
    pub tool_search: Option<tonic_mcp_search::ToolSearch>,
    /// `--search-embeddings` and its options, or `[tool_search.embeddings]`: rank tool search
    /// by keywords and embeddings, fused.
    pub search_embeddings: Option<crate::search::SearchEmbeddings>,
    /// Serve streamable HTTP on this address instead of stdio.
    pub http: Option<SocketAddr>,
    /// With `--http`: no sessions.
    pub stateless: bool,
    /// With `--http`: this replica's name (`--replica`, or `replica` in `--config`), which
    /// starts the id of every session it opens, for routing sessions behind a load balancer.
    pub replica: Option<String>,
    /// With `--http`: the task store the replicas share (`--task-store` and its options, or
    /// the `[task_store]` table of `--config`).
    pub task_store: Option<crate::task_store::TaskStoreSettings>,
    /// With `--http`: the file of the key that signs the ids of tasks waiting on a
    /// long-running operation (`--task-key-file`, or `key_file` in `[task_store]`).
    pub task_key_file: Option<PathBuf>,
    /// With `--http`: bounds on the HTTP connections (`--max-connections`, the read and idle
    /// timeouts, or the `[connections]` table of `--config`).
    pub connection_limits: tonic_mcp_serve::ConnectionLimits,
    /// Bounds on MCP tasks (`--max-tasks-per-owner`, `--max-running-tasks`,
    /// `--max-task-result-bytes`, or the `[tasks]` table of `--config`).
    pub task_limits: tonic_mcp_tasks::TaskLimits,
    /// When a call becomes an MCP task (`--task-mode`, `--task-inline-wait`, or `mode` and
    /// `inline_wait` in the `[tasks]` table of `--config`).
    pub task_mode: tonic_mcp::TaskMode,
    /// With `--http`: Host names accepted besides loopback.
    pub allowed_hosts: Vec<String>,
    /// With `--http`: browser origins accepted; a request carrying any other `Origin` is
    /// refused.
    pub allowed_origins: Vec<String>,
    /// The server name in the MCP `initialize` result.
    pub name: String,
    /// With `--http` and `--auth-issuer`: serve as an OAuth 2.1 resource server.
    pub auth: Option<AuthSettings>,
    /// The resource server settings, made from [`auth`](Self::auth) once the listening
    /// address is known.
    pub authorization: Option<tonic_mcp_auth::Authorization>,
}

impl Config {
    /// The backend named `name`.
    ///
    /// # Errors
    ///
    /// No backend has that name.
    pub fn backend(&self, name: &str) -> Result<&Backend, Error> {
        self.backends
            .iter()
            .find(|backend| backend.name == name)
            .ok_or_else(|| Error::new(format!("no backend is named `{name}`")))
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run the gateway.
    Run(Box<Config>),
    /// Print this (help or version) and exit successfully.
    Print(String),
}

/// The full `--help` text.
pub fn help() -> String {
    command().render_long_help().to_string()
}

/// Parses the command line (without the program name).
///
/// # Errors
///
/// Unknown flags, missing values, invalid options or headers; the message says which.
pub fn parse<I, T>(args: I) -> Result<Parsed, Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args =
        std::iter::once(OsString::from("grpc-mcp-gateway")).chain(args.into_iter().map(Into::into));
    let matches = match command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => {
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    Ok(Parsed::Print(error.render().to_string()))
                }
                _ => Err(Error::new(error.render().to_string().trim_end())),
            };
        }
    };
    Ok(Parsed::Run(Box::new(config(&matches)?)))
}

impl Config {
    /// Parses a command line that must run the gateway (help and version are errors here).
    ///
    /// # Errors
    ///
    /// As for [`parse`].
    pub fn parse<I, T>(args: I) -> Result<Config, Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        match parse(args)? {
            Parsed::Run(config) => Ok(*config),
            Parsed::Print(text) => Err(Error::new(text)),
        }
    }
}

fn values<'a>(matches: &'a ArgMatches, id: &str) -> impl Iterator<Item = &'a String> {
    matches.get_many::<String>(id).into_iter().flatten()
}

/// The flags that describe the one backend of the command line; `--config` takes their place.
const BACKEND_FLAGS: &[&str] = &[
    "target",
    "tls-ca",
    "tls-server-name",
    "tls-cert",
    "tls-key",
    "header",
    "header-env",
    "connect-timeout",
    "timeout",
    "max-messages",
    "max-result-bytes",
    "max-decoding-message-size",
    "max-encoding-message-size",
    "descriptor-set",
    "service",
    "include",
    "exclude",
    "prefix",
    "tool-names",
    "opt",
];

fn config(matches: &ArgMatches) -> Result<Config, Error> {
    let mut metrics = matches.get_flag("metrics");
    let mut metrics_addr = matches.get_one::<SocketAddr>("metrics-addr").copied();
    let mut otlp_endpoint = matches.get_one::<String>("otlp-endpoint").cloned();
    let mut tool_search = matches.get_flag("tool-search").then(|| {
        values(matches, "pin").fold(tonic_mcp_search::ToolSearch::new(), |search, name| {
            search.pin(name.clone())
        })
    });
    let mut search_embeddings =
        matches
            .get_one::<String>("search-embeddings")
            .map(|url| crate::search::SearchEmbeddings {
                url: url.clone(),
                model: matches
                    .get_one::<String>("search-embeddings-model")
                    .cloned()
                    .unwrap_or_default(),
                api_key_env: matches
                    .get_one::<String>("search-embeddings-key-env")
                    .cloned(),
                cache_dir: matches
                    .get_one::<PathBuf>("search-embeddings-cache")
                    .cloned(),
                batch_size: None,
                requests_per_second: None,
            });
    let mut connections = connection_flags(matches)?;
    let mut task_bounds = tasks::flags(matches)?;
    let mut replica = matches.get_one::<String>("replica").cloned();
    let mut task_store = store::flags(matches);
    let backends = match matches.get_one::<PathBuf>("config") {
        Some(path) => {
            let given = BACKEND_FLAGS.iter().find(|id| {
                matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
            });
            if let Some(flag) = given {
                return Err(Error::new(format!(
                    "--{flag} conflicts with --config {}: set it in the file's [[backend]] \
                     tables instead",
                    path.display()
                )));
            }
            let file = crate::config_file::load(path)?;
            if (file.metrics_on_http && metrics)
                || (file.metrics_addr.is_some() && metrics_addr.is_some())
            {
                return Err(Error::new(format!(
                    "--metrics and --metrics-addr conflict with the [metrics] table of {}; set \
                     them in one place",
                    path.display()
                )));
            }
            if file.otlp_endpoint.is_some() && otlp_endpoint.is_some() {
                return Err(Error::new(format!(
                    "--otlp-endpoint conflicts with the [traces] table of {}; set it in one place",
                    path.display()
                )));
            }
            otlp_endpoint = otlp_endpoint.or(file.otlp_endpoint);
            if file.tool_search.is_some() && tool_search.is_some() {
                return Err(Error::new(format!(
                    "--tool-search conflicts with the [tool_search] table of {}; set it in one \
                     place",
                    path.display()
                )));
            }
            tool_search = tool_search.or(file.tool_search);
            search_embeddings = search_embeddings.or(file.search_embeddings);
            task_bounds = tasks::merge(task_bounds, file.tasks, path)?;
            connections = merge_connections(connections, file.connections, path)?;
            if file.connections != Connections::default()
                && matches.get_one::<SocketAddr>("http").is_none()
            {
                return Err(Error::new(format!(
                    "{}: [connections] needs --http (it bounds the MCP HTTP listener's \
                     connections)",
                    path.display()
                )));
            }
            replica = match (replica, file.replica) {
                (Some(_), Some(_)) => {
                    return Err(Error::new(format!(
                        "--replica conflicts with `replica` in {}; set it in one place",
                        path.display()
                    )));
                }
                (Some(name), None) | (None, Some(name)) => Some(name),
                (None, None) => None,
            };
            if replica.is_some() && matches.get_one::<SocketAddr>("http").is_none() {
                return Err(Error::new(format!(
                    "{}: `replica` needs --http (it names the MCP sessions of the HTTP listener)",
                    path.display()
                )));
            }
            task_store = store::merge(task_store, file.task_store, path)?;
            if let (Some(origin), None) = (
                &file.task_store_origin,
                matches.get_one::<SocketAddr>("http"),
            ) {
                return Err(Error::new(format!(
                    "{origin}: [task_store] needs --http (it shares the tasks of the replicas \
                     behind one load balancer)"
                )));
            }
            metrics |= file.metrics_on_http;
            metrics_addr = metrics_addr.or(file.metrics_addr);
            if metrics && matches.get_one::<SocketAddr>("http").is_none() {
                return Err(Error::new(format!(
                    "{}: [metrics] on_http needs --http (metrics are served on the MCP HTTP \
                     listener)",
                    path.display()
                )));
            }
            file.backends
        }
        None => vec![flags_backend(matches)?],
    };
    let (task_store, task_key_file) = store::settings(task_store)?;
    let forward_headers: Vec<String> = values(matches, "forward-header").cloned().collect();
    Ok(Config {
        auth: auth::settings(matches, &forward_headers)?,
        authorization: None,
        backends,
        forward_headers,
        check: matches.get_flag("check"),
        reload_interval: match matches
            .get_one::<String>("reload-interval")
            .map(String::as_str)
        {
            None | Some("off") => None,
            Some(text) => Some(parse_duration(text).ok_or_else(|| {
                Error::new(format!(
                    "--reload-interval {text}: expects a duration such as 30s or 5m, or `off`"
                ))
            })?),
        },
        metrics,
        metrics_addr,
        tool_search,
        search_embeddings,
        otlp_endpoint: match otlp_endpoint {
            Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(Error::new(format!(
                    "--otlp-endpoint {url}: expects an http:// or https:// URL of an OTLP/gRPC \
                     collector, such as http://otel-collector:4317"
                )));
            }
            other => other,
        },
        http: matches.get_one::<SocketAddr>("http").copied(),
        stateless: matches.get_flag("stateless"),
        replica,
        task_store,
        task_key_file,
        task_limits: tasks::limits(task_bounds),
        task_mode: tasks::mode(task_bounds)?,
        connection_limits: connection_limits(connections),
        allowed_hosts: values(matches, "allowed-host").cloned().collect(),
        allowed_origins: values(matches, "allowed-origin")
            .map(|origin| check_origin(origin).map(|()| origin.clone()))
            .collect::<Result<_, _>>()?,
        name: matches
            .get_one::<String>("name")
            .cloned()
            .unwrap_or_else(|| "grpc-mcp-gateway".to_owned()),
    })
}

/// The value of the duration flag `id`, if given.
fn duration_flag(matches: &ArgMatches, id: &str) -> Result<Option<Duration>, Error> {
    matches
        .get_one::<String>(id)
        .map(|text| {
            parse_duration(text).ok_or_else(|| {
                Error::new(format!(
                    "--{id} {text}: expects a duration such as 500ms, 10s or 1m"
                ))
            })
        })
        .transpose()
}

/// The connection bounds the flags set.
fn connection_flags(matches: &ArgMatches) -> Result<Connections, Error> {
    Ok(Connections {
        max: matches.get_one::<u32>("max-connections").copied(),
        header_read_timeout: duration_flag(matches, "header-read-timeout")?,
        body_read_timeout: duration_flag(matches, "body-read-timeout")?,
        idle_timeout: duration_flag(matches, "connection-idle-timeout")?,
    })
}

/// A setting given as a flag (`names.0`) or as the key `names.1` of the config file's
/// `[table]` at `path`: either, or neither, never both.
fn flag_or_key<T>(
    table: &str,
    flag: Option<T>,
    key: Option<T>,
    names: (&str, &str),
    path: &std::path::Path,
) -> Result<Option<T>, Error> {
    match (flag, key) {
        (Some(_), Some(_)) => Err(Error::new(format!(
            "--{} conflicts with `{}` in the [{table}] table of {}; set it in one place",
            names.0,
            names.1,
            path.display()
        ))),
        (flag, key) => Ok(flag.or(key)),
    }
}

/// The flags' bounds and those of the `[connections]` table of `path`: each set in one
/// place at most.
fn merge_connections(
    flags: Connections,
    file: Connections,
    path: &std::path::Path,
) -> Result<Connections, Error> {
    Ok(Connections {
        max: flag_or_key(
            "connections",
            flags.max,
            file.max,
            ("max-connections", "max"),
            path,
        )?,
        header_read_timeout: flag_or_key(
            "connections",
            flags.header_read_timeout,
            file.header_read_timeout,
            ("header-read-timeout", "header_read_timeout"),
            path,
        )?,
        body_read_timeout: flag_or_key(
            "connections",
            flags.body_read_timeout,
            file.body_read_timeout,
            ("body-read-timeout", "body_read_timeout"),
            path,
        )?,
        idle_timeout: flag_or_key(
            "connections",
            flags.idle_timeout,
            file.idle_timeout,
            ("connection-idle-timeout", "idle_timeout"),
            path,
        )?,
    })
}

/// The HTTP server's connection bounds, with its defaults where nothing was set.
fn connection_limits(set: Connections) -> tonic_mcp_serve::ConnectionLimits {
    let mut limits = tonic_mcp_serve::ConnectionLimits::default();
    if let Some(max) = set.max {
        limits.max_connections = usize::try_from(max).unwrap_or(usize::MAX);
    }
    limits.header_read_timeout = set
        .header_read_timeout
        .unwrap_or(limits.header_read_timeout);
    limits.body_read_timeout = set.body_read_timeout.unwrap_or(limits.body_read_timeout);
    limits.idle_timeout = set.idle_timeout.unwrap_or(limits.idle_timeout);
    limits
}

/// The one backend the flags describe.
fn flags_backend(matches: &ArgMatches) -> Result<Backend, Error> {
    let mut headers = Headers::default();
    for header in values(matches, "header") {
        headers.add(header)?;
    }
    for header in values(matches, "header-env") {
        let Some((name, var)) = header.split_once(':') else {
            return Err(Error::new(
                "--header-env expects `NAME: VAR`, for example --header-env 'authorization: API_TOKEN'",
            ));
        };
        let (name, var) = (name.trim(), var.trim());
        let value = std::env::var(var).map_err(|_| {
            Error::new(format!(
                "--header-env {name}: the environment variable {var} is not set (or not UTF-8)"
            ))
        })?;
        headers.add(&format!("{name}: {value}"))?;
    }
    let duration = |id: &str| duration_flag(matches, id);
    let settings = ToolSettings {
        opts: values(matches, "opt").map(String::as_str).collect(),
        include: values(matches, "include").map(String::as_str).collect(),
        exclude: values(matches, "exclude").map(String::as_str).collect(),
        prefix: matches.get_one::<String>("prefix").map(String::as_str),
        tool_names: matches.get_one::<String>("tool-names").map(String::as_str),
    };
    Ok(Backend {
        name: FLAGS_BACKEND.to_owned(),
        origin: None,
        target: Target {
            url: matches
                .get_one::<String>("target")
                .cloned()
                .unwrap_or_default(),
            tls_ca: matches.get_one::<PathBuf>("tls-ca").cloned(),
            tls_server_name: matches.get_one::<String>("tls-server-name").cloned(),
            tls_identity: matches
                .get_one::<PathBuf>("tls-cert")
                .cloned()
                .zip(matches.get_one::<PathBuf>("tls-key").cloned()),
            timeout: duration("connect-timeout")?.unwrap_or(Duration::from_secs(10)),
        },
        descriptor_set: matches.get_one::<PathBuf>("descriptor-set").cloned(),
        services: values(matches, "service").cloned().collect(),
        options: settings
            .options()
            .map_err(|e| Error::new(format!("--opt {e}")))?,
        headers,
        call_timeout: duration("timeout")?,
        max_messages: matches.get_one::<u32>("max-messages").copied(),
        max_result_bytes: matches.get_one::<usize>("max-result-bytes").copied(),
        max_decoding_message_size: matches
            .get_one::<usize>("max-decoding-message-size")
            .copied(),
        max_encoding_message_size: matches
            .get_one::<usize>("max-encoding-message-size")
            .copied(),
    })
}

#[cfg(test)]
mod tests;
