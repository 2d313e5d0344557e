//! The descriptor pools of tool sets: generated code's embedded sets decoded once per process
//! and shared by every tool set of a package.

use std::sync::OnceLock;

use prost_reflect::DescriptorPool;

use crate::error::Error;

/// Decoded descriptor sets, by the address and length of their `'static` bytes.
type PoolCache = std::sync::Mutex<Vec<((usize, usize), DescriptorPool)>>;

pub(crate) fn shared(descriptor_set: &'static [u8]) -> Result<DescriptorPool, Error> {
    static POOLS: OnceLock<PoolCache> = OnceLock::new();
    let key = (descriptor_set.as_ptr() as usize, descriptor_set.len());
    let pools = POOLS.get_or_init(PoolCache::default);
    // A poisoned lock only means another thread panicked while holding it: the cache is intact.
    let mut pools = pools
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, pool)) = pools.iter().find(|(k, _)| *k == key) {
        return Ok(pool.clone());
    }
    let pool = decode(descriptor_set)?;
    pools.push((key, pool.clone()));
    Ok(pool)
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
