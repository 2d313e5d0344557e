//! A ready-made hyper server for the streamable HTTP endpoint of a
//! [`tonic_mcp::McpServer`]: `/mcp`, `/healthz`, the routes of add-ons
//! ([`McpServerBuilder::http_get`](tonic_mcp::McpServerBuilder::http_get)), a graceful
//! shutdown, and the bounds of [`ConnectionLimits`] (a cap on connections, timeouts on reading
//! requests and on idle connections, `accept` retried when descriptors run out).
//!
//! The core crate serves MCP as a tower service
//! ([`McpServer::streamable_http_service`](tonic_mcp::McpServer::streamable_http_service));
//! this crate puts that service on a listener, as tonic's `transport::Server` does for gRPC.
//! [`HttpServer`] is the server, set up; [`ServeHttp`] adds its defaults to `McpServer` as two
//! methods:
//!
//! ```no_run
//! use tonic_mcp_serve::ServeHttp as _;
//!
//! # async fn demo(server: tonic_mcp::McpServer) -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve_http(listener, tonic_mcp::McpServer::stateless_http_config()).await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tonic_mcp::{
    Error, HttpResponse, McpHttpService, McpServer, SHUTDOWN_DRAIN, StreamableHttpServerConfig,
    plain_response,
};

mod connection_limits;
mod watch;

pub use connection_limits::{ConnectionLimits, DEFAULT_MAX_CONNECTIONS, MAX_DEFAULT_CONNECTIONS};
pub use watch::TimedBody;
use watch::{Activity, BodyState, Tracked, Watched};

/// The request an [`HttpServer`] hands to its service.
pub type Served = http::Request<TimedBody<hyper::body::Incoming>>;

/// How long `accept` rests after failing for want of resources (descriptors, memory).
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serving an [`McpServer`]'s streamable HTTP endpoint on a TCP listener with an
/// [`HttpServer`]'s defaults: [`ConnectionLimits::default`], and no layer or the one given.
pub trait ServeHttp {
    /// `HttpServer::new().serve(self, listener, config)`: see [`HttpServer::serve`].
    ///
    /// # Errors
    ///
    /// As [`HttpServer::serve`].
    fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        config: StreamableHttpServerConfig,
    ) -> impl Future<Output = Result<(), Error>> + Send;

    /// `HttpServer::new().layer(layer).serve(self, listener, config)`: see
    /// [`HttpServer::layer`] and [`HttpServer::serve`].
    ///
    /// # Errors
    ///
    /// As [`HttpServer::serve`].
    fn serve_http_with<L>(
        self,
        listener: tokio::net::TcpListener,
        config: StreamableHttpServerConfig,
        layer: L,
    ) -> impl Future<Output = Result<(), Error>> + Send
    where
        L: tower_layer::Layer<McpHttpService> + Send,
        L::Service: tower_service::Service<
                Served,
                Response = HttpResponse,
                Error = std::convert::Infallible,
                Future: Send,
            > + Clone
            + Send
            + 'static;
}

impl ServeHttp for McpServer {
    async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        config: StreamableHttpServerConfig,
    ) -> Result<(), Error> {
        HttpServer::new().serve(self, listener, config).await
    }

    async fn serve_http_with<L>(
        self,
        listener: tokio::net::TcpListener,
        config: StreamableHttpServerConfig,
        layer: L,
    ) -> Result<(), Error>
    where
        L: tower_layer::Layer<McpHttpService> + Send,
        L::Service: tower_service::Service<
                Served,
                Response = HttpResponse,
                Error = std::convert::Infallible,
                Future: Send,
            > + Clone
            + Send
            + 'static,
    {
        HttpServer::new()
            .layer(layer)
            .serve(self, listener, config)
            .await
    }
}

/// The HTTP server of an [`McpServer`]'s streamable HTTP endpoint, set up: the bounds on its
/// connections ([`connection_limits`](Self::connection_limits)) and the layer in front of the
/// endpoint ([`layer`](Self::layer)), as tonic's `transport::Server` is set up before it serves.
///
/// ```no_run
/// use tonic_mcp_serve::{ConnectionLimits, HttpServer};
///
/// # async fn demo(server: tonic_mcp::McpServer) -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let limits = ConnectionLimits {
///     max_connections: 256,
///     ..ConnectionLimits::default()
/// };
/// HttpServer::new()
///     .connection_limits(limits)
///     .serve(server, listener, tonic_mcp::McpServer::stateless_http_config())
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HttpServer<L = tower_layer::Identity> {
    limits: ConnectionLimits,
    layer: L,
}

