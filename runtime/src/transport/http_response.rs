//! The HTTP response type of the streamable HTTP service, and the plain responses the
//! transport, the authorization gate and the metrics endpoint answer with.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};

#[cfg(any(feature = "http-server", feature = "auth"))]
pub(crate) fn not_found() -> HttpResponse {
    plain_response(http::StatusCode::NOT_FOUND, "")
}

/// The HTTP response type of [`McpHttpService`](crate::McpHttpService).
pub type HttpResponse = http::Response<BoxBody<Bytes, Infallible>>;

pub(crate) fn plain_response(status: http::StatusCode, text: impl Into<String>) -> HttpResponse {
    let mut response = http::Response::new(Full::new(Bytes::from(text.into())).boxed());
    *response.status_mut() = status;
    response
}
