//! MCP authorization over streamable HTTP: `serve_http` behind an `Authorization`, with a real
//! tonic backend on loopback that counts what reaches it, and a key server on loopback
//! publishing RFC 8414 metadata and a JWKS the test can rotate. Tokens are signed with the
//! fixture keys in `tests/auth/`; each bad token of the catalogue differs from a good one in
//! one respect only. (`scripts/auth-e2e.sh` runs the same server against a real
//! authorization server and the official Python SDK.)

mod auth;
use test_kit::demo as common;

use std::{sync::atomic::Ordering, time::Duration};

use common::{
    TestResult,
    http_client::{open_session, send, send_text, start_task_in_session},
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tonic_mcp_search::ToolSearch;

use auth::*;

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
    // Nothing else under the prefix answers, and none of it reaches the MCP endpoint, even
    // with a good token: a proxy's controls on `/mcp` cannot be gone around through it.
    let bearer = f.bearer(json!({"scope": "mcp items.write"}))?;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ItemService_GetItem", "arguments": {"id": "7"}}});
    let prefix = "/.well-known/oauth-protected-resource";
    for (path, message, status) in [
        (
            format!("{prefix}X"),
            &initialize,
            http::StatusCode::NOT_FOUND,
        ),
        (
            format!("{prefix}/anything"),
            &call,
            http::StatusCode::NOT_FOUND,
        ),
        (
            format!("{prefix}/../../mcp"),
            &call,
            http::StatusCode::NOT_FOUND,
        ),
        (
            format!("{prefix}/mcp/x"),
            &call,
            http::StatusCode::NOT_FOUND,
        ),
        (
            prefix.to_owned(),
            &call,
            http::StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            format!("{prefix}/mcp"),
            &initialize,
            http::StatusCode::METHOD_NOT_ALLOWED,
        ),
    ] {
        let headers = [("authorization", bearer.as_str())];
        let reply = send(f.addr, http::Method::POST, &path, &headers, Some(message)).await?;
        assert_eq!(reply.status, status, "POST {path}: {}", reply.body);
        assert!(reply.messages.is_empty(), "POST {path}: {}", reply.body);
    }
    let reply = send(
        f.addr,
        http::Method::GET,
        &format!("{prefix}/other"),
        &[],
        None,
    )
    .await?;
    assert_eq!(reply.status, http::StatusCode::NOT_FOUND, "{}", reply.body);
    assert_eq!(f.backend_calls(), 0);
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_good_token_calls_tools_and_the_backend_sees_claims_not_the_token() -> TestResult {
    let f = fixture(true).await?;
    let bearer = f.bearer(json!({}))?;
    let reply = f.get_item_as(&bearer).await?;
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
    let issuer = f.keys.issuer.clone();
    let issuer_with_slash = token(KEY_A, "a", f.claims(json!({"iss": format!("{issuer}/")})))?;
    let issuer_in_array = token(KEY_A, "a", f.claims(json!({"iss": [issuer]})))?;
    let signed_with = |edit: &dyn Fn(&mut Header)| -> TestResult<String> {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("a".to_owned());
        edit(&mut header);
        let key = EncodingKey::from_rsa_pem(KEY_A)?;
        Ok(jsonwebtoken::encode(&header, &f.good, &key)?)
    };
    let critical = signed_with(&|header| header.crit = Some(vec!["exp".to_owned()]))?;
    let id_token_type = signed_with(&|header| header.typ = Some("id_token+jwt".to_owned()))?;
    let at_jwt = signed_with(&|header| header.typ = Some("at+jwt".to_owned()))?;
    let reply = f.get_item_as(&format!("Bearer {at_jwt}")).await?;
    assert_eq!(
        reply.status,
        http::StatusCode::OK,
        "typ at+jwt: {}",
        reply.body
    );
    let calls_before = f.backend_calls();

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
            "issuer with a trailing slash",
            vec![("authorization", format!("Bearer {issuer_with_slash}"))],
            http::StatusCode::UNAUTHORIZED,
            "another authorization server",
        ),
        (
            "issuer in an array",
            vec![("authorization", format!("Bearer {issuer_in_array}"))],
            http::StatusCode::UNAUTHORIZED,
            "another authorization server",
        ),
        (
            "an unknown critical header",
            vec![("authorization", format!("Bearer {critical}"))],
            http::StatusCode::UNAUTHORIZED,
            "critical (crit: exp)",
        ),
        (
            "not an access token's type",
            vec![("authorization", format!("Bearer {id_token_type}"))],
            http::StatusCode::UNAUTHORIZED,
            "not an access token",
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
                ("authorization", f.bearer(json!({}))?),
                ("authorization", f.bearer(json!({}))?),
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
        calls_before,
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

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Asserts that `reply` refused a call of `ItemService_Slow` with 403, naming the scope it
/// needs, and that no call has reached the backend.
fn slow_needs_items_write(f: &Fixture, reply: &common::http_client::Reply) {
    assert_eq!(reply.status, http::StatusCode::FORBIDDEN, "{}", reply.body);
    assert!(
        reply
            .body
            .contains("tool `ItemService_Slow` needs scope `items.write`"),
        "{}",
        reply.body
    );
    assert_eq!(f.backend_calls(), 0);
}

#[tokio::test]
async fn a_tool_scope_the_token_lacks_is_a_403_naming_it() -> TestResult {
    let f = fixture(true).await?;
    let read_only = f.bearer(json!({"scope": "mcp"}))?;
    let as_read_only = [("authorization", read_only.as_str())];
    // `ItemService_Slow` is not read-only: it needs `items.write`.
    let reply = f.call(&as_read_only, "ItemService_Slow").await?;
    slow_needs_items_write(&f, &reply);
    let challenge = reply.header("www-authenticate");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp items.write\""),
        "{challenge}"
    );
    // Read-only tools (`readOnlyHint`) and listing need only the scope every request needs.
    let reply = f.call(&as_read_only, "ItemService_GetItem").await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_eq!(f.backend_calls(), 1);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let reply = send(
        f.addr,
        http::Method::POST,
        "/mcp",
        &as_read_only,
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

/// `GetItem` under another name, needing a scope of its own (`(rust_mcp.tool).required_scopes`).
static ADMIN_GET_ITEM: tonic_mcp::codegen::ToolDef = tonic_mcp::codegen::ToolDef {
    name: "Admin_GetItem",
    required_scopes: &["items.admin"],
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/GetItem","inputType":"demo.v1.GetItemRequest","outputType":"demo.v1.Item","streaming":"unary","taskSupport":"forbidden","requiredScopes":["items.admin"]}}"#,
    ..common::pb::item_service_mcp::GET_ITEM
};

/// A tool's own scopes (`required_scopes`) are needed beside the policy's, named in the 403 and
/// listed in the protected resource metadata.
#[tokio::test]
async fn a_tool_needs_its_own_required_scopes() -> TestResult {
    let f = fixture_with(true, None, &[&ADMIN_GET_ITEM]).await?;
    let reader = f.bearer(json!({"scope": "mcp"}))?;
    let reply = f
        .call(&[("authorization", reader.as_str())], "Admin_GetItem")
        .await?;
    assert_eq!(reply.status, http::StatusCode::FORBIDDEN, "{}", reply.body);
    let challenge = reply.header("www-authenticate");
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"mcp items.admin\""),
        "{challenge}"
    );
    assert_eq!(f.backend_calls(), 0);
    // The same call of the same RPC under its own name needs no more than `mcp`.
    let reply = f.get_item_as(&reader).await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    let admin = f.bearer(json!({"scope": "mcp items.admin"}))?;
    let reply = f
        .call(&[("authorization", admin.as_str())], "Admin_GetItem")
        .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.last()["result"]["isError"],
        json!(false),
        "{}",
        reply.body
    );
    assert_eq!(f.backend_calls(), 2);
    let metadata = send(
        f.addr,
        http::Method::GET,
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        None,
    )
    .await?;
    let document: Value = serde_json::from_str(&metadata.body)?;
    assert_eq!(
        document["scopes_supported"],
        json!(["items.admin", "items.write", "mcp"])
    );
    f.shutdown.cancel();
    Ok(())
}

