//! What a tool's input schema asks of each value, compiled once, for the text encoder.
//!
//! Only the keywords this module knows are taken, each for exactly what the JSON Schema
//! validator checks with it. A schema node with any other keyword (`oneOf`, `minLength`,
//! `exclusiveMinimum`, a `pattern` other than the 64-bit digit patterns, …) compiles to
//! [`Check::Unsupported`]: a call that gives a value there takes the whole way instead. So do
//! `Any`, the JSON-valued well-known types and maps with other than string keys. A oneof is
//! taken in the `{case, value}` form its `oneOf` branches describe; Timestamp, Duration and
//! FieldMask as their strings, wrappers as their scalar, `Empty` as `{}`.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::super::Wkt;
use super::super::fast_from_json::plan::{
    EncodePlan, FieldPlan, KeyMap, Scalar, Shape, Target, ValueKind,
};
use crate::patterns::KnownPattern;
use crate::validate::ANNOTATIONS;

/// A property of a message: the field it sets and the check of its value.
#[derive(Debug, Clone, Copy)]
pub(super) struct Prop {
    pub(super) field: usize,
    pub(super) check: usize,
}

/// The check of one value. Indexes are into [`TextChecks::checks`].
#[derive(Debug)]
pub(super) enum Check {
    /// Left to the whole way.
    Unsupported,
    /// A message of plan `message`: an object of these properties (and no other).
    Message {
        message: usize,
        props: KeyMap<Prop>,
        /// The properties that must be given, each as the fields that give it (a field, or a
        /// oneof's members; none: one never met here).
        required: Box<[Box<[usize]>]>,
    },
    /// An array, each item checked by `items`.
    List { items: usize },
    /// An object of string keys, each value checked by `values`.
    Map { values: usize },
    /// A JSON integer (no fraction, no exponent) within the bounds.
    Integer {
        min: Option<i128>,
        max: Option<i128>,
    },
    /// A JSON number.
    Number,
    /// `true` or `false`.
    Bool,
    /// A string; `digits`: it must match the signed or unsigned 64-bit digit pattern.
    Str { digits: Option<KnownPattern> },
    /// A string among these names.
    Enum(KeyMap<()>),
    /// A well-known type written as a string (Timestamp, Duration, FieldMask), of message plan
    /// `message`; the string must match `pattern` when there is one.
    WktText {
        message: usize,
        pattern: Option<KnownPattern>,
    },
    /// A wrapper (`google.protobuf.Int64Value`…) of message plan `message`: its scalar, checked
    /// by `value`.
    Wrapper { message: usize, value: usize },
    /// A real oneof in the `{"case": member, "value": …}` form: each member's name, the field
    /// it sets and the check of its value.
    Oneof(KeyMap<Prop>),
}

impl Check {
    /// Whether the check takes a JSON integer: an `integer` within its bounds, or a `number`.
    pub(super) fn takes_integer(&self, exact: i128) -> bool {
        match self {
            Check::Integer { min, max } => {
                min.is_none_or(|min| exact >= min) && max.is_none_or(|max| exact <= max)
            }
            Check::Number => true,
            _ => false,
        }
    }

    /// The number of the enum value named `text`, when the check takes the name.
    pub(super) fn enum_number(&self, kind: &ValueKind, text: &str) -> Option<i32> {
        match (self, kind) {
            (Check::Enum(names), ValueKind::Enum { desc, .. }) if names.contains_key(text) => {
                desc.get_value_by_name(text).map(|value| value.number())
            }
            _ => None,
        }
    }

    /// The number the decimal `text` of a 64-bit integer stands for (`str::parse`, as the
    /// whole way reads such a string), when the check takes it.
    pub(super) fn digits_number(&self, kind: Scalar, text: &str) -> Option<Number> {
        let Check::Str { digits } = self else {
            return None;
        };
        if digits.is_some_and(|digits| !digits.matches(text)) {
            return None;
        }
        match kind {
            Scalar::Int64 | Scalar::Sint64 | Scalar::Sfixed64 => {
                text.parse::<i64>().ok().map(Number::from)
            }
            Scalar::Uint64 | Scalar::Fixed64 => text.parse::<u64>().ok().map(Number::from),
            _ => None,
        }
    }
}

/// The checks of one tool's input schema; index 0 is the root's.
#[derive(Debug)]
pub(crate) struct TextChecks {
    pub(super) checks: Vec<Check>,
}

