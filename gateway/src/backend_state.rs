//! Whether the target answers, logged at `info` once per change of state.
//!
//! The channel to the target connects lazily and reconnects by itself, so a backend that goes
//! down shows only as failed calls. [`Watched`] wraps the channel: the first call that fails in
//! the transport (refused connection, DNS, TLS, a reset) logs the target and the cause, and the
//! first call that goes through after that logs that the target answers again. Calls that reach
//! the server and get a gRPC status are answers: the backend is up.

use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};

/// The `mcp_backend_up` series of one backend.
#[derive(Debug)]
pub(crate) struct Up {
    pub(crate) family: prometheus::IntGaugeVec,
    /// `backend` and `target`.
    pub(crate) labels: [String; 2],
}

impl Up {
    fn set(&self, value: i64) {
        let [backend, target] = &self.labels;
        self.family.with_label_values(&[backend, target]).set(value);
    }
}

/// The target's state as the calls have seen it.
#[derive(Debug)]
struct BackendState {
    target: String,
    /// [`UNKNOWN`], [`UP`] or [`DOWN`].
    state: AtomicU8,
    /// `mcp_backend_up` and this backend's labels: 1 up, 0 down, no series until known.
    up: Option<Up>,
}

const UNKNOWN: u8 = 0;
const UP: u8 = 1;
const DOWN: u8 = 2;

impl BackendState {
    fn answered(&self) {
        if let Some(up) = &self.up {
            up.set(1);
        }
        if self.state.swap(UP, Ordering::AcqRel) == DOWN {
            tracing::info!(target_url = %self.target, "the gRPC target answers again");
        }
    }

    fn failed(&self, error: &(dyn std::error::Error + 'static)) {
        if let Some(up) = &self.up {
            up.set(0);
        }
        if self.state.swap(DOWN, Ordering::AcqRel) != DOWN {
            tracing::info!(
                target_url = %self.target,
                cause = %causes(error),
                "the gRPC target cannot be reached; calls fail until it answers"
            );
        }
    }
}

/// `error` and its sources, outermost first, each once.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            let _ = write!(text, ": {cause_text}");
        }
        source = cause.source();
    }
    text
}

/// A transport that reports the target's state changes (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Watched<S> {
    inner: S,
    state: Arc<BackendState>,
}

impl<S> Watched<S> {
    /// Wraps `inner`, a transport to `target` (the URL, as logged); `up` is set to 1 or 0 as
    /// calls go through or fail.
    pub(crate) fn new(inner: S, target: impl Into<String>, up: Option<Up>) -> Self {
        Self {
            inner,
            state: Arc::new(BackendState {
                target: target.into(),
                state: AtomicU8::new(UNKNOWN),
                up,
            }),
        }
    }

    /// The target answered outside a call (its reflection, at start).
    pub(crate) fn answered(&self) {
        self.state.answered();
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

impl<S, Request> tower_service::Service<Request> for Watched<S>
where
    S: tower_service::Service<Request>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match self.inner.poll_ready(cx) {
            Poll::Ready(Err(error)) => {
                let error = error.into();
                self.state.failed(error.as_ref());
                Poll::Ready(Err(error))
            }
            other => other.map_err(Into::into),
        }
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let call = self.inner.call(request);
        let state = Arc::clone(&self.state);
        Box::pin(async move {
            match call.await {
                Ok(response) => {
                    state.answered();
                    Ok(response)
                }
                Err(error) => {
                    let error = error.into();
                    state.failed(error.as_ref());
                    Err(error)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("transport error")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn causes_walk_the_source_chain() {
        let error = Outer(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        ));
        assert_eq!(
            causes(&error),
            "transport error: Connection refused (os error 111)"
        );
    }
}
