//! Tools that wait for a `google.longrunning.Operation` (docs/design.md §6, `(rust_mcp.tool).long_running`).
//!
//! The RPC answers with an operation. Until it is `done`, the runtime polls
//! `google.longrunning.Operations/GetOperation` through the tool's own transport, with backoff
//! ([`FIRST_POLL`], growing by half each time up to [`LONGEST_POLL`]), and reports each poll as
//! progress carrying the operation's unpacked `metadata`. When that transport does not serve
//! `Operations` (`UNIMPLEMENTED`: in process, a generated `from_service` reaches only its own
//! service) and the server serves a GetOperation tool, it polls through that tool's transport
//! instead. Then:
//!
//! - a `response` is unpacked into the result, as the JSON of the declared `response_type`;
//! - an `error` is an `isError` result with the status and its decoded details;
//! - an operation still running when the call's deadline passes is not a failure: the result
//!   holds it under [`PENDING_OPERATION_KEY`] (its `name` and latest `metadata`), and the text
//!   says how to redeem it, naming the server's GetOperation tool when one is served.
//!
//! A call cancelled while it waits (a client's cancellation, or `tasks/cancel`) calls
//! `CancelOperation` with the operation's name.
//!
//! On a server with a task key, a task-augmented call stops waiting once the RPC answered (or
//! after the inline wait, [`Started::detaching`]) and leaves the operation to a task whose
//! signed id names it (`tonic-mcp-tasks`' operation tasks): that task reads the operation with
//! [`look`], one GetOperation through the same transports, made into the same result, and
//! cancels it with [`cancel`].

