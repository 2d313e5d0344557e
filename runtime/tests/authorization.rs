//! MCP authorization over streamable HTTP: `serve_http` behind an `Authorization`, with a real
//! tonic backend on loopback that counts what reaches it, and a key server on loopback
//! publishing RFC 8414 metadata and a JWKS the test can rotate. Tokens are signed with the
//! fixture keys in `tests/auth/`; each bad token of the catalogue differs from a good one in
//! one respect only. (`scripts/auth-e2e.sh` runs the same server against a real
//! authorization server and the official Python SDK.)

mod common;

use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use common::{Backend, TestResult, http_client::send, pb, start_backend};
use http_body_util::Full;
use jsonwebtoken::{Algorithm, EncodingKey, Header, jwk::Jwk};
use serde_json::{Value, json};
use tonic_mcp::{Authorization, McpServer, ToolSearch, forward_claims, forward_headers};

const KEY_A: &[u8] = include_bytes!("auth/rsa-a.pem");
const KEY_B: &[u8] = include_bytes!("auth/rsa-b.pem");
const PUBLIC_A: &[u8] = include_bytes!("auth/rsa-a.pub.pem");

/// The fixture authorization server: metadata and a JWKS, counting JWKS fetches.
struct KeyServer {
    issuer: String,
    jwks: Arc<Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
}

fn jwk(pem: &[u8], kid: &str) -> TestResult<Value> {
    let key = EncodingKey::from_rsa_pem(pem)?;
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256)?;
    jwk.common.key_id = Some(kid.to_owned());
    Ok(serde_json::to_value(jwk)?)
}

