//! Tools from descriptors at run time: the same tool definitions the plugin
//! generates, made by the same code (`tonic-mcp-schema`) from a descriptor pool, registered
//! through the same path as generated `ToolDef`s.

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashMap},
    time::Duration,
};

use prost_reflect::DescriptorPool;
use serde_json::Value;
use tonic_mcp_schema::{
    Context, Options, ToolSpec, comments::Comments, names, options::ToolNames, source_info, tools,
};

use crate::{
    def::ToolInfo,
    error::Error,
    grpc::BoxTransport,
    grpc_transport::Transport,
    tool_meta::ToolMeta,
    toolset::{Checks, ToolSet, ToolSetBuilder},
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
    /// Per RPC path: the name its tool would have, and the one it gets instead
    /// ([`unique_names`](Self::unique_names)).
    renamed: HashMap<String, (String, String)>,
}

/// A descriptor set decoded for tool generation by [`DescriptorTools::decode`]: its pool, built
/// without the files' source info, and the comments that source info held, for descriptions.
#[derive(Debug, Clone)]
pub struct DecodedDescriptors {
    pool: DescriptorPool,
    comments: Comments,
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

    /// As [`decode_pool`](Self::decode_pool), with the pool built without the files' source
    /// info and their comments kept beside it, for descriptions: build the tool sets with
    /// [`of`](Self::of). Source info is most of a descriptor set with comments (three quarters
    /// of googleapis'), and a pool holds it twice, so a large set takes about half the memory
    /// this way (the gateway on every googleapis service: 827 MiB instead of 1,427 MiB). The
    /// tools are the same.
    ///
    /// # Errors
    ///
    /// As for [`decode_pool`](Self::decode_pool).
    pub fn decode(bytes: &[u8]) -> Result<DecodedDescriptors, Error> {
        let (pool, comments) = source_info::decode_set(bytes).map_err(|e| match e {
            source_info::SetError::Syntax(message) | source_info::SetError::Link(message) => {
                Error::DescriptorSet(message)
            }
        })?;
        Ok(DecodedDescriptors { pool, comments })
    }

    /// Index `decoded` for tool generation under `options`: [`new`](Self::new) for what
    /// [`decode`](Self::decode) gives.
    pub fn of(decoded: &'a DecodedDescriptors, options: &'a Options) -> Self {
        Self::with_comments(&decoded.pool, &decoded.comments, options)
    }

    /// Index `pool` for tool generation under `options` (the plugin's options: naming,
    /// selection, schema shape; the Rust-output options are ignored).
    pub fn new(pool: &DescriptorPool, options: &'a Options) -> Self {
        Self {
            pool: pool.clone(),
            options,
            context: Context::new(pool, options),
            renamed: HashMap::new(),
        }
    }

