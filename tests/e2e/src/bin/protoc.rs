//! The vendored protoc, with the well-known types on its include path, for the project's scripts:
//! `cargo run -q -p e2e --bin protoc -- <protoc arguments>`.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let (protoc, include) = match (
        protoc_bin_vendored::protoc_bin_path(),
        protoc_bin_vendored::include_path(),
    ) {
        (Ok(protoc), Ok(include)) => (protoc, include),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("no vendored protoc for this platform: {e}");
            return ExitCode::FAILURE;
        }
    };
    let status = Command::new(protoc)
        .args(std::env::args_os().skip(1))
        .arg(format!("-I{}", include.display()))
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("cannot run protoc: {e}");
            ExitCode::FAILURE
        }
    }
}
