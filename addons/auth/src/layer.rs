//! [`AuthorizationLayer`]: the tower layer that puts an [`Authorization`] in front of a
//! server's streamable HTTP endpoint.

use std::{convert::Infallible, fmt::Display, pin::Pin, sync::Arc};

use http_body::Body;
use tonic_mcp::{HttpResponse, McpHttpService, McpServer};

use crate::{Authorization, gate::Gate};

/// The layer that makes a server's streamable HTTP endpoint an OAuth 2.1 resource server; made
/// by [`Authorization::layer`]. Cloning is cheap.
///
/// In front of the endpoint it answers the protected resource metadata (every path under
/// `/.well-known/oauth-protected-resource`), refuses a request without a valid access token
/// (401) or without the scopes every request needs (403), and hands the endpoint the
/// [`Principal`](crate::Principal) and the token owner as its [`Caller`](tonic_mcp::Caller).
/// Inside the endpoint, it checks each message body it reads: a `tools/call` of a tool whose
/// scopes the token lacks gets 403 `insufficient_scope` before anything runs.
#[derive(Clone)]
pub struct AuthorizationLayer {
    gate: Arc<Gate>,
}

impl std::fmt::Debug for AuthorizationLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationLayer").finish_non_exhaustive()
    }
}

impl Authorization {
    /// The layer of this authorization in front of `server`'s streamable HTTP endpoint: give
    /// it to `tonic_mcp_serve::ServeHttp::serve_http_with`, or layer the service of
    /// [`McpServer::streamable_http_service`] with it in a stack of your own (route the paths
    /// under `/.well-known/` to it too). The protected resource metadata lists the scopes of
    /// the tools `server` serves now; a call is checked against the tools it serves then.
    pub fn layer(&self, server: &McpServer) -> AuthorizationLayer {
        AuthorizationLayer {
            gate: Arc::new(Gate::new(self.clone(), server.clone())),
        }
    }
}

impl tower_layer::Layer<McpHttpService> for AuthorizationLayer {
    type Service = Authorized;

    fn layer(&self, inner: McpHttpService) -> Authorized {
        let gate = Arc::clone(&self.gate);
        Authorized {
            gate: Arc::clone(&self.gate),
            inner: inner.check_messages(move |parts, body| gate.check_message(parts, body)),
        }
    }
}

/// A streamable HTTP endpoint behind an [`AuthorizationLayer`].
#[derive(Clone)]
pub struct Authorized {
    gate: Arc<Gate>,
    inner: McpHttpService,
}

impl std::fmt::Debug for Authorized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorized")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<B> tower_service::Service<http::Request<B>> for Authorized
where
    B: Body + Send + 'static,
    B::Data: Send + 'static,
    B::Error: Display,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        tower_service::Service::<http::Request<B>>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let gate = Arc::clone(&self.gate);
        let mut inner = self.inner.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            if let Some(metadata) = gate.metadata_response(&parts) {
                return Ok(metadata);
            }
            if let Err(refused) = gate.admit(&mut parts).await {
                return Ok(refused);
            }
            inner.call(http::Request::from_parts(parts, body)).await
        })
    }
}
