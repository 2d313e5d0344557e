//! The settings of MCP tasks: the bounds (`--max-tasks-per-owner`, `--max-running-tasks`,
//! `--max-task-result-bytes`) and when a call becomes a task (`--task-mode`,
//! `--task-inline-wait`), or the `[tasks]` table of `--config`.

use std::path::Path;

use clap::ArgMatches;

use crate::config_file::{TaskBounds, TaskModeName};
use crate::error::Error;

use super::flag_or_key;

/// The task settings the flags set, or the error for a duration that is not one.
pub(super) fn flags(matches: &ArgMatches) -> Result<TaskBounds, Error> {
    Ok(TaskBounds {
        max_per_owner: count(matches, "max-tasks-per-owner"),
        max_running: count(matches, "max-running-tasks"),
        max_result_bytes: matches.get_one::<usize>("max-task-result-bytes").copied(),
        mode: matches
            .get_one::<String>("task-mode")
            .map(|name| match name.as_str() {
                "always" => TaskModeName::Always,
                "never" => TaskModeName::Never,
                // clap takes only the three names.
                _ => TaskModeName::Auto,
            }),
        inline_wait: super::duration_flag(matches, "task-inline-wait")?,
    })
}

/// The value of the count flag `id`, if given.
fn count(matches: &ArgMatches, id: &str) -> Option<usize> {
    matches
        .get_one::<u32>(id)
        .map(|n| usize::try_from(*n).unwrap_or(usize::MAX))
}

/// The flags' settings and those of the `[tasks]` table of `path`: each set in one place at
/// most.
pub(super) fn merge(flags: TaskBounds, file: TaskBounds, path: &Path) -> Result<TaskBounds, Error> {
    Ok(TaskBounds {
        max_per_owner: flag_or_key(
            "tasks",
            flags.max_per_owner,
            file.max_per_owner,
            ("max-tasks-per-owner", "max_per_owner"),
            path,
        )?,
        max_running: flag_or_key(
            "tasks",
            flags.max_running,
            file.max_running,
            ("max-running-tasks", "max_running"),
            path,
        )?,
        max_result_bytes: flag_or_key(
            "tasks",
            flags.max_result_bytes,
            file.max_result_bytes,
            ("max-task-result-bytes", "max_result_bytes"),
            path,
        )?,
        mode: flag_or_key("tasks", flags.mode, file.mode, ("task-mode", "mode"), path)?,
        inline_wait: flag_or_key(
            "tasks",
            flags.inline_wait,
            file.inline_wait,
            ("task-inline-wait", "inline_wait"),
            path,
        )?,
    })
}

/// The runtime's task limits, with its defaults where nothing was set.
pub(super) fn limits(set: TaskBounds) -> tonic_mcp_tasks::TaskLimits {
    let defaults = tonic_mcp_tasks::TaskLimits::default();
    tonic_mcp_tasks::TaskLimits {
        max_per_owner: set.max_per_owner.unwrap_or(defaults.max_per_owner),
        max_running: set.max_running.unwrap_or(defaults.max_running),
        max_result_bytes: set.max_result_bytes.unwrap_or(defaults.max_result_bytes),
    }
}

/// The runtime's task mode (`auto` with the runtime's inline wait where nothing was set), or
/// the error for an inline wait given with a mode that does not wait.
pub(super) fn mode(set: TaskBounds) -> Result<tonic_mcp::TaskMode, Error> {
    match (set.mode, set.inline_wait) {
        (None | Some(TaskModeName::Auto), None) => Ok(tonic_mcp::TaskMode::auto()),
        (None | Some(TaskModeName::Auto), Some(wait)) => Ok(tonic_mcp::TaskMode::auto_after(wait)),
        (Some(TaskModeName::Always), None) => Ok(tonic_mcp::TaskMode::Always),
        (Some(TaskModeName::Never), None) => Ok(tonic_mcp::TaskMode::Never),
        (Some(mode), Some(_)) => Err(Error::new(format!(
            "--task-inline-wait (`inline_wait` in [tasks]) applies to --task-mode auto only, \
             not {}: under `always` a call is a task at once, under `never` it is never one",
            match mode {
                TaskModeName::Always => "always",
                _ => "never",
            }
        ))),
    }
}
