//! The tools a server serves now: each registered tool with its set's settings, their
//! `tools/list` listing, and what calls share (the GetOperation tool that redeems operations,
//! every message type). A server holds one catalog at a time; [`McpServer::replace_tools`]
//! swaps in a new one, while calls in flight finish on the catalog they started with.
//!
//! [`McpServer::replace_tools`]: crate::McpServer::replace_tools

use std::{
    collections::BTreeMap,
    sync::{Arc, OnceLock},
};

use rmcp::model::Tool;

use crate::{
    call::longrunning::Redeemer,
    discovery::{Discovery, ToolSearch},
    error::Error,
    server::paging::{ListCache, Listed, Listing},
    tool::descriptor_pools,
    tool::toolset::{CompiledTool, ToolSet},
    tool::union_pool::UnionPool,
};

use super::Registered;

/// A registered tool and the catalog it was found in: a call keeps both, so that it finishes
/// on the tools it started with, and looks the catalog up once.
pub(crate) struct Found {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) registered: Arc<Registered>,
}

impl std::ops::Deref for Found {
    type Target = Registered;

    fn deref(&self) -> &Registered {
        &self.registered
    }
}

/// How `tools/list` pages are cut and cached, kept for every catalog of a server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paging {
    pub(crate) page_size: usize,
    pub(crate) page_bytes: usize,
    pub(crate) list_cache: ListCache,
}

/// The tools served at one time, and what their calls share.
pub(crate) struct Catalog {
    pub(crate) tools: BTreeMap<String, Arc<Registered>>,
    pub(crate) listing: Listing,
    pub(crate) redeemer: Option<Redeemer>,
    pub(crate) types: UnionPool,
    /// Tool search, when the server lists the discovery tools instead of every tool.
    pub(crate) discovery: Option<Discovery>,
    /// Some tool may run as a task.
    pub(crate) task_tools: bool,
}

/// Adds the tools of `set`, with its settings, to `tools`.
///
/// # Errors
///
/// [`Error::DuplicateTool`] when a name is taken already; the message names both RPCs.
pub(crate) fn register(
    tools: &mut BTreeMap<String, Arc<Registered>>,
    set: ToolSet,
) -> Result<(), Error> {
    let config = Arc::new(set.config);
    for entry in set.tools {
        if let Some(existing) = tools.get(&entry.name) {
            return Err(Error::DuplicateTool {
                name: entry.name,
                first: existing.entry.tool.def.rpc_path.to_string(),
                second: entry.tool.def.rpc_path.to_string(),
            });
        }
        tools.insert(
            entry.name.clone(),
            Arc::new(Registered {
                entry,
                set: Arc::clone(&config),
                definition: OnceLock::new(),
            }),
        );
    }
    Ok(())
}

impl Catalog {
    pub(crate) fn new(
        tools: BTreeMap<String, Arc<Registered>>,
        paging: Paging,
        search: Option<&ToolSearch>,
    ) -> Catalog {
        let redeemer = tools.values().find_map(|registered| {
            Some(Redeemer {
                tool: registered.entry.name.clone(),
                operations: Arc::clone(registered.entry.tool.operations.as_ref()?),
            })
        });
        let redeem_tool: Option<Arc<str>> = redeemer.as_ref().map(|r| r.tool.as_str().into());
        let served = tools.values().map(|registered| ServedTool {
            registered: Arc::clone(registered),
            redeem_tool: redeem_tool.clone(),
        });
        let (listing, discovery) = match search {
            None => (
                served
                    .map(|served| Arc::new(served) as Arc<dyn Listed>)
                    .collect(),
                None,
            ),
            Some(search) => {
                let discovery = Discovery::new(
                    search,
                    served.map(|served| {
                        let description = served.description();
                        let compiled = Arc::clone(&served.registered.entry.tool);
                        (Arc::new(served) as Arc<dyn Listed>, description, compiled)
                    }),
                );
                (discovery.listing().to_vec(), Some(discovery))
            }
        };
        let task_tools = tools
            .values()
            .any(|r| r.entry.tool.meta.task_support.allows_tasks());
        let runs_as_task: Vec<bool> = listing
            .iter()
            .map(|tool| {
                tools
                    .get(tool.name())
                    .is_some_and(|r| r.entry.tool.meta.task_support.allows_tasks())
            })
            .collect();
        let types = UnionPool::new(
            tools
                .values()
                .map(|registered| registered.entry.tool.types.source()),
        );
        // The pools the tools were made with: a call builds its package's again.
        types.forget_recent();
        descriptor_pools::forget_registering();
        Catalog {
            tools,
            listing: Listing::new(
                listing,
                paging.page_size,
                paging.page_bytes,
                paging.list_cache,
            )
            .with_tasks(runs_as_task),
            redeemer,
            types,
            discovery,
            task_tools,
        }
    }

    /// The definition of the served tool `name`, listed or not; `None` also when its schemas
    /// cannot be made.
    pub(crate) fn tool(&self, name: &str) -> Option<Tool> {
        let registered = self.tools.get(name)?;
        let redeem_tool = self.redeemer.as_ref().map(|r| r.tool.as_str());
        registered
            .definition
            .get_or_init(|| registered.entry.listing(redeem_tool).ok())
            .clone()
    }

    /// The served tool `name` without its schemas ([`Listed::head`]).
    pub(crate) fn tool_head(&self, name: &str) -> Option<Tool> {
        let redeem_tool = self.redeemer.as_ref().map(|r| r.tool.as_str());
        Some(self.tools.get(name)?.entry.head(redeem_tool))
    }

    /// Every served tool, sorted by name, listed or not.
    pub(crate) fn every_tool(&self) -> &[Arc<dyn Listed>] {
        match &self.discovery {
            Some(discovery) => discovery.tools(),
            None => self.listing.tools(),
        }
    }
}

/// A served tool as a listing holds it: its registration, and the name of the catalog's
/// GetOperation tool, which the description of a tool that waits for its operation names.
struct ServedTool {
    registered: Arc<Registered>,
    redeem_tool: Option<Arc<str>>,
}

impl ServedTool {
    fn description(&self) -> String {
        self.registered
            .entry
            .description(self.redeem_tool.as_deref())
            .unwrap_or_default()
            .into_owned()
    }
}

impl Listed for ServedTool {
    fn name(&self) -> &str {
        &self.registered.entry.name
    }

    fn tool(&self) -> Result<Tool, String> {
        self.registered.entry.listing(self.redeem_tool.as_deref())
    }

    fn head(&self) -> Tool {
        self.registered.entry.head(self.redeem_tool.as_deref())
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