async fn key_server(keys: Value) -> TestResult<KeyServer> {
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

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A token signed with `pem` under `kid`, with `claims` over the defaults of a good one.
fn token(pem: &[u8], kid: &str, claims: Value) -> TestResult<String> {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    let key = EncodingKey::from_rsa_pem(pem)?;
    Ok(jsonwebtoken::encode(&header, &claims, &key)?)
}

struct Fixture {
    addr: SocketAddr,
    keys: KeyServer,
    backend: Backend,
    authorization: Authorization,
    good: Value,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Fixture {
    /// Claims of a good token, with `changes` applied (`null` removes a claim).
    fn claims(&self, changes: Value) -> Value {
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

    fn good_token(&self) -> TestResult<String> {
        token(KEY_A, "a", self.good.clone())
    }

    fn backend_calls(&self) -> usize {
        self.backend
            .observed
            .metadata
            .lock()
            .map(|seen| seen.len())
            .unwrap_or(usize::MAX)
    }

    async fn call(
        &self,
        headers: &[(&str, &str)],
        tool: &str,
    ) -> TestResult<common::http_client::Reply> {
        self.call_with(headers, tool, json!({"id": "7"})).await
    }

    async fn call_with(
        &self,
        headers: &[(&str, &str)],
        tool: &str,
        arguments: Value,
    ) -> TestResult<common::http_client::Reply> {
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

async fn fixture(stateless: bool) -> TestResult<Fixture> {
    fixture_with(stateless, None).await
}

/// [`fixture`], with tool search when `search` is given.
async fn fixture_with(stateless: bool, search: Option<ToolSearch>) -> TestResult<Fixture> {
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
    let tools = pb::item_service_mcp::from_channel(common::channel(backend_addr).await?)?;
    let mut server = McpServer::builder("demo", "0.1.0");
    if let Some(search) = search {
        server = server.tool_search(search);
    }
    let server = server
        .authorization(authorization.clone())
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
    tokio::spawn(server.serve_http(listener, config));
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

#[tokio::test]
async fn protected_resource_metadata_is_served_at_both_well_known_paths() -> TestResult {
    let f = fixture(true).await?;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = send(f.addr, http::Method::GET, path, &[], None).await?;
        assert_eq!(reply.status, http::StatusCode::OK, "{path}: {}", reply.body);
        let document: Value = serde_json::from_str(&reply.body)?;
        assert_eq!(
            document,
            json!({
                "resource": f.authorization.resource(),
                "authorization_servers": [f.keys.issuer],
                "scopes_supported": ["items.write", "mcp"],
                "bearer_methods_supported": ["header"],
            })
        );
    }
    assert_eq!(
        f.authorization.metadata_url(),
        format!(
            "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
            f.addr.port()
        )
    );
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_good_token_calls_tools_and_the_backend_sees_claims_not_the_token() -> TestResult {
    let f = fixture(true).await?;
    let bearer = format!("Bearer {}", f.good_token()?);
    let reply = f
        .call(&[("authorization", &bearer)], "ItemService_GetItem")
        .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.last()["result"]["structuredContent"]["id"],
        json!("7")
    );
    let seen = f.backend.observed.last_metadata();
    let get = |key: &str| seen.get(key).and_then(|v| v.to_str().ok());
    assert_eq!(get("x-user-id"), Some("user-1"));
    assert_eq!(get("x-scopes"), Some("mcp items.write"));
    assert_eq!(
        get("authorization"),
        None,
        "the access token reached the backend"
    );
    assert_eq!(f.keys.fetches.load(Ordering::SeqCst), 1);
    f.shutdown.cancel();
    Ok(())
}

/// One bad request: its name, its headers, the status and a text the challenge or body holds.
type BadRequest<'a> = (&'a str, Vec<(&'a str, String)>, http::StatusCode, &'a str);

/// Each bad request: 401 or 403 with the right challenge, and nothing reaches the backend.
#[tokio::test]
async fn the_bad_token_catalogue_is_refused_before_the_backend() -> TestResult {
    let f = fixture(true).await?;
    let metadata = format!("resource_metadata=\"{}\"", f.authorization.metadata_url());
    let expired = token(KEY_A, "a", f.claims(json!({"exp": now() - 3600})))?;
    let not_yet = token(KEY_A, "a", f.claims(json!({"nbf": now() + 3600})))?;
    let wrong_issuer = token(
        KEY_A,
        "a",
        f.claims(json!({"iss": "https://other.example.com"})),
    )?;
    let wrong_audience = token(
        KEY_A,
        "a",
        f.claims(json!({"aud": "https://other.example.com/mcp"})),
    )?;
    let no_audience = token(KEY_A, "a", f.claims(json!({"aud": null})))?;
    let bad_signature = token(KEY_B, "a", f.good.clone())?;
    let alg_none = {
        let good = f.good_token()?;
        let payload = good.split('.').nth(1).unwrap_or_default().to_owned();
        format!("{}.{payload}.", b64(br#"{"alg":"none","typ":"JWT"}"#))
    };
    let hs256_with_public_key = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("a".to_owned());
        jsonwebtoken::encode(&header, &f.good, &EncodingKey::from_secret(PUBLIC_A))?
    };
    let unknown_kid = token(KEY_B, "z", f.good.clone())?;
    let oversized = format!("{}.{}.x", b64(br#"{"alg":"RS256"}"#), "a".repeat(9000));
    let no_scope = token(KEY_A, "a", f.claims(json!({"scope": "items.write"})))?;

    let catalogue: Vec<BadRequest<'_>> = vec![
        ("no token", vec![], http::StatusCode::UNAUTHORIZED, ""),
        (
            "not a bearer token",
            vec![("authorization", "Basic dXNlcjpwdw==".to_owned())],
            http::StatusCode::UNAUTHORIZED,
            "",
        ),
        (
            "malformed",
            vec![("authorization", "Bearer abc.def.ghi".to_owned())],
            http::StatusCode::UNAUTHORIZED,
            "not a well-formed JWT",
        ),
        (
            "opaque without introspection",
            vec![("authorization", "Bearer opaque-token".to_owned())],
            http::StatusCode::UNAUTHORIZED,
            "not a JWT",
        ),
        (
            "expired",
            vec![("authorization", format!("Bearer {expired}"))],
            http::StatusCode::UNAUTHORIZED,
            "expired",
        ),
        (
            "not yet valid",
            vec![("authorization", format!("Bearer {not_yet}"))],
            http::StatusCode::UNAUTHORIZED,
            "not valid yet",
        ),
        (
            "wrong issuer",
            vec![("authorization", format!("Bearer {wrong_issuer}"))],
            http::StatusCode::UNAUTHORIZED,
            "another authorization server",
        ),
        (
            "wrong audience",
            vec![("authorization", format!("Bearer {wrong_audience}"))],
            http::StatusCode::UNAUTHORIZED,
            "not meant for this resource",
        ),
        (
            "no audience",
            vec![("authorization", format!("Bearer {no_audience}"))],
            http::StatusCode::UNAUTHORIZED,
            "no `aud` claim",
        ),
        (
            "bad signature",
            vec![("authorization", format!("Bearer {bad_signature}"))],
            http::StatusCode::UNAUTHORIZED,
            "signature does not verify",
        ),
        (
            "alg none",
            vec![("authorization", format!("Bearer {alg_none}"))],
            http::StatusCode::UNAUTHORIZED,
            "invalid_token",
        ),
        (
            "HS256 signed with the public key",
            vec![("authorization", format!("Bearer {hs256_with_public_key}"))],
            http::StatusCode::UNAUTHORIZED,
            "HS256 are not accepted",
        ),
        (
            "unknown kid",
            vec![("authorization", format!("Bearer {unknown_kid}"))],
            http::StatusCode::UNAUTHORIZED,
            "no RS256 key with kid \\\"z\\\"",
        ),
        (
            "oversized",
            vec![("authorization", format!("Bearer {oversized}"))],
            http::StatusCode::UNAUTHORIZED,
            "longer than 8192 bytes",
        ),
        (
            "two Authorization headers",
            vec![
                ("authorization", format!("Bearer {}", f.good_token()?)),
                ("authorization", format!("Bearer {}", f.good_token()?)),
            ],
            http::StatusCode::UNAUTHORIZED,
            "more than one",
        ),
        (
            "without the scope every request needs",
            vec![("authorization", format!("Bearer {no_scope}"))],
            http::StatusCode::FORBIDDEN,
            "insufficient_scope",
        ),
    ];
    for (name, headers, status, expect) in &catalogue {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let reply = f.call(&headers, "ItemService_GetItem").await?;
        let challenge = reply.header("www-authenticate");
        assert_eq!(reply.status, *status, "{name}: {}", reply.body);
        assert!(
            challenge.starts_with("Bearer ") && challenge.contains(&metadata),
            "{name}: {challenge}"
        );
        assert!(
            challenge.contains(expect) || reply.body.contains(expect),
            "{name}: expected {expect:?} in {challenge} / {}",
            reply.body
        );
        if expect.is_empty() {
            assert!(!challenge.contains("error="), "{name}: {challenge}");
        }
    }
    // A token in the query string is not read: the request has no token.
    let good = f.good_token()?;
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let reply = send(
        f.addr,
        http::Method::POST,
        &format!("/mcp?access_token={good}"),
        &[],
        Some(&message),
    )
    .await?;
    assert_eq!(
        reply.status,
        http::StatusCode::UNAUTHORIZED,
        "{}",
        reply.body
    );
    assert!(!reply.header("www-authenticate").contains("error="));
    assert_eq!(
        f.backend_calls(),
        0,
        "a refused request reached the backend"
    );
    // One fetch at the first token, one for the unknown kid; none since (300 ms apart).
    assert!(
        f.keys.fetches.load(Ordering::SeqCst) <= 2,
        "{}",
        f.keys.fetches.load(Ordering::SeqCst)
    );
    f.shutdown.cancel();
    Ok(())
}

/// This process's resident set size (Linux), in KiB.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn a_tool_scope_the_token_lacks_is_a_403_naming_it() -> TestResult {
    let f = fixture(true).await?;
    let read_only = format!(
        "Bearer {}",
        token(KEY_A, "a", f.claims(json!({"scope": "mcp"})))?
    );
    // `ItemService_Slow` is not read-only: it needs `items.write`.
    let reply = f
        .call(&[("authorization", &read_only)], "ItemService_Slow")
        .await?;
    assert_eq!(reply.status, http::StatusCode::FORBIDDEN, "{}", reply.body);
    let challenge = reply.header("www-authenticate");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp items.write\""),
        "{challenge}"
    );
    assert!(
        reply
            .body
            .contains("tool `ItemService_Slow` needs scope `items.write`"),
        "{}",
        reply.body
    );
    assert_eq!(f.backend_calls(), 0);
    // Read-only tools (`readOnlyHint`) and listing need only the scope every request needs.
    let reply = f
        .call(&[("authorization", &read_only)], "ItemService_GetItem")
        .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_eq!(f.backend_calls(), 1);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let reply = send(
        f.addr,
        http::Method::POST,
        "/mcp",
        &[("authorization", &read_only)],
        Some(&list),
    )
    .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert!(
        reply.last()["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() == 7)
    );
    f.shutdown.cancel();
    Ok(())
}

/// Under tool search, `call_tool` needs the scopes of the tool it calls: it cannot be a way
/// around them.
#[tokio::test]
async fn call_tool_needs_the_scopes_of_the_tool_it_calls() -> TestResult {
    let f = fixture_with(true, Some(ToolSearch::new())).await?;
    let read_only = format!(
        "Bearer {}",
        token(KEY_A, "a", f.claims(json!({"scope": "mcp"})))?
    );
    let through = |name: &str| json!({"name": name, "arguments": {"id": "7"}});
    let reply = f
        .call_with(
            &[("authorization", &read_only)],
            "call_tool",
            through("ItemService_Slow"),
        )
        .await?;
    assert_eq!(reply.status, http::StatusCode::FORBIDDEN, "{}", reply.body);
    assert!(
        reply
            .body
            .contains("tool `ItemService_Slow` needs scope `items.write`"),
        "{}",
        reply.body
    );
    assert_eq!(f.backend_calls(), 0);
    let reply = f
        .call_with(
            &[("authorization", &read_only)],
            "call_tool",
            through("ItemService_GetItem"),
        )
        .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_ne!(reply.last()["result"]["isError"], true, "{}", reply.body);
    assert_eq!(f.backend_calls(), 1);
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_and_unknown_kids_are_rate_limited() -> TestResult {
    let f = fixture(true).await?;
    let bearer = format!("Bearer {}", f.good_token()?);
    assert_eq!(
        f.call(&[("authorization", &bearer)], "ItemService_GetItem")
            .await?
            .status,
        http::StatusCode::OK
    );
    assert_eq!(f.keys.fetches.load(Ordering::SeqCst), 1);
    // The server rotates to key B.
    *f.keys.jwks.lock().map_err(|e| e.to_string())? = json!({"keys": [jwk(KEY_B, "b")?]});
    tokio::time::sleep(Duration::from_millis(350)).await;
    let rotated = format!("Bearer {}", token(KEY_B, "b", f.good.clone())?);
    let reply = f
        .call(&[("authorization", &rotated)], "ItemService_GetItem")
        .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_eq!(f.keys.fetches.load(Ordering::SeqCst), 2);
    // A burst of tokens naming unknown keys fetches nothing more within the interval.
    for kid in ["x1", "x2", "x3", "x4", "x5"] {
        let forged = format!("Bearer {}", token(KEY_B, kid, f.good.clone())?);
        let reply = f
            .call(&[("authorization", &forged)], "ItemService_GetItem")
            .await?;
        assert_eq!(
            reply.status,
            http::StatusCode::UNAUTHORIZED,
            "{}",
            reply.body
        );
    }
    assert!(
        f.keys.fetches.load(Ordering::SeqCst) <= 3,
        "{}",
        f.keys.fetches.load(Ordering::SeqCst)
    );
    assert_eq!(
        f.authorization.key_fetches() as usize,
        f.keys.fetches.load(Ordering::SeqCst)
    );
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_session_answers_only_to_the_caller_that_opened_it() -> TestResult {
    let f = fixture(false).await?;
    let alice = format!("Bearer {}", f.good_token()?);
    let bob = format!(
        "Bearer {}",
        token(KEY_A, "a", f.claims(json!({"sub": "user-2"})))?
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let reply = send(
        f.addr,
        http::Method::POST,
        "/mcp",
        &[("authorization", &alice)],
        Some(&initialize),
    )
    .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    let session = reply.header("mcp-session-id").to_owned();
    assert!(!session.is_empty());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let as_alice = [
        ("authorization", alice.as_str()),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let reply = send(
        f.addr,
        http::Method::POST,
        "/mcp",
        &as_alice,
        Some(&initialized),
    )
    .await?;
    assert!(reply.status.is_success(), "{}", reply.body);
    let reply = send(f.addr, http::Method::POST, "/mcp", &as_alice, Some(&list)).await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    let as_bob = [
        ("authorization", bob.as_str()),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let reply = send(f.addr, http::Method::POST, "/mcp", &as_bob, Some(&list)).await?;
    assert_eq!(reply.status, http::StatusCode::NOT_FOUND, "{}", reply.body);
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_task_belongs_to_the_token_that_started_it() -> TestResult {
    use common::http_client::{open_session, session_send, task_capabilities};
    let f = fixture(false).await?;
    let alice = format!("Bearer {}", f.good_token()?);
    let bob = format!(
        "Bearer {}",
        token(KEY_A, "a", f.claims(json!({"sub": "user-2"})))?
    );
    let alice_session =
        open_session(f.addr, &[("authorization", &alice)], task_capabilities()).await?;
    let bob_session = open_session(f.addr, &[("authorization", &bob)], task_capabilities()).await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ItemService_ListItems", "arguments": {}}});
    let reply = session_send(f.addr, &[("authorization", &alice)], &alice_session, &call).await?;
    let task_id = reply.last()["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!task_id.is_empty(), "no task: {}", reply.body);
    let get =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task_id}});
    let reply = session_send(f.addr, &[("authorization", &alice)], &alice_session, &get).await?;
    assert_eq!(
        reply.last()["result"]["taskId"],
        json!(task_id),
        "{}",
        reply.body
    );
    // Another subject, in its own session, is told the task does not exist.
    for method in ["tasks/get", "tasks/cancel"] {
        let message =
            json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"taskId": task_id}});
        let reply =
            session_send(f.addr, &[("authorization", &bob)], &bob_session, &message).await?;
        assert_eq!(
            reply.last()["error"]["code"],
            json!(-32602),
            "{method}: {}",
            reply.body
        );
        assert_eq!(
            reply.last()["error"]["message"],
            json!(format!("unknown task: {task_id}"))
        );
    }
    f.shutdown.cancel();
    Ok(())
}

/// 16 clients × 100 authorized calls each: no errors, one key fetch. (RELIABILITY.md's
/// figure is the same test with `AUTH_LOAD_CALLS=1000`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_authorized_calls_fetch_the_keys_once() -> TestResult {
    let calls: usize = std::env::var("AUTH_LOAD_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let f = Arc::new(fixture(true).await?);
    let started = std::time::Instant::now();
    let mut clients = tokio::task::JoinSet::new();
    for client in 0..16 {
        let f = Arc::clone(&f);
        clients.spawn(async move {
            let bearer = format!(
                "Bearer {}",
                token(
                    KEY_A,
                    "a",
                    f.claims(json!({"sub": format!("user-{client}")}))
                )?
            );
            let mut errors = 0;
            for _ in 0..calls {
                let reply = f
                    .call(&[("authorization", &bearer)], "ItemService_GetItem")
                    .await?;
                if reply.status != http::StatusCode::OK
                    || reply.last()["result"]["isError"] == json!(true)
                {
                    errors += 1;
                }
            }
            TestResult::Ok(errors)
        });
    }
    let mut errors = 0;
    let mut rss_half = None;
    while let Some(result) = clients.join_next().await {
        errors += result??;
        if clients.len() == 8 {
            rss_half = rss_kib();
        }
    }
    // Figures for RELIABILITY.md (a measurement, not an assertion): the process holds the
    // clients, the server and the backend.
    eprintln!(
        "16 x {calls} authorized calls in {:?}, {errors} errors, {} key fetches, RSS {:?} KiB \
         when half the clients had finished, {:?} KiB at the end",
        started.elapsed(),
        f.keys.fetches.load(Ordering::SeqCst),
        rss_half,
        rss_kib(),
    );
    assert_eq!(errors, 0);
    assert_eq!(f.backend_calls(), 16 * calls);
    assert_eq!(f.keys.fetches.load(Ordering::SeqCst), 1);
    f.shutdown.cancel();
    Ok(())
}
