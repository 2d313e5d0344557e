//! `grpc-mcp-gateway`: serve any gRPC server as MCP tools. See `--help`.

use std::process::ExitCode;

use grpc_mcp_gateway::traces::Traces;
use grpc_mcp_gateway::{Config, Gateway, Parsed};
use tonic_mcp::McpServer;
use tonic_mcp_serve::HttpServer;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// mimalloc rather than the system allocator: building the tools of a large descriptor set is
/// mostly allocating and freeing small JSON trees (docs/benchmark-history.md, the gateway on googleapis).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let config = match grpc_mcp_gateway::parse_args(std::env::args_os().skip(1)) {
        Ok(Parsed::Run(config)) => config,
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("grpc-mcp-gateway: {error}");
            return ExitCode::from(2);
        }
    };
    // Stdout is the MCP channel under stdio (and the report under --check): every log line
    // goes to stderr.
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn")),
        );
    let (traces, spans) = match config.otlp_endpoint.as_deref().filter(|_| !config.check) {
        Some(endpoint) => match Traces::start(endpoint) {
            Ok((traces, spans)) => (Some(traces), Some(spans)),
            Err(error) => {
                eprintln!("grpc-mcp-gateway: {error}");
                return ExitCode::from(2);
            }
        },
        None => (None, None),
    };
    tracing_subscriber::registry().with(logs).with(spans).init();
    if let Some(endpoint) = &config.otlp_endpoint {
        tracing::info!(endpoint = %endpoint, "exporting traces over OTLP/gRPC");
    }
    if config.check {
        return match grpc_mcp_gateway::check::check(&config).await {
            Ok(report) => {
                print!("{report}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("grpc-mcp-gateway --check: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let code = match run(&config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    };
    if let Some(traces) = traces {
        traces.shutdown().await;
    }
    code
}

async fn run(config: &Config) -> Result<(), Box<dyn std::error::Error>> {
    for backend in &config.backends {
        tracing::info!(
            backend = %backend.name,
            target_url = %backend.target.url,
            descriptors = %backend
                .descriptor_set
                .as_ref()
                .map_or_else(|| "gRPC reflection".to_owned(), |p| p.display().to_string()),
            headers = ?backend.headers.names(),
            "starting"
        );
    }
    // Under --http the address is bound first: the default resource URL names its port.
    let listener = match config.http {
        Some(addr) => Some(tokio::net::TcpListener::bind(addr).await?),
        None => None,
    };
    let mut config = config.clone();
    if let (Some(auth), Some(listener)) = (&config.auth, &listener) {
        let authorization = auth.authorization(listener.local_addr()?)?;
        tracing::info!(
            issuer = %auth.issuer,
            resource = authorization.resource(),
            scopes = ?auth.scopes,
            "requiring OAuth access tokens"
        );
        // The public host of the resource URL is a Host clients send.
        if let Some(host) = authorization
            .resource()
            .parse::<tonic::codegen::http::Uri>()
            .ok()
            .and_then(|uri| uri.authority().map(|a| a.to_string()))
        {
            config.allowed_hosts.push(host);
        }
        config.authorization = Some(authorization);
    }
    let config = &config;
    let gateway = std::sync::Arc::new(Gateway::connect(config).await?);
    if let Some(store) = &gateway.task_store {
        // The store's name has no credentials.
        tracing::info!(
            task_store = %store,
            replica = config.replica.as_deref().unwrap_or("(unnamed: its process id and start time)"),
            task_key = config.task_key_file.is_some(),
            "sharing MCP tasks with the other replicas on the task store"
        );
    } else if config.task_key_file.is_some() {
        tracing::info!(
            replica = config.replica.as_deref().unwrap_or("(none)"),
            "signing the ids of tasks on long-running operations with the task key"
        );
    }
    tokio::spawn(reload(std::sync::Arc::clone(&gateway), config.clone()));
    let server = gateway.server.clone();
    // Hosts list every tool when they connect: without tool search, every schema is made while
    // the gateway already answers, instead of page after page as they are listed.
    if config.tool_search.is_none() {
        server.make_schemas_in_background()?;
    }
    let served = server.served_tool_names();
    let tools = served.len();
    // A pinned name no tool has is most likely a typo; it is listed once such a tool appears.
    for name in config.tool_search.iter().flat_map(|search| search.pinned()) {
        if !served.iter().any(|tool| tool == name) {
            tracing::warn!(tool = name, "--pin names no tool served now");
        }
    }
    if let Some(addr) = config.metrics_addr {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        tracing::info!(
            "serving Prometheus metrics at http://{}/metrics",
            listener.local_addr()?
        );
        let metrics = gateway
            .metrics
            .clone()
            .ok_or("the gateway has no metrics")?;
        let server = server.clone();
        tokio::spawn(async move {
            if let Err(error) = metrics.serve(server, listener).await {
                tracing::error!("the metrics listener failed: {error}");
            }
        });
    }
    match listener {
        None => {
            tracing::info!(tools, services = ?gateway.services, "serving MCP over stdio");
            tokio::select! {
                served = server.serve_stdio() => {
                    served?;
                    tracing::info!("the MCP client disconnected");
                }
                signal = terminated() => tracing::info!("{signal}, shutting down"),
            }
        }
        Some(listener) => {
            let mut http = if config.stateless {
                McpServer::stateless_http_config()
            } else {
                McpServer::session_http_config()
            };
            // Added to the loopback origins the configuration allows already.
            http.allowed_origins
                .extend(config.allowed_origins.iter().cloned());
            if !config.allowed_hosts.is_empty() {
                let hosts = ["localhost", "127.0.0.1", "::1"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(config.allowed_hosts.iter().cloned());
                http = http.with_allowed_hosts(hosts);
            }
            let shutdown = http.cancellation_token.clone();
            tokio::spawn(async move {
                let signal = terminated().await;
                tracing::info!("{signal}, shutting down");
                shutdown.cancel();
            });
            let addr = listener.local_addr()?;
            // Tests and scripts read the bound address (port 0 picks one) from stdout.
            println!("listening on {addr}");
            tracing::info!(
                tools,
                services = ?gateway.services,
                stateless = config.stateless,
                "serving MCP over streamable HTTP at http://{addr}/mcp"
            );
            let serving = HttpServer::new().connection_limits(config.connection_limits);
            match &config.authorization {
                Some(authorization) => {
                    let layer = authorization.layer(&server);
                    serving.layer(layer).serve(server, listener, http).await?;
                }
                None => serving.serve(server, listener, http).await?,
            }
        }
    }
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM (what Kubernetes and container engines send), with
/// the signal's name.
async fn terminated() -> &'static str {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => signal.recv().await,
            Err(error) => {
                tracing::warn!("SIGTERM cannot stop the gateway gracefully: {error}");
                std::future::pending().await
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted",
        _ = terminate => "terminated",
    }
}

/// Loads the backends again every `--reload-interval` and on SIGHUP, for as long as the
/// gateway serves.
async fn reload(gateway: std::sync::Arc<Gateway>, config: Config) {
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(hangup) => Some(hangup),
        Err(error) => {
            tracing::warn!("SIGHUP cannot reload the backends: {error}");
            None
        }
    };
    let mut ticks = config.reload_interval.map(|period| {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks
    });
    loop {
        let cause = tokio::select! {
            Some(()) = async { match hangup.as_mut() { Some(h) => h.recv().await, None => None } } => "SIGHUP",
            _ = async { match ticks.as_mut() { Some(t) => t.tick().await, None => std::future::pending().await } } => "interval",
        };
        match gateway.reload(&config).await {
            Ok(true) => tracing::info!(
                cause,
                tools = gateway.server.served_tool_names().len(),
                "the tools changed"
            ),
            Ok(false) => tracing::debug!(cause, "reloaded; the tools are the same"),
            Err(error) => tracing::error!(
                cause,
                "reloading failed, the tools stay as they were: {error}"
            ),
        }
    }
}
