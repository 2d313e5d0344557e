//! A random `DynamicMessage` of any type, driven by its descriptor: every field kind,
//! repeated fields, maps, oneofs, nested messages to a depth limit, enum values (undefined
//! numbers too), edge numbers (0, negatives, extremes, NaN, ±inf), unicode and empty
//! strings, valid Timestamp/Duration ranges, FieldMask paths, Struct/Value trees, and `Any`
//! holding a random packed message of the pool.

use prost::Message as _;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage as _, Value,
};
use test_kit::Rng;

/// Nesting limit of the generated messages.
pub(super) const MAX_DEPTH: usize = 4;

/// A random message of type `desc`.
pub(super) fn random_message(desc: &MessageDescriptor, rng: &mut Rng) -> DynamicMessage {
    message(desc, rng, 0)
}

fn message(desc: &MessageDescriptor, rng: &mut Rng, depth: usize) -> DynamicMessage {
    let mut out = DynamicMessage::new(desc.clone());
    match desc.full_name() {
        "google.protobuf.Timestamp" => {
            let seconds = match rng.below(4) {
                0 => -62_135_596_800,
                1 => 253_402_300_799,
                2 => 0,
                _ => (rng.next() % 253_402_300_799) as i64 - 62_135_596_800 / 2,
            };
            set_i64_i32(&mut out, seconds, nanos(rng));
            return out;
        }
        "google.protobuf.Duration" => {
            let seconds = (rng.next() % 315_576_000_001) as i64;
            let (seconds, nanos) = if rng.chance(50) {
                (-seconds, -nanos(rng))
            } else {
                (seconds, nanos(rng))
            };
            set_i64_i32(&mut out, seconds, nanos);
            return out;
        }
        "google.protobuf.FieldMask" => {
            let words = [
                "a",
                "foo_bar",
                "x.y_z",
                "one_two.three",
                "abc1",
                "Bad",
                "a__b",
            ];
            let paths: Vec<Value> = (0..rng.below(4))
                .map(|_| Value::String((*rng.pick(&words)).to_owned()))
                .collect();
            out.set_field_by_number(1, Value::List(paths));
            return out;
        }
        "google.protobuf.Value" => return json_value(desc, rng, depth),
        "google.protobuf.Any" => {
            if depth < MAX_DEPTH {
                let pool = desc.parent_pool();
                let candidates: Vec<_> =
                    pool.all_messages().filter(|m| !m.is_map_entry()).collect();
                if !candidates.is_empty() {
                    let payload_desc = rng.pick(&candidates).clone();
                    let payload = message(&payload_desc, rng, depth + 1);
                    out.set_field_by_number(
                        1,
                        Value::String(format!("type.googleapis.com/{}", payload_desc.full_name())),
                    );
                    out.set_field_by_number(2, Value::Bytes(payload.encode_to_vec().into()));
                }
            }
            return out;
        }
        _ => {}
    }
    for field in desc.fields() {
        if !rng.chance(60) {
            continue;
        }
        if let Some(value) = field_value(&field, rng, depth) {
            out.set_field(&field, value);
        }
    }
    out
}

fn nanos(rng: &mut Rng) -> i32 {
    match rng.below(3) {
        0 => 0,
        1 => 999_999_999,
        _ => (rng.next() % 1_000_000_000) as i32,
    }
}

fn set_i64_i32(out: &mut DynamicMessage, a: i64, b: i32) {
    out.set_field_by_number(1, Value::I64(a));
    out.set_field_by_number(2, Value::I32(b));
}

/// A `google.protobuf.Value` tree (numbers mostly finite).
fn json_value(desc: &MessageDescriptor, rng: &mut Rng, depth: usize) -> DynamicMessage {
    let mut out = DynamicMessage::new(desc.clone());
    let pick = if depth >= MAX_DEPTH {
        rng.below(5)
    } else {
        rng.below(7)
    };
    let pool = desc.parent_pool();
    match pick {
        0 => out.set_field_by_number(1, Value::EnumNumber(0)),
        1 => {
            let numbers = [
                0.0,
                -0.0,
                1.0,
                -3.0,
                0.5,
                1e300,
                9_007_199_254_740_993.0,
                f64::NAN,
            ];
            let number = if rng.chance(95) {
                *rng.pick(&numbers[..7])
            } else {
                f64::NAN
            };
            out.set_field_by_number(2, Value::F64(number));
        }
        2 => out.set_field_by_number(3, Value::String(string(rng))),
        3 => out.set_field_by_number(4, Value::Bool(rng.chance(50))),
        4 => {} // no kind: null
        5 => {
            if let Some(list_desc) = pool.get_message_by_name("google.protobuf.ListValue") {
                let mut list = DynamicMessage::new(list_desc);
                let items = (0..rng.below(4))
                    .map(|_| Value::Message(json_value(desc, rng, depth + 1)))
                    .collect();
                list.set_field_by_number(1, Value::List(items));
                out.set_field_by_number(6, Value::Message(list));
            }
        }
        _ => {
            if let Some(struct_desc) = pool.get_message_by_name("google.protobuf.Struct") {
                let mut object = DynamicMessage::new(struct_desc);
                let entries = (0..rng.below(4))
                    .map(|_| {
                        (
                            MapKey::String(string(rng)),
                            Value::Message(json_value(desc, rng, depth + 1)),
                        )
                    })
                    .collect();
                object.set_field_by_number(1, Value::Map(entries));
                out.set_field_by_number(5, Value::Message(object));
            }
        }
    }
    out
}

