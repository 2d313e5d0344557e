//! Tools of a [`SetPools`]: the tools one pool of the whole set gives, made a package at a time.

use prost::Message as _;
use prost_types::FileDescriptorSet;

use test_kit::descriptors::{file, never_called};
use tonic_mcp::{McpServer, ToolSet, codegen::BoxTransport};

use super::*;

/// Three packages whose services have one name, and so tools of one name.
fn set_bytes() -> Vec<u8> {
    FileDescriptorSet {
        file: vec![file("acme.v1"), file("shop.v1"), file("shop.v2")],
    }
    .encode_to_vec()
}

/// Every tool of `set` as `tools/list` shows it, as JSON text.
fn listed(set: &ToolSet) -> Vec<String> {
    set.tools()
        .iter()
        .map(|tool| serde_json::to_string(tool).unwrap())
        .collect()
}

#[tokio::test]
async fn the_tools_of_a_set_are_the_tools_of_its_pool() {
    let bytes = set_bytes();
    let decoded = DescriptorTools::decode(&bytes).unwrap();
    let (set, comments) = SetPools::decode(&bytes).unwrap();
    let (set, comments) = (Arc::new(set), Arc::new(comments));
    let names = ["acme.v1.Accounts", "shop.v1.Accounts", "shop.v2.Accounts"];
    for lazy in [false, true] {
        let options = Options::default();
        let one = DescriptorTools::of(&decoded, &options).unique_names(names);
        let by_package =
            DescriptorTools::of_set(&set, Arc::clone(&comments), &options).unique_names(names);
        let (one, by_package) = if lazy {
            (one.lazy_schemas(), by_package.lazy_schemas())
        } else {
            (one, by_package)
        };
        let one = one
            .services(names, BoxTransport::new(never_called()))
            .unwrap();
        let by_package = by_package
            .services(names, BoxTransport::new(never_called()))
            .unwrap();
        assert_eq!(listed(&by_package), listed(&one));
        // Qualified by package where they collide, as from one pool.
        assert!(
            by_package
                .names()
                .any(|name| name == "shop_v1_Accounts_Get"),
            "{:?}",
            by_package.names().collect::<Vec<_>>()
        );
        // A set per service, too.
        let sets = DescriptorTools::of_set(&set, Arc::clone(&comments), &options)
            .service_sets(names, never_called())
            .unwrap();
        assert_eq!(sets.len(), 3);
        assert_eq!(
            sets[1].names().collect::<Vec<_>>(),
            ["Accounts_Get", "Accounts_List"]
        );
    }
    // Naming services whose tools are not made qualifies the tools that are, as in one pool.
    let options = Options::default();
    let only = |tools: DescriptorTools<'_>| {
        tools
            .unique_names(names)
            .service("shop.v2.Accounts", never_called())
            .unwrap()
            .names()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        only(DescriptorTools::of_set(
            &set,
            Arc::clone(&comments),
            &options
        )),
        only(DescriptorTools::of(&decoded, &options))
    );
}

#[tokio::test]
async fn a_tool_of_a_set_resolves_its_types_in_its_package_pool_on_its_first_call() {
    // What the tool resolves, and in which pool, is the runtime's test of the same name.
    let (set, comments) = SetPools::decode(&set_bytes()).unwrap();
    let set = Arc::new(set);
    let options = Options::default();
    let tools = DescriptorTools::of_set(&set, Arc::new(comments), &options)
        .service("shop.v1.Accounts", never_called())
        .unwrap();
    assert!(
        set.pinned_packages().is_empty(),
        "nothing is held until a call"
    );
    // The first call resolves the tool's types (and then fails at the transport).
    let server = McpServer::builder("t", "0")
        .tool_set(tools)
        .unwrap()
        .build();
    let client = test_kit::connect(server).await;
    let get = test_kit::call(&client, "Accounts_Get", serde_json::json!({}))
        .await
        .unwrap();
    let error = test_kit::expect_err("Accounts_Get", &get);
    assert!(!error.contains("cannot be resolved"), "{error}");
    // The package's pool is kept, and it holds only the package's files.
    let files: Vec<String> = set
        .recent("shop.v1")
        .unwrap()
        .files()
        .map(|f| f.name().to_owned())
        .collect();
    assert_eq!(files, ["shop/v1.proto"]);
    assert_eq!(set.pinned_packages(), ["shop.v1"]);
    // An unknown service is refused as from one pool.
    let error = DescriptorTools::of_set(&set, Arc::default(), &options)
        .service("shop.v9.Accounts", never_called())
        .unwrap_err();
    assert!(error.to_string().contains("shop.v9.Accounts"), "{error}");
}
