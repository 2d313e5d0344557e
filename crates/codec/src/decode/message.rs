//! One message: its fields scanned into slots (with prost-reflect's merge rules), then
//! written in field-number order in the canonical shape. The well-known types are written as
//! prost-reflect writes them (through `prost_types`), then reshaped as the canonical pass
//! does (`Struct`/`Value` integral numbers as integers).

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::{Engine as _, prelude::BASE64_STANDARD};
use serde_json::{Map, Value};

use super::wire::{FIXED32, FIXED64, LEN, Reader, VARINT};
use crate::number::whole;
use crate::plan::{EnumPlan, FieldPlan, MessagePlan, Plan, Scalar, Shape, Ty};
use crate::scalar_kind::ScalarKind;
use crate::well_known::{self, Wkt, number};

/// Deeper messages are left to the old path (prost's recursion limit is 100).
pub(super) const MAX_DEPTH: usize = 64;

/// What the decoding of one response shares.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ctx<'p> {
    pub(super) plan: &'p Plan,
    pub(super) json_names: bool,
    pub(super) emit_defaults: bool,
    /// Decoding what the old path decodes then clears (an omitted field, a replaced oneof
    /// member): only decode errors count, the JSON is thrown away.
    pub(super) validating: bool,
}

/// One decoded scalar, borrowed from the wire where it can be.
#[derive(Debug, Clone, Copy)]
pub(super) enum Raw<'a> {
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Bool(bool),
    Str(&'a str),
    Bytes(&'a [u8]),
    Enum(i32),
}

/// What a message's field holds after the scan.
#[derive(Debug, Default)]
pub(super) enum Slot<'a> {
    #[default]
    Empty,
    /// A singular scalar: the last one on the wire.
    One(Raw<'a>),
    /// A singular message, seen once.
    Msg(&'a [u8]),
    /// A singular message seen more than once: merged, as their concatenation is.
    Msgs(Vec<&'a [u8]>),
    List(Vec<Value>),
    /// Map entries, keys as written, in the order of the wire.
    Map(Vec<(String, Value)>),
}

/// The wire type of a scalar (of a packed list's elements too, strings and bytes aside).
fn wire_of(kind: Scalar) -> u8 {
    match kind {
        Scalar::Kind(ScalarKind::Double | ScalarKind::Fixed64 | ScalarKind::Sfixed64) => FIXED64,
        Scalar::Kind(ScalarKind::Float | ScalarKind::Fixed32 | ScalarKind::Sfixed32) => FIXED32,
        Scalar::Kind(ScalarKind::String | ScalarKind::Bytes) => LEN,
        _ => VARINT,
    }
}

pub(super) fn read_scalar<'a>(r: &mut Reader<'a>, kind: Scalar, wire_type: u8) -> Option<Raw<'a>> {
    if wire_type != wire_of(kind) {
        return None;
    }
    Some(match kind {
        Scalar::Kind(ScalarKind::Int32) => Raw::I32(r.varint()? as i32),
        Scalar::Kind(ScalarKind::Int64) => Raw::I64(r.varint()? as i64),
        Scalar::Kind(ScalarKind::Uint32) => Raw::U32(r.varint()? as u32),
        Scalar::Kind(ScalarKind::Uint64) => Raw::U64(r.varint()?),
        Scalar::Kind(ScalarKind::Sint32) => {
            let v = r.varint()? as u32;
            Raw::I32(((v >> 1) as i32) ^ (-((v & 1) as i32)))
        }
        Scalar::Kind(ScalarKind::Sint64) => {
            let v = r.varint()?;
            Raw::I64(((v >> 1) as i64) ^ (-((v & 1) as i64)))
        }
        Scalar::Kind(ScalarKind::Bool) => Raw::Bool(r.varint()? != 0),
        Scalar::Enum(_) => Raw::Enum(r.varint()? as i32),
        Scalar::Kind(ScalarKind::Fixed32) => Raw::U32(r.fixed32()?),
        Scalar::Kind(ScalarKind::Sfixed32) => Raw::I32(r.fixed32()? as i32),
        Scalar::Kind(ScalarKind::Float) => Raw::F32(f32::from_bits(r.fixed32()?)),
        Scalar::Kind(ScalarKind::Fixed64) => Raw::U64(r.fixed64()?),
        Scalar::Kind(ScalarKind::Sfixed64) => Raw::I64(r.fixed64()? as i64),
        Scalar::Kind(ScalarKind::Double) => Raw::F64(f64::from_bits(r.fixed64()?)),
        Scalar::Kind(ScalarKind::String) => Raw::Str(std::str::from_utf8(r.len_delimited()?).ok()?),
        Scalar::Kind(ScalarKind::Bytes) => Raw::Bytes(r.len_delimited()?),
    })
}

/// The default of an implicit-presence scalar.
fn zero(plan: &Plan, kind: Scalar) -> Raw<'static> {
    match kind {
        Scalar::Kind(ScalarKind::Int32 | ScalarKind::Sint32 | ScalarKind::Sfixed32) => Raw::I32(0),
        Scalar::Kind(ScalarKind::Int64 | ScalarKind::Sint64 | ScalarKind::Sfixed64) => Raw::I64(0),
        Scalar::Kind(ScalarKind::Uint32 | ScalarKind::Fixed32) => Raw::U32(0),
        Scalar::Kind(ScalarKind::Uint64 | ScalarKind::Fixed64) => Raw::U64(0),
        Scalar::Kind(ScalarKind::Float) => Raw::F32(0.0),
        Scalar::Kind(ScalarKind::Double) => Raw::F64(0.0),
        Scalar::Kind(ScalarKind::Bool) => Raw::Bool(false),
        Scalar::Kind(ScalarKind::String) => Raw::Str(""),
        Scalar::Kind(ScalarKind::Bytes) => Raw::Bytes(&[]),
        Scalar::Enum(e) => Raw::Enum(plan.enums.get(e).map_or(0, |e| e.default)),
    }
}

