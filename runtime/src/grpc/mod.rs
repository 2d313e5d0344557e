//! Forwarding at the gRPC level: one type-erased transport, a codec for already-encoded
//! messages, and the call for each RPC kind. Nothing here is generic per RPC, and no prost type
//! is built: requests are the bytes the codec encoded, responses the bytes the server sent.

pub(crate) mod status;
pub(crate) mod transport;

use std::{
    borrow::Cow,
    fmt,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use bytes::{Buf as _, BufMut as _, Bytes};
use futures_core::Stream;
use futures_util::future::BoxFuture;
use http::uri::PathAndQuery;
use tonic::{
    Status,
    body::Body,
    client::{Grpc, GrpcService},
    codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder},
    metadata::MetadataMap,
};

use tonic_mcp_schema::RpcKind;

use crate::grpc::transport::{StdError, Transport};

/// Any tonic [`Transport`], type-erased once so that tool sets and calls are not generic.
///
/// Generated constructors box their transport with [`BoxTransport::new`] and hand it to
/// [`tool_set`](crate::codegen::tool_set). Each call clones the inner transport (cheap for a
/// `Channel`, an `InterceptedService` or a generated server), waits until it is ready, and sends
/// the request.
#[derive(Clone)]
pub struct BoxTransport {
    /// Sends one request on a clone of the transport, once that clone is ready.
    send: Arc<dyn Fn(http::Request<Body>) -> TransportFuture + Send + Sync>,
}

type TransportFuture = BoxFuture<'static, Result<http::Response<Body>, StdError>>;

impl fmt::Debug for BoxTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoxTransport").finish_non_exhaustive()
    }
}

impl BoxTransport {
    /// Box `transport`: a `tonic::transport::Channel`, an `InterceptedService`, a generated
    /// `XxxServer<S>` used in process, or any other [`Transport`].
    pub fn new<T: Transport>(transport: T) -> Self {
        Self {
            send: Arc::new(move |request| {
                let mut service = transport.clone();
                Box::pin(async move {
                    std::future::poll_fn(|cx| GrpcService::poll_ready(&mut service, cx))
                        .await
                        .map_err(Into::into)?;
                    let response = GrpcService::call(&mut service, request)
                        .await
                        .map_err(Into::into)?;
                    Ok(response.map(Body::new))
                })
            }),
        }
    }
}

impl tower_service::Service<http::Request<Body>> for BoxTransport {
    type Response = http::Response<Body>;
    type Error = StdError;
    type Future = TransportFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), StdError>> {
        // Readiness is awaited per call, on the clone that sends it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        (self.send)(request)
    }
}

/// A codec for messages that are already encoded: requests go out as they are, responses come
/// back as the bytes of one message.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }

    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// Encoded responses: one item for unary and client-streaming RPCs.
pub(crate) type ResponseStream = Pin<Box<dyn Stream<Item = Result<Bytes, Status>> + Send>>;

/// What one call sends.
pub(crate) struct Invocation {
    pub(crate) requests: Vec<Bytes>,
    pub(crate) metadata: MetadataMap,
    pub(crate) timeout: Duration,
    pub(crate) limits: MessageLimits,
}

/// The largest gRPC response message a tool set decodes unless
/// [`ToolSet::with_max_decoding_message_size`](crate::ToolSet::with_max_decoding_message_size)
/// says otherwise: 4 MiB, tonic's own default.
pub const DEFAULT_MAX_DECODING_MESSAGE_SIZE: usize = 4 * 1024 * 1024;

/// The largest gRPC messages a call decodes and encodes (tonic's
/// `max_decoding_message_size` and `max_encoding_message_size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MessageLimits {
    pub(crate) decoding: usize,
    pub(crate) encoding: usize,
}

impl Default for MessageLimits {
    fn default() -> Self {
        Self {
            decoding: DEFAULT_MAX_DECODING_MESSAGE_SIZE,
            encoding: usize::MAX,
        }
    }
}

/// The gRPC side of a tool: where it sends, and how the RPC streams.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub(crate) grpc: Grpc<BoxTransport>,
    pub(crate) path: PathAndQuery,
    pub(crate) kind: RpcKind,
    /// `(service, method)` for tonic's `GrpcMethod` request extension, when the path is static.
    pub(crate) method: Option<(&'static str, &'static str)>,
}

impl Endpoint {
    /// An endpoint for `rpc_path` (`/package.Service/Method`), or `None` when it is not a valid
    /// request path.
    pub(crate) fn new(
        transport: &BoxTransport,
        rpc_path: Cow<'static, str>,
        kind: RpcKind,
    ) -> Option<Self> {
        if !rpc_path.starts_with('/') {
            return None;
        }
        let (path, method) = match rpc_path {
            Cow::Borrowed(path) => (
                PathAndQuery::from_maybe_shared(Bytes::from_static(path.as_bytes())).ok()?,
                tonic_mcp_schema::names::split_rpc_path(path),
            ),
            Cow::Owned(path) => (
                PathAndQuery::from_maybe_shared(Bytes::from(path.into_bytes())).ok()?,
                None,
            ),
        };
        if path.query().is_some() {
            return None;
        }
        Some(Self {
            grpc: Grpc::new(transport.clone()),
            path,
            kind,
            method,
        })
    }

    /// Send the request(s) and return the response stream, as tonic's generated client does
    /// for the endpoint's kind.
    pub(crate) async fn call(&self, invocation: Invocation) -> Result<ResponseStream, Status> {
        let Invocation {
            requests,
            metadata,
            timeout,
            limits,
        } = invocation;
        let mut extensions = tonic::Extensions::default();
        if let Some((service, method)) = self.method {
            extensions.insert(tonic::GrpcMethod::new(service, method));
        }
        let mut grpc = self
            .grpc
            .clone()
            .max_decoding_message_size(limits.decoding)
            .max_encoding_message_size(limits.encoding);
        let path = self.path.clone();
        match self.kind {
            RpcKind::Unary => {
                let request = request(first(requests)?, metadata, extensions, timeout);
                let response = grpc.unary(request, path, RawCodec).await?;
                Ok(single(response.into_inner()))
            }
            RpcKind::ServerStreaming => {
                let request = request(first(requests)?, metadata, extensions, timeout);
                let response = grpc.server_streaming(request, path, RawCodec).await?;
                Ok(Box::pin(response.into_inner()))
            }
            RpcKind::ClientStreaming => {
                let stream = futures_util::stream::iter(requests);
                let request = request(stream, metadata, extensions, timeout);
                let response = grpc.client_streaming(request, path, RawCodec).await?;
                Ok(single(response.into_inner()))
            }
            RpcKind::Bidi => {
                let stream = futures_util::stream::iter(requests);
                let request = request(stream, metadata, extensions, timeout);
                let response = grpc.streaming(request, path, RawCodec).await?;
                Ok(Box::pin(response.into_inner()))
            }
        }
    }
}

/// The one request message of a unary or server-streaming call.
fn first(requests: Vec<Bytes>) -> Result<Bytes, Status> {
    requests
        .into_iter()
        .next()
        .ok_or_else(|| Status::internal("no request message"))
}

fn request<M>(
    message: M,
    metadata: MetadataMap,
    extensions: tonic::Extensions,
    timeout: Duration,
) -> tonic::Request<M> {
    let mut request = tonic::Request::from_parts(metadata, extensions, message);
    request.set_timeout(timeout);
    request
}

fn single(message: Bytes) -> ResponseStream {
    Box::pin(futures_util::stream::once(std::future::ready(Ok(message))))
}
