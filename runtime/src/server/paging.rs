//! `tools/list` in pages: a cursor names the last tool of the previous page.
//!
//! The listing is sorted by name and fixed when the server is built, so a cursor stays valid for
//! the server's lifetime, on every session and replica that serves the same tools. Cursors are
//! the URL-safe base64 of that name: opaque to clients, as MCP asks. A page ends at a number of
//! tools, or earlier at a number of bytes ([`DEFAULT_PAGE_BYTES`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{CacheScope, ListToolsResult, Tool};

use crate::tool::toolset::CompiledTool;

/// Tools per `tools/list` page unless [`McpServerBuilder::page_size`] says otherwise.
///
/// Large enough that ordinary servers answer in one page (clients that do not follow cursors
/// still see every tool), small enough to split tool sets in the thousands.
///
/// [`McpServerBuilder::page_size`]: crate::McpServerBuilder::page_size
pub const DEFAULT_PAGE_SIZE: usize = 500;

/// Bytes of tool JSON per `tools/list` page unless [`McpServerBuilder::page_bytes`] says
/// otherwise: half of the 1 MiB that clients such as the Python SDK 2.x accept in one
/// server-sent event. A page holds at least one tool, however large.
///
/// [`McpServerBuilder::page_bytes`]: crate::McpServerBuilder::page_bytes
pub const DEFAULT_PAGE_BYTES: usize = 512 * 1024;

/// How long a client may treat a `tools/list` page as fresh (`ttlMs`, protocol revision
/// 2026-07-28) unless [`McpServerBuilder::list_cache`] says otherwise: 5 minutes. A server's
/// tools are fixed when it is built, so the bound is how soon a client sees a new release's
/// tools after a restart.
///
/// [`McpServerBuilder::list_cache`]: crate::McpServerBuilder::list_cache
pub const DEFAULT_LIST_TTL: Duration = Duration::from_secs(300);

/// The caching hints of `tools/list` pages (SEP-2549), sent to clients on protocol revision
/// 2026-07-28 or later; older revisions have no such fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListCache {
    pub(crate) ttl: Duration,
    pub(crate) scope: CacheScope,
}

impl Default for ListCache {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_LIST_TTL,
            scope: CacheScope::Public,
        }
    }
}

const CURSOR: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What the listing for clients of revision 2025-11-25 adds to a tool that runs as a task
/// (`task_shape`; `"required"` has the length of `"optional"`), counted in every page's
/// bound so that those pages stay within it too.
pub(crate) const TASK_EXECUTION: &str = r#","execution":{"taskSupport":"optional"}"#;

/// A tool as a listing holds it: its name, and its `tools/list` entry, made when a page is
/// written. A served tool keeps its schemas as text and makes the JSON trees rmcp's [`Tool`]
/// holds only then, so that a listing of thousands of tools does not hold them all.
pub(crate) trait Listed: Send + Sync {
    /// The tool's name.
    fn name(&self) -> &str;
    /// The tool as `tools/list` shows it, or why it cannot be shown (a served tool whose
    /// schemas, made when first needed, cannot be made): listings leave it out.
    fn tool(&self) -> Result<Tool, String>;
    /// What a served tool's listing is made of: the tool, and the GetOperation tool its
    /// description names. Two listed tools made of the same are the same tool, compared
    /// without making their schemas.
    fn made_of(&self) -> Option<(&Arc<CompiledTool>, Option<&str>)> {
        None
    }
    /// Makes now what [`tool`](Self::tool) would make when first asked (a served tool's
    /// schemas, made when first needed).
    fn prepare(&self) {}
}

/// [`Listed::prepare`]s `tools` a package at a time, in the order of their RPC paths: a tool of
/// a [`SetPools`](crate::SetPools) makes its schemas in its package's pool, which is built
/// again once let go, and tools sorted by name mix packages.
pub(crate) fn prepare_by_package<L: Listed>(tools: &[L]) {
    let mut order: Vec<&L> = tools.iter().collect();
    order.sort_by_cached_key(|tool| {
        tool.made_of()
            .map(|(compiled, _)| compiled.def.rpc_path.to_string())
    });
    order.iter().for_each(|tool| tool.prepare());
}

