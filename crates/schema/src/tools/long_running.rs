//! Tools whose RPC returns a `google.longrunning.Operation`: whether a call waits for it, and
//! the response and metadata types `(google.longrunning.operation_info)` names, resolved as
//! proto type names are.

use prost_reflect::MethodDescriptor;

use super::{LongRunningSpec, OPERATION, RpcKind};
use crate::error::{Error, Result};
use crate::extensions::{OperationInfo, ToolOptions};
use crate::json_schema::SchemaContext;
use crate::options::LongRunning;

/// The long-running operation `method` declares, and whether its tool waits for it.
///
/// An RPC is long-running when it returns `google.longrunning.Operation` and carries
/// `(google.longrunning.operation_info)`. Its types are resolved like proto type names: relative
/// to the method's package, then to each enclosing package. A tool waits unless the tool
/// option or the plugin option says `OPERATION`, and only a unary RPC whose `response_type` the
/// descriptors define can wait; otherwise, when waiting was only the default, the tool returns
/// the operation and a note says why.
pub(super) fn long_running(
    cx: SchemaContext<'_>,
    method: &MethodDescriptor,
    tool_options: &ToolOptions,
    kind: RpcKind,
    notes: &mut Vec<String>,
) -> Result<Option<LongRunningSpec>> {
    let option = "(rust_mcp.tool).long_running";
    let invalid = |reason: String| Error::InvalidElementOption {
        element: method.full_name().to_owned(),
        option: option.to_owned(),
        reason,
    };
    let explicit = match tool_options.long_running {
        None | Some(0) => None,
        Some(1) => Some(LongRunning::Wait),
        Some(2) => Some(LongRunning::Operation),
        Some(other) => return Err(invalid(format!("{other} is not a LongRunning value"))),
    };
    let info = (method.output().full_name() == OPERATION)
        .then(|| cx.extensions.operation_info(method))
        .flatten();
    let Some(OperationInfo {
        response_type,
        metadata_type,
    }) = info
    else {
        if explicit.is_some() {
            return Err(invalid(
                "the method does not return a google.longrunning.Operation with \
                 (google.longrunning.operation_info); remove the option"
                    .to_owned(),
            ));
        }
        return Ok(None);
    };
    let pool = method.parent_pool();
    let package = method.parent_file().package_name().to_owned();
    let response = resolve(pool, &package, &response_type);
    let metadata = resolve(pool, &package, &metadata_type);
    let wanted = explicit.unwrap_or(cx.options.long_running) == LongRunning::Wait;
    let obstacle = if kind != RpcKind::Unary {
        Some("it is a streaming RPC".to_owned())
    } else if response.is_none() {
        Some(format!(
            "its operation_info response_type `{response_type}` is not a message the \
             descriptors define"
        ))
    } else {
        None
    };
    let wait = match (wanted, obstacle) {
        (false, _) => false,
        (true, None) => true,
        (true, Some(obstacle)) if explicit == Some(LongRunning::Wait) => {
            return Err(invalid(format!(
                "cannot wait for the operation: {obstacle}"
            )));
        }
        (true, Some(obstacle)) => {
            notes.push(format!(
                "{}: returns the google.longrunning.Operation instead of waiting for it: \
                 {obstacle}",
                method.full_name()
            ));
            false
        }
    };
    Ok(Some(LongRunningSpec {
        response_type: response.unwrap_or(response_type),
        metadata_type: metadata,
        wait,
    }))
}

/// The full name of the message `name` refers to from `package`, resolved like a proto type
/// name: `package.name`, then `name` under each enclosing package, then `name` itself.
fn resolve(pool: &prost_reflect::DescriptorPool, package: &str, name: &str) -> Option<String> {
    let name = name.strip_prefix('.').unwrap_or(name);
    if name.is_empty() {
        return None;
    }
    let mut scope = package;
    loop {
        let candidate = if scope.is_empty() {
            name.to_owned()
        } else {
            format!("{scope}.{name}")
        };
        if pool.get_message_by_name(&candidate).is_some() {
            return Some(candidate);
        }
        if scope.is_empty() {
            return None;
        }
        scope = scope.rsplit_once('.').map_or("", |(outer, _)| outer);
    }
}
