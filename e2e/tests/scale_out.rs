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
