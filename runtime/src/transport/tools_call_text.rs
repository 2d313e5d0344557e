//! A `tools/call` read straight from its text, for the transports that read messages
//! themselves (stdio always, streamable HTTP for a plain stateless call).

use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage,
    ClientRequest, InputResponses, JsonRpcRequest, JsonRpcVersion2_0, RequestId, RequestMetaObject,
};
use serde_json::value::RawValue;

use crate::call::facts::{ArgumentsText, Facts};

/// A `tools/call` message, as rmcp reads it, without rmcp's general parse (an untagged union
/// of every message, which costs more per call than the arguments' own transcoding).
///
/// It gives the message rmcp's parse gives (`_meta` in the request's extensions), except that
/// an object of arguments is kept as its text (in the request's [`Facts`]), which the call
/// encodes straight from. `None` for any other line, or a `tools/call` this shape does not
/// read (an unknown parameter among them): those take the general parse, which also words
/// the errors.
pub(crate) fn read(text: &[u8]) -> Option<ClientJsonRpcMessage> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[allow(dead_code, reason = "checked by its type: \"2.0\" or no match")]
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[allow(dead_code, reason = "checked by its type: \"tools/call\" or no match")]
        method: CallToolRequestMethod,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Params<'a> {
        #[serde(rename = "_meta", default)]
        meta: Option<RequestMetaObject>,
        name: String,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(default)]
        input_responses: Option<InputResponses>,
        #[serde(default)]
        request_state: Option<String>,
    }
    let Line { id, params, .. } = serde_json::from_slice::<Line<'_>>(text).ok()?;
    let arguments = match params.arguments {
        // An object, as the message guard let through; anything else is left to rmcp.
        Some(raw) => Some(ArgumentsText::of(raw)?),
        None => None,
    };
    let mut call = CallToolRequestParams::new(params.name);
    call.input_responses = params.input_responses;
    call.request_state = params.request_state;
    let mut request = CallToolRequest::new(call);
    if let Some(meta) = params.meta {
        request.extensions.insert(meta);
    }
    // This transport writes a plain result's structured content from its text block.
    request.extensions.insert(Facts {
        arguments,
        structured_from_text: true,
        ..Facts::default()
    });
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast read of a `tools/call` line gives what rmcp's general parse gives, `_meta`
    /// included, and leaves every other line to it.
    #[test]
    fn a_tools_call_line_reads_as_rmcp_reads_it() {
        let calls = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"T","arguments":{"a":1,"b":[true,null],"c":{"d":"x"}}}}"#,
            r#"{"params":{"arguments":{},"name":"T"},"method":"tools/call","id":"s-1","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","_meta":{"progressToken":3,"k":"v"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments":{"x":1},"_meta":null},"other":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments": { "s" : "a \" b" , "n" : -1.5e3 } ,"requestState":"r"}}"#,
        ];
        for line in calls {
            let fast =
                read(line.as_bytes()).unwrap_or_else(|| panic!("not read as a tools/call: {line}"));
            let general: ClientJsonRpcMessage =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let (ClientJsonRpcMessage::Request(fast), ClientJsonRpcMessage::Request(general)) =
                (&fast, &general)
            else {
                panic!("not requests: {line}");
            };
            assert_eq!(fast.id, general.id, "{line}");
            let (ClientRequest::CallToolRequest(fast), ClientRequest::CallToolRequest(general)) =
                (&fast.request, &general.request)
            else {
                panic!("not tools/call: {line}");
            };
            // The arguments come as text, parsed into the map where the map is read.
            let mut params = fast.params.clone();
            crate::call::arguments_text::materialize(&mut params, &fast.extensions)
                .expect("parses");
            assert_eq!(params, general.params, "{line}");
            assert_eq!(
                fast.extensions.get::<rmcp::model::RequestMetaObject>(),
                general.extensions.get::<rmcp::model::RequestMetaObject>(),
                "{line}"
            );
            assert!(fast.params.arguments.is_none(), "{line}");
            assert_eq!(
                crate::call::arguments_text::kept(&fast.extensions).is_some(),
                line.contains("\"arguments\""),
                "kept as text: {line}"
            );
        }
        let others = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"T"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            // An unknown parameter: the general parse, which keeps the arguments as a map.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"T","arguments":{},"extra":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "not json",
        ];
        for line in others {
            assert!(read(line.as_bytes()).is_none(), "{line}");
        }
    }
}
