//! Streaming RPCs end to end: a server stream's bound, progress, deadline and mid-stream
//! error, and client and bidirectional streams.

use std::time::{Duration, Instant};

use serde_json::json;

use super::client_with;
use crate::common::{
    TestResult, call_err, call_err_containing, call_ok, connect, grpc_client, grpc_server,
};

#[tokio::test]
async fn server_streaming_truncates_at_the_bound_and_reports_progress() -> TestResult {
    let (server, _backend) = grpc_server().await?;
    let (client, recorder) = connect(server).await?;
    // LIST_ITEMS sets max_messages: Some(5).
    let result = call_ok(&client, "ItemService_ListItems", json!({"count": 10})).await?;
    let messages = result["messages"].as_array().ok_or("messages")?;
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[4], json!({"id": "5", "name": "item 5"}));
    assert_eq!(result["truncated"], json!(true));

    // rmcp clients send a progressToken with every request; notifications precede the result.
    let deadline = Instant::now() + Duration::from_secs(2);
    let progress = loop {
        let progress: Vec<f64> = recorder
            .progress
            .lock()
            .map_err(|_| "poisoned")?
            .iter()
            .map(|p| p.progress)
            .collect();
        if progress.len() >= 5 || Instant::now() > deadline {
            break progress;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0, 5.0]);

    let result = call_ok(&client, "ItemService_ListItems", json!({"count": 2})).await?;
    assert_eq!(
        result,
        json!({"messages": [{"id": "1", "name": "item 1"}, {"id": "2", "name": "item 2"}]})
    );
    Ok(())
}

#[tokio::test]
async fn an_error_mid_stream_reports_the_status_and_the_messages_so_far() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let text = call_err(
        &client,
        "ItemService_ListItems",
        json!({"count": 4, "fail_after": 2}),
    )
    .await?;
    assert_eq!(
        text,
        "gRPC error ABORTED: stream failed after 2 items\n\nMessages received before the error (2):\n[{\"id\":\"1\",\"name\":\"item 1\"},{\"id\":\"2\",\"name\":\"item 2\"}]"
    );
    Ok(())
}

#[tokio::test]
async fn server_streaming_stops_at_the_deadline_with_what_it_has() -> TestResult {
    let (client, _backend) = client_with(|t| t.with_timeout(Duration::from_millis(400))).await?;
    let result = call_ok(
        &client,
        "ItemService_ListItems",
        json!({"count": 4, "delay_ms": 150}),
    )
    .await?;
    let received = result["messages"].as_array().map_or(0, Vec::len);
    assert!((1..4).contains(&received), "{result}");
    assert_eq!(result["truncated"], json!(true));
    Ok(())
}

/// A server that ends the stream with an error of its own at the deadline we sent (etcd's
/// watch: UNKNOWN "context deadline exceeded"), a little before our timer, still gives the
/// batch with `truncated`, never an error.
#[tokio::test]
async fn a_stream_the_server_ends_at_the_deadline_is_truncated() -> TestResult {
    let (client, _backend) = client_with(|t| t.with_timeout(Duration::from_millis(300))).await?;
    for (count, early_ms) in [(2, 1), (2, 20), (0, 1), (0, 20)] {
        let result = call_ok(
            &client,
            "ItemService_ListItems",
            json!({"count": count, "fail_after": -early_ms}),
        )
        .await?;
        assert_eq!(
            result["messages"].as_array().map(Vec::len),
            Some(count as usize),
            "{result}"
        );
        assert_eq!(result["truncated"], json!(true), "{result}");
    }
    Ok(())
}

/// A stream with no message by the deadline is an empty batch, not an error.
#[tokio::test]
async fn a_stream_with_nothing_by_the_deadline_is_an_empty_batch() -> TestResult {
    let (client, _backend) = client_with(|t| t.with_timeout(Duration::from_millis(300))).await?;
    let result = call_ok(
        &client,
        "ItemService_ListItems",
        json!({"count": 1, "delay_ms": 5000}),
    )
    .await?;
    assert_eq!(result, json!({"messages": [], "truncated": true}));
    Ok(())
}

#[tokio::test]
async fn client_streaming_and_bidi_send_every_message() -> TestResult {
    let (client, _backend) = grpc_client().await?;
    let summary = call_ok(
        &client,
        "ItemService_UploadItems",
        json!({"messages": [{"id": 1}, {"id": "2", "name": "two"}, {"id": "9007199254740993"}]}),
    )
    .await?;
    assert_eq!(
        summary,
        json!({"count": 3, "ids": ["1", "2", "9007199254740993"]})
    );
    call_err_containing(
        &client,
        "ItemService_UploadItems",
        json!({"messages": [{"id": "1"}, {"id": "x"}]}),
        &["- $.messages[1].id: \"x\" is not an integer; int64 takes a decimal string"],
    )
    .await?;

    let chat = call_ok(
        &client,
        "ItemService_Chat",
        json!({"messages": [{"text": "hi"}, {"text": "there"}]}),
    )
    .await?;
    assert_eq!(
        chat,
        json!({"messages": [{"text": "echo: hi"}, {"text": "echo: there"}]})
    );
    Ok(())
}
