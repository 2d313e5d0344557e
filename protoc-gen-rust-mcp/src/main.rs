//! The protoc plugin: reads a `CodeGeneratorRequest` on stdin, writes a `CodeGeneratorResponse`
//! on stdout. Generation errors travel inside the response; only I/O and decoding failures exit
//! non-zero.

// Library code reports errors instead of panicking; tests may unwrap.
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::io::{self, IsTerminal, Read, Write};
use std::process::ExitCode;

/// mimalloc rather than the system allocator: syn and prettyplease, which format every generated
/// item, allocate and free a small node per token. With glibc's allocator the plugin takes about
/// 1.5 times the CPU time on a 5,000-method request (docs/benchmark-history.md, "Plugin: one emission
/// mechanism").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("--version" | "-V") => {
            println!("protoc-gen-rust-mcp {}", protoc_gen_rust_mcp::VERSION);
            return ExitCode::SUCCESS;
        }
        Some("--help" | "-h") => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!(
                "protoc-gen-rust-mcp: unexpected argument `{other}`\n\n{}",
                usage()
            );
            return ExitCode::from(2);
        }
        None => {}
    }
    if io::stdin().is_terminal() {
        // Run by hand: there is no request coming, so explain instead of waiting for one.
        eprint!("{}", usage());
        return ExitCode::from(2);
    }
    let mut request = Vec::new();
    if let Err(e) = io::stdin().read_to_end(&mut request) {
        eprintln!("protoc-gen-rust-mcp: cannot read the request from stdin: {e}");
        return ExitCode::FAILURE;
    }
    let mut stdout = io::stdout().lock();
    match protoc_gen_rust_mcp::execute_to(request, &mut stdout) {
        Ok(notes) => {
            // Schemas the budget shrank (`shrank …`, one line per tool) and other choices the
            // plugin made for the user (`note: …`): never silently.
            let mut stderr = io::stderr().lock();
            for note in notes {
                let _ = writeln!(stderr, "protoc-gen-rust-mcp: {note}");
            }
        }
        Err(protoc_gen_rust_mcp::RunError::Decode(e)) => {
            eprintln!(
                "protoc-gen-rust-mcp: stdin is not a CodeGeneratorRequest ({e}); this program is \
                 a protoc plugin, run it through protoc or buf"
            );
            return ExitCode::FAILURE;
        }
        Err(protoc_gen_rust_mcp::RunError::Write(e)) => {
            eprintln!("protoc-gen-rust-mcp: cannot write the response to stdout: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn usage() -> String {
    format!(
        "protoc-gen-rust-mcp {version}: a protoc plugin that exposes gRPC services as MCP tools.

Usage:
  protoc --plugin=protoc-gen-rust-mcp --rust-mcp_out=<dir> [--rust-mcp_opt=<options>] <files>
  buf generate        (with `local: protoc-gen-rust-mcp` in buf.gen.yaml)

It writes <package>.pb.mcp.rs for every proto package with services, to sit beside the prost
and tonic output of the same package.

Options (comma-separated, for example --rust-mcp_opt=json_names,tools_json):
{options}",
        version = protoc_gen_rust_mcp::VERSION,
        options = protoc_gen_rust_mcp::options::options_help(),
    )
}
