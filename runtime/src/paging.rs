//! `tools/list` in pages: a cursor names the last tool of the previous page.
//!
//! The listing is sorted by name and fixed when the server is built, so a cursor stays valid for
//! the server's lifetime, on every session and replica that serves the same tools. Cursors are
//! the URL-safe base64 of that name: opaque to clients, as MCP asks.

use base64::Engine as _;
use rmcp::{ErrorData, model::ListToolsResult, model::Tool};

/// Tools per `tools/list` page unless [`McpServerBuilder::page_size`] says otherwise.
///
/// Large enough that ordinary servers answer in one page (clients that do not follow cursors
/// still see every tool), small enough to split tool sets in the thousands.
///
/// [`McpServerBuilder::page_size`]: crate::McpServerBuilder::page_size
pub const DEFAULT_PAGE_SIZE: usize = 500;

const CURSOR: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The page of `listing` (sorted by name) that starts after `cursor`.
pub(crate) fn page(
    listing: &[Tool],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<ListToolsResult, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let invalid = || {
                ErrorData::invalid_params(
                    "invalid tools/list cursor: pass the nextCursor of an earlier page unchanged",
                    None,
                )
            };
            let name = CURSOR
                .decode(cursor)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(invalid)?;
            let index = listing
                .binary_search_by(|tool| tool.name.as_ref().cmp(name.as_str()))
                .map_err(|_| invalid())?;
            index + 1
        }
    };
    let end = start.saturating_add(page_size.max(1)).min(listing.len());
    let tools = listing.get(start..end).unwrap_or_default().to_vec();
    let mut result = ListToolsResult::with_all_items(tools);
    if end < listing.len()
        && let Some(last) = listing.get(end - 1)
    {
        result.next_cursor = Some(CURSOR.encode(last.name.as_bytes()));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn listing(count: usize) -> Vec<Tool> {
        (0..count)
            .map(|i| Tool::new(format!("t{i:04}"), "", Arc::new(Default::default())))
            .collect()
    }

    #[test]
    fn pages_cover_the_listing_once_in_order() {
        for (count, size) in [(0, 3), (1, 3), (3, 3), (7, 3), (2000, 500), (5, 1)] {
            let tools = listing(count);
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            let mut pages = 0;
            loop {
                let result = page(&tools, cursor.as_deref(), size).unwrap();
                assert!(result.tools.len() <= size);
                seen.extend(result.tools.into_iter().map(|t| t.name.into_owned()));
                pages += 1;
                match result.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            let expected: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
            assert_eq!(seen, expected, "{count} tools, pages of {size}");
            assert_eq!(
                pages,
                count.div_ceil(size).max(1),
                "{count} tools, pages of {size}"
            );
        }
    }

    #[test]
    fn a_foreign_cursor_is_invalid_params() {
        let tools = listing(10);
        for cursor in ["", "!!", "bm90LWEtdG9vbA"] {
            let error = page(&tools, Some(cursor), 3).unwrap_err();
            assert_eq!(
                error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{cursor}"
            );
        }
    }
}
