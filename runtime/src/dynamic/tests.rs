//! Tools from descriptors: naming, threads, pools without source info.

use prost::Message as _;
use prost_types::{
    DescriptorProto, FileDescriptorProto, FileDescriptorSet, MethodDescriptorProto,
    ServiceDescriptorProto,
};

use super::*;

/// One file of `package` with a message `M` and a service `Accounts { Get, List }`.
pub(super) fn file(package: &str) -> FileDescriptorProto {
    let method = |name: &str| MethodDescriptorProto {
        name: Some(name.to_owned()),
        input_type: Some(format!(".{package}.M")),
        output_type: Some(format!(".{package}.M")),
        ..Default::default()
    };
    FileDescriptorProto {
        name: Some(format!("{}.proto", package.replace('.', "/"))),
        package: Some(package.to_owned()),
        syntax: Some("proto3".to_owned()),
        message_type: vec![DescriptorProto {
            name: Some("M".to_owned()),
            ..Default::default()
        }],
        service: vec![ServiceDescriptorProto {
            name: Some("Accounts".to_owned()),
            method: vec![method("Get"), method("List")],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Services of 300 methods each over two messages that hold each other, in `packages`.
fn large_pool(packages: &[&str]) -> DescriptorPool {
    use prost_types::{
        FieldDescriptorProto,
        field_descriptor_proto::{Label, Type},
    };
    let field = |name: &str, number: i32, kind: Type, type_name: Option<String>, label: Label| {
        FieldDescriptorProto {
            name: Some(name.to_owned()),
            number: Some(number),
            r#type: Some(kind as i32),
            type_name,
            label: Some(label as i32),
            ..Default::default()
        }
    };
    let files = packages.iter().map(|package| {
        let a = format!(".{package}.A");
        let b = format!(".{package}.B");
        let method = |i: usize| MethodDescriptorProto {
            name: Some(format!("Do{i}")),
            input_type: Some(if i.is_multiple_of(2) {
                a.clone()
            } else {
                b.clone()
            }),
            output_type: Some(if i.is_multiple_of(3) {
                a.clone()
            } else {
                b.clone()
            }),
            ..Default::default()
        };
        FileDescriptorProto {
            name: Some(format!("{}.proto", package.replace('.', "/"))),
            package: Some((*package).to_owned()),
            syntax: Some("proto3".to_owned()),
            message_type: vec![
                DescriptorProto {
                    name: Some("A".to_owned()),
                    field: vec![
                        field("s", 1, Type::String, None, Label::Optional),
                        field("b", 2, Type::Message, Some(b.clone()), Label::Optional),
                        field("bs", 3, Type::Message, Some(b.clone()), Label::Repeated),
                    ],
                    ..Default::default()
                },
                DescriptorProto {
                    name: Some("B".to_owned()),
                    field: vec![
                        field("n", 1, Type::Int64, None, Label::Optional),
                        field("a", 2, Type::Message, Some(a.clone()), Label::Optional),
                    ],
                    ..Default::default()
                },
            ],
            service: vec![ServiceDescriptorProto {
                name: Some("Large".to_owned()),
                method: (0..300).map(method).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    });
    let set = FileDescriptorSet {
        file: files.collect(),
    };
    DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap()
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
                let schemas = t.schemas.get(&t.info.name).unwrap();
                format!(
                    "{:?}\n{}\n{}\n{:?}",
                    t.info,
                    schemas.input().unwrap(),
                    schemas.output().unwrap(),
                    t.meta
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
        crate::grpc::BoxTransport::new(
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
        crate::grpc::BoxTransport::new(
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

/// A transport for tools that are never called.
pub(super) fn never_called() -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy()
}

/// Options under which [`pool_with_a_bad_schema`]'s `Watch` can have no schemas: property
/// names are JSON names, so the field's is the stream control's.
fn json_names() -> Options {
    Options {
        json_names: true,
        ..Options::default()
    }
}

/// The tools of `service` in `pool` under `options`, their schemas made when first needed.
fn lazy_set(pool: &DescriptorPool, options: &Options, service: &str) -> ToolSet {
    DescriptorTools::new(pool, options)
        .lazy_schemas()
        .service(service, never_called())
        .unwrap()
}

/// A pool whose service `s.v1.Feed` has a server-streaming `Watch` whose request has a field
/// with the JSON name of the stream control, and a unary `Get` that is fine (with
/// `json_names`).
fn pool_with_a_bad_schema() -> DescriptorPool {
    use prost_types::{
        FieldDescriptorProto,
        field_descriptor_proto::{Label, Type},
    };
    let mut file = file("s.v1");
    file.message_type[0].field.push(FieldDescriptorProto {
        name: Some("stream".to_owned()),
        number: Some(1),
        r#type: Some(Type::String as i32),
        label: Some(Label::Optional as i32),
        json_name: Some(tonic_mcp_schema::stream_control::STREAM_CONTROL_KEY.to_owned()),
        ..Default::default()
    });
    let service = &mut file.service[0];
    service.name = Some("Feed".to_owned());
    service.method[1].name = Some("Watch".to_owned());
    service.method[1].server_streaming = Some(true);
    let set = FileDescriptorSet { file: vec![file] };
    DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap()
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
    let watch = set.compiled("Feed_Watch").unwrap();
    let error = watch.validation().validator.as_ref().unwrap_err();
    assert!(
        error.starts_with("its schemas cannot be made: ")
            && error.contains("s.v1.Feed.Watch")
            && error.contains("mcp.stream"),
        "{error}"
    );
    assert!(
        set.compiled("Feed_Get")
            .unwrap()
            .validation()
            .validator
            .is_ok()
    );
}

/// A tool set served again (a gateway's reload of unchanged descriptors) is compared without
/// making its lazy schemas; a set made again from the same descriptors is compared by its
/// listing, and is the same.
#[tokio::test]
async fn serving_a_lazy_set_again_makes_none_of_its_schemas() {
    let pool = large_pool(&["p1"]);
    let options = Options::default();
    let lazy = || lazy_set(&pool, &options, "p1.Large");
    let set = lazy();
    let server = crate::server::McpServer::builder("t", "0")
        .tool_set(set.clone())
        .unwrap()
        .build();
    assert!(!server.replace_tools([set.clone()]).await.unwrap());
    assert!(set.tools.iter().all(|entry| !entry.tool.schemas.is_made()));
    assert!(!server.replace_tools([lazy()]).await.unwrap());
    assert!(set.tools.iter().all(|entry| entry.tool.schemas.is_made()));
}

/// A `tools/list` page makes the lazy schemas of its own tools, and of no tool after it.
#[tokio::test]
async fn a_page_makes_the_schemas_of_its_tools_only() {
    let set = lazy_set(&large_pool(&["p1"]), &Options::default(), "p1.Large");
    let server = crate::server::McpServer::builder("t", "0")
        .page_size(50)
        .tool_set(set.clone())
        .unwrap()
        .build();
    let page = server.catalog().listing.page(None, false).unwrap();
    let made = set
        .tools
        .iter()
        .filter(|entry| entry.tool.schemas.is_made())
        .count();
    assert_eq!(page.tools.len(), 50);
    assert_eq!(made, 50);
}

/// A lazy tool drops its maker once its schemas are made, and with the last maker what they
/// read (the comments) is let go; the schemas are kept.
#[tokio::test]
async fn what_makers_read_is_let_go_once_every_schema_is_made() {
    let pool = large_pool(&["p1"]);
    let options = Options::default();
    let comments = Arc::new(Comments::index(&pool));
    let held = Arc::downgrade(&comments);
    let set = DescriptorTools::with_comments(&pool, comments, &options)
        .lazy_schemas()
        .service("p1.Large", never_called())
        .unwrap();
    let (first, rest) = set.tools.split_first().unwrap();
    assert!(first.tool.schemas.keeps_maker());
    first.tool.schemas.get(&first.name).unwrap();
    assert!(!first.tool.schemas.keeps_maker());
    assert!(
        held.upgrade().is_some(),
        "the other tools' makers still read them"
    );
    for entry in rest {
        entry.tool.schemas.get(&entry.name).unwrap();
    }
    assert!(
        set.tools
            .iter()
            .all(|entry| !entry.tool.schemas.keeps_maker())
    );
    assert!(
        held.upgrade().is_none(),
        "the comments are let go with the last maker"
    );
    let again = first.tool.schemas.get(&first.name).unwrap();
    assert!(again.input().unwrap().starts_with('{'));
}

/// Pages step over a tool whose lazy schemas cannot be made: every other tool is listed once,
/// and the cursors end.
#[tokio::test]
async fn pages_step_over_a_tool_that_cannot_be_listed() {
    let set = lazy_set(&pool_with_a_bad_schema(), &json_names(), "s.v1.Feed");
    // Page size 1: the tool that cannot be listed is a page of its own, the last.
    for page_size in [1, 2, 500] {
        let server = crate::server::McpServer::builder("t", "0")
            .page_size(page_size)
            .tool_set(set.clone())
            .unwrap()
            .build();
        let catalog = server.catalog();
        let (mut names, mut cursor, mut pages) = (Vec::new(), None::<String>, 0);
        loop {
            let page = catalog.listing.page(cursor.as_deref(), false).unwrap();
            names.extend(page.tools.iter().map(|tool| tool.name.to_string()));
            pages += 1;
            assert!(pages <= 3, "the cursors do not end: {names:?}");
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(names, ["Feed_Get"]);
    }
}

/// `make_schemas_in_background` makes every lazy schema while the server serves.
#[tokio::test]
async fn schemas_made_in_the_background_are_all_made() {
    let set = lazy_set(&large_pool(&["p1"]), &Options::default(), "p1.Large");
    let server = crate::server::McpServer::builder("t", "0")
        .tool_set(set.clone())
        .unwrap()
        .build();
    assert!(set.tools.iter().all(|entry| !entry.tool.schemas.is_made()));
    server.make_schemas_in_background().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !set.tools.iter().all(|entry| entry.tool.schemas.is_made()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the schemas were not made"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
