//! What the gateway's integration tests share; each test file uses some of it.

#![allow(dead_code)]

use std::process::Stdio;

use rmcp::model::CallToolRequestParams;
use serde_json::json;

/// The gateway binary under test.
pub(crate) const GATEWAY: &str = env!("CARGO_BIN_EXE_grpc-mcp-gateway");

/// Starts the gateway with `--http 127.0.0.1:0` added, and reads the bound address it prints.
pub(crate) async fn spawn_http(
    mut command: tokio::process::Command,
) -> (tokio::process::Child, String) {
    let mut child = command
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the gateway");
    let stdout = child.stdout.take().expect("stdout");
    let (addr, _) = test_kit::announced_addr(stdout).await;
    (child, addr)
}

/// The gateway of `command` over stdio, after the handshake, and its stderr as a task that
/// returns it all once the gateway exits.
pub(crate) async fn stdio_with_logs(
    command: tokio::process::Command,
) -> (test_kit::Client, tokio::task::JoinHandle<String>) {
    use rmcp::ServiceExt as _;
    use tokio::io::AsyncReadExt as _;
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the gateway");
    let mut stderr = stderr.expect("stderr");
    let logs = tokio::spawn(async move {
        let mut text = String::new();
        stderr.read_to_string(&mut text).await.expect("read stderr");
        text
    });
    let gateway = ().serve(transport).await.expect("handshake");
    (gateway, logs)
}

/// The stdio transport to the gateway of `command`, started with its stderr written to the
/// file `log` (created afresh).
pub(crate) fn stdio_logging_to(
    command: tokio::process::Command,
    log: &std::path::Path,
) -> rmcp::transport::TokioChildProcess {
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::from(std::fs::File::create(log).expect("log")))
        .spawn()
        .expect("spawn the gateway");
    transport
}

/// A fresh directory for one test's files.
pub(crate) fn temp_dir(label: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "grpc-mcp-gateway-config-{label}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `GET /metrics` of the gateway's metrics listener, the body.
pub(crate) fn metrics(port: u16) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("metrics listener");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    body.to_owned()
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub(crate) struct Changes(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for Changes {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Changes {
    /// How many have come.
    pub(crate) fn count(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether `count` have come within 15 s.
    pub(crate) async fn wait_for(&self, count: usize) -> bool {
        for _ in 0..150 {
            if self.count() >= count {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        false
    }
}

/// The `f_string` a ScalarService echo tool answers for `text`.
pub(crate) async fn echo<S: rmcp::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
    tool: &str,
    text: &str,
) -> String {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = json!({"f_string": text}).as_object().cloned();
    let echoed = client.call_tool(params).await.expect("call");
    echoed.structured_content.expect("structured")["f_string"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The names of the tools listed now, sorted.
pub(crate) async fn tool_names<S: rmcp::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
) -> Vec<String> {
    let mut names = test_kit::tool_names(client).await.expect("tools/list");
    names.sort();
    names
}

/// Which gRPC reflection service a [`serve_scalars`] server offers.
pub(crate) enum Reflection {
    /// None: the gateway must be given descriptor sets.
    Off,
    /// `grpc.reflection.v1`.
    V1,
    /// `grpc.reflection.v1alpha` only, for the gateway's fallback.
    V1Alpha,
}

/// Serves `ScalarService` on a free loopback port, with `reflection` (for that service alone)
/// and, when `tls` is given, over TLS with it.
pub(crate) async fn serve_scalars(
    reflection: Reflection,
    tls: Option<tonic::transport::ServerTlsConfig>,
) -> std::net::SocketAddr {
    let incoming = tonic::transport::server::TcpIncoming::bind(std::net::SocketAddr::from((
        [127, 0, 0, 1],
        0,
    )))
    .expect("bind");
    let addr = incoming.local_addr().expect("addr");
    let configure = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(e2e::TESTDATA_DESCRIPTOR_SET)
            .with_service_name("testdata.scalars.ScalarService")
    };
    let v1 =
        matches!(reflection, Reflection::V1).then(|| configure().build_v1().expect("reflection"));
    let v1alpha = matches!(reflection, Reflection::V1Alpha)
        .then(|| configure().build_v1alpha().expect("reflection"));
    let mut server = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        server = server.tls_config(tls).expect("server TLS");
    }
    let router = server
        .add_service(
            e2e::testdata::scalars::scalar_service_server::ScalarServiceServer::new(
                e2e::services::Scalars,
            ),
        )
        .add_optional_service(v1)
        .add_optional_service(v1alpha);
    tokio::spawn(router.serve_with_incoming(incoming));
    addr
}

/// The gateway's configuration for `--target target` and the further `args`.
pub(crate) fn gateway_config(target: &str, args: &[&str]) -> grpc_mcp_gateway::Config {
    grpc_mcp_gateway::Config::parse(["--target", target].into_iter().chain(args.iter().copied()))
        .expect("config")
}

/// Why a gateway configured as [`gateway_config`] does cannot start: connecting must fail.
pub(crate) async fn connect_error(target: &str, args: &[&str]) -> String {
    match grpc_mcp_gateway::Gateway::connect(&gateway_config(target, args)).await {
        Ok(_) => panic!("the gateway for {target} {args:?} started"),
        Err(error) => error.to_string(),
    }
}

/// Asserts that `gateway` serves `ScalarService_Echo` and nothing else.
pub(crate) fn serves_only_scalar_echo(gateway: &grpc_mcp_gateway::Gateway) {
    let names: Vec<String> = gateway
        .server
        .tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["ScalarService_Echo"]);
}
