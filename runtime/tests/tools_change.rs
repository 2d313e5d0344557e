//! `McpServer::replace_tools`: a server whose tools change while clients are connected tells
//! them (`notifications/tools/list_changed`, declared as `tools.listChanged`), lists the new
//! tools, and lets a call that started on the old ones finish.

use test_kit::demo as common;

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};
use std::time::Duration;

use common::{TestResult, channel, pb, start_backend};
use rmcp::{ClientHandler, service::NotificationContext};
use serde_json::json;
use tonic_mcp::McpServer;

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Changes(Arc<AtomicUsize>);

impl ClientHandler for Changes {
    async fn on_tool_list_changed(&self, _context: NotificationContext<rmcp::RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The server's `tools.listChanged`, as the client got it at `initialize`.
fn list_changed_declared<S: rmcp::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
) -> TestResult<Option<bool>> {
    let info = client.peer_info().ok_or("no server info")?;
    Ok(info
        .capabilities
        .tools
        .as_ref()
        .and_then(|tools| tools.list_changed))
}

async fn until(what: impl Fn() -> bool) -> bool {
    for _ in 0..100 {
        if what() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn clients_are_told_and_calls_in_flight_finish() -> TestResult {
    let (addr, _backend) = start_backend().await?;
    let tools = || -> TestResult<tonic_mcp::ToolSet> {
        Ok(pb::item_service_mcp::from_channel(
            tonic::transport::Channel::from_shared(format!("http://{addr}"))?.connect_lazy(),
        )?)
    };
    let _ = channel(addr).await?;
    let server = McpServer::builder("demo", "0")
        .tool_set(tools()?)?
        .tools_change(true)
        .build();
    let changes = Changes::default();
    let client = test_kit::connect_as(server.clone(), changes.clone()).await?;
    assert_eq!(list_changed_declared(&client)?, Some(true));

    // A call that takes 300 ms starts on the old tools.
    let slow = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            let mut params = rmcp::model::CallToolRequestParams::new("ItemService_Slow");
            params.arguments = json!({"sleep_ms": 300}).as_object().cloned();
            peer.call_tool(params).await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;

    // The same tools again: nothing changes, nobody is told.
    assert!(!server.replace_tools([tools()?]).await?);
    // Two tools with one name: refused, and the tools stay as they were.
    assert!(server.replace_tools([tools()?, tools()?]).await.is_err());
    assert!(server.tools().iter().any(|t| t.name == "ItemService_Slow"));
    // New names.
    assert!(server.replace_tools([tools()?.with_prefix("v2")?]).await?);
    assert!(
        until(|| changes.0.load(Ordering::SeqCst) == 1).await,
        "no list_changed"
    );
    let names = test_kit::tool_names(&client).await?;
    assert!(
        names.iter().all(|name| name.starts_with("v2_")),
        "{names:?}"
    );
    let call = |name: &'static str| {
        let mut params = rmcp::model::CallToolRequestParams::new(name);
        params.arguments = json!({"id": 1}).as_object().cloned();
        client.call_tool(params)
    };
    let old = call("ItemService_GetItem").await;
    assert!(old.is_err(), "the old name is gone: {old:?}");
    let new = call("v2_ItemService_GetItem").await?;
    assert_eq!(new.is_error, Some(false), "{new:?}");

    // The call that started before the change finished on the old tools.
    let slow = slow.await??;
    assert_eq!(slow.is_error, Some(false), "{slow:?}");
    assert_eq!(slow.structured_content, Some(json!({"slept_ms": 300})));
    assert_eq!(changes.0.load(Ordering::SeqCst), 1);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn without_tools_change_nothing_is_declared() -> TestResult {
    let (server, _backend) = common::grpc_server().await?;
    let (client, _) = common::connect(server).await?;
    assert_eq!(list_changed_declared(&client)?, None);
    client.cancel().await?;
    Ok(())
}
