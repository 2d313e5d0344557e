//! Tasks of a tool that waits on a `google.longrunning.Operation`, on servers with a task key
//! and no task store: the task's signed id carries the operation, so any replica answers for
//! it by asking the backend. Two servers on stateless HTTP (replicas behind a load balancer)
//! and a real gRPC backend on loopback that serves the tool's RPC and
//! `google.longrunning.Operations`: a task started on one is answered on the other until it
//! completes with the direct call's result, also once the first is gone; a cancel on the other
//! reaches the backend's CancelOperation; a changed id, another caller's, or one made under
//! another key is unknown; without a key such a task is held as any other.

use test_kit::demo as common;

use std::{
    convert::Infallible,
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::{Arc, Mutex, OnceLock},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use bytes::Bytes;
use common::{
    TestResult,
    replicas::{NameCallers, result, send_2025, send_final},
};
use serde_json::{Value, json};
use test_kit::tonic_mcp_tasks::{DEFAULT_TASK_TTL, Tasks};
use tonic::{Status, server::NamedService};
use tonic_mcp::{DescriptorPool, McpServer, TaskMode, schema::Options};
use tonic_mcp_dynamic::DescriptorTools;
use tonic_mcp_serve::ServeHttp as _;

// ---------------------------------------------------------------------------------------------
// The backend: jobs that take `steps` × 100 ms, as google.longrunning operations.

/// The service, its messages and the `google.longrunning` types it uses, compiled by protoc
/// when the test starts (the descriptors the tools are built from).
const JOBS_PROTO: &str = r#"
syntax = "proto3";
package jobs.v1;

import "google/longrunning/operations.proto";
import "rust_mcp/options.proto";

// Runs jobs, which take a while.
service Jobs {
  // Runs a job: the operation is done after `steps` × 100 ms.
  rpc Run(RunRequest) returns (google.longrunning.Operation) {
    option (google.longrunning.operation_info) = {
      response_type: "jobs.v1.JobResult"
      metadata_type: "jobs.v1.JobProgress"
    };
    option (rust_mcp.tool) = {task_support: TASK_SUPPORT_OPTIONAL};
  }
}

// What to run.
message RunRequest {
  // The job's name; `fail` fails.
  string name = 1;
  // How many 100 ms steps it takes.
  int32 steps = 2;
}

// How far a job is.
message JobProgress {
  // Steps done so far.
  int32 steps_done = 1;
}

// What a job made.
message JobResult {
  // The job's name.
  string name = 1;
  // Its steps.
  int32 steps = 2;
}
"#;

const TOOL: &str = "Jobs_Run";
const STEP: Duration = Duration::from_millis(100);

#[derive(Clone, PartialEq, prost::Message)]
struct RunRequest {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int32, tag = "2")]
    steps: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct JobProgress {
    #[prost(int32, tag = "1")]
    steps_done: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct JobResult {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int32, tag = "2")]
    steps: i32,
}

/// `google.longrunning.Operation`.
#[derive(Clone, PartialEq, prost::Message)]
struct Operation {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "2")]
    metadata: Option<prost_types::Any>,
    #[prost(bool, tag = "3")]
    done: bool,
    #[prost(oneof = "OperationResult", tags = "4, 5")]
    result: Option<OperationResult>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum OperationResult {
    #[prost(message, tag = "4")]
    Error(RpcStatus),
    #[prost(message, tag = "5")]
    Response(prost_types::Any),
}

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// `google.longrunning.GetOperationRequest` and `CancelOperationRequest` (the same shape).
#[derive(Clone, PartialEq, prost::Message)]
struct ByName {
    #[prost(string, tag = "1")]
    name: String,
}

fn pack(full_name: &str, message: &impl prost::Message) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{full_name}"),
        value: message.encode_to_vec(),
    }
}

struct Job {
    request: RunRequest,
    started: Instant,
    cancelled: bool,
}

/// The backend's operations, and what it was asked.
#[derive(Default)]
struct State {
    jobs: Mutex<Vec<Job>>,
    gets: Mutex<Vec<String>>,
    cancels: Mutex<Vec<String>>,
    /// GetOperation answers UNAVAILABLE while set.
    unavailable: std::sync::atomic::AtomicBool,
}

