//! `buf.validate` rules as JSON Schema keywords, on input schemas (docs/design.md §4.8).
//!
//! | rules | keywords |
//! |---|---|
//! | string `min_len`/`max_len`/`len` | `minLength`/`maxLength` |
//! | string `pattern`, `const`, `in` | `pattern`, `const`, `enum` |
//! | 32-bit and float `gt`/`gte`/`lt`/`lte`/`const`/`in` | `exclusiveMinimum`/`minimum`/`exclusiveMaximum`/`maximum`/`const`/`enum` |
//! | 64-bit `const`/`in` | `const`/`enum` of digit strings; bounds go to the description |
//! | repeated `min_items`/`max_items`/`unique`, `items` | `minItems`/`maxItems`/`uniqueItems`, rules on `items` |
//! | map `min_pairs`/`max_pairs`, `keys`, `values` | `minProperties`/`maxProperties`, `propertyNames`, `additionalProperties` |
//! | enum `const`/`in`/`not_in` | the `enum` list narrowed; `defined_only` holds already |
//! | `required` on a field without presence | not the zero value: `minLength`/`minItems`/`minProperties` of at least 1, `const: true`, the zero enum value left out; a number's zero is stated |
//!
//! Any other rule is stated in the description. With `IGNORE_IF_ZERO_VALUE` the keywords are
//! wrapped as `anyOf: [<type> + <zero value>, <type> + <keywords>]` so that the zero value stays
//! valid; each branch has its own `type` and only a description sits beside the union.

use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value as Proto};
use serde_json::{Map, Value, json};

/// Applies the rules of `field` to its schema, and pushes what JSON Schema cannot say to `notes`.
pub(super) fn apply(
    field: &FieldDescriptor,
    rules: &DynamicMessage,
    ignore_if_zero: bool,
    schema: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    let mut keywords = Map::new();
    if field.is_map() {
        if let Some(map) = typed(rules, "map") {
            collect_map(&map, schema, &mut keywords, notes);
        }
    } else if field.is_list() {
        if let Some(repeated) = typed(rules, "repeated") {
            collect_repeated(&field.kind(), &repeated, schema, &mut keywords, notes);
        }
    } else {
        collect_scalar(&field.kind(), rules, &mut keywords, notes);
    }
    // protovalidate: a field without presence is set when it is not its zero value.
    if !ignore_if_zero
        && !field.supports_presence()
        && crate::extensions::get_bool(rules, "required") == Some(true)
    {
        not_zero(field, &mut keywords, notes);
    }
    merge(schema, keywords, ignore_if_zero, zero_value(field));
}

/// Keywords that refuse the zero value of `field` (a `required` field without presence), added
/// to the rules' own; a number's zero, which no keyword the schemas use can exclude, is stated.
fn not_zero(field: &FieldDescriptor, keywords: &mut Map<String, Value>, notes: &mut Vec<String>) {
    let at_least_one = |keywords: &mut Map<String, Value>, keyword: &str| {
        let count = keywords.get(keyword).and_then(Value::as_u64).unwrap_or(0);
        keywords.insert(keyword.to_owned(), json!(count.max(1)));
    };
    if field.is_map() {
        return at_least_one(keywords, "minProperties");
    }
    if field.is_list() {
        return at_least_one(keywords, "minItems");
    }
    match field.kind() {
        Kind::String | Kind::Bytes => at_least_one(keywords, "minLength"),
        Kind::Bool => {
            keywords.insert("const".to_owned(), json!(true));
        }
        Kind::Enum(e) => {
            let zero = e.default_value();
            let allowed: Vec<Value> = match keywords.get("enum").and_then(Value::as_array) {
                Some(names) => names.clone(),
                None => e.values().map(|v| json!(v.name())).collect(),
            };
            let allowed: Vec<Value> = allowed
                .into_iter()
                .filter(|name| name.as_str() != Some(zero.name()))
                .collect();
            keywords.insert("enum".to_owned(), Value::Array(allowed));
        }
        Kind::Message(_) => {}
        _ => notes.push("Must not be 0.".to_owned()),
    }
}

