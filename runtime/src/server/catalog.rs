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

use rmcp::{ErrorData, model::Tool};

use crate::{
    call::longrunning::Redeemer,
    error::Error,
    server::discovery::{DiscoveryIndex, ServedTool, ToolDiscovery},
    server::paging::{ListCache, Listed, Listing},
    tool::descriptor_pools,
    tool::toolset::ToolSet,
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
    /// Every served tool, sorted by name, listed or not.
    pub(crate) served: Vec<ServedTool>,
    /// The index of tool discovery (tool search), when the server lists its tools instead of
    /// every tool.
    pub(crate) discovery: Option<Box<dyn DiscoveryIndex>>,
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
        discovery: Option<&dyn ToolDiscovery>,
    ) -> Catalog {
        let redeemer = tools.values().find_map(|registered| {
            Some(Redeemer {
                tool: registered.entry.name.clone(),
                operations: Arc::clone(registered.entry.tool.operations.as_ref()?),
            })
        });
        let redeem_tool: Option<Arc<str>> = redeemer.as_ref().map(|r| r.tool.as_str().into());
        let served: Vec<ServedTool> = tools
            .values()
            .map(|registered| ServedTool::new(Arc::clone(registered), redeem_tool.clone()))
            .collect();
        fn shared(tool: impl Listed + 'static) -> Arc<dyn Listed> {
            Arc::new(tool)
        }
        let (listing, discovery): (Vec<_>, _) = match discovery {
            None => (served.iter().cloned().map(shared).collect(), None),
            Some(discovery) => {
                let index = discovery.index(served.clone());
                let (own, pinned) = index.listing();
                let listing = own.into_iter().map(shared);
                (
                    listing.chain(pinned.into_iter().map(shared)).collect(),
                    Some(index),
                )
            }
        };
        let task_tools = tools
            .values()
            .any(|r| r.entry.tool.def.task_support.allows_tasks());
        let runs_as_task: Vec<bool> = listing
            .iter()
            .map(|tool| {
                tools
                    .get(tool.name())
                    .is_some_and(|r| r.entry.tool.def.task_support.allows_tasks())
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
            served,
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

    /// The tool `name`, found in this catalog; an unknown name is JSON-RPC invalid params.
    pub(crate) fn found(self: Arc<Self>, name: &str) -> Result<Found, ErrorData> {
        let registered = self
            .tools
            .get(name)
            .cloned()
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown tool `{name}`"), None))?;
        Ok(Found {
            catalog: self,
            registered,
        })
    }

    /// The served tool `name`.
    pub(crate) fn served_tool(&self, name: &str) -> Option<ServedTool> {
        let at = self
            .served
            .binary_search_by(|tool| tool.name().cmp(name))
            .ok()?;
        Some(self.served[at].clone())
    }
}