impl State {
    fn run(&self, request: RunRequest) -> Operation {
        let mut jobs = self.jobs.lock().expect("jobs");
        jobs.push(Job {
            request,
            started: Instant::now(),
            cancelled: false,
        });
        let name = format!("operations/job-{}", jobs.len());
        drop(jobs);
        self.get(&name).unwrap_or_default()
    }

    /// The operation as it is now: done once its steps passed (failed for a job named
    /// `fail`), or once cancelled, with `CANCELLED`, as AIP-151 has it.
    fn get(&self, name: &str) -> Option<Operation> {
        let index: usize = name.strip_prefix("operations/job-")?.parse().ok()?;
        let jobs = self.jobs.lock().expect("jobs");
        let job = jobs.get(index.checked_sub(1)?)?;
        let steps_done =
            u32::try_from(job.started.elapsed().as_millis() / STEP.as_millis()).unwrap_or(u32::MAX);
        let mut operation = Operation {
            name: name.to_owned(),
            metadata: Some(pack(
                "jobs.v1.JobProgress",
                &JobProgress {
                    steps_done: i32::try_from(steps_done).unwrap_or(i32::MAX),
                },
            )),
            done: false,
            result: None,
        };
        if job.cancelled {
            operation.done = true;
            operation.result = Some(OperationResult::Error(RpcStatus {
                code: tonic::Code::Cancelled as i32,
                message: "the job was cancelled".to_owned(),
            }));
        } else if i64::from(steps_done) >= i64::from(job.request.steps) {
            operation.done = true;
            operation.result = Some(if job.request.name == "fail" {
                OperationResult::Error(RpcStatus {
                    code: tonic::Code::FailedPrecondition as i32,
                    message: "the job failed".to_owned(),
                })
            } else {
                OperationResult::Response(pack(
                    "jobs.v1.JobResult",
                    &JobResult {
                        name: job.request.name.clone(),
                        steps: job.request.steps,
                    },
                ))
            });
        }
        Some(operation)
    }

    fn cancel(&self, name: &str) -> Result<(), Status> {
        self.cancels.lock().expect("cancels").push(name.to_owned());
        let index: usize = name
            .strip_prefix("operations/job-")
            .and_then(|index| index.parse().ok())
            .ok_or_else(|| Status::not_found(name.to_owned()))?;
        let mut jobs = self.jobs.lock().expect("jobs");
        let job = index
            .checked_sub(1)
            .and_then(|index| jobs.get_mut(index))
            .ok_or_else(|| Status::not_found(name.to_owned()))?;
        job.cancelled = true;
        Ok(())
    }

    fn cancels(&self) -> Vec<String> {
        self.cancels.lock().expect("cancels").clone()
    }
}

/// A unary method answered by `handler`.
struct Unary<Req, Resp>(Arc<dyn Fn(Req) -> Result<Resp, Status> + Send + Sync>);

impl<Req: Send + 'static, Resp: Send + 'static> tonic::server::UnaryService<Req>
    for Unary<Req, Resp>
{
    type Response = Resp;
    type Future = std::future::Ready<Result<tonic::Response<Resp>, Status>>;

    fn call(&mut self, request: tonic::Request<Req>) -> Self::Future {
        std::future::ready((self.0)(request.into_inner()).map(tonic::Response::new))
    }
}

type Answer =
    Pin<Box<dyn Future<Output = Result<http::Response<tonic::body::Body>, Infallible>> + Send>>;

fn unary<B, Req, Resp>(
    request: http::Request<B>,
    handler: impl Fn(Req) -> Result<Resp, Status> + Send + Sync + 'static,
) -> Answer
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
    Req: prost::Message + Default + Send + 'static,
    Resp: prost::Message + Send + 'static,
{
    Box::pin(async move {
        let mut grpc = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
        Ok(grpc.unary(Unary(Arc::new(handler)), request).await)
    })
}

/// `jobs.v1.Jobs` and `google.longrunning.Operations` on one state.
#[derive(Clone)]
struct Backend<const OPERATIONS: bool>(Arc<State>);

