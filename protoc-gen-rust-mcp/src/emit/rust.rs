//! `<package>.pb.mcp.rs`: one module per service, written as tokens and pretty-printed.
//!
//! The file is included inside the prost module of its package, beside prost's types and tonic's
//! `<service>_client` / `<service>_server` modules. It only touches the runtime's `codegen` facade
//! and uses absolute paths, so it is a well-behaved guest in the user's crate.
//!
//! ```text
//! pub const MCP_FILE_DESCRIPTOR_SET: &[u8] = b"...";
//! pub const MCP_SCHEMA_0: &str = r#"{...}"#;   // a schema text several tools share
//! pub mod item_service_mcp {
//!     pub const GET_ITEM: ToolDef = ToolDef { name, schemas as minified JSON (a raw string,
//!         or super::MCP_SCHEMA_<n>), ... };
//!     pub const TOOLS: &[ToolDef] = &[GET_ITEM, ...];
//!     pub fn from_channel<T: Transport>(transport: T) -> Result<ToolSet, Error>;
//!     pub fn from_service<S: ItemService>(service: S) -> Result<ToolSet, Error>;
//! }
//! ```
//!
//! The constructors hold no code per RPC: each boxes its transport and makes one call into the
//! runtime, which forwards every tool at the gRPC level from the `ToolDef`s.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::error::{Error, Result};
use crate::model::{Annotations, Package, RpcKind, Service, Tool};
use crate::options::Options;

/// What every emitter function needs.
struct Context<'a> {
    runtime: syn::Path,
    options: &'a Options,
    schemas: SchemaTexts,
}

/// The minified text of every schema of a package (minified: what the runtime parses, with no
/// indentation to pay for in the user's crate; `<package>.mcp.json` keeps the readable form). A text that two or more
/// tools share (the same `Operation` result, the same request) is written once, as a
/// package-level `MCP_SCHEMA_<n>` constant that their `ToolDef`s name; the others stay inline.
///
/// Large literals (schemas, the descriptor set) never go through syn and prettyplease: the
/// token tree holds a placeholder identifier that [`SchemaTexts::substitute`] replaces with the
/// literal's text after formatting, which keeps the plugin fast and lean on big packages.
struct SchemaTexts {
    /// Text → (its placeholder number, constant index if shared, uses).
    texts: std::collections::HashMap<String, (usize, Option<usize>, usize)>,
    /// Each tool's (input, output) placeholder numbers, in tool order.
    by_tool: Vec<(usize, usize)>,
    /// Every distinct text, by placeholder number.
    order: Vec<String>,
    /// Shared texts (placeholder numbers) in constant order.
    shared: Vec<usize>,
}

/// Placeholders are identifiers no proto element or comment is expected to contain.
const PLACEHOLDER: &str = "__rust_mcp_literal_9f1c_";

impl SchemaTexts {
    fn new(package: &Package) -> SchemaTexts {
        let mut texts: std::collections::HashMap<String, (usize, Option<usize>, usize)> =
            std::collections::HashMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut by_tool = Vec::new();
        for tool in package.services.iter().flat_map(|s| &s.tools) {
            let mut pair = [0; 2];
            for (slot, schema) in pair
                .iter_mut()
                .zip([&tool.input_schema, &tool.output_schema])
            {
                let text = schema.clone();
                let next = order.len();
                let entry = texts.entry(text).or_insert_with_key(|text| {
                    order.push(text.clone());
                    (next, None, 0)
                });
                entry.2 += 1;
                *slot = entry.0;
            }
            by_tool.push((pair[0], pair[1]));
        }
        let mut shared = Vec::new();
        for text in &order {
            if let Some(entry) = texts.get_mut(text)
                && entry.2 >= 2
            {
                entry.1 = Some(shared.len());
                shared.push(entry.0);
            }
        }
        SchemaTexts {
            texts,
            by_tool,
            order,
            shared,
        }
    }