/// Under tool search, `call_tool` needs the scopes of the tool it calls: it cannot be a way
/// around them.
#[tokio::test]
async fn call_tool_needs_the_scopes_of_the_tool_it_calls() -> TestResult {
    let f = fixture_with(true, Some(ToolSearch::new()), &[]).await?;
    let read_only = f.bearer(json!({"scope": "mcp"}))?;
    let as_read_only = [("authorization", read_only.as_str())];
    let through = |name: &str| json!({"name": name, "arguments": {"id": "7"}});
    let reply = f
        .call_with(&as_read_only, "call_tool", through("ItemService_Slow"))
        .await?;
    slow_needs_items_write(&f, &reply);
    let reply = f
        .call_with(&as_read_only, "call_tool", through("ItemService_GetItem"))
        .await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_ne!(reply.last()["result"]["isError"], true, "{}", reply.body);
    assert_eq!(f.backend_calls(), 1);
    f.shutdown.cancel();
    Ok(())
}

/// The scope check reads a message as the call does: escapes in the method or a tool's name
/// are decoded, not a way past it, and a message naming the method, the tool or
/// `call_tool`'s target twice (which reading wins is the reader's choice) is refused, as is a
/// body the check cannot read. Nothing reaches the backend.
#[tokio::test]
async fn escapes_and_duplicate_keys_do_not_get_past_the_scope_check() -> TestResult {
    let f = fixture_with(true, Some(ToolSearch::new()), &[]).await?;
    let read_only = f.bearer(json!({"scope": "mcp"}))?;
    let as_read_only = [("authorization", read_only.as_str())];
    let forbidden = http::StatusCode::FORBIDDEN;
    let malformed = http::StatusCode::BAD_REQUEST;
    let call = |method: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#)
    };
    let slow = r#"{"name":"ItemService_Slow","arguments":{"id":"7"}}"#;
    let catalogue: Vec<(&str, String, http::StatusCode)> = vec![
        ("escaped solidus", call(r"tools\/call", slow), forbidden),
        ("escaped letter", call(r"tools/c\u0061ll", slow), forbidden),
        (
            "escaped tool name",
            call(
                "tools/call",
                r#"{"name":"ItemService_Sl\u006fw","arguments":{"id":"7"}}"#,
            ),
            forbidden,
        ),
        (
            "method twice",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{slow}}}"#
            ),
            malformed,
        ),
        (
            "params twice",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ItemService_GetItem"}},"params":{slow}}}"#
            ),
            malformed,
        ),
        (
            "tool name twice",
            call(
                "tools/call",
                r#"{"name":"ItemService_GetItem","name":"ItemService_Slow","arguments":{"id":"7"}}"#,
            ),
            malformed,
        ),
        (
            "call_tool's target twice",
            call(
                "tools/call",
                r#"{"name":"call_tool","arguments":{"name":"ItemService_GetItem","name":"ItemService_Slow","arguments":{"id":"7"}}}"#,
            ),
            malformed,
        ),
        (
            "call_tool's target escaped",
            call(
                "tools/call",
                r#"{"name":"call_tool","arguments":{"name":"ItemService_Sl\u006fw","arguments":{"id":"7"}}}"#,
            ),
            forbidden,
        ),
        (
            "in a batch",
            format!("[{}]", call("tools/call", slow)),
            forbidden,
        ),
        (
            "params not an object",
            call("tools/call", r#""x""#),
            malformed,
        ),
        (
            "not JSON",
            "{\"method\":\"tools/call\",".to_owned(),
            malformed,
        ),
    ];
    for (what, body, status) in &catalogue {
        let reply = send_text(
            f.addr,
            http::Method::POST,
            "/mcp",
            &as_read_only,
            Some(body),
        )
        .await?;
        assert_eq!(reply.status, *status, "{what}: {}", reply.body);
        if *status == forbidden {
            slow_needs_items_write(&f, &reply);
        }
    }
    assert_eq!(f.backend_calls(), 0);
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_and_unknown_kids_are_rate_limited() -> TestResult {
    let f = fixture(true).await?;
    let bearer = f.bearer(json!({}))?;
    assert_eq!(f.get_item_as(&bearer).await?.status, http::StatusCode::OK);
    assert_eq!(f.keys.fetches.load(Ordering::SeqCst), 1);
    // The server rotates to key B.
    *f.keys.jwks.lock().map_err(|e| e.to_string())? = json!({"keys": [jwk(KEY_B, "b")?]});
    tokio::time::sleep(Duration::from_millis(350)).await;
    let rotated = format!("Bearer {}", token(KEY_B, "b", f.good.clone())?);
    let reply = f.get_item_as(&rotated).await?;
    assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.body);
    assert_eq!(f.keys.fetches.load(Ordering::SeqCst), 2);
    // A burst of tokens naming unknown keys fetches nothing more within the interval.
    for kid in ["x1", "x2", "x3", "x4", "x5"] {
        let forged = format!("Bearer {}", token(KEY_B, kid, f.good.clone())?);
        let reply = f.get_item_as(&forged).await?;
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

/// One token owner cannot take every session: past `max_sessions_per_principal` (100 by
/// default) its `initialize` gets 503 naming that bound, while another owner still opens one;
/// a session the first closes frees a slot for it. Concurrent `initialize`s at the bound all
/// get 503, never rmcp's 500.
#[tokio::test]
async fn one_caller_cannot_take_every_session() -> TestResult {
    let f = fixture(false).await?;
    let alice = f.bearer(json!({}))?;
    let bob = f.bearer(json!({"sub": "user-2"}))?;
    let as_alice = [("authorization", alice.as_str())];
    let mut sessions = Vec::new();
    for _ in 0..100 {
        sessions.push(open_session(f.addr, &as_alice, json!({})).await?);
    }
    let initialize = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let attempts = (0..8).map(|_| {
        let initialize = initialize.clone();
        let (addr, alice) = (f.addr, alice.clone());
        tokio::spawn(async move {
            send(
                addr,
                http::Method::POST,
                "/mcp",
                &[("authorization", alice.as_str())],
                Some(&initialize),
            )
            .await
        })
    });
    for attempt in attempts.collect::<Vec<_>>() {
        let reply = attempt.await??;
        assert_eq!(
            reply.status,
            http::StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            reply.body
        );
        assert_eq!(reply.last()["id"], 7, "{}", reply.body);
        let message = reply.last()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("the limit per token owner is 100"),
            "{message}"
        );
    }
    open_session(f.addr, &[("authorization", bob.as_str())], json!({})).await?;
    let closed = [
        ("authorization", alice.as_str()),
        ("mcp-session-id", sessions[0].as_str()),
    ];
    let reply = send(f.addr, http::Method::DELETE, "/mcp", &closed, None).await?;
    assert!(reply.status.is_success(), "{}", reply.body);
    open_session(f.addr, &as_alice, json!({})).await?;
    f.shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn a_session_answers_only_to_the_caller_that_opened_it() -> TestResult {
    let f = fixture(false).await?;
    let alice = f.bearer(json!({}))?;
    let bob = f.bearer(json!({"sub": "user-2"}))?;
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
    use common::http_client::{session_send, task_capabilities};
    let (f, alice, alice_session, bob, bob_session) = two_subjects(task_capabilities()).await?;
    // A stream of 3 s: past the inline wait of the default task mode (2 s), the call becomes a
    // task (a quicker one would be answered with its result).
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ItemService_ListItems", "arguments": {"count": 1, "delay_ms": 3000}}});
    let as_alice = [("authorization", alice.as_str())];
    let task_id =
        start_task_in_session(f.addr, &as_alice, &alice_session, &call, "/taskId").await?;
    let get =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task_id}});
    let reply = session_send(f.addr, &as_alice, &alice_session, &get).await?;
    assert_eq!(
        reply.last()["result"]["taskId"],
        json!(task_id),
        "{}",
        reply.body
    );
    // Another subject, in its own session, is told the task does not exist.
    unknown_to(
        &f,
        &bob,
        &bob_session,
        &["tasks/get", "tasks/cancel"],
        &task_id,
    )
    .await?;
    f.shutdown.cancel();
    Ok(())
}

