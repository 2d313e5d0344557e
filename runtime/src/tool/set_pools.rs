//! A descriptor set whose pools are built per package when a tool needs one: the pools of the
//! packages whose tools are called are kept, and a few others, built to make schemas, are kept
//! while they are the most recent.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex, OnceLock},
};

use prost_reflect::DescriptorPool;
use tonic_mcp_schema::{
    comments::Comments,
    names::{package_of, split_rpc_path},
    set_files::SetFiles,
};

use crate::{error::Error, sync::lock};

/// How many pools built for schemas (not for calls) are kept, the most recent first: tools are
/// listed, and their schemas made, a service after another, by a listing and by
/// `make_schemas_in_background` at once, so too few are built again and again.
const RECENT_POOLS: usize = 8;

/// A package's pool, once built (or why it cannot be).
type BuiltPool = OnceLock<Result<DescriptorPool, String>>;

/// A descriptor set kept as its encoded files, each package's pool built when a tool of the
/// package needs it: its schemas when they are made, its types on its first call.
///
/// A prost-reflect pool is many times the size of the encoded set, and a package's pool (its
/// files and what they import) a small part of the whole set's: a gateway in front of such a
/// set holds the pools of the packages whose tools are called, not the set's. Generated code keeps its package's embedded
/// set this way; the add-on crate `tonic-mcp-dynamic` makes tools of a set's services with
/// `DescriptorTools::of_set`.
///
/// A type is known where its package's pool knows it: an `Any` in a tool's arguments must hold
/// a type the tool's package defines or imports, as in generated code. A response whose `Any`
/// holds another type is decoded again in the pool of the whole set, built the first time
/// (and kept).
///
/// ```no_run
/// # fn demo(bytes: &[u8]) -> Result<(), tonic_mcp::Error> {
/// use tonic_mcp::SetPools;
///
/// let (set, _comments) = SetPools::decode(bytes)?;
/// // The package's files and what they import.
/// let pool = set.recent("demo.v1").map_err(tonic_mcp::Error::DescriptorSet)?;
/// # let _ = pool; Ok(()) }
/// ```
#[derive(Debug)]
pub struct SetPools {
    files: SetFiles,
    /// The pools of packages a tool of which has resolved its types for a call: kept.
    pinned: Mutex<HashMap<Box<str>, DescriptorPool>>,
    /// Pools built for schemas (or being built), the most recent first.
    recent: Mutex<VecDeque<(Box<str>, Arc<BuiltPool>)>>,
    /// The whole set's pool, built the first time a response holds an `Any` whose type the
    /// tool's package does not import.
    whole: OnceLock<Option<DescriptorPool>>,
}

impl SetPools {
    /// Decodes an encoded `FileDescriptorSet` (with its imports), keeping its files without
    /// their source info, and returns it with the comments that source info held. Editions
    /// files are refused by name, and a file importing one the set does not hold is refused;
    /// each package's files are linked when its pool is first built.
    ///
    /// # Errors
    ///
    /// [`Error::DescriptorSet`] when the bytes do not decode, a file is an editions file, two
    /// different files have one name, or an import is missing.
    pub fn decode(bytes: &[u8]) -> Result<(SetPools, Comments), Error> {
        let (files, comments) = SetFiles::decode(bytes).map_err(Error::descriptor_set)?;
        Ok((Self::new(files), comments))
    }

    /// The pools of `files`.
    pub fn new(files: SetFiles) -> SetPools {
        SetPools {
            files,
            pinned: Mutex::default(),
            recent: Mutex::default(),
            whole: OnceLock::new(),
        }
    }

    /// The set's files.
    pub fn files(&self) -> &SetFiles {
        &self.files
    }

    /// Every service's full name, in the order of the set.
    pub fn services(&self) -> &[String] {
        self.files.services()
    }

    /// The pool of `package`, for a call: kept from now on.
    pub(crate) fn pinned(&self, package: &str) -> Result<DescriptorPool, String> {
        let pool = self.recent(package)?;
        Ok(lock(&self.pinned)
            .entry(package.into())
            .or_insert(pool)
            .clone())
    }

    /// The pool of `package` (its files and those they import), to make tools or schemas
    /// from: one kept for calls or built before, or built now and kept while it is among the
    /// few most recent.
    ///
    /// # Errors
    ///
    /// The package's files do not link, saying why.
    pub fn recent(&self, package: &str) -> Result<DescriptorPool, String> {
        if let Some(pool) = lock(&self.pinned).get(package) {
            return Ok(pool.clone());
        }
        let cell = {
            let mut recent = lock(&self.recent);
            let entry = recent
                .iter()
                .position(|(name, _)| &**name == package)
                .and_then(|at| recent.remove(at))
                .unwrap_or_else(|| (package.into(), Arc::default()));
            let cell = Arc::clone(&entry.1);
            recent.push_front(entry);
            recent.truncate(RECENT_POOLS);
            cell
        };
        // Built outside the lock, so that one package's build does not hold up another's;
        // a thread that asks for a package being built waits for that build.
        cell.get_or_init(|| {
            let started = std::time::Instant::now();
            let pool = self.files.package_pool(package);
            tracing::debug!(
                package,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "package pool built"
            );
            pool
        })
        .clone()
    }

    /// Lets go of the pools built to make tools and schemas ([`recent`](Self::recent)):
    /// serving the tools builds what it needs again. The pools kept for calls stay.
    pub fn forget_recent(&self) {
        lock(&self.recent).clear();
    }

    /// The packages whose pools are kept for calls (a tool of each has resolved its types for
    /// a call), sorted.
    pub fn pinned_packages(&self) -> Vec<String> {
        let mut packages: Vec<String> = lock(&self.pinned).keys().map(|k| k.to_string()).collect();
        packages.sort();
        packages
    }

    /// The pool of the whole set, built once; `None` when it does not link.
    pub(crate) fn whole(&self) -> Option<&DescriptorPool> {
        self.whole
            .get_or_init(|| {
                tracing::info!(
                    "a response holds a type its tool's package does not import: building the \
                     pool of the whole descriptor set"
                );
                self.files
                    .whole_pool()
                    .inspect_err(|error| tracing::warn!(%error, "the descriptor set does not link"))
                    .ok()
            })
            .as_ref()
    }
}

/// The package of the service of the RPC `rpc_path` (`/package.Service/Method`).
pub(crate) fn package_of_rpc(rpc_path: &str) -> &str {
    split_rpc_path(rpc_path).map_or("", |(service, _)| package_of(service))
}
