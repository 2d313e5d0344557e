//! `ToolDef` constants: one per tool, what the runtime serves the tool from.
//!
//! Most of a generated file is these constants. Each is parsed into its own `syn::ItemConst`
//! and put into its service module's syntax tree (see `generate_service`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::literals::raw_string;
use super::{Context, parse};
use crate::model::{Annotations, RpcKind, TaskSupport, Tool, Unconfirmed};
use tonic_mcp_schema::error::Result;

/// The `ToolDef` constant of `tool`, the `index`-th tool of its package, inside its service
/// module.
pub(super) fn generate_tool_def(
    cx: &Context<'_>,
    tool: &Tool,
    index: usize,
) -> Result<syn::ItemConst> {
    let runtime = &cx.runtime;
    let spec = &tool.spec;
    let ident = format_ident!("{}", tool.const_name);
    let doc = format!(" `{}`: `{}`.", spec.name, spec.rpc_path);
    let (name, title, description) = (&spec.name, &spec.title, &spec.description);
    let (rpc_path, input_type, output_type) = (&spec.rpc_path, &spec.input_type, &spec.output_type);
    let kind = match spec.kind {
        RpcKind::Unary => quote!(Unary),
        RpcKind::ServerStreaming => quote!(ServerStreaming),
        RpcKind::ClientStreaming => quote!(ClientStreaming),
        RpcKind::Bidi => quote!(Bidi),
    };
    let (input_schema, output_schema) = cx.schemas.tool_expressions(index, &spec.name)?;
    let annotations = generate_annotations(cx, spec.annotations);
    let json_names = cx.options.tools.json_names;
    let emit_defaults = cx.options.tools.emit_defaults;
    let timeout = option(spec.timeout.map(|(seconds, nanos)| {
        let seconds = u64::try_from(seconds).unwrap_or(0);
        let nanos = u32::try_from(nanos).unwrap_or(0);
        quote!(::core::time::Duration::new(#seconds, #nanos))
    }));
    let max_messages = option(spec.max_messages.map(|n| quote!(#n)));
    let max_result_bytes = option(spec.max_result_bytes.map(|n| {
        let n = n as usize;
        quote!(#n)
    }));
    let output_omitted = &spec.output_omitted;
    let task_support = match spec.task_support {
        TaskSupport::Forbidden => quote!(Forbidden),
        TaskSupport::Optional => quote!(Optional),
        TaskSupport::Required => quote!(Required),
    };
    let confirm = option(spec.confirm.map(|unconfirmed| match unconfirmed {
        Unconfirmed::Refuse => quote!(#runtime::codegen::Unconfirmed::Refuse),
        Unconfirmed::Proceed => quote!(#runtime::codegen::Unconfirmed::Proceed),
    }));
    let required_scopes = &spec.required_scopes;
    let wait_for = tool.wait_for_operation();
    let wait_for_operation = option(wait_for.map(|(response, _)| quote!(#response)));
    let operation_metadata_type = option(
        wait_for
            .and_then(|(_, metadata)| metadata)
            .map(|metadata| quote!(#metadata)),
    );
    let meta = raw_string(
        &tool.meta.to_string(),
        &format!("the _meta of tool {}", spec.name),
    )?;
    let tokens = quote! {
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
            annotations: #annotations,
            json_names: #json_names,
            emit_defaults: #emit_defaults,
            timeout: #timeout,
            max_messages: #max_messages,
            max_result_bytes: #max_result_bytes,
            output_omitted: &[#(#output_omitted),*],
            task_support: #runtime::codegen::TaskSupport::#task_support,
            confirm: #confirm,
            required_scopes: &[#(#required_scopes),*],
            wait_for_operation: #wait_for_operation,
            operation_metadata_type: #operation_metadata_type,
            meta: #meta,
        };
    };
    parse(tokens, || format!("the ToolDef of tool {}", spec.name))
}

#[cfg(test)]
#[path = "tool_def_tests.rs"]
mod tests;

fn generate_annotations(cx: &Context<'_>, hints: Annotations) -> TokenStream {
    let runtime = &cx.runtime;
    let hint = |value: Option<bool>| option(value.map(|v| quote!(#v)));
    let (read_only, destructive, idempotent, open_world) = (
        hint(hints.read_only),
        hint(hints.destructive),
        hint(hints.idempotent),
        hint(hints.open_world),
    );
    quote! {
        #runtime::codegen::ToolAnnotations {
            read_only: #read_only,
            destructive: #destructive,
            idempotent: #idempotent,
            open_world: #open_world,
        }
    }
}

fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}
