//! A depth guard for incoming JSON-RPC messages, run on the raw bytes before any parser.
//!
//! `serde_json` refuses documents nested deeper than 128 levels, and rmcp drops (stdio) or
//! answers with an opaque HTTP error (streamable HTTP) a message it cannot parse. So every
//! message is scanned first: one nested deeper than [`MESSAGE_DEPTH_LIMIT`] has each
//! container below that depth replaced by `null`, which makes it parseable again, and the
//! depth it really had is carried next to it ([`TooDeep`]) so that a `tools/call` is refused
//! with the documented `isError` and anything else gets a JSON-RPC parse error.

use crate::call::{
    ARGUMENTS_OFFSET, MESSAGE_DEPTH_LIMIT,
    facts::{NotAnObject, TooDeep},
};

/// What to do with an incoming message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Guarded {
    /// Within the limit: parse it as it is.
    Pass,
    /// Too deep: parse `cut` instead (the same message, deeper containers replaced by `null`)
    /// and remember `too_deep`.
    Cut { cut: Vec<u8>, too_deep: TooDeep },
}

#[derive(Clone, Copy)]
struct Frame {
    object: bool,
    expecting_key: bool,
    /// 1: the message's `params` object; 2: its `arguments` object.
    role: u8,
}

/// Where a byte of JSON text stands with respect to strings, from [`Strings::step`].
enum Step {
    /// Outside every string: structure, or a scalar.
    Outside,
    /// Part of a string, its opening quote included.
    Inside,
    /// The closing quote of the string whose text is `bytes[start..index]`.
    Closed { start: usize },
}

/// Follows a byte scan of JSON text in and out of strings, escapes included. It never fails:
/// malformed text is scanned as far as it goes.
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
    start: usize,
}

impl Strings {
    /// Takes the byte at `index`.
    fn step(&mut self, index: usize, byte: u8) -> Step {
        if !self.inside {
            if byte != b'"' {
                return Step::Outside;
            }
            self.inside = true;
            self.start = index + 1;
        } else if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.inside = false;
            return Step::Closed { start: self.start };
        }
        Step::Inside
    }
}

/// Scan `bytes` (a JSON document, possibly malformed: the scan never fails) and cut it if
/// it nests deeper than `limit`.
pub(crate) fn guard(bytes: &[u8], limit: usize) -> Guarded {
    // Nearly every message: it cannot nest deeper than it has opening brackets, strings
    // included, and counting them is far cheaper than following strings.
    let opening = bytes.iter().filter(|&&b| b == b'{' || b == b'[').count();
    if opening <= limit {
        return Guarded::Pass;
    }
    let Some(too_deep) = measure(bytes, limit) else {
        return Guarded::Pass;
    };
    Guarded::Cut {
        cut: cut(bytes, limit),
        too_deep,
    }
}

/// The depths of `bytes`, when deeper than `limit`.
fn measure(bytes: &[u8], limit: usize) -> Option<TooDeep> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut max_depth = 0;
    let mut arguments_depth: Option<usize> = None;
    let mut strings = Strings::default();
    let mut last_key: &[u8] = b"";
    for (index, &byte) in bytes.iter().enumerate() {
        match strings.step(index, byte) {
            Step::Outside => {}
            Step::Inside => continue,
            Step::Closed { start } => {
                if let Some(frame) = stack.last_mut()
                    && frame.object
                    && frame.expecting_key
                {
                    frame.expecting_key = false;
                    last_key = &bytes[start..index];
                }
                continue;
            }
        }
        match byte {
            b'{' | b'[' => {
                let parent_role = stack.last().map(|frame| frame.role);
                let keyed = stack.last().is_some_and(|frame| frame.object);
                let role = match (stack.len(), parent_role) {
                    (1, _) if keyed && last_key == b"params" => 1,
                    (2, Some(1)) if keyed && last_key == b"arguments" => 2,
                    _ => 0,
                };
                stack.push(Frame {
                    object: byte == b'{',
                    expecting_key: byte == b'{',
                    role,
                });
                let depth = stack.len();
                max_depth = max_depth.max(depth);
                if stack.get(2).is_some_and(|frame| frame.role == 2) {
                    let inside = depth - ARGUMENTS_OFFSET;
                    arguments_depth = Some(arguments_depth.map_or(inside, |d| d.max(inside)));
                }
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(frame) = stack.last_mut()
                    && frame.object
                {
                    frame.expecting_key = true;
                }
            }
            _ => {}
        }
    }
    (max_depth > limit).then_some(TooDeep {
        message_depth: max_depth,
        arguments_depth,
    })
}