/// Adds `keywords` to `schema`, or, when the zero value must stay valid, makes the schema
/// `anyOf: [<schema> + <zero value>, <schema> + <keywords>]`: each branch carries its own `type`
/// and the rest, and nothing but a description stays beside the union (strict provider modes
/// refuse other keywords there).
fn merge(
    schema: &mut Map<String, Value>,
    keywords: Map<String, Value>,
    ignore_if_zero: bool,
    zero: Value,
) {
    if keywords.is_empty() {
        return;
    }
    drop_implied_type_range(schema, &keywords);
    if ignore_if_zero {
        let description = schema.remove("description");
        let base = std::mem::take(schema);
        let mut zero_branch = base.clone();
        if let Value::Object(zero) = zero {
            zero_branch.extend(zero);
        }
        let mut rules_branch = base;
        rules_branch.extend(keywords);
        if let Some(description) = description {
            schema.insert("description".to_owned(), description);
        }
        schema.insert(
            "anyOf".to_owned(),
            Value::Array(vec![
                Value::Object(zero_branch),
                Value::Object(rules_branch),
            ]),
        );
    } else {
        schema.extend(keywords);
    }
}

/// A schema accepting exactly the zero value of the field.
fn zero_value(field: &FieldDescriptor) -> Value {
    if field.is_map() {
        return json!({"maxProperties": 0});
    }
    if field.is_list() {
        return json!({"maxItems": 0});
    }
    match field.kind() {
        Kind::String | Kind::Bytes => json!({"const": ""}),
        Kind::Bool => json!({"const": false}),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64 => {
            json!({"const": "0"})
        }
        Kind::Enum(e) => json!({"const": e.default_value().name()}),
        Kind::Message(_) => json!({"maxProperties": 0}),
        _ => json!({"const": 0}),
    }
}

/// The typed rules message set in the `FieldRules.type` oneof under `name`.
fn typed(rules: &DynamicMessage, name: &str) -> Option<DynamicMessage> {
    let field = rules.descriptor().get_field_by_name(name)?;
    if !rules.has_field(&field) {
        return None;
    }
    rules.get_field(&field).as_message().cloned()
}

/// The name of the typed rules for a field kind.
fn rules_name(kind: &Kind) -> Option<&'static str> {
    Some(match kind {
        Kind::Float => "float",
        Kind::Double => "double",
        Kind::Int32 => "int32",
        Kind::Int64 => "int64",
        Kind::Uint32 => "uint32",
        Kind::Uint64 => "uint64",
        Kind::Sint32 => "sint32",
        Kind::Sint64 => "sint64",
        Kind::Fixed32 => "fixed32",
        Kind::Fixed64 => "fixed64",
        Kind::Sfixed32 => "sfixed32",
        Kind::Sfixed64 => "sfixed64",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
        Kind::Enum(_) => "enum",
        Kind::Message(m) => match m.full_name() {
            "google.protobuf.Duration" => "duration",
            "google.protobuf.Timestamp" => "timestamp",
            "google.protobuf.Any" => "any",
            _ => return None,
        },
    })
}

/// Rules of a singular value of `kind` (also used for repeated items and map keys and values).
fn collect_scalar(
    kind: &Kind,
    rules: &DynamicMessage,
    keywords: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    let Some(name) = rules_name(kind) else {
        return;
    };
    let Some(typed) = typed(rules, name) else {
        return;
    };
    match kind {
        Kind::String => collect_string(&typed, keywords, notes),
        Kind::Int32
        | Kind::Sint32
        | Kind::Sfixed32
        | Kind::Uint32
        | Kind::Fixed32
        | Kind::Float
        | Kind::Double => collect_number(&typed, keywords, notes),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64 => {
            collect_int64(&typed, keywords, notes)
        }
        Kind::Bool => {
            if let Some(value) = get(&typed, "const").and_then(|v| v.as_bool()) {
                keywords.insert("const".to_owned(), json!(value));
            }
        }
        Kind::Enum(e) => collect_enum(e, &typed, keywords),
        _ => describe_all(&typed, notes),
    }
}

/// protovalidate's count bounds and the JSON Schema keyword each becomes, with its value as is.
const COUNT_BOUNDS: [(&str, &str); 6] = [
    ("min_len", "minLength"),
    ("max_len", "maxLength"),
    ("min_items", "minItems"),
    ("max_items", "maxItems"),
    ("min_pairs", "minProperties"),
    ("max_pairs", "maxProperties"),
];

