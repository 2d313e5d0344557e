//! The seam of tool discovery: what lists a server's tools in place of every tool, and answers
//! tools of its own (tool search, the crate `tonic-mcp-search`), and the view of a served tool
//! it indexes ([`ServedTool`]).

use std::{future::Future, pin::Pin, sync::Arc};

use rmcp::model::{CallToolResult, JsonObject, Tool};

use crate::server::{Registered, paging::Listed};
use crate::tool::{def::annotations_to_rmcp, toolset::CompiledTool};

/// What lists a server's tools in place of every tool, and answers tools of its own: tool
/// search (`tonic-mcp-search`'s `ToolSearch`). Give one to
/// [`McpServerBuilder::tool_search`](crate::McpServerBuilder::tool_search). Every served tool
/// stays callable by its own name.
pub trait ToolDiscovery: Send + Sync + 'static {
    /// The index of `tools`, every tool served now, sorted by name. It is made again whenever
    /// the served tools change ([`McpServer::replace_tools`](crate::McpServer::replace_tools)),
    /// and a call uses the index of the tools it started with.
    fn index(&self, tools: Vec<ServedTool>) -> Box<dyn DiscoveryIndex>;
}

/// The index a [`ToolDiscovery`] made of the tools served at one time.
pub trait DiscoveryIndex: Send + Sync {
    /// What `tools/list` lists: the index's own tools, then the served tools it lists too (the
    /// pinned ones), each at most once.
    fn listing(&self) -> (Vec<Tool>, Vec<ServedTool>);

    /// The answer to a call of one of the index's own tools; `None` for any other name. The
    /// answer may wait (tool search asks an embeddings endpoint for the query's vector).
    fn answer<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<&'a JsonObject>,
    ) -> Option<DiscoveryAnswer<'a>>;

    /// The call that a call of `name` stands for (tool search's `call_tool`); `None` when
    /// `name` stands for no other call. The call named then goes the way of any other:
    /// confirmation, tasks, authorization scopes.
    fn target(&self, name: &str, arguments: Option<&JsonObject>) -> Option<Target>;
}

/// The answer of a [`DiscoveryIndex`]'s own tool, once it is ready.
pub type DiscoveryAnswer<'a> = Pin<Box<dyn Future<Output = CallToolResult> + Send + 'a>>;

/// What a call of a [`DiscoveryIndex`]'s tool stands for ([`DiscoveryIndex::target`]).
#[derive(Debug)]
pub enum Target {
    /// A call of the served tool `name` with `arguments`.
    Call {
        /// The served tool's name.
        name: String,
        /// Its arguments (`None`: none given).
        arguments: Option<JsonObject>,
    },
    /// No call: the arguments do not name one, and this answer says why.
    Refused(Box<CallToolResult>),
}

/// A served tool as a [`ToolDiscovery`] sees it: its name and what its listing is made of,
/// read without making its schemas; [`definition`](Self::definition) makes them. Cloning is
/// cheap.
#[derive(Clone)]
pub struct ServedTool {
    registered: Arc<Registered>,
    /// The name of the catalog's GetOperation tool, which the description of a tool that
    /// waits for its operation names.
    redeem_tool: Option<Arc<str>>,
}

impl std::fmt::Debug for ServedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedTool")
            .field("name", &self.name())
            .field("rpc", &self.rpc_path())
            .finish_non_exhaustive()
    }
}

impl ServedTool {
    pub(crate) fn new(registered: Arc<Registered>, redeem_tool: Option<Arc<str>>) -> Self {
        Self {
            registered,
            redeem_tool,
        }
    }

    fn compiled(&self) -> &CompiledTool {
        &self.registered.entry.tool
    }

    /// The tool's name, as listed (with any prefix).
    pub fn name(&self) -> &str {
        &self.registered.entry.name
    }

    /// The gRPC path the tool calls, `/package.Service/Method`.
    pub fn rpc_path(&self) -> &str {
        &self.compiled().def.rpc_path
    }

    /// The tool's title (empty when it has none).
    pub fn title(&self) -> &str {
        &self.compiled().def.title
    }

    /// The tool's description, as listed.
    pub fn description(&self) -> String {
        self.registered
            .entry
            .description(self.redeem_tool.as_deref())
            .unwrap_or_default()
            .into_owned()
    }

    /// The proto comment of the tool's service, when the tool was made from descriptors that
    /// carry source info (tools made at run time, as the gateway makes them).
    pub fn service_description(&self) -> Option<&str> {
        self.compiled().def.service_description.as_deref()
    }

    /// The tool's annotations, as listed; `None` when no hint is set.
    pub fn annotations(&self) -> Option<rmcp::model::ToolAnnotations> {
        annotations_to_rmcp(self.compiled().def.annotations)
    }

    /// OAuth scopes a call needs beyond those every request needs
    /// (`(rust_mcp.tool).required_scopes`), in the order given.
    pub fn required_scopes(&self) -> impl Iterator<Item = &str> {
        self.compiled()
            .def
            .required_scopes
            .iter()
            .map(|scope| &**scope)
    }

    /// Calls `each` with the name of every field of the tool's input message (`true`), then of
    /// its output message (`false`), without resolving its types.
    pub fn each_field(&self, each: impl FnMut(&str, bool)) {
        self.compiled().types.each_field(each);
    }

    /// The tool as `tools/list` shows it, schemas made; why not, when they cannot be made.
    ///
    /// # Errors
    ///
    /// The tool's schemas cannot be made (a tool made from descriptors at run time).
    pub fn definition(&self) -> Result<Tool, String> {
        self.registered.entry.listing(self.redeem_tool.as_deref())
    }
}

impl Listed for ServedTool {
    fn name(&self) -> &str {
        ServedTool::name(self)
    }

    fn tool(&self) -> Result<Tool, String> {
        self.definition()
    }

    fn made_of(&self) -> Option<(&Arc<CompiledTool>, Option<&str>)> {
        Some((&self.registered.entry.tool, self.redeem_tool.as_deref()))
    }

    fn prepare(&self) {
        let tool = &self.registered.entry.tool;
        // A failure is logged there, and listings leave the tool out.
        let _ = tool.schemas.get(&tool.def.name);
    }
}
