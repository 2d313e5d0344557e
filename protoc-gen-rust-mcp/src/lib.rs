//! `protoc-gen-rust-mcp`: a protoc plugin that exposes gRPC services as MCP tools.
//!
//! For every RPC it writes a JSON Schema 2020-12 for the input and the output, and a Rust module
//! (`<package>.pb.mcp.rs`) that registers each RPC as an MCP tool forwarding to a tonic client or
//! an in-process tonic service through the `tonic-mcp` runtime.
//!
//! The binary reads a `CodeGeneratorRequest` on stdin and writes a `CodeGeneratorResponse`; the
//! library offers the same through [`execute`], and a `build.rs` [`Builder`] that either runs
//! protoc, prost and tonic too (`compile_protos`, feature `build`) or adds the MCP modules to a
//! prost or tonic build you already have (`compile_descriptor_set_path`).
//!
//! The public API is what a user needs: [`Builder`] (also under its former name
//! [`DescriptorSetBuilder`]), the option types its setters take ([`ToolNames`], [`Unions`],
//! [`LongRunning`], [`Adapters`]) and [`BuildError`] for build scripts, [`PROTO_INCLUDE`] for
//! include paths, [`execute`] to embed the plugin, [`VERSION`]. Items marked hidden serve the
//! binary and the tests, not users.
//!
//! Generation runs in two phases: `model::build` resolves everything (Rust names from
//! prost-build, options, comments, schemas) and the emitters in `emit` only write files.

// Library code reports errors instead of panicking; tests may unwrap.
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod build_error;
mod builder;
#[cfg(feature = "build")]
mod compile_protos;
mod emit;
#[doc(hidden)]
pub mod model;
mod rust_names;
mod write_modules;

// Descriptor-to-tool logic shared with the runtime. `options` and `schema` are public for the
// binary's `--help` and the tests only.
use tonic_mcp_schema::error;
#[doc(hidden)]
pub mod options;
#[doc(hidden)]
pub use tonic_mcp_schema::json_schema;

use prost::Message as _;
use prost_types::compiler::{CodeGeneratorResponse, code_generator_response};

pub use crate::build_error::BuildError;
pub use crate::builder::{Builder, DescriptorSetBuilder};
/// A generation error, as [`execute`] reports it in `CodeGeneratorResponse.error`.
pub use crate::error::Error;
use crate::error::Result;
pub use crate::options::{Adapters, LongRunning, ToolNames, Unions};
#[doc(hidden)]
pub use crate::options::{Options, PluginOptions};

/// The plugin's version, as `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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

/// Decodes a serialized `CodeGeneratorRequest` and generates the response.
///
/// Only a request that cannot be decoded is an `Err`; every generation problem is reported in
/// `CodeGeneratorResponse.error`, which protoc and buf print against the input.
pub fn execute(request: &[u8]) -> std::result::Result<CodeGeneratorResponse, prost::DecodeError> {
    let request = model::RawRequest::decode(request)?;
    // The notes (`shrank …`, `note: …`) are the binary's stderr; a library caller has none.
    let mut notes = Vec::new();
    let outcome = prepare(request, &mut notes)
        .and_then(|(model, options, prost_files)| emit::files(&model, &options, &prost_files));
    Ok(response(outcome))
}

/// Why [`execute_to`] could not answer.
#[doc(hidden)]
#[derive(Debug)]
pub enum RunError {
    /// The input is not a `CodeGeneratorRequest`; nothing was written.
    Decode(prost::DecodeError),
    /// Writing the response failed.
    Write(std::io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Decode(e) => write!(f, "not a CodeGeneratorRequest: {e}"),
            RunError::Write(e) => write!(f, "cannot write the response: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// As [`execute`], for the binary: takes the request's bytes and writes the encoded
/// `CodeGeneratorResponse` to `out` as it is made, one file at a time.
///
/// Memory is what a big request costs, so nothing is held longer than needed: the request's
/// bytes go once decoded, each file's bytes once in the descriptor pool, the pool once the model
/// is built, and each package once its files are written. The bytes are those of encoding the
/// whole response at once: prost writes fields in tag order (error, supported_features, then
/// the files), and consecutive encodings of a message merge, repeated fields appending. A
/// generation error found after some files were written follows them as the response's
/// `error`; protoc and buf read `error` first and then write no file.
#[doc(hidden)]
pub fn execute_to(
    request: Vec<u8>,
    out: &mut impl std::io::Write,
) -> std::result::Result<Vec<String>, RunError> {
    let raw = model::RawRequest::decode(request.as_slice()).map_err(RunError::Decode)?;
    drop(request);
    let mut notes = Vec::new();
    let (model, options, prost_files) = match prepare(raw, &mut notes) {
        Ok(prepared) => prepared,
        Err(error) => {
            out.write_all(&response(Err(error)).encode_to_vec())
                .map_err(RunError::Write)?;
            return Ok(notes);
        }
    };
    out.write_all(&response(Ok(Vec::new())).encode_to_vec())
        .map_err(RunError::Write)?;
    for package in model.packages {
        let files = match emit::package_files(&package, &options, &prost_files) {
            Ok(files) => files,
            Err(error) => {
                let error = CodeGeneratorResponse {
                    error: Some(error.to_string()),
                    ..CodeGeneratorResponse::default()
                };
                out.write_all(&error.encode_to_vec())
                    .map_err(RunError::Write)?;
                return Ok(notes);
            }
        };
        drop(package);
        for file in files {
            let chunk = CodeGeneratorResponse {
                file: vec![file],
                ..CodeGeneratorResponse::default()
            }
            .encode_to_vec();
            out.write_all(&chunk).map_err(RunError::Write)?;
        }
    }
    out.flush().map_err(RunError::Write)?;
    Ok(notes)
}

/// Options, the model (the descriptor pool dropped once it is built) and prost's file names.
fn prepare(
    request: model::RawRequest,
    notes: &mut Vec<String>,
) -> Result<(
    model::Model,
    PluginOptions,
    std::collections::BTreeMap<String, String>,
)> {
    let options = PluginOptions::parse(request.parameter.as_deref().unwrap_or(""))?;
    let inputs = model::Inputs::from_raw(request)?;
    let model = model::build(&inputs, &options)?;
    *notes = model.shrink_lines();
    let prost_files = rust_names::prost_plugin_files(
        inputs.files(),
        &inputs.files_to_generate,
        options.flat_output_dir,
    );
    drop(inputs);
    Ok((model, options, prost_files))
}

/// Generates every output file for already decoded inputs.
#[doc(hidden)]
pub fn generate(
    inputs: &model::Inputs,
    options: &PluginOptions,
) -> Result<Vec<code_generator_response::File>> {
    let model = model::build(inputs, options)?;
    let prost_files = rust_names::prost_plugin_files(
        inputs.files(),
        &inputs.files_to_generate,
        options.flat_output_dir,
    );
    emit::files(&model, options, &prost_files)
}

fn response(outcome: Result<Vec<code_generator_response::File>>) -> CodeGeneratorResponse {
    let mut response = CodeGeneratorResponse {
        supported_features: Some(code_generator_response::Feature::Proto3Optional as u64),
        ..CodeGeneratorResponse::default()
    };
    match outcome {
        Ok(files) => response.file = files,
        Err(error) => response.error = Some(error.to_string()),
    }
    response
}
