//! [`McpServer::serve_http`]: a ready-made hyper server for the streamable HTTP endpoint, with
//! `/healthz`, `/metrics` and a graceful shutdown.

use std::time::Duration;

use rmcp::transport::StreamableHttpServerConfig;

use crate::{
    error::Error,
    http_response::{not_found, plain_response},
    server::{McpServer, SHUTDOWN_DRAIN},
};

impl McpServer {
    /// Serve the streamable HTTP endpoint at `/mcp` on `listener` (HTTP/1.1 and h2c), until
    /// `config.cancellation_token` is cancelled. `GET /healthz` answers `200 ok` for load
    /// balancers (it fails once shutdown begins: the listener is closed); other paths
    /// answer 404.
    ///
    /// Shutdown is graceful: the listener closes, connections finish the requests they carry
    /// and close, and tool calls in flight complete (up to [`SHUTDOWN_DRAIN`](crate::SHUTDOWN_DRAIN)); then open
    /// sessions and event streams are closed and this returns.
    ///
    /// ```no_run
    /// # async fn demo(server: tonic_mcp::McpServer) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server.serve_http(listener, tonic_mcp::McpServer::stateless_http_config()).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when accepting connections fails.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        mut config: StreamableHttpServerConfig,
    ) -> Result<(), Error> {
        // rmcp cancels sessions and streams with the configured token at once; it gets its own,
        // cancelled only once the calls in flight have been drained.
        let shutdown = std::mem::replace(
            &mut config.cancellation_token,
            tokio_util::sync::CancellationToken::new(),
        );
        let streams = config.cancellation_token.clone();
        #[cfg(feature = "metrics")]
        let metrics = self.metrics_on_http().then(|| self.clone());
        let service = self.streamable_http_service(config);
        let mut connections = tokio::task::JoinSet::new();
        let result = loop {
            while connections.try_join_next().is_some() {}
            let (stream, _) = tokio::select! {
                () = shutdown.cancelled() => break Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => break Err(Error::Io(e)),
                },
            };
            // Small JSON-RPC messages must not wait for Nagle's algorithm.
            let _ = stream.set_nodelay(true);
            let service = service.clone();
            let shutdown = shutdown.clone();
            #[cfg(feature = "metrics")]
            let metrics = metrics.clone();
            connections.spawn(async move {
                let handler = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let mut service = service.clone();
                        #[cfg(feature = "metrics")]
                        let metrics = metrics.clone();
                        async move {
                            match request.uri().path() {
                                #[cfg(feature = "metrics")]
                                "/metrics"
                                    if request.method() == http::Method::GET
                                        && metrics.is_some() =>
                                {
                                    Ok(crate::metrics_endpoint::response(metrics.as_ref()))
                                }
                                "/mcp" => tower_service::Service::call(&mut service, request).await,
                                // Protected resource metadata, when the server has
                                // authorization (404 otherwise).
                                path if path
                                    .starts_with("/.well-known/oauth-protected-resource")
                                    && service.serves_metadata() =>
                                {
                                    tower_service::Service::call(&mut service, request).await
                                }
                                // For load balancers: up while accepting.
                                "/healthz" if request.method() == http::Method::GET => {
                                    Ok(plain_response(http::StatusCode::OK, "ok\n"))
                                }
                                _ => Ok(not_found()),
                            }
                        }
                    },
                );
                let builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                let connection =
                    builder.serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
                let mut connection = std::pin::pin!(connection);
                let ended = tokio::select! {
                    ended = connection.as_mut() => ended,
                    () = shutdown.cancelled() => {
                        // Finish the requests in progress, take no more.
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                // A connection error concerns that client only.
                if let Err(error) = ended {
                    tracing::debug!(%error, "MCP HTTP connection ended with an error");
                }
            });
        };
        drop(listener);
        // Let the calls in flight finish and their answers go out, then close what is left
        // (sessions, event streams).
        let mut in_flight = self.in_flight().subscribe();
        let drained = tokio::time::timeout(SHUTDOWN_DRAIN, async {
            in_flight.wait_for(|&n| n == 0).await.is_ok()
        })
        .await;
        if drained.is_err() {
            tracing::warn!("tool calls still running {SHUTDOWN_DRAIN:?} after shutdown");
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        streams.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        connections.abort_all();
        result
    }
}