/// The same for a task asked for in the shape of revision 2025-11-25 (a `task` parameter):
/// `tasks/get`, `tasks/result` and `tasks/cancel` of another subject are told it is unknown,
/// and its `tasks/list` leaves it out.
#[tokio::test]
async fn a_task_of_revision_2025_11_25_belongs_to_the_token_that_started_it() -> TestResult {
    use common::http_client::session_send;
    let tasks = json!({"tasks": {"list": {}, "cancel": {}}});
    let (f, alice, alice_session, bob, bob_session) = two_subjects(tasks).await?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ItemService_ListItems", "arguments": {}, "task": {"ttl": 60000}}});
    let as_alice = [("authorization", alice.as_str())];
    let task_id =
        start_task_in_session(f.addr, &as_alice, &alice_session, &call, "/task/taskId").await?;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"});
    let reply = session_send(f.addr, &as_alice, &alice_session, &list).await?;
    assert_eq!(
        reply.last()["result"]["tasks"][0]["taskId"],
        json!(task_id),
        "{}",
        reply.body
    );
    let methods = ["tasks/get", "tasks/result", "tasks/cancel"];
    unknown_to(&f, &bob, &bob_session, &methods, &task_id).await?;
    let reply = session_send(f.addr, &[("authorization", &bob)], &bob_session, &list).await?;
    assert_eq!(reply.last()["result"]["tasks"], json!([]), "{}", reply.body);
    f.shutdown.cancel();
    Ok(())
}

