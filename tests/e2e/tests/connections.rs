//! A hostile client against the connections of `serve_http` (`e2e-server`, a real process, on
//! loopback), with a small cap and short timeouts set by its flags:
//!
//! - sockets that send nothing, or their headers a byte at a time, are closed once the header
//!   timeout has passed; a body sent a byte at a time is answered 408; a keep-alive connection
//!   is closed after the idle timeout; a tool call longer than every timeout still completes;
//! - a flood of idle connections over the cap holds no more than the cap, `/healthz` answers
//!   while it lasts (as the timeouts free slots) and after, and a tool call works afterwards;
//! - with the process's limit on open files lower than the connections a client opens,
//!   `accept` fails with `EMFILE`: the server waits and goes on, instead of exiting.
//!
//! `CONNECTIONS_FLOOD=1000 CONNECTIONS_CAP=768` floods more (printed figures: open sockets
//! and RSS of the server, how long sockets stayed open).

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const HEADER_READ: Duration = Duration::from_millis(1000);
const BODY_READ: Duration = Duration::from_millis(1000);
const IDLE: Duration = Duration::from_millis(2000);
/// Scheduling on a loaded two-core machine: how much later than its bound a close may come.
const SLACK: Duration = Duration::from_millis(1500);

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Reads `stream` to its end: what came, and how long after `since` the server closed it.
async fn until_closed(
    mut stream: impl tokio::io::AsyncRead + Unpin,
    since: Instant,
) -> (Vec<u8>, Duration) {
    let mut received = Vec::new();
    let mut buf = [0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server never closed the connection");
    (received, since.elapsed())
}

/// Writes `head`, then `trickle` one byte every 200 ms (never finishing); the time the
/// server closed the connection, and what it answered.
async fn trickle(addr: SocketAddr, head: String, trickle: &'static [u8]) -> (Vec<u8>, Duration) {
    let opened = Instant::now();
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (read, mut write) = stream.into_split();
    let writer = tokio::spawn(async move {
        write.write_all(head.as_bytes()).await?;
        for byte in trickle.iter().cycle() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            write.write_all(&[*byte]).await?;
        }
        Ok::<_, std::io::Error>(())
    });
    let closed = until_closed(read, opened).await;
    writer.abort();
    closed
}

fn within(what: &str, elapsed: Duration, bound: Duration) {
    assert!(
        elapsed + Duration::from_millis(50) >= bound && elapsed <= bound + SLACK,
        "{what}: closed after {elapsed:?}, expected {bound:?}"
    );
}

/// A tool call on a fresh connection answers.
async fn a_call_works(addr: SocketAddr) {
    let call = support::tool_call(9, "InventoryService_GetItem", json!({"id": "2"}));
    let response = support::post(addr, &[], call.to_string().as_bytes()).await;
    assert!(response.body.contains("item-2"), "{response:?}");
}

