//! Canonical shape → protobuf bytes in one pass, without `DynamicMessage`.
//!
//! [`encode_root`] and [`encode_message`] write the very bytes that
//! `root_from_json(desc, canonical)?.encode_to_vec()` (or `message_from_json`) gives, reading
//! the canonical `serde_json::Value` directly: fields in ascending number order (prost-reflect
//! writes its `BTreeMap` in that order), packed exactly where the descriptor says
//! `is_packed`, defaults omitted only without explicit presence, the JSON forms of each kind
//! read as prost-reflect's deserializer reads them from a `Value` (`scalar.rs`). Nested lengths
//! are written into a one-byte slot and the body is shifted in the rare case it needs more.
//!
//! Map entries are written in the order of the JSON object; prost-reflect writes them in the
//! order of a `HashMap`, which varies from one call to the next, so the two agree up to the
//! order of map entries (which protobuf leaves unspecified).
//!
//! Whatever this encoder is not sure to write as the old path does gives `None`, and the caller
//! falls back to the old path, which keeps its error texts: every input the old path refuses,
//! `Any` (its payload is a type looked up by URL), groups, fields whose proto name the
//! deserializer resolves to a sibling (a `json_name` equal to another field's name), a property
//! given twice (by two of its names, or two members of one oneof), a oneof not in the
//! `{case, value}` form or with other keys, integer map keys not in canonical decimal form,
//! and nesting deeper than [`MAX_DEPTH`] (prost's decoder, used by the old path for the
//! well-known types, stops at 100).

pub(crate) mod plan;
pub(crate) mod scalar;
mod wkt;

#[cfg(feature = "differential")]
pub mod check;

use prost::encoding::{WireType, encode_key, encode_varint};
use serde_json::Value;

use self::plan::{FieldPlan, MessagePlan, Scalar, Shape, Target, ValueKind};

pub(crate) use self::plan::EncodePlan;

/// The key and value fields of a map entry (`descriptor.proto`, `MessageOptions.map_entry`).
pub(crate) const MAP_KEY: u32 = 1;
pub(crate) const MAP_VALUE: u32 = 2;

/// Message nesting this encoder follows; deeper input is left to the old path.
pub(crate) const MAX_DEPTH: usize = 48;

static NULL: Value = Value::Null;

/// Some(exactly the bytes `root_from_json(desc, canonical.clone())?.encode_to_vec()` gives,
/// up to the order of map entries) or `None` when this encoder cannot guarantee that,
/// including every case where the old path returns an error.
pub(crate) fn encode_root(plan: &EncodePlan, canonical: &Value) -> Option<Vec<u8>> {
    let value = if plan.root_wrapped {
        match canonical {
            Value::Object(object) => object.get("value").unwrap_or(&NULL),
            other => other,
        }
    } else {
        canonical
    };
    encode_message(plan, value)
}

/// As [`encode_root`], for one canonical message value (not a tool root), as
/// `message_from_json`.
pub(crate) fn encode_message(plan: &EncodePlan, canonical: &Value) -> Option<Vec<u8>> {
    let mut encoder = Encoder {
        plan,
        // Most requests fit: one allocation, rarely a second.
        buf: Vec::with_capacity(512),
        scratch: Vec::with_capacity(32),
        depth: 0,
    };
    encoder.message(0, canonical)?;
    Some(encoder.buf)
}

