//! A call's arguments as JSON text → protobuf bytes in one pass: no `serde_json::Value`, no
//! `DynamicMessage`.
//!
//! serde's streaming deserializer walks the borrowed text; each value is checked as the input
//! schema asks ([`checks`]) and written as the one-pass encoder ([`fast_from_json`]) writes
//! it, scalars through the very same functions. Fields are written in the order they come and
//! put in field-number order when a message ends, as prost-reflect writes them.
//!
//! It answers only for arguments it is sure of: canonical values the schema accepts, of the
//! kinds it knows. Anything else — a loose form, an unknown or aliased key, `null`, a oneof not
//! written `{"case": …, "value": …}` in that order, an `Any` or a JSON-valued well-known type
//! (`Struct`, `Value`, `ListValue`), a number with a fraction for an integer, a value out of
//! range, a key given twice, nesting past the limit — gives `None`, and the call takes the
//! whole way (normalise, validate, encode), which also words the errors. So a `Some` is always
//! what the whole way gives; a differential test (`e2e/tests/transcode_arguments.rs`) holds it
//! to that.
//!
//! [`fast_from_json`]: super::fast_from_json

mod checks;
mod oneof;
mod packed;
mod well_known;

use prost::encoding::{WireType, encode_key, encode_varint};
use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use self::checks::{Check, Prop};
use self::oneof::OneofSeed;
use self::packed::PackedSeed;
use self::well_known::WktTextSeed;
use super::fast_from_json::{
    MAP_KEY, MAP_VALUE, MAX_DEPTH, close, open,
    plan::{EncodePlan, FieldPlan, KeyMap, Scalar, Shape, ValueKind},
    scalar_raw, text_raw, wire_type,
};

pub(crate) use self::checks::TextChecks;

/// The field of a wrapper's scalar (`google/protobuf/wrappers.proto`).
const WRAPPER_VALUE: u32 = 1;

/// Exactly the bytes the whole way gives for the arguments `text` (a JSON object), or `None`
/// when this encoder is not sure of them. Containers deeper than `max_depth` give `None`.
pub(crate) fn encode(
    plan: &EncodePlan,
    checks: &TextChecks,
    text: &str,
    max_depth: usize,
) -> Option<Vec<u8>> {
    let mut encoder = Encoder {
        plan,
        checks,
        buf: Vec::with_capacity(text.len().min(4096)),
        fields: Vec::with_capacity(32),
        scratch: Vec::new(),
        depth: 0,
        max_depth: max_depth.min(MAX_DEPTH),
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer
        .deserialize_map(MessageSeed {
            encoder: &mut encoder,
            check: 0,
        })
        .ok()?;
    deserializer.end().ok()?;
    Some(encoder.buf)
}

struct Encoder<'p> {
    plan: &'p EncodePlan,
    checks: &'p TextChecks,
    buf: Vec<u8>,
    /// (field index, start, end) of the fields written of the messages open, in text order.
    fields: Vec<(usize, usize, usize)>,
    /// Where a message's fields are put in order.
    scratch: Vec<u8>,
    depth: usize,
    max_depth: usize,
}

/// The error that sends a call the whole way; its text is never shown.
fn whole_way<E: de::Error>() -> E {
    E::custom("left to the whole way")
}

static UNSUPPORTED: Check = Check::Unsupported;

impl<'p> Encoder<'p> {
    fn check(&self, index: usize) -> &'p Check {
        let checks: &'p TextChecks = self.checks;
        checks.checks.get(index).unwrap_or(&UNSUPPORTED)
    }

    fn enter<E: de::Error>(&mut self) -> Result<(), E> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(whole_way());
        }
        Ok(())
    }

    /// Puts the fields written since `mark` in field-number order, refusing one given twice.
    fn order<E: de::Error>(&mut self, mark: usize) -> Result<(), E> {
        let fields = self.fields.get_mut(mark..).ok_or_else(whole_way)?;
        if fields.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return Ok(());
        }
        let Some(&(_, from, _)) = fields.first() else {
            return Ok(());
        };
        fields.sort_unstable_by_key(|field| field.0);
        if fields.windows(2).any(|pair| pair[0].0 == pair[1].0) {
            return Err(whole_way());
        }
        self.scratch.clear();
        self.scratch
            .extend_from_slice(self.buf.get(from..).ok_or_else(whole_way)?);
        self.buf.truncate(from);
        for &(_, start, end) in fields.iter() {
            let bytes = self
                .scratch
                .get(start - from..end - from)
                .ok_or_else(whole_way)?;
            self.buf.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// A scalar with its key; an implicit-presence default is left out.
    fn scalar<E: de::Error>(
        &mut self,
        number: u32,
        kind: Scalar,
        presence: bool,
        value: &Value,
    ) -> Result<(), E> {
        self.scalar_with(number, kind, presence, |buf| scalar_raw(buf, kind, value))
    }

    /// A scalar with its key, its value written by `write` (which says whether it was the
    /// default); an implicit-presence default is left out.
    fn scalar_with<E: de::Error>(
        &mut self,
        number: u32,
        kind: Scalar,
        presence: bool,
        write: impl FnOnce(&mut Vec<u8>) -> Option<bool>,
    ) -> Result<(), E> {
        let key_at = self.buf.len();
        encode_key(number, wire_type(kind), &mut self.buf);
        let is_default = write(&mut self.buf).ok_or_else(whole_way)?;
        if is_default && !presence {
            self.buf.truncate(key_at);
        }
        Ok(())
    }
}

