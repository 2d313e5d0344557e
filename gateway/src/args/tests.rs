//! Unit tests of the command line.

use super::*;
use crate::values::parse_bytes;
use tonic_mcp_schema::options::ToolNames;
use tonic_mcp_schema::options::{OPTIONS, Scope};

fn run(args: &[&str]) -> Result<Config, Error> {
    Config::parse(args.iter().copied())
}

/// The error of [`run`], which must fail.
fn refused(args: &[&str]) -> String {
    match run(args) {
        Ok(_) => panic!("{args:?} must be refused"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn flags_and_opts_merge_into_plugin_options() {
    let config = run(&[
        "--target",
        "http://127.0.0.1:1",
        "--opt",
        "json_names,unions=any_of",
        "--opt",
        "descriptions=false",
        "--include",
        "shop.v1.*",
        "--exclude",
        "*.Delete*",
        "--prefix",
        "shop",
        "--tool-names",
        "method",
        "-H",
        "authorization: Bearer s3cret",
        "--timeout",
        "1.5s",
        "--max-messages",
        "7",
    ])
    .unwrap();
    let backend = &config.backends[0];
    let options = &backend.options;
    assert!(options.json_names);
    assert!(!options.descriptions);
    assert_eq!(options.unions.keyword(), "anyOf");
    assert_eq!(options.tool_names, ToolNames::Method);
    assert_eq!(options.prefix.as_deref(), Some("shop"));
    assert!(options.selects("shop.v1.Cart.Get"));
    assert!(!options.selects("shop.v1.Cart.DeleteAll"));
    assert!(!options.selects("other.v1.Cart.Get"));
    assert_eq!(backend.call_timeout, Some(Duration::from_millis(1500)));
    assert_eq!(backend.max_messages, Some(7));
    for (text, bytes) in [("65536", 65536), ("16MiB", 16 << 20), ("64KiB", 64 << 10)] {
        assert_eq!(parse_bytes(text), Ok(bytes));
    }
    for bad in ["", "4MB", "0", "lots"] {
        assert!(parse_bytes(bad).is_err(), "{bad}");
    }
    assert_eq!(backend.headers.names(), ["authorization"]);
    assert!(!format!("{config:?}").contains("s3cret"));
    assert_eq!(config.http, None);
}

#[test]
fn codegen_only_options_are_refused_by_name() {
    for opt in [
        "runtime_crate=::x",
        "extern_path=.a=::a",
        "rust=false",
        "json_names,flat_output_dir",
    ] {
        let error = refused(&["--target", "http://x:1", "--opt", opt]);
        assert!(
            error.contains("the gateway generates none"),
            "{opt}: {error}"
        );
    }
    let error = refused(&["--target", "http://x:1", "--opt", "json_name"]);
    assert!(error.contains("unknown option `json_name`"), "{error}");
}

#[test]
fn allowed_origins_are_checked() {
    let http = ["--target", "http://x:1", "--http", "127.0.0.1:0"];
    for origin in [
        "https://app.example.com:443",
        "http://localhost:*",
        "https://app.example.com",
        "http://[::1]:8080",
        "http://[::1]",
        "null",
    ] {
        let config = run(&[&http[..], &["--allowed-origin", origin]].concat())
            .unwrap_or_else(|e| panic!("{origin}: {e}"));
        assert_eq!(config.allowed_origins, [origin]);
    }
    for origin in [
        "app.example.com",
        "https://app.example.com/",
        "https://app.example.com:https",
        "https://:443",
        "https://[::1]x",
        "*",
    ] {
        let error = refused(&[&http[..], &["--allowed-origin", origin]].concat());
        assert!(
            error.contains(&format!("--allowed-origin `{origin}`")),
            "{origin}: {error}"
        );
    }
    let error = refused(&["--target", "http://x:1", "--allowed-origin", "null"]);
    assert!(error.contains("--http"), "{error}");
}

#[test]
fn connection_flags_set_the_limits() {
    let http = ["--target", "http://x:1", "--http", "127.0.0.1:0"];
    let defaults = run(&http).unwrap().connection_limits;
    assert_eq!(defaults, tonic_mcp_serve::ConnectionLimits::default());
    let config = run(&[
        &http[..],
        &[
            "--max-connections",
            "500",
            "--header-read-timeout",
            "5s",
            "--body-read-timeout",
            "1m",
            "--connection-idle-timeout",
            "90s",
        ],
    ]
    .concat())
    .unwrap();
    assert_eq!(
        config.connection_limits,
        tonic_mcp_serve::ConnectionLimits {
            max_connections: 500,
            header_read_timeout: Duration::from_secs(5),
            body_read_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(90),
        }
    );
    // One alone keeps the other defaults.
    let config = run(&[&http[..], &["--header-read-timeout", "500ms"]].concat()).unwrap();
    assert_eq!(
        config.connection_limits,
        tonic_mcp_serve::ConnectionLimits {
            header_read_timeout: Duration::from_millis(500),
            ..defaults
        }
    );
    for (args, expected) in [
        (&["--max-connections", "0"][..], "--max-connections"),
        (
            &["--body-read-timeout", "soon"][..],
            "--body-read-timeout soon",
        ),
        (
            &["--connection-idle-timeout", "0s"][..],
            "--connection-idle-timeout 0s",
        ),
    ] {
        let error = refused(&[&http[..], args].concat());
        assert!(error.contains(expected), "{args:?}: {error}");
    }
    // They bound the HTTP listener: without --http, an error.
    let error = refused(&["--target", "http://x:1", "--max-connections", "10"]);
    assert!(error.contains("--http"), "{error}");
}

#[test]
fn usage_errors() {
    for (args, expected) in [
        (&[][..], "--target"),
        (&["--target", "http://x:1", "--stateless"][..], "--http"),
        (
            &["--target", "http://x:1", "--timeout", "soon"][..],
            "--timeout soon",
        ),
        (
            &[
                "--target",
                "http://x:1",
                "--header-env",
                "authorization: GATEWAY_TEST_UNSET_VARIABLE",
            ][..],
            "GATEWAY_TEST_UNSET_VARIABLE is not set",
        ),
    ] {
        let error = refused(args);
        assert!(error.contains(expected), "{args:?}: {error}");
    }
}

#[test]
fn help_documents_every_flag_and_gateway_option() {
    let Parsed::Print(text) = parse(["--help"]).unwrap() else {
        panic!("--help prints");
    };
    for flag in command().get_arguments() {
        if let Some(long) = flag.get_long() {
            assert!(text.contains(&format!("--{long}")), "--help lacks --{long}");
        }
    }
    for option in OPTIONS {
        if option.scope == Scope::Code {
            assert!(
                !text.contains(&format!("  {}=", option.key)),
                "{}",
                option.key
            );
        } else {
            assert!(
                text.contains(&format!("  {}=", option.key)),
                "--help lacks {}",
                option.key
            );
        }
    }
    let Parsed::Print(version) = parse(["--version"]).unwrap() else {
        panic!("--version prints");
    };
    assert!(version.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn every_plugin_option_is_taken_or_refused_by_its_scope() {
    for option in OPTIONS {
        let error = run(&["--target", "http://x:1", "--opt", option.key])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        let refused = error.contains("the gateway generates none");
        assert_eq!(
            refused,
            option.scope == Scope::Code,
            "plugin option `{}`: {error}",
            option.key
        );
        assert!(!error.contains("unknown option"), "{}: {error}", option.key);
    }
}

#[test]
fn durations() {
    assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
    assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
    assert_eq!(parse_duration("3"), Some(Duration::from_secs(3)));
    for bad in ["", "0s", "-1s", "1h", "NaN"] {
        assert_eq!(parse_duration(bad), None, "{bad}");
    }
}

#[test]
fn task_bounds_are_set_by_flags() {
    let config = run(&["--target", "http://x:1"]).unwrap();
    assert_eq!(config.task_limits, tonic_mcp_tasks::TaskLimits::default());
    let config = run(&[
        "--target",
        "http://x:1",
        "--max-tasks-per-owner",
        "3",
        "--max-running-tasks",
        "4",
        "--max-task-result-bytes",
        "1MiB",
    ])
    .unwrap();
    assert_eq!(
        config.task_limits,
        tonic_mcp_tasks::TaskLimits {
            max_per_owner: 3,
            max_running: 4,
            max_result_bytes: 1 << 20,
        }
    );
    for (flag, value) in [
        ("--max-tasks-per-owner", "0"),
        ("--max-running-tasks", "many"),
        ("--max-task-result-bytes", "0"),
    ] {
        let error = refused(&["--target", "http://x:1", flag, value]);
        assert!(error.contains(flag), "{flag} {value}: {error}");
    }
}

#[test]
fn the_task_mode_is_set_by_flags() {
    let mode = |args: &[&str]| {
        let mut all = vec!["--target", "http://x:1"];
        all.extend_from_slice(args);
        run(&all).map(|config| config.task_mode)
    };
    assert_eq!(mode(&[]).unwrap(), tonic_mcp::TaskMode::auto());
    assert_eq!(
        mode(&["--task-mode", "always"]).unwrap(),
        tonic_mcp::TaskMode::Always
    );
    assert_eq!(
        mode(&["--task-mode", "never"]).unwrap(),
        tonic_mcp::TaskMode::Never
    );
    assert_eq!(
        mode(&["--task-inline-wait", "5s"]).unwrap(),
        tonic_mcp::TaskMode::auto_after(Duration::from_secs(5))
    );
    assert_eq!(
        mode(&["--task-mode", "auto", "--task-inline-wait", "500ms"]).unwrap(),
        tonic_mcp::TaskMode::auto_after(Duration::from_millis(500))
    );
    for (args, expected) in [
        (&["--task-mode", "sometimes"][..], "--task-mode"),
        (
            &["--task-inline-wait", "soon"][..],
            "--task-inline-wait soon",
        ),
        (
            &["--task-mode", "never", "--task-inline-wait", "1s"][..],
            "applies to --task-mode auto only, not never",
        ),
    ] {
        let mut all = vec!["--target", "http://x:1"];
        all.extend_from_slice(args);
        let error = refused(&all);
        assert!(error.contains(expected), "{args:?}: {error}");
    }
}

#[test]
fn the_replica_flag_names_the_sessions() {
    let config = run(&[
        "--target",
        "http://x:1",
        "--http",
        "127.0.0.1:0",
        "--replica",
        "gw-1_a",
    ])
    .unwrap();
    assert_eq!(config.replica.as_deref(), Some("gw-1_a"));
    let config = run(&["--target", "http://x:1", "--http", "127.0.0.1:0"]).unwrap();
    assert_eq!(config.replica, None);
    // It names the sessions of the HTTP listener: without --http, an error.
    let error = refused(&["--target", "http://x:1", "--replica", "r1"]);
    assert!(error.contains("--http"), "{error}");
    // Taken as written or refused: a load balancer routes on it.
    let long = "r".repeat(64);
    for bad in ["", "r.1", "r 1", "ré", long.as_str()] {
        let error = refused(&[
            "--target",
            "http://x:1",
            "--http",
            "127.0.0.1:0",
            "--replica",
            bad,
        ]);
        assert!(error.contains("is not a replica name"), "{bad:?}: {error}");
    }
}

/// `--http` and a backend, then `args`.
fn over_http(args: &[&str]) -> Vec<String> {
    ["--target", "http://x:1", "--http", "127.0.0.1:0"]
        .iter()
        .chain(args)
        .map(|arg| (*arg).to_owned())
        .collect()
}

fn run_over_http(args: &[&str]) -> Result<Config, Error> {
    Config::parse(over_http(args))
}

fn refused_over_http(args: &[&str]) -> String {
    match run_over_http(args) {
        Ok(_) => panic!("{args:?} must be refused"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn the_task_store_flags_describe_the_store() {
    let config = run_over_http(&[
        "--task-store",
        "redis://redis.tasks:6379/0",
        "--task-store-password-env",
        "TASKS_PASSWORD",
        "--task-store-prefix",
        "shop:",
        "--task-key-file",
        "/run/secrets/task.key",
    ])
    .unwrap();
    assert_eq!(
        config.task_store,
        Some(crate::TaskStoreSettings {
            url: "redis://redis.tasks:6379/0".to_owned(),
            password_env: Some("TASKS_PASSWORD".to_owned()),
            password_file: None,
            key_prefix: Some("shop:".to_owned()),
        })
    );
    assert_eq!(
        config.task_key_file.as_deref(),
        Some(std::path::Path::new("/run/secrets/task.key"))
    );
    let config = run_over_http(&[
        "--task-store",
        "redis://redis:6379",
        "--task-store-password-file",
        "/run/secrets/redis",
    ])
    .unwrap();
    let store = config.task_store.unwrap();
    assert_eq!(
        store.password_file.as_deref(),
        Some(std::path::Path::new("/run/secrets/redis"))
    );
    assert_eq!((store.password_env, store.key_prefix), (None, None));
    assert_eq!(config.task_key_file, None);
    // Neither: no store, no key.
    let config = run_over_http(&[]).unwrap();
    assert_eq!((config.task_store, config.task_key_file), (None, None));
    // The key without a store.
    let config = run_over_http(&["--task-key-file", "task.key"]).unwrap();
    assert_eq!(config.task_store, None);
    assert!(config.task_key_file.is_some());
}

#[test]
fn the_task_store_flags_are_refused_where_they_do_not_fit() {
    // A password in the URL: refused, without repeating it.
    for url in [
        "redis://:s3cret@redis:6379",
        "redis://app:s3cret@redis:6379/1",
    ] {
        let error = refused_over_http(&["--task-store", url]);
        assert!(
            error.contains("--task-store-password-env")
                && error.contains("--task-store-password-file"),
            "{error}"
        );
        assert!(!error.contains("s3cret"), "{error}");
    }
    let error = refused_over_http(&["--task-store", "rediss://redis:6380"]);
    assert!(error.contains("expects a redis:// URL"), "{error}");
    // Two sources of the password.
    let error = refused_over_http(&[
        "--task-store",
        "redis://redis:6379",
        "--task-store-password-env",
        "P",
        "--task-store-password-file",
        "p.txt",
    ]);
    assert!(error.contains("give one"), "{error}");
    // A setting of the store without the store.
    for (flag, value) in [
        ("--task-store-password-env", "P"),
        ("--task-store-password-file", "p.txt"),
        ("--task-store-prefix", "shop:"),
    ] {
        let error = refused_over_http(&[flag, value]);
        assert!(
            error.contains(&format!("{flag} needs --task-store")),
            "{flag}: {error}"
        );
    }
    // Every one of them needs --http.
    for (flag, value) in [
        ("--task-store", "redis://redis:6379"),
        ("--task-store-password-env", "P"),
        ("--task-store-password-file", "p.txt"),
        ("--task-store-prefix", "shop:"),
        ("--task-key-file", "task.key"),
    ] {
        let error = refused(&["--target", "http://x:1", flag, value]);
        assert!(error.contains("--http"), "{flag}: {error}");
    }
}
