//! What the workspace's tests share, written once: rmcp's client connected to an
//! [`McpServer`](tonic_mcp::McpServer) over an in-process pipe, tool calls and what their
//! results hold, calls as MCP tasks, a process that announces its address on a line, a free
//! loopback port, a real redis-server ([`redis`]), a small seeded random number generator for
//! the fuzz tests, descriptor sets compiled by the vendored protoc ([`testdata`]), (with
//! `oracle`) jsonschema as the reference of the codec's validator, (with `transcode`) what the
//! differential tests of the codec's transcoders and the e2e crate share, and (with `demo`) the
//! demo service the runtime's and the add-ons' tests serve ([`demo`]) and
//! the descriptors built in code that the tests of tools made from descriptors share
//! ([`descriptors`]).
//!
//! Used as a dev-dependency by the plugin (without its default feature `mcp`, which the rest
//! needs), the codec (`oracle` and `transcode` only), the runtime and the add-on crates (with `demo`), the
//! gateway, the e2e crate and the demo. With `mcp` it depends on the
//! runtime's default features only, so that the runtime's own tests build it against the same
//! runtime they test.

#[cfg(feature = "demo")]
pub mod demo;
#[cfg(feature = "demo")]
pub mod descriptors;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "transcode")]
pub mod mutate;
#[cfg(feature = "oracle")]
pub mod oracle;
pub mod redis;
#[cfg(feature = "transcode")]
pub mod schema_gen;
pub mod testdata;
#[cfg(feature = "transcode")]
pub mod wire;
pub mod workload;
#[cfg(feature = "mcp")]
pub use mcp::*;
/// The tasks add-on, for the tests that install it with settings of their own
/// ([`with_tasks`] installs it with its defaults).
#[cfg(feature = "mcp")]
pub use tonic_mcp_tasks;

/// The value of the sample `series` (a metric's name and its exact label text, such as
/// `name{outcome="ok"}`) in Prometheus' text format `text`.
pub fn metric_sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// SplitMix64: small, seeded, reproducible.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// One of `items`, which must not be empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The environment variable `name` parsed as a `T`, or `default` when it is unset or does
/// not parse: how the fuzz, load and property tests take their sizes and seeds.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// A loopback port nothing listens on: bound, then released.
///
/// # Panics
///
/// When no port can be bound.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}