/// A message's body, from a JSON object.
struct MessageSeed<'e, 'p> {
    encoder: &'e mut Encoder<'p>,
    check: usize,
}

impl<'de> DeserializeSeed<'de> for MessageSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MessageSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let encoder = self.encoder;
        let checks = encoder.checks;
        let plan = encoder.plan;
        let Some(Check::Message {
            message,
            props,
            required,
        }) = checks.checks.get(self.check)
        else {
            return Err(whole_way());
        };
        let fields = &plan.messages.get(*message).ok_or_else(whole_way)?.fields;
        encoder.enter()?;
        let mark = encoder.fields.len();
        while let Some(prop) = map.next_key_seed(KeySeed { props })? {
            let start = encoder.buf.len();
            let index = if let Check::Oneof(members) = encoder.check(prop.check) {
                map.next_value_seed(OneofSeed {
                    encoder: &mut *encoder,
                    fields,
                    members,
                })?
            } else {
                let field = fields.get(prop.field).ok_or_else(whole_way)?;
                map.next_value_seed(FieldSeed {
                    encoder: &mut *encoder,
                    field,
                    check: prop.check,
                })?;
                prop.field
            };
            let end = encoder.buf.len();
            encoder.fields.push((index, start, end));
        }
        encoder.order(mark)?;
        let given = encoder.fields.get(mark..).unwrap_or_default();
        if !required
            .iter()
            .all(|fields| given.iter().any(|(index, _, _)| fields.contains(index)))
        {
            return Err(whole_way());
        }
        encoder.fields.truncate(mark);
        encoder.depth -= 1;
        Ok(())
    }
}

/// A property key: the property of the message it names, or the whole way.
struct KeySeed<'c> {
    props: &'c KeyMap<Prop>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Prop;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Prop, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Prop;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a property name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Prop, E> {
        self.props.get(key).copied().ok_or_else(whole_way)
    }
}

/// One field's value: a single value, a list or a map.
struct FieldSeed<'e, 'p, 'f> {
    encoder: &'e mut Encoder<'p>,
    field: &'f FieldPlan,
    check: usize,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let field = self.field;
        match &field.shape {
            Shape::Single => ValueSeed {
                encoder: self.encoder,
                number: field.number,
                kind: &field.kind,
                presence: field.presence,
                check: self.check,
            }
            .deserialize(deserializer),
            Shape::List { .. } => deserializer.deserialize_seq(self),
            Shape::Map { .. } => deserializer.deserialize_map(self),
        }
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list or a map")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let encoder = self.encoder;
        let field = self.field;
        let (Shape::List { packed }, Some(&Check::List { items })) =
            (&field.shape, encoder.checks.checks.get(self.check))
        else {
            return Err(whole_way());
        };
        encoder.enter()?;
        if *packed {
            let key_at = encoder.buf.len();
            encode_key(field.number, WireType::LengthDelimited, &mut encoder.buf);
            let start = open(&mut encoder.buf);
            let mut count = 0usize;
            while seq
                .next_element_seed(PackedSeed {
                    encoder: &mut *encoder,
                    kind: &field.kind,
                    check: items,
                })?
                .is_some()
            {
                count += 1;
            }
            if count == 0 {
                encoder.buf.truncate(key_at);
            } else {
                close(&mut encoder.buf, start).ok_or_else(whole_way)?;
            }
        } else {
            while seq
                .next_element_seed(ValueSeed {
                    encoder: &mut *encoder,
                    number: field.number,
                    kind: &field.kind,
                    presence: true,
                    check: items,
                })?
                .is_some()
            {}
        }
        encoder.depth -= 1;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let encoder = self.encoder;
        let field = self.field;
        let (
            Shape::Map {
                key_presence,
                value,
                value_presence,
                ..
            },
            Some(&Check::Map { values }),
        ) = (&field.shape, encoder.checks.checks.get(self.check))
        else {
            return Err(whole_way());
        };
        encoder.enter()?;
        // A key given twice is one entry to the whole way (the last value): left to it.
        let mut keys: Vec<std::borrow::Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            encode_key(field.number, WireType::LengthDelimited, &mut encoder.buf);
            let start = open(&mut encoder.buf);
            if *key_presence || !key.is_empty() {
                encode_key(MAP_KEY, WireType::LengthDelimited, &mut encoder.buf);
                encode_varint(key.len() as u64, &mut encoder.buf);
                encoder.buf.extend_from_slice(key.as_bytes());
            }
            map.next_value_seed(ValueSeed {
                encoder: &mut *encoder,
                number: MAP_VALUE,
                kind: value,
                presence: *value_presence,
                check: values,
            })?;
            close(&mut encoder.buf, start).ok_or_else(whole_way)?;
            keys.push(key);
        }
        keys.sort_unstable();
        if keys.windows(2).any(|pair| pair[0] == pair[1]) {
            return Err(whole_way());
        }
        encoder.depth -= 1;
        Ok(())
    }
}

