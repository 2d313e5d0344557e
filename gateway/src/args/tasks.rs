//! The bounds on MCP tasks: `--max-tasks-per-owner`, `--max-running-tasks`,
//! `--max-task-result-bytes`, or the `[tasks]` table of `--config`.

use std::path::Path;

use clap::ArgMatches;

use crate::config_file::TaskBounds;
use crate::error::Error;

/// The task bounds the flags set.
pub(super) fn flags(matches: &ArgMatches) -> TaskBounds {
    TaskBounds {
        max_per_owner: count(matches, "max-tasks-per-owner"),
        max_running: count(matches, "max-running-tasks"),
        max_result_bytes: matches.get_one::<usize>("max-task-result-bytes").copied(),
    }
}

/// The value of the count flag `id`, if given.
fn count(matches: &ArgMatches, id: &str) -> Option<usize> {
    matches
        .get_one::<u32>(id)
        .map(|n| usize::try_from(*n).unwrap_or(usize::MAX))
}

/// The flags' bounds and those of the `[tasks]` table of `path`: each set in one place at
/// most.
pub(super) fn merge(flags: TaskBounds, file: TaskBounds, path: &Path) -> Result<TaskBounds, Error> {
    let one = |flag: Option<usize>, key: Option<usize>, names: (&str, &str)| match (flag, key) {
        (Some(_), Some(_)) => Err(Error::new(format!(
            "--{} conflicts with `{}` in the [tasks] table of {}; set it in one place",
            names.0,
            names.1,
            path.display()
        ))),
        (flag, key) => Ok(flag.or(key)),
    };
    Ok(TaskBounds {
        max_per_owner: one(
            flags.max_per_owner,
            file.max_per_owner,
            ("max-tasks-per-owner", "max_per_owner"),
        )?,
        max_running: one(
            flags.max_running,
            file.max_running,
            ("max-running-tasks", "max_running"),
        )?,
        max_result_bytes: one(
            flags.max_result_bytes,
            file.max_result_bytes,
            ("max-task-result-bytes", "max_result_bytes"),
        )?,
    })
}

/// The runtime's task limits, with its defaults where nothing was set.
pub(super) fn limits(set: TaskBounds) -> tonic_mcp::TaskLimits {
    let defaults = tonic_mcp::TaskLimits::default();
    tonic_mcp::TaskLimits {
        max_per_owner: set.max_per_owner.unwrap_or(defaults.max_per_owner),
        max_running: set.max_running.unwrap_or(defaults.max_running),
        max_result_bytes: set.max_result_bytes.unwrap_or(defaults.max_result_bytes),
    }
}
