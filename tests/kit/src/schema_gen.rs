//! A proptest [`Strategy`] for JSON values that satisfy a tool's input schema, driven only by the
//! schema as `tools/list` reports it (no per-tool knowledge).
//!
//! Supported keywords, and what the generator does with them:
//!
//! | keyword | values generated |
//! |---|---|
//! | `type: object` + `properties` | a random subset of the properties, always the `required` ones |
//! | `additionalProperties: <schema>` | a map of 0–3 entries (within `minProperties`/`maxProperties`, keys then distinct); keys from `propertyNames` (canonical integer `pattern` or `enum`), else short strings |
//! | `type: object` with neither | a small JSON object with random keys and values (`Struct`) |
//! | `type: array` + `items` | 0–3 items (within `minItems`/`maxItems`), distinct with `uniqueItems` |
//! | `type: string` | plain text of 0–8 characters (within `minLength`/`maxLength`); `pattern` `^-?[0-9]+$` / `^[0-9]+$` → 64-bit digit strings; the Duration pattern → `"-3.5s"`; any other whole-string pattern → text of its expression; `format: date-time` → RFC 3339; `contentEncoding: base64` → standard base64 |
//! | `type: integer` | within `minimum`/`maximum` or the exclusive bounds (`uint32` has both), else the `int32` range (`format: int32`); sometimes as `5.0` |
//! | `type: number` | finite doubles of every magnitude (within `minimum`/`maximum` or strictly within the exclusive bounds, or a `float`'s range with `format: float`), zeros of both signs |
//! | `type: boolean` | either |
//! | `type: null` | `null` |
//! | `enum`, `const` | one of the values, the value |
//! | `{}` (no type) | any JSON value: null, bool, finite number, string, small arrays and objects |
//! | `$ref` (`#`, `#/$defs/…`) | the target, within a depth budget so recursion terminates |
//! | `oneOf` / `anyOf` | one branch |
//!
//! A keyword it does not know makes it panic rather than produce something the schema may reject.
//!
//! Exclusions (values the schema allows but the generator does not produce, because the schema
//! cannot say what the protobuf type needs) are marked `EXCLUSION` below: the `Any` payload
//! type, ranges of 64-bit digit strings and integer map keys, and the Duration and Timestamp
//! ranges.

use std::collections::HashMap;

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Just, Union};
use serde_json::{Map, Number, Value};

/// The Duration pattern of docs/design.md §4.7.
const DURATION_PATTERN: &str = r"^-?[0-9]+(\.[0-9]{1,9})?s$";
/// FieldMask strings: comma-separated paths of dot-separated field names.
const FIELD_MASK_PATTERN: &str = tonic_mcp_schema::json_schema::wkt::FIELD_MASK_PATTERN;
/// Signed 64-bit integers (and signed map keys).
const SIGNED_PATTERN: &str = "^-?[0-9]+$";
/// Unsigned 64-bit integers (and unsigned map keys).
const UNSIGNED_PATTERN: &str = "^[0-9]+$";
/// Integer map keys: canonical decimal (no leading zeros), so no two keys name one entry.
const SIGNED_KEY_PATTERN: &str = "^-?(0|[1-9][0-9]*)$";
const UNSIGNED_KEY_PATTERN: &str = "^(0|[1-9][0-9]*)$";
/// The largest Duration protobuf represents, in seconds (10,000 years).
const DURATION_MAX_SECONDS: u64 = 315_576_000_000;

/// Keywords the generator understands. Anything else is a panic, not a guess.
const KNOWN_KEYWORDS: &[&str] = &[
    "$schema",
    "$defs",
    "$ref",
    "title",
    "description",
    "deprecated",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "oneOf",
    "anyOf",
    "enum",
    "const",
    "pattern",
    "format",
    "contentEncoding",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
];

/// A strategy for values of `schema` (a tool's `inputSchema`), following at most `ref_budget`
/// nested `$ref`s on any path.
pub fn strategy(schema: &Value, ref_budget: u32) -> BoxedStrategy<Value> {
    let mut generator = Generator {
        root: schema,
        memo: HashMap::new(),
    };
    generator
        .node(schema, ref_budget)
        .expect("the root schema can be generated within the $ref budget")
}

