//! The resolved model: every package, service and tool, with Rust names, tool metadata and
//! schemas, built before anything is emitted.
//!
//! Descriptors come from a prost-reflect `DescriptorPool` built from the raw request bytes, so
//! extension options survive. Rust names and type paths come from prost-build itself: its
//! `Config::generate` runs with a `ServiceGenerator` that only collects what prost resolved for
//! each method, which honours `extern_path`, keywords, nested types and well-known types exactly
//! as the prost output beside ours.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use prost::Message as _;
use prost_reflect::{DescriptorPool, FileDescriptor};
use prost_types::{FileDescriptorProto, FileDescriptorSet};
use tonic_mcp_schema::comments::Comments;
use tonic_mcp_schema::{Context, ToolSpec, tools};

use crate::error::{Error, Result};
use crate::names;
use crate::options::Options;

pub use tonic_mcp_schema::{Annotations, Omitted, RpcKind};

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
    /// The tool's MCP `_meta` object (RPC identity and serving choices).
    pub meta: serde_json::Value,
}

/// What prost-build resolved for one service.
#[derive(Debug, Clone)]
struct ProstService {
    rust_name: String,
    /// prost's Rust method name (`get_item`, `r#type`) by proto method name.
    methods: BTreeMap<String, String>,
}

/// The request as protoc sends it, keeping each file as raw bytes so that extension options can
/// be read (prost-types would drop them).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RawRequest {
    /// `CodeGeneratorRequest.file_to_generate`.
    #[prost(string, repeated, tag = "1")]
    pub file_to_generate: Vec<String>,
    /// `CodeGeneratorRequest.parameter`.
    #[prost(string, optional, tag = "2")]
    pub parameter: Option<String>,
    /// `CodeGeneratorRequest.proto_file`, undecoded.
    #[prost(bytes = "vec", repeated, tag = "15")]
    pub proto_file: Vec<Vec<u8>>,
}

/// The decoded inputs the model is built from.
#[derive(Debug)]
pub struct Inputs {
    /// Files to generate.
    pub files_to_generate: Vec<String>,
    /// The pool with extension options kept. Built from the request, its files have no source
    /// info: their comments are in `comments`.
    pub pool: DescriptorPool,
    /// The comments of every file.
    pub comments: Comments,
}

/// What the plugin reads of an encoded `FileDescriptorProto` before the pool does: its name
/// and syntax. Every other field is skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct FileName {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, optional, tag = "12")]
    syntax: Option<String>,
}

/// The source info of an encoded `FileDescriptorProto`, every other field skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct SourceInfo {
    #[prost(message, optional, tag = "9")]
    source_code_info: Option<Locations>,
}

/// `SourceCodeInfo` with only what comments need: spans and detached comments are skipped.
#[derive(Clone, PartialEq, prost::Message)]
struct Locations {
    #[prost(message, repeated, tag = "1")]
    location: Vec<Location>,
}

/// `SourceCodeInfo.Location`: its path and comments.
#[derive(Clone, PartialEq, prost::Message)]
struct Location {
    #[prost(int32, repeated, tag = "1")]
    path: Vec<i32>,
    #[prost(string, optional, tag = "3")]
    leading_comments: Option<String>,
    #[prost(string, optional, tag = "4")]
    trailing_comments: Option<String>,
}

impl Inputs {
    /// Decodes the files of a request and builds the descriptor pool, consuming the request:
    /// each file's bytes are freed once the pool has them.
    pub fn from_raw(request: RawRequest) -> Result<Inputs> {
        Self::from_files(request.file_to_generate, request.proto_file)
    }

