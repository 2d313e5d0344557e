//! [`BuildError`]: why a `build.rs` step failed.

use std::fmt;
use std::io;

/// Why a `build.rs` step failed.
///
/// Its `Debug` output is its message as is, so a `main` returning this error (directly or in a
/// `Box<dyn Error>`) prints protoc's and the plugin's messages as they were written, with their
/// line breaks, rather than an escaped dump.
pub struct BuildError {
    message: String,
}

impl BuildError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> BuildError {
        BuildError {
            message: message.into(),
        }
    }

    /// The message, as `Display` and `Debug` print it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

impl From<io::Error> for BuildError {
    fn from(error: io::Error) -> BuildError {
        BuildError::new(error.to_string())
    }
}

impl From<tonic_mcp_schema::error::Error> for BuildError {
    fn from(error: tonic_mcp_schema::error::Error) -> BuildError {
        BuildError::new(error.to_string())
    }
}

impl From<BuildError> for io::Error {
    fn from(error: BuildError) -> io::Error {
        io::Error::other(error.message)
    }
}
