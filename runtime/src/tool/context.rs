//! Per-call context and hooks that turn it into gRPC metadata.

use std::{fmt, sync::Arc};

use http::HeaderName;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, MetadataMap};

/// What a call hook can see about one tool call.
///
/// Over streamable HTTP, [`http_parts`](Self::http_parts) holds the inbound HTTP request's
/// method, URI and headers; over stdio there are none.
#[derive(Clone, Copy)]
pub struct CallContext<'a> {
    pub(crate) tool: &'a str,
    pub(crate) rpc_path: &'a str,
    pub(crate) http: Option<&'a http::request::Parts>,
    pub(crate) meta: &'a serde_json::Map<String, serde_json::Value>,
}

impl<'a> CallContext<'a> {
    /// The context of a call of `tool`, which calls `rpc_path`, as the server makes it: with
    /// the inbound HTTP request's head over streamable HTTP (`http`), and the MCP request's
    /// `_meta`. For testing call hooks and observers.
    pub fn new(
        tool: &'a str,
        rpc_path: &'a str,
        http: Option<&'a http::request::Parts>,
        meta: &'a serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        Self {
            tool,
            rpc_path,
            http,
            meta,
        }
    }

    /// The tool name as listed (with any prefix).
    pub fn tool_name(&self) -> &'a str {
        self.tool
    }

    /// The gRPC path the tool calls, `/package.Service/Method`.
    pub fn rpc_path(&self) -> &'a str {
        self.rpc_path
    }

    /// The inbound HTTP request, when the server runs over streamable HTTP.
    pub fn http_parts(&self) -> Option<&'a http::request::Parts> {
        self.http
    }

    /// One inbound HTTP header, when the server runs over streamable HTTP.
    pub fn header(&self, name: &str) -> Option<&'a http::HeaderValue> {
        self.http?.headers.get(name)
    }

    /// Who sends the request, when an authenticating layer in front of the streamable HTTP
    /// endpoint says ([`Caller`]).
    pub fn caller(&self) -> Option<&'a Caller> {
        self.http?.extensions.get()
    }

    /// The MCP request's `_meta` object.
    pub fn meta(&self) -> &'a serde_json::Map<String, serde_json::Value> {
        self.meta
    }
}

// Header values may hold credentials: the Debug output names headers only.
impl fmt::Debug for CallContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("tool", &self.tool)
            .field("rpc_path", &self.rpc_path)
            .field(
                "http_headers",
                &self.http.map(|p| p.headers.keys().collect::<Vec<_>>()),
            )
            .finish_non_exhaustive()
    }
}

/// Who sends a request to the streamable HTTP endpoint, as an authenticating layer in front of
/// [`McpHttpService`](crate::McpHttpService) names them (`tonic-mcp-auth` names the access
/// token's owner): the layer puts it in the request's extensions. A session opened by a caller
/// then answers only to that caller (another gets 404, as for an unknown session) and counts
/// toward its [`SessionLimits::max_sessions_per_principal`](crate::SessionLimits), and a task
/// answers only to the caller that started it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller(Arc<str>);

impl Caller {
    /// The caller named `id`: the same caller, the same id.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// The caller's id.
    pub fn id(&self) -> &str {
        &self.0
    }
}

/// A hook's refusal of a call; the model sees `call refused: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(String);

impl Refusal {
    /// A refusal with a message for the model. Never put secrets in it.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A per-call hook: inspect the call, add gRPC metadata, or refuse it.
pub(crate) type CallHook =
    Arc<dyn Fn(&CallContext<'_>, &mut MetadataMap) -> Result<(), Refusal> + Send + Sync>;

/// A call hook that copies the listed inbound HTTP headers into gRPC metadata, unchanged.
///
/// Off by default: nothing is forwarded unless this hook is installed. Names are
/// case-insensitive; names that are not valid ASCII metadata keys (binary `-bin` keys,
/// malformed names) are ignored, as are values that are not visible ASCII. Values are never
/// logged and never appear in errors. Over stdio there are no headers, and the hook does
/// nothing.
///
/// ```
/// use tonic_mcp::{McpServer, forward_headers};
///
/// let server = McpServer::builder("items", "1.0.0")
///     .on_call(forward_headers(["authorization", "x-request-id"]))
///     .build();
/// # let _ = server;
/// ```
pub fn forward_headers<I, S>(
    names: I,
) -> impl Fn(&CallContext<'_>, &mut MetadataMap) -> Result<(), Refusal> + Clone + Send + Sync + 'static
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let names: Vec<(HeaderName, AsciiMetadataKey)> = names
        .into_iter()
        .filter_map(|name| {
            let name = name.as_ref().to_ascii_lowercase();
            let header = HeaderName::from_bytes(name.as_bytes()).ok()?;
            let key = AsciiMetadataKey::from_bytes(name.as_bytes()).ok()?;
            Some((header, key))
        })
        .collect();
    let names = Arc::new(names);
    move |context: &CallContext<'_>, metadata: &mut MetadataMap| {
        let Some(parts) = context.http_parts() else {
            return Ok(());
        };
        for (header, key) in names.iter() {
            for value in parts.headers.get_all(header) {
                if let Ok(value) = AsciiMetadataValue::try_from(value.as_bytes()) {
                    metadata.append(key.clone(), value);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> http::request::Parts {
        let mut builder = http::Request::builder().uri("/mcp");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let (parts, ()) = builder
            .body(())
            .unwrap_or_else(|e| unreachable!("{e}"))
            .into_parts();
        parts
    }

    #[test]
    fn forwards_listed_headers_only() {
        let parts = parts(&[
            ("Authorization", "Bearer t"),
            ("Cookie", "secret"),
            ("X-Trace", "1"),
        ]);
        let meta = serde_json::Map::new();
        let context = CallContext {
            tool: "T",
            rpc_path: "/a.B/C",
            http: Some(&parts),
            meta: &meta,
        };
        let hook = forward_headers(["authorization", "X-Trace", "bad name", "k-bin"]);
        let mut metadata = MetadataMap::new();
        assert_eq!(hook(&context, &mut metadata), Ok(()));
        assert_eq!(metadata.len(), 2);
        assert_eq!(
            metadata.get("authorization").and_then(|v| v.to_str().ok()),
            Some("Bearer t")
        );
        assert!(metadata.get("cookie").is_none());
        assert!(!format!("{context:?}").contains("Bearer"));
    }
}
