//! Unit tests of the `--config` file: what it sets, and an error for every mistake naming the
//! file, the line and the key.

use super::*;

/// Writes `text` as a config file in a directory of its own and loads it.
fn load_text(label: &str, text: &str) -> (Result<Vec<Backend>, Error>, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "grpc-mcp-gateway-config-unit-{label}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    (load(&path).map(|loaded| loaded.backends), path)
}

/// One `[[backend]]` table, for the tests of the other tables.
const BACKEND: &str = "[[backend]]\nname = \"a\"\ntarget = \"http://x:1\"\n";

/// Writes `text` as a config file (see [`load_text`]) and returns its path as `--config`
/// takes it.
fn config_path(label: &str, text: &str) -> String {
    load_text(label, text).1.display().to_string()
}

/// The command line `--config path` and `args`, parsed.
fn parse_with(path: &str, args: &[&str]) -> Result<crate::Config, Error> {
    crate::Config::parse([&["--config", path][..], args].concat())
}

/// The error of [`parse_with`], which must fail.
fn parse_error(path: &str, args: &[&str]) -> String {
    match parse_with(path, args) {
        Ok(_) => panic!("--config {path} {args:?} must be refused"),
        Err(error) => error.to_string(),
    }
}

fn error(label: &str, text: &str) -> String {
    let (result, path) = load_text(label, text);
    let message = result.unwrap_err().to_string();
    assert!(
        message.starts_with(&path.display().to_string()),
        "the message names the file: {message}"
    );
    message
}

#[test]
fn every_key_of_a_backend_is_read() {
    // `header_env` reads PATH, which every environment has.
    let (backends, path) = load_text(
        "full",
        r#"
[[backend]]
name = "shop"
target = "https://shop.internal:8443"
descriptor_set = "sets/shop.binpb"
services = ["shop.v1.CartService"]
prefix = "shop"
tool_names = "method"
include = ["shop.v1.*"]
exclude = ["*.Delete*"]
options = ["json_names", "unions=any_of"]
headers = { "x-tenant" = "blue" }
header_env = { authorization = "PATH" }
connect_timeout = "2s"
timeout = "1.5s"
max_messages = 7
max_result_bytes = 65536
max_decoding_message_size = "16MiB"
max_encoding_message_size = "1MiB"
tls = { ca = "ca.pem", server_name = "shop", cert = "client.pem", key = "client.key" }

[[backend]]
name = "search"
target = "http://127.0.0.1:50052"
"#,
    );
    let backends = backends.unwrap();
    let base = path.parent().unwrap();
    let shop = &backends[0];
    assert_eq!(shop.name, "shop");
    assert_eq!(
        shop.origin.as_deref(),
        Some(&*format!("{}:2", path.display()))
    );
    assert_eq!(shop.target.url, "https://shop.internal:8443");
    assert_eq!(
        shop.descriptor_set.as_deref(),
        Some(&*base.join("sets/shop.binpb"))
    );
    assert_eq!(shop.services, ["shop.v1.CartService"]);
    assert_eq!(shop.options.prefix.as_deref(), Some("shop"));
    assert!(shop.options.json_names);
    assert_eq!(shop.options.unions.keyword(), "anyOf");
    assert!(shop.options.selects("shop.v1.Cart.Get"));
    assert!(!shop.options.selects("shop.v1.Cart.DeleteAll"));
    assert_eq!(shop.headers.names(), ["x-tenant", "authorization"]);
    assert!(
        !format!("{shop:?}").contains("blue"),
        "header values are not printed"
    );
    assert_eq!(shop.target.timeout, Duration::from_secs(2));
    assert_eq!(shop.call_timeout, Some(Duration::from_millis(1500)));
    assert_eq!(shop.max_messages, Some(7));
    assert_eq!(shop.max_result_bytes, Some(65536));
    assert_eq!(shop.max_decoding_message_size, Some(16 << 20));
    assert_eq!(shop.max_encoding_message_size, Some(1 << 20));
    assert_eq!(shop.target.tls_ca.as_deref(), Some(&*base.join("ca.pem")));
    assert_eq!(shop.target.tls_server_name.as_deref(), Some("shop"));
    assert_eq!(
        shop.target.tls_identity,
        Some((base.join("client.pem"), base.join("client.key")))
    );
    let search = &backends[1];
    assert_eq!(
        search.origin.as_deref(),
        Some(&*format!("{}:22", path.display()))
    );
    assert_eq!(search.descriptor_set, None);
    assert_eq!(search.target.timeout, Duration::from_secs(10));
    assert_eq!(search.call_timeout, None);
}

