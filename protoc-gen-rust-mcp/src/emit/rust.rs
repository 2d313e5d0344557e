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
    /// The runtime path as written, when it is a plain path that prettyplease prints
    /// unchanged (what [`direct_tool_def`] needs).
    runtime_text: Option<&'a str>,
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
    /// Each tool's (input, output) placeholder numbers, in tool order.
    by_tool: Vec<(usize, usize)>,
    /// Every distinct text, by placeholder number.
    order: Vec<String>,
    /// By placeholder number: the index of the text's `MCP_SCHEMA_<n>` constant, if shared.
    constant: Vec<Option<usize>>,
    /// Shared texts (placeholder numbers) in constant order.
    shared: Vec<usize>,
}

/// Placeholders are identifiers no proto element or comment is expected to contain. Both
/// kinds start with [`MARKER`].
const PLACEHOLDER: &str = "__rust_mcp_literal_9f1c_";
/// A whole item written without syn and prettyplease (see [`direct_tool_def`]): the line of
/// the placeholder constant is replaced by the item's text.
const ITEM_PLACEHOLDER: &str = "__rust_mcp_item_9f1c_";
/// The common start of both placeholders.
const MARKER: &str = "__rust_mcp_";

impl SchemaTexts {
    fn new(package: &Package) -> SchemaTexts {
        // Text → its placeholder number; `uses` by number.
        let mut numbers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut uses: Vec<usize> = Vec::new();
        let mut by_tool = Vec::new();
        for tool in package.services.iter().flat_map(|s| &s.tools) {
            let mut pair = [0; 2];
            for (slot, text) in pair
                .iter_mut()
                .zip([&tool.input_schema, &tool.output_schema])
            {
                let number = *numbers.entry(text).or_insert_with(|| {
                    order.push(text.clone());
                    uses.push(0);
                    order.len() - 1
                });
                if let Some(count) = uses.get_mut(number) {
                    *count += 1;
                }
                *slot = number;
            }
            by_tool.push((pair[0], pair[1]));
        }
        let mut shared = Vec::new();
        let constant = uses
            .iter()
            .enumerate()
            .map(|(number, &count)| {
                (count >= 2).then(|| {
                    shared.push(number);
                    shared.len() - 1
                })
            })
            .collect();
        SchemaTexts {
            by_tool,
            order,
            constant,
            shared,
        }
    }

    /// The (input, output) placeholder numbers of the `index`-th tool, `name`.
    fn tool_numbers(&self, index: usize, name: &str) -> Result<(usize, usize)> {
        self.by_tool
            .get(index)
            .copied()
            .ok_or_else(|| Error::Internal(format!("no schema texts for tool {name}")))
    }

