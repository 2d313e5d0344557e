//! `tools/list` in pages, with rmcp's client: 2,000+ tools, each listed exactly once, in pages
//! bounded by count and by bytes.

use test_kit::demo as common;

use std::time::Duration;

use common::{Backend, Client, TestResult, connect, connect_with, pb::item_service_mcp};
use rmcp::model::{ErrorCode, PaginatedRequestParams, ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ServiceError};
use tonic_mcp::{CacheScope, DEFAULT_LIST_TTL, DEFAULT_PAGE_BYTES, DEFAULT_PAGE_SIZE, McpServer};

/// What the listing for clients of revision 2025-11-25 adds to a tool that runs as a task.
const TASK_EXECUTION: &str = r#","execution":{"taskSupport":"optional"}"#;

/// A server with `copies` prefixed copies of the demo tool set (7 tools each).
fn server(
    copies: usize,
    page_size: Option<usize>,
    page_bytes: Option<usize>,
) -> TestResult<McpServer> {
    let tools = item_service_mcp::from_service(Backend::default())?;
    let mut builder = McpServer::builder("many", "0.1.0");
    if let Some(page_size) = page_size {
        builder = builder.page_size(page_size);
    }
    if let Some(page_bytes) = page_bytes {
        builder = builder.page_bytes(page_bytes);
    }
    for copy in 0..copies {
        builder = builder.tool_set(tools.clone().with_prefix(&format!("c{copy:03}"))?)?;
    }
    Ok(builder.build())
}

/// Every page by hand, following `nextCursor` until a page has none.
async fn pages(client: &Client) -> TestResult<Vec<Vec<Tool>>> {
    let mut cursor = None;
    let mut pages = Vec::new();
    loop {
        let page = client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        pages.push(page.tools);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(pages),
        }
    }
}

#[tokio::test]
async fn two_thousand_tools_are_listed_in_pages_each_once() -> TestResult {
    // No byte bound: pages of the default count.
    let server = server(290, None, Some(usize::MAX))?;
    let expected: Vec<String> = server.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(expected.len(), 2030);
    let (client, _) = connect(server).await?;

    // The first page is the default size and links to the next.
    let first = client.list_tools(None).await?;
    assert_eq!(first.tools.len(), DEFAULT_PAGE_SIZE);
    assert!(first.next_cursor.is_some());

    // rmcp's client follows the cursors: every tool once, in order.
    assert_eq!(test_kit::tool_names(&client).await?, expected);

    // By hand: five pages, the last without a cursor.
    let pages: Vec<usize> = pages(&client).await?.iter().map(Vec::len).collect();
    assert_eq!(pages, [500, 500, 500, 500, 30]);
    Ok(())
}

#[tokio::test]
async fn the_page_size_is_one_setting_and_bad_cursors_are_invalid_params() -> TestResult {
    let server = server(3, Some(4), None)?;
    let (client, _) = connect(server).await?;
    let first = client.list_tools(None).await?;
    assert_eq!(first.tools.len(), 4);
    assert_eq!(client.list_all_tools().await?.len(), 21);

    let error = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("not-a-cursor!".to_owned())),
        ))
        .await;
    let Err(ServiceError::McpError(data)) = error else {
        return Err(format!("a bad cursor must be a protocol error: {error:?}").into());
    };
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert!(data.message.contains("cursor"), "{}", data.message);
    Ok(())
}

/// With the defaults, a page ends before its tools' JSON would pass `DEFAULT_PAGE_BYTES`: each
/// page is as full as that allows (its next tool would not fit), and all pages together list
/// every tool once, in order.
#[tokio::test]
async fn pages_are_bounded_by_their_json_size() -> TestResult {
    let server = server(290, None, None)?;
    let expected: Vec<String> = server.tools().iter().map(|t| t.name.to_string()).collect();
    let (client, _) = connect(server).await?;
    let pages = pages(&client).await?;
    // A tool's size as the bound counts it: its JSON and comma, plus the `execution` that the
    // listing for clients of revision 2025-11-25 adds to a tool that runs as a task.
    let size = |tool: &rmcp::model::Tool| -> TestResult<usize> {
        let task = tool
            .meta
            .as_ref()
            .is_some_and(|meta| meta.0[tonic_mcp::RPC_META_KEY]["taskSupport"] == "optional");
        let execution = if task { TASK_EXECUTION.len() } else { 0 };
        Ok(serde_json::to_vec(tool)?.len() + 1 + execution)
    };
    for (index, page) in pages.iter().enumerate() {
        let bytes = page.iter().map(size).sum::<TestResult<usize>>()?;
        assert!(
            bytes <= DEFAULT_PAGE_BYTES,
            "page {index}: {bytes} bytes of tools"
        );
        assert!(
            page.len() < DEFAULT_PAGE_SIZE,
            "page {index}: {} tools",
            page.len()
        );
        if let Some(next) = pages.get(index + 1).and_then(|next| next.first()) {
            assert!(
                bytes + size(next)? > DEFAULT_PAGE_BYTES,
                "page {index} ({bytes} bytes) had room for the next tool"
            );
        }
    }
    assert!(pages.len() > 5, "{} pages", pages.len());
    let names: Vec<String> = pages.iter().flatten().map(|t| t.name.to_string()).collect();
    assert_eq!(names, expected);
    Ok(())
}

/// `server/discover` on revision 2026-07-28: the lifecycle whose lists carry caching hints.
fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

#[tokio::test]
async fn pages_carry_caching_hints_on_2026_07_28_only() -> TestResult {
    // Revision 2026-07-28: every page says how long it stays fresh and that anyone may cache
    // it (every caller sees the same tools), not rmcp's fallback of 0 ms and private.
    let (client, _) = connect_with(server(2, Some(5), None)?, discover()).await?;
    let mut cursor = None;
    let mut seen = 0;
    loop {
        let page = client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        let ttl = u64::try_from(DEFAULT_LIST_TTL.as_millis())?;
        assert_eq!(page.ttl_ms, Some(ttl));
        assert_eq!(page.cache_scope, Some(CacheScope::Public));
        seen += 1;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, 3, "14 tools in pages of 5");

    // The builder's setting.
    let private = McpServer::builder("private", "0.1.0")
        .tool_set(item_service_mcp::from_service(Backend::default())?)?
        .list_cache(Duration::from_secs(2), CacheScope::Private)
        .build();
    let (client, _) = connect_with(private, discover()).await?;
    let page = client.list_tools(None).await?;
    assert_eq!(page.ttl_ms, Some(2000));
    assert_eq!(page.cache_scope, Some(CacheScope::Private));

    // Revision 2025-11-25 has no such fields.
    let (client, _) = connect(server(1, None, None)?).await?;
    let page = client.list_tools(None).await?;
    assert_eq!((page.ttl_ms, page.cache_scope), (None, None));
    Ok(())
}
