//! Confirmation of tools marked `confirm` through MCP elicitation, with rmcp's client: accepted
//! calls reach the backend, declined ones never do, and clients without elicitation get the
//! tool's `unconfirmed` choice.

mod common;

use std::sync::{Arc, Mutex};

use common::{Backend, TestResult, pb, start_backend, status_of, text};
use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt as _,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
        ElicitationAction, ElicitationCapability, Implementation,
    },
    service::{RequestContext, RunningService},
};
use serde_json::{Value, json};
use tonic_mcp::{
    McpServer,
    codegen::{BoxTransport, ToolDef, ToolSetBuilder},
};

/// `GetItem`, confirmed; a client that cannot be asked is refused.
static CONFIRMED: ToolDef = ToolDef {
    name: "Confirmed",
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/GetItem","inputType":"demo.v1.GetItemRequest","outputType":"demo.v1.Item","streaming":"unary","taskSupport":"forbidden","confirm":{"unconfirmed":"refuse"}}}"#,
    ..pb::item_service_mcp::GET_ITEM
};

/// `GetItem`, confirmed; a client that cannot be asked gets the call.
static CONFIRMED_OR_PROCEED: ToolDef = ToolDef {
    name: "ConfirmedOrProceed",
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/GetItem","inputType":"demo.v1.GetItemRequest","outputType":"demo.v1.Item","streaming":"unary","taskSupport":"forbidden","confirm":{"unconfirmed":"proceed"}}}"#,
    ..pb::item_service_mcp::GET_ITEM
};

/// A client that answers every elicitation with `answer` (or declares no elicitation when
/// `answer` is `None`) and records the messages it was shown.
#[derive(Clone)]
struct User {
    answer: Option<ElicitationAction>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for User {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request
            && let Ok(mut asked) = self.asked.lock()
        {
            asked.push(message);
        }
        Ok(ElicitResult::new(
            self.answer.clone().unwrap_or(ElicitationAction::Decline),
        ))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation = Some(ElicitationCapability::default());
        }
        ClientConfig::new(capabilities, Implementation::new("confirm-test", "0"))
    }
}

async fn setup(
    answer: Option<ElicitationAction>,
) -> TestResult<(RunningService<RoleClient, User>, User, Backend)> {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let mut builder = ToolSetBuilder::new(pb::MCP_FILE_DESCRIPTOR_SET, BoxTransport::new(channel))?;
    builder.add(&CONFIRMED)?;
    builder.add(&CONFIRMED_OR_PROCEED)?;
    let server = McpServer::builder("confirm", "0.1.0")
        .tool_set(builder.build())?
        .build();
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let user = User {
        answer,
        asked: Arc::default(),
    };
    let client = user.clone().serve(client_io).await?;
    Ok((client, user, backend))
}

fn calls_seen(backend: &Backend) -> usize {
    backend
        .observed
        .metadata
        .lock()
        .map_or(0, |seen| seen.len())
}

async fn call(
    client: &RunningService<RoleClient, User>,
    name: &str,
    arguments: Value,
) -> TestResult<rmcp::model::CallToolResult> {
    let Value::Object(arguments) = arguments else {
        return Err("arguments must be an object".into());
    };
    Ok(client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await?)
}

#[tokio::test]
async fn an_accepted_confirmation_calls_the_rpc() -> TestResult {
    let (client, user, backend) = setup(Some(ElicitationAction::Accept)).await?;
    let result = call(&client, "Confirmed", json!({"id": "7"})).await?;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(result.structured_content.ok_or("structured")?["id"], "7");
    assert_eq!(calls_seen(&backend), 1);
    let asked = user.asked.lock().map_err(|_| "lock")?.clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("`Confirmed`"), "{asked:?}");
    assert!(
        asked[0].contains("/demo.v1.ItemService/GetItem"),
        "{asked:?}"
    );
    assert!(asked[0].contains(r#""id":"7""#), "{asked:?}");
    Ok(())
}

#[tokio::test]
async fn a_declined_confirmation_is_an_error_and_the_rpc_is_never_called() -> TestResult {
    for answer in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        let (client, user, backend) = setup(Some(answer)).await?;
        let result = call(&client, "Confirmed", json!({"id": "7"})).await?;
        assert_eq!(result.is_error, Some(true));
        let message = text(&result);
        assert!(message.contains("The user declined"), "{message}");
        assert!(message.contains("was not called"), "{message}");
        assert_eq!(
            status_of(&result)?,
            json!({"code": 7, "name": "PERMISSION_DENIED", "local": true})
        );
        assert_eq!(calls_seen(&backend), 0, "the backend was called");
        assert_eq!(user.asked.lock().map_err(|_| "lock")?.len(), 1);
    }
    Ok(())
}

#[tokio::test]
async fn without_elicitation_the_unconfirmed_choice_decides() -> TestResult {
    let (client, user, backend) = setup(None).await?;
    let result = call(&client, "Confirmed", json!({"id": "7"})).await?;
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(message.contains("cannot ask"), "{message}");
    assert_eq!(
        status_of(&result)?,
        json!({"code": 9, "name": "FAILED_PRECONDITION", "local": true})
    );
    assert_eq!(
        calls_seen(&backend),
        0,
        "a refused call reached the backend"
    );

    let result = call(&client, "ConfirmedOrProceed", json!({"id": "8"})).await?;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(calls_seen(&backend), 1);
    assert!(user.asked.lock().map_err(|_| "lock")?.is_empty());
    Ok(())
}
