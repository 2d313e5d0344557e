//! The encode plan: every message type reachable from a tool's input type, indexed once, with
//! the property keys of each resolved exactly as the old path resolves them.

use std::collections::HashMap;

use prost_reflect::{EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor};

use super::super::{Wkt, field_prop, find_field, find_member, find_oneof, lower_camel, oneof_prop};

/// The property-key tables: short keys, looked up once per property of every call, hashed
/// with foldhash rather than SipHash. The keys are the schema's own, so no flooding to defend
/// against.
pub(crate) type KeyMap<V> = HashMap<Box<str>, V, foldhash::fast::FixedState>;

/// A scalar protobuf type: how its JSON is read and how it is written.
pub(crate) use super::super::scalar_kind::ScalarKind as Scalar;

/// What one value of a field is.
#[derive(Debug, Clone)]
pub(crate) enum ValueKind {
    Scalar(Scalar),
    Enum {
        desc: EnumDescriptor,
        /// `google.protobuf.NullValue`: read from `null` or `"NULL_VALUE"` only.
        null_value: bool,
        /// The number an implicit-presence field omits.
        default: i32,
    },
    /// Index into [`EncodePlan::messages`].
    Message(usize),
}

/// How many values a field holds.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    Single,
    List {
        packed: bool,
    },
    Map {
        key: Scalar,
        key_presence: bool,
        value: ValueKind,
        value_presence: bool,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct FieldPlan {
    pub(crate) number: u32,
    /// The kind of a single or list field (for a map, the value kind is in `shape`).
    pub(crate) kind: ValueKind,
    pub(crate) shape: Shape,
    /// Explicit presence: written even when it holds the default.
    pub(crate) presence: bool,
    /// Index of its real oneof in [`MessagePlan::oneofs`].
    pub(crate) oneof: Option<usize>,
    /// JSON `null` is a value (a `google.protobuf.Value` or `NullValue`), not "absent".
    pub(crate) null_is_value: bool,
    /// False for groups and for fields whose proto name the deserializer would resolve to
    /// another field (a `json_name` equal to a sibling's proto name): left to the old path.
    pub(crate) usable: bool,
}

/// A property key of a message: a field, or a real oneof in the `{case, value}` form.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Field(usize),
    Oneof(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct MessagePlan {
    pub(crate) wkt: Option<Wkt>,
    /// The `value` field of a wrapper.
    pub(crate) wrapped: Option<Scalar>,
    /// Sorted by field number (the order prost-reflect writes them in).
    pub(crate) fields: Vec<FieldPlan>,
    pub(crate) keys: KeyMap<Target>,
    /// Per real oneof: member key → index into `fields`.
    pub(crate) oneofs: Vec<KeyMap<usize>>,
}

/// Built once per tool input type (keep it in a `OnceLock`): the plans of every message type
/// reachable from the input type, indexed, so that encoding does no lookup by descriptor
/// name and takes no lock. Property keys (proto name, JSON name, the alias `field_prop`
/// gives, oneof keys and member keys as `find_field`/`find_oneof`/`find_member` accept them)
/// are resolved beforehand into a table per message.
#[derive(Debug, Clone)]
pub(crate) struct EncodePlan {
    /// Index 0 is the input type.
    pub(crate) messages: Vec<MessagePlan>,
    pub(crate) root_wrapped: bool,
}

impl EncodePlan {
    pub(crate) fn new(desc: &MessageDescriptor) -> Self {
        let mut builder = Builder::default();
        builder.index(desc);
        let mut next = 0;
        while let Some(message) = builder.pending.get(next).cloned() {
            let plan = builder.message(&message);
            builder.messages.push(plan);
            next += 1;
        }
        Self {
            messages: builder.messages,
            root_wrapped: super::super::is_value_wrapped_root(desc),
        }
    }
}

#[derive(Default)]
struct Builder {
    by_name: HashMap<String, usize>,
    pending: Vec<MessageDescriptor>,
    messages: Vec<MessagePlan>,
}

impl Builder {
    /// The index of `desc`'s plan, queueing it the first time.
    fn index(&mut self, desc: &MessageDescriptor) -> usize {
        if let Some(&index) = self.by_name.get(desc.full_name()) {
            return index;
        }
        let index = self.pending.len();
        self.by_name.insert(desc.full_name().to_owned(), index);
        self.pending.push(desc.clone());
        index
    }

    fn value_kind(&mut self, field: &FieldDescriptor, kind: &Kind) -> ValueKind {
        match kind {
            Kind::Message(message) => ValueKind::Message(self.index(message)),
            Kind::Enum(desc) => {
                let default = match prost_reflect::Value::default_value_for_field(field) {
                    prost_reflect::Value::EnumNumber(number) => number,
                    _ => 0,
                };
                ValueKind::Enum {
                    null_value: desc.full_name() == "google.protobuf.NullValue",
                    desc: desc.clone(),
                    default,
                }
            }
            scalar => ValueKind::Scalar(Scalar::of(scalar).unwrap_or(Scalar::Bytes)),
        }
    }

    fn message(&mut self, desc: &MessageDescriptor) -> MessagePlan {
        let wkt = Wkt::of(desc);
        let mut plan = MessagePlan {
            wkt,
            wrapped: None,
            fields: Vec::new(),
            keys: KeyMap::default(),
            oneofs: Vec::new(),
        };
        if let Some(wkt) = wkt {
            if wkt == Wkt::Wrapper {
                plan.wrapped = desc
                    .get_field_by_name("value")
                    .and_then(|field| Scalar::of(&field.kind()));
            }
            return plan;
        }
        let mut fields: Vec<FieldDescriptor> = desc.fields().collect();
        fields.sort_by_key(FieldDescriptor::number);
        let oneofs: Vec<_> = desc.oneofs().filter(|o| !o.is_synthetic()).collect();
        let position = |number: u32| fields.iter().position(|f| f.number() == number);
        for field in &fields {
            let kind = field.kind();
            let shape = if field.is_map() {
                match &kind {
                    Kind::Message(entry) => {
                        let key = entry.map_entry_key_field();
                        let value = entry.map_entry_value_field();
                        Shape::Map {
                            key: Scalar::of(&key.kind()).unwrap_or(Scalar::Bytes),
                            key_presence: key.supports_presence(),
                            value: self.value_kind(&value, &value.kind()),
                            value_presence: value.supports_presence(),
                        }
                    }
                    _ => Shape::Single,
                }
            } else if field.is_list() {
                Shape::List {
                    packed: field.is_packed(),
                }
            } else {
                Shape::Single
            };
            let value_kind = match &shape {
                Shape::Map { value, .. } => value.clone(),
                _ => self.value_kind(field, &kind),
            };
            // A null map is absent; a null list of `Value`s is refused (or worse) by the old path.
            let null_is_value =
                !matches!(shape, Shape::Map { .. }) && super::super::null_is_a_value(&kind);
            let resolved = desc
                .get_field_by_json_name(field.name())
                .or_else(|| desc.get_field_by_name(field.name()));
            let usable = !field.is_group()
                && resolved.is_some_and(|r| r.number() == field.number())
                && !(field.is_map() && matches!(shape, Shape::Single));
            plan.fields.push(FieldPlan {
                number: field.number(),
                kind: value_kind,
                shape,
                presence: field.supports_presence(),
                oneof: super::super::real_oneof(field)
                    .and_then(|o| oneofs.iter().position(|x| x.name() == o.name())),
                null_is_value,
                usable,
            });
        }
        // Property keys, each resolved as the old path resolves it: a field first, then a
        // real oneof.
        let mut candidates: Vec<String> = Vec::new();
        for field in &fields {
            candidates.push(field.name().to_owned());
            candidates.push(field.json_name().to_owned());
            candidates.push(field_prop(field, false).into_owned());
            candidates.push(field_prop(field, true).into_owned());
        }
        for oneof in &oneofs {
            candidates.push(oneof.name().to_owned());
            candidates.push(lower_camel(oneof.name()));
            candidates.push(oneof_prop(oneof, false));
            candidates.push(oneof_prop(oneof, true));
        }
        for key in candidates {
            if plan.keys.contains_key(key.as_str()) {
                continue;
            }
            let target = if let Some(field) = find_field(desc, &key) {
                position(field.number()).map(Target::Field)
            } else if let Some(oneof) = find_oneof(desc, &key) {
                oneofs
                    .iter()
                    .position(|o| o.name() == oneof.name())
                    .map(Target::Oneof)
            } else {
                None
            };
            if let Some(target) = target {
                plan.keys.insert(key.into_boxed_str(), target);
            }
        }
        for oneof in &oneofs {
            let mut members = KeyMap::default();
            for member in oneof.fields() {
                for key in [
                    member.name().to_owned(),
                    member.json_name().to_owned(),
                    field_prop(&member, false).into_owned(),
                    field_prop(&member, true).into_owned(),
                ] {
                    if members.contains_key(key.as_str()) {
                        continue;
                    }
                    if let Some(index) =
                        find_member(oneof, &key).and_then(|found| position(found.number()))
                    {
                        members.insert(key.into_boxed_str(), index);
                    }
                }
            }
            plan.oneofs.push(members);
        }
        plan
    }
}