/// A listing's shared entry is the tool it shares.
impl<T: Listed + ?Sized> Listed for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn tool(&self) -> Result<Tool, String> {
        (**self).tool()
    }

    fn made_of(&self) -> Option<(&Arc<CompiledTool>, Option<&str>)> {
        (**self).made_of()
    }

    fn prepare(&self) {
        (**self).prepare();
    }
}

/// A tool made ahead, such as the discovery tools.
impl Listed for Tool {
    fn name(&self) -> &str {
        &self.name
    }

    fn tool(&self) -> Result<Tool, String> {
        Ok(self.clone())
    }
}

/// Whether two listings show the same tools, made and compared one pair at a time: tools of
/// one registration (a tool set served again) without making them.
pub(crate) fn same_tools<L: Listed>(a: &[L], b: &[L]) -> bool {
    let same_making = |a: &L, b: &L| match (a.made_of(), b.made_of()) {
        (Some((a, a_redeem)), Some((b, b_redeem))) => Arc::ptr_eq(a, b) && a_redeem == b_redeem,
        _ => false,
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.name() == b.name() && (same_making(a, b) || a.tool().ok() == b.tool().ok())
        })
}

/// The server's tools in `tools/list` order, and how to page them.
pub(crate) struct Listing {
    tools: Vec<Arc<dyn Listed>>,
    /// Which tools run as tasks (their pages may carry [`TASK_EXECUTION`]).
    tasks: Vec<bool>,
    /// Each tool's JSON size (with its separating comma), measured when a page first reaches
    /// it: building a server with thousands of tools stays quick, and the first `tools/list`
    /// measures one page, not all of them.
    sizes: Vec<OnceLock<usize>>,
    page_size: usize,
    page_bytes: usize,
    cache: ListCache,
}

impl Listing {
    /// `tools` sorted by name, in pages of at most `page_size` tools and `page_bytes` bytes.
    pub(crate) fn new(
        tools: Vec<Arc<dyn Listed>>,
        page_size: usize,
        page_bytes: usize,
        cache: ListCache,
    ) -> Self {
        Self {
            sizes: tools.iter().map(|_| OnceLock::new()).collect(),
            tasks: vec![false; tools.len()],
            tools,
            page_size: page_size.max(1),
            page_bytes,
            cache,
        }
    }

    /// Marks the tools that run as tasks, one flag per tool in listing order.
    pub(crate) fn with_tasks(mut self, tasks: Vec<bool>) -> Self {
        if tasks.len() == self.tools.len() {
            self.tasks = tasks;
        }
        self
    }

    /// Every tool, sorted by name.
    pub(crate) fn tools(&self) -> &[Arc<dyn Listed>] {
        &self.tools
    }

