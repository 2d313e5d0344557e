//! What a tool's input schema asks of each value, compiled once, for the text encoder, from
//! the input validator's compiled schema (one reading of the schema for both).
//!
//! Only the keywords this module knows are taken, each for exactly what the validator checks
//! with it. A schema node with any other keyword (`oneOf` outside a oneof, `minLength`,
//! `exclusiveMinimum`, a `pattern` other than the 64-bit digit patterns, …) compiles to
//! [`Check::Unsupported`]: a call that gives a value there takes the whole way instead. So do
//! `Any`, the JSON-valued well-known types and maps with other than string keys. A oneof is
//! taken in the `{case, value}` form its `oneOf` branches describe; Timestamp, Duration and
//! FieldMask as their strings, wrappers as their scalar, `Empty` as `{}`.

use std::collections::HashMap;

use serde_json::{Number, Value};

use super::super::Wkt;
use super::super::fast_from_json::plan::{
    EncodePlan, FieldPlan, KeyMap, Scalar, Shape, Target, ValueKind,
};
use crate::patterns::KnownPattern;
use crate::validate::{
    Validator,
    schema::{Additional, Check as Keyword, Nodes, type_bit},
};

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
    /// Compiles the checks of `validator` (the tool's input schema, compiled) against `plan`
    /// (its input type's).
    pub(crate) fn new(plan: &EncodePlan, validator: &Validator) -> Self {
        let mut compiler = Compiler {
            plan,
            nodes: validator.nodes(),
            refs: HashMap::new(),
            checks: Vec::new(),
        };
        let root = compiler.reserve();
        let check = if plan.root_wrapped {
            Check::Unsupported
        } else {
            compiler.message(0, 0)
        };
        compiler.set(root, check);
        Self {
            checks: compiler.checks,
        }
    }
}

struct Compiler<'a> {
    plan: &'a EncodePlan,
    /// The validator's schema nodes, the root first.
    nodes: &'a Nodes,
    /// The node a `$ref` names → its check (reserved before it is compiled, for recursive
    /// types).
    refs: HashMap<usize, usize>,
    checks: Vec<Check>,
}

