//! Tools from descriptors at run time, for a tonic-mcp server: the same tool definitions
//! `protoc-gen-rust-mcp` generates, made by the same code (`tonic-mcp-schema`) from a
//! descriptor pool, for a gRPC server that was not compiled into the binary. This is what
//! `grpc-mcp-gateway` serves.
//!
//! It wraps the runtime crate `tonic-mcp`: each tool is a [`tonic_mcp::SpecTool`], registered
//! with [`ToolSetBuilder::add_spec_tool`], its schemas made with it or, with
//! [`DescriptorTools::lazy_schemas`], by a [`tonic_mcp::MakeSchemas`] when first needed.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use prost_reflect::{DescriptorPool, ServiceDescriptor};
use tonic_mcp_schema::{
    Context, Options, ToolSpec, comments::Comments, names, options::ToolNames, source_info, tools,
};

mod lazy;
mod make;
mod packages;
mod schema_texts;

use lazy::{Pools, SchemaSource};
use make::{MAX_THREADS, Made, Maker, make_run, runs, served_name};
use packages::ByPackage;
use schema_texts::SchemaTexts;

use tonic_mcp::{
    Error, SetPools, ToolSet,
    codegen::{BoxTransport, ToolSetBuilder, Transport},
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
/// use tonic_mcp::{McpServer, schema::Options};
/// use tonic_mcp_dynamic::DescriptorTools;
///
/// let pool = DescriptorTools::decode_pool(bytes)?; // a tonic_mcp::DescriptorPool
/// let options = Options::parse("tool_names=method,exclude=*.Delete*")?;
/// let tools = DescriptorTools::new(&pool, &options).service("demo.v1.ItemService", channel)?;
/// let server = McpServer::builder("items", "1.0.0").tool_set(tools)?.build();
/// # let _ = server; Ok(()) }
/// ```
#[derive(Debug)]
pub struct DescriptorTools<'a> {
    pools: Pools,
    options: &'a Options,
    comments: Arc<Comments>,
    /// Per RPC path: the name its tool would have, and the one it gets instead
    /// ([`unique_names`](Self::unique_names)).
    renamed: HashMap<String, (String, String)>,
    /// What the tools' schemas are made from when first needed
    /// ([`lazy_schemas`](Self::lazy_schemas)); `None` to make them with the tools.
    later: Option<Arc<SchemaSource>>,
    /// The schema texts made, shared by every tool made here.
    texts: Arc<SchemaTexts>,
    /// Of a [`SetPools`]: the services whose tools' names [`unique_names`](Self::unique_names)
    /// qualifies, named while their tools are made.
    unique: Option<Vec<String>>,
}

/// A descriptor set decoded for tool generation by [`DescriptorTools::decode`]: its pool, built
/// without the files' source info, and the comments that source info held, for descriptions.
#[derive(Debug, Clone)]
pub struct DecodedDescriptors {
    pool: DescriptorPool,
    comments: Arc<Comments>,
}

impl DecodedDescriptors {
    /// The pool, without source info.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }
}

impl<'a> DescriptorTools<'a> {
    /// Decodes an encoded `FileDescriptorSet` (with its imports) into a pool. Editions files
    /// are refused by name first: prost-reflect cannot read them (and 0.16 panics while it
    /// says so).
    ///
    /// The files are added one at a time, each after the files it imports (the set may list
    /// them in any order). The pool is the one prost-reflect's `DescriptorPool::decode` builds,
    /// without that call's decoded copy of the whole set beside it while it builds, which the
    /// process would keep after the peak.
    ///
    /// # Errors
    ///
    /// [`Error::DescriptorSet`] when the bytes do not decode, a file is an editions file, or
    /// the files do not link.
    pub fn decode_pool(bytes: &[u8]) -> Result<DescriptorPool, Error> {
        source_info::decode_set_with_source_info(bytes).map_err(descriptor_set)
    }

    /// As [`decode_pool`](Self::decode_pool), with the pool built without the files' source
    /// info and their comments kept beside it, for descriptions: build the tool sets with
    /// [`of`](Self::of). Source info is most of a descriptor set with comments (three quarters
    /// of googleapis'), and a pool holds it twice, so a large set takes about half the memory
    /// this way. The tools are the same.
    ///
    /// # Errors
    ///
    /// As for [`decode_pool`](Self::decode_pool).
    pub fn decode(bytes: &[u8]) -> Result<DecodedDescriptors, Error> {
        let (pool, comments) = source_info::decode_set(bytes).map_err(descriptor_set)?;
        Ok(DecodedDescriptors {
            pool,
            comments: Arc::new(comments),
        })
    }

