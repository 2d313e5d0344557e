//! What a tool's input schema asks of each value, compiled once from the input validator's
//! compiled schema (one reading of the schema for both); and what its type alone asks
//! ([`Checks::loose`]), for values the validator has passed.
//!
//! Only the keywords this module knows are taken, each for exactly what the validator checks
//! with it. A schema node with any other keyword (`oneOf` outside a oneof, `minLength`,
//! `exclusiveMinimum`, a `pattern` other than the 64-bit digit patterns, …) compiles to
//! [`Check::Unsupported`]: a call that gives a value there takes the whole way instead. So do
//! `Any`, the JSON-valued well-known types and maps with other than string keys. A oneof is
//! taken in the `{case, value}` form its `oneOf` branches describe; Timestamp, Duration and
//! FieldMask as their strings, wrappers as their scalar, `Empty` as `{}`.

use std::collections::HashMap;

use super::scalar::{self, Json};
use crate::number::integer;
use crate::patterns::KnownPattern;
use crate::plan::{EnumPlan, FieldPlan, KeyMap, Plan, Scalar, Shape, Target, Ty};
use crate::scalar_kind::ScalarKind;
use crate::validate::{
    Validator,
    schema::{Additional, Check as Keyword, Nodes, type_bit},
};
use crate::well_known::Wkt;

/// A property of a message: the field it sets and the check of its value.
#[derive(Debug, Clone, Copy)]
pub(super) struct Prop {
    pub(super) field: usize,
    pub(super) check: usize,
}

/// The check of one value. Indexes are into [`Checks::checks`].
#[derive(Debug)]
pub(super) enum Check {
    /// Left to the whole way.
    Unsupported,
    /// A scalar or enum in any form prost-reflect reads (the type's checks only).
    Loose,
    /// `Struct`, `Value` or `ListValue`: any JSON of its shape (the type's checks only).
    Json(Wkt),
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
    /// An object whose keys are the map's (strings, or integers or booleans in canonical text
    /// for the type's checks), each value checked by `values`.
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
    /// A well-known type written as a string (Timestamp, Duration, FieldMask); the string
    /// must match `pattern` when there is one.
    WktText {
        wkt: Wkt,
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
    /// Whether the check takes the scalar `value`: [`Check::Loose`] takes what the reader of
    /// its kind does (`scalar.rs`); an `integer` a JSON integer within its bounds; a `number`
    /// any JSON number; a string check a string (of the digit pattern when it has one).
    pub(super) fn takes(&self, value: Json<'_>) -> bool {
        let within = |exact: i128, min: &Option<i128>, max: &Option<i128>| {
            min.is_none_or(|min| exact >= min) && max.is_none_or(|max| exact <= max)
        };
        match (self, value) {
            (Check::Loose, _)
            | (Check::Bool, Json::Bool(_))
            | (Check::Number, Json::U64(_) | Json::I64(_) | Json::F64(_)) => true,
            (Check::Integer { min, max }, Json::U64(u)) => within(i128::from(u), min, max),
            (Check::Integer { min, max }, Json::I64(i)) => within(i128::from(i), min, max),
            (Check::Str { digits }, Json::Str(text)) => {
                digits.is_none_or(|digits| digits.matches(text))
            }
            _ => false,
        }
    }

    /// The number of the enum value `value` stands for, when the check takes it: a name of the
    /// schema's list, or (loose) whatever prost-reflect reads as one.
    pub(super) fn enum_number(&self, plan: &EnumPlan, value: Json<'_>) -> Option<i32> {
        let EnumPlan {
            desc, null_value, ..
        } = plan;
        match (self, value) {
            (Check::Enum(names), Json::Str(text)) if names.contains_key(text) => {
                desc.get_value_by_name(text).map(|value| value.number())
            }
            (Check::Loose, value) => scalar::enum_number(desc, *null_value, value),
            _ => None,
        }
    }
}

/// The checks of one tool's input: its schema's, or its type's ([`Checks::loose`]); index 0
/// is the root's.
#[derive(Debug)]
pub(crate) struct Checks {
    pub(super) checks: Vec<Check>,
    /// `null` is an absent field (the type's checks), not a value to refuse.
    pub(super) null_is_absent: bool,
}

impl Checks {
    /// Compiles the checks of `validator` (the tool's input schema, compiled) against `plan`
    /// (its input type's).
    pub(crate) fn new(plan: &Plan, validator: &Validator) -> Self {
        let mut compiler = Compiler {
            plan,
            nodes: validator.nodes(),
            refs: HashMap::new(),
            checks: Vec::new(),
        };
        let root = compiler.push(Check::Unsupported);
        let check = if plan.root_wrapped {
            None
        } else {
            compiler.message(0, 0)
        };
        compiler.set(root, check.unwrap_or(Check::Unsupported));
        Self {
            checks: compiler.checks,
            null_is_absent: false,
        }
    }