/// One value with its key: a scalar, an enum or a message.
struct ValueSeed<'e, 'p, 'k> {
    encoder: &'e mut Encoder<'p>,
    number: u32,
    kind: &'k ValueKind,
    presence: bool,
    check: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        match self.kind {
            ValueKind::Message(_) => {
                let encoder = self.encoder;
                let check = encoder.check(self.check);
                encode_key(self.number, WireType::LengthDelimited, &mut encoder.buf);
                let start = open(&mut encoder.buf);
                match *check {
                    Check::WktText { message, pattern } => {
                        deserializer.deserialize_str(WktTextSeed {
                            encoder: &mut *encoder,
                            message,
                            pattern,
                        })?;
                    }
                    // The wrapped scalar as a field of its own (`value`, 1), a default left out.
                    Check::Wrapper { message, value } => {
                        let plan = encoder.plan;
                        let wrapped = plan.messages.get(message).and_then(|m| m.wrapped);
                        let kind = ValueKind::Scalar(wrapped.ok_or_else(whole_way)?);
                        ValueSeed {
                            encoder: &mut *encoder,
                            number: WRAPPER_VALUE,
                            kind: &kind,
                            presence: false,
                            check: value,
                        }
                        .deserialize(deserializer)?;
                    }
                    _ => deserializer.deserialize_map(MessageSeed {
                        encoder: &mut *encoder,
                        check: self.check,
                    })?,
                }
                close(&mut encoder.buf, start).ok_or_else(whole_way)
            }
            ValueKind::Enum { .. } => deserializer.deserialize_str(self),
            ValueKind::Scalar(_) => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a scalar")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        match (self.kind, self.encoder.check(self.check)) {
            (ValueKind::Scalar(kind), Check::Bool) => {
                self.encoder
                    .scalar(self.number, *kind, self.presence, &Value::Bool(value))
            }
            _ => Err(whole_way()),
        }
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.number_value(i128::from(value), Number::from(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.number_value(i128::from(value), Number::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        // A fraction or an exponent: only a `number` takes it as it came.
        match (self.kind, self.encoder.check(self.check)) {
            (ValueKind::Scalar(kind), Check::Number) => {
                let number = Number::from_f64(value).ok_or_else(whole_way)?;
                self.encoder
                    .scalar(self.number, *kind, self.presence, &Value::Number(number))
            }
            _ => Err(whole_way()),
        }
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        let encoder = self.encoder;
        let check = encoder.check(self.check);
        match self.kind {
            ValueKind::Enum { default, .. } => {
                let n = check.enum_number(self.kind, text).ok_or_else(whole_way)?;
                if self.presence || n != *default {
                    encode_key(self.number, WireType::Varint, &mut encoder.buf);
                    encode_varint(i64::from(n) as u64, &mut encoder.buf);
                }
                Ok(())
            }
            ValueKind::Scalar(kind @ (Scalar::String | Scalar::Bytes))
                if matches!(check, Check::Str { digits: None }) =>
            {
                encoder.scalar_with(self.number, *kind, self.presence, |buf| {
                    text_raw(buf, *kind, text)
                })
            }
            // 64-bit integers, written as the number their decimal text stands for.
            ValueKind::Scalar(kind) => {
                let number = check.digits_number(*kind, text).ok_or_else(whole_way)?;
                encoder.scalar(self.number, *kind, self.presence, &Value::Number(number))
            }
            ValueKind::Message(_) => Err(whole_way()),
        }
    }
}

impl ValueSeed<'_, '_, '_> {
    /// A JSON integer, for a check that takes it.
    fn number_value<E: de::Error>(self, exact: i128, number: Number) -> Result<(), E> {
        let ValueKind::Scalar(kind) = self.kind else {
            return Err(whole_way());
        };
        if !self.encoder.check(self.check).takes_integer(exact) {
            return Err(whole_way());
        }
        self.encoder
            .scalar(self.number, *kind, self.presence, &Value::Number(number))
    }
}
