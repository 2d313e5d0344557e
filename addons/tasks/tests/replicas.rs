//! Tasks across replicas: two servers on one task store (`MemoryTaskStore`, shared as
//! replicas share Redis), each serving stateless HTTP on its own port, as replicas behind a
//! load balancer do. A task started on one is read, awaited, listed and cancelled on the
//! other, in both task shapes; a task whose replica stopped is reported failed, saying so; an
//! unknown task is unknown on every replica. Callers are told apart by a layer that names
//! them from a header, as an authenticating layer names token owners.

use test_kit::demo as common;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use common::{
    Backend, SLOW_TASK, TestResult, pb,
    replicas::{NameCallers, result, send_2025, send_final},
    start_backend,
};
use rmcp::model::TaskPayload;
use serde_json::json;
use tonic_mcp::{
    McpServer, TaskMode,
    codegen::{BoxTransport, ToolSetBuilder},
};
use tonic_mcp_serve::ServeHttp as _;
use tonic_mcp_tasks::{MemoryTaskStore, TaskStore, Tasks};

struct Replicas {
    a: SocketAddr,
    b: SocketAddr,
    store: Arc<MemoryTaskStore>,
    backend: Backend,
    shutdown: Vec<tokio_util::sync::CancellationToken>,
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for token in &self.shutdown {
            token.cancel();
        }
    }
}

/// Replicas `a` and `b` of one server, on one store and one backend.
async fn replicas() -> TestResult<Replicas> {
    let store = Arc::new(MemoryTaskStore::new());
    let (backend_addr, backend) = start_backend().await?;
    let mut addrs = Vec::new();
    let mut shutdown = Vec::new();
    for name in ["a", "b"] {
        let channel = common::channel(backend_addr).await?;
        let mut slow = ToolSetBuilder::new(
            pb::MCP_FILE_DESCRIPTOR_SET,
            BoxTransport::new(channel.clone()),
        )?;
        slow.add(&SLOW_TASK)?;
        let server = McpServer::builder("replicas", "0.1.0")
            .tool_set(pb::item_service_mcp::from_channel(channel)?)?
            .tool_set(slow.build())?
            .replica(name)
            .task_router(
                Tasks::new()
                    .mode(TaskMode::Always)
                    .store(Arc::clone(&store)),
            )
            .build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        addrs.push(listener.local_addr()?);
        let config = McpServer::stateless_http_config();
        shutdown.push(config.cancellation_token.clone());
        tokio::spawn(server.serve_http_with(listener, config, tower_layer::layer_fn(NameCallers)));
    }
    Ok(Replicas {
        a: addrs[0],
        b: addrs[1],
        store,
        backend,
        shutdown,
    })
}

