//! The resolved model: every package, service and tool, with Rust names, tool metadata and
//! schemas, built before anything is emitted.
//!
//! Descriptors come from a prost-reflect `DescriptorPool` built from the raw request bytes, so
//! extension options survive. Rust names and type paths come from prost-build itself: its
//! `Config::generate` runs with a `ServiceGenerator` that only collects what prost resolved for
//! each method, which honours `extern_path`, keywords, nested types and well-known types exactly
//! as the prost output beside ours.

mod descriptor_set;
mod inputs;
mod prost_services;

use std::collections::BTreeMap;

use tonic_mcp_schema::{Context, ToolSpec};

use crate::options::PluginOptions;
use crate::rust_names;
use tonic_mcp_schema::error::{Error, Result};

use self::descriptor_set::descriptor_set;
use self::prost_services::{ProstService, prost_services};

pub use self::inputs::{Inputs, RawRequest};
pub use tonic_mcp_schema::{Annotations, Omitted, RpcKind, TaskSupport, Unconfirmed};

/// Everything to emit for one request.
#[derive(Debug)]
pub struct Model {
    /// Packages that have at least one service in the files to generate, sorted by name.
    pub packages: Vec<Package>,
}

impl Model {
    /// The stderr lines of every tool (see `Tool::stderr_lines`), in output order.
    pub fn shrink_lines(&self) -> Vec<String> {
        self.packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.tools)
            .flat_map(|t| t.spec.stderr_lines())
            .collect()
    }
}

/// One proto package.
#[derive(Debug)]
pub struct Package {
    /// The proto package (`demo.v1`, or empty). Packages that prost puts in one Rust module
    /// (`Foo.Bar` and `foo.bar`) are one `Package`, named after the first file's package.
    pub name: String,
    /// The `.proto` files of this package among the files to generate, sorted.
    pub files: Vec<String>,
    /// Services, sorted by full name (skipped services are left out).
    pub services: Vec<Service>,
    /// Encoded `FileDescriptorSet`: the package's files and what the runtime needs of their
    /// imports (see `descriptor_set`), without source info, in dependency order.
    pub descriptor_set: Vec<u8>,
}

/// One service with its tools.
#[derive(Debug)]
pub struct Service {
    /// `demo.v1.ItemService`.
    pub full_name: String,
    /// Rust name of the service as prost and tonic spell it (`ItemService`).
    pub rust_name: String,
    /// tonic's server module (`item_service_server`).
    pub server_mod: String,
    /// Our module (`item_service_mcp`).
    pub mcp_mod: String,
    /// The tools, sorted by name.
    pub tools: Vec<Tool>,
    /// RPCs that are not tools, with the reason, in declaration order.
    pub omitted: Vec<Omitted>,
}

/// One RPC as an MCP tool: the shared generator's definition, and what the Rust emitter adds.
#[derive(Debug)]
pub struct Tool {
    /// The tool as the schema generator defines it. Its `input_schema` and `output_schema`
    /// trees are moved out into the minified text below (and left `null`): a package of
    /// thousands of tools holds far less this way, and the emitters write text.
    pub spec: ToolSpec,
    /// The `const` holding the tool definition (`GET_ITEM`, from prost's method name).
    pub const_name: String,
    /// The input schema, as minified JSON.
    pub input_schema: String,
    /// The output schema, as minified JSON.
    pub output_schema: String,
    /// The tool's MCP `_meta` object (RPC identity and serving choices), for the wire.
    pub meta: serde_json::Value,
}