    /// Source info is read into [`Comments`] and left out of the pool: it is most of a big
    /// request, and the pool would hold it twice (its own form and prost-types').
    fn from_files<B: AsRef<[u8]>>(files_to_generate: Vec<String>, files: Vec<B>) -> Result<Inputs> {
        let mut names = Vec::with_capacity(files.len());
        for bytes in &files {
            let header = FileName::decode(bytes.as_ref())
                .map_err(|e| Error::Descriptor(format!("a proto_file does not decode: {e}")))?;
            names.push(header);
        }
        tonic_mcp_schema::syntax::check(names.iter().map(|h| (h.name(), h.syntax.as_deref())))?;
        let mut comments = Comments::default();
        let mut pool = DescriptorPool::new();
        // One file at a time, so that only one file's source info is decoded at once.
        for (bytes, header) in files.into_iter().zip(names) {
            let bytes = bytes.as_ref();
            let name = header.name();
            let info =
                SourceInfo::decode(bytes).map_err(|e| Error::Descriptor(format!("{name}: {e}")))?;
            let stripped = without_source_info(bytes);
            guard_panic(name, || {
                pool.decode_file_descriptor_proto(stripped.as_slice())
            })?
            .map_err(|e| Error::Descriptor(format!("{name}: {e}")))?;
            if let Some(info) = &info.source_code_info {
                comments.add_locations(
                    name,
                    info.location.iter().map(|l| {
                        (
                            l.path.as_slice(),
                            l.leading_comments.as_deref(),
                            l.trailing_comments.as_deref(),
                        )
                    }),
                );
            }
        }
        Ok(Inputs {
            files_to_generate,
            pool,
            comments,
        })
    }

    /// From an already-parsed descriptor set (the `build.rs` path).
    pub fn from_descriptor_set(bytes: &[u8], files_to_generate: Vec<String>) -> Result<Inputs> {
        let set = FileDescriptorSet::decode(bytes)
            .map_err(|e| Error::Descriptor(format!("the descriptor set does not decode: {e}")))?;
        tonic_mcp_schema::syntax::check(set.file.iter().map(|f| (f.name(), f.syntax.as_deref())))?;
        drop(set);
        let mut pool = DescriptorPool::new();
        guard_panic("the descriptor set", || {
            pool.decode_file_descriptor_set(bytes)
        })?
        .map_err(|e| Error::Descriptor(e.to_string()))?;
        let comments = Comments::index(&pool);
        Ok(Inputs {
            files_to_generate,
            pool,
            comments,
        })
    }

    /// Every file, as prost-types sees it, in request order.
    pub fn files(&self) -> impl ExactSizeIterator<Item = &FileDescriptorProto> + '_ {
        self.pool.file_descriptor_protos()
    }
}

/// Builds the model: resolves names with prost-build, reads options, makes tool metadata and
/// schemas, and checks tool names for collisions.
pub fn build(inputs: &Inputs, options: &Options) -> Result<Model> {
    let prost_services = prost_services(inputs, options)?;
    let context = Context::with_comments(&inputs.pool, options, &inputs.comments);

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
            .entry(names::rust_module(file.package_name()))
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
    let snake = names::tonic_snake_case(&prost.rust_name);
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
            const_name: names::tool_const_name(rust_method),
            input_type: spec.input_type,
            output_type: spec.output_type,
            annotations: spec.annotations,
            timeout: spec.timeout,
            max_messages: spec.max_messages,
            max_result_bytes: spec.max_result_bytes,
            output_omitted: spec.output_omitted,
            input_schema,
            output_schema,
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

/// Runs prost-build over the files to generate and collects the services it resolves.
fn prost_services(inputs: &Inputs, options: &Options) -> Result<BTreeMap<String, ProstService>> {
    #[derive(Default)]
    struct Collect(Rc<RefCell<Vec<prost_build::Service>>>);
    impl prost_build::ServiceGenerator for Collect {
        fn generate(&mut self, service: prost_build::Service, buf: &mut String) {
            // prost-build drops a module whose code is empty and then expects it to exist.
            buf.push_str("// collected\n");
            self.0.borrow_mut().push(service);
        }
    }

    // Only the services matter here, and prost resolves a method's types from their names
    // alone. Giving it the service files without their messages keeps it from generating (and
    // us from holding) the code of every message, which prost-build would also need every
    // imported file for.
    let requests: Vec<(prost_build::Module, FileDescriptorProto)> = inputs
        .files()
        .filter(|f| !f.service.is_empty() && inputs.files_to_generate.iter().any(|g| g == f.name()))
        .map(|f| {
            let services_only = FileDescriptorProto {
                name: f.name.clone(),
                package: f.package.clone(),
                dependency: f.dependency.clone(),
                service: f.service.clone(),
                options: f.options.clone(),
                syntax: f.syntax.clone(),
                ..FileDescriptorProto::default()
            };
            (
                prost_build::Module::from_protobuf_package_name(f.package()),
                services_only,
            )
        })
        .collect();
    let collected = Rc::new(RefCell::new(Vec::new()));
    let mut config = prost_build::Config::new();
    config.service_generator(Box::new(Collect(collected.clone())));
    config.format(false);
    for (proto, rust) in &options.extern_paths {
        config.extern_path(proto, rust);
    }
    // prost-build is a library for build scripts and may panic on input it does not expect; a
    // plugin must report that instead.
    let outcome = catch_unwind(AssertUnwindSafe(|| config.generate(requests)));
    match outcome {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return Err(Error::Unsupported {
                element: "prost-build".to_owned(),
                reason: e.to_string(),
            });
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown panic".to_owned());
            return Err(Error::Unsupported {
                element: "prost-build".to_owned(),
                reason: format!("prost-build failed on this input: {message}"),
            });
        }
    }
    let services = collected.borrow();
    Ok(services
        .iter()
        .map(|s| {
            let full_name = if s.package.is_empty() {
                s.proto_name.clone()
            } else {
                format!("{}.{}", s.package, s.proto_name)
            };
            let methods = s
                .methods
                .iter()
                .map(|m| (m.proto_name.clone(), m.name.clone()))
                .collect();
            (
                full_name,
                ProstService {
                    rust_name: s.name.clone(),
                    methods,
                },
            )
        })
        .collect())
}

