//! The client side of `scripts/scale-out.sh` (ignored in `cargo test`: they need the replicas
//! and nginx the script starts). Both talk to the load balancer at `SCALE_OUT_URL`; the script
//! kills one replica meanwhile and writes the time (Unix milliseconds) to
//! `SCALE_OUT_KILL_FILE`.
//!
//! - Stateless replicas: MCP clients call a tool for `SCALE_OUT_SECONDS`. Only calls in flight
//!   at the kill may fail; every call started after it must succeed.
//! - Replicas in session mode, named `r1`, `r2`, `r3` and routed on the session id's prefix:
//!   sessions opened through the load balancer stay on their replica, and when one replica dies
//!   only its sessions end (HTTP 404, on which a client initializes again).

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// What `scripts/scale-out.sh` tells a client: where the load balancer is, and the file it
/// writes the kill time to.
struct Balancer {
    /// `SCALE_OUT_URL`, `http://HOST:PORT/mcp`.
    url: String,
    /// Its address, for the raw HTTP client of `support`.
    addr: SocketAddr,
    /// `SCALE_OUT_KILL_FILE`.
    kill_file: String,
}

impl Balancer {
    fn from_env() -> Self {
        let url = std::env::var("SCALE_OUT_URL").expect("SCALE_OUT_URL");
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("SCALE_OUT_URL {url}: not http://IP:PORT/mcp"));
        Balancer {
            url,
            addr,
            kill_file: std::env::var("SCALE_OUT_KILL_FILE").expect("SCALE_OUT_KILL_FILE"),
        }
    }

    /// When the script killed the replica (Unix milliseconds), waiting up to `within` for it
    /// to say so.
    async fn killed_at(&self, within: Duration) -> u128 {
        let until = Instant::now() + within;
        loop {
            let text = std::fs::read_to_string(&self.kill_file).unwrap_or_default();
            if let Ok(killed) = text.trim().parse() {
                return killed;
            }
            assert!(
                Instant::now() < until,
                "the script wrote no kill time to {} within {within:?}",
                self.kill_file
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by scripts/scale-out.sh"]
async fn calls_through_the_load_balancer_survive_a_replica_kill() {
    let balancer = Balancer::from_env();
    let seconds: u64 = test_kit::env_or("SCALE_OUT_SECONDS", 10);
    let clients = 8;
    let until = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let url = balancer.url.clone();
            tokio::spawn(async move {
                // (start ms, end ms, error)
                let mut calls: Vec<(u128, u128, Option<String>)> = Vec::new();
                let mut client = None;
                while Instant::now() < until {
                    let start = now_ms();
                    if client.is_none() {
                        let transport = StreamableHttpClientTransport::from_uri(url.clone());
                        match ().serve(transport).await {
                            Ok(connected) => client = Some(connected),
                            Err(error) => {
                                calls.push((start, now_ms(), Some(format!("connect: {error}"))));
                                continue;
                            }
                        }
                    }
                    let Some(connected) = client.as_ref() else {
                        continue;
                    };
                    let result = connected
                        .call_tool(CallToolRequestParams::new("TaskService_ListTasks"))
                        .await;
                    let error = match result {
                        Ok(result) if result.is_error != Some(true) => None,
                        Ok(result) => Some(format!("isError: {:?}", result.content)),
                        Err(error) => Some(error.to_string()),
                    };
                    if error.is_some() {
                        // A transport error may end the client: connect again.
                        client = None;
                    }
                    calls.push((start, now_ms(), error));
                }
                calls
            })
        })
        .collect();
    let mut calls = Vec::new();
    for task in tasks {
        calls.extend(task.await.expect("client task"));
    }
    let killed = balancer.killed_at(Duration::from_secs(30)).await;
    let failed: Vec<_> = calls.iter().filter(|(_, _, e)| e.is_some()).collect();
    let after: Vec<_> = failed
        .iter()
        .filter(|(start, _, _)| *start > killed)
        .collect();
    let in_flight = calls
        .iter()
        .filter(|(start, end, _)| *start <= killed && *end >= killed)
        .count();
    eprintln!(
        "scale-out: {} calls by {clients} clients in {seconds} s through the load balancer; one replica killed; \
         {in_flight} in flight at the kill; {} failed ({} started after the kill)",
        calls.len(),
        failed.len(),
        after.len()
    );
    for (start, end, error) in &failed {
        eprintln!(
            "  failed: started {} ms, ended {} ms after the kill: {}",
            *start as i128 - killed as i128,
            *end as i128 - killed as i128,
            error.as_deref().unwrap_or("")
        );
    }
    assert!(calls.len() > 100, "too few calls to say anything");
    assert!(after.is_empty(), "calls started after the kill failed");
}

/// Sessions opened through the load balancer.
const SESSIONS: usize = 12;
/// Tool calls made in each session before the kill.
const CALLS_PER_SESSION: u64 = 25;

/// The replica that opened `session`: the prefix of its id, before the first `.`.
fn replica_of(session: &str) -> &str {
    session
        .split_once('.')
        .map(|(name, _)| name)
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| panic!("session id {session:?} names no replica"))
}

