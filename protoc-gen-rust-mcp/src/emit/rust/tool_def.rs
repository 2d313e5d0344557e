//! `ToolDef` constants, written as text in the layout prettyplease gives the rest of the file.
//!
//! Most of a generated file is these constants, and formatting them through syn and prettyplease
//! was most of the emitter's time: on `scripts/bench-plugin.sh`'s request (5,000 RPCs) the plugin
//! alone takes 1.07 s of CPU this way and 1.38 s with every constant formatted (medians of 7
//! interleaved runs; wall time in the script's table: 1.46 s against 1.91 s). So they are
//! written directly, and the service modules around them (a few items each) still go through
//! prettyplease.
//!
//! The layout is prettyplease 0.2's for the tokens of this item, rule by rule:
//!
//! - **Doc comment.** A `#[doc = "…"]` whose value has no line break and does not start with
//!   `/` prints as `///` and the value (`attr.rs`). The value is `` `name`: `path`. ``: tool
//!   names are `[A-Za-z0-9_]`, RPC paths proto identifiers, so no line break.
//! - **First line.** `pub const NAME: rt::codegen::ToolDef = rt::codegen::ToolDef {` is one line
//!   at any length: `item_const` puts a `neverbreak` after ` = `, and a path without generic
//!   arguments has no break point (`item.rs`, `path.rs`).
//! - **Fields.** A struct expression wider than 34 columns (`expr_struct`'s
//!   `end_with_max_width(34)`) puts each field on its own line, indented 4 more, each followed
//!   by a comma. `ToolDef` and its `ToolAnnotations` are always wider.
//! - **Calls and arrays** (`Some(Duration::new(…))`, `&["field", …]`). Their arguments form a
//!   consistent box (`call_args`; `expr_array` for elements that are not all simple literals,
//!   and string literals are not). The box stays on the line when the whole field fits it:
//!   the line, closing bracket and the field's comma included, is at most [`MARGIN`] columns.
//!   Otherwise every argument goes on its own line, indented 4 more than the field and followed
//!   by a comma, and the closing bracket on a line of its own. (`algorithm.rs`: while the text
//!   not yet printed is wider than the space left on the line, `check_stream` breaks the
//!   outermost open box, and the next break point after the box is the one after the comma;
//!   the space of a line is `max(MARGIN - indent, MIN_SPACE)`, and `MIN_SPACE`, 60, never
//!   applies at the fields' indentation of 8.)
//! - **Literals** print as `proc_macro2` writes them (escapes included); big schema texts are
//!   raw strings ([`super::literals`]).
//!
//! The tests render tools with every kind of field through the tokens and prettyplease and
//! compare the text with this one.

use proc_macro2::Literal;

use super::Context;
use super::literals::raw_string;
use crate::error::{Error, Result};
use crate::model::{RpcKind, TaskSupport, Tool, Unconfirmed};

/// prettyplease's line width (`MARGIN` in its `lib.rs`).
const MARGIN: usize = 89;
/// The indentation of a `ToolDef`'s fields inside a service module.
const FIELD_INDENT: usize = 8;

