//! A tool's two JSON Schemas: made with the rest of its definition, or on their own when a
//! server first needs them (a gateway in front of thousands of RPCs lists a page at a time).

use prost_reflect::MethodDescriptor;
use serde_json::Value;

use super::{LongRunningSpec, RpcKind, long_running::long_running};
use crate::error::{Error, Result};
use crate::json_schema::{self as schema, Cardinal, Direction, SchemaContext, ShrinkReport};

/// When [`service_tools_with`](super::service_tools_with) makes each tool's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schemas {
    /// With the rest of the definition: every error is found at once.
    #[default]
    Now,
    /// Not at all: each tool's `input_schema` and `output_schema` are `null` and `shrunk` is
    /// empty; [`method_schemas`] makes them, with the errors they may have, when needed.
    Later,
}

/// A tool's input and output schemas, and how the `max_schema_bytes` budget shrank them.
#[derive(Debug, Clone)]
pub struct ToolSchemas {
    /// The input schema.
    pub input: Value,
    /// The output schema.
    pub output: Value,
    /// The shrunk sides, as [`ToolSpec::shrunk`](super::ToolSpec::shrunk).
    pub shrunk: Vec<(Direction, ShrinkReport)>,
}

impl ToolSchemas {
    /// The schemas of a definition made with [`Schemas::Later`].
    pub(super) fn later() -> Self {
        Self {
            input: Value::Null,
            output: Value::Null,
            shrunk: Vec::new(),
        }
    }
}

/// The schemas of `method`'s tool under `cx`: exactly those
/// [`service_tools`](super::service_tools) gives its [`ToolSpec`](super::ToolSpec).
///
/// # Errors
///
/// Those of the schemas that [`service_tools`](super::service_tools) would return, naming
/// the proto element: property names that collide once shortened, a request field named like
/// the stream control, an invalid `(rust_mcp.tool).long_running`.
pub fn method_schemas(cx: SchemaContext<'_>, method: &MethodDescriptor) -> Result<ToolSchemas> {
    let kind = RpcKind::of(method);
    let tool_options = cx.extensions.tool(method);
    let long_running = long_running(cx, method, &tool_options, kind, &mut Vec::new())?;
    make(cx, method, kind, long_running.as_ref())
}

/// Makes the schemas of `method`'s tool, which streams as `kind` and may wait for
/// `long_running`.
pub(super) fn make(
    cx: SchemaContext<'_>,
    method: &MethodDescriptor,
    kind: RpcKind,
    long_running: Option<&LongRunningSpec>,
) -> Result<ToolSchemas> {
    let input = method.input();
    let output = method.output();
    let (input_cardinal, output_cardinal) = match kind {
        RpcKind::Unary => (Cardinal::One, Cardinal::One),
        RpcKind::ServerStreaming => (Cardinal::One, Cardinal::Stream),
        RpcKind::ClientStreaming => (Cardinal::Stream, Cardinal::One),
        RpcKind::Bidi => (Cardinal::Stream, Cardinal::Stream),
    };
    let (mut input_schema, input_shrunk) =
        schema::tool_schema_report(cx, &input, Direction::Input, input_cardinal)?;
    if kind.streams_responses() {
        crate::stream_control::add_to(&mut input_schema, method.full_name())?;
    }
    // A tool that waits answers with the operation's response.
    let waited = long_running.filter(|lro| lro.wait).and_then(|lro| {
        Some((
            lro,
            output
                .parent_pool()
                .get_message_by_name(&lro.response_type)?,
        ))
    });
    let (output_schema, output_shrunk) = match waited {
        Some((lro, response)) => {
            schema::operation_schema_report(cx, &response, lro.metadata_type.as_deref())?
        }
        None => schema::tool_schema_report(cx, &output, Direction::Output, output_cardinal)?,
    };
    let shrunk = [
        (Direction::Input, input_shrunk),
        (Direction::Output, output_shrunk),
    ]
    .into_iter()
    .filter_map(|(side, report)| report.map(|report| (side, report)))
    .collect();
    for (side, schema) in [("input", &input_schema), ("output", &output_schema)] {
        let problems = schema::portability::violations(schema);
        if !problems.is_empty() {
            return Err(Error::Internal(format!(
                "the {side} schema of {} breaks portability rules: {}",
                method.full_name(),
                problems.join("; ")
            )));
        }
    }
    Ok(ToolSchemas {
        input: input_schema,
        output: output_schema,
        shrunk,
    })
}
