//! The well-known types, as prost-reflect writes them (through `prost_types`), then
//! reshaped as the canonical pass does (`Struct`/`Value` integral numbers as integers).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::super::Wkt;
use super::super::scalar_kind::ScalarKind;
use super::decode::{Ctx, Raw, Slot, message, scalar_json, scan_cleared};
use super::plan::{MessagePlan, Scalar, Shape, Ty};
use super::wire::{LEN, Reader};

// prost-reflect's ranges (`check_timestamp`, `check_duration`).
const MAX_DURATION_SECONDS: u64 = 315_576_000_000;
const MAX_DURATION_NANOS: u32 = 999_999_999;
const MIN_TIMESTAMP_SECONDS: i64 = -62_135_596_800;
const MAX_TIMESTAMP_SECONDS: i64 = 253_402_300_799;

pub(super) fn decode(
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
            let slot = plan.field(1).and_then(|index| slots.get_mut(index));
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
                    Some(Value::String(if wkt == Wkt::Timestamp {
                        if !(MIN_TIMESTAMP_SECONDS..=MAX_TIMESTAMP_SECONDS).contains(&seconds) {
                            return None;
                        }
                        prost_types::Timestamp { seconds, nanos }.to_string()
                    } else {
                        if seconds.unsigned_abs() > MAX_DURATION_SECONDS
                            || nanos.unsigned_abs() > MAX_DURATION_NANOS
                        {
                            return None;
                        }
                        prost_types::Duration { seconds, nanos }.to_string()
                    }))
                }
                Wkt::FieldMask => {
                    let mut out = String::new();
                    if let Some(Slot::List(paths)) = at(1) {
                        for path in paths {
                            let Value::String(path) = path else {
                                return None;
                            };
                            if !out.is_empty() {
                                out.push(',');
                            }
                            for (index, part) in path.split('.').enumerate() {
                                if index > 0 {
                                    out.push('.');
                                }
                                snake_to_camel(&mut out, part)?;
                            }
                        }
                    }
                    Some(Value::String(out))
                }
                Wkt::Wrapper => {
                    let field = plan.fields.first()?;
                    let Ty::Scalar(kind) = field.ty else {
                        return None;
                    };
                    let raw = match at(1) {
                        Some(Slot::One(raw)) => *raw,
                        None | Some(Slot::Empty) => zero_of(kind)?,
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

fn zero_of(kind: Scalar) -> Option<Raw<'static>> {
    Some(match kind {
        Scalar::Kind(ScalarKind::Int32) => Raw::I32(0),
        Scalar::Kind(ScalarKind::Int64) => Raw::I64(0),
        Scalar::Kind(ScalarKind::Uint32) => Raw::U32(0),
        Scalar::Kind(ScalarKind::Uint64) => Raw::U64(0),
        Scalar::Kind(ScalarKind::Float) => Raw::F32(0.0),
        Scalar::Kind(ScalarKind::Double) => Raw::F64(0.0),
        Scalar::Kind(ScalarKind::Bool) => Raw::Bool(false),
        Scalar::Kind(ScalarKind::String) => Raw::Str(""),
        Scalar::Kind(ScalarKind::Bytes) => Raw::Bytes(&[]),
        _ => return None,
    })
}

/// `google.protobuf.Value`: its `kind` member (the scan kept the last one).
fn value_kind(ctx: Ctx<'_>, plan: &MessagePlan, slots: &[Slot<'_>], depth: usize) -> Option<Value> {
    for (field, slot) in plan.fields.iter().zip(slots) {
        let value = match (field.number, slot) {
            (_, Slot::Empty) => continue,
            (1, Slot::One(_)) => Value::Null,
            (2, Slot::One(Raw::F64(number))) => integral(*number)?,
            (3, Slot::One(Raw::Str(text))) => Value::String((*text).to_owned()),
            (4, Slot::One(Raw::Bool(flag))) => Value::Bool(*flag),
            (5 | 6, Slot::Msg(bytes)) => match field.ty {
                Ty::Message(m) => message(ctx, m, bytes, depth + 1)?,
                Ty::Scalar(_) => return None,
            },
            (5 | 6, Slot::Msgs(slices)) => match field.ty {
                Ty::Message(m) => message(ctx, m, &super::decode::merged(slices)?, depth + 1)?,
                Ty::Scalar(_) => return None,
            },
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
    Some(
        if number.fract() == 0.0 && number.abs() <= 9_007_199_254_740_992.0 {
            Value::from(number as i64)
        } else {
            Value::from(number)
        },
    )
}

/// `google.protobuf.Struct`: prost_types holds its fields in a `BTreeMap`, so they are
/// written sorted by key, the last of equal keys winning.
fn decode_struct(ctx: Ctx<'_>, plan: &MessagePlan, bytes: &[u8], depth: usize) -> Option<Value> {
    let field = plan.fields.first()?;
    let Shape::Map(key_kind @ Scalar::Kind(ScalarKind::String), value_ty @ Ty::Message(_)) =
        field.shape
    else {
        return None;
    };
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
            let (key, value) = super::decode::map_entry(ctx, key_kind, value_ty, entry, depth)?;
            if !field.omitted {
                fields.insert(key, value);
            }
        } else {
            r.skip(wire_type)?;
        }
    }
    Some(Value::Object(fields.into_iter().collect()))
}

/// prost-reflect's `snake_case_to_camel_case`: `None` where it fails.
fn snake_to_camel(out: &mut String, part: &str) -> Option<()> {
    let mut upper_next = false;
    for ch in part.chars() {
        if ch.is_ascii_uppercase() {
            return None;
        }
        if upper_next {
            let upper = ch.to_ascii_uppercase();
            if upper == ch {
                return None;
            }
            out.push(upper);
            upper_next = false;
        } else if ch == '_' {
            upper_next = true;
        } else {
            out.push(ch);
        }
    }
    Some(())
}