/// Whether an implicit-presence scalar holds its default (prost-reflect's `==`, so `-0.0`
/// is default and NaN is not).
pub(super) fn is_zero(plan: &Plan, kind: Scalar, raw: Raw<'_>) -> bool {
    match raw {
        Raw::I32(v) => v == 0,
        Raw::I64(v) => v == 0,
        Raw::U32(v) => v == 0,
        Raw::U64(v) => v == 0,
        Raw::F32(v) => v == 0.0,
        Raw::F64(v) => v == 0.0,
        Raw::Bool(v) => !v,
        Raw::Str(v) => v.is_empty(),
        Raw::Bytes(v) => v.is_empty(),
        Raw::Enum(v) => matches!(zero(plan, kind), Raw::Enum(d) if d == v),
    }
}

/// A scalar as prost-reflect's protojson writes it (64-bit integers as strings).
pub(super) fn scalar_json(plan: &Plan, kind: Scalar, raw: Raw<'_>) -> Value {
    match raw {
        Raw::I32(v) => Value::from(v),
        Raw::U32(v) => Value::from(v),
        Raw::I64(v) => Value::String(v.to_string()),
        Raw::U64(v) => Value::String(v.to_string()),
        Raw::F32(v) if v.is_finite() => Value::from(v),
        Raw::F64(v) if v.is_finite() => Value::from(v),
        Raw::F32(v) => non_finite(v.is_nan(), v > 0.0),
        Raw::F64(v) => non_finite(v.is_nan(), v > 0.0),
        Raw::Bool(v) => Value::Bool(v),
        Raw::Str(v) => Value::String(v.to_owned()),
        Raw::Bytes(v) => Value::String(BASE64_STANDARD.encode(v)),
        Raw::Enum(number) => {
            let plan = match kind {
                Scalar::Enum(e) => plan.enums.get(e),
                _ => None,
            };
            enum_json(plan, number)
        }
    }
}

fn non_finite(nan: bool, positive: bool) -> Value {
    Value::String(
        match (nan, positive) {
            (true, _) => "NaN",
            (false, true) => "Infinity",
            (false, false) => "-Infinity",
        }
        .to_owned(),
    )
}

fn enum_json(plan: Option<&EnumPlan>, number: i32) -> Value {
    match plan {
        Some(plan) if plan.null_value => Value::Null,
        Some(plan) => plan.name(number).map_or_else(
            || Value::from(number),
            |name| Value::String(name.to_owned()),
        ),
        None => Value::from(number),
    }
}