use std::{
    borrow::Cow,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures_util::StreamExt as _;
use prost::Message as _;
use prost_reflect::MessageDescriptor;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tonic::{Code, Status, metadata::MetadataMap};
use tonic_mcp_codec::{Response, ToJsonOptions};
use tonic_mcp_schema::{json_schema::PENDING_OPERATION_KEY, tools::OPERATION};
use tracing::Instrument as _;

use crate::{
    call::outcome::{Outcome, answered, error_result, local_failure, structured_result},
    call::progress::Progress,
    grpc::status::describe_status,
    grpc::{Invocation, MessageLimits},
    observe::{observer::CallObserver, telemetry},
    sync::lock,
    tool::long_running::{LongRunning, Operations},
};

/// The wait before the first GetOperation.
pub const FIRST_POLL: Duration = Duration::from_millis(200);

/// The longest wait between two GetOperation calls.
pub const LONGEST_POLL: Duration = Duration::from_secs(5);

/// How long `CancelOperation` may take when a waiting call is cancelled.
const CANCEL_DEADLINE: Duration = Duration::from_secs(5);

/// The server's GetOperation tool: named in what waiting tools say about redeeming an
/// operation, and polled through when a waiting tool's own transport does not serve
/// `google.longrunning.Operations`.
pub(crate) struct Redeemer {
    pub(crate) tool: String,
    pub(crate) operations: Arc<Operations>,
}

/// Calls `CancelOperation` for `name` through the tool's own transport, or through the
/// served GetOperation tool's (`redeemer`) when the own one answers `UNIMPLEMENTED`, as
/// polling does; failures are logged, not reported (the call is already cancelled).
pub(crate) async fn cancel(
    lro: &LongRunning,
    redeemer: Option<&Redeemer>,
    name: String,
    metadata: MetadataMap,
    observers: &[Arc<dyn CallObserver>],
) {
    let request = by_name(&name);
    let cancelled = async {
        match cancel_through(&lro.own, request.clone(), metadata.clone(), observers).await {
            Err(status)
                if status.code() == Code::Unimplemented
                    && let Some(redeemer) = redeemer =>
            {
                cancel_through(&redeemer.operations, request, metadata, observers).await
            }
            cancelled => cancelled,
        }
    };
    match tokio::time::timeout(CANCEL_DEADLINE, cancelled).await {
        Ok(Ok(())) => tracing::debug!(operation = %name, "operation cancelled"),
        Ok(Err(status)) => {
            tracing::warn!(operation = %name, code = ?status.code(), "CancelOperation failed");
        }
        Err(_) => tracing::warn!(operation = %name, "CancelOperation timed out"),
    }
}

/// One CancelOperation through `via`.
async fn cancel_through(
    via: &Operations,
    request: Bytes,
    metadata: MetadataMap,
    observers: &[Arc<dyn CallObserver>],
) -> Result<(), Status> {
    let mut invocation = Invocation {
        requests: vec![request],
        metadata,
        timeout: CANCEL_DEADLINE,
        limits: MessageLimits::default(),
    };
    let span = telemetry::grpc_span(via.cancel.path.path());
    telemetry::grpc_starting(observers, &span, &mut invocation.metadata);
    let result = async {
        let mut stream = via.cancel.call(invocation).await?;
        match stream.next().await {
            Some(Err(status)) => Err(status),
            _ => Ok(()),
        }
    }
    .instrument(span.clone())
    .await;
    telemetry::record_grpc(
        &span,
        result.as_ref().map_or_else(Status::code, |()| Code::Ok),
    );
    result
}

/// Where a waiting call records its operation (name, and the call's gRPC metadata), so that a
/// cancellation can cancel the operation too. A call made to become a task that waits on the
/// backend's state ([`Started::detaching`]) stops waiting at a set instant and records that it
/// did: the operation goes on, and the task answers for it.
#[derive(Clone, Default)]
pub(crate) struct Started(Arc<Mutex<Slot>>);

#[derive(Default)]
struct Slot {
    operation: Option<(String, MetadataMap)>,
    /// When the wait stops with the operation still running, if it does.
    detach_at: Option<Instant>,
    detached: bool,
}

impl Started {
    /// A slot whose call stops waiting `after` from now, leaving the operation running
    /// ([`detached`](Self::detached)). `Duration::ZERO`: right after the RPC's first answer.
    pub(crate) fn detaching(after: Duration) -> Self {
        Self(Arc::new(Mutex::new(Slot {
            detach_at: Some(Instant::now() + after),
            ..Slot::default()
        })))
    }

    fn set(&self, name: &str, metadata: &MetadataMap) {
        let mut slot = lock(&self.0);
        if slot.operation.is_none() {
            slot.operation = Some((name.to_owned(), metadata.clone()));
        }
    }

    /// The operation, once; `None` when the call had none running.
    pub(crate) fn take(&self) -> Option<(String, MetadataMap)> {
        lock(&self.0).operation.take()
    }

    /// The operation the call stopped waiting for, still running, when it was made
    /// [`detaching`](Self::detaching) and stopped so; `None` when the call ended otherwise.
    pub(crate) fn detached(&self) -> Option<(String, MetadataMap)> {
        let slot = lock(&self.0);
        slot.detached.then(|| slot.operation.clone()).flatten()
    }

    /// Forgets the operation: it finished, so there is nothing to cancel.
    fn clear(&self) {
        lock(&self.0).operation = None;
    }
}

/// Everything [`wait`] needs besides the operation.
pub(crate) struct Wait<'a> {
    pub(crate) lro: &'a LongRunning,
    pub(crate) output_omitted: &'a [Cow<'static, str>],
    pub(crate) options: ToJsonOptions,
    pub(crate) deadline: Instant,
    pub(crate) timeout: Duration,
    pub(crate) metadata: MetadataMap,
    /// The RPC's message limits, for the polls too (an operation holds the response).
    pub(crate) limits: MessageLimits,
    pub(crate) progress: Option<Progress>,
    pub(crate) started: Started,
    /// The server's GetOperation tool, if it serves one.
    pub(crate) redeemer: Option<&'a Redeemer>,
    /// What is told of each poll.
    pub(crate) observers: &'a [Arc<dyn CallObserver>],
    /// The result budget in bytes of JSON, which the unpacked response counts toward.
    pub(crate) budget: usize,
    /// The RPC's request type, whose limit fields a refusal over the budget names.
    pub(crate) input: &'a MessageDescriptor,
}

