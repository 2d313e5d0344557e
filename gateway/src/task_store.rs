//! The task store the replicas share (`--task-store…`, `[task_store]`), the key that signs
//! task ids (`--task-key-file`, `[task_store] key_file`) and `mcp_task_store_errors_total`.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::metrics::{Metrics, register};

/// The operations of `tonic_mcp_redis::RedisTaskStore::on_error`: a series of
/// `mcp_task_store_errors_total` each, at zero from the start.
pub(crate) const OPERATIONS: &[&str] = &[
    "create",
    "finish",
    "get",
    "list",
    "renew",
    "runner_alive",
    "cancel",
];

/// The fewest bytes of a task key (`--task-key-file`).
pub(crate) const MIN_TASK_KEY_BYTES: usize = 32;

/// Where the replicas keep their MCP tasks, as the command line or the config file says it;
/// the password is read (from the environment or a file) when the gateway starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStoreSettings {
    /// `--task-store`, `url`: a `redis://` (or `redis+unix://`) URL without credentials.
    pub url: String,
    /// `--task-store-password-env`, `password_env`: the environment variable holding the
    /// password.
    pub password_env: Option<String>,
    /// `--task-store-password-file`, `password_file`: the file holding the password (a
    /// trailing newline is not part of it).
    pub password_file: Option<PathBuf>,
    /// `--task-store-prefix`, `key_prefix`: the prefix of the store's keys (default
    /// `tonic_mcp_redis::DEFAULT_KEY_PREFIX`).
    pub key_prefix: Option<String>,
}

impl TaskStoreSettings {
    /// The store, its errors counted by `metrics` in `mcp_task_store_errors_total`.
    ///
    /// # Errors
    ///
    /// The password's variable is not set or its file cannot be read, the URL is not a Redis
    /// URL, or the metric cannot be registered.
    pub(crate) fn store(
        &self,
        metrics: Option<&Metrics>,
    ) -> Result<tonic_mcp_redis::RedisTaskStore, Error> {
        let password = self.password(&|name| std::env::var(name).ok())?;
        let mut store = tonic_mcp_redis::RedisTaskStore::new(&self.url, password.as_deref())
            .map_err(|e| Error::new(format!("--task-store: {e}")))?
            .key_prefix(
                self.key_prefix
                    .as_deref()
                    .unwrap_or(tonic_mcp_redis::DEFAULT_KEY_PREFIX),
            );
        if let Some(metrics) = metrics {
            let errors = errors(metrics)?;
            store = store.on_error(move |operation| {
                errors.with_label_values(&[operation]).inc();
            });
        }
        Ok(store)
    }

    /// The password, from the variable `env` gives or from the file.
    fn password(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>, Error> {
        if let Some(name) = &self.password_env {
            let password = env(name).ok_or_else(|| {
                Error::new(format!(
                    "--task-store-password-env names {name}, which is not set (or not UTF-8)"
                ))
            })?;
            return Ok(Some(password));
        }
        let Some(path) = &self.password_file else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::new(format!(
                "--task-store-password-file {}: cannot read it ({e})",
                path.display()
            ))
        })?;
        let password = trim_newline(text.as_bytes());
        if password.is_empty() {
            return Err(Error::new(format!(
                "--task-store-password-file {}: the file is empty",
                path.display()
            )));
        }
        Ok(Some(String::from_utf8_lossy(password).into_owned()))
    }
}

/// `mcp_task_store_errors_total{operation}`, registered with a series at zero for every
/// operation, so that it is declared before the first error.
pub(crate) fn errors(metrics: &Metrics) -> Result<prometheus::IntCounterVec, Error> {
    let errors = register(
        metrics,
        prometheus::IntCounterVec::new(
            prometheus::Opts::new(
                "mcp_task_store_errors_total",
                "Failed operations on the task store the replicas share, by operation (create, \
                 finish, get, list, renew, runner_alive, cancel).",
            ),
            &["operation"],
        ),
    )?;
    for operation in OPERATIONS {
        errors.with_label_values(&[*operation]);
    }
    Ok(errors)
}