/// `GET /healthz` on a fresh connection: how long it took, if it answered 200 within `bound`.
async fn healthz_within(addr: SocketAddr, bound: Duration) -> Option<Duration> {
    let asked = Instant::now();
    let response = tokio::time::timeout(bound, support::get(addr, "/healthz"))
        .await
        .ok()?;
    (response.status == 200).then(|| asked.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_idle_connections_are_closed_and_a_flood_is_capped() {
    let cap = env_or("CONNECTIONS_CAP", 64);
    let flood = env_or("CONNECTIONS_FLOOD", 300);
    let server = support::spawn_http(&[
        "--stateless",
        "--max-connections",
        &cap.to_string(),
        "--header-read-timeout-ms",
        &HEADER_READ.as_millis().to_string(),
        "--body-read-timeout-ms",
        &BODY_READ.as_millis().to_string(),
        "--connection-idle-timeout-ms",
        &IDLE.as_millis().to_string(),
    ])
    .await;
    let addr = server.addr;
    let pid = server.child.id().expect("running");
    a_call_works(addr).await;
    let sockets_at_rest = support::open_sockets(pid);
    let rss_at_rest = support::rss_kib(pid);

    // Under the cap: each kind of slow client, and a call longer than every timeout.
    let mut slow = tokio::task::JoinSet::new();
    for _ in 0..10 {
        slow.spawn(async move {
            let opened = Instant::now();
            let stream = TcpStream::connect(addr).await.expect("connect");
            let (_, closed) = until_closed(stream, opened).await;
            ("sends nothing", closed, HEADER_READ)
        });
        slow.spawn(async move {
            let head = format!(
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Slow: ",
                addr.port()
            );
            let (_, closed) = trickle(addr, head, b"abc").await;
            ("headers a byte every 200 ms", closed, HEADER_READ)
        });
    }
    for _ in 0..5 {
        slow.spawn(async move {
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{",
                addr.port()
            );
            let (answer, closed) = trickle(addr, head, b" ").await;
            let answer = support::parse_response(&answer);
            assert_eq!(answer.status, 408, "{answer:?}");
            assert_eq!(answer.header("connection"), Some("close"), "{answer:?}");
            ("a body a byte every 200 ms", closed, BODY_READ)
        });
        slow.spawn(async move {
            // One request on a kept-alive connection, then nothing: the idle timeout.
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            let request = format!(
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
                addr.port()
            );
            stream.write_all(request.as_bytes()).await.expect("write");
            let mut buf = [0; 256];
            let n = stream.read(&mut buf).await.expect("an answer");
            assert!(
                buf[..n].starts_with(b"HTTP/1.1 200"),
                "{:?}",
                String::from_utf8_lossy(&buf[..n])
            );
            let (_, closed) = until_closed(stream, Instant::now()).await;
            ("kept alive, idle", closed, IDLE)
        });
    }
    let long_call = tokio::spawn(async move {
        let call = support::tool_call(1, "WellKnownService_Sleep", json!({"value": "3s"}));
        let started = Instant::now();
        let response = support::post(addr, &[], call.to_string().as_bytes()).await;
        (response, started.elapsed())
    });
    let mut header_closes = Vec::new();
    while let Some(closed) = slow.join_next().await {
        let (what, elapsed, bound) = closed.expect("a slow client");
        within(what, elapsed, bound);
        if bound == HEADER_READ {
            header_closes.push(elapsed);
        }
    }
    let (response, took) = long_call.await.expect("the long call");
    assert_eq!(response.status, 200, "{response:?}");
    assert!(
        took >= Duration::from_secs(3) && !response.body.contains("isError\":true"),
        "{took:?} {response:?}"
    );
    header_closes.sort();
    eprintln!(
        "slow or silent headers: 20 sockets closed after {:?} to {:?} (header timeout {HEADER_READ:?})",
        header_closes[0],
        header_closes[header_closes.len() - 1]
    );

    // Over the cap: idle sockets, never closed by the client. The server's sockets and RSS
    // are sampled from the first connection to the answer of /healthz.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let sampler = tokio::spawn(async move {
        let mut stopped = stopped;
        let (mut sockets, mut rss) = (0, 0);
        while let Err(tokio::sync::oneshot::error::TryRecvError::Empty) = stopped.try_recv() {
            sockets = support::open_sockets(pid).max(sockets);
            rss = support::rss_kib(pid).max(rss);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (sockets, rss)
    });
    let flooded = Instant::now();
    let mut idle = Vec::with_capacity(flood);
    for _ in 0..flood {
        idle.push(
            TcpStream::connect(addr)
                .await
                .expect("connect (the backlog takes it)"),
        );
    }
    let opened = flooded.elapsed();
    let answered = healthz_within(addr, Duration::from_secs(30))
        .await
        .expect("/healthz answers during the flood");
    let _ = stop.send(());
    let (most_sockets, most_rss) = sampler.await.expect("the sampler");
    let connections = most_sockets.saturating_sub(sockets_at_rest);
    assert!(
        connections <= cap,
        "{connections} connections open, over the cap of {cap}"
    );
    // The server closes every flood socket itself (a header timeout each), the client never.
    let mut closes = Vec::with_capacity(flood);
    for stream in idle {
        closes.push(until_closed(stream, flooded).await.1);
    }
    let last_closed = closes.iter().max().copied().unwrap_or_default();
    let sockets_after = support::open_sockets(pid);
    let rss_after = support::rss_kib(pid);
    eprintln!(
        "flood of {flood} idle connections, cap {cap}: at most {connections} connections open \
         (sockets {most_sockets}, {sockets_at_rest} at rest, {sockets_after} after); RSS \
         {rss_at_rest} KiB at rest, at most {most_rss} KiB during, {rss_after} KiB after; \
         flood opened in {opened:?}, then /healthz answered after {answered:?}; the last \
         flood socket closed {last_closed:?} after the flood began"
    );
    assert!(
        sockets_after <= sockets_at_rest + 1,
        "{sockets_after} sockets left"
    );
    assert!(
        healthz_within(addr, Duration::from_secs(2)).await.is_some(),
        "/healthz answers after the flood"
    );
    a_call_works(addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_descriptors_does_not_stop_the_server() {
    // 64 descriptors, and a cap above them: `accept` runs out (EMFILE).
    let mut server = support::spawn_http_with_open_files(
        64,
        &[
            "--stateless",
            "--max-connections",
            "1000",
            "--header-read-timeout-ms",
            "60000",
            "--connection-idle-timeout-ms",
            "60000",
        ],
    )
    .await;
    let addr = server.addr;
    let pid = server.child.id().expect("running");
    assert!(healthz_within(addr, Duration::from_secs(5)).await.is_some());
    let mut flood = Vec::new();
    for _ in 0..150 {
        // Refused only once the server is gone, which the check below reports.
        let Ok(stream) = TcpStream::connect(addr).await else {
            break;
        };
        flood.push(stream);
    }
    // Every descriptor taken: the server is still there, still accepting once some free up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while support::open_sockets(pid) < 55 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sockets = support::open_sockets(pid);
    // Still listening (a connection waits in the backlog), and not exiting.
    let listening = TcpStream::connect(addr).await.is_ok();
    assert!(
        listening && server.child.try_wait().expect("wait").is_none(),
        "the server stopped serving when its descriptors ran out ({sockets} sockets)"
    );
    drop(flood);
    let answered = healthz_within(addr, Duration::from_secs(15))
        .await
        .expect("/healthz answers once the flood is gone");
    eprintln!(
        "64 descriptors, 150 connections: {sockets} sockets held at the worst; /healthz \
         answered {answered:?} after the flood closed"
    );
    assert!(server.child.try_wait().expect("wait").is_none());
    a_call_works(addr).await;
}