/// `bytes` with every container that opens below depth `limit` replaced by `null`.
fn cut(bytes: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().min(64 * 1024));
    let mut depth = 0usize;
    let mut strings = Strings::default();
    // Depth at which skipping started (the cut container's own depth), while skipping.
    let mut skipping: Option<usize> = None;
    for (index, &byte) in bytes.iter().enumerate() {
        if !matches!(strings.step(index, byte), Step::Outside) {
            if skipping.is_none() {
                out.push(byte);
            }
            continue;
        }
        match byte {
            b'{' | b'[' => {
                depth += 1;
                if skipping.is_none() && depth > limit {
                    skipping = Some(depth);
                    out.extend_from_slice(b"null");
                    continue;
                }
            }
            b'}' | b']' => {
                let closing = depth;
                depth = depth.saturating_sub(1);
                if skipping == Some(closing) {
                    skipping = None;
                    continue;
                }
            }
            _ => {}
        }
        if skipping.is_none() {
            out.push(byte);
        }
    }
    out
}

/// A byte-string search built once (`memmem::find` builds one on every call, which costs more
/// than searching a message of a few hundred bytes).
pub(crate) type Needle = std::sync::LazyLock<memchr::memmem::Finder<'static>>;

static TOOLS_CALL: Needle = Needle::new(|| memchr::memmem::Finder::new(b"tools/call"));
static UNICODE_ESCAPE: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\\u"));
static ARGUMENTS_KEY: Needle = Needle::new(|| memchr::memmem::Finder::new(b"\"arguments\""));

/// A `tools/call` message whose `arguments` is neither an object nor `null`: the message
/// without `arguments`, and what it was. `None` for any other message.
pub(crate) fn take_non_object_arguments(bytes: &[u8]) -> Option<(Vec<u8>, NotAnObject)> {
    // Nearly every call: no need to parse the whole message to find that out.
    if arguments_are_objects(bytes) {
        return None;
    }
    let mut value = serde_json::from_slice::<serde_json::Value>(bytes).ok()?;
    if value.get("method").and_then(serde_json::Value::as_str) != Some("tools/call") {
        return None;
    }
    let params = value.get_mut("params")?.as_object_mut()?;
    let got = match params.get("arguments")? {
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Object(_) | serde_json::Value::Null => return None,
    };
    params.remove("arguments");
    let bytes = serde_json::to_vec(&value).ok()?;
    Some((bytes, NotAnObject { got }))
}

/// Whether every `"arguments":` member in `bytes` holds an object or `null`, or there is none,
/// so that [`take_non_object_arguments`] has nothing to take. An unescaped `"arguments"`
/// followed by `:` can only be an object key (a string value is never followed by `:`), and
/// `params.arguments` is one of those keys; a message with a `\u` escape, which could spell the
/// key otherwise, is left to the parser. `false` means "parse to find out".
fn arguments_are_objects(bytes: &[u8]) -> bool {
    if UNICODE_ESCAPE.find(bytes).is_some() {
        return false;
    }
    fn skip_space(rest: &[u8]) -> &[u8] {
        let start = rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        &rest[start..]
    }
    let mut rest = bytes;
    while let Some(at) = ARGUMENTS_KEY.find(rest) {
        rest = &rest[at + ARGUMENTS_KEY.needle().len()..];
        let Some(value) = skip_space(rest).strip_prefix(b":") else {
            continue;
        };
        match skip_space(value).first() {
            Some(b'{' | b'n') => {}
            _ => return false,
        }
    }
    true
}

/// What a transport does with one incoming message, whichever the transport.
#[derive(Debug)]
pub(crate) enum Screened {
    /// Parse it as it came; `tools_call` says whether it may be a `tools/call`, so that the
    /// transport need not look again.
    Pass { tools_call: bool },
    /// A `tools/call` whose `arguments` is not an object: parse the message without it, and
    /// attach [`NotAnObject`] so that the call is refused with an `isError`.
    Repaired(Vec<u8>, NotAnObject),
    /// A `tools/call` too deep to parse whole: parse the cut message, and attach [`TooDeep`]
    /// so that the call is refused with an `isError` naming the depth.
    Cut(Vec<u8>, TooDeep),
    /// Too deep, and not a call that can be cut: answer a JSON-RPC parse error with
    /// `message`, to the message's `id` when it has one.
    Refuse {
        id: Option<serde_json::Value>,
        message: String,
    },
}

/// The guard's decision for `bytes`, with [`MESSAGE_DEPTH_LIMIT`].
pub(crate) fn screen(bytes: &[u8]) -> Screened {
    match guard(bytes, MESSAGE_DEPTH_LIMIT) {
        Guarded::Pass => {
            // Whether it may be a `tools/call` (a cheap test before parsing).
            let tools_call = TOOLS_CALL.find(bytes).is_some();
            match tools_call
                .then(|| take_non_object_arguments(bytes))
                .flatten()
            {
                Some((repaired, not)) => Screened::Repaired(repaired, not),
                None => Screened::Pass { tools_call },
            }
        }
        Guarded::Cut { cut, too_deep } => {
            let value = serde_json::from_slice::<serde_json::Value>(&cut).ok();
            let is_call = value
                .as_ref()
                .and_then(|value| value.get("method"))
                .is_some_and(|method| method == "tools/call");
            if is_call && too_deep.arguments_depth.is_some() {
                return Screened::Cut(cut, too_deep);
            }
            Screened::Refuse {
                id: value.and_then(|mut value| value.get_mut("id").map(std::mem::take)),
                message: parse_error_message(&too_deep, MESSAGE_DEPTH_LIMIT),
            }
        }
    }
}