/// Waits for the operation the RPC answered with (`first`, encoded) and makes the result.
pub(crate) async fn wait(wait: Wait<'_>, first: Bytes) -> Outcome {
    let mut operation = match decode(first, "the backend's response") {
        Ok(operation) => operation,
        Err(message) => return local_failure(Code::Internal, message),
    };
    let mut delay = FIRST_POLL;
    let mut polls = 0usize;
    let mut via: &Operations = &wait.lro.own;
    loop {
        let name = std::mem::take(&mut operation.name);
        if operation.done {
            wait.started.clear();
            return finished(&wait, &name, operation);
        }
        if name.is_empty() {
            return local_failure(
                Code::Internal,
                "the backend returned a running operation without a name, which cannot be \
                 polled"
                    .to_owned(),
            );
        }
        wait.started.set(&name, &wait.metadata);
        let metadata = metadata_json(&wait, &operation);
        if let Some(progress) = &wait.progress {
            progress
                .report(polls, running_text(&name, metadata.as_ref()))
                .await;
        }
        // The wait ends at the deadline; before it, a call made to become a task stops at its
        // detach instant: the operation goes on, and the task answers for it by asking the
        // backend (`tonic-mcp-tasks`' operation tasks).
        let detach_at = lock(&wait.started.0).detach_at;
        let ends = |now: Instant| {
            let detaches = now < wait.deadline && detach_at.is_some_and(|at| now >= at);
            if detaches {
                lock(&wait.started.0).detached = true;
            }
            detaches || now >= wait.deadline
        };
        let now = Instant::now();
        if ends(now) {
            return pending(&wait, &name, metadata);
        }
        let until = detach_at.map_or(wait.deadline, |at| at.min(wait.deadline));
        tokio::time::sleep(delay.min(until - now)).await;
        if ends(Instant::now()) {
            return pending(&wait, &name, metadata);
        }
        delay = (delay * 3 / 2).min(LONGEST_POLL);
        polls += 1;
        match poll_through(&wait, &mut via, &name).await {
            Ok(Some(bytes)) => match decode(bytes, "GetOperation's answer") {
                Ok(next) => operation = next,
                Err(message) => return local_failure(Code::Internal, message),
            },
            Ok(None) => return pending(&wait, &name, metadata),
            Err(status) => {
                let text = poll_failure_text(&wait, via, &name, &status);
                return answered(error_result(text), status.code());
            }
        }
    }
}

/// One GetOperation through `*via`, the tool's own transport at first: when that answers
/// `UNIMPLEMENTED` and the server serves a GetOperation tool, through that tool's transport,
/// which `*via` then is for the polls to come.
async fn poll_through<'a>(
    wait: &Wait<'a>,
    via: &mut &'a Operations,
    name: &str,
) -> Result<Option<Bytes>, Status> {
    let answer = poll(wait, via, name).await;
    if let Err(status) = &answer
        && status.code() == Code::Unimplemented
        && let Some(redeemer) = wait.redeemer
        && !std::ptr::eq(*via, &*redeemer.operations)
    {
        tracing::debug!(
            operation = %name,
            through = %redeemer.tool,
            "polling through the served GetOperation tool"
        );
        *via = &redeemer.operations;
        return poll(wait, via, name).await;
    }
    answer
}

/// What the progress of a call waiting for the running operation `name` says, with its latest
/// `metadata`: also the status message of a task that waits on it.
pub(crate) fn running_text(name: &str, metadata: Option<&Value>) -> String {
    match metadata {
        Some(metadata) => format!("operation {name} running: {metadata}"),
        None => format!("operation {name} running"),
    }
}

/// What one GetOperation told of an operation ([`look`]).
pub(crate) enum Look {
    /// Not done yet: its latest metadata, as JSON, if it has any.
    Running(Option<Value>),
    /// Done: the result a waiting call ends with (its unpacked response, or its error as an
    /// `isError` result), exactly as [`wait`] makes it.
    Done(Outcome),
    /// GetOperation failed (or the deadline passed first): the status, and what to tell.
    Unanswered(Status, String),
}