/// A map key as prost-reflect writes it (`collect_str`).
fn key_text(raw: Raw<'_>) -> Option<String> {
    Some(match raw {
        Raw::I32(v) => v.to_string(),
        Raw::I64(v) => v.to_string(),
        Raw::U32(v) => v.to_string(),
        Raw::U64(v) => v.to_string(),
        Raw::Bool(v) => v.to_string(),
        Raw::Str(v) => v.to_owned(),
        _ => return None,
    })
}

/// The message `m` from `bytes`, in the canonical shape, or `None`.
pub(super) fn message(ctx: Ctx<'_>, m: usize, bytes: &[u8], depth: usize) -> Option<Value> {
    let plan = ctx.plan.messages.get(m)?;
    if plan.unsupported || depth > MAX_DEPTH {
        return None;
    }
    if let Some(wkt) = plan.wkt {
        if ctx.validating {
            // The old path fails on a well-known type's content only when writing it.
            let slots = scan(ctx, plan, bytes, depth)?;
            for (field, slot) in plan.fields.iter().zip(&slots) {
                check_messages(ctx, field, slot, depth)?;
            }
            return Some(Value::Null);
        }
        return well_known(ctx, wkt, plan, bytes, depth);
    }
    let slots = scan_cleared(ctx, plan, bytes, depth)?;
    let mut out = Map::with_capacity(slots.iter().filter(|s| !matches!(s, Slot::Empty)).count());
    for (field, slot) in plan.fields.iter().zip(slots) {
        if let Some(value) = field_json(ctx, field, slot, depth)? {
            put(ctx, &mut out, field, value);
        }
    }
    Some(Value::Object(out))
}

/// The concatenation of a merged message's occurrences (allocated only then), which the
/// wire format defines as their merge, provided each is well framed on its own (prost reads
/// each alone: a field cut at the end of one must not be completed by the next).
pub(super) fn merged(slices: &[&[u8]]) -> Option<Vec<u8>> {
    for slice in slices {
        let mut r = Reader::new(slice);
        while !r.is_empty() {
            let (_, wire_type) = r.key()?;
            r.skip(wire_type)?;
        }
    }
    Some(slices.concat())
}

impl<'a> Slot<'a> {
    /// A singular message's bytes: as they came when seen once, else [`merged`]. `None` for
    /// another slot, or occurrences that do not merge.
    pub(super) fn message_bytes(&self) -> Option<Cow<'a, [u8]>> {
        match self {
            Slot::Msg(bytes) => Some(Cow::Borrowed(*bytes)),
            Slot::Msgs(slices) => merged(slices).map(Cow::Owned),
            _ => None,
        }
    }
}

/// Decodes, for its errors only, what the old path decodes then clears.
pub(super) fn check_messages(
    ctx: Ctx<'_>,
    field: &FieldPlan,
    slot: &Slot<'_>,
    depth: usize,
) -> Option<()> {
    let ctx = Ctx {
        validating: true,
        ..ctx
    };
    if let (Ty::Message(m), Shape::Single, Slot::Msg(_) | Slot::Msgs(_)) =
        (field.ty, field.shape, slot)
    {
        message(ctx, m, &slot.message_bytes()?, depth + 1)?;
    }
    Some(())
}

/// A field's JSON: `Some(None)` when it is not written.
pub(super) fn field_json(
    ctx: Ctx<'_>,
    field: &FieldPlan,
    slot: Slot<'_>,
    depth: usize,
) -> Option<Option<Value>> {
    Some(match (slot, field.shape, field.ty) {
        (Slot::One(raw), Shape::Single, Ty::Scalar(kind)) => {
            (field.presence || ctx.emit_defaults || !is_zero(ctx.plan, kind, raw))
                .then(|| scalar_json(ctx.plan, kind, raw))
        }
        (Slot::Empty, Shape::Single, Ty::Scalar(kind)) => (!field.presence && ctx.emit_defaults)
            .then(|| scalar_json(ctx.plan, kind, zero(ctx.plan, kind))),
        (slot @ (Slot::Msg(_) | Slot::Msgs(_)), Shape::Single, Ty::Message(m)) => {
            Some(message(ctx, m, &slot.message_bytes()?, depth + 1)?)
        }
        (Slot::Empty, Shape::Single, Ty::Message(_)) => None,
        (Slot::List(items), Shape::List { .. }, _) => {
            (ctx.emit_defaults || !items.is_empty()).then_some(Value::Array(items))
        }
        (Slot::Empty, Shape::List { .. }, _) => ctx.emit_defaults.then(|| Value::Array(Vec::new())),
        // In the order of the wire (see the module).
        (Slot::Map(entries), Shape::Map { .. }, _) => (ctx.emit_defaults || !entries.is_empty())
            .then(|| Value::Object(entries.into_iter().collect())),
        (Slot::Empty, Shape::Map { .. }, _) => ctx.emit_defaults.then(|| Value::Object(Map::new())),
        _ => return None,
    })
}

