//! Tool sets: compiled tools and the gRPC endpoint each one calls.

use std::{
    borrow::Cow,
    sync::{Arc, OnceLock},
    time::Duration,
};

use rmcp::model::JsonObject;
use serde_json::Value;
use tonic::metadata::MetadataMap;

use crate::{
    error::Error,
    grpc::{Endpoint, MessageLimits},
    tool::context::{CallContext, CallHook, Refusal},
    tool::def::ToolInfo,
    tool::long_running::Operations,
    tool::schemas::Schemas,
    tool::types::{ToolTypes, Types},
};

mod builder;

pub use builder::{ToolSetBuilder, tool_set};

/// Default per-call deadline of a tool set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Default bound on the messages a server-streaming tool collects.
pub const DEFAULT_MAX_MESSAGES: u32 = 100;

pub use crate::grpc::DEFAULT_MAX_DECODING_MESSAGE_SIZE;

pub use tonic_mcp_schema::names::MAX_TOOL_NAME_LEN;

/// The input schema's validator, compiled on the tool's first call, with the schema as a
/// `Value` for error messages; or why the tool cannot be called (`its input schema …`).
pub(crate) struct Validation {
    pub(crate) validator: Result<tonic_mcp_codec::Validator, String>,
    pub(crate) schema: Value,
}

/// One tool, ready to serve: descriptors resolved (or, for a tool of a [`SetPools`], resolved
/// on its first call), schemas checked. The input validator is compiled on first use, so that
/// a server with thousands of tools lists them at once.
///
/// [`SetPools`]: crate::SetPools
pub(crate) struct CompiledTool {
    pub(crate) def: ToolInfo,
    /// Its request and response types, and the plans and waiting made of them.
    pub(crate) types: ToolTypes,
    /// Kept as text, a JSON object each: a tree is made only to write a `tools/list` page or a
    /// `describe_tools` answer, and for the input validator on the first call.
    pub(crate) schemas: Schemas,
    pub(crate) endpoint: Endpoint,
    /// Boxed, like the plans: made on the first call, so a tool never called keeps a pointer.
    pub(super) validation: OnceLock<Box<Validation>>,
    /// For the tool of `google.longrunning.Operations/GetOperation`: the Operations endpoints
    /// on its transport, which waiting tools of the server poll through when their own
    /// transport does not serve Operations.
    pub(crate) operations: Option<Arc<Operations>>,
}

impl CompiledTool {
    /// The tool's types, resolved now if this is the first call that needs them; the error
    /// says why they cannot be (see [`ToolTypes::get`]).
    pub(crate) fn types(&self) -> Result<&Types, String> {
        self.types.get(&self.def).map_err(|error| {
            format!(
                "tool `{}` cannot be called: its message types cannot be resolved: {error}",
                self.def.name
            )
        })
    }

    /// Whether the tool waits for the `google.longrunning.Operation` its RPC answers with.
    pub(crate) fn waits(&self) -> bool {
        self.def.wait_for.is_some()
    }

    /// The compiled input validator (compiled now if this is the first call).
    pub(crate) fn validation(&self) -> &Validation {
        self.validation.get_or_init(|| {
            let schema = match self.schemas.get(&self.def.name) {
                Ok(made) => made
                    .input()
                    .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
                    .map_err(|error| format!("its input schema cannot be read: {error}")),
                Err(error) => Err(format!("its schemas cannot be made: {error}")),
            };
            let (validator, schema) = match schema {
                Ok(schema) => (
                    tonic_mcp_codec::compile(&schema)
                        .map_err(|message| format!("its input schema does not compile: {message}")),
                    schema,
                ),
                Err(error) => (Err(error), Value::Null),
            };
            Box::new(Validation { validator, schema })
        })
    }

    /// The full-schema check of a tool whose listed input schema was shrunk.
    pub(crate) fn deep(&self) -> &tonic_mcp_codec::DeepCheck {
        static NONE: tonic_mcp_codec::DeepCheck = tonic_mcp_codec::DeepCheck::NONE;
        self.schemas
            .get(&self.def.name)
            .map_or(&NONE, |made| &made.deep)
    }
}

/// A tool under the name it is listed with.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) tool: Arc<CompiledTool>,
}

impl Entry {
    /// The tool's description as listed. A tool that waits for a long-running operation
    /// names `redeem_tool`, the served GetOperation tool, in it.
    pub(crate) fn description(&self, redeem_tool: Option<&str>) -> Option<Cow<'static, str>> {
        let def = &self.tool.def;
        match redeem_tool.filter(|_| self.tool.waits()) {
            Some(redeem) => Some(Cow::Owned(format!(
                "{}{}Here GetOperation is the tool `{redeem}`.",
                def.description,
                if def.description.is_empty() { "" } else { " " }
            ))),
            None => (!def.description.is_empty()).then(|| def.description.clone()),
        }
    }

    /// The tool as `tools/list` shows it, its schemas made into JSON trees now; see
    /// [`description`](Self::description) for `redeem_tool`. Fails, saying why, when the
    /// tool's schemas cannot be made (see [`Schemas::later`]).
    pub(crate) fn listing(&self, redeem_tool: Option<&str>) -> Result<rmcp::model::Tool, String> {
        let def = &self.tool.def;
        let schemas = self.tool.schemas.get(&def.name).map_err(|error| {
            format!(
                "the schemas of tool `{}` cannot be made: {error}",
                self.name
            )
        })?;
        let mut tool = self.head(redeem_tool);
        tool.input_schema = Arc::new(schema_object(&schemas.input()?));
        Ok(tool.with_raw_output_schema(Arc::new(schema_object(&schemas.output()?))))
    }

    /// The tool as [`listing`](Self::listing) shows it, but with an empty input schema and no
    /// output schema: its name, description, annotations and `_meta`, without making its
    /// schemas (for what reads only those, such as the scopes a call needs).
    pub(crate) fn head(&self, redeem_tool: Option<&str>) -> rmcp::model::Tool {
        let def = &self.tool.def;
        let mut tool = rmcp::model::Tool::new_with_raw(
            self.name.clone(),
            self.description(redeem_tool),
            Arc::new(JsonObject::new()),
        );
        if !def.title.is_empty() {
            tool = tool.with_title(def.title.as_ref());
        }
        if let Some(annotations) = crate::tool::def::annotations_to_rmcp(def.annotations) {
            tool = tool.with_annotations(annotations);
        }
        if let Some(meta) = self.tool.def.meta_object() {
            tool = tool.with_meta(rmcp::model::MetaObject(meta));
        }
        tool
    }
}

