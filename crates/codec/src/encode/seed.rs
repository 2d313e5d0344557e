//! The encoder's serde seeds: a message's body, its properties (a oneof's
//! `{"case": member, "value": …}` among them, read `case` first), a field's value (single, list
//! or map) and one value, each written as it is read and checked by its [`Check`].

use prost::encoding::{WireType, encode_key, encode_varint};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::checks::{Check, Prop};
use super::scalar::{Json, close, map_key, open, scalar_field, scalar_raw};
use super::well_known::{JsonSeed, WktTextSeed};
use super::{Encoder, MAP_VALUE, whole_way};
use crate::plan::{FieldPlan, KeyMap, Scalar, Shape, Ty};
use crate::well_known::number;

/// A message's body: its fields from a JSON object, or a well-known type's JSON form.
pub(super) struct BodySeed<'e, 'p> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) check: usize,
}

impl<'de> DeserializeSeed<'de> for BodySeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let encoder = self.encoder;
        match *encoder.check(self.check) {
            Check::WktText { wkt, pattern } => deserializer.deserialize_str(WktTextSeed {
                encoder,
                wkt,
                pattern,
            }),
            // The wrapped scalar as a field of its own (`value`, 1), a default left out.
            Check::Wrapper { message, value } => {
                let plan = encoder.plan;
                let wrapped = plan.messages.get(message).and_then(|m| m.wrapped);
                ValueSeed {
                    encoder,
                    number: Some(number::WRAPPER_VALUE),
                    ty: Ty::Scalar(Scalar::Kind(wrapped.ok_or_else(whole_way)?)),
                    presence: false,
                    check: value,
                }
                .deserialize(deserializer)
            }
            Check::Json(wkt) => JsonSeed::body(encoder, wkt, deserializer),
            _ => deserializer.deserialize_map(MessageSeed {
                encoder,
                check: self.check,
            }),
        }
    }
}

/// A message's fields, from a JSON object.
struct MessageSeed<'e, 'p> {
    encoder: &'e mut Encoder<'p>,
    check: usize,
}

impl<'de> Visitor<'de> for MessageSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let encoder = self.encoder;
        let plan = encoder.plan;
        let Check::Message {
            message,
            props,
            required,
        } = encoder.check(self.check)
        else {
            return Err(whole_way());
        };
        let message = plan.messages.get(*message).ok_or_else(whole_way)?;
        let fields = &message.fields;
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
        // Two members of one oneof (by two of its keys): the old path refuses both set, and
        // keeps the set one of a set and a null; left to it either way.
        if !message.oneofs.is_empty() {
            let mut seen: u64 = 0;
            for &(index, _, _) in given {
                if let Some(oneof) = fields.get(index).and_then(|field| field.oneof) {
                    let bit = u32::try_from(oneof)
                        .ok()
                        .and_then(|oneof| 1u64.checked_shl(oneof))
                        .ok_or_else(whole_way)?;
                    if seen & bit != 0 {
                        return Err(whole_way());
                    }
                    seen |= bit;
                }
            }
        }
        encoder.fields.truncate(mark);
        encoder.leave();
        Ok(())
    }
}

/// A property key: the property of the message it names, or the whole way.
pub(super) struct KeySeed<'c> {
    pub(super) props: &'c KeyMap<Prop>,
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

/// One field's value: a single value, a list or a map; `null` for absent where the checks
/// take it so.
pub(super) struct FieldSeed<'e, 'p, 'f> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) field: &'f FieldPlan,
    pub(super) check: usize,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if matches!(self.encoder.check(self.check), Check::Unsupported) {
            return Err(whole_way());
        }
        // Where `null` is no value of the field's: absent for the type's checks, and for the
        // schema's refused by the value's own seed as it is by any other wrong type.
        if self.encoder.checks.null_is_absent && !self.field.null_is_value {
            deserializer.deserialize_option(self)
        } else {
            self.value(deserializer)
        }
    }
}