/// The descriptors the runtime needs for this package, as an encoded `FileDescriptorSet`.
///
/// That is the package's files, every file defining a type they reach through fields or
/// methods or that `extra_types` (the types long-running operations hold) reach, and the files
/// defining the custom options the runtime reads again
/// ([`RUNTIME_OPTIONS`]: `google.api.field_behavior`, `buf.validate`, `rust_mcp`) when a file of
/// the set imports them. Files are written as the request had them, extension options included,
/// so that the runtime's full-schema check of a shrunk tool sees required, hidden and validated
/// fields as the plugin did. Other imports that only bring options are left out, and so are the
/// files prost-reflect always carries (the well-known types and `descriptor.proto`), which the
/// runtime decodes the set on top of. Source info is stripped. Files are ordered by name with
/// every file after its imports, so the bytes do not depend on the request's file order. When
/// the pruned set does not stand on its own (a type reached through a public import), the full
/// import closure is used instead.
fn descriptor_set(inputs: &Inputs, files: &[String], extra_types: &[String]) -> Vec<u8> {
    let package_files: Vec<FileDescriptor> = files
        .iter()
        .filter_map(|f| inputs.pool.get_file_by_name(f))
        .collect();
    let mut needed: BTreeSet<String> = files.iter().cloned().collect();
    let mut starts: Vec<prost_reflect::MessageDescriptor> = inputs
        .pool
        .all_messages()
        .filter(|m| files.iter().any(|f| f == m.parent_file().name()))
        .collect();
    for file in &package_files {
        for method in file
            .services()
            .flat_map(|service| service.methods().collect::<Vec<_>>())
        {
            starts.push(method.input());
            starts.push(method.output());
        }
    }
    starts.extend(
        extra_types
            .iter()
            .filter_map(|name| inputs.pool.get_message_by_name(name)),
    );
    for message in tools::reachable_messages(starts, |_| true) {
        needed.insert(message.parent_file().name().to_owned());
        for field in message.fields() {
            if let prost_reflect::Kind::Enum(target) = field.kind() {
                needed.insert(target.parent_file().name().to_owned());
            }
        }
    }
    add_option_files(inputs, &mut needed);
    needed.retain(|name| !is_builtin(name));
    let pruned = ordered_files(inputs, &needed);
    // Decoding the set into a pool is the authority, and costly; most sets pass the cheaper
    // check that every type they name is defined where prost-reflect would look for it.
    let with_builtins: Vec<&FileDescriptorProto> = builtin_files().iter().chain(&pruned).collect();
    let encoded = encode_set(inputs, &pruned, &needed);
    if resolves_alone(&with_builtins)
        || DescriptorPool::global()
            .decode_file_descriptor_set(encoded.as_slice())
            .is_ok()
    {
        return encoded;
    }
    let mut closure = BTreeSet::new();
    let mut stack = package_files;
    while let Some(file) = stack.pop() {
        if closure.insert(file.name().to_owned()) {
            stack.extend(file.dependencies());
        }
    }
    closure.retain(|name| !is_builtin(name));
    encode_set(inputs, &ordered_files(inputs, &closure), &closure)
}