fn field_value(field: &FieldDescriptor, rng: &mut Rng, depth: usize) -> Option<Value> {
    let kind = field.kind();
    if field.is_map() {
        let Kind::Message(entry) = &kind else {
            return None;
        };
        let key_kind = entry.map_entry_key_field().kind();
        let value_field = entry.map_entry_value_field();
        // Mostly at most one entry: two or more are left to the old path.
        let count = match rng.below(10) {
            0..=2 => 0,
            3..=7 => 1,
            _ => 2 + rng.below(2),
        };
        let mut map = std::collections::HashMap::new();
        for _ in 0..count {
            let key = map_key(&key_kind, rng)?;
            let value = single(&value_field.kind(), rng, depth)?;
            map.insert(key, value);
        }
        return Some(Value::Map(map));
    }
    if field.is_list() {
        let items: Option<Vec<Value>> = (0..rng.below(4))
            .map(|_| single(&kind, rng, depth))
            .collect();
        return items.map(Value::List);
    }
    single(&kind, rng, depth)
}

fn map_key(kind: &Kind, rng: &mut Rng) -> Option<MapKey> {
    Some(match single(kind, rng, MAX_DEPTH)? {
        Value::Bool(v) => MapKey::Bool(v),
        Value::I32(v) => MapKey::I32(v),
        Value::I64(v) => MapKey::I64(v),
        Value::U32(v) => MapKey::U32(v),
        Value::U64(v) => MapKey::U64(v),
        Value::String(v) => MapKey::String(v),
        _ => return None,
    })
}

fn string(rng: &mut Rng) -> String {
    let picks = [
        "",
        "a",
        "héllo wörld",
        "😀 emoji",
        "\u{0}nul",
        "quote\"back\\slash",
        "日本語",
        "\n\t",
    ];
    if rng.chance(70) {
        (*rng.pick(&picks)).to_owned()
    } else {
        (0..rng.below(12))
            .map(|_| char::from(b' ' + (rng.next() % 95) as u8))
            .collect()
    }
}

fn single(kind: &Kind, rng: &mut Rng, depth: usize) -> Option<Value> {
    let r = rng.next();
    Some(match kind {
        Kind::Double => Value::F64(*rng.pick(&[
            0.0,
            -0.0,
            1.0,
            -2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1e21,
            0.1,
            f64::from_bits(r),
        ])),
        Kind::Float => Value::F32(*rng.pick(&[
            0.0,
            -0.0,
            1.0,
            -2.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
            0.1,
            16_777_217.0,
            f32::from_bits(r as u32),
        ])),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            Value::I32(*rng.pick(&[0, 1, -1, i32::MIN, i32::MAX, r as i32, (r % 1000) as i32]))
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Value::I64(*rng.pick(&[0, 1, -1, i64::MIN, i64::MAX, r as i64, (r % 1000) as i64]))
        }
        Kind::Uint32 | Kind::Fixed32 => {
            Value::U32(*rng.pick(&[0, 1, u32::MAX, r as u32, (r % 1000) as u32]))
        }
        Kind::Uint64 | Kind::Fixed64 => Value::U64(*rng.pick(&[0, 1, u64::MAX, r, r % 1000])),
        Kind::Bool => Value::Bool(r.is_multiple_of(2)),
        Kind::String => Value::String(string(rng)),
        Kind::Bytes => Value::Bytes(
            (0..rng.below(7))
                .map(|_| rng.next() as u8)
                .collect::<Vec<u8>>()
                .into(),
        ),
        Kind::Enum(desc) => {
            let values: Vec<i32> = desc.values().map(|v| v.number()).collect();
            if values.is_empty() || rng.chance(15) {
                Value::EnumNumber(*rng.pick(&[0, -1, 99_999, i32::MAX, i32::MIN]))
            } else {
                Value::EnumNumber(*rng.pick(&values))
            }
        }
        Kind::Message(desc) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            Value::Message(message(desc, rng, depth + 1))
        }
    })
}

/// A valid message holding an `Any` anywhere: the new decoder leaves it to the old path.
pub(super) const ANY: &str = "Any";

/// A valid message holding a map of two or more keys (not a `Struct`'s) anywhere: the old path
/// writes its keys in a `HashMap`'s order, which changes from call to call, so the answers are
/// compared as JSON, where the order of an object's keys does not count.
pub(super) const UNORDERED_MAP: &str = "map with two or more keys";

/// What in this (valid) message changes how the new decoder's answer is checked: [`ANY`]
/// first, else [`UNORDERED_MAP`], else nothing.
pub(super) fn old_path_reason(message: &DynamicMessage) -> Option<&'static str> {
    if holds(message, &|m, _| {
        m.descriptor().full_name() == "google.protobuf.Any"
    }) {
        return Some(ANY);
    }
    let multi_key_map = |m: &DynamicMessage, value: &Value| {
        matches!(value, Value::Map(entries) if entries.len() >= 2)
            && m.descriptor().full_name() != "google.protobuf.Struct"
    };
    holds(message, &multi_key_map).then_some(UNORDERED_MAP)
}

/// Whether `test` holds for `message` (with a null value) or for any message and field value
/// in it, at any depth.
fn holds(message: &DynamicMessage, test: &dyn Fn(&DynamicMessage, &Value) -> bool) -> bool {
    if test(message, &Value::Bool(false)) {
        return true;
    }
    message.fields().any(|(_, value)| {
        test(message, value)
            || match value {
                Value::Message(inner) => holds(inner, test),
                Value::List(items) => items
                    .iter()
                    .any(|item| matches!(item, Value::Message(inner) if holds(inner, test))),
                Value::Map(entries) => entries
                    .values()
                    .any(|item| matches!(item, Value::Message(inner) if holds(inner, test))),
                _ => false,
            }
    })
}
