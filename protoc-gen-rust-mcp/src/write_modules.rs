//! Writing what a build script generates: the modules into the output directory, and the
//! `include!` of each into the file prost-build wrote for its package.

use std::path::{Path, PathBuf};

use prost_types::compiler::code_generator_response::File;

use crate::build_error::BuildError;
use crate::rust_names;

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
        let prost_path = out_dir.join(rust_names::prost_build_file_name(package));
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
