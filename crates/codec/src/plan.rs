//! The per-type plan both transcoders read: every message type reachable from a tool's
//! request or response type, indexed once, with its fields in number order (the order
//! prost-reflect writes them in), the property keys the encoder reads (each resolved exactly
//! as the old path resolves it) and the output keys the decoder writes, made in advance.

use std::borrow::Cow;
use std::collections::HashMap;

use prost_reflect::{Cardinality, EnumDescriptor, Kind, MessageDescriptor, OneofDescriptor};

use crate::descriptor::{
    field_prop, find_field, find_member, find_oneof, lower_camel, null_is_a_value, oneof_prop,
    real_oneof,
};
use crate::scalar_kind::ScalarKind;
use crate::well_known::{Wkt, is_value_wrapped_root};

/// The property-key tables: short keys, looked up once per property of every call, hashed
/// with foldhash rather than SipHash. The keys are the schema's own, so no flooding to defend
/// against.
pub(crate) type KeyMap<V> = HashMap<Box<str>, V, foldhash::fast::FixedState>;

/// The wire-level kind of a scalar, and what JSON it is read from and becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// One of protobuf's fifteen scalar types.
    Kind(ScalarKind),
    /// An enum: the index of its [`EnumPlan`].
    Enum(usize),
}

impl Scalar {
    /// Whether a repeated field of this kind may come packed.
    pub(crate) fn packable(self) -> bool {
        !matches!(self, Self::Kind(ScalarKind::String | ScalarKind::Bytes))
    }
}

/// What one value of a field (or a map entry's value) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Scalar(Scalar),
    /// A message: the index of its [`MessagePlan`].
    Message(usize),
}

/// How many values a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Single,
    /// Repeated; `packed` where the descriptor says `is_packed` (how the encoder writes it:
    /// the decoder reads both forms).
    List {
        packed: bool,
    },
    Map {
        key: ScalarKind,
        key_presence: bool,
        value: Ty,
        value_presence: bool,
    },
}

#[derive(Debug)]
pub(crate) struct FieldPlan {
    pub(crate) number: u32,
    /// What one value is (of a map: its entries' value).
    pub(crate) ty: Ty,
    pub(crate) shape: Shape,
    /// Whether the field has explicit presence: written only when set (messages, oneof
    /// members, `optional`, proto2 scalars), even when it holds the default; the others are
    /// written when not default, or always with `emit_defaults`.
    pub(crate) presence: bool,
    pub(crate) group: bool,
    /// Cleared by `clear_omitted`.
    pub(crate) omitted: bool,
    /// The index of the real oneof it belongs to, in its message.
    pub(crate) oneof: Option<usize>,
    /// JSON `null` is a value (a `google.protobuf.Value` or `NullValue`), not "absent".
    pub(crate) null_is_value: bool,
    /// False for groups and for fields whose proto name is a sibling's JSON name (a key that
    /// means one or the other by the tool's naming): the encoder leaves them to the old path.
    pub(crate) usable: bool,
    /// The output key, indexed by `json_names as usize`.
    pub(crate) key: [String; 2],
    /// The real oneof's output key, indexed by `json_names as usize`.
    pub(crate) oneof_key: [String; 2],
}

/// A property key of a message: a field, or a real oneof in the `{case, value}` form.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Field(usize),
    Oneof(usize),
}

#[derive(Debug, Default)]
pub(crate) struct MessagePlan {
    pub(crate) wkt: Option<Wkt>,
    /// The `value` field of a wrapper.
    pub(crate) wrapped: Option<ScalarKind>,
    /// Fields in number order (prost-reflect writes them in that order).
    pub(crate) fields: Vec<FieldPlan>,
    /// Field number → index + 1 in `fields` (0: none), when the numbers are small.
    pub(crate) dense: Vec<u16>,
    /// Extension numbers of this message in the pool: prost-reflect decodes them, then the
    /// canonical pass drops them; left to the old path.
    pub(crate) extensions: Vec<u32>,
    /// The property keys the encoder reads (none for a well-known type, read by its form).
    pub(crate) keys: KeyMap<Target>,
    /// Per real oneof: member key → index into `fields`.
    pub(crate) oneofs: Vec<KeyMap<usize>>,
    /// Something about this type the decoder does not reproduce (see `decode`).
    pub(crate) unsupported: bool,
    /// No two of the keys a message of this type can write (its fields' outside oneofs, its
    /// oneofs') are equal, indexed by `json_names as usize`. The `Value` path puts a key
    /// written twice once, at its first place; the text writer leaves such a type to it.
    pub(crate) distinct_keys: [bool; 2],
}

