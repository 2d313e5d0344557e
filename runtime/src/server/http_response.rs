//! The HTTP response type of the streamable HTTP service, and the plain responses the
//! transport and the endpoints of add-ons answer with.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};

/// The HTTP response type of [`McpHttpService`](crate::transport::http::McpHttpService).
pub type HttpResponse = http::Response<BoxBody<Bytes, Infallible>>;

/// A response of `status` whose body is `text`, with no `Content-Type`: set one on its headers
/// when the body has one.
pub fn plain_response(status: http::StatusCode, text: impl Into<String>) -> HttpResponse {
    let mut response = http::Response::new(Full::new(Bytes::from(text.into())).boxed());
    *response.status_mut() = status;
    response
}
