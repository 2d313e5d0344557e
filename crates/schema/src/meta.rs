//! What a tool carries in its MCP `_meta`: the proto identity of its RPC and how the runtime
//! serves it, under keys with our own prefix.
//!
//! MCP reserves `_meta` keys whose prefix has `modelcontextprotocol` or `mcp` as its second
//! label; everyone else picks a prefix of their own (labels of letters, digits and hyphens,
//! separated by dots, ending in `/`) and a name (alphanumeric at both ends, with `-`, `_` and
//! `.` inside). Ours is [`META_PREFIX`], the project's name, which is a valid one-label
//! prefix that no other vendor uses; [`is_valid_meta_key`] checks a key against those rules.

use crate::rpc_kind::RpcKind;

/// The prefix of every `_meta` key this project writes.
pub const META_PREFIX: &str = "protoc-gen-rust-mcp/";

/// The tool `_meta` key holding the RPC's identity (see [`ToolSpec::meta`](crate::ToolSpec::meta)): `path`, `inputType`,
/// `outputType`, `streaming`, `taskSupport`, and `category`, `confirm` and `longRunning` when
/// set.
pub const RPC_META_KEY: &str = "protoc-gen-rust-mcp/rpc";

/// The result `_meta` key holding the call's gRPC status, `{"code": 5, "name": "NOT_FOUND"}`.
/// A result the runtime made itself (invalid arguments, a refused, declined or cancelled call,
/// an undecodable response) carries the code it stands for and `"local": true`.
pub const STATUS_META_KEY: &str = "protoc-gen-rust-mcp/status";

/// Whether calls of a tool may run as MCP tasks (`(rust_mcp.tool).task_support`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Calls always answer with the tool result.
    #[default]
    Forbidden,
    /// Calls from clients that declare the tasks extension answer with a task.
    Optional,
    /// Every call is a task; a client that does not ask for one is refused.
    Required,
}

impl TaskSupport {
    /// The default for an RPC kind: tasks for RPCs that stream responses.
    pub fn default_for(kind: RpcKind) -> TaskSupport {
        match kind {
            RpcKind::ServerStreaming | RpcKind::Bidi => TaskSupport::Optional,
            RpcKind::Unary | RpcKind::ClientStreaming => TaskSupport::Forbidden,
        }
    }

    /// The name listed in `_meta` (`"forbidden"`, `"optional"`, `"required"`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Calls may run as tasks.
    pub fn allows_tasks(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// What a tool that asks for confirmation does when the client cannot be asked
/// (`(rust_mcp.tool).unconfirmed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unconfirmed {
    /// Refuse the call; the RPC is not called.
    #[default]
    Refuse,
    /// Call the RPC without asking.
    Proceed,
}

impl Unconfirmed {
    /// The name listed in `_meta` (`"refuse"`, `"proceed"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Unconfirmed::Refuse => "refuse",
            Unconfirmed::Proceed => "proceed",
        }
    }
}

impl RpcKind {
    /// The streaming kind as listed in `_meta`: `unary`, `server_streaming`,
    /// `client_streaming` or `bidi_streaming`.
    pub fn as_str(self) -> &'static str {
        match self {
            RpcKind::Unary => "unary",
            RpcKind::ServerStreaming => "server_streaming",
            RpcKind::ClientStreaming => "client_streaming",
            RpcKind::Bidi => "bidi_streaming",
        }
    }
}

/// Whether `key` follows MCP's rules for `_meta` keys, and is not in a reserved namespace.
pub fn is_valid_meta_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let Some(prefix) = prefix else {
        return name_ok;
    };
    let labels: Vec<&str> = prefix.split('.').collect();
    let labels_ok = labels.iter().all(|label| {
        label.starts_with(|c: char| c.is_ascii_alphabetic())
            && label.ends_with(|c: char| c.is_ascii_alphanumeric())
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    });
    let reserved = labels
        .get(1)
        .is_some_and(|second| matches!(*second, "modelcontextprotocol" | "mcp"));
    name_ok && labels_ok && !reserved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_keys_follow_the_rules() {
        for key in [RPC_META_KEY, STATUS_META_KEY] {
            assert!(key.starts_with(META_PREFIX));
            assert!(is_valid_meta_key(key), "{key}");
        }
    }

    #[test]
    fn the_rules_reject_what_the_spec_rejects() {
        for key in [
            "io.modelcontextprotocol/tasks",
            "dev.mcp/x",
            "-bad/x",
            "bad-/x",
            "ok/-x",
            "ok/x-",
            "a..b/x",
            "ok/",
            "1abc/x",
        ] {
            assert!(!is_valid_meta_key(key), "{key}");
        }
        for key in ["x", "a.b-c/d_e.f", "com.example/rpc", "progressToken"] {
            assert!(is_valid_meta_key(key), "{key}");
        }
    }
}
