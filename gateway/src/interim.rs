//! Interim tool sets from descriptors, over the runtime's code-generation API.
//!
//! Until `tonic-mcp` builds tool sets from a descriptor pool itself (issue 11, item 3), the
//! gateway registers each [`ToolSpec`] of `tonic-mcp-schema` with the same
//! [`ToolSetBuilder`] generated code uses. The request and response types are [`Raw`]: the
//! encoded message the runtime produced, passed through unchanged, sent with
//! `tonic::client::Grpc` and a codec that copies bytes. The tool definitions are leaked once
//! per process, as generated code holds them in `static` memory.

use std::time::Duration;

use bytes::{Buf as _, BufMut as _};
use prost::Message as _;
use prost_reflect::DescriptorPool;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;
use tonic::{Request, Status};
use tonic_mcp::ToolSet;
use tonic_mcp::codegen::{MessageStream, RpcKind, ToolAnnotations, ToolDef, ToolSetBuilder};
use tonic_mcp_schema::{Context, Options, ToolSpec};

use crate::error::Error;

/// An encoded protobuf message, carried without decoding.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Raw(Vec<u8>);

impl prost::Message for Raw {
    fn encode_raw(&self, buf: &mut impl bytes::BufMut) {
        buf.put_slice(&self.0);
    }

    // Never called: `merge` below takes the whole buffer at once.
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl bytes::Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        prost::encoding::skip_field(wire_type, tag, buf, ctx)
    }

    fn merge(&mut self, mut buf: impl bytes::Buf) -> Result<(), prost::DecodeError> {
        while buf.has_remaining() {
            let chunk = buf.chunk();
            let len = chunk.len();
            self.0.extend_from_slice(chunk);
            buf.advance(len);
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// A codec that copies message bytes both ways.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Raw;
    type Decode = Raw;
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
    type Item = Raw;
    type Error = Status;

    fn encode(&mut self, item: Raw, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item.0);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Raw;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Raw>, Status> {
        let mut raw = Raw(Vec::with_capacity(src.remaining()));
        raw.merge(src)
            .map_err(|e| Status::internal(e.to_string()))?;
        Ok(Some(raw))
    }
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn tool_def(spec: &ToolSpec, options: &Options) -> Result<&'static ToolDef, Error> {
    let json = |value: &serde_json::Value| {
        serde_json::to_string(value).map_err(|e| Error::new(format!("{}: {e}", spec.name)))
    };
    let kind = match spec.kind {
        tonic_mcp_schema::RpcKind::Unary => RpcKind::Unary,
        tonic_mcp_schema::RpcKind::ServerStreaming => RpcKind::ServerStreaming,
        tonic_mcp_schema::RpcKind::ClientStreaming => RpcKind::ClientStreaming,
        tonic_mcp_schema::RpcKind::Bidi => RpcKind::Bidi,
    };
    let omitted: Vec<&'static str> = spec
        .output_omitted
        .iter()
        .map(|f| leak(f.clone()))
        .collect();
    let def = ToolDef {
        name: leak(spec.name.clone()),
        title: leak(spec.title.clone()),
        description: leak(spec.description.clone()),
        rpc_path: leak(spec.rpc_path.clone()),
        kind,
        input_type: leak(spec.input_type.clone()),
        output_type: leak(spec.output_type.clone()),
        input_schema: leak(json(&spec.input_schema)?),
        output_schema: leak(json(&spec.output_schema)?),
        annotations: ToolAnnotations {
            read_only: spec.annotations.read_only,
            destructive: spec.annotations.destructive,
            idempotent: spec.annotations.idempotent,
            open_world: spec.annotations.open_world,
        },
        json_names: options.json_names,
        emit_defaults: options.emit_defaults,
        timeout: spec.timeout.and_then(|(seconds, nanos)| {
            Some(Duration::new(
                u64::try_from(seconds).ok()?,
                u32::try_from(nanos).ok()?,
            ))
        }),
        max_messages: spec.max_messages,
        output_omitted: Box::leak(omitted.into_boxed_slice()),
    };
    Ok(Box::leak(Box::new(def)))
}

fn path(def: &ToolDef) -> Result<http::uri::PathAndQuery, Error> {
    http::uri::PathAndQuery::try_from(def.rpc_path)
        .map_err(|e| Error::new(format!("{}: bad gRPC path ({e})", def.name)))
}

async fn ready(grpc: &mut tonic::client::Grpc<Channel>) -> Result<(), Status> {
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(format!("the target is not reachable: {e}")))
}

/// The tools of `service`, calling it through `channel`.
pub(crate) fn tool_set(
    pool: &DescriptorPool,
    service: &str,
    options: &Options,
    channel: Channel,
) -> Result<ToolSet, Error> {
    let descriptor = pool
        .get_service_by_name(service)
        .ok_or_else(|| Error::new(format!("no service {service} in the descriptors")))?;
    let specs = Context::new(pool, options).service_tools(&descriptor)?;
    for omitted in &specs.omitted {
        tracing::debug!(rpc = %omitted.rpc_path, reason = %omitted.reason, "not a tool");
    }
    let mut builder = ToolSetBuilder::new(&pool.encode_to_vec())?;
    for spec in &specs.tools {
        let def = tool_def(spec, options)?;
        let path = path(def)?;
        let grpc = tonic::client::Grpc::new(channel.clone());
        match def.kind {
            RpcKind::Unary => builder.unary(def, move |request: Request<Raw>| {
                let mut grpc = grpc.clone();
                let path = path.clone();
                async move {
                    ready(&mut grpc).await?;
                    grpc.unary(request, path, RawCodec).await
                }
            })?,
            RpcKind::ServerStreaming => {
                builder.server_streaming(def, move |request: Request<Raw>| {
                    let mut grpc = grpc.clone();
                    let path = path.clone();
                    async move {
                        ready(&mut grpc).await?;
                        grpc.server_streaming(request, path, RawCodec).await
                    }
                })?
            }
            RpcKind::ClientStreaming => {
                builder.client_streaming(def, move |request: Request<MessageStream<Raw>>| {
                    let mut grpc = grpc.clone();
                    let path = path.clone();
                    async move {
                        ready(&mut grpc).await?;
                        grpc.client_streaming(request, path, RawCodec).await
                    }
                })?
            }
            RpcKind::Bidi => {
                builder.bidi_streaming(def, move |request: Request<MessageStream<Raw>>| {
                    let mut grpc = grpc.clone();
                    let path = path.clone();
                    async move {
                        ready(&mut grpc).await?;
                        grpc.streaming(request, path, RawCodec).await
                    }
                })?
            }
        }
    }
    Ok(builder.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_passes_bytes_through() {
        let bytes = vec![0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i'];
        let raw = Raw::decode(bytes.as_slice()).unwrap();
        assert_eq!(raw.encode_to_vec(), bytes);
        assert_eq!(raw.encoded_len(), bytes.len());
    }
}