    /// The expression a `ToolDef` field holds: `super::MCP_SCHEMA_<n>` or the placeholder of
    /// an inline literal.
    fn expression(&self, number: usize) -> TokenStream {
        match self.constant.get(number).copied().flatten() {
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

    /// Replaces every placeholder in formatted code: schema texts by number, `descriptor`
    /// (placeholder `usize::MAX`) as a byte string, and the line of each item placeholder by
    /// that item of `items`.
    fn substitute(&self, code: &str, descriptor: &str, items: &[String]) -> Result<String> {
        let mut out = String::with_capacity(
            code.len()
                + self.order.iter().map(String::len).sum::<usize>()
                + descriptor.len()
                + items.iter().map(String::len).sum::<usize>(),
        );
        let mut rest = code;
        while let Some(at) = rest.find(MARKER) {
            let tail = &rest[at..];
            let (kind, after) = if let Some(after) = tail.strip_prefix(PLACEHOLDER) {
                (PLACEHOLDER, after)
            } else if let Some(after) = tail.strip_prefix(ITEM_PLACEHOLDER) {
                (ITEM_PLACEHOLDER, after)
            } else {
                // Not ours (a comment that happens to contain the marker): keep it.
                out.push_str(&rest[..at + MARKER.len()]);
                rest = &rest[at + MARKER.len()..];
                continue;
            };
            out.push_str(&rest[..at]);
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let number: usize = after[..digits]
                .parse()
                .map_err(|_| Error::Internal("a placeholder lost its number".to_owned()))?;
            if kind == ITEM_PLACEHOLDER {
                let item = items
                    .get(number)
                    .ok_or_else(|| Error::Internal(format!("no item for placeholder {number}")))?;
                // The whole line: from its start (already written) to its end.
                out.truncate(out.rfind('\n').map_or(0, |newline| newline + 1));
                out.push_str(item);
                let line_end = after.find('\n').map_or(after.len(), |newline| newline + 1);
                rest = &after[line_end..];
                continue;
            }
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

    /// The source of a `ToolDef` schema field: `super::MCP_SCHEMA_<n>` or the raw string.
    fn source(&self, number: usize) -> Option<String> {
        let text = self.order.get(number)?;
        Some(match self.constant.get(number).copied().flatten() {
            Some(index) => format!("super::MCP_SCHEMA_{index}"),
            None => raw_string(text),
        })
    }
}

/// The placeholder number of the descriptor set.
const DESCRIPTOR_PLACEHOLDER: usize = 999_999_999;

fn placeholder(number: usize) -> TokenStream {
    let ident = format_ident!("{}{}", PLACEHOLDER, number);
    quote!(#ident)
}

/// The Rust module of a package, formatted, with its `@generated` header.
pub(crate) fn package(package: &Package, options: &Options) -> Result<String> {
    let runtime: syn::Path = syn::parse_str(&options.runtime_crate).map_err(|e| Error::Option {
        option: format!("runtime_crate={}", options.runtime_crate),
        reason: format!("not a Rust path: {e}"),
    })?;
    let schemas = SchemaTexts::new(package);
    let shared_schemas = schemas.constants();
    let plain_path = |text: &str| {
        let path = text.strip_prefix("::").unwrap_or(text);
        !path.is_empty()
            && path.split("::").all(|segment| {
                segment
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && segment
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    let cx = Context {
        runtime,
        runtime_text: plain_path(&options.runtime_crate).then_some(options.runtime_crate.as_str()),
        options,
        schemas,
    };
    let mut items = Vec::new();
    let descriptor_set = placeholder(DESCRIPTOR_PLACEHOLDER);
    let mut first_tool = 0;
    let services = package
        .services
        .iter()
        .map(|service| {
            let tokens = generate_service(&cx, service, first_tool, &mut items);
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
    let descriptor = byte_string(&package.descriptor_set);
    out.push_str(&cx.schemas.substitute(&code, &descriptor, &items)?);
    Ok(out)
}

fn generate_service(
    cx: &Context<'_>,
    service: &Service,
    first_tool: usize,
    items: &mut Vec<String>,
) -> Result<TokenStream> {
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
        .map(|(i, tool)| {
            let index = first_tool + i;
            match direct_tool_def(cx, tool, index)? {
                Some(text) => {
                    let placeholder = format_ident!("{}{}", ITEM_PLACEHOLDER, items.len());
                    items.push(text);
                    Ok(quote!(pub const #placeholder: u8 = 0;))
                }
                None => generate_tool_def(cx, tool, index),
            }
        })
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
    let (input_number, output_number) = cx.schemas.tool_numbers(index, &tool.name)?;
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
    let max_result_bytes = match tool.max_result_bytes {
        Some(n) => {
            let n = n as usize;
            quote!(::core::option::Option::Some(#n))
        }
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
            max_result_bytes: #max_result_bytes,
            output_omitted: &[#(#output_omitted),*],
            meta: #meta,
        };
    })
}

/// A `ToolDef` constant written directly as the text prettyplease would print for
/// [`generate_tool_def`]'s tokens, inside a service module; `None` when its layout could
/// differ (a long first line, a timeout, omitted output fields, an unusual runtime path), for
/// which the tokens go through syn and prettyplease. Most of the generated code is these
/// constants, and formatting them was most of the emitter's time.
fn direct_tool_def(cx: &Context<'_>, tool: &Tool, index: usize) -> Result<Option<String>> {
    use std::fmt::Write as _;

    let Some(runtime) = cx.runtime_text else {
        return Ok(None);
    };
    if tool.timeout.is_some() || !tool.output_omitted.is_empty() {
        return Ok(None);
    }
    let doc = format!(" `{}`: `{}`.", tool.name, tool.rpc_path);
    if !doc
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " _./-`:".contains(c))
    {
        return Ok(None);
    }
    let header = format!(
        "    pub const {}: {runtime}::codegen::ToolDef = {runtime}::codegen::ToolDef {{\n",
        tool.const_name
    );
    // The longest first line seen unbroken in prettyplease's output (the golden files);
    // anything longer goes the slow way.
    if header.len() > 149 {
        return Ok(None);
    }
    let (input_number, output_number) = cx.schemas.tool_numbers(index, &tool.name)?;
    let (Some(input_schema), Some(output_schema)) = (
        cx.schemas.source(input_number),
        cx.schemas.source(output_number),
    ) else {
        return Err(Error::Internal(format!(
            "no schema texts for tool {}",
            tool.name
        )));
    };
    let string = |text: &str| Literal::string(text).to_string();
    let kind = match tool.kind {
        RpcKind::Unary => "Unary",
        RpcKind::ServerStreaming => "ServerStreaming",
        RpcKind::ClientStreaming => "ClientStreaming",
        RpcKind::Bidi => "Bidi",
    };
    let option = |value: Option<String>| match value {
        Some(value) => format!("::core::option::Option::Some({value})"),
        None => "::core::option::Option::None".to_owned(),
    };
    let hint = |value: Option<bool>| option(value.map(|v| v.to_string()));
    let hints = tool.annotations;
    let mut out = String::with_capacity(
        1024 + input_schema.len() + output_schema.len() + tool.description.len(),
    );
    // Writing into a String cannot fail.
    let _ = write!(
        out,
        "    ///{doc}\n{header}\
        \x20       name: {name},\n\
        \x20       title: {title},\n\
        \x20       description: {description},\n\
        \x20       rpc_path: {rpc_path},\n\
        \x20       kind: {runtime}::codegen::RpcKind::{kind},\n\
        \x20       input_type: {input_type},\n\
        \x20       output_type: {output_type},\n\
        \x20       input_schema: {input_schema},\n\
        \x20       output_schema: {output_schema},\n\
        \x20       annotations: {runtime}::codegen::ToolAnnotations {{\n\
        \x20           read_only: {read_only},\n\
        \x20           destructive: {destructive},\n\
        \x20           idempotent: {idempotent},\n\
        \x20           open_world: {open_world},\n\
        \x20       }},\n\
        \x20       json_names: {json_names},\n\
        \x20       emit_defaults: {emit_defaults},\n\
        \x20       timeout: ::core::option::Option::None,\n\
        \x20       max_messages: {max_messages},\n\
        \x20       max_result_bytes: {max_result_bytes},\n\
        \x20       output_omitted: &[],\n\
        \x20       meta: {meta},\n\
        \x20   }};\n",
        name = string(&tool.name),
        title = string(&tool.title),
        description = string(&tool.description),
        rpc_path = string(&tool.rpc_path),
        input_type = string(&tool.input_type),
        output_type = string(&tool.output_type),
        read_only = hint(hints.read_only),
        destructive = hint(hints.destructive),
        idempotent = hint(hints.idempotent),
        open_world = hint(hints.open_world),
        json_names = cx.options.json_names,
        emit_defaults = cx.options.emit_defaults,
        max_messages = option(tool.max_messages.map(|n| format!("{n}u32"))),
        max_result_bytes = option(tool.max_result_bytes.map(|n| format!("{n}usize"))),
        meta = raw_string(&tool.meta.to_string()),
    );
    Ok(Some(out))
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

/// `bytes` as the source of a byte string literal, exactly as `proc_macro2::Literal::byte_string`
/// writes it (a test checks), without its per-byte `String` pushes: the descriptor set of a
/// big package is hundreds of kilobytes.
fn byte_string(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(bytes.len() * 2 + 3);
    out.extend_from_slice(b"b\"");
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            // `\0` before an octal digit would read as an octal escape to a human.
            b'\0' if matches!(bytes.get(i + 1), Some(b'0'..=b'7')) => {
                out.extend_from_slice(b"\\x00");
            }
            b'\0' => out.extend_from_slice(b"\\0"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\x20'..=b'\x7E' => out.push(b),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]),
        }
    }
    out.push(b'"');
    // Only ASCII was written.
    String::from_utf8(out).unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_string_is_proc_macro2s() {
        let mut cases: Vec<Vec<u8>> = vec![(0..=255).collect(), (0..=255).rev().collect()];
        // Every pair, so that each escape is seen before every byte (`\0` then a digit).
        cases.push(
            (0..=255u8)
                .flat_map(|a| (0..=255u8).flat_map(move |b| [a, b]))
                .collect(),
        );
        cases.push(Vec::new());
        cases.push(b"\0".to_vec());
        cases.push(b"\x007\08\0\0".to_vec());
        for bytes in cases {
            assert_eq!(
                byte_string(&bytes),
                Literal::byte_string(&bytes).to_string(),
                "{bytes:?}"
            );
        }
    }
}
