//! The decoding of [`super::message`] written as JSON text, with no `serde_json::Value` for a
//! message, its singular scalars and its singular messages: byte for byte what
//! `serde_json::to_vec` writes of the `Value` that [`super::message::message`] gives.
//!
//! Lists, maps and well-known types are made as `Value`s by the same code as there and
//! written at once; a message whose keys can repeat is left to that path whole.

use base64::{Engine as _, prelude::BASE64_STANDARD};
use serde::Serialize;

use super::message::{
    Ctx, MAX_DEPTH, Raw, Slot, field_json, is_zero, message, scalar_json, scan_cleared,
};
use crate::plan::{FieldPlan, Plan, Scalar, Shape, Ty};

/// Writes the message `m` from `bytes` to `out`, or `None` where [`message`] gives `None`
/// (`out` then holds a part, to be thrown away).
pub(super) fn write_message(
    ctx: Ctx<'_>,
    m: usize,
    bytes: &[u8],
    depth: usize,
    out: &mut Vec<u8>,
) -> Option<()> {
    let plan = ctx.plan.messages.get(m)?;
    if plan.unsupported || depth > MAX_DEPTH {
        return None;
    }
    if plan.wkt.is_some() || !plan.distinct_keys[usize::from(ctx.json_names)] {
        return write_value(&message(ctx, m, bytes, depth)?, out);
    }
    let slots = scan_cleared(ctx, plan, bytes, depth)?;
    out.push(b'{');
    let mut first = true;
    for (field, slot) in plan.fields.iter().zip(slots) {
        match (slot, field.shape, field.ty) {
            (Slot::One(raw), Shape::Single, Ty::Scalar(kind)) => {
                if field.presence || ctx.emit_defaults || !is_zero(ctx.plan, kind, raw) {
                    open(ctx, field, &mut first, out)?;
                    write_scalar(ctx.plan, kind, raw, out)?;
                    close(field, out);
                }
            }
            (slot @ (Slot::Msg(_) | Slot::Msgs(_)), Shape::Single, Ty::Message(inner)) => {
                open(ctx, field, &mut first, out)?;
                write_message(ctx, inner, &slot.message_bytes()?, depth + 1, out)?;
                close(field, out);
            }
            (slot, ..) => {
                if let Some(value) = field_json(ctx, field, slot, depth)? {
                    open(ctx, field, &mut first, out)?;
                    write_value(&value, out)?;
                    close(field, out);
                }
            }
        }
    }
    out.push(b'}');
    Some(())
}

/// A field's key (a comma before it but for the first), and for a oneof member the opening of
/// its `{"case": …, "value": …}` object, up to the value.
fn open(ctx: Ctx<'_>, field: &FieldPlan, first: &mut bool, out: &mut Vec<u8>) -> Option<()> {
    if !std::mem::take(first) {
        out.push(b',');
    }
    let names = usize::from(ctx.json_names);
    match field.oneof {
        Some(_) => {
            write_value(field.oneof_key.get(names)?, out)?;
            out.extend_from_slice(b":{\"case\":");
            write_value(field.key.get(names)?, out)?;
            out.extend_from_slice(b",\"value\":");
        }
        None => {
            write_value(field.key.get(names)?, out)?;
            out.push(b':');
        }
    }
    Some(())
}

/// Closes what [`open`] opened after the value.
fn close(field: &FieldPlan, out: &mut Vec<u8>) {
    if field.oneof.is_some() {
        out.push(b'}');
    }
}

/// A scalar as [`scalar_json`] makes it, written; floats and enums go through it.
fn write_scalar(plan: &Plan, kind: Scalar, raw: Raw<'_>, out: &mut Vec<u8>) -> Option<()> {
    match raw {
        Raw::I32(v) => write_value(&v, out),
        Raw::U32(v) => write_value(&v, out),
        // As strings: the digits serde_json writes of the number, quoted.
        Raw::I64(v) => quoted(&v, out),
        Raw::U64(v) => quoted(&v, out),
        Raw::Bool(v) => {
            out.extend_from_slice(if v { b"true" } else { b"false" });
            Some(())
        }
        Raw::Str(v) => write_value(v, out),
        Raw::Bytes(v) => {
            // Standard base64 needs no escaping.
            out.push(b'"');
            let start = out.len();
            out.resize(start + v.len().div_ceil(3) * 4, 0);
            let written = BASE64_STANDARD
                .encode_slice(v, out.get_mut(start..)?)
                .ok()?;
            out.truncate(start + written);
            out.push(b'"');
            Some(())
        }
        Raw::F32(_) | Raw::F64(_) | Raw::Enum(_) => write_value(&scalar_json(plan, kind, raw), out),
    }
}

fn quoted<T: Serialize>(number: &T, out: &mut Vec<u8>) -> Option<()> {
    out.push(b'"');
    write_value(number, out)?;
    out.push(b'"');
    Some(())
}

/// `value` as `serde_json::to_writer` writes it.
fn write_value<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Option<()> {
    serde_json::to_writer(out, value).ok()
}
