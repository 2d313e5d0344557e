//! The golden module of `testdata/longrunning.proto` registers every tool: the types its
//! long-running tools unpack are in its embedded descriptor set, including
//! `testdata.common.PageInfo`, which only `CountPages`'s `operation_info` names (no field refers
//! to it). Without it, `from_channel` would fail with an unknown message.

use e2e::testdata::longrunning::report_service_mcp;
use serde_json::json;
use tonic::transport::Channel;

#[tokio::test]
async fn every_long_running_tool_registers_with_its_types() {
    // Registration makes no call.
    let channel = Channel::from_static("http://127.0.0.1:9").connect_lazy();
    let tools = report_service_mcp::from_channel(channel).expect("every tool registers");
    let listed = tools.tools();
    let count = listed
        .iter()
        .find(|tool| tool.name == "ReportService_CountPages")
        .expect("CountPages is a tool");
    let meta = &count.meta.as_ref().expect("_meta").0[tonic_mcp::RPC_META_KEY];
    assert_eq!(
        meta["longRunning"],
        json!({
            "responseType": "testdata.common.PageInfo",
            "metadataType": "testdata.longrunning.BuildReportMetadata",
            "wait": true
        })
    );
    let output = count.output_schema.as_ref().expect("output schema");
    let properties = output["properties"].as_object().expect("properties");
    assert!(
        properties.contains_key("next_page_token")
            && properties.contains_key("google.longrunning.Operation"),
        "{output:?}"
    );
}
