//! The manual's serving snippets, compiled: each function body below is a snippet of the
//! "Serving tools" section of `docs/serving.md`, written against the minimal example's
//! `greeter_mcp` module, and the test checks that the book shows each one as it is here (as
//! `rust,ignore` blocks: rustdoc cannot compile them without the greeter module). The functions are compiled, not
//! run (they would serve stdio or need a server).

#![allow(dead_code, unused_variables)]

use std::error::Error;

use tonic::transport::Channel;
use tonic::{Request, Response, Status};

mod greeter {
    pub mod v1 {
        tonic::include_proto!("greeter.v1");
    }
}

use greeter::v1::{SayHelloRequest, SayHelloResponse, greeter_server::Greeter};

#[derive(Debug, Default)]
struct Hello;

#[tonic::async_trait]
impl Greeter for Hello {
    async fn say_hello(
        &self,
        _request: Request<SayHelloRequest>,
    ) -> Result<Response<SayHelloResponse>, Status> {
        Ok(Response::new(SayHelloResponse::default()))
    }
}

// The book: serving tools.
async fn serving() -> Result<(), Box<dyn Error>> {
    use std::time::Duration;
    use tonic_mcp::{McpServer, forward_headers};

    // The minimal example's Greeter: a client over the network, and the same service called
    // in process under a prefix.
    let channel = Channel::from_static("http://[::1]:50051").connect_lazy();
    let remote = greeter::v1::greeter_mcp::from_channel(channel)?;
    let local = greeter::v1::greeter_mcp::from_service(Hello)?
        .with_prefix("local")? // local_Greeter_SayHello; counts toward 64
        .with_timeout(Duration::from_secs(5));

    let server = McpServer::builder("greeter", env!("CARGO_PKG_VERSION"))
        .instructions("Greets people.")
        .tool_set(remote)? // duplicate tool names are an error
        .tool_set(local)?
        .on_call(forward_headers(["authorization"])) // off by default; HTTP only
        .build();

    server.serve_stdio().await?; // or over streamable HTTP: serve_http, streamable_http_service
    Ok(())
}

// The book: tools without generated code.
fn without_generated_code(
    descriptor_set_bytes: Vec<u8>,
    channel: Channel,
) -> Result<(), Box<dyn Error>> {
    use tonic_mcp::schema::Options;
    use tonic_mcp_dynamic::DescriptorTools;

    let pool = DescriptorTools::decode_pool(&descriptor_set_bytes)?; // with source info
    let options = Options::parse("tool_names=method,exclude=*.Delete*")?;
    let tools = DescriptorTools::new(&pool, &options);
    let greeter = tools.service("greeter.v1.Greeter", channel.clone())?;
    let everything = tools.all(channel)?; // every service of the pool
    Ok(())
}

// The book: migrating from `from_client`.
fn migrating(
    channel: Channel,
    auth: fn(Request<()>) -> Result<Request<()>, Status>,
) -> Result<(), Box<dyn Error>> {
    use greeter::v1::greeter_mcp;
    use tonic::service::interceptor::InterceptedService;

    // before: greeter_mcp::from_client(GreeterClient::new(channel))?
    let tools = greeter_mcp::from_channel(channel.clone())?;
    // before: greeter_mcp::from_client(GreeterClient::with_interceptor(channel, auth))?
    let tools = greeter_mcp::from_channel(InterceptedService::new(channel, auth))?;
    Ok(())
}

/// The body of `fn name` in this file, without its trailing `Ok(())` and one level of
/// indentation: the snippet the book shows.
fn snippet(name: &str) -> String {
    let source = include_str!("readme_snippets.rs");
    let start = source
        .find(&format!("fn {name}("))
        .and_then(|at| source[at..].find("{\n").map(|brace| at + brace + 2))
        .unwrap_or_else(|| panic!("no fn {name}"));
    let end = start
        + source[start..]
            .find("\n    Ok(())\n}")
            .expect("the body ends with Ok(())");
    source[start..end]
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_book_shows_the_serving_snippets_as_compiled_here() {
    let book = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/serving.md"
    ))
    .expect("docs/serving.md");
    for name in ["serving", "without_generated_code", "migrating"] {
        let block = format!("```rust,ignore\n{}\n```\n", snippet(name));
        assert!(
            book.contains(&block),
            "docs/serving.md does not show the `{name}` snippet as compiled here; expected:\n{block}"
        );
    }
}
