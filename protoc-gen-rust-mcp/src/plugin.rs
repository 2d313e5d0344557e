//! The plugin itself: a `CodeGeneratorRequest` in, its `CodeGeneratorResponse` out, whole
//! ([`execute`]) or written file by file as it is made ([`execute_to`], the binary's), and the
//! generation behind both and behind the build-script [`Builder`](crate::Builder)
//! ([`generate`]).

use prost::Message as _;
use prost_types::compiler::{CodeGeneratorResponse, code_generator_response};
use tonic_mcp_schema::error::Result;

use crate::options::PluginOptions;
use crate::{emit, model, rust_names};

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