    /// The page that starts after `cursor`, with caching hints when `hints` (the client speaks
    /// revision 2026-07-28 or later).
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        hints: bool,
    ) -> Result<ListToolsResult, ErrorData> {
        let listing = &self.tools;
        let start = match cursor {
            None => 0,
            Some(cursor) => {
                let invalid = || {
                    ErrorData::invalid_params(
                        "invalid tools/list cursor: pass the nextCursor of an earlier page \
                         unchanged",
                        None,
                    )
                };
                let name = CURSOR
                    .decode(cursor)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .ok_or_else(invalid)?;
                let index = listing
                    .binary_search_by(|tool| tool.name().cmp(name.as_str()))
                    .map_err(|_| invalid())?;
                index + 1
            }
        };
        let rest = listing.get(start..).unwrap_or_default();
        let window = &rest[..rest.len().min(self.page_size)];
        let mut bytes = 0;
        let mut tools = Vec::new();
        // Candidates looked at: listed, or left out because they cannot be listed.
        let mut looked_at = 0;
        for (at, listed) in window.iter().enumerate() {
            let Ok(tool) = listed.tool() else {
                looked_at = at + 1;
                continue;
            };
            let size = self.sizes.get(start + at).map_or(0, |size| {
                *size.get_or_init(|| {
                    let task = self.tasks.get(start + at).copied().unwrap_or(false);
                    let execution = if task { TASK_EXECUTION.len() } else { 0 };
                    serde_json::to_vec(&tool).map_or(0, |json| json.len()) + 1 + execution
                })
            });
            if !tools.is_empty() && bytes + size > self.page_bytes {
                break;
            }
            tools.push(tool);
            bytes += size;
            looked_at = at + 1;
        }
        let end = start + looked_at;
        let mut result = ListToolsResult::with_all_items(tools);
        if end < listing.len()
            && let Some(last) = listing.get(end - 1)
        {
            result.next_cursor = Some(CURSOR.encode(last.name().as_bytes()));
        }
        if hints {
            let ttl = u64::try_from(self.cache.ttl.as_millis()).unwrap_or(u64::MAX);
            result = result.with_ttl_ms(ttl).with_cache_scope(self.cache.scope);
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(count: usize) -> Vec<Arc<dyn Listed>> {
        (0..count)
            .map(|i| {
                let tool = Tool::new(format!("t{i:04}"), "", Arc::new(Default::default()));
                Arc::new(tool) as Arc<dyn Listed>
            })
            .collect()
    }

    /// Every page, following the cursors.
    fn pages(listing: &Listing) -> Vec<Vec<Tool>> {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let result = listing.page(cursor.as_deref(), false).unwrap();
            pages.push(result.tools);
            match result.next_cursor {
                Some(next) => cursor = Some(next),
                None => return pages,
            }
        }
    }

    fn names(pages: &[Vec<Tool>]) -> Vec<String> {
        pages.iter().flatten().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn pages_cover_the_listing_once_in_order() {
        for (count, size) in [(0, 3), (1, 3), (3, 3), (7, 3), (2000, 500), (5, 1)] {
            let tools = listing(count);
            let expected: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
            let pages = pages(&Listing::new(
                tools,
                size,
                DEFAULT_PAGE_BYTES,
                ListCache::default(),
            ));
            assert!(pages.iter().all(|page| page.len() <= size));
            assert_eq!(names(&pages), expected, "{count} tools, pages of {size}");
            assert_eq!(
                pages.len(),
                count.div_ceil(size).max(1),
                "{count} tools, pages of {size}"
            );
        }
    }

    #[test]
    fn pages_end_before_their_json_passes_the_byte_bound() {
        let tools = listing(100);
        let expected: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
        let one = serde_json::to_vec(&tools[0].tool()).unwrap().len() + 1;
        // Room for three tools and a half: pages of three.
        let pages = pages(&Listing::new(
            tools.clone(),
            500,
            one * 7 / 2,
            ListCache::default(),
        ));
        assert_eq!(names(&pages), expected);
        assert!(pages[..pages.len() - 1].iter().all(|page| page.len() == 3));
        assert_eq!(pages.len(), 34);
        // A tool larger than the bound still has a page of its own.
        let pages = self::pages(&Listing::new(tools, 500, 1, ListCache::default()));
        assert_eq!(pages.len(), 100);
        assert!(pages.iter().all(|page| page.len() == 1));
    }

    #[test]
    fn a_foreign_cursor_is_invalid_params() {
        let listing = Listing::new(listing(10), 3, DEFAULT_PAGE_BYTES, ListCache::default());
        for cursor in ["", "!!", "bm90LWEtdG9vbA"] {
            let error = listing.page(Some(cursor), false).unwrap_err();
            assert_eq!(
                error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{cursor}"
            );
        }
    }

    #[test]
    fn the_byte_bound_leaves_room_for_the_execution_of_task_tools() {
        let tools = listing(12);
        let one = serde_json::to_vec(&tools[0].tool()).unwrap().len() + 1;
        let bound = (one + TASK_EXECUTION.len()) * 3;
        // Without task tools, the bound holds more than three tools a page.
        let plain = pages(&Listing::new(
            tools.clone(),
            500,
            bound,
            ListCache::default(),
        ));
        assert!(plain[0].len() > 3, "{}", plain[0].len());
        // Every tool a task: three a page, so that the pages of revision 2025-11-25, which
        // add `execution` to each, stay within the bound.
        let tasks =
            Listing::new(tools, 500, bound, ListCache::default()).with_tasks(vec![true; 12]);
        let tasks = pages(&tasks);
        assert!(tasks.iter().all(|page| page.len() == 3), "{tasks:?}");
    }
}
