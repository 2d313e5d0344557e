//! Each tool call runs in a `mcp.tool_call` span with tool, rpc, duration and gRPC code.

use test_kit::demo as common;

use std::{
    collections::BTreeMap,
    fmt,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use common::{Backend, TestResult, call_err, call_ok, connect, pb};
use serde_json::json;
use tonic_mcp::McpServer;
use tracing::{
    Event, Metadata, Subscriber,
    field::{Field, Visit},
    span::{Attributes, Id, Record},
};

type Fields = BTreeMap<String, String>;

/// Records the fields of every `mcp.tool_call` span, and every event's text.
#[derive(Default, Clone)]
struct Capture {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<BTreeMap<u64, Fields>>>,
    events: Arc<Mutex<Vec<String>>>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        if attributes.metadata().name() == "mcp.tool_call" {
            let mut fields = Fields::new();
            attributes.record(&mut Collect(&mut fields));
            if let Ok(mut spans) = self.spans.lock() {
                spans.insert(id, fields);
            }
        }
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Ok(mut spans) = self.spans.lock()
            && let Some(fields) = spans.get_mut(&span.into_u64())
        {
            values.record(&mut Collect(fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut Collect(&mut fields));
        if let Ok(mut events) = self.events.lock() {
            events.push(format!("{fields:?}"));
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[tokio::test]
async fn tool_calls_are_traced_with_tool_rpc_duration_and_code() -> TestResult {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());

    let tools = pb::item_service_mcp::from_service(Backend::default())?;
    let server = McpServer::builder("demo", "0.1.0")
        .on_call(tonic_mcp::forward_headers(["authorization"]))
        .tool_set(tools)?
        .build();
    let (client, _) = connect(server).await?;
    call_ok(
        &client,
        "ItemService_GetItem",
        json!({"id": "1", "note": "secret-note"}),
    )
    .await?;
    call_err(&client, "ItemService_GetItem", json!({"id": "404"})).await?;
    call_err(&client, "ItemService_GetItem", json!({"nope": 1})).await?;

    let spans: Vec<Fields> = capture
        .spans
        .lock()
        .map_err(|_| "poisoned")?
        .values()
        .cloned()
        .collect();
    assert_eq!(spans.len(), 3, "{spans:?}");
    for span in &spans {
        assert_eq!(
            span.get("tool").map(String::as_str),
            Some("ItemService_GetItem")
        );
        assert_eq!(
            span.get("rpc").map(String::as_str),
            Some("/demo.v1.ItemService/GetItem")
        );
        assert!(span.contains_key("duration_ms"), "{span:?}");
    }
    let codes: Vec<&str> = spans
        .iter()
        .filter_map(|s| s.get("grpc_code").map(String::as_str))
        .collect();
    // Invalid arguments never reach the backend.
    assert_eq!(codes, ["OK", "NOT_FOUND", "NONE"]);

    // Our telemetry never carries argument values.
    let spans_text = format!("{spans:?}");
    assert!(!spans_text.contains("secret-note"), "{spans_text}");
    Ok(())
}
