//! Tool sets: compiled tools plus the type-erased handlers that call tonic.

use std::{borrow::Cow, future::Future, pin::Pin, sync::Arc, time::Duration};

use futures_core::Stream;
use futures_util::{StreamExt as _, future::BoxFuture};
use prost_reflect::{DescriptorPool, MessageDescriptor};
use rmcp::model::JsonObject;
use serde_json::Value;
use tonic::{Request, Response, Status, metadata::MetadataMap};

use crate::{
    codegen::{MessageStream, RpcKind, ToolDef},
    context::{CallContext, CallHook, Refusal},
    error::Error,
    meta::ToolMeta,
    validate,
};

/// Default per-call deadline of a tool set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Default bound on the messages a server-streaming tool collects.
pub const DEFAULT_MAX_MESSAGES: u32 = 100;

/// Longest tool name MCP clients accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// What a type-erased handler receives: encoded requests and the call's gRPC context.
pub(crate) struct Invocation {
    pub(crate) requests: Vec<Vec<u8>>,
    pub(crate) metadata: MetadataMap,
    pub(crate) timeout: Duration,
}

/// Encoded responses: one item for unary and client-streaming RPCs.
pub(crate) type ResponseStream = Pin<Box<dyn Stream<Item = Result<Vec<u8>, Status>> + Send>>;

pub(crate) type Handler =
    Box<dyn Fn(Invocation) -> BoxFuture<'static, Result<ResponseStream, Status>> + Send + Sync>;

/// One tool, ready to serve: descriptors resolved, schemas parsed and compiled.
pub(crate) struct CompiledTool {
    pub(crate) def: &'static ToolDef,
    pub(crate) input: MessageDescriptor,
    pub(crate) output: MessageDescriptor,
    pub(crate) input_schema: Arc<JsonObject>,
    pub(crate) input_schema_value: Value,
    pub(crate) output_schema: Arc<JsonObject>,
    pub(crate) validator: jsonschema::Validator,
    pub(crate) handler: Handler,
    pub(crate) meta: ToolMeta,
}

/// A tool under the name it is listed with.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) tool: Arc<CompiledTool>,
}

impl Entry {
    pub(crate) fn listing(&self) -> rmcp::model::Tool {
        let def = self.tool.def;
        let description = (!def.description.is_empty()).then_some(Cow::Borrowed(def.description));
        let mut tool = rmcp::model::Tool::new_with_raw(
            self.name.clone(),
            description,
            self.tool.input_schema.clone(),
        )
        .with_raw_output_schema(self.tool.output_schema.clone());
        if !def.title.is_empty() {
            tool = tool.with_title(def.title);
        }
        if let Some(annotations) = def.annotations.to_rmcp() {
            tool = tool.with_annotations(annotations);
        }
        if let Some(meta) = &self.tool.meta.object {
            tool = tool.with_meta(rmcp::model::MetaObject(meta.clone()));
        }
        tool
    }
}

/// Per-set call settings.
#[derive(Clone)]
pub(crate) struct SetConfig {
    pub(crate) timeout: Duration,
    pub(crate) max_messages: u32,
    pub(crate) metadata: MetadataMap,
    pub(crate) hooks: Vec<CallHook>,
}

/// The MCP tools of one or more gRPC services, ready to add to an
/// [`McpServer`](crate::McpServer).
///
/// Generated code builds one per service (`item_service_mcp::from_client(client)?`). A set
/// carries its own call settings: a name prefix, a deadline, a server-streaming bound, static
/// gRPC metadata and call hooks.
///
/// ```no_run
/// # fn demo(tools: tonic_mcp::ToolSet) -> Result<(), tonic_mcp::Error> {
/// use std::time::Duration;
///
/// let mut metadata = tonic::metadata::MetadataMap::new();
/// metadata.insert("x-caller", "mcp".parse().map_err(|_| unreachable!())?);
/// let tools = tools
///     .with_prefix("items")?
///     .with_timeout(Duration::from_secs(5))
///     .with_max_messages(50)
///     .with_metadata(metadata);
/// # let _ = tools; Ok(()) }
/// ```
#[derive(Clone)]
pub struct ToolSet {
    pub(crate) tools: Vec<Entry>,
    pub(crate) config: SetConfig,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("timeout", &self.config.timeout)
            .field("max_messages", &self.config.max_messages)
            .field("metadata_keys", &self.config.metadata.keys().count())
            .field("hooks", &self.config.hooks.len())
            .finish()
    }
}