/// One GetOperation of the operation `name` (through the same transports as [`wait`]), read
/// as a waiting call reads it: for a task that answers for an operation from the backend's
/// state, on any replica.
pub(crate) async fn look(wait: &Wait<'_>, name: &str) -> Look {
    let mut via: &Operations = &wait.lro.own;
    let status = match poll_through(wait, &mut via, name).await {
        Ok(Some(bytes)) => {
            return match decode(bytes, "GetOperation's answer") {
                Ok(operation) if operation.done => Look::Done(finished(wait, name, operation)),
                Ok(operation) => Look::Running(metadata_json(wait, &operation)),
                Err(message) => Look::Done(local_failure(Code::Internal, message)),
            };
        }
        Ok(None) => Status::deadline_exceeded("GetOperation did not answer in time"),
        Err(status) => status,
    };
    let text = poll_failure_text(wait, via, name, &status);
    Look::Unanswered(status, text)
}

/// The operation `what` (the RPC's response, GetOperation's answer) encodes, or why the bytes
/// are not one.
fn decode(bytes: Bytes, what: &str) -> Result<Operation, String> {
    Operation::decode(bytes).map_err(|e| format!("{what} could not be decoded as {OPERATION}: {e}"))
}

/// One GetOperation through `via`, within what is left of the deadline: the encoded operation,
/// or `Ok(None)` when the deadline passed first.
async fn poll(wait: &Wait<'_>, via: &Operations, name: &str) -> Result<Option<Bytes>, Status> {
    let remaining = wait.deadline.saturating_duration_since(Instant::now());
    let mut invocation = Invocation {
        requests: vec![by_name(name)],
        metadata: wait.metadata.clone(),
        timeout: remaining,
        limits: wait.limits,
    };
    let span = telemetry::grpc_span(via.get.path.path());
    telemetry::grpc_starting(wait.observers, &span, &mut invocation.metadata);
    let answer = tokio::time::timeout(remaining, async {
        let mut stream = via.get.call(invocation).await?;
        match stream.next().await {
            Some(answer) => answer,
            None => Err(Status::internal("GetOperation returned no message")),
        }
    })
    .instrument(span.clone())
    .await;
    telemetry::record_grpc(
        &span,
        match &answer {
            Ok(Ok(_)) => Code::Ok,
            Ok(Err(status)) => status.code(),
            Err(_) => Code::DeadlineExceeded,
        },
    );
    match answer {
        Err(_) => Ok(None),
        Ok(Err(status))
            if matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled)
                && Instant::now() >= wait.deadline =>
        {
            Ok(None)
        }
        Ok(answer) => answer.map(Some),
    }
}

/// What to tell when GetOperation through `via` failed with `status`.
fn poll_failure_text(wait: &Wait<'_>, via: &Operations, name: &str, status: &Status) -> String {
    let advice = if status.code() == Code::Unimplemented {
        let transports = match wait.redeemer {
            Some(redeemer) if std::ptr::eq(via, &*redeemer.operations) => format!(
                "Neither this tool's transport nor that of the tool `{}` serves",
                redeemer.tool
            ),
            _ => "This tool's transport does not serve".to_owned(),
        };
        format!(
            "{transports} google.longrunning.Operations, so this tool cannot wait. In process, \
             serve the Operations tools in the same MCP server (the generated `from_service` of \
             google.longrunning.Operations), or both services through one \
             `tonic::service::Routes` and `from_channel`; otherwise generate the tool with \
             `(rust_mcp.tool).long_running: LONG_RUNNING_OPERATION` or the plugin option \
             `long_running=operation`."
        )
    } else {
        "The operation may still be running; get it again with GetOperation and its name."
            .to_owned()
    };
    format!(
        "Waiting for the operation `{name}` failed: GetOperation answered {}. {advice}",
        describe_status(status)
    )
}

