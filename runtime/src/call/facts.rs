//! What a transport learned of a request before rmcp read it (the message guard, the arguments
//! kept as text, the task requests of revision 2025-11-25), handed to the call as one [`Facts`]
//! value in the request's extensions.

use std::sync::Arc;

use rmcp::model::Extensions;
use serde_json::value::RawValue;

/// What a transport learned of one request; the default is a request it left as it came.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// The call's arguments object, kept as the text the client sent instead of parsed into
    /// the request's map.
    pub(crate) arguments: Option<ArgumentsText>,
    /// The message was nested too deep, and its deep parts were cut.
    pub(crate) too_deep: Option<TooDeep>,
    /// The call's `arguments` was not an object, and was taken out.
    pub(crate) not_an_object: Option<NotAnObject>,
    /// The transport writes a plain result's `structuredContent` from its text block
    /// (`call::structured_text`).
    pub(crate) structured_from_text: bool,
    /// The request is a task request of revision 2025-11-25 the transport routed under an
    /// internal method name (`server::task_shape::route`); a client cannot name those
    /// methods itself.
    pub(crate) routed: bool,
}

/// A call's arguments as the client sent them: the text of a JSON object.
#[derive(Debug, Clone)]
pub(crate) struct ArgumentsText(pub(crate) Arc<str>);

impl ArgumentsText {
    /// The text of `raw`, when it is an object.
    pub(crate) fn of(raw: &RawValue) -> Option<Self> {
        raw.get()
            .starts_with('{')
            .then(|| Self(Arc::from(raw.get())))
    }
}

/// A message that was nested too deep, with its real depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    /// Nesting of the whole message.
    pub(crate) message_depth: usize,
    /// Nesting of `params.arguments` (1 for `{}`), when the message had that member.
    pub(crate) arguments_depth: Option<usize>,
}

/// A `tools/call` whose `arguments` was not an object (an array, a string, a number or a
/// boolean): it is refused with an `isError` naming `$` instead of failing to parse as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotAnObject {
    /// What `arguments` was: "an array", "a string", …
    pub(crate) got: &'static str,
}

impl Facts {
    /// The facts of the request whose extensions (or its handler context's) are `extensions`:
    /// its own over stdio, over streamable HTTP its HTTP request's (the `http::request::Parts`
    /// rmcp hands the handler).
    pub(crate) fn of(extensions: &Extensions) -> Option<&Self> {
        extensions.get::<Self>().or_else(|| {
            extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Self>())
        })
    }
}
