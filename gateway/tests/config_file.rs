//! `--config FILE`: one gateway in front of several backends, from a TOML file, driven by
//! rmcp's MCP client over stdio. The backends are the e2e echo services on loopback, once by
//! reflection and once by a descriptor-set file, each under its own prefix; a third backend is
//! down and is left out, with the cause in the log, while the others serve.

use std::process::Stdio;

use rmcp::ServiceExt as _;
use serde_json::json;

mod support;

use support::{GATEWAY, stdio_logging_to, temp_dir, tool_names};
use test_kit::free_port;

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
            dead = free_port(),
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
    let client = ().serve(stdio_logging_to(command, &log)).await.expect("handshake over stdio");

    assert_eq!(
        tool_names(&client).await,
        [
            "a_ScalarService_Echo",
            "b_InventoryService_Chat",
            "b_InventoryService_GetItem",
            "b_InventoryService_ListItems",
        ]
    );
    let echoed = test_kit::call(&client, "a_ScalarService_Echo", json!({"f_string": "hé"}))
        .await
        .expect("call");
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    assert_eq!(
        echoed.structured_content.expect("structured")["f_string"],
        "hé"
    );
    let item = test_kit::call(&client, "b_InventoryService_GetItem", json!({"id": "3"}))
        .await
        .expect("call");
    assert_eq!(item.is_error, Some(false), "{item:?}");
    // The backend's own bound on collected messages.
    let listed = test_kit::call(
        &client,
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
            free_port()
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
