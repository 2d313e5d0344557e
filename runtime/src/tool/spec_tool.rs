//! A tool made at run time from a [`ToolSpec`] (the schema generator's description of one RPC's
//! tool), ready to register: the seam through which tools made from descriptors (the add-on
//! crate `tonic-mcp-dynamic`, which the gateway uses) enter a [`ToolSetBuilder`].
//!
//! [`ToolSetBuilder`]: crate::codegen::ToolSetBuilder

use std::{borrow::Cow, sync::Arc, time::Duration};

use prost_reflect::DescriptorPool;
use tonic_mcp_schema::{Options, ToolSpec};

use crate::{
    error::Error,
    grpc::BoxTransport,
    tool::def::ToolInfo,
    tool::schemas::{MadeSchemas, MakeSchemas, Schemas},
    tool::set_pools::{SetPools, package_of_rpc},
    tool::types::{Later, Types},
};

/// A tool made from a [`ToolSpec`] at run time, to register with
/// [`ToolSetBuilder::add_spec_tool`](crate::codegen::ToolSetBuilder::add_spec_tool): the tool
/// the plugin would generate from the same spec, its schemas given or made when first needed.
///
/// It can be made on any thread (it is `Send`) and registered later, in the order the caller
/// chooses. Its message types are resolved in the builder's pool when it is registered, or,
/// once [`resolve_later`](Self::resolve_later) has been called, in its package's pool of a
/// [`SetPools`] on its first call.
pub struct SpecTool {
    info: ToolInfo,
    schemas: Schemas,
    /// For a tool of a set's package: where its types are resolved on its first call.
    later: Option<Later>,
}

impl std::fmt::Debug for SpecTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpecTool")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl SpecTool {
    /// The tool of `spec` with the schemas `made` (the spec's own `input_schema` and
    /// `output_schema` are not read). `options` are those `spec` was made under (their JSON
    /// naming and default-value settings shape the tool's results); `service_description` is
    /// the proto comment of the tool's service, shared by its tools.
    pub fn new(
        spec: ToolSpec,
        options: &Options,
        service_description: Option<Arc<str>>,
        made: MadeSchemas,
    ) -> Self {
        Self::with_schemas(spec, options, service_description, Schemas::ready(made))
    }

    /// As [`new`](Self::new), with schemas `maker` makes when they are first needed (a
    /// `tools/list` page that shows the tool, `describe_tools`, its first call), then kept;
    /// `maker` is dropped once it has made them. A tool whose schemas cannot be made is left
    /// out of listings, and its calls fail saying why; the error is logged once.
    pub fn later(
        spec: ToolSpec,
        options: &Options,
        service_description: Option<Arc<str>>,
        maker: Box<dyn MakeSchemas>,
    ) -> Self {
        Self::with_schemas(spec, options, service_description, Schemas::later(maker))
    }

    fn with_schemas(
        spec: ToolSpec,
        options: &Options,
        service_description: Option<Arc<str>>,
        schemas: Schemas,
    ) -> Self {
        // The `_meta` object as the schema crate makes it.
        let meta = spec.meta();
        let meta = meta
            .is_object()
            .then(|| serde_json::to_string(&meta).ok())
            .flatten()
            .map(Cow::Owned);
        let wait_for = spec
            .long_running
            .as_ref()
            .filter(|lro| lro.wait)
            .map(|lro| (lro.response_type.clone(), lro.metadata_type.clone()));
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
            task_support,
            confirm,
            required_scopes,
            ..
        } = spec;
        let info = ToolInfo {
            name: Cow::Owned(name),
            title: Cow::Owned(title),
            description: Cow::Owned(description),
            rpc_path: Cow::Owned(rpc_path),
            kind,
            input_type: Cow::Owned(input_type),
            output_type: Cow::Owned(output_type),
            annotations,
            json_names: options.json_names,
            emit_defaults: options.emit_defaults,
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
            service_description,
            meta,
            task_support,
            confirm,
            required_scopes: required_scopes.into_iter().map(Cow::Owned).collect(),
            wait_for,
        };
        Self {
            info,
            schemas,
            later: None,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// Its RPC's path, `/package.Service/Method`.
    pub fn rpc_path(&self) -> &str {
        &self.info.rpc_path
    }

    /// Serves the tool under `name` instead (checked when it is registered).
    pub fn rename(&mut self, name: String) {
        self.info.name = Cow::Owned(name);
    }

    /// The tool's schemas, made now if they are made when first needed and this is the first
    /// time; or why they cannot be made.
    ///
    /// # Errors
    ///
    /// The schemas cannot be made (the message names the proto element).
    pub fn schemas(&self) -> Result<&MadeSchemas, &str> {
        self.schemas.get(&self.info.name)
    }

    /// Resolves the tool's message types once in `pool`, the pool of its package in `set`
    /// (what does not resolve is refused now, as registering a tool refuses it), then lets
    /// them go: the registered tool resolves them again in its package's pool of `set` on its
    /// first call, so that a server holds the pools of the packages whose tools are called.
    /// `transport` is the one the tool will call through (a tool that waits for its
    /// long-running operation checks the Operations endpoints on it).
    ///
    /// # Errors
    ///
    /// As for [`ToolSetBuilder::add`](crate::codegen::ToolSetBuilder::add): an unknown
    /// message type, an operation's types that do not resolve.
    pub fn resolve_later(
        &mut self,
        set: &Arc<SetPools>,
        pool: &DescriptorPool,
        transport: &BoxTransport,
    ) -> Result<(), Error> {
        let types = Types::resolve(&self.info, pool, transport)?;
        let package = package_of_rpc(&self.info.rpc_path);
        self.later = Some(Later::new(set, package, &types));
        Ok(())
    }

    /// The tool's parts, for registration.
    pub(crate) fn into_parts(self) -> (ToolInfo, Schemas, Option<Later>) {
        (self.info, self.schemas, self.later)
    }
}

#[cfg(test)]
mod tests;
