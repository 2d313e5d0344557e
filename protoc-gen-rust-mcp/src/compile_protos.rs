//! [`Builder::compile_protos`] (feature `build`): protoc, prost, tonic and the MCP modules in
//! one call.
//!
//! protoc (the vendored one unless `PROTOC` is set) runs once, with source info so that comments
//! become descriptions. The same descriptor set feeds tonic-prost-build and this generator, so the
//! MCP module is byte for byte what the protoc plugin writes for the same files and options, and
//! it is included at the end of the file prost-build writes for the package (`demo.v1.rs`;
//! named after the Rust module path, so `edge.type.Foo_Bar` is `edge.r#type.foo_bar.rs`), once,
//! however often the build script runs.
//!
//! ```ignore
//! // src/lib.rs: prost types, tonic client and server, and `task_service_mcp`, all in one module.
//! pub mod demo { pub mod v1 { tonic::include_proto!("demo.v1"); } }
//! ```
//!
//! Errors are [`BuildError`]s, whose `Debug` is the message as written, so protoc's own message
//! is what a failing build script prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message as _;

use crate::build_error::BuildError;
use crate::builder::Builder;
use crate::model::Inputs;
use crate::options::Adapters;
use crate::write_modules::write_modules;

impl Builder {
    /// Compiles `protos`, found under `includes`, into prost types, tonic clients and servers,
    /// and MCP tool modules.
    ///
    /// ```no_run
    /// // build.rs
    /// fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
    ///     protoc_gen_rust_mcp::Builder::new()
    ///         .json_names(true)
    ///         .tool_names(protoc_gen_rust_mcp::ToolNames::Method)
    ///         .compile_protos(
    ///             &["examples/demo/proto/demo/v1/tasks.proto"],
    ///             &["examples/demo/proto"],
    ///         )
    /// }
    /// ```
    pub fn compile_protos(
        self,
        protos: &[impl AsRef<Path>],
        includes: &[impl AsRef<Path>],
    ) -> Result<(), BuildError> {
        let out_dir = self.out_dir_or_env()?;
        let (build_client, build_server, include_in_prost) = self.tonic_settings();
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
            .build_client(build_client)
            .build_server(build_server);
        for (proto, rust) in self.extern_paths() {
            tonic = tonic.extern_path(proto, rust);
        }
        tonic.compile_fds(fds)?;

        let files_to_generate = relative_names(&protos, &includes)?;
        let inputs = Inputs::from_descriptor_set(&bytes, files_to_generate)?;
        let adapters = adapters_for(self.adapters_asked(), build_server)?;
        let options = self.generation_options(adapters)?;
        let files = crate::plugin::generate(&inputs, &options)?;
        write_modules(&out_dir, &files, include_in_prost)
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
    command.arg(format!("-I{}", crate::builder::PROTO_INCLUDE));
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
