//! OpenTelemetry traces (`--otlp-endpoint`): the runtime's spans, a `mcp.tool_call` per tool
//! call and a `grpc.call` per gRPC call under it, exported over OTLP/gRPC; W3C trace context
//! read from each MCP request and sent to the backends.
//!
//! The standard `OTEL_*` variables the SDK and the exporter read apply: `OTEL_SERVICE_NAME`
//! (default `grpc-mcp-gateway`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and its
//! argument, `OTEL_BSP_*` for batching, `OTEL_EXPORTER_OTLP_HEADERS` and `_TIMEOUT`.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig as _, WithTonicConfig as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;

use crate::error::Error;

/// What exports the spans; [`Traces::shutdown`] sends the last of them.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Traces {
    /// Starts exporting to the OTLP/gRPC collector at `endpoint` (`http://` or `https://`,
    /// verified against the system's roots), sets the W3C trace context propagator, and returns
    /// the layer that turns the runtime's spans into OpenTelemetry spans. Call it inside the
    /// Tokio runtime: the exporter's channel lives there.
    ///
    /// # Errors
    ///
    /// The endpoint is not a URL the exporter accepts.
    pub fn start<S>(endpoint: &str) -> Result<(Traces, impl Layer<S>), Error>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint);
        if endpoint.starts_with("https://") {
            exporter = exporter
                .with_tls_config(tonic::transport::ClientTlsConfig::new().with_native_roots());
        }
        let exporter = exporter
            .build()
            .map_err(|e| Error::new(format!("--otlp-endpoint {endpoint}: {e}")))?;
        let service_name = std::env::var("OTEL_SERVICE_NAME")
            .ok()
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "grpc-mcp-gateway".to_owned());
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(service_name)
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let tracer = provider.tracer("grpc-mcp-gateway");
        // The runtime's call spans only, whatever RUST_LOG says of the log lines.
        let spans = Targets::new()
            .with_target("tonic_mcp", LevelFilter::INFO)
            .with_default(LevelFilter::OFF);
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(spans);
        Ok((Traces { provider }, layer))
    }

    /// Exports the spans not sent yet and stops; waits at most 5 s.
    pub async fn shutdown(self) {
        let provider = self.provider;
        let flushed = tokio::task::spawn_blocking(move || {
            provider.shutdown_with_timeout(std::time::Duration::from_secs(5))
        })
        .await;
        match flushed {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!("the last spans could not be exported: {error}"),
            Err(error) => tracing::warn!("the last spans could not be exported: {error}"),
        }
    }
}