impl MessagePlan {
    /// The index in `fields` of the field numbered `number`.
    pub(crate) fn field(&self, number: u32) -> Option<usize> {
        match self.dense.get(number as usize) {
            Some(&slot) => return (slot as usize).checked_sub(1),
            None if !self.dense.is_empty() => return None,
            None => {}
        }
        self.fields
            .binary_search_by_key(&number, |field| field.number)
            .ok()
    }
}

#[derive(Debug)]
pub(crate) struct EnumPlan {
    pub(crate) desc: EnumDescriptor,
    /// `google.protobuf.NullValue`: read from `null` or `"NULL_VALUE"` only, and every number
    /// is written as `null`.
    pub(crate) null_value: bool,
    /// The number of its first value: an implicit-presence field's default.
    pub(crate) default: i32,
    /// (number, the name prost-reflect writes for it), by number.
    pub(crate) values: Vec<(i32, String)>,
}

impl EnumPlan {
    pub(crate) fn name(&self, number: i32) -> Option<&str> {
        self.values
            .binary_search_by_key(&number, |(n, _)| *n)
            .ok()
            .and_then(|index| self.values.get(index))
            .map(|(_, name)| name.as_str())
    }
}

/// Built once per tool request or response type (keep it in a `OnceLock`): the plans of every
/// message type reachable from it, indexed, so that encoding and decoding look nothing up by
/// descriptor name and take no lock.
#[derive(Debug)]
pub(crate) struct Plan {
    /// [`ROOT`] is the type's own.
    pub(crate) messages: Vec<MessagePlan>,
    pub(crate) enums: Vec<EnumPlan>,
    /// The type is a well-known one whose tool root wraps it as `{"value": …}`.
    pub(crate) root_wrapped: bool,
}

/// The root's index in [`Plan::messages`].
pub(crate) const ROOT: usize = 0;

const DENSE_MAX: u32 = 512;

impl Plan {
    /// The plan for `desc`, with the fields named in `omitted` (full names) cleared at
    /// every depth.
    pub(crate) fn new(desc: &MessageDescriptor, omitted: &[Cow<'static, str>]) -> Self {
        let mut builder = Builder {
            messages: Vec::new(),
            enums: Vec::new(),
            message_index: HashMap::new(),
            enum_index: HashMap::new(),
            pending: Vec::new(),
            omitted,
        };
        builder.message(desc);
        while let Some((index, desc)) = builder.pending.pop() {
            let plan = builder.build(&desc);
            if let Some(slot) = builder.messages.get_mut(index) {
                *slot = plan;
            }
        }
        Self {
            messages: builder.messages,
            enums: builder.enums,
            root_wrapped: is_value_wrapped_root(desc),
        }
    }

    /// The enum plan `Scalar::Enum(index)` points at.
    pub(crate) fn enumeration(&self, index: usize) -> Option<&EnumPlan> {
        self.enums.get(index)
    }
}

struct Builder<'o> {
    messages: Vec<MessagePlan>,
    enums: Vec<EnumPlan>,
    message_index: HashMap<String, usize>,
    enum_index: HashMap<String, usize>,
    pending: Vec<(usize, MessageDescriptor)>,
    omitted: &'o [Cow<'static, str>],
}

