//! The demo service as the runtime's and the add-ons' tests serve it: its generated code
//! (`proto/demo/v1/demo.proto`), a real tonic backend on loopback, and an rmcp client
//! connected to an `McpServer` over an in-process duplex pipe.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::{
    collections::HashMap,
    error::Error,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

#[allow(unused_imports)]
pub use crate::{status, text};
use futures_core::Stream;

use rmcp::{
    ClientHandler, RoleClient,
    model::{CallToolResult, ProgressNotificationParam},
    service::{NotificationContext, RunningService},
};
use serde_json::Value;
use tonic::{Code, Request, Response, Status, Streaming, metadata::MetadataMap};
use tonic_types::{ErrorDetails, StatusExt as _};

pub mod http_client;
pub mod raw_2025;
pub mod replicas;

pub type TestResult<T = ()> = Result<T, Box<dyn Error + Send + Sync>>;

#[allow(
    clippy::all,
    clippy::pedantic,
    unreachable_pub,
    missing_debug_implementations,
    dead_code
)]
pub mod pb {
    include!("../../gen/demo.v1.rs");
    include!("demo.v1.pb.mcp.rs");
}

use pb::{
    ChatMessage, Color, Everything, GetItemRequest, Item, ListItemsRequest, SlowRequest,
    SlowResponse, UploadSummary,
    get_item_request::Filter,
    item::Owner,
    item_service_server::{ItemService, ItemServiceServer},
};

/// `Slow` with tasks allowed, as `task_support: TASK_SUPPORT_OPTIONAL` makes it.
pub static SLOW_TASK: tonic_mcp::codegen::ToolDef = tonic_mcp::codegen::ToolDef {
    name: "SlowTask",
    task_support: tonic_mcp::codegen::TaskSupport::Optional,
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/Slow","inputType":"demo.v1.SlowRequest","outputType":"demo.v1.SlowResponse","streaming":"unary","taskSupport":"optional"}}"#,
    ..pb::item_service_mcp::SLOW
};

/// What the backend observed.
#[derive(Debug, Default)]
pub struct Observed {
    /// Metadata of every request, as the interceptor saw it.
    pub metadata: Mutex<Vec<MetadataMap>>,
    /// Slow calls dropped before they finished.
    pub cancelled: AtomicUsize,
    pub cancelled_notify: tokio::sync::Notify,
}

impl Observed {
    pub fn last_metadata(&self) -> MetadataMap {
        self.metadata
            .lock()
            .map(|seen| seen.last().cloned().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Wait until `count` slow calls have been cancelled, or `within` passes.
    pub async fn wait_cancelled(&self, count: usize, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.cancelled_notify.notified();
            if self.cancelled.load(Ordering::SeqCst) >= count {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.cancelled.load(Ordering::SeqCst) >= count;
            }
        }
    }

    /// Asserts that `count` slow calls are cancelled within `within` (see
    /// [`Observed::wait_cancelled`]).
    pub async fn assert_cancelled(&self, count: usize, within: Duration) {
        assert!(
            self.wait_cancelled(count, within).await,
            "fewer than {count} calls were cancelled within {within:?}"
        );
    }
}

#[derive(Debug, Clone, Default)]
pub struct Backend {
    pub observed: Arc<Observed>,
}

/// Counts a slow call as cancelled when it is dropped before it finishes.
struct CancelGuard {
    observed: Arc<Observed>,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            self.observed.cancelled.fetch_add(1, Ordering::SeqCst);
            self.observed.cancelled_notify.notify_waiters();
        }
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

#[tonic::async_trait]
impl ItemService for Backend {
    async fn get_item(&self, request: Request<GetItemRequest>) -> Result<Response<Item>, Status> {
        let request = request.into_inner();
        match request.id {
            404 => return Err(Status::not_found("item 404 does not exist")),
            400 => {
                let mut details = ErrorDetails::with_bad_request_violation("id", "must not be 400");
                details.set_error_info("ID_RESERVED", "demo.example", HashMap::new());
                return Err(Status::with_error_details(
                    Code::InvalidArgument,
                    "invalid item request",
                    details,
                ));
            }
            _ => {}
        }
        let owner = match request.filter {
            Some(Filter::AuthorId(author)) => Some(Owner::TeamId(author)),
            Some(Filter::Range(range)) => Some(Owner::User(format!(
                "range from {}",
                range.start.map(|t| t.seconds).unwrap_or_default()
            ))),
            None => None,
        };
        Ok(Response::new(Item {
            id: request.id,
            name: format!("item {}", request.id),
            color: Color::Red as i32,
            payload: request.token,
            counts: HashMap::from([("seen".to_owned(), 1)]),
            big: u64::MAX,
            tags: request.note.into_iter().collect(),
            owner,
        }))
    }