struct Encoder<'p, 'v> {
    plan: &'p EncodePlan,
    buf: Vec<u8>,
    /// The fields of the messages being written, (field index, value), one range per level.
    scratch: Vec<(usize, &'v Value)>,
    depth: usize,
}

/// The bytes of a varint and how many there are.
fn varint(mut value: u64) -> ([u8; 10], usize) {
    let mut out = [0u8; 10];
    let mut n = 0;
    for slot in &mut out {
        n += 1;
        if value < 0x80 {
            *slot = value as u8;
            break;
        }
        *slot = (value as u8 & 0x7f) | 0x80;
        value >>= 7;
    }
    (out, n)
}

/// The body of the well-known message of plan `index` for `value`, appended to `buf`: the
/// text encoder's way to the well-known types, written as [`encode_message`] writes them.
pub(crate) fn well_known_into(
    plan: &EncodePlan,
    index: usize,
    value: &Value,
    buf: &mut Vec<u8>,
) -> Option<()> {
    let message = plan.messages.get(index)?;
    let wkt = message.wkt?;
    let mut encoder = Encoder {
        plan,
        buf: std::mem::take(buf),
        scratch: Vec::new(),
        depth: 0,
    };
    let written = encoder.well_known(message, wkt, value);
    *buf = encoder.buf;
    written
}

/// Opens a length-delimited body in `buf`: a one-byte length slot. Returns where the body
/// starts.
pub(crate) fn open(buf: &mut Vec<u8>) -> usize {
    buf.push(0);
    buf.len()
}

/// Closes the body opened at `start`, widening the slot when the length needs it.
pub(crate) fn close(buf: &mut Vec<u8>, start: usize) -> Option<()> {
    let len = buf.len().checked_sub(start)?;
    if len < 0x80 {
        *buf.get_mut(start.checked_sub(1)?)? = len as u8;
        return Some(());
    }
    let (bytes, n) = varint(len as u64);
    let head = bytes.get(..n)?;
    buf.splice(start.checked_sub(1)?..start, head.iter().copied());
    Some(())
}

impl<'p, 'v> Encoder<'p, 'v> {
    fn open(&mut self) -> usize {
        open(&mut self.buf)
    }

