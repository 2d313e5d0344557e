//! The decode plan: every message type reachable from a tool's output type, indexed, with
//! its fields in number order and their output keys made once.

use std::borrow::Cow;
use std::collections::HashMap;

use prost_reflect::{Cardinality, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor};

use super::super::{Wkt, field_prop, find_field, oneof_prop, real_oneof, scalar_kind::ScalarKind};

/// The wire-level kind of a scalar, and what JSON it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scalar {
    /// One of protobuf's fifteen scalar types.
    Kind(ScalarKind),
    /// An enum: the index of its [`EnumPlan`].
    Enum(usize),
}

impl Scalar {
    /// Whether a repeated field of this kind may come packed.
    pub(super) fn packable(self) -> bool {
        !matches!(self, Self::Kind(ScalarKind::String | ScalarKind::Bytes))
    }
}

/// What one field (or a map entry's key or value) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Scalar(Scalar),
    /// A message: the index of its [`MessagePlan`].
    Message(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Single,
    List,
    /// A map: the key's scalar kind and the value's type.
    Map(Scalar, Ty),
}

#[derive(Debug)]
pub(super) struct FieldPlan {
    pub(super) number: u32,
    pub(super) ty: Ty,
    pub(super) shape: Shape,
    /// Whether the field is written only when set (messages, oneof members, `optional`,
    /// proto2 scalars); the others are written when not default, or always with
    /// `emit_defaults`.
    pub(super) presence: bool,
    pub(super) group: bool,
    /// Cleared by `clear_omitted`.
    pub(super) omitted: bool,
    /// The index of the real oneof it belongs to, in its message.
    pub(super) oneof: Option<usize>,
    /// The output key, indexed by `json_names as usize`.
    pub(super) key: [String; 2],
    /// The real oneof's output key, indexed by `json_names as usize`.
    pub(super) oneof_key: [String; 2],
}

#[derive(Debug)]
pub(super) struct MessagePlan {
    pub(super) wkt: Option<Wkt>,
    /// Fields in number order (prost-reflect writes them in that order).
    pub(super) fields: Vec<FieldPlan>,
    /// Field number → index + 1 in `fields` (0: none), when the numbers are small.
    pub(super) dense: Vec<u16>,
    /// Extension numbers of this message in the pool: prost-reflect decodes them, then the
    /// canonical pass drops them; left to the old path.
    pub(super) extensions: Vec<u32>,
    pub(super) oneofs: usize,
    /// Something about this type the decoder does not reproduce (see [`super`]).
    pub(super) unsupported: bool,
    /// No two of the keys a message of this type can write (its fields' outside oneofs, its
    /// oneofs') are equal, indexed by `json_names as usize`. The `Value` path puts a key
    /// written twice once, at its first place; the text writer leaves such a type to it.
    pub(super) distinct_keys: [bool; 2],
}

impl MessagePlan {
    /// The index in `fields` of the field numbered `number`.
    pub(super) fn field(&self, number: u32) -> Option<usize> {
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
pub(super) struct EnumPlan {
    /// `google.protobuf.NullValue`: every number is written as `null`.
    pub(super) null_value: bool,
    /// The number of its first value: an implicit-presence field's default.
    pub(super) default: i32,
    /// (number, the name prost-reflect writes for it), by number.
    pub(super) values: Vec<(i32, String)>,
}

impl EnumPlan {
    pub(super) fn name(&self, number: i32) -> Option<&str> {
        self.values
            .binary_search_by_key(&number, |(n, _)| *n)
            .ok()
            .and_then(|index| self.values.get(index))
            .map(|(_, name)| name.as_str())
    }
}

/// Built once per tool output type (the caller keeps it): the plans of every message type
/// reachable from the output type, indexed, so that decoding looks nothing up by name and
/// takes no lock.
#[derive(Debug)]
pub(crate) struct DecodePlan {
    pub(super) messages: Vec<MessagePlan>,
    pub(super) enums: Vec<EnumPlan>,
}

/// The root's index in [`DecodePlan::messages`].
pub(super) const ROOT: usize = 0;

const DENSE_MAX: u32 = 512;

impl DecodePlan {
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
        }
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
        self.messages.push(MessagePlan {
            wkt: None,
            fields: Vec::new(),
            dense: Vec::new(),
            extensions: Vec::new(),
            oneofs: 0,
            unsupported: true,
            distinct_keys: [false; 2],
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

    fn build(&mut self, desc: &MessageDescriptor) -> MessagePlan {
        let mut unsupported = false;
        let oneofs: Vec<_> = desc.oneofs().filter(|o| !o.is_synthetic()).collect();
        let mut fields = Vec::with_capacity(desc.fields().len());
        for field in desc.fields() {
            let kind = field.kind();
            let shape = if field.is_map() {
                let Kind::Message(entry) = &kind else {
                    unsupported = true;
                    continue;
                };
                let key = self.scalar(&entry.map_entry_key_field().kind());
                let value = self.ty(&entry.map_entry_value_field().kind());
                match key {
                    Some(key) => Shape::Map(key, value),
                    None => {
                        unsupported = true;
                        continue;
                    }
                }
            } else if field.cardinality() == Cardinality::Repeated {
                Shape::List
            } else {
                Shape::Single
            };
            let ty = if field.is_map() {
                Ty::Message(ROOT)
            } else {
                self.ty(&kind)
            };
            // The canonical pass finds a field again by its serialized name; a name that
            // finds another field (a JSON name equal to another field's name) is left to it.
            for json_names in [false, true] {
                let written = if json_names {
                    field.json_name()
                } else {
                    field.name()
                };
                if find_field(desc, written).is_none_or(|found| found != field) {
                    unsupported = true;
                }
            }
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
                key: keys(&field),
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
        let distinct_keys = [0, 1].map(|names| {
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
        });
        MessagePlan {
            wkt: Wkt::of(desc),
            fields,
            dense,
            extensions,
            oneofs: oneofs.len(),
            unsupported,
            distinct_keys,
        }
    }
}

fn keys(field: &FieldDescriptor) -> [String; 2] {
    [
        field_prop(field, false).into_owned(),
        field_prop(field, true).into_owned(),
    ]
}