struct Generator<'a> {
    root: &'a Value,
    /// Strategies of `$ref` targets by (reference, remaining budget), shared between uses.
    memo: HashMap<(String, u32), Option<BoxedStrategy<Value>>>,
}

impl Generator<'_> {
    /// `None` when no value fits within the remaining `$ref` budget.
    fn node(&mut self, schema: &Value, budget: u32) -> Option<BoxedStrategy<Value>> {
        let Value::Object(schema) = schema else {
            panic!("boolean schemas are not expected (docs/design.md §4.10): {schema}");
        };
        for key in schema.keys() {
            assert!(
                KNOWN_KEYWORDS.contains(&key.as_str()),
                "the generator does not know the keyword `{key}` in {}",
                Value::Object(schema.clone())
            );
        }
        if let Some(reference) = schema.get("$ref") {
            let reference = reference.as_str().expect("$ref is a string");
            return self.reference(reference, budget);
        }
        if let Some(value) = schema.get("const") {
            return Some(Just(value.clone()).boxed());
        }
        if let Some(values) = schema.get("enum") {
            let values = values.as_array().expect("enum is an array").clone();
            assert!(!values.is_empty(), "empty enum");
            return Some(proptest::sample::select(values).boxed());
        }
        if let Some(branches) = schema.get("oneOf").or_else(|| schema.get("anyOf")) {
            let branches: Vec<BoxedStrategy<Value>> = branches
                .as_array()
                .expect("oneOf/anyOf is an array")
                .iter()
                .filter_map(|branch| self.node(branch, budget))
                .collect();
            return (!branches.is_empty()).then(|| Union::new(branches).boxed());
        }
        match schema
            .get("type")
            .map(|t| t.as_str().expect("type is one string"))
        {
            None => Some(any_json()),
            Some("object") => self.object(schema, budget),
            Some("array") => {
                let min = usize_keyword(schema, "minItems").unwrap_or(0);
                let max = usize_keyword(schema, "maxItems").unwrap_or(3).min(min + 3);
                let items = schema.get("items").expect("every array has items");
                let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
                match self.node(items, budget) {
                    Some(item) if unique => Some(
                        vec(item, min..=max)
                            .prop_map(|mut items| {
                                let mut seen = Vec::with_capacity(items.len());
                                items.retain(|item| {
                                    let new = !seen.contains(item);
                                    seen.push(item.clone());
                                    new
                                });
                                items
                            })
                            .prop_filter("minItems after removing repeats", move |items| {
                                items.len() >= min
                            })
                            .prop_map(Value::Array)
                            .boxed(),
                    ),
                    Some(item) => Some(vec(item, min..=max).prop_map(Value::Array).boxed()),
                    None if min == 0 => Some(Just(Value::Array(Vec::new())).boxed()),
                    None => None,
                }
            }
            Some("string") => Some(string(schema)),
            Some("integer") => Some(integer(schema)),
            Some("number") => Some(number(schema).prop_map(Value::Number).boxed()),
            Some("boolean") => Some(any::<bool>().prop_map(Value::Bool).boxed()),
            // google.protobuf.NullValue
            Some("null") => Some(Just(Value::Null).boxed()),
            Some(other) => panic!("unsupported type `{other}`"),
        }
    }

    fn reference(&mut self, reference: &str, budget: u32) -> Option<BoxedStrategy<Value>> {
        let budget = budget.checked_sub(1)?;
        let key = (reference.to_owned(), budget);
        if let Some(done) = self.memo.get(&key) {
            return done.clone();
        }
        let pointer = reference
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("only local references are expected: {reference}"));
        let target = if pointer.is_empty() {
            self.root
        } else {
            self.root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling $ref {reference}"))
        };
        let built = self.node(target, budget);
        self.memo.insert(key, built.clone());
        built
    }

    fn object(&mut self, schema: &Map<String, Value>, budget: u32) -> Option<BoxedStrategy<Value>> {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = schema.get("properties").and_then(Value::as_object);

        if let Some(properties) = properties {
            if let Some(any) = any_shaped(properties, &required) {
                return Some(any);
            }
            let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
            for (name, property) in properties {
                let is_required = required.contains(&name.as_str());
                let name = name.clone();
                match (self.node(property, budget), is_required) {
                    (Some(value), true) => {
                        fields.push(value.prop_map(move |v| Some((name.clone(), v))).boxed())
                    }
                    (Some(value), false) => fields.push(
                        proptest::option::of(value)
                            .prop_map(move |v| v.map(|v| (name.clone(), v)))
                            .boxed(),
                    ),
                    (None, true) => return None,
                    (None, false) => {}
                }
            }
            for name in &required {
                assert!(
                    properties.contains_key(*name),
                    "required `{name}` is not a property"
                );
            }
            return Some(
                fields
                    .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                    .boxed(),
            );
        }
        assert!(required.is_empty(), "required without properties");

        match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => Some(Just(Value::Object(Map::new())).boxed()),
            Some(values) => {
                let keys = map_keys(schema.get("propertyNames"));
                let min = usize_keyword(schema, "minProperties").unwrap_or(0);
                let max = usize_keyword(schema, "maxProperties")
                    .unwrap_or(3)
                    .min(min + 3);
                let entries = match self.node(values, budget) {
                    // Distinct keys, so that `minProperties` holds.
                    Some(value) if min > 0 => btree_map(keys, value, min..=max)
                        .prop_map(|entries| entries.into_iter().collect())
                        .boxed(),
                    Some(value) => vec((keys, value), min..=max).boxed(),
                    None if min == 0 => Just(Vec::new()).boxed(),
                    None => return None,
                };
                Some(
                    entries
                        .prop_map(|entries| Value::Object(entries.into_iter().collect()))
                        .boxed(),
                )
            }
            // An open object without properties (`Struct`): anything.
            None => {
                assert!(
                    schema.get("propertyNames").is_none(),
                    "propertyNames without additionalProperties"
                );
                Some(json_object(any_json()))
            }
        }
    }
}