/// The extensions the runtime reads from descriptors (`tonic_mcp_schema::extensions`): the
/// files defining them travel with the embedded set.
const RUNTIME_OPTIONS: &[&str] = &[
    "google.api.field_behavior",
    "buf.validate.field",
    "buf.validate.oneof",
    "rust_mcp.tool",
    "rust_mcp.service",
    "rust_mcp.field",
];

/// Adds to `needed` the files defining [`RUNTIME_OPTIONS`] that a file of `needed` imports, and
/// their imports.
fn add_option_files(inputs: &Inputs, needed: &mut BTreeSet<String>) {
    let defining: BTreeSet<String> = RUNTIME_OPTIONS
        .iter()
        .filter_map(|name| inputs.pool.get_extension_by_name(name))
        .map(|extension| extension.parent_file().name().to_owned())
        .collect();
    let mut stack: Vec<FileDescriptor> = needed
        .iter()
        .filter_map(|name| inputs.pool.get_file_by_name(name))
        .flat_map(|file| file.dependencies().collect::<Vec<_>>())
        .filter(|dependency| defining.contains(dependency.name()))
        .collect();
    while let Some(file) = stack.pop() {
        if needed.insert(file.name().to_owned()) {
            stack.extend(file.dependencies());
        }
    }
}

/// The files of prost-reflect's global pool: the well-known types and `descriptor.proto`.
fn builtin_files() -> &'static [FileDescriptorProto] {
    static FILES: std::sync::OnceLock<Vec<FileDescriptorProto>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        DescriptorPool::global()
            .file_descriptor_protos()
            .cloned()
            .collect()
    })
}

/// Whether the runtime has `name` without the embedded set (see [`builtin_files`]).
fn is_builtin(name: &str) -> bool {
    builtin_files().iter().any(|file| file.name() == name)
}

/// The encoded `FileDescriptorSet` of `ordered` (from [`ordered_files`]): each file as the
/// request encoded it, options included, without source info and without imports outside
/// `kept` (and the built-in files).
fn encode_set(
    inputs: &Inputs,
    ordered: &[FileDescriptorProto],
    kept: &BTreeSet<String>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for file in ordered {
        let encoded = match inputs.pool.get_file_by_name(file.name()) {
            Some(descriptor) => rewrite_imports(&descriptor.encode_to_vec(), |name| {
                kept.contains(name) || is_builtin(name)
            }),
            None => file.encode_to_vec(),
        };
        prost::encoding::bytes::encode(1, &encoded, &mut out);
    }
    out
}

/// The files `names` for a `FileDescriptorSet`: imports outside the set dropped, source info
/// stripped, files sorted by name with each after its imports.
fn ordered_files(inputs: &Inputs, names: &BTreeSet<String>) -> Vec<FileDescriptorProto> {
    let by_name: BTreeMap<&str, &FileDescriptorProto> = inputs
        .files()
        .filter(|f| names.contains(f.name()))
        .map(|f| (f.name(), f))
        .collect();
    let mut ordered: Vec<FileDescriptorProto> = Vec::with_capacity(by_name.len());
    let mut placed = BTreeSet::new();
    // Depth-first over imports, iteratively: (file, index of the next import to visit).
    for &root in by_name.keys() {
        let mut stack = vec![(root, 0usize)];
        while let Some((name, next)) = stack.pop() {
            if placed.contains(name) {
                continue;
            }
            let Some(file) = by_name.get(name) else {
                continue;
            };
            let pending = file
                .dependency
                .iter()
                .skip(next)
                .position(|d| by_name.contains_key(d.as_str()) && !placed.contains(d.as_str()));
            match pending {
                Some(offset) => {
                    let dependency = file.dependency[next + offset].as_str();
                    stack.push((name, next + offset + 1));
                    if !stack.iter().any(|(n, _)| *n == dependency) {
                        stack.push((dependency, 0));
                    }
                }
                None => {
                    placed.insert(name);
                    ordered.push(strip(file, names));
                }
            }
        }
    }
    ordered
}

