//! `grpc-mcp-gateway`: serve any gRPC server as MCP tools. See `--help`.

use std::process::ExitCode;

use grpc_mcp_gateway::{Config, Gateway, Parsed};
use tonic_mcp::McpServer;
use tracing_subscriber::EnvFilter;

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
    // Stdout is the MCP channel under stdio: every log line goes to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn")),
        )
        .init();
    match run(&config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: &Config) -> Result<(), Box<dyn std::error::Error>> {
    tracing::info!(
        target_url = %config.target.url,
        descriptors = %config
            .descriptor_set
            .as_ref()
            .map_or_else(|| "gRPC reflection".to_owned(), |p| p.display().to_string()),
        headers = ?config.headers.names(),
        "starting"
    );
    let gateway = Gateway::connect(config).await?;
    let server = gateway.server;
    let tools = server.tools().len();
    match config.http {
        None => {
            tracing::info!(tools, services = ?gateway.services, "serving MCP over stdio");
            server.serve_stdio().await?;
            tracing::info!("the MCP client disconnected");
        }
        Some(addr) => {
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
                if tokio::signal::ctrl_c().await.is_ok() {
                    tracing::info!("interrupted, shutting down");
                    shutdown.cancel();
                }
            });
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let addr = listener.local_addr()?;
            // Tests and scripts read the bound address (port 0 picks one) from stdout.
            println!("listening on {addr}");
            tracing::info!(
                tools,
                services = ?gateway.services,
                stateless = config.stateless,
                "serving MCP over streamable HTTP at http://{addr}/mcp"
            );
            server.serve_http(listener, http).await?;
        }
    }
    Ok(())
}
