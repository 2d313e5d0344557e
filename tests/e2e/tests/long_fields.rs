//! Field names too long for a property key (testdata/long_fields.proto) over a real tonic
//! backend: the tool takes the alias, the proto name or the JSON name, the backend gets the
//! value, and the result uses the schema's key.

mod scenario;

use serde_json::{Value, json};

const TOOL: &str = "LongFieldService_Echo";
const JSON_KEY: &str = "upgradeSmartShoppingCampaignToPerformanceMaxRecommendation";
const ALIAS: &str = "npolicyrolloutoperationrolloutinputresourcewithsettings_dd6659be";
const PROTO_NAME: &str = "globalvmextensionpolicyrolloutoperationrolloutinputresourcewithsettings";
const NESTED: &str = "globalVmExtensionPolicyRolloutOperationRolloutInputResourceX";
const NESTED_ALIAS: &str = "stancesthatmayberolledoutatthesametimeineachzoneatmostx_c5e316a7";
const ONEOF: &str = "recommendationTargetForTheCampaignOrTheWholeCustomerAccount";
const MEMBER_ALIAS: &str = "urcenameofthecampaignthatthisrecommendationappliestonow_590b8c7b";

/// What the backend echoes for every spelling below: the schema's keys throughout.
fn expected() -> Value {
    json!({
        JSON_KEY: "upgrade",
        ALIAS: "rollout",
        NESTED: {NESTED_ALIAS: 3},
        ONEOF: {"case": MEMBER_ALIAS, "value": "customers/1/campaigns/2"},
    })
}

#[tokio::test]
async fn long_field_names_reach_the_backend_by_alias_proto_name_and_json_name() {
    let client = scenario::connect_in_process().await;

    // The listed schema has the keys the calls below use.
    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools.iter().find(|t| t.name == TOOL).expect("listed");
    let properties = tool.input_schema["properties"]
        .as_object()
        .expect("properties");
    for key in [JSON_KEY, ALIAS, NESTED, ONEOF] {
        assert!(properties.contains_key(key), "{key} not in {properties:?}");
    }
    assert!(!properties.contains_key(PROTO_NAME));

    // By the schema's keys: aliases and JSON names.
    let by_key = scenario::ok(&client, TOOL, expected()).await;
    assert_eq!(by_key, expected());

    // By proto names, the oneof member flat on the parent.
    let by_proto_name = scenario::ok(
        &client,
        TOOL,
        json!({
            "upgrade_smart_shopping_campaign_to_performance_max_recommendation": "upgrade",
            PROTO_NAME: "rollout",
            "global_vm_extension_policy_rollout_operation_rollout_input_resource_x": {
                "numberofinstancesthatmayberolledoutatthesametimeineachzoneatmostx": 3,
            },
            "campaignresourcenameofthecampaignthatthisrecommendationappliestonow":
                "customers/1/campaigns/2",
        }),
    )
    .await;
    assert_eq!(by_proto_name, expected());

    // A wrong value under an alias is reported at the alias.
    let error = scenario::err(&client, TOOL, json!({NESTED: {NESTED_ALIAS: "many"}})).await;
    assert!(
        error.contains(&format!("$.{NESTED}.{NESTED_ALIAS}: expected integer")),
        "{error}"
    );
    client.cancel().await.expect("close");
}

/// The tool of this file with its input schema shrunk to `budget` bytes by the plugin's
/// generator, served over a real tonic backend: the subtrees the budget cut accept any object in
/// the listed schema, yet the runtime still checks them against the descriptors.
async fn shrunk_client(budget: usize) -> (scenario::Client, String) {
    use e2e::testdata::long_fields as pb;
    // As the runtime decodes it: on top of the well-known types, which the set leaves out.
    let mut pool = prost_reflect::DescriptorPool::global();
    pool.decode_file_descriptor_set(pb::MCP_FILE_DESCRIPTOR_SET)
        .expect("pool");
    let options = tonic_mcp_schema::Options {
        max_schema_bytes: budget,
        ..tonic_mcp_schema::Options::default()
    };
    let context = tonic_mcp_schema::Context::new(&pool, &options);
    let service = pool
        .get_service_by_name("testdata.long_fields.LongFieldService")
        .expect("service");
    let spec = context
        .service_tools(&service)
        .expect("tools")
        .tools
        .remove(0);
    assert!(!spec.shrunk.is_empty(), "the budget shrinks the schema");
    let schema = spec.input_schema.to_string();
    assert!(
        schema.contains(tonic_mcp_schema::json_schema::NOT_EXPANDED),
        "{schema}"
    );
    let def: &'static tonic_mcp::codegen::ToolDef =
        Box::leak(Box::new(tonic_mcp::codegen::ToolDef {
            input_schema: Box::leak(schema.clone().into_boxed_str()),
            ..pb::long_field_service_mcp::ECHO
        }));

    let backend = e2e::start_backend().await.expect("backend");
    let channel = e2e::channel(&backend).await.expect("channel");
    let tools = tonic_mcp::codegen::tool_set(
        &pb::MCP_DESCRIPTORS,
        std::slice::from_ref(def),
        tonic_mcp::codegen::BoxTransport::new(channel),
    )
    .expect("tool set");
    let server = tonic_mcp::McpServer::builder("shrunk", "0")
        .tool_set(tools)
        .expect("tool set")
        .build();
    (test_kit::connect(server).await, schema)
}

#[tokio::test]
async fn a_wrong_field_in_a_shrunk_subtree_is_reported_with_its_path() {
    for budget in [900, 300] {
        let (client, schema) = shrunk_client(budget).await;
        // The nested message is listed without its fields at 300 bytes, with them at 900
        // (where only `deeper` is cut).
        let listed: Value = serde_json::from_str(&schema).expect("schema");
        let nested = &listed["properties"][NESTED];
        assert_eq!(nested["type"], "object", "{budget}: {nested}");

        // A valid deep value still reaches the backend and comes back.
        let deep = json!({NESTED: {NESTED_ALIAS: 2, "deeper": {"count": 7, "label": "l"}}});
        assert_eq!(scenario::ok(&client, TOOL, deep.clone()).await, deep);

        // The options of the cut subtree still hold: a hidden field is refused like an
        // unknown one, and a required one must be there.
        let error = scenario::err(
            &client,
            TOOL,
            json!({NESTED: {"deeper": {"count": 1, "label": "l", "secret": "s"}}}),
        )
        .await;
        assert!(
            error.contains(&format!(
                "$.{NESTED}.deeper.secret: unknown property `secret`"
            )),
            "{budget}: {error}"
        );
        let error = scenario::err(&client, TOOL, json!({NESTED: {"deeper": {"count": 1}}})).await;
        assert!(
            error.contains(&format!(
                "$.{NESTED}.deeper: missing required property `label`"
            )),
            "{budget}: {error}"
        );

        // A wrong type and an unknown field deep inside the cut subtree: precise errors.
        let error = scenario::err(
            &client,
            TOOL,
            json!({NESTED: {"deeper": {"count": "many", "nope": 1}}}),
        )
        .await;
        assert!(
            error.contains(&format!("$.{NESTED}.deeper.count: expected integer")),
            "{budget}: {error}"
        );
        assert!(
            error.contains(&format!("$.{NESTED}.deeper.nope: unknown property `nope`")),
            "{budget}: {error}"
        );
        client.cancel().await.expect("close");
    }
}
