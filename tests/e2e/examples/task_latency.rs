//! What a task costs, with and without a shared task store: the latency of creating a task
//! (`tools/call` with `task`, revision 2025-11-25) and of `tasks/get`, on the replica that runs
//! the task and (with a store) on another, as p50 and p99; and, with Redis, the memory the
//! store's server holds per 1,000 finished tasks.
//!
//! ```sh
//! cargo run --release -p e2e --example task_latency -- memory 2000
//! scripts/install-tools.sh redis
//! .tools/redis/run --port 16379 --save "" --appendonly no &
//! cargo run --release -p e2e --example task_latency -- redis://127.0.0.1:16379/0 2000
//! ```
//!
//! `memory` is the default: tasks kept in the server's memory, no store. A `redis://` URL
//! puts two replicas on that Redis (`tonic-mcp-redis`), both on one backend; each task is
//! created on the first and read on both. The tool is `InventoryService_ListItems` (five
//! items, streamed; a task ends within a millisecond or two), the backend e2e's inventory on
//! loopback, one client connection per replica, one request at a time.

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use serde_json::json;
use tonic_mcp::McpServer;
use tonic_mcp_serve::ServeHttp as _;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let store = args.get(1).cloned().unwrap_or_else(|| "memory".to_owned());
    let tasks: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run(store, tasks));
}

async fn replica(backend: &e2e::Backend, name: &str, store: &str) -> std::net::SocketAddr {
    let channel = e2e::channel(backend).await.expect("channel");
    let tools =
        e2e::testdata::streaming::inventory_service_mcp::from_channel(channel).expect("tools");
    let mut builder = McpServer::builder("task-latency", "0")
        .tool_set(tools)
        .expect("tool set")
        .replica(name);
    // Every task of the run stays live (one time-to-live): no bound per caller in the way.
    let mut tasks = tonic_mcp_tasks::Tasks::new().limits(tonic_mcp_tasks::TaskLimits {
        max_per_owner: usize::MAX,
        ..tonic_mcp_tasks::TaskLimits::default()
    });
    if store != "memory" {
        tasks = tasks.store(tonic_mcp_redis::RedisTaskStore::new(store, None).expect("store URL"));
    }
    builder = builder.task_router(tasks);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(
        builder
            .build()
            .serve_http(listener, McpServer::stateless_http_config()),
    );
    addr
}

async fn run(store: String, tasks: usize) {
    let backend = e2e::start_backend().await.expect("backend");
    let first = replica(&backend, "a", &store).await;
    let second = replica(&backend, "b", &store).await;
    let mut runner = common::RawHttp::connect(first).await;
    let mut other = common::RawHttp::connect(second).await;
    let used_before = redis_used_memory(&store).await;

    let call = json!({"name": "InventoryService_ListItems", "arguments": {"namePrefix": "item"}, "task": {}});
    let (mut create, mut get_here, mut get_there) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..tasks {
        let started = Instant::now();
        let answer = runner.request_2025("tools/call", call.clone()).await;
        create.push(started.elapsed());
        let id = answer["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("task {n}: {answer}"))
            .to_owned();
        // Until it ended, then once more each way, timed.
        loop {
            let answer = runner
                .request_2025("tasks/get", json!({"taskId": id}))
                .await;
            if answer["result"]["status"] == "completed" {
                break;
            }
            assert_eq!(answer["result"]["status"], "working", "{answer}");
        }
        let started = Instant::now();
        let answer = runner
            .request_2025("tasks/get", json!({"taskId": id}))
            .await;
        get_here.push(started.elapsed());
        assert_eq!(answer["result"]["status"], "completed", "{answer}");
        if store != "memory" {
            let started = Instant::now();
            let answer = other.request_2025("tasks/get", json!({"taskId": id})).await;
            get_there.push(started.elapsed());
            assert_eq!(answer["result"]["status"], "completed", "{answer}");
        }
    }
    println!("store: {store}, {tasks} tasks");
    report("create (tools/call with task)", &mut create);
    report("tasks/get on the runner", &mut get_here);
    if !get_there.is_empty() {
        report("tasks/get on another replica", &mut get_there);
    }
    if let (Some(before), Some(after)) = (used_before, redis_used_memory(&store).await) {
        let per_thousand = (after.saturating_sub(before)) as f64 * 1000.0 / tasks as f64;
        println!(
            "Redis used_memory: {before} B before, {after} B after: {:.0} KiB per 1,000 finished tasks",
            per_thousand / 1024.0
        );
    }
}

fn report(what: &str, times: &mut [Duration]) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{what}: p50 {:.3} ms, p99 {:.3} ms",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
}

/// Redis's `used_memory` (INFO memory), for a `redis://` store.
async fn redis_used_memory(store: &str) -> Option<u64> {
    if store == "memory" {
        return None;
    }
    let client = redis::Client::open(store).ok()?;
    let mut connection = client.get_multiplexed_async_connection().await.ok()?;
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(&mut connection)
        .await
        .ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|value| value.trim().parse().ok())
}