    fn close(&mut self, start: usize) -> Option<()> {
        close(&mut self.buf, start)
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// The body of a message of plan `index`.
    fn message(&mut self, index: usize, value: &'v Value) -> Option<()> {
        let plan: &'p EncodePlan = self.plan;
        let message = plan.messages.get(index)?;
        self.enter()?;
        match message.wkt {
            Some(wkt) => self.well_known(message, wkt, value)?,
            None => self.fields(message, value)?,
        }
        self.depth -= 1;
        Some(())
    }

    fn fields(&mut self, message: &'p MessagePlan, value: &'v Value) -> Option<()> {
        let Value::Object(object) = value else {
            return None;
        };
        let start = self.scratch.len();
        for (key, value) in object {
            match message.keys.get(key.as_str())? {
                Target::Field(index) => self.scratch.push((*index, value)),
                Target::Oneof(oneof) => {
                    let Value::Object(wrapped) = value else {
                        return None;
                    };
                    if wrapped.keys().any(|k| k != "case" && k != "value") {
                        return None;
                    }
                    let case = wrapped.get("case")?.as_str()?;
                    let member = message.oneofs.get(*oneof)?.get(case)?;
                    self.scratch
                        .push((*member, wrapped.get("value").unwrap_or(&NULL)));
                }
            }
        }
        let end = self.scratch.len();
        let entries = self.scratch.get_mut(start..end)?;
        entries.sort_unstable_by_key(|entry| entry.0);
        let mut previous: Option<usize> = None;
        for &(index, _) in entries.iter() {
            if previous == Some(index) {
                return None;
            }
            previous = Some(index);
        }
        // Two members of one oneof: the old path refuses both set, and keeps the set one of
        // a set and a null; left to it either way.
        let mut oneofs_seen: u64 = 0;
        for &(index, _) in entries.iter() {
            if let Some(oneof) = message.fields.get(index)?.oneof {
                let bit = 1u64.checked_shl(u32::try_from(oneof).ok()?)?;
                if oneofs_seen & bit != 0 {
                    return None;
                }
                oneofs_seen |= bit;
            }
        }
        for i in start..end {
            let (index, value) = *self.scratch.get(i)?;
            self.field(message.fields.get(index)?, value)?;
        }
        self.scratch.truncate(start);
        Some(())
    }

    fn field(&mut self, field: &'p FieldPlan, value: &'v Value) -> Option<()> {
        if !field.usable {
            return None;
        }
        if value.is_null() && !field.null_is_value {
            // "absent"
            return Some(());
        }
        match &field.shape {
            Shape::Single => self.single(field.number, &field.kind, field.presence, value),
            Shape::List { packed } => {
                let Value::Array(items) = value else {
                    return None;
                };
                if items.is_empty() {
                    return Some(());
                }
                if *packed {
                    encode_key(field.number, WireType::LengthDelimited, &mut self.buf);
                    let start = self.open();
                    for item in items {
                        self.raw(&field.kind, item)?;
                    }
                    self.close(start)
                } else {
                    for item in items {
                        self.single(field.number, &field.kind, true, item)?;
                    }
                    Some(())
                }
            }
            Shape::Map {
                key,
                key_presence,
                value: value_kind,
                value_presence,
            } => {
                let Value::Object(entries) = value else {
                    return None;
                };
                for (entry_key, entry_value) in entries {
                    encode_key(field.number, WireType::LengthDelimited, &mut self.buf);
                    let start = self.open();
                    self.map_key(*key, *key_presence, entry_key)?;
                    self.single(MAP_VALUE, value_kind, *value_presence, entry_value)?;
                    self.close(start)?;
                }
                Some(())
            }
        }
    }

    fn map_key(&mut self, key: Scalar, presence: bool, text: &str) -> Option<()> {
        let number = MAP_KEY;
        match key {
            Scalar::String => {
                if presence || !text.is_empty() {
                    encode_key(number, WireType::LengthDelimited, &mut self.buf);
                    encode_varint(text.len() as u64, &mut self.buf);
                    self.buf.extend_from_slice(text.as_bytes());
                }
                Some(())
            }
            Scalar::Bool => {
                let value: bool = text.parse().ok()?;
                self.scalar_value(number, key, presence, &Value::Bool(value))
            }
            Scalar::Int32
            | Scalar::Int64
            | Scalar::Uint32
            | Scalar::Uint64
            | Scalar::Sint32
            | Scalar::Sint64
            | Scalar::Fixed32
            | Scalar::Fixed64
            | Scalar::Sfixed32
            | Scalar::Sfixed64 => {
                if !scalar::canonical_integer_key(text) {
                    return None;
                }
                // The key kind's `from_str`, as prost-reflect's map reader; then written as a
                // number of that kind (no allocation: a `Number` holds it inline).
                let number_value = match key {
                    Scalar::Int32 | Scalar::Sint32 | Scalar::Sfixed32 => {
                        serde_json::Number::from(text.parse::<i32>().ok()?)
                    }
                    Scalar::Int64 | Scalar::Sint64 | Scalar::Sfixed64 => {
                        serde_json::Number::from(text.parse::<i64>().ok()?)
                    }
                    Scalar::Uint32 | Scalar::Fixed32 => {
                        serde_json::Number::from(text.parse::<u32>().ok()?)
                    }
                    _ => serde_json::Number::from(text.parse::<u64>().ok()?),
                };
                self.scalar_value(number, key, presence, &Value::Number(number_value))
            }
            Scalar::Double | Scalar::Float | Scalar::Bytes => None,
        }
    }

    /// One value with its key; an implicit-presence default is omitted.
    fn single(
        &mut self,
        number: u32,
        kind: &'p ValueKind,
        presence: bool,
        value: &'v Value,
    ) -> Option<()> {
        match kind {
            ValueKind::Scalar(scalar) => self.scalar_value(number, *scalar, presence, value),
            ValueKind::Enum {
                desc,
                null_value,
                default,
            } => {
                let n = scalar::enum_number(desc, *null_value, value)?;
                if presence || n != *default {
                    encode_key(number, WireType::Varint, &mut self.buf);
                    encode_varint(i64::from(n) as u64, &mut self.buf);
                }
                Some(())
            }
            ValueKind::Message(index) => {
                encode_key(number, WireType::LengthDelimited, &mut self.buf);
                let start = self.open();
                self.message(*index, value)?;
                self.close(start)
            }
        }
    }

    /// One packed element (no key).
    fn raw(&mut self, kind: &'p ValueKind, value: &'v Value) -> Option<()> {
        match kind {
            ValueKind::Scalar(scalar) => self.scalar_raw(*scalar, value).map(|_| ()),
            ValueKind::Enum {
                desc, null_value, ..
            } => {
                let n = scalar::enum_number(desc, *null_value, value)?;
                encode_varint(i64::from(n) as u64, &mut self.buf);
                Some(())
            }
            ValueKind::Message(_) => None,
        }
    }

    fn scalar_value(
        &mut self,
        number: u32,
        kind: Scalar,
        presence: bool,
        value: &Value,
    ) -> Option<()> {
        let key_at = self.buf.len();
        encode_key(number, wire_type(kind), &mut self.buf);
        let is_default = self.scalar_raw(kind, value)?;
        if is_default && !presence {
            self.buf.truncate(key_at);
        }
        Some(())
    }

    fn scalar_raw(&mut self, kind: Scalar, value: &Value) -> Option<bool> {
        scalar_raw(&mut self.buf, kind, value)
    }
}

/// Writes a scalar without key; returns whether it is the type's default (zero).
pub(crate) fn scalar_raw(buf: &mut Vec<u8>, kind: Scalar, value: &Value) -> Option<bool> {
    Some(match kind {
        Scalar::Double => {
            let v = scalar::double(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0.0
        }
        Scalar::Float => {
            let v = scalar::float(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0.0
        }
        Scalar::Int32 => {
            let v = scalar::int32(value)?;
            encode_varint(i64::from(v) as u64, buf);
            v == 0
        }
        Scalar::Sint32 => {
            let v = scalar::int32(value)?;
            encode_varint(u64::from(((v << 1) ^ (v >> 31)) as u32), buf);
            v == 0
        }
        Scalar::Sfixed32 => {
            let v = scalar::int32(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        Scalar::Int64 => {
            let v = scalar::int64(value)?;
            encode_varint(v as u64, buf);
            v == 0
        }
        Scalar::Sint64 => {
            let v = scalar::int64(value)?;
            encode_varint(((v << 1) ^ (v >> 63)) as u64, buf);
            v == 0
        }
        Scalar::Sfixed64 => {
            let v = scalar::int64(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        Scalar::Uint32 => {
            let v = scalar::uint32(value)?;
            encode_varint(u64::from(v), buf);
            v == 0
        }
        Scalar::Fixed32 => {
            let v = scalar::uint32(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        Scalar::Uint64 => {
            let v = scalar::uint64(value)?;
            encode_varint(v, buf);
            v == 0
        }
        Scalar::Fixed64 => {
            let v = scalar::uint64(value)?;
            buf.extend_from_slice(&v.to_le_bytes());
            v == 0
        }
        Scalar::Bool => {
            let Value::Bool(v) = value else {
                return None;
            };
            buf.push(u8::from(*v));
            !*v
        }
        Scalar::String | Scalar::Bytes => {
            let Value::String(s) = value else {
                return None;
            };
            text_raw(buf, kind, s)?
        }
    })
}

/// Writes a string or bytes scalar (base64 `text`) without key; returns whether it is empty.
/// `None` for another kind, or text that is not base64 for bytes.
pub(crate) fn text_raw(buf: &mut Vec<u8>, kind: Scalar, text: &str) -> Option<bool> {
    match kind {
        Scalar::String => {
            encode_varint(text.len() as u64, buf);
            buf.extend_from_slice(text.as_bytes());
            Some(text.is_empty())
        }
        Scalar::Bytes => {
            // Decoded into place behind a one-byte length slot.
            let start = open(buf);
            scalar::bytes(text, buf)?;
            let empty = buf.len() == start;
            close(buf, start)?;
            Some(empty)
        }
        _ => None,
    }
}

pub(crate) fn wire_type(kind: Scalar) -> WireType {
    match kind {
        Scalar::Double | Scalar::Fixed64 | Scalar::Sfixed64 => WireType::SixtyFourBit,
        Scalar::Float | Scalar::Fixed32 | Scalar::Sfixed32 => WireType::ThirtyTwoBit,
        Scalar::String | Scalar::Bytes => WireType::LengthDelimited,
        _ => WireType::Varint,
    }
}