#[test]
fn every_mistake_names_the_line_and_the_key() {
    let one = |extra: &str| {
        format!("[[backend]]\nname = \"shop\"\ntarget = \"http://127.0.0.1:1\"\n{extra}\n")
    };
    for (label, text, expected) in [
        (
            "unknown",
            one("tarjet = \"x\""),
            &["line 4", "unknown field `tarjet`"][..],
        ),
        (
            "type",
            one("timeout = 5"),
            &["line 4", "timeout", "invalid type: integer"],
        ),
        (
            "duration",
            one("timeout = \"soon\""),
            &["line 4", "`soon` is not a duration"],
        ),
        (
            "bytes",
            one("max_result_bytes = \"4MB\""),
            &["line 4", "unknown unit `MB`"],
        ),
        ("zero", one("max_messages = 0"), &["line 4", "max_messages"]),
        (
            "tls",
            one("tls = { kee = \"k\" }"),
            &["line 4", "unknown field `kee`"],
        ),
        (
            "missing",
            "[[backend]]\nname = \"shop\"\n".to_owned(),
            &["line 1", "missing field `target`"],
        ),
        (
            "top",
            "backends = []\n".to_owned(),
            &["unknown field `backends`"],
        ),
        ("empty", String::new(), &["no [[backend]] table"]),
        (
            "codegen",
            one("options = [\"runtime_crate=::x\"]"),
            &[
                "gateway.toml:1: backend `shop`: options: runtime_crate",
                "generates none",
            ],
        ),
        (
            "option",
            one("options = [\"json_name\"]"),
            &[":1: backend `shop`: options:", "unknown option `json_name`"],
        ),
        (
            "env",
            one("header_env = { authorization = \"GATEWAY_CONFIG_UNSET_VARIABLE\" }"),
            &[
                ":1: backend `shop`: header_env.authorization",
                "GATEWAY_CONFIG_UNSET_VARIABLE is not set",
            ],
        ),
        (
            "header",
            one("headers = { \"bad name\" = \"v\" }"),
            &[":1: backend `shop`: headers.bad name"],
        ),
        (
            "half",
            one("tls = { cert = \"c.pem\" }"),
            &[":1: backend `shop`: tls", "`cert` and `key` go together"],
        ),
        (
            "name",
            "[[backend]]\nname = \"a b\"\ntarget = \"http://x:1\"\n".to_owned(),
            &[":1: backend `a b`: name"],
        ),
        (
            "twice",
            format!("{}\n{}", one(""), one("")),
            &[
                ":6: backend `shop`: the name is taken by the backend at",
                "gateway.toml:1",
            ],
        ),
    ] {
        let message = error(label, &text);
        for part in expected {
            assert!(
                message.contains(part),
                "{label}: {message:?} lacks {part:?}"
            );
        }
    }
}

#[test]
fn a_backend_flag_with_config_is_an_error() {
    let path = config_path("flags", BACKEND);
    for flag in [
        &["--target", "http://y:2"][..],
        &["--connect-timeout", "1s"],
        &["--prefix", "p"],
        &["--opt", "json_names"],
    ] {
        let message = parse_error(&path, flag);
        assert!(
            message.contains(&format!("{} conflicts with --config", flag[0])),
            "{flag:?}: {message}"
        );
    }
    let config = parse_with(&path, &["--name", "n"]).unwrap();
    assert_eq!(config.backends.len(), 1);
    assert_eq!(config.name, "n");
}