impl<'de> FieldSeed<'_, '_, '_> {
    fn value<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let field = self.field;
        match &field.shape {
            Shape::Single => ValueSeed {
                encoder: self.encoder,
                number: Some(field.number),
                ty: field.ty,
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
        f.write_str("a field's value")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.value(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let encoder = self.encoder;
        let field = self.field;
        let (Shape::List { packed }, &Check::List { items }) =
            (field.shape, encoder.check(self.check))
        else {
            return Err(whole_way());
        };
        encoder.enter()?;
        // Each element with the field's key, or none in a packed list.
        let number = (!packed).then_some(field.number);
        // A packed list's key and the slot of its length, where they start.
        let packed_at = packed.then(|| {
            let key_at = encoder.buf.len();
            encode_key(field.number, WireType::LengthDelimited, &mut encoder.buf);
            (key_at, open(&mut encoder.buf))
        });
        let mut count = 0usize;
        while seq
            .next_element_seed(ValueSeed {
                encoder: &mut *encoder,
                number,
                ty: field.ty,
                presence: true,
                check: items,
            })?
            .is_some()
        {
            count += 1;
        }
        match packed_at {
            // An empty packed list is written as nothing, as prost-reflect writes it.
            Some((key_at, _)) if count == 0 => encoder.buf.truncate(key_at),
            Some((_, start)) => close(&mut encoder.buf, start).ok_or_else(whole_way)?,
            None => {}
        }
        encoder.leave();
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let encoder = self.encoder;
        let field = self.field;
        let (
            Shape::Map {
                key: key_kind,
                key_presence,
                value,
                value_presence,
            },
            &Check::Map { values },
        ) = (field.shape, encoder.check(self.check))
        else {
            return Err(whole_way());
        };
        encoder.enter()?;
        // A key given twice is one entry to the whole way (the last value): left to it.
        let mut keys: Vec<std::borrow::Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            encode_key(field.number, WireType::LengthDelimited, &mut encoder.buf);
            let start = open(&mut encoder.buf);
            map_key(&mut encoder.buf, key_kind, key_presence, &key).ok_or_else(whole_way)?;
            map.next_value_seed(ValueSeed {
                encoder: &mut *encoder,
                number: Some(MAP_VALUE),
                ty: value,
                presence: value_presence,
                check: values,
            })?;
            close(&mut encoder.buf, start).ok_or_else(whole_way)?;
            keys.push(key);
        }
        keys.sort_unstable();
        if keys.windows(2).any(|pair| pair[0] == pair[1]) {
            return Err(whole_way());
        }
        encoder.leave();
        Ok(())
    }
}

/// One value: a scalar, an enum or a message, with its key `number` (none: a packed list's
/// element).
pub(super) struct ValueSeed<'e, 'p> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) number: Option<u32>,
    pub(super) ty: Ty,
    pub(super) presence: bool,
    pub(super) check: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        match (self.ty, self.number) {
            (Ty::Message(_), Some(number)) => {
                let encoder = self.encoder;
                encode_key(number, WireType::LengthDelimited, &mut encoder.buf);
                let start = open(&mut encoder.buf);
                BodySeed {
                    encoder: &mut *encoder,
                    check: self.check,
                }
                .deserialize(deserializer)?;
                close(&mut encoder.buf, start).ok_or_else(whole_way)
            }
            (Ty::Message(_), None) => Err(whole_way()),
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl ValueSeed<'_, '_> {
    /// A scalar or an enum, when its check takes `value`.
    fn write<E: de::Error>(self, value: Json<'_>) -> Result<(), E> {
        let encoder = self.encoder;
        let plan = encoder.plan;
        let check = encoder.check(self.check);
        let buf = &mut encoder.buf;
        match self.ty {
            Ty::Scalar(Scalar::Kind(kind)) if check.takes(value) => match self.number {
                Some(number) => scalar_field(buf, number, kind, self.presence, value),
                None => scalar_raw(buf, kind, value).map(|_| ()),
            }
            .ok_or_else(whole_way),
            Ty::Scalar(Scalar::Enum(index)) => {
                let plan = plan.enumeration(index).ok_or_else(whole_way)?;
                let n = check.enum_number(plan, value).ok_or_else(whole_way)?;
                match self.number {
                    Some(number) if self.presence || n != plan.default => {
                        encode_key(number, WireType::Varint, buf);
                        encode_varint(i64::from(n) as u64, buf);
                    }
                    Some(_) => {}
                    None => encode_varint(i64::from(n) as u64, buf),
                }
                Ok(())
            }
            _ => Err(whole_way()),
        }
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a scalar")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.write(Json::Null)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.write(Json::Bool(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.write(Json::U64(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.write(Json::I64(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        self.write(Json::F64(value))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        self.write(Json::Str(text))
    }
}

/// A oneof's `{"case": member, "value": …}`, `case` first: writes the member's value and
/// returns the index of its field.
struct OneofSeed<'e, 'p> {
    encoder: &'e mut Encoder<'p>,
    fields: &'p [FieldPlan],
    members: &'p KeyMap<Prop>,
}

impl<'de> DeserializeSeed<'de> for OneofSeed<'_, '_> {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OneofSeed<'_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a oneof")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let encoder = self.encoder;
        encoder.enter()?;
        // `value` before `case` would have to wait for it: left to the whole way.
        if map.next_key_seed(Exactly("case"))?.is_none() {
            return Err(whole_way());
        }
        let prop = map.next_value_seed(KeySeed {
            props: self.members,
        })?;
        if map.next_key_seed(Exactly("value"))?.is_none() {
            return Err(whole_way());
        }
        let field = self.fields.get(prop.field).ok_or_else(whole_way)?;
        map.next_value_seed(FieldSeed {
            encoder: &mut *encoder,
            field,
            check: prop.check,
        })?;
        if map.next_key_seed(Exactly(""))?.is_some() {
            return Err(whole_way());
        }
        encoder.leave();
        Ok(prop.field)
    }
}

/// A property key that must be the given one.
struct Exactly(&'static str);

impl<'de> DeserializeSeed<'de> for Exactly {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Exactly {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<(), E> {
        if key == self.0 {
            Ok(())
        } else {
            Err(whole_way())
        }
    }
}