/// EXCLUSION (`google.protobuf.Any`). Its schema (docs/design.md §4.7) is
/// `{"type_url": string (required), "value": {}}`, but only type URLs of messages the server's
/// descriptors hold can be decoded, and the payload must be that message's JSON; a schema
/// cannot list them. For an object of exactly that shape the generator therefore picks a
/// payload type from the well-known types every descriptor pool with an `Any` field carries
/// beside it in these tests (`struct.proto`), with a payload of the right shape.
fn any_shaped(properties: &Map<String, Value>, required: &[&str]) -> Option<BoxedStrategy<Value>> {
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    if names != ["type_url", "value"] || required != ["type_url"] {
        return None;
    }
    let with = |url: &'static str, payload: BoxedStrategy<Value>| {
        payload.prop_map(move |value| {
            let mut any = Map::new();
            any.insert("type_url".to_owned(), Value::String(url.to_owned()));
            any.insert("value".to_owned(), value);
            Value::Object(any)
        })
    };
    Some(
        prop_oneof![
            with("type.googleapis.com/google.protobuf.Value", any_json()),
            with(
                "type.googleapis.com/google.protobuf.Struct",
                json_object(any_json())
            ),
            with(
                "type.googleapis.com/google.protobuf.ListValue",
                vec(any_json(), 0..=3).prop_map(Value::Array).boxed()
            ),
        ]
        .boxed(),
    )
}

fn usize_keyword(schema: &Map<String, Value>, key: &str) -> Option<usize> {
    schema
        .get(key)
        .map(|v| usize::try_from(v.as_u64().expect("a count")).expect("fits usize"))
}

