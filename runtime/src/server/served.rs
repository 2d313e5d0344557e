//! What a server serves: its tools' definitions, as listed and as every served tool, their
//! names, and the schemas made ahead of their listing.

use rmcp::model::{JsonObject, Tool};

use crate::server::{discovery::ServedTool, paging::prepare_by_package};

use super::McpServer;

impl McpServer {
    /// Tool definitions as `tools/list` shows them: every tool, sorted by name, or under tool
    /// search the discovery tools and the pinned ones ([`served_tools`](Self::served_tools)
    /// gives every tool then). A tool whose schemas cannot be made is left out, as there
    /// ([`SpecTool::later`](crate::SpecTool::later)).
    pub fn tools(&self) -> Vec<Tool> {
        self.catalog()
            .listing
            .tools()
            .iter()
            .filter_map(|tool| tool.tool().ok())
            .collect()
    }

    /// The served tool a `tools/call` of `name` runs: under tool search, `call_tool` runs the
    /// tool its `name` argument names (`target`). `None` for a tool not served now. What a
    /// check of the calls reads (`tonic-mcp-auth` checks its annotations and
    /// [`required_scopes`](crate::ServedTool::required_scopes)).
    pub fn tool_called(&self, name: &str, target: Option<&str>) -> Option<ServedTool> {
        let catalog = self.catalog();
        let named = catalog.discovery.as_ref().and_then(|discovery| {
            let arguments =
                target.map(|target| JsonObject::from_iter([("name".to_owned(), target.into())]));
            discovery.target(name, arguments.as_ref())
        });
        match named {
            Some(super::discovery::Target::Call { name, .. }) => catalog.served_tool(&name),
            Some(super::discovery::Target::Refused(_)) => None,
            None => catalog.served_tool(name),
        }
    }

    /// Every served tool's definition, sorted by name: what [`tools`](Self::tools) gives, and
    /// under tool search
    /// ([`McpServerBuilder::tool_search`](crate::McpServerBuilder::tool_search)) the tools
    /// `tools/list` leaves to `search_tools`. Each definition's schemas are made into JSON
    /// trees for the call: to count or name the tools,
    /// [`served_tool_names`](Self::served_tool_names) is far cheaper.
    pub fn served_tools(&self) -> Vec<Tool> {
        self.catalog()
            .served
            .iter()
            .filter_map(|tool| tool.definition().ok())
            .collect()
    }

    /// Every served tool, sorted by name, as tool discovery sees it ([`ServedTool`]): read
    /// without making its schemas.
    pub fn served(&self) -> Vec<ServedTool> {
        self.catalog().served.clone()
    }

    /// Makes, on a thread of its own, the schemas of every served tool that makes them when
    /// first needed ([`SpecTool::later`](crate::SpecTool::later)),
    /// a package after another, and returns at once. The server answers meanwhile; a client that
    /// lists every page (most hosts do, when they connect) then finds most schemas made,
    /// instead of waiting for each page's. The gateway does this unless it serves tool search,
    /// where a client asks for few schemas. Schemas made are kept, as when a listing makes
    /// them. Tools served later (`replace_tools`) are not included.
    ///
    /// # Errors
    ///
    /// The operating system could not start the thread.
    pub fn make_schemas_in_background(&self) -> std::io::Result<()> {
        let catalog = self.catalog();
        std::thread::Builder::new()
            .name("mcp-schemas".to_owned())
            .spawn(move || {
                let started = std::time::Instant::now();
                let tools = &catalog.served;
                prepare_by_package(tools);
                tracing::debug!(
                    tools = tools.len(),
                    seconds = started.elapsed().as_secs_f64(),
                    "every tool's schemas are made"
                );
            })
            .map(drop)
    }

    /// The names of every served tool, sorted: those of [`served_tools`](Self::served_tools),
    /// without making their definitions.
    pub fn served_tool_names(&self) -> Vec<String> {
        self.catalog()
            .served
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }
}
