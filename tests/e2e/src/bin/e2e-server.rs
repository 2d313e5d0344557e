//! The testdata services behind generated MCP tools, for the transport and reliability tests:
//! MCP over stdio by default, or streamable HTTP at `http://ADDR/mcp` with `--http ADDR` (the
//! bound address is printed on stdout as `listening on <addr>`).
//!
//! `--backend-only ADDR` serves just the tonic backend at ADDR (printing `listening on
//! <addr>`, then `observed started=N cancelled=M` whenever its call counters change);
//! `--backend URL` makes the MCP server call that backend (connected lazily, so it may be
//! down) instead of starting its own.
//!
//! HTTP options: `--stateless` (no sessions), `--max-sessions N` and `--idle-timeout-ms N`
//! (session bounds), `--max-connections N`, `--header-read-timeout-ms N`,
//! `--body-read-timeout-ms N` and `--connection-idle-timeout-ms N` (connection bounds),
//! `--max-body N` (request body cap in bytes), `--allow-origin ORIGIN`,
//! `--allow-host HOST`. `--task-mode always|never|auto` sets the mode of its MCP tasks
//! (`tonic_mcp_tasks::Tasks::mode`; default `auto`). On SIGTERM the HTTP server
//! stops accepting, lets calls in flight finish (at most 30 s), and exits 0.

use std::process::ExitCode;
use std::time::Duration;

#[tokio::main]
async fn main() -> ExitCode {
    // Logs on stderr (stdout is the MCP channel over stdio), only when RUST_LOG asks.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(filter)
            .init();
    }
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("e2e-server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn value<T: std::str::FromStr>(args: &[String], flag: &str) -> Result<Option<T>, String> {
    match args.iter().position(|arg| arg == flag) {
        None => Ok(None),
        Some(index) => args
            .get(index + 1)
            .and_then(|v| v.parse().ok())
            .map(Some)
            .ok_or_else(|| format!("{flag} needs a value")),
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(addr) = value::<std::net::SocketAddr>(&args, "--backend-only")? {
        let backend = e2e::start_backend_at(addr).await?;
        println!("listening on {}", backend.addr);
        let mut last = (0, 0);
        loop {
            let now = (
                backend
                    .observed
                    .started
                    .load(std::sync::atomic::Ordering::SeqCst),
                backend
                    .observed
                    .cancelled
                    .load(std::sync::atomic::Ordering::SeqCst),
            );
            if now != last {
                println!("observed started={} cancelled={}", now.0, now.1);
                last = now;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let mut sessions = tonic_mcp::SessionLimits::default();
    if let Some(max) = value(&args, "--max-sessions")? {
        sessions.max_sessions = max;
    }
    if let Some(ms) = value(&args, "--idle-timeout-ms")? {
        sessions.idle_timeout = Duration::from_millis(ms);
    }
    let mut connections = tonic_mcp_serve::ConnectionLimits::default();
    if let Some(max) = value(&args, "--max-connections")? {
        connections.max_connections = max;
    }
    for (flag, bound) in [
        (
            "--header-read-timeout-ms",
            &mut connections.header_read_timeout,
        ),
        ("--body-read-timeout-ms", &mut connections.body_read_timeout),
        (
            "--connection-idle-timeout-ms",
            &mut connections.idle_timeout,
        ),
    ] {
        if let Some(ms) = value(&args, flag)? {
            *bound = Duration::from_millis(ms);
        }
    }
    let builder = match value::<String>(&args, "--backend")? {
        Some(url) => {
            let channel = tonic::transport::Endpoint::try_from(url)?.connect_lazy();
            e2e::mcp_server_builder_on(channel)?
        }
        None => {
            // The backend lives as long as the process.
            let backend = e2e::start_backend().await?;
            e2e::mcp_server_builder(&backend).await?
        }
    };
    let task_mode = match value::<String>(&args, "--task-mode")?.as_deref() {
        None | Some("auto") => tonic_mcp::TaskMode::auto(),
        Some("always") => tonic_mcp::TaskMode::Always,
        Some("never") => tonic_mcp::TaskMode::Never,
        Some(other) => return Err(format!("--task-mode: `{other}`, not always|never|auto").into()),
    };
    let server = builder
        .session_limits(sessions)
        .task_router(tonic_mcp_tasks::Tasks::new().mode(task_mode))
        .build();
    let Some(addr) = value::<String>(&args, "--http")? else {
        // Over stdio only `--backend URL` and `--task-mode MODE` are taken.
        let mut rest = args.iter().map(String::as_str);
        while let Some(arg) = rest.next() {
            if !matches!(arg, "--backend" | "--task-mode") {
                return Err("usage: e2e-server [--backend URL] [--task-mode always|never|auto] [--http ADDR [--stateless] [--max-sessions N] [--idle-timeout-ms N] [--max-connections N] [--header-read-timeout-ms N] [--body-read-timeout-ms N] [--connection-idle-timeout-ms N] [--max-body N]]".into());
            }
            rest.next();
        }
        server.serve_stdio().await?;
        return Ok(());
    };
    let mut config = if args.iter().any(|arg| arg == "--stateless") {
        tonic_mcp::McpServer::stateless_http_config()
    } else {
        tonic_mcp::McpServer::session_http_config()
    };
    if let Some(origin) = value::<String>(&args, "--allow-origin")? {
        config.allowed_origins.push(origin);
    }
    if let Some(host) = value::<String>(&args, "--allow-host")? {
        let mut hosts = config.allowed_hosts.clone();
        hosts.push(host);
        config = config.with_allowed_hosts(hosts);
    }
    if let Some(max) = value(&args, "--max-body")? {
        config = config.with_max_request_body_bytes(max);
    }
    let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
    println!("listening on {}", listener.local_addr()?);
    let shutdown = config.cancellation_token.clone();
    let mut serving = tokio::spawn(
        tonic_mcp_serve::HttpServer::new()
            .connection_limits(connections)
            .serve(server, listener, config),
    );
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = &mut serving => return Ok(result??),
        _ = terminate.recv() => shutdown.cancel(),
    }
    match tokio::time::timeout(Duration::from_secs(30), serving).await {
        Ok(result) => Ok(result??),
        Err(_) => Err("calls in flight did not finish within 30 s of SIGTERM".into()),
    }
}
