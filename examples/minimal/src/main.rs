//! The smallest complete server: a tonic service, served as MCP tools over stdio.

use tonic::{Request, Response, Status};

pub mod greeter {
    pub mod v1 {
        // prost's types, tonic's client and server, and the generated `greeter_mcp` module.
        tonic::include_proto!("greeter.v1");
    }
}

use greeter::v1::{SayHelloRequest, SayHelloResponse, greeter_mcp, greeter_server::Greeter};

#[derive(Debug, Default)]
struct Hello;

#[tonic::async_trait]
impl Greeter for Hello {
    async fn say_hello(
        &self,
        request: Request<SayHelloRequest>,
    ) -> Result<Response<SayHelloResponse>, Status> {
        let request = request.into_inner();
        if request.name.is_empty() {
            return Err(Status::invalid_argument("name is empty: say who to greet"));
        }
        let greeting = format!("Hello, {}!", request.name);
        let message = vec![greeting; request.times.max(1) as usize].join(" ");
        Ok(Response::new(SayHelloResponse { message }))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Every RPC of the service is a tool; calls go to `Hello` in process, through tonic.
    let tools = greeter_mcp::from_service(Hello)?;
    let server = tonic_mcp::McpServer::builder("greeter", env!("CARGO_PKG_VERSION"))
        .tool_set(tools)?
        .build();
    // MCP over stdin/stdout until the client disconnects.
    server.serve_stdio().await?;
    Ok(())
}
