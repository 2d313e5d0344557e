//! The client side of `scripts/scale-out.sh` (ignored in `cargo test`: it needs the replicas
//! and nginx the script starts). MCP clients call a tool through the load balancer at
//! `SCALE_OUT_URL` for `SCALE_OUT_SECONDS`; the script kills one replica meanwhile and writes
//! the time (Unix milliseconds) to `SCALE_OUT_KILL_FILE`. Only calls in flight at the kill may
//! fail; every call started after it must succeed.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by scripts/scale-out.sh"]
async fn calls_through_the_load_balancer_survive_a_replica_kill() {
    let url = std::env::var("SCALE_OUT_URL").expect("SCALE_OUT_URL");
    let kill_file = std::env::var("SCALE_OUT_KILL_FILE").expect("SCALE_OUT_KILL_FILE");
    let seconds: u64 = test_kit::env_or("SCALE_OUT_SECONDS", 10);
    let clients = 8;
    let until = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let url = url.clone();
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
    let killed: u128 = std::fs::read_to_string(&kill_file)
        .expect("the script wrote the kill time")
        .trim()
        .parse()
        .expect("milliseconds");
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
