//! A tool that waits for its `google.longrunning.Operation`, served in process with the
//! generated `from_service`, which reaches only its own service. Its transport answers
//! GetOperation with `UNIMPLEMENTED`, so:
//!
//! - with an Operations tool set in the same server (built from descriptors, as the gateway
//!   does), the runtime polls and cancels through that tool set's transport, and the call
//!   answers the unpacked response;
//! - without one, the call is an `isError` that says what to serve;
//! - when the Operations tools' transport does not serve Operations either, the error says
//!   that neither does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use e2e::google::longrunning::operations_server::{Operations, OperationsServer};
use e2e::google::longrunning::{
    CancelOperationRequest, DeleteOperationRequest, GetOperationRequest, ListOperationsRequest,
    ListOperationsResponse, Operation, WaitOperationRequest, operation,
};
use e2e::testdata::longrunning::report_service_mcp;
use e2e::testdata::longrunning::report_service_server::{ReportService, ReportServiceServer};
use e2e::testdata::longrunning::{BuildReportRequest, DeleteReportRequest, Report};
use prost::Message as _;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use test_kit::{Client, connect, text};
use tonic::{Request, Response, Status};
use tonic_mcp::{McpServer, ToolSet, schema::Options};
use tonic_mcp_dynamic::DescriptorTools;

const OPERATION_NAME: &str = "operations/report-1";

/// `BuildReport` starts an operation that is not done yet.
struct Reports;

e2e::service_impl! {
Reports: ReportService {
    echo {}
    stubs {
        start_report(BuildReportRequest) -> Operation;
        delete_report(DeleteReportRequest) -> Operation;
        count_pages(DeleteReportRequest) -> Operation;
        compact(DeleteReportRequest) -> Operation;
    }

    async fn build_report(
        &self,
        _request: Request<BuildReportRequest>,
    ) -> Result<Response<Operation>, Status> {
        Ok(Response::new(Operation {
            name: OPERATION_NAME.to_owned(),
            ..Operation::default()
        }))
    }
}
}

/// The operation is done with a report from the second GetOperation on, unless it was
/// cancelled first. Records the names it was asked for.
#[derive(Clone, Default)]
struct Store {
    gets: Arc<Mutex<Vec<String>>>,
    cancels: Arc<Mutex<Vec<String>>>,
}

e2e::service_impl! {
Store: Operations {
    echo {}
    stubs {
        list_operations(ListOperationsRequest) -> ListOperationsResponse;
        delete_operation(DeleteOperationRequest) -> ();
        wait_operation(WaitOperationRequest) -> Operation;
    }

    async fn get_operation(
        &self,
        request: Request<GetOperationRequest>,
    ) -> Result<Response<Operation>, Status> {
        let name = request.into_inner().name;
        let gets = {
            let mut gets = self.gets.lock().expect("gets");
            gets.push(name.clone());
            gets.len()
        };
        let mut answer = Operation {
            name,
            ..Operation::default()
        };
        if gets >= 2 {
            let report = Report {
                title: "Q3".to_owned(),
                pages: vec!["one".to_owned()],
                notes: String::new(),
            };
            answer.done = true;
            answer.result = Some(operation::Result::Response(prost_types::Any {
                type_url: "type.googleapis.com/testdata.longrunning.Report".to_owned(),
                value: report.encode_to_vec(),
            }));
        }
        Ok(Response::new(answer))
    }

    async fn cancel_operation(
        &self,
        request: Request<CancelOperationRequest>,
    ) -> Result<Response<()>, Status> {
        self.cancels
            .lock()
            .expect("cancels")
            .push(request.into_inner().name);
        Ok(Response::new(()))
    }
}
}

/// The google.longrunning.Operations tools over `transport`, built from the e2e descriptors.
fn operation_tools<T: tonic_mcp::codegen::Transport>(transport: T) -> ToolSet {
    let pool = prost_reflect::DescriptorPool::decode(e2e::TESTDATA_DESCRIPTOR_SET)
        .expect("the e2e descriptor set");
    DescriptorTools::new(&pool, &Options::default())
        .service("google.longrunning.Operations", transport)
        .expect("the Operations tools")
}

/// `reports` and the Operations tools served by `store`, in one server, with a client.
async fn with_operations(reports: ToolSet, store: &Store) -> Client {
    let operations = operation_tools(OperationsServer::new(store.clone()));
    serve(reports, Some(operations)).await
}