/// Writes the rule `name` into `keywords` when it is a count bound; says whether it was.
fn collect_count_bound(name: &str, value: &Proto, keywords: &mut Map<String, Value>) -> bool {
    let Proto::U64(n) = value else { return false };
    let Some((_, keyword)) = COUNT_BOUNDS.iter().find(|(rule, _)| *rule == name) else {
        return false;
    };
    keywords.insert((*keyword).to_owned(), json!(n));
    true
}

fn collect_string(
    rules: &DynamicMessage,
    keywords: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    for (field, value) in rules.fields() {
        let name = field.name();
        if collect_count_bound(name, value, keywords) {
            continue;
        }
        match (name, &value) {
            ("const", Proto::String(s)) => {
                keywords.insert("const".to_owned(), json!(s));
            }
            ("len", Proto::U64(n)) => {
                keywords.insert("minLength".to_owned(), json!(n));
                keywords.insert("maxLength".to_owned(), json!(n));
            }
            ("pattern", Proto::String(p)) => {
                keywords.insert("pattern".to_owned(), json!(p));
            }
            ("in", Proto::List(items)) => {
                let items: Vec<&str> = items.iter().filter_map(Proto::as_str).collect();
                keywords.insert("enum".to_owned(), json!(items));
            }
            // A well-known format set to false asks for nothing.
            ("email" | "hostname" | "ipv4" | "ipv6" | "uri" | "uuid", Proto::Bool(false)) => {}
            _ => notes.push(phrase(name, value)),
        }
    }
}

/// Leaves out the range that the field's type gives (the `int32` and `float` `format`,
/// `uint32`'s `minimum: 0` and `maximum: 4294967295`) where the rule's `keywords` say more:
/// they list the values (`const`, `enum`), or bound that side within the type's range.
fn drop_implied_type_range(schema: &mut Map<String, Value>, keywords: &Map<String, Value>) {
    let (low, high) = match schema.get("format").and_then(Value::as_str) {
        Some("int32") => (f64::from(i32::MIN), f64::from(i32::MAX)),
        Some("float") => (f64::from(f32::MIN), f64::from(f32::MAX)),
        _ => (0.0, f64::from(u32::MAX)),
    };
    let listed = keywords.contains_key("const") || keywords.contains_key("enum");
    let bounded = |names: [&str; 2]| {
        let bounds: Vec<f64> = names
            .iter()
            .filter_map(|name| keywords.get(*name).and_then(Value::as_f64))
            .collect();
        listed || (!bounds.is_empty() && bounds.iter().all(|b| (low..=high).contains(b)))
    };
    let lower = bounded(["minimum", "exclusiveMinimum"]);
    let upper = bounded(["maximum", "exclusiveMaximum"]);
    if schema.contains_key("format") {
        if matches!(schema["format"].as_str(), Some("int32" | "float")) && lower && upper {
            schema.remove("format");
        }
    } else if schema.get("minimum").and_then(Value::as_f64) == Some(low)
        && schema.get("maximum").and_then(Value::as_f64) == Some(high)
    {
        if lower {
            schema.remove("minimum");
        }
        if upper {
            schema.remove("maximum");
        }
    }
}

fn collect_number(
    rules: &DynamicMessage,
    keywords: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    let lower = number(rules, "gt").or_else(|| number(rules, "gte"));
    let upper = number(rules, "lt").or_else(|| number(rules, "lte"));
    // protovalidate reads `gt > lt` as "outside the range": not expressible without a union.
    let inverted = matches!((lower, upper), (Some(l), Some(u)) if l > u);
    for (field, value) in rules.fields() {
        let name = field.name();
        let keyword = match name {
            "gt" if !inverted => "exclusiveMinimum",
            "gte" if !inverted => "minimum",
            "lt" if !inverted => "exclusiveMaximum",
            "lte" if !inverted => "maximum",
            "const" => "const",
            "in" => "enum",
            _ => {
                notes.push(phrase(name, value));
                continue;
            }
        };
        keywords.insert(keyword.to_owned(), to_json(value));
    }
}

fn collect_int64(
    rules: &DynamicMessage,
    keywords: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    for (field, value) in rules.fields() {
        match field.name() {
            // 64-bit integers are strings: exact values can still be listed.
            "const" => {
                keywords.insert("const".to_owned(), json!(scalar_text(value)));
            }
            "in" => {
                let items: Vec<String> = match &value {
                    Proto::List(items) => items.iter().map(scalar_text).collect(),
                    other => vec![scalar_text(other)],
                };
                keywords.insert("enum".to_owned(), json!(items));
            }
            name => notes.push(phrase(name, value)),
        }
    }
}

