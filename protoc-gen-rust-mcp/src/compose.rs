//! MCP modules from a descriptor set your own prost or tonic build wrote: keep your
//! `tonic_prost_build` (or `prost_build`) configuration as it is, have it emit a descriptor set
//! with `file_descriptor_set_path`, and generate only the MCP modules from it.
//!
//! ```ignore
//! // build.rs (with tonic-prost-build and protoc-gen-rust-mcp as build-dependencies)
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
//!     let descriptors = out_dir.join("descriptors.bin");
//!     tonic_prost_build::configure()
//!         .file_descriptor_set_path(&descriptors)
//!         .bytes(".")
//!         .compile_protos(&["examples/demo/proto/demo/v1/tasks.proto"], &["examples/demo/proto"])?;
//!     protoc_gen_rust_mcp::DescriptorSetBuilder::new()
//!         .descriptor_set_path(&descriptors)?
//!         .plugin_options("json_names")?
//!         .build()?;
//!     Ok(())
//! }
//! ```
//!
//! The modules are byte for byte what the protoc plugin writes for the same files and options.
//! Each is written to `<package>.pb.mcp.rs` in the output directory and included at the end of
//! the file prost-build wrote for its package, so `tonic::include_proto!` brings in both.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use prost::Message as _;
use prost_types::compiler::code_generator_response::File;

use crate::model::Inputs;
use crate::names;
use crate::options::PluginOptions;

/// Why a `build.rs` step failed.
///
/// Its `Debug` output is its message as is, so a `main` returning this error (directly or in a
/// `Box<dyn Error>`) prints protoc's and the plugin's messages as they were written, with their
/// line breaks, rather than an escaped dump.
pub struct BuildError {
    message: String,
}

impl BuildError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> BuildError {
        BuildError {
            message: message.into(),
        }
    }

    /// The message, as `Display` and `Debug` print it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

impl From<io::Error> for BuildError {
    fn from(error: io::Error) -> BuildError {
        BuildError::new(error.to_string())
    }
}

impl From<crate::Error> for BuildError {
    fn from(error: crate::Error) -> BuildError {
        BuildError::new(error.to_string())
    }
}

impl From<BuildError> for io::Error {
    fn from(error: BuildError) -> io::Error {
        io::Error::other(error.message)
    }
}

/// Generates the MCP modules for a descriptor set written by your own prost or tonic build
/// (the pattern of `pbjson-build`).
///
/// Every service of the set gets its module, as prost-build and tonic generate every file of
/// the set they compile (imports included); narrow the tools with the plugin's
/// `include`/`exclude` options. Give the same
/// `extern_path` mappings as your prost configuration, so that type paths resolve the way
/// prost resolved them.
#[derive(Debug, Clone)]
pub struct DescriptorSetBuilder {
    options: PluginOptions,
    descriptor_set: Option<Vec<u8>>,
    out_dir: Option<PathBuf>,
    include_in_prost: bool,
}

impl Default for DescriptorSetBuilder {
    fn default() -> DescriptorSetBuilder {
        DescriptorSetBuilder {
            options: PluginOptions::default(),
            descriptor_set: None,
            out_dir: None,
            include_in_prost: true,
        }
    }
}

impl DescriptorSetBuilder {
    /// A builder with the plugin's default options.
    pub fn new() -> DescriptorSetBuilder {
        DescriptorSetBuilder::default()
    }

