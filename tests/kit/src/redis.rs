//! A real redis-server for the task store's tests: Debian's Redis 7, which
//! `scripts/install-tools.sh redis` unpacks into `.tools/redis` (`TONIC_MCP_REDIS_SERVER` names
//! another), on a loopback port, without persistence, stopped when dropped.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// The redis-server to run; `None` (said on stderr) when there is none, unless
/// `TONIC_MCP_REDIS_REQUIRED` is set (scripts/test.sh sets it): then it panics.
///
/// # Panics
///
/// When no redis-server is there and one is required.
pub fn redis_server() -> Option<PathBuf> {
    let path = std::env::var_os("TONIC_MCP_REDIS_SERVER").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/redis/run"),
        PathBuf::from,
    );
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("TONIC_MCP_REDIS_REQUIRED").is_none(),
        "no redis-server at {}: run scripts/install-tools.sh redis",
        path.display()
    );
    eprintln!(
        "skipped: no redis-server at {} (scripts/install-tools.sh redis)",
        path.display()
    );
    None
}

/// A redis-server on `127.0.0.1:port`.
#[derive(Debug)]
pub struct Redis {
    /// The server's program.
    pub path: PathBuf,
    /// Its port.
    pub port: u16,
    child: Child,
}

impl Redis {
    /// Starts `path` on `port`, asking for `password` when given, and waits (10 s at most)
    /// until it listens.
    ///
    /// # Panics
    ///
    /// When it does not start or listen.
    pub fn start(path: PathBuf, port: u16, password: Option<&str>) -> Redis {
        let mut command = Command::new(&path);
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(password) = password {
            command.args(["--requirepass", password]);
        }
        let mut child = command.spawn().expect("start redis-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("redis-server did not listen on {port}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { path, port, child }
    }

    /// Its URL, database 0.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Stops it (SIGKILL) and waits for it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
