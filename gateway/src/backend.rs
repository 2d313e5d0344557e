//! One gRPC server behind the gateway and everything that shapes its tools: from the command
//! line (one backend) or from the `[[backend]]` tables of `--config FILE` (any number).

use std::path::PathBuf;
use std::time::Duration;

use tonic_mcp::ToolSet;
use tonic_mcp_schema::Options;
use tonic_mcp_schema::options::{Scope, option_doc};

use crate::error::Error;
use crate::headers::Headers;
use crate::target::Target;

/// The name of the one backend the command-line flags describe.
pub const FLAGS_BACKEND: &str = "default";

/// One gRPC server and how its RPCs become tools.
#[derive(Debug, Clone)]
pub struct Backend {
    /// The backend's name, unique in the gateway: logs and errors use it.
    pub name: String,
    /// Where its `[[backend]]` table starts (`gateway.toml:12`); `None` for the command line.
    pub origin: Option<String>,
    /// The gRPC server.
    pub target: Target,
    /// Descriptors from this file instead of reflection.
    pub descriptor_set: Option<PathBuf>,
    /// Services to serve (`--service`); empty: every listed one but reflection and health.
    pub services: Vec<String>,
    /// The tool options: naming, selection, schemas.
    pub options: Options,
    /// Static metadata for every call (values never logged).
    pub headers: Headers,
    /// Per-call deadline (`--timeout`).
    pub call_timeout: Option<Duration>,
    /// Server-streaming collection bound (`--max-messages`).
    pub max_messages: Option<u32>,
    /// The largest tool result, in bytes of JSON (`--max-result-bytes`).
    pub max_result_bytes: Option<usize>,
    /// The largest gRPC response message decoded, in bytes (`--max-decoding-message-size`).
    pub max_decoding_message_size: Option<usize>,
    /// The largest gRPC request message encoded, in bytes (`--max-encoding-message-size`).
    pub max_encoding_message_size: Option<usize>,
}

impl Backend {
    /// `error` with where this backend was defined in front, for backends from a file; as it
    /// is for the command line, whose flags the message names already.
    pub(crate) fn locate(&self, error: impl std::fmt::Display) -> Error {
        match &self.origin {
            Some(origin) => Error::new(format!("{origin}: backend `{}`: {error}", self.name)),
            None => Error::new(error.to_string()),
        }
    }

    /// Applies this backend's call settings to one of its tool sets.
    pub(crate) fn configure(&self, mut set: ToolSet) -> ToolSet {
        set = set.with_metadata(self.headers.metadata());
        if let Some(timeout) = self.call_timeout {
            set = set.with_timeout(timeout);
        }
        if let Some(max_messages) = self.max_messages {
            set = set.with_max_messages(max_messages);
        }
        if let Some(bytes) = self.max_result_bytes {
            set = set.with_max_result_bytes(bytes);
        }
        if let Some(bytes) = self.max_decoding_message_size {
            set = set.with_max_decoding_message_size(bytes);
        }
        if let Some(bytes) = self.max_encoding_message_size {
            set = set.with_max_encoding_message_size(bytes);
        }
        set
    }
}

/// What selects and names a backend's tools, in the plugin's option syntax: `opts` as for
/// `--rust-mcp_opt` (comma-separated or one each), then the dedicated settings.
pub(crate) struct ToolSettings<'a> {
    pub(crate) opts: Vec<&'a str>,
    pub(crate) include: Vec<&'a str>,
    pub(crate) exclude: Vec<&'a str>,
    pub(crate) prefix: Option<&'a str>,
    pub(crate) tool_names: Option<&'a str>,
}

impl ToolSettings<'_> {
    /// The tool options, refusing the code options ([`Scope::Code`]), which only shape
    /// generated code. The message names the option; the caller says where it was given.
    pub(crate) fn options(&self) -> Result<Options, String> {
        let mut parts: Vec<String> = Vec::new();
        for opt in &self.opts {
            for part in opt.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let key = part.split_once('=').map_or(part, |(key, _)| key).trim();
                if option_doc(key).is_some_and(|doc| doc.scope == Scope::Code) {
                    return Err(format!(
                        "{key}: shapes generated Rust code, and the gateway generates none; \
                         leave it out"
                    ));
                }
                parts.push(part.to_owned());
            }
        }
        parts.extend(self.include.iter().map(|glob| format!("include={glob}")));
        parts.extend(self.exclude.iter().map(|glob| format!("exclude={glob}")));
        if let Some(prefix) = self.prefix {
            parts.push(format!("prefix={prefix}"));
        }
        if let Some(scheme) = self.tool_names {
            parts.push(format!("tool_names={scheme}"));
        }
        if let Some(part) = parts.iter().find(|part| part.contains(',')) {
            return Err(format!("`{part}`: option values cannot contain a comma"));
        }
        Options::parse(&parts.join(",")).map_err(|e| e.to_string())
    }
}
