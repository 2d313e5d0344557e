//! JSON numbers as exact integers, one rule for every reader.

use serde_json::Number;

/// A JSON number's exact value when it is an integer (held as `i64` or `u64`).
#[inline]
pub(crate) fn integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// A whole float as an integer. Past 2^53 a float no longer names one integer: refused
/// rather than rounded.
pub(crate) fn whole(float: f64) -> Option<i128> {
    (float.fract() == 0.0 && float.abs() <= 9_007_199_254_740_992.0).then_some(float as i128)
}