impl Builder<'_> {
    /// The index of `desc`'s plan, queued for building on first sight.
    fn message(&mut self, desc: &MessageDescriptor) -> usize {
        if let Some(&index) = self.message_index.get(desc.full_name()) {
            return index;
        }
        let index = self.messages.len();
        // A placeholder until it is built, unsupported should anything read it before.
        self.messages.push(MessagePlan {
            unsupported: true,
            ..MessagePlan::default()
        });
        self.message_index
            .insert(desc.full_name().to_owned(), index);
        self.pending.push((index, desc.clone()));
        index
    }

    fn enumeration(&mut self, desc: &EnumDescriptor) -> usize {
        if let Some(&index) = self.enum_index.get(desc.full_name()) {
            return index;
        }
        let mut values: Vec<(i32, String)> = Vec::new();
        for value in desc.values() {
            let number = value.number();
            if values.iter().any(|(n, _)| *n == number) {
                continue;
            }
            // The name prost-reflect writes for the number (the first of aliases).
            let name = desc
                .get_value(number)
                .map_or_else(|| value.name().to_owned(), |v| v.name().to_owned());
            values.push((number, name));
        }
        values.sort_by_key(|(n, _)| *n);
        let index = self.enums.len();
        self.enums.push(EnumPlan {
            desc: desc.clone(),
            null_value: desc.full_name() == "google.protobuf.NullValue",
            default: desc.default_value().number(),
            values,
        });
        self.enum_index.insert(desc.full_name().to_owned(), index);
        index
    }

    fn scalar(&mut self, kind: &Kind) -> Option<Scalar> {
        match kind {
            Kind::Enum(desc) => Some(Scalar::Enum(self.enumeration(desc))),
            other => ScalarKind::of(other).map(Scalar::Kind),
        }
    }

    fn ty(&mut self, kind: &Kind) -> Ty {
        match kind {
            Kind::Message(desc) => Ty::Message(self.message(desc)),
            other => self.scalar(other).map_or(Ty::Message(ROOT), Ty::Scalar),
        }
    }

    /// A map field's shape, or `None` where its entry is not one of a key scalar and a value.
    fn map(&mut self, kind: &Kind) -> Option<Shape> {
        let Kind::Message(entry) = kind else {
            return None;
        };
        let key = entry.map_entry_key_field();
        let value = entry.map_entry_value_field();
        Some(Shape::Map {
            key: ScalarKind::of(&key.kind())?,
            key_presence: key.supports_presence(),
            value: self.ty(&value.kind()),
            value_presence: value.supports_presence(),
        })
    }

    fn build(&mut self, desc: &MessageDescriptor) -> MessagePlan {
        let wkt = Wkt::of(desc);
        let mut unsupported = false;
        let oneofs: Vec<_> = desc.oneofs().filter(|o| !o.is_synthetic()).collect();
        let mut fields = Vec::with_capacity(desc.fields().len());
        for field in desc.fields() {
            let kind = field.kind();
            let shape = if field.is_map() {
                let map = self.map(&kind);
                // Neither transcoder reads a map it cannot plan.
                unsupported |= map.is_none();
                map.unwrap_or(Shape::Single)
            } else if field.cardinality() == Cardinality::Repeated {
                Shape::List {
                    packed: field.is_packed(),
                }
            } else {
                Shape::Single
            };
            let ty = match shape {
                Shape::Map { value, .. } => value,
                _ => self.ty(&kind),
            };
            // The canonical pass finds a field again by the name it is serialized by in each
            // naming; one that finds another field is left to it.
            for (written, json_names) in [(field.name(), false), (field.json_name(), true)] {
                if find_field(desc, written, json_names).is_none_or(|found| found != field) {
                    unsupported = true;
                }
            }
            // A proto name that is another field's JSON name means one field or the other by
            // the tool's naming, which a plan (made for both) does not know: such a key is
            // left to the whole way.
            let resolved = desc
                .get_field_by_json_name(field.name())
                .or_else(|| desc.get_field_by_name(field.name()));
            let oneof = real_oneof(&field);
            fields.push(FieldPlan {
                number: field.number(),
                ty,
                shape,
                presence: field.supports_presence(),
                group: field.is_group(),
                omitted: self.omitted.iter().any(|name| name == field.full_name()),
                oneof: oneof
                    .as_ref()
                    .and_then(|o| oneofs.iter().position(|x| x == o)),
                // A null map is absent; a null list of `Value`s is refused (or worse) by the
                // old path.
                null_is_value: !field.is_map() && null_is_a_value(&kind),
                usable: !field.is_group()
                    && resolved.is_some_and(|r| r.number() == field.number())
                    && !(field.is_map() && matches!(shape, Shape::Single)),
                key: [
                    field_prop(&field, false).into_owned(),
                    field_prop(&field, true).into_owned(),
                ],
                oneof_key: oneof.map_or_else(Default::default, |o| {
                    [oneof_prop(&o, false), oneof_prop(&o, true)]
                }),
            });
        }
        let max = fields.iter().map(|f| f.number).max().unwrap_or(0);
        // Left empty for large numbers: looked up by binary search.
        let mut dense = Vec::new();
        if max <= DENSE_MAX {
            dense = vec![0u16; max as usize + 1];
            for (index, field) in fields.iter().enumerate() {
                if let Some(slot) = dense.get_mut(field.number as usize) {
                    *slot = u16::try_from(index + 1).unwrap_or(0);
                }
            }
        }
        let mut extensions: Vec<u32> = desc.extensions().map(|e| e.number()).collect();
        extensions.sort_unstable();
        let distinct_keys = distinct_keys(&fields);
        let mut plan = MessagePlan {
            wkt,
            fields,
            dense,
            extensions,
            unsupported,
            distinct_keys,
            ..MessagePlan::default()
        };
        if wkt == Some(Wkt::Wrapper) {
            plan.wrapped = desc
                .get_field_by_name("value")
                .and_then(|field| ScalarKind::of(&field.kind()));
        }
        // A well-known type is read by its own form, not by property keys.
        if wkt.is_none() {
            property_keys(desc, &oneofs, &mut plan);
        }
        plan.oneofs = oneofs.iter().map(|oneof| members(oneof, &plan)).collect();
        plan
    }
}

