//! The message types a tool's calls read: resolved when the tool is registered, or, for a tool
//! made from a descriptor set whose pools are built per package ([`SetPools`]), on its first
//! call, so that a server of thousands of such tools holds the pools of only the packages in
//! use.

use std::sync::{Arc, OnceLock};

use prost_reflect::{DescriptorPool, MessageDescriptor};
use tonic_mcp_codec::Plans;

use crate::{
    error::Error,
    grpc::BoxTransport,
    tool::def::{ToolInfo, message},
    tool::long_running::LongRunning,
    tool::set_pools::SetPools,
    tool::union_pool::TypeSource,
};

/// A tool's request and response types, and what its calls make of them.
pub(crate) struct Types {
    pub(crate) input: MessageDescriptor,
    pub(crate) output: MessageDescriptor,
    /// The single-pass transcoders' plans of the input and output types.
    pub(crate) plans: Plans,
    /// What a tool that waits for its `google.longrunning.Operation` needs (boxed: few tools
    /// wait).
    pub(crate) long_running: Option<Box<LongRunning>>,
}

impl Types {
    /// `def`'s types in `pool`; with `wait_for` (the operation's response and metadata types),
    /// what waiting for its operation through `transport` needs.
    pub(crate) fn resolve(
        def: &ToolInfo,
        pool: &DescriptorPool,
        transport: &BoxTransport,
    ) -> Result<Self, Error> {
        let input = message(pool, &def.name, &def.input_type)?;
        let output = message(pool, &def.name, &def.output_type)?;
        let long_running = match &def.wait_for {
            None => None,
            Some((response_type, metadata_type)) => Some(Box::new(LongRunning::new(
                &def.name,
                pool,
                transport,
                &def.output_type,
                response_type,
                metadata_type.as_deref(),
            )?)),
        };
        Ok(Self {
            input,
            output,
            plans: Plans::default(),
            long_running,
        })
    }
}

/// Where a tool's [`Types`] come from.
pub(crate) enum ToolTypes {
    /// Resolved at registration, in a pool the tool shares with its set.
    Held(Box<Types>),
    /// Resolved on the first call that needs them, in the pool of the tool's package.
    Later(Box<LaterTypes>),
}

/// Where a tool registered with [`ToolSetBuilder::register_later`] resolves its types.
///
/// [`ToolSetBuilder::register_later`]: crate::tool::toolset::ToolSetBuilder::register_later
pub(crate) struct Later {
    pub(crate) pools: Arc<SetPools>,
    /// The package of the tool's service, whose pool holds its types.
    pub(crate) package: Box<str>,
    /// The input and output fields' names, read at registration for tool search.
    pub(crate) input_fields: Box<[Box<str>]>,
    pub(crate) output_fields: Box<[Box<str>]>,
}

impl Later {
    /// In the pool of `package` of `set`, where `types` were resolved once.
    pub(crate) fn new(set: &Arc<SetPools>, package: &str, types: &Types) -> Self {
        let names = |message: &MessageDescriptor| {
            message.fields().map(|field| field.name().into()).collect()
        };
        Self {
            pools: Arc::clone(set),
            package: package.into(),
            input_fields: names(&types.input),
            output_fields: names(&types.output),
        }
    }
}

/// What resolving a tool's types later reads, and the types once resolved.
pub(crate) struct LaterTypes {
    pub(crate) at: Later,
    /// For the Operations endpoints of a tool that waits.
    pub(crate) transport: BoxTransport,
    pub(crate) resolved: OnceLock<Result<Types, String>>,
}

impl ToolTypes {
    /// The types, resolved now if this is the first call that needs them. `def` is the
    /// tool's own (see [`Types::resolve`]). Fails, saying why, only when
    /// the package's pool cannot be built, which registration has already done once.
    pub(crate) fn get(&self, def: &ToolInfo) -> Result<&Types, &str> {
        match self {
            Self::Held(types) => Ok(types),
            Self::Later(later) => later
                .resolved
                .get_or_init(|| {
                    let pool = later.at.pools.pinned(&later.at.package)?;
                    Types::resolve(def, &pool, &later.transport).map_err(|error| error.to_string())
                })
                .as_ref()
                .map_err(String::as_str),
        }
    }

    /// Where the types come from, for the server's union of every type
    /// ([`UnionPool`](crate::tool::union_pool::UnionPool)).
    pub(crate) fn source(&self) -> TypeSource {
        match self {
            Self::Held(types) => TypeSource::Pool(types.output.parent_pool().clone()),
            Self::Later(later) => TypeSource::Set(Arc::clone(&later.at.pools)),
        }
    }

    /// Calls `each` with the name of every field of the input (`true`) and then of the
    /// output (`false`), without resolving anything.
    pub(crate) fn each_field(&self, mut each: impl FnMut(&str, bool)) {
        match self {
            Self::Held(types) => {
                types.input.fields().for_each(|f| each(f.name(), true));
                types.output.fields().for_each(|f| each(f.name(), false));
            }
            Self::Later(later) => {
                later
                    .at
                    .input_fields
                    .iter()
                    .for_each(|name| each(name, true));
                later
                    .at
                    .output_fields
                    .iter()
                    .for_each(|name| each(name, false));
            }
        }
    }
}
