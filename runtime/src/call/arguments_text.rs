//! A `tools/call`'s arguments kept as the text the client sent, from the transport to the call.
//!
//! Both transports keep a call's arguments object as its text, in the request's
//! [`Facts`](crate::call::facts::Facts), instead of having rmcp parse it into the request's
//! `arguments` map. A plain call encodes it straight from the text
//! (`arguments::requests_from_text`); what reads the map before the call ([`materialize`]: tool
//! search, confirmation, tasks), and a call the text encoder leaves, parse it then.

use rmcp::model::{CallToolRequestParams, Extensions};
use serde_json::value::RawValue;

use tonic_mcp_codec::Problem;

use crate::call::facts::{ArgumentsText, Facts};

/// The arguments kept as text for the request of `extensions` ([`Facts::of`]).
pub(crate) fn kept(extensions: &Extensions) -> Option<&ArgumentsText> {
    Facts::of(extensions)?.arguments.as_ref()
}

/// Parses the arguments kept as text, if any, into `request.arguments`, for what reads the
/// map before the call runs.
///
/// # Errors
///
/// The problem with the text ([`tonic_mcp_codec::parse`]); `request.arguments` stays `None`
/// then, and the call must be answered with it rather than run.
pub(crate) fn materialize(
    request: &mut CallToolRequestParams,
    extensions: &Extensions,
) -> Result<(), Problem> {
    if request.arguments.is_none()
        && let Some(ArgumentsText(text)) = kept(extensions)
    {
        request.arguments = Some(tonic_mcp_codec::parse(text)?);
    }
    Ok(())
}

/// A single `tools/call` message's text without its `arguments` member, and that member's
/// value, when it is an object. `None` for anything else (a batch, another method, arguments
/// that are not an object, a member name written with escapes): the message goes as it came.
pub(crate) fn take(message: &[u8]) -> Option<(Vec<u8>, ArgumentsText)> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        method: &'a str,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: &'a RawValue,
    }
    if message.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let line: Line<'_> = serde_json::from_slice(message).ok()?;
    if line.method != "tools/call" {
        return None;
    }
    let text = ArgumentsText::of(line.params.arguments)?;
    let value = line.params.arguments.get().as_bytes();
    let start = (value.as_ptr() as usize).checked_sub(message.as_ptr() as usize)?;
    let end = start.checked_add(value.len())?;
    let cut = member_span(message, start, end)?;
    let mut rest = Vec::with_capacity(message.len() - (cut.end - cut.start));
    rest.extend_from_slice(message.get(..cut.start)?);
    rest.extend_from_slice(message.get(cut.end..)?);
    Some((rest, text))
}

/// The bytes to remove for the member `"arguments": <value at start..end>`: the member and the
/// comma that joins it to a neighbour.
fn member_span(message: &[u8], start: usize, end: usize) -> Option<std::ops::Range<usize>> {
    const KEY: &[u8] = b"\"arguments\"";
    let before = |mut at: usize| {
        while at > 0 && message.get(at - 1)?.is_ascii_whitespace() {
            at -= 1;
        }
        Some(at)
    };
    let after = |mut at: usize| {
        while message.get(at)?.is_ascii_whitespace() {
            at += 1;
        }
        Some(at)
    };
    let colon = before(start)?.checked_sub(1)?;
    if message.get(colon) != Some(&b':') {
        return None;
    }
    let key_end = before(colon)?;
    let key_start = key_end.checked_sub(KEY.len())?;
    if message.get(key_start..key_end)? != KEY {
        return None;
    }
    let previous = before(key_start)?.checked_sub(1)?;
    match message.get(previous)? {
        b',' => Some(previous..end),
        b'{' => {
            let next = after(end)?;
            match message.get(next)? {
                b',' => Some(key_start..next + 1),
                b'}' => Some(key_start..end),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The message without its arguments parses to the message less `params.arguments`, and
    /// the text taken is the arguments' value, wherever the member stands.
    #[test]
    fn the_arguments_member_is_cut_out_whole() {
        let messages = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments":{"a":[1,{"b":"}"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1},"name":"T"}}"#,
            r#"{"params":{ "arguments" : {} },"method":"tools/call","id":"x","jsonrpc":"2.0"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\n  \"name\": \"T\" ,\n  \"arguments\" :\n {\"s\":\"\\\"arguments\\\":\"} ,\n  \"_meta\": {\"progressToken\": 1}\n}}",
        ];
        for message in messages {
            let (rest, ArgumentsText(text)) =
                take(message.as_bytes()).unwrap_or_else(|| panic!("not taken: {message}"));
            let mut whole: Value = serde_json::from_str(message).expect("json");
            let arguments = whole["params"]
                .as_object_mut()
                .and_then(|params| params.remove("arguments"))
                .expect("arguments");
            let rest: Value = serde_json::from_slice(&rest)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&rest)));
            assert_eq!(rest, whole, "{message}");
            let text: Value = serde_json::from_str(&text).expect("arguments text");
            assert_eq!(text, arguments, "{message}");
        }
        let others = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","argu\u006dents":{}}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments":{}}}]"#,
            "not json",
        ];
        for message in others {
            assert!(take(message.as_bytes()).is_none(), "{message}");
        }
        assert_eq!(
            tonic_mcp_codec::parse(r#"{"a":1}"#).ok(),
            json!({"a": 1}).as_object().cloned()
        );
    }
}
