//! The Prometheus endpoint: `GET /metrics` on `serve_http` or on a port of its own
//! ([`McpServer::serve_metrics`](crate::McpServer::serve_metrics)).

use crate::{
    error::Error,
    transport::http_response::{HttpResponse, not_found, plain_response},
};

/// `GET /metrics`: the text format, or 404 when `server` records none.
pub(crate) fn response(server: Option<&crate::server::McpServer>) -> HttpResponse {
    match server.and_then(crate::server::McpServer::metrics_text) {
        Some(text) => {
            let mut response = plain_response(http::StatusCode::OK, text);
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(prometheus::TEXT_FORMAT),
            );
            response
        }
        None => not_found(),
    }
}

impl crate::server::McpServer {
    /// Serve `GET /metrics` (and nothing else) on `listener`, for a port of their own that
    /// only Prometheus reaches, until accepting fails; run it as a task beside the MCP
    /// transport. It answers 404 unless the server records metrics
    /// ([`McpServerBuilder::metrics`](crate::McpServerBuilder::metrics)).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when accepting connections fails.
    pub async fn serve_metrics(self, listener: tokio::net::TcpListener) -> Result<(), Error> {
        loop {
            let (stream, _) = listener.accept().await.map_err(Error::Io)?;
            let server = self.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        let server = server.clone();
                        async move {
                            Ok::<_, std::convert::Infallible>(
                                if request.uri().path() == "/metrics"
                                    && request.method() == http::Method::GET
                                {
                                    response(Some(&server))
                                } else {
                                    not_found()
                                },
                            )
                        }
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