impl TextChecks {
    /// Compiles `schema` (the tool's input schema) against `plan` (its input type's).
    pub(crate) fn new(plan: &EncodePlan, schema: &Value) -> Self {
        let mut compiler = Compiler {
            plan,
            defs: schema.get("$defs").and_then(Value::as_object),
            refs: HashMap::new(),
            checks: Vec::new(),
        };
        let root = compiler.reserve();
        let check = if plan.root_wrapped {
            Check::Unsupported
        } else {
            compiler.message(schema, 0)
        };
        compiler.set(root, check);
        Self {
            checks: compiler.checks,
        }
    }
}

struct Compiler<'a> {
    plan: &'a EncodePlan,
    defs: Option<&'a Map<String, Value>>,
    /// `$ref` → its check (reserved before it is compiled, for recursive types).
    refs: HashMap<&'a str, usize>,
    checks: Vec<Check>,
}

impl<'a> Compiler<'a> {
    fn reserve(&mut self) -> usize {
        self.checks.push(Check::Unsupported);
        self.checks.len() - 1
    }

    fn set(&mut self, index: usize, check: Check) {
        if let Some(slot) = self.checks.get_mut(index) {
            *slot = check;
        }
    }

    fn push(&mut self, check: Check) -> usize {
        self.checks.push(check);
        self.checks.len() - 1
    }

    fn of_type(object: &Map<String, Value>, ty: &str) -> bool {
        object.get("type").and_then(Value::as_str) == Some(ty)
    }

    /// The check of a value of message plan `message` at `node`, following a `$ref`.
    fn message_at(&mut self, node: &'a Value, message: usize) -> usize {
        if let Some(object) = keywords(node, &["$ref"]) {
            let Some(reference) = object.get("$ref").and_then(Value::as_str) else {
                return self.push(Check::Unsupported);
            };
            if let Some(&index) = self.refs.get(reference) {
                return index;
            }
            let target = reference
                .strip_prefix("#/$defs/")
                .and_then(|name| self.defs?.get(name));
            let index = self.reserve();
            self.refs.insert(reference, index);
            let check = match target {
                Some(target) => self.message(target, message),
                None => Check::Unsupported,
            };
            self.set(index, check);
            return index;
        }
        let check = self.message(node, message);
        self.push(check)
    }

    fn message(&mut self, node: &'a Value, message: usize) -> Check {
        let plan = self.plan;
        let Some(message_plan) = plan.messages.get(message) else {
            return Check::Unsupported;
        };
        if let Some(wkt) = message_plan.wkt {
            return self.well_known(node, message, wkt);
        }
        let known = [
            "type",
            "properties",
            "additionalProperties",
            "required",
            "$defs",
        ];
        let Some(object) = keywords(node, &known) else {
            return Check::Unsupported;
        };
        if !Self::of_type(object, "object")
            || object
                .get("additionalProperties")
                .is_some_and(|closed| closed != &Value::Bool(false))
        {
            return Check::Unsupported;
        }
        let mut required = Vec::new();
        if let Some(names) = object.get("required") {
            let Some(names) = names.as_array() else {
                return Check::Unsupported;
            };
            for name in names {
                let Some(name) = name.as_str() else {
                    return Check::Unsupported;
                };
                required.push(name);
            }
        }
        let mut props = KeyMap::default();
        if let Some(properties) = object.get("properties") {
            let Some(properties) = properties.as_object() else {
                return Check::Unsupported;
            };
            for (key, child) in properties {
                let (field, check) = match message_plan.keys.get(key.as_str()) {
                    Some(Target::Field(field)) => {
                        let Some(field_plan) = message_plan.fields.get(*field) else {
                            continue;
                        };
                        (*field, self.field(child, field_plan))
                    }
                    // The member given says which field it sets.
                    Some(Target::Oneof(oneof)) => (usize::MAX, self.oneof(child, message, *oneof)),
                    // A key that is not the message's: the whole way.
                    None => continue,
                };
                props.insert(key.as_str().into(), Prop { field, check });
            }
        }
        let required = required
            .into_iter()
            .map(|name| match props.get(name) {
                Some(prop) => match self.checks.get(prop.check) {
                    Some(Check::Oneof(members)) => members.values().map(|m| m.field).collect(),
                    _ => Box::from([prop.field]),
                },
                None => Box::default(),
            })
            .collect();
        Check::Message {
            message,
            props,
            required,
        }
    }