/// Builds the model: resolves names with prost-build, reads options, makes tool metadata and
/// schemas, and checks tool names for collisions.
pub fn build(inputs: &Inputs, options: &PluginOptions) -> Result<Model> {
    let prost_services = prost_services(inputs, options)?;
    let context = Context::with_comments(&inputs.pool, &options.tools, &inputs.comments);

    // Keyed by prost's Rust module: packages that prost puts in one module (`Foo.Bar` and
    // `foo.bar`) share one MCP file, as they share one prost file.
    let mut packages: BTreeMap<prost_build::Module, Package> = BTreeMap::new();
    for file_name in &inputs.files_to_generate {
        let Some(file) = inputs.pool.get_file_by_name(file_name) else {
            return Err(Error::Descriptor(format!(
                "`{file_name}` is to be generated but is not in the request"
            )));
        };
        let package = packages
            .entry(rust_names::rust_module(file.package_name()))
            .or_insert_with(|| Package {
                name: file.package_name().to_owned(),
                files: Vec::new(),
                services: Vec::new(),
                descriptor_set: Vec::new(),
            });
        package.files.push(file_name.clone());
        for service in file.services() {
            let service_tools = context.service_tools(&service)?;
            // A service whose every RPC is skipped or filtered out gets no module: there would
            // be nothing to register, and an empty `from_channel` would only warn in the user's
            // crate.
            if service_tools.tools.is_empty() {
                continue;
            }
            let Some(prost) = prost_services.get(service.full_name()) else {
                return Err(Error::Internal(format!(
                    "prost-build reported no service {}",
                    service.full_name()
                )));
            };
            package
                .services
                .push(rust_service(&service, prost, service_tools)?);
        }
    }

    let mut packages: Vec<Package> = packages
        .into_values()
        .filter(|p| !p.services.is_empty())
        .collect();
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    for package in &mut packages {
        package.files.sort();
        package
            .services
            .sort_by(|a, b| a.full_name.cmp(&b.full_name));
        // The types a long-running tool's operation holds are named only in an option: the
        // runtime needs them to unpack the response and the metadata.
        let operation_types: Vec<String> = package
            .services
            .iter()
            .flat_map(|service| &service.tools)
            .filter_map(|tool| tool.spec.long_running.as_ref())
            .flat_map(|lro| std::iter::once(&lro.response_type).chain(&lro.metadata_type))
            .cloned()
            .collect();
        package.descriptor_set = descriptor_set(inputs, &package.files, &operation_types);
    }
    check_collisions(&packages)?;
    Ok(Model { packages })
}

/// A service's tools with the Rust names prost-build resolved for it.
fn rust_service(
    service: &prost_reflect::ServiceDescriptor,
    prost: &ProstService,
    service_tools: tonic_mcp_schema::ServiceTools,
) -> Result<Service> {
    let mut tools = Vec::with_capacity(service_tools.tools.len());
    for spec in service_tools.tools {
        let Some(rust_method) = prost.methods.get(&spec.method) else {
            return Err(Error::Internal(format!(
                "prost-build reported no method {}.{}",
                service.full_name(),
                spec.method
            )));
        };
        tools.push(Tool::new(spec, rust_method)?);
    }
    // Two tools of one service would also collide as Rust constants.
    let mut consts = BTreeMap::new();
    for tool in &tools {
        if let Some(other) = consts.insert(tool.const_name.clone(), &tool.spec.rpc_path) {
            return Err(Error::Unsupported {
                element: service.full_name().to_owned(),
                reason: format!(
                    "{other} and {} both map to the Rust constant {}",
                    tool.spec.rpc_path, tool.const_name
                ),
            });
        }
    }
    let snake = rust_names::tonic_snake_case(&prost.rust_name);
    Ok(Service {
        full_name: service.full_name().to_owned(),
        rust_name: prost.rust_name.clone(),
        server_mod: format!("{snake}_server"),
        mcp_mod: format!("{snake}_mcp"),
        tools,
        omitted: service_tools.omitted,
    })
}

impl Tool {
    fn new(mut spec: ToolSpec, rust_method: &str) -> Result<Tool> {
        let meta = spec.meta();
        // serde_json's writer into a byte buffer: `Value`'s `Display` goes through a
        // formatter adapter and costs about twice as much.
        let name = &spec.name;
        let minified = |schema: serde_json::Value| {
            serde_json::to_string(&schema).map_err(|e| {
                Error::Internal(format!("the schema of {name} does not serialize: {e}"))
            })
        };
        let input_schema = minified(std::mem::take(&mut spec.input_schema))?;
        let output_schema = minified(std::mem::take(&mut spec.output_schema))?;
        Ok(Tool {
            const_name: rust_names::tool_const_name(rust_method),
            input_schema,
            output_schema,
            meta,
            spec,
        })
    }

    /// The operation's response and metadata types, when calls wait for the
    /// `google.longrunning.Operation` the RPC returns.
    pub fn wait_for_operation(&self) -> Option<(&str, Option<&str>)> {
        let lro = self.spec.long_running.as_ref().filter(|lro| lro.wait)?;
        Some((&lro.response_type, lro.metadata_type.as_deref()))
    }
}

fn check_collisions(packages: &[Package]) -> Result<()> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for tool in packages
        .iter()
        .flat_map(|p| &p.services)
        .flat_map(|s| &s.tools)
    {
        if let Some(first) = seen.insert(&tool.spec.name, &tool.spec.rpc_path) {
            return Err(Error::ToolNameCollision {
                name: tool.spec.name.clone(),
                first: first.to_owned(),
                second: tool.spec.rpc_path.clone(),
            });
        }
    }
    Ok(())
}
