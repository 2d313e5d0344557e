//! The request stream handed to client-streaming and bidi RPCs.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use futures_core::Stream;

/// The messages of a client-streaming or bidi tool call, sent to tonic as a request stream.
///
/// Tool calls have batch semantics: every message is decoded from the tool arguments before
/// the RPC starts, and the stream yields them in order. tonic client methods accept it
/// through `IntoStreamingRequest`.
///
/// ```
/// use futures_core::Stream as _;
/// use tonic_mcp::codegen::MessageStream;
///
/// let stream = MessageStream::new(vec![1, 2, 3]);
/// assert_eq!(stream.size_hint(), (3, Some(3)));
/// ```
#[derive(Debug)]
pub struct MessageStream<T> {
    messages: std::vec::IntoIter<T>,
}

impl<T> MessageStream<T> {
    /// A stream that yields `messages` in order, then ends.
    pub fn new(messages: Vec<T>) -> Self {
        Self {
            messages: messages.into_iter(),
        }
    }
}

// Nothing is pinned structurally: the stream only moves messages out of a Vec iterator.
impl<T> Unpin for MessageStream<T> {}

impl<T> Stream for MessageStream<T> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<T>> {
        Poll::Ready(self.get_mut().messages.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.messages.size_hint()
    }
}