    /// The check of a well-known type's node: the string forms, wrappers and `Empty`.
    fn well_known(&mut self, node: &'a Value, message: usize, wkt: Wkt) -> Check {
        let text = |pattern: Option<KnownPattern>| {
            let known: &[&str] = if pattern.is_some() {
                &["type", "pattern"]
            } else {
                &["type"]
            };
            let Some(object) = keywords(node, known) else {
                return Check::Unsupported;
            };
            let written = object
                .get("pattern")
                .and_then(Value::as_str)
                .and_then(KnownPattern::of);
            match pattern {
                _ if !Self::of_type(object, "string") => Check::Unsupported,
                Some(pattern) if written == Some(pattern) => Check::WktText {
                    message,
                    pattern: Some(pattern),
                },
                None => Check::WktText {
                    message,
                    pattern: None,
                },
                Some(_) => Check::Unsupported,
            }
        };
        match wkt {
            Wkt::Timestamp => text(None),
            Wkt::Duration => text(Some(KnownPattern::Duration)),
            Wkt::FieldMask => text(Some(KnownPattern::FieldMask)),
            Wkt::Wrapper => match self.plan.messages.get(message).and_then(|m| m.wrapped) {
                Some(scalar) => {
                    let value = self.push(scalar_check(node, scalar));
                    Check::Wrapper { message, value }
                }
                None => Check::Unsupported,
            },
            Wkt::Empty => {
                let known = ["type", "properties", "additionalProperties"];
                match keywords(node, &known) {
                    Some(object)
                        if Self::of_type(object, "object")
                            && object.get("additionalProperties") == Some(&Value::Bool(false))
                            && object
                                .get("properties")
                                .is_none_or(|p| p.as_object().is_some_and(Map::is_empty)) =>
                    {
                        Check::Message {
                            message,
                            props: KeyMap::default(),
                            required: Box::default(),
                        }
                    }
                    _ => Check::Unsupported,
                }
            }
            Wkt::Any | Wkt::Struct | Wkt::Value | Wkt::ListValue => Check::Unsupported,
        }
    }

    /// The check of real oneof `oneof` of message plan `message` at `node`: `oneOf` (or
    /// `anyOf`) branches, each `{case: const name, value: …}` with both required and nothing
    /// else.
    fn oneof(&mut self, node: &'a Value, message: usize, oneof: usize) -> usize {
        let plan = self.plan;
        let Some(message_plan) = plan.messages.get(message) else {
            return self.push(Check::Unsupported);
        };
        let (Some(members_plan), Some(object)) = (
            message_plan.oneofs.get(oneof),
            keywords(node, &["oneOf", "anyOf"]),
        ) else {
            return self.push(Check::Unsupported);
        };
        let branches = match (object.get("oneOf"), object.get("anyOf")) {
            (Some(Value::Array(branches)), None) | (None, Some(Value::Array(branches))) => branches,
            _ => return self.push(Check::Unsupported),
        };
        let mut members = KeyMap::default();
        for branch in branches {
            let known = ["type", "properties", "required", "additionalProperties"];
            let Some(branch) = keywords(branch, &known) else {
                return self.push(Check::Unsupported);
            };
            let properties = branch.get("properties").and_then(Value::as_object);
            let required = branch.get("required").and_then(Value::as_array);
            let closed = branch.get("additionalProperties") == Some(&Value::Bool(false));
            let both_required = required.is_some_and(|names| {
                names.len() == 2
                    && names.iter().any(|n| n == "case")
                    && names.iter().any(|n| n == "value")
            });
            let (Some(properties), true, true, true) = (
                properties,
                Self::of_type(branch, "object"),
                closed,
                both_required,
            ) else {
                return self.push(Check::Unsupported);
            };
            let case = properties
                .get("case")
                .and_then(|case| keywords(case, &["type", "const"]))
                .filter(|case| case.get("type").is_none_or(|ty| ty == "string"))
                .and_then(|case| case.get("const"))
                .and_then(Value::as_str);
            let (Some(case), Some(value), 2) = (case, properties.get("value"), properties.len())
            else {
                return self.push(Check::Unsupported);
            };
            let Some(field) = members_plan.get(case).copied() else {
                return self.push(Check::Unsupported);
            };
            let Some(field_plan) = message_plan.fields.get(field) else {
                return self.push(Check::Unsupported);
            };
            let check = if field_plan.usable
                && !field_plan.null_is_value
                && matches!(field_plan.shape, Shape::Single)
            {
                self.value(value, &field_plan.kind)
            } else {
                self.push(Check::Unsupported)
            };
            members.insert(case.into(), Prop { field, check });
        }
        self.push(Check::Oneof(members))
    }

