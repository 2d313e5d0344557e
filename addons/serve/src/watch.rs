//! The per-connection bounds of [`ConnectionLimits`]: what a connection is doing, seen from its
//! socket ([`Watched`]) and its requests ([`InFlight`]), gives it a deadline
//! ([`Activity::deadline`]); a request body is bounded on its own ([`TimedBody`]).
//!
//! The rules (Go's `net/http` has the same split of `IdleTimeout` and `ReadHeaderTimeout`):
//! until its first request begins, a connection has `header_read_timeout` from its opening;
//! afterwards, with no request in flight, it has `idle_timeout` for the next request's first
//! byte and then `header_read_timeout` for that request's headers (HTTP/1; an HTTP/2 connection
//! reads pings and other frames between requests, so there `idle_timeout` runs until the
//! next request's headers). With a request in flight there is no deadline: the response takes
//! as long as it takes.
//!
//! hyper's own HTTP/1 `header_read_timeout` is not used: its timer starts when a connection
//! goes idle (so it would be the idle timeout too), and the automatic HTTP/1-or-2 builder reads
//! the first bytes to choose the protocol before hyper's timer exists, so a socket that sends
//! nothing would never be closed.

use std::error::Error as StdError;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::ConnectionLimits;

/// What an HTTP/2 connection sends first (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection's deadline depends on, shared by its socket, its requests and its task.
#[derive(Debug)]
pub(super) struct Activity {
    state: Mutex<State>,
    /// Wakes the connection's task when the deadline may have come closer (the task, woken
    /// at a deadline that has moved away, looks again then).
    changed: Notify,
    header_read_timeout: Duration,
    idle_timeout: Duration,
}

#[derive(Debug)]
struct State {
    /// Requests whose response has not ended.
    in_flight: usize,
    /// When the connection opened, or its last request ended.
    idle_since: Instant,
    /// Whether a request has begun: until then the headers are due `header_read_timeout`
    /// after the opening.
    served: bool,
    /// The first byte read since the last request ended (HTTP/1): the next request's.
    request_started: Option<Instant>,
    /// When the connection's task looks at the deadline next ([`Activity::arm`]).
    armed: Option<Instant>,
}

impl Activity {
    pub(super) fn new(limits: &ConnectionLimits) -> Self {
        Self {
            state: Mutex::new(State {
                in_flight: 0,
                idle_since: Instant::now(),
                served: false,
                request_started: None,
                armed: None,
            }),
            changed: Notify::new(),
            header_read_timeout: limits.header_read_timeout,
            idle_timeout: limits.idle_timeout,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the connection is to be closed, unless something happens first; `None` while a
    /// request is in flight (or for a bound too large to add).
    pub(super) fn deadline(&self) -> Option<Instant> {
        let state = self.state();
        if state.in_flight > 0 {
            None
        } else if !state.served {
            state.idle_since.checked_add(self.header_read_timeout)
        } else if let Some(started) = state.request_started {
            started.checked_add(self.header_read_timeout)
        } else {
            state.idle_since.checked_add(self.idle_timeout)
        }
    }

    /// When the connection's task is to look at the deadline next: the deadline, or while a
    /// request is in flight `idle_timeout` from now. The task is woken sooner only when the
    /// deadline comes closer than that ([`Activity::changed`]): a request's start moves it
    /// away, and its end sets it `idle_timeout` after now, never before a look armed while
    /// it was in flight. So a stream of keep-alive requests wakes the task on none of them.
    pub(super) fn arm(&self) -> Instant {
        let next = self
            .deadline()
            .unwrap_or_else(|| Instant::now() + self.idle_timeout);
        self.state().armed = Some(next);
        next
    }

    /// Resolves when the deadline has come closer than the last [`Activity::arm`].
    pub(super) async fn changed(&self) {
        self.changed.notified().await;
    }

    /// A request begins (its headers are in): no deadline until it ends. (The deadline moves
    /// away: the task needs no waking.)
    pub(super) fn begin(self: &Arc<Self>) -> InFlight {
        let mut state = self.state();
        state.in_flight += 1;
        state.served = true;
        state.request_started = None;
        InFlight(Arc::clone(self))
    }

    /// Bytes came in, on a connection known to speak HTTP/1 (or not yet known).
    fn read(&self) {
        let mut state = self.state();
        if state.in_flight == 0 && state.served && state.request_started.is_none() {
            let now = Instant::now();
            state.request_started = Some(now);
            let due = now.checked_add(self.header_read_timeout);
            if due.is_some_and(|due| state.armed.is_none_or(|armed| due < armed)) {
                self.changed.notify_one();
            }
        }
    }
}

/// A request in flight, from its headers to the end of its response (or until hyper drops
/// it, the connection gone).
#[derive(Debug)]
pub(super) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.in_flight -= 1;
        if state.in_flight == 0 {
            // The deadline becomes `idle_timeout` from now: no sooner than the look armed
            // while this request was in flight, so the task need not be woken.
            state.idle_since = Instant::now();
            state.request_started = None;
        }
    }
}

