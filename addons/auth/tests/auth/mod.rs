//! The authorization tests' fixture: a key server publishing RFC 8414 metadata and a JWKS the
//! test can rotate, tokens signed with the keys of this folder, and a server behind an
//! `Authorization` in front of the tonic backend.

#![allow(dead_code)]

use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use crate::common::{Backend, TestResult, http_client::send, pb, start_backend};
use http_body_util::Full;
use jsonwebtoken::{Algorithm, EncodingKey, Header, jwk::Jwk};
use serde_json::{Value, json};
use tonic_mcp::{McpServer, forward_headers};
use tonic_mcp_auth::{Authorization, forward_claims};
use tonic_mcp_search::ToolSearch;
use tonic_mcp_serve::ServeHttp as _;

pub(crate) const KEY_A: &[u8] = include_bytes!("rsa-a.pem");
pub(crate) const KEY_B: &[u8] = include_bytes!("rsa-b.pem");
pub(crate) const PUBLIC_A: &[u8] = include_bytes!("rsa-a.pub.pem");

/// The fixture authorization server: metadata and a JWKS, counting JWKS fetches.
pub(crate) struct KeyServer {
    pub(crate) issuer: String,
    pub(crate) jwks: Arc<Mutex<Value>>,
    pub(crate) fetches: Arc<AtomicUsize>,
}

pub(crate) fn jwk(pem: &[u8], kid: &str) -> TestResult<Value> {
    let key = EncodingKey::from_rsa_pem(pem)?;
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256)?;
    jwk.common.key_id = Some(kid.to_owned());
    Ok(serde_json::to_value(jwk)?)
}

pub(crate) async fn key_server(keys: Value) -> TestResult<KeyServer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let issuer = format!("http://{}", listener.local_addr()?);
    let jwks = Arc::new(Mutex::new(keys));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (served_jwks, counted, metadata) = (
        Arc::clone(&jwks),
        Arc::clone(&fetches),
        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}),
    );
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (jwks, counted, metadata) = (
                Arc::clone(&served_jwks),
                Arc::clone(&counted),
                metadata.clone(),
            );
            let service = hyper::service::service_fn(move |request: http::Request<_>| {
                let body = match request.uri().path() {
                    "/.well-known/oauth-authorization-server" => Some(metadata.clone()),
                    "/jwks" => {
                        counted.fetch_add(1, Ordering::SeqCst);
                        jwks.lock().ok().map(|keys| keys.clone())
                    }
                    _ => None,
                };
                let mut response = http::Response::new(Full::new(bytes::Bytes::from(
                    body.as_ref().map(Value::to_string).unwrap_or_default(),
                )));
                if body.is_none() {
                    *response.status_mut() = http::StatusCode::NOT_FOUND;
                }
                async move { Ok::<_, Infallible>(response) }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    });
    Ok(KeyServer {
        issuer,
        jwks,
        fetches,
    })
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A token signed with `pem` under `kid`, with `claims` over the defaults of a good one.
pub(crate) fn token(pem: &[u8], kid: &str, claims: Value) -> TestResult<String> {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    let key = EncodingKey::from_rsa_pem(pem)?;
    Ok(jsonwebtoken::encode(&header, &claims, &key)?)
}

pub(crate) struct Fixture {
    pub(crate) addr: SocketAddr,
    pub(crate) keys: KeyServer,
    pub(crate) backend: Backend,
    pub(crate) authorization: Authorization,
    pub(crate) good: Value,
    pub(crate) shutdown: tokio_util::sync::CancellationToken,
}

impl Fixture {
    /// Claims of a good token, with `changes` applied (`null` removes a claim).
    pub(crate) fn claims(&self, changes: Value) -> Value {
        let mut claims = self.good.clone();
        if let (Some(claims), Some(changes)) = (claims.as_object_mut(), changes.as_object()) {
            for (key, value) in changes {
                if value.is_null() {
                    claims.remove(key);
                } else {
                    claims.insert(key.clone(), value.clone());
                }
            }
        }
        claims
    }

