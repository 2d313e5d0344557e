//! Loose model input → the canonical shape the tool schemas describe.
//!
//! Accepted alternates (docs/design.md §4.3, §4.5, §4.7), each rewritten to its canonical form:
//!
//! | field | accepted | canonical |
//! |---|---|---|
//! | 32-bit integers | `1`, `1.0`, `"1"` | `1` |
//! | 64-bit integers | `"1"`, JSON integers (exactly) | `"1"` |
//! | float, double | numbers, numeric strings, `"NaN"`, `"Infinity"`, `"-Infinity"` | numbers (the three strings stay) |
//! | bytes | standard or URL-safe base64, padded or not | standard, padded |
//! | enum | names, numbers | names |
//! | real oneof | `{case, value}`, `{"<member>": v}`, `{"which": m, "<m>": v}`, the member flat on the parent | `{case, value}` |
//! | FieldMask | `"a,b"`, `["a", "b"]`, snake_case paths | lowerCamel, comma-separated |
//! | Any | `{type_url, value}`, `{"@type": …, …fields}`, a bare message name as URL | `{type_url, value}` |
//! | wrappers | the scalar, `{"value": scalar}` | the scalar |
//! | messages, lists, maps, Struct, ListValue | also as a JSON string holding the object or array | the object or array |
//!
//! `null` means absent everywhere except in a `google.protobuf.Value`. Property names may be
//! proto names or JSON names; they come out as the tool's naming.
//!
//! Problems the schema cannot see (two oneof members, 64-bit overflow, bad base64, malformed
//! timestamps…) are reported here with their path; the path is then *suppressed*, so schema
//! errors underneath it are not reported twice. Values are never dropped on error, so list
//! indices in later schema errors still match what the model sent.

use base64::{
    Engine as _, alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
    prelude::BASE64_STANDARD,
};
use prost_reflect::{
    DynamicMessage, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, OneofDescriptor,
};
use serde_json::{Map, Value};

use super::{
    TYPE_URL_PREFIX, Wkt, field_prop, find_field, find_member, find_oneof, holds_value,
    is_value_wrapped_root, lower_camel, oneof_prop,
    path::{JsonPath, Problem},
    real_oneof, type_url_message_name,
};

/// The canonical arguments plus what went wrong on the way.
#[derive(Debug)]
pub(crate) struct Normalized {
    pub(crate) value: Value,
    pub(crate) problems: Vec<Problem>,
    /// Paths whose schema errors are not reported: already reported here, or accepted
    /// alternates the schema cannot express (`"NaN"` for a `number`).
    pub(crate) suppressed: Vec<JsonPath>,
}

/// How the arguments of one tool are read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NormalizeOptions {
    pub(crate) json_names: bool,
    pub(crate) max_depth: usize,
    /// Client-streaming and bidi tools take `{"messages": [<msg>…]}`.
    pub(crate) streaming_input: bool,
}

/// Normalise tool arguments whose request message is `desc`.
pub(crate) fn normalize_arguments(
    desc: &MessageDescriptor,
    args: Map<String, Value>,
    options: NormalizeOptions,
) -> Normalized {
    let mut walker = Normalizer {
        json_names: options.json_names,
        max_depth: options.max_depth,
        path: JsonPath::default(),
        problems: Vec::new(),
        suppressed: Vec::new(),
    };
    let value = if options.streaming_input {
        walker.stream_root(desc, args)
    } else {
        walker.root(desc, args)
    };
    Normalized {
        value,
        problems: walker.problems,
        suppressed: walker.suppressed,
    }
}