/// The protocol of a connection, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// This many bytes of the HTTP/2 preface came, and nothing else.
    Unknown(usize),
    Http1,
    Http2,
}

/// A connection's socket, telling its [`Activity`] when bytes come in.
#[derive(Debug)]
pub(super) struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
    protocol: Protocol,
}

impl<S> Watched<S> {
    pub(super) fn new(inner: S, activity: Arc<Activity>) -> Self {
        Self {
            inner,
            activity,
            protocol: Protocol::Unknown(0),
        }
    }

    fn received(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Protocol::Unknown(matched) = self.protocol {
            let expected = &H2_PREFACE[matched..];
            let n = bytes.len().min(expected.len());
            self.protocol = if bytes[..n] != expected[..n] {
                Protocol::Http1
            } else if matched + n == H2_PREFACE.len() {
                Protocol::Http2
            } else {
                Protocol::Unknown(matched + n)
            };
        }
        if self.protocol != Protocol::Http2 {
            self.activity.read();
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let this = &mut *self;
            this.received(&buf.filled()[before..]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response body that keeps its request [`InFlight`] until it ends.
#[derive(Debug)]
pub(super) struct Tracked<B> {
    inner: B,
    in_flight: Option<InFlight>,
}

impl<B> Tracked<B> {
    pub(super) fn new(inner: B, in_flight: InFlight) -> Self {
        Self {
            inner,
            in_flight: Some(in_flight),
        }
    }
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.in_flight = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that fails once a timeout has passed since the request's headers without its
/// end having come: what [`HttpServer::serve`](crate::HttpServer::serve) hands to its
/// service, over hyper's body, with
/// [`ConnectionLimits::body_read_timeout`](crate::ConnectionLimits::body_read_timeout).
#[derive(Debug)]
pub struct TimedBody<B> {
    inner: B,
    deadline: Option<Instant>,
    /// Made at the first wait: a body that comes with its headers needs no timer.
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    state: Arc<BodyState>,
}

/// What became of a [`TimedBody`], for the server to read once the response is made.
#[derive(Debug, Default)]
pub(super) struct BodyState {
    /// It failed for want of time.
    pub(super) timed_out: AtomicBool,
    /// It was read to its end (or had none).
    pub(super) ended: AtomicBool,
}

impl<B: Body> TimedBody<B> {
    pub(super) fn new(inner: B, timeout: Duration, state: Arc<BodyState>) -> Self {
        if inner.is_end_stream() {
            state.ended.store(true, Ordering::Relaxed);
        }
        Self {
            inner,
            deadline: Instant::now().checked_add(timeout),
            sleep: None,
            state,
        }
    }
}

/// Why a [`TimedBody`] failed.
#[derive(Debug)]
struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body was not received in time")
    }
}

impl StdError for BodyTimedOut {}

impl<B> Body for TimedBody<B>
where
    B: Body + Unpin,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn StdError + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                if frame.is_none() || this.inner.is_end_stream() {
                    this.deadline = None;
                    this.sleep = None;
                    this.state.ended.store(true, Ordering::Relaxed);
                }
                Poll::Ready(frame.map(|frame| frame.map_err(Into::into)))
            }
            Poll::Pending => {
                let Some(deadline) = this.deadline else {
                    return Poll::Pending;
                };
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.deadline = None;
                this.sleep = None;
                this.state.timed_out.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err(Box::new(BodyTimedOut))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    fn limits() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: 1,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(75),
        }
    }

    /// `deadline` is `bound` after an instant between `before` and now.
    fn due(activity: &Activity, before: Instant, bound: u64) {
        let deadline = activity.deadline().expect("a deadline");
        let bound = Duration::from_secs(bound);
        assert!(
            deadline >= before + bound && deadline <= Instant::now() + bound,
            "{deadline:?}"
        );
    }

