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

use crate::error::{Error, Result};
use crate::options::PluginOptions;
use crate::rust_names;

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
            .flat_map(|t| t.stderr_lines.iter().cloned())
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

/// One RPC as an MCP tool.
#[derive(Debug)]
pub struct Tool {
    /// The tool name, final (prefix applied, shortened if needed).
    pub name: String,
    /// Human-readable title.
    pub title: String,
    /// The description shown to the model.
    pub description: String,
    /// `/demo.v1.ItemService/GetItem`.
    pub rpc_path: String,
    /// How the RPC streams.
    pub kind: RpcKind,
    /// The `const` holding the tool definition (`GET_ITEM`, from prost's method name).
    pub const_name: String,
    /// Full proto name of the request message.
    pub input_type: String,
    /// Full proto name of the response message.
    pub output_type: String,
    /// Hints.
    pub annotations: Annotations,
    /// Per-tool deadline as (seconds, nanos).
    pub timeout: Option<(i64, i32)>,
    /// Server-streaming collection bound.
    pub max_messages: Option<u32>,
    /// The tool's result budget in bytes of JSON.
    pub max_result_bytes: Option<u32>,
    /// Full names of fields reachable from the response that its schema leaves out (hidden or
    /// `INPUT_ONLY`); the runtime clears them before encoding a result, sorted.
    pub output_omitted: Vec<String>,
    /// The input schema, as minified JSON. Text, not a `serde_json::Value`: a package of
    /// thousands of tools holds far less this way, and the emitters write text.
    pub input_schema: String,
    /// The output schema, as minified JSON.
    pub output_schema: String,
    /// What stderr says about this tool: how the schema budget shrank it, and notes such as a
    /// long-running RPC that cannot be waited for.
    pub stderr_lines: Vec<String>,
    /// The types its long-running operation holds (`operation_info`'s response and metadata
    /// types), which the embedded descriptor set must hold too.
    pub operation_types: Vec<String>,
    /// Whether calls may run as MCP tasks.
    pub task_support: TaskSupport,
    /// Ask the user before calling, and what to do when the client cannot be asked.
    pub confirm: Option<Unconfirmed>,
    /// The operation's response and metadata types, when calls wait for the
    /// `google.longrunning.Operation` the RPC returns.
    pub wait_for_operation: Option<(String, Option<String>)>,
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
            .flat_map(|tool| tool.operation_types.iter().cloned())
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
        if let Some(other) = consts.insert(tool.const_name.clone(), &tool.rpc_path) {
            return Err(Error::Unsupported {
                element: service.full_name().to_owned(),
                reason: format!(
                    "{other} and {} both map to the Rust constant {}",
                    tool.rpc_path, tool.const_name
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
    fn new(spec: ToolSpec, rust_method: &str) -> Result<Tool> {
        let stderr_lines = spec.stderr_lines();
        let operation_types = spec
            .long_running
            .iter()
            .flat_map(|lro| std::iter::once(&lro.response_type).chain(&lro.metadata_type))
            .cloned()
            .collect();
        let meta = spec.meta();
        let wait_for_operation = spec
            .long_running
            .as_ref()
            .filter(|lro| lro.wait)
            .map(|lro| (lro.response_type.clone(), lro.metadata_type.clone()));
        // serde_json's writer into a byte buffer: `Value`'s `Display` goes through a
        // formatter adapter and costs about twice as much.
        let minified = |schema: &serde_json::Value| {
            serde_json::to_string(schema).map_err(|e| {
                Error::Internal(format!(
                    "the schema of {} does not serialize: {e}",
                    spec.name
                ))
            })
        };
        let input_schema = minified(&spec.input_schema)?;
        let output_schema = minified(&spec.output_schema)?;
        Ok(Tool {
            stderr_lines,
            operation_types,
            name: spec.name,
            title: spec.title,
            description: spec.description,
            rpc_path: spec.rpc_path,
            kind: spec.kind,
            const_name: rust_names::tool_const_name(rust_method),
            input_type: spec.input_type,
            output_type: spec.output_type,
            annotations: spec.annotations,
            timeout: spec.timeout,
            max_messages: spec.max_messages,
            max_result_bytes: spec.max_result_bytes,
            output_omitted: spec.output_omitted,
            input_schema,
            output_schema,
            task_support: spec.task_support,
            confirm: spec.confirm,
            wait_for_operation,
            meta,
        })
    }
}

fn check_collisions(packages: &[Package]) -> Result<()> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for tool in packages
        .iter()
        .flat_map(|p| &p.services)
        .flat_map(|s| &s.tools)
    {
        if let Some(first) = seen.insert(&tool.name, &tool.rpc_path) {
            return Err(Error::ToolNameCollision {
                name: tool.name.clone(),
                first: first.to_owned(),
                second: tool.rpc_path.clone(),
            });
        }
    }
    Ok(())
}