fn put(ctx: Ctx<'_>, out: &mut Map<String, Value>, field: &FieldPlan, value: Value) {
    let names = usize::from(ctx.json_names);
    let key = field.key.get(names).cloned().unwrap_or_default();
    match field.oneof {
        Some(_) => {
            let mut wrapped = Map::with_capacity(2);
            wrapped.insert("case".to_owned(), Value::String(key));
            wrapped.insert("value".to_owned(), value);
            let oneof_key = field.oneof_key.get(names).cloned().unwrap_or_default();
            out.insert(oneof_key, Value::Object(wrapped));
        }
        None => {
            out.insert(key, value);
        }
    }
}

/// [`scan`], then the omitted fields cleared (after a decode that must still succeed).
pub(super) fn scan_cleared<'a>(
    ctx: Ctx<'_>,
    plan: &MessagePlan,
    bytes: &'a [u8],
    depth: usize,
) -> Option<Vec<Slot<'a>>> {
    let mut slots = scan(ctx, plan, bytes, depth)?;
    for (field, slot) in plan.fields.iter().zip(slots.iter_mut()) {
        if field.omitted {
            check_messages(ctx, field, &std::mem::take(slot), depth)?;
        }
    }
    Some(slots)
}

/// The slots of a message's fields, in the plan's order, with prost-reflect's rules: the
/// last singular scalar wins, singular messages merge, a oneof member clears the others.
pub(super) fn scan<'a>(
    ctx: Ctx<'_>,
    plan: &MessagePlan,
    bytes: &'a [u8],
    depth: usize,
) -> Option<Vec<Slot<'a>>> {
    let mut slots: Vec<Slot<'a>> = Vec::with_capacity(plan.fields.len());
    slots.resize_with(plan.fields.len(), Slot::default);
    let mut oneofs: Vec<Option<usize>> = vec![None; plan.oneofs.len()];
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let (number, wire_type) = r.key()?;
        let Some(index) = plan.field(number) else {
            if plan.extensions.binary_search(&number).is_ok() {
                return None;
            }
            r.skip(wire_type)?;
            continue;
        };
        let field = plan.fields.get(index)?;
        if field.group {
            return None;
        }
        if let Some(oneof) = field.oneof {
            let current = oneofs.get_mut(oneof)?;
            if let Some(previous) = *current
                && previous != index
            {
                // Cleared, after a decode that must still succeed.
                let cleared = std::mem::take(slots.get_mut(previous)?);
                check_messages(ctx, plan.fields.get(previous)?, &cleared, depth)?;
            }
            *current = Some(index);
        }
        let slot = slots.get_mut(index)?;
        // What an omitted field holds is decoded for its errors only.
        let ctx = Ctx {
            validating: ctx.validating || field.omitted,
            ..ctx
        };
        match (field.shape, field.ty) {
            (Shape::Single, Ty::Scalar(kind)) => {
                *slot = Slot::One(read_scalar(&mut r, kind, wire_type)?);
            }
            (Shape::Single, Ty::Message(_)) => {
                if wire_type != LEN {
                    return None;
                }
                let bytes = r.len_delimited()?;
                *slot = match std::mem::take(slot) {
                    Slot::Empty => Slot::Msg(bytes),
                    Slot::Msg(first) => Slot::Msgs(vec![first, bytes]),
                    Slot::Msgs(mut all) => {
                        all.push(bytes);
                        Slot::Msgs(all)
                    }
                    _ => return None,
                };
            }
            (Shape::List { .. }, ty) => {
                if !matches!(slot, Slot::List(_)) {
                    *slot = Slot::List(Vec::new());
                }
                let Slot::List(items) = slot else {
                    return None;
                };
                match ty {
                    Ty::Scalar(kind) if wire_type == LEN && kind.packable() => {
                        let mut packed = Reader::new(r.len_delimited()?);
                        let element_wire = wire_of(kind);
                        while !packed.is_empty() {
                            let raw = read_scalar(&mut packed, kind, element_wire)?;
                            items.push(scalar_json(ctx.plan, kind, raw));
                        }
                    }
                    Ty::Scalar(kind) => {
                        let raw = read_scalar(&mut r, kind, wire_type)?;
                        items.push(scalar_json(ctx.plan, kind, raw));
                    }
                    Ty::Message(m) => {
                        if wire_type != LEN {
                            return None;
                        }
                        let bytes = r.len_delimited()?;
                        items.push(message(ctx, m, bytes, depth + 1)?);
                    }
                }
            }
            (Shape::Map { key, value, .. }, _) => {
                if wire_type != LEN {
                    return None;
                }
                let bytes = r.len_delimited()?;
                let (key, value) = map_entry(ctx, Scalar::Kind(key), value, bytes, depth)?;
                if !matches!(slot, Slot::Map(_)) {
                    *slot = Slot::Map(Vec::new());
                }
                let Slot::Map(entries) = slot else {
                    return None;
                };
                // A key seen again keeps its place and takes the later value when the
                // object is made (`Map::insert`).
                entries.push((key, value));
            }
        }
    }
    Some(slots)
}

