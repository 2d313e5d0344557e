//! Adversarial mutations of canonical arguments: values replaced by wrong types, numbers out
//! of range, numeric strings made numbers, odd strings; keys renamed, doubled or added.

use serde_json::{Value, json};

use crate::Rng;

/// The values that replace nodes: wrong types, numbers out of range, odd strings.
pub fn replacements() -> Vec<Value> {
    vec![
        Value::Null,
        json!("1e3"),
        json!(1e3),
        json!(1.5),
        json!(-1),
        json!(0),
        json!(-0.0),
        json!(4_294_967_296_u64),
        json!(9_007_199_254_740_993_u64),
        json!(18_446_744_073_709_551_615_u64),
        json!(-9_223_372_036_854_775_808_i64),
        json!(1e300),
        json!("18446744073709551616"),
        json!("-0"),
        json!("+1"),
        json!("007"),
        json!(" 1"),
        json!("NaN"),
        json!("Infinity"),
        json!("-Infinity"),
        json!("inf"),
        json!("nan"),
        json!("1e39"),
        json!("!!!"),
        json!("AAA="),
        json!("YQ"),
        json!("a-_b"),
        json!("+/+/"),
        json!("-_-_"),
        json!("YWJj=="),
        json!(true),
        json!("true"),
        json!(""),
        json!([]),
        json!([null]),
        json!([1, "2", null]),
        json!({}),
        json!({"case": "nope"}),
        json!({"case": "nope", "value": 1}),
        json!({"unknown_key": 1}),
        json!("2019-03-26t14:00:00Z"),
        json!("2019-03-26T14:00:00+24:00"),
        json!("2019-03-26T14:00:00z"),
        json!("2019-03-26T14:00:00+01:00"),
        json!("2019-03-26T14:00:00-0100"),
        json!("2019-03-26 14:00:00Z"),
        json!("2019-03-26T14:00:00.Z"),
        json!("10000-01-01T00:00:00Z"),
        json!("0000-01-01T00:00:00Z"),
        json!("2019-02-30T00:00:00Z"),
        json!("1972-06-30T23:59:60Z"),
        json!("2019-03-26T14:00:00.123456789123Z"),
        json!("1.5s"),
        json!("-0.000000001s"),
        json!("315576000001s"),
        json!("1.0000000001s"),
        json!("fooBar,baz.quxQuux"),
        json!("foo_bar"),
        json!("A"),
        json!("NULL_VALUE"),
    ]
}

/// Replacement keys (`+`, `0`, `-` and ` ` are prefixed to the key they replace).
const KEYS: &[&str] = &[
    "+",
    "0",
    "-",
    " ",
    "01",
    "00",
    "-0",
    "1",
    "-1",
    "True",
    "false",
    "1.0",
    "4294967296",
    "18446744073709551616",
    "",
    "value",
    "case",
    "type_url",
    "@type",
];

/// Pointers to every node of `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                pointers(value, format!("{at}/{escaped}"), out);
            }
        }
        Value::Array(items) => {
            for (index, value) in items.iter().enumerate() {
                pointers(value, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

/// `value` with one to three nodes replaced, a 64-bit string made a number, or a key added.
pub fn mutate(value: &Value, rng: &mut Rng, pool: &[Value]) -> Value {
    let mut out = value.clone();
    let mut paths = Vec::new();
    pointers(&out, String::new(), &mut paths);
    for _ in 0..=rng.below(3) {
        let path = &paths[rng.below(paths.len())];
        let Some(node) = out.pointer_mut(path) else {
            continue;
        };
        match rng.below(7) {
            0 => {
                // Numeric strings as JSON numbers (64-bit ints, floats).
                if let Value::String(s) = node
                    && let Ok(n) = s.parse::<serde_json::Number>()
                {
                    *node = Value::Number(n);
                } else {
                    *node = pool[rng.below(pool.len())].clone();
                }
            }
            2 => {
                // A key renamed: integer map keys not in canonical form, bool keys, names.
                if let Value::Object(object) = node
                    && !object.is_empty()
                {
                    let old = object.keys().nth(rng.below(object.len())).cloned();
                    let new = KEYS[rng.below(KEYS.len())];
                    // Renamed, or added beside the original (two keys for one entry).
                    let value = match &old {
                        Some(old) if rng.below(2) == 0 => object.remove(old),
                        Some(old) => object.get(old).cloned(),
                        None => None,
                    };
                    if let Some(old) = old
                        && let Some(value) = value
                    {
                        let new = match new {
                            "+" | "0" | "-" | " " => format!("{new}{old}"),
                            _ => new.to_owned(),
                        };
                        object.insert(new, value);
                    }
                } else {
                    *node = pool[rng.below(pool.len())].clone();
                }
            }
            1 => {
                if let Value::Object(object) = node {
                    let key = if object.is_empty() || rng.below(2) == 0 {
                        "zz_unknown".to_owned()
                    } else {
                        object
                            .keys()
                            .nth(rng.below(object.len()))
                            .cloned()
                            .unwrap_or_default()
                    };
                    object.insert(key, pool[rng.below(pool.len())].clone());
                } else {
                    *node = pool[rng.below(pool.len())].clone();
                }
            }
            _ => *node = pool[rng.below(pool.len())].clone(),
        }
    }
    out
}
