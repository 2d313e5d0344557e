//! Authorized calls under load: many clients with one token each, one key fetch (the
//! authorization fixture of `tests/auth/`).

mod auth;
use test_kit::demo as common;

use std::sync::{Arc, atomic::Ordering};

use common::TestResult;
use serde_json::json;

use auth::*;

/// This process's resident set size (Linux), in KiB.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// 16 clients × 100 authorized calls each: no errors, one key fetch. (RELIABILITY.md's
/// figure is the same test with `AUTH_LOAD_CALLS=1000`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_authorized_calls_fetch_the_keys_once() -> TestResult {
    let calls: usize = test_kit::env_or("AUTH_LOAD_CALLS", 100);
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
