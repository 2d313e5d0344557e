//! The bound generated code puts on a tonic transport.

/// The boxed error type tonic's generated clients bound transport errors by (the same type
/// as `tonic::codegen::StdError`).
pub(crate) type StdError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A tonic transport that MCP tools can call through.
///
/// This is every bound `tonic::client::Grpc` needs for its call futures to be `Send + 'static`
/// once the transport is boxed into a [`BoxTransport`](crate::codegen::BoxTransport). It has a
/// blanket implementation, so it is never implemented by hand. Types that satisfy it include:
///
/// - `tonic::transport::Channel` (a network client);
/// - `InterceptedService<Channel, F>` (a channel with an interceptor);
/// - a generated `XxxServer<S>` used directly as the transport, which is how generated
///   `from_service` adapters call an implementation in-process, without a network.
///
/// The associated-type bounds sit in the supertrait list so that `T: Transport` alone implies
/// them wherever generated code names it.
pub trait Transport:
    tonic::client::GrpcService<
        tonic::body::Body,
        Error: Into<StdError>,
        Future: Send,
        ResponseBody: http_body::Body<Data = bytes::Bytes, Error: Into<StdError> + Send>
                          + Send
                          + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
}

impl<T> Transport for T where
    T: tonic::client::GrpcService<
            tonic::body::Body,
            Error: Into<StdError>,
            Future: Send,
            ResponseBody: http_body::Body<Data = bytes::Bytes, Error: Into<StdError> + Send>
                              + Send
                              + 'static,
        > + Clone
        + Send
        + Sync
        + 'static
{
}