    fn field(&mut self, node: &'a Value, field: &FieldPlan) -> usize {
        if !field.usable || field.null_is_value || field.oneof.is_some() {
            return self.push(Check::Unsupported);
        }
        match &field.shape {
            Shape::Single => self.value(node, &field.kind),
            Shape::List { .. } => {
                let Some(object) = keywords(node, &["type", "items"]) else {
                    return self.push(Check::Unsupported);
                };
                let Some(items) = object
                    .get("items")
                    .filter(|_| Self::of_type(object, "array"))
                else {
                    return self.push(Check::Unsupported);
                };
                let items = self.value(items, &field.kind);
                self.push(Check::List { items })
            }
            Shape::Map { key, value, .. } => {
                let known = ["type", "additionalProperties", "propertyNames"];
                let Some(object) = keywords(node, &known) else {
                    return self.push(Check::Unsupported);
                };
                let string_keys = object.get("propertyNames").is_none_or(|names| {
                    keywords(names, &["type"]).is_some_and(|names| Self::of_type(names, "string"))
                });
                let values = object
                    .get("additionalProperties")
                    .filter(|values| values.is_object());
                match values {
                    Some(values)
                        if *key == Scalar::String
                            && string_keys
                            && Self::of_type(object, "object") =>
                    {
                        let values = self.value(values, value);
                        self.push(Check::Map { values })
                    }
                    _ => self.push(Check::Unsupported),
                }
            }
        }
    }

    /// The check of one value of `kind` (a single field, a list item or a map value).
    fn value(&mut self, node: &'a Value, kind: &ValueKind) -> usize {
        let check = match kind {
            ValueKind::Message(message) => return self.message_at(node, *message),
            ValueKind::Enum {
                desc, null_value, ..
            } => match keywords(node, &["type", "enum"]) {
                Some(object) if !null_value && Self::of_type(object, "string") => {
                    let names = object.get("enum").and_then(Value::as_array);
                    let mut set = KeyMap::default();
                    let mut known = names.is_some();
                    for name in names.into_iter().flatten() {
                        match name.as_str() {
                            // The validator's list and the descriptor's names must agree.
                            Some(name) if desc.get_value_by_name(name).is_some() => {
                                set.insert(name.into(), ());
                            }
                            _ => known = false,
                        }
                    }
                    if known {
                        Check::Enum(set)
                    } else {
                        Check::Unsupported
                    }
                }
                _ => Check::Unsupported,
            },
            ValueKind::Scalar(scalar) => scalar_check(node, *scalar),
        };
        self.push(check)
    }
}

/// The node's keywords, when each is an annotation or in `known`.
fn keywords<'v>(node: &'v Value, known: &[&str]) -> Option<&'v Map<String, Value>> {
    let object = node.as_object()?;
    object
        .keys()
        .all(|key| known.contains(&key.as_str()) || ANNOTATIONS.contains(&key.as_str()))
        .then_some(object)
}

/// The check of a scalar's node, when it is one this module reads exactly.
fn scalar_check(node: &Value, scalar: Scalar) -> Check {
    let Some(object) = node.as_object() else {
        return Check::Unsupported;
    };
    let only = |known: &[&str]| keywords(node, known).is_some();
    let ty = object.get("type").and_then(Value::as_str);
    match scalar {
        Scalar::Int32 | Scalar::Sint32 | Scalar::Sfixed32 | Scalar::Uint32 | Scalar::Fixed32 => {
            if ty != Some("integer") || !only(&["type", "minimum", "maximum"]) {
                return Check::Unsupported;
            }
            let bound = |key: &str| -> Result<Option<i128>, ()> {
                match object.get(key) {
                    None => Ok(None),
                    Some(Value::Number(n)) => n
                        .as_i64()
                        .map(i128::from)
                        .or_else(|| n.as_u64().map(i128::from))
                        .map(Some)
                        .ok_or(()),
                    Some(_) => Err(()),
                }
            };
            match (bound("minimum"), bound("maximum")) {
                (Ok(min), Ok(max)) => Check::Integer { min, max },
                _ => Check::Unsupported,
            }
        }
        Scalar::Int64 | Scalar::Sint64 | Scalar::Sfixed64 | Scalar::Uint64 | Scalar::Fixed64 => {
            if ty != Some("string") || !only(&["type", "pattern"]) {
                return Check::Unsupported;
            }
            match object
                .get("pattern")
                .map(|p| p.as_str().and_then(KnownPattern::of))
            {
                None => Check::Str { digits: None },
                Some(Some(digits @ (KnownPattern::Signed | KnownPattern::Unsigned))) => {
                    Check::Str {
                        digits: Some(digits),
                    }
                }
                Some(_) => Check::Unsupported,
            }
        }
        Scalar::Double | Scalar::Float if ty == Some("number") && only(&["type"]) => Check::Number,
        Scalar::Bool if ty == Some("boolean") && only(&["type"]) => Check::Bool,
        Scalar::String | Scalar::Bytes if ty == Some("string") && only(&["type"]) => {
            Check::Str { digits: None }
        }
        _ => Check::Unsupported,
    }
}
