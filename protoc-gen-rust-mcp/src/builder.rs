//! The `build.rs` builder: prost, tonic and MCP code in one call (feature `build`).
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
//!     protoc_gen_rust_mcp::Builder::new()
//!         .plugin_options("json_names")?
//!         .compile_protos(
//!             &["examples/demo/proto/demo/v1/tasks.proto"],
//!             &["examples/demo/proto"],
//!         )
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs: prost types, tonic client and server, and `task_service_mcp`, all in one module.
//! pub mod demo { pub mod v1 { tonic::include_proto!("demo.v1"); } }
//! ```
//!
//! protoc (the vendored one unless `PROTOC` is set) runs once, with source info so that comments
//! become descriptions. The same descriptor set feeds tonic-prost-build and this generator, so the
//! MCP module is byte for byte what the protoc plugin writes for the same files and options, and
//! it is included at the end of the file prost-build writes for the package (`demo.v1.rs`;
//! named after the Rust module path, so `edge.type.Foo_Bar` is `edge.r#type.foo_bar.rs`), once,
//! however often the build script runs.
//!
//! Errors are [`BuildError`]s, whose `Debug` is the message as written, so protoc's own message
//! is what a failing build script prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message as _;

use crate::compose::{self, BuildError};
use crate::model::Inputs;
use crate::options::{Adapters, PluginOptions};

/// Compiles protos into prost types, tonic clients and servers, and MCP tool modules.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    options: PluginOptions,
    out_dir: Option<PathBuf>,
    build_client: Option<bool>,
    build_server: Option<bool>,
}

impl Builder {
    /// A builder with the plugin's default options.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Applies plugin options written as for `--rust-mcp_opt` (`"json_names,tool_names=method"`).
    pub fn plugin_options(mut self, parameter: &str) -> Result<Builder, BuildError> {
        self.options = compose::merge_options(&mut self.options, parameter)?;
        Ok(self)
    }

    /// Maps a proto path to an existing Rust path, for prost, tonic and the MCP module alike.
    pub fn extern_path(mut self, proto_path: &str, rust_path: &str) -> Builder {
        self.options
            .extern_paths
            .push((proto_path.to_owned(), rust_path.to_owned()));
        self
    }

    /// Where to write the code (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Builder {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether tonic generates clients (default true; the MCP module needs them).
    pub fn build_client(mut self, enable: bool) -> Builder {
        self.build_client = Some(enable);
        self
    }

    /// Whether tonic generates servers (default true). `from_service` is built on them, so
    /// without them the MCP modules have only `from_channel` (as with `adapters=client`), and
    /// `adapters=service` is an error.
    pub fn build_server(mut self, enable: bool) -> Builder {
        self.build_server = Some(enable);
        self
    }

    /// Compiles `protos`, found under `includes`.
    pub fn compile_protos(
        self,
        protos: &[impl AsRef<Path>],
        includes: &[impl AsRef<Path>],
    ) -> Result<(), BuildError> {
        let out_dir = compose::out_dir_or_env(self.out_dir.clone())?;
        let protos: Vec<PathBuf> = protos.iter().map(|p| p.as_ref().to_path_buf()).collect();
        let includes: Vec<PathBuf> = includes.iter().map(|p| p.as_ref().to_path_buf()).collect();
        for path in protos.iter().chain(&includes) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        let set_path = out_dir.join("mcp_file_descriptor_set.bin");
        run_protoc(&protos, &includes, &set_path)?;
        let bytes = std::fs::read(&set_path)?;

        let fds = prost_types::FileDescriptorSet::decode(bytes.as_slice())
            .map_err(|e| BuildError::new(format!("protoc wrote an invalid descriptor set: {e}")))?;
        let mut tonic = tonic_prost_build::configure()
            .out_dir(&out_dir)
            .build_client(self.build_client.unwrap_or(true))
            .build_server(self.build_server.unwrap_or(true));
        for (proto, rust) in &self.options.extern_paths {
            tonic = tonic.extern_path(proto, rust);
        }
        tonic.compile_fds(fds)?;

        let files_to_generate = relative_names(&protos, &includes)?;
        let inputs = Inputs::from_descriptor_set(&bytes, files_to_generate)?;
        let adapters = adapters_for(self.options.adapters, self.build_server.unwrap_or(true))?;
        let options = PluginOptions {
            flat_output_dir: true,
            include_in_prost: false,
            adapters,
            ..self.options
        };
        let files = crate::generate(&inputs, &options)?;
        compose::write_modules(&out_dir, &files, true)
    }
}

/// The constructors to generate: `from_service` calls tonic's server, so without servers only
/// `from_channel` is left.
fn adapters_for(adapters: Adapters, servers: bool) -> Result<Adapters, BuildError> {
    match (adapters, servers) {
        (_, true) => Ok(adapters),
        (Adapters::All | Adapters::Client, false) => Ok(Adapters::Client),
        (Adapters::Service, false) => Err(BuildError::new(
            "adapters=service generates only from_service, which needs tonic's servers; \
             remove build_server(false) or use adapters=client",
        )),
    }
}

fn run_protoc(protos: &[PathBuf], includes: &[PathBuf], out: &Path) -> Result<(), BuildError> {
    let protoc = match std::env::var_os("PROTOC") {
        Some(path) => PathBuf::from(path),
        None => protoc_bin_vendored::protoc_bin_path()
            .map_err(|e| BuildError::new(format!("no vendored protoc: {e}")))?,
    };
    let mut command = Command::new(&protoc);
    command
        .arg("--include_imports")
        .arg("--include_source_info")
        .arg(format!("--descriptor_set_out={}", out.display()));
    for include in includes {
        command.arg(format!("-I{}", include.display()));
    }
    // `import "rust_mcp/options.proto"` works without a copy of it.
    command.arg(format!("-I{}", crate::PROTO_INCLUDE));
    if let Ok(vendored) = protoc_bin_vendored::include_path() {
        command.arg(format!("-I{}", vendored.display()));
    }
    command.args(protos);
    let output = command
        .output()
        .map_err(|e| BuildError::new(format!("cannot run protoc at {}: {e}", protoc.display())))?;
    if !output.status.success() {
        // protoc's message as protoc wrote it: `file:line:column: problem`, one per line.
        return Err(BuildError::new(format!(
            "protoc failed:\n{}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        )));
    }
    Ok(())
}

/// The names protoc gives `protos`: each path relative to the include directory that holds it.
fn relative_names(protos: &[PathBuf], includes: &[PathBuf]) -> Result<Vec<String>, BuildError> {
    protos
        .iter()
        .map(|proto| {
            includes
                .iter()
                .filter_map(|include| proto.strip_prefix(include).ok())
                .min_by_key(|rel| rel.components().count())
                .map(|rel| rel.to_string_lossy().replace('\\', "/"))
                .ok_or_else(|| {
                    BuildError::new(format!(
                        "{} is not under any include directory",
                        proto.display()
                    ))
                })
        })
        .collect()
}
