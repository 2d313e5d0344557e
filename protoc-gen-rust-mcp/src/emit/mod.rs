//! Emitters: they write the resolved [`crate::model::Model`] out and look nothing up.

pub(crate) mod json;
pub(crate) mod rust;

use std::collections::BTreeMap;

use prost_types::compiler::code_generator_response::File;

use crate::model::{Model, Package};
use crate::options::PluginOptions;
use crate::rust_names;
use tonic_mcp_schema::error::Result;

/// Every output file for the model, in a deterministic order.
///
/// `prost_files` maps each package to the file protoc-gen-prost writes for it (see
/// [`rust_names::prost_plugin_files`]), the target of `include_in_prost`.
pub(crate) fn files(
    model: &Model,
    options: &PluginOptions,
    prost_files: &BTreeMap<String, String>,
) -> Result<Vec<File>> {
    let mut files = Vec::new();
    for package in &model.packages {
        files.extend(package_files(package, options, prost_files)?);
    }
    Ok(files)
}

/// The output files of one package (see [`files`]).
pub(crate) fn package_files(
    package: &Package,
    options: &PluginOptions,
    prost_files: &BTreeMap<String, String>,
) -> Result<Vec<File>> {
    let mut files = Vec::new();
    let dir = rust_names::package_dir(&package.name, options.flat_output_dir);
    let stem = rust_names::package_file_stem(&package.name);
    if options.rust {
        let name = format!("{dir}{stem}.pb.mcp.rs");
        files.push(File {
            name: Some(name.clone()),
            content: Some(rust::package(package, options)?),
            ..File::default()
        });
        if options.include_in_prost {
            let prost_file = prost_files
                .get(&package.name)
                .cloned()
                .unwrap_or_else(|| format!("{dir}{}", rust_names::prost_file_name(&package.name)));
            files.push(File {
                name: Some(prost_file),
                insertion_point: Some("module".to_owned()),
                content: Some(format!("include!(\"{stem}.pb.mcp.rs\");\n")),
                ..File::default()
            });
        }
    }
    if options.tools_json {
        files.push(File {
            name: Some(format!("{dir}{stem}.mcp.json")),
            content: Some(json::package(package)),
            ..File::default()
        });
    }
    Ok(files)
}