/// The JSON-RPC error for a message that cannot be read because of its depth.
pub(crate) fn parse_error_message(too_deep: &TooDeep, limit: usize) -> String {
    format!(
        "Parse error: the message nests {} levels deep; the limit is {limit} levels",
        too_deep.message_depth
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_messages_that_may_hold_non_object_arguments_are_parsed() {
        for quick in [
            r#"{"method":"tools/call","params":{"name":"t","arguments":{"a":[1]}}}"#,
            r#"{"method":"tools/call","params":{"name":"t","arguments" : null}}"#,
            r#"{"method":"tools/call","params":{"name":"arguments"}}"#,
            r#"{"method":"tools/list"}"#,
        ] {
            assert!(arguments_are_objects(quick.as_bytes()), "{quick}");
            assert!(
                take_non_object_arguments(quick.as_bytes()).is_none(),
                "{quick}"
            );
        }
        for parsed in [
            r#"{"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"method":"tools/call","params":{"name":"t","arguments":"x"}}"#,
            r#"{"method":"tools/call","params":{"name":"t","argument\u0073":7}}"#,
        ] {
            assert!(!arguments_are_objects(parsed.as_bytes()), "{parsed}");
            assert!(
                take_non_object_arguments(parsed.as_bytes()).is_some(),
                "{parsed}"
            );
        }
        // A nested `arguments` key that is not an object only costs the full parse.
        let nested = r#"{"method":"tools/call","params":{"arguments":{"arguments":1}}}"#;
        assert!(!arguments_are_objects(nested.as_bytes()));
        assert!(take_non_object_arguments(nested.as_bytes()).is_none());
    }
    use super::*;

    fn nested(levels: usize) -> String {
        let mut value = String::from("1");
        for _ in 0..levels {
            value = format!("{{\"children\":[{value}]}}");
        }
        value
    }

    fn call(arguments: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
        )
    }

    #[test]
    fn shallow_messages_pass_unchanged() {
        assert_eq!(guard(call(&nested(20)).as_bytes(), 100), Guarded::Pass);
        assert_eq!(guard(b"not json at all {[", 100), Guarded::Pass);
    }

    #[test]
    fn deep_arguments_are_cut_and_measured() {
        let message = call(&nested(70));
        let Guarded::Cut { cut, too_deep } = guard(message.as_bytes(), 100) else {
            panic!("70 levels of children must be cut");
        };
        // 70 objects and 70 arrays under `arguments`, which is itself the outermost object.
        assert_eq!(too_deep.arguments_depth, Some(140));
        assert_eq!(too_deep.message_depth, 142);
        let value: serde_json::Value = serde_json::from_slice(&cut).expect("the cut parses");
        assert_eq!(value["id"], 7);
        assert_eq!(value["params"]["name"], "t");
        let object = value.as_object().expect("an object");
        assert_eq!(tonic_mcp_codec::depth_within(object, usize::MAX), Some(100));
    }

    #[test]
    fn strings_with_brackets_and_escapes_do_not_count() {
        let deep = format!(
            r#"{{"a":"[[[{{\"","params":{{"name":"x\"]","arguments":{}}}}}"#,
            nested(60)
        );
        let Guarded::Cut { cut, too_deep } = guard(deep.as_bytes(), 100) else {
            panic!("must be cut");
        };
        assert_eq!(too_deep.arguments_depth, Some(120));
        let value: serde_json::Value = serde_json::from_slice(&cut).expect("the cut parses");
        assert_eq!(value["a"], "[[[{\"");
        assert_eq!(value["params"]["name"], "x\"]");
    }

    #[test]
    fn deep_messages_without_arguments_have_no_arguments_depth() {
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":{}}}}}"#,
            nested(60)
        );
        let Guarded::Cut { too_deep, .. } = guard(message.as_bytes(), 100) else {
            panic!("must be cut");
        };
        assert_eq!(too_deep.arguments_depth, None);
    }

    #[test]
    fn non_object_arguments_are_taken_out() {
        let (bytes, not) = take_non_object_arguments(call("[1]").as_bytes()).expect("an array");
        assert_eq!(not.got, "an array");
        let value: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(value["params"], serde_json::json!({"name": "t"}));
        assert_eq!(take_non_object_arguments(call("{}").as_bytes()), None);
        assert_eq!(take_non_object_arguments(call("null").as_bytes()), None);
        assert_eq!(
            take_non_object_arguments(b"{\"method\":\"ping\",\"params\":{\"arguments\":1}}"),
            None
        );
    }

    #[test]
    fn unbalanced_input_never_panics() {
        for input in [
            &b"]]]]}}}"[..],
            b"[[[[",
            b"\"\\",
            b"{\"params\":{\"arguments\":[[[[",
        ] {
            let _ = guard(input, 2);
        }
    }
}
