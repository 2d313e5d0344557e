//! The testdata services behind generated MCP tools, for the transport tests: MCP over stdio by
//! default, or streamable HTTP at `http://ADDR/mcp` with `--http ADDR` (the bound address is
//! printed on stdout as `listening on <addr>`).

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("e2e-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let backend = e2e::start_backend().await?;
    let server = e2e::mcp_server(&backend).await?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve_stdio().await?,
        [flag, addr] if flag == "--http" => {
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            println!("listening on {}", listener.local_addr()?);
            server
                .serve_http(listener, tonic_mcp::StreamableHttpServerConfig::default())
                .await?;
        }
        _ => return Err("usage: e2e-server [--http ADDR]".into()),
    }
    Ok(())
}