/// Map keys by `propertyNames`.
///
/// EXCLUSION (integer map keys). The key pattern does not say whether the key is 32- or 64-bit
/// (docs/design.md §4.6), so keys stay in the range both accept: `i32` for `^-?[0-9]+$`, `u32` for
/// `^[0-9]+$`.
fn map_keys(names: Option<&Value>) -> BoxedStrategy<String> {
    let Some(names) = names else {
        return plain_string();
    };
    if let Some(values) = names.get("enum") {
        let values: Vec<String> = values
            .as_array()
            .expect("enum is an array")
            .iter()
            .map(|v| v.as_str().expect("key enum values are strings").to_owned())
            .collect();
        return proptest::sample::select(values).boxed();
    }
    match names.get("pattern").and_then(Value::as_str) {
        Some(SIGNED_KEY_PATTERN) => prop_oneof![any::<i32>().prop_map(i128::from), (-9i128..=9)]
            .prop_map(|n| n.to_string())
            .boxed(),
        Some(UNSIGNED_KEY_PATTERN) => prop_oneof![any::<u32>().prop_map(i128::from), (0i128..=9)]
            .prop_map(|n| n.to_string())
            .boxed(),
        _ => panic!("unsupported propertyNames {names}"),
    }
}

fn string(schema: &Map<String, Value>) -> BoxedStrategy<Value> {
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        assert!(
            schema.get("format").is_none() && schema.get("contentEncoding").is_none(),
            "pattern with format or contentEncoding"
        );
        let text = match pattern {
            // EXCLUSION (64-bit ranges). A pattern cannot bound a number; the digits stay
            // within the proto type (docs/design.md §4.8 puts 64-bit bounds in descriptions).
            SIGNED_PATTERN => prop_oneof![
                20 => digits(
                    prop_oneof![
                        any::<i64>().prop_map(i128::from),
                        (-1000i128..=1000),
                        Just(i128::from(i64::MIN)),
                        Just(i128::from(i64::MAX)),
                        // Around ±2^53, where doubles stop being exact.
                        (-3i128..=3).prop_map(|d| (1i128 << 53) + d),
                        (-3i128..=3).prop_map(|d| -(1i128 << 53) + d),
                    ]
                    .boxed(),
                ),
                1 => Just("-0".to_owned()),
            ]
            .boxed(),
            UNSIGNED_PATTERN => digits(
                prop_oneof![
                    any::<u64>().prop_map(i128::from),
                    (0i128..=1000),
                    Just(i128::from(u64::MAX)),
                    (-3i128..=3).prop_map(|d| (1i128 << 53) + d),
                ]
                .boxed(),
            ),
            DURATION_PATTERN => duration(),
            FIELD_MASK_PATTERN => field_mask(),
            // Any other pattern (a `buf.validate` rule's): text of the expression, the anchors
            // of a whole-string pattern taken off (the generator cannot place them).
            other => {
                let inner = other
                    .strip_prefix('^')
                    .and_then(|p| p.strip_suffix('$'))
                    .unwrap_or_else(|| panic!("unsupported pattern {other}: not anchored"));
                proptest::string::string_regex(inner)
                    .unwrap_or_else(|e| panic!("unsupported pattern {other}: {e}"))
                    .boxed()
            }
        };
        let (min, max) = lengths(schema);
        return text
            .prop_filter("minLength and maxLength", move |text| {
                (min..=max).contains(&text.chars().count())
            })
            .prop_map(Value::String)
            .boxed();
    }
    match schema
        .get("format")
        .map(|f| f.as_str().expect("format is a string"))
    {
        Some("date-time") => return date_time().prop_map(Value::String).boxed(),
        Some(other) => panic!("unsupported format {other}"),
        None => {}
    }
    match schema
        .get("contentEncoding")
        .map(|e| e.as_str().expect("contentEncoding is a string"))
    {
        Some("base64") => vec(any::<u8>(), 0..=12)
            .prop_map(|bytes| Value::String(base64(&bytes)))
            .boxed(),
        Some(other) => panic!("unsupported contentEncoding {other}"),
        None => {
            let (min, max) = lengths(schema);
            vec(plain_char(), min..=max.min(min + 8))
                .prop_map(|chars| Value::String(chars.into_iter().collect()))
                .boxed()
        }
    }
}