/// Whether a pool built from `files` alone certainly resolves every type they name: each
/// reference is a full name (`.pkg.Type`) defined in the referring file, one of its imports or
/// a file those import publicly (where prost-reflect 0.16 looks), and no option is left
/// uninterpreted (prost-reflect would resolve it). `false` means "not sure": the caller then
/// decodes the set into a pool. The files come from a pool that accepted them with all their
/// imports, so only references into dropped imports can fail.
fn resolves_alone(files: &[&FileDescriptorProto]) -> bool {
    use prost_types::DescriptorProto;

    fn define(
        defined: &mut BTreeMap<String, usize>,
        file: usize,
        scope: &str,
        message: &DescriptorProto,
    ) {
        let name = format!("{scope}.{}", message.name());
        for nested in &message.nested_type {
            define(defined, file, &name, nested);
        }
        for e in &message.enum_type {
            defined.insert(format!("{name}.{}", e.name()), file);
        }
        defined.insert(name, file);
    }
    fn references<'a>(message: &'a DescriptorProto, out: &mut Vec<&'a str>) -> bool {
        let uninterpreted = message
            .options
            .as_ref()
            .is_some_and(|o| !o.uninterpreted_option.is_empty())
            || message.field.iter().chain(&message.extension).any(|f| {
                f.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
            || message.oneof_decl.iter().any(|o| {
                o.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
            || message.enum_type.iter().any(enum_uninterpreted);
        if uninterpreted {
            return false;
        }
        for field in message.field.iter().chain(&message.extension) {
            out.extend(field.type_name.as_deref().filter(|n| !n.is_empty()));
            out.extend(field.extendee.as_deref().filter(|n| !n.is_empty()));
        }
        message
            .nested_type
            .iter()
            .all(|nested| references(nested, out))
    }
    fn enum_uninterpreted(e: &prost_types::EnumDescriptorProto) -> bool {
        e.options
            .as_ref()
            .is_some_and(|o| !o.uninterpreted_option.is_empty())
            || e.value.iter().any(|v| {
                v.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
    }

    let index: BTreeMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name(), i))
        .collect();
    let mut defined = BTreeMap::new();
    for (i, file) in files.iter().enumerate() {
        let scope = if file.package().is_empty() {
            String::new()
        } else {
            format!(".{}", file.package())
        };
        for message in &file.message_type {
            define(&mut defined, i, &scope, message);
        }
        for e in &file.enum_type {
            defined.insert(format!("{scope}.{}", e.name()), i);
        }
    }
    // A file and the files it imports publicly, transitively.
    let public = |start: usize| {
        let mut seen = BTreeSet::from([start]);
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            let file = &files[i];
            for &p in &file.public_dependency {
                let dep = usize::try_from(p)
                    .ok()
                    .and_then(|p| file.dependency.get(p))
                    .and_then(|d| index.get(d.as_str()))?;
                if seen.insert(*dep) {
                    stack.push(*dep);
                }
            }
        }
        Some(seen)
    };
    for (i, file) in files.iter().enumerate() {
        let mut visible = BTreeSet::from([i]);
        for dependency in &file.dependency {
            let Some(dep) = index.get(dependency.as_str()).and_then(|&d| public(d)) else {
                return false;
            };
            visible.extend(dep);
        }
        let uninterpreted = file
            .options
            .as_ref()
            .is_some_and(|o| !o.uninterpreted_option.is_empty())
            || file.enum_type.iter().any(enum_uninterpreted)
            || file.extension.iter().any(|f| {
                f.options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
            })
            || file.service.iter().any(|service| {
                service
                    .options
                    .as_ref()
                    .is_some_and(|o| !o.uninterpreted_option.is_empty())
                    || service.method.iter().any(|m| {
                        m.options
                            .as_ref()
                            .is_some_and(|o| !o.uninterpreted_option.is_empty())
                    })
            });
        if uninterpreted {
            return false;
        }
        let mut names = Vec::new();
        for message in &file.message_type {
            if !references(message, &mut names) {
                return false;
            }
        }
        for field in &file.extension {
            names.extend(field.type_name.as_deref().filter(|n| !n.is_empty()));
            names.extend(field.extendee.as_deref().filter(|n| !n.is_empty()));
        }
        for method in file.service.iter().flat_map(|s| &s.method) {
            names.extend(method.input_type.as_deref());
            names.extend(method.output_type.as_deref());
        }
        let resolves = |name: &str| {
            name.starts_with('.')
                && defined
                    .get(name)
                    .is_some_and(|defining| visible.contains(defining))
        };
        if !names.into_iter().all(resolves) {
            return false;
        }
    }
    true
}

/// A file without source info and without imports outside `kept`.
fn strip(file: &FileDescriptorProto, kept: &BTreeSet<String>) -> FileDescriptorProto {
    let mut out = file.clone();
    out.source_code_info = None;
    let old: Vec<String> = std::mem::take(&mut out.dependency);
    let index_of = |i: i32| usize::try_from(i).ok().and_then(|i| old.get(i));
    out.dependency = old
        .iter()
        .filter(|d| kept.contains(d.as_str()) || is_builtin(d))
        .cloned()
        .collect();
    let new_index = |name: &String| out.dependency.iter().position(|d| d == name);
    out.public_dependency = file
        .public_dependency
        .iter()
        .filter_map(|&i| index_of(i).and_then(new_index))
        .filter_map(|i| i32::try_from(i).ok())
        .collect();
    out.weak_dependency = file
        .weak_dependency
        .iter()
        .filter_map(|&i| index_of(i).and_then(new_index))
        .filter_map(|i| i32::try_from(i).ok())
        .collect();
    out
}

/// An encoded `FileDescriptorProto` without its `source_code_info` (field 9), every other
/// field byte for byte (extension options included). Bytes that do not scan as protobuf are
/// returned whole, for the pool to report.
fn without_source_info(bytes: &[u8]) -> Vec<u8> {
    const SOURCE_CODE_INFO: u64 = 9;
    fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *bytes.get(*at)?;
            *at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let scan = || -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut at = 0;
        while at < bytes.len() {
            let start = at;
            let key = varint(bytes, &mut at)?;
            match key & 7 {
                0 => {
                    varint(bytes, &mut at)?;
                }
                1 => at = at.checked_add(8)?,
                2 => {
                    let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                    at = at.checked_add(len)?;
                }
                5 => at = at.checked_add(4)?,
                // Groups never appear in a descriptor; leave such bytes to the pool.
                _ => return None,
            }
            if at > bytes.len() {
                return None;
            }
            if key != (SOURCE_CODE_INFO << 3 | 2) {
                out.extend_from_slice(&bytes[start..at]);
            }
        }
        Some(out)
    };
    scan().unwrap_or_else(|| bytes.to_vec())
}

/// An encoded `FileDescriptorProto` without its `source_code_info` and without the imports
/// (`dependency`, field 3) that `keep` refuses; `public_dependency` (10) and `weak_dependency`
/// (11), indexes into the imports, are renumbered. Every other field stays byte for byte,
/// extension options included. Bytes that do not scan as protobuf are returned whole, for the
/// pool to report.
fn rewrite_imports(bytes: &[u8], keep: impl Fn(&str) -> bool) -> Vec<u8> {
    use prost::encoding::{DecodeContext, decode_key, int32, skip_field, string};
    let scan = || -> Option<Vec<u8>> {
        let mut buf = bytes;
        let mut out = Vec::with_capacity(buf.len());
        let mut imports: Vec<String> = Vec::new();
        let (mut public, mut weak): (Vec<i32>, Vec<i32>) = (Vec::new(), Vec::new());
        while !buf.is_empty() {
            let start = buf;
            let (tag, wire_type) = decode_key(&mut buf).ok()?;
            let context = DecodeContext::default();
            match tag {
                3 => string::merge_repeated(wire_type, &mut imports, &mut buf, context).ok()?,
                10 => int32::merge_repeated(wire_type, &mut public, &mut buf, context).ok()?,
                11 => int32::merge_repeated(wire_type, &mut weak, &mut buf, context).ok()?,
                // `source_code_info`: dropped.
                9 => skip_field(wire_type, tag, &mut buf, context).ok()?,
                _ => {
                    skip_field(wire_type, tag, &mut buf, context).ok()?;
                    out.extend_from_slice(&start[..start.len() - buf.len()]);
                }
            }
        }
        let kept: Vec<&String> = imports.iter().filter(|name| keep(name)).collect();
        let renumber = |indexes: &[i32]| -> Vec<i32> {
            indexes
                .iter()
                .filter_map(|&i| usize::try_from(i).ok().and_then(|i| imports.get(i)))
                .filter_map(|name| kept.iter().position(|k| *k == name))
                .filter_map(|i| i32::try_from(i).ok())
                .collect()
        };
        for name in &kept {
            string::encode(3, name, &mut out);
        }
        for index in renumber(&public) {
            int32::encode(10, &index, &mut out);
        }
        for index in renumber(&weak) {
            int32::encode(11, &index, &mut out);
        }
        Some(out)
    };
    scan().unwrap_or_else(|| bytes.to_vec())
}

/// Runs prost-reflect on a descriptor `element`. prost-reflect 0.16 can panic while it
/// describes some invalid descriptors (an index past the files it has added, when the error
/// is in the file being added); the plugin reports that as an error naming the file instead.
fn guard_panic<T>(element: &str, run: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).map_err(|_| {
        Error::Descriptor(format!(
            "{element}: the descriptor is invalid (prost-reflect failed while checking it); \
             check it with protoc"
        ))
    })
}