    /// Index `decoded` for tool generation under `options`: [`new`](Self::new) for what
    /// [`decode`](Self::decode) gives.
    pub fn of(decoded: &'a DecodedDescriptors, options: &'a Options) -> Self {
        Self::with_comments(&decoded.pool, Arc::clone(&decoded.comments), options)
    }

    /// Index `pool` for tool generation under `options` (the plugin's options: naming,
    /// selection, schema shape; the Rust-output options are ignored).
    pub fn new(pool: &DescriptorPool, options: &'a Options) -> Self {
        Self::with_comments(pool, Arc::new(Comments::index(pool)), options)
    }

    /// As [`new`](Self::new), with the pool's comments indexed beforehand: for a pool built
    /// without source info. Source info is read only for descriptions, and it is most of a
    /// descriptor set with comments (three quarters of googleapis'), which a pool holds twice.
    /// Index it from the decoded `FileDescriptorSet` with
    /// [`Comments::add_file`](tonic_mcp_schema::comments::Comments::add_file), take it out of
    /// the files, then build the pool (`DescriptorPool::from_file_descriptor_set`).
    pub fn with_comments(
        pool: &DescriptorPool,
        comments: Arc<Comments>,
        options: &'a Options,
    ) -> Self {
        Self::with_pools(Pools::One(pool.clone()), comments, options)
    }

    /// Index the descriptor set `set` for tool generation under `options`, with the comments
    /// [`SetPools::decode`] returned. Each package's pool is built while its tools are made
    /// (a package at a time, on several threads) and let go once they are. A tool resolves its
    /// types in its package's pool on its first call, which is then kept; with
    /// [`lazy_schemas`](Self::lazy_schemas) its schemas are made in that pool when first
    /// needed. A server thus holds the pools of the packages in use rather than a pool of the
    /// whole set, about half the memory for the gateway in front of every googleapis service
    /// once every page is listed. The tools are those [`new`](Self::new) makes
    /// from the set's pool, with one difference: an `Any` in a tool's arguments must hold a
    /// type its package imports, as in generated code (see [`SetPools`]).
    pub fn of_set(set: &Arc<SetPools>, comments: Arc<Comments>, options: &'a Options) -> Self {
        Self::with_pools(Pools::Set(Arc::clone(set)), comments, options)
    }

    fn with_pools(pools: Pools, comments: Arc<Comments>, options: &'a Options) -> Self {
        Self {
            pools,
            options,
            comments,
            renamed: HashMap::new(),
            later: None,
            texts: Arc::default(),
            unique: None,
        }
    }

    /// Makes each tool's schemas when they are first needed (a `tools/list` page that shows
    /// the tool, `describe_tools`, its first call) instead of with the tools, and keeps them
    /// from then on, packed. What making them reads (the comments above all) is let go once
    /// every tool's schemas are made. Thousands of tools are then ready at once and hold only
    /// the schemas asked for: the gateway in front of every googleapis service (13,386 tools) answers
    /// `initialize` in about a second instead of four, holding a fraction of the memory.
    /// The schemas of a [`SetPools`]' tools are made in their package's pool, built again when
    /// none is at hand (the last few are kept, and let go once every schema is made).
    ///
    /// The tools and their schemas are the same. What changes is when the errors that only
    /// schemas have show: two property names of a message that collide once shortened, a
    /// request field named like the stream control. Such a tool is left out of listings, its
    /// calls fail saying why, naming the proto element, and the error is logged once; every
    /// other error is still returned when the tools are made. `grpc-mcp-gateway check` (or
    /// the plugin) finds them all ahead.
    #[must_use]
    pub fn lazy_schemas(mut self) -> Self {
        self.later = Some(Arc::new(SchemaSource {
            pools: self.pools.clone(),
            options: self.options.clone(),
            comments: Arc::clone(&self.comments),
            texts: Arc::clone(&self.texts),
        }));
        self
    }

    /// The tools of the service `full_name` (`demo.v1.ItemService`), calling through
    /// `transport`. A service whose RPCs are all left out gives an empty set.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownService`] when the pool has no such service;
    /// [`Error::ToolGeneration`] when its options are invalid or two tools get the same name;
    /// otherwise as for [`ToolSetBuilder::add_spec_tool`].
    pub fn service<T: Transport>(&self, full_name: &str, transport: T) -> Result<ToolSet, Error> {
        self.services([full_name], BoxTransport::new(transport))
    }

