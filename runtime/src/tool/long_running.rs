//! What a tool that waits for a `google.longrunning.Operation` resolves when it is registered:
//! the types the operation holds and the `google.longrunning.Operations` endpoints on its
//! transport. The waiting itself is the call's ([`crate::call::longrunning`]).

use std::borrow::Cow;

use prost_reflect::{DescriptorPool, MessageDescriptor};
use tonic_mcp_codec::Plans;
use tonic_mcp_schema::{
    RpcKind,
    tools::{CANCEL_OPERATION_PATH, GET_OPERATION_PATH, OPERATION},
};

use crate::{
    error::Error,
    grpc::{BoxTransport, Endpoint},
    tool::def::message,
};

/// `google.longrunning.Operations`' GetOperation and CancelOperation on one transport.
pub(crate) struct Operations {
    pub(crate) get: Endpoint,
    pub(crate) cancel: Endpoint,
}

impl Operations {
    /// The two endpoints on `transport`.
    pub(crate) fn new(tool: &str, transport: &BoxTransport) -> Result<Self, Error> {
        let endpoint = |path: &'static str| {
            Endpoint::new(transport, Cow::Borrowed(path), RpcKind::Unary).ok_or_else(|| {
                Error::InvalidRpcPath {
                    tool: tool.to_owned(),
                    rpc_path: path.to_owned(),
                }
            })
        };
        Ok(Self {
            get: endpoint(GET_OPERATION_PATH)?,
            cancel: endpoint(CANCEL_OPERATION_PATH)?,
        })
    }
}

/// What a tool that waits for its operation needs: the types the operation holds and the
/// `google.longrunning.Operations` endpoints on the tool's own transport.
pub(crate) struct LongRunning {
    /// The operation's `response` type.
    pub(crate) response: MessageDescriptor,
    /// The one-pass plans of `response`.
    pub(crate) plans: Plans,
    /// The operation's `metadata` type, when the descriptors define it.
    pub(crate) metadata: Option<MessageDescriptor>,
    /// `google.protobuf.Any`, for metadata of another type.
    pub(crate) any: MessageDescriptor,
    pub(crate) own: Operations,
}

impl LongRunning {
    /// Resolves the operation's types in `pool` and makes the Operations endpoints.
    pub(crate) fn new(
        tool: &str,
        pool: &DescriptorPool,
        transport: &BoxTransport,
        output_type: &str,
        response_type: &str,
        metadata_type: Option<&str>,
    ) -> Result<Self, Error> {
        if output_type != OPERATION {
            return Err(Error::InvalidMeta {
                tool: tool.to_owned(),
                message: format!(
                    "`longRunning` with `wait` needs an RPC returning {OPERATION}, not \
                     {output_type}"
                ),
            });
        }
        Ok(Self {
            response: message(pool, tool, response_type)?,
            plans: Plans::default(),
            metadata: metadata_type.and_then(|name| pool.get_message_by_name(name)),
            any: message(pool, tool, "google.protobuf.Any")?,
            own: Operations::new(tool, transport)?,
        })
    }
}
