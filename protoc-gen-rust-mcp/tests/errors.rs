//! Bad input gets a clear error naming the proto element, never a panic (docs/design.md §3).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

fn error_for(file: &str, parameter: &str) -> String {
    common::generate_err(&[file.to_owned()], parameter)
}

#[test]
fn errors_name_the_element_and_what_is_valid() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "errors/collision.proto",
            "",
            &[
                "Foo_Bar_Baz",
                "/testdata.errors.collision.Foo_Bar/Baz",
                "/testdata.errors.collision.Foo/Bar_Baz",
            ],
        ),
        (
            "errors/editions.proto",
            "",
            &["errors/editions.proto", "editions", "proto3"],
        ),
        (
            "errors/hidden_required.proto",
            "",
            &["(rust_mcp.field).hidden", "required"],
        ),
        (
            "errors/conflicting_hints.proto",
            "",
            &["read_only", "destructive"],
        ),
        (
            "errors/unconfirmed_without_confirm.proto",
            "",
            &[
                "testdata.errors.unconfirmed_without_confirm.WipeService.Wipe",
                "(rust_mcp.tool).unconfirmed",
                "confirm",
            ],
        ),
        (
            "errors/wait_without_operation.proto",
            "",
            &[
                "testdata.errors.wait_without_operation.ReportService.Build",
                "(rust_mcp.tool).long_running",
                "google.longrunning.Operation",
            ],
        ),
        (
            "errors/wait_unknown_response.proto",
            "",
            &[
                "testdata.errors.wait_unknown_response.ReportService.BuildNow",
                "(rust_mcp.tool).long_running",
                "`NoSuchReport` is not a message",
            ],
        ),
        (
            "errors/bad_scope.proto",
            "",
            &[
                "testdata.errors.bad_scope.WipeService.Wipe",
                "(rust_mcp.tool).required_scopes",
                "\"two words\" is not an OAuth scope token",
            ],
        ),
        (
            "errors/zero_result_budget.proto",
            "",
            &[
                "testdata.errors.zero_result_budget.ReportService.Build",
                "(rust_mcp.tool).max_result_bytes",
                "0 would refuse every result",
            ],
        ),
        (
            "errors/bad_name.proto",
            "",
            &["(rust_mcp.tool).name", "1bad-name!"],
        ),
        (
            "errors/override_too_long.proto",
            "",
            &["(rust_mcp.tool).name", "at most 64"],
        ),
        (
            "scalars.proto",
            "json_name",
            &["unknown option `json_name`", "json_names", "tool_names"],
        ),
        ("scalars.proto", "unions=both", &["`one_of` and `any_of`"]),
    ];
    for (file, parameter, expected) in cases {
        let message = error_for(file, parameter);
        for part in *expected {
            assert!(
                message.contains(part),
                "{file} `{parameter}`: {message:?} lacks {part:?}"
            );
        }
    }
}

#[test]
fn override_collisions_name_both_rpcs() {
    let message = error_for("errors/override_collision.proto", "");
    assert!(message.contains("is produced by both"), "{message}");
    assert_eq!(message.matches("/testdata.errors").count(), 2, "{message}");
}

#[test]
fn garbage_on_stdin_exits_non_zero_with_a_message() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_protoc-gen-rust-mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plugin starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"\xff\xff\xff this is not a CodeGeneratorRequest")
        .expect("write");
    let output = child.wait_with_output().expect("plugin exits");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a CodeGeneratorRequest"), "{stderr}");
}

#[test]
fn version_and_help() {
    let run = |arg: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_protoc-gen-rust-mcp"))
            .arg(arg)
            .stdin(Stdio::null())
            .output()
            .expect("plugin runs");
        assert!(out.status.success(), "{arg}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run("--version").starts_with("protoc-gen-rust-mcp "));
    let help = run("--help");
    for doc in protoc_gen_rust_mcp::options::OPTIONS {
        assert!(help.contains(doc.key), "--help lacks {}", doc.key);
    }
}

/// No input makes the plugin panic: truncations and byte flips of a real request, and requests
/// whose files reference types that are missing.
#[test]
fn mangled_requests_never_panic() {
    let request = common::request(&common::testdata_files(), "tools_json");
    let mut mangled = Vec::new();
    for cut in (0..request.len()).step_by(request.len() / 97 + 1) {
        mangled.push(request[..cut].to_vec());
    }
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..300 {
        let mut bytes = request.clone();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % bytes.len();
            bytes[at] = (seed >> 32) as u8;
        }
        mangled.push(bytes);
    }
    let (mut decoded, mut failed) = (0, 0);
    for bytes in mangled {
        let outcome = std::panic::catch_unwind(|| protoc_gen_rust_mcp::execute(&bytes));
        match outcome {
            Ok(Ok(response)) => {
                decoded += 1;
                if response.error.is_some() {
                    failed += 1;
                }
            }
            Ok(Err(_)) => {}
            Err(_) => panic!("the plugin panicked on a mangled request"),
        }
    }
    assert!(
        decoded > 0 && failed > 0,
        "decoded {decoded}, failed {failed}"
    );
}

/// Started by hand on a terminal, the plugin explains itself instead of waiting for a request.
/// `script` (util-linux) gives it a pseudo-terminal as stdin.
#[test]
fn on_a_terminal_it_prints_usage_instead_of_hanging() {
    let plugin = env!("CARGO_BIN_EXE_protoc-gen-rust-mcp");
    let mut child = Command::new("script")
        .args(["-qec", plugin, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux runs");
    let started = std::time::Instant::now();
    loop {
        if let Some(_status) = child.try_wait().expect("wait") {
            break;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().ok();
            panic!("the plugin waited for input on a terminal");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("output");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("Usage:") && text.contains("--rust-mcp_out"),
        "{text}"
    );
}