    /// As [`new`](Self::new), with the pool's comments indexed beforehand: for a pool built
    /// without source info. Source info is read only for descriptions, and it is most of a
    /// descriptor set with comments (three quarters of googleapis'), which a pool holds twice.
    /// Index it from the decoded `FileDescriptorSet` with
    /// [`Comments::add_file`](tonic_mcp_schema::comments::Comments::add_file), take it out of
    /// the files, then build the pool (`DescriptorPool::from_file_descriptor_set`).
    pub fn with_comments(
        pool: &DescriptorPool,
        comments: &'a Comments,
        options: &'a Options,
    ) -> Self {
        Self {
            pool: pool.clone(),
            options,
            context: Context::with_comments(pool, options, comments),
            renamed: HashMap::new(),
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
        let prefix = self.options.prefix.as_deref();
        // name → (RPC path, package, name before the prefix)
        let mut by_name: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
        for full_name in services {
            let Some(service) = self.pool.get_service_by_name(full_name) else {
                continue;
            };
            // Qualified by the whole package already.
            if self.options.tool_names == ToolNames::Package {
                break;
            }
            for method in service.methods() {
                let base = tools::base_tool_name(self.options.tool_names, &method);
                let name = names::shorten_tool_name(&names::with_prefix(prefix, &base));
                by_name.entry(name).or_default().push((
                    format!("/{}/{}", service.full_name(), method.name()),
                    service.package_name().to_owned(),
                    base,
                ));
            }
        }
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
                (distinct.len() == tails.len() && !tails.iter().any(String::is_empty))
                    .then_some(tails)
            });
            let Some(tails) = tails else { continue };
            for ((rpc_path, _, base), tail) in group.into_iter().zip(tails) {
                let unique = names::shorten_tool_name(&names::with_prefix(
                    prefix,
                    &format!("{tail}_{base}"),
                ));
                tracing::debug!(rpc = %rpc_path, taken = %name, tool = %unique, "tool name qualified by its package");
                if examples.len() < 2 {
                    examples.push(format!("{rpc_path} as {unique}"));
                }
                self.renamed.insert(rpc_path, (name.clone(), unique));
            }
        }
        if !self.renamed.is_empty() {
            tracing::info!(
                renamed = self.renamed.len(),
                examples = %examples.join(", "),
                "tools of the same name in several packages are qualified by their package"
            );
        }
        self
    }

    /// The name `spec`'s tool is served under: its own, or the one
    /// [`unique_names`](Self::unique_names) gave it.
    pub fn served_name<'s>(&'s self, spec: &'s ToolSpec) -> &'s str {
        match self.renamed.get(&spec.rpc_path) {
            Some((taken, unique)) if *taken == spec.name => unique,
            _ => &spec.name,
        }
    }

    fn register(&self, builder: &mut ToolSetBuilder, mut spec: ToolSpec) -> Result<(), Error> {
        let name = self.served_name(&spec).to_owned();
        spec.name = name;
        let meta = ToolMeta::of_spec(&spec);
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
        // Kept as text (see `CompiledTool`); serde_json's writer, not `Display`, which goes
        // through a formatter adapter at about twice the cost.
        let schema = |which: &'static str, value: Value| {
            let invalid = |message: String| Error::InvalidSchema {
                tool: name.clone(),
                which,
                message,
            };
            if !value.is_object() {
                return Err(invalid("a tool schema must be a JSON object".to_owned()));
            }
            serde_json::to_string(&value)
                .map(Cow::Owned)
                .map_err(|e| invalid(e.to_string()))
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

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::{
        DescriptorProto, FileDescriptorProto, FileDescriptorSet, MethodDescriptorProto,
        ServiceDescriptorProto,
    };

    use super::*;

    /// One file of `package` with a message `M` and a service `Accounts { Get, List }`.
    fn file(package: &str) -> FileDescriptorProto {
        let method = |name: &str| MethodDescriptorProto {
            name: Some(name.to_owned()),
            input_type: Some(format!(".{package}.M")),
            output_type: Some(format!(".{package}.M")),
            ..Default::default()
        };
        FileDescriptorProto {
            name: Some(format!("{}.proto", package.replace('.', "/"))),
            package: Some(package.to_owned()),
            syntax: Some("proto3".to_owned()),
            message_type: vec![DescriptorProto {
                name: Some("M".to_owned()),
                ..Default::default()
            }],
            service: vec![ServiceDescriptorProto {
                name: Some("Accounts".to_owned()),
                method: vec![method("Get"), method("List")],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn names_of(set: &ToolSet) -> Vec<String> {
        let mut names: Vec<String> = set.names().map(str::to_owned).collect();
        names.sort();
        names
    }

    #[tokio::test]
    async fn tools_of_one_name_in_several_packages_are_qualified_by_package() {
        let set = FileDescriptorSet {
            file: vec![
                file("ads.v22.services"),
                file("ads.v23.services"),
                file("billing.v1"),
            ],
        };
        let pool = DescriptorPool::decode(set.encode_to_vec().as_slice()).unwrap();
        let options = Options {
            prefix: Some("g".to_owned()),
            ..Options::default()
        };
        let services = [
            "ads.v22.services.Accounts",
            "ads.v23.services.Accounts",
            "billing.v1.Accounts",
        ];
        let tools = DescriptorTools::new(&pool, &options).unique_names(services);
        let transport = || {
            crate::grpc::BoxTransport::new(
                tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
            )
        };
        let all = tools.services(services, transport()).unwrap();
        assert_eq!(
            names_of(&all),
            [
                "g_billing_v1_Accounts_Get",
                "g_billing_v1_Accounts_List",
                "g_v22_services_Accounts_Get",
                "g_v22_services_Accounts_List",
                "g_v23_services_Accounts_Get",
                "g_v23_services_Accounts_List",
            ]
        );
        // Without the collision, names are as before.
        let one = DescriptorTools::new(&pool, &options)
            .unique_names(["billing.v1.Accounts"])
            .service("billing.v1.Accounts", transport())
            .unwrap();
        assert_eq!(names_of(&one), ["g_Accounts_Get", "g_Accounts_List"]);
    }

    #[tokio::test]
    async fn decoded_descriptors_give_the_same_tools_from_a_pool_without_source_info() {
        use prost_types::{SourceCodeInfo, source_code_info::Location};
        let mut with_comments = file("billing.v1");
        // The service's first method (path: service 0, method 0) has a leading comment.
        with_comments.source_code_info = Some(SourceCodeInfo {
            location: vec![Location {
                path: vec![6, 0, 2, 0],
                span: vec![1, 0, 10],
                leading_comments: Some(" Fetch one account.\n".to_owned()),
                ..Default::default()
            }],
        });
        let bytes = FileDescriptorSet {
            file: vec![with_comments],
        }
        .encode_to_vec();
        let options = Options::default();
        let transport = || {
            crate::grpc::BoxTransport::new(
                tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
            )
        };
        let decoded = DescriptorTools::decode(&bytes).unwrap();
        assert!(
            decoded
                .pool()
                .file_descriptor_protos()
                .all(|f| f.source_code_info.is_none())
        );
        let lean = DescriptorTools::of(&decoded, &options)
            .services(["billing.v1.Accounts"], transport())
            .unwrap();
        let pool = DescriptorTools::decode_pool(&bytes).unwrap();
        let full = DescriptorTools::new(&pool, &options)
            .services(["billing.v1.Accounts"], transport())
            .unwrap();
        assert_eq!(lean.tools(), full.tools());
        let get = lean.tools().into_iter().find(|t| t.name == "Accounts_Get");
        assert_eq!(
            get.and_then(|t| t.description).as_deref(),
            Some("Fetch one account.")
        );
        // Editions files are refused by name, as by decode_pool.
        let mut editions = file("ed.v1");
        editions.syntax = Some("editions".to_owned());
        let bytes = FileDescriptorSet {
            file: vec![editions],
        }
        .encode_to_vec();
        let error = DescriptorTools::decode(&bytes).unwrap_err().to_string();
        assert!(error.contains("editions"), "{error}");
    }
}
