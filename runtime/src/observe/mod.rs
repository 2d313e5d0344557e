//! What a call leaves behind for its operators: its `tracing` spans (with OpenTelemetry
//! context under the `otel` feature) and Prometheus metrics under the `metrics` feature.

#[cfg(feature = "metrics")]
pub(crate) mod metrics;
pub(crate) mod observer;
pub(crate) mod telemetry;