/// A call of revision 2025-11-25 as a task, started on one replica: `tasks/get`,
/// `tasks/result` and `tasks/list` on the other answer for it, for its caller alone, and the
/// result is the direct call's.
#[tokio::test]
async fn a_task_started_on_one_replica_is_answered_on_the_other() -> TestResult {
    let replicas = replicas().await?;
    let call = json!({"name": "SlowTask", "arguments": {"sleep_ms": 300}, "task": {}});
    let started = result(
        &send_2025(replicas.a, "alice", "tools/call", call).await?,
        "tools/call",
    )?;
    let task_id = started["task"]["taskId"]
        .as_str()
        .ok_or("no task id")?
        .to_owned();

    let got = result(
        &send_2025(replicas.b, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get on the other replica",
    )?;
    assert_eq!(got["status"], json!("working"), "{got}");

    let waited = result(
        &send_2025(
            replicas.b,
            "alice",
            "tasks/result",
            json!({"taskId": task_id}),
        )
        .await?,
        "tasks/result on the other replica",
    )?;
    let direct = result(
        &send_2025(
            replicas.a,
            "alice",
            "tools/call",
            json!({"name": "SlowTask", "arguments": {"sleep_ms": 300}}),
        )
        .await?,
        "the direct call",
    )?;
    assert_eq!(
        waited["structuredContent"], direct["structuredContent"],
        "{waited}"
    );
    assert_eq!(waited["content"], direct["content"], "{waited}");
    assert_eq!(
        waited["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(task_id)
    );

    // Another caller is told it does not exist, on either replica.
    for addr in [replicas.a, replicas.b] {
        let reply = send_2025(addr, "bob", "tasks/get", json!({"taskId": task_id})).await?;
        common::http_client::assert_unknown_task(&reply, &task_id, "another caller's task");
    }
    // Listed for its caller on the replica that did not run it; not for another.
    let listed = result(
        &send_2025(replicas.b, "alice", "tasks/list", json!({})).await?,
        "tasks/list",
    )?;
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .ok_or("no tasks")?
        .iter()
        .filter_map(|task| task["taskId"].as_str())
        .collect();
    assert_eq!(ids, [task_id.as_str()], "{listed}");
    let listed = result(
        &send_2025(replicas.b, "bob", "tasks/list", json!({})).await?,
        "tasks/list",
    )?;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    Ok(())
}

/// The tasks extension's shape: a task created on one replica is fetched, with its result,
/// from the other.
#[tokio::test]
async fn a_task_of_the_extension_is_fetched_on_the_other_replica() -> TestResult {
    let replicas = replicas().await?;
    let call = json!({"name": "SlowTask", "arguments": {"sleep_ms": 200}});
    let started = result(
        &send_final(replicas.a, "alice", "tools/call", call).await?,
        "tools/call",
    )?;
    let task_id = started["taskId"]
        .as_str()
        .ok_or_else(|| format!("no task: {started}"))?
        .to_owned();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let got = result(
            &send_final(replicas.b, "alice", "tasks/get", json!({"taskId": task_id})).await?,
            "tasks/get on the other replica",
        )?;
        if got["status"] == json!("completed") {
            assert!(got["result"]["structuredContent"].is_object(), "{got}");
            break;
        }
        assert_eq!(got["status"], json!("working"), "{got}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "never completed: {got}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// `tasks/cancel` on the replica that does not run the task reaches the one that does, whose
/// gRPC call the backend sees cancelled; the task ends cancelled.
#[tokio::test]
async fn cancelling_on_the_other_replica_cancels_the_grpc_call() -> TestResult {
    let replicas = replicas().await?;
    let call = json!({"name": "SlowTask", "arguments": {"sleep_ms": 20_000}, "task": {}});
    let started = result(
        &send_2025(replicas.a, "alice", "tools/call", call).await?,
        "tools/call",
    )?;
    let task_id = started["task"]["taskId"]
        .as_str()
        .ok_or("no task id")?
        .to_owned();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancelled = result(
        &send_2025(
            replicas.b,
            "alice",
            "tasks/cancel",
            json!({"taskId": task_id}),
        )
        .await?,
        "tasks/cancel on the other replica",
    )?;
    replicas
        .backend
        .observed
        .assert_cancelled(1, Duration::from_secs(3))
        .await;
    // Answered once the call stopped, or as it was after the wait: cancelled by now.
    let got = if cancelled["status"] == json!("cancelled") {
        cancelled
    } else {
        tokio::time::sleep(Duration::from_millis(300)).await;
        result(
            &send_2025(replicas.b, "alice", "tasks/get", json!({"taskId": task_id})).await?,
            "tasks/get",
        )?
    };
    assert_eq!(got["status"], json!("cancelled"), "{got}");
    Ok(())
}

/// A working task whose replica holds no lease (it stopped) is failed by the replica asked
/// about it, with a message naming that replica, in `tasks/get` and `tasks/result`.
#[tokio::test]
async fn a_task_whose_replica_stopped_fails_saying_so() -> TestResult {
    let replicas = replicas().await?;
    let record = |id: &str, created_us: u64| {
        test_kit::task_record(
            id,
            "caller:alice",
            "gone",
            created_us,
            TaskPayload::Working,
            true,
        )
    };
    // Created just now: its runner may not have renewed its lease yet (a store that came back
    // empty), and it is given a lease's time.
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_micros();
    let young = record("young-1", u64::try_from(now_us)?);
    replicas
        .store
        .create(&young, Duration::from_secs(60))
        .await?;
    let got = result(
        &send_2025(
            replicas.b,
            "alice",
            "tasks/get",
            json!({"taskId": "young-1"}),
        )
        .await?,
        "tasks/get",
    )?;
    assert_eq!(got["status"], json!("working"), "{got}");
    // Created long ago.
    replicas
        .store
        .create(&record("orphan-1", 1), Duration::from_secs(60))
        .await?;
    let got = result(
        &send_2025(
            replicas.b,
            "alice",
            "tasks/get",
            json!({"taskId": "orphan-1"}),
        )
        .await?,
        "tasks/get",
    )?;
    assert_eq!(got["status"], json!("failed"), "{got}");
    let message = got["statusMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("replica running this task (gone) stopped"),
        "{message}"
    );
    let reply = send_2025(
        replicas.a,
        "alice",
        "tasks/result",
        json!({"taskId": "orphan-1"}),
    )
    .await?;
    assert_eq!(
        reply.last()["error"]["message"].as_str(),
        Some(message),
        "{}",
        reply.body
    );
    Ok(())
}

/// An id no replica holds is unknown on each, in both shapes: never "Missing required client
/// capability".
#[tokio::test]
async fn an_unknown_task_is_unknown_on_every_replica() -> TestResult {
    let replicas = replicas().await?;
    for addr in [replicas.a, replicas.b] {
        for method in ["tasks/get", "tasks/cancel"] {
            let reply = send_2025(addr, "alice", method, json!({"taskId": "nowhere-1"})).await?;
            common::http_client::assert_unknown_task(&reply, "nowhere-1", method);
            let reply = send_final(addr, "alice", method, json!({"taskId": "nowhere-1"})).await?;
            common::http_client::assert_unknown_task(&reply, "nowhere-1", method);
        }
    }
    Ok(())
}
