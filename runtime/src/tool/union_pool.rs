//! Every message type a server knows, for `Any` payloads of another package.
//!
//! Each tool resolves its messages in its own descriptor pool: generated code embeds one per
//! package, and a tool of a [`SetPools`] resolves them in its package's pool. A result can still
//! hold an `Any` whose payload another package defines, above all the
//! `google.longrunning.Operations` tools, whose operations carry the metadata and responses of
//! every service that returns them. When a response does not encode in its tool's pool, it is
//! decoded again in the union of every pool the server's tools use (for a [`SetPools`], the
//! pool of its whole set), built on the first such miss.

use std::sync::{Arc, OnceLock};

use prost_reflect::{DescriptorPool, MessageDescriptor};

use crate::tool::set_pools::SetPools;

/// Where a tool's types come from, for the union.
pub(crate) enum TypeSource {
    /// A pool the tool holds.
    Pool(DescriptorPool),
    /// The set whose package pools the tool's types are resolved in.
    Set(Arc<SetPools>),
}

/// The pools of a server's tools, and their union once needed.
#[derive(Default)]
pub(crate) struct UnionPool {
    pools: Vec<DescriptorPool>,
    sets: Vec<Arc<SetPools>>,
    union: OnceLock<DescriptorPool>,
}

impl UnionPool {
    /// The distinct pools and sets among `sources`.
    pub(crate) fn new(sources: impl IntoIterator<Item = TypeSource>) -> Self {
        let mut pools: Vec<DescriptorPool> = Vec::new();
        let mut sets: Vec<Arc<SetPools>> = Vec::new();
        for source in sources {
            match source {
                TypeSource::Pool(pool) if !pools.contains(&pool) => pools.push(pool),
                TypeSource::Set(set) if !sets.iter().any(|s| Arc::ptr_eq(s, &set)) => {
                    sets.push(set);
                }
                _ => {}
            }
        }
        Self {
            pools,
            sets,
            union: OnceLock::new(),
        }
    }

    /// Lets go of the pools the sets built to make the tools: serving them builds what it
    /// needs again.
    pub(crate) fn forget_recent(&self) {
        self.sets.iter().for_each(|set| set.forget_recent());
    }

    /// `name` in the union of the pools, when there is more than one pool to unite (a set's
    /// package pools are always more than one).
    pub(crate) fn message(&self, name: &str) -> Option<MessageDescriptor> {
        if self.pools.len() < 2 && self.sets.is_empty() {
            return None;
        }
        self.union
            .get_or_init(|| match (self.pools.as_slice(), self.sets.as_slice()) {
                ([], [set]) => set.whole().cloned().unwrap_or_default(),
                _ => unite(
                    &self
                        .sets
                        .iter()
                        .filter_map(|set| set.whole().cloned())
                        .chain(self.pools.iter().cloned())
                        .collect::<Vec<_>>(),
                ),
            })
            .get_message_by_name(name)
    }
}

/// Every file of `pools`, each once. Files come in the order of their pool, which has every
/// file after its imports; a file another pool defines differently under the same name is left
/// out (the first one stays), with a warning.
fn unite(pools: &[DescriptorPool]) -> DescriptorPool {
    let mut union = DescriptorPool::new();
    for pool in pools {
        for file in pool.files() {
            if union.get_file_by_name(file.name()).is_some() {
                continue;
            }
            if let Err(error) =
                union.add_file_descriptor_proto(file.file_descriptor_proto().clone())
            {
                tracing::warn!(file = file.name(), %error, "a descriptor file is left out of the server's type union");
            }
        }
    }
    union
}

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};

    use super::*;

    fn file(package: &str) -> FileDescriptorProto {
        FileDescriptorProto {
            name: Some(format!("{package}.proto")),
            package: Some(package.to_owned()),
            syntax: Some("proto3".to_owned()),
            message_type: vec![DescriptorProto {
                name: Some("M".to_owned()),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_set_unites_every_package_and_one_pool_nothing() {
        let bytes = FileDescriptorSet {
            file: vec![file("a"), file("b")],
        }
        .encode_to_vec();
        let (set, _) = SetPools::decode(&bytes).unwrap();
        let set = Arc::new(set);
        // A tool of package `a` holds a pool without `b.M`; the union has it.
        let own = set.recent("a").unwrap();
        assert!(own.get_message_by_name("b.M").is_none());
        let union = UnionPool::new([TypeSource::Set(Arc::clone(&set))]);
        assert_eq!(union.message("b.M").unwrap().full_name(), "b.M");
        assert!(union.message("c.M").is_none());
        // One pool alone has nothing to unite with.
        let alone = UnionPool::new([TypeSource::Pool(own.clone()), TypeSource::Pool(own)]);
        assert!(alone.message("a.M").is_none());
    }
}