/// Per-set call settings.
#[derive(Clone)]
pub(crate) struct SetConfig {
    pub(crate) timeout: Duration,
    pub(crate) max_messages: u32,
    pub(crate) limits: MessageLimits,
    /// The set's own result budget, over the server's (`Limits::max_result_bytes`).
    pub(crate) max_result_bytes: Option<usize>,
    pub(crate) metadata: MetadataMap,
    pub(crate) hooks: Vec<CallHook>,
    /// The set's own task mode, over the server's ([`ToolSet::with_task_mode`]).
    pub(crate) task_mode: Option<crate::tool::task_mode::TaskMode>,
}

/// The MCP tools of one or more gRPC services, ready to add to an
/// [`McpServer`](crate::McpServer).
///
/// Generated code builds one per service (`item_service_mcp::from_channel(channel)?`). A set
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
            .field("task_mode", &self.config.task_mode)
            .finish()
    }
}

/// Check MCP's tool-name rules (docs/design.md §5), the plugin's own check.
pub(crate) fn check_tool_name(name: &str) -> Result<(), Error> {
    tonic_mcp_schema::names::check_tool_name(name).map_err(|reason| Error::InvalidToolName {
        name: name.to_owned(),
        reason,
    })
}

impl ToolSet {
    /// An empty tool set with default settings.
    pub fn new() -> Self {
        Self {
            tools: Vec::new(),
            config: SetConfig {
                timeout: DEFAULT_TIMEOUT,
                max_messages: DEFAULT_MAX_MESSAGES,
                limits: MessageLimits::default(),
                max_result_bytes: None,
                metadata: MetadataMap::new(),
                hooks: Vec::new(),
                task_mode: None,
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
    /// [`ToolDef::timeout`](crate::codegen::ToolDef::timeout) takes precedence. It is sent as `grpc-timeout` and enforced
    /// locally.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// How many messages a server-streaming tool collects before it stops and reports
    /// `"truncated": true` (default 100). A tool's own [`ToolDef::max_messages`](crate::codegen::ToolDef::max_messages) takes
    /// precedence.
    pub fn with_max_messages(mut self, max_messages: u32) -> Self {
        self.config.max_messages = max_messages.max(1);
        self
    }

    /// The largest result of this set's tools, in bytes of compact JSON, instead of the
    /// server's [`Limits::max_result_bytes`](crate::Limits::max_result_bytes) (320 KiB by
    /// default): for tools whose results are known to be large, or that should stay small.
    pub fn with_max_result_bytes(mut self, bytes: usize) -> Self {
        self.config.max_result_bytes = Some(bytes);
        self
    }

    /// The largest gRPC response message this set's calls decode, in bytes (default
    /// [`DEFAULT_MAX_DECODING_MESSAGE_SIZE`], 4 MiB). A larger response is an `isError`
    /// naming the limit. Raise it for RPCs with large responses, remembering that the result
    /// also travels to the model.
    pub fn with_max_decoding_message_size(mut self, bytes: usize) -> Self {
        self.config.limits.decoding = bytes;
        self
    }

    /// The largest gRPC request message this set's calls encode, in bytes (default: no limit
    /// beyond the arguments' own, [`Limits`](crate::Limits)).
    pub fn with_max_encoding_message_size(mut self, bytes: usize) -> Self {
        self.config.limits.encoding = bytes;
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

    /// When calls of this set's tools become MCP tasks, instead of the server's task router's
    /// mode (`tonic_mcp_tasks::Tasks::mode`; default
    /// [`TaskMode::auto`](crate::TaskMode::auto): the result when the call ends within 2 s,
    /// else a task). For example [`TaskMode::Always`](crate::TaskMode::Always) for a set of
    /// batch jobs that always run long, or [`TaskMode::Never`](crate::TaskMode::Never) for a
    /// set whose streams a client should always get whole. It applies to the tools whose
    /// `taskSupport` is `optional`, called by clients that declared the tasks extension; see
    /// [`TaskMode`](crate::TaskMode).
    pub fn with_task_mode(mut self, mode: crate::tool::task_mode::TaskMode) -> Self {
        self.config.task_mode = Some(mode);
        self
    }

    /// The tool named `name` (for the crate's tests).
    #[cfg(test)]
    pub(crate) fn compiled(&self, name: &str) -> Option<&CompiledTool> {
        self.tools
            .iter()
            .find(|entry| entry.name == name)
            .map(|entry| &*entry.tool)
    }

    /// Tool names as they will be listed, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|e| e.name.as_str())
    }

    /// The MCP tool definitions of this set, as `tools/list` shows them (without a tool
    /// whose schemas cannot be made, as there).
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tools
            .iter()
            .filter_map(|entry| entry.listing(None).ok())
            .collect()
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

/// The JSON object of a schema text that registration accepted (`builder::check_schema_text`).
pub(crate) fn schema_object(text: &str) -> JsonObject {
    serde_json::from_str(text).unwrap_or_default()
}
