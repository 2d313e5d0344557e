//! `protoc-gen-rust-mcp`: a protoc plugin that exposes gRPC services as MCP tools.
//!
//! For every RPC it writes a JSON Schema 2020-12 for the input and the output, and a Rust module
//! (`<package>.pb.mcp.rs`) that registers each RPC as an MCP tool forwarding to a tonic client or
//! an in-process tonic service through the `tonic-mcp` runtime.
//!
//! The binary reads a `CodeGeneratorRequest` on stdin and writes a `CodeGeneratorResponse`; the
//! library offers the same through [`execute`], a `build.rs` builder that runs protoc, prost and
//! tonic too (feature `build`), and [`DescriptorSetBuilder`], which adds the MCP modules to a
//! prost or tonic build you already have.
//!
//! Generation runs in two phases: [`model::build`] resolves everything (Rust names from
//! prost-build, options, comments, schemas) and the emitters in [`emit`] only write files.

// Library code reports errors instead of panicking; tests may unwrap.
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

#[cfg(feature = "build")]
mod builder;
pub mod compose;
pub mod emit;
pub mod model;
pub mod names;

// Descriptor-to-tool logic shared with the runtime, under the paths this crate always had.
pub use tonic_mcp_schema::{comments, error, extensions, options, schema, tools};

use prost::Message as _;
use prost_types::compiler::{CodeGeneratorResponse, code_generator_response};

#[cfg(feature = "build")]
pub use crate::builder::Builder;
pub use crate::compose::{BuildError, DescriptorSetBuilder};
pub use crate::error::{Error, Result};
pub use crate::options::Options;

/// The plugin's version, as `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Decodes a serialized `CodeGeneratorRequest` and generates the response.
///
/// Only a request that cannot be decoded is an `Err`; every generation problem is reported in
/// `CodeGeneratorResponse.error`, which protoc and buf print against the input.
pub fn execute(request: &[u8]) -> std::result::Result<CodeGeneratorResponse, prost::DecodeError> {
    execute_with_notes(request).map(|(response, _)| response)
}

/// As [`execute`], plus the lines the binary prints on stderr: `shrank …` for every tool whose
/// schemas the `max_schema_bytes` budget shrank, `note: …` for other choices made for the user
/// (a long-running RPC whose operation cannot be waited for).
pub fn execute_with_notes(
    request: &[u8],
) -> std::result::Result<(CodeGeneratorResponse, Vec<String>), prost::DecodeError> {
    let request = model::RawRequest::decode(request)?;
    let mut notes = Vec::new();
    let outcome = Options::parse(request.parameter.as_deref().unwrap_or("")).and_then(|options| {
        let inputs = model::Inputs::from_raw(&request)?;
        generate_with_notes(&inputs, &options, &mut notes)
    });
    Ok((response(outcome), notes))
}

/// Generates every output file for already decoded inputs.
pub fn generate(
    inputs: &model::Inputs,
    options: &Options,
) -> Result<Vec<code_generator_response::File>> {
    generate_with_notes(inputs, options, &mut Vec::new())
}

/// [`generate`], collecting the stderr lines in `notes`.
fn generate_with_notes(
    inputs: &model::Inputs,
    options: &Options,
    notes: &mut Vec<String>,
) -> Result<Vec<code_generator_response::File>> {
    let model = model::build(inputs, options)?;
    *notes = model.shrink_lines();
    let prost_files = names::prost_plugin_files(
        &inputs.files,
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