/// A stateful fixture and two subjects, each with its bearer header value and a session it
/// opened declaring `capabilities`: `(fixture, alice, alice's session, bob, bob's session)`.
async fn two_subjects(
    capabilities: Value,
) -> TestResult<(Fixture, String, String, String, String)> {
    use common::http_client::open_session;
    let f = fixture(false).await?;
    let alice = f.bearer(json!({}))?;
    let bob = f.bearer(json!({"sub": "user-2"}))?;
    let alice_session =
        open_session(f.addr, &[("authorization", &alice)], capabilities.clone()).await?;
    let bob_session = open_session(f.addr, &[("authorization", &bob)], capabilities).await?;
    Ok((f, alice, alice_session, bob, bob_session))
}

/// Asserts that each of `methods` (`tasks/get` and the like), sent by `bearer` in `session`
/// about `task_id`, is answered as if the task did not exist.
async fn unknown_to(
    f: &Fixture,
    bearer: &str,
    session: &str,
    methods: &[&str],
    task_id: &str,
) -> TestResult {
    use common::http_client::{assert_unknown_task, session_send};
    for method in methods {
        let message =
            json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"taskId": task_id}});
        let reply = session_send(f.addr, &[("authorization", bearer)], session, &message).await?;
        assert_unknown_task(&reply, task_id, method);
    }
    Ok(())
}