    pub(crate) fn good_token(&self) -> TestResult<String> {
        token(KEY_A, "a", self.good.clone())
    }

    /// An `Authorization` header value: `Bearer` and a token signed with key A whose claims
    /// are those of a good token with `changes` applied (see [`Fixture::claims`]).
    pub(crate) fn bearer(&self, changes: Value) -> TestResult<String> {
        Ok(format!(
            "Bearer {}",
            token(KEY_A, "a", self.claims(changes))?
        ))
    }

    pub(crate) fn backend_calls(&self) -> usize {
        self.backend
            .observed
            .metadata
            .lock()
            .map(|seen| seen.len())
            .unwrap_or(usize::MAX)
    }

    pub(crate) async fn call(
        &self,
        headers: &[(&str, &str)],
        tool: &str,
    ) -> TestResult<crate::common::http_client::Reply> {
        self.call_with(headers, tool, json!({"id": "7"})).await
    }

    /// `ItemService_GetItem` of item 7, with `bearer` as the `Authorization` header.
    pub(crate) async fn get_item_as(
        &self,
        bearer: &str,
    ) -> TestResult<crate::common::http_client::Reply> {
        self.call(&[("authorization", bearer)], "ItemService_GetItem")
            .await
    }

    pub(crate) async fn call_with(
        &self,
        headers: &[(&str, &str)],
        tool: &str,
        arguments: Value,
    ) -> TestResult<crate::common::http_client::Reply> {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        send(
            self.addr,
            http::Method::POST,
            "/mcp",
            headers,
            Some(&message),
        )
        .await
    }
}

pub(crate) async fn fixture(stateless: bool) -> TestResult<Fixture> {
    fixture_with(stateless, None, &[]).await
}

/// [`fixture`], with tool search when `search` is given, and `extra` tools over the same
/// backend.
pub(crate) async fn fixture_with(
    stateless: bool,
    search: Option<ToolSearch>,
    extra: &[&'static tonic_mcp::codegen::ToolDef],
) -> TestResult<Fixture> {
    let keys = key_server(json!({"keys": [jwk(KEY_A, "a")?]})).await?;
    let (backend_addr, backend) = start_backend().await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let resource = format!("http://127.0.0.1:{}/mcp", addr.port());
    let authorization = Authorization::builder(&keys.issuer, &resource)
        .required_scope("mcp")
        .write_scope("items.write")
        .jwks_refresh(Duration::from_millis(300), Duration::from_secs(3600))
        .build()?;
    let channel = crate::common::channel(backend_addr).await?;
    let tools = pb::item_service_mcp::from_channel(channel.clone())?;
    // With tasks: a task belongs to the token that started it.
    let mut server = test_kit::with_tasks(McpServer::builder("demo", "0.1.0"));
    if !extra.is_empty() {
        let mut more = tonic_mcp::codegen::ToolSetBuilder::new(
            pb::MCP_FILE_DESCRIPTOR_SET,
            tonic_mcp::codegen::BoxTransport::new(channel),
        )?;
        for def in extra {
            more.add(def)?;
        }
        server = server.tool_set(more.build())?;
    }
    if let Some(search) = search {
        server = server.tool_search(search);
    }
    let server = server
        // Asks for the token too: it must not be there to forward.
        .on_call(forward_headers(["authorization"]))
        .on_call(forward_claims([
            ("sub", "x-user-id"),
            ("scope", "x-scopes"),
        ]))
        .tool_set(tools)?
        .build();
    let config = if stateless {
        McpServer::stateless_http_config()
    } else {
        McpServer::session_http_config()
    };
    let shutdown = config.cancellation_token.clone();
    let layer = authorization.layer(&server);
    tokio::spawn(server.serve_http_with(listener, config, layer));
    let good = json!({
        "iss": keys.issuer, "aud": resource, "sub": "user-1", "client_id": "agent",
        "scope": "mcp items.write", "iat": now(), "exp": now() + 600,
    });
    Ok(Fixture {
        addr,
        keys,
        backend,
        authorization,
        good,
        shutdown,
    })
}
