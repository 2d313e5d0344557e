//! Errors reported through `CodeGeneratorResponse.error`.
//!
//! Every message names the proto element (fully qualified) or the option at fault, and says what
//! would be valid. protoc and buf print it against the input.

use std::fmt;

/// A generation error. Shown to the user by protoc or buf; the plugin still exits 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A `--rust-mcp_opt` parameter is unknown or has an invalid value.
    Option {
        /// The parameter as written (`key` or `key=value`).
        option: String,
        /// What is wrong and what would be valid.
        reason: String,
    },
    /// A proto input this plugin does not support (an editions file, a field name a host rejects).
    Unsupported {
        /// The fully qualified element, or the file name.
        element: String,
        /// What is wrong and what would be valid.
        reason: String,
    },
    /// An option on a proto element is invalid (`rust_mcp.tool`, `rust_mcp.field`, …).
    InvalidElementOption {
        /// The fully qualified element.
        element: String,
        /// The option, e.g. `(rust_mcp.tool).name`.
        option: String,
        /// What is wrong and what would be valid.
        reason: String,
    },
    /// Two RPCs resolve to the same tool name.
    ToolNameCollision {
        /// The tool name both resolve to.
        name: String,
        /// The first RPC (`/pkg.Service/Method`).
        first: String,
        /// The second RPC.
        second: String,
    },
    /// The request could not be turned into descriptors (inconsistent or malformed input).
    Descriptor(String),
    /// A failure inside code generation that is a bug of this plugin.
    Internal(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Option { option, reason } => write!(f, "option `{option}`: {reason}"),
            Error::Unsupported { element, reason } => write!(f, "{element}: {reason}"),
            Error::InvalidElementOption {
                element,
                option,
                reason,
            } => write!(f, "{element}: option {option}: {reason}"),
            Error::ToolNameCollision {
                name,
                first,
                second,
            } => write!(
                f,
                "tool name `{name}` is produced by both {first} and {second}; set \
                 `(rust_mcp.tool).name` on one of them, a service `prefix`, or another \
                 `tool_names` scheme"
            ),
            Error::Descriptor(message) => {
                write!(f, "invalid descriptors in the request: {message}")
            }
            Error::Internal(message) => write!(
                f,
                "internal error in protoc-gen-rust-mcp (please report it): {message}"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Result alias for generation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