    type ListItemsStream = BoxStream<Item>;

    async fn list_items(
        &self,
        request: Request<ListItemsRequest>,
    ) -> Result<Response<Self::ListItemsStream>, Status> {
        // The deadline the client sent, as a server sees it.
        let deadline = request
            .metadata()
            .get("grpc-timeout")
            .and_then(|value| value.to_str().ok())
            .and_then(grpc_timeout)
            .map(|timeout| tokio::time::Instant::now() + timeout);
        let ListItemsRequest {
            count,
            fail_after,
            delay_ms,
        } = request.into_inner();
        if fail_after < 0 {
            // Like etcd's Watch: `count` messages, then nothing until the deadline the client
            // sent, less `-fail_after` ms (a server rounds or runs early), and then the end
            // that etcd gives a watch there: UNKNOWN "context deadline exceeded".
            let early = Duration::from_millis(u64::from(fail_after.unsigned_abs()));
            let items: Vec<Result<Item, Status>> = (0..count)
                .map(|i| {
                    Ok(Item {
                        id: i64::from(i) + 1,
                        ..Item::default()
                    })
                })
                .collect();
            let end = futures_util::stream::once(async move {
                if let Some(deadline) = deadline {
                    tokio::time::sleep_until(deadline.checked_sub(early).unwrap_or(deadline)).await;
                }
                Err(Status::unknown("context deadline exceeded"))
            });
            return Ok(Response::new(Box::pin(futures_util::StreamExt::chain(
                futures_util::stream::iter(items),
                end,
            ))));
        }
        let stream = futures_util::stream::unfold(0, move |i| async move {
            if i >= count {
                return None;
            }
            if fail_after > 0 && i == fail_after {
                return Some((
                    Err(Status::aborted(format!("stream failed after {i} items"))),
                    count,
                ));
            }
            if delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(u64::try_from(delay_ms).unwrap_or(0)))
                    .await;
            }
            let item = Item {
                id: i64::from(i) + 1,
                name: format!("item {}", i + 1),
                ..Item::default()
            };
            Some((Ok(item), i + 1))
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn upload_items(
        &self,
        request: Request<Streaming<Item>>,
    ) -> Result<Response<UploadSummary>, Status> {
        let mut stream = request.into_inner();
        let mut ids = Vec::new();
        while let Some(item) = stream.message().await? {
            ids.push(item.id);
        }
        Ok(Response::new(UploadSummary {
            count: i32::try_from(ids.len()).unwrap_or(i32::MAX),
            ids,
        }))
    }

    type ChatStream = BoxStream<ChatMessage>;

    async fn chat(
        &self,
        request: Request<Streaming<ChatMessage>>,
    ) -> Result<Response<Self::ChatStream>, Status> {
        let mut stream = request.into_inner();
        let mut replies = Vec::new();
        while let Some(message) = stream.message().await? {
            replies.push(Ok(ChatMessage {
                text: format!("echo: {}", message.text),
            }));
        }
        Ok(Response::new(Box::pin(futures_util::stream::iter(replies))))
    }

    async fn echo(&self, request: Request<Everything>) -> Result<Response<Everything>, Status> {
        Ok(Response::new(request.into_inner()))
    }

    async fn after(
        &self,
        request: Request<prost_types::Duration>,
    ) -> Result<Response<prost_types::Timestamp>, Status> {
        let duration = request.into_inner();
        Ok(Response::new(prost_types::Timestamp {
            seconds: duration.seconds,
            nanos: duration.nanos,
        }))
    }

    async fn slow(&self, request: Request<SlowRequest>) -> Result<Response<SlowResponse>, Status> {
        let sleep_ms = request.into_inner().sleep_ms;
        let mut guard = CancelGuard {
            observed: Arc::clone(&self.observed),
            armed: true,
        };
        tokio::time::sleep(Duration::from_millis(u64::try_from(sleep_ms).unwrap_or(0))).await;
        guard.armed = false;
        Ok(Response::new(SlowResponse { slept_ms: sleep_ms }))
    }
}

/// A real tonic server on an ephemeral loopback port, with an interceptor recording metadata.
pub async fn start_backend() -> TestResult<(SocketAddr, Backend)> {
    let backend = Backend::default();
    let incoming = tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse()?)?;
    let addr = incoming.local_addr()?;
    let observed = Arc::clone(&backend.observed);
    let service =
        ItemServiceServer::with_interceptor(backend.clone(), move |request: Request<()>| {
            if let Ok(mut seen) = observed.metadata.lock() {
                seen.push(request.metadata().clone());
            }
            Ok(request)
        });
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming),
    );
    Ok((addr, backend))
}