/// One map entry: its key's text and its value's JSON (a missing key or value is default).
pub(super) fn map_entry(
    ctx: Ctx<'_>,
    key_kind: Scalar,
    value_ty: Ty,
    bytes: &[u8],
    depth: usize,
) -> Option<(String, Value)> {
    let mut key = zero(ctx.plan, key_kind);
    let mut value: Option<Raw<'_>> = None;
    let mut value_messages: Vec<&[u8]> = Vec::new();
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let (number, wire_type) = r.key()?;
        match (number, value_ty) {
            (1, _) => key = read_scalar(&mut r, key_kind, wire_type)?,
            (2, Ty::Scalar(kind)) => value = Some(read_scalar(&mut r, kind, wire_type)?),
            (2, Ty::Message(_)) => {
                if wire_type != LEN {
                    return None;
                }
                value_messages.push(r.len_delimited()?);
            }
            _ => r.skip(wire_type)?,
        }
    }
    let value = match value_ty {
        Ty::Scalar(kind) => scalar_json(ctx.plan, kind, value.unwrap_or(zero(ctx.plan, kind))),
        Ty::Message(m) => match value_messages.as_slice() {
            [] => message(ctx, m, &[], depth + 1)?,
            [one] => message(ctx, m, one, depth + 1)?,
            many => message(ctx, m, &merged(many)?, depth + 1)?,
        },
    };
    Some((key_text(key)?, value))
}

// The well-known types.