/// Why `url` cannot be the task store's URL, if it cannot. The URL is never repeated: it may
/// hold the password it is refused for.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let Some(rest) = url
        .strip_prefix("redis://")
        .or_else(|| url.strip_prefix("redis+unix://"))
    else {
        return Err(
            "expects a redis:// URL of a Redis-protocol server (Redis, Valkey), such as \
             redis://redis:6379/0"
                .to_owned(),
        );
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let in_userinfo = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'));
    let in_query = rest.split_once('?').is_some_and(|(_, query)| {
        query
            .split('&')
            .any(|pair| pair.starts_with("pass=") || pair.starts_with("password="))
    });
    if in_userinfo || in_query {
        return Err(
            "the URL holds a password, which a flag or a config file would show to anyone who \
             lists processes or reads the file: give the URL without it, and the password with \
             --task-store-password-env or --task-store-password-file (`password_env`, \
             `password_file` in [task_store])"
                .to_owned(),
        );
    }
    Ok(())
}

/// The task key in the file at `path`: its bytes, a trailing newline dropped when what is left
/// is still [`MIN_TASK_KEY_BYTES`] long (so a random key that happens to end in a newline
/// byte is kept whole).
///
/// # Errors
///
/// The file cannot be read, or holds fewer than [`MIN_TASK_KEY_BYTES`] bytes.
pub(crate) fn read_task_key(path: &Path) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::new(format!(
            "--task-key-file {}: cannot read it ({e})",
            path.display()
        ))
    })?;
    let trimmed = trim_newline(&bytes);
    let key = if trimmed.len() >= MIN_TASK_KEY_BYTES {
        trimmed
    } else {
        &bytes[..]
    };
    if key.len() < MIN_TASK_KEY_BYTES {
        return Err(Error::new(format!(
            "--task-key-file {}: {} bytes, and a task key needs at least {MIN_TASK_KEY_BYTES} \
             random bytes; make one with `head -c 32 /dev/urandom > task.key` or `openssl rand \
             32 > task.key`, the same file for every replica",
            path.display(),
            trimmed.len()
        )));
    }
    Ok(key.to_vec())
}

