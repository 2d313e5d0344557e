//! Replicas on stateless HTTP, as behind a load balancer, for the tests of tasks across
//! replicas: a layer naming each request's caller from its `x-test-caller` header (as an
//! authenticating layer names token owners), and raw JSON-RPC requests in either task shape as
//! a caller.

use std::{
    convert::Infallible,
    net::SocketAddr,
    task::{Context, Poll},
};

use serde_json::{Value, json};
use tonic_mcp::{Caller, HttpResponse};

use super::{TestResult, http_client::Reply};

/// What `serve_http_with` hands a layer.
type Served = tonic_mcp_serve::Served;

/// Names the caller of each request from its `x-test-caller` header; serve with
/// `tower_layer::layer_fn(NameCallers)`.
#[derive(Debug, Clone)]
pub struct NameCallers<S>(pub S);

impl<S> tower_service::Service<Served> for NameCallers<S>
where
    S: tower_service::Service<Served, Response = HttpResponse, Error = Infallible>,
{
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: Served) -> Self::Future {
        let caller = request
            .headers()
            .get("x-test-caller")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let Some(caller) = caller {
            request.extensions_mut().insert(Caller::new(caller));
        }
        self.0.call(request)
    }
}

/// Sends a request of revision 2025-11-25 as `caller`.
pub async fn send_2025(
    addr: SocketAddr,
    caller: &str,
    method: &str,
    params: Value,
) -> TestResult<Reply> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    super::http_client::send(
        addr,
        http::Method::POST,
        "/mcp",
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("x-test-caller", caller),
        ],
        Some(&body),
    )
    .await
}

/// Sends a request of revision 2026-07-28, declaring the tasks extension, as `caller`.
pub async fn send_final(
    addr: SocketAddr,
    caller: &str,
    method: &str,
    mut params: Value,
) -> TestResult<Reply> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    super::http_client::send(
        addr,
        http::Method::POST,
        "/mcp",
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
            ("mcp-name", &name),
            ("x-test-caller", caller),
        ],
        Some(&body),
    )
    .await
}

/// The `result` of `reply`, failing on an error.
pub fn result(reply: &Reply, what: &str) -> TestResult<Value> {
    match reply.last().get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(format!("{what}: {}", reply.body).into()),
    }
}