/// Whether the keys a message of these fields can write are distinct, for proto names and for
/// JSON names.
fn distinct_keys(fields: &[FieldPlan]) -> [bool; 2] {
    [0, 1].map(|names| {
        // A oneof's members share its key, and one of them at most is written.
        let mut oneof_keys: Vec<(usize, &str)> = fields
            .iter()
            .filter_map(|field| Some((field.oneof?, field.oneof_key[names].as_str())))
            .collect();
        oneof_keys.sort_unstable();
        oneof_keys.dedup();
        let mut written: Vec<&str> = fields
            .iter()
            .filter(|field| field.oneof.is_none())
            .map(|field| field.key[names].as_str())
            .chain(oneof_keys.iter().map(|(_, key)| *key))
            .collect();
        let count = written.len();
        written.sort_unstable();
        written.dedup();
        written.len() == count
    })
}

/// The property keys the encoder reads of `desc` into `plan`, each resolved as the old path
/// resolves it: a field first, then a real oneof.
fn property_keys(desc: &MessageDescriptor, oneofs: &[OneofDescriptor], plan: &mut MessagePlan) {
    let fields = &plan.fields;
    let position = |number: u32| fields.iter().position(|f| f.number == number);
    let mut candidates: Vec<String> = Vec::new();
    for field in desc.fields() {
        candidates.push(field.name().to_owned());
        candidates.push(field.json_name().to_owned());
        candidates.push(field_prop(&field, false).into_owned());
        candidates.push(field_prop(&field, true).into_owned());
    }
    for oneof in oneofs {
        candidates.push(oneof.name().to_owned());
        candidates.push(lower_camel(oneof.name()));
        candidates.push(oneof_prop(oneof, false));
        candidates.push(oneof_prop(oneof, true));
    }
    for key in candidates {
        if plan.keys.contains_key(key.as_str()) {
            continue;
        }
        // Proto names first; a key the two namings read as two fields names a field that is
        // not `usable`, which leaves it to the whole way whichever it finds.
        let target = if let Some(field) = find_field(desc, &key, false) {
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
}

/// A real oneof's member keys (as `find_member` accepts them) → their index in `plan.fields`.
fn members(oneof: &OneofDescriptor, plan: &MessagePlan) -> KeyMap<usize> {
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
                find_member(oneof, &key, false).and_then(|found| plan.field(found.number()))
            {
                members.insert(key.into_boxed_str(), index);
            }
        }
    }
    members
}