/// Depth of a JSON value (a scalar is 0, `{}` is 1), without recursion.
pub(crate) fn json_depth(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Object(map) => {
                max = max.max(depth);
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            Value::Array(items) => {
                max = max.max(depth);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    max
}

/// A oneof member found in the input, already normalised.
struct Member {
    field: FieldDescriptor,
    value: Value,
    /// The member as the model named it, for error messages.
    label: String,
    /// Where the member's value was given.
    given: JsonPath,
}

struct OneofGroup {
    oneof: OneofDescriptor,
    members: Vec<Member>,
}

struct Normalizer {
    json_names: bool,
    max_depth: usize,
    path: JsonPath,
    problems: Vec<Problem>,
    suppressed: Vec<JsonPath>,
}

const BASE64_ANY_PADDING: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const BASE64_STANDARD_LOOSE: GeneralPurpose =
    GeneralPurpose::new(&alphabet::STANDARD, BASE64_ANY_PADDING);
const BASE64_URL_SAFE_LOOSE: GeneralPurpose =
    GeneralPurpose::new(&alphabet::URL_SAFE, BASE64_ANY_PADDING);

/// Decode standard or URL-safe base64, padded or not.
pub(crate) fn decode_base64_loose(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if text.contains(['-', '_']) {
        BASE64_URL_SAFE_LOOSE.decode(text).ok()
    } else {
        BASE64_STANDARD_LOOSE.decode(text).ok()
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// An integral JSON number (or numeric string) as `i128`, if it is one.
fn integral_number(number: &serde_json::Number) -> Option<i128> {
    if let Some(i) = number.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = number.as_u64() {
        return Some(i128::from(u));
    }
    let float = number.as_f64()?;
    // Past 2^53 a JSON float no longer names one integer; refuse rather than round.
    (float.fract() == 0.0 && float.abs() <= 9_007_199_254_740_992.0).then_some(float as i128)
}

fn integral_string(text: &str) -> Option<i128> {
    let text = text.trim();
    if let Ok(i) = text.parse::<i128>() {
        return Some(i);
    }
    let float = text.parse::<f64>().ok()?;
    (float.fract() == 0.0 && float.abs() <= 9_007_199_254_740_992.0).then_some(float as i128)
}

impl Normalizer {
    /// Report a problem at the current path and suppress schema errors under it.
    fn problem(&mut self, message: impl Into<String>) {
        self.problem_at(self.path.clone(), message);
    }

    fn problem_at(&mut self, path: JsonPath, message: impl Into<String>) {
        self.suppressed.push(path.clone());
        self.problems.push(Problem {
            path,
            message: message.into(),
        });
    }

    fn too_deep(&mut self, depth: usize) -> bool {
        if depth > self.max_depth {
            self.problem(format!(
                "arguments nest deeper than the limit of {} levels",
                self.max_depth
            ));
            true
        } else {
            false
        }
    }

    fn root(&mut self, desc: &MessageDescriptor, mut args: Map<String, Value>) -> Value {
        if !is_value_wrapped_root(desc) {
            return self.message(desc, Value::Object(args), 1);
        }
        // Timestamp, wrappers, Value…: the tool takes `{"value": <json>}`.
        if let Some(value) = args.remove("value")
            && (!value.is_null() || Wkt::of(desc) == Some(Wkt::Value))
        {
            self.path.push_key("value");
            let value = self.message(desc, value, 2);
            self.path.pop();
            args.insert("value".to_owned(), value);
        }
        Value::Object(args)
    }

    fn stream_root(&mut self, desc: &MessageDescriptor, mut args: Map<String, Value>) -> Value {
        if let Some(messages) = args.remove("messages") {
            self.path.push_key("messages");
            let messages = match self.embedded(messages, '[', 2) {
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (index, item) in items.into_iter().enumerate() {
                        self.path.push_index(index);
                        out.push(self.message(desc, item, 3));
                        self.path.pop();
                    }
                    Value::Array(out)
                }
                other => other,
            };
            self.path.pop();
            args.insert("messages".to_owned(), messages);
        }
        Value::Object(args)
    }

    /// A JSON object or array that arrived as a string is parsed (if it parses and is not
    /// too deep); anything else is returned unchanged for the schema to judge.
    fn embedded(&mut self, value: Value, open: char, depth: usize) -> Value {
        let Value::String(text) = &value else {
            return value;
        };
        if !text.trim_start().starts_with(open) {
            return value;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(parsed) if depth + json_depth(&parsed) <= self.max_depth + 1 => parsed,
            Ok(_) => {
                self.too_deep(usize::MAX);
                value
            }
            Err(_) => value,
        }
    }

    /// A message value (any type, well-known or not) at `depth`.
    fn message(&mut self, desc: &MessageDescriptor, value: Value, depth: usize) -> Value {
        if self.too_deep(depth) {
            return value;
        }
        match Wkt::of(desc) {
            Some(Wkt::Timestamp) => {
                // RFC 3339 allows lower-case `t` and `z`; protobuf's parser wants upper case.
                // A problem quotes what was sent, not the upper-cased copy.
                let expected = "expected an RFC 3339 timestamp such as \"2024-05-01T12:00:00Z\"";
                match value {
                    Value::String(text) => {
                        let upper = Value::String(text.to_ascii_uppercase());
                        if !self.wkt_parses(desc, &upper) {
                            self.problem(format!(
                                "{expected}, got {}",
                                describe(&Value::String(text))
                            ));
                        }
                        upper
                    }
                    other => other,
                }
            }
            Some(Wkt::Duration) => {
                // Friendly: a bare number of seconds.
                let value = match value {
                    Value::Number(seconds) => Value::String(format!("{seconds}s")),
                    other => other,
                };
                self.checked_wkt(
                    desc,
                    value,
                    "expected a duration in seconds with an `s` suffix, such as \"1.5s\"",
                )
            }
            Some(Wkt::FieldMask) => {
                let value = field_mask(value);
                let expected = "expected comma-separated lowerCamel field paths, such as \"displayName,updateTime\"";
                // The decoder takes any dotted text; a path needs a name in every segment.
                if let Some(bad) = value.as_str().and_then(bad_field_mask_path) {
                    self.problem(format!("{expected}; `{bad}` is not a field path"));
                    return value;
                }
                self.checked_wkt(desc, value, expected)
            }
            Some(Wkt::Struct | Wkt::Empty) => self.embedded(value, '{', depth),
            Some(Wkt::ListValue) => self.embedded(value, '[', depth),
            Some(Wkt::Value) => value,
            Some(Wkt::Wrapper) => {
                let inner = match value {
                    Value::Object(mut object)
                        if object.len() == 1 && object.contains_key("value") =>
                    {
                        object.remove("value").unwrap_or(Value::Null)
                    }
                    other => other,
                };
                match desc.fields().next() {
                    Some(field) => self.single(&field.kind(), inner, depth),
                    None => inner,
                }
            }
            Some(Wkt::Any) => self.any(desc, value, depth),
            None => match self.embedded(value, '{', depth) {
                Value::Object(object) => self.fields(desc, object, depth),
                other => other,
            },
        }
    }

    /// Timestamp, Duration and FieldMask strings are checked by the decoder that will read
    /// them, so the check and the decoding can never disagree.
    fn checked_wkt(&mut self, desc: &MessageDescriptor, value: Value, expected: &str) -> Value {
        if !self.wkt_parses(desc, &value) {
            self.problem(format!("{expected}, got {}", describe(&value)));
        }
        value
    }

    /// Whether a string value decodes as `desc`; non-strings are left to the schema.
    fn wkt_parses(&self, desc: &MessageDescriptor, value: &Value) -> bool {
        !value.is_string() || DynamicMessage::deserialize(desc.clone(), value).is_ok()
    }

    fn fields(
        &mut self,
        desc: &MessageDescriptor,
        object: Map<String, Value>,
        depth: usize,
    ) -> Value {
        let mut out = Map::with_capacity(object.len());
        let mut seen: Vec<(String, String)> = Vec::new();
        let mut groups: Vec<OneofGroup> = Vec::new();

        for (key, value) in object {
            if let Some(field) = find_field(desc, &key) {
                let singular_value =
                    !field.is_list() && !field.is_map() && holds_value(&field.kind());
                if value.is_null() && !singular_value {
                    continue;
                }
                self.path.push_key(&key);
                let value = self.field(&field, value, depth + 1);
                if let Some(oneof) = real_oneof(&field) {
                    // The flat protojson form: a member set directly on the parent.
                    let member = Member {
                        field,
                        value,
                        label: key,
                        given: self.path.clone(),
                    };
                    self.path.pop();
                    push_member(&mut groups, oneof, member);
                    continue;
                }
                self.path.pop();
                let prop = field_prop(&field, self.json_names).into_owned();
                if let Some((_, first)) = seen.iter().find(|(p, _)| *p == prop) {
                    let message =
                        format!("`{first}` and `{key}` name the same field; give it once");
                    self.problem_at(self.path.with_key(&key), message);
                    continue;
                }
                seen.push((prop.clone(), key));
                out.insert(prop, value);
            } else if let Some(oneof) = find_oneof(desc, &key) {
                if value.is_null() {
                    continue;
                }
                self.path.push_key(&key);
                let member = self.oneof_object(&oneof, value, depth + 1);
                self.path.pop();
                if let Some(member) = member {
                    push_member(&mut groups, oneof, member);
                }
            } else {
                // Unknown: kept, so the schema reports it with the allowed names.
                out.insert(key, value);
            }
        }

        for group in groups {
            let prop = oneof_prop(&group.oneof, self.json_names);
            let mut members = group.members.into_iter();
            let Some(first) = members.next() else {
                continue;
            };
            let rest: Vec<Member> = members.collect();
            if !rest.is_empty() {
                let labels: Vec<String> = std::iter::once(&first)
                    .chain(&rest)
                    .map(|m| format!("`{}`", m.label))
                    .collect();
                let message = format!(
                    "oneof `{}` takes exactly one member, but got both {}",
                    group.oneof.name(),
                    labels.join(" and ")
                );
                self.problem(message);
                for member in &rest {
                    self.suppressed.push(member.given.clone());
                }
                self.suppressed.push(first.given.clone());
                self.suppressed.push(self.path.with_key(&prop));
            }
            let case = field_prop(&first.field, self.json_names).into_owned();
            let mut wrapped = Map::with_capacity(2);
            wrapped.insert("case".to_owned(), Value::String(case));
            wrapped.insert("value".to_owned(), first.value);
            out.insert(prop, Value::Object(wrapped));
        }
        Value::Object(out)
    }

    /// The oneof property in any accepted form: `{case, value}`, `{"<member>": v}` or
    /// `{"which": "<member>", "<member>": v}`.
    fn oneof_object(
        &mut self,
        oneof: &OneofDescriptor,
        value: Value,
        depth: usize,
    ) -> Option<Member> {
        let cases = member_list(oneof, self.json_names);
        let Value::Object(mut object) = self.embedded(value, '{', depth) else {
            self.problem(format!(
                "expected an object {{\"case\": <member>, \"value\": <value>}} with case one of: {cases}"
            ));
            return None;
        };

        if let Some(case) = object.remove("case") {
            let Some(field) = case.as_str().and_then(|c| find_member(oneof, c)) else {
                self.problem_at(
                    self.path.with_key("case"),
                    format!(
                        "unknown member {}; expected one of: {cases}",
                        describe(&case)
                    ),
                );
                return None;
            };
            let value = object.remove("value");
            for extra in object.keys() {
                self.problem_at(
                    self.path.with_key(extra),
                    format!("unexpected property `{extra}`; a oneof takes only `case` and `value`"),
                );
            }
            let label = case.as_str().unwrap_or_default().to_owned();
            let value = match value {
                Some(v) if !v.is_null() || holds_value(&field.kind()) => v,
                // A message member with no value is the empty message.
                _ if matches!(field.kind(), Kind::Message(_)) => Value::Object(Map::new()),
                _ => {
                    self.problem(format!("missing `value` for member `{label}`"));
                    return None;
                }
            };
            self.path.push_key("value");
            let value = self.field(&field, value, depth + 1);
            let given = self.path.clone();
            self.path.pop();
            return Some(Member {
                field,
                value,
                label,
                given,
            });
        }

        // redpanda's `which` names the member; the member sits under its own name.
        let which = object.remove("which");
        let mut found: Vec<(String, FieldDescriptor, Value)> = Vec::new();
        for (key, value) in object {
            match find_member(oneof, &key) {
                Some(field) if !value.is_null() || holds_value(&field.kind()) => {
                    found.push((key, field, value));
                }
                Some(_) => {}
                None => self.problem_at(
                    self.path.with_key(&key),
                    format!(
                        "unknown member `{key}`; expected {{\"case\": <member>, \"value\": <value>}} with case one of: {cases}"
                    ),
                ),
            }
        }
        if let Some(which) = which {
            let named = which.as_str().and_then(|w| find_member(oneof, w));
            match named {
                Some(named) if found.iter().any(|(_, f, _)| *f == named) => {}
                Some(named) => {
                    self.problem(format!(
                        "`which` names `{}` but no value for it was given",
                        named.name()
                    ));
                    return None;
                }
                None => {
                    self.problem_at(
                        self.path.with_key("which"),
                        format!(
                            "unknown member {}; expected one of: {cases}",
                            describe(&which)
                        ),
                    );
                    return None;
                }
            }
        }
        match found.len() {
            0 => {
                self.problem(format!(
                    "expected {{\"case\": <member>, \"value\": <value>}} with case one of: {cases}"
                ));
                None
            }
            1 => {
                let (key, field, value) = found.remove(0);
                self.path.push_key(&key);
                let value = self.field(&field, value, depth + 1);
                let given = self.path.clone();
                self.path.pop();
                Some(Member {
                    field,
                    value,
                    label: key,
                    given,
                })
            }
            _ => {
                let labels: Vec<String> = found.iter().map(|(k, _, _)| format!("`{k}`")).collect();
                self.problem(format!(
                    "oneof `{}` takes exactly one member, but got both {}",
                    oneof.name(),
                    labels.join(" and ")
                ));
                None
            }
        }
    }

    /// A field value: list, map or single.
    fn field(&mut self, field: &FieldDescriptor, value: Value, depth: usize) -> Value {
        let kind = field.kind();
        if field.is_map() {
            let Kind::Message(entry) = &kind else {
                return value;
            };
            let key_kind = entry.map_entry_key_field().kind();
            let value_kind = entry.map_entry_value_field().kind();
            match self.embedded(value, '{', depth) {
                Value::Object(map) => {
                    if self.too_deep(depth) {
                        return Value::Object(map);
                    }
                    let mut out = Map::with_capacity(map.len());
                    let mut given: Vec<(String, String)> = Vec::new();
                    for (key, value) in map {
                        if value.is_null() && !holds_value(&value_kind) {
                            continue;
                        }
                        self.path.push_key(&key);
                        let canonical = self.map_key(&key_kind, &key);
                        let value = self.single(&value_kind, value, depth + 1);
                        self.path.pop();
                        let Some(canonical) = canonical else {
                            continue;
                        };
                        if let Some((_, first)) = given.iter().find(|(c, _)| *c == canonical) {
                            let message =
                                format!("`{first}` and `{key}` are the same map key; give it once");
                            self.problem_at(self.path.with_key(&key), message);
                            continue;
                        }
                        given.push((canonical.clone(), key));
                        out.insert(canonical, value);
                    }
                    Value::Object(out)
                }
                other => other,
            }
        } else if field.is_list() {
            match self.embedded(value, '[', depth) {
                Value::Array(items) => {
                    if self.too_deep(depth) {
                        return Value::Array(items);
                    }
                    let mut out = Vec::with_capacity(items.len());
                    for (index, item) in items.into_iter().enumerate() {
                        if item.is_null() && !holds_value(&kind) {
                            // Left for the schema to report: a list has no "absent" element.
                            out.push(item);
                            continue;
                        }
                        self.path.push_index(index);
                        out.push(self.single(&kind, item, depth + 1));
                        self.path.pop();
                    }
                    Value::Array(out)
                }
                other => other,
            }
        } else {
            self.single(&kind, value, depth)
        }
    }

    fn single(&mut self, kind: &Kind, value: Value, depth: usize) -> Value {
        match kind {
            Kind::Message(desc) => self.message(desc, value, depth),
            Kind::Enum(desc) => enum_value(desc, value),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                self.int32(value, i128::from(i32::MIN), i128::from(i32::MAX), "int32")
            }
            Kind::Uint32 | Kind::Fixed32 => self.int32(value, 0, i128::from(u32::MAX), "uint32"),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                self.int64(value, i128::from(i64::MIN), i128::from(i64::MAX), "int64")
            }
            Kind::Uint64 | Kind::Fixed64 => self.int64(value, 0, i128::from(u64::MAX), "uint64"),
            Kind::Float => self.float(value, true),
            Kind::Double => self.float(value, false),
            Kind::Bytes => self.bytes(value),
            Kind::Bool | Kind::String => value,
        }
    }

    /// A map key in canonical form (`"07"` → `"7"`), or `None` after reporting a key that is
    /// not valid for the key type. JSON map keys are always strings.
    fn map_key(&mut self, kind: &Kind, key: &str) -> Option<String> {
        let (min, max, name) = match kind {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                (i128::from(i32::MIN), i128::from(i32::MAX), "int32")
            }
            Kind::Uint32 | Kind::Fixed32 => (0, i128::from(u32::MAX), "uint32"),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                (i128::from(i64::MIN), i128::from(i64::MAX), "int64")
            }
            Kind::Uint64 | Kind::Fixed64 => (0, i128::from(u64::MAX), "uint64"),
            Kind::Bool => {
                return if key == "true" || key == "false" {
                    Some(key.to_owned())
                } else {
                    self.problem(format!(
                        "map key `{key}` is not a bool; use \"true\" or \"false\""
                    ));
                    None
                };
            }
            _ => return Some(key.to_owned()),
        };
        match key.parse::<i128>() {
            Ok(n) if (min..=max).contains(&n) => Some(n.to_string()),
            Ok(n) => {
                self.problem(format!("map key {n} is out of range for {name}"));
                None
            }
            Err(_) => {
                self.problem(format!("map key `{key}` is not an integer ({name})"));
                None
            }
        }
    }

    fn int32(&mut self, value: Value, min: i128, max: i128, name: &str) -> Value {
        let parsed = match &value {
            Value::Number(number) => integral_number(number),
            Value::String(text) => integral_string(text),
            _ => None,
        };
        match parsed {
            Some(i) if i < min || i > max => {
                self.problem(format!("{i} is out of range for {name}"));
                value
            }
            Some(i) => i64::try_from(i).map_or(value, Value::from),
            None => value,
        }
    }

    fn int64(&mut self, value: Value, min: i128, max: i128, name: &str) -> Value {
        let parsed = match &value {
            Value::Number(number) => {
                let exact = integral_number(number);
                if exact.is_none() && number.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    self.problem(format!(
                        "{number} is too large to be exact as a JSON number; pass {name} values as strings"
                    ));
                    return value;
                }
                exact
            }
            Value::String(text) => text.trim().parse::<i128>().ok().or_else(|| {
                // Digits that overflow even i128 are certainly out of range.
                let digits = text.trim().trim_start_matches('-');
                (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .then_some(i128::MAX)
            }),
            _ => None,
        };
        match parsed {
            Some(i) if i < min || i > max => {
                self.problem(format!("{} is out of range for {name}", describe(&value)));
                value
            }
            Some(i) => Value::String(i.to_string()),
            // The schema says `string` (a JSON number cannot hold every 64-bit value), but
            // integer numbers are accepted too: say both, not "expected string".
            None => {
                let example = if min < 0 { "\"-12\"" } else { "\"12\"" };
                self.problem(format!(
                    "{} is not an integer; {name} takes a decimal string such as {example} or \
                     an integer JSON number",
                    describe(&value)
                ));
                value
            }
        }
    }

    fn float(&mut self, value: Value, single_precision: bool) -> Value {
        match &value {
            Value::Number(number) => {
                if single_precision
                    && number
                        .as_f64()
                        .is_some_and(|f| f.abs() > f64::from(f32::MAX))
                {
                    self.problem(format!("{number} is out of range for float"));
                }
                value
            }
            Value::String(text) => match text.as_str() {
                "NaN" | "Infinity" | "-Infinity" => {
                    self.suppressed.push(self.path.clone());
                    value
                }
                other => match other.trim().parse::<f64>() {
                    Ok(float) if float.is_finite() => {
                        serde_json::Number::from_f64(float).map_or(value, Value::Number)
                    }
                    _ => value,
                },
            },
            _ => value,
        }
    }

    fn bytes(&mut self, value: Value) -> Value {
        let Value::String(text) = &value else {
            return value;
        };
        match decode_base64_loose(text) {
            Some(bytes) => Value::String(BASE64_STANDARD.encode(bytes)),
            None => {
                self.problem("expected base64 (standard or URL-safe alphabet, padding optional)");
                value
            }
        }
    }

    /// `Any` as `{type_url, value}` or protojson's `{"@type": …, …}`.
    fn any(&mut self, desc: &MessageDescriptor, value: Value, depth: usize) -> Value {
        let mut object = match self.embedded(value, '{', depth) {
            Value::Object(object) => object,
            other => return other,
        };
        let (type_url, at_type) = if let Some(url) = object.remove("@type") {
            (url, true)
        } else if let Some(url) = object
            .remove("type_url")
            .or_else(|| object.remove("typeUrl"))
        {
            (url, false)
        } else {
            // The schema reports the missing `type_url`.
            return Value::Object(object);
        };
        let type_key = if at_type { "@type" } else { "type_url" };
        let Value::String(mut url) = type_url else {
            self.problem_at(
                self.path.with_key(type_key),
                format!(
                    "expected a type URL such as \"type.googleapis.com/pkg.Message\", got {}",
                    describe(&type_url)
                ),
            );
            object.insert("type_url".to_owned(), type_url);
            return Value::Object(object);
        };
        if !url.contains('/') {
            url = format!("{TYPE_URL_PREFIX}{url}");
        }
        let name = type_url_message_name(&url).to_owned();
        let Some(payload_desc) = desc.parent_pool().get_message_by_name(&name) else {
            self.problem_at(
                self.path.with_key(type_key),
                format!("unknown message type `{name}`: it is not among this service's types"),
            );
            object.insert("type_url".to_owned(), Value::String(url));
            return Value::Object(object);
        };

        let payload = if Wkt::of(&payload_desc).is_some() || !at_type {
            object.remove("value")
        } else {
            // protojson: the payload's fields sit next to `@type`.
            Some(Value::Object(std::mem::take(&mut object)))
        };
        let payload = match payload {
            Some(Value::Null) | None if Wkt::of(&payload_desc).is_none() => {
                Value::Object(Map::new())
            }
            Some(payload) => payload,
            None => {
                self.problem(format!("missing `value` for the `{name}` payload"));
                Value::Null
            }
        };
        self.path.push_key("value");
        let problems_before = self.problems.len();
        let payload = self.message(&payload_desc, payload, depth + 1);
        // The schema cannot describe the payload (its type is only known here), so a payload
        // the decoder would refuse is reported here, at its own path, not at the root.
        if self.problems.len() == problems_before
            && let Err(error) = super::decode::decode_message(&payload_desc, payload.clone())
        {
            self.problem(format!("not a valid `{name}` payload: {error}"));
        }
        self.path.pop();

        let mut out = Map::with_capacity(2 + object.len());
        out.insert("type_url".to_owned(), Value::String(url));
        out.insert("value".to_owned(), payload);
        // Anything else is left for the schema to report.
        out.extend(object);
        Value::Object(out)
    }
}

