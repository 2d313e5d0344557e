//! Live descriptors: the gateway binary, from a config file of several backends, loads them
//! again on an interval and on SIGHUP, and a client with a session sees what changed as
//! `notifications/tools/list_changed` while the other backends keep answering.

mod support;

use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use support::{Changes, GATEWAY, echo, metrics, stdio_logging_to, temp_dir, tool_names};
use test_kit::{free_port, metric_sample};

/// Live descriptors: a backend down at start gets its tools once it answers (the interval),
/// and a descriptor-set file that changes is read again on SIGHUP; each time, the connected
/// client is told, and the other backends' calls keep working.
#[tokio::test]
async fn backends_are_loaded_again_on_an_interval_and_on_sighup() {
    use prost::Message as _;

    let up = e2e::start_backend().await.expect("backend");
    let later = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let dir = temp_dir("reload");
    let set_path = dir.join("testdata.binpb");
    std::fs::write(&set_path, e2e::TESTDATA_DESCRIPTOR_SET).expect("set");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            r#"[[backend]]
name = "up"
target = "http://{up}"
prefix = "a"
services = ["testdata.scalars.ScalarService"]

[[backend]]
name = "later"
target = "http://{later}"
prefix = "b"
services = ["testdata.scalars.ScalarService"]
connect_timeout = "300ms"

[[backend]]
name = "file"
target = "http://{up}"
descriptor_set = "testdata.binpb"
prefix = "c"
services = ["testdata.scalars.ScalarService"]
"#,
            up = up.addr
        ),
    )
    .expect("config");
    let metrics_port = free_port();
    let start = |interval: &str| {
        let mut command = tokio::process::Command::new(GATEWAY);
        command
            .arg("--config")
            .arg(&config)
            .args(["--reload-interval", interval]);
        if interval == "300ms" {
            command.args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
        }
        stdio_logging_to(command, &dir.join(format!("gateway-{interval}.log")))
    };

    // On an interval: `later` starts answering after the gateway did.
    let changes = Changes::default();
    let client = changes
        .clone()
        .serve(start("300ms"))
        .await
        .expect("handshake");
    assert_eq!(
        tool_names(&client).await,
        ["a_ScalarService_Echo", "c_ScalarService_Echo"]
    );
    let up_of =
        |name: &str| format!("mcp_backend_up{{backend=\"{name}\",target=\"http://{later}\"}}");
    let scraped = metrics(metrics_port);
    assert!(
        scraped.contains(&format!("{} 0\n", up_of("later"))),
        "{scraped}"
    );
    let _later = e2e::start_backend_at(later)
        .await
        .expect("the later backend");
    assert!(
        changes.wait_for(1).await,
        "no list_changed after the backend came up"
    );
    let scraped = metrics(metrics_port);
    assert!(
        scraped.contains(&format!("{} 1\n", up_of("later"))),
        "{scraped}"
    );
    assert!(
        scraped.contains("mcp_gateway_reloads_total{outcome=\"changed\"} 1\n"),
        "{scraped}"
    );
    assert_eq!(
        tool_names(&client).await,
        [
            "a_ScalarService_Echo",
            "b_ScalarService_Echo",
            "c_ScalarService_Echo"
        ]
    );
    assert_eq!(echo(&client, "b_ScalarService_Echo", "late").await, "late");
    // The reloads after it find every backend as it was: counted, and nobody is told.
    let unchanged =
        |scraped: &str| metric_sample(scraped, "mcp_gateway_reloads_total{outcome=\"unchanged\"}");
    let mut scraped = metrics(metrics_port);
    for _ in 0..50 {
        if unchanged(&scraped).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        scraped = metrics(metrics_port);
    }
    assert!(
        unchanged(&scraped).is_some_and(|count| count >= 1.0),
        "{scraped}"
    );
    assert!(
        scraped.contains("mcp_gateway_reloads_total{outcome=\"changed\"} 1\n"),
        "{scraped}"
    );
    assert_eq!(changes.count(), 1, "told of a change once");
    client.cancel().await.expect("close");

    // On SIGHUP (the interval is an hour): the file's ScalarService/Echo becomes EchoAgain.
    let changes = Changes::default();
    let transport = start("60m");
    let pid = transport.id().expect("the gateway's pid");
    let client = changes.clone().serve(transport).await.expect("handshake");
    assert_eq!(tool_names(&client).await.len(), 3);
    let mut set =
        prost_types::FileDescriptorSet::decode(e2e::TESTDATA_DESCRIPTOR_SET).expect("set");
    let method = set
        .file
        .iter_mut()
        .flat_map(|file| file.service.iter_mut())
        .filter(|service| service.name() == "ScalarService")
        .flat_map(|service| service.method.iter_mut())
        .find(|method| method.name() == "Echo")
        .expect("ScalarService.Echo");
    method.name = Some("EchoAgain".to_owned());
    std::fs::write(&set_path, set.encode_to_vec()).expect("set");
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    assert!(changes.wait_for(1).await, "no list_changed after SIGHUP");
    assert_eq!(
        tool_names(&client).await,
        [
            "a_ScalarService_Echo",
            "b_ScalarService_Echo",
            "c_ScalarService_EchoAgain"
        ]
    );
    // The others are unchanged and answer.
    assert_eq!(
        echo(&client, "a_ScalarService_Echo", "still").await,
        "still"
    );
    client.cancel().await.expect("close");
    std::fs::remove_dir_all(&dir).ok();
}

