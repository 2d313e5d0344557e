//! Values of flags that are more than a string: sizes, durations, origins.

use std::time::Duration;

use crate::error::Error;

/// A size in bytes: a number, optionally followed by `KiB`, `MiB` or `GiB` (`16MiB`).
pub(crate) fn parse_bytes(value: &str) -> Result<usize, String> {
    let value = value.trim();
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: usize = number
        .parse()
        .map_err(|_| format!("`{value}` is not a size: give bytes, e.g. 4194304 or 4MiB"))?;
    let factor: usize = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => return Err(format!("unknown unit `{other}`: use KiB, MiB or GiB")),
    };
    number
        .checked_mul(factor)
        .filter(|bytes| *bytes > 0)
        .ok_or_else(|| format!("`{value}` is out of range"))
}

/// An `--allowed-origin` value: `SCHEME://HOST[:PORT]` with a number or `*` as port, or
/// `null`. rmcp skips an entry it cannot parse, which would refuse the origin meant.
pub(super) fn check_origin(origin: &str) -> Result<(), Error> {
    fn valid(origin: &str) -> Option<()> {
        if origin == "null" {
            return Some(());
        }
        let (scheme, rest) = origin.split_once("://")?;
        let (host, port) = if rest.starts_with('[') {
            // An IPv6 literal: `[::1]` or `[::1]:8080`.
            let end = rest.find(']')? + 1;
            let (host, after) = rest.split_at(end);
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (host, port)
        } else {
            match rest.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            }
        };
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        let host_ok = !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ']);
        let port_ok = port.is_none_or(|port| port == "*" || port.parse::<u16>().is_ok());
        (scheme_ok && host_ok && port_ok).then_some(())
    }
    valid(origin).ok_or_else(|| {
        Error::new(format!(
            "--allowed-origin `{origin}`: expected SCHEME://HOST[:PORT] with a port number or `*` \
             (e.g. https://app.example.com:443, http://localhost:*), or `null`"
        ))
    })
}

/// `500ms`, `10s`, `1.5s`, `2m`, or a number of seconds.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let seconds = number.trim().parse::<f64>().ok()? * scale;
    (seconds.is_finite() && seconds > 0.0 && seconds < 1e9)
        .then(|| Duration::from_secs_f64(seconds))
}