/// The bounds `minLength` and `maxLength` put on a string's length in characters (code
/// points, as JSON Schema counts them); without them, 0 to 8.
fn lengths(schema: &Map<String, Value>) -> (usize, usize) {
    let min = usize_keyword(schema, "minLength").unwrap_or(0);
    let max = usize_keyword(schema, "maxLength").unwrap_or(min.max(8));
    assert!(min <= max, "empty length range");
    (min, max)
}

/// Decimal digits of `n`, sometimes with leading zeros (the pattern allows them).
fn digits(n: BoxedStrategy<i128>) -> BoxedStrategy<String> {
    (n, prop::bool::weighted(0.1))
        .prop_map(|(n, padded)| {
            let zeros = if padded { "00" } else { "" };
            if n < 0 {
                format!("-{zeros}{}", n.unsigned_abs())
            } else {
                format!("{zeros}{n}")
            }
        })
        .boxed()
}

/// `-3.5s`, `12s`, `0.000000001s`, sometimes with leading zeros.
///
/// EXCLUSION (Duration range). The pattern cannot bound the seconds; they stay within
/// protobuf's ±315,576,000,000 s (10,000 years).
/// FieldMask strings the pattern allows: up to four paths of up to three lowerCamel names.
///
/// EXCLUSION (round trip). Names are lower-case letters and digits: protobuf's JSON form maps
/// `a_b` and `aB` to the same path, so other spellings would not come back as sent.
fn field_mask() -> BoxedStrategy<String> {
    let name = "[a-z][a-z0-9]{0,6}";
    let path = vec(name, 1..=3).prop_map(|names| names.join("."));
    vec(path, 0..=4).prop_map(|paths| paths.join(",")).boxed()
}

fn duration() -> BoxedStrategy<String> {
    let seconds = prop_oneof![0u64..=100, 0u64..=DURATION_MAX_SECONDS];
    (
        any::<bool>(),
        seconds,
        proptest::option::of(fraction()),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(negative, seconds, fraction, padded)| {
            let sign = if negative { "-" } else { "" };
            let zeros = if padded { "00" } else { "" };
            format!("{sign}{zeros}{seconds}{}s", fraction.unwrap_or_default())
        })
        .boxed()
}

/// `.` and 1–9 digits.
fn fraction() -> BoxedStrategy<String> {
    (1usize..=9, any::<u32>())
        .prop_map(|(len, n)| {
            let digits = format!("{:09}", n % 1_000_000_000);
            format!(".{}", &digits[..len])
        })
        .boxed()
}

