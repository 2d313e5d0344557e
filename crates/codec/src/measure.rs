//! The size and depth of JSON arguments, measured in one walk without writing them.
//!
//! The size is the length of the compact JSON text `serde_json` would write for the value:
//! what tonic-mcp's `Limits::max_argument_bytes` bounds. Counting it costs a fraction of
//! serialising into a counter, and the depth comes in the same walk.

use std::fmt::{self, Write as _};

use serde_json::{Map, Value};

/// The depth of an arguments object (containers on its deepest path, itself included), or
/// `None` when its compact JSON text is longer than `limit` bytes.
pub fn depth_within(arguments: &Map<String, Value>, limit: usize) -> Option<usize> {
    let mut bytes = object_overhead(arguments);
    let mut depth = 1;
    let mut stack: Vec<(&Value, usize)> = arguments.values().map(|v| (v, 2)).collect();
    while let Some((value, level)) = stack.pop() {
        bytes += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(number) => number_len(number),
            Value::String(text) => string_len(text),
            Value::Array(items) => {
                depth = depth.max(level);
                stack.extend(items.iter().map(|v| (v, level + 1)));
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                depth = depth.max(level);
                stack.extend(map.values().map(|v| (v, level + 1)));
                object_overhead(map)
            }
        };
        if bytes > limit {
            return None;
        }
    }
    (bytes <= limit).then_some(depth)
}

/// The braces, keys, colons and commas of an object, its values left out.
fn object_overhead(map: &Map<String, Value>) -> usize {
    2 + map.len().saturating_sub(1) + map.keys().map(|key| string_len(key) + 1).sum::<usize>()
}

/// A string as `serde_json` writes it: quoted, with `"` and `\` escaped, the five control
/// characters with short escapes as two bytes and the other controls as `\u00XX`.
fn string_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    // Nearly every string has nothing to escape: one pass that the compiler vectorises finds
    // out, and only a string with escapes is weighed byte by byte.
    let escaped = bytes
        .iter()
        .filter(|&&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
        .count();
    if escaped == 0 {
        return 2 + bytes.len();
    }
    2 + bytes
        .iter()
        .map(|byte| match byte {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// A number's text, counted as it is formatted (`serde_json` writes numbers as they display:
/// integers as their digits, without formatting them).
fn number_len(number: &serde_json::Number) -> usize {
    let digits = |n: u64| n.checked_ilog10().map_or(1, |log| log as usize + 1);
    if let Some(n) = number.as_u64() {
        return digits(n);
    }
    if let Some(n) = number.as_i64() {
        // Not a u64: negative.
        return 1 + digits(n.unsigned_abs());
    }
    struct Count(usize);
    impl fmt::Write for Count {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            self.0 += text.len();
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = write!(count, "{number}");
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => unreachable!("not an object: {other}"),
        }
    }

    /// The size is exactly `serde_json::to_vec`'s length, escapes and numbers included.
    #[test]
    fn size_is_the_compact_text_length() {
        let cases = [
            serde_json::json!({}),
            serde_json::json!({"a": null, "b": true, "c": false}),
            serde_json::json!({"n": [0, -1, 18446744073709551615u64, -9223372036854775808i64,
                1.5, 1e300, -2.5e-300, 0.1, 100.0]}),
            serde_json::json!({"s": "quote \" slash \\ tab \t nl \n bell \u{7} nul \u{0} del \u{7f}",
                "é": "ünïcödé ✓ 😀", "\u{1}k\"": ""}),
            serde_json::json!({"deep": [[{"a": [{}]}], [], {"b": {"c": []}}]}),
        ];
        for case in cases {
            let map = args(case.clone());
            let len = serde_json::to_vec(&case).map_or(0, |text| text.len());
            assert!(
                depth_within(&map, len).is_some(),
                "{case} at its own length"
            );
            assert!(
                depth_within(&map, len - 1).is_none(),
                "{case} one byte short"
            );
        }
    }

    /// The depth counts containers, the arguments object as 1.
    #[test]
    fn depth_counts_containers() {
        for (case, depth) in [
            (serde_json::json!({}), 1),
            (serde_json::json!({"a": 1}), 1),
            (serde_json::json!({"a": [{"b": 1}]}), 3),
            (serde_json::json!({"x": "long text", "a": [[[[]]]]}), 5),
        ] {
            let map = args(case.clone());
            assert_eq!(depth_within(&map, usize::MAX), Some(depth), "{case}");
        }
    }
}