    /// The checks of `plan`'s type alone, for canonical arguments the validator has passed:
    /// every value in each form prost-reflect reads from a `Value`, every property key the
    /// plan resolves.
    pub(crate) fn loose(plan: &Plan) -> Self {
        let mut loose = Loose {
            plan,
            messages: vec![None; plan.messages.len()],
            // The root's check, then the scalars' and enums', shared.
            checks: vec![Check::Unsupported, Check::Loose],
        };
        if let Some(root) = loose.messages.first_mut() {
            *root = Some(0);
        }
        loose.compile(0, 0);
        Self {
            checks: loose.checks,
            null_is_absent: true,
        }
    }
}

/// Where [`Checks::loose`] keeps [`Check::Loose`] (the root's check is first).
const LOOSE: usize = 1;

/// The compiler of the type's checks.
struct Loose<'a> {
    plan: &'a Plan,
    /// Message plan → its check.
    messages: Vec<Option<usize>>,
    checks: Vec<Check>,
}

impl Loose<'_> {
    fn push(&mut self, check: Check) -> usize {
        self.checks.push(check);
        self.checks.len() - 1
    }

    /// The check of message plan `message`, compiled once (recursive types refer to it).
    fn message(&mut self, message: usize) -> usize {
        if let Some(Some(index)) = self.messages.get(message) {
            return *index;
        }
        let index = self.push(Check::Unsupported);
        if let Some(slot) = self.messages.get_mut(message) {
            *slot = Some(index);
        }
        self.compile(message, index);
        index
    }

    /// Compiles the check of message plan `message` into `index`.
    fn compile(&mut self, message: usize, index: usize) {
        let plan = self.plan;
        let Some(message_plan) = plan.messages.get(message) else {
            return;
        };
        let check = match message_plan.wkt {
            Some(wkt @ (Wkt::Timestamp | Wkt::Duration | Wkt::FieldMask)) => {
                Check::WktText { wkt, pattern: None }
            }
            Some(Wkt::Wrapper) => Check::Wrapper {
                message,
                value: LOOSE,
            },
            Some(wkt @ (Wkt::Struct | Wkt::Value | Wkt::ListValue)) => Check::Json(wkt),
            Some(Wkt::Any) => Check::Unsupported,
            Some(Wkt::Empty) | None => {
                let mut props = KeyMap::default();
                for (key, target) in &message_plan.keys {
                    let prop = match *target {
                        Target::Field(field) => Prop {
                            field,
                            check: self.field(message_plan.fields.get(field)),
                        },
                        Target::Oneof(oneof) => {
                            let mut members = KeyMap::default();
                            for (key, &field) in
                                message_plan.oneofs.get(oneof).into_iter().flatten()
                            {
                                let check = self.field(message_plan.fields.get(field));
                                members.insert(key.clone(), Prop { field, check });
                            }
                            Prop {
                                field: usize::MAX,
                                check: self.push(Check::Oneof(members)),
                            }
                        }
                    };
                    props.insert(key.clone(), prop);
                }
                Check::Message {
                    message,
                    props,
                    required: Box::default(),
                }
            }
        };
        if let Some(slot) = self.checks.get_mut(index) {
            *slot = check;
        }
    }

    /// The check of a field's value: a single value, a list or a map.
    fn field(&mut self, field: Option<&FieldPlan>) -> usize {
        let Some(field) = field.filter(|field| field.usable) else {
            return self.push(Check::Unsupported);
        };
        let value = |this: &mut Self, ty: Ty| match ty {
            Ty::Message(message) => this.message(message),
            Ty::Scalar(_) => LOOSE,
        };
        match field.shape {
            Shape::Single => value(self, field.ty),
            Shape::List { .. } => {
                let items = value(self, field.ty);
                self.push(Check::List { items })
            }
            Shape::Map {
                value: map_value, ..
            } => {
                let values = value(self, map_value);
                self.push(Check::Map { values })
            }
        }
    }
}