fn well_known(
    ctx: Ctx<'_>,
    wkt: Wkt,
    plan: &MessagePlan,
    bytes: &[u8],
    depth: usize,
) -> Option<Value> {
    match wkt {
        // The payload's type is resolved through the pool (and the server's union pool).
        Wkt::Any => None,
        Wkt::Struct => decode_struct(ctx, plan, bytes, depth),
        Wkt::ListValue => {
            let mut slots = scan_cleared(ctx, plan, bytes, depth)?;
            let slot = plan
                .field(number::LIST_VALUES)
                .and_then(|index| slots.get_mut(index));
            match slot.map(std::mem::take) {
                Some(Slot::List(items)) => Some(Value::Array(items)),
                None | Some(Slot::Empty) => Some(Value::Array(Vec::new())),
                _ => None,
            }
        }
        _ => {
            let slots = scan_cleared(ctx, plan, bytes, depth)?;
            let at = |number: u32| plan.field(number).and_then(|index| slots.get(index));
            match wkt {
                Wkt::Timestamp | Wkt::Duration => {
                    let seconds = match at(1) {
                        Some(Slot::One(Raw::I64(v))) => *v,
                        None | Some(Slot::Empty) => 0,
                        _ => return None,
                    };
                    let nanos = match at(2) {
                        Some(Slot::One(Raw::I32(v))) => *v,
                        None | Some(Slot::Empty) => 0,
                        _ => return None,
                    };
                    well_known::time_to_json(wkt, seconds, nanos).map(Value::String)
                }
                Wkt::FieldMask => {
                    let mut out = String::new();
                    if let Some(Slot::List(paths)) = at(number::FIELD_MASK_PATHS) {
                        for path in paths {
                            let Value::String(path) = path else {
                                return None;
                            };
                            if !out.is_empty() {
                                out.push(',');
                            }
                            well_known::field_mask_path_to_json(path, &mut out)?;
                        }
                    }
                    Some(Value::String(out))
                }
                Wkt::Wrapper => {
                    let field = plan.fields.first()?;
                    let Ty::Scalar(kind) = field.ty else {
                        return None;
                    };
                    let raw = match at(number::WRAPPER_VALUE) {
                        Some(Slot::One(raw)) => *raw,
                        None | Some(Slot::Empty) => zero(ctx.plan, kind),
                        _ => return None,
                    };
                    // `serialize_f32`/`serialize_f64` directly: NaN and infinities are null.
                    Some(match raw {
                        Raw::F32(v) => Value::from(v),
                        Raw::F64(v) => Value::from(v),
                        other => scalar_json(ctx.plan, kind, other),
                    })
                }
                Wkt::Empty => Some(Value::Object(Map::new())),
                Wkt::Value => value_kind(ctx, plan, &slots, depth),
                Wkt::Any | Wkt::Struct | Wkt::ListValue => None,
            }
        }
    }
}

/// `google.protobuf.Value`: its `kind` member (the scan kept the last one).
fn value_kind(ctx: Ctx<'_>, plan: &MessagePlan, slots: &[Slot<'_>], depth: usize) -> Option<Value> {
    for (field, slot) in plan.fields.iter().zip(slots) {
        let value = match (field.number, slot) {
            (_, Slot::Empty) => continue,
            (number::NULL_VALUE, Slot::One(_)) => Value::Null,
            (number::NUMBER_VALUE, Slot::One(Raw::F64(n))) => integral(*n)?,
            (number::STRING_VALUE, Slot::One(Raw::Str(text))) => Value::String((*text).to_owned()),
            (number::BOOL_VALUE, Slot::One(Raw::Bool(flag))) => Value::Bool(*flag),
            (number::STRUCT_VALUE | number::LIST_VALUE, Slot::Msg(_) | Slot::Msgs(_)) => {
                match field.ty {
                    Ty::Message(m) => message(ctx, m, &slot.message_bytes()?, depth + 1)?,
                    Ty::Scalar(_) => return None,
                }
            }
            _ => return None,
        };
        return Some(value);
    }
    Some(Value::Null)
}

/// A `Value` number: non-finite ones fail the old path; integral ones a double holds
/// exactly are written as integers.
fn integral(number: f64) -> Option<Value> {
    if !number.is_finite() {
        return None;
    }
    // `whole` stops at 2^53, so the `i64` holds it.
    Some(whole(number).map_or_else(|| Value::from(number), |n| Value::from(n as i64)))
}

/// `google.protobuf.Struct`: prost_types holds its fields in a `BTreeMap`, so they are
/// written sorted by key, the last of equal keys winning.
fn decode_struct(ctx: Ctx<'_>, plan: &MessagePlan, bytes: &[u8], depth: usize) -> Option<Value> {
    let field = plan.fields.first()?;
    let Shape::Map {
        key: ScalarKind::String,
        value: value_ty @ Ty::Message(_),
        ..
    } = field.shape
    else {
        return None;
    };
    let key_kind = Scalar::Kind(ScalarKind::String);
    // Omitted: decoded for its errors only, written empty.
    let ctx = Ctx {
        validating: ctx.validating || field.omitted,
        ..ctx
    };
    let mut fields = BTreeMap::new();
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let (number, wire_type) = r.key()?;
        if number == field.number {
            if wire_type != LEN {
                return None;
            }
            let entry = r.len_delimited()?;
            let (key, value) = super::message::map_entry(ctx, key_kind, value_ty, entry, depth)?;
            if !field.omitted {
                fields.insert(key, value);
            }
        } else {
            r.skip(wire_type)?;
        }
    }
    Some(Value::Object(fields.into_iter().collect()))
}
