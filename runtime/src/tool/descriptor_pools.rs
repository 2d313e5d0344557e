//! The descriptor pools of tool sets: generated code's embedded sets, each held by the
//! generated module's [`Descriptors`] static and read once per process as its files
//! ([`SetPools`]), shared by every tool set of its package; and hand-written tool sets' pools.

use std::sync::{Arc, OnceLock};

use prost_reflect::DescriptorPool;
use tonic_mcp_schema::{set_files::SetFiles, source_info::SetError};

use crate::{error::Error, sync::lock, tool::set_pools::SetPools};

/// A generated package's embedded `FileDescriptorSet` and, once its first tool set is made,
/// its files. Generated code holds one in a `static` per package (`MCP_DESCRIPTORS`, beside
/// `MCP_FILE_DESCRIPTOR_SET`), as it holds the bytes: every tool set of the package reads the
/// set once, and each package's pool is built on the well-known types when its tools are
/// registered and when one of them is first called.
///
/// ```
/// static DESCRIPTORS: tonic_mcp::codegen::Descriptors =
///     tonic_mcp::codegen::Descriptors::new(b"");
/// ```
#[derive(Debug)]
pub struct Descriptors {
    bytes: &'static [u8],
    /// The set's files, or why the bytes do not decode.
    set: OnceLock<Result<Arc<SetPools>, SetError>>,
}

impl Descriptors {
    /// The descriptors of `bytes`, an encoded `FileDescriptorSet` that may leave out the
    /// well-known types (the plugin embeds neither them nor `descriptor.proto`): nothing is
    /// read until the first tool set is made.
    pub const fn new(bytes: &'static [u8]) -> Self {
        Self {
            bytes,
            set: OnceLock::new(),
        }
    }

    /// The set's files, decoded the first time.
    pub(crate) fn set(&self) -> Result<Arc<SetPools>, Error> {
        self.set
            .get_or_init(|| {
                SetFiles::decode_on_well_known(self.bytes)
                    .map(|(files, _)| Arc::new(SetPools::new(files)))
            })
            .clone()
            .map_err(Error::descriptor_set)
    }
}

/// The pool generated tools were last registered with: of one package of one set. A package's
/// services are registered one after another, and one pool at a time, in the whole process,
/// keeps the peak low: the pools of every package at once would stay in the process's memory
/// once let go. The slot holds its set, so that the set it names is the one it was built from.
static REGISTERING: std::sync::Mutex<Option<Registering>> = std::sync::Mutex::new(None);

/// A set, one of its packages, and that package's pool.
type Registering = (Arc<SetPools>, Box<str>, DescriptorPool);

/// The pool of `package` in `set`, to register its tools: the one the last registration used
/// if it was the same, else built now, after that one is let go.
pub(crate) fn registering(set: &Arc<SetPools>, package: &str) -> Result<DescriptorPool, Error> {
    let mut slot = lock(&REGISTERING);
    if let Some((last, name, pool)) = &*slot
        && Arc::ptr_eq(last, set)
        && &**name == package
    {
        return Ok(pool.clone());
    }
    *slot = None;
    let pool = set
        .files()
        .package_pool(package)
        .map_err(Error::DescriptorSet)?;
    *slot = Some((Arc::clone(set), package.into(), pool.clone()));
    Ok(pool)
}

/// Lets go of the pool the last registration used (a server is built of the tools).
pub(crate) fn forget_registering() {
    *lock(&REGISTERING) = None;
}

/// Decodes an encoded `FileDescriptorSet` on top of the well-known types (prost-reflect
/// carries them), which it may leave out.
pub(crate) fn decode(descriptor_set: &[u8]) -> Result<DescriptorPool, Error> {
    let mut pool = DescriptorPool::global();
    pool.decode_file_descriptor_set(descriptor_set)
        .map_err(|e| Error::DescriptorSet(e.to_string()))?;
    Ok(pool)
}
