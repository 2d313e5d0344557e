//! Building tool sets: the one registration path of generated and run-time tools.

use std::{
    collections::HashMap,
    sync::{Arc, OnceLock},
};

use prost_reflect::DescriptorPool;
use serde_json::Value;
use tonic_mcp_schema::tools::GET_OPERATION_PATH;

use super::{CompiledTool, Entry, ToolSet, check_tool_name};
use crate::{
    error::Error,
    grpc::{BoxTransport, Endpoint},
    tool::def::{ToolDef, ToolInfo, is_json_object},
    tool::descriptor_pools::{self, Descriptors},
    tool::long_running::Operations,
    tool::schemas::{MadeSchemas, Schemas},
    tool::set_pools::{SetPools, package_of_rpc},
    tool::spec_tool::SpecTool,
    tool::types::{Later, LaterTypes, ToolTypes, Types},
};

/// Builds a [`ToolSet`] from tool definitions and one transport. Used by generated code
/// (through [`tool_set`]) and for hand-written [`ToolDef`]s.
///
/// Each registration resolves the definition's message types in the descriptor set, parses
/// both schemas and checks that they are JSON Schema 2020-12 of the keywords the schema
/// generator writes (what the codec's validator checks; another keyword is refused, named
/// with its place). The input validator is compiled on the tool's first call, so that a
/// server with thousands of tools lists them at once.
///
/// With a definition such as [`ToolDef`]'s example:
///
/// ```
/// use tonic_mcp::codegen::{BoxTransport, ToolDef, ToolSetBuilder};
///
/// fn tools(
///     descriptor_set: &[u8],
///     channel: tonic::transport::Channel,
///     def: &ToolDef,
/// ) -> Result<tonic_mcp::ToolSet, tonic_mcp::Error> {
///     let mut builder = ToolSetBuilder::new(descriptor_set, BoxTransport::new(channel))?;
///     builder.add(def)?;
///     Ok(builder.build())
/// }
/// ```
pub struct ToolSetBuilder {
    pool: DescriptorPool,
    transport: BoxTransport,
    tools: Vec<Entry>,
    /// Each registered name, by its index in `tools`: the duplicate check without a scan.
    names: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolSetBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSetBuilder")
            .field(
                "tools",
                &self.tools.iter().map(|e| &e.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// The tool set of generated `TOOLS`, calling through `transport`: what a generated
/// `from_channel` returns.
///
/// The package's descriptor set (generated code passes its `MCP_DESCRIPTORS` static) is read
/// once per process as its files, shared by every service of its package. Its pool is built
/// to register the tools, let go once the server is built, and built again when one of them
/// is first called, then kept: a server holds the pools of the packages whose tools are
/// called (see [`SetPools`](crate::SetPools)). The schemas were written by
/// the plugin, whose output is tested to compile: they are parsed here, and each input schema is
/// compiled on the tool's first call. [`ToolSetBuilder::add`], for hand-written definitions,
/// also checks them at once.
///
/// # Errors
///
/// As for [`ToolSetBuilder::new`] and [`ToolSetBuilder::add`], except that a schema that is not
/// a schema the validator takes is reported on the tool's first call (as an `isError` result).
pub fn tool_set(
    descriptors: &'static Descriptors,
    tools: &[ToolDef],
    transport: BoxTransport,
) -> Result<ToolSet, Error> {
    let set = descriptors.set()?;
    let mut builder = ToolSetBuilder::with_pool(DescriptorPool::new(), transport);
    for def in tools {
        builder.add_generated(def, &set)?;
    }
    Ok(builder.build())
}

/// Whether registration checks schemas at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// Hand-written definitions: check now.
    Now,
    /// Made by the schema generator (generated code, or at run time): compiled on first call.
    Trusted,
}

impl ToolSetBuilder {
    /// Start a tool set whose message types live in `descriptor_set`, an encoded
    /// `FileDescriptorSet` (generated code passes its `MCP_FILE_DESCRIPTOR_SET`), and whose
    /// calls go through `transport`. The set may leave out the well-known types
    /// (`google/protobuf/*.proto`, `descriptor.proto` included): they are always there.
    ///
    /// # Errors
    ///
    /// [`Error::DescriptorSet`] when the bytes do not decode into a linked descriptor pool.
    pub fn new(descriptor_set: &[u8], transport: BoxTransport) -> Result<Self, Error> {
        Ok(Self::with_pool(
            descriptor_pools::decode(descriptor_set)?,
            transport,
        ))
    }

    /// Start a tool set whose message types live in `pool` and whose calls go through
    /// `transport`: for tools made from descriptors at run time
    /// ([`add_spec_tool`](Self::add_spec_tool)). Tools that resolve their types later, in a
    /// [`SetPools`](crate::SetPools)' package pools ([`SpecTool::resolve_later`]), need no
    /// pool here (`DescriptorPool::new()`).
    pub fn with_pool(pool: DescriptorPool, transport: BoxTransport) -> Self {
        Self {
            pool,
            transport,
            tools: Vec::new(),
            names: HashMap::new(),
        }
    }

    /// Register a tool.
    ///
    /// # Errors
    ///
    /// See [`Error`]: unknown message types, invalid schemas, an invalid RPC path, an invalid
    /// or duplicate name.
    pub fn add(&mut self, def: &ToolDef) -> Result<(), Error> {
        let info = ToolInfo::new(def)?;
        let schemas = Schemas::ready(MadeSchemas::given(def.input_schema, def.output_schema));
        self.register(info, schemas, Checks::Now)
    }

    /// A generated tool of `set`'s package: its types resolved once in the package's pool now,
    /// and again on its first call (see [`register_later`](Self::register_later)).
    fn add_generated(&mut self, def: &ToolDef, set: &Arc<SetPools>) -> Result<(), Error> {
        let info = ToolInfo::new(def)?;
        let schemas = Schemas::ready(MadeSchemas::given(def.input_schema, def.output_schema));
        self.check_name(&info)?;
        let package = package_of_rpc(&info.rpc_path);
        let pool = descriptor_pools::registering(set, package)?;
        let types = Types::resolve(&info, &pool, &self.transport)?;
        let later = Later::new(set, package, &types);
        self.register_later(info, schemas, later)
    }

    /// The finished tool set, with default settings.
    pub fn build(self) -> ToolSet {
        ToolSet {
            tools: self.tools,
            ..ToolSet::new()
        }
    }

    /// Register a tool made from descriptors at run time. Its schemas were made by the schema
    /// generator (as the plugin's are): given ones are read as JSON objects, and the input
    /// schema is compiled on the tool's first call. Its types are resolved now in the builder's
    /// pool, or on its first call when [`SpecTool::resolve_later`] was called.
    ///
    /// # Errors
    ///
    /// As for [`add`](Self::add): unknown message types, a schema that is not a JSON object,
    /// an invalid RPC path, an invalid or duplicate name.
    pub fn add_spec_tool(&mut self, tool: SpecTool) -> Result<(), Error> {
        match tool.into_parts() {
            (info, schemas, Some(later)) => self.register_later(info, schemas, later),
            (info, schemas, None) => self.register(info, schemas, Checks::Trusted),
        }
    }

    /// The one registration path of generated and run-time tools whose types are resolved
    /// now, in the set's pool.
    fn register(&mut self, def: ToolInfo, schemas: Schemas, checks: Checks) -> Result<(), Error> {
        self.check_name(&def)?;
        let types = Types::resolve(&def, &self.pool, &self.transport)?;
        self.register_types(def, schemas, checks, ToolTypes::Held(Box::new(types)))
    }

    /// [`register`](Self::register) of a tool of a [`SetPools`](crate::SetPools), whose types
    /// are resolved on its first call: `later` says where (its package), and what tool search
    /// reads of them now. The caller has resolved them once in the package's pool, so that
    /// what does not resolve is refused here as it would be by `register`.
    fn register_later(
        &mut self,
        def: ToolInfo,
        schemas: Schemas,
        later: Later,
    ) -> Result<(), Error> {
        self.check_name(&def)?;
        let types = ToolTypes::Later(Box::new(LaterTypes {
            at: later,
            transport: self.transport.clone(),
            resolved: OnceLock::new(),
        }));
        self.register_types(def, schemas, Checks::Trusted, types)
    }

    /// Checks MCP's rules on `def`'s name, and that no tool of the set has it already.
    fn check_name(&self, def: &ToolInfo) -> Result<(), Error> {
        check_tool_name(&def.name)?;
        match self
            .names
            .get(&*def.name)
            .and_then(|&at| self.tools.get(at))
        {
            Some(first) => Err(Error::DuplicateTool {
                name: def.name.to_string(),
                first: first.tool.def.rpc_path.to_string(),
                second: def.rpc_path.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Registers `def` with its types, its name checked.
    fn register_types(
        &mut self,
        def: ToolInfo,
        schemas: Schemas,
        checks: Checks,
        types: ToolTypes,
    ) -> Result<(), Error> {
        if let Some(given) = schemas.given() {
            for (which, text) in [("input", given.input()), ("output", given.output())] {
                text.and_then(|text| check_schema_text(&text, checks))
                    .map_err(|message| Error::InvalidSchema {
                        tool: def.name.to_string(),
                        which,
                        message,
                    })?;
            }
        }
        let endpoint =
            Endpoint::new(&self.transport, def.rpc_path.clone(), def.kind).ok_or_else(|| {
                Error::InvalidRpcPath {
                    tool: def.name.to_string(),
                    rpc_path: def.rpc_path.to_string(),
                }
            })?;
        let operations = (def.rpc_path == GET_OPERATION_PATH)
            .then(|| Operations::new(&def.name, &self.transport).map(Arc::new))
            .transpose()?;
        self.names.insert(def.name.to_string(), self.tools.len());
        self.tools.push(Entry {
            name: def.name.to_string(),
            tool: Arc::new(CompiledTool {
                def,
                types,
                schemas,
                endpoint,
                validation: OnceLock::new(),
                operations,
            }),
        });
        Ok(())
    }
}

/// Checks that `text` is a JSON object, and with [`Checks::Now`] a 2020-12 schema the
/// codec's validator takes. Without, only the syntax is read, building nothing.
fn check_schema_text(text: &str, checks: Checks) -> Result<(), String> {
    const NOT_AN_OBJECT: &str = "a tool schema must be a JSON object";
    if checks == Checks::Now {
        let schema: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if !schema.is_object() {
            return Err(NOT_AN_OBJECT.to_owned());
        }
        return tonic_mcp_codec::check_schema(&schema);
    }
    if is_json_object(text).map_err(|e| e.to_string())? {
        Ok(())
    } else {
        Err(NOT_AN_OBJECT.to_owned())
    }
}