/// `bytes` without one trailing `\n` (or `\r\n`).
fn trim_newline(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(label: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "grpc-mcp-gateway-task-store-unit-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(label);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn store(password_env: Option<&str>, password_file: Option<PathBuf>) -> TaskStoreSettings {
        TaskStoreSettings {
            url: "redis://127.0.0.1:6379/0".to_owned(),
            password_env: password_env.map(str::to_owned),
            password_file,
            key_prefix: None,
        }
    }

    #[test]
    fn a_url_with_a_password_is_refused_without_repeating_it() {
        for url in [
            "redis://127.0.0.1:6379/0",
            "redis://redis:6379",
            "redis://user@redis:6379/2",
            "redis+unix:///run/redis.sock",
        ] {
            assert_eq!(check_url(url), Ok(()), "{url}");
        }
        for url in [
            "redis://:s3cret@redis:6379",
            "redis://default:s3cret@redis:6379/0",
            "redis+unix:///run/redis.sock?db=1&pass=s3cret",
        ] {
            let error = check_url(url).unwrap_err();
            assert!(error.contains("--task-store-password-env"), "{error}");
            assert!(error.contains("--task-store-password-file"), "{error}");
            assert!(!error.contains("s3cret"), "{error}");
        }
        for url in ["rediss://redis:6380", "http://redis:6379", "redis:6379", ""] {
            let error = check_url(url).unwrap_err();
            assert!(error.contains("expects a redis:// URL"), "{url}: {error}");
        }
    }

    #[test]
    fn the_password_comes_from_the_variable_or_the_file() {
        let env = |name: &str| (name == "TASKS_PASSWORD").then(|| "from-env".to_owned());
        assert_eq!(store(None, None).password(&env).unwrap(), None);
        assert_eq!(
            store(Some("TASKS_PASSWORD"), None).password(&env).unwrap(),
            Some("from-env".to_owned())
        );
        let error = store(Some("NOT_SET_ANYWHERE"), None)
            .password(&env)
            .unwrap_err()
            .to_string();
        assert!(error.contains("NOT_SET_ANYWHERE"), "{error}");
        assert!(error.contains("not set"), "{error}");

        let file = temp_file("password", b"from-file\n");
        assert_eq!(
            store(None, Some(file)).password(&env).unwrap(),
            Some("from-file".to_owned())
        );
        let crlf = temp_file("password-crlf", b"p w\r\n");
        assert_eq!(
            store(None, Some(crlf)).password(&env).unwrap(),
            Some("p w".to_owned())
        );
        let missing = std::env::temp_dir().join("grpc-mcp-gateway-no-such-password-file");
        let error = store(None, Some(missing.clone()))
            .password(&env)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(&missing.display().to_string()) && error.contains("cannot read it"),
            "{error}"
        );
        let empty = temp_file("password-empty", b"\n");
        let error = store(None, Some(empty))
            .password(&env)
            .unwrap_err()
            .to_string();
        assert!(error.contains("empty"), "{error}");
    }

    #[test]
    fn a_task_key_has_at_least_32_bytes() {
        let key: Vec<u8> = (0..32).collect();
        assert_eq!(read_task_key(&temp_file("key", &key)).unwrap(), key);
        // A trailing newline is not part of the key.
        let text = b"0123456789abcdef0123456789abcdef0123\n";
        assert_eq!(
            read_task_key(&temp_file("key-text", text)).unwrap(),
            &text[..text.len() - 1]
        );
        // Unless the key would be short without it: random bytes that end in one.
        let mut ends_in_newline: Vec<u8> = (100..131).collect();
        ends_in_newline.push(b'\n');
        assert_eq!(
            read_task_key(&temp_file("key-newline", &ends_in_newline)).unwrap(),
            ends_in_newline
        );
        for (label, short) in [
            ("key-short", &b"too short\n"[..]),
            ("key-31", &[7u8; 31][..]),
            ("key-empty", &b""[..]),
        ] {
            let error = read_task_key(&temp_file(label, short))
                .unwrap_err()
                .to_string();
            assert!(error.contains("at least 32"), "{error}");
            assert!(error.contains("head -c 32 /dev/urandom"), "{error}");
            assert!(error.contains("openssl rand 32"), "{error}");
        }
        let error = read_task_key(Path::new("/nonexistent/task.key"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/nonexistent/task.key"), "{error}");
    }

    #[test]
    fn store_errors_are_declared_at_zero_and_counted_by_operation() {
        let metrics = Metrics::new().unwrap();
        let errors = errors(&metrics).unwrap();
        let text = || {
            prometheus::TextEncoder::new()
                .encode_to_string(&metrics.registry().gather())
                .unwrap()
        };
        let zero = text();
        assert!(
            zero.contains("# HELP mcp_task_store_errors_total ")
                && zero.contains("# TYPE mcp_task_store_errors_total counter"),
            "{zero}"
        );
        for operation in OPERATIONS {
            assert!(
                zero.contains(&format!(
                    "mcp_task_store_errors_total{{operation=\"{operation}\"}} 0"
                )),
                "{zero}"
            );
        }
        // What `on_error` does.
        errors.with_label_values(&["create"]).inc();
        errors.with_label_values(&["create"]).inc();
        errors.with_label_values(&["renew"]).inc();
        let counted = text();
        assert!(
            counted.contains("mcp_task_store_errors_total{operation=\"create\"} 2")
                && counted.contains("mcp_task_store_errors_total{operation=\"renew\"} 1")
                && counted.contains("mcp_task_store_errors_total{operation=\"get\"} 0"),
            "{counted}"
        );
    }

    #[tokio::test]
    async fn a_store_is_made_without_connecting() {
        // Connected on first use: a store no server answers is made, and its name has no
        // password.
        let file = temp_file("password-store", b"s3cret\n");
        let metrics = Metrics::new().unwrap();
        let store = TaskStoreSettings {
            key_prefix: Some("shop:".to_owned()),
            ..store(None, Some(file))
        }
        .store(Some(&metrics))
        .unwrap();
        let name = tonic_mcp_tasks::TaskStore::name(&store);
        assert!(name.starts_with("redis://127.0.0.1:6379"), "{name}");
        assert!(!name.contains("s3cret"), "{name}");
    }
}
