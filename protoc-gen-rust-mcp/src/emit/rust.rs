//! `<package>.pb.mcp.rs` (written in the next step).

use crate::error::Result;
use crate::model::Package;
use crate::options::Options;

/// The Rust module of a package.
pub fn package(_package: &Package, _options: &Options) -> Result<String> {
    Ok(String::new())
}