/// RFC 3339 date-times with optional fractional seconds, a `Z` or numeric offset, and now and
/// then the lower-case `t`/`z` RFC 3339 (§5.6) allows.
///
/// EXCLUSION (Timestamp range and precision). `format: date-time` cannot bound the instant:
/// it stays within protobuf's years 0001–9999 UTC, with 1–9 fraction digits and no leap
/// second.
fn date_time() -> BoxedStrategy<String> {
    let offset = prop_oneof![
        3 => Just(None),
        1 => (any::<bool>(), 0u32..=23, 0u32..=59).prop_map(Some),
    ];
    (
        (1u32..=9999, 1u32..=12, 1u32..=31),
        (0u32..=23, 0u32..=59, 0u32..=59),
        proptest::option::of(fraction()),
        offset,
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |((year, month, day), (hour, minute, second), fraction, offset, lower)| {
                let day = day.min(days_in_month(year, month));
                let (year, zone) = match offset {
                    None => (year, "Z".to_owned()),
                    // An offset moves the instant by up to a day: keep it inside years 1–9999.
                    Some((negative, h, m)) => (
                        year.clamp(2, 9998),
                        format!("{}{h:02}:{m:02}", if negative { '-' } else { '+' }),
                    ),
                };
                let text = format!(
                    "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{}{zone}",
                    fraction.unwrap_or_default()
                );
                if lower { text.to_lowercase() } else { text }
            },
        )
        .boxed()
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Integers within `minimum`/`maximum` (or above `exclusiveMinimum`, below `exclusiveMaximum`);
/// a side without a bound is `int32`'s (the schema's
/// `format`, or a `buf.validate` rule's one-sided bound on an `int32`). Now and then one is
/// written as an integral float (`5.0`), which JSON Schema counts as an integer.
fn integer(schema: &Map<String, Value>) -> BoxedStrategy<Value> {
    let bound = |key: &str| schema.get(key).map(|b| b.as_i64().expect("integral bound"));
    let min = bound("minimum")
        .or_else(|| Some(bound("exclusiveMinimum")? + 1))
        .unwrap_or(i64::from(i32::MIN));
    let max = bound("maximum")
        .or_else(|| Some(bound("exclusiveMaximum")? - 1))
        .unwrap_or(i64::from(i32::MAX));
    assert!(min <= max, "empty integer range");
    let n = prop_oneof![
        min..=max,
        (-100i64..=100).prop_map(move |n| n.clamp(min, max)),
        Just(min),
        Just(max),
    ];
    (n, prop::bool::weighted(0.1))
        .prop_map(|(n, as_float)| {
            // Floats are exact integers up to 2^53.
            if as_float && n.unsigned_abs() <= 1 << 53 {
                Value::from(n as f64)
            } else {
                Value::from(n)
            }
        })
        .boxed()
}

/// Finite doubles within `minimum`/`maximum` (or strictly between the exclusive bounds), or a `float`'s range (`format: float`): zeros
/// of both signs, small integers and decimals, and every magnitude down to subnormals.
/// Out-of-bounds draws are clamped.
fn number(schema: &Map<String, Value>) -> BoxedStrategy<Number> {
    use proptest::num::f64 as float;
    let bound = |key: &str| schema.get(key).map(|b| b.as_f64().expect("numeric bound"));
    let range = match schema.get("format").and_then(Value::as_str) {
        Some("float") => f64::from(f32::MAX),
        _ => f64::MAX,
    };
    let min = bound("minimum")
        .or_else(|| Some(bound("exclusiveMinimum")?.next_up()))
        .unwrap_or(-range);
    let max = bound("maximum")
        .or_else(|| Some(bound("exclusiveMaximum")?.next_down()))
        .unwrap_or(range);
    assert!(min <= max, "empty number range");
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        (-1000i32..=1000).prop_map(f64::from),
        -1.0e6..1.0e6f64,
        float::POSITIVE | float::NEGATIVE | float::NORMAL | float::SUBNORMAL | float::ZERO,
    ]
    .prop_map(move |f| Number::from_f64(f.clamp(min, max)).expect("finite"))
    .boxed()
}

/// Short text: mostly ASCII letters, with any character now and then (controls, quotes,
/// backslashes, non-ASCII, astral).
fn plain_string() -> BoxedStrategy<String> {
    vec(plain_char(), 0..=8)
        .prop_map(|chars| chars.into_iter().collect())
        .boxed()
}

/// A character of [`plain_string`].
fn plain_char() -> BoxedStrategy<char> {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        1 => any::<char>(),
        1 => proptest::sample::select(vec!['"', '\\', '\n', '\0', 'é', '😀', ' ', '{', '[']),
    ]
    .boxed()
}

/// Any JSON value (the `{}` schema): null, booleans, finite numbers, strings, and small arrays
/// and objects of them.
fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(&Map::new()).prop_map(Value::Number),
        any::<i64>().prop_map(Value::from),
        plain_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..=3).prop_map(Value::Array),
            json_object(inner),
        ]
    })
    .boxed()
}

fn json_object(values: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    vec((plain_string(), values), 0..=3)
        .prop_map(|entries| Value::Object(entries.into_iter().collect()))
        .boxed()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
#[test]
fn base64_matches_rfc_4648_vectors() {
    for (bytes, text) in [
        (&b""[..], ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (b"foob", "Zm9vYg=="),
        (b"fooba", "Zm9vYmE="),
        (b"foobar", "Zm9vYmFy"),
        (&[0xfb, 0xff], "+/8="),
    ] {
        assert_eq!(base64(bytes), text);
    }
}