fn push_member(groups: &mut Vec<OneofGroup>, oneof: OneofDescriptor, member: Member) {
    if let Some(group) = groups.iter_mut().find(|g| g.oneof == oneof) {
        group.members.push(member);
    } else {
        groups.push(OneofGroup {
            oneof,
            members: vec![member],
        });
    }
}

fn member_list(oneof: &OneofDescriptor, json_names: bool) -> String {
    oneof
        .fields()
        .map(|f| field_prop(&f, json_names).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

fn enum_value(desc: &EnumDescriptor, value: Value) -> Value {
    let number = match &value {
        Value::Number(number) => integral_number(number),
        Value::String(text) => {
            if desc.get_value_by_name(text).is_some() {
                return value;
            }
            // Unambiguous case-insensitive spellings are accepted too.
            let mut matches = desc
                .values()
                .filter(|v| v.name().eq_ignore_ascii_case(text.trim()));
            if let (Some(only), None) = (matches.next(), matches.next()) {
                return Value::String(only.name().to_owned());
            }
            integral_string(text)
        }
        _ => None,
    };
    number
        .and_then(|n| i32::try_from(n).ok())
        .and_then(|n| desc.get_value(n))
        .map_or(value, |v| Value::String(v.name().to_owned()))
}

/// The first path of a (normalised) FieldMask string that is not a dotted list of
/// identifiers.
fn bad_field_mask_path(mask: &str) -> Option<&str> {
    let identifier = |segment: &str| {
        let mut chars = segment.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if mask.is_empty() {
        return None;
    }
    mask.split(',')
        .find(|path| !path.split('.').all(identifier))
}

/// FieldMask alternates: a list of paths, snake_case paths.
fn field_mask(value: Value) -> Value {
    let joined = match value {
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        Value::String(text) => text,
        other => return other,
    };
    let camel = joined
        .split(',')
        .map(str::trim)
        .filter(|path| !path.is_empty())
        .map(|path| {
            path.split('.')
                .map(lower_camel)
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect::<Vec<_>>()
        .join(",");
    Value::String(camel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_mask_paths_need_a_name_in_every_segment() {
        assert_eq!(bad_field_mask_path("displayName,address.city"), None);
        assert_eq!(bad_field_mask_path(""), None);
        assert_eq!(bad_field_mask_path("a..b"), Some("a..b"));
        assert_eq!(bad_field_mask_path("a,.b"), Some(".b"));
        assert_eq!(bad_field_mask_path("a.1b"), Some("a.1b"));
    }

    #[test]
    fn base64_alphabets_and_padding() {
        for text in ["+/8=", "+/8", "-_8=", "-_8"] {
            assert_eq!(decode_base64_loose(text), Some(vec![0xfb, 0xff]), "{text}");
        }
        assert_eq!(decode_base64_loose("not base64!"), None);
    }

    #[test]
    fn json_depth_counts_containers() {
        assert_eq!(json_depth(&serde_json::json!(1)), 0);
        assert_eq!(json_depth(&serde_json::json!({})), 1);
        assert_eq!(json_depth(&serde_json::json!({"a": [{"b": 1}]})), 3);
    }

    #[test]
    fn field_mask_alternates() {
        assert_eq!(
            field_mask(serde_json::json!(["display_name", "update_time.seconds"])),
            serde_json::json!("displayName,updateTime.seconds")
        );
        assert_eq!(
            field_mask(serde_json::json!("displayName, b")),
            serde_json::json!("displayName,b")
        );
    }
}