/// The `ToolDef` constant of `tool`, the `index`-th tool of its package, inside a service
/// module, as prettyplease would print it (see the module documentation).
pub(super) fn tool_def(cx: &Context<'_>, tool: &Tool, index: usize) -> Result<String> {
    use std::fmt::Write as _;

    let runtime = &cx.runtime_text;
    let doc = format!(" `{}`: `{}`.", tool.spec.name, tool.spec.rpc_path);
    if doc.contains('\n') {
        return Err(Error::Internal(format!(
            "the doc comment of tool {} would not be one `///` line",
            tool.spec.name
        )));
    }
    let (input_number, output_number) = cx.schemas.tool_numbers(index, &tool.spec.name)?;
    let (Some(input_schema), Some(output_schema)) = (
        cx.schemas.source(input_number),
        cx.schemas.source(output_number),
    ) else {
        return Err(Error::Internal(format!(
            "no schema texts for tool {}",
            tool.spec.name
        )));
    };
    let string = |text: &str| Literal::string(text).to_string();
    let kind = match tool.spec.kind {
        RpcKind::Unary => "Unary",
        RpcKind::ServerStreaming => "ServerStreaming",
        RpcKind::ClientStreaming => "ClientStreaming",
        RpcKind::Bidi => "Bidi",
    };
    let option_at = |indent: usize, field: &str, value: Option<String>| match value {
        Some(value) => bracketed(
            indent,
            field,
            "::core::option::Option::Some(",
            &[value],
            ")",
        ),
        None => format!("{field}: ::core::option::Option::None"),
    };
    let option = |field: &str, value: Option<String>| option_at(FIELD_INDENT, field, value);
    let hint = |field: &str, value: Option<bool>| {
        option_at(FIELD_INDENT + 4, field, value.map(|v| v.to_string()))
    };
    let timeout = option(
        "timeout",
        tool.spec.timeout.map(|(seconds, nanos)| {
            let seconds = u64::try_from(seconds).unwrap_or(0);
            let nanos = u32::try_from(nanos).unwrap_or(0);
            format!("::core::time::Duration::new({seconds}u64, {nanos}u32)")
        }),
    );
    let omitted: Vec<String> = tool.spec.output_omitted.iter().map(|f| string(f)).collect();
    let output_omitted = if omitted.is_empty() {
        "output_omitted: &[]".to_owned()
    } else {
        bracketed(FIELD_INDENT, "output_omitted", "&[", &omitted, "]")
    };
    let task_support = match tool.spec.task_support {
        TaskSupport::Forbidden => "Forbidden",
        TaskSupport::Optional => "Optional",
        TaskSupport::Required => "Required",
    };
    let confirm = option(
        "confirm",
        tool.spec.confirm.map(|unconfirmed| {
            let variant = match unconfirmed {
                Unconfirmed::Refuse => "Refuse",
                Unconfirmed::Proceed => "Proceed",
            };
            format!("{runtime}::codegen::Unconfirmed::{variant}")
        }),
    );
    let wait_for = tool.wait_for_operation();
    let wait_for_operation = option(
        "wait_for_operation",
        wait_for.map(|(response, _)| string(response)),
    );
    let operation_metadata_type = option(
        "operation_metadata_type",
        wait_for.and_then(|(_, metadata)| metadata.map(string)),
    );
    let hints = tool.spec.annotations;
    let mut out = String::with_capacity(
        1024 + input_schema.len() + output_schema.len() + tool.spec.description.len(),
    );
    // Writing into a String cannot fail.
    let _ = write!(
        out,
        "    ///{doc}\n\
        \x20   pub const {const_name}: {runtime}::codegen::ToolDef = {runtime}::codegen::ToolDef {{\n\
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
        \x20           {read_only},\n\
        \x20           {destructive},\n\
        \x20           {idempotent},\n\
        \x20           {open_world},\n\
        \x20       }},\n\
        \x20       json_names: {json_names},\n\
        \x20       emit_defaults: {emit_defaults},\n\
        \x20       {timeout},\n\
        \x20       {max_messages},\n\
        \x20       {max_result_bytes},\n\
        \x20       {output_omitted},\n\
        \x20       task_support: {runtime}::codegen::TaskSupport::{task_support},\n\
        \x20       {confirm},\n\
        \x20       {wait_for_operation},\n\
        \x20       {operation_metadata_type},\n\
        \x20       meta: {meta},\n\
        \x20   }};\n",
        const_name = tool.const_name,
        name = string(&tool.spec.name),
        title = string(&tool.spec.title),
        description = string(&tool.spec.description),
        rpc_path = string(&tool.spec.rpc_path),
        input_type = string(&tool.spec.input_type),
        output_type = string(&tool.spec.output_type),
        read_only = hint("read_only", hints.read_only),
        destructive = hint("destructive", hints.destructive),
        idempotent = hint("idempotent", hints.idempotent),
        open_world = hint("open_world", hints.open_world),
        json_names = cx.options.tools.json_names,
        emit_defaults = cx.options.tools.emit_defaults,
        max_messages = option(
            "max_messages",
            tool.spec.max_messages.map(|n| format!("{n}u32"))
        ),
        max_result_bytes = option(
            "max_result_bytes",
            tool.spec.max_result_bytes.map(|n| format!("{n}usize"))
        ),
        meta = raw_string(&tool.meta.to_string()),
    );
    Ok(out)
}

/// `field: open args close`, for a field indented by `indent`: on one line when it fits, else
/// one argument a line (see the module documentation), without the comma that ends the field.
/// `args` is not empty.
fn bracketed(indent: usize, field: &str, open: &str, args: &[String], close: &str) -> String {
    let one_line = args.join(", ");
    let width = indent + field.len() + ": ".len() + open.len() + one_line.len() + close.len();
    if width + ",".len() <= MARGIN {
        return format!("{field}: {open}{one_line}{close}");
    }
    let inner = " ".repeat(indent + 4);
    let mut out = format!("{field}: {open}\n");
    for arg in args {
        out.push_str(&inner);
        out.push_str(arg);
        out.push_str(",\n");
    }
    out.push_str(&" ".repeat(indent));
    out.push_str(close);
    out
}

#[cfg(test)]
#[path = "tool_def_tests.rs"]
mod tests;