/// Check MCP's tool-name rules (SPEC §5).
pub(crate) fn check_tool_name(name: &str) -> Result<(), Error> {
    let invalid = |reason: &str| Error::InvalidToolName {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(invalid("it must start with an ASCII letter"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(invalid("only ASCII letters, digits and `_` are allowed"));
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(invalid(&format!(
            "it is {} characters long; the limit is {MAX_TOOL_NAME_LEN}",
            name.len()
        )));
    }
    Ok(())
}

impl ToolSet {
    /// An empty tool set with default settings.
    pub fn new() -> Self {
        Self {
            tools: Vec::new(),
            config: SetConfig {
                timeout: DEFAULT_TIMEOUT,
                max_messages: DEFAULT_MAX_MESSAGES,
                metadata: MetadataMap::new(),
                hooks: Vec::new(),
            },
        }
    }

    /// Prefix every tool name with `prefix_`. Prefixes compose: `with_prefix("b")` after
    /// `with_prefix("a")` lists `b_a_Tool`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidToolName`] when a prefixed name breaks MCP's rules, for example by
    /// exceeding 64 characters.
    pub fn with_prefix(mut self, prefix: &str) -> Result<Self, Error> {
        for entry in &mut self.tools {
            let name = format!("{prefix}_{}", entry.name);
            check_tool_name(&name)?;
            entry.name = name;
        }
        Ok(self)
    }

    /// Deadline for every call of this set (default 30 s). A tool's own
    /// [`ToolDef::timeout`] takes precedence. It is sent as `grpc-timeout` and enforced
    /// locally.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// How many messages a server-streaming tool collects before it stops and reports
    /// `"truncated": true` (default 100). A tool's own [`ToolDef::max_messages`] takes
    /// precedence.
    pub fn with_max_messages(mut self, max_messages: u32) -> Self {
        self.config.max_messages = max_messages.max(1);
        self
    }

    /// gRPC metadata added to every call of this set. Repeated calls merge; a key given again
    /// replaces the earlier values.
    pub fn with_metadata(mut self, metadata: MetadataMap) -> Self {
        let mut headers = std::mem::take(&mut self.config.metadata).into_headers();
        headers.extend(metadata.into_headers());
        self.config.metadata = MetadataMap::from_headers(headers);
        self
    }

    /// Run `hook` before every call of this set: it sees the [`CallContext`] and may add
    /// gRPC metadata, or refuse the call. Hooks run in the order they were added, after the
    /// server's own hooks.
    pub fn on_call<F>(mut self, hook: F) -> Self
    where
        F: Fn(&CallContext<'_>, &mut MetadataMap) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.config.hooks.push(Arc::new(hook));
        self
    }

    /// Tool names as they will be listed, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|e| e.name.as_str())
    }

    /// The MCP tool definitions of this set, as `tools/list` shows them.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tools.iter().map(Entry::listing).collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl Default for ToolSet {
    fn default() -> Self {
        Self::new()
    }
}

/// Builds a [`ToolSet`] from tool definitions and tonic calls. Used by generated code.
///
/// Each registration resolves the definition's message types in the descriptor set, parses
/// both schemas and compiles the input schema once, so a call never recompiles anything.
pub struct ToolSetBuilder {
    pool: DescriptorPool,
    tools: Vec<Entry>,
}

impl std::fmt::Debug for ToolSetBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSetBuilder")
            .field(
                "tools",
                &self.tools.iter().map(|e| &e.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

fn request<M>(message: M, metadata: MetadataMap, timeout: Duration) -> Request<M> {
    let mut request = Request::from_parts(metadata, tonic::Extensions::default(), message);
    request.set_timeout(timeout);
    request
}

fn decode_request<Req: prost::Message + Default>(bytes: &[u8]) -> Result<Req, Status> {
    Req::decode(bytes).map_err(|e| {
        Status::internal(format!(
            "the request could not be transcoded to the generated type; are the descriptors and the generated code from the same proto? ({e})"
        ))
    })
}

/// The one request message of a unary or server-streaming call.
fn decode_single<Req: prost::Message + Default>(requests: &[Vec<u8>]) -> Result<Req, Status> {
    match requests.first() {
        Some(bytes) => decode_request(bytes),
        None => Err(Status::internal("no request message")),
    }
}

/// Every request message of a client-streaming or bidirectional call, as the request stream.
fn decode_stream<Req: prost::Message + Default>(
    requests: &[Vec<u8>],
) -> Result<MessageStream<Req>, Status> {
    requests
        .iter()
        .map(|bytes| decode_request(bytes))
        .collect::<Result<Vec<Req>, Status>>()
        .map(MessageStream::new)
}

/// A single response, as a one-item stream of encoded messages.
fn single_response<Resp, Fut>(response: Fut) -> BoxFuture<'static, Result<ResponseStream, Status>>
where
    Resp: prost::Message + Send + 'static,
    Fut: Future<Output = Result<Response<Resp>, Status>> + Send + 'static,
{
    Box::pin(async move {
        let bytes = response.await?.into_inner().encode_to_vec();
        let stream: ResponseStream =
            Box::pin(futures_util::stream::once(std::future::ready(Ok(bytes))));
        Ok(stream)
    })
}

/// A response stream, as a stream of encoded messages.
fn streamed_response<Resp, St, Fut>(
    response: Fut,
) -> BoxFuture<'static, Result<ResponseStream, Status>>
where
    Resp: prost::Message + Send + 'static,
    St: Stream<Item = Result<Resp, Status>> + Send + 'static,
    Fut: Future<Output = Result<Response<St>, Status>> + Send + 'static,
{
    Box::pin(async move {
        let stream = response.await?.into_inner();
        let stream: ResponseStream =
            Box::pin(stream.map(|item| item.map(|message| message.encode_to_vec())));
        Ok(stream)
    })
}

fn failed(status: Status) -> BoxFuture<'static, Result<ResponseStream, Status>> {
    Box::pin(std::future::ready(Err(status)))
}

impl ToolSetBuilder {
    /// Start a tool set whose message types live in `descriptor_set`, an encoded
    /// `FileDescriptorSet` (generated code passes its `MCP_FILE_DESCRIPTOR_SET`).
    ///
    /// # Errors
    ///
    /// [`Error::DescriptorSet`] when the bytes do not decode into a linked descriptor pool.
    pub fn new(descriptor_set: &[u8]) -> Result<Self, Error> {
        let pool = DescriptorPool::decode(descriptor_set)
            .map_err(|e| Error::DescriptorSet(e.to_string()))?;
        Ok(Self {
            pool,
            tools: Vec::new(),
        })
    }

    /// Register a unary RPC.
    ///
    /// # Errors
    ///
    /// See [`Error`]: unknown message types, invalid schemas, a kind mismatch, an invalid
    /// or duplicate name.
    pub fn unary<Req, Resp, F, Fut>(&mut self, def: &'static ToolDef, call: F) -> Result<(), Error>
    where
        Req: prost::Message + Default + Send + 'static,
        Resp: prost::Message + Send + 'static,
        F: Fn(Request<Req>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Response<Resp>, Status>> + Send + 'static,
    {
        let handler: Handler = Box::new(move |invocation: Invocation| {
            let Invocation {
                requests,
                metadata,
                timeout,
            } = invocation;
            match decode_single::<Req>(&requests) {
                Ok(message) => single_response(call(request(message, metadata, timeout))),
                Err(status) => failed(status),
            }
        });
        self.register(def, RpcKind::Unary, handler)
    }

    /// Register a server-streaming RPC.
    ///
    /// # Errors
    ///
    /// As for [`unary`](Self::unary).
    pub fn server_streaming<Req, Resp, St, F, Fut>(
        &mut self,
        def: &'static ToolDef,
        call: F,
    ) -> Result<(), Error>
    where
        Req: prost::Message + Default + Send + 'static,
        Resp: prost::Message + Send + 'static,
        St: Stream<Item = Result<Resp, Status>> + Send + 'static,
        F: Fn(Request<Req>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Response<St>, Status>> + Send + 'static,
    {
        let handler: Handler = Box::new(move |invocation: Invocation| {
            let Invocation {
                requests,
                metadata,
                timeout,
            } = invocation;
            match decode_single::<Req>(&requests) {
                Ok(message) => streamed_response(call(request(message, metadata, timeout))),
                Err(status) => failed(status),
            }
        });
        self.register(def, RpcKind::ServerStreaming, handler)
    }

    /// Register a client-streaming RPC. Every message of the tool input is sent, then the
    /// request stream ends.
    ///
    /// # Errors
    ///
    /// As for [`unary`](Self::unary).
    pub fn client_streaming<Req, Resp, F, Fut>(
        &mut self,
        def: &'static ToolDef,
        call: F,
    ) -> Result<(), Error>
    where
        Req: prost::Message + Default + Send + 'static,
        Resp: prost::Message + Send + 'static,
        F: Fn(Request<MessageStream<Req>>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Response<Resp>, Status>> + Send + 'static,
    {
        let handler: Handler = Box::new(move |invocation: Invocation| {
            let Invocation {
                requests,
                metadata,
                timeout,
            } = invocation;
            match decode_stream::<Req>(&requests) {
                Ok(message) => single_response(call(request(message, metadata, timeout))),
                Err(status) => failed(status),
            }
        });
        self.register(def, RpcKind::ClientStreaming, handler)
    }

    /// Register a bidirectional-streaming RPC, with batch semantics: every message of the
    /// tool input is sent, and responses are collected as for server streaming.
    ///
    /// # Errors
    ///
    /// As for [`unary`](Self::unary).
    pub fn bidi_streaming<Req, Resp, St, F, Fut>(
        &mut self,
        def: &'static ToolDef,
        call: F,
    ) -> Result<(), Error>
    where
        Req: prost::Message + Default + Send + 'static,
        Resp: prost::Message + Send + 'static,
        St: Stream<Item = Result<Resp, Status>> + Send + 'static,
        F: Fn(Request<MessageStream<Req>>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Response<St>, Status>> + Send + 'static,
    {
        let handler: Handler = Box::new(move |invocation: Invocation| {
            let Invocation {
                requests,
                metadata,
                timeout,
            } = invocation;
            match decode_stream::<Req>(&requests) {
                Ok(message) => streamed_response(call(request(message, metadata, timeout))),
                Err(status) => failed(status),
            }
        });
        self.register(def, RpcKind::Bidi, handler)
    }

    /// The finished tool set, with default settings.
    pub fn build(self) -> ToolSet {
        ToolSet {
            tools: self.tools,
            ..ToolSet::new()
        }
    }

    fn register(
        &mut self,
        def: &'static ToolDef,
        registered: RpcKind,
        handler: Handler,
    ) -> Result<(), Error> {
        if def.kind != registered {
            return Err(Error::KindMismatch {
                tool: def.name.to_owned(),
                declared: def.kind,
                registered,
            });
        }
        check_tool_name(def.name)?;
        if let Some(first) = self.tools.iter().find(|e| e.name == def.name) {
            return Err(Error::DuplicateTool {
                name: def.name.to_owned(),
                first: first.tool.def.rpc_path.to_owned(),
                second: def.rpc_path.to_owned(),
            });
        }
        let message = |type_name: &str| {
            self.pool
                .get_message_by_name(type_name)
                .ok_or_else(|| Error::UnknownMessage {
                    tool: def.name.to_owned(),
                    type_name: type_name.to_owned(),
                })
        };
        let input = message(def.input_type)?;
        let output = message(def.output_type)?;
        let (input_schema_value, input_schema) = parse_schema(def, "input", def.input_schema)?;
        let (output_schema_value, output_schema) = parse_schema(def, "output", def.output_schema)?;
        let meta = ToolMeta::parse(def.name, def.meta)?;
        let validator =
            validate::compile(&input_schema_value).map_err(|message| Error::InvalidSchema {
                tool: def.name.to_owned(),
                which: "input",
                message,
            })?;
        // The output schema is only listed, but a broken one should fail here, not in a client.
        validate::compile(&output_schema_value).map_err(|message| Error::InvalidSchema {
            tool: def.name.to_owned(),
            which: "output",
            message,
        })?;
        self.tools.push(Entry {
            name: def.name.to_owned(),
            tool: Arc::new(CompiledTool {
                def,
                input,
                output,
                input_schema,
                input_schema_value,
                output_schema,
                validator,
                handler,
                meta,
            }),
        });
        Ok(())
    }
}

fn parse_schema(
    def: &ToolDef,
    which: &'static str,
    text: &str,
) -> Result<(Value, Arc<JsonObject>), Error> {
    let invalid = |message: String| Error::InvalidSchema {
        tool: def.name.to_owned(),
        which,
        message,
    };
    let value: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    match &value {
        Value::Object(object) => {
            let object = Arc::new(object.clone());
            Ok((value, object))
        }
        _ => Err(invalid("a tool schema must be a JSON object".to_owned())),
    }
}
