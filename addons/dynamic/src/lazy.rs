//! Schemas made when first needed ([`DescriptorTools::lazy_schemas`]): each tool keeps what
//! making its schemas reads, shared by every tool of the pool, and the RPC they are of.
//!
//! [`DescriptorTools::lazy_schemas`]: super::DescriptorTools::lazy_schemas

use std::sync::Arc;

use serde_json::Value;
use tonic_mcp_schema::{
    Context, Options,
    comments::Comments,
    names::{package_of, split_rpc_path},
};

use prost_reflect::DescriptorPool;

use super::schema_texts::SchemaTexts;
use tonic_mcp::{MadeSchemas, MakeSchemas, SetPools};

/// What a [`DescriptorTools`](super::DescriptorTools) makes tools from: one pool, or a set
/// whose pools are built per package.
#[derive(Debug, Clone)]
pub(super) enum Pools {
    One(DescriptorPool),
    Set(Arc<SetPools>),
}

impl Pools {
    /// The pool tools are registered in: the one pool, or none for a set (its tools resolve
    /// their types in their package's pool).
    pub(super) fn one(&self) -> DescriptorPool {
        match self {
            Self::One(pool) => pool.clone(),
            Self::Set(_) => DescriptorPool::new(),
        }
    }

    /// The pool that holds the service `service`, for its schemas.
    pub(super) fn of_service(&self, service: &str) -> Result<DescriptorPool, String> {
        match self {
            Self::One(pool) => Ok(pool.clone()),
            Self::Set(set) => set.recent(package_of(service)),
        }
    }
}

/// What making any tool's schemas reads: the pool (or a set's package pools), the options and
/// the comments; and the texts made, shared by every tool of the pool.
#[derive(Debug)]
pub(super) struct SchemaSource {
    pub(super) pools: Pools,
    pub(super) options: Options,
    pub(super) comments: Arc<Comments>,
    pub(super) texts: Arc<SchemaTexts>,
}

/// The last maker of a set's tools has made its schemas: the pools built for them are let go.
impl Drop for SchemaSource {
    fn drop(&mut self) {
        if let Pools::Set(set) = &self.pools {
            set.forget_recent();
        }
    }
}

/// The schemas of the tool of one RPC, made from `source`.
pub(super) struct MethodSchemas {
    pub(super) source: Arc<SchemaSource>,
    /// `/package.Service/Method`.
    pub(super) rpc_path: String,
}

impl MakeSchemas for MethodSchemas {
    fn make(&self) -> Result<MadeSchemas, String> {
        let SchemaSource {
            pools,
            options,
            comments,
            texts,
        } = &*self.source;
        let no_rpc = || format!("the descriptors have no RPC `{}`", self.rpc_path);
        let (service, method) = split_rpc_path(&self.rpc_path).ok_or_else(no_rpc)?;
        let pool = pools.of_service(service)?;
        let method = pool
            .get_service_by_name(service)
            .and_then(|service| service.methods().find(|m| m.name() == method))
            .ok_or_else(no_rpc)?;
        // One context per tool: its readers and schema cache are not shared across threads,
        // and making one reads nothing ahead.
        let schemas = Context::with_comments(&pool, options, comments)
            .method_schemas(&method)
            .map_err(|e| e.to_string())?;
        Ok(MadeSchemas::made(
            &text(schemas.input)?,
            &text(schemas.output)?,
            |text| texts.keep(text),
        ))
    }
}

/// A schema as the text a tool keeps (see `CompiledTool`): serde_json's writer, not `Display`,
/// which goes through a formatter adapter at about twice the cost.
pub(super) fn text(schema: Value) -> Result<String, String> {
    if !schema.is_object() {
        return Err("a tool schema must be a JSON object".to_owned());
    }
    serde_json::to_string(&schema).map_err(|e| e.to_string())
}
