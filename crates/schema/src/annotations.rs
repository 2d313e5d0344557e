//! MCP tool annotations: the hints a host reads to decide how carefully to call a tool.

use prost_types::method_options::IdempotencyLevel;

use crate::extensions::ToolOptions;

/// MCP tool annotations (hints for clients), each unset unless something is known of it. `None`
/// leaves a hint out of `tools/list`.
///
/// Generated code names it `tonic_mcp::codegen::ToolAnnotations`:
///
/// ```
/// use tonic_mcp_schema::Annotations;
///
/// const READ_ONLY: Annotations = Annotations {
///     read_only: Some(true),
///     ..Annotations::NONE
/// };
/// assert_eq!(READ_ONLY.destructive, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may perform destructive updates.
    pub destructive: Option<bool>,
    /// `idempotentHint`: repeating a call with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool interacts with an open world of external entities.
    pub open_world: Option<bool>,
}

impl Annotations {
    /// No hints.
    pub const NONE: Self = Self {
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: None,
    };

    /// The hints of a method with idempotency level `level` and tool options `options`.
    ///
    /// A hint is sent, `false` included, only where something is known; unknown hints stay
    /// unset so that the MCP defaults apply (`destructiveHint` and `openWorldHint` true).
    /// - `NO_SIDE_EFFECTS`, or `read_only: true`: read-only, so neither destructive nor
    ///   anything but idempotent (`readOnlyHint: true, destructiveHint: false,
    ///   idempotentHint: true`).
    /// - `IDEMPOTENT`: idempotent, and not read-only (the level says the call may have side
    ///   effects; a read-only RPC says `NO_SIDE_EFFECTS`).
    /// - `destructive: true`: destructive, so not read-only.
    /// - An option set explicitly wins over what the level implies.
    pub fn resolve(level: Option<IdempotencyLevel>, options: &ToolOptions) -> Annotations {
        let mut hints = Annotations::default();
        match level {
            Some(IdempotencyLevel::NoSideEffects) => hints.read_only = Some(true),
            Some(IdempotencyLevel::Idempotent) => {
                hints.read_only = Some(false);
                hints.idempotent = Some(true);
            }
            _ => {}
        }
        if options.destructive == Some(true) {
            hints.read_only = Some(false);
        }
        hints.read_only = options.read_only.or(hints.read_only);
        if hints.read_only == Some(true) {
            hints.destructive = Some(false);
            hints.idempotent = Some(true);
        }
        hints.destructive = options.destructive.or(hints.destructive);
        hints.idempotent = options.idempotent.or(hints.idempotent);
        hints.open_world = options.open_world;
        hints
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(level: Option<IdempotencyLevel>, options: ToolOptions) -> [Option<bool>; 4] {
        let a = Annotations::resolve(level, &options);
        [a.read_only, a.destructive, a.idempotent, a.open_world]
    }

    #[test]
    fn nothing_known_sends_nothing() {
        assert_eq!(hints(None, ToolOptions::default()), [None; 4]);
        assert_eq!(
            hints(
                Some(IdempotencyLevel::IdempotencyUnknown),
                ToolOptions::default()
            ),
            [None; 4]
        );
    }

    #[test]
    fn no_side_effects_is_read_only_not_destructive_and_idempotent() {
        assert_eq!(
            hints(
                Some(IdempotencyLevel::NoSideEffects),
                ToolOptions::default()
            ),
            [Some(true), Some(false), Some(true), None]
        );
        let read_only = ToolOptions {
            read_only: Some(true),
            ..ToolOptions::default()
        };
        assert_eq!(
            hints(None, read_only),
            [Some(true), Some(false), Some(true), None]
        );
    }

    #[test]
    fn idempotent_is_not_read_only_and_leaves_destructive_unknown() {
        assert_eq!(
            hints(Some(IdempotencyLevel::Idempotent), ToolOptions::default()),
            [Some(false), None, Some(true), None]
        );
    }

    #[test]
    fn destructive_is_not_read_only() {
        let destructive = ToolOptions {
            destructive: Some(true),
            ..ToolOptions::default()
        };
        assert_eq!(
            hints(None, destructive.clone()),
            [Some(false), Some(true), None, None]
        );
        // The option wins over the level it contradicts.
        assert_eq!(
            hints(Some(IdempotencyLevel::NoSideEffects), destructive),
            [Some(false), Some(true), None, None]
        );
    }

    #[test]
    fn explicit_options_win_and_false_is_kept() {
        let options = ToolOptions {
            read_only: Some(false),
            destructive: Some(false),
            idempotent: Some(false),
            open_world: Some(false),
            ..ToolOptions::default()
        };
        assert_eq!(
            hints(Some(IdempotencyLevel::NoSideEffects), options),
            [Some(false), Some(false), Some(false), Some(false)]
        );
    }
}
