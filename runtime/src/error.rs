//! Errors from building tool sets and servers. Failures of individual tool calls are not
//! errors: they become `isError` results the model can read.

use std::fmt;

use tonic_mcp_schema::source_info::SetError;

/// An error building a [`ToolSet`](crate::ToolSet) or [`McpServer`](crate::McpServer), or
/// serving one.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The embedded `FileDescriptorSet` does not decode or does not link.
    DescriptorSet(String),
    /// A tool names a message type the descriptor set does not contain.
    UnknownMessage {
        /// Tool name.
        tool: String,
        /// Full proto name that was looked up.
        type_name: String,
    },
    /// A tool's gRPC path is not a valid request path (`/package.Service/Method`).
    InvalidRpcPath {
        /// Tool name.
        tool: String,
        /// The path.
        rpc_path: String,
    },
    /// A tool schema is not valid JSON, not an object, or not a valid 2020-12 schema.
    InvalidSchema {
        /// Tool name.
        tool: String,
        /// `"input"` or `"output"`.
        which: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Two tools have the same name.
    DuplicateTool {
        /// The clashing name.
        name: String,
        /// gRPC path of the tool registered first.
        first: String,
        /// gRPC path of the tool registered second.
        second: String,
    },
    /// A tool name (after prefixing) breaks MCP's naming rules.
    InvalidToolName {
        /// The offending name.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A tool's `_meta` is not a JSON object or names an unknown serving choice.
    InvalidMeta {
        /// Tool name.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// A service asked for by name is not in the descriptor pool.
    UnknownService {
        /// The full name that was looked up.
        name: String,
    },
    /// Tool definitions could not be made from the descriptors (invalid options on an
    /// element, clashing tool names); the message names the proto element.
    ToolGeneration(String),
    /// The client failed the MCP handshake (`initialize`): it sent something else first, or
    /// the transport failed during it. A client that closes the connection before the
    /// handshake (a host probing the command) is not an error.
    Handshake(Box<dyn std::error::Error + Send + Sync>),
    /// The task serving a connection ended abnormally (it panicked or was aborted).
    ServerTask(tokio::task::JoinError),
    /// Accepting connections, or another I/O operation of a transport, failed.
    Io(std::io::Error),
}

impl Error {
    /// A descriptor set that did not become a pool, as this crate says it.
    pub(crate) fn descriptor_set(error: SetError) -> Self {
        match error {
            SetError::Syntax(message) | SetError::Link(message) => Error::DescriptorSet(message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DescriptorSet(message) => write!(f, "invalid MCP file descriptor set: {message}"),
            Self::UnknownMessage { tool, type_name } => write!(
                f,
                "tool `{tool}`: message type `{type_name}` is not in the file descriptor set"
            ),
            Self::InvalidRpcPath { tool, rpc_path } => write!(
                f,
                "tool `{tool}`: `{rpc_path}` is not a gRPC path of the form /package.Service/Method"
            ),
            Self::InvalidSchema {
                tool,
                which,
                message,
            } => write!(f, "tool `{tool}`: invalid {which} schema: {message}"),
            Self::DuplicateTool {
                name,
                first,
                second,
            } => write!(
                f,
                "duplicate tool name `{name}`: used by both {first} and {second}; give one a prefix with `ToolSet::with_prefix`"
            ),
            Self::InvalidToolName { name, reason } => {
                write!(f, "invalid tool name `{name}`: {reason}")
            }
            Self::InvalidMeta { tool, message } => {
                write!(f, "tool `{tool}`: invalid `_meta`: {message}")
            }
            Self::UnknownService { name } => {
                write!(f, "service `{name}` is not in the descriptor pool")
            }
            Self::ToolGeneration(message) => {
                write!(f, "tools could not be made from the descriptors: {message}")
            }
            Self::Handshake(error) => write!(f, "the MCP handshake failed: {error}"),
            Self::ServerTask(error) => write!(f, "the MCP server task failed: {error}"),
            Self::Io(error) => write!(f, "serving MCP failed: {error}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Handshake(error) => Some(error.as_ref()),
            Self::ServerTask(error) => Some(error),
            Self::Io(error) => Some(error),
            _ => None,
        }
    }
}
