//! Tools whose schemas are made when first needed ([`SpecTool::later`]) as a server serves
//! them: listed, compared, made in the background, let go; and tools of a [`SetPools`] that
//! resolve their types on their first call ([`SpecTool::resolve_later`]). The tools are made
//! here as `tonic-mcp-dynamic` makes them, by the schema generator, whose own tests (and
//! that crate's) cover the tools themselves.

use std::sync::Arc;

use prost::Message as _;
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorSet;
use test_kit::descriptors::{file, json_names, large_pool, never_called, pool_with_a_bad_schema};
use tonic_mcp_schema::{Context, Options, comments::Comments, tools::Schemas as When};

use super::*;
use crate::{
    McpServer, ToolSet,
    codegen::ToolSetBuilder,
    tool::schemas::{KeptText, MakeSchemas},
};

/// Makes the schemas of the tool of one RPC, as `tonic-mcp-dynamic`'s lazy tools do.
struct MethodSchemas {
    pool: DescriptorPool,
    options: Options,
    comments: Arc<Comments>,
    service: String,
    method: String,
}

impl MakeSchemas for MethodSchemas {
    fn make(&self) -> Result<MadeSchemas, String> {
        let method = self
            .pool
            .get_service_by_name(&self.service)
            .and_then(|service| service.methods().find(|m| m.name() == self.method))
            .ok_or("no such RPC")?;
        let schemas = Context::with_comments(&self.pool, &self.options, &self.comments)
            .method_schemas(&method)
            .map_err(|e| e.to_string())?;
        Ok(MadeSchemas::made(
            &schemas.input.to_string(),
            &schemas.output.to_string(),
            |text| -> Arc<dyn KeptText> { Arc::new(text.to_owned()) },
        ))
    }
}

/// The tools of `service` in `pool` under `options`, their schemas made when first needed
/// from `comments` (which only the makers keep).
fn lazy_set_with(
    pool: &DescriptorPool,
    comments: Arc<Comments>,
    options: &Options,
    service: &str,
) -> ToolSet {
    let descriptor = pool.get_service_by_name(service).unwrap();
    let specs = Context::with_comments(pool, options, &comments)
        .service_tools_with(&descriptor, When::Later)
        .unwrap();
    let mut builder = ToolSetBuilder::with_pool(pool.clone(), BoxTransport::new(never_called()));
    for spec in specs.tools {
        let (service, method) = tonic_mcp_schema::names::split_rpc_path(&spec.rpc_path).unwrap();
        let maker = MethodSchemas {
            pool: pool.clone(),
            options: options.clone(),
            comments: Arc::clone(&comments),
            service: service.to_owned(),
            method: method.to_owned(),
        };
        let tool = SpecTool::later(spec, options, None, Box::new(maker));
        builder.add_spec_tool(tool).unwrap();
    }
    builder.build()
}

/// The tools of `service` in `pool` under `options`, their schemas made when first needed.
fn lazy_set(pool: &DescriptorPool, options: &Options, service: &str) -> ToolSet {
    lazy_set_with(pool, Arc::new(Comments::index(pool)), options, service)
}

/// A tool whose schemas cannot be made is still registered, and its validator says why.
#[tokio::test]
async fn a_lazy_schema_that_cannot_be_made_fails_its_calls_saying_why() {
    let set = lazy_set(&pool_with_a_bad_schema(), &json_names(), "s.v1.Feed");
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
    let server = McpServer::builder("t", "0")
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
    let server = McpServer::builder("t", "0")
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
    let set = lazy_set_with(&pool, comments, &options, "p1.Large");
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
        let server = McpServer::builder("t", "0")
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
    let server = McpServer::builder("t", "0")
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

/// A tool of a set, registered to resolve its types later, resolves them in its package's pool
/// on its first call, and that pool is then kept.
#[tokio::test]
async fn a_tool_of_a_set_resolves_its_types_in_its_package_pool_on_its_first_call() {
    let bytes = FileDescriptorSet {
        file: vec![file("acme.v1"), file("shop.v1"), file("shop.v2")],
    }
    .encode_to_vec();
    let (set, comments) = SetPools::decode(&bytes).unwrap();
    let set = Arc::new(set);
    let options = Options::default();
    let transport = BoxTransport::new(never_called());
    let pool = set.recent("shop.v1").unwrap();
    let service = pool.get_service_by_name("shop.v1.Accounts").unwrap();
    let specs = Context::with_comments(&pool, &options, &comments)
        .service_tools_with(&service, When::Later)
        .unwrap();
    let mut builder = ToolSetBuilder::with_pool(DescriptorPool::new(), transport.clone());
    for spec in specs.tools {
        let mut tool = SpecTool::new(spec, &options, None, MadeSchemas::given("{}", "{}"));
        tool.resolve_later(&set, &pool, &transport).unwrap();
        builder.add_spec_tool(tool).unwrap();
    }
    let tools = builder.build();
    drop(pool);
    set.forget_recent();
    assert!(
        set.pinned_packages().is_empty(),
        "nothing is held until a call"
    );
    let tool = tools.compiled("Accounts_Get").unwrap();
    let types = tool.types().unwrap();
    assert_eq!(types.input.full_name(), "shop.v1.M");
    // The package's pool, and only its files.
    let files: Vec<String> = types
        .input
        .parent_pool()
        .files()
        .map(|f| f.name().to_owned())
        .collect();
    assert_eq!(files, ["shop/v1.proto"]);
    assert_eq!(set.pinned_packages(), ["shop.v1"]);
}
