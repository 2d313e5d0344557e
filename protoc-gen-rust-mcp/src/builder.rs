//! The `build.rs` builder: one set of options, two ways to end, as tonic-prost-build has.
//!
//! - `Builder::compile_protos` (feature `build`) runs protoc, prost, tonic and this generator
//!   in one call.
//! - [`Builder::compile_descriptor_set_path`] (or [`Builder::compile_descriptor_set`] with the
//!   bytes) adds the MCP modules to a prost or tonic build you already have, from the
//!   descriptor set it wrote with `file_descriptor_set_path` (the pattern of `pbjson-build`).
//!
//! ```no_run
//! // build.rs, after your tonic_prost_build configuration with
//! // `.file_descriptor_set_path(out_dir.join("descriptors.bin"))` has run:
//! fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
//!     let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
//!     protoc_gen_rust_mcp::Builder::new()
//!         .json_names(true)
//!         .tool_names(protoc_gen_rust_mcp::ToolNames::Method)
//!         .compile_descriptor_set_path(out_dir.join("descriptors.bin"))
//! }
//! ```
//!
//! Options are set with typed setters, or as the plugin's parameter string with
//! [`Builder::plugin_options`]. Either way the MCP modules are byte for byte what the protoc
//! plugin writes for the same files and options. Each is written to `<package>.pb.mcp.rs` in the
//! output directory and included at the end of the file prost-build writes for its package, so
//! `tonic::include_proto!` brings in both.

use std::path::{Path, PathBuf};

use prost::Message as _;

use crate::build_error::BuildError;
use crate::model::Inputs;
use crate::options::{Adapters, LongRunning, OptionItem, PluginOptions, ToolNames, Unions};
use crate::write_modules::{out_dir_or_env, write_modules};

/// The directory that holds `rust_mcp/options.proto`, the options this plugin reads, as this
/// crate ships it: add it to protoc's include path (`-I`) or to a build script's includes, so
/// that `import "rust_mcp/options.proto";` resolves without a copy of the file. [`Builder`]
/// adds it by itself.
///
/// ```ignore
/// // build.rs, with your own tonic-prost-build configuration:
/// tonic_prost_build::configure().compile_protos(
///     &["proto/shop/v1/shop.proto"],
///     &["proto", protoc_gen_rust_mcp::PROTO_INCLUDE],
/// )?;
/// ```
pub const PROTO_INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/proto");

/// Generates MCP tool modules in a build script: from protos it compiles with prost and tonic
/// too (`compile_protos`, feature `build`), or from the descriptor set of your own prost or tonic build
/// ([`Self::compile_descriptor_set_path`]).
///
/// From a descriptor set, every service of the set gets its module, as prost-build and tonic
/// generate every file of the set they compile (imports included); narrow the tools with
/// [`Self::include`] and [`Self::exclude`]. Give the same [`Self::extern_path`] mappings as
/// your prost configuration, so that type paths resolve the way prost resolved them.
#[derive(Debug, Clone)]
pub struct Builder {
    options: PluginOptions,
    out_dir: Option<PathBuf>,
    build_client: bool,
    build_server: bool,
    include_in_prost: bool,
    descriptor_set: Option<Vec<u8>>,
}

/// The builder's former name, when it only generated from a descriptor set: the same builder.
pub type DescriptorSetBuilder = Builder;

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            options: PluginOptions::default(),
            out_dir: None,
            build_client: true,
            build_server: true,
            include_in_prost: true,
            descriptor_set: None,
        }
    }
}

impl Builder {
    /// A builder with the plugin's default options.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Applies plugin options written as for `--rust-mcp_opt` (`"json_names,tool_names=method"`),
    /// over those set before (`extern_path` and `include`/`exclude` add to earlier ones).
    /// `flat_output_dir` and `include_in_prost` have no effect here: the output is flat, like
    /// prost-build's, and inclusion is set with [`Self::include_in_prost`].
    pub fn plugin_options(mut self, parameter: &str) -> Result<Builder, BuildError> {
        for item in OptionItem::split(parameter) {
            self.options.apply(&item)?;
        }
        Ok(self)
    }

    /// The tool-name scheme (`tool_names`; default [`ToolNames::ServiceMethod`]).
    pub fn tool_names(mut self, scheme: ToolNames) -> Builder {
        self.options.tools.tool_names = scheme;
        self
    }