/// A tonic client of the backend.
pub async fn channel(addr: SocketAddr) -> TestResult<tonic::transport::Channel> {
    Ok(
        tonic::transport::Channel::from_shared(format!("http://{addr}"))?
            .connect()
            .await?,
    )
}

/// An rmcp client handler that records progress notifications.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut progress) = self.progress.lock() {
            progress.push(params);
        }
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// A `grpc-timeout` header value (`1000m`, `250000u`, `2S`) as a duration.
fn grpc_timeout(value: &str) -> Option<Duration> {
    let (number, unit) = value.split_at(value.len().checked_sub(1)?);
    let number: u64 = number.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(number * 3600),
        "M" => Duration::from_secs(number * 60),
        "S" => Duration::from_secs(number),
        "m" => Duration::from_millis(number),
        "u" => Duration::from_micros(number),
        "n" => Duration::from_nanos(number),
        _ => return None,
    })
}

/// Serve `server` over an in-process duplex pipe and connect an rmcp client to it.
pub async fn connect(server: tonic_mcp::McpServer) -> TestResult<(Client, Recorder)> {
    connect_with(server, rmcp::service::ClientLifecycleMode::Initialize).await
}

/// [`connect`], with the client's `lifecycle` (the `initialize` handshake, or
/// `server/discover` on revision 2026-07-28).
pub async fn connect_with(
    server: tonic_mcp::McpServer,
    lifecycle: rmcp::service::ClientLifecycleMode,
) -> TestResult<(Client, Recorder)> {
    use rmcp::service::ClientServiceExt as _;
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve_with_lifecycle(crate::serve_in_process(server), lifecycle)
        .await?;
    Ok((client, recorder))
}

/// Call a tool and return the result (protocol errors are `Err`).
pub async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    arguments: Value,
) -> TestResult<CallToolResult> {
    if !arguments.is_object() {
        return Err("arguments must be an object".into());
    }
    Ok(crate::call(client, name, arguments).await?)
}

/// Expect a successful result whose structured content validates against the tool's
/// output schema and equals its text content; return the structured content.
pub async fn call_ok(client: &Client, name: &str, arguments: Value) -> TestResult<Value> {
    let result = call(client, name, arguments).await?;
    let structured = crate::expect_ok(name, &result);
    let tools = client.list_all_tools().await?;
    let tool = tools
        .iter()
        .find(|t| t.name == name)
        .ok_or("tool not listed")?;
    let schema = Value::Object(
        tool.output_schema
            .as_deref()
            .cloned()
            .ok_or("no output schema")?,
    );
    let validator = jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(&structured)
        .map(|e| e.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "{name} result does not match its output schema: {errors:?}\n{structured}"
        )
        .into());
    }
    Ok(structured)
}

/// Expect an `isError` result and return its text.
pub async fn call_err(client: &Client, name: &str, arguments: Value) -> TestResult<String> {
    let result = call(client, name, arguments).await?;
    Ok(crate::expect_err(name, &result))
}

/// [`call_err`], asserting that the text contains each of `expected`; returns the text.
pub async fn call_err_containing(
    client: &Client,
    name: &str,
    arguments: Value,
    expected: &[&str],
) -> TestResult<String> {
    let text = call_err(client, name, arguments).await?;
    for expected in expected {
        assert!(
            text.contains(expected),
            "{name}: {expected:?} not in {text}"
        );
    }
    Ok(text)
}

/// Starts a 10 s `ItemService_Slow` call and drops it unfinished after `after` (rmcp's client
/// then sends `notifications/cancelled`).
pub async fn drop_slow_call(client: &Client, after: Duration) {
    let call = call(
        client,
        "ItemService_Slow",
        serde_json::json!({"sleep_ms": 10_000}),
    );
    assert!(tokio::time::timeout(after, call).await.is_err());
}

/// A client of [`grpc_server`], over an in-process pipe, and the backend.
pub async fn grpc_client() -> TestResult<(Client, Backend)> {
    let (server, backend) = grpc_server().await?;
    let (client, _) = connect(server).await?;
    Ok((client, backend))
}

/// A server with the demo tools forwarding to a backend on loopback.
pub async fn grpc_server() -> TestResult<(tonic_mcp::McpServer, Backend)> {
    let (addr, backend) = start_backend().await?;
    let tools = pb::item_service_mcp::from_channel(channel(addr).await?)?;
    let server = tonic_mcp::McpServer::builder("demo", "0.1.0")
        .tool_set(tools)?
        .build();
    Ok((server, backend))
}
