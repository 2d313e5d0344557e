//! Tools from descriptors: naming, threads, pools without source info.

use prost::Message as _;
use prost_types::FileDescriptorSet;
use test_kit::descriptors::{file, json_names, large_pool, never_called, pool_with_a_bad_schema};
use tonic_mcp::{McpServer, ToolSet};

use super::*;
use make::Made;

/// The tools of `service` in `pool` under `options`, their schemas made when first needed.
fn lazy_set(pool: &DescriptorPool, options: &Options, service: &str) -> ToolSet {
    DescriptorTools::new(pool, options)
        .lazy_schemas()
        .service(service, never_called())
        .unwrap()
}

/// Tools made on several threads, each with its own schema cache, are the tools made on
/// one, in the same order; so is the first error.
#[tokio::test]
async fn tools_made_on_several_threads_are_the_tools_made_on_one() {
    let packages = ["p1", "p2", "p3", "p4"];
    let pool = large_pool(&packages);
    let options = Options::default();
    let transport = BoxTransport::new(never_called());
    let tools = DescriptorTools::new(&pool, &options);
    let names: Vec<String> = packages.iter().map(|p| format!("{p}.Large")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(
        runs(&pool, &names, 4).len(),
        4,
        "the test must use four threads"
    );
    let text = |made: Vec<Result<Vec<Made>, Error>>| -> Vec<String> {
        made.into_iter()
            .flat_map(|tools| tools.unwrap())
            .map(|t| {
                // The tool's definition and `_meta` choices, and its schemas.
                let schemas = t.tool.schemas().unwrap();
                format!(
                    "{:?}\n{}\n{}",
                    t.tool,
                    schemas.input().unwrap(),
                    schemas.output().unwrap(),
                )
            })
            .collect()
    };
    let one = text(tools.make(&names, 1, &transport));
    assert_eq!(one.len(), 1200);
    assert_eq!(text(tools.make(&names, 4, &transport)), one);

    // An unknown service in the third run: the results stop there, as on one thread.
    let mut with_unknown = names.clone();
    with_unknown.insert(2, "p9.Missing");
    let errors = |made: &[Result<Vec<Made>, Error>]| -> Vec<String> {
        made.iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect()
    };
    let on_one = tools.make(&with_unknown, 1, &transport);
    let on_four = tools.make(&with_unknown, 4, &transport);
    assert_eq!(on_one.len(), 3);
    assert_eq!(errors(&on_one), errors(&on_four));
    assert!(
        errors(&on_one)[0].contains("p9.Missing"),
        "{:?}",
        errors(&on_one)
    );
    let first = |made: &[Result<Vec<Made>, Error>]| made.iter().position(Result::is_err);
    assert_eq!(first(&on_one), first(&on_four));
}

/// A set per service, as `service` gives each, in order; the first error is `service`'s.
#[tokio::test]
async fn service_sets_are_the_sets_of_each_service() {
    let packages = ["p1", "p2", "p3", "p4"];
    let pool = large_pool(&packages);
    let options = Options::default();
    let tools = DescriptorTools::new(&pool, &options);
    let channel = tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy();
    let names: Vec<String> = packages.iter().map(|p| format!("{p}.Large")).collect();
    let sets = tools
        .service_sets(names.iter().map(String::as_str), channel.clone())
        .unwrap();
    assert_eq!(sets.len(), 4);
    for (name, set) in names.iter().zip(&sets) {
        let one = tools.service(name, channel.clone()).unwrap();
        assert_eq!(
            set.names().collect::<Vec<_>>(),
            one.names().collect::<Vec<_>>()
        );
        assert_eq!(set.len(), 300);
    }
    let error = tools
        .service_sets(["p1.Large", "p9.Missing", "p2.Large"], channel.clone())
        .unwrap_err();
    let expected = tools.service("p9.Missing", channel).unwrap_err();
    assert_eq!(error.to_string(), expected.to_string());
}

fn names_of(set: &ToolSet) -> Vec<String> {
    let mut names: Vec<String> = set.names().map(str::to_owned).collect();
    names.sort();
    names
}

#[tokio::test]
async fn tools_of_one_name_in_several_packages_are_qualified_by_package() {
    let set = FileDescriptorSet {
        file: vec![
            file("ads.v22.services"),
            file("ads.v23.services"),
            file("billing.v1"),
        ],
    };
    let pool = DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap();
    let options = Options {
        prefix: Some("g".to_owned()),
        ..Options::default()
    };
    let services = [
        "ads.v22.services.Accounts",
        "ads.v23.services.Accounts",
        "billing.v1.Accounts",
    ];
    let tools = DescriptorTools::new(&pool, &options).unique_names(services);
    let transport = || {
        BoxTransport::new(
            tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
        )
    };
    let all = tools.services(services, transport()).unwrap();
    assert_eq!(
        names_of(&all),
        [
            "g_billing_v1_Accounts_Get",
            "g_billing_v1_Accounts_List",
            "g_v22_services_Accounts_Get",
            "g_v22_services_Accounts_List",
            "g_v23_services_Accounts_Get",
            "g_v23_services_Accounts_List",
        ]
    );
    // Without the collision, names are as before.
    let one = DescriptorTools::new(&pool, &options)
        .unique_names(["billing.v1.Accounts"])
        .service("billing.v1.Accounts", transport())
        .unwrap();
    assert_eq!(names_of(&one), ["g_Accounts_Get", "g_Accounts_List"]);
}

#[tokio::test]
async fn decoded_descriptors_give_the_same_tools_from_a_pool_without_source_info() {
    use prost_types::{SourceCodeInfo, source_code_info::Location};
    let mut with_comments = file("billing.v1");
    // The service's first method (path: service 0, method 0) has a leading comment.
    with_comments.source_code_info = Some(SourceCodeInfo {
        location: vec![Location {
            path: vec![6, 0, 2, 0],
            span: vec![1, 0, 10],
            leading_comments: Some(" Fetch one account.\n".to_owned()),
            ..Default::default()
        }],
    });
    let bytes = FileDescriptorSet {
        file: vec![with_comments],
    }
    .encode_to_vec();
    let options = Options::default();
    let transport = || {
        BoxTransport::new(
            tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
        )
    };
    let decoded = DescriptorTools::decode(&bytes).unwrap();
    assert!(
        decoded
            .pool()
            .file_descriptor_protos()
            .all(|f| f.source_code_info.is_none())
    );
    let lean = DescriptorTools::of(&decoded, &options)
        .services(["billing.v1.Accounts"], transport())
        .unwrap();
    let pool = DescriptorTools::decode_pool(&bytes).unwrap();
    let full = DescriptorTools::new(&pool, &options)
        .services(["billing.v1.Accounts"], transport())
        .unwrap();
    assert_eq!(lean.tools(), full.tools());
    let get = lean.tools().into_iter().find(|t| t.name == "Accounts_Get");
    assert_eq!(
        get.and_then(|t| t.description).as_deref(),
        Some("Fetch one account.")
    );
    // Editions files are refused by name, as by decode_pool.
    let mut editions = file("ed.v1");
    editions.syntax = Some("editions".to_owned());
    let bytes = FileDescriptorSet {
        file: vec![editions],
    }
    .encode_to_vec();
    let error = DescriptorTools::decode(&bytes).unwrap_err().to_string();
    assert!(error.contains("editions"), "{error}");
}

/// With lazy schemas, a tool whose schemas cannot be made is still made: it is left out of
/// listings, and its call fails naming the element and the reason, where making the tools
/// with their schemas refuses the service with the same reason.
#[tokio::test]
async fn a_lazy_schema_that_cannot_be_made_leaves_its_tool_out_and_says_why() {
    let pool = pool_with_a_bad_schema();
    let options = json_names();
    let eager = DescriptorTools::new(&pool, &options)
        .service("s.v1.Feed", never_called())
        .unwrap_err()
        .to_string();
    assert!(
        eager.contains("s.v1.Feed.Watch") && eager.contains("mcp.stream"),
        "{eager}"
    );

    let set = lazy_set(&pool, &options, "s.v1.Feed");
    assert_eq!(names_of(&set), ["Feed_Get", "Feed_Watch"]);
    let listed: Vec<String> = set
        .tools()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(listed, ["Feed_Get"]);
    let server = McpServer::builder("t", "0").tool_set(set).unwrap().build();
    let client = test_kit::connect(server).await;
    let watch = test_kit::call(&client, "Feed_Watch", serde_json::json!({}))
        .await
        .unwrap();
    let error = test_kit::expect_err("Feed_Watch", &watch);
    assert!(
        error.contains("cannot be called: its schemas cannot be made: ")
            && error.contains("s.v1.Feed.Watch")
            && error.contains("mcp.stream"),
        "{error}"
    );
    // `Get`'s arguments are checked and sent: the call fails only at the transport.
    let get = test_kit::call(&client, "Feed_Get", serde_json::json!({}))
        .await
        .unwrap();
    let error = test_kit::expect_err("Feed_Get", &get);
    assert!(!error.contains("schema"), "{error}");
}

/// What the makers of lazy schemas read (the comments) is kept while a tool's schemas are to
/// be made, and let go once every one is. (The runtime's tests check that each maker is
/// dropped once it has made its tool's schemas.)
#[tokio::test]
async fn the_comments_are_let_go_once_every_schema_is_made() {
    let pool = large_pool(&["p1"]);
    let options = Options::default();
    let comments = Arc::new(Comments::index(&pool));
    let held = Arc::downgrade(&comments);
    let set = DescriptorTools::with_comments(&pool, comments, &options)
        .lazy_schemas()
        .service("p1.Large", never_called())
        .unwrap();
    assert!(held.upgrade().is_some(), "the makers read them");
    assert_eq!(set.tools().len(), 300);
    assert!(
        held.upgrade().is_none(),
        "the comments are let go with the last maker"
    );
}