struct Compiler<'a> {
    plan: &'a Plan,
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

    /// [`Compiler::keywords`], when `type` names exactly `name` too.
    fn typed(&self, node: usize, name: &str, known: fn(&Keyword) -> bool) -> Option<&'a [Keyword]> {
        self.keywords(node, known)
            .filter(|keywords| of_type(keywords, name))
    }

    /// `None` unless `node` is a string of no keyword but `type` and `pattern`; else its
    /// pattern: `None` without one, `Some(None)` for one the generator does not write,
    /// `Some(Some(known))` for one it does.
    fn string_pattern(&self, node: usize) -> Option<Option<Option<KnownPattern>>> {
        let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Pattern(_));
        let keywords = self.typed(node, "string", known)?;
        Some(keywords.iter().find_map(|k| match k {
            Keyword::Pattern(pattern) => Some(pattern.known()),
            _ => None,
        }))
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
            let index = self.push(Check::Unsupported);
            self.refs.insert(target, index);
            let check = self.message(target, message);
            self.set(index, check.unwrap_or(Check::Unsupported));
            return index;
        }
        let check = self.message(node, message);
        self.push(check.unwrap_or(Check::Unsupported))
    }

    /// The check of a message's node; `None` where it is left to the whole way (as are all
    /// the checks' below).
    fn message(&mut self, node: usize, message: usize) -> Option<Check> {
        let plan = self.plan;
        let message_plan = plan.messages.get(message)?;
        if let Some(wkt) = message_plan.wkt {
            return self.well_known(node, message, wkt);
        }
        let known = |k: &Keyword| {
            matches!(
                k,
                Keyword::Type(_) | Keyword::Members { .. } | Keyword::Required(_)
            )
        };
        let mut required: &[String] = &[];
        let mut properties: &[(String, usize)] = &[];
        for keyword in self.typed(node, "object", known)? {
            match keyword {
                Keyword::Required(names) => required = names,
                Keyword::Members {
                    additional: Additional::Schema(_),
                    ..
                } => return None,
                Keyword::Members { properties: p, .. } => properties = &p.names,
                _ => {}
            }
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
        Some(Check::Message {
            message,
            props,
            required,
        })
    }

    /// The check of a well-known type's node: the string forms, wrappers and `Empty`.
    fn well_known(&mut self, node: usize, message: usize, wkt: Wkt) -> Option<Check> {
        // A string, of exactly `pattern` (none: no `pattern` keyword).
        let text = |pattern: Option<KnownPattern>| {
            let written = self.string_pattern(node)?;
            (written == pattern.map(Some)).then_some(Check::WktText { wkt, pattern })
        };
        match wkt {
            Wkt::Timestamp => text(None),
            Wkt::Duration => text(Some(KnownPattern::Duration)),
            Wkt::FieldMask => text(Some(KnownPattern::FieldMask)),
            Wkt::Wrapper => {
                let scalar = self.plan.messages.get(message)?.wrapped?;
                let value = self.scalar_check(node, scalar);
                let value = self.push(value.unwrap_or(Check::Unsupported));
                Some(Check::Wrapper { message, value })
            }
            Wkt::Empty => {
                let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Members { .. });
                let closed_and_empty = |k: &Keyword| {
                    matches!(k, Keyword::Members { properties, additional: Additional::Forbidden }
                        if properties.names.is_empty())
                };
                let keywords = self.typed(node, "object", known)?;
                keywords
                    .iter()
                    .any(closed_and_empty)
                    .then(|| Check::Message {
                        message,
                        props: KeyMap::default(),
                        required: Box::default(),
                    })
            }
            Wkt::Any | Wkt::Struct | Wkt::Value | Wkt::ListValue => None,
        }
    }

    /// The check of real oneof `oneof` of message plan `message` at `node`.
    fn oneof(&mut self, node: usize, message: usize, oneof: usize) -> usize {
        let members = self.oneof_members(node, message, oneof);
        self.push(members.map_or(Check::Unsupported, Check::Oneof))
    }

    /// The members of real oneof `oneof` of message plan `message` at `node`: `oneOf` (or
    /// `anyOf`) branches, each `{case: const name, value: …}` with both required and nothing
    /// else.
    fn oneof_members(&mut self, node: usize, message: usize, oneof: usize) -> Option<KeyMap<Prop>> {
        let plan = self.plan;
        let message_plan = plan.messages.get(message)?;
        let members_plan = message_plan.oneofs.get(oneof)?;
        let union = |k: &Keyword| matches!(k, Keyword::OneOf(_) | Keyword::AnyOf(_));
        let [Keyword::OneOf(branches) | Keyword::AnyOf(branches)] = self.keywords(node, union)?
        else {
            return None;
        };
        let mut members = KeyMap::default();
        for &branch in branches.iter() {
            let known = |k: &Keyword| {
                matches!(
                    k,
                    Keyword::Type(_) | Keyword::Members { .. } | Keyword::Required(_)
                )
            };
            let mut properties = None;
            let mut both_required = false;
            for keyword in self.typed(branch, "object", known)? {
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
            let properties = properties.filter(|_| both_required)?;
            let case = properties
                .get("case", &mut 0)
                .and_then(|case| {
                    self.keywords(case, |k| matches!(k, Keyword::Type(_) | Keyword::Const(_)))
                })
                .filter(|case| {
                    case.iter()
                        .all(|k| !matches!(k, Keyword::Type(_)) || of_type(case, "string"))
                })
                // The constant itself, found once when the validator compiled the schema.
                .and_then(|_| self.nodes.0.get(branch)?.case.as_deref());
            let (Some(case), Some(value), 2) = (
                case,
                properties.get("value", &mut 0),
                properties.names.len(),
            ) else {
                return None;
            };
            let field = members_plan.get(case).copied()?;
            let field_plan = message_plan.fields.get(field)?;
            let check = if field_plan.usable
                && !field_plan.null_is_value
                && matches!(field_plan.shape, Shape::Single)
            {
                self.value(value, field_plan.ty)
            } else {
                self.push(Check::Unsupported)
            };
            members.insert(case.into(), Prop { field, check });
        }
        Some(members)
    }

    fn field(&mut self, node: usize, field: &FieldPlan) -> usize {
        let check = match field.shape {
            _ if !field.usable || field.null_is_value || field.oneof.is_some() => None,
            Shape::Single => return self.value(node, field.ty),
            Shape::List { .. } => {
                let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Items(_));
                let items = self.typed(node, "array", known).and_then(|keywords| {
                    keywords.iter().find_map(|k| match k {
                        Keyword::Items(items) => Some(*items),
                        _ => None,
                    })
                });
                items.map(|items| Check::List {
                    items: self.value(items, field.ty),
                })
            }
            Shape::Map { key, value, .. } => {
                let known = |k: &Keyword| {
                    matches!(
                        k,
                        Keyword::Type(_) | Keyword::Members { .. } | Keyword::PropertyNames(_)
                    )
                };
                let keywords = self.typed(node, "object", known);
                let mut values = None;
                let mut string_keys = key == ScalarKind::String;
                for keyword in keywords.into_iter().flatten() {
                    match keyword {
                        Keyword::Members {
                            properties,
                            additional: Additional::Schema(node),
                        } if properties.names.is_empty() => values = Some(*node),
                        Keyword::PropertyNames(names) => {
                            string_keys &= self
                                .typed(*names, "string", |k| matches!(k, Keyword::Type(_)))
                                .is_some();
                        }
                        _ => {}
                    }
                }
                values.filter(|_| string_keys).map(|values| Check::Map {
                    values: self.value(values, value),
                })
            }
        };
        self.push(check.unwrap_or(Check::Unsupported))
    }

    /// The check of one value of `kind` (a single field, a list item or a map value).
    fn value(&mut self, node: usize, ty: Ty) -> usize {
        let check = match ty {
            Ty::Message(message) => return self.message_at(node, message),
            Ty::Scalar(Scalar::Enum(index)) => self.enum_check(node, index),
            Ty::Scalar(Scalar::Kind(scalar)) => self.scalar_check(node, scalar),
        };
        self.push(check.unwrap_or(Check::Unsupported))
    }

    /// The check of enum plan `index`'s node: a string among names the descriptor has.
    fn enum_check(&self, node: usize, index: usize) -> Option<Check> {
        let desc = &self.plan.enumeration(index).filter(|e| !e.null_value)?.desc;
        let known = |k: &Keyword| matches!(k, Keyword::Type(_) | Keyword::Enum(_));
        let names = self
            .typed(node, "string", known)?
            .iter()
            .find_map(|k| match k {
                Keyword::Enum(names) => Some(names),
                _ => None,
            })?;
        let mut set = KeyMap::default();
        for name in names.iter() {
            // The validator's list and the descriptor's names must agree.
            let name = name
                .as_str()
                .filter(|name| desc.get_value_by_name(name).is_some())?;
            set.insert(name.into(), ());
        }
        Some(Check::Enum(set))
    }

    /// The check of a scalar's node, when it is one this module reads exactly.
    fn scalar_check(&self, node: usize, scalar: ScalarKind) -> Option<Check> {
        let only_type = |name: &str| {
            self.typed(node, name, |k| matches!(k, Keyword::Type(_)))
                .is_some()
        };
        Some(match scalar {
            ScalarKind::Int32
            | ScalarKind::Sint32
            | ScalarKind::Sfixed32
            | ScalarKind::Uint32
            | ScalarKind::Fixed32 => {
                let known = |k: &Keyword| {
                    matches!(
                        k,
                        Keyword::Type(_) | Keyword::Minimum(_) | Keyword::Maximum(_)
                    )
                };
                let (mut min, mut max) = (None, None);
                for keyword in self.typed(node, "integer", known)? {
                    let (slot, bound) = match keyword {
                        Keyword::Minimum(bound) => (&mut min, bound),
                        Keyword::Maximum(bound) => (&mut max, bound),
                        _ => continue,
                    };
                    *slot = Some(integer(bound)?);
                }
                Check::Integer { min, max }
            }
            ScalarKind::Int64
            | ScalarKind::Sint64
            | ScalarKind::Sfixed64
            | ScalarKind::Uint64
            | ScalarKind::Fixed64 => {
                let digits = match self.string_pattern(node)? {
                    None => None,
                    Some(Some(digits @ (KnownPattern::Signed | KnownPattern::Unsigned))) => {
                        Some(digits)
                    }
                    Some(_) => return None,
                };
                Check::Str { digits }
            }
            ScalarKind::Double | ScalarKind::Float if only_type("number") => Check::Number,
            ScalarKind::Bool if only_type("boolean") => Check::Bool,
            ScalarKind::String | ScalarKind::Bytes if only_type("string") => {
                Check::Str { digits: None }
            }
            _ => return None,
        })
    }
}