/// `reports` and, when given, the Operations tools `operations`, in one server, with a client.
async fn serve(reports: ToolSet, operations: Option<ToolSet>) -> Client {
    let mut server = McpServer::builder("in-process", "0")
        .tool_set(reports)
        .expect("tools");
    if let Some(operations) = operations {
        server = server.tool_set(operations).expect("tools");
    }
    connect(server.build()).await
}

fn reports() -> ToolSet {
    report_service_mcp::from_service(Reports)
        .expect("the ReportService tools")
        .with_timeout(Duration::from_secs(10))
}

/// The `tools/call` parameters of `ReportService_BuildReport` for a one-page report "Q3".
fn build_report_params() -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"title": "Q3", "pages": 1}) else {
        unreachable!("an object");
    };
    CallToolRequestParams::new("ReportService_BuildReport").with_arguments(arguments)
}

async fn build_report(client: &Client) -> CallToolResult {
    client
        .call_tool(build_report_params())
        .await
        .expect("tools/call")
}

/// The text of the `isError` result of [`build_report`] through `client`, which is then closed.
async fn build_report_error(client: Client) -> String {
    let result = build_report(&client).await;
    assert_eq!(result.is_error, Some(true));
    client.cancel().await.expect("close");
    text(&result)
}

#[tokio::test]
async fn a_waiting_tool_polls_through_the_served_operations_tools() {
    let store = Store::default();
    let client = with_operations(reports(), &store).await;
    let result = build_report(&client).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(
        result.structured_content,
        Some(json!({"title": "Q3", "pages": ["one"]}))
    );
    assert_eq!(
        *store.gets.lock().expect("gets"),
        [OPERATION_NAME, OPERATION_NAME]
    );
    client.cancel().await.expect("close");
}

/// The waited response counts toward the result budget like any other result: over it, the
/// call is an `isError` saying so, not a result sent whole.
#[tokio::test]
async fn a_waited_response_over_the_result_budget_is_refused() {
    let store = Store::default();
    // `{"title":"Q3","pages":["one"]}` is 30 bytes of JSON.
    let client = with_operations(reports().with_max_result_bytes(20), &store).await;
    let result = build_report(&client).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = text(&result);
    assert!(
        text.contains("The result is 30 bytes of JSON, over this MCP server's budget of 20 bytes"),
        "{text}"
    );
    let status = &result.meta.as_ref().expect("_meta").0[tonic_mcp::STATUS_META_KEY];
    assert_eq!(status["name"], "RESOURCE_EXHAUSTED", "{status}");
    // The operation was waited for: both polls happened.
    assert_eq!(store.gets.lock().expect("gets").len(), 2);
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_cancelled_call_cancels_through_the_served_operations_tools() {
    let store = Store::default();
    let client = with_operations(reports(), &store).await;
    let handle = client
        .send_cancellable_request(
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
                build_report_params(),
            )),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .expect("send tools/call");
    // Cancelled while it waits before its first poll (200 ms): the tool's own transport
    // answers CancelOperation with UNIMPLEMENTED, the Operations tools' transport takes it.
    tokio::time::sleep(Duration::from_millis(50)).await;
    handle
        .cancel(Some("the user gave up".to_owned()))
        .await
        .expect("notifications/cancelled");
    let mut cancels = Vec::new();
    for _ in 0..100 {
        cancels = store.cancels.lock().expect("cancels").clone();
        if !cancels.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cancels, [OPERATION_NAME]);
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn without_operations_the_error_says_what_to_serve() {
    let message = build_report_error(serve(reports(), None).await).await;
    assert!(
        message.contains("Waiting for the operation `operations/report-1` failed")
            && message
                .contains("This tool's transport does not serve google.longrunning.Operations")
            && message.contains("the generated `from_service` of google.longrunning.Operations"),
        "{message}"
    );

    // The Operations tools call a transport that does not serve Operations either.
    let unserved = operation_tools(ReportServiceServer::new(Reports));
    let message = build_report_error(serve(reports(), Some(unserved)).await).await;
    assert!(
        message.contains(
            "Neither this tool's transport nor that of the tool `Operations_GetOperation` serves \
             google.longrunning.Operations"
        ),
        "{message}"
    );
}
