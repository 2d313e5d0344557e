//! The descriptor pools of tool sets: generated code's embedded sets kept once per process as
//! their files ([`SetPools`]), shared by every tool set of a package, and hand-written tool
//! sets' pools.

use std::sync::{Arc, OnceLock};

use prost_reflect::DescriptorPool;
use tonic_mcp_schema::set_files::SetFiles;

use crate::{error::Error, tool::set_pools::SetPools};

/// Embedded descriptor sets, by the address and length of their `'static` bytes.
type SetCache = std::sync::Mutex<Vec<((usize, usize), Arc<SetPools>)>>;

/// The files of generated code's embedded set `descriptor_set`, read once per process: each
/// package's pool is built on the well-known types when its tools are registered and when one
/// of them is first called.
pub(crate) fn shared(descriptor_set: &'static [u8]) -> Result<Arc<SetPools>, Error> {
    static SETS: OnceLock<SetCache> = OnceLock::new();
    let key = (descriptor_set.as_ptr() as usize, descriptor_set.len());
    let sets = SETS.get_or_init(SetCache::default);
    // A poisoned lock only means another thread panicked while holding it: the cache is intact.
    let mut sets = sets
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, set)) = sets.iter().find(|(k, _)| *k == key) {
        return Ok(Arc::clone(set));
    }
    let (files, _) =
        SetFiles::decode_on_well_known(descriptor_set).map_err(Error::descriptor_set)?;
    let set = Arc::new(SetPools::new(files));
    sets.push((key, Arc::clone(&set)));
    Ok(set)
}

/// The pool generated tools were last registered with: of one package of one embedded set
/// (by the set's address). A package's services are registered one after another, and one pool
/// at a time, in the whole process, keeps the peak low: the pools of every package at once
/// would stay in the process's memory once let go.
static REGISTERING: std::sync::Mutex<Option<(usize, Box<str>, DescriptorPool)>> =
    std::sync::Mutex::new(None);

/// The pool of `package` in `set`, to register its tools: the one the last registration used
/// if it was the same, else built now, after that one is let go.
pub(crate) fn registering(set: &Arc<SetPools>, package: &str) -> Result<DescriptorPool, Error> {
    let key = Arc::as_ptr(set) as usize;
    let mut slot = REGISTERING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((at, name, pool)) = &*slot
        && *at == key
        && &**name == package
    {
        return Ok(pool.clone());
    }
    *slot = None;
    let pool = set
        .files()
        .package_pool(package)
        .map_err(Error::DescriptorSet)?;
    *slot = Some((key, package.into(), pool.clone()));
    Ok(pool)
}

/// Lets go of the pool the last registration used (a server is built of the tools).
pub(crate) fn forget_registering() {
    *REGISTERING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

/// Decodes an encoded `FileDescriptorSet` on top of the well-known types, which it may leave
/// out: the plugin embeds neither the well-known types nor `descriptor.proto` (prost-reflect
/// carries them), only the files that define the package's types and the custom options they
/// use.
pub(crate) fn decode(descriptor_set: &[u8]) -> Result<DescriptorPool, Error> {
    let mut pool = DescriptorPool::global();
    pool.decode_file_descriptor_set(descriptor_set)
        .map_err(|e| Error::DescriptorSet(e.to_string()))?;
    Ok(pool)
}