/// A request refused before its body was read (here: no token) closes its HTTP/1 connection,
/// and its answer says so: hyper closes a connection whose request body is left unread, and a
/// client that sent the body after the headers (as httpx does) and reused the connection saw
/// it closed with no answer. A request whose body was read keeps its connection.
#[tokio::test]
async fn a_refusal_before_the_body_is_read_closes_the_connection_and_says_so() -> TestResult {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let f = fixture(true).await?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let head = |bearer: Option<&str>| {
        let authorization = bearer
            .map(|bearer| format!("Authorization: {bearer}\r\n"))
            .unwrap_or_default();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{authorization}\
             Content-Length: {}\r\n\r\n",
            f.addr.port(),
            body.len()
        )
    };
    // The answer's head, read up to its blank line.
    async fn answer_head(stream: &mut tokio::net::TcpStream) -> TestResult<String> {
        let mut read = Vec::new();
        let mut byte = [0u8; 1];
        while !read.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await? == 0 {
                break;
            }
            read.push(byte[0]);
        }
        Ok(String::from_utf8_lossy(&read).to_ascii_lowercase())
    }

    let mut stream = tokio::net::TcpStream::connect(f.addr).await?;
    stream.write_all(head(None).as_bytes()).await?;
    let refused = answer_head(&mut stream).await?;
    stream.write_all(body.as_bytes()).await.ok();
    assert!(refused.starts_with("http/1.1 401"), "{refused}");
    assert!(refused.contains("\r\nconnection: close\r\n"), "{refused}");

    let bearer = f.bearer(json!({"scope": "mcp"}))?;
    let mut stream = tokio::net::TcpStream::connect(f.addr).await?;
    stream.write_all(head(Some(&bearer)).as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    let answered = answer_head(&mut stream).await?;
    assert!(answered.starts_with("http/1.1 200"), "{answered}");
    assert!(
        !answered.contains("\r\nconnection: close\r\n"),
        "{answered}"
    );
    f.shutdown.cancel();
    Ok(())
}
