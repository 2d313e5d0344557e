//! The bound generated code puts on a tonic client's transport.

/// The boxed error type tonic's generated clients bound transport errors by (the same type
/// as `tonic::codegen::StdError`).
type StdError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A tonic transport that MCP tools can call through.
///
/// This is every bound a tonic 0.14 generated client needs for its method futures to be
/// `Send + 'static` once the client is cloned into a tool handler. It has a blanket
/// implementation, so it is never implemented by hand. Types that satisfy it include:
///
/// - `tonic::transport::Channel` (a network client);
/// - `InterceptedService<Channel, F>` (a client with an interceptor);
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
