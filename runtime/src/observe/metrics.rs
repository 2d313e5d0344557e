//! Prometheus metrics of tool calls (feature `metrics`).
//!
//! [`Metrics`] holds a `prometheus` registry with the server's families; give it to
//! [`McpServerBuilder::metrics`] and scrape [`McpServer::metrics_text`] (or `GET /metrics` of
//! [`McpServer::serve_http`] and [`McpServer::serve_metrics`]).
//!
//! | family | type | labels | what |
//! |---|---|---|---|
//! | `mcp_tool_calls_total` | counter | `tool`, `outcome`, `code` | finished tool calls; `outcome` is `ok`, `error` (the backend's gRPC error), `refused` (answered here: bad arguments, over a budget, declined) or `cancelled`; `code` is the gRPC code the result carries |
//! | `mcp_tool_call_duration_seconds` | histogram | `tool` | a tool call from arguments to result |
//! | `mcp_grpc_call_duration_seconds` | histogram | `tool` | the gRPC call(s) of a tool call, response stream and all |
//! | `mcp_tool_calls_in_flight` | gauge | | tool calls running now |
//! | `mcp_tasks_running` | gauge | | MCP tasks running now: at most [`TaskLimits::max_running`], past which a new task is refused |
//! | `mcp_sessions_open` | gauge | | MCP sessions open on the server's streamable HTTP services now |
//!
//! [`McpServerBuilder::metrics`]: crate::McpServerBuilder::metrics
//! [`TaskLimits::max_running`]: crate::TaskLimits::max_running
//! [`McpServer::metrics_text`]: crate::McpServer::metrics_text
//! [`McpServer::serve_http`]: crate::McpServer::serve_http
//! [`McpServer::serve_metrics`]: crate::McpServer::serve_metrics

use std::sync::Arc;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry};

use crate::error::Error;
use crate::{observe::observer::CallObserver, tool::meta::STATUS_META_KEY};

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
    /// [`Error::Metrics`] if `prometheus` refuses a family (it does not for these names).
    pub fn new() -> Result<Metrics, Error> {
        Metrics::with_registry(Registry::new())
    }

    /// The server's families in `registry`, beside what it holds already (a process's own
    /// families, say).
    ///
    /// # Errors
    ///
    /// [`Error::Metrics`] when `registry` has one of these families already.
    pub fn with_registry(registry: Registry) -> Result<Metrics, Error> {
        let failed = |e: prometheus::Error| Error::Metrics(e.to_string());
        let calls = IntCounterVec::new(
            Opts::new("mcp_tool_calls_total", "Tool calls, by tool and outcome."),
            &["tool", "outcome", "code"],
        )
        .map_err(failed)?;
        let histogram = |name: &str, help: &str| {
            HistogramVec::new(
                HistogramOpts::new(name, help).buckets(BUCKETS.to_vec()),
                &["tool"],
            )
        };
        let duration = histogram(
            "mcp_tool_call_duration_seconds",
            "Tool calls from arguments to result, in seconds.",
        )
        .map_err(failed)?;
        let grpc_duration = histogram(
            "mcp_grpc_call_duration_seconds",
            "The gRPC calls of tool calls, in seconds.",
        )
        .map_err(failed)?;
        let in_flight =
            IntGauge::new("mcp_tool_calls_in_flight", "Tool calls running now.").map_err(failed)?;
        let tasks = IntGauge::new("mcp_tasks_running", "MCP tasks running now.").map_err(failed)?;
        let sessions = IntGauge::new(
            "mcp_sessions_open",
            "MCP sessions open on streamable HTTP now.",
        )
        .map_err(failed)?;
        for collector in [
            Box::new(calls.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(duration.clone()),
            Box::new(grpc_duration.clone()),
            Box::new(in_flight.clone()),
            Box::new(tasks.clone()),
            Box::new(sessions.clone()),
        ] {
            registry.register(collector).map_err(failed)?;
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
    fn call_ended(
        &self,
        tool: &str,
        result: Option<&rmcp::model::CallToolResult>,
        elapsed: Duration,
    ) {
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
    /// The registry in Prometheus's text format, with the gauges read now.
    pub(crate) fn encode(&self, in_flight: usize, tasks: usize, sessions: usize) -> String {
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.inner.in_flight.set(gauge(in_flight));
        self.inner.tasks.set(gauge(tasks));
        self.inner.sessions.set(gauge(sessions));
        prometheus::TextEncoder::new()
            .encode_to_string(&self.inner.registry.gather())
            .unwrap_or_else(|e| format!("# the metrics could not be encoded: {e}\n"))
    }
}