impl NamedService for Backend<false> {
    const NAME: &'static str = "jobs.v1.Jobs";
}

impl NamedService for Backend<true> {
    const NAME: &'static str = "google.longrunning.Operations";
}

impl<B, const OPERATIONS: bool> tower_service::Service<http::Request<B>> for Backend<OPERATIONS>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Answer {
        let state = Arc::clone(&self.0);
        match request.uri().path() {
            "/jobs.v1.Jobs/Run" => unary(request, move |run: RunRequest| Ok(state.run(run))),
            "/google.longrunning.Operations/GetOperation" => unary(request, move |get: ByName| {
                state.gets.lock().expect("gets").push(get.name.clone());
                if state.unavailable.load(std::sync::atomic::Ordering::SeqCst) {
                    return Err(Status::unavailable("the operations store is down"));
                }
                state
                    .get(&get.name)
                    .ok_or_else(|| Status::not_found(get.name))
            }),
            "/google.longrunning.Operations/CancelOperation" => {
                unary(request, move |cancel: ByName| state.cancel(&cancel.name))
            }
            _ => Box::pin(async { Ok(Status::unimplemented("no such method").into_http()) }),
        }
    }
}

async fn start_backend() -> TestResult<(SocketAddr, Arc<State>)> {
    let state = Arc::new(State::default());
    let addr = serve_backend(&state, true).await?;
    Ok((addr, state))
}

/// Serves `state`'s Jobs, and its Operations when `operations`, on a loopback port.
async fn serve_backend(state: &Arc<State>, operations: bool) -> TestResult<SocketAddr> {
    let incoming = tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse()?)?;
    let addr = incoming.local_addr()?;
    let jobs = tonic::transport::Server::builder().add_service(Backend::<false>(Arc::clone(state)));
    if operations {
        tokio::spawn(
            jobs.add_service(Backend::<true>(Arc::clone(state)))
                .serve_with_incoming(incoming),
        );
    } else {
        tokio::spawn(jobs.serve_with_incoming(incoming));
    }
    Ok(addr)
}

/// The descriptor set of [`JOBS_PROTO`], compiled once.
fn descriptors() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| compile().unwrap_or_else(|e| panic!("compiling jobs.proto: {e}")))
}

