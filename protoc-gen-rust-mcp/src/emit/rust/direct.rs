//! `ToolDef` constants written directly as the text prettyplease would print, bypassing syn
//! and the formatter for the common layouts.

use proc_macro2::Literal;

use super::Context;
use super::literals::raw_string;
use crate::error::{Error, Result};
use crate::model::{RpcKind, Tool};

/// A `ToolDef` constant written directly as the text prettyplease would print for
/// [`generate_tool_def`]'s tokens, inside a service module; `None` when its layout could
/// differ (a long first line, a timeout, omitted output fields, an unusual runtime path), for
/// which the tokens go through syn and prettyplease. Most of the generated code is these
/// constants, and formatting them was most of the emitter's time.
///
/// [`generate_tool_def`]: super::generate_tool_def
pub(super) fn direct_tool_def(
    cx: &Context<'_>,
    tool: &Tool,
    index: usize,
) -> Result<Option<String>> {
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