#[cfg(test)]
mod tests {
    use prost_types::{DescriptorProto, FieldDescriptorProto, field_descriptor_proto::Type};

    use super::*;

    fn file(name: &str, package: &str, dependency: &[&str], public: &[i32]) -> FileDescriptorProto {
        FileDescriptorProto {
            name: Some(name.to_owned()),
            package: Some(package.to_owned()),
            dependency: dependency.iter().map(|d| (*d).to_owned()).collect(),
            public_dependency: public.to_vec(),
            syntax: Some("proto3".to_owned()),
            ..FileDescriptorProto::default()
        }
    }

    fn message(name: &str, type_name: Option<&str>) -> DescriptorProto {
        DescriptorProto {
            name: Some(name.to_owned()),
            field: type_name
                .map(|t| FieldDescriptorProto {
                    name: Some("f".to_owned()),
                    number: Some(1),
                    r#type: Some(Type::Message as i32),
                    type_name: Some(t.to_owned()),
                    json_name: Some("f".to_owned()),
                    ..FieldDescriptorProto::default()
                })
                .into_iter()
                .collect(),
            ..DescriptorProto::default()
        }
    }

    /// The cheap check never says "resolves" where prost-reflect refuses the set, and says it
    /// for the ordinary shapes.
    #[test]
    fn resolves_alone_agrees_with_the_pool() {
        let mut b = file("b.proto", "b", &[], &[]);
        b.message_type.push(message("B", None));
        let mut a = file("a.proto", "a", &["b.proto"], &[]);
        a.message_type.push(message("A", Some(".b.B")));
        let mut c_public = file("c.proto", "c", &["b.proto"], &[0]);
        c_public.message_type.push(message("C", None));
        let mut c_private = c_public.clone();
        c_private.public_dependency.clear();
        let mut via_c = file("a.proto", "a", &["c.proto"], &[]);
        via_c.message_type.push(message("A", Some(".b.B")));
        let mut dangling = file("a.proto", "a", &[], &[]);
        dangling.message_type.push(message("A", Some(".b.B")));
        let mut relative = a.clone();
        relative.message_type[0].field[0].type_name = Some("b.B".to_owned());

        let cases: Vec<(Vec<FileDescriptorProto>, bool)> = vec![
            (vec![b.clone(), a.clone()], true),
            (vec![b.clone(), c_public, via_c.clone()], true),
            (vec![b.clone(), c_private, via_c], false),
            (vec![dangling], false),
            (vec![b, relative], false),
        ];
        for (files, expected) in cases {
            let decodes = DescriptorPool::decode(
                FileDescriptorSet {
                    file: files.clone(),
                }
                .encode_to_vec()
                .as_slice(),
            )
            .is_ok();
            let cheap = resolves_alone(&files.iter().collect::<Vec<_>>());
            assert_eq!(cheap, expected, "{files:?}");
            assert!(
                !cheap || decodes,
                "resolves_alone said yes, the pool says no: {files:?}"
            );
        }
    }
}