fn collect_enum(
    e: &prost_reflect::EnumDescriptor,
    rules: &DynamicMessage,
    keywords: &mut Map<String, Value>,
) {
    let numbers = |name: &str| -> Option<Vec<i32>> {
        match get(rules, name)? {
            Proto::List(items) => Some(items.iter().filter_map(Proto::as_i32).collect()),
            Proto::I32(n) => Some(vec![n]),
            _ => None,
        }
    };
    let mut allowed: Vec<String> = Vec::new();
    let constant = numbers("const");
    let within = numbers("in");
    let outside = numbers("not_in").unwrap_or_default();
    let values: Vec<_> = e.values().collect();
    for v in &values {
        let n = v.number();
        let ok = constant.as_ref().is_none_or(|c| c.contains(&n))
            && within.as_ref().is_none_or(|w| w.contains(&n))
            && !outside.contains(&n);
        if ok {
            allowed.push(v.name().to_owned());
        }
    }
    if allowed.len() != values.len() {
        keywords.insert("enum".to_owned(), json!(allowed));
    }
}

fn collect_repeated(
    item_kind: &Kind,
    rules: &DynamicMessage,
    schema: &mut Map<String, Value>,
    keywords: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    for (field, value) in rules.fields() {
        if collect_count_bound(field.name(), value, keywords) {
            continue;
        }
        match (field.name(), &value) {
            ("unique", Proto::Bool(true)) => {
                keywords.insert("uniqueItems".to_owned(), json!(true));
            }
            ("items", Proto::Message(item_rules)) => {
                if let Some(Value::Object(items)) = schema.get_mut("items") {
                    let mut item_keywords = Map::new();
                    collect_scalar(item_kind, item_rules, &mut item_keywords, notes);
                    if !items.contains_key("$ref") {
                        items.extend(item_keywords);
                    }
                }
            }
            (name, _) => notes.push(phrase(name, value)),
        }
    }
}

fn collect_map(
    rules: &DynamicMessage,
    schema: &mut Map<String, Value>,
    keywords: &mut Map<String, Value>,
    notes: &mut Vec<String>,
) {
    for (field, value) in rules.fields() {
        if collect_count_bound(field.name(), value, keywords) {
            continue;
        }
        match (field.name(), &value) {
            ("keys", Proto::Message(key_rules)) => {
                let mut key_keywords = Map::new();
                // Map keys are strings in JSON; only string rules carry over to `propertyNames`.
                collect_scalar(&Kind::String, key_rules, &mut key_keywords, notes);
                if !key_keywords.is_empty() {
                    let names = schema.entry("propertyNames").or_insert_with(|| json!({}));
                    if let Value::Object(names) = names {
                        names.extend(key_keywords);
                    }
                }
            }
            ("values", Proto::Message(value_rules)) => {
                if let Some(Value::Object(values)) = schema.get_mut("additionalProperties")
                    && !values.contains_key("$ref")
                {
                    let kind = scalar_kind_of(values);
                    if let Some(kind) = kind {
                        let mut value_keywords = Map::new();
                        collect_scalar(&kind, value_rules, &mut value_keywords, notes);
                        values.extend(value_keywords);
                    }
                }
            }
            (name, _) => notes.push(phrase(name, value)),
        }
    }
}

/// The rules kind to read for a map value schema, from the schema's JSON type.
fn scalar_kind_of(schema: &Map<String, Value>) -> Option<Kind> {
    match schema.get("type")?.as_str()? {
        "string" if schema.contains_key("pattern") => Some(Kind::Int64),
        "string" => Some(Kind::String),
        "integer" => Some(Kind::Int32),
        "number" => Some(Kind::Double),
        "boolean" => Some(Kind::Bool),
        _ => None,
    }
}

/// Every rule as a sentence, for rules messages JSON Schema has no keywords for.
fn describe_all(rules: &DynamicMessage, notes: &mut Vec<String>) {
    for (field, value) in rules.fields() {
        notes.push(phrase(field.name(), value));
    }
}

fn get(message: &DynamicMessage, name: &str) -> Option<Proto> {
    let field = message.descriptor().get_field_by_name(name)?;
    message
        .has_field(&field)
        .then(|| message.get_field(&field).into_owned())
}

fn number(message: &DynamicMessage, name: &str) -> Option<f64> {
    get(message, name).and_then(|v| to_json(&v).as_f64())
}

