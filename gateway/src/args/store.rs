//! The task store the replicas share (`--task-store`, `--task-store-password-env`,
//! `--task-store-password-file`, `--task-store-prefix`) and the task key (`--task-key-file`),
//! or the `[task_store]` table of `--config`.

use std::path::{Path, PathBuf};

use clap::ArgMatches;

use crate::config_file::TaskStoreKeys;
use crate::error::Error;
use crate::task_store::{TaskStoreSettings, check_url};

use super::flag_or_key;

/// What the flags set.
pub(super) fn flags(matches: &ArgMatches) -> TaskStoreKeys {
    TaskStoreKeys {
        url: matches.get_one::<String>("task-store").cloned(),
        password_env: matches
            .get_one::<String>("task-store-password-env")
            .cloned(),
        password_file: matches
            .get_one::<PathBuf>("task-store-password-file")
            .cloned(),
        key_prefix: matches.get_one::<String>("task-store-prefix").cloned(),
        key_file: matches.get_one::<PathBuf>("task-key-file").cloned(),
    }
}

/// The flags' settings and those of the `[task_store]` table of `path`: each set in one place
/// at most.
pub(super) fn merge(
    flags: TaskStoreKeys,
    file: TaskStoreKeys,
    path: &Path,
) -> Result<TaskStoreKeys, Error> {
    let one = |flag, key, names| flag_or_key("task_store", flag, key, names, path);
    let paths = |flag, key, names| flag_or_key("task_store", flag, key, names, path);
    Ok(TaskStoreKeys {
        url: one(flags.url, file.url, ("task-store", "url"))?,
        password_env: one(
            flags.password_env,
            file.password_env,
            ("task-store-password-env", "password_env"),
        )?,
        password_file: paths(
            flags.password_file,
            file.password_file,
            ("task-store-password-file", "password_file"),
        )?,
        key_prefix: one(
            flags.key_prefix,
            file.key_prefix,
            ("task-store-prefix", "key_prefix"),
        )?,
        key_file: paths(flags.key_file, file.key_file, ("task-key-file", "key_file"))?,
    })
}

/// The store and the task key's file the settings describe.
///
/// # Errors
///
/// The URL is not a Redis URL or holds a password, both password sources are given, or a
/// password source or a prefix is given without a store.
pub(super) fn settings(
    keys: TaskStoreKeys,
) -> Result<(Option<TaskStoreSettings>, Option<PathBuf>), Error> {
    if keys.password_env.is_some() && keys.password_file.is_some() {
        return Err(Error::new(
            "--task-store-password-env and --task-store-password-file (`password_env` and \
             `password_file` in [task_store]) both name the store's password; give one",
        ));
    }
    let Some(url) = keys.url else {
        let without = [
            (keys.password_env.is_some(), "--task-store-password-env"),
            (keys.password_file.is_some(), "--task-store-password-file"),
            (keys.key_prefix.is_some(), "--task-store-prefix"),
        ];
        if let Some((_, flag)) = without.iter().find(|(given, _)| *given) {
            return Err(Error::new(format!(
                "{flag} needs --task-store (`url` in [task_store]): it is a setting of the \
                 store"
            )));
        }
        return Ok((None, keys.key_file));
    };
    check_url(&url).map_err(|why| Error::new(format!("--task-store: {why}")))?;
    Ok((
        Some(TaskStoreSettings {
            url,
            password_env: keys.password_env,
            password_file: keys.password_file,
            key_prefix: keys.key_prefix,
        }),
        keys.key_file,
    ))
}
