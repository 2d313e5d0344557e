//! The gateway's one error type: a message for the person who started it.

use std::fmt;

/// Why the gateway cannot start or serve. The message names the flag, file, service or proto
/// element at fault, and never carries a header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<tonic_mcp::Error> for Error {
    fn from(error: tonic_mcp::Error) -> Error {
        Error::new(error.to_string())
    }
}

impl From<tonic_mcp_schema::Error> for Error {
    fn from(error: tonic_mcp_schema::Error) -> Error {
        Error::new(error.to_string())
    }
}
