//! The per-call control of a response stream: on every tool whose RPC streams responses
//! (server streaming, bidirectional), the input takes an optional `"mcp.stream"` object that
//! shortens the collection window and lowers the message bound for that call only. An
//! unending stream (etcd's `Watch`) then costs the model the window it asks for, not the whole
//! deadline.
//!
//! The key contains a `.`, which no proto field name and no JSON name derived from one can
//! contain, so it never collides with the request message's own fields.

use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The input property of the stream control.
pub const STREAM_CONTROL_KEY: &str = "mcp.stream";

/// Its `windowMs` member: milliseconds to collect messages for.
pub const WINDOW_KEY: &str = "windowMs";

/// Its `maxMessages` member: the most messages to collect.
pub const MAX_MESSAGES_KEY: &str = "maxMessages";

/// Its `keepOnCancel` member: when the call runs as an MCP task and the task is cancelled, the
/// task completes with the messages received so far instead of ending cancelled.
pub const KEEP_ON_CANCEL_KEY: &str = "keepOnCancel";

/// The schema of the stream control.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "description": "Optional, for this call only: stop collecting the response stream after \
                        windowMs milliseconds or maxMessages messages, whichever comes first; \
                        the result then says truncated. The server's deadline and message bound \
                        still apply when they are smaller. Use it for streams that do not end \
                        on their own (watches, subscriptions); with keepOnCancel, a call \
                        run as a task that is cancelled completes with what it received.",
        "properties": {
            WINDOW_KEY: {"type": "integer", "minimum": 1, "maximum": 86_400_000_i64},
            MAX_MESSAGES_KEY: {"type": "integer", "minimum": 1, "maximum": u32::MAX},
            KEEP_ON_CANCEL_KEY: {"type": "boolean"},
        },
        "additionalProperties": false,
    })
}

/// Adds the stream control to a tool's input schema (an object at the root). `element` names
/// the method in the error when the request message already has a property of that name (a
/// custom `json_name`).
pub fn add_to(input_schema: &mut Value, element: &str) -> Result<()> {
    let Some(root) = input_schema.as_object_mut() else {
        return Err(Error::Internal(format!(
            "the input schema of {element} is not an object"
        )));
    };
    let properties = root
        .entry("properties")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Some(properties) = properties.as_object_mut() else {
        return Err(Error::Internal(format!(
            "the input schema of {element} has properties that are not an object"
        )));
    };
    if properties.contains_key(STREAM_CONTROL_KEY) {
        return Err(Error::InvalidElementOption {
            element: element.to_owned(),
            option: "json_name".to_owned(),
            reason: format!(
                "the request has a field whose JSON name is `{STREAM_CONTROL_KEY}`, the property \
                 that controls the response stream of this call; rename the field"
            ),
        });
    }
    properties.insert(STREAM_CONTROL_KEY.to_owned(), schema());
    Ok(())
}