#[test]
fn readmes_example_loads() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let start = readme
        .find("```toml\n# gateway.toml\n")
        .expect("README's gateway.toml block");
    let block = &readme[start + "```toml\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let dir = std::env::temp_dir().join(format!("grpc-mcp-gateway-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gateway.toml");
    std::fs::write(&path, block).unwrap();
    let env = |variable: &str| (variable == "SHOP_TOKEN").then(|| "Bearer t".to_owned());
    let backends = load_with(&path, &env).unwrap().backends;
    let names: Vec<&str> = backends.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["shop", "search"]);
    assert_eq!(backends[0].headers.names(), ["authorization"]);
    assert_eq!(
        backends[0].target.tls_ca.as_deref(),
        Some(&*dir.join("certs/ca.pem"))
    );
    assert_eq!(backends[1].max_result_bytes, Some(1 << 20));
    assert_eq!(
        backends[1].descriptor_set.as_deref(),
        Some(&*dir.join("search.binpb"))
    );
    // Without the variable, the error says which.
    let message = load_with(&path, &|_| None).unwrap_err().to_string();
    assert!(
        message.contains("header_env.authorization") && message.contains("SHOP_TOKEN"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_metrics_table_sets_what_the_flags_do() {
    let shown = config_path(
        "metrics",
        &format!("{BACKEND}\n[metrics]\non_http = true\naddr = \"127.0.0.1:9090\"\n"),
    );
    let config = parse_with(&shown, &["--http", "127.0.0.1:0"]).unwrap();
    assert!(config.metrics);
    assert_eq!(config.metrics_addr, Some("127.0.0.1:9090".parse().unwrap()));
    // Said twice, or on_http without an HTTP listener: errors.
    for (args, expected) in [
        (
            &["--http", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:9091"][..],
            "conflict with the [metrics] table",
        ),
        (&[][..], "[metrics] on_http needs --http"),
    ] {
        let message = parse_error(&shown, args);
        assert!(message.contains(expected), "{message}");
    }
    let message = error(
        "metrics-typo",
        &format!("{BACKEND}\n[metrics]\nadress = \"x\"\n"),
    );
    assert!(message.contains("unknown field `adress`"), "{message}");
}

#[test]
fn the_traces_table_sets_what_the_flag_does() {
    let shown = config_path(
        "traces",
        &format!("{BACKEND}\n[traces]\notlp_endpoint = \"http://collector:4317\"\n"),
    );
    let config = parse_with(&shown, &[]).unwrap();
    assert_eq!(
        config.otlp_endpoint.as_deref(),
        Some("http://collector:4317")
    );
    // Said twice: an error.
    let message = parse_error(&shown, &["--otlp-endpoint", "http://other:4317"]);
    assert!(
        message.contains("conflicts with the [traces] table"),
        "{message}"
    );
    // Not a URL the exporter takes, or a typo: errors.
    let shown = config_path(
        "traces-scheme",
        &format!("{BACKEND}\n[traces]\notlp_endpoint = \"collector:4317\"\n"),
    );
    let message = parse_error(&shown, &[]);
    assert!(
        message.contains("expects an http:// or https:// URL"),
        "{message}"
    );
    let message = error(
        "traces-typo",
        &format!("{BACKEND}\n[traces]\nendpoint = \"http://c:4317\"\n"),
    );
    assert!(message.contains("unknown field `endpoint`"), "{message}");
}

#[test]
fn the_tool_search_table_sets_what_the_flags_do() {
    let shown = config_path(
        "search",
        &format!("{BACKEND}\n[tool_search]\npin = [\"A_Get\", \"A_List\"]\n"),
    );
    let config = parse_with(&shown, &[]).unwrap();
    let pinned = |config: &crate::Config| {
        config
            .tool_search
            .as_ref()
            .map(|search| search.pinned().map(str::to_owned).collect::<Vec<_>>())
    };
    assert_eq!(pinned(&config), Some(vec!["A_Get".into(), "A_List".into()]));
    assert_eq!(config.search_embeddings, None);
    // Hybrid ranking's endpoint, as the flags set it.
    let shown = config_path(
        "search-embeddings",
        &format!(
            "{BACKEND}\n[tool_search]\n[tool_search.embeddings]\nurl = \"http://e:8090/v1\"\n\
             model = \"all-MiniLM-L6-v2\"\napi_key_env = \"EMBEDDINGS_KEY\"\n\
             cache_dir = \"/var/cache/e\"\nbatch_size = 32\nrequests_per_second = 2.5\n"
        ),
    );
    let from_file = parse_with(&shown, &[]).unwrap().search_embeddings;
    assert_eq!(
        from_file,
        Some(crate::SearchEmbeddings {
            url: "http://e:8090/v1".into(),
            model: "all-MiniLM-L6-v2".into(),
            api_key_env: Some("EMBEDDINGS_KEY".into()),
            cache_dir: Some("/var/cache/e".into()),
            batch_size: Some(32),
            requests_per_second: Some(2.5),
        })
    );
    let from_flags = crate::Config::parse([
        "--target",
        "http://x:1",
        "--tool-search",
        "--search-embeddings",
        "http://e:8090/v1",
        "--search-embeddings-model",
        "all-MiniLM-L6-v2",
        "--search-embeddings-key-env",
        "EMBEDDINGS_KEY",
        "--search-embeddings-cache",
        "/var/cache/e",
    ])
    .unwrap()
    .search_embeddings;
    assert_eq!(
        from_flags,
        Some(crate::SearchEmbeddings {
            batch_size: None,
            requests_per_second: None,
            ..from_file.clone().unwrap()
        })
    );
    // The endpoint needs its model, and tool search.
    for args in [
        &["--tool-search", "--search-embeddings", "http://e:1/v1"][..],
        &[
            "--search-embeddings",
            "http://e:1/v1",
            "--search-embeddings-model",
            "m",
        ],
    ] {
        let parsed = crate::Config::parse(["--target", "http://x:1"].iter().chain(args).copied());
        assert!(parsed.is_err(), "{args:?}");
    }
    let message = error(
        "embeddings-typo",
        &format!(
            "{BACKEND}\n[tool_search.embeddings]\nurl = \"http://e:1\"\nmodel = \"m\"\nkey = \"x\"\n"
        ),
    );
    assert!(message.contains("unknown field `key`"), "{message}");
    let message = parse_error(&shown, &["--tool-search"]);
    assert!(
        message.contains("conflicts with the [tool_search] table"),
        "{message}"
    );
    let message = error(
        "search-typo",
        &format!("{BACKEND}\n[tool_search]\npinned = []\n"),
    );
    assert!(message.contains("unknown field `pinned`"), "{message}");
    // Without the table or the flag, every tool is listed; --pin needs --tool-search.
    let shown = config_path("no-search", BACKEND);
    assert!(parse_with(&shown, &[]).unwrap().tool_search.is_none());
    assert!(crate::Config::parse(["--target", "http://x:1", "--pin", "A"]).is_err());
}

#[test]
fn the_connections_table_sets_what_the_flags_do() {
    let shown = config_path(
        "connections",
        &format!(
            "{BACKEND}\n[connections]\nmax = 100\nheader_read_timeout = \"2s\"\n\
             body_read_timeout = \"20s\"\nidle_timeout = \"2m\"\n"
        ),
    );
    let config = parse_with(&shown, &["--http", "127.0.0.1:0"]).unwrap();
    assert_eq!(
        config.connection_limits,
        tonic_mcp_serve::ConnectionLimits {
            max_connections: 100,
            header_read_timeout: Duration::from_secs(2),
            body_read_timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(120),
        }
    );
    // A key and its flag: an error; different ones combine.
    let message = parse_error(
        &shown,
        &["--http", "127.0.0.1:0", "--connection-idle-timeout", "1m"],
    );
    assert!(
        message.contains("--connection-idle-timeout conflicts with `idle_timeout`"),
        "{message}"
    );
    let shown = config_path(
        "connections-some",
        &format!("{BACKEND}\n[connections]\nmax = 100\n"),
    );
    let config = parse_with(
        &shown,
        &["--http", "127.0.0.1:0", "--header-read-timeout", "3s"],
    )
    .unwrap();
    assert_eq!(config.connection_limits.max_connections, 100);
    assert_eq!(
        config.connection_limits.header_read_timeout,
        Duration::from_secs(3)
    );
    assert_eq!(
        config.connection_limits.idle_timeout,
        tonic_mcp_serve::ConnectionLimits::default().idle_timeout
    );
    // Without --http, a zero cap, a bad duration or a typo: errors.
    let message = parse_error(&shown, &[]);
    assert!(message.contains("[connections] needs --http"), "{message}");
    for (label, table, expected) in [
        ("connections-zero", "max = 0", "max"),
        (
            "connections-duration",
            "idle_timeout = \"soon\"",
            "`soon` is not a duration",
        ),
        (
            "connections-typo",
            "max_connections = 1",
            "unknown field `max_connections`",
        ),
    ] {
        let message = error(label, &format!("{BACKEND}\n[connections]\n{table}\n"));
        assert!(message.contains(expected), "{label}: {message}");
    }
}

/// The reference's list of `[[backend]]` keys names every key the parser takes: the parser's own
/// list, from its error for an unknown key, so that a new key cannot go undocumented.
#[test]
fn readme_names_every_key() {
    let message = error(
        "keys",
        "[[backend]]\nname = \"a\"\ntarget = \"http://x:1\"\nno_such_key = 1\n",
    );
    let expected = message
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("{message}"));
    let keys: Vec<&str> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .take_while(|key| !key.contains('\n'))
        .collect();
    assert!(keys.len() >= 18, "{keys:?} from {message}");
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference.md"))
            .unwrap();
    let start = readme
        .find("Each table takes ")
        .expect("the reference's list of keys");
    let list = &readme[start..start + readme[start..].find("\n\n").unwrap()];
    for key in keys {
        assert!(
            list.contains(&format!("`{key}`")),
            "docs/reference.md does not list `{key}`"
        );
    }
}

#[test]
fn the_tasks_table_sets_what_the_flags_do() {
    let shown = config_path(
        "tasks",
        &format!(
            "{BACKEND}\n[tasks]\nmax_per_owner = 10\nmax_running = 20\nmax_result_bytes = \
             \"16MiB\"\n"
        ),
    );
    let config = parse_with(&shown, &[]).unwrap();
    assert_eq!(
        config.task_limits,
        tonic_mcp_tasks::TaskLimits {
            max_per_owner: 10,
            max_running: 20,
            max_result_bytes: 16 << 20,
        }
    );
    // Keys left out keep the defaults; a flag may set another key.
    let shown = config_path(
        "tasks-some",
        &format!("{BACKEND}\n[tasks]\nmax_running = 5\n"),
    );
    let config = parse_with(&shown, &["--max-tasks-per-owner", "7"]).unwrap();
    assert_eq!(
        config.task_limits,
        tonic_mcp_tasks::TaskLimits {
            max_per_owner: 7,
            max_running: 5,
            ..tonic_mcp_tasks::TaskLimits::default()
        }
    );
    // The same setting in both places, a zero, or a typo: errors.
    let message = parse_error(&shown, &["--max-running-tasks", "6"]);
    assert!(
        message.contains("--max-running-tasks conflicts with `max_running` in the [tasks] table"),
        "{message}"
    );
    let message = error(
        "tasks-zero",
        &format!("{BACKEND}\n[tasks]\nmax_running = 0\n"),
    );
    assert!(message.contains("max_running"), "{message}");
    let message = error(
        "tasks-typo",
        &format!("{BACKEND}\n[tasks]\nmax_owner = 1\n"),
    );
    assert!(message.contains("unknown field `max_owner`"), "{message}");
    // The reference documents the table's keys.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference.md"))
            .unwrap();
    let start = readme
        .find("A `[tasks]` table takes ")
        .expect("the reference's [tasks] keys");
    let list = &readme[start..start + readme[start..].find("\n\n").unwrap()];
    for key in [
        "max_per_owner",
        "max_running",
        "max_result_bytes",
        "mode",
        "inline_wait",
    ] {
        assert!(
            list.contains(&format!("`{key}`")),
            "docs/reference.md lacks `{key}`"
        );
    }
}

#[test]
fn the_tasks_table_sets_the_task_mode() {
    let mode = |name: &str, table: &str, args: &[&str]| {
        let shown = config_path(name, &format!("{BACKEND}\n[tasks]\n{table}"));
        parse_with(&shown, args).map(|config| config.task_mode)
    };
    assert_eq!(
        mode("mode-never", "mode = \"never\"\n", &[]).unwrap(),
        tonic_mcp::TaskMode::Never
    );
    assert_eq!(
        mode("mode-always", "mode = \"always\"\n", &[]).unwrap(),
        tonic_mcp::TaskMode::Always
    );
    assert_eq!(
        mode("mode-wait", "inline_wait = \"10s\"\n", &[]).unwrap(),
        tonic_mcp::TaskMode::auto_after(Duration::from_secs(10))
    );
    // A flag may set the other key; the same one in both places is an error.
    assert_eq!(
        mode(
            "mode-auto",
            "mode = \"auto\"\n",
            &["--task-inline-wait", "3s"]
        )
        .unwrap(),
        tonic_mcp::TaskMode::auto_after(Duration::from_secs(3))
    );
    let shown = config_path(
        "mode-twice",
        &format!("{BACKEND}\n[tasks]\nmode = \"never\"\n"),
    );
    let message = parse_error(&shown, &["--task-mode", "always"]);
    assert!(
        message.contains("--task-mode conflicts with `mode` in the [tasks] table"),
        "{message}"
    );
    // A wait with a mode that does not wait, an unknown mode, a bad duration: errors.
    let shown = config_path(
        "mode-wait-never",
        &format!("{BACKEND}\n[tasks]\nmode = \"never\"\ninline_wait = \"1s\"\n"),
    );
    let message = parse_error(&shown, &[]);
    assert!(
        message.contains("applies to --task-mode auto only"),
        "{message}"
    );
    let message = error(
        "mode-unknown",
        &format!("{BACKEND}\n[tasks]\nmode = \"sometimes\"\n"),
    );
    assert!(message.contains("sometimes"), "{message}");
    let message = error(
        "mode-bad-wait",
        &format!("{BACKEND}\n[tasks]\ninline_wait = \"soon\"\n"),
    );
    assert!(message.contains("not a duration"), "{message}");
}

#[test]
fn the_replica_key_sets_what_the_flag_does() {
    let shown = config_path("replica", &format!("replica = \"r2\"\n{BACKEND}"));
    let config = parse_with(&shown, &["--http", "127.0.0.1:0"]).unwrap();
    assert_eq!(config.replica.as_deref(), Some("r2"));
    // The key and the flag: an error; without --http: an error.
    let message = parse_error(&shown, &["--http", "127.0.0.1:0", "--replica", "r3"]);
    assert!(
        message.contains("--replica conflicts with `replica`"),
        "{message}"
    );
    let message = parse_error(&shown, &[]);
    assert!(message.contains("`replica` needs --http"), "{message}");
    // The flag alone, with a file without the key.
    let plain = config_path("replica-none", BACKEND);
    let config = parse_with(&plain, &["--http", "127.0.0.1:0", "--replica", "r3"]).unwrap();
    assert_eq!(config.replica.as_deref(), Some("r3"));
    // A name a load balancer could not route on: an error naming the line.
    let message = error("replica-bad", &format!("replica = \"r.1\"\n{BACKEND}"));
    assert!(message.contains("line 1"), "{message}");
    assert!(message.contains("is not a replica name"), "{message}");
}

#[test]
fn the_task_store_table_sets_what_the_flags_do() {
    let shown = config_path(
        "task-store",
        &format!(
            "{BACKEND}\n[task_store]\nurl = \"redis://redis:6379/2\"\npassword_file = \
             \"secrets/redis\"\nkey_prefix = \"shop:\"\nkey_file = \"secrets/task.key\"\n"
        ),
    );
    let dir = Path::new(&shown).parent().unwrap().to_path_buf();
    let config = parse_with(&shown, &["--http", "127.0.0.1:0"]).unwrap();
    assert_eq!(
        config.task_store,
        Some(crate::TaskStoreSettings {
            url: "redis://redis:6379/2".to_owned(),
            password_env: None,
            // Relative to the file, as every path of it.
            password_file: Some(dir.join("secrets/redis")),
            key_prefix: Some("shop:".to_owned()),
        })
    );
    assert_eq!(config.task_key_file, Some(dir.join("secrets/task.key")));
    // A key and its flag: an error; without --http: an error naming the table's line.
    for (flag, value, key) in [
        ("--task-store", "redis://other:6379", "url"),
        ("--task-store-password-file", "p.txt", "password_file"),
        ("--task-store-prefix", "p:", "key_prefix"),
        ("--task-key-file", "k", "key_file"),
    ] {
        let message = parse_error(&shown, &["--http", "127.0.0.1:0", flag, value]);
        assert!(
            message.contains(&format!(
                "{flag} conflicts with `{key}` in the [task_store] table"
            )),
            "{message}"
        );
    }
    let message = parse_error(&shown, &[]);
    assert!(
        message.contains(":5: [task_store] needs --http"),
        "{message}"
    );
    // The key file alone: no store.
    let key_only = config_path(
        "task-key-only",
        &format!("{BACKEND}\n[task_store]\nkey_file = \"task.key\"\n"),
    );
    let config = parse_with(&key_only, &["--http", "127.0.0.1:0"]).unwrap();
    assert_eq!(config.task_store, None);
    assert!(config.task_key_file.is_some());
    // A password from a flag, the URL from the file.
    let url_only = config_path(
        "task-store-url",
        &format!("{BACKEND}\n[task_store]\nurl = \"redis://redis:6379\"\n"),
    );
    let config = parse_with(
        &url_only,
        &["--http", "127.0.0.1:0", "--task-store-password-env", "P"],
    )
    .unwrap();
    assert_eq!(
        config.task_store.unwrap().password_env.as_deref(),
        Some("P")
    );
    // The password named twice, the flag and the key.
    let message = parse_error(
        &config_path(
            "task-store-env",
            &format!(
                "{BACKEND}\n[task_store]\nurl = \"redis://redis:6379\"\npassword_env = \"P\"\n"
            ),
        ),
        &[
            "--http",
            "127.0.0.1:0",
            "--task-store-password-file",
            "p.txt",
        ],
    );
    assert!(message.contains("give one"), "{message}");
    // A setting of the store without a URL.
    let message = parse_error(
        &config_path(
            "task-store-no-url",
            &format!("{BACKEND}\n[task_store]\npassword_env = \"P\"\n"),
        ),
        &["--http", "127.0.0.1:0"],
    );
    assert!(
        message.contains("--task-store-password-env needs --task-store (`url` in [task_store])"),
        "{message}"
    );
    // The reference documents the table's keys and the flags.
    let reference =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference.md"))
            .unwrap();
    let start = reference
        .find("A `[task_store]`\ntable takes ")
        .expect("the reference's [task_store] keys");
    let list = &reference[start..start + reference[start..].find("The other MCP flags").unwrap()];
    for key in [
        "url",
        "password_env",
        "password_file",
        "key_prefix",
        "key_file",
    ] {
        assert!(
            list.contains(&format!("`{key}`")),
            "docs/reference.md lacks `{key}`"
        );
    }
    for flag in [
        "--task-store URL",
        "--task-store-password-env VAR",
        "--task-store-password-file PATH",
        "--task-store-prefix PREFIX",
        "--task-key-file PATH",
    ] {
        assert!(
            reference.contains(&format!("`{flag}`")),
            "docs/reference.md lacks `{flag}`"
        );
    }
}

#[test]
fn the_task_store_table_refuses_a_password_in_the_file() {
    // In the URL: an error naming the line, without the password.
    let message = error(
        "task-store-password-url",
        &format!(
            "{BACKEND}\n[task_store]\nkey_prefix = \"a:\"\nurl = \"redis://:s3cret@redis:6379\"\n"
        ),
    );
    assert!(message.contains(":7: [task_store] url:"), "{message}");
    assert!(message.contains("--task-store-password-file"), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
    // Both sources: an error naming the table's line.
    let message = error(
        "task-store-both",
        &format!(
            "{BACKEND}\n[task_store]\nurl = \"redis://redis:6379\"\npassword_env = \"P\"\n\
             password_file = \"p\"\n"
        ),
    );
    assert!(message.contains(":5: [task_store]"), "{message}");
    assert!(message.contains("keep one"), "{message}");
    // An unknown key.
    let message = error(
        "task-store-unknown",
        &format!("{BACKEND}\n[task_store]\npassword = \"s3cret\"\n"),
    );
    assert!(message.contains("password"), "{message}");
}
