//! `--config FILE`: one gateway in front of several backends, from a TOML file, driven by
//! rmcp's MCP client over stdio. The backends are the e2e echo services on loopback, once by
//! reflection and once by a descriptor-set file, each under its own prefix; a third backend is
//! down and is left out, with the cause in the log, while the others serve.

use std::process::Stdio;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

const GATEWAY: &str = env!("CARGO_BIN_EXE_grpc-mcp-gateway");

fn temp_dir(label: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "grpc-mcp-gateway-config-{label}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A loopback port nothing listens on: bound, then released.
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

#[tokio::test]
async fn several_backends_from_a_file_each_under_its_prefix() {
    let backend = e2e::start_backend().await.expect("backend");
    let dir = temp_dir("several");
    std::fs::write(dir.join("testdata.binpb"), e2e::TESTDATA_DESCRIPTOR_SET).expect("set");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            r#"# Two views of one server, and a server that is down.
[[backend]]
name = "scalars"
target = "http://{addr}"
prefix = "a"
services = ["testdata.scalars.ScalarService"]
header_env = {{ authorization = "GATEWAY_CONFIG_TEST_TOKEN" }}
timeout = "5s"

[[backend]]
name = "inventory"
target = "http://{addr}"
descriptor_set = "testdata.binpb"   # relative to this file
prefix = "b"
services = ["testdata.streaming.InventoryService"]
exclude = ["*.UploadItems"]
max_messages = 2
max_result_bytes = "64KiB"

[[backend]]
name = "down"
target = "http://127.0.0.1:{dead}"
connect_timeout = "500ms"
"#,
            addr = backend.addr,
            dead = dead_port(),
        ),
    )
    .expect("config");
    let log = dir.join("gateway.log");
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .arg("--config")
        .arg(&config)
        .env("GATEWAY_CONFIG_TEST_TOKEN", "Bearer not-logged")
        .env("RUST_LOG", "info");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::from(std::fs::File::create(&log).expect("log")))
        .spawn()
        .expect("spawn the gateway");
    let client = ().serve(transport).await.expect("handshake over stdio");

    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a_ScalarService_Echo",
            "b_InventoryService_Chat",
            "b_InventoryService_GetItem",
            "b_InventoryService_ListItems",
        ]
    );
    let call = |name: &str, arguments: serde_json::Value| {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments.as_object().cloned();
        client.call_tool(params)
    };
    let echoed = call("a_ScalarService_Echo", json!({"f_string": "hé"}))
        .await
        .expect("call");
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    assert_eq!(
        echoed.structured_content.expect("structured")["f_string"],
        "hé"
    );
    let item = call("b_InventoryService_GetItem", json!({"id": "3"}))
        .await
        .expect("call");
    assert_eq!(item.is_error, Some(false), "{item:?}");
    // The backend's own bound on collected messages.
    let listed = call(
        "b_InventoryService_ListItems",
        json!({"name_prefix": "item"}),
    )
    .await
    .expect("call");
    let listed = listed.structured_content.expect("structured");
    assert_eq!(
        listed["messages"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
    assert_eq!(listed["truncated"], true);
    client.cancel().await.expect("close");

    let log = std::fs::read_to_string(&log).expect("log");
    assert!(
        log.contains("backend=down") && log.contains("this backend is not served"),
        "{log}"
    );
    assert!(
        log.contains("backend=scalars") && log.contains("backend=inventory"),
        "{log}"
    );
    assert!(
        !log.contains("not-logged"),
        "a header value was logged: {log}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn a_tool_name_in_two_backends_is_an_error_naming_both() {
    let backend = e2e::start_backend().await.expect("backend");
    let dir = temp_dir("collision");
    let config = dir.join("gateway.toml");
    let table = |name: &str| {
        format!(
            "[[backend]]\nname = \"{name}\"\ntarget = \"http://{}\"\nservices = [\"testdata.scalars.ScalarService\"]\n",
            backend.addr
        )
    };
    std::fs::write(&config, format!("{}\n{}", table("first"), table("second"))).expect("config");
    let output = tokio::process::Command::new(GATEWAY)
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run the gateway");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("gateway.toml:6: backend `second`")
            && stderr.contains("tool `ScalarService_Echo`")
            && stderr.contains("a tool of backend `first`")
            && stderr.contains("`prefix`"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--check` loads every backend, prints the tools with their sizes, and fails when a backend
/// cannot be loaded, naming it: what CI runs before a rollout.
#[tokio::test]
async fn check_prints_the_tools_and_fails_on_a_backend_that_is_down() {
    let backend = e2e::start_backend().await.expect("backend");
    let dir = temp_dir("check");
    std::fs::write(dir.join("testdata.binpb"), e2e::TESTDATA_DESCRIPTOR_SET).expect("set");
    let up = format!(
        r#"[[backend]]
name = "scalars"
target = "http://{addr}"
services = ["testdata.scalars.ScalarService"]

[[backend]]
name = "catalog"
target = "http://{addr}"
descriptor_set = "testdata.binpb"
services = ["testdata.tool_options.CatalogService"]
options = ["max_schema_bytes=300"]
"#,
        addr = backend.addr
    );
    let config = dir.join("gateway.toml");
    std::fs::write(&config, &up).expect("config");
    let check = |config: std::path::PathBuf| async move {
        tokio::process::Command::new(GATEWAY)
            .arg("--config")
            .arg(config)
            .arg("--check")
            .stdin(Stdio::null())
            .output()
            .await
            .expect("run the gateway")
    };
    let output = check(config.clone()).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("TOOL") && lines[0].ends_with("SHRUNK"),
        "{stdout}"
    );
    let echo = lines
        .iter()
        .find(|line| line.starts_with("ScalarService_Echo "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        echo.contains(" scalars ")
            && echo.contains("/testdata.scalars.ScalarService/Echo")
            && echo.contains(" unary "),
        "{echo}"
    );
    // The catalog's product schemas do not fit 300 bytes: shrunk, and said so.
    let update = lines
        .iter()
        .find(|line| line.starts_with("catalog_admin_CatalogService_UpdateProduct "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        update.contains(" catalog ") && !update.ends_with(" no"),
        "{update}"
    );
    // Three product schemas stay over 300 bytes after every step: one warning each.
    let warnings = stdout.matches("warning: ").count();
    assert_eq!(warnings, 3, "{stdout}");
    assert!(stdout.contains("catalog_admin_get_product"), "{stdout}");
    assert_eq!(
        stdout.lines().last(),
        Some(&*format!(
            "{} tools from 2 backends, 3 warnings",
            lines.len() - 2 - warnings
        )),
        "{stdout}"
    );

    // A backend that is down fails the check, by name, where serving would leave it out.
    let down = dir.join("down.toml");
    std::fs::write(
        &down,
        format!(
            "{up}\n[[backend]]\nname = \"down\"\ntarget = \"http://127.0.0.1:{}\"\nconnect_timeout = \"500ms\"\n",
            dead_port()
        ),
    )
    .expect("config");
    let output = check(down).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("down.toml:13: backend `down`") && stderr.contains("refused"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `GET /metrics` of the gateway's metrics listener, the body.
fn metrics(port: u16) -> String {
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
struct Changes(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for Changes {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Changes {
    async fn wait_for(&self, count: usize) -> bool {
        for _ in 0..150 {
            if self.0.load(std::sync::atomic::Ordering::SeqCst) >= count {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        false
    }
}

/// The `f_string` a ScalarService echo tool answers for `text`.
async fn echo<S: rmcp::Service<rmcp::RoleClient>>(
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

async fn tool_names<S: rmcp::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

/// Live descriptors: a backend down at start gets its tools once it answers (the interval),
/// and a descriptor-set file that changes is read again on SIGHUP; each time, the connected
/// client is told, and the other backends' calls keep working.
#[tokio::test]
async fn backends_are_loaded_again_on_an_interval_and_on_sighup() {
    use prost::Message as _;

    let up = e2e::start_backend().await.expect("backend");
    let later = std::net::SocketAddr::from(([127, 0, 0, 1], dead_port()));
    let dir = temp_dir("reload");
    let set_path = dir.join("testdata.binpb");
    std::fs::write(&set_path, e2e::TESTDATA_DESCRIPTOR_SET).expect("set");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            r#"[[backend]]
name = "up"
target = "http://{up}"
prefix = "a"
services = ["testdata.scalars.ScalarService"]

[[backend]]
name = "later"
target = "http://{later}"
prefix = "b"
services = ["testdata.scalars.ScalarService"]
connect_timeout = "300ms"

[[backend]]
name = "file"
target = "http://{up}"
descriptor_set = "testdata.binpb"
prefix = "c"
services = ["testdata.scalars.ScalarService"]
"#,
            up = up.addr
        ),
    )
    .expect("config");
    let metrics_port = dead_port();
    let start = |interval: &str| {
        let mut command = tokio::process::Command::new(GATEWAY);
        command
            .arg("--config")
            .arg(&config)
            .args(["--reload-interval", interval]);
        if interval == "300ms" {
            command.args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")]);
        }
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::from(
                std::fs::File::create(dir.join(format!("gateway-{interval}.log"))).expect("log"),
            ))
            .spawn()
            .expect("spawn the gateway");
        transport
    };

    // On an interval: `later` starts answering after the gateway did.
    let changes = Changes::default();
    let client = changes
        .clone()
        .serve(start("300ms"))
        .await
        .expect("handshake");
    assert_eq!(
        tool_names(&client).await,
        ["a_ScalarService_Echo", "c_ScalarService_Echo"]
    );
    let up_of =
        |name: &str| format!("mcp_backend_up{{backend=\"{name}\",target=\"http://{later}\"}}");
    let scraped = metrics(metrics_port);
    assert!(
        scraped.contains(&format!("{} 0\n", up_of("later"))),
        "{scraped}"
    );
    let _later = e2e::start_backend_at(later)
        .await
        .expect("the later backend");
    assert!(
        changes.wait_for(1).await,
        "no list_changed after the backend came up"
    );
    let scraped = metrics(metrics_port);
    assert!(
        scraped.contains(&format!("{} 1\n", up_of("later"))),
        "{scraped}"
    );
    assert!(
        scraped.contains("mcp_gateway_reloads_total{outcome=\"changed\"} 1\n"),
        "{scraped}"
    );
    assert_eq!(
        tool_names(&client).await,
        [
            "a_ScalarService_Echo",
            "b_ScalarService_Echo",
            "c_ScalarService_Echo"
        ]
    );
    assert_eq!(echo(&client, "b_ScalarService_Echo", "late").await, "late");
    client.cancel().await.expect("close");

    // On SIGHUP (the interval is an hour): the file's ScalarService/Echo becomes EchoAgain.
    let changes = Changes::default();
    let transport = start("60m");
    let pid = transport.id().expect("the gateway's pid");
    let client = changes.clone().serve(transport).await.expect("handshake");
    assert_eq!(tool_names(&client).await.len(), 3);
    let mut set =
        prost_types::FileDescriptorSet::decode(e2e::TESTDATA_DESCRIPTOR_SET).expect("set");
    let method = set
        .file
        .iter_mut()
        .flat_map(|file| file.service.iter_mut())
        .filter(|service| service.name() == "ScalarService")
        .flat_map(|service| service.method.iter_mut())
        .find(|method| method.name() == "Echo")
        .expect("ScalarService.Echo");
    method.name = Some("EchoAgain".to_owned());
    std::fs::write(&set_path, set.encode_to_vec()).expect("set");
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    assert!(changes.wait_for(1).await, "no list_changed after SIGHUP");
    assert_eq!(
        tool_names(&client).await,
        [
            "a_ScalarService_Echo",
            "b_ScalarService_Echo",
            "c_ScalarService_EchoAgain"
        ]
    );
    // The others are unchanged and answer.
    assert_eq!(
        echo(&client, "a_ScalarService_Echo", "still").await,
        "still"
    );
    client.cancel().await.expect("close");
    std::fs::remove_dir_all(&dir).ok();
}