/// Whether `keywords` has `type` naming exactly `name`.
fn of_type(keywords: &[Keyword], name: &str) -> bool {
    keywords
        .iter()
        .any(|k| matches!(k, Keyword::Type(bits) if *bits == type_bit(name)))
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

    /// The keywords of schema node `node`, when each is one `known` takes.
    fn keywords(&self, node: usize, known: fn(&Keyword) -> bool) -> Option<&'a [Keyword]> {
        let keywords = self.nodes.keywords(node);
        keywords.iter().all(known).then_some(keywords)
    }

    /// The check of a value of message plan `message` at `node`, following a `$ref` (to a
    /// `$defs` entry: a reference to the root takes the whole way).
    fn message_at(&mut self, node: usize, message: usize) -> usize {
        if let Some(keywords) = self.keywords(node, |k| matches!(k, Keyword::Ref(_))) {
            let target = match keywords {
                [Keyword::Ref(target)] if *target != 0 => *target,
                _ => return self.push(Check::Unsupported),
            };
            if let Some(&index) = self.refs.get(&target) {
                return index;
            }
            let index = self.reserve();
            self.refs.insert(target, index);
            let check = self.message(target, message);
            self.set(index, check);
            return index;
        }
        let check = self.message(node, message);
        self.push(check)
    }

    fn message(&mut self, node: usize, message: usize) -> Check {
        let plan = self.plan;
        let Some(message_plan) = plan.messages.get(message) else {
            return Check::Unsupported;
        };
        if let Some(wkt) = message_plan.wkt {
            return self.well_known(node, message, wkt);
        }
        let known = |k: &Keyword| {
            matches!(
                k,
                Keyword::Type(_) | Keyword::Members { .. } | Keyword::Required(_)
            )
        };
        let Some(keywords) = self.keywords(node, known) else {
            return Check::Unsupported;
        };
        let mut required: &[String] = &[];
        let mut properties: &[(String, usize)] = &[];
        for keyword in keywords {
            match keyword {
                Keyword::Required(names) => required = names,
                Keyword::Members {
                    additional: Additional::Schema(_),
                    ..
                } => return Check::Unsupported,
                Keyword::Members { properties: p, .. } => properties = &p.names,
                _ => {}
            }
        }
        if !of_type(keywords, "object") {
            return Check::Unsupported;
        }
        let mut props = KeyMap::default();
        for (key, child) in properties {
            let (field, check) = match message_plan.keys.get(key.as_str()) {
                Some(Target::Field(field)) => {
                    let Some(field_plan) = message_plan.fields.get(*field) else {
                        continue;
                    };
                    (*field, self.field(*child, field_plan))
                }
                // The member given says which field it sets.
                Some(Target::Oneof(oneof)) => (usize::MAX, self.oneof(*child, message, *oneof)),
                // A key that is not the message's: the whole way.
                None => continue,
            };
            props.insert(key.as_str().into(), Prop { field, check });
        }
        let required = required
            .iter()
            .map(|name| match props.get(name.as_str()) {
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
    fn well_known(&mut self, node: usize, message: usize, wkt: Wkt) -> Check {
        let text = |pattern: Option<KnownPattern>| {
            let keywords = if pattern.is_some() {
                self.keywords(node, |k| {
                    matches!(k, Keyword::Type(_) | Keyword::Pattern(_))
                })
            } else {
                self.keywords(node, |k| matches!(k, Keyword::Type(_)))
            };
            let Some(keywords) = keywords else {
                return Check::Unsupported;
            };
            let written = keywords.iter().find_map(|k| match k {
                Keyword::Pattern(written) => Some(written.known()),
                _ => None,
            });
            match pattern {
                _ if !of_type(keywords, "string") => Check::Unsupported,
                Some(pattern) if written == Some(Some(pattern)) => Check::WktText {
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
                    let value = self.push(self.scalar_check(node, scalar));
                    Check::Wrapper { message, value }
                }
                None => Check::Unsupported,
            },
            Wkt::Empty => {
                let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Members { .. });
                let closed_and_empty = |k: &Keyword| {
                    matches!(k, Keyword::Members { properties, additional: Additional::Forbidden }
                        if properties.names.is_empty())
                };
                match self.keywords(node, known) {
                    Some(keywords)
                        if of_type(keywords, "object") && keywords.iter().any(closed_and_empty) =>
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
    fn oneof(&mut self, node: usize, message: usize, oneof: usize) -> usize {
        let plan = self.plan;
        let Some(message_plan) = plan.messages.get(message) else {
            return self.push(Check::Unsupported);
        };
        let union = |k: &Keyword| matches!(k, Keyword::OneOf(_) | Keyword::AnyOf(_));
        let (Some(members_plan), Some(keywords)) =
            (message_plan.oneofs.get(oneof), self.keywords(node, union))
        else {
            return self.push(Check::Unsupported);
        };
        let branches = match keywords {
            [Keyword::OneOf(branches) | Keyword::AnyOf(branches)] => branches,
            _ => return self.push(Check::Unsupported),
        };
        let mut members = KeyMap::default();
        for &branch in branches.iter() {
            let known = |k: &Keyword| {
                matches!(
                    k,
                    Keyword::Type(_) | Keyword::Members { .. } | Keyword::Required(_)
                )
            };
            let Some(branch) = self.keywords(branch, known) else {
                return self.push(Check::Unsupported);
            };
            let mut properties = None;
            let mut both_required = false;
            for keyword in branch {
                match keyword {
                    Keyword::Members {
                        properties: p,
                        additional: Additional::Forbidden,
                    } => properties = Some(p),
                    Keyword::Required(names) => {
                        both_required = names.len() == 2
                            && names.iter().any(|n| n == "case")
                            && names.iter().any(|n| n == "value");
                    }
                    _ => {}
                }
            }
            let (Some(properties), true, true) =
                (properties, of_type(branch, "object"), both_required)
            else {
                return self.push(Check::Unsupported);
            };
            let case = properties
                .get("case", &mut 0)
                .and_then(|case| {
                    self.keywords(case, |k| matches!(k, Keyword::Type(_) | Keyword::Const(_)))
                })
                .filter(|case| {
                    case.iter()
                        .all(|k| !matches!(k, Keyword::Type(_)) || of_type(case, "string"))
                })
                .and_then(|case| {
                    case.iter().find_map(|k| match k {
                        Keyword::Const(Value::String(name)) => Some(name.as_str()),
                        _ => None,
                    })
                });
            let (Some(case), Some(value), 2) = (
                case,
                properties.get("value", &mut 0),
                properties.names.len(),
            ) else {
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

    fn field(&mut self, node: usize, field: &FieldPlan) -> usize {
        if !field.usable || field.null_is_value || field.oneof.is_some() {
            return self.push(Check::Unsupported);
        }
        match &field.shape {
            Shape::Single => self.value(node, &field.kind),
            Shape::List { .. } => {
                let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Items(_));
                let Some(keywords) = self.keywords(node, known) else {
                    return self.push(Check::Unsupported);
                };
                let items = keywords.iter().find_map(|k| match k {
                    Keyword::Items(items) => Some(*items),
                    _ => None,
                });
                match items {
                    Some(items) if of_type(keywords, "array") => {
                        let items = self.value(items, &field.kind);
                        self.push(Check::List { items })
                    }
                    _ => self.push(Check::Unsupported),
                }
            }
            Shape::Map { key, value, .. } => {
                let known = |k: &Keyword| {
                    matches!(
                        k,
                        Keyword::Type(_) | Keyword::Members { .. } | Keyword::PropertyNames(_)
                    )
                };
                let Some(keywords) = self.keywords(node, known) else {
                    return self.push(Check::Unsupported);
                };
                let mut values = None;
                let mut string_keys = true;
                for keyword in keywords {
                    match keyword {
                        Keyword::Members {
                            properties,
                            additional: Additional::Schema(node),
                        } if properties.names.is_empty() => values = Some(*node),
                        Keyword::PropertyNames(names) => {
                            string_keys = self
                                .keywords(*names, |k| matches!(k, Keyword::Type(_)))
                                .is_some_and(|names| of_type(names, "string"));
                        }
                        _ => {}
                    }
                }
                match values {
                    Some(values)
                        if *key == Scalar::String && string_keys && of_type(keywords, "object") =>
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
    fn value(&mut self, node: usize, kind: &ValueKind) -> usize {
        let check = match kind {
            ValueKind::Message(message) => return self.message_at(node, *message),
            ValueKind::Enum {
                desc, null_value, ..
            } => match self.keywords(node, |k| matches!(k, Keyword::Type(_) | Keyword::Enum(_))) {
                Some(keywords) if !null_value && of_type(keywords, "string") => {
                    let names = keywords.iter().find_map(|k| match k {
                        Keyword::Enum(names) => Some(names),
                        _ => None,
                    });
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
            ValueKind::Scalar(scalar) => self.scalar_check(node, *scalar),
        };
        self.push(check)
    }

    /// The check of a scalar's node, when it is one this module reads exactly.
    fn scalar_check(&self, node: usize, scalar: Scalar) -> Check {
        let only_type = |name: &str| {
            self.keywords(node, |k| matches!(k, Keyword::Type(_)))
                .is_some_and(|keywords| of_type(keywords, name))
        };
        match scalar {
            Scalar::Int32
            | Scalar::Sint32
            | Scalar::Sfixed32
            | Scalar::Uint32
            | Scalar::Fixed32 => {
                let known = |k: &Keyword| {
                    matches!(
                        k,
                        Keyword::Type(_) | Keyword::Minimum(_) | Keyword::Maximum(_)
                    )
                };
                let Some(keywords) = self.keywords(node, known) else {
                    return Check::Unsupported;
                };
                if !of_type(keywords, "integer") {
                    return Check::Unsupported;
                }
                let exact = |n: &Number| {
                    n.as_i64()
                        .map(i128::from)
                        .or_else(|| n.as_u64().map(i128::from))
                };
                let (mut min, mut max) = (None, None);
                for keyword in keywords {
                    let (slot, bound) = match keyword {
                        Keyword::Minimum(bound) => (&mut min, bound),
                        Keyword::Maximum(bound) => (&mut max, bound),
                        _ => continue,
                    };
                    match exact(bound) {
                        Some(bound) => *slot = Some(bound),
                        None => return Check::Unsupported,
                    }
                }
                Check::Integer { min, max }
            }
            Scalar::Int64
            | Scalar::Sint64
            | Scalar::Sfixed64
            | Scalar::Uint64
            | Scalar::Fixed64 => {
                let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Pattern(_));
                let Some(keywords) = self.keywords(node, known) else {
                    return Check::Unsupported;
                };
                if !of_type(keywords, "string") {
                    return Check::Unsupported;
                }
                let pattern = keywords.iter().find_map(|k| match k {
                    Keyword::Pattern(pattern) => Some(pattern.known()),
                    _ => None,
                });
                match pattern {
                    None => Check::Str { digits: None },
                    Some(Some(digits @ (KnownPattern::Signed | KnownPattern::Unsigned))) => {
                        Check::Str {
                            digits: Some(digits),
                        }
                    }
                    Some(_) => Check::Unsupported,
                }
            }
            Scalar::Double | Scalar::Float if only_type("number") => Check::Number,
            Scalar::Bool if only_type("boolean") => Check::Bool,
            Scalar::String | Scalar::Bytes if only_type("string") => Check::Str { digits: None },
            _ => Check::Unsupported,
        }
    }
}
