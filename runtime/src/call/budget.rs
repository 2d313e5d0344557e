//! The result budget: how large one tool result may be ([`Limits::max_result_bytes`]). A result
//! travels twice over (as `structuredContent` and as the same JSON in a text block), clients
//! bound one message and a model's context is smaller still, so a result over the budget is
//! neither sent whole nor cut silently: a stream's batch keeps the messages that fit, any other
//! result becomes an `isError` naming the RPC's paging and limit fields.
//!
//! [`Limits::max_result_bytes`]: crate::Limits::max_result_bytes

use prost_reflect::MessageDescriptor;
use serde_json::Value;

/// Bytes of JSON one tool result may hold unless [`Limits::max_result_bytes`] says otherwise:
/// 320 KiB. With the text copy the message is about twice that, and at worst three times (a
/// text copy of JSON full of escaped quotes escapes them again): under the 1 MiB that clients
/// such as the Python SDK 2.x accept in one server-sent event either way.
///
/// [`Limits::max_result_bytes`]: crate::Limits::max_result_bytes
pub const DEFAULT_MAX_RESULT_BYTES: usize = 320 * 1024;

/// Request fields that bound how much a response holds, by the names APIs give them.
const LIMIT_FIELDS: &[&str] = &[
    "page_size",
    "max_page_size",
    "limit",
    "max_results",
    "max_items",
    "count",
    "top",
    "first",
];

/// Response fields that continue a listing.
const NEXT_PAGE_FIELDS: &[&str] = &["next_page_token", "next_cursor", "continuation_token"];

/// The JSON size of `value`, compact, as the text block carries it.
pub(crate) fn json_size(value: &Value) -> usize {
    tonic_mcp_schema::json_schema::minified_len(value)
}

/// Keeps the leading messages of a stream's batch whose JSON fits in `budget` bytes (with the
/// batch's own punctuation); `true` when some were dropped.
pub(crate) fn fit_messages(messages: &mut Vec<Value>, budget: usize) -> bool {
    // `{"messages":[` … `],"truncated":true}`
    let mut used = 32;
    let mut keep = 0;
    for message in messages.iter() {
        let size = json_size(message) + 1;
        if used + size > budget {
            break;
        }
        used += size;
        keep += 1;
    }
    let dropped = keep < messages.len();
    messages.truncate(keep);
    dropped
}

/// The text of a result of `size` bytes refused for passing `budget`: what happened, and
/// how to ask for less with this RPC's own fields.
pub(crate) fn over_budget(
    size: usize,
    budget: usize,
    input: &MessageDescriptor,
    output: &MessageDescriptor,
) -> String {
    let mut text = format!(
        "The result is {size} bytes of JSON, over this MCP server's budget of {budget} bytes \
         for one result, so it was not sent. Ask for less"
    );
    let limits: Vec<String> = input
        .fields()
        .filter(|field| LIMIT_FIELDS.contains(&field.name()))
        .map(|field| format!("`{}`", field.name()))
        .collect();
    if limits.is_empty() {
        text.push_str(" (a narrower request)");
    } else {
        text.push_str(&format!(": set {} to a smaller value", limits.join(" or ")));
    }
    if let Some(next) = output
        .fields()
        .find(|field| NEXT_PAGE_FIELDS.contains(&field.name()))
    {
        text.push_str(&format!(
            ", and follow the response's `{}` for the rest",
            next.name()
        ));
    }
    text.push_str(
        ". The operator can raise the budget (Limits::max_result_bytes, \
         ToolSet::with_max_result_bytes, (rust_mcp.tool).max_result_bytes).",
    );
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sizes_are_compact_json_lengths() {
        let value = json!({"a": [1, 2, "x"]});
        assert_eq!(json_size(&value), value.to_string().len());
    }

    #[test]
    fn the_refusal_names_the_rpcs_paging_fields() {
        use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};
        let field = |name: &str, number: i32, kind: prost_types::field_descriptor_proto::Type| {
            FieldDescriptorProto {
                name: Some(name.to_owned()),
                number: Some(number),
                r#type: Some(kind as i32),
                label: Some(prost_types::field_descriptor_proto::Label::Optional as i32),
                ..Default::default()
            }
        };
        use prost_types::field_descriptor_proto::Type;
        let file = FileDescriptorProto {
            name: Some("list.proto".to_owned()),
            package: Some("list".to_owned()),
            syntax: Some("proto3".to_owned()),
            message_type: vec![
                DescriptorProto {
                    name: Some("ListRequest".to_owned()),
                    field: vec![
                        field("page_size", 1, Type::Int32),
                        field("filter", 2, Type::String),
                    ],
                    ..Default::default()
                },
                DescriptorProto {
                    name: Some("ListResponse".to_owned()),
                    field: vec![field("next_page_token", 1, Type::String)],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let pool = prost_reflect::DescriptorPool::from_file_descriptor_set(
            prost_types::FileDescriptorSet { file: vec![file] },
        )
        .unwrap();
        let input = pool.get_message_by_name("list.ListRequest").unwrap();
        let output = pool.get_message_by_name("list.ListResponse").unwrap();
        let text = over_budget(5000, 1000, &input, &output);
        assert!(
            text.starts_with(
                "The result is 5000 bytes of JSON, over this MCP server's budget of 1000 bytes"
            ),
            "{text}"
        );
        assert!(
            text.contains("set `page_size` to a smaller value"),
            "{text}"
        );
        assert!(
            text.contains("follow the response's `next_page_token`"),
            "{text}"
        );
        // Without such fields: a narrower request.
        let text = over_budget(5000, 1000, &output, &input);
        assert!(text.contains("Ask for less (a narrower request)"), "{text}");
    }

    #[test]
    fn a_batch_keeps_the_messages_that_fit() {
        let mut messages: Vec<Value> = (0..10).map(|i| json!({"id": i})).collect();
        assert!(fit_messages(&mut messages, 32 + 3 * 9));
        assert_eq!(messages.len(), 3);
        let mut all: Vec<Value> = (0..3).map(|i| json!({"id": i})).collect();
        assert!(!fit_messages(&mut all, 1000));
        assert_eq!(all.len(), 3);
    }
}