impl HttpServer {
    /// A server with [`ConnectionLimits::default`] and nothing in front of the endpoint.
    pub fn new() -> Self {
        Self {
            limits: ConnectionLimits::default(),
            layer: tower_layer::Identity::new(),
        }
    }
}

impl Default for HttpServer {
    fn default() -> Self {
        Self::new()
    }
}

impl<L> HttpServer<L> {
    /// Bounds on the connections (default: three quarters of the limit on open files, 10 s
    /// for a request's headers, 30 s for its body, 75 s idle); see [`ConnectionLimits`].
    #[must_use]
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// `layer` in front of the streamable HTTP endpoint: it serves `/mcp` and every path under
    /// `/.well-known/` (which the endpoint itself answers 404), with the same bounds, shutdown
    /// and routes. `tonic-mcp-auth`'s layer makes the endpoint an OAuth 2.1 resource server
    /// this way, serving its metadata under `/.well-known/`.
    #[must_use]
    pub fn layer<M>(self, layer: M) -> HttpServer<M> {
        HttpServer {
            limits: self.limits,
            layer,
        }
    }

    /// Serve `server`'s streamable HTTP endpoint at `/mcp` on `listener` (HTTP/1.1 and h2c),
    /// until `config.cancellation_token` is cancelled. `GET /healthz` answers `200 ok` for load
    /// balancers (it fails once shutdown begins: the listener is closed); the routes added
    /// with [`McpServerBuilder::http_get`](tonic_mcp::McpServerBuilder::http_get) answer `GET`
    /// at their paths; other paths answer 404.
    ///
    /// Connections are bounded by the [`ConnectionLimits`]: at most `max_connections` at once,
    /// and timeouts on reading a request's headers and body and on waiting for the next
    /// request. When `accept` fails for want of descriptors or memory (`EMFILE`, `ENFILE`,
    /// `ENOBUFS`, `ENOMEM`) the server logs a warning (at most one a second), rests 100 ms and
    /// accepts again; a connection aborted before it was accepted is skipped.
    ///
    /// Shutdown is graceful: the listener closes, connections finish the requests they carry
    /// and close, and tool calls in flight complete (up to [`SHUTDOWN_DRAIN`]); then open
    /// sessions and event streams are closed and this returns.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the listener itself fails (not for a connection's error, nor for
    /// running out of descriptors).
    pub async fn serve(
        self,
        server: McpServer,
        listener: tokio::net::TcpListener,
        mut config: StreamableHttpServerConfig,
    ) -> Result<(), Error>
    where
        L: tower_layer::Layer<McpHttpService>,
        L::Service: tower_service::Service<
                Served,
                Response = HttpResponse,
                Error = std::convert::Infallible,
                Future: Send,
            > + Clone
            + Send
            + 'static,
    {
        // rmcp cancels sessions and streams with the configured token at once; it gets its own,
        // cancelled only once the calls in flight have been drained.
        let shutdown = std::mem::replace(
            &mut config.cancellation_token,
            tokio_util::sync::CancellationToken::new(),
        );
        let streams = config.cancellation_token.clone();
        let limits = self.limits;
        let service = self.layer.layer(server.streamable_http_service(config));
        // A connection holds a permit until it closes: at the cap, nothing is accepted.
        let permits = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
        let mut accept_warning = Throttled::default();
        let mut connections = tokio::task::JoinSet::new();
        let result = loop {
            while connections.try_join_next().is_some() {}
            let permit = tokio::select! {
                () = shutdown.cancelled() => break Ok(()),
                permit = Arc::clone(&permits).acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_closed) => break Ok(()),
                },
            };
            let stream = tokio::select! {
                () = shutdown.cancelled() => break Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => match accept_failure(&error) {
                        AcceptFailure::Connection => {
                            tracing::debug!(%error, "a connection failed before it was accepted");
                            continue;
                        }
                        AcceptFailure::Resources => {
                            accept_warning.warn(&error);
                            tokio::select! {
                                () = shutdown.cancelled() => break Ok(()),
                                () = tokio::time::sleep(ACCEPT_PAUSE) => continue,
                            }
                        }
                        AcceptFailure::Fatal => break Err(Error::Io(error)),
                    },
                },
            };
            // Small JSON-RPC messages must not wait for Nagle's algorithm.
            let _ = stream.set_nodelay(true);
            let service = service.clone();
            let shutdown = shutdown.clone();
            let server = server.clone();
            connections.spawn(async move {
                let _permit = permit;
                let activity = Arc::new(Activity::new(&limits));
                let requests = Arc::clone(&activity);
                let handler = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        // In flight until its response ends: the connection has no deadline.
                        let in_flight = requests.begin();
                        let mut service = service.clone();
                        let server = server.clone();
                        async move {
                            let response = match request.uri().path() {
                                "/mcp" => call(&mut service, request, &limits).await,
                                // A layer's (the protected resource metadata of
                                // authorization); 404 from the endpoint otherwise.
                                path if path.starts_with("/.well-known/") => {
                                    call(&mut service, request, &limits).await
                                }
                                // For load balancers: up while accepting.
                                "/healthz" if request.method() == http::Method::GET => {
                                    plain_response(http::StatusCode::OK, "ok\n")
                                }
                                // An add-on's endpoint.
                                path if request.method() == http::Method::GET => {
                                    server.http_get(path).unwrap_or_else(not_found)
                                }
                                _ => not_found(),
                            };
                            Ok::<_, std::convert::Infallible>(
                                response.map(|body| Tracked::new(body, in_flight)),
                            )
                        }
                    },
                );
                let mut builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                // The timeouts on reading requests are the watch's (`watch`); HTTP/2 also
                // pings a connection that has been quiet for the idle timeout, and closes it
                // when the ping is not answered (a peer gone with a stream open).
                builder
                    .http2()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .keep_alive_interval(limits.idle_timeout)
                    .keep_alive_timeout(Duration::from_secs(20));
                let io = Watched::new(stream, Arc::clone(&activity));
                let connection =
                    builder.serve_connection(hyper_util::rt::TokioIo::new(io), handler);
                let mut connection = std::pin::pin!(connection);
                let expiry = tokio::time::sleep_until(activity.arm());
                let mut expiry = std::pin::pin!(expiry);
                let mut draining = false;
                let ended = loop {
                    tokio::select! {
                        ended = connection.as_mut() => break ended,
                        () = shutdown.cancelled(), if !draining => {
                            // Finish the requests in progress, take no more.
                            draining = true;
                            connection.as_mut().graceful_shutdown();
                        }
                        () = activity.changed() => {
                            expiry.as_mut().reset(activity.arm());
                        }
                        () = expiry.as_mut() => match activity.deadline() {
                            Some(deadline) if deadline <= tokio::time::Instant::now() => {
                                // No request in flight: closing loses nothing.
                                tracing::debug!(
                                    "closing an HTTP connection that sent no request in time"
                                );
                                return;
                            }
                            _ => expiry.as_mut().reset(activity.arm()),
                        },
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
        if !server.drained(SHUTDOWN_DRAIN).await {
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

/// `request` through the MCP service, its body bounded by `body_read_timeout`: a body that
/// does not arrive in time is answered 408 (and an HTTP/1 connection closed). An answer given
/// before the body was read to its end (a refusal: no token, too large, a foreign origin)
/// closes an HTTP/1 connection too, and says so: hyper closes a connection whose request body
/// is left unread, and a client that reused it would see it closed with no answer.
async fn call<S>(
    service: &mut S,
    request: http::Request<hyper::body::Incoming>,
    limits: &ConnectionLimits,
) -> HttpResponse
where
    S: tower_service::Service<Served, Response = HttpResponse, Error = std::convert::Infallible>,
{
    let state = Arc::new(BodyState::default());
    let version = request.version();
    let request =
        request.map(|body| TimedBody::new(body, limits.body_read_timeout, Arc::clone(&state)));
    let Ok(()) = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
    let Ok(mut response) = service.call(request).await;
    if state.timed_out.load(Ordering::Relaxed) {
        response = plain_response(
            http::StatusCode::REQUEST_TIMEOUT,
            format!(
                "Request Timeout: the request body was not received within {:?}",
                limits.body_read_timeout
            ),
        );
    } else if state.ended.load(Ordering::Relaxed) {
        return response;
    }
    if version < http::Version::HTTP_2 {
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    response
}

/// The answer to a path nothing serves.
fn not_found() -> HttpResponse {
    plain_response(http::StatusCode::NOT_FOUND, "")
}

/// What a failed `accept` means for the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AcceptFailure {
    /// That connection failed (aborted, reset, refused by a firewall, a network error): accept
    /// the next one at once.
    Connection,
    /// Out of descriptors, buffers or memory: rest, then accept again (connections that
    /// close free them).
    Resources,
    /// The listener itself is unusable.
    Fatal,
}

fn accept_failure(error: &std::io::Error) -> AcceptFailure {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::ConnectionAborted
        | ErrorKind::ConnectionReset
        | ErrorKind::ConnectionRefused
        | ErrorKind::Interrupted
        | ErrorKind::WouldBlock
        | ErrorKind::TimedOut
        | ErrorKind::PermissionDenied
        | ErrorKind::NetworkDown
        | ErrorKind::NetworkUnreachable
        | ErrorKind::HostUnreachable
        | ErrorKind::Unsupported => AcceptFailure::Connection,
        // EINVAL: the socket does not listen.
        ErrorKind::InvalidInput => AcceptFailure::Fatal,
        _ => match error.raw_os_error() {
            // Linux's accept(2) asks to retry on these network errors, like EAGAIN: EPROTO,
            // ENOPROTOOPT, EHOSTDOWN, ENONET.
            Some(71 | 92 | 112 | 64) if cfg!(target_os = "linux") => AcceptFailure::Connection,
            // EBADF, EFAULT, ENOTSOCK: not a socket of ours any more.
            Some(9 | 14 | 88) if cfg!(target_os = "linux") => AcceptFailure::Fatal,
            // EMFILE, ENFILE, ENOBUFS, ENOMEM and the rest.
            _ => AcceptFailure::Resources,
        },
    }
}

/// A warning at most once a second, counting the ones left out.
#[derive(Debug, Default)]
struct Throttled {
    last: Option<Instant>,
    left_out: u64,
}

impl Throttled {
    fn warn(&mut self, error: &std::io::Error) {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(1))
        {
            self.left_out += 1;
            return;
        }
        tracing::warn!(
            %error,
            "accepting an HTTP connection failed (same since the last warning: {}); serving \
             on and accepting again in {ACCEPT_PAUSE:?}: raise the limit on open files \
             (ulimit -n) or lower ConnectionLimits::max_connections",
            self.left_out
        );
        self.last = Some(now);
        self.left_out = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn running_out_of_descriptors_is_not_fatal() {
        let os = std::io::Error::from_raw_os_error;
        // EMFILE, ENFILE, ENOBUFS, ENOMEM.
        for errno in [24, 23, 105, 12] {
            assert_eq!(
                accept_failure(&os(errno)),
                AcceptFailure::Resources,
                "{errno}"
            );
        }
        // ECONNABORTED, ECONNRESET, EINTR, EAGAIN, EPERM, EPROTO.
        for errno in [103, 104, 4, 11, 1, 71] {
            assert_eq!(
                accept_failure(&os(errno)),
                AcceptFailure::Connection,
                "{errno}"
            );
        }
        // EINVAL, EBADF, ENOTSOCK.
        for errno in [22, 9, 88] {
            assert_eq!(accept_failure(&os(errno)), AcceptFailure::Fatal, "{errno}");
        }
    }

    #[test]
    fn the_accept_warning_is_throttled() {
        let mut throttled = Throttled::default();
        let error = std::io::Error::from_raw_os_error(24);
        throttled.warn(&error);
        throttled.warn(&error);
        throttled.warn(&error);
        assert_eq!(throttled.left_out, 2);
        throttled.last = Some(Instant::now() - Duration::from_secs(2));
        throttled.warn(&error);
        assert_eq!(throttled.left_out, 0);
    }
}
