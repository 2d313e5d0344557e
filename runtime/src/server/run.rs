//! One tool call of a registered tool: its telemetry span, cancellation, a long-running
//! operation cancelled with it, and the metrics it records.

use std::time::Instant;

use rmcp::{
    RoleServer,
    model::{CallToolResult, JsonObject},
    service::RequestContext,
};
use tonic::Code;
use tracing::Instrument as _;

use super::{McpServer, catalog::Found};
use crate::{
    call::arguments_text,
    call::collect::Stop,
    call::facts::ArgumentsText,
    call::longrunning::{self, Started},
    call::outcome::{self, Outcome},
    call::progress::Progress,
    call::structured_text::Structured,
    call::{self, Call, CallArguments, FromTransport},
    observe::telemetry,
    tool::context::CallContext,
};

/// What cancelling a call does.
pub(crate) enum Cancel<'a, F> {
    /// The call is dropped when `F` resolves, and its result is lost (`None`).
    Drop(F),
    /// The collection of the response stream stops when the signal fires, and the call
    /// returns what it received, truncated.
    Stop(Stop<'a>),
}

impl McpServer {
    /// [`run_registered`](Self::run_registered) in `context`'s request, with the arguments
    /// `map` or the text the transport kept: progress to the request's token, a cancel of the
    /// request drops the call.
    pub(super) async fn run_in_request(
        &self,
        registered: &Found,
        map: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
        structured: Structured,
        started: Option<Started>,
    ) -> Option<Outcome> {
        let text = arguments_text::kept(&context.extensions);
        self.run_registered(
            registered,
            FromTransport {
                arguments: arguments(map, text),
                structured,
            },
            context.extensions.get::<http::request::Parts>(),
            &context.meta.0.0,
            Progress::of_request(context),
            Cancel::Drop(context.ct.cancelled()),
            started,
        )
        .await
    }

    /// One call of a registered tool in its telemetry span, directly or in a task. `None` when
    /// `cancelled` resolved first: dropping the call future drops the in-flight tonic call,
    /// which cancels the RPC (RST_STREAM over HTTP/2, or the handler future in-process). A
    /// waiting tool's call records the operation it waits for in `started` (which may stop the
    /// wait early: [`Started::detaching`]), a new one when `None`.
    #[allow(clippy::too_many_arguments, reason = "a call and where it comes from")]
    pub(crate) async fn run_registered(
        &self,
        registered: &Found,
        given: FromTransport<'_>,
        http: Option<&http::request::Parts>,
        meta: &rmcp::model::JsonObject,
        progress: Option<Progress>,
        cancel: Cancel<'_, impl std::future::Future<Output = ()>>,
        started: Option<Started>,
    ) -> Option<Outcome> {
        // Only a tool that waits for an operation has one to cancel.
        let started = started.or_else(|| registered.entry.tool.waits().then(Started::default));
        let (stop, dropped) = match cancel {
            Cancel::Drop(cancelled) => (None, Some(cancelled)),
            Cancel::Stop(stop) => (Some(stop), None),
        };
        let cancelled = async move {
            match dropped {
                Some(cancelled) => cancelled.await,
                None => std::future::pending().await,
            }
        };
        let def = &registered.entry.tool.def;
        let _in_flight = InFlight::enter(&self.inner.in_flight);
        let catalog = &registered.catalog;
        let span = telemetry::tool_call_span(&registered.entry.name, &def.rpc_path);
        let context = CallContext {
            tool: &registered.entry.name,
            rpc_path: &def.rpc_path,
            http,
            meta,
        };
        for observer in &self.inner.observers {
            observer.call_started(&context, &span);
        }
        let started_at = Instant::now();
        let call = Call {
            tool: &registered.entry.tool,
            set: &registered.set,
            server_hooks: &self.inner.hooks,
            limits: self.inner.limits,
            context,
            progress,
            started: started.clone(),
            redeemer: catalog.redeemer.as_ref(),
            types: &catalog.types,
            stop,
            observers: &self.inner.observers,
            structured: given.structured,
        };
        let outcome = tokio::select! {
            biased;
            () = cancelled => None,
            outcome = call::run(call, given.arguments).instrument(span.clone()) => Some(outcome),
        };
        // A call cancelled while it waited for a long-running operation cancels the operation.
        if outcome.is_none()
            && let Some(lro) = registered
                .entry
                .tool
                .types()
                .ok()
                .and_then(|types| types.long_running.as_deref())
            && let Some((name, metadata)) = started.as_ref().and_then(Started::take)
        {
            longrunning::cancel(
                lro,
                catalog.redeemer.as_ref(),
                name,
                metadata,
                &self.inner.observers,
            )
            .instrument(span.clone())
            .await;
        }
        for observer in &self.inner.observers {
            observer.call_ended(
                &registered.entry.name,
                outcome.as_ref().map(|outcome| &outcome.result),
                started_at.elapsed(),
            );
        }
        let elapsed = u64::try_from(started_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        telemetry::record_tool_call(
            &span,
            outcome.as_ref().map_or("CANCELLED", outcome::outcome_code),
            outcome
                .as_ref()
                .is_none_or(|outcome| outcome.result.is_error == Some(true)),
            elapsed,
        );
        span.in_scope(|| tracing::debug!("tool call finished"));
        outcome
    }
}

/// Counts a tool call in flight while alive.
struct InFlight<'a>(&'a tokio::sync::watch::Sender<usize>);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a tokio::sync::watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Self(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A call's arguments: the text a transport kept, else the parsed map.
pub(super) fn arguments(
    map: Option<JsonObject>,
    text: Option<&ArgumentsText>,
) -> CallArguments<'_> {
    match (map, text) {
        (None, Some(ArgumentsText(text))) => CallArguments::Text(text),
        (map, _) => CallArguments::Map(map),
    }
}

/// The result of a call cancelled by the client (or with its task).
pub fn cancelled_result() -> CallToolResult {
    outcome::local_failure(Code::Cancelled, "the call was cancelled").result
}