/// A backend killed and started again with other descriptors: while it is down its tools stay
/// listed and answer an error naming the cause, the other backend answers every call, and once it is
/// back the client is told that the tools changed.
#[tokio::test]
async fn a_backend_killed_and_restarted_with_other_services_is_seen_as_a_change() {
    let steady = e2e::start_backend().await.expect("steady backend");
    let moving_addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()));
    let both = ["testdata.scalars.ScalarService", "testdata.maps.MapService"];
    let moving = e2e::start_backend_reflecting(moving_addr, &both)
        .await
        .expect("moving backend");
    let dir = temp_dir("restart");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            r#"[[backend]]
name = "steady"
target = "http://{steady}"
prefix = "a"
services = ["testdata.scalars.ScalarService"]

[[backend]]
name = "moving"
target = "http://{moving_addr}"
prefix = "b"
connect_timeout = "300ms"
"#,
            steady = steady.addr
        ),
    )
    .expect("config");
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .arg("--config")
        .arg(&config)
        .args(["--reload-interval", "200ms"]);
    let transport = stdio_logging_to(command, &dir.join("gateway.log"));
    let changes = Changes::default();
    let client = changes.clone().serve(transport).await.expect("handshake");
    let before = tool_names(&client).await;
    assert!(
        before.contains(&"a_ScalarService_Echo".to_owned()),
        "{before:?}"
    );
    assert!(
        before.contains(&"b_ScalarService_Echo".to_owned()),
        "{before:?}"
    );
    assert!(
        before.iter().any(|name| name.starts_with("b_MapService_")),
        "{before:?}"
    );
    assert_eq!(echo(&client, "b_ScalarService_Echo", "up").await, "up");

    // Killed: several reloads pass; its tools stay and say what is wrong; the other answers.
    moving.stop();
    let mut down = None;
    for attempt in 0..30 {
        assert_eq!(
            echo(&client, "a_ScalarService_Echo", &format!("a{attempt}")).await,
            format!("a{attempt}")
        );
        let mut params = CallToolRequestParams::new("b_ScalarService_Echo");
        params.arguments = json!({"f_string": "x"}).as_object().cloned();
        let answer = client.call_tool(params).await.expect("call");
        if answer.is_error == Some(true) {
            down = Some(format!("{:?}", answer.content));
            if attempt >= 5 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let down = down.expect("calls of the killed backend fail");
    // The cause, for the model; the address stays in the gateway's log.
    assert!(
        down.contains("UNAVAILABLE") && down.contains("connection was refused"),
        "{down}"
    );
    assert!(!down.contains(&moving_addr.to_string()), "{down}");
    assert_eq!(
        tool_names(&client).await,
        before,
        "a backend down keeps its tools"
    );
    assert_eq!(changes.count(), 0, "no change while it was down");

    // Back, reflecting one service fewer: the client is told, and the tools follow.
    let _moving = e2e::start_backend_reflecting(moving_addr, &both[..1])
        .await
        .expect("restart");
    assert!(
        changes.wait_for(1).await,
        "no list_changed after the restart"
    );
    let after = tool_names(&client).await;
    assert!(
        !after.iter().any(|name| name.starts_with("b_MapService_")),
        "{after:?}"
    );
    assert!(
        after.contains(&"b_ScalarService_Echo".to_owned()),
        "{after:?}"
    );
    assert_eq!(echo(&client, "b_ScalarService_Echo", "back").await, "back");
    assert_eq!(
        echo(&client, "a_ScalarService_Echo", "still").await,
        "still"
    );
    client.cancel().await.expect("close");
    std::fs::remove_dir_all(&dir).ok();
}
