//! Confirmation of tools marked `confirm` through MCP elicitation, with rmcp's client: accepted
//! calls reach the backend, declined ones never do, and clients without elicitation get the
//! tool's `unconfirmed` choice. Every case runs twice: on protocol 2025-11-25 (`initialize`;
//! the server sends `elicitation/create`) and on 2026-07-28 (`server/discover`; the call answers
//! with an `InputRequiredResult` and the client sends it again with the user's answer).

use test_kit::demo as common;

use std::sync::{Arc, Mutex};

use common::{Backend, TestResult, call, pb, start_backend, status, text};
use rmcp::{
    ClientHandler, ErrorData, RoleClient,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
        ElicitationAction, ElicitationCapability, Implementation, ProtocolVersion, ServerResult,
    },
    service::{ClientLifecycleMode, ClientServiceExt as _, RequestContext, RunningService},
};
use serde_json::{Value, json};
use tonic_mcp::{
    McpServer,
    codegen::{BoxTransport, ToolDef, ToolSetBuilder, Unconfirmed},
};

/// `GetItem`, confirmed; a client that cannot be asked is refused.
static CONFIRMED: ToolDef = ToolDef {
    name: "Confirmed",
    confirm: Some(Unconfirmed::Refuse),
    meta: r#"{"protoc-gen-rust-mcp/rpc":{"path":"/demo.v1.ItemService/GetItem","inputType":"demo.v1.GetItemRequest","outputType":"demo.v1.Item","streaming":"unary","taskSupport":"forbidden","confirm":{"unconfirmed":"refuse"}}}"#,
    ..pb::item_service_mcp::GET_ITEM
};

/// `GetItem`, confirmed; a client that cannot be asked gets the call.
static CONFIRMED_OR_PROCEED: ToolDef = ToolDef {
    name: "ConfirmedOrProceed",
    confirm: Some(Unconfirmed::Proceed),
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

/// The two lifecycles every case runs on.
fn lifecycles() -> [ClientLifecycleMode; 2] {
    [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ]
}

async fn setup(
    answer: Option<ElicitationAction>,
    lifecycle: ClientLifecycleMode,
) -> TestResult<(RunningService<RoleClient, User>, User, Backend)> {
    let (addr, backend) = start_backend().await?;
    let channel = common::channel(addr).await?;
    let mut builder = ToolSetBuilder::new(pb::MCP_FILE_DESCRIPTOR_SET, BoxTransport::new(channel))?;
    builder.add(&CONFIRMED)?;
    builder.add(&CONFIRMED_OR_PROCEED)?;
    let server = McpServer::builder("confirm", "0.1.0")
        .tool_set(builder.build())?
        .build();
    let user = User {
        answer,
        asked: Arc::default(),
    };
    let client = user
        .clone()
        .serve_with_lifecycle(test_kit::serve_in_process(server), lifecycle)
        .await?;
    Ok((client, user, backend))
}

fn calls_seen(backend: &Backend) -> usize {
    backend
        .observed
        .metadata
        .lock()
        .map_or(0, |seen| seen.len())
}

#[tokio::test]
async fn an_accepted_confirmation_calls_the_rpc() -> TestResult {
    for lifecycle in lifecycles() {
        let (client, user, backend) = setup(Some(ElicitationAction::Accept), lifecycle).await?;
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
    }
    Ok(())
}

/// On 2026-07-28 the first answer is the request to confirm, under `inputRequests.confirm`,
/// and the backend is not called until the call comes back with the answer.
#[tokio::test]
async fn on_2026_07_28_the_call_asks_for_input_first() -> TestResult {
    let [_, modern] = lifecycles();
    let (client, user, backend) = setup(Some(ElicitationAction::Accept), modern).await?;
    let Value::Object(arguments) = json!({"id": "7"}) else {
        return Err("an object".into());
    };
    let first = client
        .peer()
        .send_request(rmcp::model::ClientRequest::CallToolRequest(
            rmcp::model::CallToolRequest::new(
                CallToolRequestParams::new("Confirmed").with_arguments(arguments.clone()),
            ),
        ))
        .await?;
    let ServerResult::InputRequiredResult(input) = first else {
        return Err(format!("expected an InputRequiredResult, got {first:?}").into());
    };
    let requests = serde_json::to_value(input.input_requests.ok_or("inputRequests")?)?;
    assert_eq!(
        requests["confirm"]["method"], "elicitation/create",
        "{requests}"
    );
    assert!(
        requests["confirm"]["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`Confirmed`")),
        "{requests}"
    );
    assert_eq!(
        calls_seen(&backend),
        0,
        "the backend was called before the answer"
    );
    assert!(user.asked.lock().map_err(|_| "lock")?.is_empty());

    // Sent again with an answer that does not read as an elicitation result: not a yes.
    let mut responses = std::collections::BTreeMap::new();
    responses.insert("confirm".to_owned(), json!({"action": "maybe"}));
    let again = client
        .peer()
        .send_request(rmcp::model::ClientRequest::CallToolRequest(
            rmcp::model::CallToolRequest::new(
                CallToolRequestParams::new("Confirmed")
                    .with_arguments(arguments)
                    .with_input_responses(responses),
            ),
        ))
        .await?;
    let ServerResult::CallToolResult(refused) = again else {
        return Err(format!("expected a CallToolResult, got {again:?}").into());
    };
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("The user declined"),
        "{}",
        text(&refused)
    );
    assert_eq!(
        calls_seen(&backend),
        0,
        "a refused call reached the backend"
    );
    Ok(())
}

#[tokio::test]
async fn a_declined_confirmation_is_an_error_and_the_rpc_is_never_called() -> TestResult {
    for (answer, lifecycle) in [ElicitationAction::Decline, ElicitationAction::Cancel]
        .into_iter()
        .flat_map(|answer| lifecycles().map(|lifecycle| (answer.clone(), lifecycle)))
    {
        let (client, user, backend) = setup(Some(answer), lifecycle).await?;
        let result = call(&client, "Confirmed", json!({"id": "7"})).await?;
        assert_eq!(result.is_error, Some(true));
        let message = text(&result);
        assert!(message.contains("The user declined"), "{message}");
        assert!(message.contains("was not called"), "{message}");
        assert_eq!(
            status(&result),
            json!({"code": 7, "name": "PERMISSION_DENIED", "local": true})
        );
        assert_eq!(calls_seen(&backend), 0, "the backend was called");
        assert_eq!(user.asked.lock().map_err(|_| "lock")?.len(), 1);
    }
    Ok(())
}

#[tokio::test]
async fn without_elicitation_the_unconfirmed_choice_decides() -> TestResult {
    for lifecycle in lifecycles() {
        let (client, user, backend) = setup(None, lifecycle).await?;
        let result = call(&client, "Confirmed", json!({"id": "7"})).await?;
        assert_eq!(result.is_error, Some(true));
        let message = text(&result);
        assert!(message.contains("cannot ask"), "{message}");
        assert_eq!(
            status(&result),
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
    }
    Ok(())
}
