//! Tools from descriptors at run time: the same tool definitions the plugin
//! generates, made by the same code (`tonic-mcp-schema`) from a descriptor pool, registered
//! through the same path as generated `ToolDef`s.

use std::{borrow::Cow, time::Duration};

use prost_reflect::DescriptorPool;
use serde_json::Value;
use tonic_mcp_schema::{Context, Options, ToolSpec};

use crate::{
    def::ToolInfo,
    error::Error,
    grpc::BoxTransport,
    meta::ToolMeta,
    toolset::{Checks, ToolSet, ToolSetBuilder},
    transport::Transport,
};

/// Builds [`ToolSet`]s from a descriptor pool at run time, exactly as `protoc-gen-rust-mcp`
/// would generate them for the same descriptors and options (names, titles, descriptions,
/// annotations, schemas, deadlines), for a gRPC server that was not compiled into the binary.
///
/// The pool's comments and extension options are indexed once, so build every tool set of a
/// pool from one `DescriptorTools`. Descriptions come from source info: load the pool from a
/// descriptor set made with `protoc --include_source_info --include_imports
/// --descriptor_set_out` or `buf build -o`.
///
/// ```no_run
/// # fn demo(bytes: &[u8], channel: tonic::transport::Channel) -> Result<(), Box<dyn std::error::Error>> {
/// use tonic_mcp::{DescriptorTools, McpServer, schema::Options};
///
/// let pool = DescriptorTools::decode_pool(bytes)?; // a tonic_mcp::DescriptorPool
/// let options = Options::parse("tool_names=method,exclude=*.Delete*")?;
/// let tools = DescriptorTools::new(&pool, &options).service("demo.v1.ItemService", channel)?;
/// let server = McpServer::builder("items", "1.0.0").tool_set(tools)?.build();
/// # let _ = server; Ok(()) }
/// ```
#[derive(Debug)]
pub struct DescriptorTools<'a> {
    pool: DescriptorPool,
    options: &'a Options,
    context: Context<'a>,
}

impl<'a> DescriptorTools<'a> {
    /// Decodes an encoded `FileDescriptorSet` (with its imports) into a pool. Editions files
    /// are refused by name first: prost-reflect cannot read them (and 0.16 panics while it
    /// says so).
    ///
    /// # Errors
    ///
    /// [`Error::DescriptorSet`] when the bytes do not decode, a file is an editions file, or
    /// the files do not link.
    pub fn decode_pool(bytes: &[u8]) -> Result<DescriptorPool, Error> {
        use prost::Message as _;
        let set = prost_types::FileDescriptorSet::decode(bytes)
            .map_err(|e| Error::DescriptorSet(e.to_string()))?;
        tonic_mcp_schema::syntax::check(set.file.iter().map(|f| (f.name(), f.syntax.as_deref())))
            .map_err(|e| Error::DescriptorSet(e.to_string()))?;
        DescriptorPool::decode(bytes).map_err(|e| Error::DescriptorSet(e.to_string()))
    }

    /// Index `pool` for tool generation under `options` (the plugin's options: naming,
    /// selection, schema shape; the Rust-output options are ignored).
    pub fn new(pool: &DescriptorPool, options: &'a Options) -> Self {
        Self {
            pool: pool.clone(),
            options,
            context: Context::new(pool, options),
        }
    }

    /// The tools of the service `full_name` (`demo.v1.ItemService`), calling through
    /// `transport`. A service whose RPCs are all left out gives an empty set.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownService`] when the pool has no such service;
    /// [`Error::ToolGeneration`] when its options are invalid or two tools get the same name;
    /// otherwise as for [`ToolSetBuilder::add`].
    pub fn service<T: Transport>(&self, full_name: &str, transport: T) -> Result<ToolSet, Error> {
        self.services([full_name], BoxTransport::new(transport))
    }

    /// The tools of every service in the pool, in one set calling through `transport` (for a
    /// gateway in front of one server).
    ///
    /// # Errors
    ///
    /// As for [`service`](Self::service); tools of two services with the same name are
    /// [`Error::DuplicateTool`].
    pub fn all<T: Transport>(&self, transport: T) -> Result<ToolSet, Error> {
        let names: Vec<String> = self
            .pool
            .services()
            .map(|service| service.full_name().to_owned())
            .collect();
        self.services(
            names.iter().map(String::as_str),
            BoxTransport::new(transport),
        )
    }

    /// The tools of the named services, in one set (not generic: every caller boxes first).
    pub fn services<'n>(
        &self,
        full_names: impl IntoIterator<Item = &'n str>,
        transport: BoxTransport,
    ) -> Result<ToolSet, Error> {
        let mut builder = ToolSetBuilder::with_pool(self.pool.clone(), transport);
        for full_name in full_names {
            let service =
                self.pool
                    .get_service_by_name(full_name)
                    .ok_or_else(|| Error::UnknownService {
                        name: full_name.to_owned(),
                    })?;
            let tools = self
                .context
                .service_tools(&service)
                .map_err(|e| Error::ToolGeneration(e.to_string()))?;
            for spec in tools.tools {
                self.register(&mut builder, spec)?;
            }
        }
        Ok(builder.build())
    }

    fn register(&self, builder: &mut ToolSetBuilder, spec: ToolSpec) -> Result<(), Error> {
        let meta = ToolMeta::from_value(&spec.name, spec.meta())?;
        let ToolSpec {
            name,
            title,
            description,
            rpc_path,
            kind,
            input_type,
            output_type,
            annotations,
            timeout,
            max_messages,
            max_result_bytes,
            output_omitted,
            input_schema,
            output_schema,
            ..
        } = spec;
        let schema = |which: &'static str, value: Value| match value {
            Value::Object(object) => Ok(object),
            _ => Err(Error::InvalidSchema {
                tool: name.clone(),
                which,
                message: "a tool schema must be a JSON object".to_owned(),
            }),
        };
        let input_schema = schema("input", input_schema)?;
        let output_schema = schema("output", output_schema)?;
        let info = ToolInfo {
            name: Cow::Owned(name),
            title: Cow::Owned(title),
            description: Cow::Owned(description),
            rpc_path: Cow::Owned(rpc_path),
            kind,
            input_type: Cow::Owned(input_type),
            output_type: Cow::Owned(output_type),
            annotations,
            json_names: self.options.json_names,
            emit_defaults: self.options.emit_defaults,
            // As the plugin writes it: `Duration::new(seconds, nanos)`, negatives as zero.
            timeout: timeout.map(|(seconds, nanos)| {
                Duration::new(
                    u64::try_from(seconds).unwrap_or(0),
                    u32::try_from(nanos).unwrap_or(0),
                )
            }),
            max_messages,
            max_result_bytes: max_result_bytes.map(|bytes| bytes as usize),
            output_omitted: output_omitted.into_iter().map(Cow::Owned).collect(),
        };
        // The generator's schemas are tested to compile; each compiles on its tool's first call.
        builder.register(info, input_schema, output_schema, Checks::Trusted, meta)
    }
}

impl ToolSet {
    /// The tools of the service `service` (`demo.v1.ItemService`) in `pool`, calling through
    /// `transport`: what the plugin would generate for these descriptors and `options`. To
    /// build several services of one pool, use [`DescriptorTools`] (it indexes the pool once).
    ///
    /// # Errors
    ///
    /// As for [`DescriptorTools::service`].
    pub fn from_pool<T: Transport>(
        pool: &DescriptorPool,
        service: &str,
        options: &Options,
        transport: T,
    ) -> Result<ToolSet, Error> {
        DescriptorTools::new(pool, options).service(service, transport)
    }
}
