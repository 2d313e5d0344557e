//! A tool result's `structuredContent` written by the transport from its text block.
//!
//! A successful result carries its output message twice, as a text block's JSON and as
//! `structuredContent`, which rmcp holds as a `serde_json::Value` tree. A transport that writes
//! its own messages (stdio, and stateless HTTP for a plain call) asks for the text alone
//! ([`Facts::structured_from_text`]): a unary result then holds [`placeholder`], and [`to_vec`]
//! writes the text block's text in its place, the bytes serde_json writes of the tree. Results
//! kept for later (tasks) or serialised by rmcp hold the tree ([`Structured::Tree`]).

use rmcp::model::{ContentBlock, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;

use crate::call::facts::Facts;

/// How a call's structured result is handed to the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Structured {
    /// In `structuredContent`, as a JSON tree.
    Tree,
    /// As [`placeholder`]: the transport writes the text block's text in its place.
    FromText,
}

impl Structured {
    /// How the transport of a request with `extensions` takes the structured result: from
    /// the text when it said so in the request's [`Facts`].
    pub(crate) fn asked_in(extensions: &rmcp::model::Extensions) -> Self {
        if Facts::of(extensions).is_some_and(|facts| facts.structured_from_text) {
            Self::FromText
        } else {
            Self::Tree
        }
    }
}

/// The one member of what `structuredContent` holds in a result whose transport writes it
/// from the text block. An object, as rmcp keeps only an object there for clients of earlier
/// revisions; under a key no result of this crate has (its keys are field names, `value` and
/// `messages`).
const PLACEHOLDER_KEY: &str = "tonic-mcp/written-from-text";

/// What `structuredContent` holds in a result whose transport writes it from the text block.
pub(crate) fn placeholder() -> Value {
    let mut object = serde_json::Map::with_capacity(1);
    object.insert(PLACEHOLDER_KEY.to_owned(), Value::Bool(true));
    Value::Object(object)
}

fn is_placeholder(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|object| object.len() == 1 && object.contains_key(PLACEHOLDER_KEY))
}

/// The placeholder as serde_json writes it in a result: searched for in the written message.
static WRITTEN_PLACEHOLDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| {
        memchr::memmem::Finder::new(
            format!("\"structuredContent\":{{\"{PLACEHOLDER_KEY}\":true}}").as_bytes(),
        )
        .into_owned()
    });

/// `message` as JSON, with a tool result's [`placeholder`] replaced by its text block's text:
/// byte for byte what serde_json writes of the result holding the tree, when the text is what
/// serde_json writes of the tree (as the response decoder's text is).
///
/// # Errors
///
/// serde_json's, which writing a message into memory does not give.
pub(crate) fn to_vec(message: &mut ServerJsonRpcMessage) -> serde_json::Result<Vec<u8>> {
    let ServerJsonRpcMessage::Response(response) = message else {
        return serde_json::to_vec(message);
    };
    let ServerResult::CallToolResult(result) = &mut response.result else {
        return serde_json::to_vec(message);
    };
    if !result
        .structured_content
        .as_ref()
        .is_some_and(is_placeholder)
    {
        return serde_json::to_vec(message);
    }
    let bytes = serde_json::to_vec(message)?;
    let text = text_block(message).unwrap_or_default();
    // A string cannot hold the member's unescaped quotes: the first match is the result's own.
    let found = WRITTEN_PLACEHOLDER.find(&bytes);
    let (Some(at), false) = (found, text.is_empty()) else {
        // Not what a result of this crate looks like: the tree, made from the text (none
        // without a text block).
        let tree = serde_json::from_str::<Value>(text).ok();
        if let ServerJsonRpcMessage::Response(response) = message
            && let ServerResult::CallToolResult(result) = &mut response.result
        {
            result.structured_content = tree;
        }
        return serde_json::to_vec(message);
    };
    const MEMBER: &[u8] = b"\"structuredContent\":";
    let (before, after) = (at + MEMBER.len(), at + WRITTEN_PLACEHOLDER.needle().len());
    let mut written = Vec::with_capacity(bytes.len() - (after - before) + text.len());
    written.extend_from_slice(&bytes[..before]);
    written.extend_from_slice(text.as_bytes());
    written.extend_from_slice(&bytes[after..]);
    Ok(written)
}

/// The text of the first block of a tool result.
fn text_block(message: &ServerJsonRpcMessage) -> Option<&str> {
    let ServerJsonRpcMessage::Response(response) = message else {
        return None;
    };
    let ServerResult::CallToolResult(result) = &response.result else {
        return None;
    };
    match result.content.first() {
        Some(ContentBlock::Text(block)) => Some(&block.text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, JsonRpcResponse, JsonRpcVersion2_0, RequestId};
    use serde_json::json;

    use super::*;

    fn response(result: CallToolResult) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(7),
            result: ServerResult::CallToolResult(result),
        })
    }

    /// What a client reads is what the tree gives: the same members and values.
    #[test]
    fn the_placeholder_is_written_as_the_text_and_reads_as_the_tree_does() {
        let text = r#"{"name":"a \"b\" ✓","n":"9007199254740993","x":0.1,"list":[1,{"y":null}]}"#;
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.meta = Some(rmcp::model::MetaObject(
            json!({"k": "v"}).as_object().cloned().unwrap_or_default(),
        ));
        let mut tree = result.clone();
        tree.structured_content = Some(serde_json::from_str(text).unwrap());
        result.structured_content = Some(placeholder());
        let written = to_vec(&mut response(result)).unwrap();
        // Byte for byte what serde_json writes of the tree: the text in the member's place.
        assert_eq!(
            String::from_utf8(written).unwrap(),
            String::from_utf8(serde_json::to_vec(&response(tree)).unwrap()).unwrap()
        );
    }

    #[test]
    fn other_messages_are_written_as_serde_json_writes_them() {
        let mut tree = CallToolResult::success(vec![ContentBlock::text("{}")]);
        tree.structured_content = Some(json!({}));
        let error = CallToolResult::error(vec![ContentBlock::text("no")]);
        for result in [tree, error] {
            let message = response(result);
            assert_eq!(
                to_vec(&mut message.clone()).unwrap(),
                serde_json::to_vec(&message).unwrap()
            );
        }
    }

    /// A placeholder without a text block to write (no result of this crate) still gives a
    /// readable message.
    #[test]
    fn a_placeholder_without_text_is_left_out() {
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(placeholder());
        let written: Value =
            serde_json::from_slice(&to_vec(&mut response(result)).unwrap()).unwrap();
        assert_eq!(
            written["result"].get("structuredContent"),
            None,
            "{written}"
        );
    }
}
