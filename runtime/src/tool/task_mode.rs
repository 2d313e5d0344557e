//! When a tool call that did not ask for a task explicitly is answered with one: the
//! server-wide mode of the [`TaskRouter`](crate::TaskRouter) (`tonic_mcp_tasks::Tasks::mode`)
//! and the tool set's [`ToolSet::with_task_mode`].
//!
//! [`ToolSet::with_task_mode`]: crate::ToolSet::with_task_mode

use std::time::Duration;

/// How long a call that may run as a task is waited for before it becomes one, in the default
/// [`TaskMode::Auto`]: 2 seconds.
///
/// Long enough for what answers at once (a lookup, a short stream, a long-running operation
/// that is quick this time) to come back as a plain result, which every client reads; short
/// enough that a client that can poll is not kept waiting for work that takes minutes.
pub const DEFAULT_INLINE_WAIT: Duration = Duration::from_secs(2);

/// When a `tools/call` that did not ask for a task explicitly gets one (set server-wide with
/// the task router (`tonic_mcp_tasks::Tasks::mode`), per tool set with [`ToolSet::with_task_mode`], which
/// takes precedence).
///
/// Clients that declare the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663)
/// do not ask for a task per call: they say they can take one, and the server decides per
/// call whether to answer with a task (`"resultType": "task"`) or with the result. Some
/// clients declare the extension without ever polling a task (the MCP Inspector's CLI 2.12.0
/// does), so answering every call with a task breaks them for calls that would have answered
/// at once. The mode decides:
///
/// | mode | a client that declared the extension calls a tool whose `taskSupport` is `optional` |
/// |---|---|
/// | [`Auto`](Self::Auto) (default) | the result, if the call ends within `inline_wait`; else a task, carrying on the same call |
/// | [`Always`](Self::Always) | a task at once |
/// | [`Never`](Self::Never) | the result, however long the call takes (up to the tool's deadline) |
///
/// The mode decides only where the tool leaves the choice open: a tool whose `taskSupport`
/// is `required` always runs as a task (and is refused to a client without tasks), one whose
/// `taskSupport` is `forbidden` never does, and a client that declared no tasks always gets
/// the result. A client of revision 2025-11-25 that asks for a task with the `task` parameter
/// (SEP-1686) asks explicitly: it gets a task whatever the mode.
///
/// [`ToolSet::with_task_mode`]: crate::ToolSet::with_task_mode
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskMode {
    /// Wait up to `inline_wait` for the call: one that ends within it is answered with its
    /// result, as for a client without tasks. One still running then becomes a task that
    /// carries on the same gRPC call (it is not made again, and what a stream sent so far is
    /// kept): the client polls `tasks/get` for the rest, and `tasks/cancel` cancels the call.
    /// Progress goes to the client's `progressToken` while the call is answered inline, and
    /// to the task's status message once it is a task.
    ///
    /// A call counts against the task limits (`tonic_mcp_tasks::TaskLimits`) only once it
    /// becomes a task.
    /// When the limits refuse it then (the caller's live tasks, or the server's running
    /// tasks, are at their bound), it is not refused: the call has started already, so it
    /// goes on inline and is answered with its result, as under [`Never`](Self::Never) (a
    /// refusal would throw away the work done, and the client could only call again).
    Auto {
        /// How long the call is waited for before it becomes a task
        /// ([`DEFAULT_INLINE_WAIT`], 2 s, by default).
        inline_wait: Duration,
    },
    /// A task for every call of a tool that allows tasks, from a client that declared the
    /// extension, however quick the call: for clients that always poll.
    Always,
    /// No task unless the tool requires one: every call is answered with its result, for
    /// clients that declare the extension but cannot poll.
    Never,
}

impl TaskMode {
    /// [`TaskMode::Auto`] with the [`DEFAULT_INLINE_WAIT`] of 2 s: the default.
    pub const fn auto() -> Self {
        Self::Auto {
            inline_wait: DEFAULT_INLINE_WAIT,
        }
    }

    /// [`TaskMode::Auto`] waiting `inline_wait` before a call becomes a task.
    pub const fn auto_after(inline_wait: Duration) -> Self {
        Self::Auto { inline_wait }
    }
}

impl Default for TaskMode {
    /// [`TaskMode::auto`].
    fn default() -> Self {
        Self::auto()
    }
}
