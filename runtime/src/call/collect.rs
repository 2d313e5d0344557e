//! Collecting what the backend sends within the call's deadline and message bound: a stream
//! of responses ends as truncation at the deadline (or the window and bound a call asks for,
//! or a stop signal), a unary response is an error past it.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use tonic::{Code, Status};

use crate::{call::progress::Progress, grpc::Invocation, tool::toolset::CompiledTool};

/// A signal that ends the collection of a response stream (see `Call::stop`).
pub(crate) type Stop<'a> = std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// What came back from the backend.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) messages: Vec<Bytes>,
    pub(crate) truncated: bool,
    pub(crate) error: Option<Status>,
}

/// How much longer than the tool's deadline a streaming RPC's server is given (see
/// `call::run`): a tenth of the deadline, between 100 ms and 2 s.
pub(crate) fn stream_grace(timeout: Duration) -> Duration {
    (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(2))
}

/// How close to our deadline a stream may end with an error for the end to count as ours
/// (truncation): servers and proxies that got our deadline round it, and clocks differ.
const DEADLINE_MARGIN: Duration = Duration::from_millis(50);

fn deadline_status(timeout: Duration) -> Status {
    Status::deadline_exceeded(format!(
        "the call did not complete within its deadline of {} ms",
        timeout.as_millis()
    ))
}

/// Call the backend and collect its response(s) within the deadline and the message bound.
pub(crate) async fn collect(
    tool: &CompiledTool,
    invocation: Invocation,
    timeout: Duration,
    max_messages: u32,
    progress: Option<&Progress>,
    stop: Option<Stop<'_>>,
) -> Collected {
    let streaming = tool.def.kind.streams_responses();
    let stoppable = streaming && stop.is_some();
    let mut stop = stop
        .filter(|_| streaming)
        .unwrap_or_else(|| Box::pin(std::future::pending()));
    let deadline = Instant::now() + timeout;
    let tokio_deadline = tokio::time::Instant::from_std(deadline);
    let mut collected = Collected::default();
    // A transport may give up on its own timer in the same instant as ours; after the
    // deadline, its CANCELLED is reported as what it is.
    let settle = |status: Status| {
        if status.code() == Code::Cancelled && Instant::now() >= deadline {
            deadline_status(timeout)
        } else {
            status
        }
    };

    let starting = tokio::time::timeout_at(tokio_deadline, tool.endpoint.call(invocation));
    // Calls without a stop signal await directly: no `select!` on the per-call path.
    let started = if stoppable {
        tokio::select! {
            biased;
            () = &mut stop => {
                collected.truncated = true;
                return collected;
            }
            started = starting => started,
        }
    } else {
        starting.await
    };
    let mut stream = match started {
        // A stream that has not started by the deadline is an empty batch: the deadline
        // bounds a stream the way the message count does.
        Err(_) if streaming => {
            collected.truncated = true;
            return collected;
        }
        Err(_) => {
            collected.error = Some(deadline_status(timeout));
            return collected;
        }
        Ok(Err(status)) => {
            collected.error = Some(settle(status));
            return collected;
        }
        Ok(Ok(stream)) => stream,
    };

    loop {
        let receiving = tokio::time::timeout_at(tokio_deadline, stream.next());
        let next = if stoppable {
            tokio::select! {
                biased;
                // Stopped (a task cancelled): what was collected is the result, truncated.
                () = &mut stop => {
                    collected.truncated = true;
                    break;
                }
                next = receiving => next,
            }
        } else {
            receiving.await
        };
        match next {
            Err(_) => {
                if streaming {
                    collected.truncated = true;
                } else {
                    collected.error = Some(deadline_status(timeout));
                }
                break;
            }
            Ok(None) => break,
            Ok(Some(Ok(message))) => {
                collected.messages.push(message);
                let count = collected.messages.len();
                if let Some(progress) = progress.filter(|_| streaming) {
                    progress
                        .report(count, format!("received message {count}"))
                        .await;
                }
                if !streaming || count >= max_messages as usize {
                    collected.truncated = streaming;
                    break;
                }
            }
            Ok(Some(Err(status))) => {
                let status = settle(status);
                // A stream that ends with an error at our deadline, whatever status the
                // server gives that end (DEADLINE_EXCEEDED, or UNKNOWN "context deadline
                // exceeded"), ended because of the deadline: truncation, not an error.
                // An error well before the deadline is the RPC's own failure.
                let at_deadline = Instant::now() + DEADLINE_MARGIN >= deadline;
                if streaming && at_deadline {
                    collected.truncated = true;
                } else {
                    collected.error = Some(status);
                }
                break;
            }
        }
    }
    // Dropping the stream here cancels the RPC if it is still running (bound reached).
    drop(stream);
    collected
}
