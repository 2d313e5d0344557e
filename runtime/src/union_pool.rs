//! Every message type a server knows, for `Any` payloads of another package.
//!
//! Each tool resolves its messages in its own descriptor pool: generated code embeds one per
//! package. A result can still hold an `Any` whose payload another package defines, above all
//! the `google.longrunning.Operations` tools, whose operations carry the metadata and responses
//! of every service that returns them. When a response does not encode in its tool's pool, it is
//! decoded again in the union of every pool the server's tools use, built on the first such
//! miss.

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

/// The pools of a server's tools, and their union once needed.
#[derive(Default)]
pub(crate) struct UnionPool {
    pools: Vec<DescriptorPool>,
    union: OnceLock<DescriptorPool>,
}

impl UnionPool {
    /// The distinct pools among `pools`.
    pub(crate) fn new(pools: impl IntoIterator<Item = DescriptorPool>) -> Self {
        let mut distinct: Vec<DescriptorPool> = Vec::new();
        for pool in pools {
            if !distinct.contains(&pool) {
                distinct.push(pool);
            }
        }
        Self {
            pools: distinct,
            union: OnceLock::new(),
        }
    }

    /// `name` in the union of the pools, when there is more than one pool to unite.
    pub(crate) fn message(&self, name: &str) -> Option<MessageDescriptor> {
        if self.pools.len() < 2 {
            return None;
        }
        self.union
            .get_or_init(|| unite(&self.pools))
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
