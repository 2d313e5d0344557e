//! `RedisTaskStore` against a real Redis 7 (Debian's, which `scripts/install-tools.sh redis`
//! unpacks into `.tools/redis`; `TONIC_MCP_REDIS_SERVER` names another redis-server): what the
//! `TaskStore` trait promises, expiry, and a store that goes down and comes back.
//!
//! Without a redis-server these tests say so and pass, unless `TONIC_MCP_REDIS_REQUIRED` is
//! set, as scripts/test.sh sets it: there they fail.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rmcp::model::{JsonObject, TaskPayload};
use test_kit::redis::{Redis, redis_server};
use tonic_mcp_redis::RedisTaskStore;
use tonic_mcp_tasks::{SharedTask, TaskStore};

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn record(id: &str, owner: &str, created_us: u64, payload: TaskPayload) -> SharedTask {
    test_kit::task_record(id, owner, "r1", created_us, payload, false)
}

fn completed(text: &str) -> TaskPayload {
    let mut result = JsonObject::new();
    result.insert(
        "content".to_owned(),
        serde_json::json!([{"type": "text", "text": text}]),
    );
    TaskPayload::Completed { result }
}

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn the_store_keeps_tasks_as_the_trait_says() -> TestResult {
    let Some(path) = redis_server() else {
        return Ok(());
    };
    let redis = Redis::start(path, test_kit::free_port(), None);
    let store = RedisTaskStore::new(&redis.url(), None)?.key_prefix("test:");
    assert_eq!(store.name(), format!("redis://127.0.0.1:{}/0", redis.port));

    // create never replaces; finish replaces a working task, never an ended one.
    let working = record("t1", "caller:alice", 1, TaskPayload::Working);
    store.create(&working, MINUTE).await?;
    assert_eq!(store.get("t1").await?, Some(working.clone()));
    store
        .create(&record("t1", "caller:alice", 1, completed("late")), MINUTE)
        .await?;
    assert_eq!(store.get("t1").await?, Some(working));
    let done = record("t1", "caller:alice", 1, completed("done"));
    assert!(store.finish(&done, MINUTE).await?);
    assert!(
        !store
            .finish(
                &record("t1", "caller:alice", 1, TaskPayload::Cancelled),
                MINUTE
            )
            .await?
    );
    assert_eq!(store.get("t1").await?, Some(done.clone()));
    // A finish that lands before its create: the create does not undo it.
    let early = record("t0", "caller:alice", 0, completed("early"));
    assert!(store.finish(&early, MINUTE).await?);
    store
        .create(
            &record("t0", "caller:alice", 0, TaskPayload::Working),
            MINUTE,
        )
        .await?;
    assert_eq!(store.get("t0").await?, Some(early));
    assert_eq!(store.get("absent").await?, None);

    // Lists: the owner's, oldest first, in pages.
    for n in 2..=5 {
        store
            .create(
                &record(&format!("t{n}"), "caller:alice", n, TaskPayload::Working),
                MINUTE,
            )
            .await?;
    }
    store
        .create(&record("b1", "caller:bob", 3, TaskPayload::Working), MINUTE)
        .await?;
    let mut ids = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let (page, next) = store.list("caller:alice", after, 2).await?;
        pages += 1;
        ids.extend(page.iter().map(|task| task.id().to_owned()));
        match next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(ids, ["t0", "t1", "t2", "t3", "t4", "t5"]);
    assert_eq!(pages, 3);
    let (bob, _) = store.list("caller:bob", None, 10).await?;
    assert_eq!(bob.len(), 1);

    // Leases and cancellations.
    assert!(!store.runner_alive("r1").await?);
    assert!(
        store
            .renew("r1", Duration::from_millis(300))
            .await?
            .is_empty()
    );
    assert!(store.runner_alive("r1").await?);
    store.cancel("r1", "t2").await?;
    store.cancel("r1", "t3").await?;
    assert_eq!(
        store.renew("r1", Duration::from_millis(300)).await?,
        ["t2", "t3"]
    );
    assert!(
        store
            .renew("r1", Duration::from_millis(300))
            .await?
            .is_empty()
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !store.runner_alive("r1").await?,
        "the lease outlived its time"
    );

    // Expiry: a record goes with its time-to-live, and listings drop it.
    store
        .create(
            &record("short", "caller:carol", 1, TaskPayload::Working),
            Duration::from_millis(200),
        )
        .await?;
    store
        .create(
            &record("long", "caller:carol", 2, TaskPayload::Working),
            MINUTE,
        )
        .await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.get("short").await?, None);
    let (carol, next) = store.list("caller:carol", None, 10).await?;
    assert_eq!(
        carol.iter().map(SharedTask::id).collect::<Vec<_>>(),
        ["long"]
    );
    assert_eq!(next, None);
    Ok(())
}

/// Redis stopped: each call fails within the bounds, naming the operation, and counted;
/// started again on the same port: the same store works again by itself.
#[tokio::test]
async fn a_store_that_goes_down_fails_fast_and_comes_back_by_itself() -> TestResult {
    let Some(path) = redis_server() else {
        return Ok(());
    };
    let port = test_kit::free_port();
    let mut redis = Redis::start(path.clone(), port, None);
    let errors = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&errors);
    let store = RedisTaskStore::new(&redis.url(), None)?.on_error(move |operation| {
        assert!(!operation.is_empty());
        counted.fetch_add(1, Ordering::Relaxed);
    });
    store
        .create(
            &record("up", "caller:alice", 1, TaskPayload::Working),
            MINUTE,
        )
        .await?;

    redis.stop();
    let started = Instant::now();
    let error = store
        .get("up")
        .await
        .err()
        .ok_or("a read with the store down succeeded")?;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(error.to_string().starts_with("get: "), "{error}");
    assert!(errors.load(Ordering::Relaxed) >= 1);

    let _redis = Redis::start(redis.path.clone(), port, None);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match store.get("up").await {
            // A new, empty server: the record is gone, the store answers.
            Ok(found) => {
                assert_eq!(found, None);
                break;
            }
            Err(error) if Instant::now() < deadline => {
                eprintln!("not back yet: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => return Err(format!("the store did not come back: {error}").into()),
        }
    }
    Ok(())
}

/// A password reaches the server; a wrong one is an error, not a hang.
#[tokio::test]
async fn a_password_is_sent_and_a_wrong_one_is_refused() -> TestResult {
    let Some(path) = redis_server() else {
        return Ok(());
    };
    let redis = Redis::start(path, test_kit::free_port(), Some("s3cret"));
    let good = RedisTaskStore::new(&redis.url(), Some("s3cret"))?;
    good.create(
        &record("p1", "caller:alice", 1, TaskPayload::Working),
        MINUTE,
    )
    .await?;
    assert!(good.get("p1").await?.is_some());
    assert!(!good.name().contains("s3cret"));
    let bad = RedisTaskStore::new(&redis.url(), Some("wrong"))?;
    let error = bad
        .get("p1")
        .await
        .err()
        .ok_or("a wrong password was let in")?;
    eprintln!("{error}");
    Ok(())
}