    /// The expression a `ToolDef` field holds: `super::MCP_SCHEMA_<n>` or the placeholder of
    /// an inline literal.
    fn expression(&self, number: usize) -> TokenStream {
        let shared = self
            .order
            .get(number)
            .and_then(|text| self.texts.get(text))
            .and_then(|entry| entry.1);
        match shared {
            Some(index) => {
                let ident = format_ident!("MCP_SCHEMA_{}", index);
                quote!(super::#ident)
            }
            None => placeholder(number),
        }
    }

    /// The package-level constants of the shared texts.
    fn constants(&self) -> TokenStream {
        let items = self.shared.iter().enumerate().map(|(index, &number)| {
            let ident = format_ident!("MCP_SCHEMA_{}", index);
            let value = placeholder(number);
            quote! {
                #[doc(hidden)]
                pub const #ident: &str = #value;
            }
        });
        quote!(#(#items)*)
    }

    /// Replaces every placeholder in formatted code with its literal: schema texts by number,
    /// and `descriptor` (placeholder `usize::MAX`) as a byte string.
    fn substitute(&self, code: &str, descriptor: &str) -> Result<String> {
        let mut out = String::with_capacity(
            code.len() + self.order.iter().map(String::len).sum::<usize>() + descriptor.len(),
        );
        let mut rest = code;
        while let Some(at) = rest.find(PLACEHOLDER) {
            out.push_str(&rest[..at]);
            let after = &rest[at + PLACEHOLDER.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let number: usize = after[..digits]
                .parse()
                .map_err(|_| Error::Internal("a literal placeholder lost its number".to_owned()))?;
            if number == DESCRIPTOR_PLACEHOLDER {
                out.push_str(descriptor);
            } else {
                let text = self.order.get(number).ok_or_else(|| {
                    Error::Internal(format!("no schema text for placeholder {number}"))
                })?;
                out.push_str(&raw_string(text));
            }
            rest = &after[digits..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The placeholder number of the descriptor set.
const DESCRIPTOR_PLACEHOLDER: usize = 999_999_999;

fn placeholder(number: usize) -> TokenStream {
    let ident = format_ident!("{}{}", PLACEHOLDER, number);
    quote!(#ident)
}

/// The Rust module of a package, formatted, with its `@generated` header.
pub fn package(package: &Package, options: &Options) -> Result<String> {
    let runtime: syn::Path = syn::parse_str(&options.runtime_crate).map_err(|e| Error::Option {
        option: format!("runtime_crate={}", options.runtime_crate),
        reason: format!("not a Rust path: {e}"),
    })?;
    let schemas = SchemaTexts::new(package);
    let shared_schemas = schemas.constants();
    let cx = Context {
        runtime,
        options,
        schemas,
    };
    let descriptor_set = placeholder(DESCRIPTOR_PLACEHOLDER);
    let mut first_tool = 0;
    let services = package
        .services
        .iter()
        .map(|service| {
            let tokens = generate_service(&cx, service, first_tool);
            first_tool += service.tools.len();
            tokens
        })
        .collect::<Result<Vec<_>>>()?;
    let tokens = quote! {
        /// Encoded `FileDescriptorSet` of this package and its imports (no source info): the
        /// MCP tools of this package convert JSON to and from protobuf with it.
        pub const MCP_FILE_DESCRIPTOR_SET: &[u8] = #descriptor_set;
        #shared_schemas
        #(#services)*
    };
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| Error::Internal(format!("generated Rust does not parse: {e}")))?;
    let mut out = String::from("// @generated by protoc-gen-rust-mcp. DO NOT EDIT.\n");
    for source in &package.files {
        out.push_str(&format!("// source: {source}\n"));
    }
    let code = prettyplease::unparse(&file);
    let descriptor = Literal::byte_string(&package.descriptor_set).to_string();
    out.push_str(&cx.schemas.substitute(&code, &descriptor)?);
    Ok(out)
}

fn generate_service(cx: &Context<'_>, service: &Service, first_tool: usize) -> Result<TokenStream> {
    let runtime = &cx.runtime;
    let mcp_mod = format_ident!("{}", service.mcp_mod);
    let server_mod = format_ident!("{}", service.server_mod);
    let server = format_ident!("{}Server", service.rust_name);
    let server_trait = format_ident!("{}", service.rust_name);

    let mut module_doc = vec![format!("MCP tools for `{}`.", service.full_name)];
    if !service.omitted.is_empty() {
        module_doc.push(String::new());
        module_doc.push("RPCs that are not tools:".to_owned());
        for omitted in &service.omitted {
            module_doc.push(format!("- `{}`: {}", omitted.rpc_path, omitted.reason));
        }
    }
    let module_doc = doc_lines(&module_doc);

    let defs = service
        .tools
        .iter()
        .enumerate()
        .map(|(i, tool)| generate_tool_def(cx, tool, first_tool + i))
        .collect::<Result<Vec<_>>>()?;
    let consts: Vec<_> = service
        .tools
        .iter()
        .map(|tool| format_ident!("{}", tool.const_name))
        .collect();
    let tools_doc = format!(" Every tool of `{}`, sorted by name.", service.full_name);

    let client_vis = if cx.options.adapters.client() {
        quote!(pub)
    } else {
        quote!()
    };
    let from_service = cx.options.adapters.service().then(|| {
        quote! {
            /// Tools served by an in-process implementation of the tonic server trait: calls go
            /// through tonic's generated server without a network.
            pub fn from_service<S>(service: S) -> ::core::result::Result<#runtime::ToolSet, #runtime::Error>
            where
                S: super::#server_mod::#server_trait,
            {
                from_channel(super::#server_mod::#server::new(service))
            }
        }
    });

    Ok(quote! {
        #module_doc
        pub mod #mcp_mod {
            #(#defs)*

            #[doc = #tools_doc]
            pub const TOOLS: &[#runtime::codegen::ToolDef] = &[#(#consts),*];

            /// Tools that forward each call over a tonic transport: a `Channel`, an
            /// `InterceptedService` (for interceptors), or a tonic server used in process.
            #client_vis fn from_channel<T>(transport: T) -> ::core::result::Result<#runtime::ToolSet, #runtime::Error>
            where
                T: #runtime::codegen::Transport,
            {
                #runtime::codegen::tool_set(
                    super::MCP_FILE_DESCRIPTOR_SET,
                    TOOLS,
                    #runtime::codegen::BoxTransport::new(transport),
                )
            }

            #from_service
        }
    })
}

fn generate_tool_def(cx: &Context<'_>, tool: &Tool, index: usize) -> Result<TokenStream> {
    let runtime = &cx.runtime;
    let ident = format_ident!("{}", tool.const_name);
    let doc = format!(" `{}`: `{}`.", tool.name, tool.rpc_path);
    let name = &tool.name;
    let title = &tool.title;
    let description = &tool.description;
    let rpc_path = &tool.rpc_path;
    let input_type = &tool.input_type;
    let output_type = &tool.output_type;
    let kind = match tool.kind {
        RpcKind::Unary => quote!(Unary),
        RpcKind::ServerStreaming => quote!(ServerStreaming),
        RpcKind::ClientStreaming => quote!(ClientStreaming),
        RpcKind::Bidi => quote!(Bidi),
    };
    let (input_number, output_number) = cx
        .schemas
        .by_tool
        .get(index)
        .copied()
        .ok_or_else(|| Error::Internal(format!("no schema texts for tool {}", tool.name)))?;
    let input_schema = cx.schemas.expression(input_number);
    let output_schema = cx.schemas.expression(output_number);
    let annotations = generate_annotations(tool.annotations);
    let json_names = cx.options.json_names;
    let emit_defaults = cx.options.emit_defaults;
    let timeout = match tool.timeout {
        Some((seconds, nanos)) => {
            let seconds = u64::try_from(seconds).unwrap_or(0);
            let nanos = u32::try_from(nanos).unwrap_or(0);
            quote!(::core::option::Option::Some(::core::time::Duration::new(#seconds, #nanos)))
        }
        None => quote!(::core::option::Option::None),
    };
    let output_omitted = &tool.output_omitted;
    // Small, so an ordinary raw-string token (the big schema texts bypass the formatter).
    let meta: Literal = raw_string(&tool.meta.to_string())
        .parse()
        .map_err(|e| Error::Internal(format!("_meta literal of {}: {e}", tool.name)))?;
    let max_messages = match tool.max_messages {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    Ok(quote! {
        #[doc = #doc]
        pub const #ident: #runtime::codegen::ToolDef = #runtime::codegen::ToolDef {
            name: #name,
            title: #title,
            description: #description,
            rpc_path: #rpc_path,
            kind: #runtime::codegen::RpcKind::#kind,
            input_type: #input_type,
            output_type: #output_type,
            input_schema: #input_schema,
            output_schema: #output_schema,
            annotations: #runtime::codegen::ToolAnnotations #annotations,
            json_names: #json_names,
            emit_defaults: #emit_defaults,
            timeout: #timeout,
            max_messages: #max_messages,
            output_omitted: &[#(#output_omitted),*],
            meta: #meta,
        };
    })
}

fn generate_annotations(hints: Annotations) -> TokenStream {
    let hint = |value: Option<bool>| match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let (read_only, destructive, idempotent, open_world) = (
        hint(hints.read_only),
        hint(hints.destructive),
        hint(hints.idempotent),
        hint(hints.open_world),
    );
    quote!({
        read_only: #read_only,
        destructive: #destructive,
        idempotent: #idempotent,
        open_world: #open_world,
    })
}

/// `text` as the source of a raw string literal.
fn raw_string(text: &str) -> String {
    let mut hashes = String::from("#");
    while text.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{text}\"{hashes}")
}

fn doc_lines(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|line| {
        let line = if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        };
        quote!(#[doc = #line])
    });
    quote!(#(#lines)*)
}