fn compile() -> TestResult<DescriptorPool> {
    // addons/dynamic/ → the workspace.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .ok_or("no workspace")?
        .to_owned();
    let dir =
        std::env::temp_dir().join(format!("tonic-mcp-operation-tasks-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("jobs/v1"))?;
    std::fs::write(dir.join("jobs/v1/jobs.proto"), JOBS_PROTO)?;
    let out = dir.join("descriptor.bin");
    let status = std::process::Command::new(protoc_bin_vendored::protoc_bin_path()?)
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg(format!("-I{}", dir.display()))
        .arg(format!("-I{}", repo.join("testdata").display()))
        .arg(format!("-I{}", repo.join("proto").display()))
        .arg(format!(
            "-I{}",
            protoc_bin_vendored::include_path()?.display()
        ))
        .arg("jobs/v1/jobs.proto")
        .status()?;
    if !status.success() {
        return Err("protoc failed".into());
    }
    let bytes = std::fs::read(&out)?;
    std::fs::remove_dir_all(&dir)?;
    Ok(DescriptorPool::decode(bytes.as_slice())?)
}

// ---------------------------------------------------------------------------------------------
// The replicas.

const KEY: &[u8] = b"a shared key of at least thirty-two bytes, for tests";

/// One server on stateless HTTP, serving the jobs tool of the backend at `backend`.
struct Replica {
    addr: SocketAddr,
    shutdown: tokio_util::sync::CancellationToken,
    serving: tokio::task::JoinHandle<Result<(), tonic_mcp::Error>>,
}

impl Replica {
    async fn start(backend: SocketAddr, key: Option<&[u8]>) -> TestResult<Self> {
        Self::start_with(backend, None, key, TaskMode::Always, DEFAULT_TASK_TTL).await
    }

    /// A replica whose jobs tool calls `backend`, serving the Operations tools of `operations`
    /// when given, in `mode`, its tasks living `ttl`.
    async fn start_with(
        backend: SocketAddr,
        operations: Option<SocketAddr>,
        key: Option<&[u8]>,
        mode: TaskMode,
        ttl: Duration,
    ) -> TestResult<Self> {
        let channel = common::channel(backend).await?;
        let options = Options::default();
        let tools = DescriptorTools::new(descriptors(), &options);
        let mut server = McpServer::builder("operation-tasks", "0.1.0")
            .tool_set(tools.service("jobs.v1.Jobs", channel)?)?;
        let mut tasks = Tasks::new().mode(mode).ttl(ttl);
        if let Some(operations) = operations {
            let channel = common::channel(operations).await?;
            server = server.tool_set(tools.service("google.longrunning.Operations", channel)?)?;
        }
        if let Some(key) = key {
            tasks = tasks.key(key);
        }
        let server = server.task_router(tasks).build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let config = McpServer::stateless_http_config();
        let shutdown = config.cancellation_token.clone();
        let serving = tokio::spawn(server.serve_http_with(
            listener,
            config,
            tower_layer::layer_fn(NameCallers),
        ));
        Ok(Self {
            addr,
            shutdown,
            serving,
        })
    }

    /// Stops serving and drops the server (its serving future, which owns it, ends).
    async fn stop(mut self) {
        self.shutdown.cancel();
        self.serving.abort();
        let _ = (&mut self.serving).await;
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.serving.abort();
    }
}

/// Starts a job of `steps` as a task of revision 2025-11-25 on `addr`: its task id.
async fn start_task(addr: SocketAddr, caller: &str, name: &str, steps: i32) -> TestResult<String> {
    let call = json!({"name": TOOL, "arguments": {"name": name, "steps": steps}, "task": {}});
    let started = result(
        &send_2025(addr, caller, "tools/call", call).await?,
        "tools/call",
    )?;
    assert_eq!(started["task"]["status"], json!("working"), "{started}");
    Ok(started["task"]["taskId"]
        .as_str()
        .ok_or_else(|| format!("no task id: {started}"))?
        .to_owned())
}

/// The job run directly (no task) on `addr`: the result the task must end with.
async fn direct(addr: SocketAddr, name: &str, steps: i32) -> TestResult<Value> {
    let call = json!({"name": TOOL, "arguments": {"name": name, "steps": steps}});
    result(
        &send_2025(addr, "alice", "tools/call", call).await?,
        "the direct call",
    )
}

/// Asserts that `task`'s result (`tasks/result`, or the `result` of a completed `tasks/get`)
/// is the direct call's, but for the name of the operation a text may give (the direct call
/// made another).
fn assert_same_result(task: &Value, direct: &Value) {
    for key in ["structuredContent", "content", "isError", "_meta"] {
        let (mut task, direct) = (task[key].clone(), direct[key].clone());
        if key == "_meta"
            && let Value::Object(meta) = &mut task
        {
            meta.remove("io.modelcontextprotocol/related-task");
        }
        assert_eq!(
            without_operation_numbers(&task),
            without_operation_numbers(&direct),
            "{key}: {task} vs {direct}"
        );
    }
}

/// `value` as JSON text, with each `operations/job-<number>` as `operations/job-N`.
fn without_operation_numbers(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("operations/job-") {
        let (before, after) = rest.split_at(at + "operations/job-".len());
        out.push_str(before);
        out.push('N');
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// (1) A task started on A is answered on B through `tasks/get` until it completes, with the
/// direct call's result; the id is a signed one, and B's `tasks/result` gives the same.
#[tokio::test]
async fn a_task_started_on_one_replica_is_answered_by_the_other_until_completed() -> TestResult {
    let (backend, state) = start_backend().await?;
    let a = Replica::start(backend, Some(KEY)).await?;
    let b = Replica::start(backend, Some(KEY)).await?;
    let task_id = start_task(a.addr, "alice", "report", 5).await?;
    assert!(task_id.starts_with("op1."), "{task_id}");

    let deadline = Instant::now() + Duration::from_secs(10);
    let mut saw_progress = false;
    let completed = loop {
        let got = result(
            &send_2025(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
            "tasks/get on B",
        )?;
        assert_eq!(got["taskId"], json!(task_id), "{got}");
        assert_eq!(got["ttl"], json!(300_000), "{got}");
        assert!(got["pollInterval"].is_u64(), "{got}");
        assert!(got["createdAt"].is_string(), "{got}");
        match got["status"].as_str() {
            Some("working") => {
                // The operation's latest metadata, as the waiting call's progress gives it
                // (no steps done yet: `{}`).
                let message = got["statusMessage"].as_str().unwrap_or_default();
                assert!(
                    message.starts_with("operation operations/job-1 running: {"),
                    "{got}"
                );
                saw_progress |= message.contains("{\"steps_done\":");
            }
            Some("completed") => break got,
            _ => panic!("unexpected: {got}"),
        }
        assert!(Instant::now() < deadline, "never completed: {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(saw_progress, "{completed}");
    assert!(
        state
            .gets
            .lock()
            .expect("gets")
            .iter()
            .all(|name| name == "operations/job-1"),
        "GetOperation asked for the task's operation"
    );

    let waited = result(
        &send_2025(b.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?,
        "tasks/result on B",
    )?;
    let direct = direct(a.addr, "report", 5).await?;
    assert_eq!(
        direct["structuredContent"],
        json!({"name": "report", "steps": 5})
    );
    assert_same_result(&waited, &direct);
    assert_eq!(
        waited["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(task_id)
    );
    // On A too: the task is no replica's.
    let on_a = result(
        &send_2025(a.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?,
        "tasks/result on A",
    )?;
    assert_same_result(&on_a, &direct);
    // Nothing holds it: not listed.
    let listed = result(
        &send_2025(a.addr, "alice", "tasks/list", json!({})).await?,
        "tasks/list",
    )?;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    Ok(())
}

/// (1) in the shape of the tasks extension: `tasks/get` on B inlines the result, the direct
/// call's; and an operation that ends with an error completes with the direct call's
/// `isError` result.
#[tokio::test]
async fn a_task_of_the_extension_completes_on_the_other_replica_with_errors_as_results()
-> TestResult {
    let (backend, _state) = start_backend().await?;
    let a = Replica::start(backend, Some(KEY)).await?;
    let b = Replica::start(backend, Some(KEY)).await?;
    for name in ["report", "fail"] {
        let call = json!({"name": TOOL, "arguments": {"name": name, "steps": 3}});
        let started = result(
            &send_final(a.addr, "alice", "tools/call", call).await?,
            "tools/call",
        )?;
        let task_id = started["taskId"]
            .as_str()
            .ok_or_else(|| format!("no task: {started}"))?
            .to_owned();
        assert!(task_id.starts_with("op1."), "{started}");
        let deadline = Instant::now() + Duration::from_secs(10);
        let got = loop {
            let got = result(
                &send_final(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
                "tasks/get on B",
            )?;
            if got["status"] == json!("completed") {
                break got;
            }
            assert_eq!(got["status"], json!("working"), "{got}");
            assert!(Instant::now() < deadline, "never completed: {got}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let direct = direct(a.addr, name, 3).await?;
        assert_same_result(&got["result"], &direct);
        if name == "fail" {
            assert_eq!(direct["isError"], json!(true), "{direct}");
            assert!(
                direct["content"][0]["text"]
                    .as_str()
                    .is_some_and(|text| text.contains("the job failed")),
                "{direct}"
            );
        }
    }
    Ok(())
}

/// (2) A is shut down (serving cancelled, the server dropped) before the operation finishes:
/// B still answers for the task and completes it.
#[tokio::test]
async fn a_task_survives_the_replica_that_started_it() -> TestResult {
    let (backend, _state) = start_backend().await?;
    let a = Replica::start(backend, Some(KEY)).await?;
    let b = Replica::start(backend, Some(KEY)).await?;
    let task_id = start_task(a.addr, "alice", "survivor", 15).await?;
    let a_addr = a.addr;
    a.stop().await;
    assert!(
        send_2025(a_addr, "alice", "tasks/get", json!({"taskId": task_id}))
            .await
            .is_err(),
        "A still answers"
    );

    let got = result(
        &send_2025(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get on B",
    )?;
    assert_eq!(got["status"], json!("working"), "{got}");
    let waited = result(
        &send_2025(b.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?,
        "tasks/result on B",
    )?;
    assert_same_result(&waited, &direct(b.addr, "survivor", 15).await?);
    let got = result(
        &send_2025(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get on B",
    )?;
    assert_eq!(got["status"], json!("completed"), "{got}");
    Ok(())
}

/// (3) `tasks/cancel` on B reaches the backend's CancelOperation, and the task is cancelled
/// (the backend ends the operation so); in both shapes.
#[tokio::test]
async fn cancelling_on_the_other_replica_cancels_the_operation() -> TestResult {
    let (backend, state) = start_backend().await?;
    let a = Replica::start(backend, Some(KEY)).await?;
    let b = Replica::start(backend, Some(KEY)).await?;
    let task_id = start_task(a.addr, "alice", "endless", 600).await?;
    let cancelled = result(
        &send_2025(b.addr, "alice", "tasks/cancel", json!({"taskId": task_id})).await?,
        "tasks/cancel on B",
    )?;
    assert_eq!(state.cancels(), ["operations/job-1"]);
    assert_eq!(cancelled["status"], json!("cancelled"), "{cancelled}");
    assert_eq!(cancelled["taskId"], json!(task_id), "{cancelled}");
    let got = result(
        &send_2025(a.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get on A",
    )?;
    assert_eq!(got["status"], json!("cancelled"), "{got}");
    // Cancelled, it has no result; cancelled already, it cannot be cancelled again.
    let reply = send_2025(b.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?;
    assert!(
        reply.last()["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("was cancelled")),
        "{}",
        reply.body
    );
    let reply = send_2025(b.addr, "alice", "tasks/cancel", json!({"taskId": task_id})).await?;
    assert!(
        reply.last()["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("it is already cancelled")),
        "{}",
        reply.body
    );

    // The extension's shape.
    let call = json!({"name": TOOL, "arguments": {"name": "endless", "steps": 600}});
    let started = result(
        &send_final(a.addr, "alice", "tools/call", call).await?,
        "tools/call",
    )?;
    let task_id = started["taskId"].as_str().ok_or("no task id")?.to_owned();
    result(
        &send_final(b.addr, "alice", "tasks/cancel", json!({"taskId": task_id})).await?,
        "tasks/cancel on B",
    )?;
    assert_eq!(state.cancels(), ["operations/job-1", "operations/job-2"]);
    let got = result(
        &send_final(a.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get on A",
    )?;
    assert_eq!(got["status"], json!("cancelled"), "{got}");
    Ok(())
}

/// (4) An id with one character of its payload changed, another caller's id, and an id made
/// under another key are unknown, exactly as an id that never existed; in both shapes.
#[tokio::test]
async fn a_changed_id_another_callers_and_another_keys_are_unknown() -> TestResult {
    let (backend, state) = start_backend().await?;
    let a = Replica::start(backend, Some(KEY)).await?;
    let b = Replica::start(backend, Some(KEY)).await?;
    let other_key = Replica::start(
        backend,
        Some(b"another key, of another deployment, 32 bytes"),
    )
    .await?;
    let task_id = start_task(a.addr, "alice", "secret", 600).await?;

    // One character of the payload changed (the payload starts after `op1.`).
    let at = "op1.".len() + 10;
    let original = task_id.as_bytes()[at];
    let replacement = if original == b'A' { "B" } else { "A" };
    let mut changed = task_id.clone();
    changed.replace_range(at..=at, replacement);
    assert_ne!(changed, task_id);

    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let reply = send_2025(b.addr, "alice", method, json!({"taskId": changed})).await?;
        common::http_client::assert_unknown_task(&reply, &changed, &format!("{method}, changed"));
        let reply = send_2025(b.addr, "bob", method, json!({"taskId": task_id})).await?;
        common::http_client::assert_unknown_task(&reply, &task_id, &format!("{method}, bob"));
        let reply = send_2025(other_key.addr, "alice", method, json!({"taskId": task_id})).await?;
        common::http_client::assert_unknown_task(&reply, &task_id, &format!("{method}, key"));
    }
    for method in ["tasks/get", "tasks/cancel"] {
        let reply = send_final(b.addr, "alice", method, json!({"taskId": changed})).await?;
        common::http_client::assert_unknown_task(&reply, &changed, &format!("{method}, changed"));
        let reply = send_final(b.addr, "bob", method, json!({"taskId": task_id})).await?;
        common::http_client::assert_unknown_task(&reply, &task_id, &format!("{method}, bob"));
    }
    // None of those reached the backend's CancelOperation; its owner's cancel does.
    assert!(state.cancels().is_empty(), "{:?}", state.cancels());
    let cancelled = result(
        &send_2025(b.addr, "alice", "tasks/cancel", json!({"taskId": task_id})).await?,
        "tasks/cancel by its owner",
    )?;
    assert_eq!(cancelled["status"], json!("cancelled"), "{cancelled}");
    Ok(())
}

/// (5) Without a key, a task of the waiting tool is held as any other: a UUID, answered by the
/// replica that runs it, unknown to another without a task store.
#[tokio::test]
async fn without_a_key_the_task_is_held_as_any_other() -> TestResult {
    let (backend, _state) = start_backend().await?;
    let a = Replica::start(backend, None).await?;
    let b = Replica::start(backend, None).await?;
    let task_id = start_task(a.addr, "alice", "plain", 3).await?;
    assert!(!task_id.starts_with("op1."), "{task_id}");
    let reply = send_2025(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?;
    common::http_client::assert_unknown_task(&reply, &task_id, "another replica, no store");
    let waited = result(
        &send_2025(a.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?,
        "tasks/result on A",
    )?;
    assert_same_result(&waited, &direct(a.addr, "plain", 3).await?);
    // A signed id means nothing to a server without a key.
    let keyed = Replica::start(backend, Some(KEY)).await?;
    let signed = start_task(keyed.addr, "alice", "plain", 3).await?;
    let reply = send_2025(a.addr, "alice", "tasks/get", json!({"taskId": signed})).await?;
    common::http_client::assert_unknown_task(&reply, &signed, "a keyless server");
    Ok(())
}

/// When the tool's own transport does not serve Operations (UNIMPLEMENTED), the replicas read
/// and cancel the task's operation through the served GetOperation tool's transport, as the
/// waiting call does.
#[tokio::test]
async fn a_task_is_answered_through_the_served_operations_tools() -> TestResult {
    let state = Arc::new(State::default());
    let jobs_only = serve_backend(&state, false).await?;
    let operations = serve_backend(&state, true).await?;
    let a = Replica::start_with(
        jobs_only,
        Some(operations),
        Some(KEY),
        TaskMode::Always,
        DEFAULT_TASK_TTL,
    )
    .await?;
    let b = Replica::start_with(
        jobs_only,
        Some(operations),
        Some(KEY),
        TaskMode::Always,
        DEFAULT_TASK_TTL,
    )
    .await?;
    let task_id = start_task(a.addr, "alice", "redeemed", 3).await?;
    let waited = result(
        &send_2025(b.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?,
        "tasks/result on B",
    )?;
    assert_eq!(
        waited["structuredContent"],
        json!({"name": "redeemed", "steps": 3}),
        "{waited}"
    );
    let task_id = start_task(a.addr, "alice", "endless", 600).await?;
    let cancelled = result(
        &send_2025(b.addr, "alice", "tasks/cancel", json!({"taskId": task_id})).await?,
        "tasks/cancel on B",
    )?;
    assert_eq!(cancelled["status"], json!("cancelled"), "{cancelled}");
    assert_eq!(state.cancels(), ["operations/job-2"]);
    Ok(())
}

/// A GetOperation that fails is a JSON-RPC internal error naming the gRPC status (the task
/// may be running still), and the task is answered again once the backend is back.
#[tokio::test]
async fn a_failing_get_operation_is_an_error_naming_the_status() -> TestResult {
    let (backend, state) = start_backend().await?;
    let a = Replica::start(backend, Some(KEY)).await?;
    let task_id = start_task(a.addr, "alice", "flaky", 600).await?;
    state
        .unavailable
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let reply = send_2025(a.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?;
    let error = &reply.last()["error"];
    assert_eq!(error["code"], json!(-32603), "{}", reply.body);
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("GetOperation answered gRPC error UNAVAILABLE")
            && message.contains("operations/job-1"),
        "{}",
        reply.body
    );
    let reply = send_final(a.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?;
    assert_eq!(
        reply.last()["error"]["code"],
        json!(-32603),
        "{}",
        reply.body
    );
    state
        .unavailable
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let got = result(
        &send_2025(a.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get",
    )?;
    assert_eq!(got["status"], json!("working"), "{got}");
    Ok(())
}

/// Under `TaskMode::Auto`, a call from a client of the tasks extension waits inline first, as
/// every call does: an operation done within the inline wait is answered with its result, one
/// still running then with a signed task that another replica answers for.
#[tokio::test]
async fn under_auto_a_call_becomes_a_signed_task_after_the_inline_wait() -> TestResult {
    let (backend, _state) = start_backend().await?;
    let mode = TaskMode::auto_after(Duration::from_millis(600));
    let a = Replica::start_with(backend, None, Some(KEY), mode, DEFAULT_TASK_TTL).await?;
    let b = Replica::start_with(backend, None, Some(KEY), mode, DEFAULT_TASK_TTL).await?;
    let call = json!({"name": TOOL, "arguments": {"name": "quick", "steps": 1}});
    let answered = result(
        &send_final(a.addr, "alice", "tools/call", call).await?,
        "tools/call",
    )?;
    assert_eq!(
        answered["structuredContent"],
        json!({"name": "quick", "steps": 1}),
        "{answered}"
    );
    let call = json!({"name": TOOL, "arguments": {"name": "slow", "steps": 20}});
    let started = Instant::now();
    let answered = result(
        &send_final(a.addr, "alice", "tools/call", call).await?,
        "tools/call",
    )?;
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "{answered}"
    );
    let task_id = answered["taskId"]
        .as_str()
        .ok_or_else(|| format!("no task: {answered}"))?
        .to_owned();
    assert!(task_id.starts_with("op1."), "{answered}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = result(
            &send_final(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
            "tasks/get on B",
        )?;
        if got["status"] == json!("completed") {
            assert_eq!(
                got["result"]["structuredContent"],
                json!({"name": "slow", "steps": 20}),
                "{got}"
            );
            break;
        }
        assert_eq!(got["status"], json!("working"), "{got}");
        assert!(Instant::now() < deadline, "never completed: {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// A task lives for its time-to-live, from its creation, as the id says: past it, the task is
/// unknown (`tasks/result` waiting on it too), on every replica.
#[tokio::test]
async fn a_task_past_its_time_to_live_is_unknown() -> TestResult {
    let (backend, _state) = start_backend().await?;
    let ttl = Duration::from_millis(800);
    let a = Replica::start_with(backend, None, Some(KEY), TaskMode::Always, ttl).await?;
    let b = Replica::start_with(backend, None, Some(KEY), TaskMode::Always, ttl).await?;
    let task_id = start_task(a.addr, "alice", "long", 600).await?;
    let got = result(
        &send_2025(b.addr, "alice", "tasks/get", json!({"taskId": task_id})).await?,
        "tasks/get on B",
    )?;
    assert_eq!(got["ttl"], json!(800), "{got}");
    let reply = send_2025(b.addr, "alice", "tasks/result", json!({"taskId": task_id})).await?;
    common::http_client::assert_unknown_task(&reply, &task_id, "tasks/result past the ttl");
    for addr in [a.addr, b.addr] {
        let reply = send_2025(addr, "alice", "tasks/get", json!({"taskId": task_id})).await?;
        common::http_client::assert_unknown_task(&reply, &task_id, "tasks/get past the ttl");
    }
    Ok(())
}