/// A rule as a sentence: `prefix "ab"` → `Must satisfy prefix = "ab".`
fn phrase(rule: &str, value: &Proto) -> String {
    match rule {
        "gt" => format!("Must be greater than {}.", scalar_text(value)),
        "gte" => format!("Must be at least {}.", scalar_text(value)),
        "lt" => format!("Must be less than {}.", scalar_text(value)),
        "lte" => format!("Must be at most {}.", scalar_text(value)),
        "prefix" => format!("Must start with {}.", quoted(value)),
        "suffix" => format!("Must end with {}.", quoted(value)),
        "contains" => format!("Must contain {}.", quoted(value)),
        "not_contains" => format!("Must not contain {}.", quoted(value)),
        "not_in" => format!("Must not be one of {}.", list_text(value)),
        "in" => format!("Must be one of {}.", list_text(value)),
        "const" => format!("Must be {}.", quoted(value)),
        "min_bytes" | "min_len" => format!("At least {} bytes.", scalar_text(value)),
        "max_bytes" | "max_len" => format!("At most {} bytes.", scalar_text(value)),
        "finite" => "Must be finite (not NaN or infinite).".to_owned(),
        "ip" => "Must be an IP address (v4 or v6).".to_owned(),
        // As words, not `format`: Gemini refuses a string `format` other than `date-time`, and
        // JSON Schema 2020-12 only notes a format anyway.
        "email" => "Must be an email address.".to_owned(),
        "hostname" => "Must be a hostname.".to_owned(),
        "ipv4" => "Must be an IPv4 address.".to_owned(),
        "ipv6" => "Must be an IPv6 address.".to_owned(),
        "uri" => "Must be an absolute URI.".to_owned(),
        "uuid" => "Must be a UUID.".to_owned(),
        "uri_ref" => "Must be a URI reference.".to_owned(),
        "address" => "Must be a hostname or an IP address.".to_owned(),
        "well_known_regex" => "Must match a well-known HTTP header pattern.".to_owned(),
        other => format!("Rule `{other}`: {}.", quoted(value)),
    }
}

fn quoted(value: &Proto) -> String {
    match value {
        Proto::String(s) => format!("\"{s}\""),
        Proto::Bytes(b) => format!("\"{}\"", String::from_utf8_lossy(b)),
        other => scalar_text(other),
    }
}

fn list_text(value: &Proto) -> String {
    match value {
        Proto::List(items) => items.iter().map(quoted).collect::<Vec<_>>().join(", "),
        other => quoted(other),
    }
}

fn scalar_text(value: &Proto) -> String {
    match value {
        Proto::Bool(b) => b.to_string(),
        Proto::I32(n) => n.to_string(),
        Proto::I64(n) => n.to_string(),
        Proto::U32(n) => n.to_string(),
        Proto::U64(n) => n.to_string(),
        Proto::F32(n) => n.to_string(),
        Proto::F64(n) => n.to_string(),
        Proto::String(s) => s.clone(),
        Proto::EnumNumber(n) => n.to_string(),
        Proto::Message(m) => match (get(m, "seconds"), get(m, "nanos")) {
            // Duration and Timestamp bounds.
            (seconds, nanos) if seconds.is_some() || nanos.is_some() => {
                let s = seconds.and_then(|v| v.as_i64()).unwrap_or(0);
                let n = nanos.and_then(|v| v.as_i32()).unwrap_or(0);
                if n == 0 {
                    format!("{s}s")
                } else {
                    format!("{s}.{n:09}s")
                }
            }
            _ => format!("{m:?}"),
        },
        Proto::List(items) => items.iter().map(scalar_text).collect::<Vec<_>>().join(", "),
        Proto::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Proto::Map(_) => "…".to_owned(),
    }
}

fn to_json(value: &Proto) -> Value {
    match value {
        Proto::Bool(b) => json!(b),
        Proto::I32(n) => json!(n),
        Proto::I64(n) => json!(n),
        Proto::U32(n) => json!(n),
        Proto::U64(n) => json!(n),
        Proto::F32(n) => json!(n),
        Proto::F64(n) => json!(n),
        Proto::String(s) => json!(s),
        Proto::EnumNumber(n) => json!(n),
        Proto::List(items) => Value::Array(items.iter().map(to_json).collect()),
        other => json!(scalar_text(other)),
    }
}
