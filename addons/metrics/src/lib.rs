//! Prometheus metrics of the tool calls of a [`tonic_mcp`] server.
//!
//! [`Metrics`] holds a `prometheus` registry with the server's families. It is a
//! [`CallObserver`]: [`Metrics::install`] registers it with a server's builder, and optionally
//! adds `GET /metrics` to the MCP listener (`tonic-mcp-serve`). Scrape it there, on a port of
//! its own ([`Metrics::serve`]), or read [`Metrics::text`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use tonic_mcp::McpServer;
//! use tonic_mcp_metrics::Metrics;
//!
//! let metrics = Metrics::new()?;
//! let server = metrics
//!     .install(McpServer::builder("items", "1.0.0"), false)
//!     .build();
//! // Prometheus scrapes an internal port; the MCP listener stays without `/metrics`.
//! let internal = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
//! tokio::spawn(metrics.serve(server.clone(), internal));
//! # Ok(()) }
//! ```
//!
//! | family | type | labels | what |
//! |---|---|---|---|
//! | `mcp_tool_calls_total` | counter | `tool`, `outcome`, `code` | finished tool calls; `outcome` is `ok`, `error` (the backend's gRPC error), `refused` (answered here: bad arguments, over a budget, declined) or `cancelled`; `code` is the gRPC code the result carries |
//! | `mcp_tool_call_duration_seconds` | histogram | `tool` | a tool call from arguments to result |
//! | `mcp_grpc_call_duration_seconds` | histogram | `tool` | the gRPC call(s) of a tool call, response stream and all |
//! | `mcp_tool_calls_in_flight` | gauge | | tool calls running now |
//! | `mcp_tasks_running` | gauge | | MCP tasks running now ([`Load::tasks_running`]; with `tonic-mcp-tasks`, at most its `TaskLimits::max_running`, past which a new task is refused) |
//! | `mcp_sessions_open` | gauge | | MCP sessions open on the server's streamable HTTP services now |
//!
//! The gauges are read from [`McpServer::load`] at each scrape.
//!
//! [`Load::tasks_running`]: tonic_mcp::Load::tasks_running

use std::sync::Arc;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry};
use tonic_mcp::{
    CallObserver, CallToolResult, HttpResponse, Load, McpServer, McpServerBuilder, STATUS_META_KEY,
    plain_response,
};

/// Seconds: from a millisecond to two minutes, the longest tool deadlines.
const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// The server's metric families in a `prometheus` registry. Cloning shares them.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Families>,
}

struct Families {
    registry: Registry,
    calls: IntCounterVec,
    duration: HistogramVec,
    grpc_duration: HistogramVec,
    in_flight: IntGauge,
    tasks: IntGauge,
    sessions: IntGauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A fresh registry with the server's families.
    ///
    /// # Errors
    ///
    /// If `prometheus` refuses a family (it does not for these names).
    pub fn new() -> Result<Metrics, prometheus::Error> {
        Metrics::with_registry(Registry::new())
    }

    /// The server's families in `registry`, beside what it holds already (a process's own
    /// families, say).
    ///
    /// # Errors
    ///
    /// [`prometheus::Error::AlreadyReg`] when `registry` has one of these families already.
    pub fn with_registry(registry: Registry) -> Result<Metrics, prometheus::Error> {
        let calls = IntCounterVec::new(
            Opts::new("mcp_tool_calls_total", "Tool calls, by tool and outcome."),
            &["tool", "outcome", "code"],
        )?;
        let histogram = |name: &str, help: &str| {
            HistogramVec::new(
                HistogramOpts::new(name, help).buckets(BUCKETS.to_vec()),
                &["tool"],
            )
        };
        let duration = histogram(
            "mcp_tool_call_duration_seconds",
            "Tool calls from arguments to result, in seconds.",
        )?;
        let grpc_duration = histogram(
            "mcp_grpc_call_duration_seconds",
            "The gRPC calls of tool calls, in seconds.",
        )?;
        let in_flight = IntGauge::new("mcp_tool_calls_in_flight", "Tool calls running now.")?;
        let tasks = IntGauge::new("mcp_tasks_running", "MCP tasks running now.")?;
        let sessions = IntGauge::new(
            "mcp_sessions_open",
            "MCP sessions open on streamable HTTP now.",
        )?;
        for collector in [
            Box::new(calls.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(duration.clone()),
            Box::new(grpc_duration.clone()),
            Box::new(in_flight.clone()),
            Box::new(tasks.clone()),
            Box::new(sessions.clone()),
        ] {
            registry.register(collector)?;
        }
        Ok(Metrics {
            inner: Arc::new(Families {
                registry,
                calls,
                duration,
                grpc_duration,
                in_flight,
                tasks,
                sessions,
            }),
        })
    }

    /// The registry, for families of the application's own (the gateway adds the state of
    /// each backend).
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }
}