    /// Reads the descriptor set written by prost-build's or tonic-prost-build's
    /// `file_descriptor_set_path`.
    pub fn descriptor_set_path(
        self,
        path: impl AsRef<Path>,
    ) -> Result<DescriptorSetBuilder, BuildError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| {
            BuildError::new(format!(
                "cannot read the descriptor set {}: {e} (set `file_descriptor_set_path` on your \
                 prost or tonic build and run it first)",
                path.display()
            ))
        })?;
        Ok(self.register_descriptors(bytes))
    }

    /// Uses an encoded `FileDescriptorSet` (with `--include_imports`; with source info, proto
    /// comments become descriptions).
    pub fn register_descriptors(mut self, bytes: impl Into<Vec<u8>>) -> DescriptorSetBuilder {
        self.descriptor_set = Some(bytes.into());
        self
    }

    /// Applies plugin options written as for `--rust-mcp_opt` (`"json_names,tool_names=method"`).
    /// `flat_output_dir` and `include_in_prost` have no effect here: the output is flat, like
    /// prost-build's, and inclusion is set with [`Self::include_in_prost`].
    pub fn plugin_options(mut self, parameter: &str) -> Result<DescriptorSetBuilder, BuildError> {
        self.options = merge_options(&mut self.options, parameter)?;
        Ok(self)
    }

    /// Maps a proto path to an existing Rust path, exactly as the `extern_path` of your prost
    /// configuration (give the same mappings).
    pub fn extern_path(mut self, proto_path: &str, rust_path: &str) -> DescriptorSetBuilder {
        self.options
            .extern_paths
            .push((proto_path.to_owned(), rust_path.to_owned()));
        self
    }

    /// Where your prost build writes its files, and where the MCP modules go (default:
    /// `OUT_DIR`, prost-build's default too).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> DescriptorSetBuilder {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to include each MCP module at the end of prost's file for its package (default
    /// true). Without it, include `<package>.pb.mcp.rs` yourself inside the package module.
    pub fn include_in_prost(mut self, enable: bool) -> DescriptorSetBuilder {
        self.include_in_prost = enable;
        self
    }

    /// Generates and writes the MCP modules.
    pub fn build(self) -> Result<(), BuildError> {
        let bytes = self.descriptor_set.ok_or_else(|| {
            BuildError::new(
                "no descriptor set: call `descriptor_set_path` or `register_descriptors` first",
            )
        })?;
        let out_dir = out_dir_or_env(self.out_dir)?;
        let set = prost_types::FileDescriptorSet::decode(bytes.as_slice())
            .map_err(|e| BuildError::new(format!("the descriptor set does not decode: {e}")))?;
        // prost-build compiles every file of the set; only those with services have tools. The
        // others (imports such as `google/protobuf/*.proto`) are resolved, not generated.
        let files_to_generate = set
            .file
            .iter()
            .filter(|f| !f.service.is_empty())
            .map(|f| f.name().to_owned())
            .collect();
        let inputs = Inputs::from_descriptor_set(&bytes, files_to_generate)?;
        let options = PluginOptions {
            flat_output_dir: true,
            include_in_prost: false,
            ..self.options
        };
        let files = crate::generate(&inputs, &options)?;
        write_modules(&out_dir, &files, self.include_in_prost)
    }
}

/// `parameter` parsed over `options`: `extern_path` mappings given earlier are kept.
pub(crate) fn merge_options(
    options: &mut PluginOptions,
    parameter: &str,
) -> Result<PluginOptions, BuildError> {
    let mut parsed = PluginOptions::parse(parameter)?;
    let mut extern_paths = std::mem::take(&mut options.extern_paths);
    extern_paths.append(&mut parsed.extern_paths);
    Ok(PluginOptions {
        extern_paths,
        ..parsed
    })
}

/// The given output directory, or `OUT_DIR`.
pub(crate) fn out_dir_or_env(out_dir: Option<PathBuf>) -> Result<PathBuf, BuildError> {
    match out_dir {
        Some(dir) => Ok(dir),
        None => std::env::var_os("OUT_DIR")
            .map(PathBuf::from)
            .ok_or_else(|| {
                BuildError::new("OUT_DIR is not set: call this from build.rs or set out_dir")
            }),
    }
}

/// Writes generated files into `out_dir` (only when their content changed) and, with
/// `include_in_prost`, makes the file prost-build wrote for each package include its MCP module,
/// once: running the build again adds nothing.
pub(crate) fn write_modules(
    out_dir: &Path,
    files: &[File],
    include_in_prost: bool,
) -> Result<(), BuildError> {
    for file in files {
        write_if_changed(&out_dir.join(file.name()), file.content())?;
    }
    if !include_in_prost {
        return Ok(());
    }
    for file in files {
        let Some(stem) = file.name().strip_suffix(".pb.mcp.rs") else {
            continue;
        };
        let package = if stem == "_" { "" } else { stem };
        let prost_path = out_dir.join(names::prost_build_file_name(package));
        let text = std::fs::read_to_string(&prost_path).map_err(|e| {
            BuildError::new(format!(
                "cannot include {} from prost's file for package `{package}`, {}: {e} \
                 (the MCP modules must go to the directory prost writes to; see `out_dir`)",
                file.name(),
                prost_path.display()
            ))
        })?;
        let line = format!("include!(\"{}\");", file.name());
        if text.lines().any(|l| l.trim() == line) {
            continue;
        }
        let mut text = text;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&line);
        text.push('\n');
        std::fs::write(&prost_path, text)
            .map_err(|e| BuildError::new(format!("cannot write {}: {e}", prost_path.display())))?;
    }
    Ok(())
}

fn write_if_changed(path: &Path, content: &str) -> Result<(), BuildError> {
    if std::fs::read(path).is_ok_and(|old| old == content.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, content)
        .map_err(|e| BuildError::new(format!("cannot write {}: {e}", path.display())))
}