    #[test]
    fn the_deadline_follows_the_requests() {
        let opened = Instant::now();
        let activity = Arc::new(Activity::new(&limits()));
        // The first request's headers are due 10 s after the opening, bytes or not.
        due(&activity, opened, 10);
        let mut socket = Watched::new(tokio::io::empty(), Arc::clone(&activity));
        socket.received(b"POST /mcp HTTP/1.1\r\n");
        due(&activity, opened, 10);
        assert!(activity.deadline() <= Some(Instant::now() + Duration::from_secs(10)));
        // In flight: none.
        let request = activity.begin();
        let second = activity.begin();
        assert_eq!(activity.deadline(), None);
        drop(request);
        assert_eq!(activity.deadline(), None);
        let ended = Instant::now();
        drop(second);
        // Idle: 75 s for the next request's first byte, then 10 s for its headers.
        due(&activity, ended, 75);
        let first_byte = Instant::now();
        socket.received(b"P");
        due(&activity, first_byte, 10);
        let deadline = activity.deadline();
        socket.received(b"OST");
        assert_eq!(activity.deadline(), deadline, "later bytes do not move it");
    }

    #[test]
    fn http2_frames_between_requests_are_not_a_request() {
        let activity = Arc::new(Activity::new(&limits()));
        let mut socket = Watched::new(tokio::io::empty(), Arc::clone(&activity));
        // The preface, in two pieces.
        socket.received(&H2_PREFACE[..5]);
        assert_eq!(socket.protocol, Protocol::Unknown(5));
        socket.received(&H2_PREFACE[5..]);
        assert_eq!(socket.protocol, Protocol::Http2);
        let ended = Instant::now();
        drop(activity.begin());
        socket.received(b"\0\0\x08\x06\x01\0\0\0\0ping ack");
        due(&activity, ended, 75);
        // Anything else is HTTP/1.
        let mut other = Watched::new(tokio::io::empty(), Arc::clone(&activity));
        other.received(b"PRI * HTTP/1.1");
        assert_eq!(other.protocol, Protocol::Http1);
    }

    /// A body of `chunks`, then nothing, ever.
    fn stalled(
        chunks: &[&'static str],
    ) -> impl Body<Data = bytes::Bytes, Error = std::convert::Infallible> + Unpin {
        use futures_util::StreamExt as _;
        let frames: Vec<Result<Frame<bytes::Bytes>, std::convert::Infallible>> = chunks
            .iter()
            .map(|chunk| Ok(Frame::data(bytes::Bytes::from_static(chunk.as_bytes()))))
            .collect();
        http_body_util::StreamBody::new(
            futures_util::stream::iter(frames).chain(futures_util::stream::pending()),
        )
    }

    #[tokio::test]
    async fn a_body_that_does_not_come_in_time_fails() {
        let state = Arc::new(BodyState::default());
        let mut body = TimedBody::new(
            stalled(&["a"]),
            Duration::from_millis(50),
            Arc::clone(&state),
        );
        let frame = body.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), "a");
        assert!(!state.timed_out.load(Ordering::Relaxed));
        let error = body.frame().await.unwrap().unwrap_err();
        assert!(
            error.to_string().contains("not received in time"),
            "{error}"
        );
        assert!(state.timed_out.load(Ordering::Relaxed));
        assert!(!state.ended.load(Ordering::Relaxed));
        // A body that ends in time is not cut, and is seen to end.
        let state = Arc::new(BodyState::default());
        let body = TimedBody::new(
            http_body_util::Full::new(bytes::Bytes::from_static(b"whole")),
            Duration::from_millis(50),
            Arc::clone(&state),
        );
        assert!(!state.ended.load(Ordering::Relaxed));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(body.collect().await.unwrap().to_bytes(), "whole");
        assert!(!state.timed_out.load(Ordering::Relaxed));
        assert!(state.ended.load(Ordering::Relaxed));
        // No body at all has ended from the start.
        let state = Arc::new(BodyState::default());
        let _body = TimedBody::new(
            http_body_util::Empty::<bytes::Bytes>::new(),
            Duration::from_millis(50),
            Arc::clone(&state),
        );
        assert!(state.ended.load(Ordering::Relaxed));
    }
}
