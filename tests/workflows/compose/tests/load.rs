// scripts/workflows.sh builds this crate (a copy of it) in target/workflows/compose/: every MCP module loads beside the user's customised
// prost/tonic code, and that configuration is in effect.
use tonic::transport::Channel;
use workflow_compose as c;

fn channel() -> Channel {
    // Never connected: building a tool set makes no call.
    Channel::from_static("http://127.0.0.1:9").connect_lazy()
}

fn check(set: tonic_mcp::ToolSet, defs: &[tonic_mcp::codegen::ToolDef], names: &mut Vec<String>) {
    let mut got: Vec<String> = set.names().map(str::to_owned).collect();
    got.sort();
    let mut want: Vec<String> = defs.iter().map(|d| d.name.to_owned()).collect();
    want.sort();
    assert_eq!(got, want);
    names.extend(got);
}

macro_rules! load {
    ($names:ident, $module:path) => {{
        use $module as m;
        let set = m::from_channel(channel()).expect(stringify!($module));
        check(set, m::TOOLS, &mut $names);
    }};
}

#[tokio::test(flavor = "current_thread")]
async fn every_tool_set_loads() {
    let mut names = Vec::new();
    load!(names, c::root_service_mcp);
    load!(names, c::camel_case::v2_api::camel_service_mcp);
    load!(names, c::camel_case::v2_api::snake_service_mcp);
    load!(names, c::crate_::r#gen::raw_service_mcp);
    load!(names, c::digits::_2fa::v10::digit_service_mcp);
    load!(names, c::edge::r#type::foo_bar::weird_service_mcp);
    load!(names, c::r#match::v2::match_service_mcp);
    load!(names, c::demo::v1::task_service_mcp);
    names.sort();
    assert_eq!(
        names,
        [
            "CamelService_Echo", "DigitService_Echo", "MatchService_Find", "RawService_Echo",
            "RootService_Ping", "SnakeService_Echo", "TaskService_AddComment",
            "TaskService_ArchiveTasks", "TaskService_CreateTask", "TaskService_DeleteTask",
            "TaskService_ExportTasks",
            "TaskService_GetTask", "TaskService_ListTasks", "TaskService_UpdateTask",
            "WeirdService_Get",
        ]
    );
}

#[test]
fn the_users_prost_configuration_is_in_effect() {
    fn ordered<T: PartialOrd>() {}
    ordered::<c::camel_case::v2_api::CamelPing>();
    ordered::<c::camel_case::v2_api::SnakePing>();
    let request = c::edge::r#type::foo_bar::WeirdRequest::default();
    let _: &prost::bytes::Bytes = &request.blob;
    let _: &std::collections::BTreeMap<String, i32> = &request.counts;
    let _: &Option<c::common::match_v2::Token> = &request.token;
}