    /// The tools of each of the named services, a set per service in order, each calling
    /// through a clone of `transport`: what calling [`service`](Self::service) for each name
    /// gives, with the tools of many services made on several threads (see
    /// [`services`](Self::services)). A gateway serves each service's set with its own
    /// settings this way.
    ///
    /// # Errors
    ///
    /// The first error [`service`](Self::service) would return, in the order of the names.
    pub fn service_sets<'n, T: Transport>(
        &self,
        full_names: impl IntoIterator<Item = &'n str>,
        transport: T,
    ) -> Result<Vec<ToolSet>, Error> {
        let names: Vec<&str> = full_names.into_iter().collect();
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let mut sets = Vec::with_capacity(names.len());
        let transport = BoxTransport::new(transport);
        for made in self.make(&names, threads, &transport) {
            let mut builder = ToolSetBuilder::with_pool(self.pools.one(), transport.clone());
            for tool in made? {
                builder.add_spec_tool(tool.tool)?;
            }
            sets.push(builder.build());
        }
        Ok(sets)
    }

    /// The tools of every service in the pool, in one set calling through `transport` (for a
    /// gateway in front of one server).
    ///
    /// # Errors
    ///
    /// As for [`service`](Self::service); tools of two services with the same name are
    /// [`Error::DuplicateTool`].
    pub fn all<T: Transport>(&self, transport: T) -> Result<ToolSet, Error> {
        let names: Vec<String> = match &self.pools {
            Pools::One(pool) => pool
                .services()
                .map(|service| service.full_name().to_owned())
                .collect(),
            Pools::Set(set) => set.services().to_vec(),
        };
        self.services(
            names.iter().map(String::as_str),
            BoxTransport::new(transport),
        )
    }

    /// The tools of the named services, in one set (not generic: every caller boxes first).
    ///
    /// The tools are made on several threads when there are many (one per core, at most 8),
    /// each with its own schema cache; they are registered in order, so the set, and the
    /// first error, are those of making them one after another.
    pub fn services<'n>(
        &self,
        full_names: impl IntoIterator<Item = &'n str>,
        transport: BoxTransport,
    ) -> Result<ToolSet, Error> {
        let names: Vec<&str> = full_names.into_iter().collect();
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let mut builder = ToolSetBuilder::with_pool(self.pools.one(), transport.clone());
        for made in self.make(&names, threads, &transport) {
            for tool in made? {
                builder.add_spec_tool(tool.tool)?;
            }
        }
        Ok(builder.build())
    }

    /// The tools of each of `names`, in order, made on up to `threads` threads. A run of
    /// services given to one thread stops at its first error, which is then the last item of
    /// that run: the caller stops there too.
    fn make(
        &self,
        names: &[&str],
        threads: usize,
        transport: &BoxTransport,
    ) -> Vec<Result<Vec<Made>, Error>> {
        let pool = match &self.pools {
            Pools::One(pool) => pool,
            Pools::Set(set) => {
                let by_package = ByPackage {
                    set,
                    options: self.options,
                    comments: &self.comments,
                    later: self.later.as_ref(),
                    texts: &self.texts,
                    unique: self.unique.as_deref(),
                    transport,
                };
                return by_package.make(names, threads.min(MAX_THREADS));
            }
        };
        let context = Context::with_comments(pool, self.options, &self.comments);
        let runs = runs(pool, names, threads.min(MAX_THREADS));
        if runs.len() <= 1 {
            return make_run(&context, self.maker(pool), names);
        }
        let forks: Vec<Context<'_>> = runs[1..].iter().map(|_| context.fork(pool)).collect();
        std::thread::scope(|scope| {
            let others: Vec<_> = runs[1..]
                .iter()
                .zip(forks)
                .map(|(run, context)| {
                    let maker = self.maker(pool);
                    scope.spawn(move || make_run(&context, maker, run))
                })
                .collect();
            let mut made = make_run(&context, self.maker(pool), runs[0]);
            for other in others {
                match other.join() {
                    Ok(run) => made.extend(run),
                    // A panic in the schema generator is a bug; it surfaces as one here.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            made
        })
    }

    fn maker<'s>(&'s self, pool: &'s DescriptorPool) -> Maker<'s> {
        Maker {
            pool,
            options: self.options,
            renamed: &self.renamed,
            later: self.later.as_ref(),
            texts: &self.texts,
        }
    }

    /// Gives the tools of `services` names that do not collide: where two RPCs of these services
    /// would make one tool name (`AccountService_Get` in `ads.v22.services` and in
    /// `ads.v23.services`), each is qualified by the shortest tail of its package that tells
    /// them apart (`v22_services_AccountService_Get`), after any prefix and within the 64
    /// characters of a tool name. Tools named by `(rust_mcp.tool).name` or prefixed by
    /// `(rust_mcp.service).prefix`, and names that no package tail tells apart, are left as
    /// they are (registering them is then
    /// [`Error::DuplicateTool`]). Deterministic: the same services give the same names. Logged
    /// at `info` (a count and an example) and each at `debug`.
    #[must_use]
    pub fn unique_names<'n>(mut self, services: impl IntoIterator<Item = &'n str>) -> Self {
        let services: Vec<&str> = services.into_iter().collect();
        // Qualified by the whole package already.
        if self.options.tool_names == ToolNames::Package || services.is_empty() {
            return self;
        }
        match &self.pools {
            Pools::One(pool) => {
                let mut by_name = ByName::new();
                for full_name in services {
                    if let Some(service) = pool.get_service_by_name(full_name) {
                        name_tools(self.options, &service, &mut by_name);
                    }
                }
                self.renamed = qualify(self.options.prefix.as_deref(), by_name);
            }
            // Named while the tools are made, in each package's pool.
            Pools::Set(_) => {
                self.unique = Some(services.into_iter().map(str::to_owned).collect());
            }
        }
        self
    }

    /// The name `spec`'s tool is served under: its own, or the one
    /// [`unique_names`](Self::unique_names) gave it. Of a [`SetPools`], whose tools are named
    /// as they are made, it is the spec's own name.
    pub fn served_name<'s>(&'s self, spec: &'s ToolSpec) -> &'s str {
        served_name(&self.renamed, spec)
    }
}