/// The result of a finished operation: its unpacked response, or its error.
fn finished(wait: &Wait<'_>, name: &str, operation: Operation) -> Outcome {
    let any = match operation.result {
        Some(OperationResult::Error(error)) => {
            let code = Code::from_i32(error.code);
            let status = Status::with_details(
                code,
                error.message.clone(),
                Bytes::from(error.encode_to_vec()),
            );
            let text = format!(
                "The operation `{name}` failed: {}",
                describe_status(&status)
            );
            return answered(error_result(text), code);
        }
        Some(OperationResult::Response(any)) => {
            let declared = wait.lro.response.full_name();
            let packed = packed_type(&any);
            if packed != declared {
                return local_failure(
                    Code::Internal,
                    format!(
                        "the operation `{name}` finished with a `{packed}` response; the tool \
                         declares `{declared}`"
                    ),
                );
            }
            any
        }
        // A done operation without a result: the response's defaults.
        None => prost_types::Any::default(),
    };
    let response = Response {
        output: &wait.lro.response,
        plans: Some(&wait.lro.plans),
        omitted: wait.output_omitted,
        options: wait.options,
        streaming: false,
    };
    match response.decode(&Bytes::from(any.value)) {
        Ok(value) => structured_result(value, wait.budget, wait.input, &wait.lro.response),
        Err(e) => local_failure(
            Code::Internal,
            format!("the operation `{name}` finished, but {e}"),
        ),
    }
}

/// The result of an operation still running at the deadline.
fn pending(wait: &Wait<'_>, name: &str, metadata: Option<Value>) -> Outcome {
    // It was not cancelled: nothing to cancel if the caller goes away now (a detached call
    // keeps it: its task answers for it).
    if !lock(&wait.started.0).detached {
        wait.started.clear();
    }
    let mut operation = json!({ "name": name });
    let redeem = match wait.redeemer {
        Some(redeemer) => format!("call the tool `{}` with {operation}", redeemer.tool),
        None => format!("call google.longrunning.Operations/GetOperation with {operation}"),
    };
    if let Some(metadata) = metadata {
        operation["metadata"] = metadata;
    }
    let text = format!(
        "The operation `{name}` is still running: the call's deadline of {} ms passed before it \
         finished. It was not cancelled and goes on. Do not call this tool again; to get its \
         result later, {redeem}.",
        wait.timeout.as_millis()
    );
    let mut result = CallToolResult::structured(json!({ PENDING_OPERATION_KEY: operation }));
    result.content.insert(0, ContentBlock::text(text));
    answered(result, Code::Ok)
}

/// The operation's metadata as JSON: unpacked when it holds the declared type, else the packed
/// `Any` as the tool's JSON shows one; `None` when the operation has none.
fn metadata_json(wait: &Wait<'_>, operation: &Operation) -> Option<Value> {
    let any = operation.metadata.as_ref()?;
    let json = |output: &MessageDescriptor, bytes: Vec<u8>, streaming: bool| {
        let response = Response {
            output,
            plans: None,
            omitted: &[],
            options: wait.options,
            streaming,
        };
        response.decode(&Bytes::from(bytes)).ok()
    };
    if let Some(descriptor) = &wait.lro.metadata
        && packed_type(any) == descriptor.full_name()
        && let Some(value) = json(descriptor, any.value.clone(), false)
    {
        return Some(value);
    }
    json(&wait.lro.any, any.encode_to_vec(), true)
}

/// The full name of the type `any` holds: its type URL's last segment.
fn packed_type(any: &prost_types::Any) -> &str {
    any.type_url.rsplit('/').next().unwrap_or_default()
}

/// A `GetOperationRequest` or `CancelOperationRequest` (the same shape) of the operation `name`.
fn by_name(name: &str) -> Bytes {
    Bytes::from(
        OperationName {
            name: name.to_owned(),
        }
        .encode_to_vec(),
    )
}

/// `google.longrunning.Operation`: what a waiting call reads of it.
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

/// `google.longrunning.Operation.result`.
#[derive(Clone, PartialEq, prost::Oneof)]
enum OperationResult {
    #[prost(message, tag = "4")]
    Error(tonic_types::Status),
    #[prost(message, tag = "5")]
    Response(prost_types::Any),
}

/// `google.longrunning.GetOperationRequest` and `CancelOperationRequest`.
#[derive(Clone, PartialEq, prost::Message)]
struct OperationName {
    #[prost(string, tag = "1")]
    name: String,
}
