//! The gateway's metrics: the runtime's families (calls, latencies, in flight, tasks) and the
//! state of each backend.

pub(crate) use tonic_mcp_metrics::Metrics;

use crate::error::Error;

/// `mcp_backend_up{backend, target}`: 1 while the backend answers, 0 while calls fail in the
/// transport; a backend by descriptor set has no series until its first call.
pub(crate) fn backend_up(metrics: &Metrics) -> Result<prometheus::IntGaugeVec, Error> {
    register(
        metrics,
        prometheus::IntGaugeVec::new(
            prometheus::Opts::new(
                "mcp_backend_up",
                "Whether the backend answers (1) or calls fail in the transport (0).",
            ),
            &["backend", "target"],
        ),
    )
}

/// `mcp_gateway_reloads_total{outcome}`: reloads of the backends' descriptors (interval and
/// SIGHUP) that `changed` the tools, left them `unchanged`, or were refused for a
/// `collision` between backends.
pub(crate) fn reloads(metrics: &Metrics) -> Result<prometheus::IntCounterVec, Error> {
    register(
        metrics,
        prometheus::IntCounterVec::new(
            prometheus::Opts::new(
                "mcp_gateway_reloads_total",
                "Reloads of the backends' descriptors, by outcome.",
            ),
            &["outcome"],
        ),
    )
}

/// `family`, registered in the server's registry beside the runtime's families.
pub(crate) fn register<C>(metrics: &Metrics, family: prometheus::Result<C>) -> Result<C, Error>
where
    C: prometheus::core::Collector + Clone + 'static,
{
    let failed = |e: prometheus::Error| Error::new(format!("metrics: {e}"));
    let family = family.map_err(failed)?;
    metrics
        .registry()
        .register(Box::new(family.clone()))
        .map_err(failed)?;
    Ok(family)
}