/// Tool calls counted by outcome and timed, and their gRPC requests timed.
impl CallObserver for Metrics {
    /// A finished tool call: `result` is what the client got (`None`: cancelled).
    fn call_ended(&self, tool: &str, result: Option<&CallToolResult>, elapsed: Duration) {
        let (outcome, code) = match result {
            None => ("cancelled", "CANCELLED"),
            Some(result) => {
                let status = result
                    .meta
                    .as_ref()
                    .and_then(|meta| meta.0.get(STATUS_META_KEY));
                let code = status
                    .and_then(|status| status.get("name"))
                    .and_then(|name| name.as_str())
                    .unwrap_or("UNKNOWN");
                let local = status
                    .and_then(|status| status.get("local"))
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false);
                let outcome = match (result.is_error == Some(true), local) {
                    (false, _) => "ok",
                    (true, true) => "refused",
                    (true, false) => "error",
                };
                (outcome, code)
            }
        };
        self.inner
            .calls
            .with_label_values(&[tool, outcome, code])
            .inc();
        self.inner
            .duration
            .with_label_values(&[tool])
            .observe(elapsed.as_secs_f64());
    }

    /// The gRPC part of a tool call.
    fn grpc_ended(&self, tool: &str, elapsed: Duration) {
        self.inner
            .grpc_duration
            .with_label_values(&[tool])
            .observe(elapsed.as_secs_f64());
    }
}

impl Metrics {
    /// Registers the metrics with `builder` as an observer of its calls; with `on_http`,
    /// the MCP listener (`tonic-mcp-serve`) also answers `GET /metrics`, without
    /// authorization: leave it off when that listener is public, and serve the metrics on an
    /// internal port instead ([`serve`](Self::serve)).
    pub fn install(&self, builder: McpServerBuilder, on_http: bool) -> McpServerBuilder {
        let builder = builder.observe(self.clone());
        if !on_http {
            return builder;
        }
        let metrics = self.clone();
        builder.http_get("/metrics", move |server| metrics.response(server))
    }

    /// The registry in Prometheus's text format, with the gauges read from `server` now.
    pub fn text(&self, server: &McpServer) -> String {
        let load: Load = server.load();
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.inner.in_flight.set(gauge(load.calls_in_flight));
        self.inner.tasks.set(gauge(load.tasks_running));
        self.inner.sessions.set(gauge(load.sessions_open));
        prometheus::TextEncoder::new()
            .encode_to_string(&self.inner.registry.gather())
            .unwrap_or_else(|e| format!("# the metrics could not be encoded: {e}\n"))
    }

    /// `GET /metrics`: the text format, with its content type.
    pub fn response(&self, server: &McpServer) -> HttpResponse {
        let mut response = plain_response(http::StatusCode::OK, self.text(server));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(prometheus::TEXT_FORMAT),
        );
        response
    }

    /// Serve `GET /metrics` of `server` (and nothing else: other requests get 404) on
    /// `listener`, for a port of its own that only Prometheus reaches, until accepting fails;
    /// run it as a task beside the MCP transport.
    ///
    /// # Errors
    ///
    /// When accepting connections fails.
    pub async fn serve(
        self,
        server: McpServer,
        listener: tokio::net::TcpListener,
    ) -> std::io::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            let metrics = self.clone();
            let server = server.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let answer = if request.uri().path() == "/metrics"
                            && request.method() == http::Method::GET
                        {
                            metrics.response(&server)
                        } else {
                            plain_response(http::StatusCode::NOT_FOUND, "")
                        };
                        std::future::ready(Ok::<_, std::convert::Infallible>(answer))
                    },
                );
                let connection = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
                if let Err(error) = connection {
                    tracing::debug!(%error, "metrics connection ended with an error");
                }
            });
        }
    }
}