/// A descriptor set that did not become a pool, as the runtime says it.
fn descriptor_set(error: source_info::SetError) -> Error {
    match error {
        source_info::SetError::Syntax(message) | source_info::SetError::Link(message) => {
            Error::DescriptorSet(message)
        }
    }
}

/// Each tool name the RPCs of some services would have: its RPCs, each as (RPC path, package,
/// the name before any prefix).
type ByName = BTreeMap<String, Vec<(String, String, String)>>;

/// Adds the tool names of `service`'s RPCs to `by_name` (see [`DescriptorTools::unique_names`]).
fn name_tools(options: &Options, service: &ServiceDescriptor, by_name: &mut ByName) {
    let prefix = options.prefix.as_deref();
    for method in service.methods() {
        let base = tools::base_tool_name(options.tool_names, &method);
        let name = names::shorten_tool_name(&names::with_prefix(prefix, &base));
        by_name.entry(name).or_default().push((
            format!("/{}/{}", service.full_name(), method.name()),
            service.package_name().to_owned(),
            base,
        ));
    }
}

/// The unique names of the tools `by_name` gives one name (see
/// [`DescriptorTools::unique_names`]): per RPC path, the name taken and the one given instead.
fn qualify(prefix: Option<&str>, by_name: ByName) -> HashMap<String, (String, String)> {
    let mut renamed = HashMap::new();
    let mut examples = Vec::new();
    for (name, group) in by_name.into_iter().filter(|(_, group)| group.len() > 1) {
        let packages: Vec<Vec<&str>> = group
            .iter()
            .map(|(_, p, _)| p.split('.').collect())
            .collect();
        let longest = packages.iter().map(Vec::len).max().unwrap_or(0);
        let tails = (1..=longest).find_map(|k| {
            let tails: Vec<String> = packages
                .iter()
                .map(|segments| segments[segments.len().saturating_sub(k)..].join("_"))
                .collect();
            let mut distinct = tails.clone();
            distinct.sort();
            distinct.dedup();
            (distinct.len() == tails.len() && !tails.iter().any(String::is_empty)).then_some(tails)
        });
        let Some(tails) = tails else { continue };
        for ((rpc_path, _, base), tail) in group.into_iter().zip(tails) {
            let unique =
                names::shorten_tool_name(&names::with_prefix(prefix, &format!("{tail}_{base}")));
            tracing::debug!(rpc = %rpc_path, taken = %name, tool = %unique, "tool name qualified by its package");
            if examples.len() < 2 {
                examples.push(format!("{rpc_path} as {unique}"));
            }
            renamed.insert(rpc_path, (name.clone(), unique));
        }
    }
    if !renamed.is_empty() {
        tracing::info!(
            renamed = renamed.len(),
            examples = %examples.join(", "),
            "tools of the same name in several packages are qualified by their package"
        );
    }
    renamed
}

#[cfg(test)]
mod set_tests;
#[cfg(test)]
mod tests;