/// Calls `TaskService_ListTasks` in `session` through the load balancer: the HTTP status and,
/// for a 200, the error of the call if any (a JSON-RPC error or an `isError` result).
async fn list_tasks(addr: SocketAddr, session: &str, id: u64) -> (u16, Option<String>) {
    let headers = [
        ("mcp-session-id", session),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let call = support::tool_call(id, "TaskService_ListTasks", serde_json::json!({}));
    let response = support::post(addr, &headers, call.to_string().as_bytes()).await;
    if response.status != 200 {
        return (response.status, Some(response.body));
    }
    let answer = response
        .messages()
        .into_iter()
        .find(|message| message.get("id") == Some(&serde_json::json!(id)));
    let error = match answer {
        Some(answer)
            if answer["result"]["isError"] != serde_json::json!(true)
                && answer.get("error").is_none()
                && answer["result"]["structuredContent"]["tasks"].is_array() =>
        {
            None
        }
        _ => Some(response.body),
    };
    (200, error)
}

/// Makes `calls` tool calls in each of `sessions`, the sessions side by side; the failures,
/// as (session, HTTP status, what was wrong).
async fn calls_in_each(
    addr: SocketAddr,
    sessions: &[String],
    calls: u64,
) -> Vec<(String, u16, String)> {
    let tasks: Vec<_> = sessions
        .iter()
        .cloned()
        .map(|session| {
            tokio::spawn(async move {
                let mut failed = Vec::new();
                for id in 1..=calls {
                    if let (status, Some(error)) = list_tasks(addr, &session, id).await {
                        failed.push((session.clone(), status, error));
                    }
                }
                failed
            })
        })
        .collect();
    let mut failed = Vec::new();
    for task in tasks {
        failed.extend(task.await.expect("session task"));
    }
    failed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by scripts/scale-out.sh"]
async fn sessions_stay_on_their_replica_and_end_only_with_it() {
    let balancer = Balancer::from_env();
    let ready_file = std::env::var("SCALE_OUT_READY_FILE").expect("SCALE_OUT_READY_FILE");
    let addr = balancer.addr;

    // Sessions opened through the load balancer land on several replicas.
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        let session = support::open_session(addr)
            .await
            .expect("a session id from a replica in session mode");
        sessions.push(session);
    }
    let mut by_replica: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for session in &sessions {
        by_replica
            .entry(replica_of(session).to_owned())
            .or_default()
            .push(session.clone());
    }
    let spread: Vec<(&String, usize)> = by_replica.iter().map(|(r, s)| (r, s.len())).collect();
    eprintln!(
        "scale-out sessions: {SESSIONS} sessions opened through the load balancer: {spread:?}"
    );
    assert!(
        by_replica.len() > 1,
        "every session is on one replica: {spread:?}"
    );

    // Every call of every session succeeds: each reached the replica that holds its session
    // (any other answers 404).
    let failed = calls_in_each(addr, &sessions, CALLS_PER_SESSION).await;
    assert!(
        failed.is_empty(),
        "{} of {} calls failed before any replica was killed, first {:?}",
        failed.len(),
        SESSIONS as u64 * CALLS_PER_SESSION,
        failed.first()
    );
    eprintln!(
        "scale-out sessions: {} calls in {SESSIONS} sessions, all answered",
        SESSIONS as u64 * CALLS_PER_SESSION
    );

    // The script kills the replica named here: the one holding the most sessions.
    let (victim, lost) = by_replica
        .iter()
        .max_by_key(|(_, sessions)| sessions.len())
        .map(|(name, sessions)| (name.clone(), sessions.clone()))
        .expect("sessions");
    std::fs::write(&ready_file, format!("{victim}\n")).expect("write the ready file");
    let killed = balancer.killed_at(Duration::from_secs(60)).await;
    eprintln!(
        "scale-out sessions: replica {victim} killed {} ms ago with {} sessions",
        now_ms().saturating_sub(killed),
        lost.len()
    );

    // Its sessions are gone: HTTP 404, session not found, from a live replica.
    for session in &lost {
        let (status, body) = list_tasks(addr, session, 1000).await;
        assert_eq!(
            status, 404,
            "session {session} of the killed replica: {body:?}"
        );
    }
    // Every other session keeps working.
    let kept: Vec<String> = sessions
        .iter()
        .filter(|session| replica_of(session) != victim)
        .cloned()
        .collect();
    let failed = calls_in_each(addr, &kept, 5).await;
    assert!(
        failed.is_empty(),
        "sessions of live replicas failed after the kill: {} calls, first {:?}",
        failed.len(),
        failed.first()
    );
    // An id naming no replica of the map goes to any replica, which does not know it: 404.
    let (status, body) = list_tasks(addr, "nosuchreplica.0", 1001).await;
    assert_eq!(status, 404, "an unknown replica's session: {body:?}");

    // A client whose session ended initializes again: new sessions open on live replicas and
    // work.
    let mut fresh = Vec::new();
    for _ in 0..6 {
        let session = support::open_session(addr)
            .await
            .expect("a session id from a live replica");
        assert_ne!(
            replica_of(&session),
            victim,
            "a new session on the killed replica"
        );
        fresh.push(session);
    }
    let failed = calls_in_each(addr, &fresh, 5).await;
    assert!(
        failed.is_empty(),
        "new sessions failed after the kill: {} calls, first {:?}",
        failed.len(),
        failed.first()
    );
    eprintln!(
        "scale-out sessions: the {} sessions of {victim} answer 404, the other {} and {} new ones work",
        lost.len(),
        kept.len(),
        fresh.len()
    );
}

/// The tasks phase's orders to the script: a line each in `SCALE_OUT_CONTROL` (a replica's name
/// to kill it, `redis-stop`, `redis-start`), each acknowledged with a line in
/// `SCALE_OUT_DONE` once carried out.
struct Control {
    control: String,
    done: String,
    given: usize,
}

impl Control {
    fn from_env() -> Self {
        Control {
            control: std::env::var("SCALE_OUT_CONTROL").expect("SCALE_OUT_CONTROL"),
            done: std::env::var("SCALE_OUT_DONE").expect("SCALE_OUT_DONE"),
            given: 0,
        }
    }

    /// Gives `order` and waits (at most a minute) until the script carried it out.
    async fn order(&mut self, order: &str) {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.control)
            .expect("the control file");
        writeln!(file, "{order}").expect("an order");
        self.given += 1;
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let done = std::fs::read_to_string(&self.done).unwrap_or_default();
            if done.lines().count() >= self.given {
                return;
            }
            assert!(
                Instant::now() < until,
                "the script did not carry out `{order}`"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A JSON-RPC request of protocol revision 2025-11-25 to `addr`: its answer (the last message).
async fn rpc_2025(addr: SocketAddr, method: &str, params: serde_json::Value) -> serde_json::Value {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = support::post(
        addr,
        &[("mcp-protocol-version", "2025-11-25")],
        body.to_string().as_bytes(),
    )
    .await;
    response
        .messages()
        .pop()
        .unwrap_or_else(|| serde_json::json!({"http": response.status, "body": response.body}))
}

/// Starts `tool` with `arguments` as a task (revision 2025-11-25's `task`): its id, or the
/// answer that refused it.
async fn start_task(
    addr: SocketAddr,
    tool: &str,
    arguments: serde_json::Value,
) -> Result<String, serde_json::Value> {
    let params = serde_json::json!({"name": tool, "arguments": arguments, "task": {}});
    let answer = rpc_2025(addr, "tools/call", params).await;
    match answer["result"]["task"]["taskId"].as_str() {
        Some(id) => Ok(id.to_owned()),
        None => Err(answer),
    }
}

/// Whether `answer` is nginx's 502: the request was in flight on a replica that died.
fn lost_in_flight(answer: &serde_json::Value) -> bool {
    answer["http"] == 502
}

/// A request that only reads (`tasks/get`, `tasks/result`), sent again when it was in flight
/// on a replica that died, as a client retries a poll.
async fn read_2025(addr: SocketAddr, method: &str, params: serde_json::Value) -> serde_json::Value {
    for _ in 0..3 {
        let answer = rpc_2025(addr, method, params.clone()).await;
        if !lost_in_flight(&answer) {
            return answer;
        }
    }
    rpc_2025(addr, method, params).await
}

/// Polls `tasks/get` of `task_id` until it ends (within `within`): the task as it ended.
async fn settle_task(addr: SocketAddr, task_id: &str, within: Duration) -> serde_json::Value {
    let until = Instant::now() + within;
    loop {
        let answer = read_2025(addr, "tasks/get", serde_json::json!({"taskId": task_id})).await;
        let status = answer["result"]["status"].as_str().unwrap_or_default();
        if matches!(status, "completed" | "failed" | "cancelled") {
            return answer["result"].clone();
        }
        assert!(
            status == "working" && Instant::now() < until,
            "task {task_id}: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A tool call answered inline: its result, failing on an error.
async fn call_2025(
    addr: SocketAddr,
    tool: &str,
    arguments: serde_json::Value,
) -> serde_json::Value {
    let answer = rpc_2025(
        addr,
        "tools/call",
        serde_json::json!({"name": tool, "arguments": arguments}),
    )
    .await;
    assert!(
        answer["result"].is_object() && answer["result"]["isError"] != true,
        "{tool}: {answer}"
    );
    answer["result"].clone()
}

/// The backend's count of cancelled calls, from the last `observed started=N cancelled=M` line
/// e2e-server printed to `SCALE_OUT_BACKEND_LOG`.
fn backend_cancelled() -> usize {
    let log = std::env::var("SCALE_OUT_BACKEND_LOG").expect("SCALE_OUT_BACKEND_LOG");
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .rev()
        .find_map(|line| line.split_once("cancelled=")?.1.trim().parse().ok())
        .unwrap_or(0)
}

/// Streaming tasks through the load balancer (`InventoryService_ListItems`, five items over a
/// second, collected into a task).
const STREAMING_TASKS: usize = 270;
/// Long-running-operation tasks (`TaskService_ArchiveTasks`), one after another.
const OPERATION_TASKS: usize = 30;
/// Streaming tasks running at once.
const CONCURRENT_TASKS: usize = 24;

/// Three gateway replicas, stateless, on one Redis task store and one task key, behind nginx
/// round robin, in front of two backends (e2e-server's inventory, the demo's task tracker with
/// its long-running operations). `SCALE_OUT_REPLICAS` is `name=addr,...`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by scripts/scale-out.sh"]
async fn tasks_survive_a_replica_kill_and_a_store_restart() {
    let balancer = Balancer::from_env();
    let lb = balancer.addr;
    let replicas: BTreeMap<String, SocketAddr> = std::env::var("SCALE_OUT_REPLICAS")
        .expect("SCALE_OUT_REPLICAS")
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, addr)| (name.to_owned(), addr.parse().expect("a replica address")))
        .collect();
    assert_eq!(replicas.len(), 3, "{replicas:?}");
    let mut control = Control::from_env();
    let slow = serde_json::json!({"namePrefix": "slow"});
    let direct = call_2025(lb, "InventoryService_ListItems", slow.clone()).await;

    // tasks/cancel sent to another replica than the one running the task.
    let (runner, other) = (replicas["g1"], replicas["g3"]);
    let cancelled_before = backend_cancelled();
    let watch = start_task(
        runner,
        "InventoryService_ListItems",
        serde_json::json!({"namePrefix": "watch"}),
    )
    .await
    .expect("a watch task");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answer = rpc_2025(other, "tasks/cancel", serde_json::json!({"taskId": watch})).await;
    assert!(
        answer["result"].is_object(),
        "tasks/cancel on another replica: {answer}"
    );
    let until = Instant::now() + Duration::from_secs(5);
    while backend_cancelled() <= cancelled_before {
        assert!(Instant::now() < until, "the backend saw no cancelled call");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ended = settle_task(other, &watch, Duration::from_secs(10)).await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
    eprintln!("scale-out tasks: a cancel sent to g3 stopped g1's gRPC call at the backend");

    // Long-running operations, one after another: each archives the task made just before.
    // The tracker's sample tasks in that state go first (archiving fails when none is there).
    let _ = rpc_2025(
        lb,
        "tools/call",
        serde_json::json!({"name": "TaskService_ArchiveTasks", "arguments": {"state": "STATE_DONE", "perTask": "0.01s"}}),
    )
    .await;
    // A start lost in flight at the kill (nginx's 502: the client cannot know whether the
    // replica made the task) is counted, and the tracker archived clean before the next.
    let operations = tokio::spawn(async move {
        let (mut ended, mut lost) = (Vec::new(), Vec::new());
        for n in 0..OPERATION_TASKS {
            let title = format!("archive me {n}");
            let made = rpc_2025(
                lb,
                "tools/call",
                serde_json::json!({"name": "TaskService_CreateTask",
                    "arguments": {"task": {"title": title, "state": "STATE_DONE"}}}),
            )
            .await;
            let started = now_ms();
            let id = if lost_in_flight(&made) {
                Err(made.clone())
            } else {
                assert!(made["result"]["isError"] != true, "CreateTask: {made}");
                start_task(
                    lb,
                    "TaskService_ArchiveTasks",
                    serde_json::json!({"state": "STATE_DONE", "perTask": "0.4s"}),
                )
                .await
            };
            let id = match id {
                Ok(id) => id,
                Err(answer) if lost_in_flight(&answer) => {
                    lost.push(started);
                    let _ = rpc_2025(
                        lb,
                        "tools/call",
                        serde_json::json!({"name": "TaskService_ArchiveTasks",
                            "arguments": {"state": "STATE_DONE", "perTask": "0.01s"}}),
                    )
                    .await;
                    continue;
                }
                Err(answer) => panic!("operation task {n}: {answer}"),
            };
            let task = settle_task(lb, &id, Duration::from_secs(60)).await;
            assert_eq!(task["status"], "completed", "operation task {n}: {task}");
            let result = read_2025(lb, "tasks/result", serde_json::json!({"taskId": id})).await;
            assert_eq!(
                result["result"]["structuredContent"]["tasks"],
                serde_json::json!([made["result"]["structuredContent"]]),
                "operation task {n}: {result}"
            );
            ended.push(id);
        }
        (ended, lost)
    });

    // Streaming tasks, CONCURRENT_TASKS at a time; the kill after a third have started.
    let semaphore = std::sync::Arc::new(tokio::sync::Semaphore::new(CONCURRENT_TASKS));
    let mut running = Vec::new();
    for n in 0..STREAMING_TASKS {
        if n == STREAMING_TASKS / 3 {
            control.order("g2").await;
        }
        let permit = std::sync::Arc::clone(&semaphore)
            .acquire_owned()
            .await
            .expect("a permit");
        let (slow, direct) = (slow.clone(), direct.clone());
        running.push(tokio::spawn(async move {
            let _permit = permit;
            let started = now_ms();
            let id = match start_task(lb, "InventoryService_ListItems", slow).await {
                Ok(id) => id,
                // Its start was in flight on the replica killed: no task to follow.
                Err(answer) if lost_in_flight(&answer) => return (started, now_ms(), answer),
                Err(answer) => panic!("streaming task {n}: {answer}"),
            };
            let task = settle_task(lb, &id, Duration::from_secs(60)).await;
            if task["status"] == "completed" {
                let result = read_2025(lb, "tasks/result", serde_json::json!({"taskId": id})).await;
                assert_eq!(
                    result["result"]["structuredContent"], direct["structuredContent"],
                    "streaming task {n}: {result}"
                );
            }
            (started, now_ms(), task)
        }));
    }
    let killed = balancer.killed_at(Duration::from_secs(5)).await;
    let mut completed = 0;
    let mut failed = Vec::new();
    let mut lost = 0;
    for task in running {
        let (started, ended, task) = task.await.expect("a streaming task");
        if task["status"] == "completed" {
            completed += 1;
            continue;
        }
        if lost_in_flight(&task) {
            assert!(started <= killed, "a start after the kill was lost: {task}");
            lost += 1;
            continue;
        }
        assert_eq!(task["status"], "failed", "{task}");
        let message = task["statusMessage"].as_str().unwrap_or_default();
        assert!(
            message.contains("the replica running this task (g2) stopped"),
            "a task failed for another reason: {task}"
        );
        assert!(
            started <= killed,
            "a task started after the kill failed: {task}"
        );
        failed.push(ended - killed);
    }
    let (operations, operations_lost) = operations.await.expect("the operation tasks");
    eprintln!(
        "scale-out tasks: {STREAMING_TASKS} streaming tasks, {completed} completed equal to the direct call, \
         {} failed with g2 (ended {:?} ms after the kill), {lost} lost in flight at the kill; \
         {} long-running-operation tasks completed equal to what they archived, {} lost in flight",
        failed.len(),
        failed,
        operations.len(),
        operations_lost.len()
    );
    assert!(operations_lost.iter().all(|started| *started <= killed));
    assert!(
        operations_lost.len() <= 1,
        "more than one operation start lost at one kill"
    );
    assert_eq!(operations.len() + operations_lost.len(), OPERATION_TASKS);
    assert!(lost <= CONCURRENT_TASKS, "{lost} starts lost");
    assert!(
        !failed.is_empty(),
        "the kill caught no task in flight on g2: nothing was tested"
    );
    assert!(
        failed.iter().all(|after| *after < 25_000),
        "a task of the killed replica failed later than the lease allows"
    );

    // The store goes down: plain calls go on, task calls fail naming the store; it comes back.
    control.order("redis-stop").await;
    call_2025(lb, "InventoryService_ListItems", slow.clone()).await;
    let refused = start_task(lb, "InventoryService_ListItems", slow.clone())
        .await
        .expect_err("a task with the store down");
    let message = refused.to_string();
    assert!(message.contains("task store (redis://"), "{refused}");
    control.order("redis-start").await;
    let until = Instant::now() + Duration::from_secs(20);
    let id = loop {
        match start_task(lb, "InventoryService_ListItems", slow.clone()).await {
            Ok(id) => break id,
            Err(answer) if Instant::now() < until => {
                eprintln!("not back yet: {answer}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(answer) => panic!("the store did not come back: {answer}"),
        }
    };
    let task = settle_task(lb, &id, Duration::from_secs(30)).await;
    assert_eq!(task["status"], "completed", "{task}");
    let mut counted = 0.0;
    for (name, addr) in &replicas {
        if name == "g2" {
            continue;
        }
        let metrics = support::get(*addr, "/metrics").await;
        assert_eq!(metrics.status, 200, "/metrics of {name}: {}", metrics.body);
        counted += metrics
            .body
            .lines()
            .filter(|line| line.starts_with("mcp_task_store_errors_total"))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>();
    }
    assert!(counted > 0.0, "no replica counted a task store error");
    eprintln!(
        "scale-out tasks: with Redis down plain calls worked and tasks were refused naming it; {counted} store errors counted; tasks work again after"
    );
}