    /// Prefixes every tool name with `prefix` and `_` (`prefix`; a service's
    /// `(rust_mcp.service).prefix` wins). Checked when the builder runs.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Builder {
        self.options.tools.prefix = Some(prefix.into());
        self
    }

    /// Property names in lowerCamel JSON form instead of proto field names (`json_names`).
    pub fn json_names(mut self, enable: bool) -> Builder {
        self.options.tools.json_names = enable;
        self
    }

    /// The combinator for oneof branches (`unions`; default [`Unions::OneOf`]).
    pub fn unions(mut self, unions: Unions) -> Builder {
        self.options.tools.unions = unions;
        self
    }

    /// Schemas carry `"$schema"` naming draft 2020-12 (`schema_keyword`).
    pub fn schema_keyword(mut self, enable: bool) -> Builder {
        self.options.tools.schema_keyword = enable;
        self
    }

    /// Descriptions from proto comments (`descriptions`; default true).
    pub fn descriptions(mut self, enable: bool) -> Builder {
        self.options.tools.descriptions = enable;
        self
    }

    /// Tool results include default-valued fields (`emit_defaults`).
    pub fn emit_defaults(mut self, enable: bool) -> Builder {
        self.options.tools.emit_defaults = enable;
        self
    }

    /// Exposes only RPCs whose full name (`demo.v1.ItemService.GetItem`) matches one of the
    /// globs given this way (`include`; `*` matches any run of characters).
    pub fn include(mut self, glob: impl Into<String>) -> Builder {
        self.options.tools.include.push(glob.into());
        self
    }

    /// Leaves out RPCs whose full name matches (`exclude`).
    pub fn exclude(mut self, glob: impl Into<String>) -> Builder {
        self.options.tools.exclude.push(glob.into());
        self
    }

    /// Only RPCs carrying a `(rust_mcp.tool)` option become tools (`opt_in`).
    pub fn opt_in(mut self, enable: bool) -> Builder {
        self.options.tools.opt_in = enable;
        self
    }

    /// Shrinks an input or output schema whose minified JSON is larger (`max_schema_bytes`;
    /// 0: no limit).
    pub fn max_schema_bytes(mut self, bytes: usize) -> Builder {
        self.options.tools.max_schema_bytes = bytes;
        self
    }

    /// How tools of RPCs returning a `google.longrunning.Operation` answer (`long_running`).
    pub fn long_running(mut self, long_running: LongRunning) -> Builder {
        self.options.tools.long_running = long_running;
        self
    }

    /// The path of the runtime crate in generated code (`runtime_crate`; default
    /// `::tonic_mcp`). Checked when the builder runs.
    pub fn runtime_crate(mut self, path: impl Into<String>) -> Builder {
        self.options.runtime_crate = path.into();
        self
    }

    /// Which constructors the modules offer (`adapters`; default [`Adapters::All`]).
    pub fn adapters(mut self, adapters: Adapters) -> Builder {
        self.options.adapters = adapters;
        self
    }

    /// Also writes `<package>.mcp.json` with every tool as `tools/list` shows it (`tools_json`).
    pub fn tools_json(mut self, enable: bool) -> Builder {
        self.options.tools_json = enable;
        self
    }

    /// Maps a proto path to an existing Rust path, for prost, tonic and the MCP module alike
    /// (`extern_path`). From a descriptor set, give the mappings of your prost configuration.
    pub fn extern_path(mut self, proto_path: &str, rust_path: &str) -> Builder {
        self.options
            .extern_paths
            .push((proto_path.to_owned(), rust_path.to_owned()));
        self
    }

    /// Where to write the code, and where prost's files are (default: `OUT_DIR`, prost-build's
    /// default too).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Builder {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to include each MCP module at the end of prost's file for its package (default
    /// true). Without it, include `<package>.pb.mcp.rs` yourself inside the package module.
    pub fn include_in_prost(mut self, enable: bool) -> Builder {
        self.include_in_prost = enable;
        self
    }

    /// Whether tonic generates clients (default true; the MCP module needs them). Only for
    /// `compile_protos`.
    pub fn build_client(mut self, enable: bool) -> Builder {
        self.build_client = enable;
        self
    }

    /// Whether tonic generates servers (default true; only for `compile_protos`).
    /// `from_service` is built on them, so without them the MCP modules have only
    /// `from_channel` (as with `adapters=client`), and `adapters=service` is an error.
    pub fn build_server(mut self, enable: bool) -> Builder {
        self.build_server = enable;
        self
    }

    /// Generates and writes the MCP modules for the descriptor set at `path`, written by
    /// prost-build's or tonic-prost-build's `file_descriptor_set_path`.
    pub fn compile_descriptor_set_path(self, path: impl AsRef<Path>) -> Result<(), BuildError> {
        let bytes = read_descriptor_set(path.as_ref())?;
        self.compile_descriptor_set(bytes)
    }

    /// Generates and writes the MCP modules for an encoded `FileDescriptorSet` (with
    /// `--include_imports`; with source info, proto comments become descriptions).
    pub fn compile_descriptor_set(self, bytes: impl Into<Vec<u8>>) -> Result<(), BuildError> {
        let bytes = bytes.into();
        let out_dir = out_dir_or_env(self.out_dir.clone())?;
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
        let options = self.generation_options(self.options.adapters)?;
        let files = crate::plugin::generate(&inputs, &options)?;
        write_modules(&out_dir, &files, self.include_in_prost)
    }

    /// Reads the descriptor set at `path` for [`Self::build`]; as
    /// [`Self::compile_descriptor_set_path`], in two steps (the former `DescriptorSetBuilder`'s).
    pub fn descriptor_set_path(self, path: impl AsRef<Path>) -> Result<Builder, BuildError> {
        let bytes = read_descriptor_set(path.as_ref())?;
        Ok(self.register_descriptors(bytes))
    }

    /// Uses an encoded `FileDescriptorSet` for [`Self::build`] (the former
    /// `DescriptorSetBuilder`'s).
    pub fn register_descriptors(mut self, bytes: impl Into<Vec<u8>>) -> Builder {
        self.descriptor_set = Some(bytes.into());
        self
    }

    /// Generates and writes the MCP modules for the descriptor set given to
    /// [`Self::descriptor_set_path`] or [`Self::register_descriptors`]: as
    /// [`Self::compile_descriptor_set`] (the former `DescriptorSetBuilder`'s).
    pub fn build(mut self) -> Result<(), BuildError> {
        let bytes = self.descriptor_set.take().ok_or_else(|| {
            BuildError::new(
                "no descriptor set: call `descriptor_set_path` or `register_descriptors` first",
            )
        })?;
        self.compile_descriptor_set(bytes)
    }

    /// The options to generate with: flat output, inclusion left to [`write_modules`], these
    /// adapters, and the values typed setters took checked as the parameter parser checks them.
    pub(crate) fn generation_options(
        &self,
        adapters: Adapters,
    ) -> Result<PluginOptions, BuildError> {
        let mut options = PluginOptions {
            flat_output_dir: true,
            include_in_prost: false,
            adapters,
            ..self.options.clone()
        };
        let mut checked = Vec::new();
        if let Some(prefix) = &self.options.tools.prefix {
            checked.push(format!("prefix={prefix}"));
        }
        checked.push(format!("runtime_crate={}", self.options.runtime_crate));
        for item in checked.iter().flat_map(|text| OptionItem::split(text)) {
            options.apply(&item)?;
        }
        Ok(options)
    }

    /// The output directory given, or `OUT_DIR`.
    #[cfg(feature = "build")]
    pub(crate) fn out_dir_or_env(&self) -> Result<PathBuf, BuildError> {
        out_dir_or_env(self.out_dir.clone())
    }

    /// Whether tonic generates clients and servers, and whether modules are included.
    #[cfg(feature = "build")]
    pub(crate) fn tonic_settings(&self) -> (bool, bool, bool) {
        (self.build_client, self.build_server, self.include_in_prost)
    }

    /// The `extern_path` mappings.
    #[cfg(feature = "build")]
    pub(crate) fn extern_paths(&self) -> &[(String, String)] {
        &self.options.extern_paths
    }

    /// The constructors asked for.
    #[cfg(feature = "build")]
    pub(crate) fn adapters_asked(&self) -> Adapters {
        self.options.adapters
    }
}

fn read_descriptor_set(path: &Path) -> Result<Vec<u8>, BuildError> {
    std::fs::read(path).map_err(|e| {
        BuildError::new(format!(
            "cannot read the descriptor set {}: {e} (set `file_descriptor_set_path` on your \
             prost or tonic build and run it first)",
            path.display()
        ))
    })
}
